"""The REPL channel: the user at a terminal (or a script on standard input).

Realtime like Telegram: what the user types becomes an inbox row at priority 0.
Deliveries are handed to a printer callback, which prints text or JSON lines.
"""

from __future__ import annotations

from channels.base import Channel
from storage.models import Outbox, Topic


def delivery_record(row: Outbox, at) -> dict:
    """The `--json` shape of one delivery to the user."""
    payload = row.payload or {}
    approval = payload.get("approval")
    topic = None
    if payload.get("topic_id"):
        found = Topic.get_or_none(Topic.id == payload["topic_id"])
        topic = found.title if found else None
    return {
        "type": "delivery",
        "channel": row.channel,
        "text": row.text,
        "topic": topic,
        "approval": {"id": approval["id"], "actions": approval["actions"], "items": len(approval.get("items") or [])}
        if approval
        else None,
        "proposals": list(payload.get("proposals") or []),  # a briefing offers these for a decision
        "undo": (payload.get("undo") or {}).get("id") if isinstance(payload.get("undo"), dict) else None,
        "tasks": [t for t in payload.get("tasks") or [] if isinstance(t, int)],  # a follow-up's one-tap answers
        "at": at.isoformat(),
    }


class ReplChannel(Channel):
    name = "repl"
    realtime = True
    can_deliver = True
    delivery_line_in_row = True
    takes_rows = True

    def __init__(self, ctx, name: str | None = None, printer=None):
        super().__init__(ctx, name)
        self.printer = printer

    def send(self, row: Outbox) -> dict:
        record = delivery_record(row, self.now())
        if self.printer is not None:
            self.printer(record)
        return {"printed": True}
