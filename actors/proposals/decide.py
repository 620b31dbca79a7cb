"""Deciding a proposal: approve (each chosen item executed exactly once, in the transaction that marks it; one
that calls another program is only marked "calling" here, and called by the gate after the commit),
reject, modify (the user's words handed back to the cortex), revive an expired one, and refuse an answer
that cannot be taken. Called by the gate inside its decision's transaction."""

from __future__ import annotations

from datetime import datetime

from actors import tools
from actors.proposals.make import copy_proposal
from actors.proposals.rules import (
    OPEN,
    DecisionResult,
    NoLongerOpen,
    not_theirs,
    selected,
    settle_status,
    undoes,
    why_not,
)
from actors.proposals.undo import undoable
from actors.proposals.words import headline
from storage import inbox
from storage.db import database
from storage.models import Approval, ApprovalItem, Feedback, Task
from wilson.kernel.messages import Decision


def refuse(
    decision: Decision, approval: Approval | None, now: datetime, tz=None, owner: str | None = None
) -> tuple[str | None, bool]:
    """check(), with what a refusal writes: a proposal whose time is up is marked expired, and this answer
    is the notice of it (the sweep does not tell them twice) unless they were told already. Returns (why the
    decision cannot be taken or None, whether the answer settles the proposal's message)."""
    problem, lapsed = why_not(decision, approval, now, tz, owner)
    if problem is None or approval is None:
        return problem, False
    if lapsed:
        Approval.update(status="expired", decided_at=now).where(
            (Approval.id == approval.id) & Approval.status.in_(OPEN)
        ).execute()
    # the row knows whether it is expired (the sweep may have marked it), the object read before does not
    expired = False
    if Approval.get_by_id(approval.id).status == "expired":
        expired = bool(
            Approval.update(expired_notice_at=now)
            .where((Approval.id == approval.id) & Approval.expired_notice_at.is_null())
            .execute()
        )
    return problem, expired


def revive(decision: Decision, approval: Approval | None, now: datetime, config, owner) -> DecisionResult:
    """Bring an expired proposal back as a new one (its pending items, a fresh expiry), once."""
    problem = not_theirs(decision, approval, owner, "bring it back")
    if problem:
        return DecisionResult(problem)
    Approval.update(status="expired", decided_at=now).where(
        (Approval.id == approval.id) & Approval.status.in_(OPEN) & (Approval.expires_at <= now)
    ).execute()
    approval = Approval.get_by_id(approval.id)
    if approval.status in OPEN:
        return DecisionResult(f"Proposal {approval.id} is still waiting for you; approve, modify or reject it.")
    if approval.status != "expired":
        return DecisionResult(f"Proposal {approval.id} was {approval.status}; there is nothing to bring back.")
    if approval.superseded_by:
        return DecisionResult(f"Proposal {approval.id} is already back, as proposal {approval.superseded_by}.")
    items = list(approval.items.where(ApprovalItem.status == "pending").order_by(ApprovalItem.position))
    if not items:
        return DecisionResult(f"Nothing of proposal {approval.id} is left to bring back.")
    moot = tools.moot_at([(i.tool, i.args) for i in items], config.timezone)
    if moot is not None and moot <= now:
        return DecisionResult(
            f"Proposal {approval.id}'s time has passed, so bringing it back as it was would not "
            "help. Ask me again with a new time if you still want it."
        )
    again = copy_proposal(approval, items, now, config, key=f"revive:{approval.id}", reason=approval.reason)
    Approval.update(expired_notice_at=now).where(
        (Approval.id == approval.id) & Approval.expired_notice_at.is_null()
    ).execute()
    Feedback.create(approval_id=approval.id, kind="revived", value=str(again.id), at=now)
    return DecisionResult("", stage="revived", made=again.id)


def hold_open(approval: Approval, now: datetime) -> None:
    """Inside the decision's transaction: lock the proposal's row, and make sure it is still open.

    A replacement committed by the cortex after `check()` read the row would otherwise be
    overwritten by this decision."""
    held = Approval.update(decided_at=now).where((Approval.id == approval.id) & Approval.status.in_(OPEN)).execute()
    if not held:
        raise NoLongerOpen()


