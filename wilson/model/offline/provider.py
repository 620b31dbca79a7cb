"""The offline provider: Wilson without a language model, answering through the Synapse.

It answers in the OpenAI wire format, with tool calls, so actors handle its answers like a
model's. What it reads is the structured context the actor built (`context=` of
`Synapse.chat`: kind "cortex", "triage" or "arousal"), never the prompt's prose. Each answer
names the rule that fired (`offline.rule` in the body), which the Synapse traces.

Size: the provider and the Cortex that reads one cortex request, a short method per kind of stimulus; the
rules themselves (what an event or a mail is, what to plan, what to say) live in the modules it imports.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from wilson.model.offline import (
    appointments,
    answers,
    asks,
    dates,
    intents,
    looks,
    moved_event,
    phrases,
    places,
    same_day,
    triage,
    urgency,
)
from wilson.model.offline.mailtext import without_sent_lines
from wilson.model.offline.opening import asked_of, change_of, instead_of, opening, says_when, taken_to
from wilson.model.offline.plans import plan_calls
from wilson.model.offline.point import without_date_lines
from wilson.model.offline.recognition import load_playbook, may_need_a_plan, recognise_event, routine_meeting
from wilson.model.offline.told import VAGUE, said_before
from wilson.skills import PROPOSE
from wilson.kernel.lazy_regex import lazy_regex

MUTATING_TOOLS_EXCLUDED = {"surface"}
# A triage summary's "(from SENDER, sent Mon 4 Jan)" (wilson/model/offline/triage.py summary)
SENT_BY = lazy_regex(r"\s*\((?:from [^()]*?)?(?:(?:, )?(sent \w{3} \d{1,2} \w{3}))?\)$")
SEEN_NO_PLAN = "seen, no plan (offline rules)"
ROUTINE = "seen, a routine meeting (offline rules)"
# a day the ask must be answered by: "Can you tell me by Friday …", "bis zum 02.03. bestätigen" (the day is the date
# reader's to find: "by the way" names none)
BY_WHEN = lazy_regex(r"\b(?:by|bis|before|no later than|spätestens)\s+(?P<when>(?:[^.!?]|(?<=\d)\.)+)", re.I)
TIMED = lazy_regex(r"\b\d{1,2}[:.]\d{2}\b|\b\d{1,2}\s*(?:am|pm|uhr)\b", re.I)  # an hour said in an ask
ORDINARY = "seen, nothing to plan (offline rules)"  # a few hours or a day at home: the calendar says it all


def _content(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


def _json_in(text) -> dict:
    text = text or ""
    start = text.find("{")
    if start < 0:
        return {}
    try:
        value, _ = json.JSONDecoder().raw_decode(text[start:])
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _json_value(text):
    try:
        return json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None


def _actions_of(propose: dict) -> list[str]:
    """The actions a `propose` tool takes (the enum of its changes' action)."""
    try:
        return list(propose["parameters"]["properties"]["changes"]["items"]["properties"]["action"]["enum"])
    except (KeyError, TypeError):
        return []


def _folded(calls: list, actions: list[str]) -> list:
    """The rules' mutations as the model is asked for them: one `propose` call, where the first of them was."""
    changes = [{"action": name, **args} for name, args in calls if name in actions]
    if not changes:
        return calls
    first = next(i for i, (name, _) in enumerate(calls) if name in actions)
    kept = [(name, args) for name, args in calls if name not in actions]
    return kept[:first] + [(PROPOSE, {"changes": changes})] + kept[first:]


class OfflineProvider:
    def __init__(
        self,
        playbook_path: str | Path | None = None,
        home: str | None = None,
        skills_playbook: str = "",
        offline_wake: bool = True,
    ):
        self.playbook = load_playbook(playbook_path, skills_playbook)
        self.home_setting = home or None
        self.offline_wake = offline_wake  # [attention] offline_wake: a clear emergency may break quiet hours

    def complete(self, payload: dict, role: str = "deep", context: dict | None = None) -> dict:
        """An OpenAI chat-completion response body for one request."""
        messages = [m for m in payload.get("messages") or [] if isinstance(m, dict)]
        tools = [t.get("function") or {} for t in payload.get("tools") or [] if isinstance(t, dict)]
        offered = [t.get("name", "") for t in tools]
        actions = [a for t in tools if t.get("name") == PROPOSE for a in _actions_of(t) if a not in offered]
        text, calls, rule = self.respond(messages, offered + actions, payload.get("response_format"), context)
        beyond = [name for name, _ in calls if name not in offered and name not in actions]
        if beyond and "escalate" in offered:
            # a run offered less than the rules would do (a fast one) hands on the whole, not the part it may
            text, calls = "", [("escalate", {"why": f"the offline rules would call {beyond[0]}"})]
        calls = _folded([(name, args) for name, args in calls if name in offered or name in actions], actions)
        message = {"role": "assistant", "content": text if (text or not calls) else None}
        if calls:
            message["tool_calls"] = [
                {
                    "id": f"call_offline_{len(messages)}_{i}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)},
                }
                for i, (name, args) in enumerate(calls)
            ]
        return {
            "id": f"offline-{len(messages)}",
            "object": "chat.completion",
            "model": "offline",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},  # no model, no tokens
            "offline": {"rule": rule},
        }

    def respond(self, messages, offered, response_format=None, context=None) -> tuple[str, list, str]:
        context = context if isinstance(context, dict) else {}
        if not context and ("triage" in offered or "arousal" in offered) and messages:
            # a batch body is JSON already (a recorded or hand-made request without `context`): read as data
            context = {"kind": "triage" if "triage" in offered else "arousal", **_json_in(_content(messages[-1]))}
        kind = context.get("kind")
        if messages and messages[-1].get("role") == "tool":
            return self._after_tools(messages, context, offered)
        if kind == "triage" and "triage" in offered:
            now, tz = dates.now_of(context.get("now")), dates.zone(context.get("timezone"))
            return "", [("triage", triage.triage(context.get("items") or [], now, tz))], "triage rules"
        if kind == "arousal" and "arousal" in offered:
            now, tz = dates.now_of(context.get("now")), dates.zone(context.get("timezone"))
            return "", [("arousal", triage.arousal(context.get("items") or [], now, tz))], "urgency rules"
        if kind == "cortex":
            return Cortex(self, context, offered, messages).respond()
        if "record_memories" in offered:
            # the hippocampus sends its candidates as a JSON body: kept as they are, nothing judged
            candidates = _json_in(_content(messages[-1]) if messages else "").get("candidates") or []
            return "", [("record_memories", {"items": candidates})], "memories kept as proposed"
        if response_format and response_format.get("type") in ("json_object", "json_schema"):
            return "{}", [], "no offline rule for this request"
        if offered:
            return "", [], "no offline rule for this request"
        return phrases.INTRO, [], "no offline rule for free text"

    def home(self, timezone: str | None):
        return places.home_place(self.home_setting, timezone)

    def _after_tools(self, messages: list[dict], context: dict, offered) -> tuple[str, list, str]:
        """The round after a tool's result: closing words, or (for a reminder to stop) the proposal itself."""
        stimulus = context.get("stimulus") or {}
        if stimulus.get("origin", "background") != "user":
            return "", [], "closing words after the tool results"
        calls = []
        for message in reversed(messages):
            if message.get("role") == "assistant" and message.get("tool_calls"):
                calls = [c.get("function") or {} for c in message["tool_calls"]]
                break
        called = [call.get("name") for call in calls]
        agreed = stimulus.get("kind") == "modify" and (stimulus.get("payload") or {}).get("agreed")
        if called and all(name == "decide" for name in called) or agreed:
            return "", [], "the approval gate answers with what it did"
        results = [_json_value(_content(m)) for m in messages[len(messages) - len(called) :]]  # in call order
        first = calls[0].get("arguments") if calls else ""
        looked = looks.after_reads(
            user_chat(self, context, offered), called, _json_in(first if isinstance(first, str) else ""), results
        )
        if looked is not None:
            if context.get("first_contact") and looked.text:
                looked.text = f"{phrases.INTRO}\n\n{looked.text}"
            return looked.text, looked.calls, looked.rule
        answer = (
            "I've put that together for your approval (offline rules)."
            if any(name not in MUTATING_TOOLS_EXCLUDED for name in called)
            else ""
        )
        if context.get("first_contact"):
            answer = f"{phrases.INTRO}\n\n{answer}".strip()
        return answer, [], "closing words after the tool results"


