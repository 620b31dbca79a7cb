"""The tasks-and-topics skill: list, create, change, snooze, drop and finish tasks; create, rename,
change and close topics (time-bound areas of the user's life). Each person's runs see their own
tasks and topics and those of a shared topic (`visible_to`); what an approval creates is the approver's.

Size: one skill: a short class per tool of the tasks-and-topics skill, alike in shape.
"""

from __future__ import annotations

from actors.shared.schedule_rows import add_once, disable_snoozes
from actors.shared.windows import parse_windows
from actors.tools.common import (
    BuiltinTool,
    EARLIEST_YEAR,
    I,
    LATEST_YEAR,
    S,
    WHEN,
    _find_topic,
    _obj,
    _said,
    _short,
    _text_arg,
    already,
    next_midnight,
    parse_when,
    reminder_at,
    repeated,
    show_span,
    show_when,
    task_view,
    topic_view,
    valid_windows,
    visible_to,
)
from actors.tools.restore import RestoreTask, RestoreTopic, task_before, topic_before
from storage.models import Task, Topic
from wilson.skills import Call, Skill


def _when(args: dict, key: str, call: Call) -> str:
    try:
        moment, is_date = parse_when(args.get(key), call.tz)
    except ValueError:
        return str(args.get(key))
    return show_when(moment, is_date, call.tz)


def _task(args: dict, call: Call) -> Task | None:
    """The task the call names, among those the asking person may see."""
    return Task.get_or_none((Task.id == args.get("task_id")) & visible_to(Task, call.user_id, call.owner))


def _topic(args: dict, call: Call) -> Topic | None:
    return Topic.get_or_none((Topic.id == args.get("topic_id")) & visible_to(Topic, call.user_id, call.owner))


class TaskTool(BuiltinTool):
    """A change to one task: a task the asking person may not see is answered as missing, so its
    title never reaches them through a proposal."""

    def validate(self, args, call):
        problem = super().validate(args, call)
        if problem is None and _task(args, call) is None:
            return f"no task {args.get('task_id')}"
        return problem


class TopicTool(BuiltinTool):
    def validate(self, args, call):
        problem = super().validate(args, call)
        if problem is None and _topic(args, call) is None:
            return f"no topic {args.get('topic_id')}"
        return problem


def _repeats(name: str, args: dict, call: Call) -> dict:
    repeat = repeated(name, args, call.user_id, call.owner)
    if repeat is None:
        return {}
    return {
        "repeats": {
            ("task_id" if isinstance(repeat, Task) else "topic_id"): repeat.id,
            "title": repeat.title,
            "note": "the user already has this; the proposal says so",
        }
    }


# Reads ------------------------------------------------------------------------------------
class ListTasks(BuiltinTool):
    name = "list_tasks"
    description = "List tasks, optionally by topic title or status (open, done)."
    parameters = _obj(topic=S, status=S)
    read_only = True

    def execute(self, args, call):
        query = (
            Task.select()
            .where(visible_to(Task, call.user_id, call.owner))
            .order_by(Task.due.is_null(), Task.due, Task.id)
        )
        status = _text_arg(args, "status") or "open"
        if status != "all":
            query = query.where(Task.status == status)
        if status == "done":  # what was finished lately, first: the list of done tasks only grows
            query = query.order_by(Task.completed_at.desc(nulls="LAST"), Task.id.desc())
        topic = _text_arg(args, "topic")
        if topic:
            query = query.join(Topic).where(Topic.title ** f"%{topic}%")
        return [task_view(t, call.tz) for t in query.limit(100)]


class ListTopics(BuiltinTool):
    name = "list_topics"
    description = "List topics, optionally by status (active, closed)."
    parameters = _obj(status=S)
    read_only = True

    def execute(self, args, call):
        query = Topic.select().where(visible_to(Topic, call.user_id, call.owner)).order_by(Topic.id)
        status = _text_arg(args, "status")
        if status:
            query = query.where(Topic.status == status)
        return [topic_view(t, call.tz) for t in query.limit(100)]


