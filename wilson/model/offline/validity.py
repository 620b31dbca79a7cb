""" "My passport is valid until 2030": the answer to a "Check passport validity" task, read by rules.

Valid long enough (six months beyond the end of the trip the task belongs to, as many countries ask) makes
a proposal to mark the check done; not long enough is said plainly and the check stays open. A month or a
year alone is read as its first day: a check that errs early costs a look, one that errs late a trip.
"""

from __future__ import annotations

import calendar
import re
from datetime import date, timedelta

from wilson.model.offline.phrases import Chat, Reply
from wilson.kernel.lazy_regex import lazy_regex

DOCUMENTS = r"passport|id card|identity card|visa|driving licen[cs]e|driver'?s licen[cs]e"
VALID_UNTIL_RE = lazy_regex(
    rf"^\s*(?:ok,?\s+|fyi,?\s+)?(?:my|the|our)?\s*(?P<doc>{DOCUMENTS})\s+(?:is\s+)?(?:still\s+)?"
    r"(?:good|valid)\s+(?:until|till|til|through|to)\s+(?P<when>.+?)\s*[.!]*$"
    rf"|^\s*(?:ok,?\s+|fyi,?\s+)?(?:my|the|our)?\s*(?P<doc2>{DOCUMENTS})\s+"
    r"(?:expires|runs out|is valid until)\s+(?:on\s+|in\s+)?(?P<when2>.+?)\s*[.!]*$",
    re.I,
)
# "… runs out in March and I need a new one": no answer to the check, a renewal to plan (the chat's life event)
RENEWAL_RE = lazy_regex(
    r"\b(?:need|needs|have\s+to|has\s+to|must|got\s+to|gotta|want\s+to)\b.*\b(?:new\s+one|renew|renewed|"
    r"replaced|replacement|new\s+(?:passport|id|visa|licen[cs]e))\b",
    re.I,
)
MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}  # january: 1, ...
MONTH_YEAR_RE = lazy_regex(r"^(?P<month>[a-z]+)\.?,?\s+(?P<year>\d{4})$|^(?P<m>\d{1,2})/(?P<y>\d{4})$", re.I)
DAY_MONTH_YEAR_RE = lazy_regex(
    r"^(?:(?P<d1>\d{1,2})(?:st|nd|rd|th)?\s+(?P<m1>[a-z]+)\.?|(?P<m2>[a-z]+)\.?\s+"
    r"(?P<d2>\d{1,2})(?:st|nd|rd|th)?),?\s+(?P<year>\d{4})$",
    re.I,
)
MARGIN = timedelta(days=183)  # six months beyond the return, as many countries ask


def _month(name: str | None) -> int | None:
    name = (name or "").lower()
    return next((n for m, n in MONTHS.items() if len(name) >= 3 and m.startswith(name)), None)


def read_expiry(words: str) -> tuple[date, bool] | None:
    """The last day a document is valid, and whether the words gave the day ("3 March 2030", "2030-03-03") or
    only a month or a year ("March 2030", "03/2030", "2030", read as their first day)."""
    words = words.strip().rstrip(".!")
    try:
        return date.fromisoformat(words), True
    except ValueError:
        pass
    full = DAY_MONTH_YEAR_RE.match(words)
    month_year = MONTH_YEAR_RE.match(words)
    try:
        if full:
            month = _month(full.group("m1") or full.group("m2"))
            day = int(full.group("d1") or full.group("d2"))
            return (date(int(full.group("year")), month, day), True) if month else None
        if month_year:
            month = _month(month_year.group("month")) if month_year.group("month") else int(month_year.group("m"))
            year = int(month_year.group("year") or month_year.group("y"))
            return (date(year, month, 1), False) if month else None
    except ValueError:  # the 31st of a month of 30 days, month 13
        return None
    if re.fullmatch(r"\d{4}", words):
        return date(int(words), 1, 1), False
    return None


def _check_task(chat: Chat, doc: str) -> dict | None:
    """The open task that checks this document: its title names it and a check or its validity."""
    word = doc.split()[0].lower()
    for task in chat.tasks:
        title = str(task.get("title") or "").lower()
        if word in title and re.search(r"\b(check|valid|validity|expir)", title):
            return task
    return None


def _trip_end(chat: Chat, task: dict) -> date | None:
    topic = next((t for t in chat.topics if t.get("title") == task.get("topic") and t.get("ends")), None)
    return date.fromisoformat(topic["ends"]) if topic else None


def valid_until(chat: Chat, text: str) -> Reply | None:
    found = VALID_UNTIL_RE.match(text.replace("’", "'"))
    if not found:
        return None
    if RENEWAL_RE.search(text):
        return None  # the user needs a new one: its plan, not the check's answer
    doc = (found.group("doc") or found.group("doc2")).lower()
    task = _check_task(chat, doc)
    if task is None:
        return None  # news about a document no task asks about: nothing to do
    said = (found.group("when") or found.group("when2")).strip().rstrip(".!")
    read = read_expiry(said)
    if read is None:
        return Reply(
            f"I couldn't read that date, so “{task.get('title')}” stays open. Try “valid until 3 March 2030”.",
            [],
            "a validity date the offline rules cannot read",
        )
    expiry, exact = read
    shown = f"{expiry:%a} {expiry.day} {expiry:%b %Y}" if exact else said
    if expiry < chat.today:
        return Reply(
            f"Your {doc} ran out on {shown}, so “{task.get('title')}” stays open: it needs renewing.",
            [],
            "a document that has run out",
        )
    end = _trip_end(chat, task)
    if end is not None and expiry < end + MARGIN:
        return Reply(
            f"Your {doc} is valid until {shown}, less than six months after {task.get('topic')} ends "
            f"({end:%a} {end.day} {end:%b}). Many countries ask for six months beyond your return, so "
            f"it may need renewing; “{task.get('title')}” stays open.",
            [],
            "a document valid too briefly",
        )
    return Reply(
        "",
        [("complete_task", {"task_id": task.get("id")})],
        f"{doc} valid until {shown}" + (", more than six months after the trip" if end else ""),
    )
