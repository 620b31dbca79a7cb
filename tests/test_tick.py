"""The tick on a simulated clock with a real SQLite database."""

from __future__ import annotations

import threading
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from actors.tick.actor import TickActor, run_scan
from actors.shared.cron import next_fire, next_fire_walked
from actors.deadlines import plan_task
from actors.shared.schedule_rows import add_reminder
from actors.shared.windows import window_times
from actors.tick.schedules import due_schedules, ensure_builtin_schedules, next_due
from storage import mute
from storage import outbox
from storage.models import Inbox, Outbox, Schedule, Task, TaskFiring, Topic, Trace
from wilson.kernel import quiet
from wilson.kernel.actor import Context, WilsonActor
from wilson.kernel.clock import UTC, RealClock, SimClock, wall_now
from wilson.kernel.config import load
from wilson.kernel.messages import Deliver, InboxReady, SyncRequest, TickNow
from wilson.kernel.supervisor import ActorSpec, Supervisor
from tests.poll import wait_for

BERLIN = ZoneInfo("Europe/Berlin")
WINDOWS = ["14d", "7d", "3d", "1d", "due", "overdue"]


@pytest.fixture
def db(db, tmp_path):
    """Here the working memory (conftest.py db) is asked for by its home directory."""
    return tmp_path


@pytest.fixture
def config(tmp_path):
    cfg = load(tmp_path, environ={})
    cfg.set("core", "timezone", "Europe/Berlin")
    return cfg


def local(*args) -> datetime:
    return datetime(*args, tzinfo=BERLIN).astimezone(UTC)


def date_due(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=BERLIN).astimezone(UTC)


class Recorder:
    def __init__(self, clock):
        self.clock = clock
        self.told: list[tuple[datetime, str, object]] = []

    def __call__(self, name, message):
        self.told.append((self.clock.now(), name, message))

    def to(self, name, kind=None):
        return [(at, m) for at, n, m in self.told if n == name and (kind is None or isinstance(m, kind))]


def live_until(clock: SimClock, end: datetime, tell, tz=BERLIN, windows=WINDOWS, on_step=None) -> int:
    """Step the clock from one due moment to the next, scanning at each, as the simulated app does."""
    steps = 0
    while True:
        now = clock.now()
        due = next_due(now, tz=tz)
        if due is None or due > end:
            break
        clock.set(max(due, now))
        run_scan(clock.now(), tz, windows, tell)
        # everything due at this moment was handled: the next due moment lies ahead
        after = next_due(clock.now(), tz=tz)
        assert after is None or after > clock.now(), f"still due at {clock.now()}: {after}"
        steps += 1
        assert steps < 2000
        if on_step:
            on_step(clock.now())
    clock.set(end)
    run_scan(end, tz, windows, tell)
    return steps


def deadline_rows() -> list[tuple[str, datetime]]:
    return [
        (r.payload["window"], r.created_at) for r in Inbox.select().where(Inbox.kind == "deadline").order_by(Inbox.id)
    ]


# Deadlines ------------------------------------------------------------------------


def test_task_due_in_20_days_fires_each_window_once_at_its_time(db, config):
    clock = SimClock(local(2027, 1, 5, 10, 0))
    tell = Recorder(clock)
    ensure_builtin_schedules(config, clock.now())  # the daily jobs run alongside and must not disturb
    task = Task.create(
        title="Renew passport", due=date_due(date(2027, 1, 25)), due_is_date=True, created_at=clock.now()
    )
    plan_task(task, clock.now(), WINDOWS, BERLIN)
    assert task.next_window == "14d" and task.next_fire_at == local(2027, 1, 11, 9, 0)

    live_until(clock, clock.now() + timedelta(days=25), tell)

    assert deadline_rows() == [
        ("14d", local(2027, 1, 11, 9, 0)),
        ("7d", local(2027, 1, 18, 9, 0)),
        ("3d", local(2027, 1, 22, 9, 0)),
        ("1d", local(2027, 1, 24, 9, 0)),
        ("due", local(2027, 1, 25, 9, 0)),
        ("overdue", local(2027, 1, 26, 9, 0)),
    ]
    row = Inbox.get(Inbox.kind == "deadline")
    assert (row.priority, row.origin, row.source) == (4, "background", "tick")
    assert row.payload == {
        "task_id": task.id,
        "title": "Renew passport",
        "window": "14d",
        "due_is_date": True,
        "due": date_due(date(2027, 1, 25)).isoformat(),
        "topic": None,
        "bundle": local(2027, 1, 11, 9, 0).isoformat(),
    }
    assert TaskFiring.select().count() == 6
    assert Task.get_by_id(task.id).next_fire_at is None
    # every deadline nudged the cortex at the moment it was written
    assert [at for at, _ in tell.to("cortex", InboxReady)] == [at for _, at in deadline_rows()]
    # and the daily briefing kept its 07:00
    assert len(tell.to("thalamus", SyncRequest)) == 25


