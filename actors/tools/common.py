"""What the built-in skills' tools share: argument schemas and limits, dates as models send them
and as people read them, the views of tasks and topics, who may see what, reminders in words,
the calendar as the calendar channel saw it, and repeats of what the user already has.

Size: what every built-in skill shares (argument shapes, dates, views, repeats); splitting it would make
each skill import several small modules for one concern.
"""

from __future__ import annotations

import functools
import re
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import peewee

from actors.shared.windows import DATE_ONLY_HOUR, parse_windows
from storage import calendar_days, hot
from storage.models import ReceptorBuffer, Schedule, Task, Topic
from storage.prepared import prepared
from wilson.kernel.clock import UTC, as_utc
from wilson.kernel.clock import parse_duration
from wilson.skills import Call, Tool
from wilson.skills import is_int as _is_int, short as _short, storable  # noqa: F401 (shared by the tools)
from wilson.kernel.timeparse import date_or_datetime, last_day


def _obj(required=(), **props) -> dict:
    # Sent with every cortex call, so only what tells the model something: no empty "required",
    # no "additionalProperties" (the cortex reads only the arguments it knows; the rest is ignored).
    schema = {"type": "object", "properties": props}
    if required:
        schema["required"] = list(required)
    return schema


S = {"type": "string"}
I = {"type": "integer"}  # noqa: E741 -- S and I read as the JSON types in the tables below
WHEN = {"type": "string", "description": "YYYY-MM-DD or ISO datetime"}
POSITIONS = {
    "type": "array",
    "items": {"type": "integer"},
    "description": "item positions; leave out for the whole proposal",
}

# The longest text each argument may carry; anything longer is refused, not cut, so that what the
# user approves is exactly what would be done.
LIMITS = {
    "title": 300,
    "notes": 4000,
    "body": 20000,
    "text": 1000,
    "subject": 300,
    "to": 320,
    "topic": 300,
    "cron": 100,
    "escalation": 100,
    "query": 500,
    "status": 20,
    "why": 500,
    "changes": 1000,
    "due": 40,
    "starts": 40,
    "ends": 40,
    "until": 40,
    "start": 40,
    "end": 40,
    "at": 40,
}
SURFACE_LIMIT = 4000
EARLIEST_YEAR, LATEST_YEAR = 1900, 2200  # a date outside these is a model's slip, not a plan


# Dates ---------------------------------------------------------------------
def parse_when(value, tz: ZoneInfo) -> tuple[datetime | None, bool]:
    """An ISO date or datetime from a model → (aware UTC, is_date). Raises ValueError on nonsense."""
    if value in (None, ""):
        return None, False
    if isinstance(value, bool) or not isinstance(value, (str, datetime, date)):
        raise ValueError(f"expected an ISO date, got {type(value).__name__}")
    try:
        if isinstance(value, datetime):
            moment, is_date = as_utc(value, tz), False
        else:
            text = str(value).strip()
            if len(text) > LIMITS["due"]:
                raise ValueError("too long for a date")
            read = date_or_datetime(text)
            if isinstance(read, datetime):
                moment, is_date = as_utc(read, tz), False
            else:
                moment, is_date = datetime.combine(read, time(0, 0), tzinfo=tz).astimezone(UTC), True
    except OverflowError:  # a valid ISO text whose UTC is out of datetime's range (year 1 or 9999)
        raise ValueError(f"date out of range: {value!r}") from None
    if not EARLIEST_YEAR <= moment.year <= LATEST_YEAR:
        raise ValueError(f"date out of range: {value!r}")
    return moment, is_date


def next_midnight(midnight: datetime, tz: ZoneInfo) -> datetime:
    """The local midnight a day after `midnight` (in UTC): 23 or 25 hours later on the days clocks change."""
    return (midnight.astimezone(tz) + timedelta(days=1)).astimezone(UTC)


def show_when(moment: datetime | None, is_date: bool, tz: ZoneInfo) -> str:
    if moment is None:
        return "no date"
    local = moment.astimezone(tz)
    if is_date or (local.hour, local.minute) == (0, 0):
        return f"{local:%a} {local.day} {local:%b %Y}"
    return f"{local:%a} {local.day} {local:%b %Y %H:%M}"


def show_span(starts, ends, tz: ZoneInfo) -> str:
    """'Sat 10 Apr 2027 – Sat 24 Apr 2027'; an all-day end (midnight after the last day) shows the last day;
    one day once ('Tue 12 Jan 2027'), and its hours beside it ('Thu 7 Jan 2027 10:30–11:15')."""
    try:
        first, first_is_date = parse_when(starts, tz)
        last, last_is_date = parse_when(ends, tz)
    except ValueError:
        return f"{starts} – {ends}"
    if first is None:
        return ""
    if last is None:
        return show_when(first, first_is_date, tz)
    local_last = last.astimezone(tz)
    if not last_is_date and (local_last.hour, local_last.minute) == (0, 0) and last > first:
        last = datetime.combine(last_day(last, tz), time(0), tzinfo=tz)  # an exclusive all-day end
    if last.astimezone(tz).date() == first.astimezone(tz).date():
        if first_is_date or last_is_date or last <= first:
            return show_when(first, first_is_date, tz)
        return f"{show_when(first, False, tz)}–{local_last:%H:%M}"
    return f"{show_when(first, first_is_date, tz)} – {show_when(last, True, tz)}"


