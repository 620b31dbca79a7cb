"""Transduction: one plain sentence per calendar change, in the user's timezone.

The cortex never sees iCalendar; what it reads about a calendar is written here.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from channels.calendar.diff import Change
from channels.calendar.event import Event, event_from_entry, is_over

DESCRIPTION_CHARS = 200  # notes shown in a sentence
MAX_ATTENDEES_SHOWN = 8
MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def _day(d: date, weekday: bool = False) -> str:
    text = f"{d.day} {MONTHS[d.month - 1]} {d.year}"
    return f"{WEEKDAYS[d.weekday()]} {text}" if weekday else text


def _date_range(first: date, last: date) -> str:
    if first == last:
        return _day(first, weekday=True)
    if (first.year, first.month) == (last.year, last.month):
        return f"{first.day}–{last.day} {MONTHS[first.month - 1]} {first.year}"
    if first.year == last.year:
        return f"{first.day} {MONTHS[first.month - 1]} – {last.day} {MONTHS[last.month - 1]} {last.year}"
    return f"{_day(first)} – {_day(last)}"


def when(event: Event, tz: ZoneInfo, *, with_end: bool = True) -> str:
    """The event's time as a person would say it, in the user's timezone."""
    start = event.start.astimezone(tz)
    if event.all_day:
        last = start.date()
        if with_end and event.end is not None:
            last = max(start.date(), (event.end.astimezone(tz) - timedelta(days=1)).date())
        return _date_range(start.date(), last)
    text = f"{_day(start.date(), weekday=True)} {start:%H:%M}"
    if with_end and event.end is not None:
        end = event.end.astimezone(tz)
        if end.date() == start.date():
            text += f"–{end:%H:%M}"
        else:
            text += f" – {_day(end.date(), weekday=True)} {end:%H:%M}"
    return text


def relative(event: Event, tz: ZoneInfo, now: datetime) -> str:
    if event.start <= now and not is_over(event, now):
        return "ongoing"
    days = (event.start.astimezone(tz).date() - now.astimezone(tz).date()).days
    if days == 0:
        return "today"
    if days == 1:
        return "tomorrow"
    if days > 1:
        return f"in {days} days"
    return "yesterday" if days == -1 else f"{-days} days ago"


def _trimmed(text: str, limit: int = DESCRIPTION_CHARS) -> str:
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit].rsplit(" ", 1)[0] or flat[:limit]
    return cut.rstrip(",;:.") + "…"


def describe(change: Change, tz: ZoneInfo, now: datetime) -> str:
    """One plain sentence (or a few) saying what changed in the user's calendar."""
    event, old = change.event, change.previous or {}
    place = f", {event.location}" if event.location else ""
    if change.kind == "new":
        text = f"New event: {event.title}, {when(event, tz)} ({relative(event, tz, now)}){place}."
    elif change.kind == "cancelled":
        text = f"Cancelled: {event.title}, {when(event, tz, with_end=event.all_day)}{place}."
    else:
        before = event_from_entry({**old, "uid": event.uid}) if old else event
        if change.what == ("time",):
            text = f"Moved: {event.title} now {when(event, tz)} (was {when(before, tz)}){place}."
        elif change.what == ("place",):
            was = f" (was {before.location})" if before.location else ""
            where = f"now at {event.location}" if event.location else "no longer has a place"
            text = f"New place: {event.title}, {when(event, tz)}, {where}{was}."
        elif change.what == ("title",):
            text = f"Renamed: {before.title} is now {event.title}, {when(event, tz)}{place}."
        else:
            text = f"Changed: {event.title}"
            if "title" in change.what:
                text += f" (was {before.title})"
            text += f", {when(event, tz)}"
            if "time" in change.what:
                text += f" (was {when(before, tz)})"
            if "place" in change.what:
                text += f", at {event.location}" if event.location else ", no longer has a place"
                if before.location:
                    text += f" (was {before.location})"
            else:
                text += place
            text += "."
    if change.occurrences > 1:
        text += f" This applies to {change.occurrences} occurrences of a recurring event."
    if event.attendees:
        shown = list(event.attendees[:MAX_ATTENDEES_SHOWN])
        more = len(event.attendees) - len(shown) + event.more_attendees
        text += " With " + ", ".join(shown) + (f" and {more} more" if more > 0 else "") + "."
    if event.description and change.kind != "cancelled":
        text += f" Notes: {_trimmed(event.description)}"
    return text
