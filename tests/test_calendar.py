"""The calendar channel: parsing, change detection, transduction, sources and the actor."""

from __future__ import annotations

import hashlib
import http.server
import subprocess
import sys
import threading
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import icalendar
import pytest
from loguru import logger

from channels import calendar as cal
from channels.calendar import (
    CalendarChannel,
    CalendarError,
    Change,
    IcsFileSource,
    IcsUrlSource,
    describe,
    diff,
    parse_calendar,
    snapshot,
)
from channels.calendar import channel as calendar_channel
from storage.db import database
from storage.models import Cursor, ReceptorBuffer
from tests.calendar_support import add_event, cancel_event, move_event
from tests.conftest import ROOT
from wilson.kernel import config as configmod
from wilson.kernel.actor import Context
from wilson.kernel.clock import SimClock
from wilson.kernel.messages import ChannelSync, Ping, StimulusCommitted

UTC = timezone.utc
BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")
NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
YEAR = timedelta(days=365)


def ics(*events: str, method: str | None = None, extra: str = "") -> bytes:
    head = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n"
    if method:
        head += f"METHOD:{method}\r\n"
    body = "".join(f"BEGIN:VEVENT\r\n{e.strip()}\r\nEND:VEVENT\r\n" for e in events)
    return (head + extra + body + "END:VCALENDAR\r\n").encode()


def parse(data: bytes, *, tz=BERLIN, now=NOW, span=YEAR, name="test.ics"):
    return parse_calendar(data, name=name, window_start=now, window_end=now + span, tz=tz)


def one(data: bytes, **kw) -> cal.Event:
    events = parse(data, **kw)
    assert len(events) == 1, events
    return events[0]


# Parsing ------------------------------------------------------------------


def test_utc_time_is_kept_whatever_the_user_timezone():
    data = ics("UID:a\nDTSTART:20270310T090000Z\nDTEND:20270310T100000Z\nSUMMARY:Call")
    for tz in (BERLIN, NEW_YORK):
        event = one(data, tz=tz)
        assert event.start == datetime(2027, 3, 10, 9, tzinfo=UTC)
        assert event.end == datetime(2027, 3, 10, 10, tzinfo=UTC)
        assert event.all_day is False and event.recurrence_id is None and event.title == "Call"


def test_floating_time_is_read_in_the_user_timezone():
    data = ics("UID:a\nDTSTART:20270310T090000\nSUMMARY:Floating")
    assert one(data, tz=BERLIN).start == datetime(2027, 3, 10, 8, tzinfo=UTC)
    assert one(data, tz=NEW_YORK).start == datetime(2027, 3, 10, 14, tzinfo=UTC)
    assert one(data).end is None  # no DTEND: a point in time


def test_vtimezone_component_defines_the_zone():
    zone = (
        "BEGIN:VTIMEZONE\r\nTZID:My Office Time\r\nBEGIN:STANDARD\r\nDTSTART:19700101T000000\r\n"
        "TZOFFSETFROM:+0530\r\nTZOFFSETTO:+0530\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n"
    )
    data = ics("UID:a\nDTSTART;TZID=My Office Time:20270310T090000\nSUMMARY:Standup", extra=zone)
    assert one(data).start == datetime(2027, 3, 10, 3, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    "tzid, hour", [("W. Europe Standard Time", 8), ("Pacific Standard Time", 17), ("Europe/Berlin", 8)]
)
def test_windows_and_olson_zone_names_without_vtimezone(tzid, hour):
    data = ics(f"UID:a\nDTSTART;TZID={tzid}:20270310T090000\nDTEND;TZID={tzid}:20270310T100000\nSUMMARY:Meeting")
    event = one(data, tz=NEW_YORK)  # the user's zone must not leak into a zoned time
    assert event.start == datetime(2027, 3, 10, hour, tzinfo=UTC)


def test_all_day_event_keeps_its_dates_in_the_user_timezone():
    data = ics(
        "UID:trip\nDTSTART;VALUE=DATE:20270410\nDTEND;VALUE=DATE:20270425\nSUMMARY:Trip to Japan\nLOCATION:Tokyo"
    )
    event = one(data, tz=BERLIN)
    assert event.all_day is True
    assert event.start == datetime(2027, 4, 10, tzinfo=BERLIN).astimezone(UTC)
    assert event.end == datetime(2027, 4, 25, tzinfo=BERLIN).astimezone(UTC)
    assert event.start.astimezone(BERLIN).date() == date(2027, 4, 10)
    assert cal.when(event, BERLIN) == "10–24 April 2027"
    single = one(ics("UID:d\nDTSTART;VALUE=DATE:20270410\nSUMMARY:Birthday"))
    assert single.all_day and cal.when(single, BERLIN) == "Sat 10 April 2027"


