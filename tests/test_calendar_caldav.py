"""CalDAV through a real Radicale server on loopback: new, changed and cancelled events."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
import radicale  # noqa: F401  (a test dependency: a broken install must fail here, not skip)
from loguru import logger

from channels.calendar import CalDavSource, SourceError, parse_calendar
from storage.models import ReceptorBuffer
from tests.caldav_support import NOW, UTC, account, channel_for, free_port, no_proxy, radicale, vcal  # noqa: F401 (fixtures)

BERLIN = ZoneInfo("Europe/Berlin")


def texts() -> list[str]:
    return [r.text for r in ReceptorBuffer.select().order_by(ReceptorBuffer.id)]


DENTIST = (
    "UID:dentist\nDTSTAMP:20261101T000000Z\nDTSTART;TZID=Europe/Berlin:20270303T090000\n"
    "DTEND;TZID=Europe/Berlin:20270303T100000\nSUMMARY:Dentist\nLOCATION:Praxis Weber"
)
TRIP = (
    "UID:trip\nDTSTAMP:20261101T000000Z\nDTSTART;VALUE=DATE:{}\nDTEND;VALUE=DATE:{}\nSUMMARY:Trip to Japan\n"
    "LOCATION:Tokyo\nSEQUENCE:{}"
)
LUNCH = (
    "UID:lunch\nDTSTAMP:20261101T000000Z\nDTSTART:20261210T113000Z\nDTEND:20261210T123000Z\nSUMMARY:Lunch with Sam{}"
)


def test_new_changed_cancelled_over_caldav(radicale, channel_for):
    client, principal = account(radicale, "alice")
    work = principal.make_calendar(name="Work")
    home = principal.make_calendar(name="Home")
    work.save_event(vcal(DENTIST))
    home.save_event(vcal(TRIP.format("20270410", "20270425", 0)))
    work.save_event(vcal(LUNCH.format("")))

    channel = channel_for(CalDavSource(radicale, "alice", "secret-pw"))
    assert channel.sync("test") == 3  # events of every calendar of the account
    assert texts() == [
        "New event: Lunch with Sam, Thu 10 December 2026 12:30–13:30 (in 11 days).",
        "New event: Dentist, Wed 3 March 2027 09:00–10:00 (in 94 days), Praxis Weber.",
        "New event: Trip to Japan, 10–24 April 2027 (in 132 days), Tokyo.",
    ]
    assert channel.sync("test") == 0  # nothing changed on the server

    home.save_event(vcal(TRIP.format("20270508", "20270523", 1)))  # same UID: an update
    assert channel.sync("test") == 1
    assert texts()[-1] == "Moved: Trip to Japan now 8–22 May 2027 (was 10–24 April 2027), Tokyo."

    work.event_by_uid("dentist").delete()
    work.save_event(vcal(LUNCH.format("\nSTATUS:CANCELLED\nSEQUENCE:1")))
    assert channel.sync("test") == 2
    assert sorted(texts()[-2:]) == [
        "Cancelled: Dentist, Wed 3 March 2027 09:00, Praxis Weber.",
        "Cancelled: Lunch with Sam, Thu 10 December 2026 12:30.",
    ]
    assert channel.sync("test") == 0
    told = channel.ctx.directory.told
    assert len(told) == 6 and all(name == "thalamus" for name, _ in told)


WEEKLY = (
    "UID:standup\nDTSTAMP:20261101T000000Z\nDTSTART;TZID=W. Europe Standard Time:20261130T090000\n"
    "DTEND;TZID=W. Europe Standard Time:20261130T091500\nRRULE:FREQ=WEEKLY;COUNT=20\nSUMMARY:Standup"
)
OVERRIDE = (
    "UID:standup\nDTSTAMP:20261101T000000Z\nRECURRENCE-ID;TZID=W. Europe Standard Time:20261214T090000\n"
    "DTSTART;TZID=W. Europe Standard Time:20261214T113000\nDTEND;TZID=W. Europe Standard Time:20261214T114500\n"
    "SUMMARY:Standup\nSEQUENCE:1"
)
FLOATING = "UID:gym\nDTSTAMP:20261101T000000Z\nDTSTART:20261205T180000\nSUMMARY:Gym"
NEW_YORK_CALL = (
    "UID:call\nDTSTAMP:20261101T000000Z\nDTSTART;TZID=America/New_York:20270310T090000\n"
    "DTEND;TZID=America/New_York:20270310T100000\nSUMMARY:Call with New York"
)


def test_recurrence_and_time_zones_over_caldav(radicale, channel_for):
    client, principal = account(radicale, "bob")
    work = principal.make_calendar(name="Work")
    work.save_event(vcal(WEEKLY))
    work.save_event(vcal(FLOATING))
    work.save_event(vcal(NEW_YORK_CALL))

    source = CalDavSource(radicale, "bob", "secret-pw")
    documents, _ = source.fetch({})
    assert len(documents) == 3 and all(name.startswith("Work/") for name, _ in documents)
    year = NOW + timedelta(days=365)
    events = [
        e
        for name, data in documents
        for e in parse_calendar(data, name=name, window_start=NOW, window_end=year, tz=BERLIN)
    ]
    standups = [e for e in events if e.uid == "standup"]
    assert len(standups) == 20 and len({e.recurrence_id for e in standups}) == 20
    assert {e.start.astimezone(BERLIN).hour for e in standups} == {9}  # a Windows zone name, read as Berlin
    assert {e.start.hour for e in standups} == {7, 8}  # across the March DST change
    [gym] = [e for e in events if e.uid == "gym"]
    assert gym.start == datetime(2026, 12, 5, 17, tzinfo=UTC)  # floating: the user's zone
    [call] = [e for e in events if e.uid == "call"]
    assert call.start == datetime(2027, 3, 10, 14, tzinfo=UTC)

    channel = channel_for(source)
    assert channel.sync("test") == 3  # one row for the whole series
    assert any(
        t.startswith("New event: Standup, Mon 30 November 2026 09:00–09:15 (tomorrow).") and "20 occurrences" in t
        for t in texts()
    )
    assert "New event: Call with New York, Wed 10 March 2027 15:00–16:00 (in 101 days)." in texts()

    work.save_event(vcal(WEEKLY, OVERRIDE))  # one occurrence moved, in the same object
    assert channel.sync("test") == 1
    assert texts()[-1] == (
        "Moved: Standup now Mon 14 December 2026 11:30–11:45 (was Mon 14 December 2026 09:00–09:15)."
    )


def test_unreachable_caldav_is_logged_and_others_continue(radicale, channel_for):
    _, principal = account(radicale, "carol")
    principal.make_calendar(name="Personal").save_event(vcal(LUNCH.format("")))
    dead = f"http://127.0.0.1:{free_port()}/"
    lines = []
    sink = logger.add(lambda m: lines.append(m.record["message"]), level="WARNING")
    try:
        with pytest.raises(SourceError) as caught:
            CalDavSource(dead, "carol", "secret-pw").fetch({})
        assert "secret-pw" not in str(caught.value)
        channel = channel_for(CalDavSource(dead, "carol", "secret-pw"), CalDavSource(radicale, "carol", "secret-pw"))
        assert channel.sync("test") == 1
    finally:
        logger.remove(sink)
    assert texts() == ["New event: Lunch with Sam, Thu 10 December 2026 12:30–13:30 (in 11 days)."]
    assert len([line for line in lines if "CalDAV http://127.0.0.1" in line]) == 1
    assert not any("secret-pw" in line for line in lines)
