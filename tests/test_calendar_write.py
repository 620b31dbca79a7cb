"""The calendar as an effector, for the user's .ics file: an approved create_event writes the event once however
often it is approved, a write that fails tells the user and changes nothing, and the calendar channel knows its
own write when it reads the file again: kept for look-ups, never triaged or planned again."""

from __future__ import annotations

import icalendar

from actors.tools.common import calendar_events
from channels.calendar.editor import add_event, cancel_event
from storage.models import Approval, Inbox, ReceptorBuffer
from tests.caldav_write_support import DENTIST, approved_twice, newest, told
from wilson.kernel.messages import ChannelSync


def events_in(path) -> list:
    return list(icalendar.Calendar.from_ical(path.read_bytes()).walk("VEVENT"))


def proposed_and_approved_twice(app, args=DENTIST, tool="create_event") -> Approval:
    return approved_twice(app, tool, args)


def test_an_approved_event_is_written_to_the_ics_file_once(make_app):
    app = make_app()
    proposal = proposed_and_approved_twice(app)
    assert "Add to your calendar: Dentist, 2027-01-12T15:00 to 2027-01-12T16:00, at Dr. Weiss" in "\n".join(told(app))
    assert Approval.get_by_id(proposal.id).status == "approved"
    [event] = events_in(app.calendar_file())
    assert str(event["SUMMARY"]) == "Dentist" and str(event["LOCATION"]) == "Dr. Weiss"
    assert event.decoded("DTSTART").isoformat() == "2027-01-12T15:00:00+01:00"  # the user's zone, Berlin
    assert event.decoded("DTEND").isoformat() == "2027-01-12T16:00:00+01:00"


def test_wilsons_own_write_is_seen_but_not_planned_again_while_the_users_own_edit_is(make_app):
    app = make_app()
    first = proposed_and_approved_twice(app)
    add_event(
        app.calendar_file(), "Flight to Lisbon", "2027-01-14T09:00", "2027-01-14T12:00", tz=app.config.timezone
    )  # the user's own edit, in the same file
    app.supervisor.tell("calendar", ChannelSync("test"))
    assert app.wait_idle()
    rows = {r.payload.get("title"): r for r in ReceptorBuffer.select().where(ReceptorBuffer.channel == "calendar")}
    own = rows["Dentist"]
    assert (own.outcome, own.reason) == ("drop", "Wilson's own write, approved by the user")
    assert own.processed_at is not None and own.scanned_at is not None
    assert rows["Flight to Lisbon"].outcome != "drop"  # a change the user made is news
    app.sync()
    assert app.wait_idle()
    assert not Inbox.select().where(Inbox.trace_id == own.trace_id).exists()
    later = [item.description for a in Approval.select().where(Approval.id != first.id) for item in a.items]
    assert not [d for d in later if "Dentist" in d], later  # nothing new was proposed about the dentist
    titles = [e["title"] for e in calendar_events(None, None)]
    assert "Dentist" in titles  # still there for "what's on Tuesday?"


def test_a_write_that_fails_is_told_and_changes_nothing(make_app):
    app = make_app()
    broken = b"this is not a calendar\n"
    app.calendar_file().write_bytes(broken)
    proposed_and_approved_twice(app)
    assert app.calendar_file().read_bytes() == broken
    failures = [t for t in told(app) if t.startswith("I could not add “Dentist” to your calendar: ")]
    assert len(failures) == 1 and "not a valid iCalendar file" in failures[0]
    assert failures[0].endswith("Nothing else was changed.")


def test_a_calendar_read_from_a_url_cannot_be_written_and_says_so(make_app):
    app = make_app(
        env={"WILSON_CALENDAR_URL": "https://calendar.example.org/private.ics", "WILSON_CALENDAR_POLL": "off"}
    )
    said = app.propose("create_event", DENTIST, "because you asked")
    assert said is not None and "not to a subscribed URL" in said


