"""A thing named with the day it is due, and no verb: "expense report by friday", "the seminar paper by the 20th",
"Wohngeldantrag bis zum 15.", "the deadline for the grant application is 28 Feb", "registration for the marathon
closes on Feb 15", "the application for the Kita place must be in by 31 January".

A person writes a to-do so when the doing goes without saying: it is a task named by the thing, due that day. What
is not a to-do stays out: a question, news of what happened or of someone else ("the report was finished by
Friday", "Tom by Friday"), and anything whose words after the cue are more than a day ("the party by the lake on
Saturday").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from wilson.model.offline import dates
from wilson.kernel.lazy_regex import lazy_regex

# the thing, then its cue and its day: "expense report by friday", "Abgabe bis 3. März"
_THING_BY_RE = lazy_regex(
    r"^(?P<thing>[^,;:!?]{3,60}?)\s*[,–-]?\s+(?P<cue>(?:is\s+|are\s+)?(?:due\s+(?:on\s+|by\s+)?|"
    r"(?:must|has to|have to|needs? to)\s+be\s+(?:in|done|handed in|submitted|sent|back|returned|paid|filed)\s+"
    r"(?:by|before|on)\s+|by\s+|before\s+|no later than\s+|bis\s+(?:zum\s+|zur\s+|spätestens\s+)?|spätestens\s+"
    r"(?:am\s+|zum\s+|bis\s+)?|fällig\s+(?:am\s+|bis\s+)?))(?P<when>.+?)[\s.!]*$",
    re.I,
)
# "the deadline for the grant application is 28 Feb", "registration for the marathon closes on Feb 15"
_DEADLINE_FOR_RE = lazy_regex(
    r"^(?:the\s+)?(?:deadline|frist|abgabe(?:frist)?)\s+(?:for|of|für)\s+(?P<thing>[^,;:!?]{3,60}?)\s+"
    r"(?:is|ist|are)\s+(?:on\s+|am\s+)?(?P<when>.+?)[\s.!]*$",
    re.I,
)
_CLOSES_RE = lazy_regex(
    r"^(?P<thing>(?:the\s+)?(?:registration|applications?|enrol?ment|sign-?ups?|booking|nominations?)\s+"
    r"(?:for|to)\s+[^,;:!?]{3,50}?)\s+(?:closes?|ends?)\s+(?:on\s+)?(?P<when>.+?)[\s.!]*$",
    re.I,
)
# a thing that does something, or someone: news, not a thing to do ("the report was finished by Friday")
_NEWS_RE = lazy_regex(
    r"\b(?:i|we|he|she|they|you|was|were|will|would|had|has|did|got|went|came|said|says|"
    r"[a-z]{3,}ed|owes?|wants|needs|says|gets|goes|comes|ich|wir|er|sie|war|wurde|hat|habe)\b",
    re.I,
)
_LEAD_RE = lazy_regex(
    r"^(?:(?:ok|okay|so|and|also|oh|btw|reminder|note)\b[\s,:]*)+|^(?:the|my|our|die|der|das)\s+", re.I
)
# the little words a day may be said with, besides the day itself
_AROUND = {"the", "on", "at", "of", "end", "latest", "at the latest", "am", "zum", "ende", "dem", "des"}


@dataclass
class Due:
    title: str
    when: dates.Found


def thing_due(text: str, now: datetime, tz) -> Due | None:
    """The task a verbless "<thing> by <day>" names: its title (the thing) and its day; None when the text is not
    that."""
    said = (text or "").strip().replace("’", "'")
    if not said or said.endswith("?") or len(said.split()) > 14:
        return None
    named = _DEADLINE_FOR_RE.match(said) or _CLOSES_RE.match(said)  # the words say it is a deadline
    found = named or _THING_BY_RE.match(said)
    if found is None:
        return None
    thing = found.group("thing").strip(" ,.-–")
    if not named and _NEWS_RE.search(thing) or not re.search(r"[^\W\d_]{3,}", thing):
        return None
    when = found.group("when")
    days = dates.search(when, now, tz)
    if len(days) != 1:
        return None
    rest = " ".join(when.replace(days[0].phrase, " ").lower().split())
    if rest and not set(re.findall(r"[\w.]+", rest)) <= _AROUND:
        return None  # "the party by the lake on Saturday": more than a day after the cue
    title = _LEAD_RE.sub("", _LEAD_RE.sub("", thing)).strip()
    if not title:
        return None
    return Due(title[:1].upper() + title[1:], days[0])
