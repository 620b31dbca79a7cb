"""The inbox: work for the cortex, claimed by (priority, id) in one atomic step.

A claim names its owner (process and actor incarnation, see `wilson.kernel.liveness`) and
holds a lease in wall-clock time that the supervisor renews while the owner works.
Only a dead owner's rows or an expired lease are taken over, so a row is never worked
by two live owners; and an owner that lost its claim cannot finish the row
(`LostClaim`), so a late result is refused, not recorded twice. `attempts` counts
runs that raised or hung: a kill is not the row's fault.
"""

from __future__ import annotations

import threading
from datetime import datetime, timedelta

from storage import hot, trace
from storage.db import database, is_postgres, write_lock
from storage.models import Inbox, Trace
from storage.prepared import prepared
from wilson.kernel import faults, liveness
from wilson.kernel.clock import wall_now
from wilson.kernel.redact import redact

MAX_ATTEMPTS = 3
LEASE_SECONDS = 120.0
GAVE_UP = "gave up: the run hung or broke each time"
TAKING_OVER = "taking over from "  # an owner for the moment between a takeover's two statements


class LostClaim(Exception):
    """The row is no longer this owner's: its lease ran out or the owner was replaced as hung."""


def add(
    *,
    source: str,
    text: str,
    priority: int,
    at: datetime,
    trace_id: str | None = None,
    kind: str = "message",
    origin: str = "user",
    payload: dict | None = None,
    user_id: str | None = None,
    reply_channel: str | None = None,
    dedup_key: str | None = None,
) -> Inbox | None:
    """Commit one inbox row; returns None when `dedup_key` was already seen."""
    row = hot.new(
        Inbox,
        trace_id=trace_id or trace.new_trace_id(),
        source=source,
        kind=kind,
        origin=origin,
        priority=priority,
        text=text,
        payload=payload or {},
        user_id=user_id,
        reply_channel=reply_channel,
        dedup_key=dedup_key,
        created_at=at,
    )
    # ON CONFLICT DO NOTHING instead of a savepoint around the insert: one statement, and the
    # caller's transaction is never rolled back to a savepoint for a duplicate
    return row if hot.insert(Inbox, row, skip_duplicate=True) is not None else None


def claimable(now_wall: datetime):
    """Pending rows, and claimed rows whose lease ran out (their owner stopped renewing it)."""
    return (Inbox.status == "pending") | ((Inbox.status == "claimed") & (Inbox.lease_until < now_wall))


def claim_next(
    at: datetime,
    lane: str = "any",
    min_priority: int = 0,
    max_priority: int = 99,
    owner: str | None = None,
    lease_seconds: float = LEASE_SECONDS,
) -> Inbox | None:
    """Claim the most urgent claimable row in the priority range for `owner`, or None.

    One `UPDATE … RETURNING` picks and claims the row: nothing can come between the look and
    the claim (SQLite's write lock, PostgreSQL's row lock with SKIP LOCKED), and a look that
    finds nothing, as every drain ends with, is that one statement. The claim's trace is a
    second statement (held for the run's transaction inside `trace.held()`): a crash before it is
    written leaves a claimed row without its "claimed" line, which `recover` writes from the row
    when it takes the row back."""
    now_wall = wall_now()
    owner = owner or f"{liveness.PROCESS}/{lane}"
    lease_until = now_wall + timedelta(seconds=lease_seconds)
    # the claim and its trace take the write lock once: the realtime lane claims with every message
    with write_lock():
        found = hot.execute(
            ("claim", is_postgres()),
            _claim_sql,
            [
                Inbox.claimed_at.db_value(at),
                lane,
                TAKING_OVER,
                owner,
                Inbox.lease_until.db_value(lease_until),
                Inbox.lease_until.db_value(now_wall),
                min_priority,
                max_priority,
                Inbox.lease_until.db_value(now_wall),
            ],
        ).rows
        if not found:
            return None
        row = hot.instance(Inbox, found[0])
        taken_from = None
        if row.owner != owner:
            # a row whose lease ran out: the claim marked it "taking over from <old owner>" (its lease is
            # fresh, so nobody else takes it, and the old owner can no longer finish it); now it is ours
            taken_from = row.owner[len(TAKING_OVER) :]
            Inbox.update(owner=owner).where((Inbox.id == row.id) & (Inbox.owner == row.owner)).execute()
            row.owner = owner
        faults.point("inbox:after-claim")  # claimed, its trace not yet written
        # a takeover's line is written now: the old owner it names is in no column
        trace.record(
            row.trace_id,
            "claimed",
            lane,
            claim_reason(row) + (f", taken over from {taken_from} whose lease ran out" if taken_from else ""),
            at,
            hold=not taken_from,
        )
    return row


