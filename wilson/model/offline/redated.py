"""A task's day changed in words: moved by a while ("push the flights back a week", "move the passport forward by 3
days"), or told anew for a task the message names ("renewed the library books, so they're due Feb 2nd now", "the
pitch moved, so the deck only has to be ready Monday"). Each becomes a proposal to change that task's due day.

Pure: reads the message and the open tasks in the context, writes nothing.
"""

from __future__ import annotations

import re
from datetime import timedelta

from wilson.model.offline import dates
from wilson.model.offline.asks import GERMAN_NOUNS
from wilson.model.offline.phrases import Chat, Reply
from wilson.model.offline.words import NUMBER_WORDS, best, words
from wilson.kernel.lazy_regex import lazy_regex


def _open(chat: Chat) -> list[dict]:
    return [t for t in chat.tasks if t.get("status", "open") == "open"]


# "push the flights back a week", "move the passport forward by 3 days", "delay the dentist by two weeks"
_SHIFT_RE = lazy_regex(
    r"^\s*(?:please\s+)?(?:push|move|shift|put|delay|postpone|bring)\s+(?:back\s+|forward\s+)?"
    r"(?:the\s+)?(?P<what>.+?)\s+(?P<way>back|forward|out|ahead|up)?\s*(?:by\s+)?"
    r"(?P<n>a|an|one|two|three|four|five|six|seven|couple of|few|\d{1,2})\s+(?P<unit>days?|weeks?)\b"
    r"(?:\s+(?P<after>later|earlier|back|forward))?\s*[.!]*$",
    re.I,
)


def shifted(chat: Chat, text: str) -> Reply | None:
    """A task's day moved by a while: "push the flights back a week" is its due day a week later."""
    found = _SHIFT_RE.match(text)
    task = best(_open(chat), words(found.group("what"))) if found else None
    old = dates.parse_moment(task.get("due"), chat.tz) if task else None
    if task is None or old is None:
        return None
    n = NUMBER_WORDS.get(found.group("n").lower()) or int(found.group("n"))
    days = n * (7 if found.group("unit").lower().startswith("w") else 1)
    earlier = re.search(r"\b(?:forward|up|ahead|earlier)\b", text, re.I) and not re.search(
        r"\b(?:back|later)\b", text, re.I
    )
    due = old + timedelta(days=-days if earlier else days)
    return Reply(
        "",
        [("update_task", {"task_id": task.get("id"), "due": dates.iso(due)})],
        f"move a task by {n} {found.group('unit')}",
    )


# what says a day is new for something already planned: "so they're due Feb 2nd now", "the pitch moved, so the deck
# only has to be ready Monday", "my supervisor agreed I can hand it in by end of Q1", "the deadline got extended"
_NEW_DAY_RE = lazy_regex(
    r"\b(?:now|moved|extended|pushed|postponed|instead|agreed|allowed|only\s+(?:has|have|needs?)\s+to|"
    r"new\s+deadline|deadline\s+is|got\s+(?:moved|extended|pushed)|can\s+(?:now\s+)?(?:hand|send|submit|"
    r"do|pay|file|return)|"
    # "please change the deadline", "still open until 8.2.", in German "geht noch bis 8.2., bitte Frist ändern"
    r"(?:change|update|adjust|fix)\s+the\s+(?:deadline|due\s+date)|(?:still\s+)?open\s+until|"
    r"(?:geht|läuft)\s+noch\s+bis|frist\s+(?:ändern|anpassen|verlängern|verschieben)|neue\s+frist|"
    # "can be done by mid feb", "needs the docs earlier, by feb 19", "auf den 5.2. verschieben"
    r"can\s+(?:also\s+)?be\s+(?:done|paid|sent|handed\s+in|submitted)\s+(?:by|until|till)|earlier|later|"
    r"verschieben|verschoben|verlegen|verlegt)\b",
    re.I,
)


# words typed short for a task's own: "the nebenkosten docs" are its "Nebenkosten documents"
_SHORT_FORMS = {
    "docs": "documents",
    "doc": "document",
    "appt": "appointment",
    "info": "information",
    "uni": "university",
    "dept": "department",
    "admin": "administration",
    "paperwork": "documents",
}


def redated(chat: Chat, text: str) -> Reply | None:
    """An open task named by most of its own words, with a new day and a word that says the day changed: that
    task moved (not a new one made, nor news)."""
    if text.rstrip().endswith("?") or not _NEW_DAY_RE.search(text):
        return None
    found = [f for f in dates.search(text, chat.now, chat.tz) if not re.fullmatch(r"\d{4}", f.phrase.strip())]
    if not found:
        return None
    said = words(text)
    said |= {_SHORT_FORMS[w] for w in re.findall(r"\w+", text.lower()) if w in _SHORT_FORMS}  # "docs": documents
    # a task named in German by its noun ("Anmeldung zum 10k") is the English task of its verb ("Register for …")
    said |= {verb.lower() for noun, verb in GERMAN_NOUNS.items() if noun in said}
    # a German compound begins with the task's own word: "Winterreifen-Check" names "Get the winter tyres checked"
    said |= {part for w in said if "-" in w for part in w.split("-") if len(part) >= 3}
    own_words = {w for t in _open(chat) for w in words(str(t.get("title") or "")) if len(w) >= 5}
    said |= {w for w in own_words if any(x.startswith(w) and len(x) > len(w) + 3 for x in said)}
    task = best(_open(chat), said)
    if task is None:
        return None
    title = str(task.get("title"))
    # its verb may be said another way ("renewed" the books to return); a number-word ("10k", "B2") names it too
    numbered = {w for w in re.findall(r"\w+", title.lower()) if re.search(r"\d", w) and re.search(r"[a-z]", w)}
    own = words(title) - words(title.split()[0]) | numbered
    raw = set(re.findall(r"\w+", text.lower()))
    named = {
        w for w in own if w in said or w in raw or any(w.startswith(x) or x.startswith(w) for x in said if len(x) >= 3)
    }
    if len(named) < max(1, (len(own) + 1) // 2):
        return None  # one shared word is no name for "Prepare the pitch deck for Nordlicht"
    due = found[-1].value
    old = dates.parse_moment(task.get("due"), chat.tz)
    if old is not None and dates.local_date(old, chat.tz) == dates.local_date(due, chat.tz):
        return None
    return Reply(
        "",
        [("update_task", {"task_id": task.get("id"), "due": dates.iso(due)})],
        f"a task's new day told ({found[-1].stated(chat.tz)})",
    )