def test_completing_a_task_midway_stops_the_remaining_windows(db):
    clock = SimClock(local(2027, 1, 5, 10, 0))
    tell = Recorder(clock)
    task = Task.create(title="File taxes", due=date_due(date(2027, 1, 25)), due_is_date=True, created_at=clock.now())
    plan_task(task, clock.now(), WINDOWS, BERLIN)
    live_until(clock, local(2027, 1, 19, 12, 0), tell)
    assert [w for w, _ in deadline_rows()] == ["14d", "7d"]

    task = Task.get_by_id(task.id)
    task.status, task.completed_at = "done", clock.now()
    plan_task(task, clock.now(), WINDOWS, BERLIN)
    live_until(clock, local(2027, 2, 5), tell)
    assert [w for w, _ in deadline_rows()] == ["14d", "7d"]
    assert next_due(clock.now()) is None


def test_snoozing_stops_windows_until_the_snooze_ends_then_the_latest_missed_fires_once(db):
    clock = SimClock(local(2027, 1, 5, 10, 0))
    tell = Recorder(clock)
    task = Task.create(title="Call the bank", due=date_due(date(2027, 1, 25)), due_is_date=True, created_at=clock.now())
    plan_task(task, clock.now(), WINDOWS, BERLIN)
    live_until(clock, local(2027, 1, 12), tell)
    task = Task.get_by_id(task.id)
    task.status, task.snoozed_until = "snoozed", local(2027, 1, 23, 8, 0)
    plan_task(task, clock.now(), WINDOWS, BERLIN)
    live_until(clock, local(2027, 1, 23, 12, 0), tell)
    # 7d and 3d passed while snoozed: only 3d comes, when the snooze ends
    assert deadline_rows() == [("14d", local(2027, 1, 11, 9, 0)), ("3d", local(2027, 1, 23, 8, 0))]
    assert Task.get_by_id(task.id).status == "open"
    live_until(clock, local(2027, 1, 27), tell)
    assert [w for w, _ in deadline_rows()] == ["14d", "3d", "1d", "due", "overdue"]


def test_changing_the_due_date_replans_the_windows(db):
    clock = SimClock(local(2027, 1, 5, 10, 0))
    tell = Recorder(clock)
    task = Task.create(title="Book venue", due=date_due(date(2027, 1, 25)), due_is_date=True, created_at=clock.now())
    plan_task(task, clock.now(), WINDOWS, BERLIN)
    live_until(clock, local(2027, 1, 12), tell)
    assert deadline_rows() == [("14d", local(2027, 1, 11, 9, 0))]

    task = Task.get_by_id(task.id)
    task.due = date_due(date(2027, 2, 8))
    plan_task(task, clock.now(), WINDOWS, BERLIN)
    live_until(clock, local(2027, 2, 12), tell)
    assert deadline_rows() == [
        ("14d", local(2027, 1, 11, 9, 0)),  # against the old due
        ("14d", local(2027, 1, 25, 9, 0)),
        ("7d", local(2027, 2, 1, 9, 0)),
        ("3d", local(2027, 2, 5, 9, 0)),
        ("1d", local(2027, 2, 7, 9, 0)),
        ("due", local(2027, 2, 8, 9, 0)),
        ("overdue", local(2027, 2, 9, 9, 0)),
    ]


