"""Dates as people write them, read in the user's timezone and resolved forward in time.

ISO dates from machines are read exactly; everything a person writes ("next Tuesday",
"the 25th", "by Friday", "in two weeks", "tomorrow at 3pm", "12 Jan") goes through
`dateparser`, with the user's local "now" as its base and future dates preferred. The
only words read here are the few it lacks: "end of March", "beginning of next month",
"in 2 hours", a part of the day ("this evening") and a bare hour ("at 5").

Size: one reading in several passes (ISO, spans of time, month edges, ordinals, the parser,
parts of the day, bare hours) over one text, each masking what the others took; split, every
pass would need the others' spans and the same `Found`.
"""

from __future__ import annotations

import calendar
import itertools
import re
import threading
from dataclasses import dataclass, replace
from datetime import date, datetime, time, timedelta, timezone
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from wilson.kernel.timeparse import date_or_datetime
from wilson.model.offline.date_words import could_hold_date
from wilson.model.offline.words import NUMBER_WORDS
from wilson.kernel.lazy_regex import lazy_regex

UTC = timezone.utc
LANGUAGES = ["en", "de", "fr", "es"]
_LANGUAGES_KEY = tuple(LANGUAGES)

ISO_RE = lazy_regex(
    r"\b(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ](\d{1,2}):(\d{2})(?::\d{2}(?:\.\d+)?)?"
    r"(Z|[+-]\d{2}:?\d{2})?)?"
)
_MONTH_NAMES = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
_MONTH_NAMES.update({m.lower(): i for i, m in enumerate(calendar.month_abbr) if m})
_EDGE_RE = lazy_regex(
    r"\b(end|beginning|start)\s+of\s+(?:the\s+)?(?:(next|this)\s+)?(month|"
    + "|".join(sorted(_MONTH_NAMES, key=len, reverse=True))
    + r")\b",
    re.I,
)
# A phrase is a date only when it names a day: a number, a weekday or a relative word.
# "March 2027 was busy" and "I may" are not deadlines.
_DAYLIKE_RE = lazy_regex(
    r"\d|\b(today|tonight|tomorrow|yesterday|monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday|mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun|week|weeks|fortnight|"
    r"day|days|month|months|weekend|heute|morgen|übermorgen|demain|aujourd'hui|mañana|hoy|"
    # German days: "bis Freitag" in a letter is as much a date as "by Friday"
    r"montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonnabend|sonntag|woche|wochen|wochenende)\b",
    re.I,
)
_TIME_RE = lazy_regex(
    r"\d\s*(?:am|pm|a\.m\.|p\.m\.|h\b|uhr)|\d{1,2}:\d{2}|\bat\s+\d{1,2}\b"
    r"|\b(tonight|noon|midnight)\b",
    re.I,
)
_NOT_DATES = lazy_regex(
    r"^(?:now|second|sec|min|mins|minute|may|march|sun|sat|mon|wed|date|day|week|month|"
    r"\d+(?:\.\d+)?)$",
    re.I,
)
_ORDINAL_ONLY = lazy_regex(r"^(?:on\s+|by\s+|the\s+)*(\d{1,2})(st|nd|rd|th)?$", re.I)
_STRIP_LEAD = lazy_regex(r"^(?:on|by|before|until|till|at|for|in|from|the|due|next to)\s+", re.I)
# "at 9": dateparser reads a bare number as a day of the month (or keeps the current time), so the hour
# is read here, and so is "at 6 a.m.", which the parser takes for 00:00. Not "at 9am", "at 9:30", "at 9.30",
# "at 10%", "at 3 days".
_BARE_HOUR_RE = lazy_regex(
    r"\b(?:at|um)\s+(?P<hour>\d{1,2})(?:\s*o'?clock)?(?![\d:]|\.\d|\s*(?:am\b|pm\b|"
    r"h\b|uhr\b|%|st\b|nd\b|rd\b|th\b|min|hour|hrs?\b|days?\b|weeks?\b|months?\b|"
    r"years?\b|percent))(?:\s*(?P<half>a\.m\.|p\.m\.))?",
    re.I,
)
# "half past 5", "quarter to 6", "at half 5" (5:30, as said in Britain): an hour of the 12-hour clock like a bare
# hour's, and read as one (bare_hour); the parser reads none of them
# Without "at" it is a time only where it stands as one, not a name ("the quarter past 7 train").
SPOKEN_CLOCK_RE = lazy_regex(
    r"\b(?P<at>at\s+)?(?:(?P<part>quarter|half)\s+(?P<rel>past|to)\s+(?P<hour>\d{1,2})"
    r"|at\s+half\s+(?P<british>\d{1,2}))(?:\s*o'?clock)?"
    r"(?!\s*(?:[\d:%]|an?\b(?!\.m\.)|hours?\b))"
    r"(?:\s*(?P<half>am\b|pm\b|a\.m\.|p\.m\.))?"
    r"(?(at)|(?=\s*(?:$|[,;.!?]|(?:to|on|at|in|by|this|tomorrow|today|tonight|and|every|each|"
    r"please)\b)))",
    re.I,
)
# what makes "at 8" mean the evening; without it an hour from 7 to 11 is the morning's
_EVENING_RE = lazy_regex(
    r"\b(evening|tonight|night|dinner|after work|bed|bedtime|p\.?m\.?|abends?|nachmittags?|heute\s+nacht)\b", re.I
)
# and what makes "at 5" mean the morning; without it an hour up to LATER_UP_TO is the afternoon's or evening's
_MORNING_RE = lazy_regex(r"\b(morning|breakfast|wake|wakes|waking|woke|dawn|sunrise|a\.m\.)(?!\w)", re.I)
LATER_UP_TO = 6
# the part of the day said beside the hour belongs to the phrase: "at 8 this evening"
_DAYPART = r"(?:(?:this|in the|tomorrow)\s+(?:morning|afternoon|evening|night)|tonight)"
_DAYPART_AFTER = lazy_regex(rf"^[\s,]*{_DAYPART}\b", re.I)
_DAYPART_BEFORE = lazy_regex(rf"\b{_DAYPART}[\s,]*$", re.I)
# a part of the day with no time written is its usual hour, for a one-off reminder as for a repeating one
PART_OF_DAY_HOURS = {"morning": 9, "lunchtime": 12, "lunch": 12, "afternoon": 14, "evening": 18, "night": 21}
_PART_RE = lazy_regex(r"\b(morning|lunchtime|lunch|afternoon|evening|night)\b", re.I)
# an hour said right before a part of the day ("at 6 in the morning", "half past 5 in the morning") is read with it
_HOUR_BEFORE_RE = lazy_regex(r"\b(?:at|past|to|at half)\s+\d{1,2}(?:\s*o'?clock)?[\s,]*$", re.I)
# the part said without a day ("this evening", "in the morning", "at lunchtime"), or apart from one
# ("tomorrow in the evening"): the parser reads neither
_PART_ALONE_RE = lazy_regex(
    r"\b(?:(?P<this>this)|in the|at)\s+(?P<part>morning|lunchtime|lunch|afternoon|evening)\b", re.I
)


