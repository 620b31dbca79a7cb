"""A request in a formal, indirect register, in the plain words the rules read: "Would you be so kind as to remind
me …", "It would be very kind if you could add …", "I would like you to note that I must …", "I would be grateful
for a reminder on Sunday …", "I would like to have a task to …", "Note for my list: …", "… let's say by Friday".

A careful writer, or one writing in a language not their own, asks in full sentences; the rules match a request by
its verb at the start (wilson/model/offline/framing.py takes off the everyday wrappers, "could you please …"). These
wrappers say nothing but "please": taken off, what is left is read like any request. "Please note that" before a
need ("… that I must renew my passport") leaves the need; before news of a thing ("… that the contract must be
signed by the 12th") it leaves the thing's need, which framing.py reads as the act.

"Until Friday", from a writer who means "by Friday", is read as "by" only in a request to note or add something
(a task's deadline), never in a snooze or a stay ("on holiday until the 18th"). A need said first and its reminder
asked after it ("I keep forgetting to back up my memories. Could you remind me every Friday?") is that reminder; "it's
time I answered the inquiry" is the need to answer it (only of an act to do: "it's time we went home" asks nothing).
A task put off or an outcome told in so many words is read by put_off.py and outcomes.py, called from here.

Pure: `plain(text)` rewrites the text, or gives it back as it was.
"""

from __future__ import annotations

import re

from wilson.kernel.lazy_regex import lazy_regex
from wilson.model.offline import acts, outcomes, put_off

