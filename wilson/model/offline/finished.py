"""What the user has finished: "what did I finish?", "what have I done so far this week?".

The question is read whole (a request beside it, or "what did I do wrong", is not one), the done tasks
are read with list_tasks (latest first, each with its `done_on` day), and the answer names those done
in the span the question names, or in the last two weeks.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from wilson.model.offline import dates
from wilson.model.offline.phrases import Chat, Reply
from wilson.kernel.lazy_regex import lazy_regex

_ASKED = lazy_regex(
    r"\s*(?:so\s+)?(?:what|which(?:\s+tasks)?)\s+(?:did|have)\s+i\s+(?:already\s+)?"
    r"(?:finish(?:ed)?|complete[d]?|do(?:ne)?|get done|got done|tick(?:ed)? off|check(?:ed)? off)"
    r"(?P<tail>(?:[\s,]+[a-z']+){0,6})[\s,]*[?.!]*\s*",
    re.I,
)
# the words a span may be said in after the question ("so far this week", "since Monday", "in the last week")
_SPAN_WORDS = frozenset(
    {
        "so",
        "far",
        "this",
        "last",
        "past",
        "week",
        "month",
        "year",
        "today",
        "yesterday",
        "since",
        "in",
        "the",
        "lately",
        "recently",
        "until",
        "now",
        "please",
        "wilson",
        *dates.WEEKDAYS,
    }
)
SHOWN = 10  # the latest few are named, with how many more there were


def look(chat: Chat, text: str) -> Reply | None:
    """The question, asked as a read of the done tasks (answer() speaks once they are read); None for anything
    else, or when no tool can read them."""
    found = _ASKED.fullmatch(text)
    if (
        found is None
        or "list_tasks" not in chat.offered
        or not set(re.findall(r"[a-z']+", found.group("tail").lower())) <= _SPAN_WORDS
    ):
        return None
    return Reply("", [("list_tasks", {"status": "done"})], "read what is done")


def span(said: str, today: date) -> tuple[date, date, str]:
    """The days the question asks about, and how to name them; the last two weeks when it names none."""
    found = _ASKED.fullmatch(said)
    tail = " ".join(re.findall(r"[a-z']+", found.group("tail").lower())) if found else ""
    monday, first_of_month = today - timedelta(days=today.weekday()), today.replace(day=1)
    named = re.search(r"\b(since|last) (" + "|".join(dates.WEEKDAYS) + r")\b", tail)
    if named:  # the latest such day before today ("last Friday") or from it on ("since Monday")
        day = today - timedelta(days=(today.weekday() - dates.WEEKDAYS.index(named.group(2)) - 1) % 7 + 1)
        if named.group(1) == "since":
            day = today if today.weekday() == dates.WEEKDAYS.index(named.group(2)) else day
            return day, today, f"since {dates.fmt_day(day)}"
        return day, day, f"on {dates.fmt_day(day)}"
    if "since yesterday" in tail:
        return today - timedelta(days=1), today, "since yesterday"
    if "yesterday" in tail:
        return today - timedelta(days=1), today - timedelta(days=1), "yesterday"
    if "today" in tail:
        return today, today, "today"
    if re.search(r"\b(?:in the (?:last|past)|past) week\b", tail):
        return today - timedelta(days=6), today, "in the last seven days"
    if re.search(r"\b(?:in the (?:last|past)|past) month\b", tail):
        return today - timedelta(days=29), today, "in the last 30 days"
    if "last week" in tail:
        return monday - timedelta(days=7), monday - timedelta(days=1), "last week"
    if "this week" in tail:
        return monday, today, "this week"
    if "last month" in tail:
        end = first_of_month - timedelta(days=1)
        return end.replace(day=1), end, "last month"
    if "this month" in tail:
        return first_of_month, today, "this month"
    if "this year" in tail:
        return today.replace(month=1, day=1), today, "this year"
    if "last year" in tail:
        return date(today.year - 1, 1, 1), date(today.year - 1, 12, 31), "last year"
    return today - timedelta(days=13), today, "in the last two weeks"


def answer(chat: Chat, listed: list) -> Reply:
    """The done tasks (list_tasks' answer), latest first, within the span asked about."""
    first, last, name = span(chat.text, chat.now.astimezone(chat.tz).date())
    done = [
        t
        for t in listed
        if isinstance(t, dict) and t.get("done_on") and first.isoformat() <= str(t["done_on"]) <= last.isoformat()
    ]
    if not done:
        return Reply(f"Nothing marked done {name}.", [], "list what is done")
    lines = [f"• {t.get('title')} ({dates.fmt_day(date.fromisoformat(str(t['done_on'])))})" for t in done[:SHOWN]]
    more = f"\n…and {len(done) - SHOWN} more." if len(done) > SHOWN else ""
    return Reply(f"Done {name} ({len(done)}):\n" + "\n".join(lines) + more, [], "list what is done")
