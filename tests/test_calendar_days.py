"""A day's events, read from the calendar channel's snapshots (storage/calendar_days.py): what the
morning briefing and the dashboard both list."""

from datetime import date, datetime, timezone
from zoneinfo import ZoneInfo

from channels.calendar.diff import snapshot as channel_snapshot
from channels.calendar.event import CANCELLED, Event
from storage import calendar_days, kv
from storage.models import Cursor

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2027, 3, 1, 6, 0, tzinfo=timezone.utc)


def entry(uid, start, end=None, *, all_day=False, status=None, title=None, location=None):
    return {
        "uid": uid,
        "recurrence_id": None,
        "sequence": 0,
        "title": title or uid,
        "start": start,
        "end": end,
        "all_day": all_day,
        "location": location,
        "status": status,
        "doc": "x.ics",
        "version": 0,
    }


def snapshot(name, *entries):
    kv.put_cursor(f"calendar:{name}", {"events": {e["uid"] + "|": e for e in entries}}, NOW)


def titles(day):
    return [e.title for e in calendar_days.events_on(day, BERLIN)]


def test_a_day_lists_its_events_by_start_and_leaves_out_cancelled_ones(db):
    snapshot(
        "home",
        entry("late", "2027-03-02T17:00:00+00:00", "2027-03-02T18:00:00+00:00", location="Gym"),
        entry("early", "2027-03-02T07:30:00+00:00", "2027-03-02T08:00:00+00:00"),
        entry("gone", "2027-03-02T09:00:00+00:00", "2027-03-02T10:00:00+00:00", status="CANCELLED"),
        entry("tomorrow", "2027-03-03T09:00:00+00:00"),
    )
    assert titles(date(2027, 3, 2)) == ["early", "late"]
    late = calendar_days.events_on(date(2027, 3, 2), BERLIN)[1]
    assert late.location == "Gym" and late.start == datetime(2027, 3, 2, 17, 0, tzinfo=timezone.utc)


def test_a_multi_day_event_covers_each_of_its_local_days_and_ends_before_midnight(db):
    # all day 4–6 March in Berlin: stored as UTC instants, the exclusive end at local midnight of the 7th
    snapshot("home", entry("trip", "2027-03-03T23:00:00+00:00", "2027-03-06T23:00:00+00:00", all_day=True))
    assert [titles(date(2027, 3, d)) for d in (3, 4, 6, 7)] == [[], ["trip"], ["trip"], []]
    trip = calendar_days.events_on(date(2027, 3, 5), BERLIN)[0]
    assert (trip.first_day(BERLIN), trip.last_day(BERLIN)) == (date(2027, 3, 4), date(2027, 3, 6))


def test_an_event_two_sources_hold_is_listed_once_and_an_unreadable_entry_is_skipped(db):
    snapshot("a", entry("shared", "2027-03-02T10:00:00+00:00"))
    snapshot("b", entry("shared", "2027-03-02T10:00:00+00:00"), entry("broken", "not a date"))
    Cursor.create(name="calendar:odd", value={"events": ["not", "a", "dict"]}, updated_at=NOW)
    assert titles(date(2027, 3, 2)) == ["shared"]


def test_the_calendar_channels_own_snapshot_entries_are_read_and_its_cancelled_ones_left_out(db):
    # storage may not import the channel, so it keeps its own copy of the entry's shape and of CANCELLED:
    # entries the channel itself writes show whether the two still agree
    def event(uid, hour, status=None):
        return Event(
            uid=uid,
            recurrence_id=None,
            sequence=0,
            title=uid,
            start=datetime(2027, 3, 2, hour, tzinfo=timezone.utc),
            end=datetime(2027, 3, 2, hour + 1, tzinfo=timezone.utc),
            all_day=False,
            location="Room 4",
            description=None,
            attendees=(),
            status=status,
            doc="x.ics",
        )

    entries = channel_snapshot([event("standup", 8), event("dropped", 9, CANCELLED), event("review", 7)])
    kv.put_cursor("calendar:home", {"events": entries}, NOW)
    assert titles(date(2027, 3, 2)) == ["review", "standup"]
    assert calendar_days.events_on(date(2027, 3, 2), BERLIN)[0].location == "Room 4"