def own_rows(title: str) -> list[ReceptorBuffer]:
    return [
        r
        for r in ReceptorBuffer.select().where(ReceptorBuffer.channel == "calendar").order_by(ReceptorBuffer.id)
        if r.payload.get("title") == title
    ]


def read_calendar(app) -> None:
    app.supervisor.tell("calendar", ChannelSync("test"))
    assert app.wait_idle()


def test_an_event_the_user_names_is_moved_then_cancelled_and_neither_is_planned_again(make_app):
    app = make_app()
    add_event(app.calendar_file(), "Flight block", "2027-01-14T09:00", "2027-01-14T12:00", tz=app.config.timezone)
    read_calendar(app)
    [added] = own_rows("Flight block")
    assert added.outcome != "drop"  # the user's own event was news

    proposed_and_approved_twice(
        app, {"title": "flight block", "start": "2027-01-15T09:00", "end": "2027-01-15T12:00"}, "move_event"
    )
    assert "Move in your calendar: flight block to 2027-01-15T09:00 to 2027-01-15T12:00" in "\n".join(told(app))
    [event] = events_in(app.calendar_file())
    assert event.decoded("DTSTART").isoformat() == "2027-01-15T09:00:00+01:00" and int(event["SEQUENCE"]) == 1
    read_calendar(app)
    moved = own_rows("Flight block")[-1]
    assert moved.payload["change"] == "changed"
    assert (moved.outcome, moved.reason) == ("drop", "Wilson's own write, approved by the user")

    assert app.propose("cancel_event", {"title": "Flight block"}, "because you asked") is None
    assert app.wait_idle()
    app.decide(newest().id, "approve")
    assert app.wait_idle()
    [event] = events_in(app.calendar_file())
    assert str(event["STATUS"]) == "CANCELLED" and int(event["SEQUENCE"]) == 2
    read_calendar(app)
    cancelled = own_rows("Flight block")[-1]
    assert cancelled.payload["change"] == "cancelled" and cancelled.outcome == "drop"


def test_moving_an_event_that_is_not_there_is_told_and_changes_nothing(make_app):
    app = make_app()
    add_event(app.calendar_file(), "Dentist", "2027-01-12T15:00", "2027-01-12T16:00", tz=app.config.timezone)
    before = app.calendar_file().read_bytes()
    proposed_and_approved_twice(app, {"title": "Hairdresser", "start": "2027-01-15T09:00"}, "move_event")
    assert app.calendar_file().read_bytes() == before
    assert [t for t in told(app) if t.startswith("I could not move")] == [
        "I could not move “Hairdresser” in your calendar: there is no event called “Hairdresser” in it. "
        "Nothing else was changed."
    ]


def test_a_move_that_names_only_the_new_start_keeps_the_events_length(make_app):
    app = make_app()
    add_event(app.calendar_file(), "Flight block", "2027-01-14T09:00", "2027-01-14T12:00", tz=app.config.timezone)
    proposed_and_approved_twice(app, {"title": "Flight block", "start": "2027-01-15T10:00"}, "move_event")
    [event] = events_in(app.calendar_file())
    assert event.decoded("DTSTART").isoformat() == "2027-01-15T10:00:00+01:00"
    assert event.decoded("DTEND").isoformat() == "2027-01-15T13:00:00+01:00"


def test_a_cancel_already_in_the_file_is_not_told_as_a_failure(make_app):
    app = make_app()
    add_event(app.calendar_file(), "Dentist", "2027-01-12T15:00", "2027-01-12T16:00", tz=app.config.timezone)
    cancel_event(app.calendar_file(), "Dentist")  # as if Wilson had written it and stopped before recording it
    proposed_and_approved_twice(app, {"title": "Dentist"}, "cancel_event")
    assert not [t for t in told(app) if t.startswith("I could not")]
    [event] = events_in(app.calendar_file())
    assert str(event["STATUS"]) == "CANCELLED" and int(event["SEQUENCE"]) == 1  # not cancelled twice
