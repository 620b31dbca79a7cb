"""A repeating reminder read from a person's words, wherever in the sentence they put the schedule:
"remind me every Sunday at 6pm to call Mum", "remind me to call Mum every Sunday at 6pm",
"remind me on weekdays at 7:30 to stretch", "remind me to pay rent on the first Monday of the month".

`read` gives a cron line and what to be reminded of, a question when the schedule is one these rules
cannot set ("every other week", "every Tuesday and Friday", "every day until Friday": set as a plain
weekly or daily reminder, it would be wrong in silence), or None when the sentence is no repeating
reminder at all. "Remind me on Friday to tell the cleaner to come every Tuesday" is a one-off on Friday:
the schedule is part of what to say, and the date is the reminder's own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from wilson.model.offline import dates
from wilson.kernel.lazy_regex import lazy_regex

WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
ORDINALS = {"first": "1-7", "second": "8-14", "third": "15-21", "fourth": "22-28"}
CAN_DO = (
    "every day, every morning or evening, on weekdays, every Monday (or any one day), on the first Monday "
    "of the month or the 15th of every month"
)

_WEEKDAY = "|".join(WEEKDAYS)
_DAY = (
    rf"(?P<unit>day|morning|afternoon|evening|night|weekday|month|{_WEEKDAY})s?"
    r"(?:\s+(?P<part>morning|afternoon|evening|night))?"
)
_OF_MONTH = r"(?:\s+of\s+(?:the|each|every)\s+month)?"
_SCHEDULE_RE = lazy_regex(
    rf"\b(?:(?:every|each)\s+(?:(?P<ord>first|second|third|fourth)\s+)?{_DAY}{_OF_MONTH}"
    rf"|(?:every|each)\s+(?P<mday>\d{{1,2}})(?:st|nd|rd|th){_OF_MONTH}"
    rf"|on\s+(?:the\s+)?(?P<ord2>first|second|third|fourth)\s+(?P<unit2>{_WEEKDAY})\s+of\s+(?:the|each|every)\s+month"
    rf"|on\s+(?P<plural>{_WEEKDAY}|weekday)s|(?P<daily>daily)(?=\s+at\b|\s*[.!]*$))\b",
    re.I,
)
_AT_RE = lazy_regex(
    r"\bat\s+(?:(?P<hour>\d{1,2})(?:[:.](?P<minute>\d{2}))?(?:\s*(?P<half>am|pm))?"
    r"|(?P<named>noon|midday|midnight))\b",
    re.I,
)
_BARE_TIME_RE = lazy_regex(r"[\s,]*(?P<hour>\d{1,2})(?:[:.](?P<minute>\d{2}))?\s*(?P<half>am|pm)\b", re.I)
# the day of the month in digits or in words, up to the 28th: "the 15th", "the first", "the first day of"
_NTH = (
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth "
    "fifteenth sixteenth seventeenth eighteenth nineteenth twentieth"
).split()
MONTH_DAY_WORDS = {word: n for n, word in enumerate(_NTH, start=1)} | {
    f"twenty-{word}": 20 + n for n, word in enumerate(_NTH[:8], start=1)
}
_MONTH_DAY_RE = lazy_regex(rf"\b(?:on\s+)?the\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)\b{_OF_MONTH}", re.I)
# in words only as a day of the month: "the first of every month", "the first day of the month" (not "the first
# Monday", "the first aid kit")
_DAY_WORDS = "|".join(sorted(MONTH_DAY_WORDS, key=len, reverse=True))
_MONTH_DAY_WORDS_RE = lazy_regex(
    rf"\b(?:on\s+)?the\s+(?P<word>{_DAY_WORDS})(?:\s+day)?\s+of\s+(?:the|each|every)\s+month\b", re.I
)
# schedule words these rules cannot set: "every other week", "every 2 hours", "twice a day", "monthly"
# ("every window", "each kid", "my monthly report" are none)
_UNREAD_RE = lazy_regex(
    r"\b(?:(?:every|each)\s+(?:other|\d+|few|last)\s+\w+|every\s+weekend|twice\s+(?:a|per)\s+\w+|"
    r"twice\s+daily|(?:weekly|fortnightly|monthly|yearly|annually)(?=\s+(?:at|on)\b|\s*[.!]*$))",
    re.I,
)
# more days right after the schedule: "every Tuesday and Friday", "every weekday except Friday"
_MORE_RE = lazy_regex(
    rf"^\s*(?:,|and|or|&|through|to|till|until|-|–|except|but not|apart from)\s*(?:on\s+)?"
    rf"(?:{_WEEKDAY}|weekend)s?\b",
    re.I,
)
# more weekdays said with the first: "every Wednesday and Saturday", "every Monday, Wednesday and Friday"
_AT_HOUR_IN_THE_RE = lazy_regex(
    r"\b(?P<at>at\s+\d{1,2}(?::\d\d)?)\s+in\s+the\s+(?P<part>morning|afternoon|evening)\b", re.I
)
_MORE_DAYS_RE = lazy_regex(rf"^(?:\s*(?:,|and|&)\s*(?:on\s+)?(?:{_WEEKDAY})s?\b)+", re.I)
_PLURAL_DAYS_RE = lazy_regex(rf"\b(?:{_WEEKDAY}|weekend)s\b", re.I)
_BOUND_RE = lazy_regex(
    r"\b(?:until|till|through|during|for\s+(?:a|one|two|three|\d+)\s+(?:day|week|month)s?|"
    r"in\s+(?:january|february|march|april|may|june|july|august|september|october|november|"
    r"december)|this\s+(?:week|month)|next\s+(?:week|month))\b",
    re.I,
)
_JUST_A_TIME_RE = lazy_regex(r"^(?:the\s+|at\s+)?\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm)?$", re.I)


@dataclass(frozen=True)
class Reading:
    """A repeating reminder: its cron and what to say; or `question`, when the schedule cannot be set."""

    cron: str = ""
    what: str = ""
    question: str = ""


def read(rest: str, now: datetime, tz) -> Reading | None:
    """What follows "remind me" → a Reading; None when it is no repeating reminder (a one-off, or none).
    'to call Mum every Sunday at 6pm' → Reading('0 18 * * 0', 'call Mum')."""
    # "at 7 in the morning" is 7 am: the part of the day is the hour's, not a day of its own
    rest = _AT_HOUR_IN_THE_RE.sub(
        lambda m: f"{m.group('at')} {'am' if m.group('part').lower() == 'morning' else 'pm'}", rest
    )
    yearly = _yearly(rest, now, tz)
    if yearly is not None:
        return yearly
    found, unread = _SCHEDULE_RE.search(rest), _UNREAD_RE.search(rest)
    said = unread or found
    if said is None:
        return None
    spans = [said.span()]
    monthly = found and (found.group("unit") or "").lower() == "month"
    day = (_MONTH_DAY_RE.search(rest) or _MONTH_DAY_WORDS_RE.search(rest)) if monthly else None
    if day:
        spans.append(day.span())  # "on the 15th of every month": the day is the schedule's
    more = _MORE_DAYS_RE.match(rest[said.end() :]) if found and found.group("unit") else None
    if more:  # "every Tuesday and Thursday": the second day is the schedule's too, no one-off
        spans.append((said.end(), said.end() + more.end()))
    left = _without(rest, spans)
    if _dated(left, now, tz) and said.start() > 0 and not _BOUND_RE.search(left):
        return None  # "on Friday … every Tuesday": a one-off, and the schedule is part of what to say
    if more and (found.group("unit") or "").lower() in WEEKDAYS and not unread and not _BOUND_RE.search(left):
        # "every Wednesday and Saturday": one schedule on those days
        days = [found.group("unit").lower(), *(d.lower() for d in re.findall(_WEEKDAY, more.group(0), re.I))]
        reading = _reading(rest[: said.end()] + rest[said.end() + more.end() :], found)
        if reading.question or "," in reading.cron:
            return reading
        numbers = ",".join(sorted({str((WEEKDAYS.index(d) + 1) % 7) for d in days}, key=int))
        return Reading(reading.cron.rsplit(" ", 1)[0] + " " + numbers, reading.what)
    if unread or _BOUND_RE.search(left) or _MORE_RE.match(rest[said.end() :]):
        return Reading(
            question=f"I can repeat a reminder {CAN_DO}, at one time of day and with no end date. "
            "Say it like one of those, e.g. “remind me every Sunday at 18:00 to call Mum”, "
            "or as two reminders."
        )
    return _reading(rest, found)


def _reading(rest: str, found: re.Match) -> Reading:
    unit = (found.group("unit") or found.group("unit2") or found.group("plural") or "day").lower()
    ordinal = (found.group("ord") or found.group("ord2") or "").lower()
    spans = [found.span()]
    days, weekday = "*", "*"
    month_day = found.group("mday")
    if unit == "month" and not month_day:
        day = _MONTH_DAY_RE.search(rest) or _MONTH_DAY_WORDS_RE.search(rest)
        if day is None:  # "every month" alone: which day is the user's to say, never every day
            return Reading(
                question="On which day of the month? Say e.g. “remind me on the 1st of every month to pay rent”."
            )
        month_day = day.groupdict().get("day") or str(MONTH_DAY_WORDS[day.group("word").lower()])
        spans.append(day.span())
    if month_day:
        if not 1 <= int(month_day) <= 28:
            return Reading(
                question="Not every month has a 29th, 30th or 31st, so I can't repeat a reminder on one. "
                "The 28th, or the 1st of the month?"
            )
        days = str(int(month_day))
    elif unit == "weekday":
        weekday = "1-5"
    elif unit in WEEKDAYS:
        days, weekday = ORDINALS.get(ordinal, "*"), str((WEEKDAYS.index(unit) + 1) % 7)
    part = (found.group("part") or unit).lower()
    hour, minute = dates.PART_OF_DAY_HOURS.get(part, 9), 0  # a day with no part said: 09:00
    spoken = _spoken(rest)
    at = None if spoken else _AT_RE.search(rest) or _BARE_TIME_RE.match(rest, found.end())  # not "the 7pm class"
    if spoken:  # "at half past 6": an hour of the 12-hour clock, as a bare hour is
        hour, minute = _clock(spoken.hour, spoken.minute, spoken.half, part, rest, as_written=False, said=spoken.said)
        spans.append((spoken.start, spoken.end))
    elif at:
        named = (at.groupdict().get("named") or "").lower()
        hour, minute = (
            (0 if named == "midnight" else 12, 0)
            if named
            else _clock(
                int(at.group("hour")),
                int(at.group("minute") or 0),
                (at.group("half") or "").lower(),
                part,
                rest,
                as_written=bool(at.group("minute")),
            )
        )
        spans.append(at.span())
    what = _without(rest, spans)
    if hour > 23 or minute > 59 or _PLURAL_DAYS_RE.search(what):
        return Reading(
            question=f"I can repeat a reminder {CAN_DO}, at one time of day. Say it like one of those, "
            "or as two reminders."
        )
    if not what:
        return Reading(
            question=f"What should I remind you of {found.group(0)}? Say e.g. “remind me {found.group(0)} to call Mum”."
        )
    return Reading(f"{minute} {hour} {days} * {weekday}", what)


# "every year on 2 March", "on 2 March every year", "each year on the 2nd of March"
_YEARLY_RE = lazy_regex(r"\b(?:every|each)\s+year\b|\b(?:yearly|annually)\b|\bjedes\s+jahr\b", re.I)


def _yearly(rest: str, now: datetime, tz) -> Reading | None:
    """A reminder every year on one day ("every year on 2 March remind me it's Paula's birthday"); None when the
    words say no year's day."""
    every = _YEARLY_RE.search(rest)
    if every is None:
        return None
    left = rest[: every.start()] + " " + rest[every.end() :]
    found = [f for f in dates.search(left, now, tz) if not _JUST_A_TIME_RE.match(f.phrase.strip())]
    if (
        len(found) != 1
        or not re.search(r"[^\W\d_]{3,}", found[0].phrase)
        or re.search(
            r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|\b(?:today|tomorrow|next|this)\b", found[0].phrase, re.I
        )
    ):
        return None  # a month's day is the year's; a weekday or "tomorrow" is no day of the year
    day = dates.local_date(found[0].value, tz)
    hour, minute = 9, 0
    at = _AT_RE.search(left)
    if at and at.group("hour"):
        hour, minute = _clock(
            int(at.group("hour")),
            int(at.group("minute") or 0),
            (at.group("half") or "").lower(),
            "day",
            left,
            as_written=bool(at.group("minute")),
        )
    what = _without(left, [(found[0].start, found[0].start + len(found[0].phrase)), *([at.span()] if at else [])])
    what = re.sub(r"^(?:on|the)\s+", "", what, flags=re.I).strip()
    if not what:
        return None
    return Reading(f"{minute} {hour} {day.day} {day.month} *", what)


