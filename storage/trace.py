"""Traces: the path of one stimulus through Wilson, one row per decision.

Inside `held()` a thread's trace rows wait and go in with its next commit, all in one statement: the
cortex holds them for a run, so its claim, the offline rule that answered and the lines of its results
are one INSERT in the run's transaction instead of a statement (or a transaction) each. A process
killed before that commit loses the lines with the run itself; `storage.inbox.recover` writes the
claim's line back from the row.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from datetime import datetime

from loguru import logger

from storage import hot
from storage.db import database, has_transaction_hooks, transaction_hooks
from storage.models import Inbox, Outbox, Trace
from wilson.kernel.redact import redact, redact_data

_local = threading.local()  # held: rows waiting for a transaction; sent: rows written at its begin


def new_trace_id() -> str:
    """Twelve random hex digits, as the first twelve of a uuid4's (its version digit is the thirteenth), without
    building the UUID: one is made for every message the user sends."""
    return os.urandom(6).hex()


def record(
    trace_id: str, stage: str, actor: str, reason: str, at: datetime, data: dict | None = None, *, hold: bool = True
) -> None:
    """`hold` False: outside a transaction, written now even inside `held()` (a line only this moment knows,
    such as a takeover's); inside one it goes out with the transaction's others, in their order."""
    # reasons often carry error text from outside (a provider's 401 body, a library's URL): a trace row
    # outlives every log file, so it is redacted before it is written
    reason = redact(reason)
    data = redact_data(data) if data is not None else None
    values = (trace_id, stage, actor, reason, Trace.data.db_value(data), Trace.at.db_value(at))
    held_rows = getattr(_local, "held", None)
    if held_rows is None:
        _insert([values])
    elif database.in_transaction():
        _local.pending.append(values)
    elif hold:
        held_rows.append(values)
    else:
        _insert([values])
    logger.info("[{}] {} by {}: {}", trace_id, stage, actor, reason)


INSERT_ROWS = 50  # rows per INSERT at most: a triage of hundreds of rows keeps few statement texts


def _insert(rows: list[tuple]) -> None:
    """One INSERT for `rows` (its text built once per row count, storage/hot.py), or one per INSERT_ROWS."""
    for start in range(0, len(rows), INSERT_ROWS):
        batch = rows[start : start + INSERT_ROWS]
        size = len(batch)
        hot.execute(
            ("trace_rows", size),
            lambda n=size: (
                'INSERT INTO "trace" ("trace_id", "stage", "actor", "reason", "data", "at") VALUES '
                + ", ".join(["(?, ?, ?, ?, ?, ?)"] * n)
            ),
            [v for row in batch for v in row],
        )


@contextmanager
def held():
    """Inside, this thread's trace rows wait: those recorded in a transaction for its commit, those recorded
    outside one for the next transaction's commit or the end of the block, whichever comes first. Each
    commit writes what waits in one statement, in the order it was recorded, as its last one; a
    transaction (or savepoint) rolled back takes its own rows with it and leaves the others waiting."""
    if getattr(_local, "held", None) is not None or not has_transaction_hooks():  # an outer block writes them;
        yield  # without the hooks (PostgreSQL) every row is written at once
        return
    _local.held, _local.pending, _local.sent, _local.marks = [], [], None, {}
    try:
        yield
    finally:
        # rows of a transaction still open (it began before the block) go into it now, as they would have
        rows, _local.held, _local.pending = _local.held + _local.pending, None, []
        if rows:
            _insert(rows)


def _on_commit() -> None:
    """Just before a transaction of this thread commits: what waits goes in, in one statement."""
    held_rows = getattr(_local, "held", None)
    if held_rows is None or not (held_rows or _local.pending):
        return
    _insert(held_rows + _local.pending)
    _local.sent, _local.held, _local.pending = held_rows, [], []


def _on_end(committed: bool) -> None:
    if getattr(_local, "held", None) is None:
        return
    sent, _local.sent, _local.marks = _local.sent, None, {}
    _local.pending = []  # committed, or rolled back with their transaction
    if sent and not committed:  # written, then rolled back with the transaction: waiting again
        _local.held[:0] = sent


def _on_savepoint(action: str, name: str) -> None:
    if getattr(_local, "held", None) is None:
        return
    if action == "SAVEPOINT":
        _local.marks[name] = len(_local.pending)
    elif action == "ROLLBACK" and name in _local.marks:
        del _local.pending[_local.marks[name] :]
    elif action == "RELEASE":
        _local.marks.pop(name, None)


transaction_hooks(_on_commit, _on_end, _on_savepoint)


def path(trace_id: str) -> list[Trace]:
    """The trace's lines by time, with those its rows hold: a realtime inbox row its routing (`routed`), and
    a delivered outbox row of a channel that stores no line for it its delivery (`delivered`).

    What a row holds already (when, from where, on which channel) is not written again as a line; it is
    made here: the routing before the stored lines of its moment (it came first), a delivery after them.
    Lines stored before this was so are shown once."""
    rows = list(Trace.select().where(Trace.trace_id == trace_id).order_by(Trace.at, Trace.id))
    stored = {(r.stage, r.actor, r.reason) for r in rows}
    routed = [
        routed_line(row)
        for row in Inbox.select(Inbox.id, Inbox.trace_id, Inbox.source, Inbox.priority, Inbox.created_at).where(
            (Inbox.trace_id == trace_id) & routed_by_row()
        )
    ]
    delivered = [
        delivered_line(box)
        for box in Outbox.select(Outbox.id, Outbox.channel, Outbox.delivered_at, Outbox.trace_id).where(
            (Outbox.trace_id == trace_id) & (Outbox.status == "delivered") & Outbox.delivered_at.is_null(False)
        )
    ]
    made = [
        (line, rank)
        for lines, rank in ((routed, -1), (delivered, 1))
        for line in lines
        if (line.stage, line.actor, line.reason) not in stored
    ]
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
    return Trace(
        trace_id=row.trace_id,
        stage="routed",
        actor="thalamus",
        reason=f"inbox priority {row.priority} from {row.source}",
        at=row.created_at,
    )


def delivered_line(box: Outbox) -> Trace:
    """The line a delivery stands for (not stored: the outbox row holds it)."""
    return Trace(
        trace_id=box.trace_id, stage="delivered", actor=box.channel, reason=f"outbox {box.id}", at=box.delivered_at
    )


def format_path(trace_id: str, tz=None) -> str:
    """One line per step, times in `tz` (the user's zone; None: this machine's), as every other time is shown."""
    rows = path(trace_id)
    if not rows:
        return f"no trace {trace_id}"
    return "\n".join(
        f"{r.at.astimezone(tz):%Y-%m-%d %H:%M:%S} {r.stage:<10} {r.actor:<12} {redact(r.reason)}" for r in rows
    )
