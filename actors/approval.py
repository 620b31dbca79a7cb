"""The approval gate: every mutation is a proposal the user approves, modifies or rejects.

Decisions arrive as `Decision` messages from a channel (a REPL command, a
Telegram button) and are handled here by code, never by a model. Approving
executes each item exactly once: the item's status moves from pending to
executed in the same transaction that applies it, so a second press finds
nothing left to do. Proposals are bound to their approver, expire, and are
superseded by a modified proposal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from loguru import logger

from actors import tools
from storage import decisions, inbox, outbox, trace
from storage.db import database
from storage.models import Approval, ApprovalItem, DecisionRow, Feedback, Inbox, Task
from wilson import faults, quiet
from wilson.actor import WilsonActor
from wilson.bounds import MAX_ID, MAX_ITEM
from wilson.messages import (ApprovalSettled, Decision, DecisionRecorded, Deliver, InboxReady, ProposalCreated,
                             Recover)

OPEN = ("pending", "partial")


@dataclass
class DecisionResult:
    text: str
    settled: bool = False
    stage: str = "refused"
    inbox_id: int | None = None
    task_ids: list = field(default_factory=list)


def render(approval: Approval, tz) -> str:
    items = list(approval.items.order_by(ApprovalItem.position))
    lines = [f"Proposal {approval.id}: I'd like to do this — approve, modify or reject?"]
    for item in items:
        lines.append(f"{item.position}. {item.description}")
    return "\n".join(lines)


def outcome_line(approval: Approval) -> str:
    marks = {"executed": "✓", "rejected": "✗", "superseded": "↻", "failed": "!", "pending": "·"}
    items = approval.items.order_by(ApprovalItem.position)
    return "\n".join(f"{marks.get(i.status, '·')} {i.description}" for i in items)


def settle_status(approval_id: int) -> str:
    statuses = [i.status for i in ApprovalItem.select().where(ApprovalItem.approval == approval_id)]
    if "pending" in statuses:
        return "partial" if any(s != "pending" for s in statuses) else "pending"
    # an item that failed was still approved by the user; only their own "no" makes a rejection
    return "approved" if {"executed", "failed"} & set(statuses) else "rejected"


def may_decide(user_id, approval: Approval, owner: str | None = None) -> bool:
    """The person a proposal is for decides it; so does the owner, when `owner` is given (they decide for all)."""
    return str(user_id) in {str(approval.approver), str(owner) if owner is not None else str(approval.approver)}


def check(decision: Decision, approval: Approval | None, now: datetime, tz=None, owner: str | None = None) -> str | None:
    """Why this decision cannot be taken, or None when it can (`tz`: the user's, for the times it names;
    `owner`: someone who may decide for everyone)."""
    if approval is None:
        return f"I don't know proposal {decision.approval_id}."
    if not may_decide(decision.user_id, approval, owner):
        return "Sorry, only the person this proposal is for can decide on it."
    if decision.nonce is not None and decision.nonce != approval.nonce:
        return "That button is out of date."
    if approval.status == "superseded":
        return f"Proposal {approval.id} was replaced by proposal {approval.superseded_by}; please use that one."
    if approval.status in ("approved", "rejected"):
        return f"Already done: proposal {approval.id} was {approval.status}."
    if approval.status == "expired" or (approval.status in OPEN and approval.expires_at <= now):
        Approval.update(status="expired", decided_at=now).where(
            (Approval.id == approval.id) & Approval.status.in_(OPEN)).execute()
        expired = approval.expires_at.astimezone(tz) if tz else approval.expires_at
        return (f"Proposal {approval.id} expired on {expired:%d %b %H:%M}{'' if tz else ' UTC'}, so I changed "
                "nothing. Ask me again if you still want it.")
    return None


def selected(approval: Approval, positions: tuple[int, ...]) -> list[ApprovalItem]:
    query = approval.items.where(ApprovalItem.status == "pending").order_by(ApprovalItem.position)
    if positions:
        # a number no proposal has selects nothing (and must not overflow the query)
        query = query.where(ApprovalItem.position.in_([p for p in positions if 0 < p <= MAX_ITEM] or [0]))
    return list(query)


class NoLongerOpen(Exception):
    """The proposal was decided or replaced between the check and the decision's transaction."""


def hold_open(approval: Approval, now: datetime) -> None:
    """Inside the decision's transaction: lock the proposal's row, and make sure it is still open.

    A replacement committed by the cortex after `check()` read the row would otherwise be
    overwritten by this decision."""
    held = Approval.update(decided_at=now).where(
        (Approval.id == approval.id) & Approval.status.in_(OPEN)).execute()
    if not held:
        raise NoLongerOpen()


