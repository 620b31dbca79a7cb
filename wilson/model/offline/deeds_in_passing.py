"""A deed told in passing that no rule before it read: a word of done in one of the languages people write to
Wilson in ("Führungszeugnis ist gekommen, scanned it and sent it to Priya", "listo, pagué los 389 € del curso",
"Ayşe war heute für mich beim Bezirksamt – die Genehmigung fürs Ladenschild ist bis 2031 verlängert"), said of the one
open task the same clause names.

The last reading before Wilson answers that it did not understand or that it was only told something: left
unread, a deed is followed up as if undone, days of reminders about what the user already did. It is careful
because it reads loosely:

- the word of done must stand in a clause that asks nothing and promises, hedges or denies nothing ("noch nicht
  bezahlt", "I haven't booked", "will send it tomorrow", "hopefully the flights are booked", "can you book …?");
- someone else's own thing is theirs ("Anna booked her flights"), and a call made to the user is no call the user
  made ("the dentist called", "Mama hat angerufen");
- the task's title must share a word with that clause (or the English of a German one), and its verb (its first word,
  or a German infinitive last) must be the deed's; a title naming no act ("Fortbildungsnachweis an die Kammer") is
  finished only by a word of done that names none either ("erledigt", ✅);
- exactly one open task may fit best; two alike are left for the user to name.
"""

from __future__ import annotations

import re

from wilson.model.offline import places
from wilson.model.offline.phrases import Chat, Reply
from wilson.model.offline.words import glossed, words
from wilson.kernel.lazy_regex import lazy_regex

# the word of done, by the act it names (None: any act, "erledigt", "done", ✅)
_DONE: dict[str, str | None] = {}
for _act, _said in {
    None: "done erledigt gemacht fertig listo hecho hecha feito feita feitos feitas fatto gedaan zrobione "
    "załatwione tamamlandı hallettim ✅ ✔️ ✔ ☑️ ☑",
    "pay": "paid bezahlt überwiesen pagué pagado pagada paguei pago pagato payé betaald zapłacone zapłaciłem "
    "zapłaciłam ödedim ödendi",
    "send": "sent posted mailed emailed e-mailed abgeschickt verschickt geschickt gemailt versendet enviado enviada "
    "envié mandé enviei inviato mandato envoyé verstuurd gestuurd wysłane wysłałem wysłałam gönderdim gönderildi",
    "book": "booked reserved gebucht reserviert reservé reservado reservada reservei prenotato réservé geboekt "
    "gereserveerd zarezerwowane",
    "submit": "submitted filed eingereicht abgegeben",
    "order": "ordered bestellt pedido encargado besteld zamówione",
    "buy": "bought gekauft compré comprado comprada comprei comprato acheté gekocht kupione",
    "sign": "signed unterschrieben firmé firmado assinado signé getekend podpisane",
    "confirm": "confirmed bestätigt zugesagt confirmé confirmado confirmada bevestigd potwierdzone",
    "register": "registered enrolled angemeldet registriert inscrito inscrita zapisany zapisana",
    "apply": "applied beantragt solicitado",
    "cancel": "cancelled canceled gekündigt storniert abgesagt cancelado cancelada opgezegd",
    "renew": "renewed extended erneuert verlängert renovado",
    "pack": "packed gepackt",
    "collect": "collected abgeholt recogido",
    "call": "called phoned angerufen llamé",
    "check": "checked gelesen geprüft durchgesehen revisado",
    "scan": "scanned gescannt escaneado",
}.items():
    for _word in _said.split():
        _DONE[_word] = _act