# Topics -------------------------------------------------------------------------------------
class CreateTopic(BuiltinTool):
    name = "create_topic"
    description = "Propose a new topic (a time-bound area of the user's life)."
    brief = "a time-bound area of the user's life"
    parameters = _obj(["title"], title=S, starts=WHEN, ends=WHEN, notes=S)
    dates = ("starts", "ends")

    def describe(self, args, call):
        span = f" ({show_span(args.get('starts'), args.get('ends'), call.tz)})" if args.get("starts") else ""
        return (
            f"New topic: {args.get('title')}{span}{already(self.name, args, call.tz, call.user_id, call.owner)}"
            f"{_said(args, 'notes', 'Notes')}"
        )

    def hints(self, args, call):
        return _repeats(self.name, args, call)

    def execute(self, args, call):
        starts, _ = parse_when(args.get("starts"), call.tz)
        ends, ends_is_date = parse_when(args.get("ends"), call.tz)
        if ends is not None and ends_is_date:
            ends = next_midnight(ends, call.tz)  # an all-day end date lasts through that day
        topic = Topic.create(
            title=args["title"],
            status="active",
            starts=starts,
            ends=ends,
            notes=args.get("notes") or "",
            created_at=call.now,
            owner_id=call.user_id,
        )
        call.scratch[topic.title.lower()] = topic  # a task later in the same proposal joins it
        return {"topic_id": topic.id}


class RenameTopic(TopicTool):
    name = "rename_topic"
    description = "Propose a new name for a topic."
    parameters = _obj(["topic_id", "title"], topic_id=I, title=S)

    def describe(self, args, call):
        topic = Topic.get_or_none(Topic.id == args.get("topic_id"))
        return f"Rename topic: {topic.title if topic else 'topic ' + str(args.get('topic_id'))} → “{args.get('title')}”"

    def execute(self, args, call):
        topic = Topic.get_by_id(args["topic_id"])
        before, topic.title = topic.title, args["title"]
        topic.save()
        # a channel that shows topics as threads (Telegram forum topics) renames its thread from this
        return {
            "topic_id": topic.id,
            "renamed": {"from": before, "to": topic.title, "thread_ref": topic.thread_ref},
            "before": {"title": before},
        }


class UpdateTopic(TopicTool):
    name = "update_topic"
    description = "Propose a change to a topic (e.g. new dates when the event moved)."
    brief = "e.g. new dates when the event moved"
    parameters = _obj(["topic_id"], topic_id=I, title=S, starts=WHEN, ends=WHEN, notes=S)
    dates = ("starts", "ends")

    def describe(self, args, call):
        topic = Topic.get_or_none(Topic.id == args.get("topic_id"))
        label = topic.title if topic else f"topic {args.get('topic_id')}"
        span = (
            show_span(args.get("starts"), args.get("ends"), call.tz) if args.get("starts") and args.get("ends") else ""
        )
        changes = [f"rename to “{args['title']}”"] if args.get("title") else []
        changes += (
            [f"dates {span}"] if span else [f"starts {_when(args, 'starts', call)}"] if args.get("starts") else []
        )
        changes += [f"ends {_when(args, 'ends', call)}"] if args.get("ends") and not span else []
        return f"Change topic: {label} — {', '.join(changes) or 'update notes'}{_said(args, 'notes', 'Notes')}"

    def execute(self, args, call):
        topic = Topic.get_by_id(args["topic_id"])
        before = topic_before(topic, [f for f in ("title", "notes", "starts", "ends") if args.get(f)])
        if args.get("title"):
            topic.title = args["title"]
        if args.get("notes"):
            topic.notes = args["notes"]
        if args.get("starts"):
            topic.starts, _ = parse_when(args["starts"], call.tz)
        if args.get("ends"):
            ends, ends_is_date = parse_when(args["ends"], call.tz)
            topic.ends = next_midnight(ends, call.tz) if ends_is_date else ends
        topic.save()
        return {"topic_id": topic.id, "before": before}