def test_weekly_recurrence_is_expanded_within_the_window_only():
    data = ics(
        "UID:standup\nDTSTART;TZID=Europe/Berlin:20261102T090000\nDTEND;TZID=Europe/Berlin:20261102T091500\n"
        "RRULE:FREQ=WEEKLY;BYDAY=MO\nSUMMARY:Standup",
        "UID:once\nDTSTART:20261210T090000Z\nSUMMARY:Once",
    )
    events = parse(data, span=timedelta(days=150))  # 29 Nov 2026 .. 28 April 2027
    standups = [e for e in events if e.uid == "standup"]
    assert len(standups) == 22  # Mondays 30 Nov 2026 .. 26 April 2027
    assert all(e.start >= NOW for e in standups)
    assert len({e.recurrence_id for e in standups}) == 22 and all(e.recurrence_id for e in standups)
    # 09:00 local on both sides of the spring DST change
    assert {e.start.astimezone(BERLIN).hour for e in standups} == {9}
    assert {e.start.hour for e in standups} == {7, 8}
    assert [e.recurrence_id for e in events if e.uid == "once"] == [None]


def test_overridden_occurrence_and_exdate():
    data = ics(
        "UID:s\nDTSTART:20261207T090000Z\nRRULE:FREQ=WEEKLY;COUNT=4\nEXDATE:20261214T090000Z\nSUMMARY:Review",
        "UID:s\nRECURRENCE-ID:20261221T090000Z\nDTSTART:20261222T150000Z\nSUMMARY:Review (moved)\nSEQUENCE:1",
    )
    events = parse(data)
    assert [(e.start.day, e.title) for e in events] == [(7, "Review"), (22, "Review (moved)"), (28, "Review")]
    moved = events[1]
    assert moved.recurrence_id == "2026-12-21T09:00:00+00:00" and moved.sequence == 1


def test_cancellation_by_status_and_by_method():
    assert one(ics("UID:a\nDTSTART:20270310T090000Z\nSUMMARY:X\nSTATUS:CANCELLED")).status == "CANCELLED"
    assert one(ics("UID:a\nDTSTART:20270310T090000Z\nSUMMARY:X", method="CANCEL")).status == "CANCELLED"
    assert one(ics("UID:a\nDTSTART:20270310T090000Z\nSUMMARY:X\nSTATUS:confirmed")).status == "CONFIRMED"
    assert one(ics("UID:a\nDTSTART:20270310T090000Z\nSUMMARY:X", method="PUBLISH")).status is None


def test_people_place_and_notes_are_kept():
    event = one(
        ics(
            "UID:a\nDTSTART:20270310T090000Z\nSUMMARY:Lunch\nLOCATION:Café Einstein\n"
            "DESCRIPTION:Bring the contract\\, please\nSEQUENCE:3\n"
            'ATTENDEE;CN="Alice Smith":mailto:alice@example.com\nATTENDEE:mailto:bob@example.com'
        )
    )
    assert event.attendees == ("Alice Smith", "bob@example.com")
    assert event.location == "Café Einstein" and event.description == "Bring the contract, please"
    assert event.sequence == 3


def test_window_excludes_past_and_beyond_horizon_but_keeps_ongoing():
    data = ics(
        "UID:past\nDTSTART:20261101T090000Z\nDTEND:20261101T100000Z\nSUMMARY:Past",
        "UID:ongoing\nDTSTART;VALUE=DATE:20261128\nDTEND;VALUE=DATE:20261202\nSUMMARY:Conference",
        "UID:soon\nDTSTART:20261205T090000Z\nSUMMARY:Soon",
        "UID:far\nDTSTART:20281205T090000Z\nSUMMARY:Far",
    )
    assert [e.uid for e in parse(data)] == ["ongoing", "soon"]


def test_bad_data_raises_one_line_error_naming_the_file():
    with pytest.raises(CalendarError) as caught:
        parse(b"this is not\na calendar\n", name="work/holidays.ics")
    message = str(caught.value)
    assert message.startswith("work/holidays.ics: ") and "\n" not in message
    truncated = ics("UID:a\nDTSTART:20270310T090000Z\nSUMMARY:X").replace(b"END:VCALENDAR\r\n", b"")
    with pytest.raises(CalendarError, match=r"^cut\.ics: incomplete calendar"):
        parse(truncated, name="cut.ics")


def test_one_broken_event_does_not_hide_the_others():
    data = ics("UID:bad\nSUMMARY:No start", "UID:good\nDTSTART:20270310T090000Z\nSUMMARY:Good")
    assert [e.uid for e in parse(data)] == ["good"]


def test_bare_events_and_several_calendars_in_one_file():
    bare = b"BEGIN:VEVENT\r\nUID:a\r\nDTSTART:20270310T090000Z\r\nSUMMARY:Bare\r\nEND:VEVENT\r\n"
    assert [e.title for e in parse(bare)] == ["Bare"]
    two = ics("UID:a\nDTSTART:20270310T090000Z\nSUMMARY:One") + ics("UID:b\nDTSTART:20270311T090000Z\nSUMMARY:Two")
    assert [e.title for e in parse(two)] == ["One", "Two"]


# Change detection -----------------------------------------------------------

TRIP = "UID:trip\nDTSTART;VALUE=DATE:{start}\nDTEND;VALUE=DATE:{end}\nSUMMARY:{title}\nLOCATION:{place}"


def trip(start="20270410", end="20270425", title="Trip to Japan", place="Tokyo", extra=""):
    return ics(TRIP.format(start=start, end=end, title=title, place=place) + extra)


