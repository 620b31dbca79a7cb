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
about: title, start, end, all-day, location, status, sequence, and a version
that counts its changes (it is part of each change's dedup key, so an event
cancelled and restored is told again). A cancelled event stays as a tombstone
until it is over. Optional keys: ``suspect`` (an empty read waiting for a second
read before anything is cancelled) and ``slow`` (digests of documents that ran
out of time, not parsed again until they change).

Freshness. Each source is polled every ``[calendar] poll`` (default 5m, env
WILSON_CALENDAR_POLL, "off" to stop) as cheaply as it allows: a file by its stat
(inode, size, mtime, ctime; not even read when they match), a URL by a conditional
GET (ETag / Last-Modified, so an unchanged calendar is one 304), CalDAV by each
calendar's ctag / sync-token (one PROPFIND per calendar; events are listed only
when one changed). A poll buffers what changed at once, through the same diff and
dedup keys as a sync, and tells nobody but the database: the RAS finds unscanned
rows at its next interval (the tick fires the RAS schedule only when there are
some) and the thalamus triages them at its next sync. No model is called for an
unchanged calendar. `sync()` keeps its meaning: the thalamus' pull (CalDAV read in
full), reported to the triage.

Time. There is no timer here: the tick forwards each TickNow to the buffered
channels, which poll when ``poll`` has passed since their last poll or sync
(channels/base.py). With the real clock the tick beats every second, so the
cadence holds to a second. With the simulated clock `Wilson.advance` jumps from
one due moment to the next and the polls ride on those steps, adding none of
their own: `advance 60d` does not crawl through 17 280 polls, and a change made
in simulated time is seen at the first step at least ``poll`` after the last poll
(advance in poll-sized steps to watch a day tick by).

Hostile input. Reading is bounded before it runs: absurd rules are left out
(and named in a trace line), each series and each document give a bounded
number of occurrences, every text field is capped with the cut marked, and
each document has a time budget checked between small steps. What could not
be read is kept as it was: unreadable is not the same as deleted.
"""

from __future__ import annotations

import contextlib
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
from dateutil import rrule as dateutil_rrule
from icalendar.parser.content_line import Contentline
from icalendar.parser.ical.calendar import CalendarIcalParser
from loguru import logger

from actors import thalamus
from channels.base import Channel
from storage import trace
from storage.db import database
from storage.models import Cursor
from wilson import clock as clockmod
from wilson import faults, liveness
from wilson.messages import StimulusCommitted

UTC = timezone.utc
CANCELLED = "CANCELLED"
DESCRIPTION_CHARS = 200  # notes shown in a sentence
MAX_ATTENDEES_SHOWN = 8
CUT = "…[cut]"  # marks every field that was cut short
# Hostile or broken calendars must not stall a sync, eat memory or flood the models: every read is
# bounded before it runs. Occurrences per series and per document:
MAX_OCCURRENCES = 5000
MAX_SERIES_OCCURRENCES = 1000  # a daily event for a year is 365
MAX_RULE_WORK = 200_000  # steps a rule may take from DTSTART to the horizon (every minute for a year is 525 600)
PARSE_BUDGET_S = 15.0  # seconds one document may take; checked between small steps
MAX_DOCUMENT_BYTES = 32 * 2**20
MAX_NESTING = 10  # VCALENDAR > VEVENT > VALARM is 3
MAX_REPEATS = 1000  # lines of one property in one component
TEXT_LINE_CHARS = 8192  # a text property line is cut here before it is parsed
MAX_LINE_CHARS = 65536  # any other line longer than this is left out
TITLE_CHARS = 200
LOCATION_CHARS = 200
NOTES_CHARS = 2000
ATTENDEES_KEPT = 50
ATTENDEE_CHARS = 100
UID_CHARS = 255
TEXT_PROPS = frozenset({"SUMMARY", "LOCATION", "DESCRIPTION", "COMMENT", "CONTACT", "X-ALT-DESC", "CATEGORIES",
                        "RESOURCES"})
RECURRENCE_PROPS = frozenset({"RRULE", "RDATE", "EXDATE", "EXRULE"})
TIME_PROPS = frozenset({"DTSTART", "DTEND", "DURATION", "RECURRENCE-ID", "UID"})
# RFC 5545 allows these once per component; a repeat becomes a list that the expansion cannot use.
SINGULAR_PROPS = TIME_PROPS | {"SUMMARY", "LOCATION", "DESCRIPTION", "STATUS", "SEQUENCE", "DTSTAMP", "CLASS",
                               "TRANSP", "PRIORITY", "CREATED", "LAST-MODIFIED", "ORGANIZER", "URL", "GEO"}
# Set by the parser, never read from the data (lines named X-WILSON-* are dropped).
MORE_ATTENDEES = "X-WILSON-MORE-ATTENDEES"
REJECTED = "X-WILSON-REJECTED"

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December")
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


class CalendarError(Exception):
    """A calendar that cannot be read; the message is one line naming the file and the problem."""


class OverBudget(CalendarError):
    """Reading a document took longer than its time budget."""


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
    more_attendees: int = 0  # attendees beyond those kept in `attendees`

    @property
    def key(self) -> str:
        return event_key(self.uid, self.recurrence_id)


def event_key(uid: str, recurrence_id: str | None) -> str:
    return f"{uid}|{recurrence_id or ''}"


class _TolerantQuery(recurring_ical_events.CalendarQuery):
    # One broken series (no DTSTART, unreadable rule) is skipped; the rest of the calendar still counts.
    suppressed_errors = [*recurring_ical_events.CalendarQuery.suppressed_errors,
                         KeyError, ValueError, TypeError, AttributeError, OverflowError]


_SERIES_ERRORS = tuple(_TolerantQuery.suppressed_errors)


@dataclass
class ParseReport:
    """What reading one document cost and what it left out, filled in by `parse_calendar`."""

    notes: list[str] = field(default_factory=list)  # one line per series rejected or cut short
    skipped_uids: set[str] = field(default_factory=set)  # series left out: unreadable, not deleted
    occurrences: int = 0  # occurrences the expansion produced, before the window filter: the work done
    cut_at: datetime | None = None  # set when cut short: nothing starting after it was looked at
    series_cut: dict[str, datetime] = field(default_factory=dict)  # uid -> the same, for one series

    def cut(self, moment: datetime) -> None:
        self.cut_at = moment if self.cut_at is None else min(self.cut_at, moment)


class _Budget:
    """A per-document time budget, checked between small steps so that the actor's own thread stops."""

    def __init__(self, name: str, seconds: float):
        self.name, self.seconds = name, seconds
        self.deadline = clockmod.monotonic() + seconds

    def check(self) -> None:
        if clockmod.monotonic() > self.deadline:
            raise OverBudget(f"{self.name}: reading took longer than {self.seconds:g} s; left as it was")