def zone(name) -> ZoneInfo:
    if isinstance(name, ZoneInfo):
        return name
    try:
        return ZoneInfo(str(name or "UTC"))
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def parse_moment(value, tz: ZoneInfo) -> date | datetime | None:
    """An ISO date (kept as a date) or datetime (made aware, naive read in `tz`)."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=tz)
    if isinstance(value, date):
        return value
    if not isinstance(value, str) or not value.strip():
        return None
    value = value.strip()
    try:
        moment = date_or_datetime(value)
    except ValueError:
        return None
    if not isinstance(moment, datetime):
        return moment
    return moment if moment.tzinfo else moment.replace(tzinfo=tz)


def now_of(value) -> datetime:
    moment = parse_moment(value, ZoneInfo("UTC")) if value else None
    if isinstance(moment, datetime):
        return moment
    if isinstance(moment, date):
        return as_datetime(moment, ZoneInfo("UTC"))
    return datetime(1970, 1, 1, tzinfo=UTC)  # no "now" given: nothing will look imminent


def local_date(moment: date | datetime, tz: ZoneInfo) -> date:
    return moment.astimezone(tz).date() if isinstance(moment, datetime) else moment


def as_datetime(moment: date | datetime, tz: ZoneInfo) -> datetime:
    if isinstance(moment, datetime):
        return moment
    return datetime.combine(moment, time(0), tzinfo=tz)


def fmt_day(day: date) -> str:
    return f"{day:%a} {day.day} {day:%b}"


def fmt_moment(moment: date | datetime, tz: ZoneInfo) -> str:
    if isinstance(moment, datetime):
        local = moment.astimezone(tz)
        return f"{fmt_day(local.date())} {local.year} {local:%H:%M}"
    return f"{fmt_day(moment)} {moment.year}"


def iso(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    return str(value)


@dataclass(frozen=True)
class Found:
    """One date phrase in a text: what was written and what it means."""

    phrase: str
    value: date | datetime  # a date when no time of day was written
    start: int = 0
    reading: str = ""  # how an ambiguous part was taken ("9 as 09:00, the morning"), said with it

    def stated(self, tz: ZoneInfo) -> str:
        """“the 25th → Mon 25 Jan”: how the phrase was read, for the proposal to show."""
        shown = fmt_moment(self.value, tz) if isinstance(self.value, datetime) else fmt_day(self.value)
        return f"“{self.phrase}” → {shown}" + (f" ({self.reading})" if self.reading else "")


_PATCHING = threading.Lock()


@lru_cache(maxsize=1)
def _parser():
    # lazy: dateparser takes a moment to import and to load its languages: only when a date must be read
    import dateparser
    from dateparser.languages.loader import LocaleDataLoader

    # dateparser.search builds its searcher on import with every one of its 200 locales (some 5 MiB held
    # for good); only LANGUAGES are ever searched in, so only they are loaded
    with _PATCHING:  # two threads' first dates at once: one patches and restores at a time
        every_locale = LocaleDataLoader.get_locale_map
        LocaleDataLoader.get_locale_map = lambda self, languages=None, **kw: every_locale(  # type: ignore[method-assign]
            self, languages=languages or LANGUAGES, **kw
        )
        try:
            # lazy: as dateparser above, and imported while the loader is narrowed
            from dateparser.search import search_dates
        finally:
            LocaleDataLoader.get_locale_map = every_locale  # type: ignore[method-assign]
    return dateparser, search_dates


def _settings(now: datetime, tz: ZoneInfo, order: str) -> dict:
    return {
        "PREFER_DATES_FROM": "future",
        "RELATIVE_BASE": now.astimezone(tz).replace(tzinfo=None),
        "RETURN_AS_TIMEZONE_AWARE": False,
        "PREFER_DAY_OF_MONTH": "first",
        "DATE_ORDER": order,
        "REQUIRE_PARTS": [],
    }


def date_order(tz: ZoneInfo) -> str:
    """Month first where people write it so (the US), day first elsewhere."""
    return "MDY" if str(getattr(tz, "key", tz)).startswith(("America/", "US/")) else "DMY"


def _edge(match: re.Match, now: datetime, tz: ZoneInfo) -> date | None:
    which, rel, what = match.group(1).lower(), (match.group(2) or "").lower(), match.group(3).lower()
    today = now.astimezone(tz).date()
    if what == "month":
        year, month = today.year, today.month
        if rel == "next":
            year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    else:
        month = _MONTH_NAMES[what]
        year = today.year if month >= today.month else today.year + 1
    day = calendar.monthrange(year, month)[1] if which == "end" else 1
    found = date(year, month, day)
    return found if found >= today else None


# made once, as the module's other patterns: every date phrase found is read with these
_YEAR_OR_TODAY_RE = lazy_regex(r"\d{4}|\b(?:today|heute)\b", re.I)
_TONIGHT_RE = lazy_regex(r"\btonight\b", re.I)
_DIGIT_RE = lazy_regex(r"\d")
_FOUR_DIGITS_RE = lazy_regex(r"\d{4}")


def _to_value(phrase: str, parsed: datetime, now: datetime, tz: ZoneInfo) -> date | datetime | None:
    if _TIME_RE.search(phrase):
        local = parsed.replace(tzinfo=tz)
        if local <= now and not _YEAR_OR_TODAY_RE.search(phrase):
            # a time alone that has passed today means tomorrow
            local = (datetime.combine(parsed.date() + timedelta(days=1), parsed.time())).replace(tzinfo=tz)
        if _TONIGHT_RE.search(phrase) and not _DIGIT_RE.search(phrase):
            local = local.replace(hour=20, minute=0)
        return local
    part = _PART_RE.search(phrase)  # "Friday evening": the parser keeps the day and drops the evening
    if part:
        return datetime.combine(parsed.date(), time(PART_OF_DAY_HOURS[part.group(1).lower()]), tzinfo=tz)
    today = now.astimezone(tz).date()
    if not _FOUR_DIGITS_RE.search(phrase) and parsed.date() == _a_year_after(today):
        return today  # "on 19 March" said on 19 March is today, not next year's (the parser wants the day ahead)
    return parsed.date()


def _a_year_after(day: date) -> date:
    return day.replace(year=day.year + 1) if (day.month, day.day) != (2, 29) else date(day.year + 1, 3, 1)


def _ordinal(phrase: str, now: datetime, tz: ZoneInfo) -> date | None:
    """“the 25th”: the next 25th, this month or the next one that has it."""
    found = _ORDINAL_ONLY.match(phrase.strip())
    if not found or not (found.group(2) or phrase.lower().startswith("the")):
        return None
    day, today = int(found.group(1)), now.astimezone(tz).date()
    if day < 1:
        return None  # "the 0th" names no day
    year, month = today.year, today.month
    for _ in range(13):
        if day <= calendar.monthrange(year, month)[1] and date(year, month, day) >= today:
            return date(year, month, day)
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return None


def resolve(phrase: str, now: datetime, tz: ZoneInfo) -> date | datetime | None:
    """One date phrase → a date (no time written) or an aware local datetime, on or after today."""
    phrase = " ".join((phrase or "").split())
    if not phrase:
        return None
    iso_found = ISO_RE.fullmatch(phrase)
    if iso_found:
        return parse_moment(phrase, tz)
    edge = _EDGE_RE.search(phrase)
    if edge:
        return _edge(edge, now, tz)
    ordinal = _ordinal(phrase, now, tz)
    if ordinal is not None:
        return ordinal
    dateparser, _ = _parser()
    bare = _STRIP_LEAD.sub("", phrase)
    parsed = dateparser.parse(bare, languages=LANGUAGES, settings=_settings(now, tz, date_order(tz)))
    if parsed is None:
        return None
    value = _to_value(phrase, parsed, now, tz)
    return value if local_date(value, tz) >= now.astimezone(tz).date() else None


def morning_said(text: str) -> bool:
    """Words that make a bare hour up to LATER_UP_TO the morning's: "wake up at 6", "at 5 in the morning"."""
    return bool(_MORNING_RE.search(text))


def bare_hour(hour: int, text: str, minute: int = 0) -> tuple[int, str]:
    """The hour of “at 9” or “half past 9” (no am/pm) on a 24-hour clock, and how it was read when that was a
    choice: 7 to 11 is the morning unless the text speaks of the evening; 1 to 6 the afternoon or evening unless
    it speaks of the morning (nobody means “call Mum at 5” at five in the morning)."""
    if not 1 <= hour <= 11:
        return hour, ""
    said = f"{hour}:{minute:02d}" if minute else f"{hour}"
    if _EVENING_RE.search(text) or hour <= LATER_UP_TO and not morning_said(text):
        part = "afternoon" if hour < 6 else "evening"
        return hour + 12, f"{said} read as {hour + 12:02d}:{minute:02d}, the {part}"
    return hour, f"{said} read as {hour:02d}:{minute:02d}, the morning"


# A zone's letters after a time ("at 10:00 UTC tomorrow"): the time is that zone's, told in the user's own. Each
# abbreviation is its fixed offset (CET is winter time, CEST summer time), as whoever wrote it meant.
ZONE_OFFSETS = {
    "UTC": 0,
    "GMT": 0,
    "CET": 1,
    "CEST": 2,
    "BST": 1,
    "EST": -5,
    "EDT": -4,
    "CST": -6,
    "CDT": -5,
    "PST": -8,
    "PDT": -7,
}
_ZONE_AFTER = lazy_regex(
    r"\s*\(?(?P<zone>" + "|".join(ZONE_OFFSETS) + r")(?:(?P<sign>[+-])(?P<hours>\d{1,2})"
    r"(?::?(?P<minutes>[0-5]\d))?)?\)?(?![\w+-])",
    re.I,
)
# a zone and its summer or winter time: said of the user's own zone, either means the user's local time
ZONE_FAMILIES = ({"CET", "CEST"}, {"EST", "EDT"}, {"CST", "CDT"}, {"PST", "PDT"}, {"GMT", "BST"})


@dataclass(frozen=True)
class Clock:
    """A time of day read here, not by the parser: where it stands in the text, the hour as said, its minutes,
    and "am"/"pm" when said."""

    start: int
    end: int
    hour: int
    minute: int = 0
    half: str = ""
    said: int = 0  # the hour as said, when not `hour`: "quarter to 7" is 6:45, and a morning's or an evening's as 7 is
    written: bool = False  # "at 9:30", "at 17:30": digits and minutes, read as written
    zone: str = ""  # "UTC" in "at 10:00 UTC": the time is that zone's (ZONE_OFFSETS)
    offset_minutes: int = 0  # "+1" in "GMT+1": minutes added to the zone's own offset

    def zone_of(self, day: date, tz: ZoneInfo) -> timezone | ZoneInfo:
        """The timezone the clock's time is in on `day`: the user's, unless another zone was said. The user's own
        zone by either of its names ("CET" in Berlin in July) is the user's local time."""
        name = self.zone.upper()
        if not name:
            return tz
        local = datetime.combine(day, time(12), tzinfo=tz).tzname()
        if not self.offset_minutes and any({name, local} <= family for family in ZONE_FAMILIES):
            return tz
        minutes = ZONE_OFFSETS[name] * 60 + self.offset_minutes
        return timezone(
            timedelta(minutes=minutes), name + (f"{self.offset_minutes / 60:+g}" if self.offset_minutes else "")
        )

    def at(self, day: date, hour: int, minute: int, tz: ZoneInfo) -> datetime:
        """This clock's time on `day` (in its zone), in the user's timezone `tz`."""
        return datetime.combine(day, time(hour, minute), tzinfo=self.zone_of(day, tz)).astimezone(tz)

    def of_day(self, text: str) -> tuple[int, int, str]:
        """(hour, minute) on a 24-hour clock, and how an hour without am/pm was read."""
        if self.half:
            return self.hour % 12 + 12 * self.half.startswith("p"), self.minute, ""
        if self.written:
            return self.hour, self.minute, ""
        said = self.said or self.hour
        later = bare_hour(said, text)[0] != said
        hour = self.hour + 12 if later and self.hour < 12 else self.hour
        if not 1 <= said <= 11 or hour == 12:
            return hour, self.minute, ""
        part = "morning" if not later else "afternoon" if self.hour < 6 else "evening"
        shown = f"{self.hour}:{self.minute:02d}" if self.minute else f"{self.hour}"
        return hour, self.minute, f"{shown} read as {hour:02d}:{self.minute:02d}, the {part}"


# "3pm", "at 10:30am", "at 17:30": a time written out, read here so that it joins the day beside it as a bare
# hour does ("on the 20th at 3pm" lost its 3pm, "this weekend at 8pm" its weekend)
_CLOCK_TIME_RE = lazy_regex(
    r"(?<![\d.:])\b(?:at\s+)?(?P<hour>\d{1,2})(?:[:.](?P<minute>[0-5]\d))?\s*"
    # "at 9.30" as "at 9:30", never a sum ("at 3.50 €") nor a day ("at 9.3.")
    r"(?P<half>am|pm|a\.m\.|p\.m\.)(?!\w)|\b(?:at|um)\s+(?P<h24>\d{1,2})(?::|\.(?=[0-5]\d(?![\d.,]|\s*(?:€|eur|%))))"
    r"(?P<m24>[0-5]\d)(?![\d:])|"
    # "Montag um 10 Uhr": the parser reads a whole hour in German as midnight of another day
    r"(?<![\d.:])\b(?:um\s+)?(?P<uhr>\d{1,2})\s*uhr\b",
    re.I,
)
# a time that is the end or the start of a range of hours ("9am-5pm", "2pm to 4pm") is opening hours, no moment
_IN_A_RANGE_AFTER = lazy_regex(r"\s*(?:uhr\s*)?(?:[-–]|to\b|until\b|till\b|bis\b)\s*\d", re.I)
_IN_A_RANGE_BEFORE = lazy_regex(
    r"\d\s*(?:am|pm|a\.m\.|p\.m\.|uhr)?\s*(?:[-–]|to|until|till|bis)\s*$|"
    r"\bbetween\s+(?:at\s+)?\d{1,2}(?:[:.]\d\d)?\s*(?:am|pm|a\.m\.|p\.m\.)?\s+and\s*$",
    re.I,
)


