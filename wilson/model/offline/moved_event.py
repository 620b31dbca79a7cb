"""An event the user has a plan for, moved: in the calendar (the event's old and new start) or in words ("the
Bellagio wedding got pushed to november … same villa, 4th to 7th now"). Its topic takes the new dates and each open
task of it moves by as much, never into the past nor past the new start; a message naming a planned event moved is
never a second plan for it.

Pure: reads the context's topics and tasks, writes nothing.
"""

from __future__ import annotations

import calendar
import re
from datetime import date, datetime, timedelta

from wilson.kernel.lazy_regex import lazy_regex
from wilson.model.offline import dates
from wilson.model.offline.phrases import Chat, Reply
from wilson.model.offline.words import words


def matching_topics(buffer: dict, topics: list[dict]) -> list[dict]:
    """The open topics named by the event's title, as it is now or as it was."""
    titles = _titles(buffer)
    return [t for t in topics if str(t.get("title", "")).strip().lower() in titles and t.get("status") != "closed"]


def moved(buffer: dict, topics: list[dict], tasks: list[dict], now: datetime, tz) -> list:
    """update_topic and update_task calls for an event moved from `buffer["previous"]["start"]` to
    `buffer["start"]`; [] when it did not move."""
    previous = buffer.get("previous") or {}
    old = dates.parse_moment(previous.get("start"), tz)
    new = dates.parse_moment(buffer.get("start"), tz)
    if old is None or new is None:
        return []
    delta = dates.as_datetime(new, tz) - dates.as_datetime(old, tz)
    if not delta:
        return []
    # moved already: the user said so in words before the calendar did (a topic shows its day, so a move within
    # the day is always the calendar's to tell)
    new_day, old_day = dates.local_date(new, tz), dates.local_date(old, tz)
    known = [dates.parse_moment(t.get("starts"), tz) for t in matching_topics(buffer, topics)]
    if new_day != old_day and known and all(k is not None and dates.local_date(k, tz) == new_day for k in known):
        return []
    titles = _titles(buffer)
    topic_ids = {t.get("id") for t in topics if str(t.get("title", "")).strip().lower() in titles}
    calls = [
        ("update_topic", {"topic_id": t.get("id"), "starts": buffer.get("start"), "ends": buffer.get("end")})
        for t in matching_topics(buffer, topics)
    ]
    start_day = dates.local_date(new, tz)
    for task in tasks:
        if task.get("status", "open") != "open":
            continue
        mine = str(task.get("topic") or "").strip().lower() in titles or (
            task.get("topic_id") is not None and task.get("topic_id") in topic_ids
        )
        due = dates.parse_moment(task.get("due"), tz)
        if not mine or due is None:
            continue
        shifted = _shift(due, delta, start_day, now, tz)
        if dates.parse_moment(shifted, tz) != due:  # a few hours' move may leave a day's task where it was
            calls.append(("update_task", {"task_id": task.get("id"), "due": shifted}))
    return calls


