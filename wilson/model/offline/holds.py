"""The user's own quiet time for a task, said with its day: "erst für den 21. … nerv mich vorher nicht damit", "but
not before the 19th, don't remind me before then". The task is due that day and followed up only from it: its
heads-ups ahead of the day are left out (the task's own escalation, "due,overdue"), since the user has said when
they want to hear of it. Said without a day ("aber erinner mich erst am Tag vorher dran"), the task keeps its day and
is followed up the day before, and once late, only ("1d,overdue").

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
# "aber erinner mich erst am Tag vorher dran", "remind me only the day before", "recuérdamelo solo el día antes": the
# day before, and nothing earlier
ONLY_THE_DAY_BEFORE_RE = lazy_regex(
    r"\berinner\w*\s+mich\s+(?:bitte\s+)?(?:erst|nur)\s+(?:am|einen)\s+tag\s+(?:vorher|davor|zuvor)\b|"
    r"\b(?:erst|nur)\s+(?:am|einen)\s+tag\s+(?:vorher|davor|zuvor)\s+(?:erinnern|dran\s+erinnern|melden)\b|"
    r"\bremind\s+me\s+(?:only|just)\s+(?:on\s+)?the\s+day\s+before\b|"
    r"\b(?:only|just)\s+(?:remind\s+me\s+)?(?:on\s+)?the\s+day\s+before\b|"
    r"\brecu[ée]rd(?:a|ame|amelo)\w*\s+(?:solo|sólo)\s+el\s+d[ií]a\s+(?:antes|anterior)\b",
    re.I,
)
DAY_BEFORE_ONLY = "1d,overdue"  # the task's own follow-ups: the day before its day, and once it is late
# more said than the day before ("… and on the day itself", "… at 8pm"): a change the rules leave to the user to say
_MORE_THAN_THE_DAY_BEFORE_RE = lazy_regex(
    r"\d|\b(?:and|und|also|auch|y)\s+(?:on|am|el)\s+(?:the\s+)?(?:day|tag|d[ií]a)\b|\bis\s+fine\b", re.I
)


# a reminder asked for before the day after all: "…, erinner mich am 18.", "remind me on the 18th"
_REMIND_BEFORE_RE = lazy_regex(r"\berinner\w*\s+mich\s+(?:am|an|vorher)\b|\bremind\s+me\s+(?:on|the)\b", re.I)


def before_then(text: str) -> bool:
    """Whether the words ask to hear nothing of the thing before the day they set (and ask no reminder before it)."""
    return bool(BEFORE_THEN_RE.search(text or "")) and not _REMIND_BEFORE_RE.search(text or "")


def only_the_day_before(text: str) -> bool:
    """Whether the words ask to hear of the thing only the day before its day."""
    return bool(ONLY_THE_DAY_BEFORE_RE.search(text or "")) and not _MORE_THAN_THE_DAY_BEFORE_RE.search(text or "")


def day_before_only(calls: list[tuple[str, dict]]) -> list[tuple[str, dict]]:
    """The calls with each dated new task followed up only the day before its day."""
    return [
        (name, {**args, "escalation": DAY_BEFORE_ONLY} if name == "create_task" and args.get("due") else args)
        for name, args in calls
    ]


def held(calls: list[tuple[str, dict]], before: dict[str, str | None]) -> list[tuple[str, dict]]:
    """The calls with the user's quiet time on each task whose day the change set (its due other than `before`'s,
    by title): followed up only from that day."""
    out = []
    for name, args in calls:
        if name == "create_task" and args.get("due") and args.get("due") != before.get(str(args.get("title"))):
            args = {**args, "escalation": FROM_ITS_DAY}
        out.append((name, args))
    return out
