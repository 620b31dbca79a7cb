"""A dictated note that runs on without a full stop, several things each with its own day: "note for the next
weeks uh invoice Studio Kranich … by the end of the month then the VAT return for Q4 is due February 10th and the
KSK wants my new income estimate before the 15th of February ok thanks". Its parts are cut after each day, where
the next thing starts with "then", "and", "also" or "plus"; intents.py reads each part as a request of its own."""

from __future__ import annotations

import re
from datetime import datetime

from wilson.model.offline import dates
from wilson.kernel.lazy_regex import lazy_regex

# what a dictated note starts with before its first thing: "note for the next weeks uh", "ok so", "notes:"
_LEAD_RE = lazy_regex(
    r"^\s*(?:(?:a\s+)?notes?(?:\s+(?:for|to)\s+(?:the\s+next\s+(?:few\s+)?(?:days|weeks)|myself|self|later|"
    r"the\s+list))?|ok(?:ay)?\s+so|so)\b[\s,:.-]*(?:(?:uh+|um+|erm|hm+|so|ok(?:ay)?)\b[\s,:.-]*)*",
    re.I,
)
# and how it ends: "ok thanks", "that's it", "danke"
_TAIL_RE = lazy_regex(r"[\s,.-]+(?:(?:ok(?:ay)?|that'?s\s+(?:it|all)|thanks?|thank\s+you|thx|danke)\b[\s,.!]*)+$", re.I)
# where the next thing starts, right after a day
_NEXT_RE = lazy_regex(r"^[\s,;]+(?:and\s+then|then|and|also|plus|und\s+dann|dann|und)\s+", re.I)

# a part that asks ("add pay rent by Friday and remind me …") is a request of its own, asked for one at a time
_ASKING_RE = lazy_regex(
    r"^(?:please\s+|pls\s+)?(?:add|remind|put|note|schedule|set|create|make|move|drop|cancel|can|could|would|"
    r"will|please|pls|bitte|erinnere?|trag|schreib)\b",
    re.I,
)
_JOINED_RE = lazy_regex(r"\s(?:then|and|also|plus|und|dann)\s", re.I)

MOST_PARTS = 6


def parts(text: str, now: datetime, tz) -> list[str]:
    """The things of a run-on note, each ending with its day; [] unless the note has no sentence's full stop
    inside it and two or more such parts."""
    if len(text) < 40 or not _JOINED_RE.search(text):
        return []  # one thing (and no need to look for days)
    said = _TAIL_RE.sub("", _LEAD_RE.sub("", text.strip(), count=1)).strip()
    if not said or said.rstrip(".!").count(". ") or "?" in said:
        return []  # sentences: read one by one elsewhere; a question asks, it lists nothing
    cuts, start = [], 0
    for found in dates.search(said, now, tz):
        end = found.start + len(found.phrase)
        after = _NEXT_RE.match(said[end:])
        if after is not None and end > start:
            cuts.append(said[start:end].strip(" ,;"))
            start = end + after.end()
    if not cuts:
        return []
    cuts.append(said[start:].strip(" ,;"))
    if len(cuts) > MOST_PARTS or any(_ASKING_RE.match(part) for part in cuts):
        return []
    if not dates.search(cuts[-1], now, tz):
        return []  # each part before ends with its day; "… then the kids' party" with none is no list of dated things
    return cuts