# "the Bellagio wedding got pushed to november", "die Lesung ist auf den 12. März verschoben", "the retreat has been
# moved to 4-7 November"
_MOVED_RE = lazy_regex(
    r"^(?P<what>.+?)\s+(?:(?:got|has\s+been|have\s+been|was|were|is|are|wurde|wurden|ist|sind)\s+)?"
    r"(?:pushed(?:\s+back)?|moved|postponed|rescheduled|verschoben|verlegt)\s+"
    r"(?:to|till|until|auf|in\s+den|nach)\s+(?P<when>[^.;!?–—]+)"
    # "…, so I moved the medical to tuesday the 27th, 8:30": the user moved it
    r"|\b(?:i|we)\s+(?:have\s+|'ve\s+|just\s+)?(?:moved|pushed|postponed|rescheduled)\s+"
    r"(?P<what2>(?:the|my|our)\s+[^,.;!?]+?)\s+(?:to|till|until)\s+(?P<when2>[^.;!?–—]+)",
    re.I,
)
# moved, and the new days said after a reason: "the Riga tour got pushed back, the concert hall was double booked 🙄
# it's 13th to 18th of august now", "die Lesung wurde verschoben, neu: 12. März"
_MOVED_THEN_SAID_RE = lazy_regex(
    r"^(?P<what>[^,.;!?]+?)\s+(?:got|has\s+been|have\s+been|was|were|is|are|wurde|wurden|ist|sind)\s+"
    r"(?:pushed\s+back|pushed|moved|postponed|rescheduled|verschoben|verlegt)\b.*?"
    # the new days are days of a month ("13th to 18th of august", "12. März", "12.3."), not a span of time ("2 weeks")
    r"(?:\bit'?s|\bnow|\bjetzt|\bneu:?|\bnew\s+dates?:?)\s+(?P<when>(?:the\s+|den\s+)?\d{1,2}(?:st|nd|rd|th|\.)?"
    r"(?:\s*(?:to|-|–|bis)\s*\d{1,2}(?:st|nd|rd|th|\.)?)?\s*(?:of\s+)?(?:\d{1,2}\b|jan|feb|mar|apr|may|jun|jul|aug|"
    r"sep|oct|nov|dec|mär|mai|okt|dez)[^.;!?]*)",
    re.I,
)
_LATER_RE = lazy_regex(r"\b(?:pushed\s+back|postponed|verschoben)\b", re.I)
# a span of days said without its month, which the move names: "4th to 7th now", "vom 4. bis 7."
_DAY_SPAN_RE = lazy_regex(
    r"\b(?:vom\s+)?(?P<first>\d{1,2})(?:st|nd|rd|th|\.)?\s*(?:to|-|–|bis(?:\s+zum)?|until)\s*"
    r"(?P<last>\d{1,2})(?:st|nd|rd|th|\.)?(?!\d|\s*(?:am|pm|uhr|h)\b|[:.]\d)",
    re.I,
)
# someone else's: "my sister's trip", "Anna's dentist appointment", "their wedding"
_SOMEONE_ELSES_RE = lazy_regex(
    r"\b(?:my|our|his|her|their)\s+(?:[\w-]+\s+)?(?:sister|brother|mother|father|mum|mom|dad|son|daughter|friend|"
    r"colleague|boss|cousin|aunt|uncle|partner|wife|husband)['’]s\b|\b(?-i:[A-Z])\w+['’]s\b|\b(?:his|her|their)\b",
    re.I,
)
# where it went starts with its day: "to november", "to tuesday the 27th, 8:30", "auf den 12. März", "to 4-7 May"
_DAY_FIRST_RE = lazy_regex(
    r"^(?:the\s+|den\s+|die\s+)?(?:\d|next\b|(?:mon|tues|wednes|thurs|fri|satur|sun)day|montag|dienstag|mittwoch|"
    r"donnerstag|freitag|samstag|sonntag|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|mär|mai|okt|dez)",
    re.I,
)
# words that name the kind of event, never which one: "the wedding got pushed" must name more than that
_KIND_WORDS = {
    "wedding", "trip", "tour", "party", "event", "exam", "appointment", "conference", "hochzeit", "reise", "feier",
    "termin", "prüfung", "got", "has", "been", "the", "our", "my",
}  # fmt: skip


