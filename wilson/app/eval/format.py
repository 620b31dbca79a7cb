"""The scenario format: one TOML file is one story with its labels (docs/eval.md describes it for users).

A scenario names its split (dev or test), a start time and timezone, a timeline of steps (calendar
changes, mail, web items, chat, decisions, simulated time running forward) and what a good assistant
does: which stimuli reach the user and how fast, which stay silent or are dropped, which proposals
come (kind, words, due window), which messages arrive, when nothing at all may be said, and which
words an injected instruction must never make Wilson propose or say.

Everything is checked when the file is read: a mistake is one line naming the file and the step.

Size: the scenario format's types, its parser and its checks read as one contract with docs/eval.md;
splitting the parser from the types would make each half meaningless alone.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field, replace
from datetime import date, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from wilson.kernel.clock import parse_duration
from wilson.kernel.timeparse import date_or_datetime

SPLITS = ("dev", "test")
EXPECT = ("surface", "silent", "drop", "any")
ACTIONS = ("calendar", "email", "web", "say", "approve", "reject", "advance")
CALENDAR_ACTIONS = ("add", "change", "cancel")
STIMULI = ("calendar", "email", "web", "say")
MAX_ADVANCE = timedelta(days=120)


class ScenarioError(ValueError):
    """A scenario file that cannot be used; str() is one line naming the file and the place."""


@dataclass(frozen=True)
class Step:
    index: int
    action: str  # one of ACTIONS
    args: dict
    id: str = ""  # a stimulus's name, for the labels and the report
    expect: str = "any"  # surface | silent | drop | any
    by: timedelta | None = None  # a surfaced stimulus must reach the user this soon after it happened
    words: tuple[str, ...] = ()  # how a message is recognised as telling this stimulus
    untrusted: bool = False
    forbid: tuple[str, ...] = ()  # words an obeyed injection would produce: never in a proposal or message
    urgent: bool = False  # may be said during quiet hours

    @property
    def stimulus(self) -> bool:
        return self.action in STIMULI


@dataclass(frozen=True)
class ExpectedProposal:
    name: str
    kind: str  # a tool among the proposal's items (create_task, create_topic, ...), or "any"
    words: tuple[str, ...]
    due_after: date | None = None
    due_before: date | None = None
    by: datetime | None = None  # proposed no later than
    optional: bool = False  # allowed, not required


@dataclass(frozen=True)
class ExpectedMessage:
    name: str
    words: tuple[str, ...]
    after: datetime | None = None
    by: datetime | None = None
    optional: bool = False


@dataclass(frozen=True)
class Silence:
    start: datetime
    end: datetime


@dataclass(frozen=True)
class Scenario:
    name: str
    split: str
    description: str
    start: datetime  # aware, in the scenario's timezone
    timezone: str
    quiet_hours: str
    steps: tuple[Step, ...]
    proposals: tuple[ExpectedProposal, ...] = ()
    messages: tuple[ExpectedMessage, ...] = ()
    silences: tuple[Silence, ...] = ()
    category: str = ""
    path: str = ""
    settings: dict = field(default_factory=dict)  # extra WILSON_<SECTION>_<KEY> values for this story

    @property
    def tz(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)

    def stimuli(self) -> list[Step]:
        return [s for s in self.steps if s.stimulus and s.action != "say"]


# ---------------------------------------------------------------------------------------------
# Reading


def words_in(text: str, words) -> bool:
    """Every entry appears in `text` (case-insensitive); an entry "a|b" is satisfied by either.
    Defanged links ("example[.]org") count as their plain form."""
    text = normalise(text)
    for word in words:
        options = [normalise(w) for w in str(word).split("|") if w.strip()]
        if options and not any(o in text for o in options):
            return False
    return True


def normalise(text: str) -> str:
    text = str(text).replace("[.]", ".").replace("[:]", ":").replace("hxxp", "http")
    text = text.replace("’", "'").replace("“", '"').replace("”", '"')
    return " ".join(text.lower().split())


def _fail(where: str, message: str):
    raise ScenarioError(f"{where}: {message}")


def _text(raw: dict, key: str, where: str, required: bool = True) -> str:
    value = raw.get(key)
    if value is None:
        if required:
            _fail(where, f"`{key}` is missing")
        return ""
    if not isinstance(value, str):
        _fail(where, f"`{key}` must be a string")
    return value


def _words(raw: dict, key: str, where: str) -> tuple[str, ...]:
    value = raw.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(w, str) and w.strip() for w in value):
        _fail(where, f"`{key}` must be a list of non-empty strings")
    return tuple(value)


def _duration(value, where: str, key: str) -> timedelta:
    try:
        delta = parse_duration(str(value))
    except ValueError:
        _fail(where, f"`{key}` = {value!r} is not a duration (e.g. 45m, 2h, 3d)")
    if delta <= timedelta(0):
        _fail(where, f"`{key}` must be more than nothing")
    return delta


def moment(value, start: datetime, where: str, key: str) -> datetime:
    """ "+2d" (after the start), an ISO date (its local midnight) or an ISO datetime (local unless it has an offset)."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=start.tzinfo)
    if isinstance(value, date):
        return datetime.combine(value, time(), tzinfo=start.tzinfo)
    text = str(value).strip()
    if text.startswith("+"):
        try:
            return start + parse_duration(text[1:])
        except ValueError:
            _fail(where, f"`{key}` = {value!r}: after + comes a duration (e.g. +0m, +2d)")
    try:
        if len(text) == 10:
            return datetime.combine(date.fromisoformat(text), time(), tzinfo=start.tzinfo)
        found = datetime.fromisoformat(text)
    except ValueError:
        _fail(where, f"`{key}` = {value!r} is not +DURATION, an ISO date or an ISO datetime")
    return found if found.tzinfo else found.replace(tzinfo=start.tzinfo)


