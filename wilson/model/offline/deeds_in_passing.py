"""A deed told in passing that no rule before it read: a word of done in one of the languages people write to
Wilson in ("Flüge nach Riga sind gebucht", "scanned it and sent it to Priya", "listo, pagué los 389 € del curso",
"fotos biométricas feitas hoje"), said of the one open task its other words name.

The last reading before Wilson answers that it did not understand or that it was only told something: left
unread, a deed is followed up as if undone, days of reminders about what the user already did. It is careful
because it reads loosely:

- the word of done must stand in a clause that asks nothing, promises nothing and denies nothing ("noch nicht
  bezahlt", "will send it tomorrow", "can you book …?");
- the task's title must share a word with the message (or the English of a German one), and its verb must be
  the deed's when the deed has one ("paid" finishes "Pay the course fee", not "Book the course");
- exactly one open task may fit best; two alike are left for the user to name.
"""

from __future__ import annotations

import re

from wilson.model.offline.phrases import Chat, Reply
from wilson.model.offline.words import glossed, words
from wilson.kernel.lazy_regex import lazy_regex

# the word of done, by the act it names (None: any act, "erledigt", "done", ✅)
_DONE: dict[str, str | None] = {}
for _act, _said in {
    None: "done erledigt gemacht fertig listo hecho hecha feito feita feitos feitas fatto gedaan zrobione "
    "załatwione tamamlandı hallettim ✅ ✔️ ☑️",
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

# the verbs a task of each act is written with (its title's first word, English or German)
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

# a clause that promises, denies or hopes tells nothing done
_NOT_DONE_RE = lazy_regex(
    r"\b(?:not|n't|never|yet|still|will|gonna|going\s+to|need|needs|must|have\s+to|has\s+to|should|then|later|"
    r"tomorrow|nicht|nie|noch|kein|keine|muss|müssen|soll|werde|wird|dann|später|morgen|todavía|aún|tengo\s+que|"
    r"hay\s+que|mañana|ainda|amanhã|pas|demain|nog|jeszcze|jutro|henüz|değil|yarın)\b",
    re.I,
)
# a message that asks for something is a request, whatever it also tells
_ASKS_RE = lazy_regex(
    r"\b(?:please|pls|plz|remind|can\s+you|could\s+you|would\s+you|bitte|erinner\w*|kannst|könntest|por\s+favor|"
    r"porfa|recuérdame|proszę|lütfen)\b",
    re.I,
)
_CLAUSE_RE = lazy_regex(r"[,;:.!?]+\s+|\s+[–—-]\s+|\s+(?:and|und|y|e|et|en|i|ve|but|aber|pero)\s+", re.I)
_TOKEN_RE = lazy_regex(r"[^\W\d_][\w'-]*|✅|✔️?|☑️?")


def _deeds(text: str) -> list[tuple[str | None, str]]:
    """(act, word of done) of each clause that tells something done."""
    found = []
    for clause in _CLAUSE_RE.split(text):
        if not clause or _NOT_DONE_RE.search(clause):
            continue
        for token in _TOKEN_RE.findall(clause):
            token = token.lower()
            if token in _DONE:
                found.append((_DONE[token], token))
    return found


def tells_deed(text: str) -> bool:
    """Whether a message tells something done and asks nothing."""
    return not text.rstrip().endswith("?") and not _ASKS_RE.search(text) and bool(_deeds(text))


def paid_already(text: str) -> bool:
    """Whether a message tells a payment made ("Ticket gezeigt, 7 € bezahlt – erledigt"): its sum is no bill."""
    return "?" not in text and any(act == "pay" for act, _ in _deeds(text))


_ANY_VERB = frozenset(verb for verbs in _VERBS.values() for verb in verbs)


def _title_verbs(task: dict) -> set[str] | None:
    """The verbs a task's title is written with: its first word, or its last in German ("Genehmigung fürs Ladenschild
    verlängern"); None when it names no act ("Fortbildungsnachweis an die Tierärztekammer"), which any deed may finish."""
    said = [w.lower().strip(":,.") for w in str(task.get("title") or "").split()]
    verbs = {said[0], said[-1]} if said else set()
    return verbs if verbs & _ANY_VERB else None


def deed_in_passing(chat: Chat, text: str) -> Reply | None:
    """The one open task a deed told in passing finishes, as a call to complete it; None when the message tells no
    deed or no single task fits it."""
    if text.rstrip().endswith("?") or _ASKS_RE.search(text):
        return None
    deeds = _deeds(text)
    if not deeds:
        return None
    # a deed with its act ("bezahlt") says which tasks it can finish; one without ("erledigt", ✅) any
    acts = {act for act, _ in deeds if act is not None}
    done_words = {word for _, word in deeds}
    said = glossed(words(" ".join(w for w in re.split(r"\s+", text) if w.lower().strip(".,!;:") not in done_words)))
    scored = []
    for task in chat.tasks:
        if task.get("status", "open") not in ("open", "snoozed"):
            continue
        verbs = _title_verbs(task)
        if acts and verbs is not None and not any(verbs & _VERBS[act] for act in acts):
            continue  # "paid" finishes a task to pay, not one to book
        # the task's own thing must be named ("the concert hall was double booked" names no flight to book); its
        # topic's words tell two such tasks apart
        named = len(said & glossed(words(str(task.get("title") or ""))))
        if named:
            scored.append((named + len(said & glossed(words(str(task.get("topic") or "")))) / 2, task))
    if not scored:
        return None
    scored.sort(key=lambda pair: -pair[0])
    if len(scored) > 1 and scored[1][0] == scored[0][0]:
        return None  # two tasks alike: the user names which
    task = scored[0][1]
    return Reply("", [("complete_task", {"task_id": task.get("id")})], "a deed told in passing")
