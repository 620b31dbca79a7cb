"""Recurring reminders, snoozing and per-task escalation: proposed, approved, then kept by the tick."""

from __future__ import annotations

from datetime import timedelta

from actors.deadlines import plan_task
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
    task = Task.create(
        title="File taxes", due=now + timedelta(days=10), created_at=now, escalation=["7d", "3d", "1d", "due"]
    )
    plan_task(task, now, ["7d", "3d", "1d", "due"], app.config.timezone)
    from actors.proposals.make import propose
    from storage import inbox

    row = inbox.add(source="repl", text="snooze taxes", priority=0, at=now)
    inbox.finish(row.id, now)
    propose(row, [("snooze_task", {"task_id": task.id, "until": "2027-01-13"}, "Snooze")], "repl", now, app.config)
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
    propose(row, [("update_task", {"task_id": task.id, "escalation": "1d"}, "Change")], "repl", now, app.config)
    approve_latest(app)
    app.advance(timedelta(days=25))
    assert [f.window for f in TaskFiring.select().where(TaskFiring.task == task.id)] == ["1d"]


def test_a_reminder_can_be_stopped_in_words_and_then_never_fires_again(make_app):
    app = make_app(start="2027-01-05T08:00:00+01:00")  # a Tuesday
    for text in ("remind me every Monday at 9 to water the plants", "remind me every Friday at 18 to call grandma"):
        app.say(text)
        app.wait_idle()
        approve_latest(app)
    app.say("what are my reminders?")
    app.wait_idle()
    assert app.user_deliveries()[-1]["text"] == (
        "Your reminders:\n• call grandma — at 18:00, only on Friday\n• water the plants — at 09:00, only on Monday"
    )
    app.say("cancel the gym reminder")  # none like it: nothing is proposed
    app.wait_idle()
    assert app.user_deliveries()[-1]["text"].startswith("I couldn't find a reminder about “gym”")
    assert Approval.select().count() == 2
    app.say("stop reminding me to water the plants")
    app.wait_idle()
    plants = Schedule.get(Schedule.text == "water the plants")
    assert plants.enabled, "nothing stops before the approval"
    approval = Approval.select().order_by(Approval.id.desc()).get()
    assert [i.description for i in approval.items] == ["Stop reminder: water the plants (at 09:00, only on Monday)"]
    approve_latest(app)
    before = len(app.user_deliveries())
    app.advance(timedelta(days=14))  # two Mondays, two Fridays
    said = [d["text"] for d in app.user_deliveries()[before:] if d["text"].startswith("Reminder:")]
    assert said == ["Reminder: call grandma", "Reminder: call grandma"]
    assert not Schedule.get_by_id(plants.id).enabled


def test_only_the_users_own_run_may_stop_a_reminder_and_only_a_reminder_of_theirs(make_app):
    from actors import tools
    from actors.cortex.calls import RunOutcome, handle_call
    from actors.tools.reminders import CancelReminder
    from wilson.skills import Call

    app = make_app(start="2027-01-05T08:00:00+01:00")
    app.say("remind me every Monday at 9 to water the plants")
    assert app.wait_idle()
    approve_latest(app)
    plants = Schedule.get(Schedule.text == "water the plants")
    assert "cancel_reminder" in tools.offered("user") and "cancel_reminder" not in tools.offered("background")
    # a run a mail started, calling it anyway inside a proposal: refused, nothing proposed
    outcome = RunOutcome()
    answer = handle_call(
        tools.PROPOSE,
        {"changes": [{"action": "cancel_reminder", "reminder_id": plants.id}]},
        outcome,
        app.clock.now(),
        app.config.timezone,
        origin="background",
    )
    assert "error" in answer and not outcome.proposals and outcome.rejected_calls
    # a builtin job, and a snoozed task's comeback (the task's own), are not the user's reminders to stop
    briefing = Schedule.get(Schedule.name == "briefing")
    comeback = Schedule.create(
        name="snooze:7:2027-01-09T09:00:00+01:00",
        cron="",
        kind="once",
        text="Pay rent is back",
        next_fire_at=app.clock.now(),
    )
    call = Call(now=app.clock.now(), tz=app.config.timezone)
    for schedule in (briefing, comeback):
        assert "no reminder" in CancelReminder().validate({"reminder_id": schedule.id}, call)
        assert CancelReminder().execute({"reminder_id": schedule.id}, call)["stopped"] is False
        assert Schedule.get_by_id(schedule.id).enabled
    listed = handle_call("list_reminders", {}, RunOutcome(), app.clock.now(), app.config.timezone, origin="user")
    assert [r["text"] for r in listed] == ["water the plants"]