def test_task_created_late_skips_past_windows_and_an_overdue_one_is_told_once(db):
    now = local(2027, 1, 20, 10, 0)
    late = Task.create(title="late", due=date_due(date(2027, 1, 25)), due_is_date=True, created_at=now)
    plan_task(late, now, WINDOWS, BERLIN)
    assert (late.next_window, late.next_fire_at) == ("3d", local(2027, 1, 22, 9, 0))

    overdue = Task.create(title="forgotten", due=local(2027, 1, 10, 15, 0), created_at=now)
    plan_task(overdue, now, WINDOWS, BERLIN)
    assert (overdue.next_window, overdue.next_fire_at) == ("overdue", now)
    clock = SimClock(now)
    run_scan(now, BERLIN, WINDOWS, Recorder(clock))
    run_scan(now + timedelta(hours=1), BERLIN, WINDOWS, Recorder(clock))
    assert [r.payload["task_id"] for r in Inbox.select().where(Inbox.kind == "deadline")] == [overdue.id]
    assert Task.get_by_id(overdue.id).next_fire_at is None


def test_timed_due_windows_keep_local_time_across_dst_and_own_escalation_overrides():
    due = local(2027, 4, 2, 15, 0)  # after the March change
    times = dict(window_times(due, False, WINDOWS, BERLIN))
    assert times["7d"].astimezone(BERLIN).hour == 15 and times["7d"].astimezone(BERLIN).day == 26
    assert times["due"] == due - timedelta(hours=2)
    assert times["overdue"] == due + timedelta(days=1)
    assert [w for w, _ in window_times(due, False, ["1d", "2h", "bogus"], BERLIN)] == ["1d", "2h"]


def test_downtime_through_several_windows_fires_only_the_latest(db):
    clock = SimClock(local(2027, 1, 5, 10, 0))
    task = Task.create(
        title="Visa",
        due=date_due(date(2027, 1, 25)),
        due_is_date=True,
        created_at=clock.now(),
        escalation=["14d", "7d", "3d", "1d"],
    )
    plan_task(task, clock.now(), WINDOWS, BERLIN)
    clock.set(local(2027, 1, 23, 8, 0))  # down through 14d, 7d and 3d
    run_scan(clock.now(), BERLIN, WINDOWS, Recorder(clock))
    run_scan(clock.now(), BERLIN, WINDOWS, Recorder(clock))
    assert deadline_rows() == [("3d", clock.now())]
    skipped = [t.data["window"] for t in Trace.select().where(Trace.stage == "skipped").order_by(Trace.id)]
    assert skipped == ["14d", "7d"]
    assert Task.get_by_id(task.id).next_window == "1d"


# Schedules -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "start,end",
    [
        (local(2027, 3, 24, 12, 0), local(2027, 4, 2, 12, 0)),  # spring forward on Sunday 28 March
        (local(2027, 10, 27, 12, 0), local(2027, 11, 5, 12, 0)),  # fall back on Sunday 31 October
    ],
)
def test_briefing_stays_at_0700_local_across_dst_exactly_once_a_day(db, config, start, end):
    clock = SimClock(start)
    tell = Recorder(clock)
    ensure_builtin_schedules(config, clock.now())
    live_until(clock, end, tell)
    fired = [at.astimezone(BERLIN) for at, _ in tell.to("thalamus", SyncRequest)]
    assert all(at.hour == 7 and at.minute == 0 for at in fired), fired
    days = [at.date() for at in fired]
    assert days == [start.astimezone(BERLIN).date() + timedelta(days=n + 1) for n in range(9)]
    assert all(m == SyncRequest("daily") for _, m in tell.to("thalamus"))
    consolidations = [at.astimezone(BERLIN) for at, name, _ in tell.told if name == "hippocampus"]
    assert len(consolidations) == 9 and all(at.hour == 3 for at in consolidations)


def test_next_fire_maps_skipped_and_repeated_wall_times_once():
    # 02:30 does not exist on 28 March 2027 in Berlin: the job runs once, just after the gap
    spring = [next_fire("30 2 * * *", BERLIN, local(2027, 3, 27, 3, 0))]
    spring.append(next_fire("30 2 * * *", BERLIN, spring[0]))
    assert [m.astimezone(BERLIN).strftime("%d %H:%M") for m in spring] == ["28 03:30", "29 02:30"]
    # 02:30 happens twice on 31 October: a daily job runs at the first only
    fall = next_fire("30 2 * * *", BERLIN, local(2027, 10, 30, 12, 0))
    assert fall == datetime(2027, 10, 31, 0, 30, tzinfo=UTC)
    assert next_fire("30 2 * * *", BERLIN, fall) == datetime(2027, 11, 1, 1, 30, tzinfo=UTC)
    # an every-15-minutes job keeps running through the repeated hour, no gap and no duplicate
    moment, seen = datetime(2027, 10, 30, 23, 50, tzinfo=UTC), []
    while moment < datetime(2027, 10, 31, 2, 0, tzinfo=UTC):
        moment = next_fire("*/15 * * * *", BERLIN, moment)
        seen.append(moment)
    assert all(b - a == timedelta(minutes=15) for a, b in zip(seen, seen[1:]))


