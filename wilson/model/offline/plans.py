"""A playbook plan fitted to the time left before the event.

Each task is due `days_before` the event. The tasks whose lead time is gone are caught up from
tomorrow, one a day in the playbook's order (the longest lead time first) within the first third
of the time left, so that a trip planned two weeks ahead does not put five tasks on one day; a
task is left out when the event is closer than its `min_days` (no "book flights" for a trip that
leaves in three days). No deadline falls on or after the day the event starts, except on that day
itself when nothing earlier is left.
"""

from __future__ import annotations

from datetime import date, timedelta

from wilson.model.offline.recognition import PlaybookEvent, PlaybookTask


def fit(tasks: tuple[PlaybookTask, ...], start_day: date, today: date,
        domestic: bool = False) -> list[tuple[PlaybookTask, date]]:
    """(task, due) for the tasks that still make sense, in the playbook's order; `domestic`: the place is known
    to be in the home country, so the tasks only a trip abroad needs are left out."""
    days_left = (start_day - today).days
    if days_left < 0:
        return []  # under way or over: nothing to prepare
    latest = start_day - timedelta(days=1) if days_left >= 1 else start_day
    earliest = min(today + timedelta(days=1), latest)
    kept = [t for t in tasks if days_left >= t.min_days and not (domestic and t.abroad)]
    late = [t for t in kept if t.days_before > 0 and start_day - timedelta(days=t.days_before) < earliest]
    span = min(len(late), max(1, days_left // 3))  # days the catching up may take, from tomorrow
    fitted = []
    for task in kept:
        if task.days_before <= 0:
            fitted.append((task, start_day))
            continue
        due = start_day - timedelta(days=task.days_before)
        if task in late:
            due = earliest + timedelta(days=late.index(task) * span // len(late))
        else:  # never before a task that needed more lead time and is caught up later
            due = max([due] + [d for t, d in fitted if t in late and t.days_before > task.days_before])
        fitted.append((task, min(max(due, earliest), latest)))
    return fitted


def plan_calls(event: PlaybookEvent, title: str, start, end, start_day: date, today: date, notes: str,
               topics: list[dict], tasks: list[dict], domestic: bool = False) -> list[tuple[str, dict]]:
    """create_topic (unless it is open already) and create_task for each fitted task not already there."""
    known_topics = {str(t.get("title", "")).strip().lower() for t in topics if t.get("status") != "closed"}
    known_tasks = {(str(t.get("topic") or "").lower(), str(t.get("title", "")).lower()) for t in tasks}
    calls = []
    if title.lower() not in known_topics:
        topic = {"title": title, "starts": start, "ends": end, "notes": notes}
        calls.append(("create_topic", {k: v for k, v in topic.items() if v not in (None, "")}))
    for task, due in fit(event.tasks, start_day, today, domestic):
        if (title.lower(), task.title.lower()) in known_tasks:
            continue
        calls.append(("create_task", {"title": task.title, "due": due.isoformat(), "topic": title,
                                      "notes": task.notes}))
    return calls
