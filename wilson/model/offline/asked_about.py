"""Questions the other rules leave unread, answered honestly instead of with "I didn't understand": which plans are
open ("Which plans do I have open at the moment?": read with `list_topics`, answered after its result), what weekday
a date is ("Is 12.03. a Friday?"), how one of Wilson's functions works ("How does the snooze function work?"), an
opinion or a choice asked for ("Do you think it is better to charge per word?", "should I take the train or fly?":
offline, there is none to give), "what's up?", a message sent by mistake ("sorry, wrong chat"), and a season's wish
with more words around it ("Happy new year to you as well, by the way!"); "brb" gets a thumb.

Pure: reads the message and the context, writes nothing.
"""

from __future__ import annotations

import re

from wilson.kernel.lazy_regex import lazy_regex
from wilson.model.offline import dates
from wilson.model.offline.phrases import Chat, Reply

_PLANS_ASKED = lazy_regex(
    r"^(?:(?:which|what)\s+(?:plans|topics|projects)\s+(?:are\s+(?:still\s+)?(?:open|running|on)|(?:do|have)\s+(?:i|we)\s+"
    r"(?:(?:have|got)\b\s*)*(?:open|going|running|at the moment|now|right now|currently)?)|(?:what|which)\s+(?:are\s+)?(?:my|our)\s+(?:open\s+)?(?:plans|topics)|"
    r"(?:list|show)\s+(?:me\s+)?(?:my|the|all)\s+(?:open\s+)?(?:plans|topics))\b"
    r"(?:\s+(?:at the moment|now|right now|currently|still|so far|open))*\s*[?.!]*\s*$",
    re.I,
)
_WEEKDAY_ASKED = lazy_regex(
    r"^(?:is|was)\s+(?P<when>.+?)\s+an?\s+(?P<day>(?:mon|tues|wednes|thurs|fri|satur|sun)day)\s*\?\s*$"
    r"|^what\s+(?:week)?day\s+(?:is|was|will\s+be)\s+(?P<when2>.+?)\s*\??\s*$"
    r"|^(?:which|what)\s+(?:week)?day\s+of\s+the\s+week\s+is\s+(?P<when3>.+?)\s*\??\s*$",
    re.I,
)
# "how does the snooze function work?", "how do reminders work?", "how can I use the snooze?"
_HOW_IT_WORKS = lazy_regex(
    r"^how\s+(?:does|do|can\s+i\s+use|do\s+i\s+use)\s+(?:the\s+|your\s+|a\s+)?(?P<what>[\w -]+?)"
    r"(?:\s+(?:function|feature|option|command|thing))?(?:\s+work)?(?:\s+exactly)?\s*\?\s*$",
    re.I,
)
_HOW = {
    "snooze": "To put a task off, say e.g. “ask me about the receipts again on Monday at 9” or “snooze the receipts "
    "until Monday”: I propose it, and bring the task up again then.",
    "remind": "Say e.g. “remind me tomorrow at 8 to call the notary” or “remind me every Monday at 8:30 to write the "
    "invoices”: I propose the reminder, and once you approve it I send it then.",
    "topic": "A plan (a trip, a move, an exam…) is a topic with its tasks, each due in time: tell me of the event with "
    "its day, approve the plan, and I follow up as each deadline comes.",
    "proposal": "Every change I make is a proposal: answer “yes”, “no”, or a change like “make it the 14th”.",
}
_KEYS = {
    "snooze": "snooze",
    "postpone": "snooze",
    "reminder": "remind",
    "reminders": "remind",
    "remind": "remind",
    "topic": "topic",
    "topics": "topic",
    "plan": "topic",
    "plans": "topic",
    "proposal": "proposal",
    "proposals": "proposal",
    "approval": "proposal",
}
_OPINION = lazy_regex(
    r"^(?:(?:and\s+)?(?:do|would)\s+you\s+(?:think|say|recommend|advise)|what\s+(?:do|would)\s+you\s+(?:think|say|"
    r"recommend|advise)|in\s+your\s+opinion|what'?s\s+your\s+(?:opinion|view|advice))\b.*\?\s*$"
    # a choice to make: "should I take the train or fly?", "is it better to call or to write?"
    r"|^(?:should|shall)\s+(?:i|we)\b[^?]*\bor\b[^?]*\?\s*$|^is\s+it\s+better\s+to\b[^?]*\bor\b[^?]*\?\s*$",
    re.I | re.S,
)
# a message sent by mistake: "sorry, wrong chat", "oops, ignore that"
_SLIP = lazy_regex(
    r"^(?:(?:sorry|oops|whoops|ups)[\s,!.]+)?(?:wrong\s+(?:chat|person|window|number)|ignore\s+(?:that|this|me)|"
    r"not\s+for\s+you|that\s+wasn'?t\s+for\s+you|never\s*mind)[\s!.]*$",
    re.I,
)
# "brb", "gtg": the user steps away
_AWAY = lazy_regex(r"^(?:brb|be\s+right\s+back|gtg|g2g|got\s+to\s+go|gotta\s+go|ttyl|afk)[\s!.]*$", re.I)
# "what's up?", "what's new with you?": asked of Wilson, as "how are you?" is
_WHATS_UP = lazy_regex(
    r"^(?:hey\s+|so\s+)?(?:what'?s\s+up|wh?assup|what'?s\s+new)(?:\s+with\s+you)?\s*[?!.]*\s*$", re.I
)
# a season's wish with words around it: "Happy new year to you as well, by the way!"
_WISH = lazy_regex(
    r"^(?:and\s+)?(?:a\s+)?(?:happy\s+new\s+year|merry\s+christmas|happy\s+holidays|happy\s+easter|season'?s\s+greetings)"
    r"(?:\s+to\s+you)?(?:\s+(?:too|as\s+well|also))?(?:[\s,]+by\s+the\s+way)?[\s!.]*$",
    re.I,
)