class CloseTopic(TopicTool):
    name = "close_topic"
    description = "Propose closing a topic."
    parameters = _obj(["topic_id"], topic_id=I)

    def describe(self, args, call):
        topic = Topic.get_or_none(Topic.id == args.get("topic_id"))
        if topic is None:
            return f"Close topic: topic {args.get('topic_id')}"
        still_open = topic.tasks.where(Task.status == "open").count()
        rest = f" (and drop its {still_open} open task{'s' if still_open != 1 else ''})" if still_open else ""
        return f"Close topic: {topic.title}{rest}"

    def execute(self, args, call):
        topic = Topic.get_by_id(args["topic_id"])
        before = topic_before(topic, ["status"])
        topic.status, topic.closed_at = "closed", call.now
        topic.save()
        # a closed topic's leftover tasks stop following the user around
        dropped = [t.id for t in Task.select(Task.id).where((Task.topic == topic) & (Task.status == "open"))]
        Task.update(status="cancelled", next_fire_at=None, next_window=None).where(Task.id.in_(dropped)).execute()
        return {"topic_id": topic.id, "tasks_cancelled": len(dropped), "cancelled_ids": dropped, "before": before}


# Tasks --------------------------------------------------------------------------------------
class CreateTask(BuiltinTool):
    name = "create_task"
    description = "Propose a task, optionally with a due date and a topic (by title)."
    brief = "topic by its title"
    parameters = _obj(["title"], title=S, due=WHEN, topic=S, notes=S, escalation=S)
    dates = ("due",)

    def validate(self, args, call):
        problem = BuiltinTool.validate(self, args, call)
        if problem is None and args.get("escalation") and not valid_windows(str(args["escalation"])):
            return f"escalation needs windows like 7d,1d,due,overdue — got {_short(args['escalation'])}"
        return problem

    def describe(self, args, call):
        due = f" — due {_when(args, 'due', call)}" if args.get("due") else ""
        topic = f" (in {args['topic']})" if args.get("topic") else ""
        if args.get("escalation") and args.get("due"):
            windows = parse_windows(str(args["escalation"]))
            ahead = [w for w in windows if w not in ("due", "overdue")]
            if ahead == ["1d"] and "due" not in windows:
                due += ", followed up only the day before (and once late)"
            elif ahead:
                due += f", followed up at {', '.join(ahead)}"
            elif "due" in windows:
                due += ", not followed up before its day"
            else:
                due += ", followed up only once it is late"
        return (
            f"New task: {args.get('title')}{due}{topic}"
            f"{already(self.name, args, call.tz, call.user_id, call.owner)}{_said(args, 'notes', 'Notes')}"
        )

    def hints(self, args, call):
        return _repeats(self.name, args, call)

    def execute(self, args, call):
        due, is_date = parse_when(args.get("due"), call.tz)
        # a task joins only a topic its approver can see
        topic = _find_topic(args.get("topic"), visible_to(Topic, call.user_id, call.owner), call.scratch)
        task = Task.create(
            title=args["title"],
            due=due,
            due_is_date=is_date,
            topic=topic,
            notes=args.get("notes") or "",
            # the user's own "don't bug me before the 19th": its follow-ups only from the day
            escalation=parse_windows(str(args["escalation"])) if args.get("escalation") else None,
            created_at=call.now,
            owner_id=call.user_id,
        )
        return {"task_id": task.id}


class UpdateTask(TaskTool):
    name = "update_task"
    description = 'Propose a change to a task; escalation lists when to follow up, e.g. "7d,1d,due,overdue".'
    brief = 'escalation: when to follow up, e.g. "7d,1d,due,overdue"'
    parameters = _obj(["task_id"], task_id=I, title=S, due=WHEN, notes=S, escalation=S)
    dates = ("due",)

    def validate(self, args, call):
        problem = BuiltinTool.validate(self, args, call)
        if problem is None and args.get("escalation") and not valid_windows(str(args["escalation"])):
            return f"escalation needs windows like 7d,1d,due,overdue — got {_short(args['escalation'])}"
        return problem or super().validate(args, call)

    def describe(self, args, call):
        task = Task.get_or_none(Task.id == args.get("task_id"))
        label = task.title if task else f"task {args.get('task_id')}"
        changes = []
        if args.get("title"):
            changes.append(f"rename to “{args['title']}”")
        if args.get("due"):
            changes.append(f"move due to {_when(args, 'due', call)}")
        if args.get("notes"):
            changes.append("update notes")
        if args.get("escalation"):
            changes.append(f"follow up at {args['escalation']}")
        return f"Change task: {label} — {', '.join(changes) or 'no change'}{_said(args, 'notes', 'Notes')}"

    def execute(self, args, call):
        task = Task.get_by_id(args["task_id"])
        before = task_before(task, [f for f in ("title", "notes", "due", "escalation") if args.get(f)])
        if args.get("title"):
            task.title = args["title"]
        if args.get("notes"):
            task.notes = args["notes"]
        if args.get("due"):
            task.due, task.due_is_date = parse_when(args["due"], call.tz)
        if args.get("escalation"):
            task.escalation = parse_windows(str(args["escalation"]))
        task.save()
        return {"task_id": task.id, "before": before}


