"""What a person's message asks for, read by rules: each intent becomes a proposal for the gate,
a read-only answer (a list), or an honest line saying what the offline rules can do.

Nothing here claims an action: a change is a tool call the approval gate turns into a
proposal; a message no rule understands gets `HELP`, never "Noted.".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime

from wilson.offline import dates, places
from wilson.offline.plans import plan_calls
from wilson.offline.recognition import Playbook, place_title, recognise_message
from wilson.offline.words import best, words

INTRO = ("Hi, I'm Wilson. I'm running without a language model, so I can only handle simple things for now. "
         "To connect one, set WILSON_LLM_BASE_URL and WILSON_LLM_MODEL (or start me with --llm URL).")
HELP = ("I didn't understand that — I'm running offline (no language model connected), so I only follow simple "
        "requests: “what's on my plate this week?”, “add pay rent by Friday”, "
        "“remind me to call Mum on Sunday”, "
        "“move the passport task to next week”, “done with the flights”, “drop the gym task”, "
        "“close the Japan topic”, or “yes”/“no” to my last proposal. Nothing was changed.")

WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
ORDINALS = {"first": "1-7", "second": "8-14", "third": "15-21", "fourth": "22-28"}
REMINDER_RE = re.compile(
    r"^remind me (?:every|each) (?:(?P<ord>first|second|third|fourth) )?(?P<unit>day|\w+day|month)"
    r"(?: at (?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?\s*(?P<half>am|pm)?)?\s*[:,-]?\s*(?:to )?(?P<what>.+)$", re.I)
DONE_RES = [
    re.compile(r"^\s*(?:i(?:'m| am)\s+|i(?:'ve| have)\s+|i\s+|just\s+)?(?:just\s+)?(?:done with|finished|completed)\s+"
               r"(?P<what>.+)$", re.I),
    re.compile(r"^\s*mark\s+(?P<what>.+?)\s+(?:as\s+)?(?:done|complete|completed|finished)\b", re.I),
    re.compile(r"^\s*(?P<what>.+?)\s+(?:is|are)\s+(?:done|finished|complete|completed)\b", re.I),
]
LIST_RE = re.compile(r"\b(tasks?|to-?dos?|to do list|what'?s due|what is due|open items|on my plate|what'?s coming|"
                     r"what is coming|what'?s up next|what'?s next|agenda|schedule|what do i have|"
                     r"anything (?:due|coming)|what'?s on)\b", re.I)
REMIND_RE = re.compile(r"^\s*(?:please\s+)?remind me\s+(?:to\s+)?(?P<rest>.+?)\s*[.!]*$", re.I)
ABOUT_RE = re.compile(r"^\s*(?:please\s+)?remind me (?:about|of) (?:the\s+)?(?P<what>.+?)\s+(?:again\s+)?"
                      r"(?P<when>(?:on|at|in|next|tomorrow|tonight|today)\b.*)$", re.I)
MOVE_RE = re.compile(r"^\s*(?:please\s+)?(?:move|push|shift|postpone|reschedule|snooze|delay|pause)\s+(?:the\s+)?"
                     r"(?P<what>.+?)\s+(?:to|until|till|for|by|on)\s+(?P<when>.+?)\s*[.!]*$", re.I)
DROP_RE = re.compile(r"^\s*(?:please\s+)?(?:drop|cancel|delete|remove|forget about|forget|scrap|never ?mind)\s+"
                     r"(?:the\s+)?(?P<what>.+?)\s*[.!]*$|^\s*i (?:don'?t|do not) need to (?P<what2>.+?)"
                     r"(?:\s+any\s?more)?\s*[.!]*$", re.I)
CLOSE_RE = re.compile(r"^\s*(?:please\s+)?(?:close|archive|end|finish)\s+(?:the\s+)?(?P<what>.+?)\s*[.!]*$"
                      r"|^\s*(?:the\s+)?(?P<what2>.+?)\s+(?:is|are)\s+(?:over|behind me|finished for good)\s*[.!]*$",
                      re.I)
RENAME_RE = re.compile(r"^\s*rename (?:the\s+)?(?:topic\s+)?(?P<old>.+?) (?:to|as) (?P<new>.+?)\s*[.!]*$", re.I)
ADD_RE = re.compile(r"^\s*(?:please\s+)?(?:add(?: a)?(?: task)?(?: to)?:?|new task:?|todo:?|to-do:?|task:|"
                    r"i (?:need|have|must|should|got) to|i've got to|don'?t let me forget to|i must)\s+(?P<what>.+?)"
                    r"\s*[.!]*$", re.I)
# "add …", "todo: …": the user names the task; no life event's plan is read into it
EXPLICIT_ADD_RE = re.compile(r"^\s*(?:please\s+)?(?:add\b|new task\b|todo\b|to-do\b|task:)", re.I)
# "file my taxes" → "File taxes": a topic is named after the thing, not whose it is
POSSESSIVE_RE = re.compile(r"\b(?:my|our|his|her|their)\s+", re.I)
TOPICISH = re.compile(r"\b(topic|trip|project|plan|wedding|move|conference|holiday|vacation)\b", re.I)

# Answers to a pending proposal, in words (only offered the `decide` tool in a run the user started).
# Only words that answer a question: "great" or "fine" said about something else must not approve a plan.
_YES = r"(?:yes|yep|yeah|yup|ok|okay|sure|approve|approved|go ahead|go for it|do it|please do|sounds good|let'?s do it)"
_NO = r"(?:no|nope|nah|reject|rejected|no thanks|don'?t|do not|not now|forget it)"
_FILL = r"(?:please|thanks|thank you|all of it|all of them|to all|all|everything|it|them|that|this|proposal|the plan)"
YES_RE = re.compile(rf"^(?:{_FILL}\s+)*{_YES}(?:\s+(?:{_YES}|{_FILL}))*$")
NO_RE = re.compile(rf"^(?:{_FILL}\s+)*{_NO}(?:\s+(?:{_NO}|{_FILL}))*$")
EXCEPT_RE = re.compile(rf"^(?:{_YES}\s+)*(?:(?:approve|do|accept|yes to)\s+)?(?:all|everything|the rest)\s+"
                       r"(?:but|except|apart from|other than|save)\s+(?P<what>.+)$")
SKIP_RE = re.compile(rf"^(?:{_YES}\s+)*(?:but\s+)?(?:skip|drop|leave out|without)\s+(?P<what>.+?)"
                     r"(?:\s+(?:and\s+)?(?:approve|do|go ahead with|keep)?\s*"
                     r"(?:the rest|everything else|the others))?$")
REJECT_ITEMS_RE = re.compile(r"^(?:reject|decline|no to)\s+(?P<what>.+)$")
CHANGE_RE = re.compile(r"^(?:move|change|make|push|shift|put)\s+(?P<what>.+)$")
PROPOSAL_REF_RE = re.compile(r"(?:\bproposal\s*#?|#)(\d+)\b|^(?:approve|reject|yes to|no to)\s+(\d+)$")
REMOVE_RE = re.compile(r"\b(skip|drop|remove|without|delete|cancel|don'?t need|not needed)\b|\bno\s+(?=[a-z])",
                       re.I)


@dataclass
class Reply:
    text: str = ""
    calls: list = field(default_factory=list)
    rule: str = ""


@dataclass
class Chat:
    """What a message is read against: the user's open tasks and topics, pending proposals, the time."""

    text: str
    now: datetime
    tz: object
    playbook: Playbook
    tasks: list = field(default_factory=list)
    topics: list = field(default_factory=list)
    pending: list = field(default_factory=list)
    offered: tuple = ()
    first_contact: bool = False
    home: object = None

    @property
    def today(self) -> date:
        return self.now.astimezone(self.tz).date()


