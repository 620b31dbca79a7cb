"""The calendar as an effector on a real CalDAV server (Radicale on loopback): an approved event appears on the
server once however often it is approved, a move and a cancel round-trip, the calendar channel knows Wilson's
own writes when it reads them back and does not plan them again, and a write that meets a conflict, a deleted
event or a read-only calendar tells the user and changes nothing on the server."""

from __future__ import annotations

from datetime import timedelta

import pytest
import radicale  # noqa: F401  (a test dependency: a broken install must fail here, not skip)

from storage.models import Approval, Inbox, Outbox
from tests.caldav_support import no_proxy  # noqa: F401 (a fixture)
from tests.caldav_write_support import (
    DENTIST,
    FLIGHT,
    RIGHTS,
    approved_twice,
    calendars_of,
    read_calendar,
    rows_about,
    server_state,
    told,
    vevent,
    wilson_for,
)
from tests.calendar_support import Meanwhile, radicale_server


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with radicale_server(tmp_path_factory.mktemp("radicale"), rights=RIGHTS) as url:
        yield url


def test_an_approved_event_appears_on_the_server_once_and_is_not_planned_again(server, make_app, no_proxy):
    [work, home] = calendars_of(server, "carol", "Work", "Home")
    app = wilson_for(make_app, server, "carol", WILSON_CALENDAR_CALDAV_CALENDAR="home")
    first = approved_twice(app, "create_event", DENTIST)
    assert "Add to your calendar: Dentist, 2027-01-12T15:00 to 2027-01-12T16:00, at Dr. Weiss" in "\n".join(told(app))
    assert not [t for t in told(app) if t.startswith("I could not")]
    assert server_state(work) == {}  # the calendar named by caldav_calendar, matched whatever its case
    [(uid, _)] = server_state(home).items()
    assert uid.endswith("@own.wilson")
    event = vevent(home, uid)
    assert str(event["SUMMARY"]) == "Dentist" and str(event["LOCATION"]) == "Dr. Weiss"
    assert event.decoded("DTSTART").isoformat() == "2027-01-12T15:00:00+01:00"  # the user's zone, Berlin

    read_calendar(app)
    [own] = rows_about("Dentist")
    assert (own.outcome, own.reason) == ("drop", "Wilson's own write, approved by the user")
    app.sync()
    assert app.wait_idle()
    assert not Inbox.select().where(Inbox.trace_id == own.trace_id).exists()
    later = [item.description for a in Approval.select().where(Approval.id != first.id) for item in a.items]
    assert not [d for d in later if "Dentist" in d], later


def test_an_event_the_user_named_is_moved_then_cancelled_on_the_server(server, make_app, no_proxy):
    [work] = calendars_of(server, "dave", "Work")
    work.save_event(FLIGHT.format(n=1, d=4, title="Flight block"))
    work.save_event(FLIGHT.format(n=2, d=5, title="Team lunch"))
    app = wilson_for(make_app, server, "dave")
    read_calendar(app)
    assert rows_about("Flight block")[0].outcome != "drop"  # the user's own event is news
    lunch = server_state(work)["flight-2"]

    approved_twice(app, "move_event", {"title": "flight block", "start": "2027-01-15T10:00"})
    assert "Move in your calendar: flight block to 2027-01-15T10:00" in "\n".join(told(app))
    moved = vevent(work, "flight-1")
    assert moved.decoded("DTSTART").isoformat() == "2027-01-15T10:00:00+01:00"
    assert moved.decoded("DTEND").isoformat() == "2027-01-15T13:00:00+01:00"  # as long as it was
    assert int(moved["SEQUENCE"]) == 1
    read_calendar(app)
    row = rows_about("Flight block")[-1]
    assert row.payload["change"] == "changed" and (row.outcome, row.reason) == (
        "drop",
        "Wilson's own write, approved by the user",
    )

    approved_twice(app, "cancel_event", {"title": "Flight block"})
    cancelled = vevent(work, "flight-1")
    assert str(cancelled["STATUS"]) == "CANCELLED" and int(cancelled["SEQUENCE"]) == 2
    read_calendar(app)
    row = rows_about("Flight block")[-1]
    assert row.payload["change"] == "cancelled" and row.outcome == "drop"
    assert server_state(work)["flight-2"] == lunch  # the other event untouched
    assert not [t for t in told(app) if t.startswith("I could not")]


def test_an_event_changed_on_another_device_meanwhile_is_a_conflict_told_and_not_overwritten(
    server, make_app, no_proxy
):
    [work] = calendars_of(server, "erin", "Work")
    work.save_event(FLIGHT.format(n=1, d=4, title="Flight block"))
    with Meanwhile(server) as proxy:
        app = wilson_for(make_app, proxy.url, "erin")
        # between Wilson's read of the event and its write, the user's phone moves it to the 16th
        proxy.then = lambda: work.save_event(FLIGHT.format(n=1, d=6, title="Flight block"))
        approved_twice(app, "move_event", {"title": "Flight block", "start": "2027-01-15T10:00"})
        assert ("PUT", "/erin/work/flight-1.ics", 412) in proxy.seen  # the write was refused by its ETag
    assert [t for t in told(app) if t.startswith("I could not")] == [
        "I could not move “Flight block” in your calendar: “Flight block” was changed on the calendar server "
        "(on another device?) while Wilson was changing it; ask again to use the new version. "
        "Nothing else was changed."
    ]
    assert vevent(work, "flight-1").decoded("DTSTART").isoformat() == "2027-01-16T09:00:00+01:00"  # the phone's


