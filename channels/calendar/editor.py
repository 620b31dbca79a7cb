"""The REPL's editor of the synthetic calendar file (`calendar add`, `calendar cancel`).

It writes a plain .ics file the way calendar apps do (a new SEQUENCE on each change, a
cancelled event kept with STATUS:CANCELLED), so the channel reads it like any calendar.
"""

from __future__ import annotations

import os
import uuid
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from channels.calendar.event import CANCELLED, CalendarError, one_line
from channels.calendar.ics import decode, new_calendar, sequence_of
from wilson.kernel.timeparse import date_or_datetime

if TYPE_CHECKING:  # annotations only
    import icalendar


def _read_calendar(path: Path) -> icalendar.Calendar:
    # lazy: icalendar (about 40 ms) only once a calendar is read or written
    import icalendar

    if not path.exists():
        return new_calendar()
    try:
        return icalendar.Calendar.from_ical(decode(path.read_bytes()))
    except Exception as exc:
        raise CalendarError(f"{path}: not a valid iCalendar file: {one_line(exc)}") from None


def _write_calendar(path: Path, calendar: icalendar.Calendar) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(calendar.to_ical())
    os.replace(tmp, path)  # a sync reading the file sees the old or the new calendar, never half of one


def as_moment(value, tz: ZoneInfo | None):
    """date for all-day, datetime (aware if tz given or stated, else floating) for timed."""
    if isinstance(value, str):
        value = date_or_datetime(value)
    if isinstance(value, datetime):
        if value.tzinfo is None and tz is not None:
            value = value.replace(tzinfo=tz)
        return value
    if isinstance(value, date):
        return value
    raise ValueError(f"not a date or time: {value!r}")


def set_times(event, start, end, tz: ZoneInfo | None) -> None:
    start = as_moment(start, tz)
    end = as_moment(end, tz) if end not in (None, "") else None
    for prop in ("DTSTART", "DTEND", "DURATION"):
        if prop in event:
            del event[prop]
    if isinstance(start, datetime):
        if isinstance(end, date) and not isinstance(end, datetime):
            raise ValueError("a timed event needs an end time, not a date")
        if end is not None and end <= start:
            raise ValueError("the end must come after the start")
        event.add("DTSTART", start)
        if end is not None:
            event.add("DTEND", end)
        return
    if isinstance(end, datetime):
        end = end.date()
    last = end or start
    if last < start:
        raise ValueError("the end must come after the start")
    event.add("DTSTART", start)
    event.add("DTEND", last + timedelta(days=1))  # the REPL's end day is inclusive, DTEND is not


def _find(calendar, title: str):
    wanted = " ".join(title.split()).casefold()
    for component in calendar.walk("VEVENT"):
        if (
            " ".join(str(component.get("SUMMARY", "")).split()).casefold() == wanted
            and str(component.get("STATUS", "")).upper() != CANCELLED
            and "RECURRENCE-ID" not in component
        ):
            return component
    return None


def bump(event) -> None:
    sequence = sequence_of(event) + 1
    if "SEQUENCE" in event:
        del event["SEQUENCE"]
    event.add("SEQUENCE", sequence)


def _finish(calendar, path: Path) -> None:
    try:
        calendar.add_missing_timezones()
    except Exception:  # zones icalendar cannot describe stay referenced by TZID, as many exporters do
        pass
    _write_calendar(path, calendar)


def add_event(path, title: str, start, end=None, location: str | None = None, tz: ZoneInfo | None = None) -> str:
    """Add an event to the calendar file (created if missing) and return its UID.

    A date start makes an all-day event whose `end` date is inclusive. Naive times are
    read in `tz`, or stay floating when no tz is given. If a (not cancelled) event with
    this title exists it is moved instead, keeping its UID.
    """
    # lazy: icalendar (about 40 ms) only once a calendar is read or written
    import icalendar

    path = Path(path)
    title = " ".join(title.split())
    if not title:
        raise ValueError("an event needs a title")
    calendar = _read_calendar(path)
    existing = _find(calendar, title)
    if existing is not None:
        set_times(existing, start, end, tz)
        if location:
            if "LOCATION" in existing:
                del existing["LOCATION"]
            existing.add("LOCATION", location)
        bump(existing)
        _finish(calendar, path)
        return str(existing["UID"])
    event = icalendar.Event()
    uid = f"{uuid.uuid4()}@wilson"
    event.add("UID", uid)
    event.add("SUMMARY", title)
    event.add("SEQUENCE", 0)
    set_times(event, start, end, tz)
    if location:
        event.add("LOCATION", location)
    calendar.add_component(event)
    _finish(calendar, path)
    return uid


OWN_UID = "@own.wilson"  # the UID's end of an event Wilson wrote for an approved proposal (see is_own_write)