# "would you be so kind as to …", "could you be so kind and …", "be so kind as to …"
_SO_KIND = lazy_regex(
    r"^(?:(?:would|could|will)\s+you\s+(?:please\s+)?)?be\s+so\s+kind\s+(?:as\s+to|and)\s+(?:please\s+)?", re.I
)
# "it would be (very) kind of you if you could …", "I would be grateful if you could …", "I would like you to …"
_IF_YOU_COULD = lazy_regex(
    r"^(?:(?:it|that)\s+would\s+be\s+(?:very\s+|really\s+|most\s+|so\s+)?(?:kind|nice|helpful|great|good|lovely|"
    r"wonderful)(?:\s+of\s+you)?\s+if\s+you\s+(?:could|would|can)|i(?:'d|\s+would)\s+be\s+(?:very\s+|most\s+|really\s+)?"
    r"(?:grateful|thankful|glad)\s+if\s+you\s+(?:could|would|can)|i\s+would\s+(?:like|ask|want)\s+you\s+to|"
    r"may\s+i\s+ask\s+you\s+to|i\s+(?:kindly\s+)?ask\s+you\s+to)\s+(?:please\s+|kindly\s+)?",
    re.I,
)
# "I'd be grateful if you added …", "it would be kind if you reminded me …": the wish said in the past tense
_IF_YOU_DID = lazy_regex(
    r"^(?:(?:it|that)\s+would\s+be\s+(?:very\s+|really\s+)?(?:kind|nice|great|good|helpful|lovely)(?:\s+of\s+you)?|"
    r"i(?:'d|\s+would)\s+be\s+(?:very\s+|most\s+)?(?:grateful|thankful|glad)|i(?:'d|\s+would)\s+appreciate\s+it)\s+"
    r"if\s+you\s+(?P<verb>added|put|noted|reminded|moved|deleted|removed|cancelled|canceled|dropped|snoozed)\b",
    re.I,
)
_DID = {
    "added": "add",
    "noted": "note",
    "reminded": "remind",
    "moved": "move",
    "deleted": "delete",
    "removed": "remove",
    "cancelled": "cancel",
    "canceled": "cancel",
    "dropped": "drop",
    "snoozed": "snooze",
    "put": "put",
}
# "I should like to be reminded …": the older English "should" of a wish
_SHOULD_LIKE = lazy_regex(r"^i\s+should\s+(?=like\b|love\b|be\s+grateful\b)", re.I)
# "I would be grateful for a reminder on Sunday at 18:00 to …", "from now on I need a reminder on …": a reminder
_FOR_A_REMINDER = lazy_regex(
    r"^(?:from\s+now\s+on\s*,?\s+)?i(?:'d|\s+would)?\s+(?:be\s+(?:very\s+|most\s+)?grateful\s+for|appreciate|"
    r"(?:also\s+)?need|would\s+like|like|want)\s+(?:to\s+(?:have|get)\s+)?an?\s+"
    r"(?P<often>daily|weekly|monthly|yearly|regular|repeating)?\s*reminder\b\s*",
    re.I,
)
# "I would like to have a task to update my CV", "I'd like a to-do for …": a task asked for
_WANT_TASK = lazy_regex(
    r"^i(?:'d|\s+would)\s+(?:like|love|want)\s+(?:to\s+(?:have|get|add)\s+)?an?\s+(?:new\s+)?(?:task|to-?do)\s+"
    r"(?:to|for|:)\s*"
    # "add a task for me: send the glossary …"
    r"|^(?:add|make|create|put\s+down)\s+an?\s+(?:new\s+)?(?:task|to-?do)\s+for\s+me\s*(?:[:\-–]\s*|to\s+)",
    re.I,
)
# "(please) note that …", "please take down that …", "put on my list that …", "note for my list: …"
_NOTE_THAT = lazy_regex(
    r"^(?:please\s+)?(?:(?:note|take\s+down|write\s+down|jot\s+down)\s+(?:that|:)|"
    r"(?:put|add|write|note)\s+(?:it\s+)?(?:down\s+)?(?:on|to|in)\s+(?:my|the)\s+(?:to-?do\s+)?list\s+(?:that|:)|"
    r"note\s+for\s+(?:my|the)\s+(?:to-?do\s+)?list\s*:)\s*",
    re.I,
)
# what follows "note that" and is a need of the user's, said as a need ("I must renew my passport …")
_NEED_SAID = lazy_regex(
    r"^(?:i|we)\s+(?:really\s+|still\s+|also\s+)?(?:must|have\s+to|need\s+to|should|have\s+got\s+to)\b", re.I
)
# what follows "note that" and is a thing and what has to be done with it ("the contract … must be signed …")
_THING_NEEDED = lazy_regex(
    r"^(?:the|my|our)\s+[^,.;!?]+?\s+(?:has|have|needs?|must|should)\s+(?:to\s+)?be\s+[a-z]+", re.I
)
# "the publisher Ossolineum needs my signed declaration on the 20th": what someone needs of the user, sent to them
_THEY_NEED_MY = lazy_regex(
    r"^(?P<who>(?:the|my|our)\s+[^,.;!?]+?)\s+(?:needs|wants|expects|is\s+waiting\s+for)\s+(?P<what>(?:my|the|a|an)\s+.+)$",
    re.I | re.S,
)
# "please don't let me forget to …": the "please" before the framing framing.py reads
_PLEASE_DONT_FORGET = lazy_regex(r"^please\s+(?=(?:don'?t|do\s+not)\s+(?:let\s+me\s+)?forget\b)", re.I)
# "I keep forgetting to back up my memories. Could you remind me every Friday at 17:00?": the need, then the request
# with only its when
_NEED_THEN_REMIND = lazy_regex(
    r"^(?:(?:i|we)\s+(?:keep\s+forgetting|always\s+forget|often\s+forget|tend\s+to\s+forget)\s+to|"
    r"(?:i|we)\s+(?:really\s+)?(?:must|need\s+to|have\s+to|should))\s+(?P<what>[^.!?]+?)\s*[.!]\s+"
    r"(?:(?:could|can|would|will)\s+you\s+(?:please\s+)?|please\s+)?remind\s+me\s+"
    r"(?P<when>(?:every|each|on|at|in|tomorrow|tonight|today|next|this)\b[^.!?]*?)(?:[\s,]+please)?\s*[?.!]*$",
    re.I | re.S,
)
# "It's time I answer the inquiry from the Goethe-Institut": a need said as its time having come
_TIME_I = lazy_regex(r"^it'?s\s+(?:high\s+|about\s+)?time\s+(?:that\s+)?(?:i|we)\s+(?!(?:was|were|had|did)\b)", re.I)
# "…, I would like to do it by the end of next week": the when of the need said before it
_DO_IT_WHEN = lazy_regex(
    r"[,;.]\s*(?:and\s+)?(?:i|we)\s+(?:would\s+like|'d\s+like|want|plan|hope|intend)\s+to\s+(?:do|finish|send)\s+it\s+"
    r"(?P<when>(?:by|before|until|till|on|in|within|this|next|tomorrow|today)\b[^.!?]*?)\s*[.!]*$",
    re.I,
)
# ", he is waiting for them": why the task is due, no part of it
_WHY_AFTER = lazy_regex(r",\s*(?:he|she|they|we)\s+(?:is|are|was|were|'s|'re)\s+\w+ing\b[^.!?]*", re.I)
# ", let's say by the middle of the month", "let's say for Friday": a day offered, said as a suggestion
_LETS_SAY = lazy_regex(
    r"[\s,]*\blet'?s\s+say\b[\s,]*(?=(?:by|for|on|until|till|before|in|within|at|the|next|this)\b)", re.I
)
# "… until Friday", "until 12.03.", "until tomorrow evening" at a request's deadline: by then
_UNTIL = lazy_regex(
    r"\b(?:until|till)\b(?=\s+(?:the\s+)?(?:\d|tomorrow|tonight|today|next|this|end|(?:mon|tues|wednes|"
    r"thurs|fri|satur|sun)day|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))",
    re.I,
)
# a request to keep a task, the only place "until" is a deadline
_TASK_ASKED = lazy_regex(
    r"^(?:add|note|put|write|take\s+down)\b|^(?:i|we)\s+(?:must|have\s+to|need\s+to|should)\b", re.I
)