def _decode(data: bytes) -> str:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        # Older exporters (Outlook, Lotus) wrote Windows-1252 without saying so.
        return data.decode("cp1252", errors="replace")


def _capped(text: str | None, limit: int) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return text[:limit].rstrip() + CUT


class _GuardedParser(CalendarIcalParser):
    """icalendar's own parser, with the budget checked as it goes and hostile shapes refused or cut.

    Nesting deeper than any real calendar is refused; a property repeated past reason
    (50 000 attendees) is counted instead of parsed, since icalendar's cost grows with the
    square of the repeats; an overlong text line is cut and marked.
    """

    def __init__(self, text: str, budget: _Budget):
        super().__init__(text, icalendar.Calendar._get_component_factory(), icalendar.Calendar.types_factory)
        self._budget = budget

    def initialize_parsing(self):
        super().initialize_parsing()
        self._repeats: dict[tuple[int, str], int] = {}
        self._extra_attendees: dict[int, int] = {}

    def handle_begin_component(self, vals: str) -> None:
        if len(self._stack) >= MAX_NESTING:
            raise ValueError(f"components nested more than {MAX_NESTING} deep")
        super().handle_begin_component(vals)

    def handle_end_component(self, vals: str) -> None:
        component = self.component
        extra = self._extra_attendees.pop(id(component), 0) if component is not None else 0
        if extra:
            component.add(MORE_ATTENDEES, extra)
        super().handle_end_component(vals)

    def _admit(self, line) -> object | None:
        """The line to parse (cut when overlong), or None to leave it out."""
        name = re.split(r"[;:]", line[:80], maxsplit=1)[0].upper()
        if name.startswith("X-WILSON-"):
            return None  # our own bookkeeping properties are never taken from the data
        component = self.component
        if component is not None and name not in ("BEGIN", "END"):
            key = (id(component), name)
            seen = self._repeats[key] = self._repeats.get(key, 0) + 1
            if seen > 1 and name in SINGULAR_PROPS:
                return None  # the first one counts
            if name == "ATTENDEE" and seen > ATTENDEES_KEPT:
                self._extra_attendees[id(component)] = self._extra_attendees.get(id(component), 0) + 1
                return None
            if seen > MAX_REPEATS:
                if name in RECURRENCE_PROPS:
                    component.add(REJECTED, f"more than {MAX_REPEATS} {name} lines")
                return None
        if len(line) <= TEXT_LINE_CHARS:
            return line
        if name in TEXT_PROPS:
            return Contentline(line[:TEXT_LINE_CHARS].rstrip("\\") + CUT)
        if len(line) <= MAX_LINE_CHARS:
            return line
        if component is not None and name in RECURRENCE_PROPS | TIME_PROPS:
            component.add(REJECTED, f"a {name} line of {len(line)} characters")
        return None

    def parse_content_lines(self) -> None:
        for index, line in enumerate(self._content_lines_iterator):
            if index % 256 == 0:
                self._budget.check()
            if not line:
                continue
            line = self._admit(line)
            if line is None:
                continue
            try:
                name, params, vals = line.parts()
            except ValueError as e:
                self.handle_line_parse_error(e)
                continue
            uname = name.upper()
            if uname == "BEGIN":
                self.handle_begin_component(vals)
            elif uname == "END":
                self.handle_end_component(vals)
            else:
                self.handle_property(uname, params, vals, line)


