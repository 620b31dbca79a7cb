"""Hostile iCalendar files: each one made a sync hang, eat memory or flood the models.

Shared by the hostile calendar tests and the figures in the issue; every builder
returns the bytes of a whole file. `NOW` is the moment the tests sync at.
"""

from __future__ import annotations

from datetime import datetime, timezone

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=timezone.utc)


def calendar(*events: str) -> bytes:
    body = "".join(f"BEGIN:VEVENT\r\n{e.strip()}\r\nEND:VEVENT\r\n" for e in events)
    return ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//hostile//EN\r\n" + body + "END:VCALENDAR\r\n").encode()


def fold(line: str) -> str:
    """RFC 5545 line folding, so a huge property is still a well-formed file."""
    parts = [line[i : i + 74] for i in range(0, len(line), 74)] or [""]
    return "\r\n ".join(parts)


GOOD = "UID:good\r\nDTSTART:20261210T090000Z\r\nDTEND:20261210T100000Z\r\nSUMMARY:Dentist"


def secondly() -> bytes:
    return calendar("UID:secondly\r\nDTSTART:20260101T000000Z\r\nRRULE:FREQ=SECONDLY\r\nSUMMARY:Tick", GOOD)


def interval_zero() -> bytes:
    return calendar("UID:zero\r\nDTSTART:20261201T090000Z\r\nRRULE:FREQ=DAILY;INTERVAL=0\r\nSUMMARY:Stuck", GOOD)


def minutely_from_year_one() -> bytes:
    return calendar("UID:ancient\r\nDTSTART:00010101T000000Z\r\nRRULE:FREQ=MINUTELY\r\nSUMMARY:Forever", GOOD)


def count_million() -> bytes:
    return calendar(
        "UID:million\r\nDTSTART:20261129T000000Z\r\nRRULE:FREQ=MINUTELY;COUNT=1000000\r\nSUMMARY:Many", GOOD
    )


def setpos_never() -> bytes:
    # found by the fuzzing below: BYSETPOS=223 of a one-second set matches nothing, so dateutil never reaches
    # the UNTIL (before DTSTART, too) and steps through every second to the horizon: minutes of a stuck actor
    return calendar(
        "UID:setpos\r\nDTSTART:20270413T051503Z\r\n"
        "RRULE:FREQ=SECONDLY;UNTIL=20261101T072853Z;BYSETPOS=223,-180\r\nSUMMARY:Never",
        GOOD,
    )


def setpos_count() -> bytes:
    # the same with COUNT instead of UNTIL: ten occurrences that never come
    return calendar(
        "UID:setposcount\r\nDTSTART:20261201T000000Z\r\nRRULE:FREQ=SECONDLY;COUNT=10;BYSETPOS=223\r\nSUMMARY:Never",
        GOOD,
    )


def never_matching() -> bytes:
    # 30 February never comes; a rule iterator looks for it until the year 9999.
    return calendar(
        "UID:feb30\r\nDTSTART:20261201T090000Z\r\nRRULE:FREQ=HOURLY;BYMONTH=2;BYMONTHDAY=30\r\nSUMMARY:Never", GOOD
    )


def attendees(count: int = 50_000) -> bytes:
    people = "\r\n".join(f"ATTENDEE;CN=Person {i}:mailto:p{i}@example.com" for i in range(count))
    return calendar(f"UID:crowd\r\nDTSTART:20261205T090000Z\r\nSUMMARY:All hands\r\n{people}", GOOD)


def huge_summary(chars: int = 1_000_000) -> bytes:
    return calendar(f"UID:long\r\nDTSTART:20261205T090000Z\r\n{fold('SUMMARY:' + 'A' * chars)}", GOOD)


def huge_location(chars: int = 200_000) -> bytes:
    place = fold("LOCATION:" + "L " * (chars // 2))
    return calendar(f"UID:far\r\nDTSTART:20261205T090000Z\r\nSUMMARY:Offsite\r\n{place}", GOOD)


def huge_description(chars: int = 500_000) -> bytes:
    notes = fold("DESCRIPTION:" + "word " * (chars // 5))
    return calendar(f"UID:notes\r\nDTSTART:20261205T090000Z\r\nSUMMARY:Notes\r\n{notes}", GOOD)


def deeply_nested(depth: int = 5000) -> bytes:
    return (
        b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\n"
        + b"BEGIN:VEVENT\r\n" * depth
        + b"END:VEVENT\r\n" * depth
        + b"END:VCALENDAR\r\n"
    )


ALL = {
    "secondly": secondly,
    "interval_zero": interval_zero,
    "minutely_from_year_one": minutely_from_year_one,
    "count_million": count_million,
    "setpos_never": setpos_never,
    "setpos_count": setpos_count,
    "never_matching": never_matching,
    "attendees": attendees,
    "huge_summary": huge_summary,
    "huge_location": huge_location,
    "huge_description": huge_description,
    "deeply_nested": deeply_nested,
}
