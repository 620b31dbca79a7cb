"""The offline provider: Wilson without a language model.

It answers in the OpenAI wire format, with tool calls, so actors cannot tell it
from a real model. What it does is chosen by the tools the request offers
(triage -> thalamus, arousal -> RAS, record_memories -> hippocampus, anything
else with a CONTEXT message -> cortex) and by small, deterministic rules: keyword
lists, a date reader and the editable playbook of life events in
wilson/playbook.toml. Deadlines it proposes are never in the past.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

UTC = timezone.utc
PLAYBOOK_PATH = Path(__file__).with_name("playbook.toml")

INTRO = ("Hi, I'm Wilson. I'm running without a language model, so I can only handle simple things for now. "
         "To connect one, set WILSON_LLM_BASE_URL and WILSON_LLM_MODEL (or start me with --llm URL).")
OFFLINE_HELP = ("Noted. I'm running offline (no language model connected), so I can only handle simple things: "
                "tell me about a trip, exam or appointment with its date, ask what's due, or say “done with …”.")

URGENT_RE = re.compile(r"\b(urgent|urgently|asap|immediately|today|tonight|final notice|overdue|"
                       r"cancell?ed|deadline)\b", re.I)
PROMO_RE = re.compile(r"\b(unsubscribe|newsletter|digest|sale|promotion|promotions|promo|webinar)\b|\d+\s?% off",
                      re.I)
BILL_RE = re.compile(r"\b(bill|invoice|payment due|amount due|payment is due|due date|direct debit)\b", re.I)
CALENDAR_CHANGES = ("new", "changed", "cancelled")
MUTATING_TOOLS_EXCLUDED = {"surface"}

STOP_WORDS = set("""
a about after all also am an and any are as at be been before both but by can could did do does done don't
for from get got had has have i i'm i've if in into is it it's its just let me my need no not now of off on
once or our please put set so some than that the their them then there these this those to too up us was we
what when which while who will with would you your yours move change make it's by until till due date
skip drop remove without delete cancel instead rather want dont
""".split())

_MONTH = (r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
          r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
MONTHS = {name: i + 1 for i, name in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))}
MONTH_WORDS = {"january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
               "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct",
               "nov", "dec"}
ISO_RE = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ](\d{1,2}):(\d{2})(?::\d{2}(?:\.\d+)?)?"
                    r"(Z|[+-]\d{2}:?\d{2})?)?")
DOTTED_RE = re.compile(r"\b(\d{1,2})\.(\d{1,2})\.(\d{4})\b")
DAY_MONTH_RE = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\.?\s+(?:of\s+)?{_MONTH}\b\.?(?:,?\s+(\d{{4}})\b)?", re.I)
MONTH_DAY_RE = re.compile(rf"\b{_MONTH}\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(\d{{4}})\b)?", re.I)
RELATIVE_RE = re.compile(r"\b(today|tonight|tomorrow)\b", re.I)
REMOVE_RE = re.compile(r"\b(skip|drop|remove|without|delete|cancel|don'?t need|not needed)\b|\bno\s+(?=[a-z])",
                       re.I)
DONE_RES = [
    re.compile(r"^\s*(?:i(?:'m| am)\s+|i(?:'ve| have)\s+|i\s+|just\s+)?(?:just\s+)?(?:done with|finished|completed)\s+"
               r"(?P<what>.+)$", re.I),
    re.compile(r"^\s*mark\s+(?P<what>.+?)\s+(?:as\s+)?(?:done|complete|completed|finished)\b", re.I),
    re.compile(r"^\s*(?P<what>.+?)\s+(?:is|are)\s+(?:done|finished|complete|completed)\b", re.I),
]
LIST_RE = re.compile(r"\b(tasks?|to-?dos?|to do|what'?s due|what is due|open items)\b", re.I)


WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
ORDINALS = {"first": "1-7", "second": "8-14", "third": "15-21", "fourth": "22-28"}
REMINDER_RE = re.compile(
    r"^remind me (?:every|each) (?:(?P<ord>first|second|third|fourth) )?(?P<unit>day|\w+day|month)"
    r"(?: at (?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?)?\s*[:,-]?\s*(?:to )?(?P<what>.+)$", re.I)


# Answers to a pending proposal, in words (only offered the `decide` tool in a run the user started)
# Only words that answer a question: "great" or "fine" said about something else must not approve a plan.
_YES = r"(?:yes|yep|yeah|yup|ok|okay|sure|approve|approved|go ahead|go for it|do it|please do|sounds good|let'?s do it)"
_NO = r"(?:no|nope|nah|reject|rejected|no thanks|don'?t|do not|not now|forget it)"
_FILL = r"(?:please|thanks|thank you|all of it|all of them|to all|all|everything|it|them|that|this|proposal|the plan)"
YES_RE = re.compile(rf"^(?:{_FILL}\s+)*{_YES}(?:\s+(?:{_YES}|{_FILL}))*$")
NO_RE = re.compile(rf"^(?:{_FILL}\s+)*{_NO}(?:\s+(?:{_NO}|{_FILL}))*$")
EXCEPT_RE = re.compile(rf"^(?:{_YES}\s+)*(?:(?:approve|do|accept|yes to)\s+)?(?:all|everything|the rest)\s+"
                       r"(?:but|except|apart from|other than|save)\s+(?P<what>.+)$")
SKIP_RE = re.compile(rf"^(?:{_YES}\s+)*(?:but\s+)?(?:skip|drop|leave out|without)\s+(?P<what>.+?)"
                     r"(?:\s+(?:and\s+)?(?:approve|do|go ahead with|keep)?\s*(?:the rest|everything else|the others))?$")
REJECT_ITEMS_RE = re.compile(r"^(?:reject|decline|no to)\s+(?P<what>.+)$")
MOVE_RE = re.compile(r"^(?:move|change|make|push|shift|put)\s+(?P<what>.+)$")
PROPOSAL_REF_RE = re.compile(r"(?:\bproposal\s*#?|#)(\d+)\b|^(?:approve|reject|yes to|no to)\s+(\d+)$")
# Managing tasks in words
CANCEL_RE = re.compile(r"^\s*(?:please\s+)?(?:drop|cancel|delete|remove|forget about|forget)\s+(?:the\s+)?(?:task\s+)?"
                       r"(?P<what>.+?)(?:\s+task)?\s*[.!]*$|^\s*i (?:don'?t|do not) need to (?P<what2>.+?)"
                       r"(?:\s+any\s?more)?\s*[.!]*$", re.I)
SNOOZE_RE = re.compile(r"^\s*(?:snooze|postpone|pause)\s+(?:the\s+)?(?P<what>.+?)\s+(?:until|till|to|for)\s+(?P<when>.+)$"
                       r"|^\s*remind me (?:about|of) (?:the\s+)?(?P<what2>.+?) (?:again )?(?P<when2>(?:on|at|tomorrow|"
                       r"tonight|today|next)\b.*)$", re.I)
REMIND_ONCE_RE = re.compile(r"^\s*remind me (?P<when>(?:on|at|tomorrow|tonight|today)\b.*?) to (?P<what>.+)$"
                            r"|^\s*remind me to (?P<what2>.+?) (?P<when2>(?:on|at|tomorrow|tonight|today)\b.*)$", re.I)
RENAME_RE = re.compile(r"^\s*rename (?:the\s+)?(?:topic\s+)?(?P<old>.+?) (?:to|as) (?P<new>.+?)\s*[.!]*$", re.I)
CLOCK_RE = re.compile(r"\b(?:at\s+)?(\d{1,2})(?::(\d{2}))?\s*(am|pm)?\b(?!\s*(?:st|nd|rd|th|jan|feb|mar|apr|may|"
                      r"jun|jul|aug|sep|oct|nov|dec|\.|-|/))", re.I)


def _normal(text: str) -> str:
    return " ".join(re.sub(r"[^\w'#\s-]", " ", text.lower().replace("’", "'")).split())


def reminder_cron(text: str) -> tuple[str, str] | None:
    """'remind me every first Monday: pay rent' → ('0 9 1-7 * 1', 'pay rent'); None when it isn't one."""
    found = REMINDER_RE.match(text.strip())
    if not found:
        return None
    hour, minute = int(found.group("hour") or 9), int(found.group("minute") or 0)
    if hour > 23 or minute > 59:
        return None
    unit, ordinal = found.group("unit").lower(), found.group("ord")
    if unit == "day":
        days, weekday = "*", "*"
    elif unit == "month":
        days, weekday = "1", "*"
    elif unit in WEEKDAYS:
        days, weekday = ORDINALS.get((ordinal or "").lower(), "*"), str(WEEKDAYS.index(unit) + 1 if unit != "sunday" else 0)
    else:
        return None
    return f"{minute} {hour} {days} * {weekday}", found.group("what").strip().rstrip(".")


