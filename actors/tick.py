"""The tick: Wilson's own sense of time.

It watches four kinds of moment and turns each into a row or a nudge:
- deadline windows of open tasks ("7d,1d,due,overdue" unless the task's kind or the task has
  its own, see `task_kind`): one
  inbox row per (task, window), for the cortex to decide whether and how to surface; the
  windows falling due within the same local hour fire together, as one bundle that
  reaches the user as one message (wilson/attention.py);
- cron schedules (croniter) in the user's timezone: the morning briefing, the RAS
  interval, the nightly hippocampus run and the user's recurring reminders;
- quiet-hour holds that have ended: held outbox rows become deliverable;
- topics whose end has passed.

Every due moment is stored on its row (Task.next_fire_at, Schedule.next_fire_at,
Outbox.deliver_after, Topic.ends), so a scan is a range query on an index and
`next_due` can tell a simulated clock where to jump next.

After downtime nothing fires in a burst. A schedule fires its latest missed
occurrence once if that is fresher than the schedule's staleness window, and
records the others as skipped; a task fires only its latest passed window and
records the earlier ones as skipped.

Window times (documented choice):
- "Nd" / "Nw": N days before the due, on the local calendar (a 15:00 due gives a
  15:00 follow-up even across a DST change); for a date-only due at 09:00 local.
- "Nh" / "Nm": that long before the due moment (for a date-only due, before 09:00
  local on the due day).
- "due": 09:00 local on the due day for a date-only due; two hours before the due
  moment for a timed one (a heads-up you can still act on).
- "overdue": 09:00 local the day after a date-only due; one day after a timed one.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import peewee
from croniter import croniter
from loguru import logger

from actors import briefing, hippocampus
from actors.ras import alarm_unanswered
from storage import buffers, inbox, outbox, trace
from storage.db import claim_transaction, database, skip_locked
from storage.models import Inbox, Outbox, Schedule, Task, TaskFiring, Topic
from wilson import attention, quiet
from wilson.actor import WilsonActor
from wilson.clock import UTC, as_utc, parse_duration
from wilson.messages import Consolidate, Deliver, InboxReady, RasScan, Recover, SyncRequest, TickNow
from wilson.timeparse import local_moment

ACTOR = "tick"
DEADLINE_PRIORITY = 4
DATE_ONLY_HOUR = time(9, 0)  # when a follow-up for a date-only due arrives, local time
DUE_LEAD = timedelta(hours=2)  # "due" window before a timed due
OVERDUE_AFTER = timedelta(days=1)
OPEN_STATUSES = ("open", "snoozed")  # snoozed tasks carry their wake-up time in next_fire_at
SCAN_BATCH = 500  # tasks per scan; the rest come on the next scan (next_due says "now")
MIN_GRACE = timedelta(seconds=60)  # an on-time job a few seconds late is never "stale"
SKIP_DETAIL = 20  # skipped occurrences recorded one by one; beyond that one summary row
DST_SLACK = timedelta(hours=3)  # larger than any DST shift: look back over a repeated hour

# a plain list of window names (every task alike), or windows_config(config) (per kind, "" the default)
Windows = list[str] | dict[str, list[str]]

BUILTIN_TARGETS = {"briefing": "thalamus", "ras": "ras", "consolidate": "hippocampus"}


# Windows ------------------------------------------------------------------------

def parse_windows(text: str | list | None) -> list[str]:
    if text is None:
        return []
    items = text.split(",") if isinstance(text, str) else list(text)
    return [str(w).strip().lower() for w in items if str(w).strip()]


def due_date(due: datetime, tz: ZoneInfo) -> date:
    """The calendar day of a date-only due.

    The gate stores a date as local midnight; rounding to the nearest local day also
    reads a date stored as UTC midnight correctly for any offset within 12 hours.
    """
    return (as_utc(due).astimezone(tz) + timedelta(hours=12)).date()


def _shift_days(moment: datetime, days: int, tz: ZoneInfo) -> datetime:
    """`days` calendar days earlier on the local wall clock (keeps 15:00 at 15:00 across DST)."""
    local = moment.astimezone(tz).replace(tzinfo=None) - timedelta(days=days)
    return local.replace(tzinfo=tz, fold=0).astimezone(UTC)


def window_times(due: datetime, due_is_date: bool, windows: list[str], tz: ZoneInfo) -> list[tuple[str, datetime]]:
    """(window, aware UTC fire time) in firing order; unknown window names are left out with a warning."""
    due = as_utc(due)
    day = due_date(due, tz) if due_is_date else None
    anchor = local_moment(day, DATE_ONLY_HOUR, tz) if due_is_date else due
    out: list[tuple[int, str, datetime]] = []
    for position, name in enumerate(parse_windows(windows)):
        if name == "due":
            moment = anchor if due_is_date else due - DUE_LEAD
        elif name == "overdue":
            moment = local_moment(day + timedelta(days=1), DATE_ONLY_HOUR, tz) if due_is_date else due + OVERDUE_AFTER
        else:
            try:
                span = parse_duration(name)
            except ValueError:
                logger.warning("tick: unknown escalation window {!r} ignored", name)
                continue
            seconds = span.total_seconds()
            if seconds % 86400 == 0:
                days = int(seconds // 86400)
                moment = local_moment(day - timedelta(days=days), DATE_ONLY_HOUR, tz) if due_is_date else _shift_days(due, days, tz)
            else:
                moment = anchor - span
        out.append((position, name, moment))
    out.sort(key=lambda item: (item[2], item[0]))
    seen: set[str] = set()
    result = []
    for _, name, moment in out:
        if name not in seen:  # a name listed twice fires once
            seen.add(name)
            result.append((name, moment))
    return result


# A task's kind picks its windows from `[tick] windows_<kind>` (else `[tick] windows`). The kind is read
# from the title, then from the topic's title; the first rule that matches wins, so "Pay the visa fee"
# is a travel document and "Book a table for Anna's birthday" a booking. Anything else is "generic".
KIND_RULES: tuple[tuple[str, re.Pattern], ...] = tuple((kind, re.compile(pattern, re.I)) for kind, pattern in (
    ("document", r"\b(passports?|visas?|id cards?|esta|permits?|driving licen[cs]e)\b"),
    ("booking", r"\b(book|booking|reserve|reservations?|tickets?|flights?|hotels?|accommodation)\b"),
    ("packing", r"\b(pack|packing|luggage|suitcases?)\b"),
    ("bill", r"\b(pay|payments?|bills?|invoices?|rent|tax|taxes|fees?)\b"),
    ("appointment", r"\b(appointments?|dentist|doctor|check-?up|interview|exam)\b"),
    ("birthday", r"\b(birthdays?|anniversary|gifts?|presents?)\b"),
))
KINDS = tuple(kind for kind, _ in KIND_RULES) + ("generic",)


def task_kind(title: str | None, topic: str | None = None) -> str:
    """The kind of a task, from its words alone (no model): one of KINDS."""
    for text in (title, topic):
        for kind, pattern in KIND_RULES:
            if text and pattern.search(text):
                return kind
    return "generic"


def windows_config(config) -> dict[str, list[str]]:
    """The configured windows: "" for `[tick] windows`, each kind with a `windows_<kind>` key of its own."""
    chosen = {"": parse_windows(config.get("tick", "windows"))}
    for kind in KINDS:
        own = parse_windows(config.get("tick", f"windows_{kind}"))
        if own:
            chosen[kind] = own
    return chosen


def _task_windows(task: Task, default_windows: Windows) -> list[str]:
    """The task's own windows (Task.escalation), else its kind's, else the default; of these last two,
    only the due and overdue ones when learned memory says the user lets early reminders about this
    kind of task pass (`thinned_by`).

    `default_windows` is a plain list (every kind alike) or `windows_config(config)`."""
    own = task.escalation
    if isinstance(own, list) and own:
        return parse_windows(own)  # chosen for this task: memory does not overrule it
    windows = _configured_windows(task, default_windows)
    if task.id is not None and thinned_by(task) is not None:
        return [w for w in windows if w in ("due", "overdue")]
    return windows


def thinned_by(task: Task) -> dict | None:
    """The memory that leaves this task's heads-ups out ({"memory", "text"}), or None."""
    return hippocampus.reminder_advice(task.title, task.topic.title if task.topic_id else None)