def test_a_heads_up_within_hours_of_approving_the_task_is_left_out_and_the_due_day_still_comes(make_app):
    app = make_app(start="2027-01-05T08:00:00+01:00")  # Tuesday
    app.say("add pay rent by tomorrow")
    app.wait_idle()
    approve_latest(app)
    app.say("add renew the gym pass by Friday")
    app.wait_idle()
    approve_latest(app)
    rent, gym = (Task.get(Task.title == title) for title in ("Pay rent", "Renew the gym pass"))
    app.advance(timedelta(days=2, hours=2))  # Thursday 10:00
    fired = {
        task.title: [
            f.window for f in TaskFiring.select().where(TaskFiring.task == task.id).order_by(TaskFiring.fired_at)
        ]
        for task in (rent, gym)
    }
    # the rent's "1d" heads-up (Tuesday 09:00) would come an hour after the user read its date; its day comes
    assert fired["Pay rent"] == ["due", "overdue"]
    assert fired["Renew the gym pass"] == ["1d"]  # two days after approving: not just seen
    said = [d["text"] for d in app.user_deliveries()]
    assert any("Pay rent" in text and "due today" in text.lower() for text in said), said[-4:]


def test_a_week_ahead_heads_up_days_after_approving_is_left_out_and_the_day_before_still_comes(make_app):
    app = make_app(start="2027-04-13T18:40:00+02:00")  # Tuesday evening
    app.say("add pay the course fee by 25 april")
    app.wait_idle()
    approve_latest(app)
    app.say("add renew the library card by 30 april")
    app.wait_idle()
    approve_latest(app)
    fee, card = (Task.get(Task.title.contains(word)) for word in ("course fee", "library card"))
    app.advance(timedelta(days=13))  # Monday 26 April
    fired = {
        task.title: [
            f.window for f in TaskFiring.select().where(TaskFiring.task == task.id).order_by(TaskFiring.fired_at)
        ]
        for task in (fee, card)
    }
    # the fee's week-ahead heads-up (Sunday the 18th) would come five days after the user planned it: left out
    assert fired[fee.title] == ["1d", "due", "overdue"]
    # the card's (Friday the 23rd) comes ten days after: the user has not thought of it since
    assert fired[card.title][0] == "7d"
    said = [d["text"] for d in app.user_deliveries() if "course fee" in d["text"]]
    assert said and not any("in 7 days" in text for text in said), said


def test_windows_of_the_tasks_own_and_approvals_that_show_no_date_keep_every_heads_up(make_app):
    from actors.proposals.make import propose
    from storage import inbox

    app = make_app(start="2027-01-05T08:00:00+01:00")  # Tuesday
    now = app.clock.now()
    rent = Task.create(title="Pay rent", due=now + timedelta(days=1), due_is_date=True, created_at=now)
    plan_task(rent, now, ["1d", "due"], app.config.timezone)  # its 1d heads-up: today 09:00
    row = inbox.add(source="repl", text="note for the rent", priority=0, at=now)
    inbox.finish(row.id, now)
    propose(
        row,
        [("update_task", {"task_id": rent.id, "notes": "IBAN in the lease"}, "Change task: Pay rent")],
        "repl",
        now,
        app.config,
    )
    approve_latest(app)  # a change of notes: the date was not in the proposal
    bank = Task.create(title="Call the bank", due=now + timedelta(days=2), created_at=now)
    plan_task(bank, now, ["1d", "due"], app.config.timezone)
    row = inbox.add(source="repl", text="call the bank at 3 today, remind me an hour before", priority=0, at=now)
    inbox.finish(row.id, now)
    propose(
        row,
        [
            (
                "update_task",
                {"task_id": bank.id, "due": "2027-01-05T15:00:00+01:00", "escalation": "1h"},
                "Change task: Call the bank",
            )
        ],
        "repl",
        now,
        app.config,
    )
    approve_latest(app)  # a window of the task's own, set by the user: theirs even right after approving
    app.advance(timedelta(hours=8))  # Tuesday 16:00
    fired = {
        task.title: [f.window for f in TaskFiring.select().where(TaskFiring.task == task.id)] for task in (rent, bank)
    }
    assert fired == {"Pay rent": ["1d"], "Call the bank": ["1h"]}


def test_a_task_whose_only_windows_are_heads_ups_keeps_the_last_one_after_approving(make_app):
    app = make_app(start="2027-01-05T08:00:00+01:00")
    now = app.clock.now()
    task = Task.create(title="Pay rent", due=now + timedelta(days=1), due_is_date=True, created_at=now)
    plan_task(task, now, ["3d", "1d"], app.config.timezone, seen=True)  # 1d: today 09:00, an hour from now
    # its last heads-up, an hour from now, is kept: left out, no follow-up would ever come (09:00 Berlin, 08:00 UTC)
    assert (task.next_window, task.next_fire_at.hour) == ("1d", 8)


def test_a_morning_briefing_does_not_say_the_week_ahead_heads_up_left_out_after_approving(make_app):
    app = make_app(start="2027-04-13T22:00:00+02:00")  # Tuesday night
    app.say("add pay the course fee by 22 april")
    app.wait_idle()
    approve_latest(app)
    app.say("add call the plumber by 15 april")  # due on Thursday: its morning brings a briefing
    app.wait_idle()
    approve_latest(app)
    app.advance(timedelta(days=1, hours=11))  # Thursday 09:00
    mornings = [d["text"] for d in app.user_deliveries() if d["text"].startswith("Good morning")]
    assert mornings, "the plumber's day brings a briefing"
    assert not any("course fee" in text and "in 7 days" in text for text in mornings), mornings
