"""What the dashboard shows, read from working memory, and how it is rendered.

Every function here reads rows and returns plain dicts (the same shapes the JSON API
returns); `render` turns them into HTML through Jinja2 with autoescaping on, so text
from calendars, mail, feeds or the model is shown as text, never run as markup.

Size: one dashboard: a short reader per page, sharing the local-day and rendering helpers.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, select_autoescape

from actors.proposals import commands
from actors.proposals.rules import OPEN, actions_for
from actors.tools import task_view
from channels import views
from channels.web import explain, timeline, watcher
from storage import calendar_days
from storage import trace as traces
from storage.beliefs import memory_list
from storage.models import Approval, ApprovalItem, DecisionRow, Inbox, Outbox, ReceptorBuffer, Task, TokenUsage, Topic
from wilson.kernel.commands import dashboard_nav
from wilson.kernel.clock import as_utc
from wilson.kernel.config import ROLES

TEMPLATES = Path(__file__).resolve().parent / "templates"
MESSAGES = 100  # conversation entries on one page
# where the owner talks with Wilson on this computer: one conversation. Telegram stays in Telegram (its chats
# may be groups, and other allowed people's)
CONVERSING = ("web", "repl")

_env = Environment(
    loader=FileSystemLoader(str(TEMPLATES)),
    autoescape=select_autoescape(default=True),
    trim_blocks=True,
    lstrip_blocks=True,
)
_env.globals["nav_links"] = dashboard_nav()  # the one command table's pages


def when(value) -> str:
    """An ISO date or date-time as the pages show it: "Tue 05 Jan", "Tue 05 Jan 17:00"."""
    if not value:
        return ""
    try:
        moment = datetime.fromisoformat(str(value))
    except ValueError:
        return str(value)
    return f"{moment:%a %d %b}" if len(str(value)) <= 10 else f"{moment:%a %d %b %H:%M}"


_env.filters["when"] = when


def render(name: str, **context) -> str:
    return _env.get_template(name).render(**context)


def _local_day(moment: datetime, tz) -> date:
    return moment.astimezone(tz).date()


def briefing() -> dict | None:
    """The latest morning briefing, wherever it was delivered."""
    row = (
        Outbox.select()
        .where(Outbox.idempotency_key.startswith("briefing:") & (Outbox.channel != "silent"))
        .order_by(Outbox.id.desc())
        .first()
    )
    if row is None:
        return None
    return {"text": row.text, "at": row.created_at.isoformat(timespec="minutes")}


def events_on(day: date, tz) -> list[dict]:
    """The day's events as the calendar channel last read them (its snapshot), cancelled ones left out."""
    return [
        {
            "title": event.title,
            "when": "all day" if event.all_day else event.start.astimezone(tz).strftime("%H:%M"),
            "location": event.location,
        }
        for event in calendar_days.events_on(day, tz)
    ]


def due_and_overdue(now: datetime, tz) -> dict:
    today = _local_day(now, tz)
    rows = Task.select().where((Task.status == "open") & Task.due.is_null(False)).order_by(Task.due, Task.id)
    due, overdue = [], []
    for task in rows:
        day = _local_day(task.due, tz)
        late = day < today if task.due_is_date else task.due < now
        if late:
            overdue.append(task_view(task, tz))
        elif day == today:
            due.append(task_view(task, tz))
    return {"due": due, "overdue": overdue}


def watched(tz=None) -> list[dict]:
    """What the watcher looks at, with when it last did and any problem (channels/web/watcher.py)."""
    return [watcher.view(state, tz) for state in watcher.sources()]


def latest_seen(tz, limit: int = 8) -> list[dict]:
    """The newest items and changes the watcher buffered (others' words: shown as text, never as markup)."""
    rows = (
        ReceptorBuffer.select()
        .where(
            (ReceptorBuffer.channel == "web")
            & ReceptorBuffer.dedup_key.startswith("web:")
            & ~ReceptorBuffer.dedup_key.startswith("web:intake:")
        )
        .order_by(ReceptorBuffer.id.desc())
        .limit(limit)
    )
    return [
        {
            "title": str((r.payload or {}).get("title") or ""),
            "text": r.text[:600],
            "at": r.created_at.astimezone(tz).strftime("%a %d %b %H:%M"),
            "trace": r.trace_id,
        }
        for r in rows
    ]


