"""A mail that asks the user to do something by a date, read by rules: "please sign up by 10 January",
"reply before Friday", "return the signed form no later than the 20th".

It becomes one task, named by what to do and the mail's subject ("Sign up: Parents evening on 14 January"),
due the day before the date asked for, for the approval gate like any other proposal. As with bills, a
mail that reads like phishing or an offer gets no task.

Whoever sends it: a school, a landlord, an office's reminder ("Your vehicle tax of 120 EUR must be paid by
15 January"), a travel notice ("Check in online by 12:00 on 3 March"). The task carries what the user needs
to do it: the amount, the reference to quote, and where.

Size: one reading of a mail's ask (what, by when, the essentials); its patterns and the functions that use
them belong together.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from wilson.model.offline import dates
from wilson.model.offline.bills import OFFER_RE, PHISHING_RE, Due, _due, name_only, sender_of
from wilson.model.offline.bills import task_for as bills_task_for
from wilson.model.offline.essentials import AMOUNT_RE, essentials
from wilson.model.offline.mailtext import sent_at
from wilson.model.offline.point import DATE_LINE
from wilson.model.offline.quoted import quotes
from wilson.kernel.lazy_regex import lazy_regex
from wilson.model.offline.words import NUMBER_WORDS

VERBS = {
    "sign up": "Sign up",
    "register": "Register",
    "reply": "Reply",
    "respond": "Reply",
    "rsvp": "RSVP",
    "let us know": "Reply",
    "let me know": "Reply",
    "get back to": "Reply",
    "confirm": "Confirm",
    "return": "Return",
    "submit": "Submit",
    "hand in": "Hand in",
    "fill in": "Fill in",
    "fill out": "Fill in",
    "complete": "Complete",
    "enrol": "Enrol",
    "enroll": "Enrol",
    "apply": "Apply",
    "book": "Book",
    "choose": "Choose",
    "order": "Order",
    "sign": "Sign",
    "pay": "Pay",
    "transfer": "Pay",
    "settle": "Pay",
    "check in": "Check in",
    "send": "Send",
    "let us have": "Send",
    "let me have": "Send",
    "hand it in": "Hand in",
    "hand them in": "Hand in",
    "fill it in": "Fill in",
    "fill it out": "Fill in",
    "remit": "Pay",
    "upload": "Upload",
    "provide": "Send",
    "renew": "Renew",
    "schedule": "Book",
    "make an appointment": "Book",
    "collect": "Collect",
    "pick up": "Collect",
    "pick it up": "Collect",
    "pick them up": "Collect",
    "file": "File",
    "update": "Update",
    "accept": "Accept",
    # a right the user has until a date: "you can object to the new price until 28 February"
    "object": "Object",
    "raise an objection": "Object",
    "opt out": "Opt out",
}
# the passive of an ask ("the form must be returned by …", "payment has to be made before …")
PASSIVE = {
    "paid": "Pay",
    "made": "Pay",
    "settled": "Pay",
    "transferred": "Pay",
    "submitted": "Submit",
    "returned": "Return",
    "signed": "Sign",
    "completed": "Complete",
    "filled in": "Fill in",
    "filled out": "Fill in",
    "booked": "Book",
    "renewed": "Renew",
    "received": "Send",
    "uploaded": "Upload",
    "sent": "Send",
    "handed in": "Hand in",
    "collected": "Collect",
    "picked up": "Collect",
    "confirmed": "Confirm",
    "registered": "Register",
    "filed": "File",
    "checked in": "Check in",
}
_PASSIVE_RE = lazy_regex(
    r"\b(?:must|has to|have to|needs? to|should|is to|are to|is required to|are required to)"
    r"\s+be\s+(?P<verb>"
    + "|".join(sorted(map(re.escape, PASSIVE), key=len, reverse=True))
    + r")\b(?:[^.!?\n]|(?<=\d)\.(?=\d)){0,60}?\b(?:by|before|until|no later than|on or before)\s+"
    r"(?P<when>(?:[^.!?\n]|(?<=\d)\.(?=\d)){3,40})",
    re.I,
)
# "Amount due: 120 EUR … due date 15 January", "is due on 15 January": something to pay, asked by its date
_DUE_RE = lazy_regex(
    r"\b(?:is|are|falls?|becomes?)\s+due\s+(?:on|by|before)?\s*(?P<when>(?:[^.!?\n]|(?<=\d)\.(?=\d)){3,40})|"
    r"\b(?:due date|deadline|payment deadline|frist|fällig(?: am)?)\s*(?:is|:)?\s*"
    r"(?P<when2>(?:[^.!?\n]|(?<=\d)\.(?=\d)){3,40})",
    re.I,
)
_ASK_RE = lazy_regex(
    r"\b(?P<verb>" + "|".join(sorted(map(re.escape, VERBS), key=len, reverse=True)) + r")\b"
    # "by replying to this email no later than 28 April": "by" and a gerund say how, not by when
    r"(?P<what>(?:[^.!?\n]|(?<=\d)\.(?=\d)){0,100}?)\b(?P<by>by(?!\s+\w+ing\b)|before|until|no later than|within)\s+"
    r"(?P<when>(?:[^.!?\n]|(?<=\d)\.(?=\d)){3,40})",
    re.I,
)
# "within the next two weeks", "within 10 days": a span from the day the mail was sent
_WITHIN_RE = lazy_regex(
    r"^(?:the\s+)?(?:next\s+|von\s+|der\s+nächsten\s+)?(?P<n>\d+|a|one|two|three|four|five|six|"
    r"seven|eight|ten|fourteen|einem|einer|zwei|drei|vier|sechs|acht|zehn|vierzehn)"
    r"\s+(?P<unit>days?|weeks?|months?|tage?n?|wochen?|monate?n?)\b",
    re.I,
)
_UNITS = {"day": 1, "week": 7, "month": 30, "tag": 1, "woche": 7, "monat": 30}
# asked of the reader: an imperative ("RSVP before …") or a request ("please", "could you"); not a promise
# ("we'll confirm your booking by …") nor a state ("valid until …")
_ASKING_RE = lazy_regex(
    r"(?:^|\b(?:please|pls|kindly|could you|can you|would you|will you|need you to|you need to|"
    r"you must|make sure to|make sure you|remember to|don'?t forget to|be sure to|you are asked to|"
    r"you're asked to|we ask you to|you can|you may|you will need to|you'll need to|you should|"
    r"you have to|you are required to|you're required to|we need you to|we kindly ask you to|"
    r"(?:grateful|appreciate(?: it)?) if you (?:could|would|can)|if you could|we ask that you|we would ask you to)"
    r"\s+(?:\w+\s+){0,2})$",
    re.I,
)
# an ask said by its noun ("registration closes on 12 March", "the application deadline is 1 June")
NOUNS = {
    "registration": "Register",
    "application": "Apply",
    "applications": "Apply",
    "sign-up": "Sign up",
    "signup": "Sign up",
    "sign-ups": "Sign up",
    "enrolment": "Enrol",
    "enrollment": "Enrol",
    "booking": "Book",
    "bookings": "Book",
    "check-in": "Check in",
    "online check-in": "Check in",
    "rsvp": "RSVP",
    "submission": "Submit",
    "submissions": "Submit",
    "renewal": "Renew",
}
_NOUN_RE = lazy_regex(
    r"\b(?P<noun>" + "|".join(sorted(map(re.escape, NOUNS), key=len, reverse=True)) + r")\b"
    r"(?:[^.!?\n]|(?<=\d)\.(?=\d)){0,40}?\b(?:closes?|ends?|deadline(?: is)?|is due|are due|must be (?:in|received|made)|"
    r"is open until|are open until)\s+(?:on\s+|by\s+|at\s+)?"
    r"(?P<when>(?:[^.!?\n]|(?<=\d)\.(?=\d)){3,40})",
    re.I,
)
_AUTO_LABELS = (
    r"automatic reply|auto[- ]?reply|autoreply|out of (?:the )?office(?: reply)?|automatische antwort|"
    r"réponse automatique|respuesta automática"
)
_AUTO_RE = lazy_regex(rf"^\s*(?:{_AUTO_LABELS}|abwesenheit)", re.I)
# an automatic reply in its own form: its label, then a colon or the "Re:" of the mail it answers ("Abwesenheitsnotiz:
# Re: …", "Out of Office: …"), not a school's "Abwesenheit Ihres Sohnes Leon"
_AUTO_REPLY_RE = lazy_regex(rf"^\s*(?:{_AUTO_LABELS}|abwesenheitsnotiz|abwesenheitsmeldung)\s*:", re.I)


def auto_reply(subject: str) -> bool:
    """An automatic reply ("Out of office: …", "Abwesenheitsnotiz: Re: …"): it asks nothing of the user."""
    return bool(_AUTO_REPLY_RE.match(subject or ""))


_PREFIX_RE = lazy_regex(
    r"^\s*(?:(?:re|fwd?|aw|wg|reminder|friendly reminder|action required|action needed|important|"
    r"erinnerung|mahnung)(?:\s*:|\s+[\-–])\s*)+",
    re.I,
)  # "Re-registration" keeps its "Re-"
LEAD_DAYS = 1  # done the day before: a form or a reply may take a moment
FARTHEST_DAYS = 200  # "by 3 January" read on 5 January is next year's only by the calendar: the ask is over


def task_for(text: str, payload: dict, now: datetime, tz, letter: str = "") -> Due | None:
    """The task a mail asks for by a date still to come, or None (a newsletter, an auto-reply, a web page,
    a mail that reads like phishing or an offer, or one that asks nothing of the user). `letter`: the mail as it
    came, date lines and all: "within 14 days of the date of this letter" counts from the letter's own date."""
    subject = _PREFIX_RE.sub("", str(payload.get("subject") or "")).strip()
    if (
        payload.get("channel", "email") != "email"
        or payload.get("bulk")
        or payload.get("change")
        or _AUTO_RE.match(subject)
    ):
        return None
    said = "\n".join(line for line in (text or "").splitlines() if not line.lstrip().startswith(">"))  # not quoted
    blob = f"{subject}\n{said}"
    if PHISHING_RE.search(blob) or OFFER_RE.search(blob):
        return None
    today = now.astimezone(tz).date()
    sent = sent_at(payload, now, tz)
    asked = (
        _asked(said, sent, today, tz, _letter_day(letter, sent, tz))
        or _asked(subject, sent, today, tz)
        or _asked_in_subject(subject, said, sent, today, tz)
        or _due_in_month(said, sent, today, tz)
    )  # "Einverständniserklärung - bitte bis Freitag …"
    if asked is None:
        return None
    verb, by, what = asked
    more = essentials(said, verb)
    if verb == "Attend" and (appear := _APPEAR_RE.search(_plain(said))):
        # where and when to be: the summons' own words ("am Dienstag, 9. März 2027, um 10:30 Uhr im Amtsgericht …")
        more = f"When and where: {' '.join((appear.group('when') or appear.group('when2')).split())}. {more}".strip()
    if verb == "Prepare" and (bring := _BRING_SENTENCE_RE.search(_plain(said))):
        more = f"{bring.group(0).strip()} {more}".strip()  # what to have with one, in the sender's words, first
    if wrote := quotes(said, {subject, str(payload.get("subject") or "")}, by.phrase.strip()):
        more = f"{more} The mail: {wrote}".strip()  # what, where and when in the sender's words
    return _task(verb, by, subject, sender_of(payload), today, tz, more, what)


