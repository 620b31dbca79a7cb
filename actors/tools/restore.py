"""Putting a task or topic back as it was before an approved change: what each change records of the
fields it is about to overwrite (`task_before`, `topic_before`), and the two tools an undo proposes
to restore them (actors/proposals/undo.py). No model is offered these tools: an undo is asked for
by the user in words or with a button, and is itself a proposal the user approves."""

from __future__ import annotations

from datetime import datetime

from actors.shared.schedule_rows import add_once, disable_snoozes
from actors.tools.common import LIMITS, BuiltinTool, I, _obj, show_when, valid_windows, visible_to
from storage.models import Task, TaskStatus, Topic, TopicStatus
from wilson.kernel.clock import as_utc

TASK_FIELDS = ("title", "notes", "due", "escalation", "status", "snoozed_until")
TOPIC_FIELDS = ("title", "notes", "starts", "ends", "status")
OBJECT = {"type": "object"}
IDS = {"type": "array", "items": {"type": "integer"}}


def _moment(value: datetime | None) -> str | None:
    return as_utc(value).isoformat() if value is not None else None


def _read_moment(value) -> datetime | None:
    return as_utc(datetime.fromisoformat(value)) if value else None


def task_before(task: Task, fields) -> dict:
    """The task's `fields` as they are now, in JSON, to be stored with the change that overwrites them."""
    values = {
        "title": task.title,
        "notes": task.notes,
        "due": [_moment(task.due), bool(task.due_is_date)],
        "escalation": task.escalation,
        "status": task.status,
        "snoozed_until": _moment(task.snoozed_until),
    }
    return {field: values[field] for field in fields}


def topic_before(topic: Topic, fields) -> dict:
    values = {
        "title": topic.title,
        "notes": topic.notes,
        "starts": _moment(topic.starts),
        "ends": _moment(topic.ends),
        "status": topic.status,
    }
    return {field: values[field] for field in fields}


def _moment_or_none(value) -> bool:
    if value is None:
        return True
    try:
        _read_moment(value)
    except (TypeError, ValueError):
        return False
    return True


def _well_formed(before, fields, statuses) -> str | None:
    """Why a snapshot cannot be put back as it is (None when it can): every value of the shape it was kept in."""
    if not isinstance(before, dict) or not before or not set(before) <= set(fields):
        return f"before must name some of {', '.join(fields)}"
    due = before.get("due", [None, False])
    if not (isinstance(due, list) and len(due) == 2 and _moment_or_none(due[0]) and isinstance(due[1], bool)):
        return "before.due must be [an ISO moment or null, whether it is a date]"
    if not all(_moment_or_none(before.get(key)) for key in ("snoozed_until", "starts", "ends")):
        return "before holds a moment that is not ISO"
    if "status" in before and before["status"] not in statuses:
        return f"before.status must be one of {', '.join(statuses)}"
    if "title" in before and not (isinstance(before["title"], str) and 0 < len(before["title"]) <= LIMITS["title"]):
        return "before.title must be a title"
    if "notes" in before and not (isinstance(before["notes"], str) and len(before["notes"]) <= LIMITS["notes"]):
        return "before.notes must be text"
    escalation = before.get("escalation")
    if escalation is not None and not (isinstance(escalation, list) and valid_windows(",".join(map(str, escalation)))):
        return "before.escalation must be follow-up windows"
    return None


def _day(value, tz) -> str:
    moment, is_date = value if isinstance(value, list) else (value, False)
    return show_when(_read_moment(moment), bool(is_date), tz)


def _back_to(before: dict, tz) -> str:
    """What a restore puts back, in words: "due back to Sun 10 Jan 2027, open again"."""
    parts = []
    if "title" in before:
        parts.append(f"title back to “{before['title']}”")
    if "due" in before:
        parts.append(f"due back to {_day(before['due'], tz)}" if before["due"][0] else "no due date again")
    for key, word in (("starts", "starts"), ("ends", "ends")):
        if key in before:
            parts.append(f"{word} back to {_day(before[key], tz)}" if before[key] else f"no {word} date again")
    if "notes" in before:
        parts.append("notes as they were")
    if "escalation" in before:
        parts.append("follow-ups as they were")
    status = before.get("status")
    if status in ("open", "active"):
        parts.append("open again")
    elif status in ("done", "cancelled", "closed"):
        parts.append({"done": "marked done again", "cancelled": "dropped again", "closed": "closed again"}[status])
    elif status == "snoozed":
        until = before.get("snoozed_until")
        parts.append(f"snoozed until {_day(until, tz)} again" if until else "snoozed again")
    return ", ".join(parts) or "as it was"


