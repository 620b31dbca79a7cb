"""A kept item that triage already said what to do about, acted on without a second model call.

Triage reads every buffered item. For one that needs no plan it may give the line the user needs to hear now
and the one task the item asks for (actors/triage.note_of). The router sends such an item here unless its
context needs judgement (`judgement`): Wilson told the user about its thread within a day (a resend should
say only what changes), or the task would repeat an open one (updating that one is the model's call). Then the
fast role reads the item as before.

What triage said goes through the same handlers as a model's tool calls (actors/cortex/calls.handle_call): the
task is validated, steered by what Wilson learned and becomes a proposal the user approves; the line is surfaced
as a run's surface is, with the item's source named and its links defanged (actors/cortex/outcome.py).
"""

from __future__ import annotations

from datetime import UTC, datetime

from actors import tools
from actors.cortex.calls import RunOutcome, handle_call
from actors.cortex.told import told_before
from storage.models import Inbox


def triage_note(row: Inbox) -> dict | None:
    """The note triage left on a kept item that needs no plan: {"say"?, "task"?}, or None."""
    payload = row.payload if isinstance(row.payload, dict) else {}
    note = payload.get("note")
    if row.origin == "user" or payload.get("plan") is not False or not isinstance(note, dict):
        return None
    return note if note.get("say") or isinstance(note.get("task"), dict) else None


def judgement(row: Inbox, now: datetime, owner: str | None) -> str:
    """Why an item with triage's note still needs the model ("" when the note stands)."""
    if told_before(row, now, UTC):
        return "Wilson told the user about this thread within a day"
    task = (triage_note(row) or {}).get("task")
    same = tools.repeated("create_task", task, None, owner) if isinstance(task, dict) else None
    if same is not None:
        return f"the user already has a task like it (“{same.title}”): the model may update it instead"
    return ""


def act_on(row: Inbox, now: datetime, tz, owner: str | None, box=None) -> RunOutcome:
    """Triage's note as a run's outcome: the task proposed, the line surfaced (urgent for a priority-1 item).
    A part the handlers refuse is in `rejected_calls`: the caller then lets the model read the item instead."""
    note = triage_note(row) or {}
    outcome = RunOutcome()
    task = note.get("task")
    if isinstance(task, dict):
        handle_call(tools.PROPOSE, {"changes": [{"action": "create_task", **task}]}, outcome, now, tz,
                    origin=row.origin, owner=owner, box=box)
    if note.get("say"):
        why = f"triage kept it at priority {row.priority} and said what the user needs to hear"
        handle_call("surface", {"text": note["say"], "why": why, "urgent": row.priority == 1}, outcome, now, tz,
                    origin=row.origin, owner=owner, box=box)
    return outcome