def moved_in_words(chat: Chat, text: str) -> Reply | None:
    """A planned event moved, said in chat: its topic and open tasks moved to the new dates; None unless the words
    name exactly one open topic by a word of its own and say a new day."""
    found = _MOVED_RE.search(text.strip())
    if found is None or found.group("what") is None and found.group("what2") is None:
        found = _MOVED_THEN_SAID_RE.search(text.strip())
        if found is None:
            return None
    what, when = (
        (found.group("what"), found.group("when"))
        if found.group("what")
        else (found.group("what2"), found.group("when2"))
    )
    if _SOMEONE_ELSES_RE.search(what):
        return None  # "my sister's trip to Japan got pushed": hers
    said = words(what) - _KIND_WORDS - words(" ".join(_KIND_WORDS))  # as words() stems them: "wedding" is "wedd"
    # every word said names the topic ("the Japan exhibition" is no "Trip to Japan", "Anna's dentist" no party)
    named = [
        t
        for t in chat.topics
        if t.get("status") != "closed" and t.get("starts") and said and said <= words(str(t.get("title") or ""))
    ]
    if len(named) != 1 or not _DAY_FIRST_RE.match(when.strip()):
        return None  # "moved the Lisbon photos to the cloud on Friday": a day must be where it went
    topic = named[0]
    old = dates.parse_moment(topic.get("starts"), chat.tz)
    span = _new_span(when, text, chat)
    if old is None or span is None:
        return None
    start, end = span
    if _LATER_RE.search(text) and dates.local_date(start, chat.tz) <= dates.local_date(old, chat.tz):
        return None  # "pushed back" to a day before it was: a misreading, not a move
    old_end = dates.parse_moment(topic.get("ends"), chat.tz)
    if end is None and old_end is not None:  # its length kept: "the offsite got pushed to 3 May" ends as long after
        shift = dates.local_date(start, chat.tz) - dates.local_date(old, chat.tz)
        end = dates.local_date(old_end, chat.tz) + shift
    buffer = {
        "title": topic.get("title"),
        "start": start.isoformat(),
        "end": end.isoformat() if end else None,
        "previous": {"start": dates.iso(old)},
    }
    calls = moved(buffer, [topic], chat.tasks, chat.now, chat.tz)
    if not calls:
        return None
    return Reply("", calls, f"an event moved, said in words (→ {dates.fmt_day(start)})")


def _new_span(when: str, text: str, chat: Chat) -> tuple[date | datetime, date | None] | None:
    """The new first (and last) day: a month named after the move with a span of days said anywhere ("pushed to
    november … 4th to 7th now"), else the first day the words after the move give."""
    month = next((m for m in _MONTHS if re.search(rf"\b{m}", when, re.I)), None)
    span = _DAY_SPAN_RE.search(text)
    today = chat.now.astimezone(chat.tz).date()
    if month is not None and span is not None:
        number = _MONTHS[month]
        year = today.year + (1 if number < today.month else 0)
        first, last = int(span.group("first")), int(span.group("last"))
        days = calendar.monthrange(year, number)[1]
        if not (1 <= first <= last <= days):
            return None
        return date(year, number, first), date(year, number, last)
    found = dates.search(when, chat.now, chat.tz)
    if not found:
        return None
    day = found[0].value
    hour = next((f.value for f in found[1:] if isinstance(f.value, datetime)), None)
    if not isinstance(day, datetime) and hour is not None:  # "tuesday the 27th, 8:30": the day at that hour
        return datetime.combine(day, hour.astimezone(chat.tz).timetz()), None
    return (day if isinstance(day, datetime) else dates.local_date(day, chat.tz)), None


_MONTHS = {
    **{name.lower(): n for n, name in enumerate(calendar.month_name) if name},
    **{"januar": 1, "februar": 2, "märz": 3, "mai": 5, "juni": 6, "juli": 7, "oktober": 10, "dezember": 12},
}


def _titles(buffer: dict) -> set[str]:
    previous = buffer.get("previous") or {}
    return {str(t).strip().lower() for t in (buffer.get("title"), previous.get("title")) if t}


def _shift(due, delta: timedelta, start_day: date, now: datetime, tz) -> str:
    today = now.astimezone(tz).date()
    tomorrow = today + timedelta(days=1)
    if isinstance(due, datetime):
        shifted = due + delta
        if shifted <= now:
            shifted = datetime.combine(tomorrow, shifted.astimezone(tz).timetz())
        return shifted.isoformat()
    shifted = due + timedelta(days=round(delta.total_seconds() / 86400))
    return min(max(shifted, tomorrow), max(start_day, today)).isoformat()
