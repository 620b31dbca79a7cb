"""Hostile and broken calendars: bounded work, capped fields, no mass cancellation, no lost restore.

Every bound here is asserted by counting (occurrences produced, rule months walked,
characters kept, clock reads), never by elapsed time.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import hostile_ics
from actors.tools import calendar_events
from channels import calendar as cal
from channels.calendar import channel as calendar_channel
from channels.calendar import ics, rules
from channels.calendar import (
    ATTENDEES_KEPT,
    CUT,
    LOCATION_CHARS,
    MAX_OCCURRENCES,
    MAX_SERIES_OCCURRENCES,
    NOTES_CHARS,
    TITLE_CHARS,
    CalendarChannel,
    CalendarError,
    CalendarSource,
    IcsFileSource,
    OverBudget,
    ParseReport,
    describe,
    diff,
    parse_calendar,
)
from storage.models import Cursor, ReceptorBuffer, Trace
from tests.calendar_support import add_event
from wilson.kernel import config as configmod
from wilson.kernel.actor import Context
from wilson.kernel.clock import SimClock
from wilson.kernel.messages import ChannelSync, Ping
from tests.actor_support import RecordingDirectory

UTC = timezone.utc
BERLIN = ZoneInfo("Europe/Berlin")
NOW = hostile_ics.NOW
YEAR = timedelta(days=365)


def parse(data: bytes, report: ParseReport, *, name="hostile.ics", span=YEAR, **kw):
    return parse_calendar(data, name=name, window_start=NOW, window_end=NOW + span, tz=BERLIN, report=report, **kw)


# Expansion bounded before it runs -------------------------------------------------


def test_a_rule_that_never_moves_on_is_left_out_before_it_runs():
    report = ParseReport()
    events = parse(hostile_ics.interval_zero(), report)
    assert [e.uid for e in events] == ["good"]  # the rest of the calendar still counts
    assert report.skipped_uids == {"zero"}
    assert report.occurrences == 1  # only the good event was ever expanded
    [note] = report.notes
    assert note.startswith("hostile.ics: left out the event") and "INTERVAL=0" in note and "\n" not in note


@pytest.mark.parametrize(
    "build, uid, why, first",
    [
        (hostile_ics.secondly, "secondly", "secondly rule", None),  # its first second was before the window
        (hostile_ics.minutely_from_year_one, "ancient", "minutely rule from 1-01-01", None),
        (hostile_ics.count_million, "million", "minutely rule", None),
        # its UNTIL is never reached: no match to check it on
        (hostile_ics.setpos_never, "setpos", "secondly rule", datetime(2027, 4, 13, 5, 15, 3, tzinfo=timezone.utc)),
        (hostile_ics.setpos_count, "setposcount", "secondly rule", datetime(2026, 12, 1, tzinfo=timezone.utc)),
    ],
)
def test_a_series_every_second_or_minute_is_kept_as_one_event_with_a_note_never_expanded(build, uid, why, first):
    report = ParseReport()
    events = parse(build(), report)
    kept = [e for e in events if e.uid == uid]
    assert [e.uid for e in events if e.uid != uid] == ["good"]  # the rest of the calendar still counts
    assert [(e.start, e.recurrence_id) for e in kept] == ([(first, None)] if first else [])
    assert report.occurrences <= 2  # the good event and this one, each read once: nothing expanded
    [note] = report.notes
    assert note.startswith(f"hostile.ics: the event '{uid}' repeats too often (") and why in note
    assert note.endswith("kept as a single event at its first time") and "\n" not in note


def test_a_secondly_series_in_the_window_is_kept_once_and_a_bad_x_wr_timezone_costs_nothing_else():
    data = (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//x//EN\r\nX-WR-TIMEZONE:Mars/Olympus_Mons\r\n"
        "BEGIN:VEVENT\r\nUID:tick\r\nDTSTART:20261201T090000Z\r\nRRULE:FREQ=SECONDLY\r\nSUMMARY:Tick\r\n"
        "END:VEVENT\r\nBEGIN:VEVENT\r\nUID:lunch\r\nDTSTART:20261202T120000\r\nSUMMARY:Lunch\r\nEND:VEVENT\r\n"
        "BEGIN:VEVENT\r\n" + hostile_ics.GOOD + "\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    ).encode()
    report = ParseReport()
    events = {e.uid: e for e in parse(data, report)}
    assert sorted(events) == ["good", "lunch", "tick"]
    assert events["tick"].start == datetime(2026, 12, 1, 9, tzinfo=timezone.utc) and events["tick"].title == "Tick"
    assert events["lunch"].start == datetime(2026, 12, 2, 11, tzinfo=timezone.utc)  # floating: noon in Berlin
    assert report.notes[0] == (
        "hostile.ics: its X-WR-TIMEZONE Mars/Olympus_Mons is not a time zone; floating times are read in yours"
    )
    assert "kept as a single event" in report.notes[1]


def test_a_rule_that_never_matches_stops_at_the_horizon(monkeypatch):
    # dateutil looks for 30 February until the year 9999 (about 96 000 months): 20 s before the fix.
    months = []
    rebuild = rules._BoundedIterInfo.rebuild

    def counting(self, year, month):
        months.append((year, month))
        return rebuild(self, year, month)

    monkeypatch.setattr(rules._BoundedIterInfo, "rebuild", counting)
    report = ParseReport()
    events = parse(hostile_ics.never_matching(), report)
    assert [e.uid for e in events] == ["feb30", "good"]  # DTSTART itself is the one occurrence
    assert 0 < len(months) <= 12 * 3
    assert max(year for year, _ in months) <= (NOW + YEAR).year + 2


def test_a_frequent_rule_is_cut_per_series_and_the_others_keep_their_horizon():
    data = hostile_ics.calendar(
        "UID:hourly\r\nDTSTART:20261129T130000Z\r\nRRULE:FREQ=HOURLY\r\nSUMMARY:Ping",
        "UID:later\r\nDTSTART:20270601T090000Z\r\nSUMMARY:Summer party",
    )
    report = ParseReport()
    events = parse(data, report)
    hourly = [e for e in events if e.uid == "hourly"]
    assert len(hourly) == MAX_SERIES_OCCURRENCES and report.occurrences == MAX_SERIES_OCCURRENCES + 1
    assert report.series_cut == {"hourly": hourly[-1].start} and report.cut_at is None
    assert "later" in {e.uid for e in events}  # one runaway series does not shorten the calendar
    assert any("repeats more than" in note for note in report.notes)


def test_a_document_keeps_at_most_max_occurrences_and_says_where_it_stopped():
    many = [
        f"UID:d{i}\r\nDTSTART:20261201T090000Z\r\nRRULE:FREQ=DAILY;COUNT=300\r\nSUMMARY:Daily {i}" for i in range(20)
    ]  # 6000 occurrences in the window, no series over its own cap
    report = ParseReport()
    events = parse(hostile_ics.calendar(*many), report)
    assert len(events) == MAX_OCCURRENCES
    assert report.cut_at == events[-1].start and all(e.start <= report.cut_at for e in events)
    assert report.occurrences <= 20 * 300


def test_fifty_thousand_attendees_are_counted_not_kept():
    report = ParseReport()
    crowd = next(e for e in parse(hostile_ics.attendees(50_000), report) if e.uid == "crowd")
    assert len(crowd.attendees) == ATTENDEES_KEPT and crowd.more_attendees == 50_000 - ATTENDEES_KEPT
    change = diff({}, [crowd], now=NOW)[0]
    text = describe(change, BERLIN, NOW)
    assert text.endswith(
        "With Person 0, Person 1, Person 2, Person 3, Person 4, Person 5, Person 6, Person 7 and 49992 more."
    )
    assert len(text) < 400


@pytest.mark.parametrize(
    "build, uid, field, limit",
    [
        (hostile_ics.huge_summary, "long", "title", TITLE_CHARS),
        (hostile_ics.huge_location, "far", "location", LOCATION_CHARS),
        (hostile_ics.huge_description, "notes", "description", NOTES_CHARS),
    ],
)
def test_every_text_field_is_capped_and_the_cut_marked(build, uid, field, limit):
    event = next(e for e in parse(build(), ParseReport()) if e.uid == uid)
    value = getattr(event, field)
    assert value.endswith(CUT) and len(value) <= limit + len(CUT)
    text = describe(diff({}, [event], now=NOW)[0], BERLIN, NOW)
    assert len(text) < 2 * limit + 300  # what reaches the models stays small
    assert len(cal.payload(diff({}, [event], now=NOW)[0])["title"]) <= TITLE_CHARS + len(CUT)


def test_a_huge_uid_becomes_a_short_key():
    uid = "u" * 10_000
    [event] = parse(hostile_ics.calendar(f"UID:{uid}\r\nDTSTART:20261205T090000Z\r\nSUMMARY:X"), ParseReport())
    assert event.uid.startswith("uid-") and len(event.key) < 100
    assert len(cal.dedup_key(diff({}, [event], now=NOW)[0])) < 200


def test_deep_nesting_is_one_clear_error():
    with pytest.raises(CalendarError, match=r"^nested\.ics: not a valid iCalendar file: components nested"):
        parse(hostile_ics.deeply_nested(), ParseReport(), name="nested.ics")


def test_too_large_a_document_is_refused_unread(monkeypatch):
    monkeypatch.setattr(ics, "MAX_DOCUMENT_BYTES", 1000)
    with pytest.raises(CalendarError, match=r"^big\.ics: .* too large for a calendar"):
        parse(hostile_ics.huge_description(), ParseReport(), name="big.ics")


class FakeTime:
    """A monotonic clock that moves one second each time it is read."""

    def __init__(self):
        self.reads = 0

    def __call__(self):
        self.reads += 1
        return float(self.reads)


@pytest.mark.parametrize(
    "stage, data",
    [
        # a long file: the budget is read between lines of the parse
        (
            "parse",
            hostile_ics.calendar(*[f"UID:e{i}\r\nDTSTART:20261205T090000Z\r\nSUMMARY:E{i}" for i in range(2000)]),
        ),
        # a long series: the budget is read between occurrences
        ("expansion", hostile_ics.calendar("UID:d\r\nDTSTART:20261201T090000Z\r\nRRULE:FREQ=DAILY\r\nSUMMARY:D")),
    ],
)
def test_the_time_budget_stops_the_parse_where_it_is(monkeypatch, stage, data):
    clock = FakeTime()
    monkeypatch.setattr(ics.clockmod, "monotonic", clock)
    report = ParseReport()
    with pytest.raises(OverBudget, match=r"^slow\.ics: reading took longer than 10 s; left as it was$"):
        parse(data, report, name="slow.ics", budget=10, span=5 * YEAR)
    # One read to set the deadline, then checks until the eleventh second: no work after that.
    assert clock.reads == 12
    if stage == "parse":
        assert report.occurrences == 0
    else:
        assert 0 < report.occurrences < MAX_SERIES_OCCURRENCES


# The actor: suspect reads, versions, budget ---------------------------------------


@pytest.fixture
def channel_for(tmp_path):
    def make(*sources, start=NOW):
        config = configmod.load(tmp_path, environ={})
        config.set("core", "timezone", "Europe/Berlin")
        config.set("calendar", "horizon_days", 365)
        ctx = Context(config=config, clock=SimClock(start), synapse=None, directory=RecordingDirectory())
        return CalendarChannel(ctx, sources=list(sources))

    return make


def texts() -> list[str]:
    return [r.text for r in ReceptorBuffer.select().order_by(ReceptorBuffer.id)]


def three_events(path):
    add_event(path, "Dentist", "2026-12-03 09:00", tz=BERLIN)
    add_event(path, "Trip to Japan", "2027-04-10", "2027-04-24", location="Tokyo")
    add_event(path, "Review", "2027-01-12 14:00", tz=BERLIN)


def test_a_zero_byte_read_then_the_restored_file_cancels_nothing(db, channel_for, tmp_path):
    path = tmp_path / "calendar.ics"
    three_events(path)
    channel = channel_for(IcsFileSource(path))
    assert channel.sync("test") == 3
    good = path.read_bytes()
    path.write_bytes(b"")  # a writer part-way through saving
    assert channel.sync("test") == 0
    path.write_bytes(good)
    assert channel.sync("test") == 0
    assert not any(t.startswith("Cancelled") for t in texts()) and len(texts()) == 3
    assert [e["title"] for e in calendar_events(None, None)] == ["Dentist", "Review", "Trip to Japan"]
    assert Trace.select().where(Trace.reason.contains("waiting for a second read")).count() == 1
    assert "suspect" not in Cursor.get().value  # the passing state is forgotten


def test_a_calendar_emptied_for_real_is_cancelled_after_the_second_read(db, channel_for, tmp_path):
    path = tmp_path / "calendar.ics"
    three_events(path)
    channel = channel_for(IcsFileSource(path))
    assert channel.sync("test") == 3
    path.write_bytes(ics.new_calendar().to_ical())  # a valid calendar with no events left
    assert channel.sync("test") == 0
    assert channel.sync("test") == 3  # the same read again: confirmed
    assert sorted(t.split(",")[0] for t in texts()[3:]) == [
        "Cancelled: Dentist",
        "Cancelled: Review",
        "Cancelled: Trip to Japan",
    ]
    assert calendar_events(None, None) == []


def test_zero_bytes_confirmed_then_restored_announces_the_events_again(db, channel_for, tmp_path):
    # Issue 13 item 4: the restored events had the dedup keys of their first appearance and were dropped.
    path = tmp_path / "calendar.ics"
    three_events(path)
    channel = channel_for(IcsFileSource(path))
    assert channel.sync("test") == 3
    good = path.read_bytes()
    path.write_bytes(b"")
    assert channel.sync("test") == 0
    assert channel.sync("test") == 3  # confirmed: three cancellations
    path.write_bytes(good)
    assert channel.sync("test") == 3
    assert [t.split(",")[0] for t in texts()[6:]] == [
        "New event: Dentist",
        "New event: Review",
        "New event: Trip to Japan",
    ]
    assert [e["title"] for e in calendar_events(None, None)] == ["Dentist", "Review", "Trip to Japan"]


def test_cancel_and_restore_twice_is_told_every_time(db, channel_for, tmp_path):
    path = tmp_path / "calendar.ics"
    three_events(path)
    channel = channel_for(IcsFileSource(path))
    assert channel.sync("test") == 3
    full = path.read_bytes()
    without = re.sub(
        rb"BEGIN:VEVENT\r\n(?:(?!END:VEVENT).)*?SUMMARY:Review\r\n.*?END:VEVENT\r\n", b"", full, flags=re.DOTALL
    )
    assert without != full
    for _ in range(2):
        path.write_bytes(without)
        assert channel.sync("test") == 1
        assert texts()[-1].startswith("Cancelled: Review")
        assert "Review" not in [e["title"] for e in calendar_events(None, None)]
        path.write_bytes(full)
        assert channel.sync("test") == 1
        assert texts()[-1].startswith("New event: Review")
        assert "Review" in [e["title"] for e in calendar_events(None, None)]
    assert len({r.dedup_key for r in ReceptorBuffer.select()}) == 7


class MemorySource(CalendarSource):
    """Documents held in memory, as a CalDAV account hands them over."""

    id = "memory"
    label = "memory"

    def __init__(self, documents):
        self.documents = documents

    def fetch(self, state):
        return list(self.documents), {}


def test_one_blank_object_among_others_is_suspect_too(db, channel_for):
    one = hostile_ics.calendar("UID:a\r\nDTSTART:20261205T090000Z\r\nSUMMARY:Alpha")
    two = hostile_ics.calendar("UID:b\r\nDTSTART:20261206T090000Z\r\nSUMMARY:Beta")
    source = MemorySource([("cal/a.ics", one), ("cal/b.ics", two)])
    channel = channel_for(source)
    assert channel.sync("test") == 2
    source.documents = [("cal/a.ics", b""), ("cal/b.ics", two)]  # a 0-byte object
    assert channel.sync("test") == 0
    source.documents = [("cal/b.ics", two)]  # the object really deleted: one cancellation, no suspicion
    assert channel.sync("test") == 1 and texts()[-1].startswith("Cancelled: Alpha")


def test_rejected_series_keep_their_known_events_and_leave_a_trace(db, channel_for):
    weekly = "UID:w\r\nDTSTART:20261130T090000Z\r\nRRULE:FREQ=WEEKLY\r\nSUMMARY:Weekly"
    source = MemorySource([("cal.ics", hostile_ics.calendar(weekly, hostile_ics.GOOD))])
    channel = channel_for(source)
    assert channel.sync("test") == 2
    broken = weekly.replace("FREQ=WEEKLY", "FREQ=WEEKLY;INTERVAL=0")
    source.documents = [("cal.ics", hostile_ics.calendar(broken, hostile_ics.GOOD))]
    assert channel.sync("test") == 0  # left out is not deleted: no "Cancelled: Weekly"
    assert Trace.select().where(Trace.stage == "skipped", Trace.reason.contains("INTERVAL=0")).count() == 1
    assert sum(1 for v in Cursor.get().value["events"].values() if v["uid"] == "w") == 53


def test_a_document_over_budget_is_kept_as_it_was_and_not_read_again(db, channel_for, monkeypatch):
    source = MemorySource([("cal.ics", hostile_ics.calendar(hostile_ics.GOOD))])
    channel = channel_for(source)
    assert channel.sync("test") == 1
    source.documents = [("cal.ics", hostile_ics.calendar("UID:x\r\nDTSTART:20261207T090000Z\r\nSUMMARY:X"))]
    monkeypatch.setattr(ics.clockmod, "monotonic", FakeTime())
    monkeypatch.setattr(calendar_channel, "PARSE_BUDGET_S", 3)
    calls = []
    real = calendar_channel.parse_calendar

    def counted(*args, **kwargs):
        calls.append(kwargs["name"])
        return real(*args, **dict(kwargs, budget=3))

    monkeypatch.setattr(calendar_channel, "parse_calendar", counted)
    assert channel.sync("test") == 0 and calls == ["cal.ics"]
    assert channel.sync("test") == 0 and calls == ["cal.ics"]  # the same bytes are not parsed again
    assert Trace.select().where(Trace.reason.contains("reading took longer")).count() == 1
    assert "Dentist" in [e["title"] for e in calendar_events(None, None)]


# Property: any bytes in, a clear error or sane events out ----------------------------

PROPS = [
    "SUMMARY",
    "LOCATION",
    "DESCRIPTION",
    "ATTENDEE;CN=X",
    "UID",
    "STATUS",
    "SEQUENCE",
    "DTSTART",
    "DTEND",
    "RRULE",
    "EXDATE",
    "RDATE",
    "RECURRENCE-ID",
    "DURATION",
    "X-WILSON-MORE-ATTENDEES",
    "X-WR-TIMEZONE",
    "METHOD",
    "TZID",
    "DTSTART;TZID=Europe/Berlin",
    "DTSTART;VALUE=DATE",
]
NUMBERS = st.one_of(st.integers(-(10**30), 10**30), st.sampled_from([0, -1, 1, 2**31, 2**63, 10**6, 366, 53]))
SOON = st.datetimes(datetime(2026, 11, 1), datetime(2027, 12, 31)).map(lambda d: d.strftime("%Y%m%dT%H%M%SZ"))
DATES = st.one_of(
    SOON,
    st.builds(
        lambda y, m, d, h: f"{y:04d}{m:02d}{d:02d}T{h:02d}0000Z",
        st.integers(0, 9999),
        st.integers(0, 13),
        st.integers(0, 32),
        st.integers(0, 25),
    ),
    st.sampled_from(
        ["00010101T000000Z", "99991231T235959Z", "20261201T090000Z", "20261201", "2026-12-01", "20261201T090000", ""]
    ),
)
RULES = st.builds(
    lambda freq, interval, count, by: ";".join(p for p in [f"FREQ={freq}", interval, count, by] if p),
    st.sampled_from(["SECONDLY", "MINUTELY", "HOURLY", "DAILY", "WEEKLY", "MONTHLY", "YEARLY", "FORTNIGHTLY", ""]),
    st.one_of(st.just(""), NUMBERS.map(lambda n: f"INTERVAL={n}")),
    st.one_of(st.just(""), NUMBERS.map(lambda n: f"COUNT={n}"), DATES.map(lambda d: f"UNTIL={d}")),
    st.one_of(
        st.just(""),
        st.lists(st.integers(-400, 400), min_size=1, max_size=8).flatmap(
            lambda ns: st.sampled_from(
                ["BYMONTH", "BYMONTHDAY", "BYYEARDAY", "BYWEEKNO", "BYHOUR", "BYSETPOS", "BYDAY"]
            ).map(lambda by: f"{by}={','.join(map(str, ns))}")
        ),
    ),
)
VALUES = st.one_of(
    st.text(max_size=40),
    NUMBERS.map(str),
    DATES,
    RULES,
    st.integers(1, 300_000).map(lambda n: "x" * n),
    st.binary(max_size=40).map(lambda b: b.decode("latin-1")),
)


@st.composite
def events(draw):
    lines = []
    if draw(st.booleans()):  # a real-looking event, so that expansion and field caps are reached
        lines += [
            f"UID:{draw(st.sampled_from(['a', 'b', 'c']))}",
            f"DTSTART:{draw(SOON)}",
            f"SUMMARY:{draw(st.text(max_size=30))}",
        ]
    lines += [f"{draw(st.sampled_from(PROPS))}:{draw(VALUES)}" for _ in range(draw(st.integers(0, 8)))]
    if draw(st.booleans()):
        lines.append(f"DTSTART:{draw(DATES)}")
    if draw(st.booleans()):
        lines.append(f"RRULE:{draw(RULES)}")
    repeat = draw(st.sampled_from([0, 0, 0, 2_000, 20_000]))
    lines += [f"ATTENDEE:mailto:p{i}@example.com" for i in range(repeat)]
    return "BEGIN:VEVENT\r\n" + "\r\n".join(hostile_ics.fold(line) for line in lines) + "\r\nEND:VEVENT\r\n"


@st.composite
def hostile_documents(draw):
    kind = draw(st.sampled_from(["calendar", "calendar", "nested", "bytes", "text", "spliced"]))
    if kind == "bytes":
        return draw(st.binary(max_size=2000))
    if kind == "text":
        return draw(st.text(max_size=2000)).encode("utf-8", "surrogatepass")
    if kind == "nested":
        depth = draw(st.integers(1, 3000))
        return (
            b"BEGIN:VCALENDAR\r\n"
            + b"BEGIN:VEVENT\r\n" * depth
            + b"DTSTART:20261201T090000Z\r\n"
            + b"END:VEVENT\r\n" * depth
            + b"END:VCALENDAR\r\n"
        )
    body = "".join(draw(st.lists(events(), max_size=6)))
    data = ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\n" + body + "END:VCALENDAR\r\n").encode("utf-8", "surrogatepass")
    if kind == "spliced":  # invalid UTF-8, control characters or a cut anywhere in a real-looking file
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.binary(max_size=20)) + data[at + draw(st.integers(0, 50)) :]
    return data


def assert_sane(events_out, report, data: bytes):
    series = max(len(re.findall(rb"BEGIN:VEVENT", data, re.IGNORECASE)), 1)
    assert report.occurrences <= series * MAX_SERIES_OCCURRENCES
    assert len(events_out) <= MAX_OCCURRENCES
    for event in events_out:
        assert event.start.tzinfo is not None and event.start < NOW + YEAR + timedelta(days=1)
        assert event.end is None or event.end > event.start
        assert len(event.title) <= TITLE_CHARS + len(CUT)
        assert len(event.location or "") <= LOCATION_CHARS + len(CUT)
        assert len(event.description or "") <= NOTES_CHARS + len(CUT)
        assert len(event.attendees) <= ATTENDEES_KEPT and len(event.key) < 600
    for change in diff({}, events_out, now=NOW):
        assert len(describe(change, BERLIN, NOW)) < 2000


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=hostile_documents())
def test_any_bytes_give_a_clear_error_or_sane_events(data):
    report = ParseReport()
    try:
        found = parse(data, report, name="fuzz.ics")
    except CalendarError as exc:
        message = str(exc)
        assert message.startswith("fuzz.ics: ") and "\n" not in message and len(message) < 400
        return
    assert_sane(found, report, data)


ANCHOR = hostile_ics.calendar("UID:anchor\r\nDTSTART:20261215T090000Z\r\nSUMMARY:Anchor")


def test_the_running_actor_lives_through_hostile_calendars(db, tmp_path):
    config = configmod.load(tmp_path, environ={})
    config.set("core", "timezone", "Europe/Berlin")
    ctx = Context(config=config, clock=SimClock(NOW), synapse=None, directory=RecordingDirectory())
    source = MemorySource([])
    ref = CalendarChannel.start(ctx, sources=[source])
    synced = []
    try:

        @settings(
            max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
        )
        @given(
            data=st.one_of(
                hostile_documents(), st.sampled_from(sorted(hostile_ics.ALL)).map(lambda name: hostile_ics.ALL[name]())
            )
        )
        def sync_one(data):
            source.documents = [("fuzz.ics", data), ("good.ics", ANCHOR)]
            ref.tell(ChannelSync("fuzz"))
            assert ref.ask(Ping(), timeout=60) == "pong"
            synced.append(len(data))

        sync_one()
        assert ref.is_alive() and ctx.directory.crashes == []
        assert len(synced) >= 10
        # The good calendar beside each hostile one was read: its event was announced once, never cancelled.
        assert [e["title"] for e in calendar_events(None, None)].count("Anchor") == 1
        assert ReceptorBuffer.select().where(ReceptorBuffer.text.startswith("Cancelled: Anchor")).count() == 0
    finally:
        ref.stop()