# "between 9 and 11" (no am/pm): a range of bare hours, read as its first ("9 and 11" is no 9 November)
# "between 3 and 5 days", "between 10 and 20 euros": a count, no hour and no date
_COUNT_UNITS = (
    r"(?:min|hour|hr|h\b|day|week|month|year|time|people|person|guest|euro|eur\b|€|dollar|usd|\$|pound|gbp|£|"
    r"kg|g\b|km|mile|%|percent|item|piece|page|step|litre|liter|l\b|cm|m\b)"
)
_BETWEEN_COUNT_RE = lazy_regex(
    r"\bbetween\s+(?:[€$£]\s*\d+(?:[.,]\d+)?\s+and\s+[€$£]\s*\d+(?:[.,]\d+)?|"
    r"\d+(?:[.,]\d+)?\s*[€$£]?\s+and\s+\d+(?:[.,]\d+)?\s*" + _COUNT_UNITS + r"\w*)",
    re.I,
)
_BETWEEN_HOURS_RE = lazy_regex(
    r"\bbetween\s+(?P<hour>\d{1,2})(?:[:.](?P<minute>[0-5]\d))?\s+and\s+(?P<end>\d{1,2})"
    r"(?:[:.][0-5]\d)?(?:\s*(?P<half>am|pm|a\.m\.|p\.m\.)(?!\w))?"
    r"(?![\d:./€$£]|\s*(?:st|nd|rd|th|of|jan|feb|mar|mär|apr|may|mai|jun|jul|aug|sep|oct|okt|nov|"
    r"dec|dez)\w*|\s*" + _COUNT_UNITS + r")",
    re.I,
)


def _between_hours(match: re.Match) -> Clock | None:
    """“between 9 and 11” → 9; “between 2 and 4pm” → 14:00 (the end's pm is the start's, unless the start is
    later than the end: “between 11 and 1pm” starts at 11 in the morning)."""
    hour, end = int(match.group("hour")), int(match.group("end"))
    if hour > 23:
        return None
    half = (match.group("half") or "").replace(".", "").lower()
    if half and (hour > 12 or hour == 0):
        half = ""  # "between 13 and 4pm": the start is on a 24-hour clock already
    elif half == "pm" and hour != 12 and (hour > end or end == 12):
        half = "am"  # "between 11 and 1pm", "between 10 and 12pm" start in the morning; 12 with a pm end is noon
    return Clock(match.start("hour"), match.end(), hour, int(match.group("minute") or 0), half)


def written_clock(match: re.Match) -> Clock | None:
    """“3pm” → 15:00, “at 9:30” → 09:30 as written; None for a time no clock shows ("at 25:00", "13pm") and
    for one end of a range of hours ("9am-5pm", "between 2pm and 4pm" keeps its first)."""
    text = match.string
    if _IN_A_RANGE_AFTER.match(text, match.end()) or _IN_A_RANGE_BEFORE.search(
        text[max(0, match.start() - 30) : match.start()]
    ):
        return None
    if match.group("uhr") is not None:
        hour = int(match.group("uhr"))
        return Clock(match.start(), match.end(), hour, 0, written=True) if hour <= 23 else None
    if match.group("h24") is not None:
        hour, minute = int(match.group("h24")), int(match.group("m24"))
        if 1 <= hour < LATER_UP_TO and not match.group("h24").startswith("0"):
            # "at 1:30", "um 3:30": an hour nobody sets a reminder for at night, read as a bare hour is (bare_hour)
            return Clock(match.start(), match.end(), hour, minute)
        return Clock(match.start(), match.end(), hour, minute, written=True) if hour <= 23 else None
    hour, minute = int(match.group("hour")), int(match.group("minute") or 0)
    half = match.group("half").lower().replace(".", "")
    return Clock(match.start(), match.end(), hour, minute, half) if 1 <= hour <= 12 else None


def spoken_clock(match: re.Match) -> Clock | None:
    """“half past 5” → 5:30, “quarter to 6” → 5:45, “at half 5” → 5:30; None for an hour no clock shows."""
    hour = int(match.group("hour") or match.group("british"))
    if not 1 <= hour <= 12:
        return None
    minute = 30 if match.group("british") or match.group("part").lower() == "half" else 15
    said = hour
    if (match.group("rel") or "").lower() == "to":
        hour, minute = hour - 1 or 12, 60 - minute
    half = (match.group("half") or "").lower().replace(".", "")
    return Clock(match.start(), match.end(), hour, minute, half, said)


PARTS_READ = 10  # a message says a few parts of the day or times; a pasted page with hundreds is not read one by one


def _with_parts(text: str, found: list[Found], now: datetime, tz: ZoneInfo) -> list[Found]:
    """“this evening” is today's; “in the morning” and “at lunchtime” the next to come; either said right
    before or after a day (“tomorrow in the evening”, “at lunchtime on Friday”) is that day's."""
    found = list(found)
    for match in itertools.islice(_PART_ALONE_RE.finditer(text), PARTS_READ):
        if any(
            f.start < match.end() and match.start() < f.start + len(f.phrase) for f in found
        ) or _HOUR_BEFORE_RE.search(text, max(0, match.start() - 20), match.start()):
            continue  # "at 6 in the morning": the hour's, read with its part by _with_hours
        hour = time(PART_OF_DAY_HOURS[match.group("part").lower()])
        day = next(
            (
                f
                for f in found
                if not isinstance(f.value, datetime)
                and (
                    f.start + len(f.phrase) <= match.start()
                    and not text[f.start + len(f.phrase) : match.start()].strip(" ,")
                    or f.start >= match.end()
                    and not text[match.end() : f.start].strip(" ,")
                )
            ),
            None,
        )
        if day is not None:  # "tomorrow in the evening", "at lunchtime tomorrow"
            found.remove(day)
            start, end = min(day.start, match.start()), max(day.start + len(day.phrase), match.end())
            found.append(Found(text[start:end], datetime.combine(day.value, hour, tzinfo=tz), start))
            continue
        value = datetime.combine(now.astimezone(tz).date(), hour, tzinfo=tz)
        if value <= now and not match.group("this"):
            value += timedelta(days=1)
        found.append(Found(match.group(0), value, match.start()))
    return found


_RANGE_START = lazy_regex(r"\bbetween\s+(?:at\s+)?$", re.I)
_RANGE_TAIL = lazy_regex(r"\s+and\s+\d{1,2}(?:[:.][0-5]\d)?\s*(?:am|pm|a\.m\.|p\.m\.)?(?!\w)", re.I)


def _with_range(text: str, clock: Clock) -> Clock:
    """The clock that opens "between 2pm and 4pm" with the range's end in its span: the range is read as its
    start, and its end is no moment of its own nor a word left in a title."""
    tail = (
        _RANGE_TAIL.match(text, clock.end)
        if _RANGE_START.search(text[max(0, clock.start - 12) : clock.start])
        else None
    )
    if tail is None:
        return clock
    return replace(clock, end=tail.end())


def _with_zone(text: str, clock: Clock) -> Clock:
    """The clock with the zone said right after it ("10:00 UTC"), which its span then takes in."""
    said = _ZONE_AFTER.match(text, clock.end)
    if said is None:
        return clock
    offset = 0
    if said.group("sign"):
        offset = (int(said.group("hours")) * 60 + int(said.group("minutes") or 0)) * (
            -1 if said.group("sign") == "-" else 1
        )
        if abs(offset) > 14 * 60:
            return clock  # no zone is that far from Greenwich
    return replace(clock, end=said.end(), zone=said.group("zone"), offset_minutes=offset)


def _blank(match: re.Match) -> str:
    return " " * len(match.group(0))


# what may stand between a time and its day: "at 3pm on Friday", "Jan 12 @ 3pm", "at 9am CET tomorrow"
_BETWEEN = lazy_regex(
    r"[\s,@]*(?:\(?(?:" + "|".join(ZONE_OFFSETS) + r")\)?[\s,]*)?"
    # "tomorrow afternoon at 3:30", "morgen nachmittag um halb 4": the part of the day said with the hour
    r"(?:(?:in\s+the\s+)?(?:morning|afternoon|evening|vormittags?|nachmittags?|abends?|früh)[\s,]+)?"
    r"(?:(?:on|at|between|from|um|am)\s+)?",
    re.I,
)


def _with_hours(text: str, found: list[Found], hours: list[Clock], now: datetime, tz: ZoneInfo) -> list[Found]:
    """Each bare or spoken hour joins the day phrase right before or after it ("tomorrow at 9", "at 10 on
    Saturday", "half past 5 on Friday"); alone, it is the next time the clock shows that hour."""
    found = list(found)
    timed: list[Found] = []  # results that have a time from a clock already: "3pm, 5pm" is two moments
    for clock in hours:
        hour, minute, reading = clock.of_day(text)
        day_phrase = None
        for f in found:
            if any(f is t for t in timed):
                continue
            end = f.start + len(f.phrase)
            if (
                (end <= clock.start and _BETWEEN.fullmatch(text[end : clock.start]))
                or (f.start >= clock.end and _BETWEEN.fullmatch(text[clock.end : f.start]))
                or f.start <= clock.start
                and clock.end <= end
            ):  # read around it: "tomorrow at 6 in the morning"
                day_phrase = f
                break
        if day_phrase is not None:
            found.remove(day_phrase)
            start = min(day_phrase.start, clock.start)
            end = max(day_phrase.start + len(day_phrase.phrase), clock.end)
            # "tonight" is today's evening, whatever the hour: _to_value moved it to tomorrow once 20:00 passed
            day = (
                now.astimezone(tz).date()
                if re.search(r"\btonight\b", day_phrase.phrase, re.I)
                else local_date(day_phrase.value, tz)
            )
            value = clock.at(day, hour, minute, tz)
        else:
            start, end = clock.start, clock.end
            after, before = _DAYPART_AFTER.match(text[end:]), _DAYPART_BEFORE.search(text[:start])
            if after:
                end += after.end()
            elif before:
                start = before.start()
            today = now.astimezone(clock.zone_of(now.astimezone(tz).date(), tz)).date()  # the zone's own today
            value = clock.at(today, hour, minute, tz)
            if value <= now:
                value = clock.at(today + timedelta(days=1), hour, minute, tz)
        if clock.zone and clock.zone_of(local_date(value, tz), tz) is not tz:
            said = re.sub(r"^at\s+", "", text[clock.start : clock.end].strip(), flags=re.I)
            reading = "; ".join(filter(None, [reading, f"{said} is {value.astimezone(tz):%H:%M} your time"]))
        found.append(Found(text[start:end], value, start, reading))
        timed.append(found[-1])
    return found