# ---------------------------------------------------------------------------
# The playbook


@dataclass(frozen=True)

class PlaybookTask:
    title: str
    days_before: int
    notes: str = ""


@dataclass(frozen=True)
class PlaybookEvent:
    name: str
    label: str
    title: str
    triggers: tuple[str, ...]
    tasks: tuple[PlaybookTask, ...]

    def find(self, text: str) -> re.Match | None:
        best = None
        for trigger in self.triggers:
            match = re.search(rf"(?<![\w-]){re.escape(trigger)}(?![\w-])", text, re.I)
            if match and (best is None or match.start() < best.start()):
                best = match
        return best


def load_playbook(path: str | Path | None = None) -> list[PlaybookEvent]:
    path = Path(path) if path else PLAYBOOK_PATH
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"playbook {path}: {exc}") from None
    events = []
    for name, spec in data.items():
        if not isinstance(spec, dict):
            continue
        tasks = tuple(PlaybookTask(str(t["title"]), int(t.get("days_before", 0)), str(t.get("notes", "")))
                      for t in spec.get("tasks", []))
        label = str(spec.get("label") or name.capitalize())
        events.append(PlaybookEvent(name=name, label=label, title=str(spec.get("title") or label),
                                    triggers=tuple(str(w) for w in spec.get("triggers", [])), tasks=tasks))
    return events


def match_playbook(playbook: list[PlaybookEvent], text: str) -> tuple[PlaybookEvent, re.Match] | None:
    for event in playbook:
        found = event.find(text or "")
        if found:
            return event, found
    return None


