"""Undoing an approved proposal. An undo is itself a proposal, made by code from what the approved items
recorded when they ran: the user sees what would be put back and approves it like any other change.
Called by the gate inside the transaction of the user's "undo" decision."""

from __future__ import annotations

from datetime import datetime

from loguru import logger

from actors import tools
from actors.proposals.make import propose_undo
from actors.proposals.rules import OPEN, DecisionResult, may_decide, not_theirs
from actors.proposals.words import headline
from actors.tools.restore import task_before, topic_before
from storage.models import Approval, ApprovalItem, Schedule, Task, Topic
from wilson.kernel.messages import Decision

LATEST = 0  # an "undo" that names no proposal: the latest one the person approved
UNDOES = "undoes"  # beside an undo item's arguments: the ids of the items it puts back (no tool reads it)

TASK_CHANGES = ("update_task", "snooze_task", "cancel_task", "complete_task", "restore_task")
TOPIC_CHANGES = ("rename_topic", "update_topic", "close_topic", "restore_topic")
FOR_GOOD = {"send_email": "a sent mail can't be called back", "forget_memory": "a forgotten memory stays forgotten"}
NOT_KEPT = "I didn't keep what it replaced"


def _task_inverse(item: ApprovalItem, result: dict) -> tuple[str, dict] | str:
    task = Task.get_or_none(Task.id == result.get("task_id"))
    if task is None:
        return "the task is gone"
    if item.tool == "create_task":
        if task.status not in ("open", "snoozed"):
            return f"it has been marked {task.status} since"
        return "cancel_task", {"task_id": task.id}
    before = result.get("before")
    if not before:
        return NOT_KEPT
    if task_before(task, before) == before:
        return "it is as it was already"
    return "restore_task", {"task_id": task.id, "before": before}


def _topic_inverse(item: ApprovalItem, result: dict) -> tuple[str, dict] | str:
    topic = Topic.get_or_none(Topic.id == result.get("topic_id"))
    if topic is None:
        return "the topic is gone"
    if item.tool == "create_topic":
        if topic.status != "active":
            return "it has been closed since"
        return "close_topic", {"topic_id": topic.id}
    before = result.get("before")
    if not before:
        return NOT_KEPT
    if item.tool == "restore_topic" and before.get("status") == "closed":
        if topic.status != "active":
            return "it has been closed since"
        return "close_topic", {"topic_id": topic.id}  # closed again, its open tasks dropped and its thread closed
    if topic_before(topic, before) == before:
        return "it is as it was already"
    return "restore_topic", {"topic_id": topic.id, "before": before, "reopen": result.get("cancelled_ids") or []}


def _reminder_inverse(item: ApprovalItem, result: dict, now: datetime) -> tuple[str, dict] | str:
    if item.tool == "cancel_reminder":
        row = Schedule.get_or_none(Schedule.id == result.get("reminder_id"))
        if row is None or row.enabled:
            return "it runs already" if row is not None else "the reminder is gone"
        if row.kind == "reminder":
            return "create_reminder", {"text": row.text, "cron": row.cron}
        if row.next_fire_at is None or row.next_fire_at <= now:
            return "its time has passed"
        return "remind", {"text": row.text, "at": row.next_fire_at.isoformat()}
    row = Schedule.get_or_none(Schedule.name == result.get("schedule"))
    if row is None or not row.enabled:
        return "it has gone off or stopped already"
    if isinstance(result.get("replaced"), dict):  # it replaced a reminder of the same words: that one again
        return "create_reminder", {"text": result["replaced"].get("text"), "cron": result["replaced"].get("cron")}
    return "cancel_reminder", {"reminder_id": row.id}


def inverse(item: ApprovalItem, now: datetime) -> tuple[str, dict] | str:
    """The change that undoes one executed item, as (tool, arguments); or why it cannot be undone, in words."""
    result = item.result if isinstance(item.result, dict) else {}
    if item.tool in FOR_GOOD:
        return FOR_GOOD[item.tool]
    if item.tool == "create_task" or item.tool in TASK_CHANGES:
        return _task_inverse(item, result)
    if item.tool == "create_topic" or item.tool in TOPIC_CHANGES:
        return _topic_inverse(item, result)
    if item.tool in ("create_reminder", "remind", "cancel_reminder"):
        return _reminder_inverse(item, result, now)
    if item.tool == "watch" and result.get("watching"):
        if result.get("before_every"):  # it was watched already: how often, as it was
            return "watch", {"url": result["watching"], "every": result["before_every"]}
        return "unwatch", {"url": result["watching"]}
    if item.tool == "adopt_learning" and result.get("change"):  # a behaviour change approved: taken back
        if result.get("on") == result.get("was_on"):
            return "it was so already"
        return "adopt_learning", {
            "change": result["change"],
            "says": result.get("says") or result["change"],
            "on": not result.get("on"),
        }
    if item.tool == "unwatch" and result.get("stopped"):
        return "watch", {"url": result["stopped"], **({"every": result["every"]} if result.get("every") else {})}
    return "I can't undo this kind of change"


def inverse_or_why(item: ApprovalItem, now: datetime) -> tuple[str, dict] | str:
    """`inverse`, with a record it cannot read (a result of an unexpected shape) as a reason, never an error: it
    runs inside a decision's transaction, which must not fail for it."""
    try:
        return inverse(item, now)
    except Exception as exc:  # noqa: BLE001
        logger.warning(
            "item {} of proposal {}: its record cannot be read for an undo: {}: {}",
            item.id,
            item.approval_id,
            type(exc).__name__,
            exc,
        )
        return "I can't read what it recorded"


