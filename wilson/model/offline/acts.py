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
from functools import lru_cache

from wilson.kernel.lazy_regex import lazy_regex

# verbs of one act, as a person writes a task; the first word of a command
ACT_VERBS = frozenset(
    """
pay call phone ring email e-mail text message write send post mail submit sign return renew book buy get pick collect
order clean fix repair check pack print register apply hand drop take bring water feed wash vacuum hoover tidy sort
read review update upload transfer deposit withdraw change replace charge install ask invite thank meet
arrange confirm reply respond answer contact cook bake shop walk mow service top refill scan fill practise
practice learn finish do make grab reserve deliver ship recycle empty defrost iron sweep mop dust declutter measure
photocopy copy download chase look deal figure find research compare follow organise organize sell donate
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
    if found.group("verb").lower() in _WITH_PARTICLE and not _WITH_PARTICLE_RE.match(found.group("rest")):
        return None  # "look at this!", "follow me", "deal!": not "look into", "follow up", "deal with"
    return found.group("verb").lower()


_WITH_PARTICLE = {"look", "deal", "follow", "figure"}
_WITH_PARTICLE_RE = lazy_regex(r"^\s+(?:into|up|after|for|with|out)\b", re.I)


_FIRST_WORD_RE = lazy_regex(r"\s*(?:please\s+)?([a-z-]+)", re.I)


@lru_cache(maxsize=64)  # several rules ask it of the same message
def commanded(text: str) -> bool:
    """The message is a bare command: its verb first, no "I need to" before it; or a German to-do, its verb last."""
    verb = act(text)
    first = _FIRST_WORD_RE.match(text or "")
    return (
        verb is not None
        and first is not None
        and first.group(1).lower() == verb
        or (german_todo(text) is not None and not _NEED_TOLD_RE.search(text or ""))
    )  # "ich muss … abgeben" is a need told, left to the plans as "I need to …" is


# "ich muss …" opening the message or a clause of it ("Klausur am 16. Februar, ich muss lernen"): a need told
_NEED_TOLD_RE = lazy_regex(
    r"^\s*(?:ich|wir)\b|[,;–-]\s*(?:und\s+)?(?:ich|wir)\s+(?:muss|müssen|sollte|sollten)\b", re.I
)


# German verbs of one act, as a to-do is written in German: the thing first, the verb last ("Steuererklärung
# abgeben", "Mama anrufen"); with a prefix split off in a sentence ("gibt ... ab") they are still these words
GERMAN_VERBS = frozenset(
    """
abgeben einreichen bezahlen zahlen überweisen anrufen kaufen besorgen abholen holen bringen buchen kündigen beantragen
verlängern erneuern schicken senden schreiben unterschreiben vereinbaren ausfüllen erledigen machen putzen wechseln
zurückgeben anmelden abmelden ummelden bestellen einkaufen vorbereiten klären nachfragen prüfen checken aufräumen
waschen gießen packen drucken fragen melden beantworten absagen zusagen bestätigen hochladen einzahlen abschließen
erstellen lesen lernen üben mailen tanken reinigen sortieren einwerfen verschicken versenden zurückschicken mitnehmen
abgeben ausmachen ausräumen einräumen kümmern besuchen treffen impfen abschicken rausbringen wegbringen mitbringen
einsammeln ablesen reparieren nachreichen streichen
""".split()
)
_GERMAN_PREFIXES = ("ab", "an", "auf", "aus", "ein", "mit", "nach", "vor", "zu", "zurück", "weg", "um", "raus", "rein")
# what may follow the verb of a German to-do: its day ("bis Freitag", "am 3. März", "morgen früh"), a "bitte"
_GERMAN_TAIL_RE = lazy_regex(
    r"(?:\s*,?\s+(?:bis|am|zum|zur|spätestens|vor|ab|diese[nrs]?|nächste[nrs]?|kommende[nrs]?|morgen|heute|"
    r"übermorgen|in|ende|anfang|mitte|um|noch|bitte|asap|für)\b.*)?$",
    re.I | re.S,
)
_GERMAN_NEED_RE = lazy_regex(
    # a line in a list of them opens with its link or a note's heading: "Und …", "Außerdem …", "also: …", "Bitte
    # notieren: …"
    r"^\s*(?:(?:und|außerdem|ausserdem|also|auch|dann|noch|zudem)\b\s*:?\s*)?"
    r"(?:(?:bitte\s+)?(?:notieren|notier(?:e|en)?(?:\s+(?:mir|dir))?|aufschreiben|to-?do)\s*:\s*)?"
    r"(?:bitte\s+)?(?:(?:ich|wir)\s+(?:muss|müssen|sollte|sollten|will|wollen)\s+(?:noch\s+|unbedingt\s+)?)?",
    re.I,
)


# a finite verb of telling in a to-do's words: not a to-do ("Die Heizung läuft wieder, der Vermieter hat sie …")
_TOLD_RE = lazy_regex(r"\b(?:hat|haben|hatte|hatten|hab|habe|ist|sind|war|waren|läuft|laufen|können|kann)\b", re.I)


def german_verb(word: str) -> bool:
    """A German verb of one act: listed, or one with a prefix ("zurückschicken"), or a verb in -ieren ("reservieren")."""
    word = word.lower()
    return (
        word in GERMAN_VERBS
        or len(word) > 6
        and word.endswith("ieren")
        or any(word.startswith(p) and word[len(p) :] in GERMAN_VERBS for p in _GERMAN_PREFIXES)
    )


# made once: every message is asked whether it is a German to-do
_LASSEN_RE = lazy_regex(r"\b(?P<verb>[a-zäöüß]+)\s+lassen\b")
_GERMAN_WORD_RE = lazy_regex(r"[^\W\d_]+(?:\u00a0lassen)?")


def german_todo(text: str) -> str | None:
    """ "Steuererklärung abgeben bis Freitag", "Bitte Miete überweisen bis zum 1. Februar", "ich muss noch die
    Steuererklärung abgeben": the to-do as a German writes it (the thing, then the verb, without its day), or None."""
    said = (text or "").strip().rstrip(" .!")
    if said.endswith("?"):
        return None
    said = said[_GERMAN_NEED_RE.match(said).end() :]
    # "die Wasseruhren ablesen lassen": the act is the verb before "lassen", whoever does it
    said = _LASSEN_RE.sub(lambda m: f"{m.group('verb')}\u00a0lassen", said)
    # the verb is the last German verb with only a day (or nothing) after it
    for verb in reversed(list(_GERMAN_WORD_RE.finditer(said))):
        # a German verb is written in lower case; "beim Lernen" is a noun
        act = verb.group().replace("\u00a0lassen", "")
        if act[0].islower() and german_verb(act) and _GERMAN_TAIL_RE.fullmatch(said, verb.end()):
            what = re.sub(r"^(?:die|der|das|den|dem|noch|mal)\s+", "", said[: verb.start()].strip(" ,"), flags=re.I)
            if re.search(r"(?<!\d)[.!?]\s+\S", what):
                return None  # a sentence before it: the to-do is that sentence alone
            if _TOLD_RE.search(what):
                return None  # "der Vermieter hat sie reparieren lassen": something told as done or as it is
            return f"{what} {verb.group()}".replace("\u00a0", " ") if what and not what[0].isdigit() else None
    return None


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
    # the simple past of the verbs tasks begin with: "found a babysitter", "wrote to the landlord"
    "found": "find",
    "wrote": "write",
    "took": "take",
    "gave": "give",
    "did": "do",
    "rang": "ring",
    "met": "meet",
    "cancelled": "cancel",
    "labelled": "label",
    "swept": "sweep",
    "fed": "feed",
    "lent": "lend",
    "dug": "dig",
    "hung": "hang",
    "spent": "spend",
    "travelled": "travel",
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


_GERUND_RE = lazy_regex(
    r"^(?P<verb>[a-z]+)ing\s+(?=(?:the|my|our|a|an|his|her|their|your|it|them|this|that|in|up|out|back|off)\b)", re.I
)


def imperative(what: str) -> str:
    """ "getting my permit extended" → "get my permit extended", "renewing the lease" → "renew the lease": a task
    asked for with its verb's -ing form is written with the verb; other words stay."""
    found = _GERUND_RE.match(what)
    if found is None:
        return what
    stem = found.group("verb").lower()
    for verb in (stem, stem + "e", stem[:-1] if len(stem) > 2 and stem[-1] == stem[-2] else stem):
        if verb in ACT_VERBS:
            return verb + what[found.end() - 1 :]
    return what


# acts that follow something up rather than do the thing a plan is for: "I need to chase up the Huber invoice",
# "gotta look into the Kita-Gutschein renewal", "I need to send it to the Finanzamt" are one task each, not a plan
FOLLOW_UP_VERBS = frozenset({"chase", "look", "send", "email", "e-mail", "text", "message", "ring", "phone", "follow"})


def follow_up_need(text: str) -> bool:
    """A need (or a command) whose act follows something up (FOLLOW_UP_VERBS): a task, whatever it names."""
    verb = act(text)
    return verb in FOLLOW_UP_VERBS