# something kept for the user until a day: "ready for collection until 17 March", "liegt bis zum 17.03. zur Abholung bereit"
_READY_RE = lazy_regex(
    r"\b(?:ready for (?:collection|pick-?up)|available for (?:collection|pick-?up)|can be (?:collected|picked up)|"
    r"(?:will be )?(?:held|kept) for you|zur abholung bereit|abholbereit|abgeholt werden)\b[^.!?\n]{0,40}?\b"
    r"(?:until|by|before|bis(?:\s+zum)?|spätestens(?:\s+am)?)\s+(?P<when>(?:[^.!?\n]|(?<=\d)\.(?=[\d\s])){3,30})|"
    r"\b(?:bis(?:\s+zum)?|until)\s+(?P<when2>(?:[^.!?\n]|(?<=\d)\.(?=[\d\s])){3,30}?)\s+(?:zur abholung bereit|"
    r"(?:ready )?for (?:collection|pick-?up))\b",
    re.I,
)


# what to have with one at an appointment or an event: asked of the reader, not offered ("bring a friend for free")
_BRING_RE = lazy_regex(
    r"\b(?:please|kindly|remember to|don'?t forget to|do not forget to|make sure (?:to|you)|be sure to|"
    r"you (?:will )?(?:need|have) to|you must|you should)\s+(?:also\s+)?bring\b(?!\s+(?:a friend|friends|"
    r"your friends|the family|your family|someone|a guest|guests)\b)|\bbitte\b[^.!?\n]{0,60}\bmit(?:zu)?bringen\b|"
    r"\bbringen sie (?:bitte )?\b[^.!?\n]{0,60}\bmit\b",
    re.I,
)