def task_view(task: Task, tz: ZoneInfo) -> dict:
    due = None
    if task.due is not None:
        due = task.due.astimezone(tz).date().isoformat() if task.due_is_date else task.due.astimezone(tz).isoformat()
    view = {
        "id": task.id,
        "title": task.title,
        "due": due,
        "status": task.status,
        "topic_id": task.topic_id,
        "topic": _topic_title(task.topic_id),
    }
    if task.status == "done" and task.completed_at is not None:
        view["done_on"] = task.completed_at.astimezone(tz).date().isoformat()
    return view


def _topic_title(topic_id: int | None) -> str | None:
    topic = hot.by_id(Topic, topic_id) if topic_id else None
    return topic.title if topic is not None else None


def topic_view(topic: Topic, tz: ZoneInfo) -> dict:
    def day(m):
        return m.astimezone(tz).date().isoformat() if m else None

    # stored as the exclusive end; people think in last days
    return {
        "id": topic.id,
        "title": topic.title,
        "status": topic.status,
        "starts": day(topic.starts),
        "ends": last_day(topic.ends, tz).isoformat() if topic.ends else None,
    }


def _text_arg(args: dict, key: str) -> str | None:
    """A string argument of a read tool, or None; a wrong type or an absurd length is the model's error."""
    value = args.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValueError(f"{key} must be a string, got {type(value).__name__}")
    if len(value) > LIMITS.get(key, 300):
        raise ValueError(f"{key} is too long ({len(value)} characters; at most {LIMITS.get(key, 300)})")
    return value


def visible_to(model: type[Task] | type[Topic], user_id: str | None, owner: str | None) -> peewee.Expression:
    """Which tasks (or topics) one person may see: their own, and those in a shared topic (one with a
    forum thread). The owner sees all, and so does `user_id` None (a run nobody started works for the
    owner); rows from before rows had an owner are the owner's."""
    return peewee.SQL("TRUE") if sees_all(user_id, owner) else seen_by(model, str(user_id))


def sees_all(user_id: str | None, owner: str | None) -> bool:
    """Whether `user_id` sees every task and topic: the owner, or a run nobody started (it works for the owner)."""
    return user_id is None or (owner is not None and str(user_id) == str(owner))


def seen_by(model: type[Task] | type[Topic], user) -> peewee.Expression:
    """The rows one person other than the owner may see (`visible_to`); `user` is their id, or a prepared
    read's slot for it."""
    shared = Topic.select(Topic.id).where(Topic.thread_ref.is_null(False))
    if model is Topic:
        return (Topic.owner_id == user) | Topic.id.in_(shared)
    return (Task.owner_id == user) | Task.topic.in_(shared)


# Reminders in words ------------------------------------------------------------
_ORDINAL_DAYS = {"1-7": 1, "8-14": 2, "15-21": 3, "22-28": 4}  # how the tick spells "the first Monday"


def describe_cron(cron: str) -> str:
    """A cron in words ("at 09:00, only on Sunday"); the cron itself when it cannot be read."""
    fields = str(cron).split()
    both = len(fields) == 5 and fields[2] != "*" and fields[4] != "*"
    if both and fields[2] in _ORDINAL_DAYS and fields[3] == "*" and fields[4].isdigit():
        # the tick requires both day fields (first Monday = days 1-7 AND Monday); the library reads
        # them as "or", but understands the "#" form of the same thing
        fields = [fields[0], fields[1], "*", "*", f"{fields[4]}#{_ORDINAL_DAYS[fields[2]]}"]
        both = False
    # lazy: cron_descriptor only when a schedule is described in words
    from cron_descriptor import ExpressionDescriptor, Options

    options = Options()
    options.use_24hour_time_format = True
    options.verbose = False
    try:
        text = ExpressionDescriptor(" ".join(fields), options).get_description()
    except Exception:  # the library raises its own types for what it cannot read
        return str(cron)
    if both:
        text = text.replace(", or on ", ", and only on ")
    return text[:1].lower() + text[1:] if text else str(cron)


def user_reminders():
    """The schedules that are the user's reminders: not the builtin jobs, nor a snoozed task's comeback (a
    one-off too, but the task's own: stopping it would leave the task asleep for good)."""
    return Schedule.kind.in_(("reminder", "once")) & ~Schedule.name.startswith("snooze:")