def plain(text: str) -> str:
    """The request without its formal wrappers, in the words the rules read; the text as it was when it has none."""
    said = text.replace("’", "'").strip()
    was = None
    while was != said:
        was = said
        said = _SO_KIND.sub("", _PLEASE_DONT_FORGET.sub("", _SHOULD_LIKE.sub("I would ", said)))
        said = _IF_YOU_DID.sub(lambda m: _DID[m.group("verb").lower()], said)
        said = _IF_YOU_COULD.sub("", said)
        time_i = _TIME_I.match(said)
        if time_i:
            rest = said[time_i.end() :]
            verb = re.match(r"[a-z]+ed\b", rest, re.I)  # "it's time I renewed my passport": renew it
            rest = acts.base_verb(verb.group(0)) + rest[verb.end() :] if verb else rest
            rest = _DO_IT_WHEN.sub(lambda m: " " + m.group("when"), rest)
            # only an act to do ("answer the inquiry"), not "it's time we went home" nor "… I told you"
            said = f"I need to {rest}" if acts.act(rest.rstrip(" .!")) else said
        said = _reminder_wished(said)
        need = _NEED_THEN_REMIND.match(said)
        said = f"remind me {need.group('when').strip()} to {need.group('what').strip()}" if need else said
        said = _WANT_TASK.sub("add ", said)
        said = _noted(said)
        said = put_off.said_plainly(said)  # "please ask me about the receipts again on Monday", a task put off
        said = outcomes.said_plainly(said)  # "I have spoken with Mrs. Wendler": told by how it turned out
    said = _LETS_SAY.sub(" ", said)
    if said == text.replace("’", "'").strip():
        return text
    if _TASK_ASKED.match(said):
        said = _WHY_AFTER.sub("", _UNTIL.sub("by", said))
    if re.match(r"(?:remind me|add|move|snooze|drop|delete|cancel|put|note|change)\b", said, re.I):
        said = re.sub(r"\s*\?+\s*$", "", said)  # "would you be so kind as to remind me …?" asks nothing: a request
    return said[:1].lower() + said[1:] if re.match(r"[A-Z][a-z]", said) and not re.match(r"I\b", said) else said


def _reminder_wished(said: str) -> str:
    """ "I would be grateful for a reminder on Sunday at 18:00 to plan my week" → "remind me on Sunday at 18:00 to
    plan my week"; "… a reminder every Monday …" keeps its "every"."""
    found = _FOR_A_REMINDER.match(said)
    if not found:
        return said
    rest = said[found.end() :]
    often = (found.group("often") or "").lower()
    every = {"daily": "every day ", "weekly": "every week ", "monthly": "every month ", "yearly": "every year "}
    return f"remind me {every.get(often, '')}{rest}".strip()


def _noted(said: str) -> str:
    """ "Please note that I must renew my passport before April" → "I must renew my passport before April"; "note
    that the contract must be signed by the 12th" → "the contract must be signed by the 12th"; "note for my list: the
    publisher needs my declaration on the 20th" → "add send my declaration to the publisher on the 20th"."""
    found = _NOTE_THAT.match(said)
    if not found:
        return said
    rest = said[found.end() :].strip()
    if _NEED_SAID.match(rest) or _THING_NEEDED.match(rest):
        return rest
    needed = _THEY_NEED_MY.match(rest)
    if needed:
        what, when = (
            re.split(r"\s+(?=(?:on|by|until|till|before|in|within)\s)", needed.group("what"), maxsplit=1) + [""]
        )[:2]
        who = needed.group("who")[:1].lower() + needed.group("who")[1:]
        return f"add send {what.strip()} to {who} {when.strip()}".strip()
    if re.search(r"\blist\b", found.group(0), re.I):
        # "note for my list: …", "add to my list that I send him my rates": a task, the doing without its doer
        return "add " + re.sub(r"^(?:i|we)\s+", "", rest, flags=re.I)
    return rest  # "note that I cancelled the subscription": news, read by the rules that read news
