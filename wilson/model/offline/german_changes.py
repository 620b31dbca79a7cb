"""A task done, moved or dropped as a German writes it in a status line ("Die Beiträge sind vollständig da", "das
Zelt … bitte auf den 4. Juni schieben", "die Wasseruhren streichen, das macht Herr Pawlak").

German joins words: "die Beiträge" are those of "Mitgliedsbeiträge einsammeln" and "das Zelt" is the "Festzelt", so a
word said names a title's word that ends with it. Each rule wants one open task named, or it says nothing.
"""

from __future__ import annotations

import re

from wilson.kernel.lazy_regex import lazy_regex
from wilson.model.offline import dates, glossary
from wilson.model.offline.phrases import Chat, Reply

_LEAD = (
    r"^\s*(?:(?:kurzer\s+)?(?:stand|update|zwischenstand|info)\s*:\s*)?(?:(?:und|auch|außerdem|ausserdem|also|dann)\s+)?"
    r"(?:(?:die|der|das|den|unser[e]?|mein[e]?)\s+)?"
)
_DEED_WORDS = (
    r"erledigt|bezahlt|eingesammelt|abgegeben|bestellt|gebucht|reserviert|abgeschickt|repariert|erneuert|verlängert|"
    r"unterschrieben|gekündigt|abgeholt|überwiesen|eingereicht|verschickt|versendet|eingeworfen|kopiert|gedruckt|"
    r"ausgedruckt|gegeben|vorbeigebracht|hochgeladen"
)
# who did it or when, after a comma: "…, der Glaser war heute Nachmittag da"; not what is still to do ("…, aber noch
# nicht unterschrieben", "…, muss ich bis Freitag bezahlen", "Flug gebucht, Hotel noch nicht")
_AFTER = (
    r"(?:\s*(?:[,–—-]|✅|👍)\s*(?![^.!?]*\b(?:nicht|noch|muss|müssen|aber|fehlt|fehlen|(?-i:morgen)|später|"
    # a day still to meet ("…, bis Freitag bezahlen"), not how long it holds ("tauglich bis 2031")
    r"bis\s+(?:morgen|montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonntag|zum|ende|nächst\w*)\b|bis\s+\d{1,2}\.(?=\s|$)))"
    r"[^.!?]*)?"
)
# a second deed of the same thing, and a sign after it: "Vertrag unterschrieben und eingeworfen 📮"
_ALSO = (
    r"(?:\s+(?:und|&)\s+(?:"
    + _DEED_WORDS
    + r"|(?:in|im|an|bei|beim|zur|zum)\s+(?:den\s+|die\s+|der\s+|dem\s+)?[\w-]+))?"
    r"(?:\s*[^\w\s?,.;!–—-])*"
)  # "… und in den Fächern ✔️"
_DONE_RE = lazy_regex(
    _LEAD + r"(?P<what>[\w-]+(?:\s+[\w-]+){0,4}?)\s+(?:ist|sind)\s+"
    r"(?:(?:jetzt|schon|alle|vollständig|komplett|endlich|inzwischen|wieder|gestern|heute|vorhin)\s+)*"
    # where it went: "Unterlagen sind bei der Fahrerlaubnisbehörde abgegeben"
    r"(?P<where>(?:bei|an|beim|im|in|zur|zum)\s+(?:[\w-]+\s+){1,3}?)?"
    # "da" only when all of it is: "Die Beiträge sind vollständig da" (not "Die Rechnung ist da")
    r"(?P<deed>(?<=vollständig\s)da|(?<=komplett\s)da|(?<=alle\s)da|fertig|geklärt|gemacht|raus|durch|"
    r"(?<=zur\sPost\s)(?:gegangen|gebracht)|"
    + _DEED_WORDS
    + r")"
    # then a tick, read as "done", or other signs
    + _ALSO
    + _AFTER
    + r"(?:\s+done)?(?:\s*[^\w\s])*"
    r"(?:\s*(?:puh|uff|endlich|geschafft|juhu)\b(?:\s*[^\w\s])*)?\s*$",  # a sigh after it: "… 27 Stück. Puh."
    re.I,
)
# said without a verb, as a note: "Schornsteinfeger bezahlt, 64,30 sind raus", "Fahrerkarte-Antrag heute beim LABO
# abgegeben, Foto und Führerscheinkopie waren dabei ✅"
_BARE_DONE_RE = lazy_regex(
    _LEAD + r"(?P<what>[\w-]+(?:\s+[\w-]+){0,2}?)\s+"
    r"(?:(?:jetzt|schon|endlich|heute|gestern|vorhin|eben|grad|gerade|auch)\s+)*"
    r"(?P<where>(?:bei|an|beim|im|in|zur|zum)\s+(?:[\w-]+\s+){1,3}?)?"
    r"(?P<deed>" + _DEED_WORDS + r")\b(?![^?]*\?)" + _ALSO + _AFTER + r"(?:[.!]\s*[^?]*)?(?:\s+done)?\s*$",
    re.I | re.S,
)
# the perfect without its subject, as a note: "hab heute Haftpflicht-Nachweis und Grundriss im Portal hochgeladen ✅"
_HAVE_DONE_RE = lazy_regex(
    r"^\s*(?:ich\s+)?(?:hab|habe|hab's|habs)\s+(?P<what>[^,.!?]{3,80}?)\s+(?P<deed>" + _DEED_WORDS + r")\b"
    r"(?![^?]*\?)" + _ALSO + _AFTER + r"(?:[.!]\s*[^?]*)?(?:\s+done)?\s*$",
    re.I | re.S,
)
# the thing first, then the perfect: "die Fortbildungs-Anmeldung hab ich heut auch schon der Leitung gegeben"
_THING_I_HAVE_DONE_RE = lazy_regex(
    _LEAD + r"(?P<what>[\w-]+(?:\s+[\w-]+){0,2}?)\s+(?:hab|habe)\s+ich\s+(?:[\w-]+\s+){0,6}?"
    r"(?P<deed>" + _DEED_WORDS + r")\b(?![^?]*\?)" + _ALSO + _AFTER + r"(?:\s+done)?\s*$",
    re.I | re.S,
)
# someone the task waits on has said yes: "Der Pflegedienst in Warnemünde hat zugesagt, jeden Morgen um 8 kommt jemand"
_AGREED_RE = lazy_regex(
    _LEAD + r"(?P<what>[\w-]+)(?:\s+(?:in|vor|aus|von)\s+[\w-]+)?\s+(?:hat|haben)\s+"
    r"(?:(?:jetzt|endlich|schon|heute|gestern|fest)\s+)*(?P<deed>zugesagt|bestätigt)\b(?![^?]*\?)" + _AFTER + r"\s*$",
    re.I | re.S,
)
# not yet, or not done: "Noch nicht bezahlt", "Wird bezahlt, sobald …", "Morgen bezahlt, versprochen"
_NOT_DONE_RE = lazy_regex(
    r"\b(?:nicht|noch\s+nicht|nie|kein\w*|wird|werden|morgen|übermorgen|bald|gleich|später|sobald|erst)\b|^(?:ich|wir|du|er|sie|es)$",
    re.I,
)
_DENIED_RE = lazy_regex(r"\b(?:nicht|nie|kein\w*)\b", re.I)
_MOVE_RE = lazy_regex(
    _LEAD + r"(?P<what>[\w-]+)\b.*?\bauf\s+(?:den\s+|die\s+|das\s+)?(?P<when>[^,;!?]+?)\s+"
    r"(?:verschieben|schieben|verlegen|legen)\s*[.!]*$",
    re.I | re.S,
)
_DROP_RE = lazy_regex(
    # "die Fortbildung kannst du streichen, der Kurs ist schon voll"
    _LEAD + r"(?P<what>[\w-]+(?:\s+[\w-]+){0,2}?)\s+(?:kannst du\s+|können wir\s+|kann\s+)?(?:bitte\s+)?"
    r"(?P<drop>streichen|löschen|rausnehmen|weglassen)"
    r"(?:\s*[,–—-]\s*.+|\s*[.!]*)$",
    re.I | re.S,
)


