"""The thalamus' routing rules as commits: a realtime stimulus becomes an inbox row at priority 0 (the
row is its own "routed" line, see storage/trace.py path), a buffered one a receptor_buffers row with its
"routed" trace in the same transaction.

They live in storage, not in actors/thalamus.py, because receptors call them on their own threads
(Telegram's loop, a calendar sync) before any actor is told: a channel commits, then tells the
thalamus the row's id. Returning None means the dedup key was seen before: nothing to tell.
"""

from __future__ import annotations

from datetime import datetime

from loguru import logger

from storage import buffers, inbox, trace
from storage.db import database
from wilson.kernel import lanes

REALTIME_PRIORITY = 0


def commit_realtime(
    *,
    source: str,
    text: str,
    user_id: str | None,
    at: datetime,
    dedup_key: str | None = None,
    payload: dict | None = None,
    kind: str = "message",
):
    """The inbox row, one statement; None when `dedup_key` was already seen. The row is its own "routed"
    line (when, from where, at which priority): `storage.trace.path` shows it, so none is written."""
    lanes.arrived()  # from here until the realtime lane takes it up, background loops give way
    row = inbox.add(
        source=source,
        text=text,
        priority=REALTIME_PRIORITY,
        at=at,
        kind=kind,
        origin="user",
        payload=payload,
        user_id=user_id,
        reply_channel=source,
        dedup_key=dedup_key,
    )
    if row is not None:
        logger.info("[{}] routed by thalamus: inbox priority {} from {}", row.trace_id, REALTIME_PRIORITY, source)
    return row


def commit_buffered(*, channel: str, text: str, dedup_key: str, at: datetime, payload: dict | None = None):
    """The buffer row and its "routed" trace, in one transaction; None when `dedup_key` was already seen."""
    with database.atomic():
        row = buffers.add(channel=channel, text=text, dedup_key=dedup_key, at=at, payload=payload)
        if row is not None:
            trace.record(row.trace_id, "routed", "thalamus", f"buffered (row {row.id}) until the next sync", at)
    return row
