"""Calendar events on a day, read from the snapshots the calendar channel keeps.

The calendar channel stores what it last read as Cursor rows named "calendar:<source>", one entry
per event (channels/calendar/diff.py `snapshot_entry`: ISO start and end in UTC, all_day, title,
location, status). The morning briefing, the dashboard and `calendar_lookup` read events from here: no
fetch, no model, and none needs the calendar channel's code to read its rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta

from storage.models import Cursor
from storage.prepared import prepared
from wilson.kernel.timeparse import last_day, utc_or_none

CANCELLED = "CANCELLED"  # as channels/calendar/event.py writes a tombstone's status


@dataclass(frozen=True)
class DayEvent:
    key: str  # the snapshot's key: one per event or occurrence
    title: str
    start: datetime  # aware UTC
    end: datetime | None  # aware UTC, exclusive
    all_day: bool
    location: str

    def first_day(self, tz) -> date:
        return self.start.astimezone(tz).date()

    def last_day(self, tz) -> date:
        """The last local day the event covers (an end at midnight belongs to the day before)."""
        if self.end is None or self.end <= self.start:
            return self.first_day(tz)
        return last_day(self.end, tz)


def _entry_event(key: str, entry) -> DayEvent | None:
    """A snapshot entry as a DayEvent; None for a tombstone or an entry this version cannot read."""
    if not isinstance(entry, dict) or str(entry.get("status") or "").upper() == CANCELLED:
        return None
    try:
        start, end = utc_or_none(entry.get("start")), utc_or_none(entry.get("end"))
    except ValueError:
        return None
    if start is None:
        return None
    return DayEvent(
        key=key,
        title=str(entry.get("title") or "(untitled)"),
        start=start,
        end=end,
        all_day=bool(entry.get("all_day")),
        location=str(entry.get("location") or ""),
    )


# every briefing, firing and look at a topic's event reads the snapshots: the statement's text is built once
SNAPSHOTS = prepared(lambda s: Cursor.select().where(Cursor.name.startswith("calendar:")).order_by(Cursor.name))


def _entries():
    """(key, entry) of every snapshot the calendar channel keeps, source by source."""
    for cursor in SNAPSHOTS.models():
        value = cursor.value if isinstance(cursor.value, dict) else {}
        events = value.get("events") if isinstance(value.get("events"), dict) else {}
        for key, entry in events.items():
            if isinstance(entry, dict):
                yield key, entry


def _all_events():
    """Every event and occurrence the snapshots hold, tombstones left out; one per key across sources."""
    seen: set[str] = set()
    for key, entry in _entries():
        event = _entry_event(key, entry)
        if event is not None and key not in seen:
            seen.add(key)
            yield event


def titled(title: str, near: datetime, tz) -> DayEvent | str | None:
    """What the calendar says now of the event a topic was planned from (the topic carries its title and began on its
    day, `near`): the event on that day, as it stands; the event moved to another day, when it is the calendar's one
    event of that title and no series; CANCELLED when the calendar holds it only as cancelled, on that day; None when
    the calendar says nothing of it (a topic told in words, an event already over, a series, whose next occurrence is
    no move)."""
    wanted, day = title.strip().casefold(), near.astimezone(tz).date()
    live: dict[str, tuple[DayEvent, bool]] = {}  # by key: an event two sources hold is one
    cancelled = False
    for key, entry in _entries():
        if str(entry.get("title") or "").strip().casefold() != wanted:
            continue
        event = _entry_event(key, entry)
        if event is not None:
            live.setdefault(key, (event, bool(entry.get("recurrence_id"))))
            continue
        try:
            start = utc_or_none(entry.get("start"))
        except ValueError:
            start = None
        if str(entry.get("status") or "").upper() == CANCELLED and start is not None:
            cancelled = cancelled or (start.astimezone(tz).date() == day and not entry.get("recurrence_id"))
    same_day = [event for event, _ in live.values() if event.first_day(tz) == day]
    if same_day:
        return min(same_day, key=lambda event: abs(event.start - near))
    if len(live) == 1 and not (only := next(iter(live.values())))[1]:
        return only[0]
    return CANCELLED if cancelled and not live else None


def events_on(day: date, tz) -> list[DayEvent]:
    """Every event of every calendar whose span touches the local `day`, by start (an event that two
    sources both hold is listed once)."""
    found = [event for event in _all_events() if event.first_day(tz) <= day <= event.last_day(tz)]
    return sorted(found, key=lambda e: (e.start, e.title))


def overlaps(begins: datetime, ends: datetime | None, start: datetime | None, end: datetime | None) -> bool:
    """Whether an event [begins, ends) is in the span [start, end] (either open): one that began earlier and
    is still going on is; its end is exclusive (an all-day event ends at midnight)."""
    return (end is None or begins <= end) and (start is None or begins >= start or (ends is not None and ends > start))


def events_between(start: datetime | None, end: datetime | None) -> list[DayEvent]:
    """Every event and occurrence that overlaps [start, end], by start; an all-day one without an end lasts
    its day."""
    found = [
        event
        for event in _all_events()
        if overlaps(event.start, event.end or (event.start + timedelta(days=1) if event.all_day else None), start, end)
    ]
    return sorted(found, key=lambda e: (e.start, e.title))
