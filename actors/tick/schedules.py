"""Schedules: the builtin jobs and the user's reminders as rows, which are due, the missed-job
policy after downtime, and when the next thing of any kind is due (`next_due`).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from loguru import logger

from actors.deadlines import ACTOR, DEADLINE_PRIORITY, OPEN_STATUSES, SCAN_BATCH, ended_unfired, next_close
from actors.proposals.rules import due_moment_sql, earliest_moment
from actors.ras import alarm_unanswered
from actors.shared.cron import builtin_crons, next_fire, valid_cron, zone_of
from actors.shared.windows import due_date
from storage import buffers, hot, inbox, trace
from storage.db import claim_transaction, skip_locked
from storage.models import Inbox, Outbox, Schedule, Task, TaskFiring, Topic
from storage.prepared import prepared
from wilson.kernel import faults
from wilson.kernel.clock import UTC, as_utc

MIN_GRACE = timedelta(seconds=60)  # an on-time job a few seconds late is never "stale"
SKIP_DETAIL = 20  # skipped occurrences recorded one by one; beyond that one summary row


def ensure_builtin_schedules(config, now: datetime) -> None:
    """Upsert the builtin schedules from config; a changed cron or timezone re-plans the next firing.

    An empty or invalid cron disables the job (logged) instead of stopping the tick.
    """
    now = as_utc(now)
    tz_name = str(config.get("core", "timezone") or "UTC")
    tz = zone_of(tz_name)
    for name, cron in builtin_crons(config).items():
        cron = cron or "off"
        fire = None
        if cron.lower() != "off":
            try:
                fire = next_fire(cron, tz, now) if valid_cron(cron) else None
            except ValueError:  # valid syntax that never matches, e.g. 30 February
                fire = None
            if fire is None:
                logger.error("tick: schedule {} has an unusable cron {!r}; disabled", name, cron)
        ok = fire is not None
        with claim_transaction():
            row = hot.by_column(Schedule, Schedule.name, name)
            if row is None:
                Schedule.create(name=name, cron=cron, kind="builtin", timezone=tz_name, enabled=ok, next_fire_at=fire)
                continue
            changed = row.cron != cron or row.timezone != tz_name or row.enabled != ok
            if changed or (ok and row.next_fire_at is None):
                row.cron, row.timezone, row.enabled, row.next_fire_at = cron, tz_name, ok, fire
                row.save()


def _snoozed_task(sched: Schedule) -> Task | None:
    """The task a snooze comeback ("snooze:<task id>:<until>") brings back, if the name says so."""
    parts = sched.name.split(":")
    if parts[0] != "snooze" or len(parts) < 3 or not parts[1].isdigit():
        return None
    return Task.get_or_none(Task.id == int(parts[1]))


def fire_once(now: datetime, tz: ZoneInfo) -> list[int]:
    """One-off reminders whose moment has come: each writes one inbox row and is switched off in the same
    transaction (late after downtime rather than never). A snooze comeback stays quiet when its task is
    closed, or when waking it already fired a follow-up."""
    now = as_utc(now)
    written: list[int] = []
    with claim_transaction():
        due = list(
            skip_locked(
                Schedule.select()
                .where((Schedule.kind == "once") & (Schedule.enabled == True) & (Schedule.next_fire_at <= now))
                .order_by(Schedule.next_fire_at, Schedule.id)
                .limit(SCAN_BATCH)
            )
        )
        for sched in due:
            if (
                not Schedule.update(enabled=False, last_fired_at=now)
                .where((Schedule.id == sched.id) & (Schedule.enabled == True))
                .execute()
            ):
                continue  # another process fired it
            planned = as_utc(sched.next_fire_at)
            trace_id = trace.new_trace_id()
            text, payload = (
                sched.text or sched.name,
                {"schedule": sched.name, "once": True, "planned": planned.isoformat()},
            )
            if sched.name.startswith("snooze:"):
                task = _snoozed_task(sched)
                why = _comeback_quiet(task, planned)
                if why:
                    trace.record(trace_id, "skipped", ACTOR, f"schedule {sched.name}: {why}", now)
                    continue
                if task.status == "snoozed":  # a task without a due date has no window to wake it
                    task.status, task.snoozed_until = "open", None
                    task.save()
                text = f"“{task.title}” is back, as you asked{_due_words(task, tz)}"
                payload["task_id"] = task.id
            payload["text"] = text
            row = inbox.add(
                source=ACTOR,
                text=text,
                priority=DEADLINE_PRIORITY,
                at=now,
                trace_id=trace_id,
                kind="reminder",
                origin="background",
                payload=payload,
                dedup_key=f"once:{sched.id}",
            )
            if row is None:
                continue
            trace.record(
                trace_id,
                "fired",
                ACTOR,
                f"one-off {sched.name} for {planned:%Y-%m-%d %H:%M} UTC",
                now,
                {"schedule": sched.name, "occurrence": planned.isoformat()},
            )
            written.append(row.id)
    if written:
        faults.point("tick:after-once-commit")  # the reminder rows exist; the cortex is not told yet
    return written


def _due_words(task: Task, tz: ZoneInfo) -> str:
    if task.due is None:
        return ""
    if task.due_is_date:
        day = due_date(task.due, tz)
        return f" (due {day:%a} {day.day} {day:%b})"
    local = as_utc(task.due).astimezone(tz)
    return f" (due {local:%a} {local.day} {local:%b %H:%M})"


def _comeback_quiet(task: Task | None, planned: datetime) -> str | None:
    if task is None or task.status not in OPEN_STATUSES:
        return "its task is closed"
    woke = TaskFiring.select().where((TaskFiring.task == task.id) & (TaskFiring.fired_at >= planned)).exists()
    return "waking the task already sent its follow-up" if woke else None


def arm_schedules(now: datetime) -> int:
    """Give enabled schedules written without a next_fire_at (e.g. a reminder row made elsewhere) their first time."""
    armed = 0
    for sched in Schedule.select().where((Schedule.enabled == True) & Schedule.next_fire_at.is_null()):
        try:
            fire = next_fire(sched.cron, zone_of(sched.timezone), now)
        except ValueError as exc:
            logger.error("tick: schedule {} cron {!r} unusable ({}); disabled", sched.name, sched.cron, exc)
            Schedule.update(enabled=False).where(Schedule.id == sched.id).execute()
            continue
        Schedule.update(next_fire_at=fire).where((Schedule.id == sched.id) & Schedule.next_fire_at.is_null()).execute()
        armed += 1
    return armed


def _ras_idle() -> bool:
    return not buffers.any_unscanned() and not alarm_unanswered()


# SKIP LOCKED: with several processes, the one that locked a due schedule fires it; the others skip it now
# and, after its commit, find it no longer due. Every look of the tick reads it: its text is built once.
DUE = prepared(
    lambda s: skip_locked(
        Schedule.select()
        .where((Schedule.enabled == True) & (Schedule.next_fire_at <= s.now))
        .order_by(Schedule.next_fire_at, Schedule.id)
    )
)


def due_schedules(now: datetime) -> list[tuple[Schedule, str]]:
    """Enabled schedules that are due, with the missed-job policy applied; advances each past `now`.

    One entry per due schedule: "fire" for its latest occurrence when that is no
    older than the staleness window (earlier missed occurrences are skipped), else
    "skip". Each returned Schedule carries `occurrence` (the moment fired, or None),
    `missed` (skipped occurrences, the first SKIP_DETAIL of them) and `missed_more`
    (True when there were more). The RAS schedule with nothing new to look at is
    advanced silently: an idle scan would do nothing.
    """
    now = as_utc(now)
    result: list[tuple[Schedule, str]] = []
    ras_idle: bool | None = None
    rows = DUE.models(now=now)
    for sched in rows:
        tz = zone_of(sched.timezone)
        scheduled = as_utc(sched.next_fire_at)
        try:
            following = next_fire(sched.cron, tz, now)
        except (ValueError, KeyError) as exc:  # croniter errors derive from ValueError
            logger.error("tick: schedule {} cron {!r} unusable ({}); disabled", sched.name, sched.cron, exc)
            Schedule.update(enabled=False).where(Schedule.id == sched.id).execute()
            continue
        if sched.kind == "builtin" and sched.name == "ras":
            ras_idle = _ras_idle() if ras_idle is None else ras_idle
            if ras_idle:
                hot.update_by_id(Schedule, sched.id, next_fire_at=following)
                continue
        grace = max(timedelta(seconds=sched.staleness_seconds or 0), MIN_GRACE)
        fresh_from = max(scheduled, now - grace)
        occurrence = (
            scheduled if scheduled >= fresh_from else next_fire(sched.cron, tz, fresh_from - timedelta(microseconds=1))
        )
        latest = None
        while occurrence <= now:
            latest = occurrence
            occurrence = next_fire(sched.cron, tz, occurrence)
        missed: list[datetime] = []
        moment = scheduled
        more = False
        while moment <= now and moment != latest:
            if len(missed) >= SKIP_DETAIL:
                more = True
                break
            missed.append(moment)
            moment = next_fire(sched.cron, tz, moment)
        update = {"next_fire_at": following}
        if latest is not None:
            update["last_fired_at"] = latest
        hot.update_by_id(Schedule, sched.id, **update)
        sched.next_fire_at = following
        sched.occurrence, sched.missed, sched.missed_more = latest, missed, more
        result.append((sched, "fire" if latest is not None else "skip"))
    return result


# When is the next thing? --------------------------------------------------------


def _next_due_sql() -> str:
    """Every moment `next_due` reads from the database, in one statement (the simulated clock asks before each
    of its steps, and a dozen statements cost far more Python to build than SQLite to run)."""

    def cols(model) -> dict:
        return {f.name: f'"{f.column_name}"' for f in model._meta.sorted_fields}

    task, sched, box, topic, kept = cols(Task), cols(Schedule), cols(Outbox), cols(Topic), cols(Inbox)
    statuses = ", ".join(f"'{s}'" for s in OPEN_STATUSES)
    ras = f"{sched['name']} = 'ras' AND {sched['kind']} = 'builtin'"
    enabled = f"{sched['enabled']} = ? AND {sched['next_fire_at']} IS NOT NULL"

    def table(model) -> str:
        return f'"{model._meta.table_name}"'

    return (
        "SELECT "
        # the next_fire_at index walked in order, as far as 64 rows: a closed task still carrying a time is
        # passed over
        f"(SELECT MIN(walked.next_fire_at) FROM (SELECT {task['next_fire_at']} AS next_fire_at, {task['status']} AS "
        f"status FROM {table(Task)} WHERE {task['next_fire_at']} IS NOT NULL ORDER BY {task['next_fire_at']} "
        f"LIMIT 64) walked WHERE walked.status IN ({statuses})), "
        f"(SELECT MIN({sched['next_fire_at']}) FROM {table(Schedule)} WHERE {enabled} AND NOT ({ras})), "
        f"(SELECT MIN({sched['next_fire_at']}) FROM {table(Schedule)} WHERE {enabled} AND {ras}), "
        f"(SELECT MIN({box['deliver_after']}) FROM {table(Outbox)} WHERE {box['status']} = 'held' AND "
        f"{box['deliver_after']} IS NOT NULL), "
        f"(SELECT COUNT(*) FROM (SELECT 1 FROM {table(Topic)} WHERE {topic['status']} = 'active' LIMIT 1) active), "
        f"(SELECT COUNT(*) FROM (SELECT 1 FROM {table(Inbox)} WHERE {kept['status']} = 'kept' LIMIT 1) kept), "
        + due_moment_sql()
    )


def next_due(now: datetime, *, include_idle_ras: bool = False, tz: ZoneInfo = UTC) -> datetime | None:
    """The earliest moment anything could happen (may be <= now when something is due already); `tz`: the
    user's, for when a topic's closing falls due."""
    now = as_utc(now)
    enabled = Schedule.enabled.db_value(True)
    [row] = hot.execute("next_due", _next_due_sql, (enabled, enabled)).rows
    task_at, sched_at, ras_at, held_at, topics, kept = row[:6]
    moment = Task.next_fire_at.python_value
    candidates: list[datetime] = [moment(v) for v in (task_at, held_at) if v is not None]
    if sched_at is not None:
        candidates.append(moment(sched_at))
    # the RAS's own time counts unless it would find nothing to look at; asked only when it would come first
    if ras_at is not None and (sched_at is None or moment(ras_at) < moment(sched_at)):
        if include_idle_ras or not _ras_idle():
            candidates.append(moment(ras_at))
    if topics:  # without an active topic no closing is due, now or later
        if ended_unfired(now, tz):
            candidates.append(now)
        closing = next_close(now, tz)
        if closing is not None:
            candidates.append(closing)
    if kept:  # a user's message kept while the model was down (rare): when it is tried again
        retry = inbox.kept_due()
        if retry is not None:
            candidates.append(retry)
    proposal = earliest_moment(row[6:])
    if proposal is not None:
        candidates.append(proposal)
    return min((as_utc(c) for c in candidates), default=None)
