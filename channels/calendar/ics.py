"""Reading iCalendar data into events, bounded in time, size and repetition.

`parse_calendar` is the only way in: it decodes, parses with icalendar's parser guarded
against hostile shapes, leaves out absurd rules (channels/calendar/rules.py), expands
series lazily with recurring_ical_events and caps every text field with the cut marked.

Size: the guarded parser and the lazy expansion share one document's budget and caps; what
could stand alone (bounding a rule before it runs) is already in rules.py.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from loguru import logger

from channels.calendar.event import (
    CANCELLED,
    UTC,
    CalendarError,
    Event,
    OverBudget,
    one_line,
    raw_uid,
    uid_of,
)
from channels.calendar.occurrence import occurrence_fields
from channels.calendar.rules import REJECTED, bound_series, guard_rules
from wilson.kernel import clock as clockmod

if TYPE_CHECKING:  # annotations only
    import icalendar

CUT = "…[cut]"  # marks every field that was cut short
# Hostile or broken calendars must not stall a sync, eat memory or flood the models: every read is
# bounded before it runs. Occurrences per series and per document:
MAX_OCCURRENCES = 5000
MAX_SERIES_OCCURRENCES = 1000  # a daily event for a year is 365
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
TEXT_PROPS = frozenset(
    {"SUMMARY", "LOCATION", "DESCRIPTION", "COMMENT", "CONTACT", "X-ALT-DESC", "CATEGORIES", "RESOURCES"}
)
RECURRENCE_PROPS = frozenset({"RRULE", "RDATE", "EXDATE", "EXRULE"})
TIME_PROPS = frozenset({"DTSTART", "DTEND", "DURATION", "RECURRENCE-ID", "UID"})
# RFC 5545 allows these once per component; a repeat becomes a list that the expansion cannot use.
SINGULAR_PROPS = TIME_PROPS | {
    "SUMMARY",
    "LOCATION",
    "DESCRIPTION",
    "STATUS",
    "SEQUENCE",
    "DTSTAMP",
    "CLASS",
    "TRANSP",
    "PRIORITY",
    "CREATED",
    "LAST-MODIFIED",
    "ORGANIZER",
    "URL",
    "GEO",
}
# Set by the parser, never read from the data (lines named X-WILSON-* are dropped).
MORE_ATTENDEES = "X-WILSON-MORE-ATTENDEES"


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


def new_calendar() -> icalendar.Calendar:
    # lazy: icalendar (about 40 ms) only once a calendar is written
    import icalendar

    calendar = icalendar.Calendar()
    calendar.add("PRODID", "-//Wilson//calendar//EN")
    calendar.add("VERSION", "2.0")
    return calendar


def decode(data: bytes) -> str:
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


@functools.cache
def _readers() -> tuple[type, type]:
    """icalendar's parser guarded (_GuardedParser) and recurring_ical_events' query made tolerant (_TolerantQuery),
    made at the first calendar read: the two libraries take longer to import than a Wilson without a calendar
    needs to start."""
    # lazy: icalendar and recurring_ical_events (about 50 ms) only once a calendar is read
    import icalendar
    import recurring_ical_events
    from icalendar.parser.content_line import Contentline
    from icalendar.parser.ical.calendar import CalendarIcalParser

    class _TolerantQuery(recurring_ical_events.CalendarQuery):
        # One broken series (no DTSTART, unreadable rule) is skipped; the rest of the calendar still counts.
        suppressed_errors = [
            *recurring_ical_events.CalendarQuery.suppressed_errors,
            KeyError,
            ValueError,
            TypeError,
            AttributeError,
            OverflowError,
        ]

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

    return _GuardedParser, _TolerantQuery


def _calendars(text: str, name: str, budget: _Budget) -> list[icalendar.Calendar]:
    # lazy: icalendar (about 40 ms) only once a calendar is read
    import icalendar

    guarded, _ = _readers()
    try:
        components = guarded(text, budget).parse()
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


def sequence_of(component) -> int:
    try:
        return int(str(component.get("SEQUENCE", 0)).strip() or 0)
    except ValueError:
        return 0


def _recurring_uids(calendar) -> set[str]:
    uids = set()
    for component in calendar.walk("VEVENT"):
        if any(p in component for p in ("RRULE", "RDATE", "RECURRENCE-ID")):
            uids.add(raw_uid(component))
    return uids


def _synthetic_uid(component) -> str:
    seed = f"{component.get('SUMMARY', '')}|{component.get('DTSTART') and component['DTSTART'].to_ical()}"
    return "nouid-" + hashlib.sha1(seed.encode("utf-8", "replace")).hexdigest()[:12]


def _standardise_x_wr_timezone(calendar, name: str, report: ParseReport):
    # Google exports name the calendar's zone in X-WR-TIMEZONE; floating times there mean that zone.
    if "X-WR-TIMEZONE" not in calendar:
        return calendar
    zone = calendar.get("X-WR-TIMEZONE")
    shown = one_line(zone if isinstance(zone, str) else repr(zone), 60)
    # lazy: only for a calendar that names its zone this way
    import x_wr_timezone

    try:
        ZoneInfo(str(zone).strip())  # an unknown or malformed name (or two of them) is no zone
        return x_wr_timezone.to_standard(calendar)
    except Exception:
        # Without the bad name the calendar reads as written (its floating times in the user's zone); with it,
        # the expansion would refuse the whole calendar.
        calendar.pop("X-WR-TIMEZONE", None)
        report.notes.append(f"{name}: its X-WR-TIMEZONE {shown} is not a time zone; floating times are read in yours")
        return calendar


def _event_from(component, *, recurring: set[str], cancelled_by_method: bool, tz: ZoneInfo, doc: str) -> Event:
    start, all_day = _instant(component["DTSTART"].dt, tz)
    end = None
    if component.get("DTEND") is not None:
        end, _ = _instant(component["DTEND"].dt, tz)
    if end is not None and end <= start:
        end = None
    raw = raw_uid(component)
    uid = uid_of(raw) if raw else _synthetic_uid(component)
    recurrence_id = None
    if (raw or uid) in recurring:
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
    return Event(
        uid=uid,
        recurrence_id=recurrence_id,
        sequence=sequence_of(component),
        title=title,
        start=start,
        end=end,
        all_day=all_day,
        location=_capped(_text(component, "LOCATION"), LOCATION_CHARS),
        description=_capped(_text(component, "DESCRIPTION"), NOTES_CHARS),
        attendees=attendees,
        status=status,
        doc=doc,
        more_attendees=more_attendees,
    )


def _holds_no_component(text: str) -> bool:
    """A calendar with nothing in it, no event nor anything else (the file a new home starts with): no event to
    read, and no reason to load the parsers for it (about 80 ms of CPU at every start). Anything that says
    BEGIN a second time, anywhere, is left to the parser."""
    lines = [line.strip().upper() for line in text.splitlines() if line.strip()]
    return (
        len(lines) >= 2
        and lines[0] == "BEGIN:VCALENDAR"
        and lines[-1] == "END:VCALENDAR"
        and text.upper().count("BEGIN") == 1
    )


def parse_calendar(
    data: bytes,
    *,
    name: str,
    window_start: datetime,
    window_end: datetime,
    tz: ZoneInfo | None = None,
    report: ParseReport | None = None,
    budget: float = PARSE_BUDGET_S,
) -> list[Event]:
    """Events (occurrences of recurring ones expanded) overlapping [window_start, window_end).

    `tz` is the user's timezone, used for floating times and all-day dates (UTC when not given).
    Raises CalendarError (one line, naming `name`) when the data is not a calendar or reading it
    takes longer than `budget` seconds. The work is bounded before it runs: absurd rules are
    left out, each series and the whole document give at most MAX_OCCURRENCES occurrences
    (`report.cut_at` says where it stopped), and every text field is capped with the cut marked.
    """
    report = report if report is not None else ParseReport()
    if len(data) > MAX_DOCUMENT_BYTES:
        raise CalendarError(
            f"{name}: {len(data) / 2**20:.0f} MB is too large for a calendar (limit {MAX_DOCUMENT_BYTES // 2**20} MB)"
        )
    text = decode(data) if isinstance(data, bytes) else str(data)
    if _holds_no_component(text):
        return []
    # lazy: recurring_ical_events only once a calendar with something in it is read (with _readers)
    import recurring_ical_events

    timer = _Budget(name, budget)
    _, tolerant = _readers()
    series_errors = tuple(tolerant.suppressed_errors)
    tz = tz or ZoneInfo("UTC")
    window_start, window_end = window_start.astimezone(UTC), window_end.astimezone(UTC)
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
        calendar = _standardise_x_wr_timezone(calendar, name, report)
        guard_rules(calendar, name, query_end, report, timer)
        recurring = _recurring_uids(calendar)
        try:
            query = recurring_ical_events.of(calendar, skip_bad_series=True, calendar_query=tolerant)
        except Exception as exc:
            raise CalendarError(f"{name}: cannot expand events: {one_line(exc)}") from None
        for series in query.series:
            timer.check()
            bound_series(series, query_end.year + 1, timer)
            produced = 0
            try:
                # Consumed lazily: a series stops at MAX_SERIES_OCCURRENCES, whatever its rule would still give.
                for occurrence in series.between(query_start, query_end):
                    report.occurrences += 1
                    produced += 1
                    if report.occurrences % 64 == 0:
                        timer.check()
                    try:
                        event = _event_from(
                            occurrence_fields(occurrence),
                            recurring=recurring,
                            cancelled_by_method=cancelled_by_method,
                            tz=tz,
                            doc=name,
                        )
                    except (KeyError, TypeError, ValueError, OverflowError, AttributeError) as exc:
                        logger.debug("{}: skipped an unreadable event: {}", name, one_line(exc))
                        continue
                    if event.start < window_end and (event.end or event.start + timedelta(seconds=1)) > window_start:
                        keep(event)
                    if produced >= MAX_SERIES_OCCURRENCES:
                        report.series_cut[event.uid] = event.start
                        report.notes.append(
                            f"{name}: the event {one_line(event.title, 60)!r} repeats more than "
                            f"{MAX_SERIES_OCCURRENCES} times in the horizon; read until "
                            f"{event.start:%Y-%m-%d %H:%M} UTC"
                        )
                        break
            except series_errors as exc:
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
        report.notes.append(
            f"{name}: more than {MAX_OCCURRENCES} occurrences in the horizon; read until {kept[-1].start:%Y-%m-%d}"
        )
    found.clear()
    found.update((e.key, e) for e in kept)