def normal(text: str) -> str:
    return " ".join(re.sub(r"[^\w'#\s-]", " ", text.lower().replace("’", "'")).split())


def reminder_cron(text: str) -> tuple[str, str] | None:
    """'remind me every first Monday: pay rent' → ('0 9 1-7 * 1', 'pay rent'); None when it isn't one."""
    found = REMINDER_RE.match(text.strip())
    if not found:
        return None
    hour, minute = int(found.group("hour") or 9), int(found.group("minute") or 0)
    half = (found.group("half") or "").lower()
    if half == "pm" and hour < 12:
        hour += 12
    if hour > 23 or minute > 59:
        return None
    unit, ordinal = found.group("unit").lower(), found.group("ord")
    if unit == "day":
        days, weekday = "*", "*"
    elif unit == "month":
        days, weekday = "1", "*"
    elif unit in WEEKDAYS:
        days = ORDINALS.get((ordinal or "").lower(), "*")
        weekday = str(WEEKDAYS.index(unit) + 1 if unit != "sunday" else 0)
    else:
        return None
    return f"{minute} {hour} {days} * {weekday}", found.group("what").strip().rstrip(".")


def _split_when(rest: str, chat: Chat) -> tuple[str, dates.Found | None]:
    """'call mom on Sunday' → ('call mom', Found('on Sunday')); the date phrase may come first or last."""
    found = dates.search(rest, chat.now, chat.tz)
    if not found:
        return rest.strip(), None
    first = found[0]
    start = rest.find(first.phrase, first.start)
    what = (rest[:start] + " " + rest[start + len(first.phrase):]) if start >= 0 else rest
    what = re.sub(r"\s+(?:on|at|by|before|until|in|the|for)\s*$", "", what.strip())
    what = re.sub(r"^(?:on|at|by|in)\s+|^to\s+", "", what.strip())
    what = re.sub(r"^\s*to\s+", "", what)
    what = re.sub(r"\s+(?:on|at|by|before)(?=\s|$)", "", what).strip(" ,.!")
    return what, first


