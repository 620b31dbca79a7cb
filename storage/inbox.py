"""The inbox: work for the cortex, claimed by (priority, id) in one atomic step."""

from __future__ import annotations

from datetime import datetime

import peewee

from storage import trace
from storage.db import claim_transaction, database, skip_locked
from storage.models import Inbox

MAX_ATTEMPTS = 3
GAVE_UP = "gave up after the worker died on it each time"


def add(*, source: str, text: str, priority: int, at: datetime, trace_id: str | None = None,
        kind: str = "message", origin: str = "user", payload: dict | None = None,
        user_id: str | None = None, reply_channel: str | None = None,
        dedup_key: str | None = None) -> Inbox | None:
    """Commit one inbox row; returns None when `dedup_key` was already seen."""
    trace_id = trace_id or trace.new_trace_id()
    try:
        with database.atomic():
            row = Inbox.create(
                trace_id=trace_id, source=source, kind=kind, origin=origin, priority=priority,
                text=text, payload=payload or {}, user_id=user_id, reply_channel=reply_channel,
                dedup_key=dedup_key, created_at=at,
            )
    except peewee.IntegrityError:
        return None
    return row


def claim_next(at: datetime, lane: str = "any", min_priority: int = 0, max_priority: int = 99) -> Inbox | None:
    """Claim the most urgent pending row in the priority range, or None.

    The claim and its trace ("claimed" by `lane`) commit together. When a plain read finds
    nothing pending, no write lock is taken: a worker that drains until empty ends every
    drain with such a look, and it must not make a user's message wait for the lock."""
    wanted = (Inbox.status == "pending") & (Inbox.priority >= min_priority) & (Inbox.priority <= max_priority)
    if not Inbox.select(Inbox.id).where(wanted).exists():
        return None
    with claim_transaction():
        row = skip_locked(Inbox.select().where(wanted).order_by(Inbox.priority, Inbox.id).limit(1)).first()
        if row is None:
            return None
        Inbox.update(status="claimed", claimed_at=at, lane=lane, attempts=Inbox.attempts + 1).where(
            (Inbox.id == row.id) & (Inbox.status == "pending")).execute()
        trace.record(row.trace_id, "claimed", lane, f"inbox {row.id} priority {row.priority} ({row.kind})", at)
    # the write lock was held from the read on, so the row is now exactly this
    row.status, row.claimed_at, row.lane, row.attempts = "claimed", at, lane, row.attempts + 1
    return row


def finish(row_id: int, at: datetime) -> None:
    Inbox.update(status="done", done_at=at).where(Inbox.id == row_id).execute()


def fail_or_retry(row_id: int, at: datetime, error: str) -> str:
    """After a failed run: back to pending, or failed for good after MAX_ATTEMPTS."""
    row = Inbox.get_by_id(row_id)
    status = "failed" if row.attempts >= MAX_ATTEMPTS else "pending"
    Inbox.update(status=status, error=error[:2000], done_at=at if status == "failed" else None).where(
        Inbox.id == row_id).execute()
    return status


def release_claimed(lane: str | None = None) -> int:
    """On start: rows a dead worker had claimed go back to pending.

    A row that was already claimed MAX_ATTEMPTS times is what killed the worker each time; it is
    marked failed instead (see `given_up`), so one poisonous row cannot keep an actor in a restart loop."""
    claimed = Inbox.status == "claimed"
    if lane is not None:
        claimed &= Inbox.lane == lane
    with database.atomic():
        Inbox.update(status="failed", error=GAVE_UP).where(claimed & (Inbox.attempts >= MAX_ATTEMPTS)).execute()
        return Inbox.update(status="pending", claimed_at=None).where(claimed).execute()


def given_up(lane: str) -> list[Inbox]:
    """Rows `release_claimed` gave up on and nobody has told the user about yet."""
    return list(Inbox.select().where((Inbox.status == "failed") & (Inbox.error == GAVE_UP) & (Inbox.lane == lane)))


def mark_reported(row_id: int) -> None:
    Inbox.update(error=GAVE_UP + " (reported)").where(Inbox.id == row_id).execute()


def pending_count() -> int:
    return Inbox.select().where(Inbox.status.in_(("pending", "claimed"))).count()


def defer(row_id: int, error: str) -> None:
    """Park a background row whose model call failed; the next daily sync retries it."""
    Inbox.update(status="deferred", error=error[:2000]).where(Inbox.id == row_id).execute()


def retry_deferred() -> int:
    return Inbox.update(status="pending").where(Inbox.status == "deferred").execute()