class Cortex:
    """One cortex request, read from the cortex's structured context."""

    def __init__(self, provider: OfflineProvider, context: dict, offered: list[str], messages: list[dict] = ()):
        self.provider = provider
        self.messages = list(messages)
        self.playbook = provider.playbook
        self.context = context
        self.offered = offered
        self.tz = dates.zone(context.get("timezone"))
        self.now = dates.now_of(context.get("now"))
        self.today = self.now.astimezone(self.tz).date()
        self.stimulus = context.get("stimulus") or {}
        payload = self.stimulus.get("payload")
        self.payload = payload if isinstance(payload, dict) else {}

    def respond(self) -> tuple[str, list, str]:
        kind = self.stimulus.get("kind")
        handler = getattr(self, f"on_{kind}", None) if isinstance(kind, str) else None
        if handler is None:
            return "", [], f"no offline rule for a {kind or 'stimulus'} run"
        return handler()

    # -- calendar -----------------------------------------------------------------------

    def on_event(self) -> tuple[str, list, str]:
        calls, rules, unseen = [], [], []
        for buffer in self.payload.get("buffers") or []:
            if not isinstance(buffer, dict):
                continue
            change = buffer.get("change")
            if change == "new":
                made, rule = self._new_event(buffer)
                if not made and not rule.startswith((ROUTINE, ORDINARY)):
                    unseen.append(str(buffer.get("title") or "an event"))
            elif change == "changed":
                made, rule = self._moved_event(buffer), "a moved event moves its topic and tasks"
            elif change == "cancelled":
                made, rule = self._cancelled_event(buffer), "a cancelled event closes its topic"
            else:
                continue
            if not made and (told := same_day.told(buffer, self.now, self.tz)):
                made, rule = (
                    [("surface", {"text": told, "why": f"a {change} event within the next 24 hours"})],
                    f"a {change} event starting within 24 hours is told before it starts",
                )
                if change == "new" and unseen:
                    unseen.pop()
            calls += made
            rules.append(rule)
        text = f"{SEEN_NO_PLAN}: {', '.join(unseen)}" if unseen and not calls else ""
        return text, calls, "; ".join(rules) or "no calendar change"

    def _new_event(self, buffer: dict) -> tuple[list, str]:
        title = str(buffer.get("title") or "").strip()
        if not title:
            return [], "an event without a title"
        location = buffer.get("location")
        home = self.provider.home(self.context.get("timezone"))
        found = recognise_event(
            self.playbook,
            title,
            location,
            buffer.get("start"),
            buffer.get("end"),
            self.tz,
            home,
            str(buffer.get("description") or ""),
        )
        if found.event is None:
            routine = routine_meeting(title, buffer.get("start"), buffer.get("end"), self.tz)
            if routine is not None:  # not listed as new in the briefing: a meeting needs no word days ahead
                return [], f"{ROUTINE}: {routine}"
            if not may_need_a_plan(found, buffer.get("start"), buffer.get("end"), self.tz, home):
                # an evening out, a team day at the office: the user put it there and needs no word of it
                return [], f"{ORDINARY}: {found.rule}"
            return [], f"{SEEN_NO_PLAN}: {found.rule}"
        start = dates.parse_moment(buffer.get("start"), self.tz)
        if start is None:
            return [], "an event without a start"
        if dates.local_date(start, self.tz) == self.today and not found.event.kind == "travel":
            # later today there is nothing left to prepare: the event is told before it starts (same_day), not planned
            return [], f"{found.rule}; it starts today: told, not planned"
        notes = "\n".join(
            filter(None, [f"Location: {location}" if location else "", f"Planned by the offline rules: {found.rule}."])
        )
        calls = plan_calls(
            found.event,
            title,
            buffer.get("start"),
            buffer.get("end"),
            dates.local_date(start, self.tz),
            self.today,
            notes,
            self.context.get("topics") or [],
            self.context.get("tasks") or [],
            _domestic(found.place, title, home),
        )
        return calls, found.rule

    def _matching_topics(self, buffer: dict) -> list[dict]:
        return moved_event.matching_topics(buffer, self.context.get("topics") or [])

    def _moved_event(self, buffer: dict) -> list:
        return moved_event.moved(
            buffer, self.context.get("topics") or [], self.context.get("tasks") or [], self.now, self.tz
        )

    def _cancelled_event(self, buffer: dict) -> list:
        return [("close_topic", {"topic_id": t.get("id")}) for t in self._matching_topics(buffer)]

    # -- tick -------------------------------------------------------------------------------

    def on_deadline(self) -> tuple[str, list, str]:
        title = self.payload.get("title") or self.stimulus.get("text") or "a task"
        window = str(self.payload.get("window") or "")
        due = dates.parse_moment(self.payload.get("due"), self.tz)
        day = dates.local_date(due, self.tz) if due else None
        topic = self.payload.get("topic")
        name = f"“{title}”" + (f" ({topic})" if topic else "")
        when = f" ({dates.fmt_day(day)})" if day else ""
        if window == "overdue":
            was = f" (was due {day.day} {day:%b})" if day else ""
            text = f"{name} is overdue{was}. Want to move it or mark it done?"
        elif window == "due":
            text = f"Reminder: {name} is due today{when}."
        else:
            days = _window_days(window)
            if days is None and day:
                days = (day - self.today).days
            if days == 1:
                text = f"Reminder: {name} is due tomorrow{when}."
            elif days is not None and days > 1:
                text = f"Reminder: {name} is due in {days} days{when}."
            else:
                text = f"Reminder: {name} is coming up{when}."
        return (
            "",
            [("surface", {"text": text, "why": f"deadline window {window or 'unknown'}"})],
            f"deadline follow-up ({window or 'unknown'})",
        )

    def on_buffered(self) -> tuple[str, list, str]:
        """Triage kept a non-calendar item because it needs the user: a bill, a renewal notice or a mail that
        asks for something by a date becomes a task to approve (the proposal tells of it), anything else is
        passed on as its summary."""
        text = str(self.stimulus.get("text") or "")
        written = without_date_lines(without_sent_lines(text))  # what the senders wrote, not the day it came
        wake = (
            urgency.emergency_in(self.payload.get("buffers") or [], written, self.now, self.tz)
            if self.provider.offline_wake
            else None
        )  # [attention] offline_wake: an emergency may break quiet hours
        for buffer in self.payload.get("buffers") or []:
            due = asks.mail_task(written, buffer, self.now, self.tz, letter=text) if isinstance(buffer, dict) else None
            if due is not None and "create_task" in self.offered and not wake:
                calls = [("create_task", {"title": due.title, "due": due.due.isoformat(), "notes": due.notes})]
                # "please confirm by the 2nd" of an appointment on the 9th: the appointment comes up again the
                # evening before
                visit = appointments.appointment(written, self.now, self.tz)
                if visit is not None and "remind" in self.offered:
                    at = appointments.evening_before(visit, self.tz)
                    if at > self.now and at.date() > dates.as_datetime(due.due, self.tz).date():
                        calls.append(("remind", {"text": visit.sentence, "at": at.isoformat()}))
                return "", calls, due.rule
        summary = next((line.strip() for line in text.splitlines() if line.strip()), "")
        if not summary:
            return "", [], "nothing to pass on"
        channels = sorted(
            {
                str(b.get("channel"))
                for b in self.payload.get("buffers") or []
                if isinstance(b, dict) and b.get("channel")
            }
        )
        where = f" from your {' and '.join(channels)}" if channels else ""
        if self.stimulus.get("untrusted"):
            where = ""  # the cortex names the source of others' text itself, sender and all
            about = SENT_BY.search(summary)
            if about and about.group(0).strip() != "()":
                summary = summary[: about.start()] or summary
                where = f" ({about.group(1)})" if about.group(1) else ""  # its "tomorrow" is that day's
            subjects = {
                str(b.get("subject") or "").strip().lower()
                for b in self.payload.get("buffers") or []
                if isinstance(b, dict)
            }
            said = next((s for s in subjects if s and summary.lower().startswith(s + ": ")), None)
            if said is not None:  # "Subject: the sentence that says why" (triage.summary): the sentence, quoted
                # a summary cut short keeps part of its "(from …, sent …)": not the sender's words
                sentence = re.sub(r"\s*\((?:from|sent)\b[^)]*$", "", summary[len(said) + 2 :].strip())
                if sentence.endswith("…"):  # cut short with the subject before it: the mail's own point is longer
                    sentence = opening(text, subjects) or sentence
                summary = f"“{sentence}”"
            elif summary.strip().lower() in subjects:
                # the source's name quotes the subject already; it is not said twice, and what the sender
                # wrote is what the user needs to hear
                wrote = opening(text, subjects)
                summary = f"“{wrote}”" if wrote else VAGUE
        heads_up = f"Heads-up{where}: {summary}"
        if self.stimulus.get("untrusted") and summary.startswith("“"):
            # "We have to change your appointment." says what, not when: the sentence that says when goes with it
            when = change_of(
                text,
                {
                    str(b.get("subject") or "").strip().lower()
                    for b in self.payload.get("buffers") or []
                    if isinstance(b, dict)
                },
                summary,
                urgency.CLOSURE_RE,
            )
            if when and when.lower() not in heads_up.lower():
                heads_up = f"{heads_up} “{when}”"
            elif (
                urgency.CLOSURE_RE.search(summary)
                # "… heute nicht um 09:00 Uhr empfangen": the mail is about a change (its subject or a later sentence
                # says so), and the sentence with what replaces it says the new time
                or urgency.CLOSURE_RE.search(text)
                or urgency.DISRUPTION_RE.search(summary)
                or re.search(
                    r"\b(?:reschedul\w*|schedule change|umgeplant|geändert|(?:has|have|was|were|been) changed)\b",
                    summary,
                    re.I,
                )
                or not says_when(summary)  # "Dr. Weber is ill today.": the sentence with the new time says what changed
            ):
                # a cancellation or a closure is told with what replaces it: the new flight, the later start
                instead = instead_of(
                    text,
                    {
                        str(b.get("subject") or "").strip().lower()
                        for b in self.payload.get("buffers") or []
                        if isinstance(b, dict)
                    },
                    summary,
                )
                if instead and instead.lower() not in heads_up.lower():
                    heads_up = f"{heads_up} “{instead}”"
        if self.stimulus.get("untrusted"):
            # in an emergency what to do is said with it ("Please leave the building now"), and so is what is asked
            # by a time ("Bitte parken Sie Ihr Auto bis heute 20:00 Uhr um")
            todo = asked_of(
                text,
                {
                    str(b.get("subject") or "").strip().lower()
                    for b in self.payload.get("buffers") or []
                    if isinstance(b, dict)
                },
            )
            if todo and todo.lower() not in heads_up.lower() and (wake or TIMED.search(todo) or self._by_a_day(todo)):
                heads_up = f"{heads_up} “{todo}”"
            taken = taken_to(
                text,
                {
                    str(b.get("subject") or "").strip().lower()
                    for b in self.payload.get("buffers") or []
                    if isinstance(b, dict)
                },
            )
            if wake and taken and taken.lower() not in heads_up.lower():
                heads_up = f"{heads_up} “{taken}”"  # where someone was taken is where the user goes
        if summary != VAGUE and said_before(heads_up, self.context):
            return "", [], "told the user the same about this thread already"  # a resend says nothing new
        if wake:
            return (
                "",
                [
                    (
                        "surface",
                        {"text": heads_up, "why": f"an emergency ({wake}): told even in quiet hours", "urgent": True},
                    )
                ],
                f"an emergency is told at once ({wake})",
            )
        return "", [("surface", {"text": heads_up, "why": "triage kept it as needing you"})], "pass on what triage kept"

    def _by_a_day(self, ask: str) -> bool:
        """Whether an ask says the day it is due by ("Can you tell me by Friday if you're coming?")."""
        return any(dates.search(m.group("when"), self.now, self.tz) for m in BY_WHEN.finditer(ask))

    def on_topic_end(self) -> tuple[str, list, str]:
        topic_id = self.payload.get("topic_id")
        return "", ([("close_topic", {"topic_id": topic_id})] if topic_id is not None else []), "a topic's end"

    def on_reminder(self) -> tuple[str, list, str]:
        text = self.payload.get("text") or self.stimulus.get("text") or ""
        return "", [("surface", {"text": f"Reminder: {text}", "why": "scheduled reminder"})], "scheduled reminder"

    # -- the user ----------------------------------------------------------------------------

    def on_modify(self) -> tuple[str, list, str]:
        change = str(self.stimulus.get("text") or "")
        proposal = self.context.get("proposal") or {}
        reply = answers.modify(proposal, change, self.now, self.tz)
        agreed = (self.stimulus.get("payload") or {}).get("agreed")
        if reply.rule == "modify not understood" and agreed:
            # "yes but …": the gate approves the proposal as it was and says what it could not work in
            return "", [], "a yes whose change was not understood"
        return reply.text, reply.calls, reply.rule

    def on_message(self) -> tuple[str, list, str]:
        if self.stimulus.get("origin", "user") != "user":
            return "", [], "not the user's message"
        reply = intents.answer(user_chat(self.provider, self.context, self.offered, self.messages))
        return reply.text, reply.calls, reply.rule


