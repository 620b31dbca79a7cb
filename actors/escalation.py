"""Escalation windows before events: as an event with open preparation approaches, its open tasks are
raised together, in the morning briefing, at moments fitted to each (a visa weeks ahead, the check-in the
day before), with the user's choices per task (done, new date, drop, help me). An overdue task is raised
with its choices once, then counted in one line ("3 overdue, oldest 12 days"), and raised again at its
event's next window.

A raise is recorded as a TaskFiring of window "event:<days>" (against the task's due), in the briefing's
transaction, so each window raises a task once, however often the day is gathered."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from actors.shared.event_span import event_span
from actors.shared.windows import EVENT_WINDOWS, due_date, lead_days
from storage import marks
from storage.models import Task, TaskFiring, Topic
from storage.prepared import prepared
from wilson.kernel.clock import as_utc
from wilson.kernel.timeparse import last_day

RAISED = "event:"  # a TaskFiring window: event:<days before the start>
CHOICES = "done {n} · move {n} DATE · drop {n} · help {n}"


@dataclass
class Raise:
    """One event's open preparation, raised at one window."""

    topic: Topic
    days: int  # until the event starts
    window: int
    span: tuple[datetime, datetime | None]  # the event's start and end as the calendar has them (event_span)
    tasks: list[Task] = field(default_factory=list)


def window_for(days: int) -> int | None:
    """The window a day `days` before an event is in: the nearest one not further away, or None."""
    inside = [w for w in EVENT_WINDOWS if days <= w]
    return min(inside) if inside else None


FOLD_WITHIN = 14  # days: an overdue task whose event's next window comes this soon waits to be raised there


def next_window_in(task: Task, today: date, tz) -> int | None:
    """Days until the next window of the event this task prepares (None when it prepares none)."""
    if not task.topic_id or task.topic.starts is None or task.topic.status != "active":
        return None
    start = as_utc(task.topic.starts).astimezone(tz).date()
    days = (start - today).days
    ahead = [days - w for w in EVENT_WINDOWS if w < days]
    if days >= 1 and not ahead:
        return 0
    return min(ahead) if ahead else None


def folds(task: Task, today: date, tz) -> bool:
    """Whether a task gone overdue is left to its event's next window rather than raised on its own morning."""
    soon = next_window_in(task, today, tz)
    return soon is not None and soon <= FOLD_WITHIN


EVE_DAYS = 2  # preparation due this close to its event is told on the event's eve, with the rest


def on_eve(task: Task) -> bool:
    """Whether the task is due on its event's eve (packing, the check-in): the eve's raise tells it."""
    if not task.topic_id or task.due is None or task.topic.starts is None:
        return False
    return timedelta(0) <= as_utc(task.topic.starts) - as_utc(task.due) <= timedelta(days=EVE_DAYS)


def task_day(task: Task, tz) -> date | None:
    if task.due is None:
        return None
    return due_date(task.due, tz) if task.due_is_date else as_utc(task.due).astimezone(tz).date()


# Every active topic with a start, read for every briefing (its text built once): one whose own start has passed may be
# an event the calendar moved later, so raises() keeps those that start ahead by event_span
COMING_EVENTS = prepared(
    lambda s: (
        Topic.select().where((Topic.status == "active") & Topic.starts.is_null(False)).order_by(Topic.starts, Topic.id)
    )
)


def raises(now: datetime, tz) -> list[Raise]:
    """What this morning raises: per event starting within a window, its open tasks that fit the window
    (or are overdue), not raised at this window before, and not just made (the user read them then)."""
    today = as_utc(now).astimezone(tz).date()
    found = []
    for topic in COMING_EVENTS.models():
        span = event_span(topic, tz)
        if span is None:
            continue  # the calendar cancelled it: its close waits for the user, and nothing else is said
        start = span[0].astimezone(tz).date()
        days = (start - today).days
        window = window_for(days)
        if window is None or days < 1:
            continue
        opened = datetime.combine(start - timedelta(days=window), datetime.min.time(), tzinfo=tz)
        if days < window and marks.get("escalation", _mark(topic, window, start)):
            continue  # this window raised the event's preparation already: what goes overdue now waits for the next
        raise_ = Raise(topic, days, window, span)
        for task in topic.tasks.where(Task.status.in_(("open", "snoozed"))).order_by(Task.due, Task.id):
            on = task_day(task, tz)
            overdue = on is not None and on < today
            if lead_days(task.title) < window and not overdue:
                continue  # its moment is a nearer window
            if task.created_at is not None and as_utc(task.created_at) >= opened and not overdue:
                continue  # planned inside this window: the user has just read it
            if (
                TaskFiring.select()
                .where(
                    (TaskFiring.task == task.id)
                    & (TaskFiring.window == f"{RAISED}{window}")
                    & (TaskFiring.due == task.due)
                )
                .exists()
            ):
                continue
            raise_.tasks.append(task)
        if raise_.tasks:
            found.append(raise_)
    return found


def _when(days: int) -> str:
    if days == 1:
        return "tomorrow"
    if days % 7 == 0:
        return f"in {days // 7} week{'s' if days > 7 else ''}"
    return f"in {days} days"


def _short(day: date) -> str:
    return f"{day:%a} {day.day} {day:%b}"


def task_state(task: Task, today: date, tz) -> str:
    on = task_day(task, tz)
    if on is None:
        return "no date"
    if on < today:
        return f"overdue since {_short(on)}"
    if on == today:
        return "due today"
    return f"due {_short(on)}"


def raise_text(raise_: Raise, today: date, tz) -> str:
    """One event's raise as a section of the briefing: the event, when, and each open task with its choices."""
    topic = raise_.topic
    starts, ends = raise_.span
    start = starts.astimezone(tz).date()
    end = last_day(ends, tz) if ends else None
    span = f"{_short(start)}" + (f" – {_short(end)}" if end and end > start else "")
    head = (
        f"{topic.title} starts {_when(raise_.days)} ({span}), and "
        f"{'this is' if len(raise_.tasks) == 1 else f'these {len(raise_.tasks)} are'} still open:"
    )
    lines = [f"• {task.title} ({task_state(task, today, tz)}): {CHOICES.format(n=task.id)}" for task in raise_.tasks]
    return "\n".join([head] + lines)


def _mark(topic: Topic, window: int, start: date) -> str:
    return f"{topic.id}:{window}:{start.isoformat()}"


def record(raises_: list[Raise], now: datetime, tz) -> None:
    """In the briefing's transaction: each task raised at its window counts as raised, and so does the window."""
    for raise_ in raises_:
        start = raise_.span[0].astimezone(tz).date()
        marks.put("escalation", _mark(raise_.topic, raise_.window, start), as_utc(now).isoformat(), now)
        for task in raise_.tasks:
            TaskFiring.get_or_create(
                task=task.id, window=f"{RAISED}{raise_.window}", due=task.due, defaults={"fired_at": now}
            )


def overdue_summary(tasks: list[Task], today: date, tz) -> str:
    """Overdue tasks raised before, in one line: how many, the oldest, and where the list is."""
    oldest = max((today - task_day(t, tz)).days for t in tasks)
    return (
        f"{len(tasks)} overdue, oldest {oldest} day{'s' if oldest != 1 else ''}: "
        "`overdue` lists them with what you can do"
    )