def approve(approval: Approval, positions: tuple[int, ...], now: datetime, tz, plan_task) -> DecisionResult:
    """Execute the chosen items exactly once, in one transaction."""
    executed, failed, task_ids = [], [], []
    created_topics: dict = {}
    with database.atomic():
        hold_open(approval, now)
        for item in selected(approval, positions):
            claimed = ApprovalItem.update(status="executing").where(
                (ApprovalItem.id == item.id) & (ApprovalItem.status == "pending")).execute()
            if not claimed:
                continue
            try:
                with database.atomic():
                    result = tools.execute_mutation(item.tool, item.args, now, tz, created_topics)
            except Exception as exc:  # one broken item must not undo the others
                ApprovalItem.update(status="failed", result={"error": str(exc)}).where(ApprovalItem.id == item.id).execute()
                failed.append(f"{item.description} ({exc})")
                continue
            ApprovalItem.update(status="executed", result=result, executed_at=now).where(
                ApprovalItem.id == item.id).execute()
            executed.append(item.description)
            if "task_id" in result:
                task_ids.append(result["task_id"])
        for task_id in task_ids:
            plan_task(Task.get_by_id(task_id), now)
        status = settle_status(approval.id)
        Approval.update(status=status, decided_at=now).where(Approval.id == approval.id).execute()
        Feedback.create(approval_id=approval.id, kind="approved", value=str(len(executed)), at=now)
    if not executed and not failed:
        return DecisionResult(f"Already done: nothing left to approve in proposal {approval.id}.")
    text = "Done:\n" + "\n".join(f"✓ {d}" for d in executed) if executed else ""
    if failed:
        text += ("\n" if text else "") + "Could not do:\n" + "\n".join(f"! {d}" for d in failed)
    if status == "partial":
        text += f"\nStill waiting on the rest of proposal {approval.id}."
    return DecisionResult(text, settled=status != "partial", stage="approved", task_ids=task_ids)


def reject(approval: Approval, positions: tuple[int, ...], now: datetime) -> DecisionResult:
    with database.atomic():
        hold_open(approval, now)
        items = selected(approval, positions)
        ApprovalItem.update(status="rejected").where(
            ApprovalItem.id.in_([i.id for i in items]) & (ApprovalItem.status == "pending")).execute()
        status = settle_status(approval.id)
        Approval.update(status=status, decided_at=now).where(Approval.id == approval.id).execute()
        Feedback.create(approval_id=approval.id, kind="rejected", value=",".join(str(i.position) for i in items), at=now)
    if not items:
        return DecisionResult(f"Nothing left to reject in proposal {approval.id}.")
    text = "Rejected, nothing changed:\n" + "\n".join(f"✗ {i.description}" for i in items)
    if status == "partial":
        text += f"\nThe rest of proposal {approval.id} still waits for you."
    return DecisionResult(text, settled=status != "partial", stage="rejected")


def modify(approval: Approval, decision: Decision, now: datetime) -> DecisionResult:
    """Hand the user's words back to the cortex, which proposes a replacement."""
    if not decision.text.strip():
        return DecisionResult(f"What should I change in proposal {approval.id}? "
                              f"Tell me, e.g. “modify {approval.id} book flights by Feb 1”.", stage="asked")
    row = inbox.add(source=decision.channel, text=decision.text, priority=0, at=now, kind="modify", origin="user",
                    payload={"approval_id": approval.id}, user_id=str(decision.user_id),
                    reply_channel=decision.channel, trace_id=approval.trace_id)
    Feedback.create(approval_id=approval.id, kind="modified", value=decision.text[:200], at=now)
    return DecisionResult("", stage="modify", inbox_id=row.id if row else None)


def decision_of(row: DecisionRow) -> Decision:
    return Decision(approval_id=row.approval_id, action=row.action, user_id=row.user_id, channel=row.channel,
                    text=row.text, items=tuple(row.items or ()), nonce=row.nonce)


def find(approval_id: int) -> Approval | None:
    """The proposal, or None, for any number a person could type or a button could carry."""
    if not 0 < approval_id <= MAX_ID:
        return None
    return Approval.get_or_none(Approval.id == approval_id)


