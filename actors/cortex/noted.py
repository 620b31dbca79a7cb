"""A kept item that triage already said what to do about, acted on without a second model call.

Triage reads every buffered item. For one that needs no plan it may give the line the user needs to hear now
and the one task the item asks for (actors/triage.note_of). The router sends such an item here unless its
context needs judgement (`judgement`): Wilson told the user about its thread within a day (a resend should
say only what changes), the task would repeat an open one or one waiting for the user's word (updating it is
the model's call), or the item is urgent while the user's quiet holds messages (only a model's own `urgent` may
break it). Then the fast role reads the item as before, and so it does when a handler refuses part of the note.

What triage said goes through the same handlers as a model's tool calls (actors/cortex/calls.handle_call): the
task is validated, steered by what Wilson learned and becomes a proposal the user approves; the line is surfaced
as a run's surface is, with the item's source named and its links defanged (actors/cortex/outcome.py).
"""

from __future__ import annotations

from datetime import UTC, datetime

from actors import tools
from actors.cortex.calls import RunOutcome, handle_call
from actors.cortex.told import told_before
from actors.proposals.rules import OPEN
from storage.models import Approval, ApprovalItem, Inbox


def triage_note(row: Inbox) -> dict | None:
    """The note triage left on a kept item that needs no plan: {"say"?, "task"?}, or None."""
    payload = row.payload if isinstance(row.payload, dict) else {}
    note = payload.get("note")
    if row.origin == "user" or payload.get("plan") is not False or not isinstance(note, dict):
        return None
    return note if note.get("say") or isinstance(note.get("task"), dict) else None


def judgement(row: Inbox, now: datetime, owner: str | None, quiet_hold=None) -> str:
    """Why an item with triage's note still needs the model ("" when the note stands). `quiet_hold(now)`: until
    when the user's quiet hours or mute hold messages (None when they don't): triage's line never breaks them by
    itself, so an urgent item while they hold goes to the model, which may flag it urgent as before."""
    if told_before(row, now, UTC):
        return "Wilson told the user about this thread within a day"
    task = (triage_note(row) or {}).get("task")
    same = tools.repeated("create_task", task, None, owner) if isinstance(task, dict) else None
    if same is not None:
        return f"the user already has a task like it (“{same.title}”): the model may update it instead"
    asked = waiting_like(task, now) if isinstance(task, dict) else None
    if asked is not None:
        return f"a proposal waiting for the user has a task like it (proposal {asked})"
    if row.priority <= 1 and quiet_hold is not None and quiet_hold(now) is not None:
        return "it is urgent and the user's quiet holds messages: the model judges whether it may wake them"
    return ""


LOOKED_AT = 50  # the newest proposed tasks still waiting for the user, for one that triage's task would repeat


def waiting_like(task: dict, now: datetime) -> int | None:
    """The open proposal whose undecided create_task is like `task` (its title), or None."""
    title = task.get("title")
    if not isinstance(title, str):
        return None
    waiting = (
        ApprovalItem.select(ApprovalItem.approval, ApprovalItem.args)
        .join(Approval)
        .where(
            Approval.status.in_(OPEN)
            & (Approval.expires_at > now)
            & (ApprovalItem.status == "pending")
            & (ApprovalItem.tool == "create_task")
        )
        .order_by(ApprovalItem.id.desc())
        .limit(LOOKED_AT)
    )
    return next(
        (
            item.approval_id
            for item in waiting
            if isinstance(item.args, dict) and tools.similar_titles(str(item.args.get("title") or ""), title)
        ),
        None,
    )


def act_on(row: Inbox, now: datetime, tz, owner: str | None, box=None) -> RunOutcome:
    """Triage's note as a run's outcome: the task proposed, the line surfaced (never flagged urgent: `judgement`
    leaves an urgent item to the model while the user's quiet holds messages, and outside it a priority-1 row
    is past the daily cap anyway). A part the handlers refuse or hold back (what Wilson learned may hold a task
    until the user is asked) is in `rejected_calls`: the caller then lets the model read the item instead."""
    note = triage_note(row) or {}
    outcome = RunOutcome()
    calls = []
    if isinstance(note.get("task"), dict):
        calls.append((tools.PROPOSE, {"changes": [{"action": "create_task", **note["task"]}]}))
    if note.get("say"):
        calls.append(
            (
                "surface",
                {
                    "text": note["say"],
                    "why": f"triage kept it at priority {row.priority} and said what the user needs to hear",
                },
            )
        )
    for name, args in calls:
        answer = handle_call(name, args, outcome, now, tz, origin=row.origin, owner=owner, box=box)
        problem = answer.get("error") if isinstance(answer, dict) else None
        if problem and not outcome.rejected_calls:
            outcome.rejected_calls.append((name, str(problem)))
    return outcome