def own_uid(key: str) -> str:
    """The UID of the event an approved item creates: the same item always writes the same event."""
    return f"{key}{OWN_UID}"


def is_own_write(uid: str | None) -> bool:
    return bool(uid) and str(uid).endswith(OWN_UID)


def create_event(
    path,
    uid: str,
    title: str,
    start,
    end=None,
    *,
    location: str | None = None,
    notes: str | None = None,
    tz: ZoneInfo | None = None,
    stamp: datetime | None = None,
) -> bool:
    """Write one new event with this UID into the .ics file (created if missing); False when the file holds it
    already, so a write repeated after a crash adds nothing. Other events in the file are left as they are."""
    path = Path(path)
    title = " ".join(str(title).split())
    if not title:
        raise ValueError("an event needs a title")
    calendar = _read_calendar(path)
    if any(str(component.get("UID", "")) == uid for component in calendar.walk("VEVENT")):
        return False
    calendar.add_component(new_event(uid, title, start, end, location=location, notes=notes, tz=tz, stamp=stamp))
    _finish(calendar, path)
    return True


def new_event(
    uid: str,
    title: str,
    start,
    end=None,
    *,
    location: str | None = None,
    notes: str | None = None,
    tz: ZoneInfo | None = None,
    stamp: datetime | None = None,
) -> icalendar.Event:
    """One VEVENT as Wilson writes it, wherever it goes (a file, a CalDAV server)."""
    # lazy: icalendar (about 40 ms) only once a calendar is read or written
    import icalendar

    title = " ".join(str(title).split())
    if not title:
        raise ValueError("an event needs a title")
    event = icalendar.Event()
    event.add("UID", uid)
    event.add("SUMMARY", title)
    event.add("SEQUENCE", 0)
    if stamp is not None:
        event.add("DTSTAMP", stamp.replace(microsecond=0))
    set_times(event, start, end, tz)
    if location:
        event.add("LOCATION", location)
    if notes:
        event.add("DESCRIPTION", notes)
    return event


def titled(component, title: str) -> bool:
    """Whether a VEVENT is the one the user named: its title, spaces and case aside."""
    return " ".join(str(component.get("SUMMARY", "")).split()).casefold() == " ".join(title.split()).casefold()


def find_uid(path, title: str) -> str | None:
    """The UID of the (not cancelled) event with this title, None when the file has none."""
    path = Path(path)
    event = _find(_read_calendar(path), title) if path.exists() else None
    return str(event["UID"]) if event is not None else None


def cancelled_uid(path, title: str) -> str | None:
    """The UID of a cancelled event with this title (a cancel already done), None when there is none."""
    path = Path(path)
    if not path.exists():
        return None
    wanted = " ".join(title.split()).casefold()
    for component in _read_calendar(path).walk("VEVENT"):
        if (
            " ".join(str(component.get("SUMMARY", "")).split()).casefold() == wanted
            and str(component.get("STATUS", "")).upper() == CANCELLED
        ):
            return str(component["UID"])
    return None


def same_length(event, start, tz: ZoneInfo | None):
    """The end that keeps the event as long as it was, for a move that names only the new start."""
    if "DTSTART" not in event or "DTEND" not in event:
        return None
    old_start, old_end = event.decoded("DTSTART"), event.decoded("DTEND")
    new_start = as_moment(start, tz)
    if isinstance(new_start, datetime) != isinstance(old_start, datetime):
        return None  # a timed event moved to a day (or the other way): its length does not carry over
    if isinstance(new_start, datetime):
        return new_start + (old_end - old_start)
    return new_start + (old_end - old_start) - timedelta(days=1)  # the end day here is inclusive, DTEND is not


def move_event(
    path, title: str, start, end=None, tz: ZoneInfo | None = None, *, keep_length: bool = False
) -> str | None:
    """Give the event with this title a new time; returns its UID, None when there is none. With `keep_length`,
    a move without an end keeps the event as long as it was."""
    path = Path(path)
    calendar = _read_calendar(path)
    event = _find(calendar, title)
    if event is None:
        return None
    if keep_length and end in (None, ""):
        end = same_length(event, start, tz)
    set_times(event, start, end, tz)
    bump(event)
    _finish(calendar, path)
    return str(event["UID"])


def cancel_event(path, title: str) -> bool:
    """Mark the event with this title cancelled (it stays in the file, as calendar servers do)."""
    path = Path(path)
    if not path.exists():
        return False
    calendar = _read_calendar(path)
    event = _find(calendar, title)
    if event is None:
        return False
    if "STATUS" in event:
        del event["STATUS"]
    event.add("STATUS", CANCELLED)
    bump(event)
    _finish(calendar, path)
    return True