def _title(text: str) -> str:
    text = re.sub(r"^\s*my\s+", "", text.strip(" .,!"), flags=re.I)
    return text[:1].upper() + text[1:]


def task_list(chat: Chat, span: tuple[date, date, str] | None = None) -> str:
    tasks = [t for t in chat.tasks if t.get("status", "open") == "open"]

    def due_of(task):
        due = dates.parse_moment(task.get("due"), chat.tz)
        return dates.local_date(due, chat.tz) if due else None

    if span is None:
        if not tasks:
            return "You have no open tasks."
        lines = [f"• {t.get('title')}" + (f" — due {dates.fmt_day(due_of(t))}" if due_of(t) else "")
                 for t in sorted(tasks, key=lambda t: (due_of(t) is None, due_of(t) or date.max, str(t.get("title"))))]
        return "Your open tasks:\n" + "\n".join(lines)
    first, last, name = span
    inside = [t for t in tasks if due_of(t) is not None and due_of(t) <= last]
    events = []
    for topic in chat.topics:
        starts = dates.parse_moment(topic.get("starts"), chat.tz)
        if starts is not None and first <= dates.local_date(starts, chat.tz) <= last \
                and topic.get("status") != "closed":
            events.append((dates.local_date(starts, chat.tz), f"• {topic.get('title')} starts "
                                                            f"{dates.fmt_day(dates.local_date(starts, chat.tz))}"))
    lines = [line for _, line in sorted(events)]
    for task in sorted(inside, key=lambda t: (due_of(t), str(t.get("title")))):
        due = due_of(task)
        late = " (overdue)" if due < chat.today else ""
        lines.append(f"• {task.get('title')} — due {dates.fmt_day(due)}{late}")
    undated = [t for t in tasks if due_of(t) is None]
    if not lines:
        tail = f" {len(undated)} open task(s) have no date." if undated else ""
        return f"Nothing due {name}.{tail}"
    tail = f"\n(+ {len(undated)} open task(s) without a date)" if undated else ""
    return f"Coming up {name}:\n" + "\n".join(lines) + tail


def _topic_named(chat: Chat, what: str) -> dict | None:
    open_topics = [t for t in chat.topics if t.get("status") != "closed"]
    wanted = words(re.sub(r"\b(topic|the)\b", " ", what, flags=re.I))
    return best(open_topics, wanted)


def _task_named(chat: Chat, what: str) -> dict | None:
    open_tasks = [t for t in chat.tasks if t.get("status", "open") == "open"]
    return best(open_tasks, words(what))


def answer(chat: Chat) -> Reply:
    """The offline answer to one message of the user's."""
    text = chat.text.strip()
    reply = (_spoken_decision(chat, text) or _no_to_nothing(chat, text) or _on_it(text) or _done(chat, text)
             or _recurring(text) or _remind(chat, text) or _move(chat, text) or _drop(chat, text)
             or _close(chat, text) or _rename(chat, text) or _listing(chat, text) or _life_event(chat, text)
             or _add(chat, text))
    if reply is None:
        reply = Reply(HELP, [], "no offline rule understood the message")
    if chat.first_contact:
        reply.text = f"{INTRO}\n\n{reply.text}" if reply.text else INTRO
    return reply


