"""A task put off in the words of someone who asks to hear of it again: "please ask me about the receipts again on
Monday at 9", "bring up the health insurance research again in two hours", "the thank-you cards must wait until my
deadline is over, please bring them up again in ten days", with the reason after it (", I am in a call now").

Each is the plain "snooze X until WHEN" the rules read (wilson/model/offline/intents.py _move), the task named by
the words, the moment by the day said: the reason said after it is no part of either.

Pure: `said_plainly(text)` gives the snooze, or the text as it was.
"""

from __future__ import annotations

import re

from wilson.kernel.lazy_regex import lazy_regex

_WHEN = r"(?P<when>(?:on|at|in|next|tomorrow|tonight|this|after|later)\b[^,;]*?)"
# a reason said after the moment: ", this week I have no time for them", ", I am in a call now", "as I'm busy"
_REASON = r"(?:\s*[,;]\s*(?:this\s+week|today|now|right\s+now|i|we|he|she|they|it|because|as|since)\b.*)?"
_AGAIN = lazy_regex(
    # "ask me about the receipts again on Monday at 9", "nudge me about the BDÜ profile again next week" ("remind me
    # about X again on Monday" is read as it is: intents.py ABOUT_RE)
    r"^(?:please\s+)?(?:ask|ping|nudge)\s+me\s+(?:about|of)\s+(?P<what>.+?)\s+again\s+"
    + _WHEN
    + _REASON
    # "bring up the health insurance research again in two hours"
    + r"[.!]*$|^(?:please\s+)?bring\s+up\s+(?P<what2>.+?)\s+again\s+"
    + _WHEN.replace("when", "when2")
    + _REASON
    + r"[.!]*$",
    re.I | re.S,
)
# "the thank-you cards must wait until …, please bring them up again in ten days": the thing told first is "them"
_TOLD_FIRST = lazy_regex(
    r"^(?P<thing>(?:the|my|our)\s+[^,;.!?]+?)\s+(?:must|can|will\s+have\s+to|has\s+to|have\s+to)\s+wait\b[^,;]*[,;]\s*"
    r"(?:so\s+)?(?:please\s+)?(?:bring\s+(?:it|them)\s+up|ask\s+me\s+(?:about\s+(?:it|them)\s+)?|"
    r"remind\s+me\s+(?:of|about)\s+(?:it|them)\s+)\s*(?:again\s+)?" + _WHEN + _REASON + r"[.!]*$",
    re.I | re.S,
)


def said_plainly(text: str) -> str:
    """ "snooze X until WHEN" for a task asked to be brought up again; the text as it was otherwise."""
    found = _AGAIN.match(text.strip()) or _TOLD_FIRST.match(text.strip())
    if found is None:
        return text
    said = found.groupdict()
    what = said.get("what") or said.get("what2") or said.get("thing") or ""
    when = re.sub(r"^(?:on|at)\s+", "", (said.get("when") or said.get("when2") or "").strip(), flags=re.I)
    return f"snooze {what.strip()} until {when}"