# the verbs a task of each act is written with, English or German
_VERBS = {
    "pay": {"pay", "transfer", "settle", "bezahlen", "überweisen", "zahlen"},
    "send": {"send", "mail", "email", "post", "submit", "return", "forward", "schicken", "senden", "abschicken"},
    "book": {"book", "reserve", "buchen", "reservieren"},
    "submit": {"submit", "hand", "file", "send", "apply", "einreichen", "abgeben"},
    "order": {"order", "bestellen"},
    "buy": {"buy", "get", "purchase", "kaufen", "besorgen"},
    "sign": {"sign", "unterschreiben"},
    "confirm": {"confirm", "reply", "answer", "rsvp", "accept", "respond", "zusagen", "bestätigen"},
    "register": {"register", "enrol", "enroll", "sign", "anmelden"},
    "apply": {"apply", "request", "beantragen"},
    "cancel": {"cancel", "kündigen", "stornieren"},
    "renew": {"renew", "extend", "erneuern", "verlängern"},
    "pack": {"pack", "packen"},
    "collect": {"collect", "pick", "fetch", "abholen"},
    "call": {"call", "phone", "ring", "anrufen"},
    "check": {"check", "read", "review", "prüfen", "lesen"},
    "scan": {"scan", "send", "scannen"},
}
_ANY_VERB = frozenset(verb for verbs in _VERBS.values() for verb in verbs)

# a clause that promises, hedges or denies tells nothing done ("n't" has no word boundary before it: "haven't")
_NOT_DONE_RE = lazy_regex(
    r"n't\b|\b(?:not|never|yet|still|will|gonna|going\s+to|need|needs|must|have\s+to|has\s+to|should|then|later|"
    r"tomorrow|almost|nearly|hopefully|hope|wish|if|maybe|perhaps|thought|said|says|out|being|getting|to\s+be|no|não|"
    r"nicht|nie|noch|kein|keine|"
    r"muss|müssen|soll|werde|wird|dann|später|morgen|fast|hoffentlich|vielleicht|wenn|falls|dachte|todavía|aún|"
    r"tengo\s+que|hay\s+que|mañana|ainda|amanhã|pas|demain|nog|jeszcze|jutro|henüz|değil|yarın)\b",
    re.I,
)
# an English word of done said to the user ("sent me") is no deed of theirs
_ENGLISH = frozenset(
    "done paid sent posted mailed emailed e-mailed booked reserved submitted filed ordered bought signed confirmed "
    "registered enrolled applied cancelled canceled renewed extended packed collected called phoned checked "
    "scanned".split()
)
# someone else's own thing ("Anna booked her flights"); who made a call ("Mum called" is a call to the user)
_THEIRS_RE = lazy_regex(r"\b(?:her|his|their|ihr|ihre|ihren|sein|seine|seinen)\b", re.I)
_FIRST_PERSON_RE = lazy_regex(r"\b(?:i|i've|we|we've|ich|wir|hab|habe|haben)\b", re.I)
# a message that asks for something is a request, whatever it also tells
_ASKS_RE = lazy_regex(
    r"\b(?:please|pls|plz|remind|can\s+you|could\s+you|would\s+you|bitte|erinner\w*|kannst|könntest|por\s+favor|"
    r"porfa|recuérdame|proszę|lütfen)\b",
    re.I,
)
# a sum still owed beside the one paid: "Paid 40 € for the school trip, another 120 € due by 1 March"
_STILL_DUE_RE = lazy_regex(r"\b(?:due|by|until|bis|fällig|spätestens)\b", re.I)
_CLAUSE_RE = lazy_regex(r"[,;:.!?]+\s+|\s+[–—-]\s+|\s+(?:and|und|y|e|et|en|i|ve|but|aber|pero)\s+", re.I)
_TOKEN_RE = lazy_regex(r"[^\W\d_][\w'-]*|✅|✔️?|☑️?")


def _deeds(text: str) -> list[tuple[str | None, str, str]]:
    """(act, word of done, its clause) of each clause that tells something done."""
    found = []
    for clause in _CLAUSE_RE.split(text):
        if not clause or _NOT_DONE_RE.search(clause):
            continue
        for token in _TOKEN_RE.findall(clause):
            token = token.lower()
            if token in _DONE:
                found.append((_DONE[token], token, clause))
    return found


_IT_RE = lazy_regex(r"\b(?:it|them|es|ihn|das|lo|la)\b", re.I)


def _told_clauses(text: str) -> list[str]:
    """The clauses that neither promise, hedge nor deny: what a deed's "it" may name."""
    return [clause for clause in _CLAUSE_RE.split(text) if clause and not _NOT_DONE_RE.search(clause)]


_LEADING = frozenset({"just", "already", "finally", "also", "and", "so", "ok", "okay"})