def test_events_between_overlap_the_span_and_an_all_day_event_without_an_end_lasts_its_day(db):
    snapshot(
        "home",
        entry("trip", "2027-02-27T23:00:00+00:00", "2027-03-05T23:00:00+00:00", all_day=True),
        entry("holiday", "2027-03-01T23:00:00+00:00", all_day=True),  # no DTEND: the 2nd, all day
        entry("over", "2027-03-02T07:00:00+00:00", "2027-03-02T08:00:00+00:00"),
        entry("call", "2027-03-02T12:00:00+00:00", "2027-03-02T13:00:00+00:00"),
        entry("next day", "2027-03-03T09:00:00+00:00", "2027-03-03T10:00:00+00:00"),
        entry("yesterday", "2027-02-28T23:00:00+00:00", "2027-03-01T23:00:00+00:00", all_day=True),
    )
    start = datetime(2027, 3, 2, 10, 0, tzinfo=timezone.utc)
    end = datetime(2027, 3, 2, 22, 59, tzinfo=timezone.utc)
    assert [e.title for e in calendar_days.events_between(start, end)] == ["trip", "holiday", "call"]
    assert [e.title for e in calendar_days.events_between(None, None)][-1] == "next day"


TRIP_DAY = datetime(2027, 4, 9, 22, 0, tzinfo=timezone.utc)  # a topic's start: Saturday 10 April, Berlin's midnight


def test_the_event_a_topic_was_planned_from_is_found_on_its_day_moved_or_cancelled(db):
    snapshot(
        "home", entry("trip", "2027-04-09T22:00:00+00:00", "2027-04-23T22:00:00+00:00", all_day=True, title="Trip")
    )
    assert calendar_days.titled("trip", TRIP_DAY, BERLIN).start == TRIP_DAY  # on its day, whatever the case
    snapshot("home", entry("trip", "2027-06-04T22:00:00+00:00", all_day=True, title="Trip"))
    assert calendar_days.titled("Trip", TRIP_DAY, BERLIN).start.month == 6  # its one event, moved to June
    snapshot("home", entry("trip", "2027-04-09T22:00:00+00:00", all_day=True, title="Trip", status=CANCELLED))
    assert calendar_days.titled("Trip", TRIP_DAY, BERLIN) == calendar_days.CANCELLED
    # a topic told in words has no event in the calendar: it keeps its own dates
    assert calendar_days.titled("Dentist", TRIP_DAY, BERLIN) is None


def test_a_cancelled_event_of_the_same_name_on_another_day_says_nothing_of_a_topic(db):
    snapshot("home", entry("old", "2027-02-01T09:00:00+00:00", title="Dentist", status=CANCELLED))
    assert calendar_days.titled("Dentist", TRIP_DAY, BERLIN) is None


def test_the_next_occurrence_of_a_series_is_no_move_of_the_one_a_topic_was_planned_from(db):
    may = dict(entry("club", "2027-05-09T22:00:00+00:00", all_day=True, title="Book club"), recurrence_id="20270510")
    kv.put_cursor("calendar:home", {"events": {"club|20270510": may}}, NOW)
    assert calendar_days.titled("Book club", TRIP_DAY, BERLIN) is None  # April's is over; May's is May's
    # two events of that name, neither on the day: which one moved cannot be told
    snapshot(
        "home",
        entry("a", "2027-06-01T09:00:00+00:00", title="Fair"),
        entry("b", "2027-07-01T09:00:00+00:00", title="Fair"),
    )
    assert calendar_days.titled("Fair", TRIP_DAY, BERLIN) is None