def _no_to_nothing(chat: Chat, text: str) -> Reply | None:
    """"no, forget it" with no proposal waiting: an honest word, not a search for a task called "it"."""
    if NO_RE.match(normal(text)) and not any(isinstance(p, dict) and p.get("items") for p in chat.pending):
        return Reply("There's no proposal of mine waiting for an answer, so nothing was changed.", [],
                     "no, with nothing pending")
    return None


def _on_it(text: str) -> Reply | None:
    from wilson.attention import is_on_it

    if is_on_it(text):  # the acknowledgement itself is recorded by code (wilson/attention.py record_ack)
        return Reply("Great — I won't chase you about it again until the next reminder.", [], "acknowledgement")
    return None


def _done(chat: Chat, text: str) -> Reply | None:
    for pattern in DONE_RES:
        found = pattern.match(text)
        if found:
            task = _task_named(chat, found.group("what"))
            if task is not None:
                return Reply("", [("complete_task", {"task_id": task.get("id")})], "done with a task")
            return Reply(f"I couldn't tell which task you mean, so nothing was changed. {task_list(chat)}", [],
                         "done with an unknown task")
    return None


def _recurring(text: str) -> Reply | None:
    found = reminder_cron(text)
    if found is None:
        return None
    return Reply("", [("create_reminder", {"text": found[1], "cron": found[0]})], "recurring reminder")


def _remind(chat: Chat, text: str) -> Reply | None:
    about = ABOUT_RE.match(text)
    if about:
        task = _task_named(chat, about.group("what"))
        found = dates.search(about.group("when"), chat.now, chat.tz)
        at = dates.at_moment(found[0] if found else None, chat.now, chat.tz)
        if task is not None and at is not None:
            return Reply("", [("snooze_task", {"task_id": task.get("id"), "until": at.isoformat()})],
                         f"snooze a task ({found[0].stated(chat.tz)})")
    found = REMIND_RE.match(text)
    if not found or re.match(r"(?:every|each)\b", found.group("rest"), re.I):
        return None
    what, when = _split_when(found.group("rest"), chat)
    at = dates.at_moment(when, chat.now, chat.tz)
    if at is None or not what:
        return Reply("When should I remind you? Say e.g. “remind me tomorrow at 18:00 to call Mum”. "
                     "Nothing was set.", [], "reminder without a time to come")
    return Reply("", [("remind", {"text": what, "at": at.isoformat()})], f"one-off reminder ({when.stated(chat.tz)})")


def _move(chat: Chat, text: str) -> Reply | None:
    found = MOVE_RE.match(text)
    if not found:
        return None
    when = dates.search(found.group("when"), chat.now, chat.tz)
    task = _task_named(chat, found.group("what"))
    if task is None:
        return Reply(f"I couldn't tell which task you mean, so nothing was changed. {task_list(chat)}", [],
                     "move an unknown task")
    if not when:
        return Reply(f"To when should “{task.get('title')}” move? Say e.g. “to next Friday”. "
                     "Nothing was changed.",
                     [], "move without a date")
    verb = text.strip().split()[0].lower()
    if verb in ("snooze", "pause", "postpone") and "snooze_task" in chat.offered:
        at = dates.at_moment(when[0], chat.now, chat.tz)
        if at is not None:
            return Reply("", [("snooze_task", {"task_id": task.get("id"), "until": at.isoformat()})],
                         f"snooze a task ({when[0].stated(chat.tz)})")
    due = when[0].value
    return Reply("", [("update_task", {"task_id": task.get("id"), "due": dates.iso(due),
                                       "notes": f"Moved offline: {when[0].stated(chat.tz)}"})],
                 f"move a task ({when[0].stated(chat.tz)})")