# "in 2 hours", "in 30 minutes", "in an hour", "in half an hour", "in 1.5 hours", "in 2h", "in 1 hour 30 minutes";
# not a verb's "in" ("check in 2 hours before the flight", "log in 5 minutes early")
_IN_A_WHILE_RE = lazy_regex(
    r"(?<!\bcheck )(?<!\blog )(?<!\bsign )(?<!\bplug )(?<!\bfill )(?<!\bhand )(?<!\bturn )(?<!\bcall )(?<!\bdrop )"
    r"\bin\s+(?P<n>\d{1,3}(?:[.,]\d)?|half an|"
    # "in two hours", "in a couple of hours", "in forty-five minutes": counted in words
    + "|".join(sorted((w for w in NUMBER_WORDS if re.fullmatch(r"[a-z -]+", w)), key=len, reverse=True))
    + r")\s*(?P<unit>minutes?|mins?|hours?|hrs?|h)\b"
    r"(?:\s*(?:and\s+)?(?P<n2>\d{1,2})\s*(?:minutes?|mins?)\b)?"
    r"(?!\s+(?:before|after|early|earlier|late|later|ahead|prior|beforehand)\b)",
    re.I,
)


_WEEKDAY_NTH_RE = lazy_regex(
    r"\b(?P<day>(?:mon|tues|wednes|thurs|fri|satur|sun)day)\s*,?\s+(?:the\s+)?(?P<n>\d{1,2})(?:st|nd|rd|th)\b"
    r"(?!\s+(?:of\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b)(?![:.]\d)",
    re.I,
)


def _weekday_nth(match: re.Match, now: datetime, tz: ZoneInfo) -> date | None:
    """The next day of the month said that falls on the weekday said (within a year); else the next such day."""
    today = now.astimezone(tz).date()
    n, weekday = int(match.group("n")), WEEKDAYS.index(match.group("day").lower())
    first = None
    for ahead in range(13):
        year, month = today.year + (today.month - 1 + ahead) // 12, (today.month - 1 + ahead) % 12 + 1
        if n > calendar.monthrange(year, month)[1] or date(year, month, n) < today:
            continue
        first = first or date(year, month, n)
        if date(year, month, n).weekday() == weekday:
            return date(year, month, n)
    return first


def _in_a_while(match: re.Match, now: datetime, tz: ZoneInfo) -> datetime:
    n = match.group("n").lower()
    amount = 0.5 if n == "half an" else float(NUMBER_WORDS[n]) if n in NUMBER_WORDS else float(n.replace(",", "."))
    minutes = amount * (1 if match.group("unit").lower().startswith("m") else 60) + int(match.group("n2") or 0)
    return (now + timedelta(minutes=minutes)).astimezone(tz).replace(second=0, microsecond=0)


# "in June": a month named alone is no day, except where the caller asks for one (a reminder: its 1st)
_IN_A_MONTH_RE = lazy_regex(
    r"\b(?:in|early in|in early|at the start of)\s+(?P<month>"
    + "|".join(m.lower() for m in calendar.month_name if m)
    + r")(?:\s+(?P<year>\d{4}))?\b",
    re.I,
)


def _month_start(match: re.Match, now: datetime, tz: ZoneInfo) -> date | None:
    """The 1st of the month named: this year's or next year's, whichever is still to come; None for the month
    we are in (its 1st has passed, and the user means some day of it)."""
    month, today = _MONTH_NAMES[match.group("month").lower()], now.astimezone(tz).date()
    year = int(match.group("year")) if match.group("year") else today.year + (month < today.month)
    if not today.year <= year <= today.year + 10:  # "in June 0000", "in June 9999": no reminder to set
        return None
    first = date(year, month, 1)
    return first if first > today else None


# "next Wednesday" is the Wednesday of next week: said on a Tuesday, it is not tomorrow (the parser reads it as
# the coming one, as it reads "on Wednesday"); "next Thursday, 7 Jan" is the day written
# Days said against a week, which the date parser's search reads without the week ("Friday next week" is this
# Friday, "by the day after tomorrow" tomorrow): "the end of the week" and "before the weekend" are its Friday
_WEEK_SAID_RE = lazy_regex(
    r"\b(?:the\s+)?day\s+after\s+tomorrow\b(?P<overmorrow>)"
    r"|\b(?:the\s+)?end\s+of\s+(?:the\s+|this\s+|(?P<end_next>next)\s+)?week\b"
    r"|\bbefore\s+the\s+weekend\b(?P<before_weekend>)"
    r"|\b(?P<day>"
    + "|".join(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))
    + r")\s+(?:of\s+)?next\s+week\b"
    r"|\bnext\s+week(?:'s)?\s+(?:on\s+)?(?P<day2>"
    + "|".join(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))
    + r")\b",
    re.I,
)


def _week_said(match: re.Match, now: datetime, tz: ZoneInfo) -> date:
    today = now.astimezone(tz).date()
    monday = today - timedelta(days=today.weekday())
    if match.group("overmorrow") is not None:
        return today + timedelta(days=2)
    if match.group("before_weekend") is not None:
        return monday + timedelta(days=4 if today.weekday() <= 4 else 11)
    day = match.group("day") or match.group("day2")
    if day:
        return monday + timedelta(days=7 + WEEKDAYS.index(day.lower()))
    friday = monday + timedelta(days=4 + (7 if match.group("end_next") else 0))
    return friday if friday >= today else friday + timedelta(days=7)  # asked on a weekend: the week coming


# "before August", "before March 2028": a month named alone after "before" (not "before August 3", which the parser
# reads as a day); the deadline is the last day of the month before it
_BEFORE_MONTH_RE = lazy_regex(
    r"\b(?:before|by the (?:start|beginning) of|ahead of|by(?!\s+may\s+(?:be|have|not)\b))\s+(?:the\s+)?(?P<month>"
    + "|".join(sorted(_MONTH_NAMES, key=len, reverse=True))
    + r")\b(?:\s+(?P<year>\d{4})\b)?(?![.,]?\s*\d|\s+(?:the\s+)?\d)",
    re.I,
)


# "31.01.", "by 15.01": a day and a month in digits, as written where the day comes first (not "at 9.30", not
# "96.40 €", not "v1.20")
_DAY_DOT_MONTH_RE = lazy_regex(
    r"(?<![\w.,])(?<!\bat )(?P<day>\d{1,2})\.(?P<month>\d{2}|\d(?=\.(?!\d)))(?:\.(?!\d)|(?![\d.,]))"
    r"(?!\s*(?:€|eur|euro|chf|km|kg|%|h\b|uhr|am\b|pm\b))",
    re.I,
)
_CUED_DAY_DOT_RE = lazy_regex(
    r"\b(?:bis(?:\s+zum|\s+spätestens)?|by|until|till|before|am|zum|spätestens)\s+(?:the\s+)?(?P<day>\d{1,2})\."
    r"(?P<month>[1-9])\s*$",
    re.I,
)
# the feasts people give as deadlines: "before Easter" is the Saturday before Easter Sunday, "by Christmas" its day
# (a feast said alone is what the days are, not when: "we're spending Christmas in Rome from Dec 20")
_FEAST_RE = lazy_regex(
    r"\b(?:(?P<before>before|ahead of)|by|until|till|on|at|over|for)\s+(?:the\s+)?(?P<feast>easter(?:\s+(?:sunday|monday))?|good friday|"
    r"christmas(?:\s+(?:eve|day))?|xmas(?:\s+eve)?|new year'?s?(?:\s+(?:eve|day))?|boxing day)\b",
    re.I,
)


# a stretch of days in one month, "March 10-12", "10–12 March", "18 to 20 May": the parser reads none; it starts on
# the first
_MONTH_ALTERNATIVES = "|".join(sorted(_MONTH_NAMES, key=len, reverse=True))
_DAY_RANGE_RE = lazy_regex(
    # "April 14 and 15", "14 and 15 April": two days, from the first
    rf"\b(?:(?P<month>{_MONTH_ALTERNATIVES})\.?\s+(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?\s*(?:-|–|to|until|till|and|&)\s*"
    rf"(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?(?!\s*(?:[:.]\d|am|pm|h\b|uhr))|(?P<e1>\d{{1,2}})(?:st|nd|rd|th)?\s*"
    rf"(?:-|–|to\b|until\b|till\b|and\b|&)\s*"
    rf"(?P<e2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<month2>{_MONTH_ALTERNATIVES}))\b",
    re.I,
)
# the middle of a month and the end of a quarter, which the parser reads as no day ("mid-February", "the middle of
# the month", "end of Q1", "end of the quarter"), and a day counted in weeks from another ("a week from Friday")
_MIDDLE_RE = lazy_regex(
    rf"\b(?P<part>mid|the middle of|middle of|late|in\s+late)[\s-]+(?:(?P<month>{_MONTH_ALTERNATIVES})|(?:the\s+|this\s+)?"
    r"(?P<this>month)|(?P<next>next month))\b",
    re.I,
)
_QUARTER_RE = lazy_regex(
    r"\b(?:the\s+)?end\s+of\s+(?:(?:the\s+)?(?:q|quarter\s*)(?P<q>[1-4])|(?:the|this)\s+quarter)\b", re.I
)
_DAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKS_FROM_RE = lazy_regex(
    r"\b(?P<n>a|one|two|three|four|[1-4])\s+weeks?\s+(?:from|after)\s+(?P<day>today|tomorrow|"
    + "|".join(_DAY_NAMES)
    + r")\b",
    re.I,
)


# "bis zum 25.", "zum 25.", "bis 25.", "den 25.": a German day of the month alone, its dot the ordinal's (not "25.5.")
_GERMAN_DAY_OF_MONTH_RE = lazy_regex(
    r"\b(?:bis\s+(?:zum\s+|spätestens\s+(?:zum\s+|am\s+)?)?|zum\s+|den\s+|spätestens\s+(?:am|zum)\s+)"
    # not a month after it, nor a noun ("zum 30. Geburtstag", "den 3. Stock") nor a range ("1. bis 5.")
    r"(?P<day>\d{1,2})\.(?![\d])(?!\s*(?:\d|jan|feb|mär|mar|apr|mai|jun|jul|aug|sep|okt|nov|dez|bis\b|mal\b))"
    r"(?!\s*(?-i:[A-ZÄÖÜ]))",
    re.I,
)


