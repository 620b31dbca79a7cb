"""Task windows: when a task's follow-ups fall due ("7d,1d,due,overdue"), by its kind and the configuration.

Pure reckoning on dates, shared by the toolbox (which checks windows the user sets), the deadlines
(actors/deadlines.py) and the organs that tell of a task (the briefing, the escalation). See
actors/tick/__init__.py for what each window means.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from loguru import logger

from wilson.kernel.clock import UTC, as_utc, parse_duration
from wilson.kernel.timeparse import local_moment

DATE_ONLY_HOUR = time(9, 0)  # when a follow-up for a date-only due arrives, local time
DUE_LEAD = timedelta(hours=2)  # "due" window before a timed due
OVERDUE_AFTER = timedelta(days=1)

# a plain list of window names (every task alike), or windows_config(config) (per kind, "" the default)
Windows = list[str] | dict[str, list[str]]


def parse_windows(text: str | list | None) -> list[str]:
    if text is None:
        return []
    items = text.split(",") if isinstance(text, str) else list(text)
    return [str(w).strip().lower() for w in items if str(w).strip()]


def due_date(due: datetime, tz: ZoneInfo) -> date:
    """The calendar day of a date-only due.

    The gate stores a date as local midnight; rounding to the nearest local day also
    reads a date stored as UTC midnight correctly for any offset within 12 hours.
    """
    return (as_utc(due).astimezone(tz) + timedelta(hours=12)).date()


def _shift_days(moment: datetime, days: int, tz: ZoneInfo) -> datetime:
    """`days` calendar days earlier on the local wall clock (keeps 15:00 at 15:00 across DST)."""
    local = moment.astimezone(tz).replace(tzinfo=None) - timedelta(days=days)
    return local.replace(tzinfo=tz, fold=0).astimezone(UTC)


def window_times(due: datetime, due_is_date: bool, windows: list[str], tz: ZoneInfo) -> list[tuple[str, datetime]]:
    """(window, aware UTC fire time) in firing order; unknown window names are left out with a warning."""
    due = as_utc(due)
    day = due_date(due, tz) if due_is_date else None
    anchor = local_moment(day, DATE_ONLY_HOUR, tz) if due_is_date else due
    out: list[tuple[int, str, datetime]] = []
    for position, name in enumerate(parse_windows(windows)):
        if name == "due":
            moment = anchor if due_is_date else due - DUE_LEAD
        elif name == "overdue":
            moment = local_moment(day + timedelta(days=1), DATE_ONLY_HOUR, tz) if due_is_date else due + OVERDUE_AFTER
        else:
            try:
                span = parse_duration(name)
            except ValueError:
                logger.warning("tick: unknown escalation window {!r} ignored", name)
                continue
            seconds = span.total_seconds()
            if seconds % 86400 == 0:
                days = int(seconds // 86400)
                moment = (
                    local_moment(day - timedelta(days=days), DATE_ONLY_HOUR, tz)
                    if due_is_date
                    else _shift_days(due, days, tz)
                )
            else:
                moment = anchor - span
        out.append((position, name, moment))
    out.sort(key=lambda item: (item[2], item[0]))
    seen: set[str] = set()
    result = []
    for _, name, moment in out:
        if name not in seen:  # a name listed twice fires once
            seen.add(name)
            result.append((name, moment))
    return result


# A task's kind picks its windows from `[tick] windows_<kind>` (else `[tick] windows`). The kind is read
# from the title, then from the topic's title; the first rule that matches wins, so "Pay the visa fee"
# is a travel document and "Book a table for Anna's birthday" a booking. Anything else is "generic".
KIND_RULES: tuple[tuple[str, re.Pattern], ...] = tuple(
    (kind, re.compile(pattern, re.I))
    for kind, pattern in (
        ("document", r"\b(passports?|visas?|id cards?|esta|permits?|driving licen[cs]e)\b"),
        ("booking", r"\b(book|booking|reserve|reservations?|tickets?|flights?|hotels?|accommodation)\b"),
        ("packing", r"\b(pack|packing|luggage|suitcases?)\b"),
        ("bill", r"\b(pay|payments?|bills?|invoices?|rent|tax|taxes|fees?)\b"),
        ("appointment", r"\b(appointments?|dentist|doctor|check-?up|interview|exam)\b"),
        ("birthday", r"\b(birthdays?|anniversary|gifts?|presents?)\b"),
    )
)
KINDS = tuple(kind for kind, _ in KIND_RULES) + ("generic",)


def task_kind(title: str | None, topic: str | None = None) -> str:
    """The kind of a task, from its words alone (no model): one of KINDS."""
    for text in (title, topic):
        for kind, pattern in KIND_RULES:
            if text and pattern.search(text):
                return kind
    return "generic"


def windows_config(config) -> dict[str, list[str]]:
    """The configured windows: "" for `[tick] windows`, each kind with a `windows_<kind>` key of its own."""
    chosen = {"": parse_windows(config.get("tick", "windows"))}
    for kind in KINDS:
        own = parse_windows(config.get("tick", f"windows_{kind}"))
        if own:
            chosen[kind] = own
    return chosen


# The event's raises (actors/escalation.py), here because the tick's windows (actors/deadlines.py) ask of them too.
EVENT_WINDOWS = (42, 21, 7, 1)  # days before an event's start at which its open preparation is raised
# How far ahead of the event a kind of preparation is first raised: a visa takes weeks, a check-in a day.
LEAD_DAYS = {"document": 42, "booking": 42, "bill": 21, "appointment": 21, "birthday": 21, "generic": 21, "packing": 1}
LAST_MINUTE = ("check in", "check-in", "checkin", "pack")


def lead_days(title: str | None) -> int:
    """How many days before its event a task of this title is first raised."""
    if any(word in (title or "").lower() for word in LAST_MINUTE):
        return 1
    return LEAD_DAYS.get(task_kind(title), 21)
