"""Offline, through a running Wilson: an event that is new or changed and starts within a day is told before it
starts; an event of several days away from home is planned as travel whatever its title."""

from __future__ import annotations

import io
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from storage.models import ApprovalItem
from wilson.app.repl import Repl

BERLIN = ZoneInfo("Europe/Berlin")


def local(delivery: dict) -> datetime:
    return datetime.fromisoformat(delivery["at"]).astimezone(BERLIN)


def calendar(app, line: str) -> None:
    Repl(app, out=io.StringIO(), as_json=True).run_line(f"calendar {line}")


def proposed(tool: str) -> list[dict]:
    return [item.args for item in ApprovalItem.select().where(ApprovalItem.tool == tool)]


def test_an_event_added_for_later_today_is_told_before_it_starts(make_app):
    app = make_app(start="2027-01-12T09:40:00+01:00")
    calendar(app, 'add "Call with Anna" @ 2027-01-12T16:00')
    app.advance(timedelta(hours=8))
    [said] = app.user_deliveries()
    assert local(said) < datetime(2027, 1, 12, 16, 0, tzinfo=BERLIN)
    assert said["text"] == (
        "From the calendar event “Call with Anna”: Heads-up: new in your calendar for Tue 12 Jan at 16:00."
    )


def test_an_event_added_in_the_evening_for_tomorrow_morning_is_told_that_evening(make_app):
    app = make_app(start="2027-01-12T19:00:00+01:00")
    calendar(app, 'add "Meeting with the landlord" @ 2027-01-13T08:30; Hauptstr. 5')
    app.advance(timedelta(hours=12))
    said = [d for d in app.user_deliveries() if "Meeting with the landlord" in d["text"]]
    assert said and local(said[0]) < datetime(2027, 1, 12, 22, 0, tzinfo=BERLIN), "before the quiet hours"
    assert said[0]["text"].endswith("Heads-up: new in your calendar for Wed 13 Jan at 08:30, at Hauptstr. 5.")


def test_an_event_more_than_a_day_ahead_waits_for_the_briefing(make_app):
    app = make_app(start="2027-01-12T09:40:00+01:00")
    calendar(app, 'add "Call with Anna" @ 2027-01-15T16:00')
    app.advance(timedelta(hours=8))
    assert [d for d in app.user_deliveries() if "Heads-up" in d["text"]] == []


def test_a_multi_day_work_event_abroad_whose_title_names_no_trip_gets_a_travel_plan(make_app):
    app = make_app(start="2027-02-01T09:00:00+01:00")
    calendar(app, 'add "Sales kickoff Lisbon" @ 2027-03-08 -> 2027-03-11')
    app.advance(timedelta(days=1))
    [topic] = proposed("create_topic")
    assert topic["title"] == "Sales kickoff Lisbon"
    assert "Check passport validity" in {task["title"] for task in proposed("create_task")}
    briefing = "\n".join(d["text"] for d in app.user_deliveries())
    assert "the place, Lisbon, is abroad (Portugal)" in briefing
    assert "no plan from me" not in briefing


def test_home_comes_from_the_setting_so_days_in_the_home_city_are_no_trip(make_app):
    app = make_app(start="2027-02-01T09:00:00+01:00", env={"WILSON_CORE_HOME": "Lisbon"})
    calendar(app, 'add "Sales kickoff Lisbon" @ 2027-03-08 -> 2027-03-11')
    calendar(app, 'add "Customer workshop Munich" @ 2027-03-15 -> 2027-03-17')
    app.advance(timedelta(days=1))
    assert [t["title"] for t in proposed("create_topic")] == ["Customer workshop Munich"]


def test_an_event_moved_to_tomorrow_morning_is_told_with_its_old_and_new_time(make_app):
    app = make_app(start="2027-01-12T09:00:00+01:00")
    calendar(app, 'add "Call with Anna" @ 2027-01-20T16:00')
    app.advance(timedelta(hours=2))
    before = len(app.user_deliveries())
    calendar(app, 'add "Call with Anna" @ 2027-01-13T08:00')  # the same title: the event moves
    app.advance(timedelta(hours=2))
    said = [d["text"] for d in app.user_deliveries()[before:]]
    assert said == [
        "From the calendar event “Call with Anna”: Heads-up: it moved from Wed 20 Jan at 16:00 to Wed 13 Jan at 08:00."
    ]