def _configured_windows(task: Task, default_windows: Windows) -> list[str]:
    if isinstance(default_windows, dict):
        if len(default_windows) > 1:
            topic = task.topic.title if task.topic_id and task_kind(task.title) == "generic" else None
            kind = task_kind(task.title, topic)
            if kind in default_windows:
                return list(default_windows[kind])
        return list(default_windows.get("", []))
    return parse_windows(default_windows)


def _is_overdue(task: Task, now: datetime, tz: ZoneInfo) -> bool:
    if task.due_is_date:
        return now >= local_moment(due_date(task.due, tz) + timedelta(days=1), time(0, 0), tz)
    return now >= as_utc(task.due)


def _fired_windows(task: Task) -> set[str]:
    if task.id is None:
        return set()
    return {f.window for f in TaskFiring.select(TaskFiring.window).where(
        (TaskFiring.task == task.id) & (TaskFiring.due == as_utc(task.due)))}


def _next_window(task: Task, now: datetime, default_windows: Windows, tz: ZoneInfo) -> tuple[datetime | None, str | None]:
    if task.due is None or task.status in ("done", "cancelled"):
        return None, None
    if task.status == "snoozed":
        # A snooze with an end wakes the task then (next_window None marks the wake-up); without one it sleeps.
        return (as_utc(task.snoozed_until), None) if task.snoozed_until else (None, None)
    if task.status not in OPEN_STATUSES:
        return None, None
    windows = _task_windows(task, default_windows)
    fired = _fired_windows(task)
    for name, moment in window_times(task.due, task.due_is_date, windows, tz):
        if name not in fired and moment > now:
            return moment, name
    if "overdue" in windows and "overdue" not in fired and _is_overdue(task, now, tz):
        return now, "overdue"  # created (or re-dated) when already overdue: say so once
    return None, None