_SPANISH_MONTHS = "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre".split()
# "del 3 al 12 de julio": a stay, from its first day (the parser reads only "12 de julio")
_SPANISH_RANGE_RE = lazy_regex(
    r"\b(?:del\s+)?(?P<d1>\d{1,2})\s+al\s+(?P<d2>\d{1,2})\s+de\s+(?P<month>" + "|".join(_SPANISH_MONTHS) + r")\b",
    re.I,
)


def _spanish_range(m: re.Match, now: datetime, tz: ZoneInfo) -> date | None:
    today = now.astimezone(tz).date()
    day, month = int(m.group("d1")), _SPANISH_MONTHS.index(m.group("month").lower()) + 1
    if day > int(m.group("d2")):  # "del 28 al 3 de julio": from the 28th of June
        month = 12 if month == 1 else month - 1
    return _next_day_of(day, month, today)


def _german_day_of_month(m: re.Match, now: datetime, tz: ZoneInfo) -> date | None:
    return _ordinal(f"the {m.group('day')}", now, tz)


_WEEK_AFTER_NEXT_RE = lazy_regex(r"\b(?:the\s+)?week\s+after\s+next\b|\bin\s+two\s+weeks'?\s+time\b", re.I)
_GERMAN_MONTHS = (
    "januar",
    "februar",
    "märz",
    "april",
    "mai",
    "juni",
    "juli",
    "august",
    "september",
    "oktober",
    "november",
    "dezember",
)
# "bis Ende Mai", "Anfang März", "Mitte Februar": a month's edge or middle said in German
_GERMAN_EDGE_RE = lazy_regex(r"\b(?P<edge>ende|anfang|mitte)\s+(?P<month>" + "|".join(_GERMAN_MONTHS) + r")\b", re.I)


# "on 3/2", "by 15/01", "exam 2/15": a day and a month with a slash, read in the order the user's place writes them
# (the other order when that names no day); only after a word that leads to a day, or ending the message ("24/7",
# "50/50" and "1/2 cup" are no days)
_SLASH_DAY_RE = lazy_regex(
    r"(?:"
    + "|".join(
        rf"(?<=\b{w} )"
        for w in (
            "on",
            "by",
            "due",
            "for",
            "until",
            "till",
            "before",
            "after",
            "from",
            "date",
            "is",
            "am",
            "exam",
            "the",
        )
    )
    + r"|^)"
    r"(?P<a>\d{1,2})/(?P<b>\d{1,2})(?![/\d])(?=\s*(?:$|[,.;!?)]|(?:at|and|in|for|to|from|remind|please|pls)\b))",
    re.I,
)


def _slash_day(match: re.Match, now: datetime, tz: ZoneInfo) -> date | None:
    a, b = int(match.group("a")), int(match.group("b"))
    today = now.astimezone(tz).date()
    orders = [(a, b), (b, a)] if date_order(tz) == "DMY" else [(b, a), (a, b)]
    for day, month in orders:
        if 1 <= month <= 12 and 1 <= day <= calendar.monthrange(today.year, month)[1]:
            found = date(today.year, month, day)
            return (
                found
                if found >= today
                else date(today.year + 1, month, min(day, calendar.monthrange(today.year + 1, month)[1]))
            )
    return None


# "am 7. April", "13.-20. Feb": a day written with its stop before the month's name, as in German (a stretch of
# days starts on its first)
_DAY_STOP_MONTH_RE = lazy_regex(
    r"\b(?P<day>\d{1,2})\.(?:\s*(?:[-–]|und|bis)\s*\d{1,2}\.)?\s*(?P<month>"
    + _MONTH_ALTERNATIVES
    + "|"
    + "|".join(_GERMAN_MONTHS)
    + r")\b",
    re.I,
)


def _day_stop_month(match: re.Match, now: datetime, tz: ZoneInfo) -> date | None:
    name, today = match.group("month").lower(), now.astimezone(tz).date()
    month = _MONTH_NAMES.get(name) or _GERMAN_MONTHS.index(name) + 1
    day = int(match.group("day"))
    for year in (today.year, today.year + 1):
        if 1 <= day <= calendar.monthrange(year, month)[1] and date(year, month, day) >= today:
            return date(year, month, day)
    return None


# "within a month", "in one month": the same day next month (the parser reads the month's 1st)
_A_MONTH_RE = lazy_regex(
    r"\b(?:(?:within|in)\s+(?:a|one|1)\s+month|(?:a|one|1)\s+month\s+from\s+(?:today|now))\b", re.I
)
# "before the month is out", "by the time the week is over": the period's last day (the parser reads none of it)
_PERIOD_OUT_RE = lazy_regex(
    r"\b(?:before|by\s+the\s+time|until)\s+(?:the|this)\s+(?P<period>week|month|year)\s+is\s+(?:out|over|up|done)\b",
    re.I,
)


def _period_out(match: re.Match, now: datetime, tz: ZoneInfo) -> date:
    today = now.astimezone(tz).date()
    period = match.group("period").lower()
    if period == "week":
        return today + timedelta(days=6 - today.weekday())
    if period == "month":
        return today.replace(day=calendar.monthrange(today.year, today.month)[1])
    return today.replace(month=12, day=31)


# "3/2 to 5/2", "3/2-5/2": a stretch of days written with slashes starts on its first
_SLASH_RANGE_RE = lazy_regex(
    r"(?<![\d/])(?P<a>\d{1,2})/(?P<b>\d{1,2})\s*(?:to|-|–|bis|until)\s*\d{1,2}/\d{1,2}(?![/\d])", re.I
)


# "after the weekend", "nach dem Wochenende": the Monday after it
_AFTER_WEEKEND_RE = lazy_regex(r"\b(?:after the weekend|nach dem wochenende)\b", re.I)


def _after_weekend(match: re.Match, now: datetime, tz: ZoneInfo) -> date:
    today = now.astimezone(tz).date()
    return today + timedelta(days=7 - today.weekday())


def _a_month(match: re.Match, now: datetime, tz: ZoneInfo) -> date:
    today = now.astimezone(tz).date()
    year, month = (today.year + 1, 1) if today.month == 12 else (today.year, today.month + 1)
    return date(year, month, min(today.day, calendar.monthrange(year, month)[1]))


def _week_after_next(match: re.Match, now: datetime, tz: ZoneInfo) -> date:
    return now.astimezone(tz).date() + timedelta(weeks=2)  # as "next week" is a week from today


def _german_edge(match: re.Match, now: datetime, tz: ZoneInfo) -> date | None:
    today = now.astimezone(tz).date()
    month = _GERMAN_MONTHS.index(match.group("month").lower()) + 1
    year = today.year + (month < today.month)
    day = {"ende": calendar.monthrange(year, month)[1], "anfang": 1, "mitte": 15}[match.group("edge").lower()]
    found = date(year, month, day)
    return found if found >= today else None


def _middle(match: re.Match, now: datetime, tz: ZoneInfo) -> date | None:
    today = now.astimezone(tz).date()
    if match.group("month"):
        month = _MONTH_NAMES[match.group("month").lower()]
        year = today.year + (month < today.month)
    else:
        year, month = today.year, today.month
        if match.group("next"):
            year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    part = match.group("part").lower()
    middle = date(year, month, 20 if "late" in part else 15)  # "late April": its last third
    return middle if middle >= today else None


def _quarter_end(match: re.Match, now: datetime, tz: ZoneInfo) -> date:
    today = now.astimezone(tz).date()
    quarter = int(match.group("q")) if match.group("q") else (today.month - 1) // 3 + 1
    last = quarter * 3
    end = date(today.year, last, calendar.monthrange(today.year, last)[1])
    return end if end >= today else date(today.year + 1, last, calendar.monthrange(today.year + 1, last)[1])


def _weeks_from(match: re.Match, now: datetime, tz: ZoneInfo) -> date:
    today = now.astimezone(tz).date()
    n = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4}.get(match.group("n").lower()) or int(match.group("n"))
    day = match.group("day").lower()
    if day in ("today", "tomorrow"):
        start = today + timedelta(days=day == "tomorrow")
    else:
        start = today + timedelta(days=(_DAY_NAMES.index(day) - today.weekday()) % 7 or 7)
    return start + timedelta(weeks=n)


# an age said before a day is no year: "my mum turns 70 on April 3"
_AGE_RE = lazy_regex(
    r"\b(?:turns?|turning|aged?|will be|is)\s+(?P<age>\d{1,3})(?=\s+(?:on|in|this|next|tomorrow|today)\b)", re.I
)


# "my husband's 40th on 11 Feb", "Mum's 70th": an age reached, no day (nor the year 2040)
_AGED_RE = lazy_regex(
    r"\w['’]s?\s+(?P<age>\d{1,3}(?:st|nd|rd|th))\b(?!\s+(?:of\b|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))", re.I
)


def _day_range(match: re.Match, now: datetime, tz: ZoneInfo) -> date | None:
    today = now.astimezone(tz).date()
    month = _MONTH_NAMES[(match.group("month") or match.group("month2")).lower()]
    first, last = int(match.group("d1") or match.group("e1")), int(match.group("d2") or match.group("e2"))
    if not 1 <= first < last <= 31:
        return None
    # a year said after the days ("6 to 9 January next year", "6 to 9 January 2028") is that year's
    said = re.match(r"\s*,?\s*(?:(?P<next>next\s+year)|(?P<year>20\d\d))\b", match.string[match.end() :], re.I)
    years = (today.year, today.year + 1)
    if said:
        years = (today.year + 1,) if said.group("next") else (int(said.group("year")),)
    for year in years:
        try:
            start = date(year, month, first)
        except ValueError:
            return None
        if start >= today:
            return start
    return None


def _day_dot_month(match: re.Match, now: datetime, tz: ZoneInfo) -> date | None:
    if date_order(tz) != "DMY":
        return None
    today = now.astimezone(tz).date()
    return _next_day_of(int(match.group("day")), int(match.group("month")), today)


def _next_day_of(day: int, month: int, today: date) -> date | None:
    """That day of that month, this year or the next, whichever is not past; None for no such day."""
    for year in (today.year, today.year + 1):
        try:
            value = date(year, month, day)
        except ValueError:
            return None
        if value >= today:
            return value
    return None