def test_unchanged_calendar_produces_no_changes():
    events = parse(trip())
    assert diff(snapshot(events), parse(trip()), now=NOW) == []


def test_first_sync_reports_each_event_once_and_skips_cancelled_and_past():
    data = ics(
        "UID:a\nDTSTART:20261205T090000Z\nSUMMARY:A",
        "UID:b\nDTSTART:20261206T090000Z\nSUMMARY:B\nSTATUS:CANCELLED",
        "UID:c\nDTSTART:20261129T110000Z\nDTEND:20261129T140000Z\nSUMMARY:Ongoing",
    )
    changes = diff({}, parse(data), now=NOW)
    assert [(c.kind, c.event.uid) for c in changes] == [("new", "c"), ("new", "a")]
    assert describe(changes[0], BERLIN, NOW) == "New event: Ongoing, Sun 29 November 2026 12:00–15:00 (ongoing)."
    later = NOW + timedelta(hours=3)  # "c" ends before this moment: it passed, it was not news
    assert [c.event.uid for c in diff({}, parse(data), now=later)] == ["a"]


@pytest.mark.parametrize(
    "changed, what",
    [
        (dict(start="20270508", end="20270523"), ("time",)),
        (dict(place="Osaka"), ("place",)),
        (dict(title="Japan!"), ("title",)),
        (dict(start="20270508", end="20270523", place="Osaka"), ("time", "place")),
    ],
)
def test_changed_says_what_changed(changed, what):
    before = snapshot(parse(trip()))
    changes = diff(before, parse(trip(**changed)), now=NOW)
    assert [(c.kind, c.what) for c in changes] == [("changed", what)]
    assert changes[0].previous["location"] == "Tokyo"


DENTIST = "UID:{uid}\nDTSTART:{start}\nDTEND:{end}\nSUMMARY:Dentist appointment{extra}"


@pytest.mark.parametrize("old_gone", ["\nSTATUS:CANCELLED", None], ids=["cancelled", "deleted"])
def test_an_event_deleted_and_made_again_under_a_new_uid_is_one_move(old_gone):
    before = snapshot(parse(ics(DENTIST.format(uid="a", start="20261205T140000Z", end="20261205T150000Z", extra=""))))
    again = DENTIST.format(uid="b", start="20261205T100000Z", end="20261205T110000Z", extra="")
    old = (
        []
        if old_gone is None
        else [DENTIST.format(uid="a", start="20261205T140000Z", end="20261205T150000Z", extra=old_gone)]
    )
    changes = diff(before, parse(ics(*old, again)), now=NOW)
    # not "cancelled" (which closes its topic) and "new": the appointment moved
    assert [(c.kind, c.event.uid, c.what) for c in changes] == [("changed", "b", ("time",))]
    assert changes[0].previous["start"] == "2026-12-05T14:00:00+00:00"


def test_an_event_made_again_as_it_was_is_no_news_and_a_move_takes_the_nearest_new_one():
    before = snapshot(parse(ics(DENTIST.format(uid="a", start="20261205T140000Z", end="20261205T150000Z", extra=""))))
    same = DENTIST.format(uid="b", start="20261205T140000Z", end="20261205T150000Z", extra="")
    assert diff(before, parse(ics(same)), now=NOW) == []  # re-imported: not cancelled, not new
    nearer = DENTIST.format(uid="c", start="20261205T160000Z", end="20261205T170000Z", extra="")
    other = DENTIST.format(uid="d", start="20261201T140000Z", end="20261201T150000Z", extra="")
    changes = diff(before, parse(ics(other, nearer)), now=NOW)
    assert sorted((c.kind, c.event.uid) for c in changes) == [("changed", "c"), ("new", "d")]


def test_a_new_event_of_the_same_name_a_season_later_is_not_a_move():
    before = snapshot(parse(ics(DENTIST.format(uid="a", start="20261205T140000Z", end="20261205T150000Z", extra=""))))
    later = DENTIST.format(uid="b", start="20270605T100000Z", end="20270605T110000Z", extra="")
    assert [(c.kind, c.event.uid) for c in diff(before, parse(ics(later)), now=NOW)] == [
        ("cancelled", "a"),
        ("new", "b"),
    ]


def test_cancelled_by_status_and_by_removal_but_not_by_passing():
    before = snapshot(parse(trip() + ics("UID:x\nDTSTART:20261205T090000Z\nSUMMARY:Dentist")))
    cancelled = diff(
        before,
        parse(trip(extra="\nSTATUS:CANCELLED") + ics("UID:x\nDTSTART:20261205T090000Z\nSUMMARY:Dentist")),
        now=NOW,
    )
    assert [(c.kind, c.event.uid) for c in cancelled] == [("cancelled", "trip")]
    removed = diff(before, parse(trip()), now=NOW)
    assert [(c.kind, c.event.uid, c.event.title) for c in removed] == [("cancelled", "x", "Dentist")]
    after_it = datetime(2026, 12, 6, tzinfo=UTC)  # the dentist appointment is simply over
    assert diff(before, parse(trip(), now=after_it), now=after_it) == []
    # a cancelled event that is then deleted is not cancelled twice
    again = snapshot(parse(trip(extra="\nSTATUS:CANCELLED")))
    assert diff(again, [], now=NOW) == []