def _dated(text: str, now: datetime, tz) -> bool:
    """A day named in what the schedule left: "tomorrow", "on Friday" (a time alone, "the 7pm class", is none)."""
    return any(
        not _JUST_A_TIME_RE.match(f.phrase.strip()) and not dates.SPOKEN_CLOCK_RE.fullmatch(f.phrase.strip())
        for f in dates.search(text, now, tz)
    )


def _spoken(text: str) -> dates.Clock | None:
    return next(filter(None, map(dates.spoken_clock, dates.SPOKEN_CLOCK_RE.finditer(text))), None)


def _clock(hour: int, minute: int, half: str, part: str, text: str, as_written: bool, said: int = 0) -> tuple[int, int]:
    """(hour, minute) on a 24-hour clock of a time said with the schedule's part of the day; `as_written`:
    minutes written in digits ("at 6:30"), which may be a 24-hour time; `said`: the hour as said, when not
    `hour` ("quarter to 7" is 6:45, in the morning as 7 is)."""
    if half == "am" and hour == 12 or not half and hour == 12 and part == "night":
        return 0, minute  # "12am", "every night at 12": midnight
    # "every evening at 6" is 18:00, and so is "every Monday at 6" or "at half past 6" (dates.bare_hour: nobody
    # means 06:00 unless the morning is said); "at 6:30" is as written
    said = said or hour
    later = (
        part == "afternoon"
        or part in ("evening", "night")
        and said >= 5
        or part not in ("morning", "night")
        and 1 <= said <= dates.LATER_UP_TO
        and not as_written
        and not dates.morning_said(text)
    )
    if hour < 12 and (half == "pm" or not half and later):
        hour += 12
    return hour, minute


