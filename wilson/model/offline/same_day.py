"""A new, moved or cancelled event that starts within the next 24 hours, told to the user offline.

The RAS raises the alarm for it (urgency.judge_calendar); when no plan is made for it and no topic moves or
closes with it (a proposal would tell of that), the offline cortex passes the change on in a line, so the
user hears of it before it starts. The line names the day, not "today": quiet hours may hold it until the
next morning. The event's own name is said with it by the cortex, which names the source of others' text.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

from wilson.model.offline import dates
from wilson.model.offline.recognition import routine_meeting
from wilson.model.offline.urgency import same_day

AHEAD = timedelta(hours=24)  # an event starting this soon is told when it is new or changes


def soon(buffer: dict, now: datetime, tz) -> bool:
    """The event starts (or, before a move, started) within AHEAD and is not over, or it touches the rest of
    today."""
    if same_day(buffer, now, tz) is not None:
        return True
    previous = buffer.get("previous") if isinstance(buffer.get("previous"), dict) else {}
    # a concert tomorrow evening called off: told before the day, not only within 24 hours of it, since the day's
    # briefing lists what is on, and a cancelled event is simply not there (a move shows there at its new time; the
    # working week's meetings keep the 24 hours: their changes are the calendar's business)
    until = now + AHEAD
    if buffer.get("change") == "cancelled" and not routine_meeting(
        str(buffer.get("title") or ""), buffer.get("start"), buffer.get("end"), tz
    ):
        tomorrow = now.astimezone(tz).date() + timedelta(days=1)
        until = max(until, datetime.combine(tomorrow + timedelta(days=1), datetime.min.time(), tzinfo=tz))
    for start, end in ((buffer.get("start"), buffer.get("end")), (previous.get("start"), previous.get("end"))):
        begin = dates.parse_moment(start, tz)
        if begin is None:
            continue
        finish = dates.parse_moment(end, tz) or begin
        if dates.as_datetime(begin, tz) < until and dates.as_datetime(finish, tz) > now:
            return True
    return False


def told(buffer: dict, now: datetime, tz) -> str:
    """The heads-up for a new, moved or cancelled event starting (or, before the move, starting) within the
    next 24 hours or under way; "" for any other change."""
    change = buffer.get("change")
    if change not in ("new", "changed", "cancelled") or not soon(buffer, now, tz):
        return ""
    new = dates.parse_moment(buffer.get("start"), tz)
    old = dates.parse_moment((buffer.get("previous") or {}).get("start"), tz)
    # an all-day event is stored from local midnight: its day is what was said (each side by its own flag)
    if buffer.get("all_day") and new is not None:
        new = dates.local_date(new, tz)
    if (buffer.get("previous") or {}).get("all_day") and old is not None:
        old = dates.local_date(old, tz)
    if change == "cancelled":
        return f"Heads-up: it's cancelled (it was on {_when(new or old, tz)})."
    where = str(buffer.get("location") or "").strip()
    at = f", at {where[:80]}" if where else ""
    if change == "new":
        return f"Heads-up: new in your calendar for {_when(new, tz)}{at}." if new is not None else ""
    if new is not None and old is not None and new == old and type(new) is type(old):
        before = str((buffer.get("previous") or {}).get("location") or "").strip()
        if where and before and where != before:
            return f"Heads-up: it's now at {where[:80]} ({_when(new, tz)})."
    if new is None or old is None or (new == old and type(new) is type(old)):
        return ""
    if (
        isinstance(new, datetime)
        and isinstance(old, datetime)
        and dates.local_date(new, tz) == dates.local_date(old, tz)
    ):
        return (
            f"Heads-up: it moved from {old.astimezone(tz):%H:%M} to {new.astimezone(tz):%H:%M} on "
            f"{dates.fmt_day(dates.local_date(new, tz))}."
        )
    return f"Heads-up: it moved from {_when(old, tz)} to {_when(new, tz)}."


def _when(moment: date | datetime | None, tz) -> str:
    if moment is None:
        return "its time"
    if not isinstance(moment, datetime):
        return f"{dates.fmt_day(moment)}, all day"
    local = moment.astimezone(tz)
    return f"{dates.fmt_day(local.date())} at {local:%H:%M}"
