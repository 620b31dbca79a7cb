"""Decisions as rows: a user's approve / modify / reject is committed before the gate is told.

A channel calls `record()` inside the transaction that acknowledges the user's input (on
Telegram, the one that advances the update offset), then tells the gate
`DecisionRecorded(id)`. The gate applies a row once (`claim()` moves it out of pending in
the transaction that applies it) and, on start, applies whatever is still pending, so a
press made while the gate restarts or the process dies is never lost.
"""

from __future__ import annotations

from datetime import datetime

from storage.models import DecisionRow
from storage.prepared import prepared


def record(
    *,
    approval_id: int,
    action: str,
    user_id: str,
    channel: str,
    at: datetime,
    text: str = "",
    items: tuple[int, ...] = (),
    nonce: str | None = None,
) -> DecisionRow:
    return DecisionRow.create(
        approval_id=approval_id,
        action=action,
        user_id=str(user_id),
        channel=channel,
        text=text,
        items=list(items),
        nonce=nonce,
        created_at=at,
    )


PENDING = prepared(lambda s: DecisionRow.select().where(DecisionRow.status == "pending").order_by(DecisionRow.id))


def pending() -> list[DecisionRow]:
    return PENDING.models()


def claim(decision_id: int, at: datetime) -> bool:
    """Inside the gate's transaction: True for the one caller that takes this decision."""
    return bool(
        DecisionRow.update(status="applied", applied_at=at)
        .where((DecisionRow.id == decision_id) & (DecisionRow.status == "pending"))
        .execute()
    )
