"""The outbox: what Wilson says, delivered exactly once by the channel it names."""

from __future__ import annotations

from datetime import datetime

import peewee

from storage.db import database
from storage.models import Outbox


def add(*, channel: str, text: str, trace_id: str, key: str, at: datetime, payload: dict | None = None,
        surfaced: bool = True, deliver_after: datetime | None = None) -> Outbox:
    """Commit one outbox row; the same idempotency key returns the existing row."""
    try:
        with database.atomic():
            return Outbox.create(channel=channel, text=text, trace_id=trace_id, idempotency_key=key,
                                 created_at=at, payload=payload or {}, surfaced=surfaced,
                                 status="held" if deliver_after else "pending", deliver_after=deliver_after)
    except peewee.IntegrityError:
        return Outbox.get(Outbox.idempotency_key == key)


def mark_delivered(outbox_id: int, at: datetime, result: dict | None = None) -> bool:
    """Record the delivery; False when it had already been delivered (nothing is sent twice).

    One UPDATE, atomic by itself; a caller that records more about the delivery (its trace)
    wraps both in one transaction."""
    changed = Outbox.update(status="delivered", delivered_at=at, result=result).where(
        (Outbox.id == outbox_id) & (Outbox.status == "pending")).execute()
    return bool(changed)


def mark_failed(outbox_id: int, at: datetime, error: str) -> None:
    Outbox.update(status="failed", result={"error": error[:2000]}, delivered_at=at).where(
        Outbox.id == outbox_id).execute()


def pending_for(channel: str) -> list[Outbox]:
    return list(Outbox.select().where((Outbox.channel == channel) & (Outbox.status == "pending")).order_by(Outbox.id))


def release_held(at: datetime) -> list[Outbox]:
    """Quiet hours are over for these: make them deliverable."""
    rows = list(Outbox.select().where((Outbox.status == "held") & (Outbox.deliver_after <= at)).order_by(Outbox.id))
    if rows:
        Outbox.update(status="pending").where(Outbox.id.in_([r.id for r in rows])).execute()
    return rows


def pending_count() -> int:
    return Outbox.select().where(Outbox.status == "pending").count()
