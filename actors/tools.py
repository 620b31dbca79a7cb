"""The cortex's tools: declared read, mutate or decision, with JSON schemas.

Read tools run at once. Mutate tools never run when the model calls them: the
cortex turns them into a proposal, and only the approval gate executes them,
through `execute_mutation`, after the user approved. Decision tools (`surface`,
`request_sync`) are interpreted by the cortex itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from storage import engram_access
from storage.models import ReceptorBuffer, Task, Topic
from wilson.clock import UTC, as_utc

READ, MUTATE, DECISION = "read", "mutate", "decision"


@dataclass(frozen=True)
class Tool:
    name: str
    kind: str
    description: str
    parameters: dict

    def schema(self) -> dict:
        return {"type": "function", "function": {
            "name": self.name, "description": self.description, "parameters": self.parameters}}


def _obj(required=(), **props) -> dict:
    # Sent with every cortex call, so only what tells the model something: no empty "required",
    # no "additionalProperties" (the cortex reads only the arguments it knows; the rest is ignored).
    schema = {"type": "object", "properties": props}
    if required:
        schema["required"] = list(required)
    return schema


S = {"type": "string"}
I = {"type": "integer"}
WHEN = {"type": "string", "description": "YYYY-MM-DD or ISO datetime"}

TOOLS = [
    Tool("list_tasks", READ, "List tasks, optionally by topic title or status (open, done).",
         _obj(topic=S, status=S)),
    Tool("list_topics", READ, "List topics, optionally by status (active, closed).", _obj(status=S)),
    Tool("recall", READ, "Recall long-term memories about a subject.", _obj(["query"], query=S)),
    Tool("calendar_lookup", READ, "Calendar events between two dates.", _obj(["start", "end"], start=WHEN, end=WHEN)),
    Tool("now", READ, "The current date and time in the user's timezone.", _obj()),
    Tool("create_topic", MUTATE, "Propose a new topic (a time-bound area of the user's life).",
         _obj(["title"], title=S, starts=WHEN, ends=WHEN, notes=S)),
    Tool("create_task", MUTATE, "Propose a task, optionally with a due date and a topic (by title).",
         _obj(["title"], title=S, due=WHEN, topic=S, notes=S)),
    Tool("update_task", MUTATE, "Propose a change to a task; escalation lists when to follow up, "
         "e.g. \"7d,1d,due,overdue\".", _obj(["task_id"], task_id=I, title=S, due=WHEN, notes=S, escalation=S)),
    Tool("snooze_task", MUTATE, "Propose pausing a task's follow-ups until a date.",
         _obj(["task_id", "until"], task_id=I, until=WHEN)),
    Tool("create_reminder", MUTATE, "Propose a recurring reminder, as a cron expression in the user's timezone "
         "(e.g. \"0 9 1-7 * 1\" for every first Monday at 09:00).", _obj(["text", "cron"], text=S, cron=S)),
    Tool("update_topic", MUTATE, "Propose a change to a topic (e.g. new dates when the event moved).",
         _obj(["topic_id"], topic_id=I, title=S, starts=WHEN, ends=WHEN, notes=S)),
    Tool("complete_task", MUTATE, "Propose marking a task done.", _obj(["task_id"], task_id=I)),
    Tool("close_topic", MUTATE, "Propose closing a topic.", _obj(["topic_id"], topic_id=I)),
    Tool("send_email", MUTATE, "Propose sending an email.", _obj(["to", "subject", "body"], to=S, subject=S, body=S)),
    Tool("surface", DECISION, "Show a message to the user. The only way a run the user did not start reaches "
         "the user; give the reason.", _obj(["text", "why"], text=S, why=S, urgent={"type": "boolean"})),
    Tool("request_sync", DECISION, "Ask for an off-schedule sync of calendar, email and other buffered input.",
         _obj(["reason"], reason=S)),
]
BY_NAME = {t.name: t for t in TOOLS}


def schemas() -> list[dict]:
    return [t.schema() for t in TOOLS]


def kind_of(name: str) -> str | None:
    tool = BY_NAME.get(name)
    return tool.kind if tool else None


# Dates ---------------------------------------------------------------------
def parse_when(value, tz: ZoneInfo) -> tuple[datetime | None, bool]:
    """An ISO date or datetime from a model → (aware UTC, is_date). Raises ValueError on nonsense."""
    if value in (None, ""):
        return None, False
    if isinstance(value, datetime):
        return as_utc(value, tz), False
    text = str(value).strip()
    if len(text) == 10:
        day = date.fromisoformat(text)
        return datetime.combine(day, time(0, 0), tzinfo=tz).astimezone(UTC), True
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return as_utc(moment, tz), False


def show_when(moment: datetime | None, is_date: bool, tz: ZoneInfo) -> str:
    if moment is None:
        return "no date"
    local = moment.astimezone(tz)
    if is_date or (local.hour, local.minute) == (0, 0):
        return f"{local:%a} {local.day} {local:%b %Y}"
    return f"{local:%a} {local.day} {local:%b %Y %H:%M}"


def show_span(starts, ends, tz: ZoneInfo) -> str:
    """'Sat 10 Apr 2027 – Sat 24 Apr 2027'; an all-day end (midnight after the last day) shows the last day."""
    try:
        first, first_is_date = parse_when(starts, tz)
        last, last_is_date = parse_when(ends, tz)
    except ValueError:
        return f"{starts} – {ends}"
    if first is None:
        return ""
    if last is None:
        return show_when(first, first_is_date, tz)
    local_last = last.astimezone(tz)
    if not last_is_date and (local_last.hour, local_last.minute) == (0, 0) and last > first:
        last = last - timedelta(days=1)  # an exclusive all-day end
    return f"{show_when(first, first_is_date, tz)} – {show_when(last, True, tz)}"


def task_view(task: Task, tz: ZoneInfo) -> dict:
    due = None
    if task.due is not None:
        due = task.due.astimezone(tz).date().isoformat() if task.due_is_date else task.due.astimezone(tz).isoformat()
    return {"id": task.id, "title": task.title, "due": due, "status": task.status,
            "topic_id": task.topic_id, "topic": task.topic.title if task.topic_id else None}


def topic_view(topic: Topic, tz: ZoneInfo) -> dict:
    def day(m):
        return m.astimezone(tz).date().isoformat() if m else None

    last = topic.ends
    if last is not None and (last.astimezone(tz).hour, last.astimezone(tz).minute) == (0, 0):
        last = last - timedelta(days=1)  # stored as the exclusive end; people think in last days
    return {"id": topic.id, "title": topic.title, "status": topic.status, "starts": day(topic.starts),
            "ends": day(last)}


# Read tools ------------------------------------------------------------------
def run_read(name: str, args: dict, now: datetime, tz: ZoneInfo) -> object:
    if name == "now":
        local = now.astimezone(tz)
        return {"now": local.isoformat(), "weekday": f"{local:%A}", "timezone": str(tz)}
    if name == "list_tasks":
        query = Task.select().order_by(Task.due.is_null(), Task.due, Task.id)
        status = args.get("status") or "open"
        if status != "all":
            query = query.where(Task.status == status)
        if args.get("topic"):
            query = query.join(Topic).where(Topic.title ** f"%{args['topic']}%")
        return [task_view(t, tz) for t in query.limit(100)]
    if name == "list_topics":
        query = Topic.select().order_by(Topic.id)
        if args.get("status"):
            query = query.where(Topic.status == args["status"])
        return [topic_view(t, tz) for t in query.limit(100)]
    if name == "recall":
        return [{"kind": m.kind, "text": m.text} for m in engram_access.recall(args.get("query", ""), now)]
    if name == "calendar_lookup":
        start, _ = parse_when(args.get("start"), tz)
        end, _ = parse_when(args.get("end"), tz)
        return calendar_events(start, end)
    raise ValueError(f"unknown read tool {name}")


def calendar_events(start: datetime | None, end: datetime | None) -> list[dict]:
    """The latest known state of each calendar event seen by the calendar channel, within [start, end]."""
    latest: dict[str, dict] = {}
    for row in ReceptorBuffer.select().where(ReceptorBuffer.channel == "calendar").order_by(ReceptorBuffer.id):
        payload = row.payload or {}
        if payload.get("uid"):
            latest[payload["uid"]] = payload
    events = []
    for payload in latest.values():
        if payload.get("change") == "cancelled" or not payload.get("start"):
            continue
        begins = datetime.fromisoformat(payload["start"])
        if (start is None or begins >= start) and (end is None or begins <= end):
            events.append({k: payload.get(k) for k in ("title", "start", "end", "location", "all_day")})
    return sorted(events, key=lambda e: e["start"])


# Describing proposals ----------------------------------------------------------
def describe_item(name: str, args: dict, tz: ZoneInfo) -> str:
    def when(key):
        try:
            moment, is_date = parse_when(args.get(key), tz)
        except ValueError:
            return str(args.get(key))
        return show_when(moment, is_date, tz)

    if name == "create_topic":
        span = f" ({show_span(args.get('starts'), args.get('ends'), tz)})" if args.get("starts") else ""
        return f"New topic: {args.get('title')}{span}"
    if name == "create_task":
        due = f" — due {when('due')}" if args.get("due") else ""
        return f"New task: {args.get('title')}{due}"
    if name == "update_task":
        task = Task.get_or_none(Task.id == args.get("task_id"))
        label = task.title if task else f"task {args.get('task_id')}"
        changes = []
        if args.get("title"):
            changes.append(f"rename to “{args['title']}”")
        if args.get("due"):
            changes.append(f"move due to {when('due')}")
        if args.get("notes"):
            changes.append("update notes")
        if args.get("escalation"):
            changes.append(f"follow up at {args['escalation']}")
        return f"Change task: {label} — {', '.join(changes) or 'no change'}"
    if name == "snooze_task":
        task = Task.get_or_none(Task.id == args.get("task_id"))
        return f"Snooze: {task.title if task else 'task ' + str(args.get('task_id'))} until {when('until')}"
    if name == "create_reminder":
        return f"New reminder: {args.get('text')} ({args.get('cron')})"
    if name == "update_topic":
        topic = Topic.get_or_none(Topic.id == args.get("topic_id"))
        label = topic.title if topic else f"topic {args.get('topic_id')}"
        span = show_span(args.get("starts"), args.get("ends"), tz) if args.get("starts") and args.get("ends") else ""
        changes = [f"rename to “{args['title']}”"] if args.get("title") else []
        changes += [f"dates {span}"] if span else [f"starts {when('starts')}"] if args.get("starts") else []
        changes += [f"ends {when('ends')}"] if args.get("ends") and not span else []
        return f"Change topic: {label} — {', '.join(changes) or 'update notes'}"
    if name == "complete_task":
        task = Task.get_or_none(Task.id == args.get("task_id"))
        return f"Mark done: {task.title if task else 'task ' + str(args.get('task_id'))}"
    if name == "close_topic":
        topic = Topic.get_or_none(Topic.id == args.get("topic_id"))
        if topic is None:
            return f"Close topic: topic {args.get('topic_id')}"
        still_open = topic.tasks.where(Task.status == "open").count()
        rest = f" (and drop its {still_open} open task{'s' if still_open != 1 else ''})" if still_open else ""
        return f"Close topic: {topic.title}{rest}"
    if name == "send_email":
        return f"Send email to {args.get('to')}: {args.get('subject')}"
    return f"{name} {args}"


def validate_mutation(name: str, args: dict, tz: ZoneInfo) -> str | None:
    """A reason the call cannot become a proposal, or None when it is well formed."""
    tool = BY_NAME.get(name)
    if tool is None or tool.kind != MUTATE:
        return f"{name} is not a mutation tool"
    # a blank title is as missing as no title: it would become an item nobody can read
    missing = [k for k in tool.parameters.get("required", [])
               if args.get(k) is None or (isinstance(args[k], str) and not args[k].strip())]
    if missing:
        return f"missing {', '.join(missing)}"
    # Types before any lookup: an object where an id belongs must be refused, not handed to the database.
    for key, value in args.items():
        expected = tool.parameters["properties"].get(key, {}).get("type")
        if value is None or expected is None:
            continue
        if expected == "string" and not isinstance(value, str):
            return f"{key} must be a string, got {type(value).__name__}"
        if expected == "integer" and not _is_int(value):
            return f"{key} must be an integer, got {value!r}"
    for key in ("due", "starts", "ends"):
        if args.get(key):
            try:
                parse_when(args[key], tz)
            except (ValueError, TypeError):
                return f"{key} is not an ISO date: {args[key]!r}"
    if name == "create_reminder":
        from actors.tick import valid_cron

        if not valid_cron(str(args.get("cron"))):
            return f"not a cron expression: {args.get('cron')!r}"
    if name == "update_task" and args.get("escalation"):
        from actors.tick import parse_windows

        if not parse_windows(str(args["escalation"])):
            return f"escalation needs windows like 7d,1d,due,overdue — got {args['escalation']!r}"
    if name == "snooze_task":
        try:
            if parse_when(args.get("until"), tz)[0] is None:
                return "until is required"
        except (ValueError, TypeError):
            return f"until is not an ISO date: {args.get('until')!r}"
    if name in ("update_task", "complete_task", "snooze_task") and not Task.get_or_none(Task.id == args.get("task_id")):
        return f"no task {args.get('task_id')}"
    if name in ("close_topic", "update_topic") and not Topic.get_or_none(Topic.id == args.get("topic_id")):
        return f"no topic {args.get('topic_id')}"
    return None


def _is_int(value) -> bool:
    # Models often quote ids ("5"); a bool is an int to Python but never an id; and a number the
    # database cannot bind would raise instead of simply finding nothing.
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    return isinstance(value, int) and not isinstance(value, bool) and -2**63 <= value < 2**63


# Executing approved mutations (only the approval gate calls this) ------------------
def execute_mutation(name: str, args: dict, now: datetime, tz: ZoneInfo, created_topics: dict) -> dict:
    """Apply one approved mutation. `created_topics` maps titles created earlier in the same proposal."""
    if name == "create_topic":
        starts, _ = parse_when(args.get("starts"), tz)
        ends, ends_is_date = parse_when(args.get("ends"), tz)
        if ends is not None and ends_is_date:
            ends = ends + timedelta(days=1)  # an all-day end date lasts through that day
        topic = Topic.create(title=args["title"], status="active", starts=starts, ends=ends,
                             notes=args.get("notes") or "", created_at=now)
        created_topics[topic.title.lower()] = topic
        return {"topic_id": topic.id}
    if name == "create_task":
        due, is_date = parse_when(args.get("due"), tz)
        topic = _find_topic(args.get("topic"), created_topics)
        task = Task.create(title=args["title"], due=due, due_is_date=is_date, topic=topic,
                           notes=args.get("notes") or "", created_at=now)
        return {"task_id": task.id}
    if name == "update_task":
        task = Task.get_by_id(args["task_id"])
        if args.get("title"):
            task.title = args["title"]
        if args.get("notes"):
            task.notes = args["notes"]
        if args.get("due"):
            task.due, task.due_is_date = parse_when(args["due"], tz)
        if args.get("escalation"):
            from actors.tick import parse_windows

            task.escalation = parse_windows(str(args["escalation"]))
        task.save()
        return {"task_id": task.id}
    if name == "snooze_task":
        task = Task.get_by_id(args["task_id"])
        task.status, (task.snoozed_until, _) = "snoozed", parse_when(args["until"], tz)
        task.save()
        return {"task_id": task.id}
    if name == "create_reminder":
        from actors.tick import add_reminder

        slug = "".join(c if c.isalnum() else "-" for c in str(args["text"]).lower())[:40].strip("-")
        schedule = add_reminder(f"reminder:{slug}", str(args["cron"]), str(args["text"]), str(tz), now)
        return {"schedule": schedule.name}
    if name == "update_topic":
        topic = Topic.get_by_id(args["topic_id"])
        if args.get("title"):
            topic.title = args["title"]
        if args.get("notes"):
            topic.notes = args["notes"]
        if args.get("starts"):
            topic.starts, _ = parse_when(args["starts"], tz)
        if args.get("ends"):
            ends, ends_is_date = parse_when(args["ends"], tz)
            topic.ends = ends + timedelta(days=1) if ends_is_date else ends
        topic.save()
        return {"topic_id": topic.id}
    if name == "complete_task":
        task = Task.get_by_id(args["task_id"])
        task.status, task.completed_at, task.next_fire_at, task.next_window = "done", now, None, None
        task.save()
        return {"task_id": task.id}
    if name == "close_topic":
        topic = Topic.get_by_id(args["topic_id"])
        topic.status, topic.closed_at = "closed", now
        topic.save()
        # a closed topic's leftover tasks stop following the user around
        dropped = Task.update(status="cancelled", next_fire_at=None, next_window=None).where(
            (Task.topic == topic) & (Task.status == "open")).execute()
        return {"topic_id": topic.id, "tasks_cancelled": dropped}
    if name == "send_email":
        return {"queued": True}
    raise ValueError(f"cannot execute {name}")


def _find_topic(title: str | None, created_topics: dict) -> Topic | None:
    if not title:
        return None
    if title.lower() in created_topics:
        return created_topics[title.lower()]
    return (Topic.select().where((Topic.title ** title) & (Topic.status != "closed")).order_by(Topic.id.desc()).first()
            or Topic.select().where(Topic.title ** f"%{title}%").order_by(Topic.id.desc()).first())