def test_method_cancel_cancels_a_known_event():
    before = snapshot(parse(ics("UID:m\nDTSTART:20270303T080000Z\nSUMMARY:Dentist\nSEQUENCE:0")))
    after = parse(ics("UID:m\nDTSTART:20270303T080000Z\nSUMMARY:Dentist\nSEQUENCE:1", method="CANCEL"))
    assert [c.kind for c in diff(before, after, now=NOW)] == ["cancelled"]


WEEKLY = "UID:standup\nDTSTART:20261130T{hh}0000Z\nRRULE:FREQ=WEEKLY\nSUMMARY:Standup"


def test_a_new_series_is_one_change_not_one_per_occurrence():
    events = parse(ics(WEEKLY.format(hh="08")), span=timedelta(days=70))
    changes = diff({}, events, now=NOW)
    assert len(changes) == 1 and changes[0].kind == "new" and changes[0].occurrences == 10
    assert changes[0].event.start == datetime(2026, 11, 30, 8, tzinfo=UTC)  # the first occurrence
    assert cal.payload(changes[0])["occurrences"] == 10


def test_moving_a_whole_series_is_one_move():
    span = timedelta(days=70)
    before = snapshot(parse(ics(WEEKLY.format(hh="08")), span=span))
    changes = diff(before, parse(ics(WEEKLY.format(hh="09")), span=span), now=NOW)
    assert [(c.kind, c.what, c.occurrences) for c in changes] == [("changed", ("time",), 10)]


def test_moving_one_occurrence_is_one_change():
    span = timedelta(days=70)
    base = WEEKLY.format(hh="08")
    before = snapshot(parse(ics(base), span=span))
    moved = ics(base, "UID:standup\nRECURRENCE-ID:20261214T080000Z\nDTSTART:20261215T080000Z\nSUMMARY:Standup")
    changes = diff(before, parse(moved, span=span), now=NOW)
    assert [(c.kind, c.what, c.event.start.day, c.occurrences) for c in changes] == [("changed", ("time",), 15, 1)]


def test_series_rolling_into_the_horizon_is_not_news():
    span = timedelta(days=70)
    data = ics(WEEKLY.format(hh="08"))
    before = snapshot(parse(data, span=span))
    later = NOW + timedelta(days=21)
    changes = diff(before, parse(data, now=later, span=span), now=later, known_until=NOW + span)
    assert changes == []
    # without knowing the old horizon, the three fresh occurrences would look new
    assert [c.occurrences for c in diff(before, parse(data, now=later, span=span), now=later)] == [3]


def test_nothing_beyond_a_cut_short_horizon_counts_as_removed():
    before = snapshot(
        parse(ics("UID:a\nDTSTART:20261205T090000Z\nSUMMARY:A", "UID:b\nDTSTART:20270605T090000Z\nSUMMARY:B"))
    )
    only_a = parse(ics("UID:a\nDTSTART:20261205T090000Z\nSUMMARY:A"))
    assert diff(before, only_a, now=NOW, horizon_end=datetime(2027, 1, 1, tzinfo=UTC)) == []
    assert [c.event.uid for c in diff(before, only_a, now=NOW)] == ["b"]


def test_dedup_key_and_payload():
    before = snapshot(parse(trip()))
    change = diff(before, parse(trip(start="20270508", end="20270523")), now=NOW)[0]
    key = cal.dedup_key(change)
    assert key.startswith("calendar:trip:None:changed:") and len(key.rsplit(":", 1)[1]) == 12
    body = cal.payload(change)
    assert body["channel"] == "calendar" and body["change"] == "changed" and body["uid"] == "trip"
    assert body["all_day"] is True and body["location"] == "Tokyo"
    assert body["recurrence_id"] is None and body["occurrences"] == 1
    assert datetime.fromisoformat(body["start"]).astimezone(BERLIN).date() == date(2027, 5, 8)
    assert datetime.fromisoformat(body["previous"]["start"]).astimezone(BERLIN).date() == date(2027, 4, 10)
    other = diff(before, parse(trip(start="20270601", end="20270602")), now=NOW)[0]
    assert cal.dedup_key(other) != key  # a different move is a different stimulus
    assert cal.dedup_key(diff(before, parse(trip(start="20270508", end="20270523")), now=NOW)[0]) == key


# Transduction ---------------------------------------------------------------


def test_new_trip_sentence():
    change = diff({}, parse(trip(), tz=BERLIN), now=NOW)[0]
    assert describe(change, BERLIN, NOW) == "New event: Trip to Japan, 10–24 April 2027 (in 132 days), Tokyo."


def test_moved_trip_sentence():
    before = snapshot(parse(trip()))
    change = diff(before, parse(trip(start="20270508", end="20270523")), now=NOW)[0]
    assert describe(change, BERLIN, NOW) == "Moved: Trip to Japan now 8–22 May 2027 (was 10–24 April 2027), Tokyo."