def today(now: datetime, tz, owner: str | None = None, coming: bool = False) -> dict:
    """What Today shows; `coming`: with the timeline of the coming weeks (channels/web/timeline.py)."""
    found = {
        "date": _local_day(now, tz).strftime("%A %d %B %Y"),
        "briefing": briefing(),
        "events": events_on(_local_day(now, tz), tz),
        **due_and_overdue(now, tz),
        "watched": watched(tz),
        "seen": latest_seen(tz),
        "waiting": Approval.select().where(Approval.status.in_(OPEN)).count(),
        "reminders": views.reminders(tz),
    }
    if coming:
        found["timeline"] = timeline.coming(now, tz, owner)
    return found


def waiting_count() -> int:
    return Approval.select().where(Approval.status.in_(OPEN)).count()


def done_notice(raw: str, tz) -> dict | None:
    """What became of a Done press (the proposal it made and approved at once), for the page it returns to."""
    if not raw.isdigit() or len(raw) > 16:
        return None
    approval = Approval.get_or_none(Approval.id == int(raw))
    item = approval.items.order_by(ApprovalItem.position).first() if approval is not None else None
    if item is None or item.tool != "complete_task":
        return None
    task = Task.get_or_none(Task.id == (item.args or {}).get("task_id"))
    return {
        "approval": approval.id,
        "title": task.title if task else "",
        "state": item.status,
        "error": (item.result or {}).get("error", "") if item.status == "failed" else "",
    }


def command_notice(raw: str, channel: str) -> dict | None:
    """What became of a Snooze or Stop press (a command decision), for the page it returns to: the gate's
    receipt and its Undo, or that it is still being applied."""
    if not raw.isdigit() or len(raw) > 16:
        return None
    row = DecisionRow.get_or_none(
        (DecisionRow.id == int(raw)) & (DecisionRow.action == commands.COMMAND) & (DecisionRow.channel == channel)
    )
    if row is None:
        return None
    told = Outbox.get_or_none(Outbox.idempotency_key == f"decision:{row.id}")
    if told is None:
        return {"state": "pending", "words": row.text}
    undo = (told.payload or {}).get("undo") or {}
    return {"state": "told", "words": row.text, "text": told.text, "undo": undo.get("id")}


def proposals(tz, now: datetime) -> list[dict]:
    """Proposals still open, oldest first, with the nonce their forms send back. One the user has answered
    whose answer the gate is still applying says so, and offers no buttons to answer it again."""
    found = []
    answered = {row.approval_id: row.action for row in DecisionRow.select().where(DecisionRow.status == "pending")}
    for approval in Approval.select().where(Approval.status.in_(OPEN)).order_by(Approval.id):
        items = [
            {"position": i.position, "description": i.description, "status": i.status}
            for i in approval.items.order_by(ApprovalItem.position)
        ]
        found.append(
            {
                "id": approval.id,
                "status": approval.status,
                "reason": approval.reason,
                "changes": approval.changes if approval.supersedes else "",
                "supersedes": approval.supersedes,
                "expires": approval.expires_at.astimezone(tz).strftime("%a %d %b %H:%M"),
                "expired": approval.expires_at <= now,
                "nonce": approval.nonce,
                "items": items,
                "modify": "modify" in actions_for(approval),
                "answered": answered.get(approval.id),
            }
        )
    return found