def reminder_views(tz: ZoneInfo) -> list[dict]:
    """The user's active reminders, soonest first, with their schedule in words."""
    rows = (
        Schedule.select()
        .where(user_reminders() & (Schedule.enabled == True))
        .order_by(Schedule.next_fire_at.is_null(), Schedule.next_fire_at, Schedule.id)
        .limit(100)
    )
    return [
        {"id": row.id, "text": row.text, "when": reminder_when(row, tz), "next": _upcoming(row, tz), "kind": row.kind}
        for row in rows
    ]


def reminder_when(row: Schedule, tz: ZoneInfo) -> str:
    """When a reminder runs, in words: "once, Wed 6 Jan 2027 18:00" or "at 09:00, only on Monday"."""
    return f"once, {_upcoming(row, tz)}" if row.kind == "once" else describe_cron(row.cron)


def _upcoming(row: Schedule, tz: ZoneInfo) -> str:
    return show_when(row.next_fire_at, False, tz) if row.next_fire_at else "not planned"


def calendar_events(start: datetime | None, end: datetime | None) -> list[dict]:
    """The calendar's events that overlap [start, end], one that began earlier and is still going on (a trip,
    on its third day) too: every occurrence the calendar's snapshots hold (a weekly meeting on each of its
    days; they hold what has not ended yet), then what has ended as the calendar channel last buffered it
    (a series there only by its first occurrence)."""
    events = [
        {
            "title": e.title,
            "start": e.start.isoformat(),
            "end": e.end.isoformat() if e.end else None,
            "location": e.location or None,
            "all_day": e.all_day,
        }
        for e in calendar_days.events_between(start, end)
    ]
    listed = {(e["title"], e["start"]) for e in events}
    latest: dict[str, dict] = {}
    for row in ReceptorBuffer.select().where(ReceptorBuffer.channel == "calendar").order_by(ReceptorBuffer.id):
        payload = row.payload or {}
        if payload.get("uid"):
            latest[payload["uid"]] = payload
    for payload in latest.values():
        if payload.get("change") == "cancelled" or not payload.get("start"):
            continue
        begins = datetime.fromisoformat(payload["start"])
        ends = datetime.fromisoformat(payload["end"]) if payload.get("end") else None
        listed_already = (payload.get("title"), begins.isoformat()) in listed
        if calendar_days.overlaps(begins, ends, start, end) and not listed_already:
            events.append({k: payload.get(k) for k in ("title", "start", "end", "location", "all_day")})
    return sorted(events, key=lambda e: datetime.fromisoformat(e["start"]))


def _said(args: dict, key: str, label: str) -> str:
    """A free-text argument shown whole in the proposal, for the user approves exactly this text."""
    value = args.get(key)
    return f"\n   {label}: {value}" if value not in (None, "") else ""


def valid_windows(text: str) -> bool:
    """Follow-up windows the tick can plan: due, overdue, or a lead time of at most a year."""
    windows = parse_windows(text)
    for window in windows:
        if window in ("due", "overdue"):
            continue
        try:
            span = parse_duration(window)
        except (ValueError, OverflowError):
            return False
        if not timedelta(0) < span <= timedelta(days=366):
            return False
    return bool(windows)


def reminder_at(value, tz: ZoneInfo) -> datetime:
    """When a one-off reminder or a snooze ends: a date alone means the morning of that day, local time."""
    moment, is_date = parse_when(value, tz)
    if moment is None:
        raise ValueError("a time is required")
    if is_date:
        moment = datetime.combine(moment.astimezone(tz).date(), DATE_ONLY_HOUR, tzinfo=tz).astimezone(UTC)
    return moment


# Repeats of what the user already has ----------------------------------------------
_COMMON = {"a", "an", "the", "to", "for", "of", "and", "my", "our", "on", "in", "at", "with", "by", "up", "do"}


@functools.lru_cache(maxsize=2048)
def _title_words(text: str) -> frozenset[str]:
    # a new title is compared with every open task's: its words, and theirs, read once (a pure function)
    found = set()
    for word in re.findall(r"[a-z0-9]+", str(text or "").lower()):
        if word in _COMMON:
            continue
        found.add(word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word)
    return frozenset(found)


def similar_titles(a: str, b: str) -> bool:
    """Two titles for the same thing: most of their words shared ("File taxes", "file my taxes")."""
    x, y = _title_words(a), _title_words(b)
    if not x or not y:
        return str(a).strip().lower() == str(b).strip().lower()
    return len(x & y) / len(x | y) >= 0.5