def _feast(match: re.Match, now: datetime, tz: ZoneInfo) -> date | None:
    # lazy: dateparser's own dependency, loaded when a feast is named
    from dateutil.easter import easter

    today = now.astimezone(tz).date()
    name = " ".join(match.group("feast").lower().replace("'", "").split())
    for year in (today.year, today.year + 1):
        sunday = easter(year)
        day = {
            "easter monday": sunday + timedelta(days=1),
            "good friday": sunday - timedelta(days=2),
            "christmas eve": date(year, 12, 24),
            "xmas eve": date(year, 12, 24),
            "boxing day": date(year, 12, 26),
            "new years eve": date(year, 12, 31),
            "new year eve": date(year, 12, 31),
        }.get(name)
        if day is None:
            day = (
                sunday
                if name.startswith("easter")
                else date(year, 12, 25)
                if name.startswith(("christmas", "xmas"))
                else date(year + 1, 1, 1)
            )
        if match.group("before"):
            day -= timedelta(days=1)
        if day >= today:
            return day
    return None


def _before_month(match: re.Match, now: datetime, tz: ZoneInfo) -> date | None:
    """The day before the month's first: this year's, or next year's once this year's has begun."""
    today = now.astimezone(tz).date()
    month = _MONTH_NAMES[match.group("month").lower()]
    year = int(match.group("year")) if match.group("year") else today.year
    first = date(year, month, 1)
    if not match.group("year") and first <= today:
        first = date(year + 1, month, 1)
    last = first - timedelta(days=1)
    return last if last >= today else None


_NEXT_WEEKDAY_RE = lazy_regex(
    r"\bnext\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tues?|"
    r"wed|thu|thurs?|fri|sat|sun)\b",
    re.I,
)


_TIME_SAID_RE = lazy_regex(
    r"\bat\s+\d{1,2}(?:[:.]\d\d)?\s*(?:am|pm|a\.m\.|p\.m\.)?|\d{1,2}:\d\d|"
    r"\d{1,2}\s*(?:am|pm|a\.m\.|p\.m\.)",
    re.I,
)


def _in_next_week(phrase: str, value, now: datetime, tz: ZoneInfo):
    if not _NEXT_WEEKDAY_RE.search(phrase):
        return value
    day = _TIME_SAID_RE.sub(" ", phrase)  # what is left names a day: a number, or a month
    if re.search(r"\d", day) or any(word in _MONTH_NAMES for word in re.findall(r"[a-z]+", day.lower())):
        return value
    today = now.astimezone(tz).date()
    monday = today + timedelta(days=7 - today.weekday())
    return value + timedelta(days=7) if local_date(value, tz) < monday else value


WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")  # not the locale's names
# "the Friday after next": the parser reads "the Friday after" and leaves "next"
_AFTER_NEXT_RE = lazy_regex(
    r"\b(?:the\s+)?(?P<day>" + "|".join(WEEKDAYS) + r")\s+after\s+"
    r"next(?P<week>\s+week)?\b(?!\s+(?:month|year|weekend|time|one)\b)",
    re.I,
)


def _after_next(match: re.Match, now: datetime, tz: ZoneInfo) -> date:
    """The named weekday a week after its next one (from a Tuesday, "the Friday after next" is in ten days), or
    in the week after next week ("the Friday after next week")."""
    today = now.astimezone(tz).date()
    weekday = WEEKDAYS.index(match.group("day").lower())
    if match.group("week"):  # "the Friday after next week": in the week after next week
        return today + timedelta(days=7 - today.weekday() + 7 + weekday)
    return today + timedelta(days=(weekday - today.weekday() - 1) % 7 + 1 + 7)


# "this weekend", "at the weekend": its Saturday (what is left of it, on a weekend day), in a request only
# ("see you at the weekend" in a mail is news); "next weekend" is left to ask about, as people mean either one by it
_WEEKEND_RE = lazy_regex(
    r"(?:\b(?:this|at the|on the|over the|at|on|(?:until|till|by|for) the)|^\s*the)\s+weekend\b"
    r"(?!['’]s\b)",
    re.I,
)


def _weekend(now: datetime, tz: ZoneInfo) -> date:
    """The weekend's Saturday; on a weekend day, today (`_rest_of_weekend` moves on to Sunday what has passed)."""
    today = now.astimezone(tz).date()
    return today if today.weekday() >= 5 else today + timedelta(days=5 - today.weekday())


def _rest_of_weekend(found: Found, now: datetime, tz: ZoneInfo) -> Found:
    """On a Saturday, "this weekend" whose moment has passed is Sunday's: "at 10" asked at 20:00, or no time
    said once the morning is over (a reminder's hour, 09:00); a Saturday evening said at 09:30 stays."""
    local = now.astimezone(tz)
    if local.weekday() != 5 or "weekend" not in found.phrase.lower() or local_date(found.value, tz) != local.date():
        return found
    passed = found.value <= now if isinstance(found.value, datetime) else local.hour >= 9
    if not passed:
        return found
    return Found(found.phrase, found.value + timedelta(days=1), found.start, found.reading)


# a day changed from one to another ("move the dentist from 3 to 5 May"), not a stretch of days
_DAY_CHANGED_RE = lazy_regex(
    r"\b(?:move|moved|moving|push|pushed|shift|shifted|change|changed|reschedul\w*|postpon\w*|verschieb\w*|"
    r"verschob\w*|verleg\w*)\b",
    re.I,
)


def search(text: str, now: datetime, tz: ZoneInfo, months: bool = False, parts: bool = False) -> list[Found]:
    """Every date phrase in a text, in order, each read forward from `now` in `tz` (see `_search`)."""
    # one message is read for dates by several rules (its framing, its reminder, its task, its follow-up): the
    # reading is a pure function of its arguments, kept for the same ones. `now` is keyed by its wall time and
    # its very tzinfo (an equal instant in another zone could give values in that zone); a copy of the list
    # goes out, its `Found`s being frozen
    return list(_search_kept(text or "", _moment_key(now), now, _zone_key(tz), tz, months, parts))


def _search_as_written(text: str, now: datetime, tz: ZoneInfo, months: bool, parts: bool) -> list[Found]:
    """`_search` of the text with a university's hours read as times, each phrase as the user wrote it ("10 c.t."),
    for the rules that cut it out of their words: one that ends in a rewritten hour takes the whole of it."""
    timed = _ACADEMIC_TIME_RE.sub(_academic_time, text)
    found = _search(timed, now, tz, months, parts)
    if timed == text:
        return found
    spans = [(m.start(), m.end()) for m in _ACADEMIC_TIME_RE.finditer(text)]

    def written(f: Found) -> Found:
        end = f.start + len(f.phrase)
        end = max([end] + [e for s, e in spans if s < end <= e])
        return replace(f, phrase=text[f.start : end])

    return [written(f) for f in found]


# a university's hour: "10 c.t." is 10:15 (cum tempore), "10 s.t." 10:00; written as a time of the same length, so
# that what was found stands where it was said ("April 14th, 10 c.t." was the 14th of October)
_ACADEMIC_TIME_RE = lazy_regex(r"\b(?P<hour>\d{1,2})\s?(?P<kind>c|s)\.\s?t\.", re.I)


def _academic_time(m: re.Match) -> str:
    said = f"{m.group('hour')}:{'15' if m.group('kind').lower() == 'c' else '00'}"
    return said.ljust(len(m.group(0)))


def forget_readings() -> None:
    """Drop the kept readings: for a test that swaps the parser or a check, and must see them made again."""
    _search_kept.cache_clear()
    _parser_hits.cache_clear()


def _moment_key(now: datetime) -> tuple:
    return (now.replace(tzinfo=None), now.fold, type(now.tzinfo), repr(now.tzinfo), now.tzinfo)


def _zone_key(tz) -> tuple:
    return (type(tz), repr(tz))


@lru_cache(maxsize=512)
def _search_kept(text: str, _now_key: tuple, now: datetime, _tz_key: tuple, tz, months: bool, parts: bool):
    # `now` and `tz` are keyed by `_now_key` and `_tz_key` besides themselves (equal for an equal instant)
    return tuple(_search_as_written(text, now, tz, months, parts))


# "the 3rd" alone, and a word's colon: read in every text searched for dates
_THE_ORDINAL_RE = lazy_regex(
    r"\bthe\s+(\d{1,2})(?:st|nd|rd|th)\b(?!\s+(?:of\b|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))", re.I
)
_WORD_COLON_RE = lazy_regex(r"(?<=[^\W\d]):")
_CLAUSE_OF_RE = lazy_regex(r"(?:[^,;!?.]|,(?=\s*\d)|\.(?!\s))+")