def _domestic(place, title: str, home) -> bool:
    """The event is in the home country: its place is, and so is any place its title names ("Flight to Tokyo"
    at "Berlin Brandenburg Airport" leaves from home for abroad)."""
    named = places.find_place(None, title)
    return places.domestic(place, home) and (named is None or places.domestic(named, home))


def user_chat(provider: OfflineProvider, context: dict, offered, messages: list[dict] = ()) -> phrases.Chat:
    """The user's request (their message without a greeting before it) and what the cortex's context says
    about their tasks, topics and proposals; what Wilson said before in this conversation (`messages`' turns)."""
    stimulus = context.get("stimulus") or {}
    now, tz = dates.now_of(context.get("now")), dates.zone(context.get("timezone"))
    return phrases.Chat(
        text=phrases.request_of(str(stimulus.get("text") or ""), now, tz),
        now=now,
        tz=tz,
        playbook=provider.playbook,
        tasks=list(context.get("tasks") or []),
        topics=list(context.get("topics") or []),
        pending=list(context.get("pending_proposals") or []),
        offered=tuple(offered),
        first_contact=bool(context.get("first_contact")),
        home=provider.home(context.get("timezone")),
        memories=list(context.get("memories") or []),
        missed=context.get("missed") if isinstance(context.get("missed"), dict) else None,
        said_before=[_content(m) for m in messages if m.get("role") == "assistant"],
        followed_up=context.get("followed_up") if isinstance(context.get("followed_up"), dict) else None,
    )


def _window_days(window: str) -> int | None:
    found = re.fullmatch(r"(\d+)\s*([dwh])", window.strip().lower())
    if not found:
        return None
    number, unit = int(found.group(1)), found.group(2)
    return number * 7 if unit == "w" else number if unit == "d" else max(0, number // 24)