class SnoozeTask(TaskTool):
    name = "snooze_task"
    description = (
        "Propose pausing a task (or the follow-up just sent about it) until a date or "
        "time; it comes back then with one follow-up."
    )
    brief = "pause it (or the follow-up just sent) until then; it comes back with one follow-up"
    parameters = _obj(["task_id", "until"], task_id=I, until=WHEN)
    dates = moments = ("until",)

    def validate(self, args, call):
        problem = BuiltinTool.validate(self, args, call)
        if problem is None:
            try:
                if parse_when(args.get("until"), call.tz)[0] is None:
                    return "until is required"
            except (ValueError, TypeError):
                return f"until is not an ISO date from {EARLIEST_YEAR} to {LATEST_YEAR}: {_short(args.get('until'))}"
        return problem or super().validate(args, call)

    def describe(self, args, call):
        task = Task.get_or_none(Task.id == args.get("task_id"))
        return (
            f"Snooze: {task.title if task else 'task ' + str(args.get('task_id'))} until {_when(args, 'until', call)}"
        )

    def execute(self, args, call):
        task = Task.get_by_id(args["task_id"])
        before = task_before(task, ["status", "snoozed_until"])
        task.status, task.snoozed_until = "snoozed", reminder_at(args["until"], call.tz)
        task.save()
        # the follow-up comes back at that time even when no deadline window passed meanwhile
        disable_snoozes(task.id)
        add_once(
            f"snooze:{task.id}:{task.snoozed_until.isoformat()}",
            task.snoozed_until,
            f"“{task.title}” is back, as you asked",
            str(call.tz),
        )
        return {"task_id": task.id, "before": before}


class CancelTask(TaskTool):
    name = "cancel_task"
    description = "Propose dropping a task the user no longer needs (no more follow-ups)."
    brief = "drop it: no more follow-ups"
    parameters = _obj(["task_id"], task_id=I)

    def validate(self, args, call):
        problem = super().validate(args, call)
        if problem is None and Task.get_by_id(args["task_id"]).status not in ("open", "snoozed"):
            return f"task {args['task_id']} is already {Task.get_by_id(args['task_id']).status}"
        return problem

    def describe(self, args, call):
        task = Task.get_or_none(Task.id == args.get("task_id"))
        if task is None:
            return f"Drop task: task {args.get('task_id')}"
        due = f" (due {show_when(task.due, task.due_is_date, call.tz)})" if task.due else ""
        return f"Drop task: {task.title}{due} — no more follow-ups"

    def execute(self, args, call):
        task = Task.get_by_id(args["task_id"])
        before = task_before(task, ["status", "snoozed_until"])  # a snoozed task, undone, sleeps on
        task.status, task.next_fire_at, task.next_window = "cancelled", None, None
        task.save()
        disable_snoozes(task.id)
        return {"task_id": task.id, "cancelled": True, "before": before}


class CompleteTask(TaskTool):
    name = "complete_task"
    description = "Propose marking a task done."
    parameters = _obj(["task_id"], task_id=I)

    def describe(self, args, call):
        task = Task.get_or_none(Task.id == args.get("task_id"))
        return f"Mark done: {task.title if task else 'task ' + str(args.get('task_id'))}"

    def execute(self, args, call):
        task = Task.get_by_id(args["task_id"])
        before = task_before(task, ["status"])
        task.status, task.completed_at, task.next_fire_at, task.next_window = "done", call.now, None, None
        task.save()
        return {"task_id": task.id, "before": before}


SKILL = Skill(
    description="Tasks and topics: what the user has to do, by when, grouped by the areas of their life.",
    tools=(
        ListTasks,
        ListTopics,
        CreateTopic,
        CreateTask,
        UpdateTask,
        SnoozeTask,
        CancelTask,
        RenameTopic,
        UpdateTopic,
        CompleteTask,
        CloseTopic,
        RestoreTask,
        RestoreTopic,
    ),
)