class ApprovalActor(WilsonActor):
    """Presents proposals and applies decisions, both from rows: a message only says where to look.

    On start it presents every open proposal not yet shown and applies every decision not yet
    applied, so a proposal committed or a button pressed while this actor was down (or the
    process dead) is shown, or applied, once."""

    realtime = True  # a button press is answered while the user looks at it
    name = "approval"

    def on_start(self):
        self.recover()

    def recover(self) -> None:
        for approval in Approval.select().where(Approval.status.in_(OPEN) & Approval.presented_at.is_null()):
            self.present(approval.id)
        for row in decisions.pending():
            self.apply(row.id)

    def receive(self, message):
        match message:
            case ProposalCreated(approval_id=approval_id, again_for=again_for):
                self.present(approval_id, again_for)
            case DecisionRecorded(decision_id=decision_id):
                self.apply(decision_id)
            case Recover():
                self.recover()
            case Decision():  # from a caller that did not write it down first: written down now
                self.apply(self.record(message).id)

    def record(self, decision: Decision) -> DecisionRow:
        approval_id = decision.approval_id if 0 <= decision.approval_id <= MAX_ID else 0
        return decisions.record(approval_id=approval_id, action=decision.action, user_id=decision.user_id,
                                channel=decision.channel, text=decision.text, items=decision.items,
                                nonce=decision.nonce, at=self.now())

    def present(self, approval_id: int, again_for: int | None = None) -> None:
        now = self.now()
        with database.atomic():
            approval = find(approval_id)
            if approval is None or approval.status not in OPEN:
                return
            if again_for is None and not Approval.update(presented_at=now).where(
                    (Approval.id == approval.id) & Approval.presented_at.is_null()).execute():
                return  # shown already (a second nudge, or another process' gate): never twice
            payload = {"approval": {"id": approval.id, "nonce": approval.nonce,
                                    "actions": ["approve", "modify", "reject"],
                                    "items": [{"position": i.position, "description": i.description}
                                              for i in approval.items.order_by(ApprovalItem.position)]},
                       "topic_id": approval.topic_id}
            # A proposal the user did not ask for waits out the night like any other non-urgent message.
            source = Inbox.get_or_none(Inbox.id == approval.inbox_id)
            held = None
            if source is not None and source.origin != "user" and source.priority > 1:
                held = quiet.hold_until(self.config, now)
            box = outbox.add(channel=approval.channel, text=render(approval, self.config.timezone),
                             trace_id=approval.trace_id, at=now, payload=payload,
                             key=f"proposal:{approval.id}" + (f":again:{again_for}" if again_for else ""),
                             deliver_after=held)
            trace.record(approval.trace_id, "presented", self.name, f"proposal {approval.id} on {approval.channel}"
                         + (f", held for quiet hours until {held:%Y-%m-%d %H:%M} UTC" if held else ""), now)
        faults.point("approval:after-present-commit")
        if held is None:
            self.tell(approval.channel, Deliver(box.id))

    def apply(self, decision_id: int) -> None:
        """Apply one decision row exactly once: taking the row, deciding and the answer commit together."""
        now = self.now()
        with database.atomic():
            row = DecisionRow.get_or_none(DecisionRow.id == decision_id)
            if row is None or not decisions.claim(row.id, now):
                return
            decision = decision_of(row)
            approval, result = self.decide(decision, now)
            trace_id = approval.trace_id if approval else trace.new_trace_id()
            trace.record(trace_id, result.stage, self.name,
                         f"proposal {decision.approval_id} {decision.action} by {decision.user_id}: "
                         f"{result.text.splitlines()[0] if result.text else 'handed to the cortex'}", now)
            box = None
            if result.text:
                box = outbox.add(channel=decision.channel, text=result.text, trace_id=trace_id, at=now,
                                 key=f"decision:{row.id}",
                                 payload={"decision": {"approval_id": decision.approval_id,
                                                       "action": decision.action}})
        faults.point("approval:after-decision-commit")
        if result.inbox_id:
            self.tell("cortex-realtime", InboxReady())
        if box is not None:
            self.tell(decision.channel, Deliver(box.id))
        if approval is not None and (result.settled or result.stage == "modify"):
            self.tell(approval.channel, ApprovalSettled(approval.id))

    def decide(self, decision: Decision, now: datetime) -> tuple[Approval | None, DecisionResult]:
        tz = self.config.timezone
        owner = self.config.get("core", "owner") if self.config.get("approval", "owner_decides_all") else None
        approval = find(decision.approval_id)
        problem = check(decision, approval, now, tz, owner)
        if problem:
            # check() may have just marked it expired: the row knows, the object read before does not
            expired = approval is not None and Approval.get_by_id(approval.id).status == "expired"
            logger.info("decision on proposal {} refused: {}", decision.approval_id, problem)
            return approval, DecisionResult(problem, settled=expired)
        try:
            return approval, self.take(decision, approval, now)
        except NoLongerOpen:
            fresh = Approval.get_by_id(approval.id)
            return approval, DecisionResult(check(decision, fresh, now, tz, owner)
                                            or f"Proposal {approval.id} changed just now, so I did nothing; "
                                               "have a look at it again.")

    def take(self, decision: Decision, approval: Approval, now: datetime) -> DecisionResult:
        if decision.action == "approve":
            return approve(approval, decision.items, now, self.config.timezone, self.plan_task)
        if decision.action == "reject":
            return reject(approval, decision.items, now)
        if decision.action == "modify":
            return modify(approval, decision, now)
        return DecisionResult(f"Unknown action {decision.action!r}: use approve, modify or reject.")

    def plan_task(self, task: Task, now: datetime) -> None:
        from actors.tick import plan_task

        windows = [w.strip() for w in str(self.config.get("tick", "windows")).split(",") if w.strip()]
        plan_task(task, now, windows, self.config.timezone)
