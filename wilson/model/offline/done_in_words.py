"""A task said done in words the older rules did not list: its own verb in any past form ("finally backed up the
laptop last night" is "Back up the laptop" done, "suit's picked up", "descaled the coffee machine"), a thing back with
its owner ("Kemal has his drill back"), a sum said paid ("I transferred the 145 euros for the class trip") and the
act named by its noun ("sent the gym cancellation letter" is "Cancel my gym membership" done).

A task must begin with the verb said and be named by the words; someone else doing it ("Tom backed up the laptop")
or a question names no task done.
"""

from __future__ import annotations

import re

from wilson.model.offline import acts, payments
from wilson.model.offline.phrases import Chat, Reply
from wilson.model.offline.words import covers, words
from wilson.kernel.lazy_regex import lazy_regex

# a task's verb said done in any tense a participle has, not only the listed ones: "finally backed up the laptop last
# night", "suit's picked up 👔", "descaled the coffee machine"; and a thing back with its owner: "Kemal has his drill
# back" (Return the drill to Kemal)
_ANY_PAST_RE = lazy_regex(
    r"^\s*(?:(?:ok|so|yay|phew)[\s,!]+)?(?:(?:i|we)(?:'ve|\s+have)?\s+)?(?:just\s+|already\s+|finally\s+)*"
    r"(?P<part>[a-z]{3,}ed|sent|paid|bought|got|made|done|put|sold|told|kept|left|brought|taken|given|written|"
    r"found|wrote|took|gave|did|rang|met)"
    r"(?:\s+(?P<particle>up|off|back|in|out|down))?\s+(?P<what>[^,.!?]+?)"
    r"(?:\s+(?:last night|yesterday|this morning|earlier|today|just now|at last))?"
    # "found a babysitter for the 23rd, Greta from downstairs": who or how, said after a comma
    r"(?:\s*,\s*[^,?]{1,60})?[\s.!]*$",
    re.I,
)
_ANY_PARTICIPLE_RE = lazy_regex(
    r"^\s*(?:the\s+|my\s+|our\s+)?(?P<what>[\w' -]{2,40}?)(?:'s|\s+is|\s+are|\s+has been|\s+have been)\s+"
    r"(?:all\s+|now\s+|finally\s+)*(?P<part>[a-z]{3,}ed|sent|paid|bought|done|sold|written)"
    r"(?:\s+(?P<particle>up|off|back|in|out|down))?[\s.!]*$",
    re.I,
)
# a thing said done by its participle alone, or in German: "Disney+ cancelled", "Disney+ ist gekündigt", "Kita-Antrag
# abgeschickt"; only the acts a user does to a thing ("Tom called" is Tom's doing, not a call made)
_GERMAN_DONE = {
    "gekündigt": "cancel",
    "bezahlt": "pay",
    "überwiesen": "transfer",
    "abgeschickt": "send",
    # a proof sent in online: "Nachweis hochgeladen ✔️" is "Submit: … Nachweis" done
    "hochgeladen": "submit",
    "verschickt": "send",
    "unterschrieben": "sign",
    "gebucht": "book",
    "bestellt": "order",
    "abgegeben": "hand",
    "eingereicht": "submit",
    "erneuert": "renew",
    "repariert": "fix",
    "angerufen": "call",
    "gekauft": "buy",
}
_THING_DONE_RE = lazy_regex(
    r"^\s*(?:the\s+|my\s+|our\s+|die\s+|der\s+|das\s+|mein\s+|meine\s+)?(?P<what>[\w' +-]{2,40}?)"
    r"(?P<is>\s+(?:ist|sind|wurde|wurden|is|are|has been|have been))?\s+(?:jetzt\s+|schon\s+|endlich\s+|now\s+)?"
    r"(?P<part>cancell?ed|booked|paid|signed|renewed|submitted|ordered|bought|sent|returned|posted|collected|"
    r"printed|scanned|filed|" + "|".join(_GERMAN_DONE) + r")[\s.!]*$",
    re.I,
)
# the thing is still to be done, only will be, or is asked for: "the flights to be booked", "the flights have to be
# booked", "will have the flights booked", "get the flights booked"; "to" before a place names the thing ("the
# flights to Lisbon")
_STILL_TO_DO_RE = lazy_regex(
    r"\bto\s+be\b|\bto\s*$|\b(?:be|will|shall|must|need|needs|should|still|yet|not|never|gonna|get|gets|please|"
    r"hope|want|wants|wish|let's)\b",
    re.I,
)
# "the library books are back", "the drill went back to Kemal": a thing taken back, its task to return it done
_IS_BACK_RE = lazy_regex(
    r"^\s*(?:the\s+|my\s+|our\s+)?(?P<what>[\w' -]{2,40}?)\s+(?:is|are|went|'s|'re|got\s+taken|were\s+taken)\s+back"
    r"(?:\s+(?:to|at|in)\s+[\w' -]{2,30})?(?:\s+(?:now|today|already|finally))?[\s.!]*$",
    re.I,
)
_HAS_IT_BACK_RE = lazy_regex(
    r"^\s*(?P<who>[A-Z][\w-]+)\s+(?:has|got)\s+(?:his|her|their|its)\s+(?P<what>[\w' -]{2,30}?)\s+back[\s.!]*$"
)