# ---------------------------------------------------------------------------
# Dates and words


def _tz(name) -> ZoneInfo:
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def parse_moment(value, tz: ZoneInfo) -> date | datetime | None:
    """An ISO date (kept as a date) or datetime (made aware, naive read in `tz`)."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=tz)
    if isinstance(value, date):
        return value
    if not isinstance(value, str) or not value.strip():
        return None
    value = value.strip()
    try:
        if len(value) == 10:
            return date.fromisoformat(value)
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=tz)


def local_date(moment: date | datetime, tz: ZoneInfo) -> date:
    return moment.astimezone(tz).date() if isinstance(moment, datetime) else moment


def as_datetime(moment: date | datetime, tz: ZoneInfo) -> datetime:
    if isinstance(moment, datetime):
        return moment
    return datetime.combine(moment, time(0), tzinfo=tz)


def _resolve(year, month: int, day: int, today: date) -> date | None:
    try:
        if year:
            return date(int(year), month, day)
        found = date(today.year, month, day)
        return found if found >= today else date(today.year + 1, month, day)
    except ValueError:
        return None


def find_dates(text: str, today: date, tz: ZoneInfo) -> list[date | datetime]:
    """Explicit dates in text, in order; a year left out means the next such day on or after today."""
    found: list[tuple[int, date | datetime]] = []
    taken: list[tuple[int, int]] = []

    def add(match, value):
        span = match.span()
        if value is None or any(span[0] < end and start < span[1] for start, end in taken):
            return
        taken.append(span)
        found.append((span[0], value))

    for m in ISO_RE.finditer(text):
        try:
            day = date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        except ValueError:
            continue
        if m.group(4):
            zone = tz
            if m.group(6):
                zone = UTC if m.group(6) == "Z" else datetime.strptime(m.group(6).replace(":", ""), "%z").tzinfo
            add(m, datetime.combine(day, time(int(m.group(4)), int(m.group(5))), tzinfo=zone))
        else:
            add(m, day)
    for m in DOTTED_RE.finditer(text):
        add(m, _resolve(m.group(3), int(m.group(2)), int(m.group(1)), today))
    for m in DAY_MONTH_RE.finditer(text):
        add(m, _resolve(m.group(3), MONTHS[m.group(2)[:3].lower()], int(m.group(1)), today))
    for m in MONTH_DAY_RE.finditer(text):
        add(m, _resolve(m.group(3), MONTHS[m.group(1)[:3].lower()], int(m.group(2)), today))
    for m in RELATIVE_RE.finditer(text):
        add(m, today + timedelta(days=1) if m.group(1).lower() == "tomorrow" else today)
    return [value for _, value in sorted(found, key=lambda pair: pair[0])]


def words(text: str) -> set[str]:
    """Content words, lower case, plural s dropped: what two phrasings of one task share."""
    out = set()
    for word in re.findall(r"[a-z0-9][a-z0-9'’-]*", (text or "").lower()):
        word = word.replace("’", "'").strip("'-")
        if word.endswith("'s"):
            word = word[:-2]
        if not word or word in STOP_WORDS or word in MONTH_WORDS or word[0].isdigit():
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        if len(word) > 5 and word.endswith("ing"):
            word = word[:-3]  # "booking flights" names the task "Book flights"
        out.add(word)
    return out


def fmt_day(day: date) -> str:
    return f"{day:%a} {day.day} {day:%b}"


def fmt_moment(moment: date | datetime, tz: ZoneInfo) -> str:
    if isinstance(moment, datetime):
        local = moment.astimezone(tz)
        return f"{fmt_day(local.date())} {local.year} {local:%H:%M}"
    return f"{fmt_day(moment)} {moment.year}"


def _json_in(text) -> dict:
    if isinstance(text, dict):
        return text
    text = text or ""
    start = text.find("{")
    if start < 0:
        return {}
    try:
        value, _ = json.JSONDecoder().raw_decode(text[start:])
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _now(value) -> datetime:
    moment = parse_moment(value, ZoneInfo("UTC")) if value else None
    if isinstance(moment, datetime):
        return moment
    if isinstance(moment, date):
        return as_datetime(moment, ZoneInfo("UTC"))
    return datetime(1970, 1, 1, tzinfo=UTC)  # the request forgot "now": nothing will look imminent


def _content(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


def _last_user(messages: list[dict]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            return _content(message)
    return ""


def find_context(messages: list[dict]) -> dict | None:
    for message in messages:
        text = _content(message)
        if message.get("role") == "user" and text.startswith("CONTEXT "):
            return _json_in(text[len("CONTEXT "):])
    return None


# ---------------------------------------------------------------------------
# The provider


class OfflineProvider:
    def __init__(self, playbook_path: str | Path | None = None):
        self.playbook = load_playbook(playbook_path)

    def complete(self, payload: dict, role: str = "deep") -> dict:
        """An OpenAI chat-completion response body for one request."""
        messages = [m for m in payload.get("messages") or [] if isinstance(m, dict)]
        offered = [(t.get("function") or {}).get("name", "") for t in payload.get("tools") or []]
        text, calls = self.respond(messages, offered, payload.get("response_format"))
        calls = [(name, args) for name, args in calls if name in offered]
        message = {"role": "assistant", "content": text if (text or not calls) else None}
        if calls:
            message["tool_calls"] = [
                {"id": f"call_offline_{len(messages)}_{i}", "type": "function",
                 "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}
                for i, (name, args) in enumerate(calls)]
        prompt = max(1, len(json.dumps({"messages": messages, "tools": payload.get("tools")}, default=str)) // 4)
        completion = max(1, len(json.dumps(message, ensure_ascii=False)) // 4)
        return {
            "id": f"offline-{len(messages)}", "object": "chat.completion", "model": "offline",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion},
        }

    def respond(self, messages: list[dict], offered: list[str], response_format=None) -> tuple[str, list]:
        if messages and messages[-1].get("role") == "tool":
            return self._after_tools(messages), []
        if "triage" in offered:
            return "", [("triage", self.triage(_json_in(_last_user(messages))))]
        if "arousal" in offered:
            return "", [("arousal", self.arousal(_json_in(_last_user(messages))))]
        if "record_memories" in offered:
            candidates = _json_in(_last_user(messages)).get("candidates") or []
            return "", [("record_memories", {"items": candidates})]
        context = find_context(messages)
        if context is not None:
            return Cortex(self.playbook, context, messages, offered).respond()
        if response_format and response_format.get("type") in ("json_object", "json_schema"):
            return "{}", []
        if offered:
            return "", []
        return INTRO, []

    def _after_tools(self, messages: list[dict]) -> str:
        """The loop's closing answer once the tool results are in."""
        context = find_context(messages) or {}
        stimulus = context.get("stimulus") or {}
        if stimulus.get("origin", "background") != "user":
            return ""
        called = []
        for message in reversed(messages):
            if message.get("role") == "assistant" and message.get("tool_calls"):
                called = [(c.get("function") or {}).get("name") for c in message["tool_calls"]]
                break
        if called and all(name == "decide" for name in called):
            return ""  # the approval gate answers with what it did
        if any(name not in MUTATING_TOOLS_EXCLUDED for name in called):
            answer = "I've put that together for your approval."
        else:
            answer = "Done."
        return f"{INTRO}\n\n{answer}" if context.get("first_contact") else answer

    # -- thalamus --------------------------------------------------------------

    def triage(self, data: dict) -> dict:
        now, tz = _now(data.get("now")), _tz(data.get("timezone"))
        return {"items": [self._triage_item(item, now, tz) for item in data.get("items") or []
                          if isinstance(item, dict)]}

    def _triage_item(self, item: dict, now: datetime, tz: ZoneInfo) -> dict:
        bid = item.get("buffer_id")
        text = str(item.get("text") or "")
        payload = item.get("payload") if isinstance(item.get("payload"), dict) else {}
        entry = {"buffer_ids": [bid] if bid is not None else [], "summary": _summary(text, payload),
                 "priority": 3, "action": "drop", "reason": "nothing that needs you", "topic": None}
        change = payload.get("change")
        if change in CALENDAR_CHANGES:
            start = parse_moment(payload.get("start"), tz)
            soon = (start is not None
                    and now - timedelta(hours=12) <= as_datetime(start, tz) <= now + timedelta(hours=48))
            entry.update(summary=_calendar_summary(payload, tz), priority=1 if soon else 2, action="inbox",
                         reason=f"calendar event {change}" + (" starting within 48 hours" if soon else ""),
                         topic=payload.get("title") or None)
            return entry
        blob = " ".join(str(payload.get(k) or "") for k in ("subject", "title")) + " " + text
        if PROMO_RE.search(blob):
            entry["reason"] = "newsletter or promotion"
            return entry
        today = now.astimezone(tz).date()
        urgent = URGENT_RE.search(blob)
        dated = [d for d in find_dates(blob, today, tz) if today <= local_date(d, tz) <= today + timedelta(days=7)]
        bill = BILL_RE.search(blob)
        if urgent or dated or bill:
            close = any(local_date(d, tz) <= today + timedelta(days=2) for d in dated)
            reasons = []
            if urgent:
                reasons.append(f"urgent wording (“{urgent.group(0)}”)")
            if dated:
                reasons.append(f"a date within a week ({fmt_moment(dated[0], tz)})")
            if bill:
                reasons.append("a bill or payment due")
            entry.update(priority=1 if (urgent or close) else 2, action="inbox", reason="; ".join(reasons))
        return entry

    # -- RAS ---------------------------------------------------------------------

    def arousal(self, data: dict) -> dict:
        now = _now(data.get("now"))
        tz = _tz(data.get("timezone"))
        today = now.astimezone(tz).date()
        urgent_ids, reasons = [], []
        for item in data.get("items") or []:
            if not isinstance(item, dict):
                continue
            snippet = str(item.get("snippet") or item.get("text") or "")
            label = item.get("channel") or "item"
            found = URGENT_RE.search(snippet)
            if found:
                reason = f"{label}: urgent wording (“{found.group(0)}”)"
            else:
                soon = [d for d in find_dates(snippet, today, tz) if _within(d, now, tz, hours=48)]
                reason = f"{label}: {fmt_moment(soon[0], tz)} is within 48 hours" if soon else None
            if reason:
                urgent_ids.append(item.get("buffer_id"))
                reasons.append(reason)
        return {"urgent": bool(urgent_ids), "reason": "; ".join(reasons) or "nothing urgent",
                "buffer_ids": urgent_ids}


