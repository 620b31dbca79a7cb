"""Traces: the path of one stimulus through Wilson, one row per decision.

A run's steps outside any transaction (its claim, the offline rule that answered) are held back
inside `held()` and written with the thread's next transaction, first thing in it and in one
statement, or when the block ends: the cortex holds them for its run, so they go out with the
run's results instead of as transactions of their own. A process killed in between loses those
lines with the run itself; `storage.inbox.recover` writes the claim's line back from the row.
"""

from __future__ import annotations

import threading
import uuid
from contextlib import contextmanager
from datetime import datetime

from loguru import logger

from storage import hot
from storage.db import database, has_transaction_hooks, transaction_hooks
from storage.models import Inbox, Outbox, Trace
from wilson.kernel.redact import redact, redact_data

_local = threading.local()  # held: rows waiting for a transaction; sent: rows written at its begin


def new_trace_id() -> str:
    return uuid.uuid4().hex[:12]


def record(trace_id: str, stage: str, actor: str, reason: str, at: datetime, data: dict | None = None,
           *, hold: bool = True) -> None:
    """`hold` False: written now even inside `held()` (a line only this moment knows, such as a takeover's)."""
    # reasons often carry error text from outside (a provider's 401 body, a library's URL): a trace row
    # outlives every log file, so it is redacted before it is written
    reason = redact(reason)
    data = redact_data(data) if data is not None else None
    values = (trace_id, stage, actor, reason, Trace.data.db_value(data), Trace.at.db_value(at))
    held_rows = getattr(_local, "held", None)
    if hold and held_rows is not None and not database.in_transaction():
        held_rows.append(values)
    else:
        _insert([values])
    logger.info("[{}] {} by {}: {}", trace_id, stage, actor, reason)


def _insert(rows: list[tuple]) -> None:
    """One INSERT for all `rows` (its text built once per row count, storage/hot.py)."""
    hot.execute(("trace_rows", len(rows)), lambda: (
        'INSERT INTO "trace" ("trace_id", "stage", "actor", "reason", "data", "at") VALUES '
        + ", ".join(["(?, ?, ?, ?, ?, ?)"] * len(rows))), [v for row in rows for v in row])


@contextmanager
def held():
    """Inside, this thread's trace rows recorded outside a transaction wait for its next one (see above)."""
    if getattr(_local, "held", None) is not None or not has_transaction_hooks():  # an outer block writes them;
        yield  # without the hooks (PostgreSQL) every row is written at once
        return
    _local.held, _local.sent = [], None
    try:
        yield
    finally:
        rows, _local.held = _local.held, None
        if rows:
            _insert(rows)


def _on_begin() -> None:
    rows = getattr(_local, "held", None)
    if rows:
        _insert(rows)
        _local.sent, _local.held = rows, []


def _on_end(committed: bool) -> None:
    sent = getattr(_local, "sent", None)
    if sent:
        _local.sent = None
        if not committed and _local.held is not None:  # rolled back with the transaction: held again
            _local.held[:0] = sent


transaction_hooks(_on_begin, _on_end)


def path(trace_id: str) -> list[Trace]:
    """The trace's lines by time, with those its rows hold: a realtime inbox row its routing (`routed`), and
    a delivered outbox row of a channel that stores no line for it its delivery (`delivered`).

    What a row holds already (when, from where, on which channel) is not written again as a line; it is
    made here: the routing before the stored lines of its moment (it came first), a delivery after them.
    Lines stored before this was so are shown once."""
    rows = list(Trace.select().where(Trace.trace_id == trace_id).order_by(Trace.at, Trace.id))
    stored = {(r.stage, r.actor, r.reason) for r in rows}
    routed = [routed_line(row) for row in Inbox.select(
        Inbox.id, Inbox.trace_id, Inbox.source, Inbox.priority, Inbox.created_at).where(
        (Inbox.trace_id == trace_id) & routed_by_row())]
    delivered = [delivered_line(box) for box in Outbox.select(
        Outbox.id, Outbox.channel, Outbox.delivered_at, Outbox.trace_id).where(
        (Outbox.trace_id == trace_id) & (Outbox.status == "delivered") & Outbox.delivered_at.is_null(False))]
    made = [(line, rank) for lines, rank in ((routed, -1), (delivered, 1)) for line in lines
            if (line.stage, line.actor, line.reason) not in stored]
    if not made:
        return rows
    ranked = [(r, 0) for r in rows] + made
    return [r for r, _ in sorted(ranked, key=lambda pair: (pair[0].at, pair[1]))]  # stable: stored order kept


# The inbox rows whose routing is their own line: a user's realtime stimulus (storage/routing.py
# commit_realtime, REALTIME_PRIORITY). A request to modify a proposal (actors/proposals/decide.py) is a user
# row at that priority too, but it continues its proposal's trace and was never routed by the thalamus.
def routed_by_row():
    return (Inbox.origin == "user") & (Inbox.priority == 0) & (Inbox.kind != "modify")


def routed_line(row: Inbox) -> Trace:
    """The line a realtime stimulus' routing stands for (not stored: the inbox row holds it)."""
    return Trace(trace_id=row.trace_id, stage="routed", actor="thalamus",
                 reason=f"inbox priority {row.priority} from {row.source}", at=row.created_at)


def delivered_line(box: Outbox) -> Trace:
    """The line a delivery stands for (not stored: the outbox row holds it)."""
    return Trace(trace_id=box.trace_id, stage="delivered", actor=box.channel, reason=f"outbox {box.id}",
                 at=box.delivered_at)


def format_path(trace_id: str, tz=None) -> str:
    """One line per step, times in `tz` (the user's zone; None: this machine's), as every other time is shown."""
    rows = path(trace_id)
    if not rows:
        return f"no trace {trace_id}"
    return "\n".join(f"{r.at.astimezone(tz):%Y-%m-%d %H:%M:%S} {r.stage:<10} {r.actor:<12} {redact(r.reason)}"
                     for r in rows)