def claim_reason(row: Inbox) -> str:
    return f"inbox {row.id} priority {row.priority} ({row.kind})"


def _claim_sql() -> str:
    # IN first: the (status, priority, id) index then finds the few pending and claimed rows, where
    # the OR alone made SQLite merge two index scans
    claimable_sql = "\"status\" IN ('pending', 'claimed') AND (\"status\" = 'pending' OR \"lease_until\" < ?)"
    lock = " FOR UPDATE SKIP LOCKED" if is_postgres() else ""
    return (
        'UPDATE "inbox" SET "status" = \'claimed\', "claimed_at" = ?, "lane" = ?, '
        '"owner" = CASE WHEN "status" = \'claimed\' THEN ? || COALESCE("owner", \'\') ELSE ? END, "lease_until" = ? '
        f'WHERE "id" = (SELECT "id" FROM "inbox" WHERE {claimable_sql} AND "priority" >= ? AND "priority" <= ? '
        f'ORDER BY "priority", "id" LIMIT 1{lock}) AND {claimable_sql} '
        f"RETURNING {hot.column_list(Inbox)}"
    )


def owned(row_id: int, owner: str | None):
    """The condition for an update only the row's current owner may make (any claim when owner is None)."""
    condition = Inbox.id == row_id
    if owner is not None:
        condition &= (Inbox.owner == owner) & (Inbox.status == "claimed")
    return condition


def finish(row_id: int, at: datetime, owner: str | None = None) -> None:
    """Mark the row done; inside the run's transaction, so a `LostClaim` undoes everything it recorded."""
    # a statement every stimulus runs: built once (storage/hot.py); the owner's condition is owned()'s
    if owner is None:
        Inbox.update(status="done", done_at=at, lease_until=None).where(owned(row_id, owner)).execute()
        return
    if not database.in_transaction():
        if not hot.execute("finish", lambda: _FINISH_SQL, [Inbox.done_at.db_value(at), row_id, owner]).rowcount:
            raise LostClaim(f"inbox {row_id} is no longer held by {owner}")
        return
    # inside the run's write transaction nothing can be added before it commits; whatever is added
    # after is followed by its own nudge: a drain that looks here needs no claim that finds nothing.
    # The look rides on the finish: PostgreSQL's RETURNING sees the table as it was before the
    # UPDATE, SQLite's as it is after, so the finished row itself is left out by its id
    found = hot.execute(
        "finish, next claimable",
        lambda: (
            f'{_FINISH_SQL} RETURNING (SELECT min("priority") FROM "inbox" WHERE "status" IN (\'pending\', '
            '\'claimed\') AND ("status" = \'pending\' OR "lease_until" < ?) AND "id" <> ?)'
        ),
        [Inbox.done_at.db_value(at), row_id, owner, Inbox.lease_until.db_value(wall_now()), row_id],
    ).rows
    if not found:
        raise LostClaim(f"inbox {row_id} is no longer held by {owner}")
    _finished.row_id, _finished.next_priority = row_id, found[0][0]


_FINISH_SQL = (
    'UPDATE "inbox" SET "status" = \'done\', "done_at" = ?, "lease_until" = NULL '
    'WHERE "id" = ? AND "owner" = ? AND "status" = \'claimed\''
)