def test_three_day_downtime_fires_a_daily_job_once_and_records_the_skipped(db, config):
    clock = SimClock(local(2027, 1, 5, 8, 0))
    ensure_builtin_schedules(config, clock.now())
    assert Schedule.get(Schedule.name == "briefing").next_fire_at == local(2027, 1, 6, 7, 0)
    clock.set(local(2027, 1, 8, 8, 30))  # down through the 6th, 7th and 8th at 07:00
    tell = Recorder(clock)
    run_scan(clock.now(), BERLIN, WINDOWS, tell)
    run_scan(clock.now(), BERLIN, WINDOWS, tell)
    assert len(tell.to("thalamus", SyncRequest)) == 1
    fired = Trace.get((Trace.stage == "fired") & Trace.reason.contains("briefing"))
    assert fired.data["occurrence"] == local(2027, 1, 8, 7, 0).isoformat()
    skipped = [
        t.data["missed"] for t in Trace.select().where(Trace.stage == "skipped") if t.data.get("schedule") == "briefing"
    ]
    assert skipped == [local(2027, 1, 6, 7, 0).isoformat(), local(2027, 1, 7, 7, 0).isoformat()]
    assert (
        len({t.trace_id for t in Trace.select().where(Trace.stage.in_(["fired", "skipped"]))})
        == Trace.select().where(Trace.stage.in_(["fired", "skipped"])).count()
    )
    assert Schedule.get(Schedule.name == "briefing").next_fire_at == local(2027, 1, 9, 7, 0)


def test_a_job_missed_beyond_its_staleness_is_skipped_not_fired(db):
    clock = SimClock(local(2027, 1, 5, 8, 0))
    add_reminder("water", "0 8 * * *", "water the plants", "Europe/Berlin", clock.now(), staleness_seconds=3600)
    add_reminder("stretch", "0 10 * * *", "stretch", "Europe/Berlin", clock.now(), staleness_seconds=3600)
    clock.set(local(2027, 1, 8, 10, 30))  # the latest 08:00 is 2.5 hours old, the latest 10:00 half an hour
    decisions = due_schedules(clock.now())
    assert sorted((s.name, action, s.occurrence, len(s.missed)) for s, action in decisions) == [
        ("stretch", "fire", local(2027, 1, 8, 10, 0), 3),
        ("water", "skip", None, 3),
    ]
    assert due_schedules(clock.now()) == []
    assert Schedule.get(Schedule.name == "water").next_fire_at == local(2027, 1, 9, 8, 0)

    clock.set(local(2027, 1, 11, 11, 30))  # down again, through three more of each; both latest are stale
    result = run_scan(clock.now(), BERLIN, WINDOWS, Recorder(clock))
    assert (result.fired, sorted(result.skipped)) == ([], ["stretch", "water"])
    assert Inbox.select().count() == 0
    skipped = Trace.select().where(Trace.stage == "skipped")
    assert sorted(t.data["schedule"] for t in skipped) == ["stretch"] * 3 + ["water"] * 3


def test_every_first_monday_reminder_fires_on_first_mondays_only(db):
    clock = SimClock(local(2027, 1, 1, 0, 0))
    tell = Recorder(clock)
    add_reminder("rent", "0 9 1-7 * 1", "pay rent", "Europe/Berlin", clock.now())
    live_until(clock, local(2027, 7, 1), tell)
    rows = list(Inbox.select().where(Inbox.kind == "reminder").order_by(Inbox.id))
    fired = [r.created_at.astimezone(BERLIN) for r in rows]
    assert [f.date() for f in fired] == [
        date(2027, 1, 4),
        date(2027, 2, 1),
        date(2027, 3, 1),
        date(2027, 4, 5),
        date(2027, 5, 3),
        date(2027, 6, 7),
    ]
    assert all(f.hour == 9 and f.weekday() == 0 and f.day <= 7 for f in fired)
    assert rows[0].payload == {"schedule": "rent", "text": "pay rent"}
    assert next_fire("0 9 1-7 * 1", BERLIN, local(2027, 1, 1), day_or=True) == local(2027, 1, 1, 9, 0)  # OR: wrong
    assert (rows[0].priority, rows[0].origin) == (4, "background")
    assert len(tell.to("cortex", InboxReady)) == 6