_PAID_WORDS = {"paid", "transferred", "settled", "wired", "sent"}


def _paid_task(chat: Chat, what: str) -> dict | None:
    """ "(I transferred) the 145 euros for the class trip": the one open task to pay that sum, or to pay for what is
    named, whatever verb it was written with."""
    amount = payments.AMOUNT_RE.search(what)
    number = (amount.group("n1") or amount.group("n2")).strip() if amount else None
    open_tasks = [t for t in chat.tasks if t.get("status", "open") == "open"]
    if number:
        fitting = [
            t
            for t in open_tasks
            if re.search(rf"(?<![\d.,]){re.escape(number)}(?![\d])", f"{t.get('title')} {t.get('notes') or ''}")
        ]
        if len(fitting) == 1:
            return fitting[0]
    wanted = words(payments.AMOUNT_RE.sub(" ", what))
    fitting = [
        t
        for t in open_tasks
        if re.match(r"(?:pay|transfer|settle)\b", str(t.get("title") or ""), re.I)
        and wanted
        and covers(wanted, words(str(t.get("title"))))
    ]
    return fitting[0] if len(fitting) == 1 else None


# made once: every message is read for a deed
_NOT_SAID_RE = lazy_regex(r"[^\w\s'’.,!?-]")


def done_in_any_verb(chat: Chat, text: str) -> Reply | None:
    """An open task said done with its own verb, whichever verb it is ("backed up the laptop" is "Back up the
    laptop" done): the task must begin with that verb (and its particle) and the words must name it."""
    said = _NOT_SAID_RE.sub(" ", text).replace("’", "'").strip()
    back = _HAS_IT_BACK_RE.match(said)
    if back:
        wanted = words(f"{back.group('what')} {back.group('who')}")
        fitting = [
            t
            for t in chat.tasks
            if t.get("status", "open") == "open"
            and str(t.get("title") or "").lower().startswith(("return", "give back", "bring back"))
            and covers(wanted, words(str(t.get("title"))))
        ]
        if len(fitting) == 1:
            return Reply("", [("complete_task", {"task_id": fitting[0].get("id")})], "a thing back with its owner")
        return None
    is_back = None if said.endswith("?") else _IS_BACK_RE.match(said)
    if is_back:
        wanted = words(is_back.group("what"))
        fitting = [
            t
            for t in chat.tasks
            if t.get("status", "open") == "open"
            and str(t.get("title") or "").lower().startswith(("return", "bring back", "take back", "give back"))
            and wanted
            and covers(wanted, words(str(t.get("title"))))
        ]
        if len(fitting) == 1:
            return Reply("", [("complete_task", {"task_id": fitting[0].get("id")})], "a thing back where it belongs")
    found = None if said.endswith("?") else _ANY_PAST_RE.match(said) or _ANY_PARTICIPLE_RE.match(said)
    thing_done = None if found is not None or said.endswith("?") else _THING_DONE_RE.match(said)
    if thing_done is not None and _STILL_TO_DO_RE.search(thing_done.group("what")):
        return None
    if found is not None and _STILL_TO_DO_RE.search(found.group("what")):
        return None
    if thing_done is not None:
        return _thing_done(chat, thing_done, text)
    if found is None:
        return None
    part = found.group("part").lower()
    verbs = {acts.base_verb(part), part[:-1], part[:-2]}  # "descaled": "descale", which no list needs to hold
    paid = _paid_task(chat, found.group("what")) if part in _PAID_WORDS else None
    if paid is not None:
        return Reply("", [("complete_task", {"task_id": paid.get("id")})], "a task paid, its sum said")
    particle = f" {found.group('particle').lower()}" if found.group("particle") else ""
    leads = tuple(f"{verb}{particle} " for verb in verbs)
    wanted = words(found.group("what"))
    fitting = [
        t
        for t in chat.tasks
        if t.get("status", "open") == "open"
        and (str(t.get("title") or "").lower() + " ").startswith(leads)
        and wanted
        and covers(wanted, words(str(t.get("title"))))
    ]
    if len(fitting) != 1:
        fitting = _done_by_its_noun(chat, found.group("what"))
    if len(fitting) != 1:
        return None
    return Reply("", [("complete_task", {"task_id": fitting[0].get("id")})], "done with a task, in its own verb")


