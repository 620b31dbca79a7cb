"""Deadlines: when each open task's follow-ups fall due, and firing them as inbox rows.

Also the ends of topics, which fire once like a deadline. See actors/tick/__init__.py for what each
window means; the reckoning of windows on dates is actors/shared/windows.py. The tick fires these, and
the gate, the briefing and the toolbox plan by them, so they sit below the organs (.importlinter).

Size: a task's windows, its firings and a topic's end are one notion of "when Wilson speaks about this";
the event windows that raise a topic's preparation together live apart (actors/escalation.py).
"""

from __future__ import annotations

from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

import peewee

from actors.hippocampus import advice
from actors.shared.event_span import cancelled, event_span, moved_later, waits_for_move
from actors.shared.windows import EVENT_WINDOWS, Windows, due_date, lead_days, parse_windows, task_kind, window_times
from storage import hot, inbox, trace
from storage.db import claim_transaction, database
from storage.models import Inbox, Task, TaskFiring, Topic
from storage.prepared import prepared
from wilson.kernel.clock import UTC, as_utc, parse_duration
from wilson.kernel.timeparse import local_moment

ACTOR = "tick"
DEADLINE_PRIORITY = 4
# A heads-up falling due this soon after the user approved the task's date would repeat what they just read
JUST_SEEN = timedelta(hours=12)
# A heads-up a week or more ahead is for planning; in the days after the user approved the date they have just
# planned it, so one falling due this soon after is left out too (the nearer heads-ups still come)
JUST_PLANNED = timedelta(days=5)
PLANNING_LEAD = timedelta(days=7)
OPEN_STATUSES = ("open", "snoozed")
EVE = timedelta(days=2)
BUILT_IN = [
    "7d",
    "1d",
    "due",
    "overdue",
]  # the default `[tick] windows` (wilson/kernel/config.py)  # preparation due this close to its event's start is told on the event's eve  # snoozed tasks carry their wake-up time in next_fire_at
SCAN_BATCH = 500  # tasks per scan; the rest come on the next scan (next_due says "now")


def task_windows(task: Task, default_windows: Windows) -> list[str]:
    """The task's own windows (Task.escalation), else its kind's, else the default; of these last two,
    only the due and overdue ones when learned memory says the user lets early reminders about this
    kind of task pass (`thinned_by`).

    `default_windows` is a plain list (every kind alike) or `windows_config(config)`."""
    own = task.escalation
    if isinstance(own, list) and own:
        return parse_windows(own)  # chosen for this task: memory does not overrule it
    windows = _configured_windows(task, default_windows)
    if _prepares_event(task) and windows == BUILT_IN:
        # an event's preparation is raised early with the event's own windows (actors/escalation.py), all its
        # open tasks together: of the built-in heads-ups only the nearest stays, and none for what is due on the
        # eve of the event (the eve's raise tells it). Windows the user configured are theirs: kept.
        heads = sorted((w for w in windows if w not in ("due", "overdue")), key=parse_duration)
        eve = task.due is not None and as_utc(task.topic.starts) - as_utc(task.due) <= EVE
        kept = heads[:1] if not eve else []
        if not eve and _unraised_step(task):
            # a step of no known kind due well before its event ("the invitations by the end of December" for a
            # party in February): the event's first raise for it comes after its day, so its own heads-ups stay
            kept = heads
        windows = [w for w in windows if w in ("due", "overdue") or w in kept]
    if task.id is not None and thinned_by(task) is not None:
        # a kind followed up only ahead of its day ("7d,1d" for birthdays) keeps its nearest heads-up
        return [w for w in windows if w in ("due", "overdue")] or sorted(windows, key=parse_duration)[:1]
    return windows


def _unraised_step(task: Task) -> bool:
    """Whether a step of no known kind (a document's or a booking's is raised six weeks ahead, with its event) is
    due before its event's first raise could give it a week, and was made at least two weeks before its day (so
    that a week's heads-up falls after the first week of the plan, while the user still has its date in mind)."""
    if task.due is None or task_kind(task.title) != "generic":
        return False
    first = max((w for w in EVENT_WINDOWS if w <= lead_days(task.title)), default=min(EVENT_WINDOWS))
    before_event = (as_utc(task.topic.starts) - as_utc(task.due)).days
    made = task.created_at is None or as_utc(task.due) - as_utc(task.created_at) >= timedelta(days=14)
    return first - before_event < 7 and made


def _prepares_event(task: Task) -> bool:
    """Whether the task is preparation for an event still to come (its topic has a start ahead of its due)."""
    if not task.topic_id:
        return False
    topic = task.topic
    return topic.starts is not None and (task.due is None or as_utc(topic.starts) >= as_utc(task.due))