def _within(moment: date | datetime, now: datetime, tz: ZoneInfo, hours: int) -> bool:
    if isinstance(moment, datetime):
        return now - timedelta(hours=1) <= moment <= now + timedelta(hours=hours)
    today = now.astimezone(tz).date()
    return today <= moment <= (now + timedelta(hours=hours)).astimezone(tz).date()


def _summary(text: str, payload: dict) -> str:
    subject = str(payload.get("subject") or payload.get("title") or "").strip()
    sender = str(payload.get("from") or "").strip()
    if not subject:
        subject = next((line.strip() for line in text.splitlines() if line.strip()), "")
    summary = f"{subject} (from {sender})" if subject and sender else subject
    return summary[:157] + "…" if len(summary) > 160 else summary


def _calendar_summary(payload: dict, tz: ZoneInfo) -> str:
    title = payload.get("title") or "an event"
    start = parse_moment(payload.get("start"), tz)
    when = fmt_moment(start, tz) if start else "no date"
    change = payload.get("change")
    if change == "cancelled":
        return f"Cancelled: {title} ({when})"
    if change == "changed":
        previous = parse_moment((payload.get("previous") or {}).get("start"), tz)
        if previous and previous != start:
            return f"Moved: {title} from {fmt_moment(previous, tz)} to {when}"
        return f"Changed: {title} ({when})"
    return f"New event: {title} ({when})"