def change(chat: Chat, text: str) -> Reply | None:
    """One status line's change to one open task, or None."""
    said = text.strip()
    done = _done_said(chat, said)
    if done is not None:
        return done
    # two deeds told in one line: "Elternbriefe sind kopiert … und die Fortbildungs-Anmeldung hab ich … gegeben"
    parts = [p for p in _AND_THE_RE.split(said) if p.strip()]
    if len(parts) == 2:
        both = [_done_said(chat, p.strip(" ,.")) for p in parts]
        calls = [c for r in both if r is not None for c in r.calls]
        if all(r is not None for r in both) and len(calls) == 2 and calls[0] != calls[1]:
            return Reply("", calls, "done with two tasks, in German")
    found = _DROP_RE.match(said)
    if found:
        task = _named(chat, found.group("what"))
        verb = found.group("drop").lower()
        if task is None or verb in str(task.get("title") or "").lower():
            return None  # "Zaun streichen" of "Gartenzaun streichen" is the painting itself, not its drop
        return Reply("", [("cancel_task", {"task_id": task["id"]})], "drop a task, in German")
    found = _MOVE_RE.match(said)
    if found:
        task = _named(chat, found.group("what"))
        when = dates.search(found.group("when"), chat.now, chat.tz)
        if task is None or not when:
            return None
        return Reply(
            "",
            [("update_task", {"task_id": task["id"], "due": dates.iso(when[0].value)})],
            f"move a task, in German ({when[0].stated(chat.tz)})",
        )
    return None