def _search(text: str, now: datetime, tz: ZoneInfo, months: bool = False, parts: bool = False) -> list[Found]:
    """Every date phrase in a text, in order, each read forward from `now` in `tz`. `months`: "in June" is
    the 1st of June (read so only for a reminder; a deadline or a trip "in June" has no day). `parts`: a part
    of the day said alone is a moment ("this evening", "in the morning"), and so is the weekend, as in a request;
    in a mail it is news ("thanks for your call this morning"), not a date."""
    text = text or ""
    found: list[Found] = []
    taken: list[tuple[int, int]] = []

    def add(start: int, end: int, phrase: str | None, value):
        if value is None or any(start < e and s < end for s, e in taken):
            return
        if _ORDINAL_ONLY.match(text[start:end].strip()) and _COUNTED_AFTER.match(text, end):
            return  # "Max's 6th birthday", "the 3rd floor": an ordinal of something else, no day
        taken.append((start, end))
        phrase = text[start:end] if phrase is None else phrase
        found.append(Found(phrase, _in_next_week(phrase, value, now, tz), start))

    for m in ISO_RE.finditer(text):
        add(m.start(), m.end(), m.group(0), parse_moment(m.group(0), tz))
    for m in _WEEKDAY_NTH_RE.finditer(text):  # "Saturday the 20th": the 20th that is a Saturday, not this Saturday
        add(m.start("day"), m.end(), None, _weekday_nth(m, now, tz))
    for m in _IN_A_WHILE_RE.finditer(text):  # "in 2 hours": the parser keeps the day and drops the hours
        add(m.start(), m.end(), m.group(0), _in_a_while(m, now, tz))
    for m in _EDGE_RE.finditer(text):
        add(m.start(), m.end(), m.group(0), _edge(m, now, tz))
    for m in _WEEK_SAID_RE.finditer(text):  # "Friday next week", "the end of next week": the parser drops the week
        add(m.start(), m.end(), m.group(0), _week_said(m, now, tz))
    for m in _DAY_RANGE_RE.finditer(text):  # "March 10-12": from its first day
        before = text[: m.start()]
        if (
            m.group("e1")
            and not re.search(r"[-–]", m.group(0))
            and re.search(r"\bfrom\s*$", before, re.I)
            and _DAY_CHANGED_RE.search(before)
        ):
            continue  # "move it from 3 to 5 May" goes to the 5th: a day changed; "off to Porto from 3 to 6 June" is a stay
        add(m.start(), m.end(), m.group(0), _day_range(m, now, tz))
    for m in _DAY_DOT_MONTH_RE.finditer(text):  # "31.01.": the parser reads it as a time or not at all
        add(m.start(), m.end(), m.group(0).rstrip("."), _day_dot_month(m, now, tz))
    for m in _CUED_DAY_DOT_RE.finditer(text):  # "bis 22.1" at the end, its last dot gone with the sentence's
        add(m.start("day"), m.end(), m.group(0)[m.start("day") - m.start() :], _day_dot_month(m, now, tz))
    for pattern, read in (
        (_WEEKS_FROM_RE, _weeks_from),
        (_MIDDLE_RE, _middle),
        (_QUARTER_RE, _quarter_end),
        (_WEEK_AFTER_NEXT_RE, _week_after_next),
        (_GERMAN_EDGE_RE, _german_edge),
        (_SLASH_DAY_RE, _slash_day),
        (_DAY_STOP_MONTH_RE, _day_stop_month),
        (_A_MONTH_RE, _a_month),
        (_PERIOD_OUT_RE, _period_out),
        (_AFTER_WEEKEND_RE, _after_weekend),
        (_SLASH_RANGE_RE, _slash_day),
        (_GERMAN_DAY_OF_MONTH_RE, _german_day_of_month),
        (_SPANISH_RANGE_RE, _spanish_range),
    ):
        for m in pattern.finditer(text):  # "a week from Friday", "mid-February", "end of Q1"
            add(m.start(), m.end(), m.group(0), read(m, now, tz))
    for m in _FEAST_RE.finditer(text):  # "before Easter": the parser knows no feasts
        add(m.start(), m.end(), m.group(0), _feast(m, now, tz))
    for m in _BEFORE_MONTH_RE.finditer(text):  # "before August": by the end of July
        add(m.start(), m.end(), m.group(0), _before_month(m, now, tz))
    for m in _IN_A_MONTH_RE.finditer(text) if months else ():
        add(m.start(), m.end(), m.group(0), _month_start(m, now, tz))
    # "the 3rd" alone (not "the 3rd of next month" nor "the 3rd March", which the parser reads whole)
    for m in _THE_ORDINAL_RE.finditer(text):
        add(m.start(), m.end(), m.group(0), _ordinal(m.group(0), now, tz))
    for m in _AFTER_NEXT_RE.finditer(text):
        add(m.start(), m.end(), m.group(0), _after_next(m, now, tz))
    for m in _WEEKEND_RE.finditer(text) if parts else ():
        add(m.start(), m.end(), m.group(0), _weekend(now, tz))
    hours: list[Clock] = []
    for clock in itertools.chain(
        itertools.islice(map(spoken_clock, SPOKEN_CLOCK_RE.finditer(text)), PARTS_READ),
        itertools.islice(map(written_clock, _CLOCK_TIME_RE.finditer(text)), PARTS_READ),
    ):
        if clock is not None and not any(
            clock.start < e and s < clock.end for s, e in taken + [(c.start, c.end) for c in hours]
        ):
            hours.append(clock)
    hours += [
        clock
        for clock in map(_between_hours, itertools.islice(_BETWEEN_HOURS_RE.finditer(text), PARTS_READ))
        if clock is not None
        and not any(clock.start < e and s < clock.end for s, e in taken + [(c.start, c.end) for c in hours])
    ]
    hours += [
        Clock(m.start(), m.end(), int(m.group("hour")), half=(m.group("half") or "").replace(".", "").lower())
        for m in itertools.islice(_BARE_HOUR_RE.finditer(text), PARTS_READ)
        if int(m.group("hour")) <= 23
        and not any(m.start() < e and s < m.end() for s, e in taken + [(c.start, c.end) for c in hours])
    ]
    hours = [_with_zone(text, _with_range(text, clock)) for clock in hours]
    masked = text
    for s, e in taken + [(clock.start, clock.end) for clock in hours]:  # what is read already is not read twice
        masked = masked[:s] + " " * (e - s) + masked[e:]
    # and times past the first few are hidden from the parser too: thousands of them took it seconds
    masked = _BARE_HOUR_RE.sub(_blank, _CLOCK_TIME_RE.sub(_blank, SPOKEN_CLOCK_RE.sub(_blank, masked)))
    masked = _BETWEEN_COUNT_RE.sub(_blank, masked)
    masked = _PARSER_MISREADS.sub(_blank, masked)
    masked = _AT_A_PLACE_RE.sub(_blank, masked)  # "on 4 March at a clinic": the parser then finds "March" alone
    masked = _CODE_RE.sub(_blank, masked)  # "flight VC 3152 on 19 March": the parser takes 3152 for the year
    masked = _WORD_COLON_RE.sub(",", masked)  # "Friday: dentist at 10": the parser sees no day in "Friday:"
    masked = _AGE_RE.sub(
        lambda m: m.group(0)[: m.start("age") - m.start()] + " " * len(m.group("age")), masked
    )  # "before August 3": the parser then finds "August" alone
    masked = _AGED_RE.sub(lambda m: m.group(0)[: m.start("age") - m.start()] + " " * len(m.group("age")), masked)

    def finished() -> list[Found]:
        dated = _with_parts(text, _weekday_and_date(text, found), now, tz) if parts else _weekday_and_date(text, found)
        timed = [_rest_of_weekend(f, now, tz) for f in _with_hours(text, dated, hours, now, tz)]
        return sorted((_weekday_the_nth(f, now, tz) for f in timed), key=lambda f: f.start)

    if not _DAYLIKE_RE.search(masked):
        return finished()
    before = len(found)
    _parsed_phrases(masked, 0, now, tz, add)
    if len(found) == before and len(masked) <= CLAUSES_UP_TO:
        # the parser read the whole as something else ("…on March 20, remind me to…": "20" and "me"):
        # each clause alone, where a date is read as it is written ("December 30, 2026" stays whole)
        for clause in _CLAUSE_OF_RE.finditer(masked):  # a stop ends a sentence, not "120.00"
            whole = clause.start() == 0 and clause.end() == len(masked)  # read just above, to the same end
            if not whole and _DAYLIKE_RE.search(clause.group(0)):
                _parsed_phrases(clause.group(0), clause.start(), now, tz, add)
    return finished()


_WEEKDAY_ALONE_RE = lazy_regex(
    r"^(?:on\s+|by\s+|bis\s+(?:spätestens\s+)?|am\s+)?(?:mon|tues|wednes|thurs|fri|satur|sun)day|"
    r"^(?:on\s+|by\s+|bis\s+(?:spätestens\s+)?|am\s+)?(?:montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonntag)$",
    re.I,
)


# "tuesday the 27th", "Freitag den 13.": a weekday and a day of the month, without its month
_WEEKDAY_THE_NTH_RE = lazy_regex(
    r"^(?:on\s+|by\s+|am\s+|bis\s+)?(?P<weekday>(?:mon|tues|wednes|thurs|fri|satur|sun)day|montag|dienstag|mittwoch|"
    r"donnerstag|freitag|samstag|sonntag)[\s,]+(?:(?:the\s+|den\s+)(?P<day>\d{1,2})(?:st|nd|rd|th|\.)?|"
    r"(?P<nth>\d{1,2})(?:st|nd|rd|th|\.))"
    # its month not said ("monday the 5th of june" is read whole), nor an hour right after the number
    r"(?!\s*(?:of\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|mär|mai|okt|dez)|[\d:]|\s*(?:am|pm|uhr|h)\b)",
    re.I,
)
_WEEKDAY_NUMBER = {
    **{d: n for n, d in enumerate(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))},
    **{d: n for n, d in enumerate(("montag", "dienstag", "mittwoch", "donnerstag", "freitag", "samstag", "sonntag"))},
}


def _weekday_the_nth(found: Found, now: datetime, tz: ZoneInfo) -> Found:
    """ "tuesday the 27th": the next 27th that is a Tuesday within half a year, not the next Tuesday; when none is (a
    slip), the next 27th; the phrase's hour kept. The found as it was for any other phrase."""
    said = _WEEKDAY_THE_NTH_RE.match(found.phrase.strip())
    if said is None:
        return found
    weekday, day = _WEEKDAY_NUMBER[said.group("weekday").lower()], int(said.group("day") or said.group("nth"))
    ahead = _days_numbered(day, now.astimezone(tz).date(), months=7)
    candidate = next((d for d in ahead if d.weekday() == weekday), ahead[0] if ahead else None)
    if candidate is None:
        return found
    value = found.value
    return replace(
        found, value=datetime.combine(candidate, value.timetz()) if isinstance(value, datetime) else candidate
    )


def _days_numbered(day: int, today: date, months: int) -> list[date]:
    """The days numbered `day` from today on, over the next `months` months (none in a month too short for it)."""
    found = []
    for ahead in range(months):
        month, year = (today.month - 1 + ahead) % 12 + 1, today.year + (today.month - 1 + ahead) // 12
        try:
            candidate = date(year, month, day)
        except ValueError:
            continue
        if candidate >= today:
            found.append(candidate)
    return found


def _weekday_and_date(text: str, found: list[Found]) -> list[Found]:
    """ "Freitag, 15.01.", "Friday, 15 January": a weekday and the date written right after it are one day, the date
    (the weekday alone would be the next one)."""
    found = sorted(found, key=lambda f: f.start)
    kept: list[Found] = []
    for f in found:
        last = kept[-1] if kept else None
        if (
            last is not None
            and not isinstance(last.value, datetime)
            and _WEEKDAY_ALONE_RE.match(last.phrase.strip())
            and re.fullmatch(r"[\s,]*(?:den\s+|the\s+)?", text[last.start + len(last.phrase) : f.start])
            and re.search(r"\d", f.phrase)
        ):
            kept[-1] = replace(f, phrase=text[last.start : f.start + len(f.phrase)], start=last.start)
            continue
        kept.append(f)
    return kept


# what an ordinal counts when it is no day of the month
_COUNTED_AFTER = lazy_regex(
    r"\s*(?:birthday|bday|anniversary|grade|floor|place|time|edition|row|round|year|semester|"
    r"attempt|try|child|kid)\b",
    re.I,
)
# a flight's, a train's or a bus's number ("VC 3152", "LH123", "ICE 1043"): no year, no day
# and a policy's number with its parts joined by hyphens ("HR-2291-07", read as July 2291): no date either (one that
# starts with a year, "PR-2027-0142", is left as it was: the parser reads no day in it)
_CODE_RE = lazy_regex(
    r"(?-i:\b[A-Z]{2,3}(?:\s?\d{2,5}\b|-(?!(?:19|20)\d\d\b)\d{2,6}(?:-\d+)*\b))(?!\s*(?:EUR|€|Uhr|h\b))"
)
# words before a date that make the date parser's search lose the day after them
_PARSER_MISREADS = lazy_regex(r"\bbefore\b", re.I)
# "at a clinic", "at an office" after a day: a place, which the parser tries to read as an hour and loses the day
_AT_A_PLACE_RE = lazy_regex(r"\bat\s+an?\b(?=\s+(?!quarter\b|half\b)[^\W\d])", re.I)
CLAUSES_UP_TO = 300  # characters: a chat message is read clause by clause; a long paste is not read twice