def test_a_reminder_row_written_without_a_time_is_armed_by_the_scan(db):
    clock = SimClock(local(2027, 1, 5, 8, 0))
    Schedule.create(name="bins", cron="0 19 * * 2", kind="reminder", text="bins out", timezone="Europe/Berlin")
    run_scan(clock.now(), BERLIN, WINDOWS, Recorder(clock))
    assert next_due(clock.now()) == local(2027, 1, 5, 19, 0)
    live_until(clock, local(2027, 1, 13), Recorder(clock))
    assert [r.created_at for r in Inbox.select().where(Inbox.kind == "reminder")] == [
        local(2027, 1, 5, 19, 0),
        local(2027, 1, 12, 19, 0),
    ]


def test_builtin_schedules_follow_config_changes(db, config):
    now = local(2027, 1, 5, 8, 0)
    ensure_builtin_schedules(config, now)
    assert Schedule.get(Schedule.name == "ras").cron == "*/15 * * * *"
    config.set("thalamus", "briefing", "30 6 * * *")
    config.set("ras", "interval_minutes", 120)
    ensure_builtin_schedules(config, now)
    assert Schedule.get(Schedule.name == "briefing").next_fire_at == local(2027, 1, 6, 6, 30)
    assert Schedule.get(Schedule.name == "ras").cron == "0 */2 * * *"
    config.set("hippocampus", "schedule", "not a cron")
    config.set("thalamus", "briefing", "0 7 30 2 *")  # valid syntax, never happens
    ensure_builtin_schedules(config, now)
    assert not Schedule.get(Schedule.name == "consolidate").enabled
    assert not Schedule.get(Schedule.name == "briefing").enabled
    assert next_due(now, include_idle_ras=True) == local(2027, 1, 5, 10, 0)  # only the RAS is left


def test_idle_ras_is_not_a_due_moment_but_new_buffer_rows_make_it_one(db, config):
    from storage import buffers

    now = local(2027, 1, 5, 8, 1)
    ensure_builtin_schedules(config, now)
    assert next_due(now) == local(2027, 1, 6, 3, 0)  # nightly consolidation, not the idle RAS
    assert next_due(now, include_idle_ras=True) == local(2027, 1, 5, 8, 15)
    buffers.add(channel="email", text="hello", dedup_key="m1", at=now)
    assert next_due(now) == local(2027, 1, 5, 8, 15)


# Quiet hours ----------------------------------------------------------------------


def test_quiet_until_handles_midnight_dst_and_mutes(db):
    assert quiet.quiet_until(local(2027, 1, 5, 12, 0), BERLIN) is None
    assert quiet.quiet_until(local(2027, 1, 5, 23, 0), BERLIN) == local(2027, 1, 6, 7, 0)
    assert quiet.quiet_until(local(2027, 1, 6, 3, 0), BERLIN) == local(2027, 1, 6, 7, 0)
    assert quiet.quiet_until(local(2027, 1, 6, 7, 0), BERLIN) is None
    # the night the clocks change, quiet still ends at 07:00 on the wall
    assert quiet.quiet_until(local(2027, 3, 27, 23, 0), BERLIN) == datetime(2027, 3, 28, 5, 0, tzinfo=UTC)
    assert quiet.quiet_until(local(2027, 10, 30, 23, 0), BERLIN) == datetime(2027, 10, 31, 6, 0, tzinfo=UTC)
    assert quiet.quiet_until(local(2027, 1, 5, 14, 0), BERLIN, "13:00-15:00") == local(2027, 1, 5, 15, 0)
    assert quiet.quiet_until(local(2027, 1, 5, 23, 0), BERLIN, "off") is None
    # a mute during the day; a mute that runs into the night lasts until the night ends
    assert quiet.quiet_until(local(2027, 1, 5, 12, 0), BERLIN, muted_until=local(2027, 1, 5, 15, 0)) == local(
        2027, 1, 5, 15, 0
    )
    assert quiet.quiet_until(local(2027, 1, 5, 12, 0), BERLIN, muted_until=local(2027, 1, 5, 23, 0)) == local(
        2027, 1, 6, 7, 0
    )
    assert quiet.quiet_until(local(2027, 1, 5, 12, 0), BERLIN, muted_until=local(2027, 1, 5, 11, 0)) is None
    assert mute.muted_until() is None
    mute.mute(local(2027, 1, 5, 15, 0))
    assert mute.muted_until() == local(2027, 1, 5, 15, 0)
    mute.mute(None)
    assert mute.muted_until() is None


