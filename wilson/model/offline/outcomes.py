"""A task done, dropped or called off, told by how things turned out rather than by the task's own verb: "I have
spoken with Mrs. Wendler" (the call is made), "the signed contract is already on its way" (it is sent), "so the table
reservation is not needed anymore" and "so no table needed any more" (drop it), "I decided not to apply for the
grant, please take it off my list", "not doing the 10k this year, take it off the list", "the card is in the post",
"we will not move to Schöneberg after all" (the move is off).

Each is said in the words the rules read ("I called …", "I sent …", "drop …"), which then find the task or topic it
names, or none: a thing no task names changes nothing. Only the user's own doing counts ("I", "we"), and only a
statement.

Pure: `said_plainly(text)` gives the plain words, or the text as it was.
"""

from __future__ import annotations

import re

from wilson.kernel.lazy_regex import lazy_regex

# "I have spoken with Mrs. Wendler", "we talked to the landlord", "phoned the plumber": the call made
_SPOKEN = lazy_regex(
    r"^(?i:(?:(?P<who>i|we)(?:'ve|\s+have)?\s+)?(?:just\s+|already\s+|finally\s+)*(?:(?:spoken|spoke|talked|phoned)\s+"
    r"(?:with|to)|phoned|rang|rung)\s+)(?=[A-Z]|(?:the|my|our)\s)"
)
# "the signed contract for Transpose is already on its way": it is sent
_ON_ITS_WAY = lazy_regex(
    r"^(?P<what>(?:the|my|our)\s+[^,.;!?]+?)\s+(?:is|are)\s+(?:already\s+|now\s+)?(?:on\s+(?:its|their)\s+way|"
    r"in\s+the\s+(?P<post>post|mail))\b(?P<rest>.*)$",
    re.I | re.S,
)
# "…, so the table reservation is not needed anymore": drop it
_NOT_NEEDED = lazy_regex(
    r"(?:^|[,;]\s*(?:so\s+|and\s+)?|\.\s+(?:so\s+)?)(?:(?P<what>(?:the|my|our)\s+[^,.;!?]+?)\s+(?:is|are)\s+"
    r"(?:not\s+needed|no\s+longer\s+needed|not\s+necessary|unnecessary)"
    # "… so no table needed any more"
    r"|no\s+(?P<what2>[^,.;!?]+?)\s+needed)(?:\s+any\s?more|\s+any\s+longer)?[\s.!]*$",
    re.I,
)
# "I decided not to apply for the grant this year, please take it off my list": drop what was decided against
_DECIDED_NOT = lazy_regex(
    r"^(?:(?:i|we)\s+(?:have\s+)?(?:decided|chose|chosen)\s+not\s+to|(?:i'?m\s+|we'?re\s+|i\s+am\s+|we\s+are\s+)?"
    r"not\s+(?:doing|going\s+to\s+do))\s+(?P<what>[^,.;!?]+?)"
    r"(?:\s+(?:this|next)\s+(?:year|month|week|time)|\s+after\s+all)*\s*[,;.]\s*(?:so\s+)?(?:please\s+)?"
    r"(?:take\s+it\s+off\s+(?:my|the)\s+list|delete\s+it|remove\s+it|drop\s+it|cancel\s+it|forget\s+it)[\s.!]*$",
    re.I,
)
# "we will not move to Schöneberg after all", "… so I will not travel to Wrocław in April": the move or trip is off
_NOT_GOING = lazy_regex(
    r"(?:^|[,;]\s*(?:so\s+|and\s+)?|\.\s+(?:so\s+)?)(?:i|we)\s+(?:will\s+not|won'?t|am\s+not\s+going\s+to|"
    r"are\s+not\s+going\s+to|aren'?t\s+going\s+to)\s+(?P<verb>move|travel|go|fly)\s+to\s+(?P<place>[^\W\d_][\w-]*)",
    re.I,
)
_NOUN = {"move": "move", "travel": "trip", "go": "trip", "fly": "trip"}
_EVENT = lazy_regex(r"\b(?:wedding|conference|trip|move|holiday|festival|visit)\b", re.I)


def said_plainly(text: str) -> str:
    """The outcome told in the words the rules read; the text as it was when it tells none."""
    said = text.replace("’", "'").strip()
    spoken = _SPOKEN.match(said)
    if spoken:
        return f"{spoken.group('who') or 'I'} called {said[spoken.end() :]}"  # "talked to the landlord": the user did
    sent = _ON_ITS_WAY.match(said)
    if sent:
        what = sent.group("what")
        verb = "posted" if sent.group("post") else "sent"  # "the card is in the post": posted, as its task says
        return f"I {verb} {what[:1].lower()}{what[1:]}{sent.group('rest')}"
    dropped = _NOT_NEEDED.search(said) or _DECIDED_NOT.match(said)
    if dropped:
        named = dropped.groupdict().get("what") or dropped.group("what2")
        what = re.sub(r"^(?:the|my|our)\s+", "", named, flags=re.I)
        return f"drop {what}"
    off = _NOT_GOING.search(said)
    if off and off.group("place")[:1].isupper():
        # "they called off the wedding, so I will not travel to Wrocław": the wedding's topic, wherever it is
        event = _EVENT.search(said[: off.start()])
        noun = event.group(0).lower() if event else _NOUN[off.group("verb").lower()]
        return f"drop the {noun} to {off.group('place')}"
    return text
