"""A repeating reminder read from a person's words, wherever in the sentence they put the schedule:
"remind me every Sunday at 6pm to call Mum", "remind me to call Mum every Sunday at 6pm",
"remind me on weekdays at 7:30 to stretch", "remind me to pay rent on the first Monday of the month".

`schedule` gives a cron line and what to be reminded of; `sounds_repeating` tells a schedule these rules
cannot read ("every other week") from a one-off, so that it is asked about instead of set once.
"""

from __future__ import annotations

import re

WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
ORDINALS = {"first": "1-7", "second": "8-14", "third": "15-21", "fourth": "22-28"}
DEFAULT_HOUR = {"morning": 9, "afternoon": 14, "evening": 18, "night": 21}  # anything else without a time: 09:00

_DAY = (r"(?P<unit>day|morning|afternoon|evening|night|weekday|month|" + "|".join(WEEKDAYS) + r")s?"
        r"(?:\s+(?P<part>morning|afternoon|evening|night))?")
_MONTH = r"(?:\s+of\s+(?:the|each|every)\s+month)?"
_SCHEDULE_RE = re.compile(
    rf"\b(?:(?:every|each)\s+(?:(?P<ord>first|second|third|fourth)\s+)?{_DAY}{_MONTH}"
    rf"|on\s+(?:the\s+)?(?P<ord2>first|second|third|fourth)\s+(?P<unit2>{'|'.join(WEEKDAYS)})\s+of\s+"
    rf"(?:the|each|every)\s+month"
    rf"|on\s+(?P<plural>{'|'.join(WEEKDAYS)}|weekday)s|(?P<daily>daily)(?=\s+at\b|\s*[.!]*$))\b", re.I)
_TIME_RE = re.compile(r"\b(?:at\s+(?P<hour>\d{1,2})(?:[:.](?P<minute>\d{2}))?(?:\s*(?P<half>am|pm))?"
                      r"|(?P<hour2>\d{1,2})(?:[:.](?P<minute2>\d{2}))?\s*(?P<half2>am|pm))\b", re.I)
_MONTH_DAY_RE = re.compile(r"\b(?:on\s+)?the\s+(?P<day>\d{1,2})(?:st|nd|rd|th)\b(?:\s+of\s+(?:the|each|every)\s+month)?",
                           re.I)
# "every window", "each kid" are no schedule; "every other week", "every 2 hours", "weekly" are, and unread
_REPEATING_RE = re.compile(r"\b(?:(?:every|each)\s+(?:other\s+|\d+\s+|few\s+|second\s+|third\s+)?"
                           r"(?:day|week|month|year|hour|minute|morning|evening|night|weekend|\w+day)s?|"
                           r"(?:daily|weekly|fortnightly|monthly|yearly|annually)(?=\s+(?:at|on)\b|\s*[.!]*$))\b",
                           re.I)  # "my daily vitamins" is no schedule


def schedule(rest: str) -> tuple[str, str] | None:
    """What follows "remind me" → (cron, what); None when it names no schedule these rules can read.
    'to call Mum every Sunday at 6pm' → ('0 18 * * 0', 'call Mum')."""
    found = _SCHEDULE_RE.search(rest)
    if not found:
        return None
    unit = (found.group("unit") or found.group("unit2") or found.group("plural") or "day").lower()
    ordinal = (found.group("ord") or found.group("ord2") or "").lower()
    spans = [found.span()]
    days, weekday = "*", "*"
    if unit == "weekday":
        weekday = "1-5"
    elif unit in WEEKDAYS:
        days, weekday = ORDINALS.get(ordinal, "*"), str((WEEKDAYS.index(unit) + 1) % 7)
    elif unit == "month":
        day = _MONTH_DAY_RE.search(rest)
        days = "1"
        if day:
            if not 1 <= int(day.group("day")) <= 28:
                return None  # a 30th would skip February in silence
            days = str(int(day.group("day")))
            spans.append(day.span())
    part = (found.group("part") or unit).lower()
    at = _TIME_RE.search(rest)
    hour, minute = _clock(at, part) if at else (DEFAULT_HOUR.get(part, 9), 0)
    if at:
        spans.append(at.span())
    if hour > 23 or minute > 59:
        return None
    what = _without(rest, spans)
    return (f"{minute} {hour} {days} * {weekday}", what) if what else None


def _clock(at: re.Match, part: str) -> tuple[int, int]:
    hour = int(at.group("hour") or at.group("hour2"))
    minute = int(at.group("minute") or at.group("minute2") or 0)
    half = (at.group("half") or at.group("half2") or "").lower()
    later = part == "afternoon" or part in ("evening", "night") and hour >= 5  # "every evening at 6" is 18:00
    if hour < 12 and (half == "pm" or not half and later):
        hour += 12
    elif half == "am" and hour == 12:
        hour = 0
    return hour, minute


def sounds_repeating(rest: str) -> bool:
    return bool(_REPEATING_RE.search(rest))


def _without(text: str, spans: list[tuple[int, int]]) -> str:
    said = [c for i, c in enumerate(text) if not any(start <= i < end for start, end in spans)]  # spans may overlap
    text = " ".join("".join(said).split())
    text = re.sub(r"^(?:[:,\-–]\s*)?(?:to\s+|about\s+)?", "", text, flags=re.I)
    text = re.sub(r"\s+(?:on|at|and|,)$", "", text, flags=re.I)
    return re.sub(r"\s+([:,])", r"\1", text).strip(" ,:;.!-–")