def test_cancelled_dentist_sentence_in_local_time():
    before = snapshot(parse(ics("UID:d\nDTSTART:20270303T080000Z\nDTEND:20270303T090000Z\nSUMMARY:Dentist")))
    change = diff(before, [], now=NOW)[0]
    assert describe(change, BERLIN, NOW) == "Cancelled: Dentist, Wed 3 March 2027 09:00."
    assert describe(change, NEW_YORK, NOW) == "Cancelled: Dentist, Wed 3 March 2027 03:00."


def test_timed_new_event_sentence_shows_local_range_and_relative_day():
    event = one(ics("UID:d\nDTSTART:20261130T160000Z\nDTEND:20261130T170000Z\nSUMMARY:Call"))
    assert describe(Change("new", event), BERLIN, NOW) == (
        "New event: Call, Mon 30 November 2026 17:00–18:00 (tomorrow)."
    )
    overnight = one(ics("UID:n\nDTSTART:20261129T220000Z\nDTEND:20261130T020000Z\nSUMMARY:Flight"))
    assert describe(Change("new", overnight), BERLIN, NOW) == (
        "New event: Flight, Sun 29 November 2026 23:00 – Mon 30 November 2026 03:00 (today)."
    )


def test_place_and_title_changes_read_naturally():
    before = snapshot(parse(trip()))
    place = diff(before, parse(trip(place="Osaka")), now=NOW)[0]
    assert describe(place, BERLIN, NOW) == "New place: Trip to Japan, 10–24 April 2027, now at Osaka (was Tokyo)."
    title = diff(before, parse(trip(title="Japan and Korea")), now=NOW)[0]
    assert describe(title, BERLIN, NOW) == "Renamed: Trip to Japan is now Japan and Korea, 10–24 April 2027, Tokyo."
    both = diff(before, parse(trip(start="20270508", end="20270523", place="Osaka")), now=NOW)[0]
    assert describe(both, BERLIN, NOW) == (
        "Changed: Trip to Japan, 8–22 May 2027 (was 10–24 April 2027), at Osaka (was Tokyo)."
    )


def test_long_notes_are_trimmed_and_attendees_kept():
    long_text = "Agenda: " + " ".join(f"item{i}" for i in range(200))
    event = one(
        ics(
            f"UID:a\nDTSTART:20261205T090000Z\nSUMMARY:Board\nDESCRIPTION:{long_text}\n"
            "ATTENDEE;CN=Alice:mailto:alice@example.com\nATTENDEE:mailto:bob@example.com"
        )
    )
    text = describe(Change("new", event), BERLIN, NOW)
    assert " With Alice, bob@example.com." in text
    notes = text.split(" Notes: ", 1)[1]
    assert notes.startswith("Agenda: item0 item1") and notes.endswith("…") and len(notes) <= 201


def test_series_sentence_says_how_many_occurrences():
    change = diff({}, parse(ics(WEEKLY.format(hh="08")), span=timedelta(days=70)), now=NOW)[0]
    assert describe(change, BERLIN, NOW) == (
        "New event: Standup, Mon 30 November 2026 09:00 (tomorrow). "
        "This applies to 10 occurrences of a recurring event."
    )


# REPL helpers --------------------------------------------------------------


def read(path: Path) -> list:
    return list(icalendar.Calendar.from_ical(path.read_bytes()).walk("VEVENT"))


def test_add_event_all_day_with_inclusive_end(tmp_path):
    path = tmp_path / "sub" / "calendar.ics"
    uid = add_event(path, "Trip to Japan", "2027-04-10", "2027-04-24", location="Tokyo")
    [event] = read(path)
    assert str(event["UID"]) == uid
    assert event["DTSTART"].dt == date(2027, 4, 10) and event["DTEND"].dt == date(2027, 4, 25)
    assert describe(diff({}, parse(path.read_bytes()), now=NOW)[0], BERLIN, NOW) == (
        "New event: Trip to Japan, 10–24 April 2027 (in 132 days), Tokyo."
    )
    add_event(path, "Birthday", date(2027, 1, 5))
    assert read(path)[1]["DTEND"].dt == date(2027, 1, 6)


def test_add_event_timed_in_a_zone_and_floating(tmp_path):
    path = tmp_path / "calendar.ics"
    add_event(path, "Dentist", "2027-03-03 09:00", "2027-03-03 10:00", tz=BERLIN)
    add_event(path, "Gym", datetime(2027, 3, 4, 18, 0))
    dentist, gym = parse(path.read_bytes(), tz=NEW_YORK)
    assert dentist.start == datetime(2027, 3, 3, 8, tzinfo=UTC) and dentist.end == datetime(2027, 3, 3, 9, tzinfo=UTC)
    assert gym.start == datetime(2027, 3, 4, 23, tzinfo=UTC) and gym.end is None  # floating: the reader's zone
    with pytest.raises(ValueError):
        add_event(path, "Backwards", "2027-03-03 10:00", "2027-03-03 09:00")