_ENGLISH_MONTH = lazy_regex(
    r"\b(?:january|february|march|april|june|july|august|september|october|november|"
    r"december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\b",
    re.I,
)  # not "may": a verb too


_MONTH_THEN_WEEKDAY = lazy_regex(
    r"^(?:january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|"
    r"jun|jul|aug|sep|sept|oct|nov|dec)\s+(?:on\s+|,\s*)?(?P<day>(?:next\s+|this\s+)?"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)day)$",
    re.I,
)


@lru_cache(maxsize=512)
def _parser_hits(masked: str, _now_key: tuple, now: datetime, _tz_key: tuple, tz) -> tuple:
    """The date parser's (phrase, datetime) pairs in `masked`: a pure function of the text, the moment (its naive
    local time is the parser's base) and the zone (its date order), kept for the same ones, as the same masked
    text is read again by several rules (`search` with and without `parts`, a clause alone); its milliseconds
    are most of a message's reading."""
    _, search_dates = _parser()
    try:
        hits = search_dates(masked, languages=LANGUAGES, settings=_settings(now, tz, date_order(tz))) or []
        if _ENGLISH_MONTH.search(masked) and not any(_ENGLISH_MONTH.search(phrase) for phrase, _ in hits):
            # the parser guesses one language for the whole text, and a name in it ("Madrid", "LH 123") can make
            # it guess wrong: "on 10 February 2027" is then read as no date at all
            hits = search_dates(masked, languages=["en"], settings=_settings(now, tz, date_order(tz))) or hits
    except (ValueError, OverflowError, AttributeError):
        hits = []
    return tuple(hits)


# what each of the parser's phrases is checked with (made once: a text holds several)
_LITTLE_WORD_AFTER_RE = lazy_regex(r"\s+(?:at|on|in|by|and|or)(?:\s+the)?$", re.I)
_UNIT_FIRST_RE = lazy_regex(r"(?:hrs?|mins?|secs?)\s+(?=\D)", re.I)
_A_YEAR_RE = lazy_regex(r"\b\d{4}\b")
_DIGITS_ONLY_RE = lazy_regex(r"[\d\s.,:/-]+")
_NUMERIC_DATE_RE = lazy_regex(r"\d{1,2}[./]\d{1,2}[./]\d{2,4}|\d:\d\d")
_VERSION_RE = lazy_regex(r"\b\d+(\.\d+)+\b")
_DOTTED_DATE_RE = lazy_regex(r"\d{1,2}\.\d{1,2}\.\d{4}")


def _parsed_phrases(masked: str, offset: int, now: datetime, tz: ZoneInfo, add) -> None:
    """The date parser's phrases in `masked` (text at `offset` of the whole), each kept by `add(start, end, …)`
    unless it is no date a person wrote ("version 1.2", a bare number) or lies in the past."""
    _parser()  # first: `could_hold_date` reads the languages the parser loaded
    if not could_hold_date(masked, _LANGUAGES_KEY):
        return  # "ping 3": no word the parser knows, so nothing it could find would be kept (date_words)
    hits = _parser_hits(masked, _moment_key(now), now, _zone_key(tz), tz)
    cursor = 0
    for phrase, parsed in hits:
        # the parser gives its phrase with the spaces collapsed, and a masked hour leaves a run of them
        located = (
            re.compile(r"\s+".join(map(re.escape, phrase.split()))).search(masked, cursor) if phrase.split() else None
        )
        if located is None:
            continue
        start, cursor = located.start(), located.end()
        phrase = masked[start:cursor]
        # "on Friday at" noon, "on 8 February at the" oral surgeon
        kept = _LITTLE_WORD_AFTER_RE.sub("", phrase.strip(" ,.;:!?"))
        unit = _UNIT_FIRST_RE.match(kept)  # "send it to HR by Friday": HR is no hour
        if unit:
            kept, phrase = kept[unit.end() :], phrase[phrase.index(kept) + unit.end() :]
            start = cursor - len(phrase)
        cleaned = " ".join(kept.split())
        if (
            _NOT_DATES.match(cleaned)
            or not _DAYLIKE_RE.search(_A_YEAR_RE.sub("", cleaned))
            or _DIGITS_ONLY_RE.fullmatch(cleaned)
            and not _NUMERIC_DATE_RE.search(cleaned)
        ):
            continue
        if _VERSION_RE.search(cleaned) and not _DOTTED_DATE_RE.search(cleaned):
            continue  # "version 1.2"
        month_then_day = _MONTH_THEN_WEEKDAY.match(cleaned)
        if month_then_day:
            # "the Dienstplan for february on monday": the month names the thing, the day is Monday (the parser
            # reads the two as the month's day of today's number)
            day = resolve(month_then_day.group("day"), now, tz)
            if day is None:
                continue
            cut = len(phrase) - len(phrase.lstrip(" ,.;:!?")) + month_then_day.start("day")
            phrase, kept, start = phrase[cut:], kept[month_then_day.start("day") :], start + cut
            add(start + offset, start + offset + len(kept), None, day)
            continue
        value = _to_value(cleaned, parsed, now, tz)
        if local_date(value, tz) < now.astimezone(tz).date():
            continue
        if not _A_YEAR_RE.search(cleaned) and local_date(value, tz).year > now.year + 2:
            # "zone 21 by 16 July" is no 21 July 2116 (the number before it read as the day, the day as the year):
            # the date is what follows that number
            first = re.match(r"\s*\S+\s+", masked[start:cursor])
            if first is not None:
                _parsed_phrases(masked[start + first.end() : cursor], offset + start + first.end(), now, tz, add)
            continue
        start += offset + len(phrase) - len(phrase.lstrip(" ,.;:!?"))
        add(start, start + len(kept), None, value)  # as written, with any hour read apart inside it


def find_dates(text: str, today: date, tz: ZoneInfo, now: datetime | None = None) -> list[date | datetime]:
    """The dates in a text, in order; a year left out means the next such day on or after today."""
    now = now or datetime.combine(today, time(9, 0), tzinfo=tz)
    return [f.value for f in search(text, now, tz)]


def at_moment(found: Found | None, now: datetime, tz: ZoneInfo, default_hour: int = 9) -> datetime | None:
    """A reminder's moment: a date alone means `default_hour` that day; a moment still to come, or None."""
    if found is None:
        return None
    value = found.value
    if not isinstance(value, datetime):
        value = datetime.combine(value, time(default_hour), tzinfo=tz)
    return value if value > now else None


def week_range(words: str, now: datetime, tz: ZoneInfo, found: list[Found] | None = None) -> tuple[date, date, str]:
    """The span a question asks about ("today", "tomorrow", "this week", "next week", "this month", one day
    named as a date), with its name; two weeks from today when it names none. `found`: the dates `search`
    found in the words already, when the caller has them."""
    today = now.astimezone(tz).date()
    said = GERMAN_SPAN_RE.sub(lambda m: _GERMAN_SPANS[_span_key(m.group(0))], words.lower())
    if "before the weekend" in said:  # up to Friday; asked on a weekend, there is none left before it
        friday = today + timedelta(days=4 - today.weekday())
        if friday >= today:
            return today, friday, "before the weekend"
    if "tomorrow" in said:
        return today + timedelta(days=1), today + timedelta(days=1), "tomorrow"
    if "today" in said or "tonight" in said or re.search(r"\bmy day\b", said):
        return today, today, "today"
    if "next week" in said:
        monday = today + timedelta(days=7 - today.weekday())
        return monday, monday + timedelta(days=6), "next week"
    if "weekend" in said:  # on a Sunday, what is left of it: today
        saturday = today - timedelta(days=1) if today.weekday() == 6 else today + timedelta(days=5 - today.weekday())
        return max(today, saturday), saturday + timedelta(days=1), "this weekend"
    if "week" in said:
        # asked on a weekend, "this week" is the one coming: what is left of this one is the weekend alone
        end = today + timedelta(days=6 - today.weekday() + (7 if today.weekday() >= 5 else 0))
        return today, end, "this week"
    if "month" in said:
        return today, date(today.year, today.month, calendar.monthrange(today.year, today.month)[1]), "this month"
    named = [local_date(f.value, tz) for f in (search(words, now, tz) if found is None else found)]
    # one day named: "on Friday", "next Monday", "the 12th" is that day, "by Friday" up to it; not a span
    # from it ("after the 12th") nor a day gone by ("what was on on Monday?", "on Jan 3" two days ago)
    if len(set(named)) == 1 and not _NOT_ONE_DAY_RE.search(said) and named[0] <= today + timedelta(days=300):
        if _UP_TO_RE.search(said):
            return today, named[0], f"by {fmt_day(named[0])}"
        return named[0], named[0], f"on {fmt_day(named[0])}"
    return today, today + timedelta(days=13), "the next two weeks"


_UP_TO_RE = lazy_regex(r"\b(?:by|before|until|till|up to)\b")
# a span asked about in German, in the English words the spans are read by: "vorm WE", "diese Woche", "morgen"
_GERMAN_SPANS = {
    "vorm we": "before the weekend",
    "vor dem we": "before the weekend",
    "vorm wochenende": "before the weekend",
    "vor dem wochenende": "before the weekend",
    "bis zum wochenende": "before the weekend",
    "nächste woche": "next week",
    "nächsten woche": "next week",
    "wochenende": "weekend",
    "am we": "weekend",  # "WE" alone is the English "we": only after a German word
    "übers we": "weekend",
    "dieses we": "weekend",
    "woche": "week",
    "monat": "month",
    "heute": "today",
    "morgen": "tomorrow",
}
GERMAN_SPAN_RE = lazy_regex(
    r"\b(?:" + "|".join(sorted((k.replace(" ", r"\s+") for k in _GERMAN_SPANS), key=len, reverse=True)) + r")\b"
)


def _span_key(said: str) -> str:
    return " ".join(said.split())


_NOT_ONE_DAY_RE = lazy_regex(r"\b(?:after|from|since|between|was|were|did)\b")