# asked to let the sender know by a day, in German: "Geben Sie mir bis Sonntag Bescheid?", "sag mir bis Freitag Bescheid"
_BESCHEID_RE = lazy_regex(
    r"\b(?:geben sie|gebt|gib|sagen sie|sag|sagt)\s+(?:mir|uns)\b(?:\s+\w+){0,3}?\s+bis\s+(?:zum\s+)?"
    r"(?P<when>(?:[^.!?\n]|(?<=\d)\.(?=[\d\s])){3,30}?)\s+bescheid\b",
    re.I,
)
# what one gets ready for an appointment: papers, not the car one brings to the garage at the new time
_PAPERS_RE = lazy_regex(
    r"\b(?:passports?|id|id card|identity card|documents?|photos?|pictures|cards?|forms?|certificates?|papers|proof|"
    r"letter|receipts?|x-rays?|referral|ausweis\w*|reisepass|pässe|unterlagen|bescheinigung\w*|\w*karte|nachweis\w*|"
    r"formular\w*|lichtbild\w*|fotos?|überweisung(?:sschein)?|befund\w*)\b",
    re.I,
)
# where one has to turn up with things: not a hotel's or a restaurant's booking, which asks nothing to be got ready
_APPOINTMENT_RE = lazy_regex(
    r"\b(?:appointment|interview|exam(?:ination)?|hearing|consultation|termin\w*|vorstellungsgespräch|prüfung|"
    r"anhörung|vorsprache)\b",
    re.I,
)
_BRING_SENTENCE_RE = lazy_regex(r"[^.!?\n]*(?:" + _BRING_RE.pattern + r")[^.!?\n]*[.!?]?", re.I)


# asked to be somewhere on a day: a summons, a hearing, an interview ("you are asked to attend on 9 March at 10:30 in
# room 214", "Sie werden gebeten, am 9. März 2027 um 10:30 Uhr im Amtsgericht, Saal 214, zu erscheinen")
_APPEAR_RE = lazy_regex(
    r"\b(?:gebeten|aufgefordert|geladen),?\s+(?P<when>am\s+(?:[^.!?\n]|(?<=\d)\.(?=[\d\s])){3,120}?),?\s+"
    r"(?:persönlich\s+)?zu erscheinen\b|"
    r"\b(?:asked|required|requested|summoned|invited) to (?:attend|appear|come)\b(?:\s+(?:in person|at (?:the|our)\s+\w+))?"
    r"\s+(?P<when2>on\s+(?:[^.!?\n]|(?<=\d)\.(?=\d)){3,120})",
    re.I,
)


def mail_task(text: str, payload: dict, now: datetime, tz, letter: str = "") -> Due | None:
    """The one task a mail calls for: a bill to pay, else what it asks by a date (task_for), else a renewal notice's
    review. A renewal notice that asks for something else ("your card expires … we still need a photo, upload it
    by 15 March") is that ask."""
    bill = bills_task_for(text, payload, now, tz)
    if bill is not None and not bill.rule.startswith("a renewal"):
        return bill
    return task_for(text, payload, now, tz, letter=letter) or bill


# an aside or an abbreviation's dot is no end of the ask: "submit your meter reading (meter no. 4711) by 31 January"
_ASIDE_RE = lazy_regex(r"\s*\((?![A-Z]{2,6}\))[^()]{0,80}\)")  # "(ETA)" names what the sentence is about: kept
_ABBREVIATION_RE = lazy_regex(r"(?:\b(?:no|nr|ref|approx|incl|ca|e\.g|i\.e|etc)|str)\.(?=\s)", re.I)  # Hauptstr.


# "bis zum 1. März": the day's dot ends no sentence
_DAY_DOT_RE = lazy_regex(
    r"\b(\d{1,2})\.(?=\s+(?:Januar|Jänner|Februar|März|April|Mai|Juni|Juli|August|September|"
    r"Oktober|November|Dezember|Jan|Feb|Mär|Apr|Jun|Jul|Aug|Sep|Okt|Nov|Dez)\b)"
)


def _plain(said: str) -> str:
    said = _DAY_DOT_RE.sub(r"\1", said)
    return _ABBREVIATION_RE.sub(lambda m: m.group(0)[:-1].replace(".", ""), _ASIDE_RE.sub("", said))


# "within 14 days of the date of this letter", "innerhalb einer Woche ab Datum dieses Schreibens"
_OF_THE_LETTER = lazy_regex(
    r"\b(?:(?:of|from|after) the date (?:of|on) (?:this|the|our) (?:letter|notice)|"
    r"(?:ab|nach) (?:dem )?datum (?:dieses|des) (?:schreibens|briefes|bescheids?)|ab briefdatum)\b",
    re.I,
)


def _letter_day(letter: str, sent: datetime, tz):
    """The day a letter is dated ("Berlin, 11.01.2027" on a line of its own), if it has one before the sent day."""
    for line in (letter or "").splitlines()[:12]:
        line = " ".join(line.split())
        if line and DATE_LINE.match(line):
            found = dates.search(line, sent - timedelta(days=400), tz)
            day = dates.local_date(found[0].value, tz) if found else None
            if day is not None and day <= dates.local_date(sent, tz):
                return day
    return None


