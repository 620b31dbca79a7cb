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
    return None  # anything else: the honest help, which says what can be asked


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