def test_a_follow_up_in_quiet_hours_is_held_and_released_at_0700(db):
    clock = SimClock(local(2027, 1, 9, 12, 0))
    tell = Recorder(clock)
    task = Task.create(title="Early flight", due=local(2027, 1, 10, 1, 0), created_at=clock.now())
    plan_task(task, clock.now(), WINDOWS, BERLIN)
    assert task.next_window == "due" and task.next_fire_at == local(2027, 1, 9, 23, 0)

    clock.set(next_due(clock.now()))
    run_scan(clock.now(), BERLIN, WINDOWS, tell)
    row = Inbox.get(Inbox.kind == "deadline")
    # what the cortex does with a non-urgent surfacing at 23:00
    hold = quiet.quiet_until(clock.now(), BERLIN, "22:00-07:00", mute.muted_until())
    assert hold == local(2027, 1, 10, 7, 0)
    held = outbox.add(
        channel="telegram",
        text="Your flight is soon",
        trace_id=row.trace_id,
        key="o1",
        at=clock.now(),
        deliver_after=hold,
    )
    assert held.status == "held"

    clock.set(local(2027, 1, 10, 6, 59))
    run_scan(clock.now(), BERLIN, WINDOWS, tell)
    assert tell.to("telegram") == [] and Outbox.get_by_id(held.id).status == "held"
    assert next_due(clock.now()) == local(2027, 1, 10, 7, 0)
    clock.set(next_due(clock.now()))
    run_scan(clock.now(), BERLIN, WINDOWS, tell)
    assert tell.to("telegram") == [(local(2027, 1, 10, 7, 0), Deliver(held.id))]
    assert Outbox.get_by_id(held.id).status == "pending"
    run_scan(clock.now(), BERLIN, WINDOWS, tell)
    assert len(tell.to("telegram")) == 1


# Topics ---------------------------------------------------------------------------


def test_a_topic_end_is_reported_once(db):
    clock = SimClock(local(2027, 1, 5, 8, 0))
    tell = Recorder(clock)
    topic = Topic.create(title="Japan trip", status="active", ends=local(2027, 1, 20, 18, 0), created_at=clock.now())
    assert next_due(clock.now()) == topic.ends
    live_until(clock, local(2027, 1, 25), tell)
    rows = list(Inbox.select().where(Inbox.kind == "topic_end"))
    # its closing is asked the day after (the first midnight after its end), not at the end's minute
    assert [(r.created_at, r.priority, r.origin) for r in rows] == [(local(2027, 1, 21, 0, 0), 4, "background")]
    assert rows[0].payload == {"topic_id": topic.id, "title": "Japan trip", "ends": topic.ends.isoformat()}
    assert next_due(clock.now()) is None  # still active, but already reported


def test_a_topic_with_a_task_still_to_do_after_its_day_is_not_closed_until_that_is_done(db):
    clock = SimClock(local(2027, 4, 20, 8, 0))
    tell = Recorder(clock)
    move = Topic.create(title="Move to Leipzig", status="active", starts=local(2027, 4, 30), created_at=clock.now())
    Task.create(title="Pack boxes", topic=move, due=local(2027, 4, 23), status="open", created_at=clock.now())
    register = Task.create(
        # due the day after moving day: a day's task is stored at its midnight, the very end of the move's day
        title="Register the change of address",
        topic=move,
        due=local(2027, 5, 1),
        status="open",
        created_at=clock.now(),
    )
    live_until(clock, local(2027, 5, 10), tell)
    # the move's day is over but registering at the new address is not: a close would drop it
    assert not Inbox.select().where(Inbox.kind == "topic_end").exists()
    assert (next_due(clock.now()) or clock.now() + timedelta(days=1)) > clock.now()  # and the tick does not spin

    Task.update(status="done", completed_at=clock.now()).where(Task.id == register.id).execute()
    run_scan(clock.now(), BERLIN, WINDOWS, tell)
    (row,) = Inbox.select().where(Inbox.kind == "topic_end")
    assert row.payload["topic_id"] == move.id  # the errand after it is done: its close is asked (and its packing)