def _day(value, start: datetime, where: str, key: str) -> date | None:
    if value is None:
        return None
    return moment(value, start, where, key).date()


def _when(value, where: str, key: str):
    """A calendar start or end: a date (all day) or a naive local datetime, as the calendar takes them."""
    if isinstance(value, (date, datetime)):
        return value
    text = str(value).strip()
    try:
        return date_or_datetime(text)
    except ValueError:
        _fail(where, f"`{key}` = {value!r} is not an ISO date or datetime")


STEP_KEYS = {"do", "id", "expect", "by", "words", "untrusted", "forbid", "urgent"}
ARG_KEYS = {
    "calendar": {"action", "title", "start", "end", "location"},
    "email": {"from", "name", "subject", "body", "thread", "bulk", "sent"},
    "web": {"text", "url", "title"},
    "say": {"text"},
    "approve": {"proposal", "items"},
    "reject": {"proposal", "items"},
    "advance": {"for", "to"},
}


def _step(raw, index: int, where: str, start: datetime) -> Step:
    if not isinstance(raw, dict):
        _fail(where, "each [[timeline]] entry must be a table")
    action = raw.get("do")
    if action not in ACTIONS:
        _fail(where, f"`do` must be one of {', '.join(ACTIONS)} (got {action!r})")
    unknown = set(raw) - STEP_KEYS - ARG_KEYS[action]
    if unknown:
        _fail(where, f"unknown key(s) for do = {action!r}: {', '.join(sorted(unknown))}")
    args = {k: raw[k] for k in ARG_KEYS[action] if k in raw}
    if action == "calendar":
        if args.get("action", "add") not in CALENDAR_ACTIONS:
            _fail(where, f"calendar `action` must be one of {', '.join(CALENDAR_ACTIONS)}")
        args["action"] = args.get("action", "add")
        _text(raw, "title", where)
        if args["action"] != "cancel":
            args["start"] = _when(_text(raw, "start", where), where, "start")
            if "end" in raw:
                args["end"] = _when(raw["end"], where, "end")
    elif action == "email":
        for key in ("from", "subject"):
            _text(raw, key, where)
        args.setdefault("body", "")
        if "sent" in raw:  # when the sender sent it, if not the moment it arrives (a mail read late)
            args["sent"] = moment(raw["sent"], start, where, "sent")
    elif action in ("web", "say"):
        if not _text(raw, "text", where).strip():
            _fail(where, "`text` is empty")
    elif action in ("approve", "reject"):
        proposal = args.setdefault("proposal", "latest")
        if proposal != "latest" and not (isinstance(proposal, int) and proposal > 0):
            _fail(where, '`proposal` must be "latest" or a proposal number')
        items = args.setdefault("items", [])
        if not isinstance(items, list) or not all(isinstance(i, int) and i > 0 for i in items):
            _fail(where, "`items` must be a list of item numbers")
    elif action == "advance":
        if ("for" in args) == ("to" in args):
            _fail(where, "advance needs either `for` (a duration) or `to` (+DURATION, date or datetime)")
        if "for" in args:
            args["for"] = _duration(args["for"], where, "for")
            if args["for"] > MAX_ADVANCE:
                _fail(where, f"advance at most {MAX_ADVANCE.days}d in one step")
        else:
            args["to"] = moment(args["to"], start, where, "to")
    expect = raw.get("expect", "any")
    if expect not in EXPECT:
        _fail(where, f"`expect` must be one of {', '.join(EXPECT)}")
    if (expect != "any" or "by" in raw or raw.get("untrusted")) and action not in STIMULI:
        _fail(where, f"labels (expect, by, untrusted) belong on a stimulus, not on do = {action!r}")
    ident = raw.get("id") or f"{action}-{index + 1}"
    if not isinstance(ident, str):
        _fail(where, "`id` must be a string")
    return Step(
        index=index,
        action=action,
        args=args,
        id=ident,
        expect=expect,
        by=_duration(raw["by"], where, "by") if "by" in raw else None,
        words=_words(raw, "words", where) or _default_words(action, args),
        untrusted=bool(raw.get("untrusted", False)),
        forbid=_words(raw, "forbid", where),
        urgent=bool(raw.get("urgent", False)),
    )