def _asked(said: str, sent: datetime, today, tz, letter_day=None) -> tuple[str, dates.Found, str] | None:
    """(the verb, by when, what it is done to) for the first thing the text asks of the user by a date still to
    come: ("Book", 2 Feb, "a follow-up appointment")."""
    said = _plain(said)

    def ahead(phrase: str, within: bool = False, of_letter: bool = False) -> dates.Found | None:
        if within:
            span = _WITHIN_RE.match(phrase.strip())
            if span is None:
                return None
            count = int(span.group("n")) if span.group("n").isdigit() else NUMBER_WORDS[span.group("n").lower()]
            unit = re.sub(r"(?:s|en|n|e)$", "", span.group("unit").lower())
            days = count * _UNITS.get(unit, _UNITS.get(unit + "e", 1))
            of_letter = letter_day is not None and (of_letter or _OF_THE_LETTER.search(phrase))
            day = (letter_day if of_letter else dates.local_date(sent, tz)) + timedelta(days=days)
            return dates.Found(span.group(0), day) if 0 <= (day - today).days <= FARTHEST_DAYS else None
        phrase = re.split(r"[:;]\s", phrase)[0]  # "20 January: passport copy, …": what follows is a list
        phrase = _german_span(phrase)
        found = [
            f
            for f in dates.search(phrase, sent, tz)
            if 0 <= (dates.local_date(f.value, tz) - today).days <= FARTHEST_DAYS
        ]
        return found[0] if found else None

    # "bis Freitag, 22.1. unterschrieben abgeben": a date's dots end no sentence
    sentences = re.split(r"(?<=[.!?\n])(?<!\d\.\d\.)(?<!\d\.\d\d\.)\s+", " ".join(said.split()))
    for number, sentence in enumerate(sentences):
        earlier = " ".join(sentences[:number])

        def when(asked: re.Match, phrase: str, within: bool = False) -> dates.Found | None:
            # "please return them by then": the date said before it ("… ends on 22 January")
            if _THEN_RE.match(phrase):
                return _last_date(f"{earlier} {sentence[: asked.start()]}", sent, today, tz)  # noqa: B023
            return ahead(phrase, within, bool(_OF_THE_LETTER.search(sentence[asked.start() :])))  # noqa: B023

        told = _BESCHEID_RE.search(sentence)
        if told and (by := ahead(told.group("when"))):
            return "Reply", by, ""  # "Geben Sie mir bis Sonntag Bescheid?"
        bring = _BRING_RE.search(sentence) and _PAPERS_RE.search(sentence)
        if bring and _APPOINTMENT_RE.search(said) and (by := _last_date(f"{earlier} {sentence}", sent, today, tz)):
            # "Your appointment is confirmed for 24 February at 10:15. Please bring your passport and two photos":
            # things to get ready by the day it is
            return "Prepare", by, ""
        ready = _READY_RE.search(sentence)
        if ready and (by := ahead(ready.group("when") or ready.group("when2") or "")):
            return "Collect", by, ""  # "Ihre Vorbestellung liegt bis zum 17.03. zur Abholung bereit"
        appear = _APPEAR_RE.search(sentence)
        if appear and (by := ahead(appear.group("when") or appear.group("when2") or "")):
            return "Attend", by, ""  # "Sie werden gebeten, am 9. März um 10:30 Uhr … zu erscheinen"
        for asked in _overlapping(_ASK_RE, sentence):
            within = asked.group("by").lower() == "within"
            if _asking(sentence[: asked.start()]) and (by := when(asked, asked.group("when"), within)):
                verb, what = VERBS[asked.group("verb").lower()], _object(asked.group("what"))
                sent_for = _SENT_FOR_RE.match(asked.group("what")) if verb == "Send" else None
                if sent_for is not None:  # "could you send someone to fix it by Friday": the fix is asked
                    verb, what = sent_for.group("verb").capitalize(), _object(sent_for.group("what"))
                if (
                    (not what or _COPY_RE.match(what))
                    and number
                    and (named := _antecedent(asked.group("what"), sentences[number - 1]))
                ):
                    what = named
                # "please sign both copies of the addendum and send one back by …": the request's first verb
                first = _FIRST_ASK_RE.search(sentence[: asked.start()])
                if first is not None and _object(first.group("what"), most=9):
                    verb, what = VERBS[first.group("verb").lower()], _object(first.group("what"), most=9)
                return verb, by, what
        for asked in _overlapping(_GERMAN_RE, sentence):
            # the date, not the verb's particle after it ("bis 10.03.2027 ein"), which date search misreads
            said_when = re.split(
                r"\s+(?:ein|an|auf|zu|zur|zum|und|bei|per|unter|in\s+(?:die|den|das|der|eure?|unsere?)|ab(?!\s+(?:dem\s+)?datum))\b",
                asked.group("when") or asked.group("when2") or asked.group("when3"),
            )[0]
            if by := when(
                asked, said_when, bool(asked.group("within") or asked.group("within2") or asked.group("within3"))
            ):
                verb = re.sub(
                    r"^zu\s+", "", (asked.group("verb") or asked.group("verb2") or asked.group("verb3")).lower()
                )
                return next(GERMAN[k] for k in sorted(GERMAN, key=len, reverse=True) if verb.startswith(k)), by, ""
        for asked in _PASSIVE_RE.finditer(sentence):
            if by := when(asked, asked.group("when")):
                return PASSIVE[asked.group("verb").lower()], by, ""
        for asked in _GERMAN_NOUN_RE.finditer(sentence):
            # "wir bitten um Rückmeldung bis zum 20. März", "die Erklärung ist bis zum 31. Juli abzugeben"
            said_when = re.split(
                r"\s+(?:ein|an|auf|zu|und|bei|per|unter)\b",
                asked.group("when") or asked.group("when_p") or asked.group("when_s") or asked.group("when_z"),
            )[0]
            key = (
                asked.group("noun")
                or re.sub(r"^zu\s+", "", asked.group("verb") or asked.group("verb_s") or asked.group("verb_z") or "")
            ).lower()
            verb = next((v for k, v in _GERMAN_ASKS if key.startswith(k)), None)
            if verb and (by := when(asked, said_when)):
                return verb, by, ""
    amount = AMOUNT_RE.search(said)
    still = _STILL_NEEDED_RE.search(said)
    for sentence in sentences:
        for due in _DUE_RE.finditer(sentence):
            if (amount or still) and (by := ahead(due.group("when") or due.group("when2"))):
                # "we still need your donation receipts … The filing deadline is 31 May": what is missing, by then
                return ("Pay" if amount else "Send"), by, ""
        for needed in _NEEDED_BY_RE.finditer(sentence):
            # "the fee must reach our account by …", "we need the following documents from you no later than …"
            said_when = needed.group("wann") or needed.group("when")
            if said_when and (by := ahead(re.split(r"\s+(?:ein|an|auf|zu|und|bei|per|unter)\b", said_when)[0])):
                pay = amount is not None and re.search(
                    r"\b(?:fee|amount|payment|contribution|eur|euros?|€)\b|€", sentence, re.I
                )
                sign = re.search(r"\bsignature\b", sentence, re.I)
                if re.search(r"\b(?:know|hear)\b", needed.group("need") or ""):
                    return "Reply", by, ""  # "we'd love to know by 1 April whether you can make it"
                what = _object(needed.group("what") or "", most=10)
                return ("Pay" if pay else "Sign" if sign else "Send"), by, "" if pay else what
        for gerund in _DEADLINE_FOR_RE.finditer(sentence):
            # "the deadline for submitting your expense report is Friday, 15 January"
            verb = _GERUNDS.get(gerund.group("verb").lower())
            if verb and (by := ahead(gerund.group("when"))):
                return verb, by, _object(gerund.group("what"))
        for named in _NOUN_RE.finditer(sentence):
            # "3 hours before departure on 12 January": the day is the departure's
            when = re.sub(r"^\d+\s+(?:hours?|days?|minutes?)\s+before\s+\w+\s*", "", named.group("when"), flags=re.I)
            if by := ahead(when):
                return NOUNS[named.group("noun").lower()], by, ""
    return None