def test_add_with_an_existing_title_moves_and_bumps_sequence(tmp_path):
    path = tmp_path / "calendar.ics"
    uid = add_event(path, "Trip to Japan", "2027-04-10", "2027-04-24", location="Tokyo")
    assert add_event(path, "trip to japan", "2027-05-08", "2027-05-22") == uid
    [event] = read(path)
    assert event["DTSTART"].dt == date(2027, 5, 8) and event["DTEND"].dt == date(2027, 5, 23)
    assert int(event["SEQUENCE"]) == 1 and str(event["LOCATION"]) == "Tokyo"
    assert move_event(path, "Trip to Japan", "2027-06-01") == uid
    assert int(read(path)[0]["SEQUENCE"]) == 2
    assert move_event(path, "Nothing", "2027-06-01") is None


def test_cancel_event(tmp_path):
    path = tmp_path / "calendar.ics"
    assert cancel_event(path, "Dentist") is False
    add_event(path, "Dentist", "2027-03-03 09:00", "2027-03-03 10:00", tz=BERLIN)
    assert cancel_event(path, "Dentist") is True
    [event] = read(path)
    assert str(event["STATUS"]) == "CANCELLED" and int(event["SEQUENCE"]) == 1
    assert cancel_event(path, "Dentist") is False  # already cancelled
    new_uid = add_event(path, "Dentist", "2027-03-10 09:00", tz=BERLIN)  # a new appointment, not the old one
    assert len(read(path)) == 2 and new_uid != str(event["UID"])


# The actor -----------------------------------------------------------------


class Directory:
    """Records tells, and whether they came while a transaction was still open."""

    def __init__(self):
        self.told = []
        self.crashes = []

    def tell(self, name, message):
        self.told.append((name, message, database.in_transaction()))
        return True

    def handled(self, name, *_):
        pass

    def crashed(self, name, error, *_):
        self.crashes.append((name, error))


@pytest.fixture
def make_ctx(tmp_path):
    def make(*, tz="Europe/Berlin", horizon_days=365, start=NOW):
        config = configmod.load(tmp_path, environ={})
        config.set("core", "timezone", tz)
        config.set("calendar", "horizon_days", horizon_days)
        return Context(config=config, clock=SimClock(start), synapse=None, directory=Directory())

    return make


@pytest.fixture
def logs():
    lines: list[str] = []
    sink = logger.add(lambda m: lines.append(m.record["message"]), level="WARNING")
    yield lines
    logger.remove(sink)


def rows():
    return list(ReceptorBuffer.select().order_by(ReceptorBuffer.id))


def test_actor_sync_buffers_changes_once(db, make_ctx, tmp_path):
    path = tmp_path / "calendar.ics"
    add_event(path, "Trip to Japan", "2027-04-10", "2027-04-24", location="Tokyo")
    add_event(path, "Old meeting", "2026-11-01 09:00", tz=BERLIN)  # already in the past
    add_event(path, "Far away", "2028-06-01")  # beyond the 365-day horizon
    ctx = make_ctx()
    channel = CalendarChannel(ctx, sources=[IcsFileSource(path)])
    # it delivers too: approved events are written through it
    assert channel.name == "calendar" and channel.realtime is False and channel.can_deliver is True

    assert channel.sync("test") == 1
    [row] = rows()
    assert row.channel == "calendar"
    assert row.text == "New event: Trip to Japan, 10–24 April 2027 (in 132 days), Tokyo."
    assert row.payload["change"] == "new" and row.payload["previous"] is None and row.payload["all_day"] is True
    assert ctx.directory.told == [("thalamus", StimulusCommitted("buffer", row.id, row.trace_id), False)]

    assert channel.sync("test") == 0  # unchanged file
    path.touch()
    assert channel.sync("test") == 0  # touched, same content
    assert len(rows()) == 1 and len(ctx.directory.told) == 1

    ctx.clock.advance(timedelta(days=1))
    add_event(path, "Trip to Japan", "2027-05-08", "2027-05-22")
    assert channel.sync("test") == 1
    moved = rows()[-1]
    assert moved.payload["change"] == "changed"
    assert moved.text == "Moved: Trip to Japan now 8–22 May 2027 (was 10–24 April 2027), Tokyo."
    assert moved.payload["previous"]["location"] == "Tokyo"
    assert datetime.fromisoformat(moved.payload["previous"]["start"]).astimezone(BERLIN).date() == date(2027, 4, 10)
    assert channel.sync("test") == 0

    cancel_event(path, "Trip to Japan")
    assert channel.sync("test") == 1
    assert rows()[-1].text == "Cancelled: Trip to Japan, 8–22 May 2027, Tokyo."
    assert [m.row_id for _, m, _ in ctx.directory.told] == [r.id for r in rows()]
    assert all(not in_tx for _, _, in_tx in ctx.directory.told)
    cursor = Cursor.get(Cursor.name == f"calendar:{IcsFileSource(path).id}")
    assert set(cursor.value) == {"events", "known_until", "fetch"}


def test_actor_honours_horizon_days(db, make_ctx, tmp_path):
    path = tmp_path / "calendar.ics"
    add_event(path, "Soon", "2026-12-10")
    add_event(path, "Later", "2027-02-10")
    channel = CalendarChannel(make_ctx(horizon_days=30), sources=[IcsFileSource(path)])
    assert channel.sync("test") == 1 and "Soon" in rows()[0].text