def plan_task(task: Task, now: datetime, default_windows: Windows, tz: ZoneInfo) -> None:
    """Set the task's next follow-up: the first unfired window after `now` (None when there is none).

    Windows already past when this is called are skipped, except that an overdue task
    gets "overdue" once. Called after the task is created, updated, snoozed or completed.
    """
    task.next_fire_at, task.next_window = _next_window(task, as_utc(now), default_windows, tz)
    task.save()


def _deadline_text(task: Task, window: str, tz: ZoneInfo) -> str:
    when = due_date(task.due, tz).isoformat() if task.due_is_date else \
        f"{as_utc(task.due).astimezone(tz):%Y-%m-%d %H:%M} ({tz.key})"
    if window == "overdue":
        return f"Follow-up: '{task.title}' is overdue (it was due {when})."
    if window == "due":
        return f"Follow-up: '{task.title}' is due {'today' if task.due_is_date else 'soon'} ({when})."
    return f"Follow-up: '{task.title}' is due in {window} ({when})."


def scan_deadlines(now: datetime, tz: ZoneInfo, default_windows: Windows) -> list[int]:
    """Fire the deadline windows that are due; returns the inbox ids written."""
    now = as_utc(now)
    written: list[int] = []
    # Only next_fire_at in the WHERE: SQLite without statistics would otherwise walk the status index.
    found = list(Task.select(Task.id, Task.status).where(Task.next_fire_at <= now)
                 .order_by(Task.next_fire_at).limit(SCAN_BATCH))
    horizon = now
    if any(t.status in OPEN_STATUSES for t in found):
        # Follow-ups falling due later in this local hour come along now: one bundle, one message.
        horizon = max(now, hour_end(now, tz) - timedelta(microseconds=1))
        found = list(Task.select(Task.id, Task.status).where(Task.next_fire_at <= horizon)
                     .order_by(Task.next_fire_at).limit(SCAN_BATCH))
    stale = [t.id for t in found if t.status not in OPEN_STATUSES]
    if stale:  # closed by a writer that did not re-plan: nothing can fire for them
        Task.update(next_fire_at=None, next_window=None).where(Task.id.in_(stale)).execute()
    for task_id in (t.id for t in found if t.status in OPEN_STATUSES):
        # IMMEDIATE: this transaction reads, then writes; a deferred one could not upgrade after another writer.
        with claim_transaction():
            task = Task.get_or_none(Task.id == task_id)
            if task is None or task.next_fire_at is None or task.next_fire_at > horizon:
                continue  # changed since the query
            inbox_id = _fire_task(task, now, tz, default_windows, horizon)
            if inbox_id is not None:
                written.append(inbox_id)
    return written


def hour_end(now: datetime, tz: ZoneInfo) -> datetime:
    """The end of the local hour `now` is in (aware UTC)."""
    local = as_utc(now).astimezone(tz)
    return local.replace(minute=0, second=0, microsecond=0).astimezone(UTC) + timedelta(hours=1)


def _fire_task(task: Task, now: datetime, tz: ZoneInfo, default_windows: Windows,
               horizon: datetime | None = None) -> int | None:
    horizon = now if horizon is None else horizon
    if task.status == "snoozed":
        return _wake(task, now, tz, default_windows)
    if task.due is None:
        plan_task(task, now, default_windows, tz)
        return None
    fired = _fired_windows(task)
    planned_at = as_utc(task.next_fire_at)
    passed = [(name, moment) for name, moment in window_times(task.due, task.due_is_date,
                                                              _task_windows(task, default_windows), tz)
              if name not in fired and moment <= horizon and (moment >= planned_at or name == task.next_window)]
    if not passed and task.next_window == "overdue" and "overdue" not in fired:
        passed = [("overdue", planned_at)]  # planned for "now" because it was already overdue
    inbox_id = None
    if passed:
        *skipped, (window, _) = passed
        inbox_id = _write_firing(task, window, now, tz, skipped)
    plan_task(task, now, default_windows, tz)
    return inbox_id


def _wake(task: Task, now: datetime, tz: ZoneInfo, default_windows: Windows) -> int | None:
    """A snooze has ended: back to open, and the latest window passed while asleep fires once."""
    task.status, task.snoozed_until = "open", None
    fired = _fired_windows(task)
    created = as_utc(task.created_at) if task.created_at else None
    passed = [(name, moment) for name, moment in window_times(task.due, task.due_is_date,
                                                              _task_windows(task, default_windows), tz)
              if name not in fired and moment <= now and (created is None or moment >= created)] if task.due else []
    inbox_id = _write_firing(task, passed[-1][0], now, tz, []) if passed else None
    plan_task(task, now, default_windows, tz)
    return inbox_id


