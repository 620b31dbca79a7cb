"""Receptor buffers: buffered input waiting for the thalamus' next sync."""

from __future__ import annotations

from datetime import datetime

from storage import hot, trace
from storage.db import database
from storage.models import ReceptorBuffer
from storage.prepared import prepared

SNIPPET_CHARS = 280


def add(
    *, channel: str, text: str, dedup_key: str, at: datetime, payload: dict | None = None, trace_id: str | None = None
) -> ReceptorBuffer | None:
    """Commit one buffer row; None when this natural key was already buffered."""
    row = ReceptorBuffer(
        trace_id=trace_id or trace.new_trace_id(),
        channel=channel,
        dedup_key=dedup_key,
        text=text,
        snippet=text[:SNIPPET_CHARS],
        payload=payload or {},
        created_at=at,
    )
    # ON CONFLICT DO NOTHING instead of a savepoint: a poll that finds the same mail again costs one statement
    return row if hot.insert(ReceptorBuffer, row, skip_duplicate=True) is not None else None


UNPROCESSED = prepared(
    lambda s: ReceptorBuffer.select().where(ReceptorBuffer.processed_at.is_null()).order_by(ReceptorBuffer.id)
)


def unprocessed() -> list[ReceptorBuffer]:
    return UNPROCESSED.models()


def untriaged(ids) -> list[int]:
    """Those of `ids` that no sync has triaged yet (not processed, not kept for the briefing either)."""
    if not ids:
        return []
    return [
        r.id
        for r in ReceptorBuffer.select(ReceptorBuffer.id).where(
            ReceptorBuffer.id.in_(list(ids)) & ReceptorBuffer.processed_at.is_null() & ReceptorBuffer.outcome.is_null()
        )
    ]


def any_unscanned() -> bool:
    """Whether a row waits for the RAS: asked before every wait for the next moment due, so one statement
    built once that reads no row."""
    found = hot.execute(
        "any unscanned",
        lambda: (
            f'SELECT 1 FROM "{ReceptorBuffer._meta.table_name}" WHERE "scanned_at" IS NULL AND "processed_at" IS NULL '
            "LIMIT 1"
        ),
    )
    return bool(found.rows)


def unscanned() -> list[ReceptorBuffer]:
    return list(
        ReceptorBuffer.select()
        .where(ReceptorBuffer.scanned_at.is_null() & ReceptorBuffer.processed_at.is_null())
        .order_by(ReceptorBuffer.id)
    )


def drop(rows: list, reasons: dict[int, str], now: datetime, actor: str) -> None:
    """Those of `rows` that `reasons` names are processed as dropped, each traced with its reason, in one
    transaction."""
    grouped: dict[str, list] = {}
    for row in rows:
        if row.id in reasons:
            grouped.setdefault(reasons[row.id], []).append(row)
    if grouped:
        with trace.held(), database.atomic():
            mark_dropped(grouped, now, actor)


def mark_dropped(grouped: dict[str, list], now: datetime, actor: str) -> None:
    """{reason: rows} processed as dropped, one UPDATE per reason however the rows came, each row traced with
    its reason ("not needed" for none); in the caller's transaction."""
    for reason, members in grouped.items():
        ReceptorBuffer.update(processed_at=now, outcome="drop", reason=reason).where(
            ReceptorBuffer.id.in_([m.id for m in members])
        ).execute()
        for member in members:
            trace.record(member.trace_id, "dropped", actor, reason or "not needed", now)