def test_actor_builds_sources_from_config(db, make_ctx, tmp_path):
    ctx = make_ctx()
    assert CalendarChannel(ctx).sources == []
    ctx.config.set("calendar", "path", "calendar.ics")
    ctx.config.set("calendar", "url", "https://example.com/private-secret-token/basic.ics")
    ctx.config.set("calendar", "caldav_url", "https://dav.example.com/")
    ctx.config.set("calendar", "caldav_username", "me")
    ctx.config.set("calendar", "caldav_password", "hunter22")
    sources = CalendarChannel(ctx).sources
    assert [type(s).__name__ for s in sources] == ["IcsFileSource", "IcsUrlSource", "CalDavSource"]
    assert sources[0].path == tmp_path / "calendar.ics"  # relative to the Wilson home
    assert "secret" not in sources[1].label and "secret" not in sources[1].id
    assert "hunter22" not in sources[2].label and sources[2].password == "hunter22"


def test_failing_sources_are_logged_and_the_rest_continue(db, make_ctx, tmp_path, logs):
    good = tmp_path / "good.ics"
    add_event(good, "Dentist", "2026-12-03 09:00", tz=BERLIN)
    broken = tmp_path / "broken.ics"
    broken.write_bytes(b"BEGIN:VCALENDAR\nthis line is broken\n")
    sources = [
        IcsFileSource(tmp_path / "missing.ics"),
        IcsUrlSource("http://127.0.0.1:9/cal.ics", timeout=2),
        IcsFileSource(broken),
        IcsFileSource(good),
    ]
    channel = CalendarChannel(make_ctx(), sources=sources)
    assert channel.sync("test") == 1
    assert rows()[0].text.startswith("New event: Dentist, Thu 3 December 2026 09:00")
    assert any("missing.ics: no such file" in line for line in logs)
    assert any("http://127.0.0.1:9/" in line for line in logs)
    assert any("broken.ics" in line and "not a valid iCalendar file" in line for line in logs)
    assert all("\n" not in line for line in logs)