def _open_tasks(s, everyone: bool):
    """The open tasks (id, title, topic id, topic title) the owner sees, or (`everyone` False) those `s.user`
    sees: visible_to's two shapes."""
    # each task's topic read with it, not one query per task (hundreds on a long list); as plain rows, as
    # only the one that matches is wanted whole: a model object per open task cost most of a proposal's
    # description (it is asked twice a proposal, its description and its hints)
    seen = peewee.SQL("TRUE") if everyone else seen_by(Task, s.user)
    return (
        Task.select(Task.id, Task.title, Task.topic, Topic.title)
        .join(Topic, peewee.JOIN.LEFT_OUTER, on=(Task.topic == Topic.id))
        .where(Task.status.in_(("open", "snoozed")) & seen)
        .order_by(Task.id)
        .limit(500)
    )


OPEN_TASKS = {everyone: prepared(lambda s, everyone=everyone: _open_tasks(s, everyone)) for everyone in (True, False)}


def repeated(name: str, args: dict, user_id: str | None = None, owner: str | None = None) -> Task | Topic | None:
    """The open task (same topic, similar title) or open topic, among those `user_id` sees, that a new one
    would repeat."""
    title = args.get("title")
    if not isinstance(title, str) or not title.strip():
        return None
    if name == "create_topic":
        return next(
            (
                t
                for t in Topic.select()
                .where((Topic.status != "closed") & visible_to(Topic, user_id, owner))
                .order_by(Topic.id)
                .limit(500)
                if similar_titles(t.title, title)
            ),
            None,
        )
    if name != "create_task":
        return None
    topic = args.get("topic") if isinstance(args.get("topic"), str) and args.get("topic").strip() else None
    everyone = sees_all(user_id, owner)
    for task_id, task_title, topic_id, topic_title in OPEN_TASKS[everyone].rows(
        **({} if everyone else {"user": str(user_id)})
    ):
        same_topic = topic is None or topic_id is None or topic_title.strip().lower() == topic.strip().lower()
        if same_topic and similar_titles(task_title, title):
            task = hot.by_id(Task, task_id)
            if task is not None:  # None: deleted since the rows above were read
                return task
    return None


def already(name: str, args: dict, tz: ZoneInfo, user_id: str | None = None, owner: str | None = None) -> str:
    """ " — you already have …" for a proposal that repeats an open task or topic; empty otherwise."""
    found = repeated(name, args, user_id, owner)
    if isinstance(found, Task):
        due = f" due {show_when(found.due, found.due_is_date, tz)}" if found.due else ""
        return f" — you already have “{found.title}”{due}"
    if isinstance(found, Topic):
        view = topic_view(found, tz)
        span = f" ({show_span(view['starts'], view['ends'], tz)})" if view["starts"] else ""
        return f" — you already have the topic “{found.title}”{span}"
    return ""


def _find_topic(title: str | None, mine: peewee.Expression, created_topics: dict) -> Topic | None:
    """`mine`: the topics the approver sees; a task never joins another person's private topic."""
    if not title:
        return None
    if title.lower() in created_topics:
        return created_topics[title.lower()]
    return (
        Topic.select().where((Topic.title**title) & (Topic.status != "closed") & mine).order_by(Topic.id.desc()).first()
        or Topic.select().where((Topic.title ** f"%{title}%") & mine).order_by(Topic.id.desc()).first()
    )


# The built-in tools' base ------------------------------------------------------------
class BuiltinTool(Tool):
    """A built-in skill's tool: the shared limits, and its date arguments checked as ISO dates."""

    limits = LIMITS
    dates: tuple = ()  # arguments holding an ISO date or datetime
    moments: tuple = ()  # of those, the ones naming when something happens (a date alone: its morning)

    def validate(self, args: dict, call: Call) -> str | None:
        problem = self.check_args(args)
        if problem:
            return problem
        for key in self.dates:
            if args.get(key):
                try:
                    parse_when(args[key], call.tz)
                except (ValueError, TypeError):
                    return f"{key} is not an ISO date from {EARLIEST_YEAR} to {LATEST_YEAR}: {_short(args[key])}"
        return None

    def moot_at(self, args: dict, call: Call) -> datetime | None:
        # the latest of its dates: a moment when it happens (a reminder's, a snooze's end), or a date that
        # lasts until the end of its day, in the user's timezone
        moments = []
        for key in self.dates:
            try:
                moment, is_date = parse_when(args.get(key), call.tz)
                if moment is not None and key in self.moments:
                    moment, is_date = reminder_at(args[key], call.tz), False
            except (ValueError, TypeError):
                return None
            if moment is not None:
                if is_date:
                    moment = datetime.combine(
                        moment.astimezone(call.tz).date() + timedelta(days=1), time(0, 0), tzinfo=call.tz
                    ).astimezone(UTC)
                moments.append(moment)
        return max(moments, default=None)


def slug(text) -> str:
    return "".join(c if c.isalnum() else "-" for c in str(text).lower())[:40].strip("-")