def answered(chat: Chat, text: str) -> Reply | None:
    """The answer to one of these questions, or None when the message is none of them."""
    said = " ".join(text.replace("’", "'").split())
    if _PLANS_ASKED.match(said):
        if "list_topics" in chat.offered:  # the context holds only the topics its tasks name: read them all
            return Reply("", [("list_topics", {"status": "active"})], "look up the open plans")
        return Reply(plans_answer(chat.topics), [], "the open plans")
    weekday = _weekday(chat, said)
    if weekday is not None:
        return weekday
    how = _HOW_IT_WORKS.match(said)
    if how:
        key = next((_KEYS[w] for w in how.group("what").lower().split() if w in _KEYS), None)
        if key is not None:
            return Reply(f"{_HOW[key]} Nothing was changed.", [], "how a function works")
    if _OPINION.match(said):
        return Reply(
            "That's your call: offline, without a language model, I can't weigh it up for you. Nothing was changed.",
            [],
            "an opinion asked for",
        )
    if _SLIP.match(said):
        return Reply("No problem. Nothing was changed.", [], "a message sent by mistake")
    if _AWAY.match(said):
        return Reply("👍", [], "the user steps away")
    if _WHATS_UP.match(said):
        return Reply("All quiet here: I'm keeping an eye on things. Nothing was changed.", [], "how Wilson is")
    if _WISH.match(said):
        return Reply("Thank you, and to you! 🎉", [], "a season's wish")
    return None


def plans_answer(topics: list) -> str:
    """The open topics, each with its start, as a list."""
    open_ones = [t for t in topics if isinstance(t, dict) and t.get("status", "active") not in ("closed", "done")]
    if not open_ones:
        return "You have no open plans right now. Nothing was changed."
    lines = [f"• {t.get('title')}" + (f" — from {t.get('starts')}" if t.get("starts") else "") for t in open_ones]
    return "Your open plans:\n" + "\n".join(lines)


def _weekday(chat: Chat, said: str) -> Reply | None:
    found = _WEEKDAY_ASKED.match(said)
    if found is None:
        return None
    when = found.group("when") or found.group("when2") or found.group("when3")
    read = dates.search(when, chat.now, chat.tz)
    if len(read) != 1:
        return None
    day = dates.local_date(read[0].value, chat.tz)
    named = f"{day:%A} {day.day} {day:%B %Y}"
    asked = found.group("day")
    if asked:
        right = asked.lower() == f"{day:%A}".lower()
        return Reply(
            f"{'Yes' if right else 'No'}, {read[0].phrase.strip()} is a {day:%A} ({named}).",
            [],
            "the weekday of a date",
        )
    return Reply(f"{read[0].phrase.strip()} is a {day:%A} ({named}).", [], "the weekday of a date")


def topic_lines_after(called: list[str], results: list) -> Reply | None:
    """The open plans once `list_topics` answered; None for other calls."""
    if called != ["list_topics"]:
        return None
    listed = results[0] if results and isinstance(results[0], list) else None
    if listed is None:
        return Reply("I couldn't read your plans just now. Nothing was changed.", [], "topics unreadable")
    return Reply(plans_answer(listed), [], "the open plans")
