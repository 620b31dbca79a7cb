"""The inbox: work for the cortex, claimed by (priority, id) in one atomic step.

A claim names its owner (process and actor incarnation, see `wilson.liveness`) and
holds a lease in wall-clock time that the supervisor renews while the owner works.
Only a dead owner's rows or an expired lease are taken over, so a row is never worked
by two live owners; and an owner that lost its claim cannot finish the row
(`LostClaim`), so a late result is refused, not recorded twice. `attempts` counts
runs that raised or hung: a kill is not the row's fault.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import peewee

from storage import trace
from storage.db import claim_transaction, database, skip_locked
from storage.models import Inbox
from wilson import liveness
from wilson.clock import wall_now
from wilson.redact import redact

MAX_ATTEMPTS = 3
LEASE_SECONDS = 120.0
GAVE_UP = "gave up: the run hung or broke each time"


class LostClaim(Exception):
    """The row is no longer this owner's: its lease ran out or the owner was replaced as hung."""


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


def claimable(now_wall: datetime):
    """Pending rows, and claimed rows whose lease ran out (their owner stopped renewing it)."""
    return (Inbox.status == "pending") | ((Inbox.status == "claimed") & (Inbox.lease_until < now_wall))


def claim_next(at: datetime, lane: str = "any", min_priority: int = 0, max_priority: int = 99,
               owner: str | None = None, lease_seconds: float = LEASE_SECONDS) -> Inbox | None:
    """Claim the most urgent claimable row in the priority range for `owner`, or None.

    The claim and its trace ("claimed" by `lane`) commit together. When a plain read finds
    nothing claimable, no write lock is taken: a worker that drains until empty ends every
    drain with such a look, and it must not make a user's message wait for the lock."""
    now_wall = wall_now()
    wanted = claimable(now_wall) & (Inbox.priority >= min_priority) & (Inbox.priority <= max_priority)
    if not Inbox.select(Inbox.id).where(wanted).exists():
        return None
    owner = owner or f"{liveness.PROCESS}/{lane}"
    lease_until = now_wall + timedelta(seconds=lease_seconds)
    with claim_transaction():
        row = skip_locked(Inbox.select().where(wanted).order_by(Inbox.priority, Inbox.id).limit(1)).first()
        if row is None:
            return None
        taken_over = row.status == "claimed"
        Inbox.update(status="claimed", claimed_at=at, lane=lane, owner=owner, lease_until=lease_until).where(
            (Inbox.id == row.id) & claimable(now_wall)).execute()
        trace.record(row.trace_id, "claimed", lane, f"inbox {row.id} priority {row.priority} ({row.kind})"
                     + (f", taken over from {row.owner} whose lease ran out" if taken_over else ""), at)
    # the write lock (or the row lock) was held from the read on, so the row is now exactly this
    row.status, row.claimed_at, row.lane, row.owner, row.lease_until = "claimed", at, lane, owner, lease_until
    return row


def owned(row_id: int, owner: str | None):
    """The condition for an update only the row's current owner may make (any claim when owner is None)."""
    condition = Inbox.id == row_id
    if owner is not None:
        condition &= (Inbox.owner == owner) & (Inbox.status == "claimed")
    return condition


def finish(row_id: int, at: datetime, owner: str | None = None) -> None:
    """Mark the row done; inside the run's transaction, so a `LostClaim` undoes everything it recorded."""
    done = Inbox.update(status="done", done_at=at, lease_until=None).where(owned(row_id, owner)).execute()
    if not done and owner is not None:
        raise LostClaim(f"inbox {row_id} is no longer held by {owner}")


def fail_or_retry(row_id: int, at: datetime, error: str, owner: str | None = None) -> str:
    """After a run that raised: back to pending, or failed for good after MAX_ATTEMPTS; "lost" when
    the row is no longer this owner's to judge."""
    with database.atomic():
        row = Inbox.get_by_id(row_id)
        if owner is not None and (row.owner != owner or row.status != "claimed"):
            return "lost"
        status = "failed" if row.attempts + 1 >= MAX_ATTEMPTS else "pending"
        # the owner is checked again by the write itself: on PostgreSQL the row may have been
        # released and claimed by another worker since it was read
        changed = Inbox.update(status=status, error=redact(error)[:2000], attempts=Inbox.attempts + 1,
                               lease_until=None, done_at=at if status == "failed" else None).where(
            owned(row_id, owner)).execute()
    return status if changed else "lost"


def release_owner(owner: str) -> int:
    """A hung owner was replaced: its rows go back (the hang counts as an attempt), or are given up."""
    mine = (Inbox.owner == owner) & (Inbox.status == "claimed")
    with database.atomic():
        Inbox.update(status="failed", error=GAVE_UP, lease_until=None, attempts=Inbox.attempts + 1).where(
            mine & (Inbox.attempts + 1 >= MAX_ATTEMPTS)).execute()
        return Inbox.update(status="pending", claimed_at=None, lease_until=None,
                            attempts=Inbox.attempts + 1).where(mine).execute()


def recover(at: datetime) -> int:
    """On start: rows claimed by a process that is gone, or whose lease ran out, go back to pending.

    A live owner's rows stay where they are, in this process or another one; a kill is not
    counted against the row. Each row taken back is traced, so a run's trace says why it ran twice."""
    owners = [r.owner for r in Inbox.select(Inbox.owner).where(Inbox.status == "claimed").distinct()]
    dead = [o for o in owners if o is None or liveness.owner_alive(o) is False]
    stale = (Inbox.status == "claimed") & ((Inbox.lease_until < wall_now()) | Inbox.lease_until.is_null()
                                           | Inbox.owner.in_(dead or [""]))
    released = 0
    with database.atomic():
        for row in Inbox.select(Inbox.id, Inbox.trace_id, Inbox.owner).where(stale):
            why = "which is gone" if row.owner in dead else "whose lease ran out"
            released += Inbox.update(status="pending", claimed_at=None, lease_until=None).where(
                (Inbox.id == row.id) & stale).execute()
            trace.record(row.trace_id, "released", "inbox", f"inbox {row.id} taken over from {row.owner}, {why}",
                         at or wall_now())
    return released


def renew(owners: list[str], lease_seconds: float = LEASE_SECONDS) -> int:
    """The supervisor vouches for these owners: their claims last another lease."""
    until = wall_now() + timedelta(seconds=lease_seconds)
    return Inbox.update(lease_until=until).where((Inbox.status == "claimed") & Inbox.owner.in_(owners)).execute()


def given_up(lane: str) -> list[Inbox]:
    """Rows `release_claimed` gave up on and nobody has told the user about yet."""
    return list(Inbox.select().where((Inbox.status == "failed") & (Inbox.error == GAVE_UP) & (Inbox.lane == lane)))


def mark_reported(row_id: int) -> None:
    Inbox.update(error=GAVE_UP + " (reported)").where(Inbox.id == row_id).execute()


def pending_count() -> int:
    return Inbox.select().where(Inbox.status.in_(("pending", "claimed"))).count()


def defer(row_id: int, error: str, owner: str | None = None) -> None:
    """Park a background row whose model call failed; the next daily sync retries it."""
    Inbox.update(status="deferred", error=redact(error)[:2000], lease_until=None).where(owned(row_id, owner)).execute()


def retry_deferred() -> int:
    return Inbox.update(status="pending").where(Inbox.status == "deferred").execute()