# The actor -------------------------------------------------------------------------


class Sink(WilsonActor):
    def __init__(self, ctx, name=None, sink=None):
        super().__init__(ctx, name)
        self.sink = sink

    def receive(self, message):
        self.sink.append((self.name, message))


def start_organism(config, clock, names=("thalamus", "cortex", "telegram")):
    sink: list = []
    ctx = Context(config=config, clock=clock, synapse=None, directory=None)
    specs = [ActorSpec(n, Sink, {"sink": sink}) for n in names] + [ActorSpec("tick", TickActor)]
    supervisor = Supervisor(ctx, specs)
    ctx.directory = supervisor
    supervisor.start()
    return supervisor, sink


def test_tick_actor_applies_missed_jobs_on_start_and_fires_on_tick(db, config):
    # It was down: the briefing row says 6 January, the clock says the 8th, 07:10.
    clock = SimClock(local(2027, 1, 5, 8, 0))
    ensure_builtin_schedules(config, clock.now())
    clock.set(local(2027, 1, 8, 7, 10))
    supervisor, sink = start_organism(config, clock)
    try:
        supervisor.ask("tick", TickNow())
        supervisor.ping_all()
        assert sink == [("thalamus", SyncRequest("daily"))]  # once, on start, for the 8th

        clock.set(local(2027, 1, 9, 6, 59))
        supervisor.ask("tick", TickNow())
        clock.set(local(2027, 1, 9, 7, 0))
        result = supervisor.ask("tick", TickNow())
        assert result.fired == ["briefing"]
        supervisor.ping_all()
        assert sink == [("thalamus", SyncRequest("daily"))] * 2
    finally:
        supervisor.stop()


def test_tick_actor_with_a_real_clock_runs_its_own_timer(db, config):
    config.set("tick", "interval_seconds", 0.02)
    before = set(threading.enumerate())
    supervisor, sink = start_organism(config, RealClock())
    supervisor.ping_all()  # answered once on_start, which starts the timer, has run
    timers = [t for t in set(threading.enumerate()) - before if t.name == "tick-timer"]
    try:
        assert len(timers) == 1, "the tick actor runs one timer of its own"
        row = outbox.add(
            channel="telegram",
            text="good morning",
            trace_id="t1",
            key="k1",
            at=wall_now(),
            deliver_after=wall_now() - timedelta(seconds=1),
        )
        wait_for(lambda: ("telegram", Deliver(row.id)) in sink, 30, "the delivery")  # long only on a loaded machine
    finally:
        supervisor.stop()
    timers[0].join(timeout=5)
    assert not timers[0].is_alive(), "the timer outlived its actor"


def test_follow_ups_falling_due_in_the_same_local_hour_fire_together(db):
    clock = SimClock(local(2027, 1, 5, 10, 0))
    tell = Recorder(clock)
    early = Task.create(title="Call the bank", due=local(2027, 1, 6, 16, 10), created_at=clock.now())
    late = Task.create(title="Pay the plumber", due=local(2027, 1, 6, 16, 50), created_at=clock.now())
    later = Task.create(title="Water plants", due=local(2027, 1, 6, 17, 5), created_at=clock.now())
    for task in (early, late, later):
        plan_task(task, clock.now(), ["due"], BERLIN)  # two hours ahead: 14:10, 14:50 and 15:05
    live_until(clock, local(2027, 1, 6, 16, 0), tell, windows=["due"])
    fired = {f.task_id: f.fired_at for f in TaskFiring.select()}
    assert fired[early.id] == fired[late.id] == local(2027, 1, 6, 14, 10), "one hour, one bundle"
    assert fired[later.id] == local(2027, 1, 6, 15, 5), "the next hour is the next bundle"
    bundles = {r.payload["bundle"] for r in Inbox.select().where(Inbox.kind == "deadline")}
    assert len(bundles) == 2


# Windows per kind of task ---------------------------------------------------------