def _write_firing(task: Task, window: str, now: datetime, tz: ZoneInfo, skipped: list[tuple[str, datetime]]) -> int | None:
    """One TaskFiring + one inbox row, in the caller's transaction. None when this window had already fired."""
    due = as_utc(task.due)
    trace_id = trace.new_trace_id()
    try:
        with database.atomic():
            firing = TaskFiring.create(task=task.id, window=window, due=due, fired_at=now)
    except peewee.IntegrityError:
        return None  # the unique (task, window, due) index: it fired before
    for name, moment in skipped:
        skip_id = trace.new_trace_id()
        trace.record(skip_id, "skipped", ACTOR, f"task {task.id} window {name} (planned {moment:%Y-%m-%d %H:%M} UTC) "
                     f"passed while down; only the latest, {window}, fires", now,
                     {"task_id": task.id, "window": name, "planned": moment.isoformat()})
    topic = task.topic.title if task.topic_id else None
    row = inbox.add(source=ACTOR, text=_deadline_text(task, window, tz), priority=DEADLINE_PRIORITY, at=now,
                    trace_id=trace_id, kind="deadline", origin="background",
                    payload={"task_id": task.id, "title": task.title, "window": window, "due": due.isoformat(),
                             "due_is_date": bool(task.due_is_date), "topic": topic,
                             "bundle": as_utc(now).isoformat(),  # the follow-ups of one scan go out as one message
                             **({"topic_id": task.topic_id} if task.topic_id else {})},
                    dedup_key=f"deadline:{task.id}:{window}:{due.isoformat()}")
    if row is None:
        return None
    firing.inbox_id = row.id
    firing.save()
    thinned = thinned_by(task) if not (isinstance(task.escalation, list) and task.escalation) else None
    trace.record(trace_id, "fired", ACTOR, f"task {task.id} '{task.title}': window {window}"
                 + (f"; heads-ups left out: memory {thinned['memory']} ({thinned['text']})" if thinned else ""),
                 now, {"task_id": task.id, "window": window, "inbox_id": row.id})
    return row.id


# Topics -------------------------------------------------------------------------

def _topic_key(topic: Topic) -> str:
    return f"topic_end:{topic.id}:{as_utc(topic.ends).isoformat()}"


def _ended_unfired(now: datetime) -> list[Topic]:
    ended = list(Topic.select().where((Topic.status == "active") & Topic.ends.is_null(False) & (Topic.ends <= now))
                 .order_by(Topic.ends, Topic.id))
    if not ended:
        return []
    keys = {_topic_key(t) for t in ended}
    seen = {r.dedup_key for r in Inbox.select(Inbox.dedup_key).where(Inbox.dedup_key.in_(list(keys)))}
    return [t for t in ended if _topic_key(t) not in seen]


def scan_topic_ends(now: datetime) -> list[int]:
    """One "topic_end" inbox row per active topic whose end has passed; returns inbox ids."""
    now = as_utc(now)
    written = []
    for topic in _ended_unfired(now):
        ends = as_utc(topic.ends)
        trace_id = trace.new_trace_id()
        row = inbox.add(source=ACTOR, text=f"The topic '{topic.title}' ended at {ends:%Y-%m-%d %H:%M} UTC.",
                        priority=DEADLINE_PRIORITY, at=now, trace_id=trace_id, kind="topic_end", origin="background",
                        payload={"topic_id": topic.id, "title": topic.title, "ends": ends.isoformat()},
                        dedup_key=_topic_key(topic))
        if row is not None:
            trace.record(trace_id, "fired", ACTOR, f"topic {topic.id} '{topic.title}' ended", now, {"topic_id": topic.id})
            written.append(row.id)
    return written


# Cron ---------------------------------------------------------------------------

def _hour_is_wildcard(cron: str) -> bool:
    fields = cron.split()
    if len(fields) == 1:
        return fields[0].lower() == "@hourly"
    return len(fields) >= 5 and fields[1].startswith("*")


def _instants(naive: datetime, tz: ZoneInfo, both_folds: bool) -> list[datetime]:
    """The UTC moments a local wall time stands for.

    Ordinary: one. Skipped by spring-forward: one, as far after the gap (fold=0).
    Repeated by fall-back: the first only, unless the job runs every hour, in which
    case the repeated hour is a real hour and both count (as classic cron does).
    """
    first = naive.replace(tzinfo=tz, fold=0).astimezone(UTC)
    second = naive.replace(tzinfo=tz, fold=1).astimezone(UTC)
    if first == second:
        return [first]
    if first.astimezone(tz).replace(tzinfo=None) != naive:  # in a gap: the wall time never shows
        return [first]
    return [first, second] if both_folds else [first]


def next_fire(cron: str, tz: ZoneInfo, after: datetime, *, day_or: bool = False) -> datetime:
    """The first moment strictly after `after` that `cron` names on the local wall clock (aware UTC).

    croniter runs on wall time with no zone (so it knows nothing of DST); the
    mapping to real moments is done here: 07:00 stays 07:00 on both sides of a
    change, is never skipped and never happens twice.

    `day_or=False` (the default here) means day-of-month AND day-of-week must both
    match when both are restricted: "0 9 1-7 * 1" is the first Monday of a month.
    """
    after = as_utc(after)
    local_after = after.astimezone(tz).replace(tzinfo=None)
    both = _hour_is_wildcard(cron)
    # croniter reads wall time through a fixed UTC tag: no zone, so no DST guesswork inside it.
    it = croniter(cron, (local_after - DST_SLACK).replace(tzinfo=UTC), day_or=day_or)
    best: datetime | None = None
    horizon: datetime | None = None
    while True:
        naive = it.get_next(datetime).replace(tzinfo=None)
        if horizon is not None and naive > horizon:
            return best
        for moment in _instants(naive, tz, both):
            if moment > after and (best is None or moment < best):
                best = moment
                if horizon is None:
                    horizon = naive + DST_SLACK


