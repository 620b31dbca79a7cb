"""“When is the dentist?”, “when is Mum's birthday?”: an event found in the calendar by its words, when no
topic holds them (wilson/model/offline/looks.py when_topic asks topics first). The calendar is read with
`calendar_lookup` over the year ahead; the answer comes in the round after its result."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

from wilson.model.offline import dates
from wilson.model.offline.phrases import Chat, Reply
from wilson.model.offline.words import words

AHEAD = timedelta(days=365)  # how far ahead a "when is" question is looked up
SHOWN = 3  # events named in one answer
# "when is my next appointment?": the first event to come, whatever it is called
_NEXT_RE = re.compile(r"^(?:next|first)\s+(?:appointment|event|meeting|thing)s?$", re.I)


def lookup(chat: Chat, phrase: str) -> Reply | None:
    """The calendar read for the year ahead, when the words name something (not "it"); None otherwise."""
    if "calendar_lookup" not in chat.offered or not (words(phrase) or _NEXT_RE.match(phrase.strip())):
        return None
    return Reply("", [("calendar_lookup", {"start": chat.today.isoformat(),
                                           "end": (chat.today + AHEAD).isoformat()})], "when is an event")


def answer(chat: Chat, phrase: str, events: list) -> Reply:
    """The events still to come whose titles hold every word of the phrase, soonest first; or the first event
    to come, asked as "my next appointment"; or that none was found."""
    coming = []
    for event in events:
        begins = dates.parse_moment(event.get("start"), chat.tz) if isinstance(event, dict) else None
        if begins is not None:
            coming.append((dates.as_datetime(begins, chat.tz), event, begins))
    coming.sort(key=lambda found: found[0])
    if _NEXT_RE.match(phrase.strip()):
        named = coming[:1]
    else:
        wanted = words(phrase)
        named = [found for found in coming if not wanted - words(str(found[1].get("title") or ""))]
    if not named:
        return Reply(f"I found nothing called “{phrase.strip()}” in your calendar for the year ahead.", [],
                     "when is an event: none found")
    return Reply("\n".join(_line(chat, event, begins) for _, event, begins in named[:SHOWN])
                 + (f"\n(and {len(named) - SHOWN} more)" if len(named) > SHOWN else ""), [], "when is an event")


def _line(chat: Chat, event: dict, begins: date | datetime) -> str:
    day = dates.local_date(begins, chat.tz)
    timed = isinstance(begins, datetime) and not event.get("all_day")
    at = f" {begins.astimezone(chat.tz):%H:%M}" if timed else ""
    days = (day - chat.today).days
    far = {0: " (today)", 1: " (tomorrow)"}.get(days, f" (in {days} days)" if days > 1 else "")
    place = f", {event['location']}" if event.get("location") else ""
    return f"{event.get('title') or 'An event'}: {dates.fmt_day(day)}{at}{far}{place}."
