"""Approved items that call another program (an MCP server), outside any database transaction.

A call to another process can take as long as that server's timeout; inside the gate's transaction it would
hold SQLite's write lock for as long. So approving commits the item as "calling" (the ledger row), the gate
calls after that commit, and one more transaction records the outcome with the answer to the user. A kill
between the two commits leaves the item "calling": on start the gate marks it "unknown" and tells the user
so; it is never called again, since the server may have acted. The gate makes the call on a thread of its own,
so that a slow server holds up no other decision (a button press is answered while the user looks at it).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime

from actors import tools
from actors.proposals.words import headline
from storage import outbox, trace
from storage.db import database
from storage.models import ApprovalItem
from wilson.kernel import faults

STOPPED = (
    "I'm not sure this happened: Wilson stopped while it was being done, so I won't repeat it on my own. "
    "Please check yourself:\n? {}"
)


@dataclass(frozen=True)
class Told:
    channel: str
    outbox_id: int


def call(item_id: int, channel: str, now: datetime, config, owner: str | None = None) -> Told | None:
    """Call one approved item committed as "calling", then commit its outcome and the answer for `channel`.
    None when it is not "calling" (done already, or taken over as unknown)."""
    item = ApprovalItem.get_or_none(ApprovalItem.id == item_id)
    if item is None or item.status != "calling":
        return None
    faults.point("approval:after-calling-commit")  # the approval is committed, the server not yet called
    try:
        result, _ = tools.execute_approved(
            item, item.approval.approver, now, config.timezone, {}, owner=owner, config=config, claimed_as="calling"
        )
    except Exception as exc:  # a refusal, or a call that reached the server and got no answer
        unknown = bool(getattr(exc, "outcome_unknown", False))
        status, result = ("unknown" if unknown else "failed"), {"error": str(exc)}
        why = f"{exc}; whether it acted is unknown, so it is not repeated" if unknown else str(exc)
        text = f"Could not do:\n! {headline(item.description)} ({why})"
    else:
        faults.point("approval:after-call")  # the server acted; its outcome is not committed yet
        status = "executed"
        told = result.get("told") if isinstance(result.get("told"), str) else ""
        text = f"Done:\n✓ {headline(item.description)}" + (f"\n  {told}" if told else "")
    return settle(item, status, result, text, channel, now)


def settle(item: ApprovalItem, status: str, result: dict, text: str, channel: str, now: datetime) -> Told | None:
    with database.atomic():
        moved = (
            ApprovalItem.update(status=status, result=result, executed_at=now)
            .where((ApprovalItem.id == item.id) & (ApprovalItem.status == "calling"))
            .execute()
        )
        if not moved:
            return None
        trace_id = item.approval.trace_id
        box = outbox.add(
            channel=channel,
            text=text,
            trace_id=trace_id,
            at=now,
            key=f"call:{item.id}",
            payload={"decision": {"approval_id": item.approval_id, "item": item.position}},
        )
        trace.record(
            trace_id,
            status,
            "approval",
            f"proposal {item.approval_id} item {item.position}: {text.splitlines()[0]}",
            now,
        )
    return Told(channel, box.id)


IN_FLIGHT: set[int] = set()  # items this process is calling right now (a gate started again must not touch them)
_in_flight = threading.Lock()


def begin(item_id: int) -> None:
    with _in_flight:
        IN_FLIGHT.add(item_id)


def end(item_id: int) -> None:
    with _in_flight:
        IN_FLIGHT.discard(item_id)


def interrupted(now: datetime) -> list[Told]:
    """Items a stopped Wilson left "calling": their outcome is unknown; each user is told once, none is called."""
    told = []
    with _in_flight:
        busy = set(IN_FLIGHT)
    for item in ApprovalItem.select().where(ApprovalItem.status == "calling"):
        if item.id in busy:
            continue
        done = settle(
            item,
            "unknown",
            {"error": "Wilson stopped during the call"},
            STOPPED.format(headline(item.description)),
            item.approval.channel,
            now,
        )
        if done is not None:
            told.append(done)
    return told
