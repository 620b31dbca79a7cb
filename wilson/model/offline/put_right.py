"""A day put right right after a proposal: "sorry, Wednesday not Tuesday", "not Tuesday, Wednesday"; and a day asked
about after it: "and on Tuesday?", "und am Mittwoch?" (the Tuesday after the day proposed).

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


_GERMAN_WEEKDAYS = ("montag", "dienstag", "mittwoch", "donnerstag", "freitag", "samstag", "sonntag")
# "and on Tuesday?", "und am Mittwoch?": the same plan a few days on, so the weekday after the day proposed (a
# reminder for Monday next week asked "and on Wednesday?" means that week's Wednesday, not tomorrow). "and on
# Tuesday too?" adds a day rather than changing it: not this.
AND_ON_DAY_RE = lazy_regex(
    rf"^\s*(?:and|und)\s+(?:on\s+|am\s+)?(?P<day>{_DAY}|{'|'.join(_GERMAN_WEEKDAYS)}|sonnabend)\s*[?.!]*\s*$",
    re.I,
)


def day_after(items: list[dict], args: dict, request: str, tz, time_key) -> bool:
    """Moves the one timed item to the weekday said with "and on …?", the first one after its own day, at the same
    hour, in `args`; False when the words are not that or no one item has a day."""
    found = AND_ON_DAY_RE.match(request)
    if found is None:
        return False
    said = found.group("day").lower()
    new = _GERMAN_WEEKDAYS.index(said) if said in _GERMAN_WEEKDAYS else 5 if said == "sonnabend" else None
    new = _WEEKDAYS.index(said) if new is None else new
    timed = [(i, key) for i in items if (key := time_key(i, False)) in ("due", "at")]
    if len(timed) != 1:
        return False
    item, key = timed[0]
    when = dates.parse_moment(args[id(item)].get(key), tz)
    if when is None:
        return False
    ahead = (new - dates.local_date(when, tz).weekday() - 1) % 7 + 1
    args[id(item)][key] = dates.iso(when + timedelta(days=ahead))
    return True
