"""A trip the calendar moves later, while the user has not yet moved its plan: the preparation counted back
from the old dates waits (actors/shared/event_span.py). Nothing is said against a day the user has given up;
once the plan moves along, its follow-ups come by the new dates, and a "no" to moving it keeps the old ones."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta

import pytest

from storage.models import Approval, ApprovalItem, Task, Topic, Trace
from tests.calendar_support import add_event
from tests.japan_support import START, TRIP

MOVE = timedelta(days=56)  # 10 April becomes 5 June


def waiting(tool: str) -> Approval:
    return (
        Approval.select()
        .join(ApprovalItem)
        .where((ApprovalItem.tool == tool) & (Approval.status == "pending"))
        .order_by(Approval.id.desc())
        .first()
    )


def live_until(app, day: date) -> None:
    """Live on to 09:00 of `day`, the user's local time."""
    target = datetime.combine(day, time(9, 0), tzinfo=app.config.timezone)
    app.advance(target - app.clock.now())


def said_about(app, title: str, since: int) -> list[str]:
    return [d["text"] for d in app.user_deliveries()[since:] if title.lower() in d["text"].lower()]


@pytest.fixture
def planned(make_app):
    """The Japan trip planned from the calendar and approved whole; then, on 1 March, moved eight weeks later."""
    app = make_app(start=START, llm="offline")
    tz = app.config.timezone
    add_event(app.calendar_file(), TRIP, date(2027, 4, 10), date(2027, 4, 24), "Tokyo", tz=tz)
    app.advance(timedelta(days=1))
    app.decide(waiting("create_topic").id, "approve")
    app.wait_idle()
    live_until(app, date(2027, 3, 1))
    add_event(app.calendar_file(), TRIP, date(2027, 4, 10) + MOVE, date(2027, 4, 24) + MOVE, "Tokyo", tz=tz)
    app.advance(timedelta(days=1))
    assert waiting("update_topic") is not None, "the move of the plan is proposed"
    return app


def late_task(app) -> Task:
    """The plan's last preparation before the old departure, still ahead on 2 March."""
    topic = Topic.get(Topic.title == TRIP)
    tasks = Task.select().where((Task.topic == topic) & (Task.status == "open")).order_by(Task.due.desc())
    task = tasks.first()
    assert task.due.astimezone(app.config.timezone).date() > date(2027, 3, 15), task.due
    return task


def test_the_old_eve_of_a_trip_moved_later_passes_without_a_word_about_its_preparation(planned):
    app = planned
    task = late_task(app)
    since = len(app.user_deliveries())
    live_until(app, date(2027, 4, 12))  # past the old departure and every date counted back from it
    assert said_about(app, task.title, since) == [], "nothing against the dates the user has given up"
    assert Trace.select().where((Trace.stage == "held") & Trace.reason.contains("moved later")).exists()


def test_once_the_plan_moves_along_its_follow_ups_come_by_the_new_dates(planned):
    app = planned
    task = late_task(app)
    old_due = task.due.astimezone(app.config.timezone).date()
    app.decide(waiting("update_topic").id, "approve")
    app.wait_idle()
    assert Task.get_by_id(task.id).due.astimezone(app.config.timezone).date() == old_due + MOVE
    since = len(app.user_deliveries())
    live_until(app, old_due + timedelta(days=2))
    assert said_about(app, task.title, since) == []
    live_until(app, old_due + MOVE + timedelta(days=1))
    assert said_about(app, task.title, since), "raised by its new date"


def test_a_no_to_moving_the_plan_keeps_its_old_dates(planned):
    app = planned
    task = late_task(app)
    old_due = task.due.astimezone(app.config.timezone).date()
    app.decide(waiting("update_topic").id, "reject")
    app.wait_idle()
    since = len(app.user_deliveries())
    live_until(app, old_due + timedelta(days=2))
    assert said_about(app, task.title, since), "the user kept the plan's dates: they are raised"
