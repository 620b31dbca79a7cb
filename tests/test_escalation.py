"""Escalation windows before an event: its open preparation is raised together in the morning briefing, at
windows fitted to each task (a visa weeks ahead, the check-in the day before), with choices per task; an
overdue task is raised once with its choices, then counted in one line, and raised again as its event nears.

A whole Wilson, offline, on a simulated clock: the Japan trip approved, then a user who answers nothing."""

from __future__ import annotations

from datetime import date, datetime, timedelta

import pytest

from actors import escalation
from channels.calendar.editor import cancel_event, move_event
from storage.models import Approval, Task, TaskFiring
from tests.calendar_support import add_event

TRIP = "Trip to Japan"
START = "2027-01-05T08:00:00+01:00"
DEPARTURE = date(2027, 4, 10)


@pytest.fixture
def app(make_app):
    return make_app(start=START, llm="offline", env={"WILSON_CORE_TIMEZONE": "Europe/Berlin"})


def approved_trip(app) -> list[Task]:
    add_event(app.calendar_file(), TRIP, DEPARTURE, date(2027, 4, 24), "Tokyo", tz=app.config.timezone)
    app.advance(timedelta(days=1))
    plan = Approval.get(Approval.status == "pending")
    app.decide(plan.id, "approve")
    assert app.wait_idle()
    return list(Task.select().order_by(Task.id))


def local_day(app, record: dict) -> date:
    return datetime.fromisoformat(record["at"]).astimezone(app.config.timezone).date()


def test_a_trip_whose_user_ignores_everything_is_raised_before_departure_within_the_attention_budget(app):
    tasks = approved_trip(app)
    assert len(tasks) >= 5
    said_before = len(app.user_deliveries())
    for _ in range(100):  # the user answers nothing at all
        app.advance(timedelta(days=1))
    told = app.user_deliveries()
    per_day: dict[date, int] = {}
    for record in told:
        per_day[local_day(app, record)] = per_day.get(local_day(app, record), 0) + 1
    print(f"\n{len(told)} messages in all ({len(told) - said_before} after the plan was approved)")
    for record in told:
        print(local_day(app, record), record["text"].splitlines()[0][:90])
    assert max(per_day.values()) <= 3, per_day
    assert len(told) <= 16
    # on a morning with a briefing, nothing else arrives in the same minute: what is told then is inside it
    mornings = {r["at"][:16] for r in told if r["text"].startswith("Good morning!")}
    assert len(mornings) >= 4
    assert [
        r["text"][:60] for r in told if r["at"][:16] in mornings and not r["text"].startswith("Good morning!")
    ] == []
    # every task still open at departure was raised with its event, at a window before it, with its choices
    for task in tasks:
        task = Task.get_by_id(task.id)
        if task.status != "open":
            continue
        raised = [
            f
            for f in TaskFiring.select().where(
                (TaskFiring.task == task.id) & TaskFiring.window.startswith(escalation.RAISED)
            )
        ]
        assert raised, f"{task.title} was never raised with the trip"
        assert min(f.fired_at for f in raised).astimezone(app.config.timezone).date() < DEPARTURE
        assert any(
            f"{task.title} (" in r["text"] and f"done {task.id} · move {task.id} DATE" in r["text"]
            for r in told
            if r["text"].startswith("Good morning!")
        ), task.title
    # the day before departure names what is still open, the check-in among it
    eve = [r["text"] for r in told if local_day(app, r) == DEPARTURE - timedelta(days=1)]
    assert any(f"{TRIP} starts tomorrow" in text and "Check in" in text for text in eve), eve


def test_an_overdue_task_is_raised_once_with_its_choices_then_counted_in_one_line(app):
    approved_trip(app)
    passport = Task.get(Task.title.contains("passport"))
    for _ in range(25):
        app.advance(timedelta(days=1))
    mornings = [r["text"] for r in app.user_deliveries() if r["text"].startswith("Good morning!")]
    with_choices = [t for t in mornings if "Check passport validity (Trip to Japan), was due" in t]
    assert (
        len(with_choices) == 1
        and f"done {passport.id} · move {passport.id} DATE · drop {passport.id}" in with_choices[0]
    )
    later = [t for t in mornings[mornings.index(with_choices[0]) + 1 :] if "overdue" in t]
    assert later and all("Check passport validity" not in t for t in later)
    assert all("`overdue` lists them" in t for t in later)


def test_the_windows_fit_each_task():
    assert escalation.window_for(50) is None and escalation.window_for(42) == 42
    assert escalation.window_for(30) == 42 and escalation.window_for(8) == 21 and escalation.window_for(1) == 1
    visa, check_in = Task(title="Check visa and entry requirements"), Task(title="Check in")
    assert escalation.lead_days(visa.title) == 42 and escalation.lead_days(check_in.title) == 1


def told_after(app, count: int) -> list[tuple[date, str]]:
    return [(local_day(app, r), r["text"]) for r in app.user_deliveries()[count:]]


def test_a_trip_the_calendar_cancelled_is_not_followed_up_while_closing_it_waits(app):
    approved_trip(app)
    for _ in range(20):
        app.advance(timedelta(days=1))
    assert cancel_event(app.calendar_file(), TRIP)
    said = len(app.user_deliveries())
    for _ in range(100):  # the user answers nothing, not even the proposal to close the trip
        app.advance(timedelta(days=1))
    told = told_after(app, said)
    assert any("Close topic: Trip to Japan" in text for _, text in told)  # the close is asked
    # and nothing else of the trip: no window before the old departure, no follow-up of its preparation
    for day, text in told:
        assert "starts in" not in text and "starts tomorrow" not in text, (day, text)
        assert "Reminder:" not in text and "overdue" not in text, (day, text)


def test_a_trip_the_calendar_moved_is_raised_against_its_new_dates(app):
    approved_trip(app)
    moved = date(2027, 6, 5)
    assert move_event(app.calendar_file(), TRIP, moved, date(2027, 6, 19), tz=app.config.timezone)
    app.advance(timedelta(days=1))
    assert Approval.select().where(Approval.status == "pending").exists()  # the new dates wait for the user
    said = len(app.user_deliveries())
    while app.clock.now().astimezone(app.config.timezone).date() < moved:  # answering nothing
        app.advance(timedelta(days=1))
    told = told_after(app, said)
    windows = [(day, text) for day, text in told if "Trip to Japan starts" in text]
    # the windows go by the calendar: none against the old departure, the last week's before the new one
    assert all("Sat 10 Apr" not in text for _, text in windows), windows
    assert any(moved - timedelta(days=7) <= day < moved and "Sat 5 Jun" in text for day, text in windows), windows
    # and the trip has not "ended" at its old dates
    assert [(day, text) for day, text in told if "ended on" in text] == []


def test_a_cancelled_trip_whose_closing_the_user_declined_is_followed_up_again(app):
    approved_trip(app)
    for _ in range(20):
        app.advance(timedelta(days=1))
    assert cancel_event(app.calendar_file(), TRIP)
    app.advance(timedelta(days=1))
    closing = Approval.get(Approval.status == "pending")
    assert "Close topic: Trip to Japan" in closing.items[0].description
    app.decide(closing.id, "reject")  # they keep the plan (the trip is on, in a calendar Wilson does not read)
    assert app.wait_idle()
    said = len(app.user_deliveries())
    for _ in range(60):
        app.advance(timedelta(days=1))
    assert any("Trip to Japan starts in" in text for _, text in told_after(app, said))
