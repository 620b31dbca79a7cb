"""The calendar channel: a buffered receptor for the user's calendars.

Calendars arrive as iCalendar data from a file, an .ics URL, a CalDAV server or
(on macOS) the Calendar app. Each sync fetches a source, expands its events
within the horizon, compares them with the snapshot stored in the source's
cursor and buffers one plain sentence per change (new, changed, cancelled). The
cortex never sees iCalendar: `describe` is the transduction.

Time semantics. Every `Event.start`/`Event.end` is an aware UTC datetime.
Floating times (no zone) are read in the user's timezone. An all-day event
(DATE values) has `all_day=True`; its start is local midnight of its first day
in the user's timezone and its end is local midnight after its last day
(exclusive, as in RFC 5545), both converted to UTC, so converting back to the
user's timezone gives the calendar dates again.

Snapshots. A cursor named ``calendar:<source-id>`` holds
``{"events": {key: entry}, "known_until": ISO, "fetch": {...}}`` where key is
``uid|recurrence-id`` and an entry keeps only what is worth telling the user
about: title, start, end, all-day, location, status, sequence.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone
from pathlib import Path
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

import icalendar
import recurring_ical_events
from loguru import logger

from actors import thalamus
from channels.base import Channel
from storage.db import database
from storage.models import Cursor
from wilson.messages import StimulusCommitted

UTC = timezone.utc
CANCELLED = "CANCELLED"
DESCRIPTION_CHARS = 200
MAX_ATTENDEES_SHOWN = 8
# A pathological rule (FREQ=MINUTELY for a year) must not stall a sync.
MAX_OCCURRENCES = 5000

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December")
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


class CalendarError(Exception):
    """A calendar that cannot be read; the message is one line naming the file and the problem."""


class SourceError(Exception):
    """A source that cannot be fetched (unreachable, refused, wrong platform)."""


def one_line(text: object, limit: int = 300) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# Events -------------------------------------------------------------------

@dataclass(frozen=True)
class Event:
    uid: str
    recurrence_id: str | None  # None unless the event is one occurrence of a recurring series
    sequence: int
    title: str
    start: datetime  # aware UTC
    end: datetime | None  # aware UTC, exclusive; None for an event that is a point in time
    all_day: bool
    location: str | None
    description: str | None
    attendees: tuple[str, ...]
    status: str | None
    doc: str = field(default="", compare=False)  # the document (file, CalDAV object) it came from

    @property
    def key(self) -> str:
        return event_key(self.uid, self.recurrence_id)


def event_key(uid: str, recurrence_id: str | None) -> str:
    return f"{uid}|{recurrence_id or ''}"


class _TolerantQuery(recurring_ical_events.CalendarQuery):
    # One broken series (no DTSTART, unreadable rule) is skipped; the rest of the calendar still counts.
    suppressed_errors = [*recurring_ical_events.CalendarQuery.suppressed_errors,
                         KeyError, ValueError, TypeError, AttributeError, OverflowError]


def _decode(data: bytes) -> str:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        # Older exporters (Outlook, Lotus) wrote Windows-1252 without saying so.
        return data.decode("cp1252", errors="replace")


def _calendars(text: str, name: str) -> list[icalendar.Calendar]:
    try:
        components = icalendar.Calendar.from_ical(text, multiple=True)
    except Exception as exc:  # icalendar raises ValueError, but fuzzed input finds others
        raise CalendarError(f"{name}: not a valid iCalendar file: {one_line(exc)}") from None
    calendars = [c for c in components if isinstance(c, icalendar.Calendar)]
    loose = [c for c in components if not isinstance(c, icalendar.Calendar)]
    if loose:
        # Some exporters write bare VEVENTs without the VCALENDAR wrapper.
        wrapper = icalendar.Calendar()
        for component in loose:
            wrapper.add_component(component)
        calendars.append(wrapper)
    if not calendars and text.strip():
        # A truncated download must not read as "every event was deleted".
        if re.search(r"^BEGIN:VCALENDAR", text, re.IGNORECASE | re.MULTILINE):
            raise CalendarError(f"{name}: incomplete calendar (BEGIN:VCALENDAR is never closed)")
        raise CalendarError(f"{name}: no calendar found in the data")
    return calendars


def _instant(value, tz: ZoneInfo) -> tuple[datetime, bool]:
    """(aware UTC, is-a-date) for a DTSTART/DTEND/RECURRENCE-ID value."""
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=tz)
        return value.astimezone(UTC), False
    if isinstance(value, date):
        return datetime.combine(value, time(0), tzinfo=tz).astimezone(UTC), True
    raise TypeError(f"not a date or date-time: {value!r}")


def _text(component, prop: str) -> str | None:
    value = component.get(prop)
    if value is None:
        return None
    if isinstance(value, list):
        value = value[0] if value else ""
    text = str(value).strip()
    return text or None


def _attendees(component) -> tuple[str, ...]:
    raw = component.get("ATTENDEE")
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raw = [raw]
    found = []
    for attendee in raw:
        params = getattr(attendee, "params", {}) or {}
        label = str(params.get("CN") or "").strip().strip('"')
        if not label:
            label = re.sub(r"^mailto:", "", str(attendee), flags=re.IGNORECASE).strip()
        if label and label not in found:
            found.append(label)
    return tuple(found)


def _sequence(component) -> int:
    try:
        return int(str(component.get("SEQUENCE", 0)).strip() or 0)
    except ValueError:
        return 0


def _recurring_uids(calendar) -> set[str]:
    uids = set()
    for component in calendar.walk("VEVENT"):
        if any(p in component for p in ("RRULE", "RDATE", "RECURRENCE-ID")):
            uids.add(str(component.get("UID", "")))
    return uids


def _synthetic_uid(component) -> str:
    seed = f"{component.get('SUMMARY', '')}|{component.get('DTSTART') and component['DTSTART'].to_ical()}"
    return "nouid-" + hashlib.sha1(seed.encode("utf-8", "replace")).hexdigest()[:12]


def _standardise_x_wr_timezone(calendar):
    # Google exports name the calendar's zone in X-WR-TIMEZONE; floating times there mean that zone.
    if "X-WR-TIMEZONE" not in calendar:
        return calendar
    try:
        import x_wr_timezone

        return x_wr_timezone.to_standard(calendar)
    except Exception:  # an unknown zone name: keep the calendar as written
        return calendar


def _event_from(component, *, recurring: set[str], cancelled_by_method: bool, tz: ZoneInfo, doc: str) -> Event:
    start, all_day = _instant(component["DTSTART"].dt, tz)
    end = None
    if component.get("DTEND") is not None:
        end, _ = _instant(component["DTEND"].dt, tz)
    if end is not None and end <= start:
        end = None
    uid = str(component.get("UID") or "").strip() or _synthetic_uid(component)
    recurrence_id = None
    if uid in recurring:
        # Occurrences of a series are told apart by their original start (RECURRENCE-ID).
        rid = component.get("RECURRENCE-ID")
        rid_value = rid.dt if rid is not None else component["DTSTART"].dt
        if isinstance(rid_value, datetime):
            recurrence_id = _instant(rid_value, tz)[0].isoformat()
        else:
            recurrence_id = rid_value.isoformat()
    status = _text(component, "STATUS")
    status = status.upper() if status else None
    if cancelled_by_method:
        status = CANCELLED
    title = " ".join((_text(component, "SUMMARY") or "(untitled)").split())
    return Event(uid=uid, recurrence_id=recurrence_id, sequence=_sequence(component), title=title,
                 start=start, end=end, all_day=all_day, location=_text(component, "LOCATION"),
                 description=_text(component, "DESCRIPTION"), attendees=_attendees(component),
                 status=status, doc=doc)


def parse_calendar(data: bytes, *, name: str, window_start: datetime, window_end: datetime,
                   tz: ZoneInfo | None = None) -> list[Event]:
    """Events (occurrences of recurring ones expanded) overlapping [window_start, window_end).

    `tz` is the user's timezone, used for floating times and all-day dates (UTC when not given).
    Raises CalendarError (one line, naming `name`) when the data is not a calendar.
    """
    tz = tz or ZoneInfo("UTC")
    window_start, window_end = window_start.astimezone(UTC), window_end.astimezone(UTC)
    text = _decode(data) if isinstance(data, bytes) else str(data)
    # Widen the query by a day: floating and all-day times are compared in an unknown zone; filter exactly below.
    query_start, query_end = window_start - timedelta(days=1), window_end + timedelta(days=1)
    found: dict[str, Event] = {}
    for calendar in _calendars(text, name):
        cancelled_by_method = str(calendar.get("METHOD", "")).strip().upper() == "CANCEL"
        calendar = _standardise_x_wr_timezone(calendar)
        recurring = _recurring_uids(calendar)
        try:
            query = recurring_ical_events.of(calendar, skip_bad_series=True, calendar_query=_TolerantQuery)
            occurrences = query.between(query_start, query_end)
        except Exception as exc:
            raise CalendarError(f"{name}: cannot expand events: {one_line(exc)}") from None
        for component in occurrences:
            try:
                event = _event_from(component, recurring=recurring, cancelled_by_method=cancelled_by_method,
                                    tz=tz, doc=name)
            except (KeyError, TypeError, ValueError, OverflowError, AttributeError) as exc:
                logger.debug("{}: skipped an unreadable event: {}", name, one_line(exc))
                continue
            if event.start >= window_end or (event.end or event.start + timedelta(seconds=1)) <= window_start:
                continue
            known = found.get(event.key)
            if known is None or event.sequence >= known.sequence:
                found[event.key] = event
    events = sorted(found.values(), key=lambda e: (e.start, e.uid, e.recurrence_id or ""))
    if len(events) > MAX_OCCURRENCES:
        logger.warning("{}: {} occurrences in the horizon; keeping the first {}", name, len(events), MAX_OCCURRENCES)
        events = events[:MAX_OCCURRENCES]
    return events


# Change detection ---------------------------------------------------------

@dataclass(frozen=True)
class Change:
    kind: str  # new, changed, cancelled
    event: Event
    previous: dict | None = field(default=None, compare=False)  # the snapshot entry before
    what: tuple[str, ...] = ()  # for "changed": some of time, place, title
    occurrences: int = 1  # >1 when one change stands for many occurrences of a series


def snapshot_entry(event: Event) -> dict:
    return {
        "uid": event.uid, "recurrence_id": event.recurrence_id, "sequence": event.sequence, "title": event.title,
        "start": event.start.isoformat(), "end": event.end.isoformat() if event.end else None,
        "all_day": event.all_day, "location": event.location, "status": event.status, "doc": event.doc,
    }


def snapshot(events: list[Event]) -> dict:
    return {e.key: snapshot_entry(e) for e in events}


def _parse_iso(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text).astimezone(UTC) if text else None


def event_from_entry(entry: dict) -> Event:
    return Event(uid=entry["uid"], recurrence_id=entry.get("recurrence_id"), sequence=entry.get("sequence", 0),
                 title=entry.get("title") or "(untitled)", start=_parse_iso(entry["start"]),
                 end=_parse_iso(entry.get("end")), all_day=bool(entry.get("all_day")),
                 location=entry.get("location"), description=None, attendees=(), status=entry.get("status"),
                 doc=entry.get("doc", ""))


def _what_changed(old: dict, event: Event) -> tuple[str, ...]:
    what = []
    if (_parse_iso(old.get("start")) != event.start or _parse_iso(old.get("end")) != event.end
            or bool(old.get("all_day")) != event.all_day):
        what.append("time")
    if (old.get("location") or None) != event.location:
        what.append("place")
    if (old.get("title") or "") != event.title:
        what.append("title")
    return tuple(what)


def _over(event: Event, now: datetime) -> bool:
    return (event.end or event.start + timedelta(seconds=1)) <= now


def diff(previous: dict, events: list[Event], *, now: datetime | None = None,
         known_until: datetime | None = None, horizon_end: datetime | None = None) -> list[Change]:
    """What changed between a stored snapshot and the calendar as it is now.

    `now`: events already over are neither new nor cancelled (they simply passed).
    `known_until`: the end of the window the snapshot was taken over; an occurrence of a
    known series starting after it has only come into the horizon and is not news.
    `horizon_end`: the end of the window `events` cover; what starts after it was not
    looked at, so its absence means nothing.
    Many changes of the same kind to one recurring series become one Change.
    """
    previous = previous or {}
    current = {e.key: e for e in events}
    known_series = {entry.get("uid") for entry in previous.values()}
    appeared: list[Event] = []
    changes: list[Change] = []
    for key, event in current.items():
        old = previous.get(key)
        if old is None:
            if event.status == CANCELLED or (now is not None and _over(event, now)):
                continue
            if (known_until is not None and event.recurrence_id is not None and event.uid in known_series
                    and event.start >= known_until):
                continue
            appeared.append(event)
        elif event.status == CANCELLED:
            if old.get("status") != CANCELLED:
                changes.append(Change("cancelled", event, previous=old))
        elif old.get("status") == CANCELLED:
            changes.append(Change("new", event, previous=old))  # reinstated
        else:
            what = _what_changed(old, event)
            if what:
                changes.append(Change("changed", event, previous=old, what=what))
    vanished: list[dict] = []
    for key, old in previous.items():
        if key in current or old.get("status") == CANCELLED:
            continue
        gone = event_from_entry(old)
        if (now is not None and _over(gone, now)) or (horizon_end is not None and gone.start >= horizon_end):
            continue
        vanished.append(old)
    changes.extend(_pair_shifted_series(appeared, vanished))
    return _collapse_series(changes)


def _pair_shifted_series(appeared: list[Event], vanished: list[dict]) -> list[Change]:
    """A series whose start time moved changes every recurrence id: pair them back up as moves.

    Occurrences of one UID that vanished and appeared in the same sync are matched in time order.
    """
    changes = []
    by_uid_new: dict[str, list[Event]] = {}
    for event in appeared:
        by_uid_new.setdefault(event.uid, []).append(event)
    by_uid_old: dict[str, list[dict]] = {}
    for old in vanished:
        by_uid_old.setdefault(old["uid"], []).append(old)
    for uid, olds in by_uid_old.items():
        news = by_uid_new.pop(uid, [])
        olds.sort(key=lambda o: o["start"])
        news.sort(key=lambda e: e.start)
        paired = min(len(olds), len(news))  # one UID is one event (RFC 5545), whatever its recurrence ids
        for old, event in zip(olds[:paired], news[:paired]):
            what = _what_changed(old, event)
            if what:
                changes.append(Change("changed", event, previous=old, what=what))
        for old in olds[paired:]:
            changes.append(Change("cancelled", event_from_entry(old), previous=old))
        for event in news[paired:]:
            changes.append(Change("new", event))
    for events in by_uid_new.values():
        changes.extend(Change("new", event) for event in events)
    return changes


def _collapse_series(changes: list[Change]) -> list[Change]:
    groups: dict[tuple, list[Change]] = {}
    order: list[tuple] = []
    for change in changes:
        if change.event.recurrence_id is None:
            group = (change.event.key, change.kind, change.what)
        else:
            group = (change.event.uid, change.kind, change.what)
        if group not in groups:
            groups[group] = []
            order.append(group)
        groups[group].append(change)
    collapsed = []
    for group in order:
        members = sorted(groups[group], key=lambda c: c.event.start)
        first = members[0]
        if len(members) > 1:
            first = Change(first.kind, first.event, previous=first.previous, what=first.what,
                           occurrences=len(members))
        collapsed.append(first)
    collapsed.sort(key=lambda c: (c.event.start, c.event.uid))
    return collapsed


def fingerprint(change: Change) -> str:
    old = change.previous or {}
    state = [change.kind, change.what, change.occurrences, change.event.sequence, change.event.title,
             change.event.start.isoformat(), change.event.end.isoformat() if change.event.end else None,
             change.event.all_day, change.event.location, change.event.status,
             old.get("start"), old.get("end"), old.get("title"), old.get("location"), old.get("status")]
    return hashlib.sha1(json.dumps(state, default=str).encode()).hexdigest()[:12]


def dedup_key(change: Change) -> str:
    return f"calendar:{change.event.uid}:{change.event.recurrence_id}:{change.kind}:{fingerprint(change)}"


def payload(change: Change) -> dict:
    event, old = change.event, change.previous
    previous = None
    if old is not None and change.kind != "new":
        previous = {"start": old.get("start"), "end": old.get("end"), "title": old.get("title"),
                    "location": old.get("location")}
    return {
        "channel": "calendar", "change": change.kind, "uid": event.uid, "title": event.title,
        "start": event.start.isoformat(), "end": event.end.isoformat() if event.end else None,
        "all_day": event.all_day, "location": event.location, "previous": previous,
        "recurrence_id": event.recurrence_id, "occurrences": change.occurrences,
    }


# Transduction -------------------------------------------------------------

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
    if event.start <= now and not _over(event, now):
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
        more = len(event.attendees) - len(shown)
        text += " With " + ", ".join(shown) + (f" and {more} more" if more > 0 else "") + "."
    if event.description and change.kind != "cancelled":
        text += f" Notes: {_trimmed(event.description)}"
    return text


# Sources ------------------------------------------------------------------

def _short_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()[:10]


def _digest(documents: list[tuple[str, bytes]]) -> str:
    h = hashlib.sha256()
    for name, data in documents:
        h.update(name.encode("utf-8", "replace") + b"\0" + data + b"\0")
    return h.hexdigest()


def _public_url(url: str) -> str:
    """A URL fit for logs: private .ics links carry their secret in the path or query."""
    parts = urlsplit(url)
    host = parts.hostname or "?"
    if parts.port:
        host += f":{parts.port}"
    return f"{parts.scheme}://{host}/…({_short_hash(url)})"


class CalendarSource:
    """Where calendar data comes from. `fetch(state)` -> (documents or None when unchanged, new state).

    A document is (name, iCalendar bytes); the name appears in error messages.
    """

    id = "source"
    label = "source"

    def fetch(self, state: dict) -> tuple[list[tuple[str, bytes]] | None, dict]:
        raise NotImplementedError


class IcsFileSource(CalendarSource):
    def __init__(self, path: str | Path):
        self.path = Path(path).expanduser()
        absolute = str(self.path.resolve())
        self.id = f"file:{absolute}" if len(absolute) < 200 else f"file:{self.path.name}:{_short_hash(absolute)}"
        self.label = str(self.path)

    def fetch(self, state):
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            raise SourceError(f"{self.path}: no such file") from None
        except OSError as exc:
            raise SourceError(f"{self.path}: cannot read: {exc.strerror or exc}") from None
        documents = [(str(self.path), data)]
        digest = _digest(documents)
        if digest == state.get("sha256"):
            return None, state
        return documents, {"sha256": digest}


class IcsUrlSource(CalendarSource):
    """An .ics URL polled with a conditional GET (ETag / Last-Modified)."""

    def __init__(self, url: str, *, timeout: float = 30.0):
        if url.startswith("webcal://"):
            url = "https://" + url[len("webcal://"):]
        self.url = url
        self.timeout = timeout
        self.id = f"url:{urlsplit(url).hostname or '?'}:{_short_hash(url)}"
        self.label = _public_url(url)

    def fetch(self, state):
        import httpx

        headers = {"Accept": "text/calendar, */*;q=0.5"}
        if state.get("etag"):
            headers["If-None-Match"] = state["etag"]
        if state.get("last_modified"):
            headers["If-Modified-Since"] = state["last_modified"]
        try:
            with httpx.Client(timeout=self.timeout, follow_redirects=True) as client:
                response = client.get(self.url, headers=headers)
        except httpx.HTTPError as exc:
            raise SourceError(f"{self.label}: {type(exc).__name__}: {one_line(exc, 160)}") from None
        if response.status_code == 304:
            return None, state
        if response.status_code != 200:
            raise SourceError(f"{self.label}: HTTP {response.status_code}")
        documents = [(self.label, response.content)]
        digest = _digest(documents)
        new_state = {"sha256": digest}
        if response.headers.get("ETag"):
            new_state["etag"] = response.headers["ETag"]
        if response.headers.get("Last-Modified"):
            new_state["last_modified"] = response.headers["Last-Modified"]
        if digest == state.get("sha256"):
            return None, new_state  # a server without validators sent the same calendar again
        return documents, new_state


class CalDavSource(CalendarSource):
    """Every event of every calendar the account can see, one document per CalDAV object."""

    def __init__(self, url: str, username: str | None = None, password: str | None = None, *,
                 timeout: int = 30):
        self.url = url
        self.username = username or None
        self.password = password or None
        self.timeout = timeout
        self.id = f"caldav:{urlsplit(url).hostname or '?'}:{_short_hash(url + '|' + (username or ''))}"
        self.label = f"CalDAV {_public_url(url)}"

    def _calendars(self, client):
        try:
            principal = client.principal()
            calendars = (principal.get_calendars() if hasattr(principal, "get_calendars")
                         else principal.calendars())
            if calendars:
                return calendars
        except Exception as exc:  # a server without principal discovery: the URL may be one calendar
            logger.debug("{}: no principal ({}); reading the URL as one calendar", self.label, one_line(exc))
        return [client.calendar(url=self.url)]

    @staticmethod
    def _calendar_name(calendar) -> str:
        try:
            name = calendar.get_display_name()
        except Exception:  # the display name only labels error messages; the URL does as well
            name = None
        return str(name or str(calendar.url).rstrip("/").rsplit("/", 1)[-1])

    def fetch(self, state):
        import caldav

        documents = []
        try:
            with caldav.DAVClient(url=self.url, username=self.username, password=self.password,
                                  timeout=self.timeout) as client:
                for calendar in self._calendars(client):
                    calendar_name = self._calendar_name(calendar)
                    objects = calendar.get_events() if hasattr(calendar, "get_events") else calendar.events()
                    for obj in objects:
                        data = obj.data
                        if isinstance(data, str):
                            data = data.encode("utf-8")
                        href = str(obj.url).rstrip("/").rsplit("/", 1)[-1]
                        documents.append((f"{calendar_name}/{href}", data))
        except Exception as exc:
            message = one_line(exc, 200)
            if self.password:
                message = message.replace(self.password, "***")
            raise SourceError(f"{self.label}: {type(exc).__name__}: {message}") from None
        documents.sort()
        digest = _digest(documents)
        if digest == state.get("sha256"):
            return None, state
        return documents, {"sha256": digest}


APPLE_SCRIPT = r'''
on pad(n)
    return text -2 thru -1 of ("0" & (n as integer))
end pad
on stamp(d)
    return ((year of d) as string) & "-" & my pad(month of d as integer) & "-" & my pad(day of d) ¬
        & "T" & my pad(hours of d) & ":" & my pad(minutes of d) & ":" & my pad(seconds of d)
end stamp
on clean(t)
    if t is missing value then return ""
    set AppleScript's text item delimiters to {tab, return, linefeed}
    set parts to text items of (t as string)
    set AppleScript's text item delimiters to " "
    set t to parts as string
    set AppleScript's text item delimiters to ""
    return t
end clean
on row(e)
    return my clean(uid of e) & tab & my clean(summary of e) & tab & my stamp(start date of e) & tab ¬
        & my stamp(end date of e) & tab & (allday event of e as string) & tab & my clean(location of e) ¬
        & tab & (status of e as string) & tab & my clean(recurrence of e) & linefeed
end row
set windowStart to (current date) - (1 * days)
set windowEnd to (current date) + (DAYS * days)
set output to ""
tell application "Calendar"
    repeat with c in calendars
        repeat with e in (every event of c whose start date is less than windowEnd ¬
            and end date is greater than windowStart)
            set output to output & my row(e)
        end repeat
        try
            repeat with e in (every event of c whose start date is less than windowStart ¬
                and recurrence is not missing value and recurrence is not "")
                set output to output & my row(e)
            end repeat
        end try
    end repeat
end tell
return output
'''


class AppleCalendarSource(CalendarSource):
    """The macOS Calendar app, read through osascript (local times, floating).

    Calendar's scripting interface does not expand recurring events; each series comes
    with its rule and is expanded like any other calendar.
    """

    id = "apple"
    label = "Apple Calendar"

    def __init__(self, horizon_days: int = 365, *, timeout: float = 120.0):
        self.horizon_days = int(horizon_days)
        self.timeout = timeout

    def fetch(self, state):
        if sys.platform != "darwin":
            raise SourceError("Apple Calendar is only available on macOS")
        script = APPLE_SCRIPT.replace("DAYS", str(self.horizon_days))
        try:
            done = subprocess.run(["osascript", "-e", script], capture_output=True, text=True,
                                  timeout=self.timeout, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SourceError(f"{self.label}: osascript failed: {one_line(exc, 160)}") from None
        if done.returncode != 0:
            raise SourceError(f"{self.label}: osascript: {one_line(done.stderr, 160)}")
        documents = [(self.label, apple_rows_to_ics(done.stdout))]
        digest = _digest(documents)
        if digest == state.get("sha256"):
            return None, state
        return documents, {"sha256": digest}


def apple_rows_to_ics(text: str) -> bytes:
    """Tab-separated rows from the Calendar script -> iCalendar with floating local times."""
    calendar = _new_calendar()
    seen = set()
    for line in text.splitlines():
        fields = line.split("\t")
        if len(fields) < 7 or not fields[0] or fields[0] in seen:
            continue
        uid, title, start, end, all_day, location, status = fields[:7]
        rule = fields[7].strip() if len(fields) > 7 else ""
        try:
            begin, finish = datetime.fromisoformat(start), datetime.fromisoformat(end)
        except ValueError:
            continue
        seen.add(uid)
        event = icalendar.Event()
        event.add("UID", uid)
        event.add("SUMMARY", title or "(untitled)")
        if all_day.strip().lower() == "true":
            event.add("DTSTART", begin.date())
            event.add("DTEND", max(finish.date(), begin.date() + timedelta(days=1)))
        else:
            event.add("DTSTART", begin)
            event.add("DTEND", finish)
        if location:
            event.add("LOCATION", location)
        if status.strip().lower() == "cancelled":
            event.add("STATUS", CANCELLED)
        if rule:
            try:
                event.add("RRULE", icalendar.vRecur.from_ical(rule.removeprefix("RRULE:")))
            except ValueError:
                logger.debug("Apple Calendar: unreadable rule {!r} for {}", rule, title)
        calendar.add_component(event)
    return calendar.to_ical()


def sources_from_config(config) -> list[CalendarSource]:
    sources: list[CalendarSource] = []
    path = str(config.get("calendar", "path") or "").strip()
    if path:
        p = Path(path).expanduser()
        sources.append(IcsFileSource(p if p.is_absolute() else Path(config.home) / p))
    url = str(config.get("calendar", "url") or "").strip()
    if url:
        sources.append(IcsUrlSource(url))
    caldav_url = str(config.get("calendar", "caldav_url") or "").strip()
    if caldav_url:
        sources.append(CalDavSource(caldav_url, config.get("calendar", "caldav_username") or None,
                                    config.get("calendar", "caldav_password") or None))
    apple = config.get("calendar", "apple", False)
    if isinstance(apple, str):
        apple = apple.strip().lower() in ("1", "true", "yes", "on")
    if apple:
        sources.append(AppleCalendarSource(int(config.get("calendar", "horizon_days") or 365)))
    return sources


# The actor ----------------------------------------------------------------

class CalendarChannel(Channel):
    """Buffered and receive-only: each sync buffers one sentence per calendar change."""

    name = "calendar"
    realtime = False
    can_deliver = False

    def __init__(self, ctx, name: str = "calendar", sources: list[CalendarSource] | None = None):
        super().__init__(ctx, name)
        self.sources = list(sources) if sources is not None else sources_from_config(ctx.config)

    def horizon(self) -> timedelta:
        try:
            days = int(self.config.get("calendar", "horizon_days") or 365)
        except (TypeError, ValueError):
            days = 365
        return timedelta(days=max(days, 1))

    def sync(self, reason: str) -> int:
        buffered = 0
        for source in self.sources:
            try:
                buffered += self.sync_source(source)
            except (SourceError, CalendarError) as exc:
                logger.warning("calendar source {} skipped: {}", source.label, one_line(exc))
            except Exception as exc:  # one bad source must not stop the others, nor the actor
                logger.error("calendar source {} failed: {}: {}", source.label, type(exc).__name__, one_line(exc))
        if buffered:
            logger.info("calendar sync ({}): {} change(s) buffered", reason, buffered)
        return buffered

    def sync_source(self, source: CalendarSource) -> int:
        cursor_name = f"calendar:{source.id}"
        cursor = Cursor.get_or_none(Cursor.name == cursor_name)
        state = dict(cursor.value or {}) if cursor is not None else {}
        documents, fetch_state = source.fetch(dict(state.get("fetch") or {}))
        if documents is None:
            return 0
        now = self.now()
        tz = self.config.timezone
        window_end = now + self.horizon()
        previous = dict(state.get("events") or {})
        events: list[Event] = []
        failed: set[str] = set()
        horizon_end = window_end
        for name, data in documents:
            try:
                found = parse_calendar(data, name=name, window_start=now, window_end=window_end, tz=tz)
            except CalendarError as exc:
                logger.warning("calendar source {}: {}", source.label, one_line(exc))
                failed.add(name)
                continue
            if len(found) >= MAX_OCCURRENCES:
                # Cut short: nothing after its last occurrence was looked at.
                horizon_end = min(horizon_end, found[-1].start)
            events.extend(found)
        # What a broken document held is kept as it was: unreadable is not the same as deleted.
        carried = {k: v for k, v in previous.items() if v.get("doc") in failed}
        comparable = {k: v for k, v in previous.items() if k not in carried}
        known_until = _parse_iso(state.get("known_until"))
        changes = diff(comparable, events, now=now, known_until=known_until, horizon_end=horizon_end)
        current = {k: v for k, v in snapshot(events).items() if k not in carried}
        # Entries beyond a cut-short horizon stay as they were, like those of broken documents.
        current.update({k: v for k, v in comparable.items()
                        if k not in current and _parse_iso(v.get("start")) >= horizon_end})
        current.update(carried)
        new_state = {
            "events": current,
            "known_until": horizon_end.isoformat(),
            # Keep the old validators while a document is broken, so the next sync reads it again.
            "fetch": fetch_state if not failed else dict(state.get("fetch") or {}),
        }
        rows = []
        with database.atomic():
            for change in changes:
                row = thalamus.commit_buffered(channel=self.name, text=describe(change, tz, now),
                                               dedup_key=dedup_key(change), payload=payload(change), at=now)
                if row is not None:
                    rows.append(row)
            if cursor is None:
                Cursor.create(name=cursor_name, value=new_state, updated_at=now)
            else:
                Cursor.update(value=new_state, updated_at=now).where(Cursor.name == cursor_name).execute()
        # Told only after the commit, so the thalamus never looks for a row that is not there yet.
        for row in rows:
            self.tell("thalamus", StimulusCommitted("buffer", row.id, row.trace_id))
        return len(rows)


# REPL helpers for the synthetic calendar file -----------------------------

def _new_calendar() -> icalendar.Calendar:
    calendar = icalendar.Calendar()
    calendar.add("PRODID", "-//Wilson//calendar//EN")
    calendar.add("VERSION", "2.0")
    return calendar


def _read_calendar(path: Path) -> icalendar.Calendar:
    if not path.exists():
        return _new_calendar()
    try:
        return icalendar.Calendar.from_ical(_decode(path.read_bytes()))
    except Exception as exc:
        raise CalendarError(f"{path}: not a valid iCalendar file: {one_line(exc)}") from None


def _write_calendar(path: Path, calendar: icalendar.Calendar) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(calendar.to_ical())
    os.replace(tmp, path)  # a sync reading the file sees the old or the new calendar, never half of one


def _as_moment(value, tz: ZoneInfo | None):
    """date for all-day, datetime (aware if tz given or stated, else floating) for timed."""
    if isinstance(value, str):
        value = value.strip()
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            return date.fromisoformat(value)
        value = datetime.fromisoformat(value)
    if isinstance(value, datetime):
        if value.tzinfo is None and tz is not None:
            value = value.replace(tzinfo=tz)
        return value
    if isinstance(value, date):
        return value
    raise ValueError(f"not a date or time: {value!r}")


def _set_times(event, start, end, tz: ZoneInfo | None) -> None:
    start = _as_moment(start, tz)
    end = _as_moment(end, tz) if end not in (None, "") else None
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
        if (" ".join(str(component.get("SUMMARY", "")).split()).casefold() == wanted
                and str(component.get("STATUS", "")).upper() != CANCELLED
                and "RECURRENCE-ID" not in component):
            return component
    return None


def _bump(event) -> None:
    sequence = _sequence(event) + 1
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
    path = Path(path)
    title = " ".join(title.split())
    if not title:
        raise ValueError("an event needs a title")
    calendar = _read_calendar(path)
    existing = _find(calendar, title)
    if existing is not None:
        _set_times(existing, start, end, tz)
        if location:
            if "LOCATION" in existing:
                del existing["LOCATION"]
            existing.add("LOCATION", location)
        _bump(existing)
        _finish(calendar, path)
        return str(existing["UID"])
    event = icalendar.Event()
    uid = f"{uuid.uuid4()}@wilson"
    event.add("UID", uid)
    event.add("SUMMARY", title)
    event.add("SEQUENCE", 0)
    _set_times(event, start, end, tz)
    if location:
        event.add("LOCATION", location)
    calendar.add_component(event)
    _finish(calendar, path)
    return uid


def move_event(path, title: str, start, end=None, tz: ZoneInfo | None = None) -> str | None:
    """Give the event with this title a new time; returns its UID, None when there is none."""
    path = Path(path)
    calendar = _read_calendar(path)
    event = _find(calendar, title)
    if event is None:
        return None
    _set_times(event, start, end, tz)
    _bump(event)
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
    _bump(event)
    _finish(calendar, path)
    return True


def parse_add_command(text: str) -> dict:
    """'TITLE @ START [-> END] [; LOCATION]' -> add_event keyword arguments."""
    head, _, location = text.partition(";")
    title, sep, times = head.partition("@")
    if not sep or not title.strip() or not times.strip():
        raise ValueError("usage: calendar add TITLE @ START [-> END] [; LOCATION]")
    start, _, end = times.partition("->")
    return {"title": title.strip(), "start": start.strip(), "end": end.strip() or None,
            "location": location.strip() or None}
