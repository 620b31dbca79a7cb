"""Reading dates and times, one way each: ISO dates and date-times, local wall times, HH:MM-HH:MM windows.

Python 3.11's `fromisoformat` reads the ISO 8601 forms models and calendars write (a trailing
"Z" included), so what is left here is the policy around it: which texts mean a whole day,
what a stored value without a zone means, and how a wall time is placed across DST changes.
Nothing here reads the clock (that is wilson/kernel/clock.py).
"""

from __future__ import annotations

import contextlib
from datetime import date, datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo

from wilson.kernel.clock import as_utc

UTC = timezone.utc
OFF_WORDS = frozenset({"", "off", "none", "no", "0", "false"})  # as wilson/kernel/config.py reads "off"


def date_or_datetime(text: str) -> date | datetime:
    """'2027-03-01' -> a date (a whole day); any other ISO text -> a datetime, naive when it names no
    zone. Raises ValueError for anything else."""
    text = str(text).strip()
    if len(text) <= 10:  # "2027-03-01" or "20270301"; a time needs more characters than that
        with contextlib.suppress(ValueError):
            return date.fromisoformat(text)
    return datetime.fromisoformat(text)


def utc_or_none(text: str | None) -> datetime | None:
    """A stored ISO date-time as aware UTC (a naive one is taken as UTC); None for an empty value."""
    return as_utc(datetime.fromisoformat(str(text))) if text else None


def aware_or_none(value) -> datetime | None:
    """A date-time from data we did not write (a payload): only an ISO text that names its zone
    counts; anything else is None, never a guess."""
    try:
        moment = datetime.fromisoformat(str(value))
    except (TypeError, ValueError):
        return None
    return moment if moment.tzinfo is not None else None


def last_day(end: datetime, tz: ZoneInfo) -> date:
    """The last local day a span ending at `end` covers: an end at midnight is exclusive (an all-day end is
    the midnight after its last day), on the days the clocks change as on any other."""
    return (end - timedelta(microseconds=1)).astimezone(tz).date()


def local_moment(day: date, at: time, tz: ZoneInfo) -> datetime:
    """The aware UTC moment of a local wall time.

    A wall time that does not exist (skipped by a spring-forward change) is read
    with the offset from before the change, i.e. it lands just as far after the gap;
    a wall time that happens twice means its first occurrence.
    """
    return datetime.combine(day, at).replace(tzinfo=tz, fold=0).astimezone(UTC)


def parse_window(text: str | None, what: str = "window") -> tuple[time, time] | None:
    """'22:00-07:00' -> (22:00, 07:00); None when switched off ("off", empty) or empty (start == end).
    Raises ValueError naming `what` and the expected form."""
    cleaned = (text or "").strip().lower()
    if cleaned in OFF_WORDS:
        return None
    try:
        start_text, end_text = (part.strip() for part in cleaned.split("-", 1))
        start, end = time.fromisoformat(start_text), time.fromisoformat(end_text)
    except ValueError as exc:
        raise ValueError(f"{what} {text!r}: expected HH:MM-HH:MM, e.g. 22:00-07:00") from exc
    if start == end:
        return None
    return start, end