def thinned_by(task: Task) -> dict | None:
    """The memory that leaves this task's heads-ups out ({"memory", "text"}), or None (always None for a
    task with windows of its own). Asked once per task object: firing a task plans it and traces it too."""
    if isinstance(task.escalation, list) and task.escalation:
        return None
    if "_thinned_by" not in task.__dict__:
        task.__dict__["_thinned_by"] = advice.reminder_advice(task.title, task.topic.title if task.topic_id else None)
    return task.__dict__["_thinned_by"]


def thin_all(tasks: list[Task]) -> None:
    """`thinned_by` for many tasks with one read of memory, kept on each task for its later asks."""
    todo = [
        t for t in tasks if not (isinstance(t.escalation, list) and t.escalation) and "_thinned_by" not in t.__dict__
    ]
    subjects = [(t.title, t.topic.title if t.topic_id else None) for t in todo]
    for task, found in zip(todo, advice.reminder_advice_many(subjects)):
        task.__dict__["_thinned_by"] = found


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
    return {
        f.window
        for f in TaskFiring.select(TaskFiring.window).where(
            (TaskFiring.task == task.id) & (TaskFiring.due == as_utc(task.due))
        )
    }


def _next_window(
    task: Task, now: datetime, default_windows: Windows, tz: ZoneInfo, seen: bool = False
) -> tuple[datetime | None, str | None]:
    if task.due is None or task.status in ("done", "cancelled"):
        return None, None
    if task.status == "snoozed":
        # A snooze with an end wakes the task then (next_window None marks the wake-up); without one it sleeps.
        return (as_utc(task.snoozed_until), None) if task.snoozed_until else (None, None)
    if task.status not in OPEN_STATUSES:
        return None, None
    windows = task_windows(task, default_windows)
    fired = _fired_windows(task)
    # windows the user chose for this task are theirs: kept even when they have just read its date
    own = isinstance(task.escalation, list) and bool(task.escalation)
    quiet = seen and not own
    upcoming = [
        (moment, name)
        for name, moment in window_times(task.due, task.due_is_date, windows, tz)
        if name not in fired and moment > now
    ]
    for moment, name in upcoming:
        if name in ("due", "overdue") or not quiet:
            return moment, name
        if moment >= now + (JUST_PLANNED if parse_duration(name) >= PLANNING_LEAD else JUST_SEEN):
            return moment, name
    if upcoming:
        return upcoming[-1]  # every one is a heads-up just after approving: the last still comes
    if "overdue" in windows and "overdue" not in fired and _is_overdue(task, now, tz):
        return now, "overdue"  # created (or re-dated) when already overdue: say so once
    return None, None


def plan_task(task: Task, now: datetime, default_windows: Windows, tz: ZoneInfo, seen: bool = False) -> None:
    """Set the task's next follow-up: the first unfired window after `now` (None when there is none).

    Windows already past when this is called are skipped, except that an overdue task
    gets "overdue" once. Called after the task is created, updated, snoozed or completed;
    `seen`: the user has just approved its date, so a heads-up within JUST_SEEN is left out too, unless
    the task has windows of its own or it is the last one left (the "due" and "overdue" ones never are).
    """
    task.next_fire_at, task.next_window = _next_window(task, as_utc(now), default_windows, tz, seen)
    task.save()


def _deadline_text(task: Task, window: str, tz: ZoneInfo) -> str:
    when = (
        due_date(task.due, tz).isoformat()
        if task.due_is_date
        else f"{as_utc(task.due).astimezone(tz):%Y-%m-%d %H:%M} ({tz.key})"
    )
    if window == "overdue":
        return f"Follow-up: '{task.title}' is overdue (it was due {when})."
    if window == "due":
        return f"Follow-up: '{task.title}' is due {'today' if task.due_is_date else 'soon'} ({when})."
    return f"Follow-up: '{task.title}' is due in {window} ({when})."


def scan_deadlines(now: datetime, tz: ZoneInfo, default_windows: Windows) -> list[int]:
    """Fire the deadline windows that are due; returns the inbox ids written."""
    now = as_utc(now)
    written: list[int] = []
    found = DUE_TASKS.rows(now=now)  # (id, status)
    horizon = now
    if any(status in OPEN_STATUSES for _, status in found):
        # Follow-ups falling due later in this local hour come along now: one bundle, one message.
        horizon = max(now, hour_end(now, tz) - timedelta(microseconds=1))
        found = DUE_TASKS.rows(now=horizon)
    stale = [task_id for task_id, status in found if status not in OPEN_STATUSES]
    if stale:  # closed by a writer that did not re-plan: nothing can fire for them
        Task.update(next_fire_at=None, next_window=None).where(Task.id.in_(stale)).execute()
    for task_id in (task_id for task_id, status in found if status in OPEN_STATUSES):
        # IMMEDIATE: this transaction reads, then writes; a deferred one could not upgrade after another writer.
        with claim_transaction():
            task = hot.by_id(Task, task_id)
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


