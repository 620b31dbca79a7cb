"""The user's own commands that name their target: "done 3", "snooze 3 2d", "drop 3", "stop 4" (and the
Done, Snooze, Drop and Stop buttons under a follow-up, which send the same words). The command is the
approval (DESIGN principle 17): the gate records it as a proposal made by code, approves it in the same
transaction and answers with a receipt that can be undone. Words Wilson has to interpret ("done with the
passport") are not commands: they still become a proposal.

`parse` and `change` are pure; `run` is called by the gate inside its decision's transaction."""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from actors import tools
from actors.proposals.decide import approve
from actors.proposals.rules import DecisionResult, clipped
from actors.shared.windows import due_date
from actors.tools.common import user_reminders, visible_to
from storage import trace
from storage.models import Approval, ApprovalItem, Schedule, Task
from wilson.kernel.clock import parse_duration
from wilson.kernel.messages import Decision
from wilson.kernel.timeparse import date_or_datetime

COMMAND = "do"  # a decision row's action: its text is the command
VERBS = {
    "done": "complete_task",
    "snooze": "snooze_task",
    "drop": "cancel_task",
    "stop": "cancel_reminder",
    "move": "update_task",
}
DEFAULT_SNOOZE = "1d"
_WORDS = re.compile(
    r"(?i)^\s*/?(done|snooze|drop|stop|move)\s+#?(\d{1,9})(?:\s+(?:for\s+|until\s+|to\s+)?(\S+))?"
    r"\s*[.!]?\s*$"
)


@dataclass(frozen=True)
class Command:
    verb: str
    target: int
    when: str | None = None  # snooze: a duration ("2d") or a date

    @property
    def text(self) -> str:
        return " ".join([self.verb, str(self.target)] + ([self.when] if self.when else []))


def parse(text: str | None) -> Command | None:
    """The command these words are, or None: only the short forms that name a number ("done with the
    passport" is a sentence for Wilson, "snooze 3 tomorrow please" too)."""
    match = _WORDS.match(text or "")
    if match is None:
        return None
    verb, target, when = match.group(1).lower(), int(match.group(2)), match.group(3)
    if (verb == "move" and when is None) or (verb not in ("move", "snooze") and when is not None):
        return None  # "move 3" needs its new date; only snooze and move take one
    return Command(verb, target, when)


def until(when: str | None, now: datetime, tz) -> str:
    """A snooze's end as the tool takes it: a duration from now, or a date or moment as written.
    ValueError, in words for the user, for anything else."""
    when = (when or DEFAULT_SNOOZE).strip()
    try:
        span = parse_duration(when)
    except ValueError:
        try:
            moment = date_or_datetime(when)
        except ValueError:
            raise ValueError(f"“{when[:20]}” is not a time I can read: try 2d, 12h or a date like 2027-03-01") from None
        return moment.isoformat()
    if span < timedelta(minutes=1):
        raise ValueError("give it at least a minute, e.g. snooze 3 2h")
    end = now.astimezone(tz) + span
    return (
        end.date().isoformat()
        if span >= timedelta(days=1) and span.total_seconds() % 86400 == 0
        else end.replace(microsecond=0).isoformat()
    )


def change(command: Command, now: datetime, tz) -> tuple[str, dict]:
    """The tool call a command asks for; ValueError in words when it cannot be read."""
    tool = VERBS[command.verb]
    if tool == "cancel_reminder":
        return tool, {"reminder_id": command.target}
    if tool == "snooze_task":
        return tool, {"task_id": command.target, "until": until(command.when, now, tz)}
    if tool == "update_task":
        return tool, {"task_id": command.target, "due": until(command.when, now, tz)}
    return tool, {"task_id": command.target}


def _missing(command: Command) -> str | None:
    """A plainer answer than the tool's for a number that names nothing of the kind."""
    if command.verb == "stop":
        if (
            Schedule.get_or_none((Schedule.id == command.target) & user_reminders() & (Schedule.enabled == True))
            is None
        ):
            return f"I have no reminder {command.target} (`reminders` lists them)."
        return None
    task = Task.get_or_none(Task.id == command.target)
    if task is None:
        return f"I have no task {command.target} (`tasks` lists them)."
    if command.verb == "done" and task.status == "done":
        return f"“{task.title}” is done already."
    if task.status in ("done", "cancelled"):
        return f"“{task.title}” is {'dropped' if task.status == 'cancelled' else task.status} already."
    return None