# ---------------------------------------------------------------------------
# Cortex


class Cortex:
    """One cortex request: the CONTEXT object decides what to propose or say."""

    def __init__(self, playbook, context: dict, messages: list[dict], offered: list[str]):
        self.playbook = playbook
        self.context = context
        self.messages = messages
        self.offered = offered
        self.tz = _tz(context.get("timezone"))
        self.now = _now(context.get("now"))
        self.today = self.now.astimezone(self.tz).date()
        self.stimulus = context.get("stimulus") or {}
        payload = self.stimulus.get("payload")
        self.payload = payload if isinstance(payload, dict) else {}

    def respond(self) -> tuple[str, list]:
        kind = self.stimulus.get("kind")
        handler = getattr(self, f"on_{kind}", None) if isinstance(kind, str) else None
        if handler is None:
            return "", []
        return handler()

    # -- proposals from life events ---------------------------------------------

    def plan(self, event: PlaybookEvent, title: str, start, end, notes: str) -> list:
        start_value = parse_moment(start, self.tz)
        if start_value is None:
            return []
        start_day = local_date(start_value, self.tz)
        known_topics = {str(t.get("title", "")).lower() for t in self.context.get("topics") or []
                        if t.get("status") != "closed"}
        known_tasks = {(str(t.get("topic") or "").lower(), str(t.get("title", "")).lower())
                       for t in self.context.get("tasks") or []}
        calls = []
        if title.lower() not in known_topics:
            topic = {"title": title, "starts": _iso(start), "ends": _iso(end), "notes": notes}
            calls.append(("create_topic", {k: v for k, v in topic.items() if v not in (None, "")}))
        for task in event.tasks:
            if (title.lower(), task.title.lower()) in known_tasks:
                continue
            due = max(start_day - timedelta(days=task.days_before), self.today + timedelta(days=1))
            calls.append(("create_task", {"title": task.title, "due": due.isoformat(), "topic": title,
                                          "notes": task.notes}))
        return calls

    def on_event(self) -> tuple[str, list]:
        calls = []
        for buffer in self.payload.get("buffers") or []:
            if not isinstance(buffer, dict):
                continue
            change = buffer.get("change")
            if change == "new":
                calls += self._new_event(buffer)
            elif change == "changed":
                calls += self._moved_event(buffer)
            elif change == "cancelled":
                calls += self._cancelled_event(buffer)
        return "", calls

    def _new_event(self, buffer: dict) -> list:
        title = str(buffer.get("title") or "").strip()
        found = match_playbook(self.playbook, " ".join([title, str(buffer.get("description") or "")]))
        if not title or not found:
            return []
        location = buffer.get("location")
        notes = f"Location: {location}" if location else ""
        return self.plan(found[0], title, buffer.get("start"), buffer.get("end"), notes)

    def _titles(self, buffer: dict) -> set[str]:
        previous = buffer.get("previous") or {}
        return {str(t).strip().lower() for t in (buffer.get("title"), previous.get("title")) if t}

    def _matching_topics(self, buffer: dict) -> list[dict]:
        titles = self._titles(buffer)
        return [t for t in self.context.get("topics") or []
                if str(t.get("title", "")).strip().lower() in titles and t.get("status") != "closed"]

    def _moved_event(self, buffer: dict) -> list:
        previous = buffer.get("previous") or {}
        old = parse_moment(previous.get("start"), self.tz)
        new = parse_moment(buffer.get("start"), self.tz)
        if old is None or new is None:
            return []
        delta = as_datetime(new, self.tz) - as_datetime(old, self.tz)
        if not delta:
            return []
        titles = self._titles(buffer)
        topic_ids = {t.get("id") for t in self.context.get("topics") or []
                     if str(t.get("title", "")).strip().lower() in titles}
        # the topic's own dates follow the event, so its end (and closing) moves with it
        calls = [("update_topic", {"topic_id": t.get("id"), "starts": buffer.get("start"), "ends": buffer.get("end")})
                 for t in self._matching_topics(buffer)]
        for task in self.context.get("tasks") or []:
            if task.get("status", "open") != "open":
                continue
            mine = (str(task.get("topic") or "").strip().lower() in titles
                    or (task.get("topic_id") is not None and task.get("topic_id") in topic_ids))
            due = parse_moment(task.get("due"), self.tz)
            if not mine or due is None:
                continue
            calls.append(("update_task", {"task_id": task.get("id"), "due": self._shift(due, delta)}))
        return calls

    def _shift(self, due, delta: timedelta) -> str:
        tomorrow = self.today + timedelta(days=1)
        if isinstance(due, datetime):
            moved = due + delta
            if moved <= self.now:
                moved = datetime.combine(tomorrow, moved.astimezone(self.tz).timetz())
            return moved.isoformat()
        moved = due + timedelta(days=round(delta.total_seconds() / 86400))
        return max(moved, tomorrow).isoformat()

    def _cancelled_event(self, buffer: dict) -> list:
        return [("close_topic", {"topic_id": t.get("id")}) for t in self._matching_topics(buffer)]

    # -- tick ---------------------------------------------------------------------

    def on_deadline(self) -> tuple[str, list]:
        title = self.payload.get("title") or self.stimulus.get("text") or "a task"
        window = str(self.payload.get("window") or "")
        due = parse_moment(self.payload.get("due"), self.tz)
        day = local_date(due, self.tz) if due else None
        topic = self.payload.get("topic")
        name = f"“{title}”" + (f" ({topic})" if topic else "")
        when = f" ({fmt_day(day)})" if day else ""
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
        return "", [("surface", {"text": text, "why": f"deadline window {window or 'unknown'}"})]

    def on_buffered(self) -> tuple[str, list]:
        """Triage kept a non-calendar item because it needs the user: pass its summary on."""
        summary = next((line.strip() for line in str(self.stimulus.get("text") or "").splitlines() if line.strip()), "")
        if not summary:
            return "", []
        channels = sorted({str(b.get("channel")) for b in self.payload.get("buffers") or []
                           if isinstance(b, dict) and b.get("channel")})
        where = f" from your {' and '.join(channels)}" if channels else ""
        if self.stimulus.get("untrusted"):
            where = ""  # the cortex names the source of others' text itself
        return "", [("surface", {"text": f"Heads-up{where}: {summary}", "why": "triage kept it as needing you"})]

    def on_topic_end(self) -> tuple[str, list]:
        topic_id = self.payload.get("topic_id")
        return "", ([("close_topic", {"topic_id": topic_id})] if topic_id is not None else [])

    def on_briefing(self) -> tuple[str, list]:
        items = [i for i in self.payload.get("items") or [] if isinstance(i, dict) and i.get("summary")]
        if not items:
            return "", []
        lines = "\n".join(f"• {i['summary']}" for i in items)
        return "", [("surface", {"text": f"Good morning! Here is what needs you today:\n{lines}",
                                 "why": "morning briefing"})]

    def on_reminder(self) -> tuple[str, list]:
        text = self.payload.get("text") or self.stimulus.get("text") or ""
        return "", [("surface", {"text": f"Reminder: {text}", "why": "scheduled reminder"})]

    # -- the user asks to change a proposal ----------------------------------------

    def on_modify(self) -> tuple[str, list]:
        proposal = self.context.get("proposal") or {}
        items = sorted((i for i in proposal.get("items") or [] if isinstance(i, dict)),
                       key=lambda i: i.get("position", 0))
        if not items:
            return "I don't see a proposal to change.", []
        request = str(self.stimulus.get("text") or _last_user(self.messages))
        args = {id(item): dict(item.get("args") or {}) for item in items}
        removed, changed = set(), False
        for clause in re.split(r"[;,\n]|\bbut\b|\band\b|\balso\b", request, flags=re.I):
            clause_words = words(clause)
            if not clause_words:
                continue
            if REMOVE_RE.search(clause):
                best = _best(items, clause_words, removed)
                if best is not None:
                    removed.add(id(best))
                    changed = True
                continue
            dates = find_dates(clause, self.today, self.tz)
            if dates:
                dated = [i for i in items if i.get("tool") in ("create_task", "update_task")
                         or "due" in (i.get("args") or {})]
                best = _best(dated, clause_words, removed)
                if best is not None:
                    args[id(best)]["due"] = _iso(dates[0])
                    changed = True
        if not changed:
            return ("I couldn't tell what to change, so the proposal stands. Offline I understand changes like "
                    "“book flights by Feb 1” or “skip the insurance”."), []
        return "", [(i.get("tool"), args[id(i)]) for i in items if id(i) not in removed]

    # -- the user says something ----------------------------------------------------

    def on_message(self) -> tuple[str, list]:
        if self.stimulus.get("origin", "user") != "user":
            return "", []
        text = str(self.stimulus.get("text") or _last_user(self.messages)).strip()
        first = bool(self.context.get("first_contact"))
        open_tasks = [t for t in self.context.get("tasks") or [] if t.get("status", "open") == "open"]

        answer = self._spoken_decision(text)
        if answer is not None:
            return answer

        from wilson.attention import is_on_it

        if is_on_it(text):  # the acknowledgement itself is recorded by code (wilson/attention.py record_ack)
            return self._say("Great — I won't chase you about it again until the next reminder.", first), []

        for pattern in DONE_RES:
            found = pattern.match(text)
            if found:
                best = _best_task(open_tasks, words(found.group("what")))
                if best is not None:
                    return "", [("complete_task", {"task_id": best.get("id")})]
                return self._say(f"I couldn't tell which task you mean. {self._task_list(open_tasks)}", first), []

        reminder = reminder_cron(text)
        if reminder is not None:
            return "", [("create_reminder", {"text": reminder[1], "cron": reminder[0]})]

        managed = self._manage_tasks(text, open_tasks, first)
        if managed is not None:
            return managed

        matched = match_playbook(self.playbook, text)
        if matched:
            dates = [d for d in find_dates(text, self.today, self.tz) if local_date(d, self.tz) >= self.today]
            if dates:
                event, trigger = matched
                title = _title_from_message(event, trigger, text)
                calls = self.plan(event, title, _iso(dates[0]), None, f"From your message: {text}")
                if calls:
                    return "", calls

        if LIST_RE.search(text):
            return self._say(self._task_list(open_tasks), first), []
        return (INTRO if first else OFFLINE_HELP), []

    # -- answers to pending proposals -------------------------------------------------

    def _spoken_decision(self, text: str) -> tuple[str, list] | None:
        """"yes", "skip the X one", "all but X", "move the X one to …" on a pending proposal → decide calls;
        None when the words are not an answer to one."""
        proposals = [p for p in self.context.get("pending_proposals") or [] if isinstance(p, dict) and p.get("items")]
        if "decide" not in self.offered or not proposals:
            return None
        said = _normal(text)
        ref = PROPOSAL_REF_RE.search(said)
        if ref:
            wanted = int(ref.group(1) or ref.group(2))
            proposals = [p for p in proposals if p.get("id") == wanted]
            if not proposals:
                return f"I don't see an open proposal {wanted} of yours.", []
            said = " ".join(PROPOSAL_REF_RE.sub(" ", said).split()) or "yes"
            said = {"approve": "yes", "reject": "no", "yes to": "yes", "no to": "no"}.get(said, said)
        newest = proposals[0]
        if YES_RE.match(said):
            return "", [("decide", {"proposal": newest["id"], "action": "approve"})]
        if NO_RE.match(said):
            return "", [("decide", {"proposal": newest["id"], "action": "reject"})]
        for pattern, keep_rest in ((EXCEPT_RE, True), (SKIP_RE, True), (REJECT_ITEMS_RE, False)):
            found = pattern.match(said)
            if not found:
                continue
            picked = self._items_named(proposals, found.group("what"))
            if picked is None:
                return None if pattern is SKIP_RE else (self._which(newest), [])
            proposal, positions = picked
            calls = [("decide", {"proposal": proposal["id"], "action": "reject", "items": positions})]
            rest = [i["position"] for i in proposal["items"] if i.get("position") not in positions]
            if keep_rest and rest:
                calls.append(("decide", {"proposal": proposal["id"], "action": "approve", "items": rest}))
            return "", calls
        found = MOVE_RE.match(said)
        if found and self._items_named(proposals, found.group("what")) is not None:
            proposal, _ = self._items_named(proposals, found.group("what"))
            return "", [("decide", {"proposal": proposal["id"], "action": "modify", "changes": text.strip()})]
        return None

    def _items_named(self, proposals: list[dict], what: str) -> tuple[dict, list[int]] | None:
        """The first proposal (newest first) whose items the words name, with their positions."""
        parts = [p.strip() for p in re.split(r",|\band\b|\bor\b", what) if p.strip()]
        for proposal in proposals:
            items = [i for i in proposal["items"] if isinstance(i, dict)]
            positions = []
            for part in parts:
                part = re.sub(r"\b(?:the|ones?|items?|number|no\.?)\b", " ", part).strip()
                if part.isdigit() and any(i.get("position") == int(part) for i in items):
                    positions.append(int(part))
                    continue
                best = _best(items, words(part), set())
                if best is None:
                    positions = []
                    break
                positions.append(best["position"])
            if positions:
                return proposal, sorted(set(positions))
        return None

    def _which(self, proposal: dict) -> str:
        lines = "\n".join(f"{i.get('position')}. {i.get('description')}" for i in proposal["items"])
        return f"I couldn't tell which item you mean in proposal {proposal['id']}:\n{lines}"

    # -- managing tasks ---------------------------------------------------------------

    def _manage_tasks(self, text: str, open_tasks: list[dict], first: bool) -> tuple[str, list] | None:
        once = REMIND_ONCE_RE.match(text)
        if once:
            what = (once.group("what") or once.group("what2")).strip().rstrip(".!")
            at = self._moment(once.group("when") or once.group("when2"))
            if at is None:
                return self._say("When should I remind you? Say e.g. “remind me tomorrow at 18:00 to call Mum”.",
                                 first), []
            return "", [("remind", {"text": what, "at": at.isoformat()})]
        snooze = SNOOZE_RE.match(text)
        if snooze:
            task = _best_task(open_tasks, words(snooze.group("what") or snooze.group("what2")))
            at = self._moment(snooze.group("when") or snooze.group("when2"))
            if task is not None and at is not None:
                return "", [("snooze_task", {"task_id": task.get("id"), "until": at.isoformat()})]
        cancel = CANCEL_RE.match(text)
        if cancel:
            task = _best_task(open_tasks, words(cancel.group("what") or cancel.group("what2")))
            if task is not None:
                return "", [("cancel_task", {"task_id": task.get("id")})]
            return self._say(f"I couldn't tell which task you mean. {self._task_list(open_tasks)}", first), []
        rename = RENAME_RE.match(text)
        if rename:
            topics = [t for t in self.context.get("topics") or [] if t.get("status") != "closed"]
            topic = _best_task(topics, words(rename.group("old")))
            if topic is not None:
                return "", [("rename_topic", {"topic_id": topic.get("id"), "title": rename.group("new").strip()})]
        return None

    def _moment(self, when: str) -> datetime | None:
        """"tomorrow at 18:00", "on 12 Jan", "at 7pm": a local moment still to come (a day alone: 09:00)."""
        if not when:
            return None
        days = [d for d in find_dates(when, self.today, self.tz) if local_date(d, self.tz) >= self.today]
        if days and isinstance(days[0], datetime):
            return days[0]
        clock = None
        for found in CLOCK_RE.finditer(re.sub(r"\b\d{4}-\d{1,2}-\d{1,2}\b", " ", when)):
            hour, minute, half = int(found.group(1)), int(found.group(2) or 0), (found.group(3) or "").lower()
            if half == "pm" and hour < 12:
                hour += 12
            if half == "am" and hour == 12:
                hour = 0
            if (found.group(2) or half or "at" in found.group(0)) and hour < 24 and minute < 60:
                clock = time(hour, minute)
                break
        if re.search(r"\btonight\b", when, re.I) and clock is None:
            clock = time(20, 0)
        if not days and clock is None:
            return None
        day = local_date(days[0], self.tz) if days else self.today
        moment = datetime.combine(day, clock or time(9, 0), tzinfo=self.tz)
        if moment <= self.now and not days:
            moment += timedelta(days=1)  # a time alone that has passed today means tomorrow
        return moment if moment > self.now else None

    def _say(self, text: str, first: bool) -> str:
        return f"{INTRO}\n\n{text}" if first else text

    def _task_list(self, tasks: list[dict]) -> str:
        if not tasks:
            return "You have no open tasks."

        def key(task):
            due = parse_moment(task.get("due"), self.tz)
            return (due is None, local_date(due, self.tz) if due else date.max, str(task.get("title")))

        lines = []
        for task in sorted(tasks, key=key):
            due = parse_moment(task.get("due"), self.tz)
            suffix = f" — due {fmt_day(local_date(due, self.tz))}" if due else ""
            lines.append(f"• {task.get('title')}{suffix}")
        return "Your open tasks:\n" + "\n".join(lines)