def _drop(chat: Chat, text: str) -> Reply | None:
    found = DROP_RE.match(text)
    if not found:
        return None
    what = found.group("what") or found.group("what2")
    task = _task_named(chat, what)
    topic = _topic_named(chat, what)
    if topic is not None and (TOPICISH.search(what) or task is None):
        return Reply("", [("close_topic", {"topic_id": topic.get("id")})], "drop a topic")
    if task is not None:
        return Reply("", [("cancel_task", {"task_id": task.get("id")})], "drop a task")
    return Reply(f"I couldn't tell which task or topic you mean, so nothing was changed. {task_list(chat)}", [],
                 "drop something unknown")


def _close(chat: Chat, text: str) -> Reply | None:
    found = CLOSE_RE.match(text)
    if not found:
        return None
    what = found.group("what") or found.group("what2")
    topic = _topic_named(chat, what)
    if topic is None:
        return None
    return Reply("", [("close_topic", {"topic_id": topic.get("id")})], "close a topic")


def _rename(chat: Chat, text: str) -> Reply | None:
    found = RENAME_RE.match(text)
    if not found:
        return None
    topic = _topic_named(chat, found.group("old"))
    if topic is None:
        return None
    return Reply("", [("rename_topic", {"topic_id": topic.get("id"), "title": found.group("new").strip()})],
                 "rename a topic")


def _listing(chat: Chat, text: str) -> Reply | None:
    if not LIST_RE.search(text) or (EXPLICIT_ADD_RE.match(text) and "?" not in text):
        return None
    said = text.lower()
    if re.search(r"\b(today|tonight|tomorrow|week|weekend|month)\b", said) or "plate" in said or "coming" in said:
        return Reply(task_list(chat, dates.week_range(said, chat.now, chat.tz)), [], "list what's coming")
    return Reply(task_list(chat), [], "list open tasks")


def _life_event(chat: Chat, text: str) -> Reply | None:
    matched = None if EXPLICIT_ADD_RE.match(text) else recognise_message(chat.playbook, text)
    if not matched:
        return None
    found = [f for f in dates.search(text, chat.now, chat.tz)]
    if not found:
        return None
    event, trigger = matched
    place = places.find_place(None, text)
    title = place_title(event, text, trigger, place)
    todo = ADD_RE.match(text)
    if todo and "{place}" not in event.title:
        # "I need to file my taxes by the 25th": the topic is what the user has to do
        what, _ = _split_when(todo.group("what"), chat)
        if words(what):
            title = _title(POSSESSIVE_RE.sub("", what))
    start = found[0]
    start_day = dates.local_date(start.value, chat.tz)
    notes = f"From your message: {text}\nOffline rules read {start.stated(chat.tz)}."
    calls = plan_calls(event, title, dates.iso(start.value), None, start_day, chat.today, notes, chat.topics,
                       chat.tasks)
    if not calls:
        return None
    return Reply("", calls,
                 f"“{trigger.group(0)}” in the message (playbook: {event.name}), {start.stated(chat.tz)}")


def _add(chat: Chat, text: str) -> Reply | None:
    found = ADD_RE.match(text)
    if not found:
        return None
    what, when = _split_when(found.group("what"), chat)
    if not words(what):
        return None
    args = {"title": _title(what)}
    rule = "add a task"
    if when is not None:
        args["due"] = dates.iso(when.value)
        args["notes"] = f"Offline rules read {when.stated(chat.tz)}."
        rule += f" ({when.stated(chat.tz)})"
    return Reply("", [("create_task", args)], rule)


# -- answers to pending proposals -------------------------------------------------------------


