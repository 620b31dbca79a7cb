"""What a person's mail asks of the user, if anything.

A person who writes is not by that alone a reason to speak: holiday news, a thank-you, a baby's birth, "sounds
good, thanks" or an FYI that says nothing needs doing ask nothing, and a morning briefing that lists them is a list
of everything that arrived, not of what needs the user. A person's mail earns its telling by what it asks: a
question, a request, an invitation, a visit, or a change to something (a closure, a cancellation).

Only the writer's own words count: the quoted mail a reply carries is the user's own, already read, and a
pleasantry ("how are you?", "hope you're well") or a "nothing you need to do" asks nothing.
"""

from __future__ import annotations

import re
from wilson.kernel.lazy_regex import lazy_regex

_QUOTE_HEAD = lazy_regex(r"^(?:on|am) .{4,80}(?:wrote|schrieb)\b.*:$", re.I)
# a question asked out of politeness, and a "you need" that is said not to be so
_NOTHING_ASKED = lazy_regex(
    r"\b(?:how are (?:you|things)|how(?:'s| is) it going|how have you been|how was your \w+|"
    r"(?:i )?hope (?:you(?:'re| are)|all is|everything(?:'s| is)|this finds)[^.!?\n]*|what a \w+|"
    r"wie geht(?:'s| es)(?: (?:dir|euch|ihnen))?|alles (?:gut|klar) bei (?:dir|euch))\s*[?!.]?|"
    r"\b(?:nothing|no(?:thing)? (?:action|need))\b[^.!?\n]{0,30}|\b(?:you )?(?:don'?t|do not|won'?t) (?:need|have) to\b|"
    r"\bno rush\b|\bplease (?:welcome|join (?:us|me) in welcoming|give \w+ a (?:warm )?welcome)\b|\bsay (?:hi|hello)\b|\bsie m(?:ü|ue)ssen nichts\b|\bdu musst nichts\b",
    re.I,
)
ASKS_RE = lazy_regex(
    # a question: to the user, or one they are to answer
    r"\?|\b(?:can|could|would|will) (?:you|u)\b|\b(?:are|do|did|have) you\b|\bshall (?:we|i)\b|"
    r"\blet (?:me|us) know\b|\bif you (?:could|would|can)\b|\bwe (?:still )?need (?:your|the|a|an|you)\b|"
    r"\bwe (?:have not|haven't) (?:yet )?received\b|\bwe are still missing\b|\bget back to (?:me|us)\b|\b(?:your|ur) (?:thoughts|opinion|feedback|input|ok|go-ahead)\b|"
    r"\b(?:rsvp|reply|answer|confirm)\b|"
    # a request
    r"\b(?:please|pls|plz|kindly|remember to|don'?t forget|make sure|be sure to|i need you|we need you|"
    r"you (?:need|have|must|should|will need) to|i(?:'d| would) (?:need|like) you)\b|"
    r"(?:^|[.!?]\s+|\n\s*)(?:send|bring|book|pay|submit|sign|call|ring|text|collect|pick up|return|check|"
    r"look at|have a look|take a look|read|review|fill in|forward|remind)\b|"
    # an invitation, or a meeting with the user
    r"\b(?:come (?:by|over|round|along|to)|join (?:us|me)|you(?:'re| are) (?:invited|welcome)|invit\w+|"
    r"(?:call|meet|visit|pick) (?:you|u) up\b|(?:call|meet|visit) (?:you|u)\b|see (?:you|u) (?:on|at|tomorrow|tonight|"
    r"next|this|in)\b)|"
    # an arrangement that involves the user: someone arriving, coming over, to be met or picked up
    r"\b(?:i|we)(?:'ll| will| am| are|'m|'re)? (?:arriv\w*|land\w*|be there|be at (?:yours|your place)|come over|"
    r"coming over|drop by|pop by|stop by|be round)\b|\b(?:my|our) (?:flight|train|bus|plane) (?:lands|arrives|gets in)\b|"
    r"\b(?:ich|wir) (?:komme|kommen|lande|landen)\b[^.!?\n]{0,40}\ban\b|\bankunft\b|\babholen\b|"
    # German
    r"\b(?:bitte|benötigen wir|brauchen wir|fehl(?:t|en) (?:uns )?noch|haben sie noch bis|kannst du|könntest du|können sie|könnten sie|würdest du|würden sie|hast du|habt ihr|"
    r"gib (?:mir|uns) bescheid|sag (?:mir|uns) bescheid|melde? dich|meldet euch|ruf (?:mich|uns) an|"
    r"komm(?:t)? (?:vorbei|doch)|einladung|laden (?:dich|euch|sie) ein|denk(?:t)? (?:bitte )?an)\b",
    re.I | re.M,
)


def own_words(text: str) -> str:
    """The writer's own words: without the quoted mail a reply carries and its "On … wrote:" line."""
    return "\n".join(
        line
        for line in (text or "").splitlines()
        if not line.lstrip().startswith(">") and not _QUOTE_HEAD.match(line.strip())
    )


def asks(text: str, subject: str = "") -> str | None:
    """The words by which a person's mail asks something of the user ("could you", "please", "come by"), or None
    when it only tells: news, thanks, a greeting, an acknowledgement. A reply's subject ("Re: Dinner on Friday?")
    is the user's own question, not one asked of them."""
    asked_in_subject = "" if re.match(r"\s*(?:re|aw|fwd?|wg)\s*:", subject or "", re.I) else subject
    said = _NOTHING_ASKED.sub(" ", f"{asked_in_subject}\n{own_words(text)}")
    found = ASKS_RE.search(said)
    return found.group(0).strip() if found else None
