"""Read-only views of working memory for the REPL, the CLI and Telegram commands."""

from __future__ import annotations

from actors.tools import task_view, topic_view
from storage import trace
from storage.models import Approval, ApprovalItem, Inbox, Memory, Outbox, Task, Topic, Trace
from wilson.redact import redact


def tasks(tz, status: str | None = None) -> list[dict]:
    query = Task.select().order_by(Task.status != "open", Task.due.is_null(), Task.due, Task.id)
    if status:
        query = query.where(Task.status == status)
    return [task_view(t, tz) for t in query]


def topics(tz) -> list[dict]:
    """Each topic with its tasks, dates and history; topics still waiting in a proposal show as proposed."""
    views = []
    for topic in Topic.select().order_by(Topic.id):
        view = topic_view(topic, tz)
        view["tasks"] = [task_view(t, tz) for t in topic.tasks.order_by(Task.due.is_null(), Task.due, Task.id)]
        view["history"] = [f"{topic.created_at.astimezone(tz):%Y-%m-%d} created"] + (
            [f"{topic.closed_at.astimezone(tz):%Y-%m-%d} closed"] if topic.closed_at else [])
        views.append(view)
    pending = (ApprovalItem.select(ApprovalItem, Approval).join(Approval)
               .where((ApprovalItem.tool == "create_topic") & (ApprovalItem.status == "pending")
                      & Approval.status.in_(("pending", "partial"))))
    for item in pending:
        views.append({"id": None, "title": item.args.get("title"), "status": "proposed",
                      "starts": item.args.get("starts"), "ends": item.args.get("ends"),
                      "proposal": item.approval_id, "tasks": [], "history": []})
    return views


def approvals(tz) -> list[dict]:
    rows = []
    for approval in Approval.select().order_by(Approval.id):
        rows.append({"id": approval.id, "status": approval.status,
                     "expires": approval.expires_at.astimezone(tz).isoformat(timespec="minutes"),
                     "supersedes": approval.supersedes, "superseded_by": approval.superseded_by,
                     "items": [{"position": i.position, "tool": i.tool, "status": i.status,
                                "description": i.description}
                               for i in approval.items.order_by(ApprovalItem.position)]})
    return rows


def inbox(tz) -> list[dict]:
    return [{"id": r.id, "priority": r.priority, "kind": r.kind, "origin": r.origin, "status": r.status,
             "trace": r.trace_id, "text": r.text[:80]}
            for r in Inbox.select().order_by(Inbox.id.desc()).limit(30)]


def outbox(tz) -> list[dict]:
    return [{"id": r.id, "channel": r.channel, "status": r.status, "trace": r.trace_id, "text": r.text[:80]}
            for r in Outbox.select().order_by(Outbox.id.desc()).limit(30)]


def memories(tz) -> list[dict]:
    """What the hippocampus has learned (beliefs and principles first)."""
    order = {"principle": 0, "belief": 1, "interpretation": 2, "calibration": 3, "episode": 4}
    rows = Memory.select().where(Memory.invalidated_at.is_null()).order_by(Memory.strength.desc(), Memory.id)
    items = [{"kind": m.kind, "text": m.text, "strength": m.strength, "provenance": m.provenance} for m in rows]
    return sorted(items, key=lambda m: order.get(m["kind"], 9))[:40]


def trace_steps(trace_id: str) -> list[dict]:
    # rows written before redaction existed may still hold a secret
    return [{"at": r.at.isoformat(), "stage": r.stage, "actor": r.actor, "reason": redact(r.reason)}
            for r in trace.path(trace_id)]


def trace_text(trace_id: str) -> str:
    return trace.format_path(trace_id)


def table(name: str, rows: list[dict]) -> str:
    if not rows:
        return f"(no {name})"
    lines = []
    for row in rows:
        if name == "tasks":
            lines.append(f"#{row['id']:<4} {row['status']:<6} {row['due'] or '—':<12} {row['title']}"
                         + (f"  [{row['topic']}]" if row.get("topic") else ""))
        elif name == "topics":
            span = f"{row['starts'] or ''}–{row['ends'] or ''}"
            ident = f"#{row['id']}" if row["id"] else f"(proposal {row['proposal']})"
            lines.append(f"{ident:<6} {row['status']:<8} {row['title']}  {span}")
            lines += [f"       · {t['status']:<6} {t['due'] or '—':<12} {t['title']}" for t in row["tasks"]]
        elif name == "approvals":
            lines.append(f"#{row['id']:<4} {row['status']:<10} expires {row['expires']}")
            lines += [f"       {i['position']}. [{i['status']}] {i['description']}" for i in row["items"]]
        elif name == "memories":
            lines.append(f"{row['kind']:<14} {row['strength']:>4.1f}  {row['text']}")
        else:
            lines.append("  ".join(str(v) for v in row.values()))
    return "\n".join(lines)


def latest_traces(limit: int = 10) -> list[str]:
    seen, ids = set(), []
    for row in Trace.select(Trace.trace_id).order_by(Trace.id.desc()).limit(500):
        if row.trace_id not in seen:
            seen.add(row.trace_id)
            ids.append(row.trace_id)
        if len(ids) >= limit:
            break
    return ids