class _Restore(BuiltinTool):
    """A restore of one row (`model`, named by `key`) the asking person may see, from a snapshot of `fields`."""

    model: type[Task] | type[Topic] = Task
    key, fields, statuses = "task_id", TASK_FIELDS, tuple(s.value for s in TaskStatus)
    undo_only = True

    def validate(self, args, call):
        problem = super().validate(args, call) or _well_formed(args.get("before"), self.fields, self.statuses)
        if (
            problem is None
            and self.model.get_or_none(
                (self.model.id == args[self.key]) & visible_to(self.model, call.user_id, call.owner)
            )
            is None
        ):
            return f"no {self.model.__name__.lower()} {args[self.key]}"
        return problem


class RestoreTask(_Restore):
    name = "restore_task"
    description = "Put a task back as it was before an approved change (an undo)."
    parameters = _obj(["task_id", "before"], task_id=I, before=OBJECT)

    def describe(self, args, call):
        task = Task.get_or_none(Task.id == args.get("task_id"))
        label = task.title if task else f"task {args.get('task_id')}"
        return f"Undo: {label} — {_back_to(args.get('before') or {}, call.tz)}"

    def execute(self, args, call):
        task = Task.get_by_id(args["task_id"])
        before = args["before"]
        replaced = task_before(task, before)  # what this puts back is itself undoable
        for field in ("title", "notes", "escalation", "status"):
            if field in before:
                setattr(task, field, before[field])
        if "due" in before:
            task.due, task.due_is_date = _read_moment(before["due"][0]), bool(before["due"][1])
        if "snoozed_until" in before:
            task.snoozed_until = _read_moment(before["snoozed_until"])
        if task.status == "snoozed" and (task.snoozed_until is None or as_utc(task.snoozed_until) <= call.now):
            task.status, task.snoozed_until = "open", None  # its time to wake has passed: awake
        task.completed_at = (task.completed_at or call.now) if task.status == "done" else None
        task.save()
        _rearm_snooze(task, call.now, call.tz)
        return {"task_id": task.id, "before": replaced}  # the gate plans its follow-ups again


def _rearm_snooze(task: Task, now: datetime, tz) -> None:
    """A task asleep again wakes when it was to wake, once; a task awake gets no "is back, as you asked"."""
    disable_snoozes(task.id)
    if task.status == "snoozed" and task.snoozed_until is not None and as_utc(task.snoozed_until) > now:
        add_once(
            f"snooze:{task.id}:{as_utc(task.snoozed_until).isoformat()}",
            task.snoozed_until,
            f"“{task.title}” is back, as you asked",
            str(tz),
        )


class RestoreTopic(_Restore):
    name = "restore_topic"
    description = "Put a topic back as it was before an approved change (an undo), with the tasks it closed."
    parameters = _obj(["topic_id", "before"], topic_id=I, before=OBJECT, reopen=IDS)
    model, key, fields, statuses = Topic, "topic_id", TOPIC_FIELDS, tuple(s.value for s in TopicStatus)

    def validate(self, args, call):
        problem = super().validate(args, call)
        if problem is None and not all(isinstance(i, int) for i in args.get("reopen") or []):
            return "reopen must list task ids"
        return problem

    def describe(self, args, call):
        topic = Topic.get_or_none(Topic.id == args.get("topic_id"))
        label = topic.title if topic else f"topic {args.get('topic_id')}"
        reopen = len(args.get("reopen") or [])
        tasks = f" with its {reopen} task{'s' if reopen != 1 else ''}" if reopen else ""
        return f"Undo: {label} — {_back_to(args.get('before') or {}, call.tz)}{tasks}"

    def execute(self, args, call):
        topic = Topic.get_by_id(args["topic_id"])
        before = args["before"]
        replaced = topic_before(topic, before)
        for field in ("title", "notes", "status"):
            if field in before:
                setattr(topic, field, before[field])
        for field in ("starts", "ends"):
            if field in before:
                setattr(topic, field, _read_moment(before[field]))
        topic.closed_at = (topic.closed_at or call.now) if topic.status == "closed" else None
        topic.save()
        # only the tasks the close dropped, and only while nothing else has happened to them
        reopened = [
            t.id
            for t in Task.select(Task.id).where(
                Task.id.in_(args.get("reopen") or []) & (Task.topic == topic) & (Task.status == "cancelled")
            )
        ]
        Task.update(status="open").where(Task.id.in_(reopened)).execute()
        result = {"topic_id": topic.id, "task_ids": reopened, "before": replaced}
        if replaced.get("title") not in (None, topic.title):  # a forum thread is renamed as for rename_topic
            result["renamed"] = {"from": replaced["title"], "to": topic.title, "thread_ref": topic.thread_ref}
        return result