def _doer(clause: str, word: str) -> str | None:
    """Who the clause says did it, when a name stands right before its word of done ("Anna paid" → "anna")."""
    tokens = _TOKEN_RE.findall(clause)
    lowered = [token.lower() for token in tokens]
    at = lowered.index(word) if word in lowered else 0
    before = [t for t in tokens[:at] if t.lower() not in _LEADING | {"has", "have", "hat", "had"}]
    return before[-1].lower() if len(before) == 1 and before[-1][:1].isupper() else None


def tells_deed(text: str) -> bool:
    """Whether a message tells something done and asks nothing."""
    return not text.rstrip().endswith("?") and not _ASKS_RE.search(text) and bool(_deeds(text))


def paid_already(text: str) -> bool:
    """Whether a message tells a payment made and owes nothing more ("Ticket gezeigt, 7 € bezahlt – erledigt"): its
    sum is no bill."""
    return "?" not in text and not _STILL_DUE_RE.search(text) and any(act == "pay" for act, _, _ in _deeds(text))


def _title_verbs(task: dict) -> set[str] | None:
    """The verbs a task's title is written with: its first word, or a German infinitive last ("Genehmigung fürs
    Ladenschild verlängern"); None when it names no act ("Fortbildungsnachweis an die Tierärztekammer")."""
    said = [w.lower().strip(":,.") for w in str(task.get("title") or "").split()]
    if not said:
        return None
    verbs = {said[0]} | ({said[-1]} if said[-1].endswith("n") else set())  # "einreichen", "verlängern"
    return verbs if verbs & _ANY_VERB else None


def deed_in_passing(chat: Chat, text: str) -> Reply | None:
    """The one open task a deed told in passing finishes, as a call to complete it; None when the message tells no
    deed or no single task fits it."""
    if text.rstrip().endswith("?") or _ASKS_RE.search(text):
        return None
    scored: dict[object, tuple[float, dict]] = {}
    for act, word, clause in _deeds(text):
        if _THEIRS_RE.search(clause) or act == "call" and not _FIRST_PERSON_RE.search(clause):
            continue  # "Anna booked her flights", "the dentist called"
        if word in _ENGLISH and re.search(rf"\b{re.escape(word)}\s+(?:me|us)\b", clause, re.I):
            continue  # "Anna sent me an email about the invoice": done to the user, not by them
        doer = _doer(clause, word) if word in _ENGLISH else None  # a German noun is capitalised: no one by that
        place = places.find_place(None, clause)
        # "Führungszeugnis ist gekommen, scanned it and sent it to Priya": "it" is what a clause before it named
        told = " ".join(_told_clauses(text)) if _IT_RE.search(clause) else clause
        said = glossed(words(" ".join(w for w in told.split() if w.lower().strip(".,!;:") != word)))
        for task in chat.tasks:
            if task.get("status", "open") not in ("open", "snoozed"):
                continue
            verbs = _title_verbs(task)
            if (verbs is None) != (act is None) or act is not None and verbs is not None and not verbs & _VERBS[act]:
                continue  # "paid" finishes a task to pay, not one to book; "erledigt" one that names no act
            own = f"{task.get('title') or ''} {task.get('topic') or ''}".lower()
            if doer and doer in own.split():
                continue  # "Anna paid" is Anna paying, not "Pay Anna" done
            if place is not None and place.name.lower() not in own:
                continue  # "booked the flights to Porto" is another trip's flights
            # the task's own thing must be named in the clause ("the concert hall was double booked" names no flight
            # to book); its topic's words tell two such tasks apart
            named = len(said & glossed(words(str(task.get("title") or ""))))
            if named:
                score = named + len(said & glossed(words(str(task.get("topic") or "")))) / 2
                if score > scored.get(task.get("id"), (0.0, task))[0]:
                    scored[task.get("id")] = (score, task)
    ranked = sorted(scored.values(), key=lambda pair: -pair[0])
    if not ranked or len(ranked) > 1 and ranked[1][0] == ranked[0][0]:
        return None  # no task named, or two alike: the user names which
    return Reply("", [("complete_task", {"task_id": ranked[0][1].get("id")})], "a deed told in passing")