_finished = threading.local()  # the row this thread finished last, and the most urgent claimable priority then


def more_after(row_id: int, max_priority: int) -> bool:
    """Whether a claim of a lane whose priorities end at `max_priority` may find work once `row_id` was
    finished by this thread (in the run's transaction, see finish); True when that is not known."""
    if getattr(_finished, "row_id", None) != row_id:
        return True
    nearest = _finished.next_priority
    _finished.row_id = None
    # the most urgent claimable priority: above the range, nothing in it; below it (another lane's row), the
    # range's own may hide behind it, so claim and see
    return nearest is not None and nearest <= max_priority


def fail_or_retry(row_id: int, at: datetime, error: str, owner: str | None = None) -> str:
    """After a run that raised: back to pending, or failed for good after MAX_ATTEMPTS; "lost" when
    the row is no longer this owner's to judge."""
    # the run's transaction that finished the row (and looked for more) may have been rolled back by its
    # own commit failing: what that look said is void, or the drain would wait for a nudge instead of
    # claiming this row again
    if getattr(_finished, "row_id", None) == row_id:
        _finished.row_id = None
    with database.atomic():
        row = Inbox.get_by_id(row_id)
        if owner is not None and (row.owner != owner or row.status != "claimed"):
            return "lost"
        status = "failed" if row.attempts + 1 >= MAX_ATTEMPTS else "pending"
        # the owner is checked again by the write itself: on PostgreSQL the row may have been
        # released and claimed by another worker since it was read
        changed = (
            Inbox.update(
                status=status,
                error=redact(error)[:2000],
                attempts=Inbox.attempts + 1,
                lease_until=None,
                done_at=at if status == "failed" else None,
            )
            .where(owned(row_id, owner))
            .execute()
        )
    return status if changed else "lost"


def release_owner(owner: str) -> int:
    """A hung owner was replaced: its rows go back (the hang counts as an attempt), or are given up."""
    mine = (Inbox.owner == owner) & (Inbox.status == "claimed")
    with database.atomic():
        Inbox.update(status="failed", error=GAVE_UP, lease_until=None, attempts=Inbox.attempts + 1).where(
            mine & (Inbox.attempts + 1 >= MAX_ATTEMPTS)
        ).execute()
        return (
            Inbox.update(status="pending", claimed_at=None, lease_until=None, attempts=Inbox.attempts + 1)
            .where(mine)
            .execute()
        )


CLAIM_OWNERS = prepared(lambda s: Inbox.select(Inbox.owner).where(Inbox.status == "claimed").distinct())


def recover(at: datetime) -> int:
    """On start: rows claimed by a process that is gone, or whose lease ran out, go back to pending.

    A live owner's rows stay where they are, in this process or another one; a kill is not
    counted against the row. Each row taken back is traced, so a run's trace says why it ran twice."""
    owners = [owner for (owner,) in CLAIM_OWNERS.rows()]
    dead = [o for o in owners if o is None or liveness.owner_alive(o) is False]
    stale = (Inbox.status == "claimed") & (
        (Inbox.lease_until < wall_now()) | Inbox.lease_until.is_null() | Inbox.owner.in_(dead or [""])
    )
    released = 0
    with database.atomic():
        for row in Inbox.select(
            Inbox.id, Inbox.trace_id, Inbox.owner, Inbox.lane, Inbox.priority, Inbox.kind, Inbox.claimed_at
        ).where(stale):
            why = "which is gone" if row.owner in dead else "whose lease ran out"
            if (
                row.claimed_at is not None
                and not Trace.select()
                .where((Trace.trace_id == row.trace_id) & (Trace.stage == "claimed") & (Trace.at == row.claimed_at))
                .exists()
            ):
                # the run died before its claim's line was written (it waits for the run's results)
                trace.record(row.trace_id, "claimed", row.lane or "inbox", claim_reason(row), row.claimed_at)
            released += (
                Inbox.update(status="pending", claimed_at=None, lease_until=None)
                .where((Inbox.id == row.id) & stale)
                .execute()
            )
            trace.record(
                row.trace_id,
                "released",
                "inbox",
                f"inbox {row.id} taken over from {row.owner}, {why}",
                at or wall_now(),
            )
    return released