def _calendars(text: str, name: str, budget: _Budget) -> list[icalendar.Calendar]:
    try:
        components = _GuardedParser(text, budget).parse()
    except CalendarError:
        raise
    except RecursionError:
        raise CalendarError(f"{name}: not a valid iCalendar file: components nested too deeply") from None
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


def _attendees(component) -> tuple[tuple[str, ...], int]:
    """The first attendees by name, and how many more there are."""
    raw = component.get("ATTENDEE")
    try:
        more = max(int(str(component.get(MORE_ATTENDEES, 0))), 0)
    except ValueError:
        more = 0
    if raw is None:
        return (), more
    if not isinstance(raw, list):
        raw = [raw]
    more += max(len(raw) - ATTENDEES_KEPT, 0)
    found: list[str] = []
    for attendee in raw[:ATTENDEES_KEPT]:
        params = getattr(attendee, "params", {}) or {}
        label = str(params.get("CN") or "").strip().strip('"')
        if not label:
            label = re.sub(r"^mailto:", "", str(attendee), flags=re.IGNORECASE).strip()
        label = _capped(" ".join(label.split()), ATTENDEE_CHARS)
        if label and label not in found:
            found.append(label)
    return tuple(found), more


def _sequence(component) -> int:
    try:
        return int(str(component.get("SEQUENCE", 0)).strip() or 0)
    except ValueError:
        return 0


def _raw_uid(component) -> str:
    return str(component.get("UID") or "").strip()


def _uid_of(raw: str) -> str:
    # The UID becomes a snapshot key and part of every dedup key: a huge one is replaced by its hash.
    if len(raw) <= UID_CHARS:
        return raw
    return "uid-" + hashlib.sha1(raw.encode("utf-8", "replace")).hexdigest()


def _recurring_uids(calendar) -> set[str]:
    uids = set()
    for component in calendar.walk("VEVENT"):
        if any(p in component for p in ("RRULE", "RDATE", "RECURRENCE-ID")):
            uids.add(_raw_uid(component))
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
    raw_uid = _raw_uid(component)
    uid = _uid_of(raw_uid) if raw_uid else _synthetic_uid(component)
    recurrence_id = None
    if (raw_uid or uid) in recurring:
        # Occurrences of a series are told apart by their original start (RECURRENCE-ID).
        rid = component.get("RECURRENCE-ID")
        rid_value = rid.dt if rid is not None else component["DTSTART"].dt
        if isinstance(rid_value, datetime):
            recurrence_id = _instant(rid_value, tz)[0].isoformat()
        else:
            recurrence_id = rid_value.isoformat()
    status = _text(component, "STATUS")
    status = status.upper()[:20] if status else None
    if cancelled_by_method:
        status = CANCELLED
    title = _capped(" ".join((_text(component, "SUMMARY") or "(untitled)").split()), TITLE_CHARS)
    attendees, more_attendees = _attendees(component)
    return Event(uid=uid, recurrence_id=recurrence_id, sequence=_sequence(component), title=title,
                 start=start, end=end, all_day=all_day, location=_capped(_text(component, "LOCATION"), LOCATION_CHARS),
                 description=_capped(_text(component, "DESCRIPTION"), NOTES_CHARS), attendees=attendees,
                 status=status, doc=doc, more_attendees=more_attendees)


# Bounding the expansion ----------------------------------------------------

# The shortest length of one step of each frequency, so that steps counted from it are an upper bound.
STEP_SECONDS = {"SECONDLY": 1, "MINUTELY": 60, "HOURLY": 3600, "DAILY": 86400, "WEEKLY": 7 * 86400,
                "MONTHLY": 28 * 86400, "YEARLY": 365 * 86400}
_BY_PARTS = ("BYSECOND", "BYMINUTE", "BYHOUR", "BYDAY", "BYMONTHDAY", "BYYEARDAY", "BYWEEKNO", "BYMONTH")
# The values RFC 5545 allows (0 excluded where it is): anything else is a broken rule, not a sparse one.
_BY_RANGES = {"BYSECOND": (0, 60), "BYMINUTE": (0, 59), "BYHOUR": (0, 23), "BYMONTHDAY": (-31, 31),
              "BYYEARDAY": (-366, 366), "BYWEEKNO": (-53, 53), "BYMONTH": (1, 12), "BYSETPOS": (-366, 366)}
_NONZERO = {"BYMONTHDAY", "BYYEARDAY", "BYWEEKNO", "BYSETPOS"}
_WEEKDAY = re.compile(r"^([+-]?)(\d{0,2})(MO|TU|WE|TH|FR|SA|SU)$", re.IGNORECASE)


def _check_by_values(rule) -> None:
    for part, (low, high) in _BY_RANGES.items():
        for value in rule.get(part) or []:
            if not isinstance(value, int) or not low <= value <= high or (value == 0 and part in _NONZERO):
                raise ValueError(f"{part}={value} is out of range")
    for value in rule.get("BYDAY") or []:
        match = _WEEKDAY.match(str(value).strip())
        if match is None or (match.group(2) and not 1 <= int(match.group(2)) <= 53):
            raise ValueError(f"BYDAY={value} is not a weekday")


