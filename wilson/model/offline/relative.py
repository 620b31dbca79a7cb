"""A time said relative to the one just proposed: "an hour earlier", "the day after", "same time next week", "make it
the morning", "30 minutes later", "a day before", "eine Stunde später". Read against the moment it changes, never
against now: "the day after" a reminder on Friday is Saturday.

Pure: `relative_change(text)` reads the words alone (None when they say no such change), and `moved(change, old, tz)`
applies one to a moment (None when it cannot: an hour earlier than a day with no hour).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from wilson.model.offline.dates import PART_OF_DAY_HOURS
from wilson.kernel.lazy_regex import lazy_regex
from wilson.model.offline.words import NUMBER_WORDS

_UNIT = {
    "min": timedelta(minutes=1),
    "hour": timedelta(hours=1),
    "hr": timedelta(hours=1),
    "day": timedelta(days=1),
    "week": timedelta(days=7),
    "minute": timedelta(minutes=1),
    "stunde": timedelta(hours=1),
    "tag": timedelta(days=1),
    "woche": timedelta(days=7),
}
_EARLIER = {"earlier", "before", "sooner", "forward", "ahead", "up", "früher", "vorher", "eher"}

# words around a change that say nothing of it: "actually, make it an hour earlier please"
_AROUND = lazy_regex(
    r"^(?:(?:and|or|but|actually|hmm+|oh|ok|okay|well|wait|sorry|no|nah|maybe|rather|better|then|please|pls|"
    r"(?:can|could) (?:you|we)|let'?s|how about|what about|make it|make that|do it|do|say|move it|push it|"
    r"change it to|put it|set it|lieber|doch|besser|mach(?:e)? es|bitte)\s+)*",
    re.I,
)
_AFTER = lazy_regex(
    r"(?:\s+(?:instead|then|please|pls|maybe|rather|bitte|works(?: better)?|is better|would be better|"
    r"(?:would )?suits? me(?: better)?|is fine|thanks|instead please))*$",
    re.I,
)
# "an hour earlier", "30 minutes later", "a day before", "2 days sooner", "by a week later", "eine Stunde später"
# "back an hour", "forward by two days": back is later, forward earlier
_BACK = lazy_regex(
    r"^(?P<way>back|forward|ahead)\s+(?:by\s+)?(?P<n>\d{1,3}|half an?|an?|one|two|three|four|five|six|seven)\s+"
    r"(?P<unit>min(?:ute)?s?|hours?|hrs?|days?|weeks?)$",
    re.I,
)
_BY = lazy_regex(
    r"^(?:by\s+|um\s+)?(?P<n>\d{1,3}|half an?|a couple of|couple of|a few|few|[a-z-]+)\s+"
    r"(?P<unit>min(?:ute)?s?|hours?|hrs?|days?|weeks?|stunden?|minuten?|tage?n?|wochen?)\s+"
    r"(?P<way>earlier|later|before|after|sooner|forward|back|früher|später|eher|danach|vorher)$",
    re.I,
)
_PUT_OFF = lazy_regex(
    r"^(?:(?:actually|ok|okay|well|then|maybe|please|can you|could you)\s+)*(?:push|postpone|delay|put off|shift)\s+"
    r"(?:it|that|this)\s+(?:back\s+)?(?:off\s+)?(?P<by>by\s+)?(?=(?:\d{1,3}|half an?|an?|one|two|three|four|five|six|"
    r"seven)\s+(?:min|hour|hr|day|week))",
    re.I,
)
# "the day after", "the next day", "the following week", "the day before that", "am Tag danach", "einen Tag später"
_NEXT = lazy_regex(
    r"^(?:on\s+)?(?:the\s+)?(?:(?P<after>day|week)\s+(?:after|later)|(?:next|following)\s+(?P<next>day|week)|"
    r"(?P<before>day|week)\s+before|(?:am\s+)?(?P<de>tag|woche)\s+(?P<de_way>danach|davor|vorher))"
    r"(?:\s+that)?$",
    re.I,
)
# "same time next week", "next week same time", "same time tomorrow", "same time the day after", "gleiche Zeit
# nächste Woche"
_SAME_TIME = lazy_regex(
    r"^(?:(?:at\s+)?(?:the\s+)?same\s+time(?:\s+but)?\s+(?P<a>.+)|(?P<b>.+?),?\s+(?:at\s+)?(?:the\s+)?same\s+time|"
    r"(?:zur\s+)?(?:gleichen|selben)\s+zeit\s+(?P<c>.+))$",
    re.I,
)
_SAME_WHEN = {
    "next week": timedelta(days=7),
    "a week later": timedelta(days=7),
    "the week after": timedelta(days=7),
    "the following week": timedelta(days=7),
    "tomorrow": timedelta(days=1),
    "the day after": timedelta(days=1),
    "the next day": timedelta(days=1),
    "the following day": timedelta(days=1),
    "nächste woche": timedelta(days=7),
    "in einer woche": timedelta(days=7),
    "am tag danach": timedelta(days=1),
}
# "make it the morning", "in the afternoon", "evening instead": the day stays, the hour is the part's
_PART = lazy_regex(
    r"^(?:to\s+|for\s+)?(?:in\s+the\s+|the\s+|at\s+|am\s+)?(?P<part>morning|afternoon|evening|lunchtime|lunch|night|"
    r"vormittag|nachmittag|abend|mittag)$",
    re.I,
)
_GERMAN_PART = {"vormittag": "morning", "nachmittag": "afternoon", "abend": "evening", "mittag": "lunch"}


_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_GERMAN_WEEKDAYS = ("montag", "dienstag", "mittwoch", "donnerstag", "freitag", "samstag", "sonntag")
# "same time but tuesdays", "same time on thursday", "gleiche Zeit am Freitag": the hour kept, the day changed
_SAME_TIME_DAY = lazy_regex(
    r"^(?:(?:at\s+)?(?:the\s+)?same\s+time|(?:zur\s+)?(?:gleichen|selben)\s+zeit)(?:\s+but)?\s+(?:on\s+|am\s+)?"
    r"(?P<day>(?:mon|tues|wednes|thurs|fri|satur|sun)day|montag|dienstag|mittwoch|donnerstag|freitag|samstag|"
    r"sonntag)s?(?:\s+instead)?$",
    re.I,
)


@dataclass(frozen=True)
class Change:
    """A relative change: moved by `by` (a day or a week moves a day-only moment too), to the part of the day
    `part` on the same day, or to the weekday `weekday` (0 Monday) at the same time."""

    by: timedelta = timedelta(0)
    part: str | None = None
    weekday: int | None = None


def relative_change(text: str) -> Change | None:
    """The change the words say relative to a proposed time; None when they say something else."""
    said = " ".join(re.sub(r"[!?,;]|\.(?!\d)", " ", text.lower().replace("’", "'")).split())
    # "push it a week", "postpone it by two days": put off, so later
    said = _PUT_OFF.sub(lambda m: f"back {m.group('by') or ''}", said)
    said = _AFTER.sub("", _AROUND.sub("", said)).strip()
    found = _BY.match(said)
    n_said = found.group("n") if found else ""
    n = 0.5 if n_said.startswith("half") else int(n_said) if n_said.isdigit() else NUMBER_WORDS.get(n_said)
    if found and n is not None:  # not "the day after", read below
        unit = found.group("unit")
        step = next(length for name, length in _UNIT.items() if unit.startswith(name))
        return Change(by=-step * n if found.group("way") in _EARLIER else step * n)
    found = _BACK.match(said)
    if found:
        n_said = found.group("n").lower()
        n = 0.5 if n_said.startswith("half") else int(n_said) if n_said.isdigit() else NUMBER_WORDS.get(n_said, 1)
        step = next(length for name, length in _UNIT.items() if found.group("unit").lower().startswith(name))
        return Change(by=step * n if found.group("way").lower() == "back" else -step * n)
    found = _NEXT.match(said)
    if found:
        unit = found.group("after") or found.group("next") or found.group("before") or found.group("de")
        step = timedelta(days=7 if unit in ("week", "woche") else 1)
        back = found.group("before") or found.group("de_way") in ("davor", "vorher")
        return Change(by=-step if back else step)
    found = _SAME_TIME_DAY.match(said)
    if found:
        day = found.group("day").lower()
        return Change(weekday=(_WEEKDAYS if day in _WEEKDAYS else _GERMAN_WEEKDAYS).index(day))
    found = _SAME_TIME.match(said)
    if found:
        when = (found.group("a") or found.group("b") or found.group("c") or "").strip()
        by = _SAME_WHEN.get(when)
        return Change(by=by) if by else None
    found = _PART.match(said)
    if found:
        part = found.group("part")
        return Change(part=_GERMAN_PART.get(part, part))
    return None


def moved(change: Change, old: date | datetime, tz) -> date | datetime | None:
    """The moment `old` with the change applied; None when the change needs an hour the moment does not have."""
    if change.weekday is not None:  # the next such day after the one it was on, at its time
        day = old.astimezone(tz).date() if isinstance(old, datetime) else old
        ahead = (change.weekday - day.weekday()) % 7 or 7
        return moved(Change(by=timedelta(days=ahead)), old, tz)
    if change.part is not None:
        day = old.astimezone(tz).date() if isinstance(old, datetime) else old
        return datetime.combine(day, time(PART_OF_DAY_HOURS[change.part]), tzinfo=tz)
    if isinstance(old, datetime):
        # wall-clock arithmetic: "same time next week" stays at 17:00 across a change of the clocks
        local = old.astimezone(tz).replace(tzinfo=None) + change.by
        return local.replace(tzinfo=tz)
    if change.by % timedelta(days=1):
        return None  # "an hour earlier" than a day without its hour
    return old + change.by


def on_weekday(cron: str, change: Change) -> str | None:
    """A weekly schedule ("0 7 * * 1") moved to the change's weekday ("same time but tuesdays"); None otherwise."""
    found = re.fullmatch(r"(\d{1,2} \d{1,2} \* \*) [0-6]", cron or "")
    if change.weekday is None or found is None:
        return None
    return f"{found.group(1)} {(change.weekday + 1) % 7}"
