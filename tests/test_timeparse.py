"""wilson/kernel/timeparse.py: the one reader of ISO dates, stored moments, local wall times and HH:MM windows."""

from __future__ import annotations

from datetime import date, datetime, time, timezone
from zoneinfo import ZoneInfo

import pytest

from wilson.kernel import config as configmod
from wilson.kernel import timeparse

UTC = timezone.utc
BERLIN = ZoneInfo("Europe/Berlin")


def test_a_date_alone_is_a_whole_day_and_anything_longer_a_moment():
    assert timeparse.date_or_datetime(" 2027-03-01 ") == date(2027, 3, 1)
    assert timeparse.date_or_datetime("20270301") == date(2027, 3, 1)
    assert timeparse.date_or_datetime("2027-03-01T09:30") == datetime(2027, 3, 1, 9, 30)
    assert timeparse.date_or_datetime("2027-03-01T09:30Z") == datetime(2027, 3, 1, 9, 30, tzinfo=UTC)
    for nonsense in ("tomorrow", "2027-13-01", "2027-03-01T25:00", ""):
        with pytest.raises(ValueError):
            timeparse.date_or_datetime(nonsense)


def test_stored_moments_read_as_utc_and_payload_moments_only_with_a_zone():
    assert timeparse.utc_or_none(None) is None and timeparse.utc_or_none("") is None
    assert timeparse.utc_or_none("2027-03-01T10:00:00+01:00") == datetime(2027, 3, 1, 9, 0, tzinfo=UTC)
    assert timeparse.utc_or_none("2027-03-01T10:00:00") == datetime(2027, 3, 1, 10, 0, tzinfo=UTC)
    assert timeparse.aware_or_none("2027-03-01T10:00:00+01:00").utcoffset().total_seconds() == 3600
    for unusable in ("2027-03-01T10:00:00", "soon", None, 17):
        assert timeparse.aware_or_none(unusable) is None


def test_a_wall_time_in_the_spring_gap_lands_after_it_and_a_repeated_one_is_its_first():
    assert timeparse.local_moment(date(2027, 3, 28), time(2, 30), BERLIN) == datetime(2027, 3, 28, 1, 30, tzinfo=UTC)
    assert timeparse.local_moment(date(2027, 10, 31), time(2, 30), BERLIN) == datetime(2027, 10, 31, 0, 30, tzinfo=UTC)
    assert timeparse.local_moment(date(2027, 7, 1), time(9, 0), BERLIN) == datetime(2027, 7, 1, 7, 0, tzinfo=UTC)


def test_windows_read_the_same_in_the_settings_check_and_at_run_time(tmp_path):
    assert timeparse.parse_window("22:00-07:00") == (time(22), time(7))
    assert timeparse.parse_window(" 13:00 - 15:30 ") == (time(13), time(15, 30))
    for off in (None, "", "off", "None", "false", "0", "09:00-09:00"):
        assert timeparse.parse_window(off) is None
    with pytest.raises(ValueError, match=r"^quiet hours '22-7': expected HH:MM-HH:MM"):
        timeparse.parse_window("22-7", "quiet hours")
    # What the settings check lets through is read at run time; what it refuses would fail there too.
    assert configmod.load(tmp_path, {"WILSON_CORE_QUIET_HOURS": "false"}).get("core", "quiet_hours") == "false"
    with pytest.raises(configmod.ConfigError, match="quiet_hours"):
        configmod.load(tmp_path, {"WILSON_CORE_QUIET_HOURS": "22-7"})


@pytest.mark.parametrize(
    "end, last",
    [
        ("2027-01-13T00:00:00+01:00", date(2027, 1, 12)),  # an all-day end: the midnight after the last day
        ("2027-01-07T11:15:00+01:00", date(2027, 1, 7)),  # an end with hours is its own day
        ("2027-03-29T00:00:00+02:00", date(2027, 3, 28)),  # after a 23-hour day
        ("2027-11-01T00:00:00+01:00", date(2027, 10, 31)),  # after a 25-hour day
        ("2027-03-28T22:00:00+00:00", date(2027, 3, 28)),  # stored in UTC
    ],
)
def test_the_last_day_of_a_span_is_the_local_day_before_an_end_at_midnight(end, last):
    assert timeparse.last_day(datetime.fromisoformat(end), BERLIN) == last
