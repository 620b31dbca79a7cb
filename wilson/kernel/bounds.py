"""Numbers and names typed by a person, parsed with bounds before they go anywhere.

An id that does not fit SQLite's 64-bit integer makes a query raise
OverflowError inside whichever actor runs it; a duration of ten million days
overflows `datetime`. Every edge where a person types (REPL, CLI, and button
data) parses here and gets a `ValueError` whose text is one friendly line.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

from wilson.kernel.clock import parse_duration

MAX_ID = 2**63 - 1  # SQLite INTEGER
MAX_ITEM = 1000  # item numbers inside one proposal
MAX_ADVANCE = timedelta(days=366)
MIN_YEAR, MAX_YEAR = 1900, 2200
MAX_TRACE_ID = 64

_DIGITS = re.compile(r"[0-9]+")  # ASCII only: str.isdigit() also accepts '²' and '١', which int() then rejects
_TRACE_ID = re.compile(r"[A-Za-z0-9:_.-]+")


def shown(text: str, limit: int = 40) -> str:
    """`text` quoted for an error message, cut short: an answer stays one readable line."""
    text = str(text)
    return repr(text if len(text) <= limit else text[:limit] + "…")


def parse_id(text: str, what: str = "proposal") -> int:
    """A row id: a positive whole number that fits SQLite's 64-bit integers ('#3' is read as 3)."""
    raw = str(text).strip()
    raw = raw[1:] if raw.startswith("#") else raw
    if raw.startswith("-") and _DIGITS.fullmatch(raw[1:]):
        raise ValueError(f"a {what} number is positive, not {shown(text)}")
    if not _DIGITS.fullmatch(raw):
        raise ValueError(f"a {what} number looks like 3, not {shown(text)}")
    if len(raw.lstrip("0")) > 19 or int(raw) > MAX_ID:
        raise ValueError(f"there is no {what} {shown(raw, 24)}: that number is far too large")
    value = int(raw)
    if value < 1:
        raise ValueError(f"{what} numbers start at 1")
    return value


def parse_items(text: str, limit: int = MAX_ITEM) -> tuple[int, ...]:
    """Item numbers such as '1,3' or '1 3'; empty means all. Each between 1 and `limit`, no repeats."""
    if not text.strip():
        return ()
    parts = [p for p in text.replace(" ", ",").split(",") if p]
    if len(parts) > limit:
        raise ValueError(f"at most {limit} item numbers at once")
    items = []
    for part in parts:
        if not _DIGITS.fullmatch(part):
            raise ValueError(f"item numbers look like 1,3 — got {shown(text)}")
        if len(part.lstrip("0")) > 6 or not 1 <= int(part) <= limit:
            raise ValueError(f"item numbers run from 1 to at most {limit} — got {shown(part, 24)}")
        if int(part) not in items:
            items.append(int(part))
    return tuple(items)


def parse_advance(text: str) -> timedelta:
    """A forward step of simulated time ('45m', '3d', '1d12h'), more than nothing and at most MAX_ADVANCE."""
    raw = str(text).strip()
    if raw.startswith("-"):
        raise ValueError("simulated time only runs forward: advance 1h, 2d, ...")
    if len(raw) > 40:
        raise ValueError(f"not a duration: {shown(raw)} (try 45m, 12h, 3d)")
    try:
        delta = parse_duration(raw)
    except (OverflowError, ValueError) as exc:
        if isinstance(exc, ValueError) and "not a duration" in str(exc):
            raise ValueError(f"not a duration: {shown(raw)} (try 45m, 12h, 3d)") from None
        raise ValueError(f"{shown(raw, 24)} is too long: advance at most {MAX_ADVANCE.days}d at a time") from None
    if delta > MAX_ADVANCE:
        raise ValueError(f"{shown(raw, 24)} is too long: advance at most {MAX_ADVANCE.days}d at a time")
    if delta <= timedelta(0):
        raise ValueError("advance by more than nothing, e.g. advance 1h")
    return delta


def check_year(moment: date | datetime) -> date | datetime:
    if not MIN_YEAR <= moment.year <= MAX_YEAR:
        raise ValueError(f"{moment.year} is out of range: pick a year between {MIN_YEAR} and {MAX_YEAR}")
    return moment


def parse_trace_id(text: str) -> str:
    """A trace id as Wilson writes them (hex, or e.g. 'memory:12'): short, no spaces or symbols."""
    raw = str(text).strip()
    if not raw or len(raw) > MAX_TRACE_ID or not _TRACE_ID.fullmatch(raw):
        raise ValueError(f"a trace id looks like 3f2a9c1b7d4e, not {shown(raw)}")
    return raw
