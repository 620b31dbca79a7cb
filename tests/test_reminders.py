"""Recurring reminders, snoozing and per-task escalation: proposed, approved, then kept by the tick."""

from __future__ import annotations

from datetime import timedelta

from actors.tick.deadlines import plan_task
from storage.models import Approval, Schedule, Task, TaskFiring


def approve_latest(app):
    app.decide(Approval.select().order_by(Approval.id.desc()).get().id, "approve")
    app.wait_idle()


def test_every_first_monday_reminder_is_proposed_then_fires_on_first_mondays(make_app):
    app = make_app(start="2027-01-05T08:00:00+01:00")
    app.say("remind me every first Monday: pay rent")
    app.wait_idle()
    assert not Schedule.select().where(Schedule.kind == "reminder").exists(), "nothing before approval"
    approve_latest(app)
    assert Schedule.get(Schedule.kind == "reminder").cron == "0 9 1-7 * 1"
    before = len(app.user_deliveries())
    app.advance(timedelta(days=62))  # through 1 Feb and 1 Mar 2027, both first Mondays
    said = [d for d in app.user_deliveries()[before:] if "pay rent" in d["text"]]
    days = [d["at"][:10] for d in said]
    assert days == ["2027-02-01", "2027-03-01"]


def test_snoozed_task_is_quiet_until_the_snooze_ends_then_follows_up_once(make_app):
    app = make_app(start="2027-01-05T08:00:00+01:00")
    now = app.clock.now()
    task = Task.create(title="File taxes", due=now + timedelta(days=10), created_at=now,
                       escalation=["7d", "3d", "1d", "due"])
    plan_task(task, now, ["7d", "3d", "1d", "due"], app.config.timezone)
    from actors.proposals.make import propose
    from storage import inbox

    row = inbox.add(source="repl", text="snooze taxes", priority=0, at=now)
    inbox.finish(row.id, now)
    propose(row, [("snooze_task", {"task_id": task.id, "until": "2027-01-13"}, "Snooze")], "repl", now,
                    app.config)
    approve_latest(app)
    assert Task.get_by_id(task.id).status == "snoozed"
    app.advance(timedelta(days=8, hours=12))  # 7d and 3d pass while asleep; it wakes on the 13th
    windows = [f.window for f in TaskFiring.select().where(TaskFiring.task == task.id)]
    assert windows == ["3d"], "only the latest window missed while snoozed fires, once"
    assert Task.get_by_id(task.id).status == "open"


def test_user_adjusted_escalation_replans_the_follow_ups(make_app):
    app = make_app(start="2027-01-05T08:00:00+01:00")
    now = app.clock.now()
    task = Task.create(title="Book dentist", due=now + timedelta(days=20), created_at=now)
    plan_task(task, now, ["14d", "7d", "3d", "1d", "due", "overdue"], app.config.timezone)
    from actors.proposals.make import propose
    from storage import inbox

    row = inbox.add(source="repl", text="only remind me the day before", priority=0, at=now)
    inbox.finish(row.id, now)
    propose(row, [("update_task", {"task_id": task.id, "escalation": "1d"}, "Change")], "repl", now,
                    app.config)
    approve_latest(app)
    app.advance(timedelta(days=25))
    assert [f.window for f in TaskFiring.select().where(TaskFiring.task == task.id)] == ["1d"]
