"""The approval gate: every mutation is a proposal the user approves, modifies or rejects.

Decisions arrive as rows a channel or the cortex wrote (a REPL command, a Telegram button, the user's
words), named by `DecisionRecorded` (a bare `Decision` is written down first), and are applied here by
code, never by a model. Approving executes each item exactly once: the item's status
moves from pending to executed in the same transaction that applies it, so a second press finds
nothing left to do (an item that calls another program is committed as "calling" and called after
that commit: actors/proposals/calls.py). Proposals are bound to their approver, expire, and are superseded by a modified
proposal.

None vanishes in silence: one reminder before it expires, one notice when it does (the sweep, run on
the tick's nudge and on every `Recover`), and an expired proposal can be brought back (`revive`) as a
new one. An approved proposal can be undone (`undo`): a new proposal, made by code, that puts back what it
changed. The rows change only in actors/proposals/ (each transition one transaction); this actor runs
those transitions from its messages and, once each has committed, delivers what it wrote.
"""

from __future__ import annotations

import threading
from datetime import datetime

from loguru import logger

from actors.proposals import calls, commands, decide as proposals_decide, lapse, make, rules, undo
from actors.proposals.rules import DecisionResult, NoLongerOpen, OPEN, REVIVE, UNDO
from actors.deadlines import plan_task
from actors.shared.windows import windows_config
from storage import decisions, outbox, trace
from storage.db import database
from storage.models import Approval, DecisionRow, Task
from wilson.kernel import faults
from wilson.kernel.actor import WilsonActor
from wilson.kernel.bounds import MAX_ID
from wilson.kernel.messages import (
    ApprovalSettled,
    Decision,
    DecisionRecorded,
    Deliver,
    InboxReady,
    ProposalCreated,
    Recover,
)

DECISION_BROKE = (
    "Sorry, something went wrong on my side with your answer to proposal {}, so nothing changed. Could you try again?"
)


def describe_quiet(result: DecisionResult) -> str:
    """A decision the gate answers without words of its own, as the trace tells it."""
    if result.made:
        return f"{'to be undone by' if result.stage == 'undo' else 'brought back as'} proposal {result.made}"
    return "handed to the cortex"


def decision_of(row: DecisionRow) -> Decision:
    return Decision(
        approval_id=row.approval_id,
        action=row.action,
        user_id=row.user_id,
        channel=row.channel,
        text=row.text,
        items=tuple(row.items or ()),
        nonce=row.nonce,
    )