def undoable(items: list[ApprovalItem], now: datetime) -> bool:
    """Whether any of these executed items can be put back (its receipt then offers to)."""
    return any(not isinstance(inverse_or_why(item, now), str) for item in items)


def _within_closed_topics(changes: list[tuple[str, dict]]) -> list[tuple[str, dict]]:
    """Without dropping one by one the tasks of a topic the same undo closes: closing it drops them (and the
    close then undoes the items that made them)."""
    closing = {args["topic_id"]: args for name, args in changes if name == "close_topic"}
    if not closing:
        return changes
    inside = {
        t.id: t.topic_id
        for t in Task.select(Task.id, Task.topic).where(Task.topic.in_(list(closing)) & (Task.status == "open"))
    }
    kept = []
    for name, args in changes:
        if name == "cancel_task" and args["task_id"] in inside:
            closing[inside[args["task_id"]]][UNDOES] += args[UNDOES]
        else:
            kept.append((name, args))
    return kept


def _undoes(item: ApprovalItem) -> list[int]:
    """The items of the undone proposal an item of an undo puts back."""
    undoes = (item.args or {}).get(UNDOES)
    return [i for i in undoes if isinstance(i, int)] if isinstance(undoes, list) else []


def latest_approved(user_id: str, owner: str | None) -> Approval | None:
    """The last proposal this person approved that changed something: their own first (an owner who decides
    for everyone means their own change by "undo", not a friend's)."""
    done = list(
        Approval.select()
        .join(ApprovalItem)
        .where(Approval.status.in_(("approved", "partial")) & (ApprovalItem.status == "executed"))
        .order_by(Approval.decided_at.desc(), Approval.id.desc())
        .distinct()
        .limit(50)
    )
    return next((a for a in done if str(a.approver) == str(user_id)), None) or next(
        (a for a in done if may_decide(user_id, a, owner)), None
    )


def _standing(approval: Approval) -> Approval:
    """The proposal that stands for this one now: a modified or revived one is replaced by another."""
    seen = set()
    while approval.superseded_by and approval.id not in seen:
        seen.add(approval.id)
        approval = Approval.get_or_none(Approval.id == approval.superseded_by) or approval
    return approval


def _in_force(approval: Approval, depth: int = 0) -> bool:
    """Whether what this approved proposal did still stands: not put back by an approved undo of it that stands
    itself (an undo undone is a redo)."""
    if depth > 10:
        return True
    _, undos = _undo_key(approval.id)
    for asked in undos:
        standing = _standing(asked)
        if standing.items.where(ApprovalItem.status == "executed").exists() and _in_force(standing, depth + 1):
            return False
    return True


def _undo_key(approval_id: int) -> tuple[str, list[Approval]]:
    """The key of a new undo of this proposal (`rules.undoes` reads it), and the undos asked for before (one
    may have been turned down)."""
    first = f"undo:{approval_id}"
    earlier = list(
        Approval.select()
        .where((Approval.idempotency_key == first) | Approval.idempotency_key.startswith(first + ":"))
        .order_by(Approval.id)
    )
    return (f"{first}:{len(earlier) + 1}" if earlier else first), earlier


def undo(decision: Decision, approval: Approval | None, now: datetime, config, owner: str | None) -> DecisionResult:
    """Propose putting back what an approved proposal changed (its executed items, last first)."""
    if decision.approval_id == LATEST:
        approval = latest_approved(decision.user_id, owner)
        if approval is None:
            return DecisionResult("There is nothing I changed for you to undo.")
    problem = not_theirs(decision, approval, owner, "undo it")
    if problem:
        return DecisionResult(problem)
    done = list(approval.items.where(ApprovalItem.status == "executed").order_by(ApprovalItem.position.desc()))
    if not done:
        if approval.status in OPEN:
            return DecisionResult(f"Nothing of proposal {approval.id} is done yet: reject it to drop it.")
        return DecisionResult(f"Nothing of proposal {approval.id} was done, so there is nothing to undo.")
    key, earlier = _undo_key(approval.id)
    undone, by = set(), None
    for asked in earlier:
        standing = _standing(asked)
        if standing.status in OPEN:
            return DecisionResult(f"I've already proposed undoing {approval.id}: see proposal {standing.id}.")
        if _in_force(standing):
            for item in standing.items.where(ApprovalItem.status == "executed"):
                undone.update(_undoes(item))
                by = standing
    done = [i for i in done if i.id not in undone]  # the rest of a partly approved proposal, approved later
    if not done:
        return DecisionResult(f"Proposal {approval.id} was undone already, by proposal {by.id}.")
    tz, box = config.timezone, tools.toolbox(config)
    changes, kept = [], []
    for item in done:
        undoing = inverse_or_why(item, now)
        problem = (
            undoing
            if isinstance(undoing, str)
            else tools.validate_mutation(undoing[0], undoing[1], tz, approval.approver, owner, now, box=box)
        )
        if problem:
            kept.append(f"• {headline(item.description)} ({problem})")
        else:
            changes.append((undoing[0], {**undoing[1], UNDOES: [item.id]}))
    if not changes:
        return DecisionResult(f"I can't undo proposal {approval.id}:\n" + "\n".join(kept))
    changes = _within_closed_topics(changes)
    made = propose_undo(approval, changes, now, config, key=key, owner=owner, channel=decision.channel)
    text = ""
    if kept:
        text = f"Some of proposal {approval.id} stays as it is:\n" + "\n".join(kept)
    return DecisionResult(text, stage="undo", made=made.id)