def _naive_utc(value) -> datetime:
    """A date or date-time as naive UTC, for estimates only (floating times are taken as UTC)."""
    if isinstance(value, datetime):
        return value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value
    return datetime.combine(value, time(0))


def _rule_work(rule, start: datetime, until: datetime) -> int:
    """An upper bound of the candidates a rule iterator looks at between `start` and `until`."""
    freq = str((rule.get("FREQ") or [""])[0]).upper()
    if freq not in STEP_SECONDS:
        return 0  # not a rule the expansion can read (an empty RRULE is common): it is judged there
    interval = (rule.get("INTERVAL") or [1])[0]
    if not isinstance(interval, int) or interval < 1:
        raise ValueError(f"INTERVAL={interval} never moves on")
    _check_by_values(rule)
    span = max((until - start).total_seconds(), 0)
    steps = int(span // (STEP_SECONDS[freq] * interval)) + 1
    by = [part for part in _BY_PARTS if rule.get(part)]
    count = (rule.get("COUNT") or [None])[0]
    if isinstance(count, int) and count > 0 and not by:
        steps = min(steps, count)  # every step is an occurrence, so COUNT stops it
    per_step = 1
    for part in by:
        per_step *= max(len(rule[part]), 1)
    if "BYDAY" in by and freq in ("MONTHLY", "YEARLY"):
        per_step *= 53 if freq == "YEARLY" and "BYMONTH" not in by and "BYWEEKNO" not in by else 5
    return steps * per_step


class _RuleExhausted(Exception):
    """A rule iterator went past the year it was given: the horizon is behind it."""


class _BoundedIterInfo(dateutil_rrule._iterinfo):
    # dateutil checks UNTIL only when a date matches, so a rule that never matches
    # (30 February) searches until the year 9999. Its iterator rebuilds this record at every
    # new month; a rule that carries a stop year ends there. Rules without one are unchanged.
    # (No __slots__ of its own: the base initialises the slots it finds in self.__slots__.)

    def rebuild(self, year, month):
        stop = getattr(self.rrule, "_wilson_stop_year", None)
        if stop is not None and year > stop:
            raise _RuleExhausted(year)
        super().rebuild(year, month)


dateutil_rrule._iterinfo = _BoundedIterInfo


class _StoppingRule:
    """A rule whose `between` iterates lazily, checks the budget, and ends at the stop year."""

    def __init__(self, rule, stop_year: int, budget: _Budget):
        self.rule = rule
        self.until = getattr(rule, "until", None)
        self.budget = budget
        rule._wilson_stop_year = stop_year

    def between(self, after, before, inc=False):
        # The uncached iterator: dateutil's cache fills ten at a time under a lock that an
        # exception inside the rule would leave held.
        try:
            for index, moment in enumerate(self.rule._iter()):
                if index % 1024 == 1023:
                    self.budget.check()
                if moment > before or (not inc and moment == before):
                    return
                if moment > after or (inc and moment == after):
                    yield moment
        except _RuleExhausted:
            return


def _bound_series(series, stop_year: int, budget: _Budget) -> None:
    recurrence = series.recurrence
    if getattr(recurrence, "has_core", False):
        recurrence.rrules = [_StoppingRule(rule, stop_year, budget) if isinstance(rule, dateutil_rrule.rrule)
                             else rule for rule in recurrence.rrules]


def _guard_rules(calendar, name: str, query_end: datetime, report: ParseReport, budget: _Budget) -> None:
    """Leave out the series whose expansion would be absurd.

    A rule is judged before it runs, by the steps it would take from DTSTART to the end of the
    window: every second for a year, every minute since the year 1, INTERVAL=0. Series are left
    out whole (with their moved occurrences), named in the report, so that their known events
    are kept as they were rather than read as deleted.
    """
    cap = query_end.astimezone(UTC)
    bad: dict[str, str] = {}  # uid -> problem
    bad_ids: set[int] = set()  # components without a UID are left out alone
    for index, component in enumerate(calendar.walk("VEVENT")):
        if index % 256 == 0:
            budget.check()
        problem = component.get(REJECTED)
        if problem is None:
            try:
                problem = _rule_problem(component, cap)
            except Exception:  # a broken property: the expansion skips the series as unreadable
                problem = None
        if problem is not None:
            problem = one_line(problem[0] if isinstance(problem, list) else problem, 120)
            uid = _raw_uid(component)
            if uid:
                bad.setdefault(uid, problem)
            else:
                bad_ids.add(id(component))
                report.notes.append(f"{name}: left out an event without a UID: {problem}")
    if not bad and not bad_ids:
        return
    for sub in [calendar, *calendar.walk()]:
        sub.subcomponents = [c for c in sub.subcomponents
                             if not (c.name == "VEVENT" and (id(c) in bad_ids or _raw_uid(c) in bad))]
    for uid, problem in bad.items():
        report.skipped_uids.add(_uid_of(uid))
        report.notes.append(f"{name}: left out the event {one_line(uid, 60)!r}: {problem}")


def _rule_problem(component, cap: datetime) -> str | None:
    rules = component.get("RRULE")
    rdates = component.get("RDATE")
    if rdates is not None:
        total = sum(len(getattr(r, "dts", []) or []) for r in (rdates if isinstance(rdates, list) else [rdates]))
        if total > MAX_RULE_WORK:
            return f"{total} RDATE values"
    if rules is None or component.get("DTSTART") is None:
        return None
    dtstart = component["DTSTART"].dt
    if not isinstance(dtstart, date):
        return None  # the expansion skips it as unreadable
    start = _naive_utc(dtstart)
    for rule in rules if isinstance(rules, list) else [rules]:
        try:
            end = cap.replace(tzinfo=None)
            until = (rule.get("UNTIL") or [None])[0]
            if until is not None and not any(rule.get(part) for part in _BY_PARTS):
                # dateutil honours UNTIL only on a match: with no filter every step is one
                end = min(_naive_utc(until), end)
            work = _rule_work(rule, start, end)
        except (ValueError, TypeError, OverflowError) as exc:
            return f"RRULE {one_line(exc, 80)}"
        if work > MAX_RULE_WORK:
            freq = str((rule.get("FREQ") or [""])[0]).lower()
            return f"a {freq} rule from {dtstart:%Y-%m-%d} needs {work:,} steps to reach the horizon"
    return None


def parse_calendar(data: bytes, *, name: str, window_start: datetime, window_end: datetime,
                   tz: ZoneInfo | None = None, report: ParseReport | None = None,
                   budget: float = PARSE_BUDGET_S) -> list[Event]:
    """Events (occurrences of recurring ones expanded) overlapping [window_start, window_end).

    `tz` is the user's timezone, used for floating times and all-day dates (UTC when not given).
    Raises CalendarError (one line, naming `name`) when the data is not a calendar or reading it
    takes longer than `budget` seconds. The work is bounded before it runs: absurd rules are
    left out, each series and the whole document give at most MAX_OCCURRENCES occurrences
    (`report.cut_at` says where it stopped), and every text field is capped with the cut marked.
    """
    report = report if report is not None else ParseReport()
    timer = _Budget(name, budget)
    if len(data) > MAX_DOCUMENT_BYTES:
        raise CalendarError(f"{name}: {len(data) / 2**20:.0f} MB is too large for a calendar "
                            f"(limit {MAX_DOCUMENT_BYTES // 2**20} MB)")
    tz = tz or ZoneInfo("UTC")
    window_start, window_end = window_start.astimezone(UTC), window_end.astimezone(UTC)
    text = _decode(data) if isinstance(data, bytes) else str(data)
    # Widen the query by a day: floating and all-day times are compared in an unknown zone; filter exactly below.
    query_start, query_end = window_start - timedelta(days=1), window_end + timedelta(days=1)
    found: dict[str, Event] = {}

    def keep(event: Event) -> None:
        if report.cut_at is not None and event.start > report.cut_at:
            return
        known = found.get(event.key)
        if known is None or event.sequence >= known.sequence:
            found[event.key] = event
        if len(found) > 2 * MAX_OCCURRENCES:
            _prune(found, report, name)

    for calendar in _calendars(text, name, timer):
        timer.check()
        cancelled_by_method = str(calendar.get("METHOD", "")).strip().upper() == "CANCEL"
        calendar = _standardise_x_wr_timezone(calendar)
        _guard_rules(calendar, name, query_end, report, timer)
        recurring = _recurring_uids(calendar)
        try:
            query = recurring_ical_events.of(calendar, skip_bad_series=True, calendar_query=_TolerantQuery)
        except Exception as exc:
            raise CalendarError(f"{name}: cannot expand events: {one_line(exc)}") from None
        for series in query.series:
            timer.check()
            _bound_series(series, query_end.year + 1, timer)
            produced = 0
            try:
                # Consumed lazily: a series stops at MAX_SERIES_OCCURRENCES, whatever its rule would still give.
                for occurrence in series.between(query_start, query_end):
                    report.occurrences += 1
                    produced += 1
                    if report.occurrences % 64 == 0:
                        timer.check()
                    try:
                        event = _event_from(occurrence.as_component(False), recurring=recurring,
                                            cancelled_by_method=cancelled_by_method, tz=tz, doc=name)
                    except (KeyError, TypeError, ValueError, OverflowError, AttributeError) as exc:
                        logger.debug("{}: skipped an unreadable event: {}", name, one_line(exc))
                        continue
                    if event.start < window_end and (event.end or event.start + timedelta(seconds=1)) > window_start:
                        keep(event)
                    if produced >= MAX_SERIES_OCCURRENCES:
                        report.series_cut[event.uid] = event.start
                        report.notes.append(f"{name}: the event {one_line(event.title, 60)!r} repeats more than "
                                            f"{MAX_SERIES_OCCURRENCES} times in the horizon; read until "
                                            f"{event.start:%Y-%m-%d %H:%M} UTC")
                        break
            except _SERIES_ERRORS as exc:
                logger.debug("{}: skipped an unreadable series: {}", name, one_line(exc))
    if len(found) > MAX_OCCURRENCES:
        _prune(found, report, name)
    events = sorted(found.values(), key=lambda e: (e.start, e.uid, e.recurrence_id or ""))
    if report.cut_at is not None or report.series_cut:
        events = [e for e in events if e.start <= min(report.cut_at or e.start, report.series_cut.get(e.uid, e.start))]
    return events


def _prune(found: dict[str, Event], report: ParseReport, name: str) -> None:
    """Keep the first MAX_OCCURRENCES by start; the horizon ends at the last one kept."""
    ordered = sorted(found.values(), key=lambda e: (e.start, e.uid, e.recurrence_id or ""))
    kept = ordered[:MAX_OCCURRENCES]
    if len(ordered) > MAX_OCCURRENCES:
        report.cut(kept[-1].start)
        report.notes.append(f"{name}: more than {MAX_OCCURRENCES} occurrences in the horizon; "
                            f"read until {kept[-1].start:%Y-%m-%d}")
    found.clear()
    found.update((e.key, e) for e in kept)


# Change detection ---------------------------------------------------------

@dataclass(frozen=True)
class Change:
    kind: str  # new, changed, cancelled
    event: Event
    previous: dict | None = field(default=None, compare=False)  # the snapshot entry before
    what: tuple[str, ...] = ()  # for "changed": some of time, place, title
    occurrences: int = 1  # >1 when one change stands for many occurrences of a series
    # How many changes the event had before this one (0 for its first appearance): an event
    # cancelled and restored twice says the same things twice, and must be told both times.
    version: int = field(default=0, compare=False)
    keys: tuple[str, ...] = field(default=(), compare=False)  # the snapshot keys this change covers


def snapshot_entry(event: Event) -> dict:
    return {
        "uid": event.uid, "recurrence_id": event.recurrence_id, "sequence": event.sequence, "title": event.title,
        "start": event.start.isoformat(), "end": event.end.isoformat() if event.end else None,
        "all_day": event.all_day, "location": event.location, "status": event.status, "doc": event.doc,
    }


def snapshot(events: list[Event]) -> dict:
    return {e.key: snapshot_entry(e) for e in events}


def _version(entry: dict | None) -> int:
    try:
        return int((entry or {}).get("version") or 0)
    except (TypeError, ValueError):
        return 0


def _next_version(old: dict | None) -> int:
    return _version(old) + 1 if old is not None else 0


def _same_entry(old: dict, new: dict) -> bool:
    return {k: v for k, v in old.items() if k != "version"} == {k: v for k, v in new.items() if k != "version"}


def next_snapshot(previous: dict, events: list[Event], changes: list[Change], now: datetime) -> dict:
    """The snapshot after this sync: each entry with its version, and tombstones for cancellations.

    A version counts the entry's changes, so a later change never repeats an earlier dedup key.
    An event that vanished from the calendar stays as a cancelled tombstone (with its version)
    until it is over, so that if it comes back it is told as reinstated, under a new key.
    """
    entries = {}
    for key, entry in snapshot(events).items():
        old = previous.get(key)
        if old is None:
            entry["version"] = 0
        elif _same_entry(old, entry):
            entry["version"] = _version(old)
        else:
            entry["version"] = _version(old) + 1
        entries[key] = entry
    cancelled = {key for change in changes if change.kind == "cancelled" for key in change.keys}
    for key, old in previous.items():
        if key in entries or _over(event_from_entry(old), now):
            continue
        if key in cancelled and old.get("status") != CANCELLED:
            entries[key] = {**old, "status": CANCELLED, "version": _version(old) + 1}
        elif old.get("status") == CANCELLED:
            entries[key] = old
    return entries


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
                changes.append(Change("cancelled", event, previous=old, version=_next_version(old), keys=(key,)))
        elif old.get("status") == CANCELLED:
            changes.append(Change("new", event, previous=old, version=_next_version(old), keys=(key,)))  # reinstated
        else:
            what = _what_changed(old, event)
            if what:
                changes.append(Change("changed", event, previous=old, what=what, version=_next_version(old),
                                      keys=(key,)))
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
                changes.append(Change("changed", event, previous=old, what=what, version=_next_version(old),
                                      keys=(event.key,)))
        for old in olds[paired:]:
            gone = event_from_entry(old)
            changes.append(Change("cancelled", gone, previous=old, version=_next_version(old), keys=(gone.key,)))
        for event in news[paired:]:
            changes.append(Change("new", event, keys=(event.key,)))
    for events in by_uid_new.values():
        changes.extend(Change("new", event, keys=(event.key,)) for event in events)
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
                           occurrences=len(members), version=max(m.version for m in members),
                           keys=tuple(k for m in members for k in m.keys))
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
    event = change.event
    return f"calendar:{event.uid}:{event.recurrence_id}:{change.kind}:v{change.version}:{fingerprint(change)}"


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
        more = len(event.attendees) - len(shown) + event.more_attendees
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

    @contextlib.contextmanager
    def _reading(self):
        """A file that is gone or unreadable is a SourceError, in one line."""
        try:
            yield
        except FileNotFoundError:
            raise SourceError(f"{self.path}: no such file") from None
        except OSError as exc:
            raise SourceError(f"{self.path}: cannot read: {exc.strerror or exc}") from None

    def fetch(self, state):
        with self._reading():
            stat = self.path.stat()
        # Inode and change time as well as mtime and size: an editor that replaces the file
        # within one mtime tick, keeping its size, still gives a new inode or ctime.
        seen = [stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns]
        if state.get("sha256") and state.get("stat") == seen:
            return None, state  # unchanged on disk: not even read
        with self._reading():
            data = self.path.read_bytes()
        documents = [(str(self.path), data)]
        digest = _digest(documents)
        if digest == state.get("sha256"):
            return None, {"sha256": digest, "stat": seen}  # touched, not changed
        return documents, {"sha256": digest, "stat": seen}


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

    @staticmethod
    def _version(calendar) -> str | None:
        """The calendar's change marker (CalendarServer ctag and/or RFC 6578 sync-token), None when
        the server offers neither: any change to the collection changes it."""
        from caldav.elements import dav
        from caldav.elements.base import BaseElement

        class GetCTag(BaseElement):
            tag = "{http://calendarserver.org/ns/}getctag"

        try:
            found = calendar.get_properties([GetCTag(), dav.SyncToken()])
        except Exception as exc:  # a server that refuses the PROPFIND: read the objects instead
            logger.debug("calendar {}: no change marker ({})", calendar.url, one_line(exc))
            return None
        values = [str(found.get(tag) or "") for tag in (GetCTag.tag, dav.SyncToken.tag)]
        return "|".join(values) if any(values) else None

    def _client(self):
        import caldav

        return caldav.DAVClient(url=self.url, username=self.username, password=self.password, timeout=self.timeout)

    def _error(self, exc: Exception) -> SourceError:
        message = one_line(exc, 200)
        if self.password:
            message = message.replace(self.password, "***")
        return SourceError(f"{self.label}: {type(exc).__name__}: {message}")

    def unchanged(self, state: dict) -> bool:
        """The cheap check between full reads: one PROPFIND per known calendar, no discovery and no
        event data. True only when every calendar read last time still has the same marker."""
        versions = state.get("versions") or {}
        if not versions or not all(versions.values()):
            return False
        try:
            with self._client() as client:
                return all(self._version(client.calendar(url=url)) == version for url, version in versions.items())
        except Exception as exc:
            raise self._error(exc) from None

    def fetch(self, state):
        documents = []
        versions: dict[str, str | None] = {}
        try:
            with self._client() as client:
                for calendar in self._calendars(client):
                    # Read before the objects: a change made while they are listed shows at the next check.
                    versions[str(calendar.url)] = self._version(calendar)
                    calendar_name = self._calendar_name(calendar)
                    objects = calendar.get_events() if hasattr(calendar, "get_events") else calendar.events()
                    for obj in objects:
                        data = obj.data
                        if isinstance(data, str):
                            data = data.encode("utf-8")
                        href = str(obj.url).rstrip("/").rsplit("/", 1)[-1]
                        documents.append((f"{calendar_name}/{href}", data))
        except Exception as exc:
            raise self._error(exc) from None
        documents.sort()
        digest = _digest(documents)
        if digest == state.get("sha256"):
            return None, {"sha256": digest, "versions": versions}
        return documents, {"sha256": digest, "versions": versions}


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
                buffered += self.sync_source(source, cheap=reason == "poll")
            except (SourceError, CalendarError) as exc:
                logger.warning("calendar source {} skipped: {}", source.label, one_line(exc))
            except Exception as exc:  # one bad source must not stop the others, nor the actor
                logger.error("calendar source {} failed: {}: {}", source.label, type(exc).__name__, one_line(exc))
        if buffered:
            logger.info("calendar sync ({}): {} change(s) buffered", reason, buffered)
        return buffered

    def sync_source(self, source: CalendarSource, *, cheap: bool = False) -> int:
        """Fetch one source and buffer what changed. `cheap` (a poll): a source with its own change
        check (CalDAV's ctag) is only read in full when that check says it changed."""
        cursor_name = f"calendar:{source.id}"
        cursor = Cursor.get_or_none(Cursor.name == cursor_name)
        state = dict(cursor.value or {}) if cursor is not None else {}
        old_fetch = dict(state.get("fetch") or {})
        # Each step renews the handler's budget with its own bound, so that a long sync of many
        # documents is progress, while one stuck step still counts as hung.
        liveness.beat(float(getattr(source, "timeout", 60) or 60) + 30, f"calendar: fetching {source.label}")
        check = getattr(source, "unchanged", None)
        if cheap and check is not None and not state.get("suspect") and check(dict(old_fetch)):
            return 0
        documents, fetch_state = source.fetch(dict(old_fetch))
        now = self.now()
        if documents is None:
            revalidated = fetch_state != old_fetch  # the same data under new validators (a touched file)
            if cursor is not None and (state.get("suspect") or revalidated):
                # Back to what it was before a suspect read: that read was a passing state, now forgotten.
                state.pop("suspect", None)
                state["fetch"] = fetch_state
                Cursor.update(value=state, updated_at=now).where(Cursor.name == cursor_name).execute()
            return 0
        tz = self.config.timezone
        window_end = now + self.horizon()
        previous = dict(state.get("events") or {})
        events: list[Event] = []
        failed: set[str] = set()
        notes: list[str] = []
        skipped: set[tuple[str, str]] = set()  # (doc, uid) of series left out
        cuts: dict[tuple[str, str | None], datetime] = {}  # (doc, uid or None for all) -> read until
        slow_before, slow = set(state.get("slow") or ()), set()
        for name, data in documents:
            digest = hashlib.sha256(data).hexdigest()
            if digest in slow_before:
                # Ran out of time before, byte for byte the same: not worth another 15 s each sync.
                failed.add(name)
                slow.add(digest)
                continue
            report = ParseReport()
            liveness.beat(PARSE_BUDGET_S + 30, f"calendar: reading {one_line(name, 80)}")
            try:
                found = parse_calendar(data, name=name, window_start=now, window_end=window_end, tz=tz, report=report)
            except CalendarError as exc:
                logger.warning("calendar source {}: {}", source.label, one_line(exc))
                failed.add(name)
                if isinstance(exc, OverBudget):
                    slow.add(digest)
                    notes.append(str(exc))
                continue
            for note in report.notes:
                logger.warning("calendar source {}: {}", source.label, one_line(note))
            notes.extend(report.notes)
            skipped.update((name, uid) for uid in report.skipped_uids)
            if report.cut_at is not None:
                cuts[(name, None)] = report.cut_at
            cuts.update({(name, uid): moment for uid, moment in report.series_cut.items()})
            events.extend(found)
        current_keys = {e.key for e in events}

        def unread(entry: dict) -> bool:
            """Whether this sync did not really look at the entry: unreadable is not deleted."""
            doc, uid = entry.get("doc"), entry.get("uid")
            if doc in failed or (doc, uid) in skipped:
                return True
            start = _parse_iso(entry.get("start"))
            return any(key in cuts and start >= cuts[key] for key in ((doc, None), (doc, uid)))

        carried = {k: v for k, v in previous.items() if k not in current_keys and unread(v)}
        comparable = {k: v for k, v in previous.items() if k not in carried}
        suspect_docs = self._suspect_docs(documents, events, comparable, now, window_end)
        read = _digest(documents)
        suspect = None
        if suspect_docs and (state.get("suspect") or {}).get("digest") != read:
            # An empty read of a calendar that had events is most likely a writer part-way through
            # saving, or a server hiccup: nothing is cancelled until a second read says the same.
            suspect = {"digest": read, "since": now.isoformat(), "docs": sorted(suspect_docs)[:20]}
            held = {k: v for k, v in comparable.items() if v.get("doc") in suspect_docs}
            carried.update(held)
            comparable = {k: v for k, v in comparable.items() if k not in held}
            notes.append(f"{source.label}: read {len(held)} known event(s) as gone; "
                         "waiting for a second read before telling anyone")
            logger.warning("calendar source {}: an empty read would cancel {} event(s); waiting for a second read",
                           source.label, len(held))
        known_until = _parse_iso(state.get("known_until"))
        horizon_end = min([window_end, *cuts.values()])
        changes = diff(comparable, events, now=now, known_until=known_until, horizon_end=window_end)
        current = next_snapshot(comparable, events, changes, now)
        current.update(carried)
        new_state = {
            "events": current,
            "known_until": horizon_end.isoformat(),
            # Keep the old validators while a document is broken or suspect, so the next sync reads it again.
            "fetch": fetch_state if not failed and suspect is None else old_fetch,
        }
        if suspect is not None:
            new_state["suspect"] = suspect
        if slow:
            new_state["slow"] = sorted(slow)
        rows = []
        with database.atomic():
            for change in changes:
                row = thalamus.commit_buffered(channel=self.name, text=describe(change, tz, now),
                                               dedup_key=dedup_key(change), payload=payload(change), at=now)
                if row is not None:
                    rows.append(row)
            for note in notes:
                trace.record(trace.new_trace_id(), "skipped", self.name, one_line(note), now)
            if cursor is None:
                Cursor.create(name=cursor_name, value=new_state, updated_at=now)
            else:
                Cursor.update(value=new_state, updated_at=now).where(Cursor.name == cursor_name).execute()
        faults.point("calendar:after-commit")
        # Told only after the commit, so the thalamus never looks for a row that is not there yet.
        for row in rows:
            self.tell("thalamus", StimulusCommitted("buffer", row.id, row.trace_id))
        return len(rows)

    @staticmethod
    def _suspect_docs(documents, events: list[Event], comparable: dict, now: datetime,
                      window_end: datetime) -> set[str]:
        """Documents whose read would cancel every upcoming event they had: empty, or gone with the rest."""
        live: dict[str, int] = {}
        for entry in comparable.values():
            if entry.get("status") == CANCELLED:
                continue
            gone = event_from_entry(entry)
            if not _over(gone, now) and gone.start < window_end:
                live[gone.doc] = live.get(gone.doc, 0) + 1
        if not live:
            return set()
        if not events:
            return set(live)  # the whole source reads as empty (or its listing came back empty)
        return {name for name, data in documents if name in live and not data.strip()}


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