def _window_days(window: str) -> int | None:
    found = re.fullmatch(r"(\d+)\s*([dwh])", window.strip().lower())
    if not found:
        return None
    number, unit = int(found.group(1)), found.group(2)
    return number * 7 if unit == "w" else number if unit == "d" else max(0, number // 24)


def _iso(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    return str(value)


def _best(items: list[dict], clause_words: set[str], excluded: set[int]) -> dict | None:
    best, best_score = None, 0
    for item in items:
        if id(item) in excluded:
            continue
        args = item.get("args") or {}
        score = 2 * len(clause_words & words(str(args.get("title") or ""))) + len(
            clause_words & words(str(item.get("description") or "")))
        if score > best_score:
            best, best_score = item, score
    return best


def _best_task(tasks: list[dict], wanted: set[str]) -> dict | None:
    best, best_score = None, 0
    for task in tasks:
        score = len(wanted & words(str(task.get("title") or "")))
        if score > best_score:
            best, best_score = task, score
    return best


def _title_from_message(event: PlaybookEvent, trigger: re.Match, text: str) -> str:
    if "{place}" in event.title:
        place = re.search(r"\bto\s+((?:[A-Z][\w'’-]*)(?:\s+[A-Z][\w'’-]*)*)", text)
        if place and place.group(1).lower() not in MONTH_WORDS:
            return event.title.replace("{place}", place.group(1))
        return event.label
    # keep up to two words in front of the trigger: "chemistry exam", "Mum's birthday"
    before = re.findall(r"[\w'’-]+", text[:trigger.start()])[-2:]
    kept = []
    for word in reversed(before):
        if word.lower() in STOP_WORDS or word.lower() in ("have", "got", "i'm", "i", "an"):
            break
        kept.insert(0, word)
    phrase = " ".join(kept + [trigger.group(0)]).strip()
    return phrase[:1].upper() + phrase[1:] if kept else event.label
