"""Traces: the path of one stimulus through Wilson, one row per decision."""

from __future__ import annotations

import uuid
from datetime import datetime

from loguru import logger

from storage import hot
from storage.models import Trace
from wilson.kernel.redact import redact, redact_data


def new_trace_id() -> str:
    return uuid.uuid4().hex[:12]


def record(trace_id: str, stage: str, actor: str, reason: str, at: datetime, data: dict | None = None) -> None:
    # reasons often carry error text from outside (a provider's 401 body, a library's URL): a trace row
    # outlives every log file, so it is redacted before it is written
    reason = redact(reason)
    data = redact_data(data) if data is not None else None
    hot.insert(Trace, Trace(trace_id=trace_id, stage=stage, actor=actor, reason=reason, at=at, data=data),
               returning=False)
    logger.info("[{}] {} by {}: {}", trace_id, stage, actor, reason)


def path(trace_id: str) -> list[Trace]:
    return list(Trace.select().where(Trace.trace_id == trace_id).order_by(Trace.at, Trace.id))


def format_path(trace_id: str, tz=None) -> str:
    """One line per step, times in `tz` (the user's zone; None: this machine's), as every other time is shown."""
    rows = path(trace_id)
    if not rows:
        return f"no trace {trace_id}"
    return "\n".join(f"{r.at.astimezone(tz):%Y-%m-%d %H:%M:%S} {r.stage:<10} {r.actor:<12} {redact(r.reason)}"
                     for r in rows)
