"""Cron expressions in the user's timezone: the next firing across DST changes, and the builtin
schedules' crons from the settings.
"""

from __future__ import annotations

import threading
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter
from loguru import logger

from wilson.kernel.clock import UTC, as_utc

DST_SLACK = timedelta(hours=3)  # larger than any DST shift: look back over a repeated hour
PARSED_KEPT = 256  # parsed expressions (and last answers) kept per thread: the builtin schedules, the user's reminders

_parsed = threading.local()


# Cron ---------------------------------------------------------------------------


def _hour_is_wildcard(cron: str) -> bool:
    fields = cron.split()
    if len(fields) == 1:
        return fields[0].lower() == "@hourly"
    return len(fields) >= 5 and fields[1].startswith("*")


def _instants(naive: datetime, tz: ZoneInfo, both_folds: bool) -> list[datetime]:
    """The UTC moments a local wall time stands for.

    Ordinary: one. Skipped by spring-forward: one, as far after the gap (fold=0).
    Repeated by fall-back: the first only, unless the job runs every hour, in which
    case the repeated hour is a real hour and both count (as classic cron does).
    """
    first = naive.replace(tzinfo=tz, fold=0).astimezone(UTC)
    second = naive.replace(tzinfo=tz, fold=1).astimezone(UTC)
    if first == second:
        return [first]
    if first.astimezone(tz).replace(tzinfo=None) != naive:  # in a gap: the wall time never shows
        return [first]
    return [first, second] if both_folds else [first]


def _iterator(cron: str, day_or: bool) -> croniter:
    """`cron` parsed once per thread (croniter's parse costs more than a next firing, and the tick asks about the
    same few expressions all day); one per thread because finding the next firing moves the iterator."""
    kept = _parsed.__dict__.setdefault("by_expression", {})
    it = kept.get((cron, day_or))
    if it is None:
        if len(kept) >= PARSED_KEPT:
            kept.clear()
        it = kept[(cron, day_or)] = croniter(cron, datetime(2000, 1, 1, tzinfo=UTC), day_or=day_or)
    return it


def next_fire(cron: str, tz: ZoneInfo, after: datetime, *, day_or: bool = False) -> datetime:
    """The first moment strictly after `after` that `cron` names on the local wall clock (aware UTC).

    croniter runs on wall time with no zone (so it knows nothing of DST); the
    mapping to real moments is done here: 07:00 stays 07:00 on both sides of a
    change, is never skipped and never happens twice.

    `day_or=False` (the default here) means day-of-month AND day-of-week must both
    match when both are restricted: "0 9 1-7 * 1" is the first Monday of a month.
    """
    after = as_utc(after)
    # no firing lies between an earlier answer's `after` and its firing: any moment in between has the same next
    # one (the tick asks again at every look, a day's briefing cron from every look of that day)
    answers = _parsed.__dict__.setdefault("answers", {})
    key = (cron, tz, day_or)
    known = answers.get(key)
    if known is not None and known[0] <= after < known[1]:
        return known[1]
    quick = _next_away_from_changes(cron, tz, after, day_or)
    found = quick if quick is not None else next_fire_walked(cron, tz, after, day_or=day_or)
    if len(answers) >= PARSED_KEPT:
        answers.clear()
    answers[key] = (after, found)
    return found


def next_fire_walked(cron: str, tz: ZoneInfo, after: datetime, *, day_or: bool = False) -> datetime:
    """`next_fire` by walking the wall clock from DST_SLACK before `after` to DST_SLACK past the first firing:
    right across any offset change, and the reference the quick way is held to."""
    after = as_utc(after)
    local_after = after.astimezone(tz).replace(tzinfo=None)
    both = _hour_is_wildcard(cron)
    # croniter reads wall time through a fixed UTC tag: no zone, so no DST guesswork inside it.
    it = _iterator(cron, day_or)
    it.set_current((local_after - DST_SLACK).replace(tzinfo=UTC))
    best: datetime | None = None
    horizon: datetime | None = None
    while True:
        naive = it.get_next(datetime).replace(tzinfo=None)
        if horizon is not None and naive > horizon:
            return best
        for moment in _instants(naive, tz, both):
            if moment > after and (best is None or moment < best):
                best = moment
                if horizon is None:
                    horizon = naive + DST_SLACK


QUICK_SPAN = timedelta(days=2)  # no zone changes its offset twice within this: equal ends mean no change


def _next_away_from_changes(cron: str, tz: ZoneInfo, after: datetime, day_or: bool) -> datetime | None:
    """`next_fire` when no offset change lies near: the first wall time after `after`'s, read as the one
    moment it names. None when a change is within DST_SLACK of either end, or the next firing is far: the
    walk over the slack handles those. Every look of the tick (the RAS's every fifteen minutes) asks this;
    the walk took some twenty steps of croniter for it."""
    local_after = after.astimezone(tz).replace(tzinfo=None)
    it = _iterator(cron, day_or)
    naive = it.get_next(datetime, start_time=local_after.replace(tzinfo=UTC)).replace(tzinfo=None)
    if naive - local_after > QUICK_SPAN:
        return None
    moment = naive.replace(tzinfo=tz).astimezone(UTC)
    if (after - DST_SLACK).astimezone(tz).utcoffset() != (moment + DST_SLACK).astimezone(tz).utcoffset():
        return None
    return moment


def valid_cron(cron: str) -> bool:
    return bool(cron) and croniter.is_valid(cron)


def zone_of(name: str | None) -> ZoneInfo:
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        logger.warning("tick: unknown timezone {!r}; using UTC", name)
        return ZoneInfo("UTC")


def ras_cron(minutes: int) -> str:
    """A cron for "every N minutes"; whole hours use the hour field so 90 does not turn into :00 and :30."""
    minutes = max(1, int(minutes))
    if minutes < 60:
        return f"*/{minutes} * * * *"
    if minutes % 60 == 0 and minutes < 24 * 60:
        return f"0 */{minutes // 60} * * *"
    hours = min(23, minutes // 60)
    logger.warning("tick: ras interval {} min has no exact cron; using every {} h", minutes, hours)
    return f"0 */{hours} * * *"


def builtin_crons(config) -> dict[str, str]:
    return {
        "briefing": str(config.get("thalamus", "briefing") or "").strip(),
        "ras": ras_cron(config.get("ras", "interval_minutes")),
        "consolidate": str(config.get("hippocampus", "schedule") or "").strip(),
    }