# the date is in the subject, the ask in the body: "Paper #57: camera-ready due Feb 3" over "Please upload the final PDF"
_SUBJECT_DUE_RE = lazy_regex(
    r"\b(?:due|deadline|closes|fällig|frist|bis|by|until)\b:?\s*(?P<when>[^()\[\]]{3,30})", re.I
)
_PLEASE_VERB_RE = lazy_regex(
    r"\b(?:please|kindly|bitte)\s+(?P<verb>" + "|".join(sorted(map(re.escape, VERBS), key=len, reverse=True)) + r")\b",
    re.I,
)


_ANY_VERB_RE = lazy_regex(
    r"\b(?P<verb>" + "|".join(sorted(map(re.escape, VERBS), key=len, reverse=True)) + r")\b", re.I
)


def _asked_in_subject(subject: str, said: str, sent: datetime, today, tz) -> tuple[str, dates.Found, str] | None:
    """(the verb, by when, "") when the subject says by when ("camera-ready due Feb 3") and the body asks something
    ("Please … upload the final PDF"): the body's first asked verb, else "Do"."""
    due = _SUBJECT_DUE_RE.search(subject or "") or _DUE_IN_MONTH_RE.search(subject or "")
    booking = _BOOKING_RE.search(said or "")
    if due is None or not (re.search(r"\b(?:please|kindly|bitte)\b", said or "", re.I) or booking):
        return None
    found = [
        f
        for f in dates.search(_german_month(due.group("when")), sent, tz, months=True)
        if 0 <= (dates.local_date(f.value, tz) - today).days <= FARTHEST_DAYS
    ]
    if not found:
        return None
    verb = _PLEASE_VERB_RE.search(said) or _ANY_VERB_RE.search(said)
    return ("Book" if booking else VERBS[verb.group("verb").lower()] if verb else "Do"), found[0], ""


# "HU/AU fällig im März 2027", "your MOT is due in March": due that month, and an appointment to book for it
_DUE_IN_MONTH_RE = lazy_regex(r"\b(?:fällig|due)\s+(?P<when>(?:im|in)\s+\w+(?:\s+\d{4})?)", re.I)
_BOOKING_RE = lazy_regex(
    r"\btermin\w*\b[^.!?\n]{0,40}\bvereinbar\w*|\bvereinbaren sie\b|\bbook (?:an|your) "
    r"appointment\b|\bmake an appointment\b",
    re.I,
)
_IN_MONTH_DUE_RE = lazy_regex(r"\b(?P<when>(?:im|in)\s+\w+(?:\s+\d{4})?)\s+(?:fällig|due)\b", re.I)


def _due_in_month(said: str, sent: datetime, today, tz) -> tuple[str, dates.Found, str] | None:
    """("Book", the month, "") when the body says something of the user's falls due in a month and to book an
    appointment for it: "Ihre Hauptuntersuchung ist im April fällig. Vereinbaren Sie rechtzeitig einen Termin." """
    due = _DUE_IN_MONTH_RE.search(said or "") or _IN_MONTH_DUE_RE.search(said or "")
    if due is None or not _BOOKING_RE.search(said or ""):
        return None
    found = [
        f
        for f in dates.search(_german_month(due.group("when")), sent, tz, months=True)
        if 0 <= (dates.local_date(f.value, tz) - today).days <= FARTHEST_DAYS
    ]
    return ("Book", found[0], "") if found else None


_GERMAN_MONTHS = {
    "januar": "January",
    "februar": "February",
    "märz": "March",
    "april": "April",
    "mai": "May",
    "juni": "June",
    "juli": "July",
    "august": "August",
    "september": "September",
    "oktober": "October",
    "november": "November",
    "dezember": "December",
}


_GERMAN_SPANS = (
    (r"\bende (?:der |dieser )?(?:nächsten|nächster|kommenden) woche\b", "the end of next week"),
    (r"\bende (?:der |dieser )?woche\b|\bwochenende\b", "the end of this week"),
    (r"\bende (?:des )?(?:nächsten|kommenden) monats\b", "the end of next month"),
    (r"\bende (?:des|dieses) monats\b|\bmonatsende\b", "the end of the month"),
)