def _spoken_decision(chat: Chat, text: str) -> Reply | None:
    """"yes", "skip the X one", "all but X", "move the X one to …" on a pending proposal → decide calls;
    None when the words are not an answer to one."""
    proposals = [p for p in chat.pending if isinstance(p, dict) and p.get("items")]
    if "decide" not in chat.offered or not proposals:
        return None
    said = normal(text)
    ref = PROPOSAL_REF_RE.search(said)
    if ref:
        wanted = int(ref.group(1) or ref.group(2))
        proposals = [p for p in proposals if p.get("id") == wanted]
        if not proposals:
            return Reply(f"I don't see an open proposal {wanted} of yours.", [], "answer to an unknown proposal")
        said = " ".join(PROPOSAL_REF_RE.sub(" ", said).split()) or "yes"
        said = {"approve": "yes", "reject": "no", "yes to": "yes", "no to": "no"}.get(said, said)
    newest = proposals[0]
    if YES_RE.match(said):
        return Reply("", [("decide", {"proposal": newest["id"], "action": "approve"})], "yes to a proposal")
    if NO_RE.match(said):
        return Reply("", [("decide", {"proposal": newest["id"], "action": "reject"})], "no to a proposal")
    for pattern, keep_rest in ((EXCEPT_RE, True), (SKIP_RE, True), (REJECT_ITEMS_RE, False)):
        found = pattern.match(said)
        if not found:
            continue
        picked = _items_named(proposals, found.group("what"))
        if picked is None:
            if pattern is SKIP_RE:
                return None
            return Reply(_which(newest), [], "answer naming no item")
        proposal, positions = picked
        calls = [("decide", {"proposal": proposal["id"], "action": "reject", "items": positions})]
        rest = [i["position"] for i in proposal["items"] if i.get("position") not in positions]
        if keep_rest and rest:
            calls.append(("decide", {"proposal": proposal["id"], "action": "approve", "items": rest}))
        return Reply("", calls, "part of a proposal")
    found = CHANGE_RE.match(said)
    if found:
        picked = _items_named(proposals, found.group("what"))
        if picked is not None:
            return Reply("", [("decide", {"proposal": picked[0]["id"], "action": "modify",
                                          "changes": text.strip()})], "change to a proposal")
    return None


def _items_named(proposals: list[dict], what: str) -> tuple[dict, list[int]] | None:
    parts = [p.strip() for p in re.split(r",|\band\b|\bor\b", what) if p.strip()]
    for proposal in proposals:
        items = [i for i in proposal["items"] if isinstance(i, dict)]
        positions = []
        for part in parts:
            part = re.sub(r"\b(?:the|ones?|items?|number|no\.?)\b", " ", part).strip()
            if part.isdigit() and any(i.get("position") == int(part) for i in items):
                positions.append(int(part))
                continue
            item = best_item(items, words(part), set())
            if item is None:
                positions = []
                break
            positions.append(item["position"])
        if positions:
            return proposal, sorted(set(positions))
    return None


def _which(proposal: dict) -> str:
    lines = "\n".join(f"{i.get('position')}. {i.get('description')}" for i in proposal["items"])
    return f"I couldn't tell which item you mean in proposal {proposal['id']}:\n{lines}"


def best_item(items: list[dict], clause_words: set[str], excluded: set[int]) -> dict | None:
    found, score = None, 0
    for item in items:
        if id(item) in excluded:
            continue
        args = item.get("args") or {}
        shared = 2 * len(clause_words & words(str(args.get("title") or ""))) + len(
            clause_words & words(str(item.get("description") or "")))
        if shared > score:
            found, score = item, shared
    return found


def modify(proposal: dict | None, request: str, now: datetime, tz) -> Reply:
    """The user's change to a proposal ("book flights by Feb 1", "skip the insurance") → its items again."""
    items = sorted((i for i in (proposal or {}).get("items") or [] if isinstance(i, dict)),
                   key=lambda i: i.get("position", 0))
    if not items:
        return Reply("I don't see a proposal to change.", [], "modify without a proposal")
    args = {id(item): dict(item.get("args") or {}) for item in items}
    removed, changed = set(), False
    for clause in re.split(r"[;,\n]|\bbut\b|\band\b|\balso\b", request, flags=re.I):
        clause_words = words(clause)
        if not clause_words:
            continue
        if REMOVE_RE.search(clause):
            item = best_item(items, clause_words, removed)
            if item is not None:
                removed.add(id(item))
                changed = True
            continue
        found = dates.search(clause, now, tz)
        if found:
            dated = [i for i in items
                     if i.get("tool") in ("create_task", "update_task") or "due" in (i.get("args") or {})]
            item = best_item(dated, clause_words, removed)
            if item is not None:
                args[id(item)]["due"] = dates.iso(found[0].value)
                changed = True
    if not changed:
        return Reply("I couldn't tell what to change, so the proposal stands. Offline I understand changes like "
                     "“book flights by Feb 1” or “skip the insurance”.", [], "modify not understood")
    return Reply("", [(i.get("tool"), args[id(i)]) for i in items if id(i) not in removed], "modify a proposal")