def conversation(channel: str, after_in: int = 0, after_out: int = 0, limit: int = MESSAGES) -> dict:
    """What the user said and what Wilson told them, here and at the terminal (one conversation, each
    entry saying where), in order, with the highest row id of each kind (the live
    reader asks for what came after those). A proposal that was answered says how, not where to answer."""
    places = tuple(dict.fromkeys((channel, *CONVERSING)))
    said = (
        Inbox.select()
        .where(Inbox.source.in_(places) & (Inbox.origin == "user") & (Inbox.id > after_in))
        .order_by(Inbox.id.desc())
        .limit(limit)
    )
    told = (
        Outbox.select()
        .where(Outbox.channel.in_(places) & (Outbox.status == "delivered") & (Outbox.id > after_out))
        .order_by(Outbox.id.desc())
        .limit(limit)
    )
    entries = [
        {
            "id": f"in-{r.id}",
            "row": r.id,
            "who": "you",
            "text": r.text,
            "where": _where(r.source, channel),
            "at": r.created_at,
            "approval": None,
        }
        for r in said
    ]
    entries += [
        {
            "id": f"out-{r.id}",
            "row": r.id,
            "who": "wilson",
            "text": r.text,
            "where": _where(r.channel, channel),
            "at": r.delivered_at or r.created_at,
            "approval": ((r.payload or {}).get("approval") or {}).get("id"),
        }
        for r in told
    ]
    asked = {e["approval"] for e in entries if e["approval"]}
    status = (
        {a.id: a.status for a in Approval.select(Approval.id, Approval.status).where(Approval.id.in_(asked))}
        if asked
        else {}
    )
    for entry in entries:
        entry["decided"] = status.get(entry["approval"]) not in (None, *OPEN) and status.get(entry["approval"])
    entries.sort(key=lambda e: (e["at"], e["id"]))
    entries = entries[-limit:]
    last_in = max([after_in] + [e["row"] for e in entries if e["who"] == "you"])
    last_out = max([after_out] + [e["row"] for e in entries if e["who"] == "wilson"])
    for entry in entries:
        entry["at"] = entry["at"].isoformat(timespec="seconds")
    return {"messages": entries, "after_in": last_in, "after_out": last_out}


def _where(place: str, here: str) -> str:
    return "" if place == here else explain.where(place)


def answers(channel: str, limit: int = 5) -> list[str]:
    """The gate's latest answers to decisions made here (shown on the Proposals page)."""
    rows = (
        Outbox.select()
        .where((Outbox.channel == channel) & Outbox.idempotency_key.startswith("decision:"))
        .order_by(Outbox.id.desc())
        .limit(limit)
    )
    return [r.text for r in rows]


def tasks(tz) -> list[dict]:
    return views.tasks(tz, "open")


def loose_tasks(tz, owner: str | None) -> list[dict]:
    """Open tasks in no topic (one approved on its own from a proposal whose topic still waits, say)."""
    return [t for t in views.tasks(tz, "open", owner, owner) if t["topic_id"] is None]


def topics(tz, owner: str | None, now: datetime | None = None, only: int | None = None) -> list[dict]:
    """Each topic with its tasks and dates, and a timeline: its history and the proposals made about it,
    with their reasons and what became of them (each linked to its trace). With `now`, each made topic's
    preparation as progress (channels/web/timeline.py); `only`: that topic alone."""
    found = views.topics(tz, owner, owner)
    if only is not None:
        found = [view for view in found if view.get("id") == only]
    for view in found:
        if now is not None and view.get("id") is not None:
            view["progress"] = timeline.progress(Topic.get_by_id(view["id"]), now, tz, owner)
        happened = [
            {"at": line.split(" ", 1)[0], "text": line.split(" ", 1)[1] if " " in line else "", "trace": ""}
            for line in view.get("history") or []
        ]
        if view.get("id") is not None:
            for approval in Approval.select().where(Approval.topic_id == view["id"]).order_by(Approval.id):
                items = "; ".join(
                    i.description.splitlines()[0]
                    for i in approval.items.order_by(ApprovalItem.position)
                    if i.description
                )
                happened.append(
                    {
                        "at": approval.created_at.astimezone(tz).strftime("%Y-%m-%d"),
                        "text": f"proposal {approval.id} ({approval.status}): {items}"
                        + (f" — because {approval.reason}" if approval.reason else ""),
                        "trace": approval.trace_id,
                    }
                )
        view["timeline"] = sorted(happened, key=lambda e: e["at"])
    return found