class ApprovalActor(WilsonActor):
    """Presents proposals and applies decisions, both from rows: a message only says where to look.

    On start it presents every open proposal not yet shown and applies every decision not yet
    applied, so a proposal committed or a button pressed while this actor was down (or the
    process dead) is shown, or applied, once."""

    realtime = True  # a button press is answered while the user looks at it
    name = "approval"

    def on_start(self):
        # an approved call to another program that a stop cut short: told as unknown, never called again
        for told in calls.interrupted(self.now()):
            self.tell(told.channel, Deliver(told.outbox_id))
        self.recover()

    def recover(self) -> None:
        # decisions first: a change approved as it was made ("yes, but …") is never shown as a question
        for row in decisions.pending():
            self.apply_contained(row.id)
        for approval_id in rules.unshown_ids():
            self.present_contained(approval_id)
        try:
            self.sweep()
        except Exception as exc:  # the next recover (a tick, a restart) sweeps again
            logger.opt(exception=exc).error("could not sweep proposals for expiry")

    # One broken proposal or decision must not take the gate (and everyone's decisions) down:
    # on start it would meet the same row again, and again.
    def present_contained(self, approval_id: int, again_for: int | None = None) -> None:
        try:
            self.present(approval_id, again_for)
        except Exception as exc:
            logger.opt(exception=exc).error("could not present proposal {}", approval_id)

    def apply_contained(self, decision_id: int) -> None:
        try:
            self.apply(decision_id)
        except Exception as exc:  # its transaction rolled back: nothing changed; the person is told so once
            logger.opt(exception=exc).error("could not apply decision {}", decision_id)
            self.give_up_decision(decision_id, f"{type(exc).__name__}: {exc}")

    def give_up_decision(self, decision_id: int, error: str) -> None:
        now = self.now()
        with database.atomic():
            row = DecisionRow.get_or_none(DecisionRow.id == decision_id)
            if row is None or not decisions.claim(row.id, now):
                return
            box = outbox.add(
                channel=row.channel,
                text=DECISION_BROKE.format(row.approval_id),
                trace_id=trace.new_trace_id(),
                at=now,
                key=f"decision:{row.id}",
                payload={"decision": {"approval_id": row.approval_id, "action": row.action}},
            )
            trace.record(
                box.trace_id, "error", self.name, f"decision {row.id} on proposal {row.approval_id}: {error}", now
            )
        self.tell(row.channel, Deliver(box.id))

    def sweep(self) -> None:
        """Expire what ran out of time (telling the user), and remind once of what soon will."""
        now = self.now()
        if not rules.sweep_due(now):
            return
        for (approval_id,) in (
            Approval.select(Approval.id).where(Approval.status.in_(OPEN) & (Approval.expires_at <= now)).tuples()
        ):
            self.expire(approval_id)
        for (approval_id,) in (
            Approval.select(Approval.id)
            .where((Approval.status == "expired") & Approval.expired_notice_at.is_null())
            .tuples()
        ):
            self.expire(approval_id)
        for (approval_id,) in (
            Approval.select(Approval.id)
            .where(
                Approval.status.in_(OPEN)
                & Approval.reminded_at.is_null()
                & (Approval.remind_at <= now)
                & Approval.presented_at.is_null(False)
            )
            .tuples()
        ):
            self.remind(approval_id)

    def expire(self, approval_id: int) -> None:
        """Mark one proposal expired and tell its person once (a close asked when its topic ended lapses quietly)."""
        done = lapse.expire(approval_id, self.now(), self.config, self.name)
        if done is None:
            return
        faults.point("approval:after-expiry-commit")
        self.tell(done.approval.channel, ApprovalSettled(done.approval.id))
        if done.box is not None and done.held is None:
            self.tell(done.approval.channel, Deliver(done.box.id))

    def remind(self, approval_id: int) -> None:
        """The one reminder before a proposal expires (see lapse.remind)."""
        nudge = lapse.remind(approval_id, self.now(), self.config, self.name)
        if nudge is None:
            return
        faults.point("approval:after-remind-commit")
        channel, box, held = nudge
        if held is None:
            self.tell(channel, Deliver(box.id))

    def receive(self, message):
        match message:
            case ProposalCreated(approval_id=approval_id, again_for=again_for):
                self.present_contained(approval_id, again_for)
            case DecisionRecorded(decision_id=decision_id):
                self.apply_contained(decision_id)
            case Recover():
                self.recover()
            case Decision():  # from a caller that did not write it down first: written down now
                self.apply_contained(self.record(message).id)

    def record(self, decision: Decision) -> DecisionRow:
        approval_id = decision.approval_id if 0 <= decision.approval_id <= MAX_ID else 0
        return decisions.record(
            approval_id=approval_id,
            action=decision.action,
            user_id=decision.user_id,
            channel=decision.channel,
            text=decision.text,
            items=decision.items,
            nonce=decision.nonce,
            at=self.now(),
        )

    def present(self, approval_id: int, again_for: int | None = None) -> None:
        shown = make.present(approval_id, again_for, self.now(), self.config, self.name)
        if shown is None:
            return
        faults.point("approval:after-present-commit")
        channel, box, held = shown
        if held is None:
            self.tell(channel, Deliver(box.id))

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
            trace.record(
                trace_id,
                result.stage,
                self.name,
                f"proposal {decision.approval_id} {decision.action} by {decision.user_id}: "
                f"{result.text.splitlines()[0] if result.text else describe_quiet(result)}",
                now,
            )
            box = None
            if result.text:
                payload = {"decision": {"approval_id": decision.approval_id, "action": decision.action, "id": row.id}}
                if result.undoable:  # a receipt of changes offers to put them back (an Undo button)
                    payload["undo"] = {"id": approval.id, "nonce": approval.nonce}
                box = outbox.add(
                    channel=decision.channel,
                    text=result.text,
                    trace_id=trace_id,
                    at=now,
                    key=f"decision:{row.id}",
                    payload=payload,
                )
        faults.point("approval:after-decision-commit")
        if result.made:
            if box is not None:  # the answer comes before the proposal it brings (what an undo can't put back)
                self.tell(decision.channel, Deliver(box.id))
                box = None
            self.present(result.made)
        if result.inbox_id:
            self.tell("cortex-realtime", InboxReady())
        for channel, outbox_id in result.deliveries:
            self.tell(channel, Deliver(outbox_id))
        if box is not None:
            self.tell(decision.channel, Deliver(box.id))
        if approval is not None and (result.settled or result.stage == "modify"):
            self.tell(approval.channel, ApprovalSettled(approval.id))
        for item_id in result.calls:  # committed as "calling": called now, outside any transaction
            self.call_outside(item_id, decision.channel)

    def call_outside(self, item_id: int, channel: str) -> None:
        """Call an approved item of another program on a thread of its own: a server's timeout holds up no other
        decision. Its outcome is committed there and delivered; a crash there leaves it "calling" (unknown)."""
        calls.begin(item_id)

        def run() -> None:
            told = None
            try:
                told = calls.call(item_id, channel, self.now(), self.config, owner=self.config.get("core", "owner"))
            except Exception as exc:  # left "calling": the next start tells the user it is unknown
                logger.opt(exception=exc).error("the approved call of item {} failed", item_id)
            finally:
                calls.end(item_id)
                if not database.is_closed():
                    database.close()  # this thread's connection
            if told is not None:
                self.tell(told.channel, Deliver(told.outbox_id))

        threading.Thread(target=run, name=f"approval-call-{item_id}", daemon=True).start()

    def decide(self, decision: Decision, now: datetime) -> tuple[Approval | None, DecisionResult]:
        tz = self.config.timezone
        owner = self.config.get("core", "owner") if self.config.get("approval", "owner_decides_all") else None
        approval = rules.find(decision.approval_id)
        if decision.action == REVIVE:
            return approval, proposals_decide.revive(decision, approval, now, self.config, owner)
        if decision.action == UNDO:
            return self.undo_now(decision, approval, now, owner)
        if decision.action == commands.COMMAND:
            return commands.run(decision, now, self.config, owner, self.plan_task)
        problem, settled = proposals_decide.refuse(decision, approval, now, tz, owner)
        if problem:
            logger.info("decision on proposal {} refused: {}", decision.approval_id, problem)
            return approval, DecisionResult(problem, settled=settled)
        try:
            return approval, self.take(decision, approval, now)
        except NoLongerOpen:
            fresh = Approval.get_by_id(approval.id)
            return approval, DecisionResult(
                rules.check(decision, fresh, now, tz, owner)
                or f"Proposal {approval.id} changed just now, so I did nothing; have a look at it again."
            )

    def undo_now(
        self, decision: Decision, approval: Approval | None, now: datetime, owner: str | None
    ) -> tuple[Approval | None, DecisionResult]:
        """Undo is the user's own clear command (a press, or "undo 3"): what would put the change back is
        recorded as a proposal made by code and approved in the same transaction, so it is traced, and can
        itself be undone (a redo), but never asked for twice."""
        asked = undo.undo(decision, approval, now, self.config, owner)
        if asked.made is None:
            return approval, asked
        made = Approval.get_by_id(asked.made)
        trace.record(
            made.trace_id,
            "command",
            self.name,
            f"proposal {made.id} undoes proposal {made.summary.rsplit(' ', 1)[-1]}: your undo is its approval",
            now,
        )
        done = proposals_decide.approve(
            made,
            (),
            now,
            self.config.timezone,
            self.plan_task,
            owner=self.config.get("core", "owner"),
            config=self.config,
        )
        done.text = "\n".join(t for t in (asked.text, done.text.replace("Done:", "Put back:", 1)) if t)
        done.stage = "undone"
        return made, done

    def take(self, decision: Decision, approval: Approval, now: datetime) -> DecisionResult:
        if decision.action == "confirm":  # per-item toggles: the chosen items, and not the others
            if not decision.items:
                return DecisionResult("Choose at least one item, or reject the proposal.")
            return proposals_decide.approve(
                approval,
                decision.items,
                now,
                self.config.timezone,
                self.plan_task,
                rest="reject",
                owner=self.config.get("core", "owner"),
                config=self.config,
            )
        if decision.action == "approve" and decision.text.strip():
            # "yes, but …" is a yes to the proposal as the user changed it: the cortex makes the change first
            return proposals_decide.modify(approval, decision, now, agreed=True)
        if decision.action == "approve":
            return proposals_decide.approve(
                approval,
                decision.items,
                now,
                self.config.timezone,
                self.plan_task,
                owner=self.config.get("core", "owner"),
                config=self.config,
            )
        if decision.action == "reject":
            return proposals_decide.reject(approval, decision.items, now)
        if decision.action == "modify":
            return proposals_decide.modify(approval, decision, now)
        return DecisionResult(f"Unknown action {decision.action!r}: use approve, modify or reject.")

    def plan_task(self, task: Task, now: datetime, seen: bool = False) -> None:
        """After an approved change; `seen`: it showed the task's date to the user (see JUST_SEEN)."""
        plan_task(task, now, windows_config(self.config), self.config.timezone, seen=seen)
