"""A question no other rule answers, answered honestly instead of with "I didn't understand" when it is about one
of the user's tasks: what the list says of it ("did I already pay the semester fee?": still open, due when; "when
is the trip insurance due?": no such task). Anything else asked gets the honest help, which says what can be asked;
a riddle told with its answer gets a smile.

Pure: reads the message and the tasks in the context, writes nothing.
"""

from __future__ import annotations

import re

from wilson.model.offline import dates
from wilson.model.offline.phrases import Chat, Reply
from wilson.model.offline.words import words
from wilson.kernel.lazy_regex import lazy_regex

QUESTION_RE = lazy_regex(
    r"\?\s*$|^\s*(?:what|when|where|who|why|how|which|can|could|would|will|do|does|did|is|are|"
    r"should|shall|may|might|have|has|was|were)\b",
    re.I,
)


def answered(chat: Chat, text: str) -> Reply | None:
    """The honest answer to a question (None when `text` asks none)."""
    said = text.strip()
    if _JOKE_RE.search(said):
        return Reply("Ha! 🙂", [], "a joke")
    if not QUESTION_RE.search(said) or _ASKS_ME_TO_RE.match(said):
        return None  # "can you check the flights are booked?" asks for something done: the help says what can be
    task = _task_asked_about(chat, said)
    if task is not None:
        due = dates.parse_moment(task.get("due"), chat.tz)
        when = (
            dates.fmt_moment(due, chat.tz)
            if due is not None and hasattr(due, "hour")
            else dates.fmt_day(due)
            if due is not None
            else None
        )
        state = "is done" if task.get("status") == "done" else "is still open" + (f", due {when}" if when else "")
        return Reply(f"“{task.get('title')}” {state}. Nothing was changed.", [], "a question about a task")
    due = _WHEN_DUE_RE.match(said)
    if due:
        return Reply(
            f"I don't see an open task about “{due.group('what')}”. Nothing was changed.",
            [],
            "a question about a task not on the list",
        )
    known = _known_about(chat, said)
    if known:
        # "would it be smarter to do the TÜV before or after the tyre change?", "is the Bari wedding on the 4th or
        # the 5th?": what the list and the topics say of the things named, the weighing left to the user
        return Reply(
            "Here's what I have on that:\n" + "\n".join(known) + "\nOffline I can't weigh up more than that.",
            [],
            "a question answered with what is known of its things",
        )
    return None  # anything else: the honest help, which says what can be asked


def _known_about(chat: Chat, text: str) -> list[str]:
    """A line for each open task and topic the question names by a word of its own (a task's verb aside)."""
    said = words(text)
    lines = []
    for topic in chat.topics:
        title = str(topic.get("title") or "")
        starts = dates.parse_moment(topic.get("starts"), chat.tz)
        if topic.get("status") != "closed" and said & words(title) and starts is not None:
            lines.append(f"• {title}: {dates.fmt_day(dates.local_date(starts, chat.tz))}")
    for task in chat.tasks:
        title = str(task.get("title") or "")
        own = words(title) - words(title.split()[0] if title else "")
        if task.get("status", "open") == "open" and _shares(said, own):
            due = dates.parse_moment(task.get("due"), chat.tz)
            lines.append(f"• {title}" + (f" — due {dates.fmt_day(dates.local_date(due, chat.tz))}" if due else ""))
    return lines


def _shares(said: set[str], own: set[str]) -> bool:
    """A word in both, or one the start of the other ("tyre" of "tyres", "tüv" of "tüv")."""
    return any(w == x or len(x) >= 4 and (w.startswith(x) or x.startswith(w)) for w in own for x in said)


_WHEN_DUE_RE = lazy_regex(r"^\s*when(?:'s|\s+is|\s+are)\s+(?:the\s+|my\s+)?(?P<what>.+?)\s+due\b", re.I)
_ASKS_ME_TO_RE = lazy_regex(r"^\s*(?:(?:can|could|would|will)\s+(?:you|u)|please)\b", re.I)
# a riddle told with its answer: "why did the scarecrow win an award? because he was outstanding in his field"
_JOKE_RE = lazy_regex(
    r"\?\s+(?:because|so that|to get|a|an|it|he|she|they)\b[^?]*$|\b(?:lol|haha+|hehe)\s*[!.]*$", re.I
)


def _task_asked_about(chat: Chat, text: str) -> dict | None:
    """The one task whose words (all but its verb) the question names."""
    said = words(text)
    fitting = []
    for task in chat.tasks:
        title = str(task.get("title") or "")
        own = words(title) - words(title.split()[0] if title else "")
        if own and own <= said | {w for w in own if any(w.startswith(x) for x in said if len(x) >= 3)}:
            fitting.append(task)
    return fitting[0] if len(fitting) == 1 else None