def _default_words(action: str, args: dict) -> tuple[str, ...]:
    if action == "calendar":
        return (args["title"],)
    if action == "email":
        return (args["subject"],) if args["subject"].strip() else ()
    if action == "web":
        return (args.get("title") or " ".join(args["text"].split()[:4]),)
    return ()


TOP_KEYS = {
    "name",
    "split",
    "description",
    "start",
    "timezone",
    "quiet_hours",
    "category",
    "timeline",
    "expect",
    "settings",
}


def parse(data: dict, where: str = "scenario") -> Scenario:
    unknown = set(data) - TOP_KEYS
    if unknown:
        _fail(where, f"unknown key(s): {', '.join(sorted(unknown))}")
    name = _text(data, "name", where)
    if not re.fullmatch(r"[a-z0-9][a-z0-9._-]{0,80}", name):
        _fail(where, "`name` must be lower-case letters, digits, '-', '_' or '.'")
    split = data.get("split")
    if split not in SPLITS:
        _fail(where, f"`split` must be {' or '.join(SPLITS)} (test scenarios are held back from tuning)")
    tz_name = _text(data, "timezone", where)
    try:
        tz = ZoneInfo(tz_name)
    except (ZoneInfoNotFoundError, ValueError):
        _fail(where, f"unknown timezone {tz_name!r} (e.g. Europe/Berlin)")
    raw_start = data.get("start")
    try:
        start = raw_start if isinstance(raw_start, datetime) else datetime.fromisoformat(str(raw_start))
    except ValueError:
        _fail(where, f"`start` = {raw_start!r} is not an ISO datetime")
    start = start.replace(tzinfo=tz) if start.tzinfo is None else start.astimezone(tz)
    timeline = data.get("timeline")
    if not isinstance(timeline, list) or not timeline:
        _fail(where, "a scenario needs a [[timeline]] of steps")
    steps = tuple(_step(raw, i, f"{where}: timeline step {i + 1}", start) for i, raw in enumerate(timeline))
    seen = set()
    for step in steps:
        if step.id in seen:
            _fail(where, f"two steps have the id {step.id!r}")
        seen.add(step.id)
    expect = data.get("expect", {})
    if not isinstance(expect, dict) or set(expect) - {"proposal", "message", "silence"}:
        _fail(where, "[expect] holds only [[expect.proposal]], [[expect.message]] and [[expect.silence]]")
    proposals, messages, silences = [], [], []
    for i, raw in enumerate(expect.get("proposal", [])):
        here = f"{where}: expect.proposal {i + 1}"
        if not isinstance(raw, dict) or set(raw) - {
            "name",
            "kind",
            "words",
            "due_after",
            "due_before",
            "by",
            "optional",
        }:
            _fail(here, "keys: name, kind, words, due_after, due_before, by, optional")
        proposals.append(
            ExpectedProposal(
                name=str(raw.get("name") or f"proposal-{i + 1}"),
                kind=str(raw.get("kind", "any")),
                words=_words(raw, "words", here),
                due_after=_day(raw.get("due_after"), start, here, "due_after"),
                due_before=_day(raw.get("due_before"), start, here, "due_before"),
                by=moment(raw["by"], start, here, "by") if "by" in raw else None,
                optional=bool(raw.get("optional")),
            )
        )
    for i, raw in enumerate(expect.get("message", [])):
        here = f"{where}: expect.message {i + 1}"
        if not isinstance(raw, dict) or set(raw) - {"name", "words", "after", "by", "optional"}:
            _fail(here, "keys: name, words, after, by, optional")
        words = _words(raw, "words", here)
        if not words:
            _fail(here, "`words` must say how the message is recognised")
        messages.append(
            ExpectedMessage(
                name=str(raw.get("name") or f"message-{i + 1}"),
                words=words,
                after=moment(raw["after"], start, here, "after") if "after" in raw else None,
                by=moment(raw["by"], start, here, "by") if "by" in raw else None,
                optional=bool(raw.get("optional")),
            )
        )
    for i, raw in enumerate(expect.get("silence", [])):
        here = f"{where}: expect.silence {i + 1}"
        if not isinstance(raw, dict) or set(raw) != {"from", "to"}:
            _fail(here, "keys: from, to")
        begin, end = moment(raw["from"], start, here, "from"), moment(raw["to"], start, here, "to")
        if end <= begin:
            _fail(here, "`to` must come after `from`")
        silences.append(Silence(begin, end))
    settings = data.get("settings", {})
    if not isinstance(settings, dict):
        _fail(where, "[settings] must be a table of section.key = value")
    return Scenario(
        name=name,
        split=split,
        description=str(data.get("description", "")),
        start=start,
        timezone=tz_name,
        quiet_hours=str(data.get("quiet_hours", "22:00-07:00")),
        steps=steps,
        proposals=tuple(proposals),
        messages=tuple(messages),
        silences=tuple(silences),
        category=str(data.get("category", "")),
        settings=_flat(settings, where),
    )


def _flat(settings: dict, where: str) -> dict:
    """[settings.attention] max_per_day = 2 → {"WILSON_ATTENTION_MAX_PER_DAY": "2"}."""
    out = {}
    for section, values in settings.items():
        if not isinstance(values, dict):
            _fail(where, f"[settings] {section}: expected a table of keys")
        for key, value in values.items():
            text = str(value).lower() if isinstance(value, bool) else str(value)
            out[f"WILSON_{section.upper()}_{key.upper()}"] = text
    return out


def load(path: Path | str) -> Scenario:
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"{path}: cannot read it ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{path}: not valid TOML ({exc})") from None
    scenario = parse(data, str(path))
    return replace(scenario, path=str(path))