def renew(owners: list[str], lease_seconds: float = LEASE_SECONDS) -> int:
    """The supervisor vouches for these owners: their claims last another lease."""
    until = wall_now() + timedelta(seconds=lease_seconds)
    return Inbox.update(lease_until=until).where((Inbox.status == "claimed") & Inbox.owner.in_(owners)).execute()


GIVEN_UP = prepared(
    lambda s: Inbox.select().where((Inbox.status == "failed") & (Inbox.error == GAVE_UP) & (Inbox.lane == s.lane))
)


def given_up(lane: str) -> list[Inbox]:
    """Rows `release_owner` gave up on and nobody has told the user about yet."""
    return GIVEN_UP.models(lane=lane)


def mark_reported(row_id: int) -> None:
    Inbox.update(error=GAVE_UP + " (reported)").where(Inbox.id == row_id).execute()


def pending_count() -> int:
    return Inbox.select().where(Inbox.status.in_(("pending", "claimed"))).count()


def defer(row_id: int, error: str, owner: str | None = None) -> None:
    """Park a background row whose model call failed; the next daily sync retries it."""
    Inbox.update(status="deferred", error=redact(error)[:2000], lease_until=None).where(owned(row_id, owner)).execute()


# Kept messages. A user's message the model could not answer is told "I'll keep your message" and kept;
# the oldest is tried again every KEPT_RETRY (the model's own probe interval, wilson/model/synapse.py),
# or as soon as the user writes again; when it is answered, all the others follow, oldest first.
KEPT_RETRY = timedelta(minutes=5)


def keep(row_id: int, at: datetime, error: str, owner: str | None = None) -> None:
    """Inside the run's transaction: the row waits for the model (its `claimed_at` says since when)."""
    Inbox.update(status="kept", error=redact(error)[:2000], lease_until=None, claimed_at=at).where(
        owned(row_id, owner)
    ).execute()


def kept_due() -> datetime | None:
    """When the oldest kept message is tried again (None when none is kept)."""
    oldest = Inbox.select(Inbox.claimed_at).where(Inbox.status == "kept").order_by(Inbox.id).first()
    if oldest is None:
        return None
    return (oldest.claimed_at or wall_now()) + KEPT_RETRY


def release_kept(*, oldest_only: bool, while_user_waits: bool = False) -> int:
    """Kept messages back to pending: the oldest alone (a try of the model), or all of them because the model
    just answered another message (each is marked so: if it fails now, it fails on its own). `while_user_waits`:
    only while a message of the user's is pending (the user wrote again), asked in the same statement."""
    # twice a user's message, and nearly always finding nothing: one statement, built once (storage/hot.py)
    found = hot.execute(("kept", oldest_only, while_user_waits), lambda: _kept_sql(oldest_only, while_user_waits)).rows
    if not found:
        return 0  # the usual case: no transaction (and no wait for the write lock)
    released = 0
    with database.atomic():
        for row_id, stored in found:
            payload = dict(Inbox.payload.python_value(stored) or {})
            if not oldest_only:
                payload["kept_after_answer"] = True
            released += (
                Inbox.update(status="pending", payload=payload)
                .where((Inbox.id == row_id) & (Inbox.status == "kept"))
                .execute()
            )
    return released


def _kept_sql(oldest_only: bool, while_user_waits: bool) -> str:
    waits = (
        ' AND EXISTS (SELECT 1 FROM "inbox" WHERE "status" = \'pending\' AND "origin" = \'user\')'
        if while_user_waits
        else ""
    )
    return f'SELECT "id", "payload" FROM "inbox" WHERE "status" = \'kept\'{waits} ORDER BY "id"' + (
        " LIMIT 1" if oldest_only else ""
    )


def retry_deferred() -> int:
    return Inbox.update(status="pending").where(Inbox.status == "deferred").execute()
