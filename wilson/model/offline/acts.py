"""A single act asked for as a command: "Submit the visa application by Feb 20", "call the bank tomorrow", "buy milk".

A message that begins with a verb done in one go (pay, send, submit, call, buy, return …) is one task: the thing to
do, due on the day it names. It is not a plan, even when it names what a plan is for: the official plan's steps end
with "Submit", and "submit the visa application" is that step, asked for alone. A need told ("I need to file my
taxes by the 25th") is left to the plans, which read what it is for. A verb with a person after it asks Wilson to
act ("book me a table", "thank you"), "it" is something said before ("make it happen"), and a question is no
command: none of them is a task.
"""

from __future__ import annotations

import re

from wilson.kernel.lazy_regex import lazy_regex

# verbs of one act, as a person writes a task; the first word of a command
ACT_VERBS = frozenset(
    """
pay call phone ring email e-mail text message write send post mail submit sign return renew book buy get pick collect
order clean fix repair check pack print register apply hand drop take bring water feed wash vacuum hoover tidy sort
read review update upload transfer deposit withdraw change replace charge install ask invite thank meet
arrange confirm reply respond answer contact cook bake shop walk mow service top refill scan fill practise
practice learn finish do make grab reserve deliver ship recycle empty defrost iron sweep mop dust declutter measure
photocopy copy download chase
""".split()
)
# framing of a need before the act: "I need to", "we have to", "I must"
_NEED = r"(?:(?:i|we)\s+(?:really\s+|still\s+|also\s+|definitely\s+)*(?:need to|have to|must|should|ought to|got to|'ve got to|have got to)\s+)"
_COMMAND_RE = lazy_regex(rf"^\s*(?:please\s+)?{_NEED}?(?P<verb>[a-z-]+)\b(?P<rest>.*)$", re.I | re.S)
# Wilson asked to act ("book me a table", "thank you"); "it" alone, something said before; a noun that does something
# ("Service was great", "change of plans")
_NOT_A_TASK_RE = lazy_regex(
    r"^\s+(?:me|us|you|ya|i|we|they|he|she|any|anything)\b|^\s+(?:it|that|this|them|him|her)\b"
    r"|^\s+(?:of|is|was|are|were|has|had|will|would|can|could|should|looks|seems|went)\b",
    re.I,
)


def act(text: str) -> str | None:
    """The act's verb when the message asks for one thing to be done; None when it asks something else."""
    said = (text or "").strip().replace("’", "'")
    if not said or said.endswith("?"):
        return None
    found = _COMMAND_RE.match(said)
    if found is None or found.group("verb").lower() not in ACT_VERBS or not found.group("rest").strip(" .!"):
        return None
    if _NOT_A_TASK_RE.match(found.group("rest")):
        return None
    return found.group("verb").lower()


def commanded(text: str) -> bool:
    """The message is a bare command: its verb first, no "I need to" before it."""
    verb = act(text)
    first = re.match(r"\s*(?:please\s+)?([a-z-]+)", text or "", re.I)
    return verb is not None and first is not None and first.group(1).lower() == verb


# participles whose verb is not the participle less its "ed"
_IRREGULAR = {
    "sent": "send",
    "paid": "pay",
    "done": "do",
    "made": "make",
    "bought": "buy",
    "brought": "bring",
    "written": "write",
    "taken": "take",
    "given": "give",
    "got": "get",
    "gotten": "get",
    "read": "read",
    "put": "put",
    "set": "set",
    "sold": "sell",
    "told": "tell",
    "seen": "see",
    "held": "hold",
    "built": "build",
    "kept": "keep",
    "left": "leave",
    "picked": "pick",
    "fixed": "fix",
    "emptied": "empty",
    "dropped": "drop",
}


def base_verb(participle: str) -> str:
    """ "renewed" → "renew", "submitted" → "submit", "filed" → "file", "sent" → "send": the verb a task is written
    with, from the participle a need was said with ("has to be sent in")."""
    word = participle.lower()
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if word.endswith("ied"):
        return word[:-3] + "y"
    if not word.endswith("ed"):
        return word
    for candidate in (word[:-2], word[:-1], word[:-3]):  # renewed, filed, submitted
        if candidate in ACT_VERBS:
            return candidate
    stem = word[:-2]
    if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] not in "lsz":
        return stem[:-1]
    return stem
