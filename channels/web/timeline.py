"""What is coming and how each topic's preparation stands, for the dashboard's Today and Topics pages.

The timeline is the coming weeks at a glance: what waits for the user's answer and what is overdue
first, then day by day the calendar's events, the topics that begin, and the open tasks due, grouped by
topic; after the window, the topics that begin later with what is still open for them. A topic's
progress is its tasks counted (done, open, overdue, dropped) and placed on a line from when the topic
began to its event, with today marked. Pure reads of working memory; the templates draw them.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

from actors.proposals.rules import OPEN
from actors.tools import task_view, visible_to
from storage import calendar_days
from storage.models import Approval, ApprovalItem, Task, Topic, TopicStatus
from wilson.kernel.clock import as_utc

WEEKS = 6  # how far Today's timeline looks ahead
LATER = 8  # topics listed after the window, at most


def _day(moment: datetime, tz) -> date:
    return moment.astimezone(tz).date()


def is_late(task: Task, now: datetime, tz) -> bool:
    if task.status != "open" or task.due is None:
        return False
    return _day(task.due, tz) < now.astimezone(tz).date() if task.due_is_date else task.due < now


def in_words(days: int) -> str:
    """How far a day is from today, as a person says it."""
    if days == 0:
        return "today"
    if days == 1:
        return "tomorrow"
    if days == -1:
        return "yesterday"
    if days < 0:
        return f"{-days} days ago"
    if days < 14:
        return f"in {days} days"
    return f"in {round(days / 7)} weeks"


def week_label(start: date, today: date) -> str:
    monday = today - timedelta(days=today.weekday())
    weeks = (start - monday).days // 7
    if weeks == 0:
        return "This week"
    if weeks == 1:
        return "Next week"
    return f"Week of {start:%d %b}"


def waiting(tz) -> list[dict]:
    """Proposals still waiting for the user, oldest first: what each is about and until when it waits."""
    found = []
    for approval in Approval.select().where(Approval.status.in_(OPEN)).order_by(Approval.id):
        items = [i for i in approval.items.order_by(ApprovalItem.position) if i.status == "pending"]
        first = items[0].description.splitlines()[0] if items else ""
        found.append(
            {
                "id": approval.id,
                "first": first,
                "more": max(len(items) - 1, 0),
                "reason": approval.reason,
                "until": approval.expires_at.astimezone(tz).strftime("%a %d %b"),
            }
        )
    return found


def coming(now: datetime, tz, owner: str | None, weeks: int = WEEKS) -> dict:
    """Today's timeline: {"waiting", "overdue", "weeks": [{"label", "days": [{"date", "label", "today",
    "entries"}]}], "later"}. An entry is {"kind": event | starts | due, "text", "topic", "topic_id",
    "tasks": [{"id", "title"}]}."""
    today = now.astimezone(tz).date()
    end = today + timedelta(days=7 * weeks - today.weekday())  # whole weeks, the last one to its Sunday
    days: dict[date, list[dict]] = {today: []}  # today is always there, to read the rest from

    def add(day: date, entry: dict) -> None:
        days.setdefault(day, []).append(entry)

    window_start = datetime.combine(today, datetime.min.time(), tz)
    window_end = datetime.combine(end, datetime.min.time(), tz)
    for event in calendar_days.events_between(as_utc(window_start), as_utc(window_end)):
        first, last = max(event.first_day(tz), today), event.last_day(tz)
        when = "all day" if event.all_day else event.start.astimezone(tz).strftime("%H:%M")
        text = event.title + (f", until {last:%a %d %b}" if last > first else "")
        add(
            first,
            {
                "kind": "event",
                "when": "" if first > event.first_day(tz) else when,
                "text": text,
                "place": event.location,
                "topic": None,
                "topic_id": None,
                "tasks": [],
            },
        )

    topics = list(
        Topic.select().where(
            (Topic.status == TopicStatus.ACTIVE.value) & Topic.starts.is_null(False) & visible_to(Topic, owner, owner)
        )
    )
    later = []
    for topic in topics:
        starts = _day(topic.starts, tz)
        open_tasks = topic.tasks.where(Task.status == "open").count()
        entry = {
            "kind": "starts",
            "when": "",
            "text": f"{topic.title} begins",
            "place": "",
            "topic": topic.title,
            "topic_id": topic.id,
            "tasks": [],
            "open": open_tasks,
        }
        if today <= starts < end:
            add(starts, entry)
        elif starts >= end:
            later.append(
                {
                    **entry,
                    "date": starts.isoformat(),
                    "label": f"{starts:%a %d %b}",
                    "away": in_words((starts - today).days),
                }
            )

    overdue: list[dict] = []
    groups: dict[tuple[date, int | None], list[Task]] = {}
    tasks = (
        Task.select()
        .where((Task.status == "open") & Task.due.is_null(False) & visible_to(Task, owner, owner))
        .order_by(Task.due, Task.id)
    )
    for task in tasks:
        day = _day(task.due, tz)
        if is_late(task, now, tz):
            overdue.append({**task_view(task, tz), "late": in_words((day - today).days)})
        elif day < end:
            groups.setdefault((day, task.topic_id), []).append(task)
    for (day, topic_id), group in sorted(groups.items(), key=lambda g: (g[0][0], g[0][1] or 0)):
        title = group[0].topic.title if topic_id else None
        add(
            day,
            {
                "kind": "due",
                "when": "",
                "text": title or "",
                "place": "",
                "topic": title,
                "topic_id": topic_id,
                "tasks": [
                    {
                        "id": t.id,
                        "title": t.title,
                        "time": "" if t.due_is_date else t.due.astimezone(tz).strftime("%H:%M"),
                    }
                    for t in group
                ],
            },
        )

    weeks_out: list[dict] = []
    start = today
    while start < end:
        stop = start + timedelta(days=7 - start.weekday())
        shown = [
            {
                "date": d.isoformat(),
                "label": f"{d:%a %d %b}",
                "today": d == today,
                "away": in_words((d - today).days),
                "entries": days[d],
            }
            for d in sorted(days)
            if start <= d < stop
        ]
        if not shown and weeks_out and not weeks_out[-1]["days"] and weeks_out[-1]["empty_from"]:
            # quiet weeks in a row are one line: "11 Jan – 14 Feb", nothing planned
            weeks_out[-1]["label"] = f"{weeks_out[-1]['empty_from']:%d %b} – {stop - timedelta(days=1):%d %b}"
        else:
            weeks_out.append({"label": week_label(start, today), "days": shown, "empty_from": None if shown else start})
        start = stop
    later.sort(key=lambda e: e["date"])
    for week in weeks_out:
        week.pop("empty_from")
    return {
        "waiting": waiting(tz),
        "overdue": overdue,
        "weeks": weeks_out,
        "later": later[:LATER],
        "until": (end - timedelta(days=1)).strftime("%a %d %b"),
    }


def progress(topic: Topic, now: datetime, tz, owner: str | None) -> dict:
    """A topic's preparation against its event: counts, and each task placed on the line from when the
    topic began (or its first task was due) to its event, with today marked, as percentages."""
    today = now.astimezone(tz).date()
    tasks = list(topic.tasks.where(visible_to(Task, owner, owner)).order_by(Task.due.is_null(), Task.due, Task.id))
    rows = []
    for task in tasks:
        state = (
            "overdue" if is_late(task, now, tz) else {"done": "done", "cancelled": "dropped"}.get(task.status, "open")
        )
        view = task_view(task, tz)
        day = _day(task.due, tz) if task.due is not None else None
        rows.append(
            {
                **view,
                "state": state,
                "day": day,
                "when": (f"{day:%a %d %b}" + ("" if task.due_is_date else f" {task.due.astimezone(tz):%H:%M}"))
                if day
                else "",
                "away": in_words((day - today).days) if day else "",
            }
        )
    counts = {state: sum(1 for r in rows if r["state"] == state) for state in ("done", "open", "overdue", "dropped")}
    counted = counts["done"] + counts["open"] + counts["overdue"]
    event = _day(topic.starts, tz) if topic.starts is not None else None
    begin = min([_day(topic.created_at, tz)] + [r["day"] for r in rows if r["day"]])
    finish = max([d for d in [event, today] + [r["day"] for r in rows] if d] + [begin + timedelta(days=1)])
    span = (finish - begin).days or 1

    def at(day: date) -> float:
        return round(100 * (day - begin).days / span, 1)

    for row in rows:
        row["x"] = at(row["day"]) if row["day"] else None
    return {
        "counts": counts,
        "total": counted,
        "share": {
            state: round(100 * counts[state] / counted, 1) if counted else 0 for state in ("done", "overdue", "open")
        },
        "event": f"{event:%a %d %b %Y}" if event else "",
        "event_x": at(event) if event else None,
        "to_go": in_words((event - today).days) if event else "",
        "today_x": at(today),
        "begin": f"{begin:%d %b}",
        "finish": f"{finish:%d %b}",
        "tasks": rows,
    }