# what a German deed finishes, by the first word of a task written in English ("Fenster … ist repariert" of "Fix: Kitchen
# window …"); the deeds that say only "done" (erledigt, fertig, gemacht) name no verb
_DEEDS = {
    "repariert": ("fix", "repair"),
    "bezahlt": ("pay",),
    "überwiesen": ("pay", "transfer"),
    "gebucht": ("book",),
    "reserviert": ("book", "reserve"),
    "bestellt": ("order",),
    "abgeschickt": ("send",),
    "raus": ("send", "submit", "return"),  # "das Formular ist raus": sent off
    "unterschrieben": ("sign",),
    "gekündigt": ("cancel",),
    "abgeholt": ("collect", "pick"),
    "eingereicht": ("submit", "hand", "file"),
    "abgegeben": ("submit", "hand", "return"),
    "verlängert": ("renew", "extend"),
    "erneuert": ("renew",),
    "verschickt": ("send",),
    "versendet": ("send",),
    "hochgeladen": ("submit", "upload", "send"),
}


_DONES = (
    (_DONE_RE, "done with a task, in German"),
    (_BARE_DONE_RE, "done with a task, noted in German"),
    (_HAVE_DONE_RE, "done with a task, noted in German"),
    (_THING_I_HAVE_DONE_RE, "done with a task, noted in German"),
    (_AGREED_RE, "done with a task: who it waited on said yes"),
)
_AND_THE_RE = lazy_regex(r"\s+und\s+(?=(?:die|der|das|den|mein|meine)\s)", re.I)


def _done_said(chat: Chat, said: str) -> Reply | None:
    """A deed done said in one of the German shapes, its task finished; None for other words, or none found."""
    for pattern, rule in _DONES:
        found = pattern.match(said)
        if found:
            task = _finished(chat, found)
            return Reply("", [("complete_task", {"task_id": task["id"]})], rule) if task else None
    return None


def _finished(chat: Chat, found: re.Match) -> dict | None:
    """The one open task a deed said done names: by its words, by where it went, or by its verb with one of its
    words (or, for a payment or papers handed in, its verb alone); never when the words say it is not done yet
    ("Noch nicht bezahlt", "Morgen bezahlt")."""
    what = found.group("what")
    if _NOT_DONE_RE.search(what) or _DENIED_RE.search(found.group(0)):
        return None  # "Flüge habe ich noch nicht gebucht": the denial stands between the thing and its deed
    where = found.groupdict().get("where")
    named = _named(chat, what) or (where and _named(chat, where))
    deed = found.group("deed").lower()
    if named and deed in _WEAK_DEEDS and not _weakly_done(str(named.get("title") or ""), deed):
        return None  # "Mietvertrag kopiert" is no "Sign the Mietvertrag" done
    if named and deed in ("zugesagt", "bestätigt") and not _AWAITS_YES_RE.search(str(named.get("title") or "")):
        return None  # "Der Vermieter hat zugesagt, dass er sich meldet" is no "Vermieter wegen Kaution anrufen" done
    if named:
        return named
    task = _of_deed(chat, deed)
    said = [w.lower() for w in re.findall(r"[^\W\d_]{4,}", what)]
    title = str(task.get("title") or "").lower() if task else ""
    # its verb alone names it when a word said is in it too ("Fenster in der Müllerstraße ist repariert" of "Fix:
    # Kitchen window …"), or the deed is said of whom it went to
    if task and (any(_has(title, w) for w in said) or deed in _SAID_OF_OTHERS):
        return task
    return None


