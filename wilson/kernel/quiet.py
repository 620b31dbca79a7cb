"""Quiet hours and mutes: when non-urgent surfacing has to wait.

The user's night ("22:00-07:00" in their timezone, config core.quiet_hours) and an
explicit mute ("/quiet 3h", stored as the Setting "quiet_until") both hold a
non-urgent message until a moment computed here. The cortex stores that moment in
Outbox.deliver_after; the tick releases the row when it has passed. Urgent items
never ask.

The pure function `quiet_until` works on wall-clock times in the user's zone and
hands back an aware UTC moment, so a window that crosses midnight or a DST change
ends at the local time the user expects (07:00 is 07:00 on both sides of a change).
"""

from __future__ import annotations

from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from wilson.kernel import timeparse
from wilson.kernel.clock import as_utc


def parse_window(quiet_hours: str | None) -> tuple[time, time] | None:
    """'22:00-07:00' -> (22:00, 07:00); None when quiet hours are switched off or empty ("all day" is
    what a mute is for)."""
    return timeparse.parse_window(quiet_hours, "quiet hours")


def _quiet_end(now: datetime, tz: ZoneInfo, window: tuple[time, time]) -> datetime | None:
    """When the quiet window containing `now` ends, or None when `now` is outside it."""
    start, end = window
    local = now.astimezone(tz)
    wall = local.time().replace(tzinfo=None)
    today = local.date()
    if start < end:  # e.g. 13:00-15:00, inside one day
        inside, end_day = start <= wall < end, today
    elif wall >= start:  # evening part of a window that crosses midnight
        inside, end_day = True, today + timedelta(days=1)
    else:  # morning part
        inside, end_day = wall < end, today
    if not inside:
        return None
    moment = timeparse.local_moment(end_day, end, tz)
    # A window end inside a spring-forward gap can map to before `now`; never end in the past.
    return moment if moment > now else None


def quiet_until(
    now: datetime, tz: ZoneInfo, quiet_hours: str = "22:00-07:00", muted_until: datetime | None = None
) -> datetime | None:
    """The aware UTC moment quiet ends when the user is in quiet hours or muted, else None.

    A mute that runs into the night, or a night that runs into a mute, is one quiet
    stretch: the answer is the end of all of it.
    """
    now = as_utc(now)
    window = parse_window(quiet_hours)
    mute_end = as_utc(muted_until) if muted_until is not None else None
    moment = now
    for _ in range(8):  # each round moves forward; a few rounds cover any chain of night and mute
        moved = False
        if mute_end is not None and mute_end > moment:
            moment, moved = mute_end, True
        if window is not None:
            end = _quiet_end(moment, tz, window)
            if end is not None:
                moment, moved = end, True
        if not moved:
            break
    return moment if moment > now else None
