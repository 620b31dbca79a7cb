"""A move or cancellation of an event that touches the rest of today, told to the user offline.

The RAS's same-day rule (urgency.same_day) raises the alarm for it; when no topic moves or closes with it
(a proposal would tell of that), the offline cortex passes the change on in a line. The line names the
day, not "today": quiet hours may hold it until the next morning. The event's own name is said with it
by the cortex, which names the source of others' text.
"""

from __future__ import annotations

from datetime import date, datetime

from wilson.model.offline import dates
from wilson.model.offline.urgency import same_day


def told(buffer: dict, now: datetime, tz) -> str:
    """The heads-up for a moved or cancelled event starting (or, before the move, starting) later today or
    under way; "" for any other change."""
    change = buffer.get("change")
    if change not in ("changed", "cancelled") or same_day(buffer, now, tz) is None:
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
    if new is None or old is None or (new == old and type(new) is type(old)):
        return ""
    if isinstance(new, datetime) and isinstance(old, datetime) and \
            dates.local_date(new, tz) == dates.local_date(old, tz):
        return (f"Heads-up: it moved from {old.astimezone(tz):%H:%M} to {new.astimezone(tz):%H:%M} on "
                f"{dates.fmt_day(dates.local_date(new, tz))}.")
    return f"Heads-up: it moved from {_when(old, tz)} to {_when(new, tz)}."


def _when(moment: date | datetime | None, tz) -> str:
    if moment is None:
        return "its time"
    if not isinstance(moment, datetime):
        return f"{dates.fmt_day(moment)}, all day"
    local = moment.astimezone(tz)
    return f"{dates.fmt_day(local.date())} at {local:%H:%M}"