def _german_span(phrase: str) -> str:
    """ "Ende nächster Woche" → "the end of next week": the end of a week or a month read as the date search reads it."""
    for said, meant in _GERMAN_SPANS:
        phrase = re.sub(said, meant, phrase, flags=re.I)
    return phrase


def _german_month(phrase: str) -> str:
    """ "im März 2027" → "in March 2027": the month read as the date search reads it."""
    return re.sub(
        r"\b(?:im\s+)?(" + "|".join(_GERMAN_MONTHS) + r")\b",
        lambda m: f"in {_GERMAN_MONTHS[m.group(1).lower()]}",
        phrase,
        flags=re.I,
    )


def _overlapping(pattern: re.Pattern, sentence: str):
    """Every match of `pattern`, starting at each place one can: "to complete it, please send us …" holds the ask
    "send … by", which a match from "complete" would swallow."""
    at = 0
    while (found := pattern.search(sentence, at)) is not None:
        yield found
        at = found.start() + 1


# "please read it, sign the declaration and return it by …": one request listing several things, the verb in it
# asked for as well; not when someone else does it ("please note that we will confirm your booking by …")
_LISTED_RE = lazy_regex(r"\b(?:please|kindly)\b(?![^.!?]*\b(?:we|i|they|he|she|will|would|shall|'ll)\b)[^.!?]*$", re.I)


# an imperative after what it is for: "To keep a fixed price, choose one of our new tariffs by 15 March"
_PURPOSE_RE = lazy_regex(r"(?:^|\s)(?:To|In order to|If you (?:want|wish|would like) to|Um)\b[^.!?]{0,80},\s*$")


def _asking(before: str) -> bool:
    return bool(_ASKING_RE.search(before) or _LISTED_RE.search(before) or _PURPOSE_RE.search(before))


_THEN_RE = lazy_regex(
    r"^\s*(?:then|that (?:date|day|time)|this (?:date|day)|the (?:above|said) date|dahin|zu diesem (?:datum|tag|termin)|"
    r"diesem (?:datum|tag|termin))\b",
    re.I,
)


def _last_date(text: str, sent: datetime, today, tz) -> dates.Found | None:
    """The last date still to come in `text`: what "by then" points back to. Read a clause at a time: a list of
    titles after the date ("… ends on 22 January: - "Der Distelfink"") would make date search read it all as German."""
    for clause in reversed(re.split(r"(?<!\d)[:;](?!\d)|\n|(?<=[.!?])\s", text)):  # not "10:15"
        found = [
            f
            for f in dates.search(clause, sent, tz)
            if 0 <= (dates.local_date(f.value, tz) - today).days <= FARTHEST_DAYS
        ]
        if found:
            return found[-1]
    return None


# A request in German ("Bitte überweisen Sie den Betrag bis zum 1. März", "bitte bis 10.02. zurücksenden"): its verb,
# by its stem, and the date after "bis (zum)" or "spätestens (am)"
GERMAN = {
    "überweis": "Pay",
    "leg": "Send",  # "Bitte legen Sie uns bis zum 30.04. Ihren Ausweis vor"
    "bezahl": "Pay",
    "zahl": "Pay",
    "begleich": "Pay",
    "einreich": "Submit",
    "reich": "Submit",
    "zurücksend": "Return",
    "zurückschick": "Return",
    "unterschreib": "Sign",
    "unterzeichn": "Sign",
    "anmeld": "Register",
    "meld": "Reply",
    "antwort": "Reply",
    "buch": "Book",
    "vereinbar": "Book",
    "abgeb": "Hand in",
    "gib": "Hand in",
    "geb": "Hand in",
    "hochlad": "Upload",
    "lad": "Upload",
    "send": "Send",
    "schick": "Send",
    "bestätig": "Confirm",
    "vorleg": "Send",
    "nachreich": "Send",
    "abhol": "Collect",
    "hol": "Collect",
    "verlänger": "Renew",
    "erneuer": "Renew",
    # the "zu" inside a separable verb's infinitive ("zurückzusenden", "einzureichen")
    "zurückzusend": "Return",
    "zurückzuschick": "Return",
    "einzureich": "Submit",
    "abzugeb": "Hand in",
    "hochzulad": "Upload",
    "anzumeld": "Register",
    "nachzureich": "Send",
    "abzuhol": "Collect",
    "vorzuleg": "Send",
    "widersprech": "Object",
    "widerspruch einzuleg": "Object",
    "widerspruch einleg": "Object",
    "trag": "Sign up",
    "eintrag": "Sign up",
    "einzutrag": "Sign up",
    "kündig": "Cancel",
    "zu widersprech": "Object",
    "erledig": "Do",
    "mitteil": "Reply",
    "teil": "Reply",
    "aktualisier": "Update",
    "prüf": "Check",
    "überprüf": "Check",
    "ausfüll": "Fill in",
    "auszufüll": "Fill in",
}
_GERMAN_VERB = "(?:" + "|".join(sorted(map(re.escape, GERMAN), key=len, reverse=True)) + r")\w*"
_GERMAN_BY = r"(?:bis(?:\s+(?:zum|spätestens))?|spätestens(?:\s+(?:am|bis))?|(?P<within>innerhalb)(?:\s+von)?)\s+"
_GERMAN_WHEN = r"(?:[^.!?\n]|(?<=\d)\.(?=[\d\s])){3,30}"
_GERMAN_RE = lazy_regex(
    r"\bbitte\b\s+(?P<verb>"
    + _GERMAN_VERB
    + r")\b(?:[^.!?\n]|(?<=\d)\.(?=\d)){0,100}?\b"
    + _GERMAN_BY
    + r"(?P<when>"
    + _GERMAN_WHEN
    + r")|\b(?:bitten?|sie können|können sie|haben sie das recht)\b(?:[^.!?\n]|(?<=\d)\.(?=\d)){0,60}?\b"
    + _GERMAN_BY.replace("<within>", "<within2>")
    + r"(?P<when2>"
    + _GERMAN_WHEN
    + r")[^.!?\n]{0,50}?\b(?P<verb2>(?:zu\s+)?"
    + _GERMAN_VERB
    + r")"
    # "überweisen Sie den Betrag bitte innerhalb einer Woche": the verb before "bitte"
    r"|\b(?P<verb3>"
    + _GERMAN_VERB
    + r")\s+sie\b[^.!?\n]{0,60}?\bbitte\b[^.!?\n]{0,20}?\b"
    + _GERMAN_BY.replace("<within>", "<within3>")
    + r"(?P<when3>"
    + _GERMAN_WHEN
    + r")",
    re.I,
)


