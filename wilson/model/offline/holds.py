"""The user's own quiet time for a task, said with its day: "erst für den 21. … nerv mich vorher nicht damit", "but
not before the 19th, don't remind me before then". The task is due that day and followed up only from it: its
heads-ups ahead of the day are left out (the task's own escalation, "due,overdue"), since the user has said when
they want to hear of it.

Pure: reads words, writes nothing.
"""

from __future__ import annotations

import re

from wilson.kernel.lazy_regex import lazy_regex

# "nerv mich vorher nicht damit", "don't bug me before then", "no me lo recuerdes antes", "lass mich bis dahin in Ruhe"
BEFORE_THEN_RE = lazy_regex(
    r"\b(?:nerv|stress|erinner|bombardier)\w*\s+mich\s+(?:damit\s+)?(?:vorher|davor|bis\s+dahin)\s+(?:damit\s+)?nicht\b|"
    r"\blass\s+mich\s+(?:damit\s+|mit\s+\w+\s+)?(?:bis\s+dahin|vorher)\s+(?:bitte\s+)?in\s+ruhe\b|"
    r"\b(?:don'?t|do\s+not|dont)\s+(?:bug|bother|remind|nag|ping|pester)\s+me\s+(?:about\s+it\s+|with\s+it\s+)?"
    r"(?:before|until|till)\s+(?:then|that|that\s+day)\b|"
    r"\bno\s+me\s+lo\s+recuerdes\s+antes\b|\bno\s+me\s+(?:molestes|avises)\s+antes\b",
    re.I,
)
FROM_ITS_DAY = "due,overdue"  # the task's own follow-ups: on its day, then once it is late


# a reminder asked for before the day after all: "…, erinner mich am 18.", "remind me on the 18th"
_REMIND_BEFORE_RE = lazy_regex(r"\berinner\w*\s+mich\s+(?:am|an|vorher)\b|\bremind\s+me\s+(?:on|the)\b", re.I)


def before_then(text: str) -> bool:
    """Whether the words ask to hear nothing of the thing before the day they set (and ask no reminder before it)."""
    return bool(BEFORE_THEN_RE.search(text or "")) and not _REMIND_BEFORE_RE.search(text or "")


def held(calls: list[tuple[str, dict]], before: dict[str, str | None]) -> list[tuple[str, dict]]:
    """The calls with the user's quiet time on each task whose day the change set (its due other than `before`'s,
    by title): followed up only from that day."""
    out = []
    for name, args in calls:
        if name == "create_task" and args.get("due") and args.get("due") != before.get(str(args.get("title"))):
            args = {**args, "escalation": FROM_ITS_DAY}
        out.append((name, args))
    return out
