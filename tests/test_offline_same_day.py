"""wilson/model/offline/same_day.py: the offline heads-up for a move or cancellation that touches today."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from wilson.model.offline.same_day import told

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2027, 1, 5, 8, 30, tzinfo=BERLIN)  # Tue 5 Jan


def change(kind, start, end, previous=None, all_day=False, location=None):
    return {
        "change": kind,
        "title": "Lunch with Ana",
        "start": start,
        "end": end,
        "all_day": all_day,
        "previous": previous,
        "location": location,
    }


@pytest.mark.parametrize(
    "buffer, said",
    [
        (
            change(
                "changed",
                "2027-01-05T18:00:00+01:00",
                "2027-01-05T19:00:00+01:00",
                {"start": "2027-01-05T19:30:00+01:00", "end": "2027-01-05T20:30:00+01:00", "all_day": False},
            ),
            "Heads-up: it moved from 19:30 to 18:00 on Tue 5 Jan.",
        ),
        (
            change(
                "changed",
                "2027-01-06T10:00:00+01:00",
                "2027-01-06T11:00:00+01:00",
                {"start": "2027-01-05T15:00:00+01:00", "end": "2027-01-05T16:00:00+01:00", "all_day": False},
            ),
            "Heads-up: it moved from Tue 5 Jan at 15:00 to Wed 6 Jan at 10:00.",
        ),
        # each side by its own flag: a timed slot that became a day-long one, and back
        (
            change(
                "changed",
                "2027-01-04T23:00:00+00:00",
                "2027-01-05T23:00:00+00:00",
                {"start": "2027-01-05T15:00:00+01:00", "end": "2027-01-05T16:00:00+01:00", "all_day": False},
                all_day=True,
            ),
            "Heads-up: it moved from Tue 5 Jan at 15:00 to Tue 5 Jan, all day.",
        ),
        (
            change(
                "changed",
                "2027-01-05T15:00:00+01:00",
                "2027-01-05T16:00:00+01:00",
                {"start": "2027-01-04T23:00:00+00:00", "end": "2027-01-05T23:00:00+00:00", "all_day": True},
            ),
            "Heads-up: it moved from Tue 5 Jan, all day to Tue 5 Jan at 15:00.",
        ),
        (
            change(
                "cancelled",
                "2027-01-04T23:00:00+00:00",
                "2027-01-05T23:00:00+00:00",
                {"start": "2027-01-04T23:00:00+00:00", "end": "2027-01-05T23:00:00+00:00", "all_day": True},
                all_day=True,
            ),
            "Heads-up: it's cancelled (it was on Tue 5 Jan, all day).",
        ),
        # new, later today or by this time tomorrow: told before it starts
        (
            change("new", "2027-01-05T15:00:00+01:00", "2027-01-05T16:00:00+01:00"),
            "Heads-up: new in your calendar for Tue 5 Jan at 15:00.",
        ),
        (
            change("new", "2027-01-06T08:00:00+01:00", "2027-01-06T09:00:00+01:00"),
            "Heads-up: new in your calendar for Wed 6 Jan at 08:00.",
        ),
        # over already, more than a day ahead: nothing
        (
            change(
                "cancelled",
                "2027-01-05T07:00:00+01:00",
                "2027-01-05T08:00:00+01:00",
                {"start": "2027-01-05T07:00:00+01:00", "end": "2027-01-05T08:00:00+01:00"},
            ),
            "",
        ),
        (
            change(
                "changed",
                "2027-01-07T10:00:00+01:00",
                "2027-01-07T11:00:00+01:00",
                {"start": "2027-01-06T10:00:00+01:00", "end": "2027-01-06T11:00:00+01:00"},
            ),
            "",
        ),
        (change("new", "2027-01-06T10:00:00+01:00", "2027-01-06T11:00:00+01:00"), ""),
        (change("new", "2027-01-05T07:00:00+01:00", "2027-01-05T08:00:00+01:00"), ""),
    ],
)
def test_a_same_day_change_is_told_with_its_day(buffer, said):
    assert told(buffer, NOW, BERLIN) == said


def test_a_place_changed_for_an_event_tomorrow_morning_is_told_with_the_new_place():
    moved = change(
        "changed",
        "2027-01-06T08:00:00+01:00",
        "2027-01-06T09:00:00+01:00",
        {"start": "2027-01-06T08:00:00+01:00", "end": "2027-01-06T09:00:00+01:00", "location": "Café Luna"},
        location="Room 4.12, Main Building",
    )
    assert told(moved, NOW, BERLIN) == "Heads-up: it's now at Room 4.12, Main Building (Wed 6 Jan at 08:00)."
    new = change("new", "2027-01-05T12:30:00+01:00", "2027-01-05T13:30:00+01:00", location="Café Luna")
    assert told(new, NOW, BERLIN) == "Heads-up: new in your calendar for Tue 5 Jan at 12:30, at Café Luna."


def test_an_event_cancelled_for_tomorrow_evening_is_told_now_a_routine_meeting_then_is_not():
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from wilson.model.offline import same_day as told_soon

    tz = ZoneInfo("Europe/Berlin")
    now = datetime(2027, 3, 9, 9, 0, tzinfo=tz)
    concert = {
        "change": "cancelled",
        "title": "Konzert Philharmonie",
        "start": "2027-03-10T20:00:00+01:00",
        "end": "2027-03-10T22:00:00+01:00",
    }
    sync = dict(concert, title="Weekly sync", end="2027-03-10T20:30:00+01:00")
    assert told_soon.told(concert, now, tz) == "Heads-up: it's cancelled (it was on Wed 10 Mar at 20:00)."
    assert told_soon.told(sync, now, tz) == ""