def run(
    decision: Decision, now: datetime, config, owner: str | None, plan_task
) -> tuple[Approval | None, DecisionResult]:
    """Take the user's command as their approval: a proposal made by code, approved at once, exactly once
    (the decision row is claimed in this transaction). Returns (that proposal, the receipt)."""
    command = parse(decision.text)
    if command is None:
        return None, DecisionResult(
            "I can't read that command: try done 3, snooze 3 2d, move 3 2027-03-01, drop 3 or stop 4."
        )
    tz = config.timezone
    problem = _missing(command)
    try:
        tool, args = change(command, now, tz)
    except ValueError as exc:
        return None, DecisionResult(str(exc)[:1].upper() + str(exc)[1:] + ".")
    box = tools.toolbox(config)
    problem = problem or tools.validate_mutation(tool, args, tz, decision.user_id, owner, now, box=box)
    if problem:
        return None, DecisionResult(problem[:1].upper() + problem[1:])
    approver = str(decision.user_id)
    approval = Approval.create(
        trace_id=trace.new_trace_id(),
        approver=approver,
        channel=decision.channel,
        summary=command.text,
        nonce=secrets.token_hex(4),
        created_at=now,
        presented_at=now,
        expires_at=now + timedelta(minutes=1),
        idempotency_key=f"command:{secrets.token_hex(8)}",
        reason=clipped(f"because you said “{command.text}”"),
    )
    ApprovalItem.create(
        approval=approval,
        position=1,
        tool=tool,
        args=args,
        description=tools.describe_item(tool, args, tz, approver, owner, box=box),
    )
    trace.record(
        approval.trace_id,
        "command",
        "approval",
        f"“{command.text}” from {decision.channel}: your own command, taken as your approval (proposal {approval.id})",
        now,
    )
    return approval, approve(approval, (), now, tz, plan_task, owner=config.get("core", "owner"), config=config)


def follow_up_buttons(task_ids) -> list[dict]:
    """The one-tap answers under a follow-up about these tasks: done, snooze a day, drop, each a command, and
    "help" (words for Wilson, not a change)."""
    out = []
    for task_id in task_ids or []:
        if isinstance(task_id, int) and not isinstance(task_id, bool):
            task = Task.get_or_none(Task.id == task_id)
            if task is not None and task.status in ("open", "snoozed"):
                out.append(
                    {
                        "task_id": task_id,
                        "title": task.title,
                        "commands": [
                            f"done {task_id}",
                            f"snooze {task_id} {DEFAULT_SNOOZE}",
                            f"drop {task_id}",
                            f"help {task_id}",
                        ],
                    }
                )
    return out


# "help 3", "help me with 3": the escalation's fourth choice. Not a change, so not a command: it becomes the
# user's words for Wilson, naming the task (`help_words`), answered as any message is.
_HELP = re.compile(r"(?i)^\s*/?help\s+(?:me\s+with\s+)?#?(\d{1,9})\s*[.!?]?\s*$")


def help_target(text: str | None) -> int | None:
    """The task "help 3" asks help with, or None for any other words."""
    match = _HELP.match(text or "")
    return int(match.group(1)) if match else None


def help_words(task_id: int, tz, user_id: str | None = None, owner: str | None = None) -> str:
    """What "help 3" says to Wilson: a request naming the task, its date and its topic, so that the answer is
    about that task. ValueError in words for the user when there is no such open task of theirs."""
    task = Task.get_or_none((Task.id == task_id) & visible_to(Task, user_id, owner))
    if task is None:
        raise ValueError(f"I have no task {task_id} (`tasks` lists them).")
    if task.status not in ("open", "snoozed"):
        state = "dropped" if task.status == "cancelled" else task.status
        raise ValueError(f"“{task.title}” is {state} already.")
    about = []
    if task.due is not None:
        if task.due_is_date:
            day = due_date(task.due, tz)
            about.append(f"due {day:%a} {day.day} {day:%b}")
        else:
            due = task.due.astimezone(tz)
            about.append(f"due {due:%a} {due.day} {due:%b %H:%M}")
    if task.topic_id:
        about.append(f"for {task.topic.title}")
    return f"Help me with {task.title}" + (f" ({', '.join(about)})" if about else "") + "."