# what is asked for by its noun ("wir bitten um Rückmeldung bis …") or in the passive of "zu" ("ist bis zum 31. Juli
# abzugeben"): the noun's or the verb's ask
GERMAN_NOUNS = {
    "rückmeldung": "Reply",
    "antwort": "Reply",
    "mitteilung": "Reply",
    "nachricht": "Reply",
    "zahlung": "Pay",
    "überweisung": "Pay",
    "begleichung": "Pay",
    "ausgleich": "Pay",
    "zusendung": "Send",
    "übersendung": "Send",
    "einsendung": "Send",
    "vorlage": "Send",
    "rücksendung": "Return",
    "unterschrift": "Sign",
    "bestätigung": "Confirm",
    "anmeldung": "Register",
    "einreichung": "Submit",
    "terminvereinbarung": "Book",
}
_GERMAN_ASKS = sorted({**GERMAN_NOUNS, **GERMAN}.items(), key=lambda kv: len(kv[0]), reverse=True)
_GERMAN_BY_ONLY = r"(?:bis(?:\s+(?:zum|spätestens))?|spätestens(?:\s+(?:am|bis))?)\s+"
_ZU_VERB = r"(?:zu\s+\w+|widerspruch\s+einzuleg\w*|\w+zu(?:geb|send|schick|reich|leg|hol|meld|zahl|füll|lad)\w*)"
_GERMAN_NOUN_RE = lazy_regex(
    r"\b(?:bitten?|ersuchen|erwarten|benötigen)\b[^.!?\n]{0,30}?\b(?:um|auf|die|eine|ihre|ihr|den|deine)?\s*"
    r"(?P<noun>"
    + "|".join(sorted(GERMAN_NOUNS, key=len, reverse=True))
    + r")\w*\b[^.!?\n]{0,60}?\b"
    + _GERMAN_BY.replace("(?P<within>innerhalb)", "innerhalb")
    + r"(?P<when>"
    + _GERMAN_WHEN
    + r")"
    # "die Erklärung ist bis zum 31. Juli abzugeben", "ist bis zum 25.03. auf folgendes Konto zu überweisen"
    + r"|\b(?:ist|sind)\b[^.!?\n]{0,60}?\b"
    + _GERMAN_BY_ONLY
    + r"(?P<when_p>"
    + _GERMAN_WHEN
    + r"?)(?:\s+[^.!?\n]{0,40}?)?\s+(?P<verb>"
    + _ZU_VERB
    + r")\b"
    + r"|\b"
    + _GERMAN_BY_ONLY
    + r"(?P<when_s>"
    + _GERMAN_WHEN
    + r"?)\s+(?P<verb_s>"
    + _ZU_VERB
    + r")\s+(?:ist|sind|wäre|wären)\b"
    # "Sie haben noch bis zum 30. März Zeit, Widerspruch einzulegen"
    + r"|\b"
    + _GERMAN_BY_ONLY
    + r"(?P<when_z>"
    + _GERMAN_WHEN
    + r"?)\s+zeit\b[^.!?\n]{0,80}?\b(?P<verb_z>"
    + _ZU_VERB
    + r")\b",
    re.I,
)


_FIRST_ASK_RE = lazy_regex(
    r"\b(?:please|kindly)\s+(?P<verb>"
    + "|".join(sorted(map(re.escape, VERBS), key=len, reverse=True))
    + r")\b(?P<what>[^.!?,]{3,60}?)\s+and\s+(?:\w+\s+){0,2}$",
    re.I,
)
# someone sent to do the thing asked: "send someone to fix it", "send a plumber round to repair the tap"
_SENT_FOR_RE = lazy_regex(
    r"^\s*(?:someone|somebody|a\s+[\w-]+|an\s+[\w-]+)\s+(?:(?:round|over|by)\s+)?to\s+(?P<verb>fix|repair)\b"
    r"(?P<what>.*)$",
    re.I,
)
_BY = r"\b(?:by|before|until|no later than|on or before)\s+(?P<when>(?:[^.!?\n]|(?<=\d)\.(?=\d)){3,40})"
# what has to reach the sender by a date: "must reach our account by", "we need … from you no later than"
_NEEDED_BY_RE = lazy_regex(
    r"(?:\b(?:must|has to|have to|needs? to|should)\s+(?:reach|arrive (?:at|with)|be with|"
    r"get to)\s+(?:us|our\s+\w+|the\s+\w+)\s*|\b(?:we|i)(?:'d|\s+would)?\s+(?:still\s+|just\s+|only\s+|also\s+)?"
    r"(?P<need>need|require|must (?:receive|have)|have to receive|be (?:grateful|glad|pleased) to (?:receive|get)|"
    r"appreciate (?:receiving|getting)|(?:love|like) to (?:know|hear)|(?:love|like) to (?:receive|get))\b"
    r"(?P<what>(?:[^.!?\n]|(?<=\d)\.(?=\d)){0,160}?))"
    + _BY
    # "Wir brauchen sie spätestens am Freitag", "benötigen wir die Unterlagen bis zum 3. März"
    + r"|\b(?:wir\s+(?:brauchen|benötigen)|brauchen\s+wir|benötigen\s+wir)\b(?:[^.!?\n]|(?<=\d)\.(?=\d)){0,80}?"
    r"\b(?:bis(?:\s+zum)?|spätestens(?:\s+(?:am|bis(?:\s+zum)?))?)\s+(?P<wann>(?:[^.!?\n]|(?<=\d)\.(?=[\d\s])){3,30})",
    re.I,
)
# the sender is still missing something of the user's
_STILL_NEEDED_RE = lazy_regex(
    r"\b(?:we|i) (?:still )?(?:need|require) (?:your|the|a|an|some)\b|\b(?:we|i) (?:have not|haven't) (?:yet )?"
    r"received\b|\b(?:is|are) still (?:missing|outstanding)\b|\bwe are still missing\b|"
    r"\b(?:benötigen|brauchen) wir (?:noch|weiterhin)\b|\bfehl(?:t|en) (?:uns )?noch\b",
    re.I,
)
_GERUNDS = {
    "submitting": "Submit",
    "paying": "Pay",
    "registering": "Register",
    "applying": "Apply",
    "returning": "Return",
    "sending": "Send",
    "signing": "Sign",
    "booking": "Book",
    "enrolling": "Enrol",
    "handing": "Hand in",
    "uploading": "Upload",
    "renewing": "Renew",
    "filing": "File",
    "replying": "Reply",
    "completing": "Complete",
    "confirming": "Confirm",
}
_DEADLINE_FOR_RE = lazy_regex(
    r"\bdeadline for (?P<verb>\w+ing)\b(?P<what>[^.!?\n]{0,50}?)\s+(?:is|:)\s+"
    r"(?P<when>(?:[^.!?\n]|(?<=\d)\.(?=\d)){3,40})",
    re.I,
)
_PRONOUN_RE = lazy_regex(r"^\s*(?P<for>for\s+)?(?:it|them|one)\b", re.I)
# what the sentence before says the reader needs: "travellers now need an Electronic Travel Authorisation (ETA)"
_NEEDED_RE = lazy_regex(
    r"\b(?:need|needs|require|requires|must have|must hold)\s+(?:an?|the|your)\s+"
    r"(?P<thing>(?:[A-Z][\w-]*\s+){0,4}[A-Z][\w-]*(?:\s+\([A-Z]{2,6}\))?|[a-z][\w-]*(?:\s+[a-z][\w-]*)?"
    r"\s+\([A-Z]{2,6}\)|[a-z][\w-]*(?:\s+[a-z][\w-]*){0,4}(?=\s*(?:[.;:(]|$)|\s+for\s))"
)
# a copy of something rather than the thing: "please send us a scan", "a signed copy"
_COPY_RE = lazy_regex(
    r"^\s*(?:us\s+|me\s+)?(?P<copy>(?:a|an)\s+(?:signed\s+|digital\s+)?(?:scan|copy|photo|photocopy|picture|pdf))\s*$",
    re.I,
)