def _thing_done(chat: Chat, found: re.Match, text: str) -> Reply | None:
    """The one open task that begins with the act said done of a thing and is named by it ("Disney+ ist gekündigt"
    is "Cancel the Disney+ subscription" done)."""
    if not found.group("is") and re.fullmatch(r"\s*[A-Z][a-z]+\s+[a-z]+[\s.!]*", text):
        return None  # "Anna paid": a person who did it, not a thing done
    part = found.group("part").lower()
    verb = _GERMAN_DONE.get(part) or acts.base_verb(part)
    wanted = words(found.group("what"))
    fitting = [
        t
        for t in chat.tasks
        if t.get("status", "open") == "open"
        and re.match(rf"{re.escape(verb)}\b", str(t.get("title") or "").lower())
        and wanted
        and covers(wanted, words(str(t.get("title"))))
    ]
    if len(fitting) != 1:
        return None
    return Reply("", [("complete_task", {"task_id": fitting[0].get("id")})], "a thing said done, by its act")


# a task's act named by its noun: "sent the gym cancellation letter" is "Cancel my gym membership" done
_ACT_NOUNS = {
    "cancellation": "cancel",
    "cancelation": "cancel",
    "kündigung": "cancel",
    "renewal": "renew",
    "application": "apply",
    "registration": "register",
    "payment": "pay",
    "booking": "book",
    "reservation": "book",
    "submission": "submit",
    "return": "return",
}


def _done_by_its_noun(chat: Chat, what: str) -> list[dict]:
    said = [w.lower() for w in re.findall(r"[^\W\d_]+", what)]
    acts_named = {_ACT_NOUNS[w] for w in said if w in _ACT_NOUNS}
    rest = words(" ".join(w for w in said if w not in _ACT_NOUNS and w not in ("letter", "form", "email", "mail")))
    return [
        t
        for t in chat.tasks
        if t.get("status", "open") == "open"
        and (str(t.get("title") or "").split() or [""])[0].lower() in acts_named
        and rest
        and rest & words(str(t.get("title")))
    ]


