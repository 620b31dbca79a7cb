"""The thalamus' routing rules as commits: a realtime stimulus becomes an inbox row at priority 0, a
buffered one a receptor_buffers row, each with its "routed" trace in the same transaction.

They live in storage, not in actors/thalamus.py, because receptors call them on their own threads
(Telegram's loop, a calendar sync) before any actor is told: a channel commits, then tells the
thalamus the row's id. Returning None means the dedup key was seen before: nothing to tell.
"""

from __future__ import annotations

from datetime import datetime

from storage import buffers, inbox, trace
from storage.db import database

REALTIME_PRIORITY = 0


def commit_realtime(*, source: str, text: str, user_id: str | None, at: datetime, dedup_key: str | None = None,
                    payload: dict | None = None, kind: str = "message"):
    """The inbox row and its "routed" trace, in one transaction; None when `dedup_key` was already seen."""
    with database.atomic():
        row = inbox.add(source=source, text=text, priority=REALTIME_PRIORITY, at=at, kind=kind, origin="user",
                        payload=payload, user_id=user_id, reply_channel=source, dedup_key=dedup_key)
        if row is not None:
            trace.record(row.trace_id, "routed", "thalamus", f"inbox priority {REALTIME_PRIORITY} from {source}", at)
    return row


def commit_buffered(*, channel: str, text: str, dedup_key: str, at: datetime, payload: dict | None = None):
    """The buffer row and its "routed" trace, in one transaction; None when `dedup_key` was already seen."""
    with database.atomic():
        row = buffers.add(channel=channel, text=text, dedup_key=dedup_key, at=at, payload=payload)
        if row is not None:
            trace.record(row.trace_id, "routed", "thalamus", f"buffered (row {row.id}) until the next sync", at)
    return row
