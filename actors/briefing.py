"""The morning briefing is the day: one message, built by code from the database.

It lists today's events (from the calendar's stored snapshot, in local time) and the topics
that begin today (an appointment told in words), tasks due today and overdue, heads-ups whose
follow-up would come later the same day, proposals waiting for an answer, follow-ups the
daily cap kept back, and what triage kept for the briefing (the only part in the model's
words). With `[attention] briefing = "when_useful"` a day with nothing in it sends nothing.

The daily sync opens the day's briefing before it triages (status `compose`, "gathering")
and names in it every inbox row it creates (`awaits`). The briefing goes out when the
last of those runs has ended (`settle`), so that the plans they propose arrive inside it,
in full, instead of as messages of their own; the gate leaves such proposals to the
briefing (actors/proposals/carried.py). A briefing that waits too long (a crash, a model that never
answers) is sent by the tick with what it has (`SETTLE_AFTER`).

Size: composing, settling and sending the one morning message are one state machine over the
briefing row; split, each part would import the others' states.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta


from actors import attention, escalation, tools
from actors.deadlines import plan_task, task_windows, thin_all
from actors.proposals.carried import SETTLE_AFTER, briefed_before
from actors.proposals.rules import OPEN, items_of, remind_before, remind_moment
from actors.proposals.words import headline, render
from actors.shared.event_span import cancelled, event_span, moved_later, waits_for_move
from actors.shared.windows import due_date, window_times, windows_config
from storage import calendar_days, hot, mute, outbox, reads, trace
from storage.calendar_days import DayEvent
from storage.db import database
from storage.prepared import prepared
from storage.models import Approval, ApprovalItem, Inbox, Outbox, Task, TaskFiring, TokenUsage, Topic, Trace
from wilson.kernel.clock import as_utc
from wilson.kernel.timeparse import last_day
from wilson.model.offline.provider import SEEN_NO_PLAN
from wilson.model.offline.recognition import routine_meeting

LIST_AGAIN = timedelta(days=7)  # a proposal still waiting a week on is listed in a briefing once
LISTED_FIRST = timedelta(days=1)  # the briefing that showed a proposal the morning it was made is no later listing
RUNNING = ("pending", "claimed")


@dataclass
class Day:
    """What the morning briefing can say about one local day (all text, in the user's timezone)."""

    day: date
    events: list[str] = field(default_factory=list)
    due: list[str] = field(default_factory=list)
    overdue: list[str] = field(default_factory=list)
    proposals: list[str] = field(default_factory=list)
    proposal_ids: list[int] = field(default_factory=list)  # the same proposals, for a channel's buttons
    waiting: list[str] = field(default_factory=list)
    plans: list[str] = field(default_factory=list)  # proposals made this morning, in full
    soon: list[str] = field(default_factory=list)  # heads-ups whose follow-up would come later today
    told: list[tuple[int, str]] = field(default_factory=list)  # (task id, window) the briefing says instead
    soon_told: list[tuple[int, str]] = field(default_factory=list)  # the same, for heads-ups: only when it is sent
    new_in_calendar: list[str] = field(default_factory=list)  # new events the offline rules made no plan for
    new_traces: list[str] = field(default_factory=list)  # their runs' traces: listed once, then not again
    new_overdue: bool = False  # a task went overdue since the last briefing
    asks_again: bool = False  # a waiting proposal's one reminder is due: this briefing is it
    fresh_due: bool = False  # a task due today that no follow-up announced yesterday
    raises: list = field(default_factory=list)  # events' open preparation raised at a window (escalation.py)
    raise_lines: list[str] = field(default_factory=list)
    overdue_before: list = field(default_factory=list)  # overdue tasks raised before: counted in one line
    overdue_line: str = ""
    folded: list[int] = field(default_factory=list)  # gone overdue, left to their event's next window
    task_ids: list[int] = field(default_factory=list)  # tasks the briefing offers choices for (buttons)

    @property
    def useful(self) -> bool:
        # Listed when there is a briefing anyway, but no reason on their own to write one: a task that
        # has stood overdue for days, and a task due today that yesterday's follow-up already announced.
        # Heads-ups (`soon`) ride along too: on their own they keep their follow-up's hour.
        # A proposal still waiting earns the morning of its one reminder (actors/proposals/lapse.py); on the
        # mornings before, it rides along, or the user would hear of it every day until it expires.
        return bool(
            self.events
            or self.fresh_due
            or self.asks_again
            or self.plans
            or self.waiting
            or self.new_overdue
            or self.new_in_calendar
            or self.raises
        )


def _short_day(day: date) -> str:
    return f"{day:%a} {day.day} {day:%b}"


def _event_line(event: DayEvent, today: date, tz) -> str:
    """One calendar event that starts today as a line of today's briefing."""
    start = event.start.astimezone(tz)
    place = _place(event.location or "")
    where = f" ({place})" if place else ""
    if event.all_day:
        last = event.last_day(tz)
        until = f", until {_short_day(last)}" if last > today else ""
        return f"{event.title}{where} (all day{until})"
    end = event.end.astimezone(tz) if event.end else None
    span = f"{start:%H:%M}" + (f"–{end:%H:%M}" if end and end.date() == today else "")
    return f"{span} {event.title}{where}"


_PLACE_END = re.compile(
    r"(?<![A-ZÄÖÜ][a-zäöüß])(?<!\b[A-Za-z])(?<!str)\.\s+(?=[A-Z])|\n|;\s"
)  # a sentence after the place
_NOT_A_PLACE = re.compile(r"[\w.+-]+@[\w-]+\.|https?://|www\.|\b(?:assistant|ai|bot)\b\s*:", re.I)
PLACE_CHARS = 80


def _place(location: str) -> str:
    """Where an event is, as the briefing names it: the place, without what follows it (an invitation's location
    field is others' text: "Café Liebling, Raumerstr. 36. Assistant: send …" is told as "Café Liebling, Raumerstr.
    36"), and nothing when it holds an address to write to or words for an assistant."""
    place = _PLACE_END.split(location.strip(), maxsplit=1)[0].strip().rstrip(".")
    if _NOT_A_PLACE.search(place):
        return ""
    return place if len(place) <= PLACE_CHARS else place[:PLACE_CHARS].rsplit(" ", 1)[0] + "…"


def _topic_line(topic: Topic, today: date, tz) -> str:
    """A topic that begins today (an appointment told in words) as a line of today's briefing."""
    start = topic.starts.astimezone(tz)
    last = last_day(topic.ends, tz) if topic.ends else None  # stored as the exclusive end
    until = f" (until {_short_day(last)})" if last is not None and last > today else ""
    return (f"{start:%H:%M} " if (start.hour, start.minute) != (0, 0) else "") + f"{topic.title}{until}"


# a meal or a coffee with someone: named all the same; the team's lunch is the week's routine
_WITH_SOMEONE = re.compile(r"(?<!team )(?<!team-)\b(?:lunch|coffee|kaffee|mittagessen)\b", re.I)


# the reads of every morning, their text built once
STARTING = prepared(
    lambda s: (
        Topic.select()
        .where((Topic.status == "active") & (Topic.starts >= s.start) & (Topic.starts < s.end))
        .order_by(Topic.starts)
    )
)


def todays_events(now: datetime, tz) -> list[str]:
    """Today's events from the snapshots the calendar channel keeps (no fetch, no model), by start, and the
    topics that begin today that no event of today's stands for (the dentist the user told Wilson about).
    Routine meetings (a standup, a 1:1) are counted, not named, and alone they are no day's news.
    A multi-day event is told on its first day, not every day of it."""
    today = now.astimezone(tz).date()
    events = [event for event in calendar_days.events_on(today, tz) if event.first_day(tz) == today]
    # the working week's meetings are in the user's calendar already: named, they would bury what needs the user
    routine = [
        e
        for e in events
        if not e.all_day
        and routine_meeting(e.title, e.start, e.end, tz) is not None
        and not _WITH_SOMEONE.search(e.title)
    ]
    lines = [(as_utc(event.start), _event_line(event, today, tz)) for event in events if event not in routine]
    titles = {e.title.casefold() for e in events}
    spans = {(as_utc(e.start), as_utc(e.end) if e.end else None) for e in events}
    midnight = datetime.combine(today, datetime.min.time(), tzinfo=tz)
    for topic in STARTING.models(start=midnight, end=midnight + timedelta(days=1)):
        start, ends = as_utc(topic.starts), as_utc(topic.ends) if topic.ends else None
        if topic.title.casefold() in titles or any(start == s and ends in (None, e) for s, e in spans):
            continue  # the topic a calendar event grew into: the event's line says it
        span = event_span(topic, tz)
        if span is None or span[0] != start:
            continue  # the calendar cancelled it or moved it elsewhere: its own day is no longer today
        lines.append((start, _topic_line(topic, today, tz)))
    lines = [line for _, line in sorted(lines, key=lambda pair: pair[0])]
    if routine and lines:  # counted, so the day's shape is there without the titles
        lines.append(f"and {len(routine)} routine meeting{'s' if len(routine) > 1 else ''}")

    allowed = tools.own_hosts()
    return [tools.defang(line, allowed) for line in lines]


def _task_line(task: Task, tz, *, overdue: bool) -> str:
    topic = f" ({task.topic.title})" if task.topic_id else ""
    if task.due_is_date:
        return f"{task.title}{topic}" + (f", was due {_short_day(due_date(task.due, tz))}" if overdue else "")
    local = task.due.astimezone(tz)
    return f"{task.title}{topic}" + (
        f", was due {_short_day(local.date())} {local:%H:%M}" if overdue else f" at {local:%H:%M}"
    )


def _windows(task: Task, config) -> list[str]:
    return task_windows(task, windows_config(config))


def _soon_line(task: Task, due_on: date, today: date) -> str:
    topic = f" ({task.topic.title})" if task.topic_id else ""
    days = (due_on - today).days
    return f"{task.title}{topic}, due {'tomorrow' if days == 1 else f'in {days} days'} ({_short_day(due_on)})"


def _shown_alone(approval_ids: list[int]) -> set[int]:
    keys = [f"proposal:{i}" for i in approval_ids]
    return {int(r.idempotency_key.split(":")[1]) for r in hot.among(Outbox, Outbox.idempotency_key, keys)}


LISTED = "listed"  # a trace stage: the briefing listed this run's unplanned events
NEW_SHOWN = 8  # unplanned new events named in one briefing; the rest are counted


SEEN_WITHOUT_PLAN = prepared(
    lambda s: Trace.select(Trace.trace_id).where((Trace.stage == "offline") & Trace.reason.contains(SEEN_NO_PLAN))
)
TOPIC_TITLES = prepared(lambda s: Topic.select(Topic.title))
TOPICS_PROPOSED = prepared(lambda s: ApprovalItem.select(ApprovalItem.args).where(ApprovalItem.tool == "create_topic"))


def unplanned_events(now: datetime, tz) -> tuple[list[str], list[str]]:
    """New calendar events the offline rules saw and made no plan for ("seen, no plan"), not listed by a
    briefing yet and not planned since: (lines, their trace ids). Today's are in the briefing's "Today"."""
    seen = {trace_id for (trace_id,) in SEEN_WITHOUT_PLAN.rows()}
    if not seen:
        return [], []
    seen -= {
        r.trace_id for r in Trace.select(Trace.trace_id).where((Trace.stage == LISTED) & Trace.trace_id.in_(list(seen)))
    }
    planned = {title.strip().lower() for (title,) in TOPIC_TITLES.rows()}
    planned |= {
        str((ApprovalItem.args.python_value(args) or {}).get("title") or "").strip().lower()
        for (args,) in TOPICS_PROPOSED.rows()
    }
    today = now.astimezone(tz).date()
    lines, traces = [], []
    for row in Inbox.select().where(Inbox.trace_id.in_(list(seen)) & (Inbox.kind == "event")).order_by(Inbox.id):
        traces.append(row.trace_id)
        for buffer in (row.payload or {}).get("buffers") or []:
            title = str(buffer.get("title") or "").strip()
            if buffer.get("change") != "new" or not title or title.lower() in planned or not buffer.get("start"):
                continue
            start = datetime.fromisoformat(buffer["start"]).astimezone(tz)
            if start.date() <= today:
                continue
            when = _short_day(start.date()) + ("" if buffer.get("all_day") else f" {start:%H:%M}")
            lines.append(f"{title} ({when})")
    if len(lines) > NEW_SHOWN:  # a first sync of a whole calendar is not a briefing of its own
        lines = lines[:NEW_SHOWN] + [f"and {len(lines) - NEW_SHOWN} more"]
    return lines, traces


# read every morning (and for each look at whether a briefing is owed), their text built once
WAITING_PROPOSALS = prepared(
    lambda s: Approval.select().where(Approval.status.in_(OPEN) & (Approval.expires_at > s.now)).order_by(Approval.id)
)
WAITING_NEWS = prepared(lambda s: Outbox.select().where(Outbox.status == attention.WAITING).order_by(Outbox.id))


def gather_day(now: datetime, tz, config, fresh: set[int] | frozenset = frozenset()) -> Day:
    """Everything the briefing of `now`'s local day would say, read from the database.

    `fresh`: inbox rows of this morning's sync. The proposals they made, and any other proposal that
    was never shown on its own nor in an earlier briefing (one kept from the night), are told in full."""
    today = now.astimezone(tz).date()
    day = Day(today, events=todays_events(now, tz))
    day.new_in_calendar, day.new_traces = unplanned_events(now, tz)
    closing = _closing(now)
    day.raises = escalation.raises(now, tz)
    raised = {t.id for r in day.raises for t in r.tasks}
    day.raise_lines = [escalation.raise_text(r, today, tz) for r in day.raises]
    day.task_ids = sorted(raised)
    # each task with its topic (one join) and its firings (one read for all): a statement or three per task
    # made every morning's briefing cost more the more the user had planned
    tasks = reads.open_dated_tasks()
    firings: dict[int, list[TaskFiring]] = {}
    for firing in hot.among(TaskFiring, TaskFiring.task, [t.id for t in tasks]):
        firings.setdefault(firing.task_id, []).append(firing)
    topics = {task.topic_id: task.topic for task in tasks if task.topic_id}
    thin_all(tasks)  # what memory says of each task's heads-ups, read once for all
    held = {topic_id for topic_id, topic in topics.items() if cancelled(topic, tz)}
    moved = {topic_id: moved_later(topic, tz) for topic_id, topic in topics.items() if topic_id not in held}
    for task in tasks:
        if task.topic_id in held:
            continue  # preparation for an event the calendar cancelled: closing its topic is asked, nothing else
        if waits_for_move(task, now, moved.get(task.topic_id)):
            continue  # preparation for an event the calendar moved later: its dates wait for the user to move them
        on = _due_on(task, tz)
        current = [f for f in firings.get(task.id, ()) if f.due == task.due]
        windows, fired = _windows(task, config), {f.window for f in current}
        if on == today:
            day.due.append(_task_line(task, tz, overdue=False))
            recent = any(f.fired_at >= now - timedelta(hours=36) for f in current)
            day.fresh_due = day.fresh_due or not (recent or escalation.on_eve(task))
            if task.due_is_date and "due" in windows and "due" not in fired:
                day.told.append((task.id, "due"))  # the briefing says it; the 09:00 follow-up need not
        elif on < today or (not task.due_is_date and task.due <= now):
            if task.topic_id in closing and as_utc(task.due) < closing[task.topic_id]:
                continue  # preparation for an event that is over, while the user is asked to close its topic
            if "overdue" in windows and "overdue" not in fired:
                day.told.append((task.id, "overdue"))
                # raised with its choices this morning; an event's preparation whose next window comes soon
                # waits for it when nothing else brings a briefing today
                if escalation.folds(task, today, tz):
                    day.folded.append(task.id)
                else:
                    day.new_overdue = True
            if task.id in raised:
                continue  # said with its event's open preparation
            if "overdue" in fired or "overdue" not in windows:
                day.overdue_before.append(task)  # raised once already: counted, not repeated line by line
                continue
            day.overdue.append(_task_line(task, tz, overdue=True) + f": {escalation.CHOICES.format(n=task.id)}")
            day.task_ids.append(task.id)
        elif task.due_is_date:
            # a heads-up ("due in 7 days") whose follow-up would come later today is said now instead; only the one
            # the task's follow-ups are planned for (one left out just after approving stays out here too)
            later = [
                name
                for name, moment in window_times(task.due, True, windows, tz)
                if name not in ("due", "overdue")
                and name not in fired
                and task.next_window in (None, name)
                and moment > now
                and moment.astimezone(tz).date() == today
            ]
            if later:
                day.soon.append(_soon_line(task, on, today))
                day.soon_told.extend((task.id, name) for name in later)
    if day.overdue_before:
        day.overdue_line = escalation.overdue_summary(day.overdue_before, today, tz)
    waiting = WAITING_PROPOSALS.models(now=now)
    ids = [a.id for a in waiting]
    oldest = min((as_utc(a.created_at) for a in waiting), default=as_utc(now))
    untold = set(ids) - _shown_alone(ids) - briefed_before(ids, oldest)
    before = remind_before(config)
    for approval in waiting:
        items = [i for i in items_of(approval.id) if i.status == "pending"]
        if not items:
            continue
        day.proposal_ids.append(approval.id)
        if approval.status == "pending" and (approval.inbox_id in fresh or approval.id in untold):
            day.plans.append(render(approval, tz))
            continue
        more = f" (and {len(items) - 1} more)" if len(items) > 1 else ""
        day.proposals.append(f"Proposal {approval.id}: {headline(items[0].description)}{more}")
        nudged = approval.reminded_at is not None or approval.remind_at is None  # done, or none to give
        day.asks_again = day.asks_again or (
            not nudged
            and as_utc(now) >= remind_moment(as_utc(approval.created_at), as_utc(approval.expires_at), before)
        )
        # one that waits for weeks (a plan for an event) is listed again once, a week on, unless a briefing listed
        # it meanwhile: a nudge, then silence until its one reminder (asking every week is not conversation)
        day.asks_again = day.asks_again or (
            as_utc(now) - as_utc(approval.created_at) >= LIST_AGAIN
            and not briefed_before([approval.id], as_utc(approval.created_at) + LISTED_FIRST)
        )
    covered = {task.id for task in tasks if _due_on(task, tz) <= today}  # due or overdue: listed above
    for row in WAITING_NEWS.models():
        about = set((row.payload or {}).get("tasks") or [])
        if about and (about <= covered or attention.acknowledged(about, row.created_at) >= about):
            continue  # listed above already, or the user has dealt with it
        if attention.is_over(row, now):
            continue  # news of an event that is over by now
        day.waiting.append(row.text.replace("\n", " ")[:300])
    return day


ENDED = prepared(lambda s: Topic.select(Topic.id, Topic.ends).where(Topic.ends.is_null(False) & (Topic.ends <= s.now)))
CLOSING_ASKED = prepared(
    lambda s: (
        ApprovalItem.select(ApprovalItem.args)
        .join(Approval)
        .where(
            (ApprovalItem.tool == "close_topic")
            & (ApprovalItem.status == "pending")
            & Approval.status.in_(OPEN)
            & (Approval.expires_at > s.now)
        )
    )
)


def _closing(now: datetime) -> dict[int, datetime]:
    """Topics whose event is over and whose closing (the tick proposes it at the end) waits for the user's
    answer, with their ends: the answer settles their unfinished preparation, which is not "overdue" meanwhile.
    Rejected or let go, the tasks are listed again."""
    ended = {topic_id: as_utc(Topic.ends.python_value(ends)) for topic_id, ends in ENDED.rows(now=now)}
    if not ended:
        return {}
    asked = [ApprovalItem.args.python_value(args) for (args,) in CLOSING_ASKED.rows(now=now)]
    topics = {str((args or {}).get("topic_id")) for args in asked}  # a model may quote an id: "7"
    return {topic_id: ends for topic_id, ends in ended.items() if str(topic_id) in topics}


def _due_on(task: Task, tz) -> date:
    return due_date(task.due, tz) if task.due_is_date else task.due.astimezone(tz).date()


def render_day(day: Day, extra: str = "") -> str:
    """The briefing's text; empty when there is nothing to say."""
    overdue = list(day.overdue)
    if day.overdue_line:
        overdue.append(("and " if overdue else "") + day.overdue_line)
    sections = [
        ("Today", day.events),
        ("Due today", day.due),
        ("Overdue", overdue),
        ("Coming up", day.soon),
        ("New in your calendar (no plan from me: ask if one needs it)", day.new_in_calendar),
        ("Waiting for your answer", day.proposals),
        ("Kept for this morning", day.waiting),
    ]
    body = [f"{title}:\n" + "\n".join(f"• {line}" for line in lines) for title, lines in sections if lines]
    body += day.raise_lines
    body += day.plans
    if extra:
        body.append(extra)
    if not body:
        return ""
    return f"Good morning! Your {_short_day(day.day)}:\n\n" + "\n\n".join(body)


NOTHING_TODAY = "Good morning! Nothing on your calendar and nothing due today."


MODEL_FAILED = (
    "Your model ignored the tool protocol in {failed} of {runs} runs yesterday ({roles}); the offline "
    "rules handled them: `wilson doctor` says more."
)


USAGE_OF_DAY = prepared(lambda s: TokenUsage.select().where(TokenUsage.day == s.day).order_by(TokenUsage.role))


def model_line(day: date) -> str:
    """One line when most of the day before `day`'s runs of a role's model broke the protocol (the rules took
    them over, wilson/model/synapse.py): said by the one briefing after that day, so said once."""
    before = (day - timedelta(days=1)).isoformat()
    failing = [
        row
        for row in USAGE_OF_DAY.models(day=before)
        if (row.failed or 0) >= 2 and (row.failed or 0) * 2 > (row.runs or 0)
    ]
    if not failing:
        return ""
    return MODEL_FAILED.format(
        failed=sum(r.failed for r in failing),
        runs=sum(max(r.runs, r.failed) for r in failing),
        roles=", ".join(f"{r.role} role" for r in failing),
    )


def _text_for(day: Day, config, extra: str = "") -> str:
    extra = "\n\n".join(filter(None, [extra, model_line(day.day)]))
    if day.useful or extra or attention.briefing_mode(config) == "always":
        return render_day(day, extra) or NOTHING_TODAY
    return ""


def _fire(task_id: int, window: str, now: datetime, config) -> None:
    """The briefing said what this window would have: it counts as fired, and the task plans its next one."""
    task = Task.get_by_id(task_id)
    TaskFiring.get_or_create(task=task_id, window=window, due=task.due, defaults={"fired_at": now})
    plan_task(task, now, windows_config(config), config.timezone)


def _commit_day(day: Day, now: datetime, config, *, sent: bool) -> None:
    """What a briefing (or the lack of one) settles, in the caller's transaction."""
    if not sent:
        # No briefing today: a date-only task announced yesterday is not announced again on its day, and an
        # event's preparation gone overdue waits for the event's next window, which comes soon (escalation.folds)
        for task_id, window in day.told:
            if window == "due" or (window == "overdue" and task_id in day.folded):
                _fire(task_id, window, now, config)
        return
    for task_id, window in day.told + day.soon_told:
        _fire(task_id, window, now, config)
    escalation.record(day.raises, now, config.timezone)
    for trace_id in day.new_traces:
        trace.record(trace_id, LISTED, "briefing", "new in your calendar: listed in the morning briefing", now)
    BRIEFED_NOW.run()


# each morning's writes, their text built once
BRIEFED_NOW = prepared(lambda s: Outbox.update(status=attention.BRIEFED).where(Outbox.status == attention.WAITING))
STALE_COMPOSE_DROPPED = prepared(
    lambda s: Outbox.update(status=attention.DROPPED).where(
        (Outbox.status == attention.COMPOSE) & (Outbox.created_at < s.now)
    )
)


def _summary(day: Day) -> str:
    return (
        f"{len(day.events)} event(s), {len(day.new_in_calendar)} new without a plan, {len(day.due)} due, "
        f"{len(day.overdue)} overdue, {len(day.soon)} coming up, "
        f"{len(day.plans)} new plan(s), {len(day.proposals)} waiting, {len(day.waiting)} kept back"
    )


def muted(now: datetime, config) -> tuple[bool, datetime | None]:
    """Whether the user's mute ("quiet 4d") keeps today's briefing: (skip it, hold it until then). A mute
    that ends later today holds the briefing until it may go (the quiet hours count too); one that lasts
    the day skips it (the next briefing tells what is still open), rather than sending stale mornings in a
    heap. A skipped briefing settles nothing: what it would have told is told later."""
    until = mute.muted_until()
    if until is None or as_utc(until) <= as_utc(now):
        return False, None
    held = mute.hold_until(config, now) or as_utc(until)
    if as_utc(held).astimezone(config.timezone).date() == as_utc(now).astimezone(config.timezone).date():
        return False, as_utc(held)
    return True, None


def write_day_briefing(now: datetime, config, *, compose: bool) -> Outbox | None:
    """The day's one briefing message, in one transaction; None when there is nothing to say (or it was
    written before). `compose`: the runs of this morning's sync are still to come, so the row waits
    for them (status compose, "gathering" until the sync has named them all) instead of going out now."""
    tz = config.timezone
    with database.atomic():
        today = now.astimezone(tz).date()
        key = f"briefing:{today.isoformat()}"
        if hot.by_column(Outbox, Outbox.idempotency_key, key) is not None:
            return None
        # a briefing from an earlier day still waiting is out of date
        STALE_COMPOSE_DROPPED.run(now=now)
        day = gather_day(now, tz, config)
        text = "" if compose else _text_for(day, config)
        skip, held = muted(now, config)
        if not compose and skip and text:
            trace.record(
                trace.new_trace_id(), "held back", "thalamus", "morning briefing: the user's quiet lasts the day", now
            )
            return None
        if not compose and not text:
            _commit_day(day, now, config, sent=False)
            return None
        trace_id = trace.new_trace_id()
        payload = {
            "why": "morning briefing",
            "briefing": today.isoformat(),
            "proposals": day.proposal_ids,
            "tasks": day.task_ids,
        }
        if compose:
            payload.update(awaits=[], gathering=True)
        box = outbox.add(
            channel=config.primary_channel,
            text=text,
            trace_id=trace_id,
            key=key,
            at=now,
            payload=payload,
            deliver_after=None if compose else held,
        )
        if compose:
            Outbox.update(status=attention.COMPOSE).where(Outbox.id == box.id).execute()
            box.status = attention.COMPOSE
            trace.record(trace_id, "gathering", "thalamus", "morning briefing: waits for this morning's runs", now)
            return box
        _commit_day(day, now, config, sent=True)
        trace.record(trace_id, "surfaced", "thalamus", f"morning briefing: {_summary(day)}", now)
    return box


def await_rows(box_id: int | None, row_ids: list[int]) -> None:
    """These inbox rows belong to the briefing being gathered; in the caller's transaction."""
    if box_id is None or not row_ids:
        return
    box = Outbox.get_or_none(Outbox.id == box_id)
    if box is None or box.status != attention.COMPOSE:
        return
    payload = dict(box.payload or {})
    payload["awaits"] = sorted(set(payload.get("awaits") or []) | set(row_ids))
    Outbox.update(payload=payload).where(Outbox.id == box_id).execute()


def gathered(box_id: int) -> None:
    """The sync has named every row the briefing waits for."""
    with database.atomic():
        box = Outbox.get_or_none(Outbox.id == box_id)
        if box is not None and box.status == attention.COMPOSE:
            Outbox.update(payload=dict(box.payload or {}, gathering=False)).where(Outbox.id == box_id).execute()


def _ready(box: Outbox) -> bool:
    payload = box.payload or {}
    if payload.get("gathering"):
        return False
    awaits = [int(i) for i in payload.get("awaits") or []]
    return not awaits or not Inbox.select().where(Inbox.id.in_(awaits) & Inbox.status.in_(RUNNING)).exists()


def settle(now: datetime, config) -> Outbox | None:
    """Send the briefing being gathered once every run it waits for has ended (or it waited too long):
    the day is read again, with the plans those runs made. None when there is nothing to send."""
    tz = config.timezone
    for box in Outbox.select().where(Outbox.status == attention.COMPOSE).order_by(Outbox.id):
        late = as_utc(box.created_at) <= as_utc(now) - SETTLE_AFTER
        if not late and not _ready(box):
            continue
        with database.atomic():
            current = Outbox.get_by_id(box.id)
            if current.status != attention.COMPOSE:
                continue  # settled by another lane meanwhile
            payload = dict(current.payload or {})
            if payload.get("briefing") != now.astimezone(tz).date().isoformat():
                Outbox.update(status=attention.DROPPED).where(Outbox.id == box.id).execute()
                trace.record(box.trace_id, "dropped", "briefing", "its day is over", now)
                continue
            day = gather_day(now, tz, config, fresh={int(i) for i in payload.get("awaits") or []})
            extra = "\n\n".join(t for t in (attention.joined_text(payload), payload.get("extra") or "") if t)
            text = _text_for(day, config, extra)
            if not text:
                Outbox.update(status=attention.DROPPED).where(Outbox.id == box.id).execute()
                _commit_day(day, now, config, sent=False)
                trace.record(box.trace_id, "dropped", "briefing", "nothing to say today", now)
                continue
            skip, held = muted(now, config)
            if skip:
                Outbox.update(status=attention.DROPPED).where(Outbox.id == box.id).execute()
                trace.record(box.trace_id, "held back", "briefing", "the user's quiet lasts the day", now)
                continue
            payload.update(proposals=day.proposal_ids, tasks=day.task_ids, gathering=False)
            Outbox.update(status="held" if held else "pending", text=text, payload=payload, deliver_after=held).where(
                Outbox.id == box.id
            ).execute()
            _commit_day(day, now, config, sent=True)
            trace.record(
                box.trace_id,
                "surfaced",
                "briefing",
                f"morning briefing: {_summary(day)}"
                + (" (sent after waiting too long)" if late and not _ready(box) else ""),
                now,
            )
            return Outbox.get_by_id(box.id)
    return None
