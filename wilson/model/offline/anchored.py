"""A reminder set relative to a task or a topic already known: "remind me the day before the library books are
due", "remind me two days before the semester fee is due", "remind me a week before the trip to Japan", "remind me
about the flights the day before", "remind me the morning of the pitch deck deadline". The moment is counted back
(or on) from the task's due day or the topic's start, never from now.

Pure: reads the message and the open tasks and topics in the context, writes nothing.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta

from wilson.model.offline import dates, sentences
from wilson.model.offline.phrases import Chat, Reply
from wilson.model.offline.words import NUMBER_WORDS, best, words
from wilson.kernel.lazy_regex import lazy_regex

_COUNT = {**NUMBER_WORDS, "the": 1}  # "the day before" counts one
_WHEN = (
    r"(?:(?P<n>a|an|one|two|three|four|five|six|seven|the|\d{1,2})\s+(?P<unit>days?|weeks?|nights?|evening|morning)"
    r"\s+(?P<way>before|ahead of|prior to|after)|the\s+(?P<part>morning|evening|day)\s+of)"
)
_ANCHORED_RE = lazy_regex(
    r"^\s*(?:please\s+)?remind\s+me\s+(?:(?:about|of)\s+(?P<first>.+?)\s+"
    + _WHEN.replace("?P<", "?P<a_")
    + r"|"
    + _WHEN
    + r"\s+(?:(?:the|my|our)\s+)?(?P<what>.+?))"
    r"(?:\s+(?:is|are)\s+due|\s+deadline|\s+(?:starts?|begins?))?\s*[.!?]*$",
    re.I,
)


def anchored(chat: Chat, text: str) -> Reply | None:
    """A one-off reminder counted from a known task's due day or topic's start; None when the words say no such
    reminder or name nothing known."""
    found = _ANCHORED_RE.match(text)
    if found is None:
        return None
    said = {k[2:] if k.startswith("a_") else k: v for k, v in found.groupdict().items() if v is not None}
    what = said.get("first") or said.get("what") or ""
    if re.match(r"(?:the\s+)?(?:day\s+after\s+)?(?:tomorrow|tmrw|next)\b|to\s", what, re.I):
        return None  # "remind me the day after tomorrow to …": a day from now, said with its own words
    wanted = words(what)
    task = best([t for t in chat.tasks if t.get("status", "open") == "open" and t.get("due")], wanted)
    topic = best([t for t in chat.topics if t.get("status") != "closed" and t.get("starts")], wanted)
    item = task if task is not None else topic
    anchor = dates.parse_moment(item.get("due") if task is not None else item.get("starts"), chat.tz) if item else None
    if anchor is None:
        return None
    day = dates.local_date(anchor, chat.tz)
    hour = 9
    if said.get("part"):  # "the morning of", "the evening of", "the day of"
        hour = 18 if said["part"].lower() == "evening" else 9
    else:
        unit = said["unit"].lower()
        n = int(said["n"]) if said["n"].isdigit() else _COUNT.get(said["n"].lower(), 1)
        step = timedelta(days=7 * n) if unit.startswith("week") else timedelta(days=n)
        day = day + step if said["way"].lower() == "after" else day - step
        if unit in ("evening", "night", "nights"):
            hour = 18
    at = datetime.combine(day, time(hour), tzinfo=chat.tz)
    if at <= chat.now:
        return None  # counted back into the past: the usual reading (or its question) is better
    title = str(item.get("title"))
    return Reply(
        "",
        [("remind", {"text": title, "at": at.isoformat()})],
        f"one-off reminder counted from “{title}” ({dates.fmt_day(day if isinstance(day, date) else day)})",
    )


# "Praxis Dr. Adeyemi: Ihr Termin am Mi, 20.01. um 08:40 ist bestätigt. -- remind me the evening before pls": the
# reminder asked last, counted from the one moment the text before it gives (a pasted confirmation)
_BEFORE_IT_RE = lazy_regex(
    r"(?:^|[.!?\n]|--+|–|—)\s*(?:(?:ok|so|and|pls|please|can\s+you|could\s+you)[\s,]+)*(?:please\s+)?remind\s+me\s+"
    r"(?:(?P<n>a|an|one|two|three|the|\d{1,2})\s+(?P<unit>days?|evening|morning|night|hours?|weeks?)\s+"
    r"(?:before|ahead|earlier|prior)|the\s+(?P<part>morning|day)\s+of)"
    r"(?:\s+(?:it|that|then|hand))?"
    # "… the evening before at 7 to put my papers in my bag": its hour, and what to be reminded of
    r"(?:\s+at\s+(?P<hour>\d{1,2})(?::(?P<minute>\d\d))?\s*(?P<half>am|pm)?)?(?:\s+to\s+(?P<what>[^.!?\n]{3,120}?))?"
    r"(?:\s+(?:pls|please|thanks|thx))*\s*[.!]*\s*$",
    re.I,
)


def before_told(chat: Chat, text: str) -> Reply | None:
    """A reminder asked after a pasted text, "the evening before" the one moment it gives; None when the text asks
    no such reminder, or gives no moment, or more than one."""
    found = _BEFORE_IT_RE.search(text)
    if found is None or found.start() == 0:
        return None
    told = text[: found.start()].strip(" -–—.")
    moments = [m.value for m in dates.search(told, chat.now, chat.tz)]
    # "am Mi, 20.01. um 08:40": a day and an hour read apart are one moment
    days = {m for m in moments if not isinstance(m, datetime)} or {dates.local_date(m, chat.tz) for m in moments}
    hours = [m for m in moments if isinstance(m, datetime)]
    if len(days) != 1:
        return None
    day = next(iter(days))
    moment = datetime.combine(day, hours[0].astimezone(chat.tz).timetz()) if len(hours) == 1 else day
    hour = 9
    if found.group("part"):
        hour = 9  # "the morning of", "the day of"
    else:
        unit = found.group("unit").lower()
        n = int(found.group("n")) if found.group("n").isdigit() else _COUNT.get(found.group("n").lower(), 1)
        if unit.startswith("hour"):
            if not isinstance(moment, datetime):
                return None
            return _reminded(chat, told, moment - timedelta(hours=n), what=(found.group("what") or "").strip())
        day -= timedelta(days=7 * n) if unit.startswith("week") else timedelta(days=n)
        hour = 18 if unit in ("evening", "night") else 9
    minute = 0
    if found.group("hour"):  # "the evening before at 7": 19:00; "the day before at 8": 08:00
        hour, minute = int(found.group("hour")), int(found.group("minute") or 0)
        half = (found.group("half") or "").lower()
        unit = (found.group("unit") or "").lower()
        late = unit == "evening" or unit == "night" and 6 <= hour  # "the night before at 1" is 01:00
        hour = hour % 12 + 12 if half == "pm" or not half and late and hour < 12 else hour % 12 if half else hour
        if hour > 23 or minute > 59:
            return None
    at = datetime.combine(day, time(hour, minute), tzinfo=chat.tz)
    return _reminded(chat, told, at, what=(found.group("what") or "").strip())


def _reminded(chat: Chat, told: str, at: datetime, what: str = "") -> Reply | None:
    if at <= chat.now:
        return None
    first = re.split(r":\s+|\n", (sentences.split(told) or [told])[0], maxsplit=1)[0].strip(" .")
    what = what or (first if 0 < len(first) <= 60 else "what you told me")
    return Reply("", [("remind", {"text": what, "at": at.isoformat()})], "a reminder counted from the moment told")