def test_a_task_kind_is_read_from_its_title_then_its_topic():
    from actors.shared.windows import task_kind

    assert task_kind("Renew passport") == "document"
    assert task_kind("Book flights to Tokyo") == "booking"
    assert task_kind("Pack the suitcase") == "packing"
    assert task_kind("Pay the electricity bill") == "bill"
    assert task_kind("Dentist appointment") == "appointment"
    assert task_kind("Buy a gift for Anna") == "birthday"
    assert task_kind("Write a card", topic="Anna's birthday") == "birthday", "the topic says what the title doesn't"
    assert task_kind("Book a table", topic="Anna's birthday") == "booking", "the title comes first"
    assert task_kind("Water plants", topic="Trip to Japan") == "generic"


def test_a_birthday_task_follows_its_kinds_windows_and_a_task_of_its_own_overrides_them(db, config):
    from actors.shared.windows import windows_config

    config.set("tick", "windows_birthday", "3d,due")
    config.set("tick", "windows_bill", "3d,due,overdue")
    windows = windows_config(config)
    clock = SimClock(local(2027, 2, 1, 10, 0))
    tell = Recorder(clock)
    birthday = Task.create(
        title="Card for Anna's birthday", due=date_due(date(2027, 2, 20)), due_is_date=True, created_at=clock.now()
    )
    other = Task.create(
        title="Clean the garage", due=date_due(date(2027, 2, 20)), due_is_date=True, created_at=clock.now()
    )
    own = Task.create(
        title="Gift for Ben's birthday",
        due=date_due(date(2027, 2, 20)),
        due_is_date=True,
        escalation=["1d"],
        created_at=clock.now(),
    )
    for task in (birthday, other, own):
        plan_task(task, clock.now(), windows, BERLIN)
    live_until(clock, local(2027, 2, 23, 12, 0), tell, windows=windows)
    fired = {}
    for row in Inbox.select().where(Inbox.kind == "deadline").order_by(Inbox.id):
        fired.setdefault(row.payload["task_id"], []).append((row.payload["window"], row.created_at))
    assert fired[birthday.id] == [("3d", local(2027, 2, 17, 9, 0)), ("due", local(2027, 2, 20, 9, 0))]
    assert [w for w, _ in fired[other.id]] == ["7d", "1d", "due", "overdue"], "other kinds keep [tick] windows"
    assert fired[own.id] == [("1d", local(2027, 2, 19, 9, 0))], "Task.escalation overrides the kind's windows"


DST_ZONES = ["Europe/Berlin", "America/New_York", "Australia/Sydney", "Australia/Lord_Howe", "Africa/Casablanca", "UTC"]
CRONS = ["*/15 * * * *", "0 * * * *", "0 7 * * *", "30 2 * * *", "*/7 2-3 * * *", "0 9 1-7 * 1", "59 23 31 12 *"]


def offset_changes(tz: ZoneInfo, year: int) -> list[datetime]:
    """The hours of `year` (UTC) at which the zone's offset changes."""
    hour, end, found = datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC), []
    while hour < end:
        if hour.astimezone(tz).utcoffset() != (hour + timedelta(hours=1)).astimezone(tz).utcoffset():
            found.append(hour)
        hour += timedelta(hours=1)
    return found


@pytest.mark.parametrize("zone", DST_ZONES)
def test_the_next_firing_away_from_a_change_is_what_the_walk_across_changes_finds(zone):
    """next_fire reads the first wall time as its one moment unless an offset change lies near; around each
    change of 2027 (Lord Howe's half hour and Morocco's two around Ramadan among them), every 20 minutes from
    four hours before to four after (the slack is three), and every nine days of the year, it answers what the
    walk over the slack answers."""
    tz = ZoneInfo(zone)
    changes = offset_changes(tz, 2027)
    assert zone == "UTC" or len(changes) >= 2
    moments = [change + timedelta(minutes=m) for change in changes for m in range(-240, 241, 20)]
    moments += [datetime(2027, 1, 1, 5, 17, tzinfo=UTC) + timedelta(days=d) for d in range(0, 365, 9)]
    differ = [
        (cron, moment.isoformat())
        for moment in moments
        for cron in CRONS
        if next_fire(cron, tz, moment) != next_fire_walked(cron, tz, moment)
    ]
    assert differ == []