def _fire_task(
    task: Task, now: datetime, tz: ZoneInfo, default_windows: Windows, horizon: datetime | None = None
) -> int | None:
    horizon = now if horizon is None else horizon
    if task.status == "snoozed":
        return _wake(task, now, tz, default_windows)
    if task.due is None:
        plan_task(task, now, default_windows, tz)
        return None
    fired = _fired_windows(task)
    planned_at = as_utc(task.next_fire_at)
    passed = [
        (name, moment)
        for name, moment in window_times(task.due, task.due_is_date, task_windows(task, default_windows), tz)
        if name not in fired and moment <= horizon and (moment >= planned_at or name == task.next_window)
    ]
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
    passed = (
        [
            (name, moment)
            for name, moment in window_times(task.due, task.due_is_date, task_windows(task, default_windows), tz)
            if name not in fired and moment <= now and (created is None or moment >= created)
        ]
        if task.due
        else []
    )
    inbox_id = _write_firing(task, passed[-1][0], now, tz, []) if passed else None
    plan_task(task, now, default_windows, tz)
    return inbox_id


def _write_firing(
    task: Task, window: str, now: datetime, tz: ZoneInfo, skipped: list[tuple[str, datetime]]
) -> int | None:
    """One TaskFiring + one inbox row, in the caller's transaction. None when this window had already fired, or the
    task prepares an event the calendar cancelled (its topic's close is asked; nothing else is said)."""
    due = as_utc(task.due)
    trace_id = trace.new_trace_id()
    try:
        with database.atomic():
            firing = TaskFiring.create(task=task.id, window=window, due=due, fired_at=now)
    except peewee.IntegrityError:
        return None  # the unique (task, window, due) index: it fired before
    if task.topic_id and cancelled(task.topic, tz):
        # the window counts as passed (planning goes on to the next one), and nothing is told
        trace.record(
            trace_id,
            "held",
            ACTOR,
            f"task {task.id} '{task.title}': window {window} not told; its event, {task.topic.title}, was cancelled "
            "in the calendar and closing it waits for the user",
            now,
            {"task_id": task.id, "window": window},
        )
        return None
    if task.topic_id and waits_for_move(task, now, moved_later(task.topic, tz)):
        trace.record(
            trace_id,
            "held",
            ACTOR,
            f"task {task.id} '{task.title}': window {window} not told; its event, {task.topic.title}, moved later in "
            "the calendar and the plan's dates wait for the user to move them along",
            now,
            {"task_id": task.id, "window": window},
        )
        return None
    for name, moment in skipped:
        skip_id = trace.new_trace_id()
        trace.record(
            skip_id,
            "skipped",
            ACTOR,
            f"task {task.id} window {name} (planned {moment:%Y-%m-%d %H:%M} UTC) "
            f"passed while down; only the latest, {window}, fires",
            now,
            {"task_id": task.id, "window": name, "planned": moment.isoformat()},
        )
    topic = task.topic.title if task.topic_id else None
    row = inbox.add(
        source=ACTOR,
        text=_deadline_text(task, window, tz),
        priority=DEADLINE_PRIORITY,
        at=now,
        trace_id=trace_id,
        kind="deadline",
        origin="background",
        payload={
            "task_id": task.id,
            "title": task.title,
            "window": window,
            "due": due.isoformat(),
            "due_is_date": bool(task.due_is_date),
            "topic": topic,
            "bundle": as_utc(now).isoformat(),  # the follow-ups of one scan go out as one message
            **({"topic_id": task.topic_id} if task.topic_id else {}),
        },
        dedup_key=f"deadline:{task.id}:{window}:{due.isoformat()}",
    )
    if row is None:
        return None
    firing.inbox_id = row.id
    firing.save()
    thinned = thinned_by(task)
    trace.record(
        trace_id,
        "fired",
        ACTOR,
        f"task {task.id} '{task.title}': window {window}"
        + (f"; heads-ups left out: memory {thinned['memory']} ({thinned['text']})" if thinned else ""),
        now,
        {"task_id": task.id, "window": window, "inbox_id": row.id},
    )
    return row.id


# Topics -------------------------------------------------------------------------


def topic_end(topic: Topic, tz: ZoneInfo) -> datetime | None:
    """When a topic's event is over: its end; for one told by its start alone (a dentist at 10:00, a move),
    the end of that day."""
    if topic.ends is not None:
        return as_utc(topic.ends)
    if topic.starts is None:
        return None
    return local_moment(as_utc(topic.starts).astimezone(tz).date() + timedelta(days=1), time(0, 0), tz)