def _antecedent(what: str, before: str) -> str:
    """What "apply for it" or "send us a scan" is done to, when the sentence before names what the reader
    needs: "for the Electronic Travel Authorisation (ETA)", "a scan of the extended certificate of good
    conduct"; "" otherwise."""
    pronoun, copy, needed = _PRONOUN_RE.match(what), _COPY_RE.match(what), _NEEDED_RE.search(before)
    if (pronoun is None and copy is None) or needed is None:
        return ""
    thing = re.sub(r"\s+(?:of|from|for) (?:you|us)$", "", needed.group("thing"))  # "a passport photo of you"
    if copy is not None:
        return f"{copy.group('copy')} of the {thing}"
    return f"{'for ' if pronoun.group('for') else ''}the {thing}"


# what an ask is done to, when it names a thing ("a follow-up appointment", "the signed consent form"); not a
# pronoun, a manner or a channel ("them", "online", "via the form")
_VAGUE_OBJECT = lazy_regex(
    r"^(?:(?:it|them|this|that|these|those|us|me|online|here|now|again|back|up|in|the|a|an|"
    r"your|our|"
    r"asap|soon)\b\s*)+$|^(?:via|through|on|at|with|to|for|from|by|using|in)\b",
    re.I,
)


def _object(what: str, most: int = 6) -> str:
    words = re.sub(r"^(?:us|me)\s+(?=\w)", "", " ".join(what.split()).strip(" ,;:-"), flags=re.I)  # "send us a copy"
    words = re.split(
        r",|\s(?:via|through|using|by phone|online(?=\s*$|\s+(?:at|via|through|in|on|or)\b)|and let|"
        r"so that|if|together with|along with)\b|"
        r"\s(?:at|in|on|with)\s(?:the|our|your|a)\b",
        words,
    )[0].strip()
    if re.match(r"(?:the )?following\b", words, re.I):
        return ""  # "the following documents: …": the list after it says what, not these words
    if len(words.split()) > most:
        # "your 2026 bank statements for the savings account and …": the thing, without what it is for
        words = re.split(r"\s(?:for|together with|along with)\s", words)[0].strip()
    if (
        not words
        or len(words.split()) > most
        or _VAGUE_OBJECT.search(words)
        or re.search(r"\b(?:it|them|this|that|these|those)$", words, re.I)
    ):
        return ""
    return words


def _cut(subject: str, chars: int) -> str:
    """A subject cut at a word within `chars` ("… – Nachweis erforderlich", not "… – Nachweis erforde")."""
    if len(subject) <= chars:
        return subject
    return subject[: chars + 1].rsplit(" ", 1)[0].rstrip(" –—-:,;") + "…"


def _task(verb: str, by: dates.Found, subject: str, sender: str, today, tz, more: str = "", thing: str = "") -> Due:
    day = dates.local_date(by.value, tz)
    amount = re.match(r"Amount: (.+?)\.(?: |$)", more)
    what = f"{verb} {amount.group(1)}" if amount else verb
    subject = subject[:1].upper() + subject[1:]
    if thing and not amount:
        title = f"{verb} {thing}"
    else:
        # a subject that only repeats the verb ("RSVP") names nothing: the sender does
        named = subject and subject.lower() != verb.lower()
        title = f"{what}: {_cut(subject, 60)}" if named else f"{what} for {name_only(sender)}"
    notes = f"{sender} asks for it by {dates.fmt_day(day)}" + (f" (“{_cut(subject, 60)}”)." if subject else ".")
    return Due(
        title,
        _due(day, LEAD_DAYS, today),
        f"{notes} {more}".strip(),
        f"a mail from {name_only(sender)} asks: {verb.lower()} by {by.stated(tz)}",
    )
