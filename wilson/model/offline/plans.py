"""A playbook plan fitted to the time left before the event.

Each task is due `days_before` the event (a negative number: that many days after it, for what only makes
sense once it happened, like registering the new address after a move). The tasks whose lead time is gone
are caught up in the playbook's order (book before pay before pack), spread over the first half of the time
left rather than bunched on the first days; none is due before a task that needed more lead time, none the day
after the plan was made unless the event is that close (URGENT_DAYS), and none in the first week after it when
the event is more than a month away (FAR_DAYS): nothing is urgent then, and the user has just read the plan (a
move's notice or an office's deadline still starts two days after: late, those cost money). A task is left out
when the event is closer than its `min_days` (no "book flights" for a trip that leaves in three days). No deadline
before the event falls on or after the day it starts, except on that day itself when nothing earlier is left.
"""

from __future__ import annotations

from datetime import date, timedelta

from wilson.model.offline.recognition import PlaybookEvent, PlaybookTask

URGENT_DAYS = 7  # an event this close may have a task due tomorrow; a later one gives the user a day first
FAR_DAYS = 30  # an event further than this leaves the first week after the plan quiet


def fit(
    tasks: tuple[PlaybookTask, ...], start_day: date, today: date, domestic: bool = False, quiet: bool = True
) -> list[tuple[PlaybookTask, date]]:
    """(task, due) for the tasks that still make sense, in the playbook's order; `domestic`: the place is known
    to be in the home country, so the tasks only a trip abroad needs are left out; `quiet`: an event far ahead may
    leave the first week after the plan quiet (not a move's notice or an office's deadline, late costs money)."""
    days_left = (start_day - today).days
    if days_left < 0:
        return []  # under way or over: nothing to prepare
    latest = start_day - timedelta(days=1) if days_left >= 1 else start_day
    # the first week's quiet holds for the first task's day-before heads-up too: its day is the eighth
    first = today + timedelta(days=1 if days_left <= URGENT_DAYS else 8 if quiet and days_left > FAR_DAYS else 2)
    earliest = min(first, latest)
    kept = [t for t in tasks if days_left >= t.min_days and not (domestic and t.abroad)]
    before = sorted((t for t in kept if t.days_before > 0), key=lambda t: -t.days_before)  # stable: playbook order
    late = [t for t in before if start_day - timedelta(days=t.days_before) < earliest]
    span = max(0, (latest - earliest).days // 2)  # the catching up takes the first half of the time left
    dues: dict[int, date] = {}
    previous = earliest
    for task in before:
        due = start_day - timedelta(days=task.days_before)
        if task in late:
            due = earliest + timedelta(days=late.index(task) * span // len(late))
        due = min(max(due, previous, earliest), latest)  # never before a task that needed more lead time
        dues[id(task)] = previous = due
    for task in kept:
        if task.days_before <= 0:  # the day itself, or after it
            dues[id(task)] = start_day + timedelta(days=-task.days_before)
    return [(task, dues[id(task)]) for task in kept]


def plan_calls(
    event: PlaybookEvent,
    title: str,
    start,
    end,
    start_day: date,
    today: date,
    notes: str,
    topics: list[dict],
    tasks: list[dict],
    domestic: bool = False,
) -> list[tuple[str, dict]]:
    """create_topic (unless it is open already) and create_task for each fitted task not already there."""
    known_topics = {str(t.get("title", "")).strip().lower() for t in topics if t.get("status") != "closed"}
    known_tasks = {(str(t.get("topic") or "").lower(), str(t.get("title", "")).lower()) for t in tasks}
    calls = []
    if title.lower() not in known_topics:
        topic = {"title": title, "starts": start, "ends": end, "notes": notes}
        calls.append(("create_topic", {k: v for k, v in topic.items() if v not in (None, "")}))
    for task, due in fit(event.tasks, start_day, today, domestic, quiet=event.name not in ("move", "official", "bill")):
        if (title.lower(), task.title.lower()) in known_tasks:
            continue
        calls.append(
            ("create_task", {"title": task.title, "due": due.isoformat(), "topic": title, "notes": task.notes})
        )
    return calls