def close_moment(topic: Topic, tz: ZoneInfo) -> datetime | None:
    """When its closing is proposed: the day after its event (the first midnight at or after its end), so that a
    one-day event's closing comes with the next morning's briefing rather than minutes after the appointment."""
    end = topic_end(topic, tz)
    if end is None:
        return None
    local = end.astimezone(tz)
    if (local.hour, local.minute, local.second, local.microsecond) == (0, 0, 0, 0):
        return end
    return local_moment(local.date() + timedelta(days=1), time(0, 0), tz)


def _topic_key(topic: Topic, tz: ZoneInfo) -> str:
    return f"topic_end:{topic.id}:{topic_end(topic, tz).isoformat()}"


# read at every look of the tick (and the simulated clock's steps): their text built once
ENDING = prepared(
    lambda s: Topic.select().where(
        (Topic.status == "active")
        & (
            (Topic.ends.is_null(False) & (Topic.ends <= s.before))
            | (Topic.ends.is_null() & Topic.starts.is_null(False) & (Topic.starts <= s.before))
        )
    )
)
NEXT_END = prepared(
    lambda s: (
        Topic.select(Topic.ends).where((Topic.status == "active") & (Topic.ends > s.now)).order_by(Topic.ends).limit(1)
    )
)
DUE_TASKS = prepared(
    # Only next_fire_at in the WHERE: SQLite without statistics would otherwise walk the status index.
    lambda s: (
        Task.select(Task.id, Task.status)
        .where(Task.next_fire_at <= s.now)
        .order_by(Task.next_fire_at)
        .limit(SCAN_BATCH)
    )
)


def _ending(before: datetime) -> list[Topic]:
    """Active topics whose event may be over by `before` (an end, or only a start, up to then)."""
    return ENDING.models(before=before)


def _moved_ahead(topic: Topic, now: datetime, tz: ZoneInfo) -> bool:
    """The calendar moved the topic's event to an end still ahead: it has not ended, whatever the topic's own dates."""
    span = event_span(topic, tz)
    return span is not None and (span[1] or span[0]) > now


def ended_unfired(now: datetime, tz: ZoneInfo = UTC) -> list[Topic]:
    """Active topics whose closing is due by `now` and not asked yet, the earliest first; not one with a task
    still to do after its event."""
    ended = sorted(
        (t for t in _ending(now) if (close_moment(t, tz) or now) <= now and not _moved_ahead(t, now, tz)),
        key=lambda t: (close_moment(t, tz), t.id),
    )
    if not ended:
        return []
    keys = {_topic_key(t, tz) for t in ended}
    seen = {r.dedup_key for r in Inbox.select(Inbox.dedup_key).where(Inbox.dedup_key.in_(list(keys)))}
    return [t for t in ended if _topic_key(t, tz) not in seen and not _followed_through(t, tz)]


def _followed_through(topic: Topic, tz: ZoneInfo) -> bool:
    """An open task of the topic falls due after its event (registering the new address after a move): the topic
    is not over while that is still to do, and a close would drop it. Its close is asked once nothing is left."""
    end = topic_end(topic, tz)
    return (
        end is not None
        and Task.select(Task.id)
        # a day's task is stored at its midnight: one due the day after a one-day event is at its end, and after it
        .where((Task.topic == topic.id) & Task.status.in_(OPEN_STATUSES) & (Task.due >= end))
        .exists()
    )


def next_close(now: datetime, tz: ZoneInfo = UTC) -> datetime | None:
    """The next moment a topic's closing falls due after `now` (for the simulated clock's steps)."""
    soon = [close_moment(t, tz) for t in _ending(now + timedelta(days=2))]
    later = [m for m in soon if m is not None and m > now]
    if later:
        return min(later)
    upcoming = NEXT_END.value(now=now)
    return as_utc(Topic.ends.python_value(upcoming)) if upcoming is not None else None


def scan_topic_ends(now: datetime, tz: ZoneInfo = UTC) -> list[int]:
    """One "topic_end" inbox row per active topic whose closing is due (the day after its event); inbox ids."""
    now = as_utc(now)
    written = []
    for topic in ended_unfired(now, tz):
        ends = topic_end(topic, tz)
        trace_id = trace.new_trace_id()
        row = inbox.add(
            source=ACTOR,
            text=f"The topic '{topic.title}' ended at {ends:%Y-%m-%d %H:%M} UTC.",
            priority=DEADLINE_PRIORITY,
            at=now,
            trace_id=trace_id,
            kind="topic_end",
            origin="background",
            payload={"topic_id": topic.id, "title": topic.title, "ends": ends.isoformat()},
            dedup_key=_topic_key(topic, tz),
        )
        if row is not None:
            trace.record(
                trace_id, "fired", ACTOR, f"topic {topic.id} '{topic.title}' ended", now, {"topic_id": topic.id}
            )
            written.append(row.id)
    return written
