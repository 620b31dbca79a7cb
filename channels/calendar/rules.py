"""Bounding a recurrence rule's expansion before it runs.

A rule is judged by the steps it would take from DTSTART to the end of the window
(every second for a year, every minute since the year 1, INTERVAL=0 are refused), and
the rules that do run stop at the horizon's year and check the document's time budget.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time
from typing import TYPE_CHECKING

from dateutil import rrule as dateutil_rrule

from channels.calendar.event import UTC, one_line, raw_uid, uid_of

if TYPE_CHECKING:  # for annotations only: ics imports this module
    from channels.calendar.ics import ParseReport, _Budget

MAX_RULE_WORK = 200_000  # steps a rule may take from DTSTART to the horizon (every minute for a year is 525 600)
# Set by the parser on a component it cut, never read from the data (lines named X-WILSON-* are dropped).
REJECTED = "X-WILSON-REJECTED"

# The shortest length of one step of each frequency, so that steps counted from it are an upper bound.
STEP_SECONDS = {
    "SECONDLY": 1,
    "MINUTELY": 60,
    "HOURLY": 3600,
    "DAILY": 86400,
    "WEEKLY": 7 * 86400,
    "MONTHLY": 28 * 86400,
    "YEARLY": 365 * 86400,
}
_BY_PARTS = ("BYSECOND", "BYMINUTE", "BYHOUR", "BYDAY", "BYMONTHDAY", "BYYEARDAY", "BYWEEKNO", "BYMONTH")
# The values RFC 5545 allows (0 excluded where it is): anything else is a broken rule, not a sparse one.
_BY_RANGES = {
    "BYSECOND": (0, 60),
    "BYMINUTE": (0, 59),
    "BYHOUR": (0, 23),
    "BYMONTHDAY": (-31, 31),
    "BYYEARDAY": (-366, 366),
    "BYWEEKNO": (-53, 53),
    "BYMONTH": (1, 12),
    "BYSETPOS": (-366, 366),
}
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
    if isinstance(count, int) and count > 0 and not by and not rule.get("BYSETPOS"):
        steps = min(steps, count)  # every step is an occurrence, so COUNT stops it (a BYSETPOS may match none)
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


def bound_series(series, stop_year: int, budget: _Budget) -> None:
    recurrence = series.recurrence
    if getattr(recurrence, "has_core", False):
        recurrence.rrules = [
            _StoppingRule(rule, stop_year, budget) if isinstance(rule, dateutil_rrule.rrule) else rule
            for rule in recurrence.rrules
        ]


def guard_rules(calendar, name: str, query_end: datetime, report: ParseReport, budget: _Budget) -> None:
    """Leave out the series whose expansion would be absurd.

    A rule is judged before it runs, by the steps it would take from DTSTART to the end of the
    window: every second for a year, every minute since the year 1, INTERVAL=0. Series are left
    out whole (with their moved occurrences), named in the report, so that their known events
    are kept as they were rather than read as deleted.
    """
    cap = query_end.astimezone(UTC)
    bad: dict[str, str] = {}  # uid -> problem
    bad_ids: set[int] = set()  # components without a UID are left out alone
    single: dict[str, str] = {}  # uid -> why: a series every second or minute is kept as its first event
    single_ids: set[int] = set()
    for index, component in enumerate(calendar.walk("VEVENT")):
        if index % 256 == 0:
            budget.check()
        problem = component.get(REJECTED)
        if problem is None:
            try:
                problem = _rule_problem(component, cap)
            except Exception:  # a broken property: the expansion skips the series as unreadable
                problem = None
            if isinstance(problem, _TooFast) and component.get("RECURRENCE-ID") is None:
                uid = raw_uid(component)
                if uid:
                    single.setdefault(uid, str(problem))
                else:
                    single_ids.add(id(component))
                continue
        if problem is not None:
            problem = one_line(problem[0] if isinstance(problem, list) else problem, 120)
            uid = raw_uid(component)
            if uid:
                bad.setdefault(uid, problem)
            else:
                bad_ids.add(id(component))
                report.notes.append(f"{name}: left out an event without a UID: {problem}")
    _keep_single(calendar, name, single, single_ids, report)
    if not bad and not bad_ids:
        return
    for sub in [calendar, *calendar.walk()]:
        sub.subcomponents = [
            c for c in sub.subcomponents if not (c.name == "VEVENT" and (id(c) in bad_ids or raw_uid(c) in bad))
        ]
    for uid, problem in bad.items():
        report.skipped_uids.add(uid_of(uid))
        report.notes.append(f"{name}: left out the event {one_line(uid, 60)!r}: {problem}")


class _TooFast(str):
    """A rule every second or minute: a reminder ticking, not a calendar; its event is kept once."""


def _keep_single(calendar, name: str, single: dict[str, str], single_ids: set[int], report: ParseReport) -> None:
    """Series that repeat every second or minute become their first event alone (their moved occurrences go
    with the rule), each with a note: an event the user wrote is not lost because its rule is absurd."""
    if not single and not single_ids:
        return
    for sub in [calendar, *calendar.walk()]:
        sub.subcomponents = [
            c
            for c in sub.subcomponents
            if not (c.name == "VEVENT" and raw_uid(c) in single and c.get("RECURRENCE-ID") is not None)
        ]
    for component in calendar.walk("VEVENT"):
        if raw_uid(component) in single or id(component) in single_ids:
            for prop in ("RRULE", "RDATE", "EXDATE"):
                component.pop(prop, None)
    for uid, problem in single.items():
        report.skipped_uids.add(uid_of(uid))  # what an earlier read expanded of it is not read as deleted
        report.notes.append(
            f"{name}: the event {one_line(uid, 60)!r} repeats too often ({problem}): kept as a "
            "single event at its first time"
        )
    if single_ids:
        report.notes.append(
            f"{name}: {len(single_ids)} event(s) without a UID repeat too often: kept as single "
            "events at their first time"
        )


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
            if until is not None and not any(rule.get(part) for part in (*_BY_PARTS, "BYSETPOS")):
                # dateutil honours UNTIL only on a match: with no filter every step is one (BYSETPOS is a
                # filter too: a position its set never has matches nothing, every second until the horizon)
                end = min(_naive_utc(until), end)
            work = _rule_work(rule, start, end)
        except (ValueError, TypeError, OverflowError) as exc:
            return f"RRULE {one_line(exc, 80)}"
        if work > MAX_RULE_WORK:
            freq = str((rule.get("FREQ") or [""])[0]).lower()
            problem = f"a {freq} rule from {dtstart:%Y-%m-%d} needs {work:,} steps to reach the horizon"
            return _TooFast(problem) if freq in ("secondly", "minutely") else problem
    return None
