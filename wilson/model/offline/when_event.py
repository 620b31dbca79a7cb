"""“When is the dentist?”, “when is Mum's birthday?”: an open task's due day, or an event found in the calendar
by its words, when no topic holds them (wilson/model/offline/looks.py when_topic asks topics first). The
calendar is read with `calendar_lookup` over the year ahead; the answer comes in the round after its result."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

from wilson.model.offline import dates
from wilson.model.offline.phrases import Chat, Reply
from wilson.model.offline.words import best, words
from wilson.kernel.lazy_regex import lazy_regex

AHEAD = timedelta(days=365)  # how far ahead a "when is" question is looked up
SHOWN = 3  # events named in one answer
# "when is my next appointment?": the first event to come, whatever it is called
_NEXT_RE = lazy_regex(r"^(?:next|first)\s+(?:appointment|event|meeting|thing)s?$", re.I)
# words that say what kind of thing it is, not which: "my dentist appointment" is the event "Dentist"
_KINDS = {"appointment", "event", "meeting", "meet", "thing", "next", "first", "one", "task"}  # "meet": words() stems
# a question about a day or the calendar itself ("when is my calendar busy tomorrow?"), which listing answers
_ABOUT_DAYS_RE = lazy_regex(r"\b(?:calendar|diary|day|week|weekend|busy|free|anything|today|tonight|tomorrow)\b", re.I)


# "what's my next appointment?", "where is my next meeting?": the first event to come, as "when is" finds it
NEXT_ASKED_RE = lazy_regex(
    r"^\s*(?:what|where|which|what time)(?:'?s|\s+is)\s+(?:(?:the|my|our)\s+)?"
    r"(?P<topic>(?:next|first)\s+(?:appointment|event|meeting|thing)s?)\s*\??\s*$",
    re.I,
)


def next_event(chat: Chat, text: str) -> Reply | None:
    """ "What's my next appointment?": read the year ahead for the first event still to begin."""
    found = NEXT_ASKED_RE.match(text)
    return lookup(chat, found.group("topic")) if found else None


def lookup(chat: Chat, phrase: str) -> Reply | None:
    """An open task the words name, with its due day; else the calendar read for the year ahead. None when the
    words name nothing ("it") or ask about a day."""
    if _ABOUT_DAYS_RE.search(phrase) or dates.search(phrase, chat.now, chat.tz):
        return None
    wanted = event_words(phrase)
    task = best([t for t in chat.tasks if t.get("status", "open") == "open"], wanted) if wanted else None
    if task is not None:
        return Reply(_due_line(chat, task), [], "when is a task due")
    if "calendar_lookup" not in chat.offered or not (wanted or _NEXT_RE.match(phrase.strip())):
        return None
    return Reply(
        "",
        [("calendar_lookup", {"start": chat.today.isoformat(), "end": (chat.today + AHEAD).isoformat()})],
        "when is an event",
    )


def event_words(phrase: str) -> set[str]:
    """The words that say which event a phrase means, not what kind of thing it is ("my dentist appointment")."""
    return words(phrase) - _KINDS


def asked(chat: Chat, start: date, end: date) -> bool:
    """Whether a calendar read was lookup's, not a look at a day or a week."""
    return start == chat.today and end == chat.today + AHEAD


def answer(chat: Chat, phrase: str, events: list) -> Reply:
    """The events to come (or under way) that share most of the phrase's words, soonest first; the first to
    start, asked as "my next appointment"; or that none was found."""
    coming = []
    for event in events:
        begins = dates.parse_moment(event.get("start"), chat.tz) if isinstance(event, dict) else None
        ends = dates.parse_moment(event.get("end"), chat.tz) if isinstance(event, dict) else None
        if begins is None or dates.as_datetime(ends or begins, chat.tz) < chat.now:
            continue  # over already (today's 09:00 appointment, asked at noon)
        coming.append((dates.as_datetime(begins, chat.tz), event, begins))
    coming.sort(key=lambda found: found[0])
    wanted = event_words(phrase)
    if not wanted:  # "my next appointment": the first still to begin
        named = [found for found in coming if found[0] >= chat.now][:1]
    else:
        shared = [(len(wanted & words(str(found[1].get("title") or ""))), found) for found in coming]
        most = max((score for score, _ in shared), default=0)
        named = [found for score, found in shared if most and score == most]
    if not named:
        return Reply(
            f"I found nothing called “{phrase.strip()}” in your calendar for the year ahead.",
            [],
            "when is an event: none found",
        )
    return Reply(
        "\n".join(_line(chat, event, begins) for _, event, begins in named[:SHOWN])
        + (f"\n(and {len(named) - SHOWN} more)" if len(named) > SHOWN else ""),
        [],
        "when is an event",
    )


def _line(chat: Chat, event: dict, begins: date | datetime) -> str:
    day = dates.local_date(begins, chat.tz)
    timed = isinstance(begins, datetime) and not event.get("all_day")
    at = f" {begins.astimezone(chat.tz):%H:%M}" if timed else ""
    days = (day - chat.today).days
    far = " (under way)" if dates.as_datetime(begins, chat.tz) < chat.now else _how_far(days)
    place = f", {event['location']}" if event.get("location") else ""
    return f"{event.get('title') or 'An event'}: {dates.fmt_day(day)}{at}{far}{place}."


def _due_line(chat: Chat, task: dict) -> str:
    due = dates.parse_moment(task.get("due"), chat.tz)
    if due is None:
        return f"“{task.get('title')}” has no due date."
    day = dates.local_date(due, chat.tz)
    at = f" {due.astimezone(chat.tz):%H:%M}" if isinstance(due, datetime) else ""
    verb = "was due" if day < chat.today else "is due"
    return f"“{task.get('title')}” {verb} {dates.fmt_day(day)}{at}{_how_far((day - chat.today).days)}."


def _how_far(days: int) -> str:
    return {0: " (today)", 1: " (tomorrow)"}.get(days, f" (in {days} days)" if days > 1 else "")
