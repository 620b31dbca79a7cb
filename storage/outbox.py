"""The outbox: what Wilson says, delivered by the channel it names, never given up.

Statuses: `pending` (to be sent now, or being sent), `retry` (a send failed for a reason
that passes, such as an outage; the channel tries again from `next_attempt_at`, and rows
queued behind it wait there too), `held` (quiet hours, until `deliver_after`),
`delivered`, and `failed` (only for what no retry can fix: Telegram says the chat does
not exist, the user blocked the bot, nobody to send to).

An attempt is committed before the API call (`start_attempt`: `sending_at`, attempts+1)
and its result after it (`mark_delivered`, `mark_retry`), so a row whose `sending_at` is
set while it is not delivered is one whose attempt was cut short by the process dying:
Telegram may or may not have shown it.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from datetime import datetime

from storage import hot
from storage.db import database
from storage.models import Outbox
from storage.prepared import prepared

DUE = ("pending", "retry")


def add(
    *,
    channel: str,
    text: str,
    trace_id: str,
    key: str,
    at: datetime,
    payload: dict | None = None,
    surfaced: bool = True,
    deliver_after: datetime | None = None,
) -> Outbox:
    """Commit one outbox row; the same idempotency key returns the existing row."""
    row = hot.new(
        Outbox,
        channel=channel,
        text=text,
        trace_id=trace_id,
        idempotency_key=key,
        created_at=at,
        payload=payload or {},
        surfaced=surfaced,
        status="held" if deliver_after else "pending",
        deliver_after=deliver_after,
    )
    # ON CONFLICT DO NOTHING instead of a savepoint: one statement for every reply
    if hot.insert(Outbox, row, skip_duplicate=True) is None:
        return Outbox.get(Outbox.idempotency_key == key)
    made = getattr(_written, "rows", None)
    if made is not None:
        made[row.id] = row
    return row


_written = threading.local()  # rows: what this thread's open `written()` block added, by id


@contextmanager
def written():
    """Inside: the rows this thread adds are kept, for `added(id)` to hand to the channel after the commit
    (so it need not read them again). A fresh block per run: a row of a rolled-back run is never handed on."""
    previous = getattr(_written, "rows", None)
    _written.rows = {}
    try:
        yield
    finally:
        _written.rows = previous


def added(outbox_id: int) -> Outbox | None:
    """The row this thread added with this id inside the open `written()` block, as it was inserted."""
    made = getattr(_written, "rows", None)
    return made.get(outbox_id) if made is not None else None


def get(outbox_id: int) -> Outbox | None:
    """The row a channel was told to deliver (a statement every delivery runs: built once)."""
    return hot.by_id(Outbox, outbox_id)


def mark_delivered(outbox_id: int, at: datetime, result: dict | None = None) -> bool:
    """Record the delivery; False when it had already been delivered (nothing is sent twice).

    One UPDATE, atomic by itself; a caller that records more about the delivery (its trace)
    wraps both in one transaction."""
    changed = hot.execute(
        "mark_delivered",
        lambda: (
            'UPDATE "outbox" SET "status" = \'delivered\', "delivered_at" = ?, "result" = ? '
            'WHERE "id" = ? AND "status" = \'pending\''
        ),
        [Outbox.delivered_at.db_value(at), Outbox.result.db_value(result), outbox_id],
    ).rowcount
    return bool(changed)


def mark_failed(outbox_id: int, at: datetime, error: str) -> None:
    Outbox.update(status="failed", result={"error": error[:2000]}, delivered_at=at, sending_at=None).where(
        Outbox.id == outbox_id
    ).execute()


def start_attempt(outbox_id: int, at: datetime) -> bool:
    """Commit that a send is about to start (before the API call); False when the row is no longer due."""
    with database.atomic():
        changed = (
            Outbox.update(status="pending", sending_at=at, attempts=Outbox.attempts + 1)
            .where((Outbox.id == outbox_id) & Outbox.status.in_(DUE))
            .execute()
        )
    return bool(changed)


def record_progress(outbox_id: int, partial: dict, at: datetime) -> None:
    """Part of a long text was shown (`partial`: where, and the message ids so far); the next part's
    send starts now. A retry goes on from there instead of showing the first part again."""
    with database.atomic():
        Outbox.update(result={"partial": partial}, sending_at=at).where(Outbox.id == outbox_id).execute()


def mark_handing(outbox_id: int, at: datetime) -> None:
    """The last step of a send that cannot be taken back is about to begin (email: the line that ends
    the mail): an attempt cut short after this may have reached its recipient, one cut short before
    it surely did not."""
    with database.atomic():
        row = Outbox.get_or_none(Outbox.id == outbox_id)
        if row is not None:
            Outbox.update(result={**(row.result or {}), "handing_at": at.isoformat()}).where(
                (Outbox.id == outbox_id) & (Outbox.status == "pending")
            ).execute()


def handing(row: Outbox) -> bool:
    return bool((row.result or {}).get("handing_at"))


def partial(row: Outbox) -> dict:
    return dict((row.result or {}).get("partial") or {})


def mark_retry(outbox_id: int, next_at: datetime, error: str) -> None:
    """The attempt failed for a reason that passes: try again from `next_at`, keeping what was shown."""
    row = Outbox.get_or_none(Outbox.id == outbox_id)
    if row is None:
        return
    result = {"error": error[:2000]}
    if partial(row):
        result["partial"] = partial(row)
    Outbox.update(status="retry", next_attempt_at=next_at, sending_at=None, result=result).where(
        (Outbox.id == outbox_id) & Outbox.status.in_(DUE)
    ).execute()


def next_due(channel: str) -> Outbox | None:
    """The oldest row the channel still owes the user (pending or waiting for a retry)."""
    return Outbox.select().where((Outbox.channel == channel) & Outbox.status.in_(DUE)).order_by(Outbox.id).first()


def wait_behind(channel: str, next_at: datetime | None) -> int:
    """While the oldest row waits for its retry, the newer ones wait with it (they are not being sent)."""
    return (
        Outbox.update(status="retry", next_attempt_at=next_at)
        .where((Outbox.channel == channel) & (Outbox.status == "pending"))
        .execute()
    )


PENDING_FOR = prepared(
    lambda s: Outbox.select().where((Outbox.channel == s.channel) & (Outbox.status == "pending")).order_by(Outbox.id)
)


DUE_ON = prepared(
    lambda s: Outbox.select(Outbox.id).where((Outbox.channel == s.channel) & Outbox.status.in_(DUE)).order_by(Outbox.id)
)


def due_ids(channel: str) -> list[int]:
    """The ids of the channel's rows still to deliver (new or waiting for a retry), oldest first."""
    return [outbox_id for (outbox_id,) in DUE_ON.rows(channel=channel)]


def pending_for(channel: str) -> list[Outbox]:
    return PENDING_FOR.models(channel=channel)


def release_held(at: datetime) -> list[Outbox]:
    """Quiet hours are over for these: make them deliverable."""
    rows = list(Outbox.select().where((Outbox.status == "held") & (Outbox.deliver_after <= at)).order_by(Outbox.id))
    if rows:
        Outbox.update(status="pending").where(Outbox.id.in_([r.id for r in rows])).execute()
    return rows


def pending_count() -> int:
    return Outbox.select().where(Outbox.status == "pending").count()