def valid_cron(cron: str) -> bool:
    return bool(cron) and croniter.is_valid(cron)


def _zone(name: str | None) -> ZoneInfo:
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        logger.warning("tick: unknown timezone {!r}; using UTC", name)
        return ZoneInfo("UTC")


def ras_cron(minutes: int) -> str:
    """A cron for "every N minutes"; whole hours use the hour field so 90 does not turn into :00 and :30."""
    minutes = max(1, int(minutes))
    if minutes < 60:
        return f"*/{minutes} * * * *"
    if minutes % 60 == 0 and minutes < 24 * 60:
        return f"0 */{minutes // 60} * * *"
    hours = min(23, minutes // 60)
    logger.warning("tick: ras interval {} min has no exact cron; using every {} h", minutes, hours)
    return f"0 */{hours} * * *"


def builtin_crons(config) -> dict[str, str]:
    return {
        "briefing": str(config.get("thalamus", "briefing", "0 7 * * *") or "").strip(),
        "ras": ras_cron(config.get("ras", "interval_minutes", 15) or 15),
        "consolidate": str(config.get("hippocampus", "schedule", "0 3 * * *") or "").strip(),
    }


def ensure_builtin_schedules(config, now: datetime) -> None:
    """Upsert the builtin schedules from config; a changed cron or timezone re-plans the next firing.

    An empty or invalid cron disables the job (logged) instead of stopping the tick.
    """
    now = as_utc(now)
    tz_name = str(config.get("core", "timezone", "UTC") or "UTC")
    tz = _zone(tz_name)
    for name, cron in builtin_crons(config).items():
        cron = cron or "off"
        fire = None
        if cron.lower() != "off":
            try:
                fire = next_fire(cron, tz, now) if valid_cron(cron) else None
            except ValueError:  # valid syntax that never matches, e.g. 30 February
                fire = None
            if fire is None:
                logger.error("tick: schedule {} has an unusable cron {!r}; disabled", name, cron)
        ok = fire is not None
        with claim_transaction():
            row = Schedule.get_or_none(Schedule.name == name)
            if row is None:
                Schedule.create(name=name, cron=cron, kind="builtin", timezone=tz_name, enabled=ok, next_fire_at=fire)
                continue
            changed = row.cron != cron or row.timezone != tz_name or row.enabled != ok
            if changed or (ok and row.next_fire_at is None):
                row.cron, row.timezone, row.enabled, row.next_fire_at = cron, tz_name, ok, fire
                row.save()


def add_reminder(name: str, cron: str, text: str, tz_name: str, now: datetime,
                 staleness_seconds: int = 6 * 3600) -> Schedule:
    """Create or replace a recurring reminder (for the approval gate's "remind me every ..." tool)."""
    if not valid_cron(cron):
        raise ValueError(f"not a cron expression: {cron!r}")
    fire = next_fire(cron, _zone(tz_name), now)
    with claim_transaction():
        row = Schedule.get_or_none(Schedule.name == name)
        if row is None:
            return Schedule.create(name=name, cron=cron, kind="reminder", text=text, timezone=tz_name,
                                   staleness_seconds=staleness_seconds, next_fire_at=fire, enabled=True)
        row.cron, row.kind, row.text, row.timezone = cron, "reminder", text, tz_name
        row.staleness_seconds, row.next_fire_at, row.enabled = staleness_seconds, fire, True
        row.save()
        return row


def add_once(name: str, at: datetime, text: str, tz_name: str) -> Schedule:
    """Create or move a one-off reminder (kind "once"): it fires once at `at`, then switches itself off.
    Its cron names the same local moment, so anything that reads it as a cron still sees the right time."""
    at = as_utc(at)
    local = at.astimezone(_zone(tz_name))
    cron = f"{local.minute} {local.hour} {local.day} {local.month} *"
    with claim_transaction():
        row = Schedule.get_or_none(Schedule.name == name)
        if row is None:
            return Schedule.create(name=name, cron=cron, kind="once", text=text, timezone=tz_name, next_fire_at=at,
                                   enabled=True)
        row.cron, row.kind, row.text, row.timezone, row.next_fire_at, row.enabled = cron, "once", text, tz_name, at, True
        row.save()
        return row


def _snoozed_task(sched: Schedule) -> Task | None:
    """The task a snooze comeback ("snooze:<task id>:<until>") brings back, if the name says so."""
    parts = sched.name.split(":")
    if parts[0] != "snooze" or len(parts) < 3 or not parts[1].isdigit():
        return None
    return Task.get_or_none(Task.id == int(parts[1]))


def fire_once(now: datetime, tz: ZoneInfo) -> list[int]:
    """One-off reminders whose moment has come: each writes one inbox row and is switched off in the same
    transaction (late after downtime rather than never). A snooze comeback stays quiet when its task is
    closed, or when waking it already fired a follow-up."""
    now = as_utc(now)
    written: list[int] = []
    with claim_transaction():
        due = list(skip_locked(Schedule.select().where((Schedule.kind == "once") & (Schedule.enabled == True)  # noqa: E712
                                                       & (Schedule.next_fire_at <= now))
                               .order_by(Schedule.next_fire_at, Schedule.id).limit(SCAN_BATCH)))
        for sched in due:
            if not Schedule.update(enabled=False, last_fired_at=now).where(
                    (Schedule.id == sched.id) & (Schedule.enabled == True)).execute():  # noqa: E712
                continue  # another process fired it
            planned = as_utc(sched.next_fire_at)
            trace_id = trace.new_trace_id()
            text, payload = sched.text or sched.name, {"schedule": sched.name, "once": True,
                                                       "planned": planned.isoformat()}
            if sched.name.startswith("snooze:"):
                task = _snoozed_task(sched)
                why = _comeback_quiet(task, planned)
                if why:
                    trace.record(trace_id, "skipped", ACTOR, f"schedule {sched.name}: {why}", now)
                    continue
                if task.status == "snoozed":  # a task without a due date has no window to wake it
                    task.status, task.snoozed_until = "open", None
                    task.save()
                text = f"“{task.title}” is back, as you asked{_due_words(task, tz)}"
                payload["task_id"] = task.id
            payload["text"] = text
            row = inbox.add(source=ACTOR, text=text, priority=DEADLINE_PRIORITY, at=now, trace_id=trace_id,
                            kind="reminder", origin="background", payload=payload, dedup_key=f"once:{sched.id}")
            if row is None:
                continue
            trace.record(trace_id, "fired", ACTOR, f"one-off {sched.name} for {planned:%Y-%m-%d %H:%M} UTC", now,
                         {"schedule": sched.name, "occurrence": planned.isoformat()})
            written.append(row.id)
    if written:
        from wilson import faults

        faults.point("tick:after-once-commit")  # the reminder rows exist; the cortex is not told yet
    return written


def _due_words(task: Task, tz: ZoneInfo) -> str:
    if task.due is None:
        return ""
    if task.due_is_date:
        day = due_date(task.due, tz)
        return f" (due {day:%a} {day.day} {day:%b})"
    local = as_utc(task.due).astimezone(tz)
    return f" (due {local:%a} {local.day} {local:%b %H:%M})"


def _comeback_quiet(task: Task | None, planned: datetime) -> str | None:
    if task is None or task.status not in OPEN_STATUSES:
        return "its task is closed"
    woke = TaskFiring.select().where((TaskFiring.task == task.id) & (TaskFiring.fired_at >= planned)).exists()
    return "waking the task already sent its follow-up" if woke else None


def arm_schedules(now: datetime) -> int:
    """Give enabled schedules written without a next_fire_at (e.g. a reminder row made elsewhere) their first time."""
    armed = 0
    for sched in Schedule.select().where((Schedule.enabled == True) & Schedule.next_fire_at.is_null()):  # noqa: E712
        try:
            fire = next_fire(sched.cron, _zone(sched.timezone), now)
        except ValueError as exc:
            logger.error("tick: schedule {} cron {!r} unusable ({}); disabled", sched.name, sched.cron, exc)
            Schedule.update(enabled=False).where(Schedule.id == sched.id).execute()
            continue
        Schedule.update(next_fire_at=fire).where((Schedule.id == sched.id) & Schedule.next_fire_at.is_null()).execute()
        armed += 1
    return armed


def _ras_idle() -> bool:
    return not buffers.unscanned() and not alarm_unanswered()


def due_schedules(now: datetime) -> list[tuple[Schedule, str]]:
    """Enabled schedules that are due, with the missed-job policy applied; advances each past `now`.

    One entry per due schedule: "fire" for its latest occurrence when that is no
    older than the staleness window (earlier missed occurrences are skipped), else
    "skip". Each returned Schedule carries `occurrence` (the moment fired, or None),
    `missed` (skipped occurrences, the first SKIP_DETAIL of them) and `missed_more`
    (True when there were more). The RAS schedule with nothing new to look at is
    advanced silently: an idle scan would do nothing.
    """
    now = as_utc(now)
    result: list[tuple[Schedule, str]] = []
    ras_idle: bool | None = None
    # SKIP LOCKED: with several processes, the one that locked a due schedule fires it; the others
    # skip it now and, after its commit, find it no longer due
    rows = list(skip_locked(Schedule.select().where((Schedule.enabled == True) & (Schedule.next_fire_at <= now))  # noqa: E712
                            .order_by(Schedule.next_fire_at, Schedule.id)))
    for sched in rows:
        tz = _zone(sched.timezone)
        scheduled = as_utc(sched.next_fire_at)
        try:
            following = next_fire(sched.cron, tz, now)
        except (ValueError, KeyError) as exc:  # croniter errors derive from ValueError
            logger.error("tick: schedule {} cron {!r} unusable ({}); disabled", sched.name, sched.cron, exc)
            Schedule.update(enabled=False).where(Schedule.id == sched.id).execute()
            continue
        if sched.kind == "builtin" and sched.name == "ras":
            ras_idle = _ras_idle() if ras_idle is None else ras_idle
            if ras_idle:
                Schedule.update(next_fire_at=following).where(Schedule.id == sched.id).execute()
                continue
        grace = max(timedelta(seconds=sched.staleness_seconds or 0), MIN_GRACE)
        fresh_from = max(scheduled, now - grace)
        occurrence = scheduled if scheduled >= fresh_from else next_fire(sched.cron, tz, fresh_from - timedelta(microseconds=1))
        latest = None
        while occurrence <= now:
            latest = occurrence
            occurrence = next_fire(sched.cron, tz, occurrence)
        missed: list[datetime] = []
        moment = scheduled
        more = False
        while moment <= now and moment != latest:
            if len(missed) >= SKIP_DETAIL:
                more = True
                break
            missed.append(moment)
            moment = next_fire(sched.cron, tz, moment)
        update = {"next_fire_at": following}
        if latest is not None:
            update["last_fired_at"] = latest
        Schedule.update(**update).where(Schedule.id == sched.id).execute()
        sched.next_fire_at = following
        sched.occurrence, sched.missed, sched.missed_more = latest, missed, more
        result.append((sched, "fire" if latest is not None else "skip"))
    return result


# When is the next thing? --------------------------------------------------------

def next_due(now: datetime, *, include_idle_ras: bool = False) -> datetime | None:
    """The earliest moment anything could happen (may be <= now when something is due already)."""
    now = as_utc(now)
    candidates: list[datetime] = []
    # Walk the next_fire_at index in order; a closed task still carrying a time is passed over.
    for task in (Task.select(Task.next_fire_at, Task.status).where(Task.next_fire_at.is_null(False))
                 .order_by(Task.next_fire_at).limit(64)):
        if task.status in OPEN_STATUSES:
            candidates.append(task.next_fire_at)
            break
    query = Schedule.select(Schedule.next_fire_at).where(
        (Schedule.enabled == True) & Schedule.next_fire_at.is_null(False))  # noqa: E712
    if not include_idle_ras and _ras_idle():
        query = query.where(~((Schedule.name == "ras") & (Schedule.kind == "builtin")))
    sched = query.order_by(Schedule.next_fire_at).limit(1).first()
    if sched is not None:
        candidates.append(sched.next_fire_at)
    held = (Outbox.select(Outbox.deliver_after).where((Outbox.status == "held") & Outbox.deliver_after.is_null(False))
            .order_by(Outbox.deliver_after).limit(1).first())
    if held is not None:
        candidates.append(held.deliver_after)
    ended = _ended_unfired(now)
    if ended:
        candidates.append(as_utc(ended[0].ends))
    upcoming = (Topic.select(Topic.ends).where((Topic.status == "active") & (Topic.ends > now))
                .order_by(Topic.ends).limit(1).first())
    if upcoming is not None:
        candidates.append(upcoming.ends)
    from actors.approval import due_moment  # an unanswered proposal's reminder or expiry

    proposal = due_moment()
    if proposal is not None:
        candidates.append(proposal)
    return min((as_utc(c) for c in candidates), default=None)


# One scan -----------------------------------------------------------------------

@dataclass
class ScanResult:
    released: list[int] = field(default_factory=list)
    deadlines: list[int] = field(default_factory=list)
    topic_ends: list[int] = field(default_factory=list)
    fired: list[str] = field(default_factory=list)  # schedule names
    skipped: list[str] = field(default_factory=list)


def _record_skips(sched: Schedule, now: datetime) -> None:
    why = "older than its staleness window" if sched.occurrence is None else "a later one fires instead"
    for moment in sched.missed:
        trace.record(trace.new_trace_id(), "skipped", ACTOR,
                     f"schedule {sched.name} missed at {moment:%Y-%m-%d %H:%M} UTC while down; {why}", now,
                     {"schedule": sched.name, "missed": moment.isoformat()})
    if sched.missed_more:
        trace.record(trace.new_trace_id(), "skipped", ACTOR,
                     f"schedule {sched.name}: more occurrences missed while down (not listed)", now,
                     {"schedule": sched.name, "more": True})


def run_scan(now: datetime, tz: ZoneInfo, default_windows: Windows, tell, config=None) -> ScanResult:
    """Everything the tick does at one moment; `tell(name, message)` nudges the other actors after commit.

    With `config`, bundles of follow-ups whose runs have all ended but were not sent (a run that died
    after its commit) are sent here."""
    now = as_utc(now)
    result = ScanResult()
    with claim_transaction():
        attention.drop_acknowledged_held(now)
    for row in outbox.release_held(now):
        trace.record(row.trace_id, "released", ACTOR, "quiet hours are over", now, {"outbox_id": row.id})
        result.released.append(row.id)
        tell(row.channel, Deliver(row.id))
    result.deadlines = scan_deadlines(now, tz, default_windows)
    result.topic_ends = scan_topic_ends(now)
    if config is not None:
        for bundle in attention.pending_bundles():
            with claim_transaction():
                flushed = attention.flush_bundle(bundle, now, config, lambda at: quiet.hold_until(config, at))
            for channel, outbox_id in flushed:
                tell(channel, Deliver(outbox_id))
        # a morning briefing whose runs all ended without telling it (a run that died after its commit),
        # or that waited too long for them, goes from here
        box = briefing.settle(now, config)
        if box is not None:
            tell(box.channel, Deliver(box.id))
    once = fire_once(now, tz)  # after the deadlines: a task's wake-up there silences its snooze comeback
    nudges: list[tuple[str, object]] = []
    arm_schedules(now)
    with claim_transaction():
        for sched, action in due_schedules(now):
            _record_skips(sched, now)
            if action == "skip":
                result.skipped.append(sched.name)
                continue
            trace_id = trace.new_trace_id()
            at = sched.occurrence
            if sched.kind == "reminder":
                row = inbox.add(source=ACTOR, text=sched.text or sched.name, priority=DEADLINE_PRIORITY, at=now,
                                trace_id=trace_id, kind="reminder", origin="background",
                                payload={"schedule": sched.name, "text": sched.text},
                                dedup_key=f"reminder:{sched.name}:{at.isoformat()}")
                if row is None:
                    continue  # this occurrence was delivered before
                nudges.append(("cortex", InboxReady()))
            elif sched.name == "briefing":
                nudges.append(("thalamus", SyncRequest("daily")))
            elif sched.name == "ras":
                nudges.append(("ras", RasScan()))
            elif sched.name == "consolidate":
                nudges.append(("hippocampus", Consolidate()))
            else:
                logger.warning("tick: builtin schedule {} has no action", sched.name)
                continue
            trace.record(trace_id, "fired", ACTOR, f"schedule {sched.name} ({sched.cron}) for {at:%Y-%m-%d %H:%M} UTC",
                         now, {"schedule": sched.name, "occurrence": at.isoformat()})
            result.fired.append(sched.name)
    if result.deadlines or result.topic_ends or once:
        nudges.insert(0, ("cortex", InboxReady()))
    from actors.approval import release_kept, sweep_due

    # a proposal to show (kept for a briefing that did not tell it), remind of or expire: the gate does it
    if release_kept(now) or sweep_due(now):
        nudges.append(("approval", Recover()))
    sent = set()
    for name, message in nudges:
        if (name, message) not in sent:  # one InboxReady is enough for any number of rows
            sent.add((name, message))
            tell(name, message)
    return result


# The actor ----------------------------------------------------------------------

class TickActor(WilsonActor):
    """Scans on TickNow. With a real clock its own timer sends TickNow every tick.interval_seconds;
    with a simulated one whoever moves the clock sends it."""

    name = "tick"

    def __init__(self, ctx, name: str | None = None):
        super().__init__(ctx, name)
        self._halt = threading.Event()
        self._pending = threading.Event()  # a TickNow from the timer is queued: don't queue another
        self._timer: threading.Thread | None = None
        self._prepared = False

    def _prepare(self) -> None:
        if not self._prepared:
            ensure_builtin_schedules(self.config, self.now())
            self._prepared = True

    def on_start(self) -> None:
        # Pykka stops an actor whose on_start raises without telling anyone (no on_failure), so a
        # failure here is logged and the first TickNow tries again instead of the tick dying unseen.
        try:
            self._prepare()
            self.scan()  # the missed-job policy after downtime
        except Exception as exc:  # noqa: BLE001
            logger.error("tick: start-up scan failed ({}: {}); retrying on the next tick", type(exc).__name__, exc)
        if not getattr(self.ctx.clock, "simulated", False):
            interval = float(self.config.get("tick", "interval_seconds", 1.0) or 1.0)
            self._timer = threading.Thread(target=self._run_timer, args=(interval,), name="tick-timer", daemon=True)
            self._timer.start()

    def on_stop(self) -> None:
        self._halt.set()

    def on_failure(self, exception_type, exception_value, traceback):
        self._halt.set()  # the replacement actor runs its own timer
        super().on_failure(exception_type, exception_value, traceback)

    def _run_timer(self, interval: float) -> None:
        while not self._halt.wait(interval):
            if not self._pending.is_set():
                self._pending.set()
                if not self.ctx.directory.tell(self.name, TickNow()):
                    self._pending.clear()

    def receive(self, message):
        if isinstance(message, TickNow):
            self._pending.clear()
            return self.scan()
        logger.warning("tick: ignoring {}", type(message).__name__)
        return None

    def scan(self) -> ScanResult:
        self._prepare()
        result = run_scan(self.now(), self.config.timezone, windows_config(self.config), self.tell,
                          config=self.config)
        # Buffered receptors poll on their own cadence, on this beat (channels/base.py): one timer
        # for the real clock, and every step of a simulated one, without adding steps of its own.
        for channel in self.config.get("core", "buffered_channels") or ():
            self.tell(channel, TickNow())
        return result