def approve(
    approval: Approval,
    positions: tuple[int, ...],
    now: datetime,
    tz,
    plan_task,
    rest: str | None = None,
    owner: str | None = None,
    config=None,
) -> DecisionResult:
    """Execute the chosen items exactly once, in one transaction; `rest="reject"` rejects the items not
    chosen in the same transaction (a confirm after per-item toggles: these, and not the others).
    What the items create belongs to the approver; `owner` (the configured one) sees every topic;
    `config` says which skills are on (an item of a skill turned off fails)."""
    executed, failed, task_ids, left_out, deliveries, done, calls = [], [], [], [], [], [], []
    seen: set[int] = set()
    created_topics: dict = {}
    with database.atomic():
        hold_open(approval, now)
        for item in selected(approval, positions):
            if tools.calls_outside(
                item.tool, config
            ):  # called by the gate after this commits (actors/proposals/calls.py)
                if (
                    ApprovalItem.update(status="calling")
                    .where((ApprovalItem.id == item.id) & (ApprovalItem.status == "pending"))
                    .execute()
                ):
                    calls.append(item.id)
                continue
            claimed = (
                ApprovalItem.update(status="executing")
                .where((ApprovalItem.id == item.id) & (ApprovalItem.status == "pending"))
                .execute()
            )
            if not claimed:
                continue
            try:
                with database.atomic():
                    result, sent = tools.execute_approved(
                        item, approval.approver, now, tz, created_topics, owner=owner, config=config
                    )
                deliveries += sent
            except Exception as exc:  # one broken item must not undo the others
                ApprovalItem.update(status="failed", result={"error": str(exc)}).where(
                    ApprovalItem.id == item.id
                ).execute()
                failed.append(f"{headline(item.description)} ({exc})")
                continue
            ApprovalItem.update(status="executed", result=result, executed_at=now).where(
                ApprovalItem.id == item.id
            ).execute()
            # what the change answered, when its tool says something the user should read (an MCP server's reply)
            told = result.get("told") if isinstance(result.get("told"), str) else ""
            executed.append(headline(item.description) + (f"\n  {told}" if told else ""))
            item.result = result  # as just written: what says whether it can be undone
            done.append(item)
            if "task_id" in result:
                task_ids.append(result["task_id"])
                if item.tool == "create_task" or (item.tool == "update_task" and "due" in (item.args or {})):
                    seen.add(result["task_id"])  # the user has just read its date in the proposal
            task_ids += result.get("task_ids") or []  # the tasks an undo reopened with their topic
        for task_id in task_ids:
            plan_task(Task.get_by_id(task_id), now, seen=task_id in seen)
        if rest == "reject" and (executed or failed or calls):
            left_out = selected(approval, ())
            ApprovalItem.update(status="rejected").where(
                ApprovalItem.id.in_([i.id for i in left_out]) & (ApprovalItem.status == "pending")
            ).execute()
        status = settle_status(approval.id)
        Approval.update(status=status, decided_at=now).where(Approval.id == approval.id).execute()
        Feedback.create(approval_id=approval.id, kind="approved", value=str(len(executed)), at=now)
        if left_out:
            Feedback.create(
                approval_id=approval.id, kind="rejected", value=",".join(str(i.position) for i in left_out), at=now
            )
    if not executed and not failed and not calls:
        return DecisionResult(f"Already done: nothing left to approve in proposal {approval.id}.")
    text = "Done:\n" + "\n".join(f"✓ {d}" for d in executed) if executed else ""
    if failed:
        text += ("\n" if text else "") + "Could not do:\n" + "\n".join(f"! {d}" for d in failed)
    if left_out:
        text += "\nLeft out, as you chose:\n" + "\n".join(f"✗ {headline(i.description)}" for i in left_out)
    if status == "partial":
        text += f"\nStill waiting on the rest of proposal {approval.id}."
    return DecisionResult(
        text.lstrip("\n"),
        settled=status != "partial",
        stage="approved",
        task_ids=task_ids,
        deliveries=deliveries,
        undoable=undoable(done, now),
        calls=calls,
    )


def reject(approval: Approval, positions: tuple[int, ...], now: datetime) -> DecisionResult:
    with database.atomic():
        hold_open(approval, now)
        items = selected(approval, positions)
        ApprovalItem.update(status="rejected").where(
            ApprovalItem.id.in_([i.id for i in items]) & (ApprovalItem.status == "pending")
        ).execute()
        status = settle_status(approval.id)
        Approval.update(status=status, decided_at=now).where(Approval.id == approval.id).execute()
        Feedback.create(
            approval_id=approval.id, kind="rejected", value=",".join(str(i.position) for i in items), at=now
        )
    if not items:
        return DecisionResult(f"Nothing left to reject in proposal {approval.id}.")
    text = "Rejected, nothing changed:\n" + "\n".join(f"✗ {headline(i.description)}" for i in items)
    if status == "partial":
        text += f"\nThe rest of proposal {approval.id} still waits for you."
    return DecisionResult(text, settled=status != "partial", stage="rejected")


def modify(approval: Approval, decision: Decision, now: datetime, agreed: bool = False) -> DecisionResult:
    """Hand the user's words back to the cortex, which proposes a replacement; `agreed`: the words came with a
    yes ("yes, but the forms by the 23rd"), so the replacement is approved as it is made (actors/cortex/outcome.py)."""
    undone = undoes(approval)
    if undone:
        return DecisionResult(
            f"Proposal {approval.id} puts back what proposal {undone} changed, so it "
            "can't be reworded: approve or reject it."
        )
    if not decision.text.strip():
        return DecisionResult(
            f"What should I change in proposal {approval.id}? "
            f"Tell me, e.g. “modify {approval.id} book flights by Feb 1”.",
            stage="asked",
        )
    row = inbox.add(
        source=decision.channel,
        text=decision.text,
        priority=0,
        at=now,
        kind="modify",
        origin="user",
        payload={"approval_id": approval.id, **({"agreed": True} if agreed else {})},
        user_id=str(decision.user_id),
        reply_channel=decision.channel,
        trace_id=approval.trace_id,
    )
    Feedback.create(approval_id=approval.id, kind="modified", value=decision.text[:200], at=now)
    return DecisionResult("", stage="modify", inbox_id=row.id if row else None)