# deeds that finish a task only when they are its own deed: copying a contract is not signing it
_WEAK_DEEDS = {"kopiert": "kopier", "gedruckt": "druck", "ausgedruckt": "druck", "gegeben": "geb"}
# a task that waits on someone's yes: "Get the Pflegedienst confirmed", "Zusage vom Vermieter einholen"
_AWAITS_YES_RE = lazy_regex(r"\bconfirm\w*|\bzusage\w*|\bbestätig\w*|\bagree\w*|\byes\b", re.I)


def _weakly_done(title: str, deed: str) -> bool:
    """Whether a weak deed finishes this task: its title says that deed ("Elternbriefe … kopieren"), or starts with
    no English verb of its own ("The registration for the … Fortbildung" handed over)."""
    return _WEAK_DEEDS[deed] in title.lower() or not _STARTS_WITH_VERB_RE.match(title)


_STARTS_WITH_VERB_RE = lazy_regex(
    r"^(?:sign|send|pay|book|buy|get|call|email|write|order|submit|return|renew|register|apply|check|fix|repair|"
    r"cancel|collect|pick|bring|hand|file|print|copy|give|prepare|confirm|ask|make|take|find|clean|plan|move)\b",
    re.I,
)
# deeds said of whom they went to or of the papers in them, not of the task's thing: "Schornsteinfeger bezahlt",
# "Haftpflicht-Nachweis und Grundriss im Portal hochgeladen" (a booking or an order is said of its thing: "Tisch
# reserviert" is no "Book tyre change")
_SAID_OF_OTHERS = frozenset(
    {"bezahlt", "überwiesen", "abgegeben", "eingereicht", "hochgeladen", "abgeschickt", "verschickt", "raus"}
)


def _of_deed(chat: Chat, deed: str) -> dict | None:
    """The one open task whose verb is this deed ("ist repariert" of the one "Fix: …"), when its words are another
    language's; None when none or several."""
    verbs = _DEEDS.get(deed.lower(), ())
    fitting = [
        t
        for t in chat.tasks
        if t.get("status", "open") == "open"
        and re.sub(r"\W+$", "", str(t.get("title") or "").split(" ", 1)[0]).lower() in verbs
    ]
    return fitting[0] if len(fitting) == 1 else None


def _named(chat: Chat, what: str) -> dict | None:
    """The one open task whose title has, for each word said, a word that is it or ends with it ("Zelt" of
    "Festzelt"), or the English a person here uses for it ("Einladungen" of "Send the invitations",
    wilson/model/offline/glossary.py); None when none or several."""
    said = [w.lower() for w in re.findall(r"[^\W\d_]{4,}", what)]
    codes = [c.lower() for c in re.findall(r"\b[^\W\d_]{1,4}\d+\w*\b", what)]  # "G25", "A1", "B96"
    if codes and not said:
        fitting = [
            t
            for t in chat.tasks
            if t.get("status", "open") == "open"
            and all(re.search(rf"\b{re.escape(c)}\b", str(t.get("title") or "").lower()) for c in codes)
        ]
        return fitting[0] if len(fitting) == 1 else None
    if not said:
        return None
    fitting = [
        t
        for t in chat.tasks
        if t.get("status", "open") == "open" and all(_has(str(t.get("title") or "").lower(), s) for s in said)
    ]
    return fitting[0] if len(fitting) == 1 else None


def _has(title: str, said: str) -> bool:
    """Whether a title has the word said, the end of a compound of it, or its English."""
    title_words = re.findall(r"[^\W\d_]+", title)
    if any(w.endswith(said) for w in title_words):
        return True
    if len(said) > 6 and said.endswith("s") and any(w.endswith(said[:-1]) for w in title_words):
        return True  # the joining "s" of a compound's first part: "Fortbildungs-Anmeldung" of "…-Fortbildung"
    english = glossary.english(said)
    return bool(english) and any(w in (e, f"{e}s", f"{e}es") for w in title_words for e in english)
