"""A day put right right after a proposal: "sorry, Wednesday not Tuesday", "not Tuesday, Wednesday".

The day it is not is the proposal's own, so the change is read against it: the Wednesday of the same week as the
Tuesday proposed, at the same hour, not the next Wednesday from today (wilson/model/offline/follow_ups.py passes the
words on whole; wilson/model/offline/answers.py modify applies them).
"""

from __future__ import annotations

import re
from datetime import timedelta

from wilson.model.offline import dates
from wilson.kernel.lazy_regex import lazy_regex

_DAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
INSTEAD_OF_DAY_RE = lazy_regex(
    rf"\b(?P<new>{_DAY})\s*,?\s*(?:and\s+|but\s+)?not\s+(?:on\s+)?(?P<old>{_DAY})\b|"
    rf"\bnot\s+(?:on\s+)?(?P<old2>{_DAY})\s*,?\s*(?:but\s+)?(?:on\s+)?(?P<new2>{_DAY})\b",
    re.I,
)
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def day_put_right(items: list[dict], args: dict, request: str, tz, time_key) -> bool:
    """Moves the one timed item (`time_key(item, False)` names where it keeps its time) from the day said it is
    not to the day said, within its week, in `args`; False when the words put no day right or no one item fits."""
    found = INSTEAD_OF_DAY_RE.search(request)
    if found is None:
        return False
    new = _WEEKDAYS.index((found.group("new") or found.group("new2")).lower())
    old = _WEEKDAYS.index((found.group("old") or found.group("old2")).lower())
    timed = [(i, key) for i in items if (key := time_key(i, False)) in ("due", "at")]
    if len(timed) != 1:
        return False
    item, key = timed[0]
    when = dates.parse_moment(args[id(item)].get(key), tz)
    if when is None or dates.local_date(when, tz).weekday() != old:
        return False
    args[id(item)][key] = dates.iso(when + timedelta(days=new - old))
    return True