def test_an_event_deleted_meanwhile_is_told_and_not_written_back(server, make_app, no_proxy):
    [work] = calendars_of(server, "fred", "Work")
    work.save_event(FLIGHT.format(n=1, d=4, title="Flight block"))
    work.save_event(FLIGHT.format(n=2, d=5, title="Team lunch"))
    before = server_state(work)
    with Meanwhile(server) as proxy:
        app = wilson_for(make_app, proxy.url, "fred")
        proxy.then = lambda: work.event_by_uid("flight-1").delete()
        approved_twice(app, "cancel_event", {"title": "Flight block"})
    assert [t for t in told(app) if t.startswith("I could not")] == [
        "I could not cancel “Flight block” in your calendar: “Flight block” was deleted on the calendar server "
        "while Wilson was changing it. Nothing else was changed."
    ]
    assert server_state(work) == {"flight-2": before["flight-2"]}  # not brought back


def test_a_read_only_calendar_refuses_and_the_user_is_told(server, make_app, no_proxy):
    [shared] = calendars_of(server, "alice", "Shared")
    shared.save_event(FLIGHT.format(n=3, d=4, title="Board meeting"))
    before = server_state(shared)
    app = wilson_for(make_app, server + "alice/shared/", "bob")
    approved_twice(app, "move_event", {"title": "Board meeting", "start": "2027-01-15T10:00"})
    assert [t for t in told(app) if t.startswith("I could not")] == [
        "I could not move “Board meeting” in your calendar: the calendar server refused the change "
        "(HTTP 403: this calendar is read-only for the account). Nothing else was changed."
    ]
    assert server_state(shared) == before


def test_only_an_event_the_user_names_is_changed(server, make_app, no_proxy):
    [work] = calendars_of(server, "gina", "Work")
    work.save_event(FLIGHT.format(n=1, d=4, title="Flight block"))
    work.save_event(FLIGHT.format(n=2, d=5, title="Flight block"))
    before = server_state(work)
    app = wilson_for(make_app, server, "gina")
    approved_twice(app, "move_event", {"title": "Hairdresser", "start": "2027-01-15T10:00"})
    approved_twice(app, "cancel_event", {"title": "Flight block"})
    assert [t for t in told(app) if t.startswith("I could not")] == [
        "I could not move “Hairdresser” in your calendar: there is no event called “Hairdresser” in it. "
        "Nothing else was changed.",
        "I could not cancel “Flight block” in your calendar: there are 2 events called “Flight block”; "
        "say which one (its day). Nothing else was changed.",
    ]
    assert server_state(work) == before


def test_a_calendar_name_the_account_does_not_have_is_told_with_the_names_it_has(server, make_app, no_proxy):
    [work] = calendars_of(server, "hank", "Work")
    app = wilson_for(make_app, server, "hank", WILSON_CALENDAR_CALDAV_CALENDAR="Holidays")
    approved_twice(app, "create_event", DENTIST)
    assert [t for t in told(app) if t.startswith("I could not")] == [
        "I could not add “Dentist” to your calendar: there is no calendar called “Holidays” on the server "
        "(it has “Work”); set [calendar] caldav_calendar to one of them. Nothing else was changed."
    ]
    assert server_state(work) == {}


def test_a_server_that_is_down_delays_the_write_which_is_done_once_it_is_back(server, make_app, no_proxy):
    [work] = calendars_of(server, "iris", "Work")
    with Meanwhile(server) as proxy:
        app = wilson_for(make_app, proxy.url, "iris")
        proxy.down = True
        approved_twice(app, "create_event", DENTIST)
        app.advance(timedelta(minutes=1))  # the second try: still down, and now the user hears of it
        assert [t for t in told(app) if "yet" in t] == [
            "I could not reach your calendar to change “Dentist” yet (the calendar server is in trouble (HTTP 503)). "
            "I'll keep trying, and tell you when it is done."
        ]
        assert server_state(work) == {} and Outbox.get(Outbox.channel == "calendar").status == "retry"
        proxy.down = False
        app.advance(timedelta(minutes=3))
    [(uid, _)] = server_state(work).items()
    assert str(vevent(work, uid)["SUMMARY"]) == "Dentist"
    assert Outbox.get(Outbox.channel == "calendar").status == "delivered"
    assert told(app)[-1] == "Done: “Dentist” is changed in your calendar now."
    assert not [t for t in told(app) if t.startswith("I could not add")]