def trace(trace_id: str, tz) -> dict:
    """One stimulus' path, each step in the user's local time with who decided and why."""
    steps = views.trace_steps(trace_id, tz) if trace_id else []
    for step in steps:
        step["at"] = datetime.fromisoformat(step["at"]).strftime("%Y-%m-%d %H:%M:%S")
        step["headline"], step["words"] = explain.explain(step["stage"], step["actor"], step["reason"])
    what = None
    if trace_id:
        row = Inbox.get_or_none(Inbox.trace_id == trace_id) or ReceptorBuffer.get_or_none(
            ReceptorBuffer.trace_id == trace_id
        )
        if row is not None:
            source = getattr(row, "source", None) or getattr(row, "channel", "")
            what = {"source": source, "where": source_words(row), "text": row.text[:600]}
    return {"id": trace_id, "steps": steps, "stimulus": what}


BUFFERED = {"email": "An email", "calendar": "Your calendar", "web": "A page you watch"}


def source_words(row) -> str:
    """Where a stimulus came from, as a person says it: "At the terminal", "A page you watch"."""
    if isinstance(row, Inbox):
        where = explain.where(row.source)
        return where[:1].upper() + where[1:]
    if row.channel == "web" and row.dedup_key.startswith("web:intake:"):
        return "Sent to the dashboard"
    return BUFFERED.get(row.channel, row.channel.capitalize())


def what_came(trace_id: str) -> str:
    """The stimulus a path began with, in a line: where it came from and its first words (others' words,
    shown as text)."""
    row = Inbox.get_or_none(Inbox.trace_id == trace_id) or ReceptorBuffer.get_or_none(
        ReceptorBuffer.trace_id == trace_id
    )
    if row is None:
        return ""
    text = " ".join(row.text.split())
    return f"{source_words(row)}: “{text[:90]}{'…' if len(text) > 90 else ''}”"


def recent_traces(tz, limit: int = 25) -> list[dict]:
    """The latest paths, newest first, each by when it began, what it was and how it ended, in words."""
    found = []
    for trace_id in views.latest_traces(limit):
        rows = traces.path(trace_id)
        if not rows:
            continue
        first, last = rows[0], rows[-1]
        found.append(
            {
                "id": trace_id,
                "at": first.at.astimezone(tz).strftime("%a %d %b %H:%M"),
                "what": what_came(trace_id),
                "first": " — ".join(explain.explain(first.stage, first.actor, first.reason))[:160],
                "last": " — ".join(explain.explain(last.stage, last.actor, last.reason))[:160] if len(rows) > 1 else "",
            }
        )
    return found


def memories(now: datetime) -> list[dict]:
    """What Wilson believes about the user, with provenance and dates (storage/beliefs.py)."""
    found = memory_list(now)
    for memory in found:
        provenance = memory.get("provenance")
        memory["provenance"] = provenance if isinstance(provenance, (list, dict)) else (provenance or "")
    return found


CHART_DAYS = 14


def budget(synapse, now: datetime) -> dict:
    """Today's use as `wilson budget` shows it, and tokens per role per day for the last two weeks."""
    today = as_utc(now).date()
    days = [(today - timedelta(days=n)).isoformat() for n in range(CHART_DAYS - 1, -1, -1)]
    use = {(r.day, r.role): r for r in TokenUsage.select().where(TokenUsage.day.in_(days))}
    bars = []
    for day in days:
        parts = {
            role: (use[(day, role)].prompt_tokens + use[(day, role)].completion_tokens) if (day, role) in use else 0
            for role in ROLES
        }
        calls = sum(use[(day, role)].calls for role in ROLES if (day, role) in use)
        bars.append({"day": day, "parts": parts, "total": sum(parts.values()), "calls": calls})
    return {
        "report": synapse.budget_report() if synapse is not None else "",
        "bars": bars,
        "top": max([b["total"] for b in bars] + [1]),
        "used": any(b["total"] or b["calls"] for b in bars),
    }