def test_a_broken_file_is_not_a_deleted_calendar(db, make_ctx, tmp_path):
    path = tmp_path / "calendar.ics"
    add_event(path, "Dentist", "2026-12-03 09:00", tz=BERLIN)
    add_event(path, "Trip", "2027-04-10", "2027-04-24")
    channel = CalendarChannel(make_ctx(), sources=[IcsFileSource(path)])
    assert channel.sync("test") == 2
    good = path.read_bytes()
    path.write_bytes(good[: len(good) // 2])  # a half-written download
    assert channel.sync("test") == 0
    path.write_bytes(good.replace(b"SUMMARY:Trip", b"SUMMARY:Trip to Japan"))
    assert channel.sync("test") == 1
    assert rows()[-1].text.startswith("Renamed: Trip is now Trip to Japan")


def test_rows_and_cursor_commit_together(db, make_ctx, tmp_path, monkeypatch):
    path = tmp_path / "calendar.ics"
    add_event(path, "One", "2026-12-03")
    add_event(path, "Two", "2026-12-04")
    ctx = make_ctx()
    channel = CalendarChannel(ctx, sources=[IcsFileSource(path)])
    real = calendar_channel.routing.commit_buffered
    calls = []

    def crash_on_second(**kwargs):
        calls.append(kwargs["dedup_key"])
        if len(calls) == 2:
            raise OSError("disk full")
        return real(**kwargs)

    monkeypatch.setattr(calendar_channel.routing, "commit_buffered", crash_on_second)
    assert channel.sync("test") == 0  # the failure is logged, not raised
    reading = Cursor.select().where(~Cursor.name.startswith("health:"))  # the source's cursor, not its health line
    assert rows() == [] and reading.count() == 0 and ctx.directory.told == []
    assert "disk full" in Cursor.get(Cursor.name == "health:calendar").value["error"]
    monkeypatch.setattr(calendar_channel.routing, "commit_buffered", real)
    assert channel.sync("test") == 2
    assert sorted(r.dedup_key for r in rows()) == sorted(calls)


def test_the_same_change_from_two_sources_is_buffered_once(db, make_ctx, tmp_path):
    first, second = tmp_path / "a.ics", tmp_path / "b.ics"
    add_event(first, "Trip", "2027-04-10", "2027-04-24")
    second.write_bytes(first.read_bytes())
    channel = CalendarChannel(make_ctx(), sources=[IcsFileSource(first), IcsFileSource(second)])
    assert channel.sync("test") == 1 and len(rows()) == 1


def test_running_actor_syncs_on_channel_sync(db, make_ctx, tmp_path):
    path = tmp_path / "calendar.ics"
    add_event(path, "Trip to Japan", "2027-04-10", "2027-04-24", location="Tokyo")
    ctx = make_ctx()
    ref = CalendarChannel.start(ctx, sources=[IcsFileSource(path), IcsFileSource(tmp_path / "missing.ics")])
    try:
        ref.tell(ChannelSync("test"))
        assert ref.ask(Ping(), timeout=10) == "pong"
        assert [r.payload["title"] for r in rows()] == ["Trip to Japan"]
        assert ref.is_alive() and ctx.directory.crashes == []
    finally:
        ref.stop()


@pytest.mark.skipif(sys.platform == "darwin", reason="checks the guard on other platforms")
def test_apple_calendar_is_skipped_off_macos(db, make_ctx, logs):
    channel = CalendarChannel(make_ctx(), sources=[cal.AppleCalendarSource()])
    assert channel.sync("test") == 0
    assert any("only available on macOS" in line for line in logs)


def test_apple_rows_become_calendar_data():
    data = cal.apple_rows_to_ics(
        "u1\tLunch\t2027-03-10T12:30:00\t2027-03-10T13:30:00\tfalse\tCafé\tconfirmed\t\n"
        "u2\tHoliday\t2027-03-12T00:00:00\t2027-03-13T00:00:00\ttrue\t\tcancelled\t\n"
        "u3\tChoir\t2026-11-02T19:00:00\t2026-11-02T21:00:00\tfalse\t\tnone\tFREQ=WEEKLY;COUNT=6\n"
        "u3\tChoir\t2026-11-02T19:00:00\t2026-11-02T21:00:00\tfalse\t\tnone\tFREQ=WEEKLY;COUNT=6\n"
    )
    events = parse(data)
    choir = [e for e in events if e.uid == "u3"]
    assert [e.start.astimezone(BERLIN).day for e in choir] == [30, 7]  # series from 2 Nov, expanded from now
    lunch, holiday = [e for e in events if e.uid != "u3"]
    assert lunch.start == datetime(2027, 3, 10, 11, 30, tzinfo=UTC) and lunch.location == "Café"
    assert holiday.all_day and holiday.status == "CANCELLED" and cal.when(holiday, BERLIN) == "Fri 12 March 2027"


# The .ics URL source -------------------------------------------------------


class CalendarServer:
    """A loopback .ics server with ETags that records the validators it was sent."""

    def __init__(self, body: bytes):
        self.body = body
        self.requests: list[dict] = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                etag = '"' + hashlib.sha1(server.body).hexdigest()[:16] + '"'
                server.requests.append({"if_none_match": self.headers.get("If-None-Match"), "path": self.path})
                if self.headers.get("If-None-Match") == etag:
                    self.send_response(304)
                    self.send_header("ETag", etag)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/calendar")
                self.send_header("ETag", etag)
                self.send_header("Content-Length", str(len(server.body)))
                self.end_headers()
                self.wfile.write(server.body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/private/calendar.ics"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def no_proxy(monkeypatch):
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)


def test_url_source_conditional_get(no_proxy):
    server = CalendarServer(trip())
    try:
        source = IcsUrlSource(server.url)
        documents, state = source.fetch({})
        assert documents[0][1] == trip() and state["etag"].startswith('"')
        unchanged, state2 = source.fetch(state)
        assert unchanged is None and state2 == state
        assert server.requests[1]["if_none_match"] == state["etag"]
        server.body = trip(place="Osaka")
        documents, state3 = source.fetch(state)
        assert b"Osaka" in documents[0][1] and state3["etag"] != state["etag"]
        assert "private" not in source.label
    finally:
        server.close()


def test_url_source_through_the_actor(db, make_ctx, no_proxy):
    server = CalendarServer(trip())
    try:
        channel = CalendarChannel(make_ctx(), sources=[IcsUrlSource(server.url)])
        assert channel.sync("test") == 1
        assert channel.sync("test") == 0
        assert server.requests[-1]["if_none_match"] is not None and len(rows()) == 1
        server.body = trip(place="Osaka")
        assert channel.sync("test") == 1
        assert rows()[-1].text == "New place: Trip to Japan, 10–24 April 2027, now at Osaka (was Tokyo)."
    finally:
        server.close()


def test_a_calendar_with_nothing_in_it_reads_as_no_events_without_loading_the_parsers():
    # a process of its own: this one has loaded the parsers already
    script = (
        "import sys\n"
        "from datetime import datetime, timedelta, timezone\n"
        "from channels.calendar.ics import parse_calendar\n"
        "from wilson.app.application import EMPTY_CALENDAR\n"
        "now = datetime(2026, 11, 29, tzinfo=timezone.utc)\n"
        "found = parse_calendar(EMPTY_CALENDAR.encode(), name='calendar.ics', window_start=now,"
        " window_end=now + timedelta(days=365))\n"
        "print(found, 'recurring_ical_events' in sys.modules or 'icalendar' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    ).stdout
    assert out.split() == ["[]", "False"], out
    # anything in it, even a time zone alone, is the parser's: an event beside it is read as ever
    zone = "BEGIN:VTIMEZONE\r\nTZID:Europe/Berlin\r\nEND:VTIMEZONE\r\n"
    assert parse(ics(extra=zone)) == []
    assert one(ics("UID:a\r\nDTSTART:20261201T100000Z\r\nSUMMARY:Dentist", extra=zone)).title == "Dentist"
    with pytest.raises(CalendarError):
        parse(b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\n")  # never closed: not a calendar, as before