# a call made, said as the talk it was: "just got off the phone with the chimney sweep", "spoke to the insurance people
# about the windscreen", "finally got hold of Grandpa Henrik" are the call made ("Call the chimney sweep" done)
_TALKED_RE = lazy_regex(
    r"^(?P<lead>\s*(?:(?:ok|so|yay|phew)[\s,!]+)?(?:(?:i|we)(?:'ve|\s+have)?\s+)?(?:just\s+|already\s+|finally\s+)*)"
    r"(?:got\s+off\s+the\s+(?:phone|line)\s+with|(?:spoke|spoken|talked)\s+(?:to|with)|got\s+hold\s+of|"
    r"(?:got|gotten)\s+through\s+to|reached|had\s+a\s+(?:call|chat)\s+with|heard\s+back\s+from)\s+",
    re.I,
)
# a mail or a text sent, said by its noun: "Sent Dr. Okonkwo the email about my referral" is "Email Dr. Okonkwo about
# the referral" done, "sent Marta a text" is "Text Marta" done
_SENT_THE_MAIL_RE = lazy_regex(
    r"^(?P<lead>\s*(?:(?:i|we)(?:'ve|\s+have)?\s+)?(?:just\s+|already\s+|finally\s+)*)sent\s+"
    r"(?P<who>(?:[\w.'-]+\s+){1,4}?)(?:the|an?|that|this|my)\s+"
    r"(?P<noun>e-?mail|mail|text|message)\b",
    re.I,
)
_NOUN_VERB = {"e-mail": "emailed", "email": "emailed", "mail": "emailed", "text": "texted", "message": "messaged"}
# when or on the way, said after a deed: "on my way to work", "an hour ago", "last weekend", a tick; it names no task
_WHEN_SAID_RE = lazy_regex(
    r"(?:\s+(?:on\s+(?:my|the|our)\s+way(?:\s+(?:to|home|back|in|out)\b[\w' ]{0,20}?)?|"
    r"(?:an?|one|two|three|\d+|a\s+few|a\s+couple\s+of)\s+(?:minutes?|hours?|days?)\s+ago|"
    r"(?:last|this)\s+(?:night|weekend|week|morning|afternoon|evening)|earlier(?:\s+today)?|yesterday|today|"
    r"after\s+work|at\s+lunch(?:time)?|just\s+now)|\s*[✔✓✅👍🙌🎉])+[\s.!]*$",
    re.I,
)


def plainly(text: str) -> str:
    """A deed said as people say it, in the words a task is written with: a talk is a call, a mail sent is an
    email, and when or on which way it was done is left off ("just got off the phone with the chimney sweep" →
    "just called the chimney sweep"). The text unchanged when it says none of these."""
    said = _TALKED_RE.sub(lambda m: f"{m.group('lead')}called ", text, count=1)
    said = _SENT_THE_MAIL_RE.sub(
        lambda m: f"{m.group('lead')}{_NOUN_VERB[m.group('noun').lower()]} {m.group('who').strip()}", said, count=1
    )
    return _WHEN_SAID_RE.sub("", said).strip() or text


# a thing said to be in the state a task asks for: "the winter tyres are on" is "Get the winter tyres fitted" done
_IN_STATE_RE = lazy_regex(
    r"^\s*(?:the\s+|my\s+|our\s+)?(?P<what>[\w' -]{2,40}?)\s+(?:is|are|'s|'re)\s+(?:now\s+|finally\s+|all\s+)*"
    r"(?:on|in|up|fitted|installed|fixed|repaired|serviced|changed|swapped|ready)(?:\s+(?:now|already|at\s+last))?"
    r"[\s.!]*$",
    re.I,
)


_GET_OR_HAVE_RE = lazy_regex(r"(?:get|have)\s", re.I)


def in_state(chat: Chat, text: str) -> Reply | None:
    """The one open task to get or have a thing put in a state ("Get the winter tyres fitted"), said to be in it."""
    found = None if text.rstrip().endswith("?") else _IN_STATE_RE.match(text)
    wanted = words(found.group("what")) if found else set()
    # (nothing said in a state, no task looked at: most messages say none)
    fitting = [
        t
        for t in (chat.tasks if wanted else ())
        if t.get("status", "open") == "open"
        and _GET_OR_HAVE_RE.match(str(t.get("title") or ""))
        and covers(wanted, words(str(t.get("title"))))
    ]
    if len(fitting) != 1:
        return None
    return Reply("", [("complete_task", {"task_id": fitting[0].get("id")})], "a thing in the state a task asks for")