def _without(text: str, spans: list[tuple[int, int]]) -> str:
    said = [c for i, c in enumerate(text) if not any(start <= i < end for start, end in spans)]  # spans may overlap
    text = " ".join("".join(said).split())
    text = re.sub(r"^(?:[:,\-–]\s*)?(?:to\s+|about\s+|of\s+(?:the\s+)?)?", "", text, flags=re.I)
    text = re.sub(r"\s+(?:on|at|and|,)$", "", text, flags=re.I)
    return re.sub(r"\s+([:,])", r"\1", text).strip(" ,:;.!-–")


_GERMAN_DAYS = {
    "montag": "monday",
    "dienstag": "tuesday",
    "mittwoch": "wednesday",
    "donnerstag": "thursday",
    "freitag": "friday",
    "samstag": "saturday",
    "sonnabend": "saturday",
    "sonntag": "sunday",
}
_GERMAN_NTH = {"ersten": "first", "zweiten": "second", "dritten": "third", "1.": "first", "15.": "15th"}
# "Erinner mich bitte jeden Donnerstag um 18 Uhr an die Biotonne", "jeden Ersten des Monats um 8 an die Miete
# erinnern", "jeden Morgen um 7 an die Tabletten erinnern"
_GERMAN_RE = lazy_regex(
    r"^\s*(?:(?:bitte\s+)?erinnere?\s+mich\s+(?:bitte\s+)?)?"
    r"(?:jeden|jede|jedes)\s+(?P<day>montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonnabend|sonntag|"
    r"morgen|abend|tag|werktag|(?P<nth>ersten|zweiten|dritten|\d{1,2}\.)\s+(?:des\s+)?monats?)"
    r"(?:\s+um\s+(?P<hour>\d{1,2})(?:[:.](?P<minute>\d{2}))?(?:\s*uhr)?)?"
    r"\s+an\s+(?P<what>.+?)(?:\s+erinnern)?(?:\s+bitte)?\s*[.!]*$",
    re.I,
)


def german(text: str) -> str | None:
    """A German repeating reminder said in English words for `read` ("jeden Donnerstag um 18 Uhr an die Biotonne" →
    "die Biotonne every thursday at 18:00"); None when the text is none."""
    found = _GERMAN_RE.match(text or "")
    if found is None:
        return None
    day = found.group("day").lower()
    nth = (found.group("nth") or "").lower()
    if nth:
        when = f"on the {_GERMAN_NTH.get(nth, nth.rstrip('.') + 'th')} of every month"
    else:
        when = "every " + {"morgen": "morning", "abend": "evening", "tag": "day", "werktag": "weekday"}.get(
            day, _GERMAN_DAYS.get(day, day)
        )
    if found.group("hour"):
        when += f" at {int(found.group('hour'))}:{found.group('minute') or '00'}"
    return f"{found.group('what')} {when}"
