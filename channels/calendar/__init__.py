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
(channels/base.py). With the real clock the tick beats every [tick]
interval_seconds (10 s), so the cadence holds to that. With the simulated clock `Wilson.advance` jumps from
one due moment to the next and the polls ride on those steps, adding none of
their own: `advance 60d` does not crawl through 17 280 polls, and a change made
in simulated time is seen at the first step at least ``poll`` after the last poll
(advance in poll-sized steps to watch a day tick by).

Hostile input. Reading is bounded before it runs: absurd rules are left out
(and named in a trace line), each series and each document give a bounded
number of occurrences, every text field is capped with the cut marked, and
each document has a time budget checked between small steps. What could not
be read is kept as it was: unreadable is not the same as deleted.

The package, along its seams: `event` (the Event record and the errors), `ics` (reading
iCalendar, bounded), `rules` (bounding a recurrence rule before it runs), `diff` (snapshots
and changes), `sentences` (one sentence per change), `sources` (file, URL, CalDAV, Apple
Calendar), `channel` (the actor) and `editor` (the REPL's `calendar add` / `cancel`).
"""

from channels.calendar.channel import CalendarChannel
from channels.calendar.diff import Change, dedup_key, diff, next_snapshot, payload, snapshot
from channels.calendar.editor import add_event, cancel_event, move_event
from channels.calendar.event import CANCELLED, CalendarError, Event, OverBudget, SourceError, event_from_entry
from channels.calendar.ics import (
    ATTENDEES_KEPT,
    CUT,
    LOCATION_CHARS,
    MAX_OCCURRENCES,
    MAX_SERIES_OCCURRENCES,
    NOTES_CHARS,
    TITLE_CHARS,
    ParseReport,
    parse_calendar,
)
from channels.calendar.sentences import describe, when
from channels.calendar.sources import (
    AppleCalendarSource,
    CalDavSource,
    CalendarSource,
    IcsFileSource,
    IcsUrlSource,
    apple_rows_to_ics,
    sources_from_config,
)

__all__ = [
    "ATTENDEES_KEPT",
    "CANCELLED",
    "CUT",
    "LOCATION_CHARS",
    "MAX_OCCURRENCES",
    "MAX_SERIES_OCCURRENCES",
    "NOTES_CHARS",
    "TITLE_CHARS",
    "AppleCalendarSource",
    "CalDavSource",
    "CalendarChannel",
    "CalendarError",
    "CalendarSource",
    "Change",
    "Event",
    "IcsFileSource",
    "IcsUrlSource",
    "OverBudget",
    "ParseReport",
    "SourceError",
    "add_event",
    "apple_rows_to_ics",
    "cancel_event",
    "dedup_key",
    "describe",
    "diff",
    "event_from_entry",
    "move_event",
    "next_snapshot",
    "parse_calendar",
    "payload",
    "snapshot",
    "sources_from_config",
    "when",
]
