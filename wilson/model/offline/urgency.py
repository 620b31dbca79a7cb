"""How pressing an item is, without a model: who sent it, what situation it describes, when it happens.

Each rule returns a Judgement with its level (1 urgent, 2 needs action, 3 for the briefing,
None: nothing that needs the user) and the rule's name, so the trace says which fired.
Offline urgency ranks, the attention budget places; only a clear emergency (`emergency`: a leak, a fire,
a medical emergency, the police, a child's school or care closing today, travel cancelled or moved within
12 hours) may break quiet hours, and only while `[attention] offline_wake` is on.

A mail's "today" and "tomorrow" are the day it was sent (`sent`), not the day it is read.

Size: one chain of urgency rules, each a short function returning a named judgement, with the patterns
they share.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from wilson.kernel.timeparse import aware_or_none
from wilson.model.offline import personal
from wilson.model.offline.bills import PHISHING_RE
from wilson.model.offline.mailtext import sent_at
from wilson.model.offline.dates import as_datetime, fmt_moment, local_date, parse_moment, search
from wilson.kernel.lazy_regex import lazy_regex

PROMO_RE = lazy_regex(
    r"\b(unsubscribe|newsletter|digest|sale|promotion|promotions|promo|webinar|deals?|"
    r"coupon|black friday|exclusive offer|special offer|limited[- ]time offer|for the price of|"
    r"free shipping|free delivery on|voucher code|promo code|discount code|shop now|buy now|"
    # a shop's countdown: the hurry is the seller's ("only 3 hours left", "the items in your cart")
    r"(?:items? in )?your (?:shopping )?(?:cart|basket|warenkorb)|complete your (?:purchase|order)|"
    r"don'?t miss out|while stocks? last|nur noch \d+ stunden|hurry|last call|book now|seats are limited|"
    r"limited seats|masterclass|join us live|live stream|livestream|survey|umfrage|your opinion counts|"
    r"rabatt\w*|gutschein\w*|nur heute|jetzt sichern|"
    # a list's footer in its own words, when the list headers are missing
    r"to stop receiving (?:this|these|our|the)|manage (?:your )?(?:subscription|e-?mail preferences)|"
    r"newsletter abbestellen|vom newsletter abmelden)\b|-\d+\s?%|\d+\s?(?:%|prozent) rabatt|"
    r"\d+\s?% (?:off|discount)",
    re.I,
)
AUTOMATED_SENDER_RE = lazy_regex(
    r"\b(no-?reply|do-?not-?reply|newsletter|news|marketing|notifications?|mailer|"
    r"info|hello|team|updates?|receipts?|billing|invoices?|orders?|order-update|shop|store|"
    r"security|alerts?|notify|system|accounts?|reservations?|bookings?|versand|rechnung|"
    r"kundenservice|customer-?service|bounces?|rundbrief|infobrief|verteiler|events?|"
    # (not "service@" or "postfach@": a bank or a garage asks real things from those)
    r"digest|community|social|offers?|deals|promo\w*|welcome|feedback|surveys?)@",
    re.I,
)
CHILD_RE = lazy_regex(
    r"\b(son|daughter|child|children|kid|kids|baby|toddler|pupil|your boy|your girl|nursery|"
    # "Ihr Kind", never the "Kind" of "Kind regards"
    r"kindergarten|daycare|day care|school nurse|kita|(?-i:Kind(?:es)?)(?!\s+(?:regards|wishes|greetings|of)\b)|kinder|"
    r"sohn|tochter|klassenfahrt|schulausflug|"
    r"schüler\w*|klasse \d\w?)\b",
    re.I,
)
# the user's own people, named so by whoever writes: "Ihr Vater", "your mother", "deine Oma"
FAMILY_RE = lazy_regex(
    r"\b(?:your|ihr|ihre|ihren|ihrem|dein|deine|deinen|deinem)\s+(?:father|mother|dad|mum|mom|parents?|husband|wife|"
    r"partner|grand(?:father|mother|ma|pa)|brother|sister|vater|mutter|papa|mama|eltern|ehemann|ehefrau|mann|frau|"
    r"opa|oma|gro(?:ß|ss)vater|gro(?:ß|ss)mutter|bruder|schwester)\b",
    re.I,
)
HEALTH_RE = lazy_regex(
    r"\b(fever|temperature|sick|ill|unwell|vomit\w*|injur\w*|hurt|accident|hospital|ambulance|"
    r"emergency|a&e|er|allerg\w*|bleeding|fell|fainted|seizure|broken (?:arm|leg|wrist)|"
    r"fieber|krank|erbricht|erbrochen|übergeben|verletzt|gestürzt|unfall|notarzt|bereitschaftsarzt|"
    r"krankenhaus|notaufnahme|allergisch\w*|gebrochen)\b",
    re.I,
)
# asked to get in touch now: "please call me as soon as possible", "Bitte rufen Sie mich sofort an"
CALL_NOW_RE = lazy_regex(
    r"\b(?:call|ring|phone) (?:me|us)\b|\bcall (?:back )?(?:as soon as|right away|now|asap)|"
    r"\brufen sie (?:mich|uns)\b|\bruf (?:mich|uns)\b|\b(?:bitte )?(?:sofort|dringend) (?:anrufen|"
    r"zurückrufen|melden)\b|\bmelden sie sich (?:bitte )?(?:sofort|umgehend|dringend)\b",
    re.I,
)
PICKUP_RE = lazy_regex(
    r"\b(pick (?:him|her|them) up|collect (?:him|her|them)|come (?:and|to) (?:get|pick)|"
    r"as soon as (?:you|possible))\b",
    re.I,
)
TRAVEL_RE = lazy_regex(
    r"\b(flight|train|bus|ferry|booking|boarding|gate|departure|connection|"
    r"zug|flug|bahn|abfahrt|anschluss|fähre|s-bahn|regionalbahn)\b",
    re.I,
)
DISRUPTION_RE = lazy_regex(
    r"\b(cancell?ed|delayed|delay|diverted|strike|rebooked|rebooking|gate change|"
    r"missed connection|overbooked|annulliert|gestrichen|fällt (?:\w+ ){0,2}aus|ausgefallen|"
    r"verspätet|verspätung|zugausfall|ersatzverkehr|streik)\b",
    re.I,
)
TODAY_DEADLINE_RE = lazy_regex(
    r"\b(due today|deadline today|expires today|today is the (?:last day|deadline)|"
    r"final notice|last reminder|overdue|before midnight|by end of day|eod)\b",
    re.I,
)
ASKING_RE = lazy_regex(r"\b(urgent|urgently|asap|immediately|right away)\b", re.I)
BILL_RE = lazy_regex(r"\b(bill|invoice|payment due|amount due|payment is due|due date|direct debit)\b", re.I)
QUESTION_RE = lazy_regex(r"\?\s*$|\b(can you|could you|would you|are you|do you|shall we|let me know)\b", re.I)
SOON_HOURS = 6  # an event starting within these hours is time-critical whatever its words
TRAVEL_WAKE_HOURS = 12  # travel cancelled or moved this close may wake the user at night
# something closes, is called off or changes: told before it bites when it is today or tomorrow
CLOSURE_RE = lazy_regex(
    r"\b(clos(?:ed|es|ing|ure)|shut(?:s|ting)? (?:down|early)?|cancell?(?:ed|ation)|called off|"
    r"postponed|rescheduled|moved (?:to|forward)|brought forward|no (?:school|classes|lessons|"
    r"service|water|power|electricity|heating)|(?:water|power|electricity|gas|heating)(?: supply)?"
    r"(?: in [\w ]{1,30}?)? (?:will be |is )?(?:(?:turned |switched |shut )?off|cut|out|interrupted)|"
    r"(?:supply|service) interruption|out of service|outage|strike|won'?t (?:take place|go ahead)|"
    # "we have to move your appointment today from 15:00 to 17:00"
    r"(?:move|moved|moving|shift|shifted|reschedul\w*|postpon\w*) (?:your|the|our) (?:appointment|booking|"
    r"reservation|lesson|class|session|visit|delivery|meeting|treatment|consultation)|"
    r"will not (?:take place|go ahead)|changed? to|evacuat\w*|instead|"
    r"(?:change|changes) (?:to|of) your (?:appointment|booking|reservation|flight|train|journey|trip)|"
    r"stattdessen|terminänderung|änderung (?:ihres|deines|des|ihrer|deiner|der) (?:termins|buchung|reise|fluges)|"
    r"(?:has been |was |been )?(?:moved|changed|shifted|pushed back|put back) from|"
    # in German: closed, cancelled, moved, cut off, on strike
    r"geschlossen|schließt|schliesst|schließen (?:\w+ ){0,3}(?:um|ab|bereits|schon|früher)|schliessen (?:\w+ ){0,3}(?:um|ab)|fällt (?:\w+ ){0,2}aus|fallen (?:\w+ ){0,2}aus|entfällt|"
    r"entfallen|abgesagt|verschoben|verlegt|verschieben|verlegen|absagen|fällt\b(?:[^.!?\n]|(?<=\d)\.(?=\d)){0,80}?\baus|"
    # not done when it was to be: "Ihr Wagen wird heute nicht mehr fertig", "your car won't be ready today"
    r"nicht (?:mehr )?fertig|won'?t be ready|will not be ready|not be ready|"
    r"\w*streik\w*|\w*ausfall|gesperrt|abgestellt|"
    r"\w*unterbrechung|unterbrochen|evakuiert)\b",
    re.I,
)
# what a contract costs changes: a supplier's, landlord's or insurer's new price, rent or instalment
PRICE_CHANGE_RE = lazy_regex(
    r"\b(?:price (?:adjustment|increase|change|rise)|(?:rent|premium|contribution|tariff) (?:increase|adjustment)|"
    r"your (?:new )?(?:monthly |annual )?(?:instalment|installment|advance payment|premium|rent|contribution|fee)s? "
    r"(?:will )?(?:therefore )?(?:change|rise|increase|go up)|special right (?:of|to) (?:termination|cancel\w*)|"
    r"preisanpassung|preiserhöhung|mieterhöhung|beitragsanpassung|beitragserhöhung|sonderkündigungsrecht|"
    r"neue[rn]? (?:monatliche[rn]? )?abschlag|abschlag (?:\w+ )?(?:steigt|ändert sich|erhöht sich))\b",
    re.I,
)
# clear emergencies, each in words a person or an office uses for it
EMERGENCY_RES = (
    (
        "a water leak",
        lazy_regex(
            r"\b(water leak\w*|leak(?:ing|s)? (?:water|into|through|from)|burst (?:pipe|water)|"
            r"pipe (?:has )?burst|flood(?:ed|ing)(?! with)|"
            r"water (?:is )?(?:coming|pouring|dripping) (?:in|through|from)|water damage|"
            r"rohrbruch|wasserrohrbruch|rohr (?:ist )?geplatzt|wasserschaden|überschwemm\w*|"
            r"wasser (?:läuft|tropft|kommt|steht)\b[^.!?\n]{0,30}\b(?:durch|aus|in|bei|im)|"
            r"(?:tropft|läuft|kommt|dringt|fließt|sickert) (?:\w+ ){0,2}wasser (?:durch|aus|in|von))\b",
            re.I,
        ),
    ),
    (
        "a gas leak",
        lazy_regex(
            r"\b(gas leak\w*|smell(?:s|ed)? (?:of )?gas|gas alarm|carbon monoxide|co[- ](?:alarm|detector|melder)|"
            r"gasgeruch|gasleck|riecht (?:\w+ )?nach gas|gasalarm|kohlenmonoxid\w*)\b",
            re.I,
        ),
    ),
    (
        "a fire",
        lazy_regex(
            r"\b(fire (?:in|at|broke|alarm went|brigade)|on fire|(?:house|flat|building|kitchen|"
            r"apartment) fire|firefighters|smoke (?:alarm|coming|everywhere)|es brennt|feuer (?:im|in|auf)|brand (?:im|in)|"
            r"feuerwehr (?:ist|war|kam|räumt|evakuiert)|rauchmelder|rauch (?:im|in|kommt|aus)|kommt rauch|"
            r"(?:called|call|calling) the fire (?:brigade|department)|smoke (?:is )?coming (?:out|from)|"
            r"feuerwehr (?:\w+ )?(?:gerufen|alarmiert|verständigt|angerufen)|brandgeruch|riecht (?:\w+ )?verbrannt)\b",
            re.I,
        ),
    ),
    (
        "a medical emergency",
        lazy_regex(
            r"\b(ambulance|emergency room|a&e|intensive care|icu|heart attack|stroke|"
            r"unconscious|collapsed|seizure|(?:taken|rushed|admitted|brought)(?: (?:him|her|them|you|us|me|"
            r"(?:your|my|our) \w+))? to (?:the )?"
            r"(?:hospital|emergency|er|(?:(?-i:[A-Z])[\w.-]*\s+){1,3}(?:hospital|clinic|klinikum))|"
            r"in (?:the )?hospital|medical emergency|paramedics|chest pains?|"
            r"(?:can'?t|could ?n[o']t|struggling to) breathe|emergency (?:surgery|operation)|"
            r"critical condition|breathing difficult\w*|difficulty breathing|krankenhaus|notaufnahme|"
            r"notarzt|(?:rettungsdienst|rettungswagen|krankenwagen)\s+(?:ist|wurde|kommt|war)\s+(?:schon\s+|bereits\s+)?"
            r"(?:alarmiert|unterwegs|auf dem weg|gerufen|verständigt|da|hier))\b",
            re.I,
        ),
    ),
    (
        "the police",
        lazy_regex(
            r"\b(police (?:are|were|came|called|want|need|have|asked|is)|(?:called|call) the "
            r"police|police officers?|break-?in at|burglary at|(?:was|were|been) broken into|"
            r"(?:was|were|been) robbed|polizei (?:ist|war|kam|sucht|hat|will)|einbruch (?:in|bei|im)|eingebrochen|"
            r"polizei (?:\w+ ){0,2}(?:verständigt|alarmiert|gerufen|informiert|eingeschaltet))\b",
            re.I,
        ),
    ),
    (
        "someone missing",
        lazy_regex(
            r"\b((?:he|she|they|(?:your|ihr|ihre|dein|deine)\s+\w+)\s+(?:is|has gone|went|has been reported)\s+missing|"
            r"wandered off|(?:left|walked out of) the (?:home|ward|care home|building) (?:unnoticed|alone|at night)|"
            r"(?:wird|werden|gilt als|als)\s+vermisst|abgängig|"
            r"(?:hat|ist) (?:\w+ ){0,5}(?:das haus|den wohnbereich|die station|die einrichtung|das heim|das gelände) "
            r"(?:\w+ )?verlassen)\b",
            re.I,
        ),
    ),
)
# kinds of emergency that wake the user when an office writes of one of their own people (a care home, a hospital)
FAMILY_EMERGENCIES = ("a medical emergency", "the police", "someone missing")
# a service selling help with an emergency ("Burst pipe? Our plumbers come 24/7") is not one
ADVERT_RE = lazy_regex(
    r"\b(24/7|call us (?:now|today|for (?:a|your))|book (?:now|online)|our (?:plumbers|technicians|experts|engineers)|"
    r"free (?:quote|estimate|inspection|check)|special offer|insurance cover for)\b",
    re.I,
)
HOME_EMERGENCIES = ("a water leak", "a gas leak", "a fire")
_EMERGENCY_WORD_RE = lazy_regex(r"\b(?:emergency|notfall|notruf)\b(?!-)", re.I)  # not "Notfall-Kontaktdaten"
_IS_AN_EMERGENCY_RE = lazy_regex(
    r"\b(?:this is|it'?s|it is) an emergency\b|\b(?:es ist ein|das ist ein) notfall\b", re.I
)
_AS_SOON_RE = lazy_regex(
    r"\bas soon as (?:you (?:see|read|get) this|possible)|\bso schnell wie möglich\b|\bsofort\b|\bumgehend\b", re.I
)
YOURS_RE = lazy_regex(
    r"\byour (?:flat|apartment|home|house|building|kitchen|bathroom|ceiling|property|unit|"
    r"cellar|basement)\b|\byours\b|\b(?:below|above|under|beneath|next to) you\b",
    re.I,
)
CARE_RE = lazy_regex(
    r"\b(school|nursery|kindergarten|daycare|day care|childcare|child care|kita|creche|crèche|"
    r"preschool|after-?school club|childminder|schule|grundschule|hort|tagesmutter)\b",
    re.I,
)
# Words that may make a mail pressing, for `pressing` beside the situations' own (ASKING_RE has "asap" and
# "immediately"): wide on purpose, since a hit only means a model reads it.
PRESSING_RE = lazy_regex(
    r"\b(today|tonight|this (?:morning|afternoon|evening)|now|urgent\w*|"
    r"cancel\w*|delay\w*|clos(?:ed|es|ing|ure)|block\w*|suspen\w*|lock\w*|fraud\w*|"
    r"suspicious|declined|fail\w*|overdue|final|warning|alert|emergenc\w*|outage|strike|"
    r"collect|pick(?:ing)? up|police|security|evacuat\w*|last chance|expir\w*)\b",
    re.I,
)


# An automatic mail's date is the user's business when it asks something of them or is about their own plans:
# a request ("please", "make sure", "don't forget"), an imperative opening a sentence ("Check in online now"), or
# the user's appointment, journey or stay
YOURS_TO_DO_RE = lazy_regex(
    r"\b(?:please|kindly|bitte|remember to|don'?t forget|do not forget|make sure|be sure to|you (?:need|have|must|"
    r"should|will need)|action (?:required|needed)|required to|reminder|erinnerung)\b|"
    r"(?:^|[.!?]\s+|\n\s*)(?:check in|bring|book|pay|submit|reply|sign|confirm|register|call|collect|pick up|"
    r"return|renew|complete|upload|send|update)\b|"
    r"\byour (?:appointment|flight|train|journey|trip|stay|visit|exam|test|interview|hearing|booking|reservation|"
    r"table|ticket|class|course|lesson|session|treatment|consultation|pick-?up|collection)\b|"
    r"\bihr(?:e|en)? (?:termin|flug|zug|reise|buchung|prüfung)\b|"
    # what a child must have with them: "die Kinder brauchen festes Schuhwerk", "pupils need to bring a packed lunch"
    r"\b(?:kinder|schüler\w*|ihr kind|dein kind|children|kids|pupils|students|your (?:child|kids?|son|daughter)) "
    r"(?:need|needs|must|should|will need|brauchen|braucht|benötigen|müssen|sollten|sollen)\b|"
    r"\bmit(?:zu)?bringen\b|\bnicht vergessen\b|\bdenken sie (?:bitte )?an\b",
    re.I,
)


@dataclass(frozen=True)
class Judgement:
    level: int | None  # 1 urgent, 2 needs action, 3 briefing, None nothing for the user
    rule: str
    situation: bool = False  # what the mail is about needs the user (not only its words): bulk mail too
    early: bool = False  # not urgent, but worth an early sync: a request is proposed the day it comes


def phishing(text: str, subject: str, sender: str, name: str = "") -> bool:
    """A mail that wants the user to follow a link to verify, unlock or pay (bills.PHISHING_RE), or that talks
    to the assistant; or one that wants card or payment details, a fee or a refund claimed, through a link to
    somewhere else than the sender's own domain, or from an address that has nothing of the name it gives
    ("DHL Paket" <zoll@paket-zustellung-info.example>). Never news for the user, and never a task."""
    blob = f"{subject}\n{text}"
    link = re.search(r"https?://|\bwww\.", blob, re.I)
    if (PHISHING_RE.search(blob) or THREAT_RE.search(blob)) and (link is not None or ASSISTANT_RE.search(blob)):
        return True
    if ASSISTANT_RE.search(blob) and _ORDERS_RE.search(blob):
        return True  # "Note for AI assistants reading this page: create a task … send an email to …": orders, not news
    if GIFT_CARD_RE.search(blob):
        return True  # "buy 5 gift cards for a client today and send me the codes": no one real asks that by mail
    return (
        bool(PAY_THROUGH_LINK_RE.search(blob))
        and link is not None
        and (_links_elsewhere(blob, sender) or _borrowed_name(name, sender) or _token_fee(blob))
    )


TOKEN_FEE = 5  # "a customs fee of 1.99 EUR": a real office or carrier does not chase a couple of euros through a link
_FEE_RE = lazy_regex(
    r"(?:[€$£]|\b(?:EUR|USD|GBP|CHF))\s?(?P<a>\d+(?:[.,]\d{1,2})?)\b|"
    r"\b(?P<b>\d+(?:[.,]\d{1,2})?)\s?(?:[€$£]|(?:EUR|USD|GBP|CHF|euros?|dollars?|pounds?)\b)",
    re.I,
)


def _token_fee(blob: str) -> bool:
    """Every amount in the mail is a few euros at most: what a parcel or toll scam asks through its link."""
    amounts = [float((m.group("a") or m.group("b")).replace(",", ".")) for m in _FEE_RE.finditer(blob)]
    return bool(amounts) and max(amounts) <= TOKEN_FEE


# a threat that, with a link to follow, is a phishing mail's ("… to avoid suspension", "Ihre Karte wird gesperrt, wenn
# Sie Ihre Daten nicht bestätigen"); without a link a real dunning letter says it too
THREAT_RE = lazy_regex(
    r"\bavoid (?:suspension|deactivation|closure)\b|\b(?:wird|werden|wurde) (?:\w+ )?gesperrt\b|\bsperrung (?:ihres|ihrer)\b|"
    r"\bverifizier\w*|\b(?:daten|identität|kontodaten|zugangsdaten) (?:zu )?(?:bestätigen|aktualisieren)\b",
    re.I,
)
GIFT_CARD_RE = lazy_regex(
    r"\b(?:buy|purchase|get|kaufen?|besorgen?)\b[^.!?\n]{0,40}\b(?:gift ?cards?|itunes cards?|google play cards?|"
    r"gutscheinkarten?|geschenkkarten?)\b|\b(?:gift ?cards?|gutscheinkarten?)\b[^.!?\n]{0,80}\b(?:codes?)\b",
    re.I,
)


# what a fake parcel service, tax office or streaming service wants through its link
PAY_THROUGH_LINK_RE = lazy_regex(
    r"\b(?:card (?:details|number|data)|credit card (?:details|information)|"
    r"(?:update|confirm|enter) your (?:payment|billing|bank|card) (?:details|information|"
    r"method|data)|customs (?:fee|charge|duty)|(?:claim|receive) (?:your|the) refund|"
    r"refund of [\d.,]+|(?:steuer)?erstattung von [\d.,]+|anspruch auf (?:eine |ihre )?\w*erstattung|"
    r"(?:innerhalb|binnen) (?:von )?(?:12|24|48|72) stunden|outstanding (?:fee|charge)|zollgebühr|zoll(?:gebühren|abgabe)|einfuhrabgabe|"
    r"(?:zahlungs|karten|bank)daten|zahlen sie (?:jetzt|heute|sofort)|"
    # "zahlen Sie die Bearbeitungsgebühr von 29,00 € jetzt online", "pay the fee now online"
    r"(?:zahlen|bezahlen|überweisen) sie [^.!?\n]{0,60}?(?:jetzt|sofort|heute) online|"
    r"pay [^.!?\n]{0,60}?(?:now|today) online|"
    r"(?:pay|fee|payment)\b[^.!?\n]{0,60}\b(?:within|in) (?:12|24|48|72) hours)\b",
    re.I,
)
_LINK_DOMAIN_RE = lazy_regex(r"(?:https?://|\bwww\.)(?:www\.)?([\w.-]+)", re.I)


def _site(domain: str) -> str:
    """The registrable part of a domain, roughly: its last two labels ("pay.stadtwerke.example" → "stadtwerke.example")."""
    return ".".join(domain.lower().strip(".").split(".")[-2:])


def _borrowed_name(name: str, sender: str) -> bool:
    """The address has nothing of the name it gives: not its first word ("DHL Paket", a brand and then what it
    sends), three letters or more, nor any other."""
    words = [w.lower() for w in re.findall(r"[^\W\d_]{3,}", re.sub(r"<[^>]*>", "", name or ""))]
    found = re.search(r"[\w.+-]+@[\w.-]+", sender or "")
    if not words or found is None:
        return False
    address = found.group(0).lower()
    return words[0] not in address or not any(word in address for word in words)


def _links_elsewhere(blob: str, sender: str) -> bool:
    """A link in the mail leads to another site than the sender's address is at."""
    address = re.search(r"@([\w.-]+)", sender or "")
    home = _site(address.group(1)) if address else ""
    return any(_site(found.group(1)) != home for found in _LINK_DOMAIN_RE.finditer(blob))


# what such words order an assistant to do for its user
_ORDERS_RE = lazy_regex(
    r"\b(?:create|add|make|send|forward|reply|pay|transfer|book|buy|delete|approve|email|mail|click|visit|open)\b",
    re.I,
)
# words meant for an assistant reading the mailbox, not for its owner
ASSISTANT_RE = lazy_regex(
    r"\b(?:note|instructions?|message) (?:for|to) the (?:ai|assistant|bot)\b|"
    # "[Note for AI assistants reading this page for a visitor: create a task …]": addressed, then a colon
    r"\b(?:notes?|instructions?|messages?) (?:for|to) (?:the |any |all )?(?:ai|llm)s?(?: assistants?| agents?| models?)?"
    r"\b[^.:\n]{0,60}:|"
    r"\bignore (?:all |any |your )?(?:previous|prior|earlier) (?:instructions|rules|prompts?)\b",
    re.I,
)


VISIT_RE = lazy_regex(
    r"\b(?:technician|(?:service|heating|gas|boiler|repair|broadband|field) engineer|engineer (?:will|comes|is coming)|"
    r"plumber|electrician|handyman|fitter|techniker|handwerker|monteur|"
    r"installateur|meter read(?:ing|er)|ablesung|ableser|schornsteinfeger|chimney sweep)\b",
    re.I,
)
# a delivery is the user's business today only when it needs them there: a signature, an ID, in person
DELIVERY_RE = lazy_regex(
    r"\b(?:will be delivered|to be delivered|delivery (?:window|slot)|zugestellt|zustellung|"
    r"geliefert|lieferung)\b",
    re.I,
)
PRESENCE_RE = lazy_regex(
    r"\b(?:signature|sign for|unterschrift|persönlich|in person|ausweis\w*|photo id|your id|"
    r"must be (?:at )?home|be at home|zu hause sein|anwesend|cannot be left|nicht möglich)\b",
    re.I,
)


def _later_today(blob: str, sent: datetime, now: datetime, tz) -> bool:
    """A time later today (read from the day it was sent) is in the text: "heute zwischen 14:00 und 16:00 Uhr"."""
    today = now.astimezone(tz).date()
    return any(
        isinstance(f.value, datetime) and local_date(f.value, tz) == today and f.value > now
        for f in search(blob, sent, tz)
    )


def from_a_person(sender: str) -> bool:
    return bool(sender) and not AUTOMATED_SENDER_RE.search(sender)


_BARE_CLOCK = lazy_regex(r"^(?:at|um|ab|from)?\s*\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.|uhr|h)?$", re.I)


def _soon(blob: str, sent: datetime, now: datetime, tz, days: int = 1) -> bool:
    """A date in the text (read from the day it was sent) falls on today or within `days` after it. A time said
    alone belongs to the day the text names, when it names one: "your journey on 20.03., departure 08:34" is not
    tomorrow at 08:34."""
    today = now.astimezone(tz).date()
    found = search(blob, sent, tz)
    days_named = any(not _BARE_CLOCK.match(f.phrase.strip()) for f in found)
    return any(
        0 <= (local_date(f.value, tz) - today).days <= days
        and not (isinstance(f.value, datetime) and f.value < now - timedelta(hours=1))
        and not (days_named and _BARE_CLOCK.match(f.phrase.strip()))
        for f in found
    )


def emergency(text: str, subject: str, sender: str, now: datetime, tz, sent: datetime | None = None) -> str | None:
    """What makes a message a clear emergency that may wake the user ("a water leak", "your child's school or
    care closing today", "travel cancelled or moved within 12 hours"), or None. Not in a newsletter or an offer."""
    blob = f"{subject}\n{text}"
    sent = sent or now
    if PROMO_RE.search(blob) or ADVERT_RE.search(blob):
        return None
    personal = from_a_person(sender)
    yours = personal or YOURS_RE.search(blob) is not None
    for name, rule in EMERGENCY_RES:
        # a person's word, or (for a leak or a fire) an office's about the user's own home: not an advert's
        if rule.search(blob) and (
            personal
            or CHILD_RE.search(blob)
            or (yours and name in HOME_EMERGENCIES)
            or (name in FAMILY_EMERGENCIES and FAMILY_RE.search(blob))
        ):
            return name
    if personal and CHILD_RE.search(blob) and HEALTH_RE.search(blob) and CALL_NOW_RE.search(blob):
        # (a fever and "please pick him up" waits for the morning; "call me now" from the class trip does not)
        return "your child is ill or hurt and you are asked to call at once"
    flagged = _EMERGENCY_WORD_RE.search(subject) or _IS_AN_EMERGENCY_RE.search(text)
    if personal and flagged and HEALTH_RE.search(blob) and (CALL_NOW_RE.search(blob) or _AS_SOON_RE.search(blob)):
        # the sender calls the mail itself an emergency, tells of someone ill or hurt, and asks for a call or a coming
        # at once: "Bruno – emergency, please call!!" (the dog at the vet), "NOTRUF: Ihre Mutter – bitte kommen"; not
        # a doctor who "has to attend an emergency", whose practice asks for a call about the appointment
        return "an emergency, and you are asked to call or come at once"
    if CARE_RE.search(blob) and CLOSURE_RE.search(blob) and _soon(blob, sent, now, tz, days=0):
        return "your child's school or care closing today"
    if TRAVEL_RE.search(blob) and (DISRUPTION_RE.search(blob) or CLOSURE_RE.search(blob)):
        today = now.astimezone(tz).date()
        said = search(blob, sent, tz)
        if any(not isinstance(f.value, datetime) and (f.value - today).days > 1 for f in said):
            return None  # "on 3 March … moved to 10:45": the time is that day's
        for found in said:
            at = as_datetime(found.value, tz)
            timed = isinstance(found.value, datetime)
            horizon = now + timedelta(hours=TRAVEL_WAKE_HOURS)
            if (timed and now - timedelta(hours=1) <= at <= horizon) or (
                not timed and today <= local_date(found.value, tz) <= horizon.astimezone(tz).date()
            ):
                return f"travel cancelled or moved within {TRAVEL_WAKE_HOURS} hours"
    return None


def emergency_in(buffers: list, text: str, now: datetime, tz) -> str | None:
    """The clear emergency a kept item's mails tell of (`emergency`), each read from the day it was sent; None
    for calendar changes and bulk mail."""
    for buffer in buffers:
        if not isinstance(buffer, dict) or buffer.get("bulk") or buffer.get("change"):
            continue
        found = emergency(
            text,
            str(buffer.get("subject") or buffer.get("title") or ""),
            str(buffer.get("from") or ""),
            now,
            tz,
            sent_at(buffer, now, tz),
        )
        if found:
            return found
    return None


def _within_a_week(blob: str, sent: datetime, today, tz) -> list:
    """The dates in the text (read from the day it was sent) up to a week after today, in order."""
    return [f for f in search(blob, sent, tz) if local_date(f.value, tz) <= today + timedelta(days=7)]


def judge_message(text: str, subject: str, sender: str, now: datetime, tz, sent: datetime | None = None) -> Judgement:
    """A mail, feed or web item. Situations first (an emergency, a child, health, travel trouble, a closure or a
    change today or tomorrow, today's deadline), then who wrote it and when the things it mentions happen. `sent`:
    when the mail was sent, the day its "today" and "tomorrow" are read from."""
    blob = f"{subject} {text}"
    sent = sent if sent is not None and sent <= now else now
    if PROMO_RE.search(blob) and not (CHILD_RE.search(blob) and HEALTH_RE.search(blob)):
        return Judgement(None, "newsletter or promotion")
    found_emergency = emergency(text, subject, sender, now, tz, sent)
    if found_emergency:
        return Judgement(1, f"emergency: {found_emergency}", True)
    if CHILD_RE.search(blob) and (HEALTH_RE.search(blob) or PICKUP_RE.search(blob)):
        return Judgement(1, "situation: your child needs you", True)
    if (
        HEALTH_RE.search(blob)
        and from_a_person(sender)
        and re.search(r"\b(hospital|ambulance|emergency|accident)\b", blob, re.I)
    ):
        return Judgement(1, "situation: health emergency", True)
    if TRAVEL_RE.search(blob) and DISRUPTION_RE.search(blob):
        return Judgement(1, "situation: travel disruption", True)
    closes = CLOSURE_RE.search(blob)
    if closes and _soon(blob, sent, now, tz, days=1):
        return Judgement(1, f"a closure or change today or tomorrow (“{closes.group(0)}”)", True)
    found = TODAY_DEADLINE_RE.search(blob)
    if found:
        return Judgement(1, f"deadline today (“{found.group(0)}”)", True)
    visit = VISIT_RE.search(blob) or (PRESENCE_RE.search(blob) and DELIVERY_RE.search(blob))
    if visit and _later_today(blob, sent, now, tz):
        # "your parcel will be delivered today between 14:00 and 16:00", "the technician comes today at 10": someone
        # must be there, which the next morning would be too late to hear
        return Judgement(1, f"a delivery or a visit to you later today (“{visit.group(0)}”)", True)
    found = ASKING_RE.search(blob)
    if found:
        return Judgement(1, f"urgent wording (“{found.group(0)}”)")
    today = now.astimezone(tz).date()
    if BILL_RE.search(blob):
        return Judgement(2, "a bill or payment due")
    if (cost := PRICE_CHANGE_RE.search(blob)) and not PROMO_RE.search(blob):
        # a contract's new price or instalment: what the user pays changes, and they may object or cancel
        return Judgement(2, f"a change to what you pay (“{cost.group(0)}”)")
    # (a watched page has no sender: the user asked to hear what it says)
    person = from_a_person(sender)
    # a visit to the user's home is theirs to be there for, asked or not
    wanted = (personal.asks(text, subject) or (visit and visit.group(0))) if person else None
    # a person's "nothing you need to do" or the quote of the user's own mail asks nothing
    asked = YOURS_TO_DO_RE.search(blob) if not person or wanted else None
    if asked and _soon(blob, sent, now, tz, days=1):
        # "the plumber comes tomorrow at 8, please make sure someone is home": the next morning would be too late
        # (a friend's "dinner tonight?" is a question, not an alarm)
        return Judgement(1, f"asked of you for today or tomorrow (“{asked.group(0).strip()}”)")
    # the mail's dates are read only where a rule asks for them: a bill, a new price or a person's news needs none,
    # and reading them was a third of the date parser's work in a month of mail
    if (not sender or wanted or asked or (person and closes)) and (dated := _within_a_week(blob, sent, today, tz)):
        return Judgement(2, f"a date within a week ({fmt_moment(dated[0].value, tz)})")
    if person and not wanted and not closes:
        # holiday news, a thank-you, "sounds good": the briefing lists what needs the user, not all that arrived
        return Judgement(None, "a person's news, thanks or greeting: it asks nothing of you")
    dated = _within_a_week(blob, sent, today, tz)
    if dated:
        # a report, an announcement or an offer with a date in it: the date is the sender's, nothing is the user's
        return Judgement(
            None, f"an automatic mail with a date ({fmt_moment(dated[0].value, tz)}) that asks nothing of you"
        )
    if person and QUESTION_RE.search(blob):
        return Judgement(2, "a person asks you something")
    if person:
        return Judgement(3, f"a person asks something of you (“{wanted or closes.group(0)}”)")
    return Judgement(None, "nothing that needs you")


def same_day(payload: dict, now: datetime, tz) -> str | None:
    """Why a calendar change touches the rest of today (in `tz`), or None: a new, moved or cancelled event
    starting later today counts, and so does one moved away from a time later today (the user may be on
    the way to it). Events already over do not."""
    change = payload.get("change")
    if change not in ("new", "changed", "cancelled"):
        return None
    today = now.astimezone(tz).date()
    previous = payload.get("previous") if isinstance(payload.get("previous"), dict) else {}
    for start, end, was in (
        (aware_or_none(payload.get("start")), aware_or_none(payload.get("end")), False),
        (aware_or_none(previous.get("start")), aware_or_none(previous.get("end")), True),
    ):
        if start is None or start.astimezone(tz).date() != today or (end or start) < now:
            continue
        title = str(payload.get("title") or "an event")[:80]
        verb = {"new": "new", "changed": "moved" if was else "changed", "cancelled": "cancelled"}[change]
        return f"{title}: {verb}, {'was' if was else 'starts'} today at {start.astimezone(tz):%H:%M}"
    return None


def time_critical(payload: dict, now: datetime, tz) -> str | None:
    """Why a calendar change cannot wait for the next daily sync, by its times alone, or None: it touches the
    rest of today, or the event starts (or started, before a move) within SOON_HOURS."""
    today = same_day(payload, now, tz)
    if today is not None:
        return today
    start = parse_moment(payload.get("start"), tz)
    previous = (
        parse_moment((payload.get("previous") or {}).get("start"), tz)
        if isinstance(payload.get("previous"), dict)
        else None
    )
    for moment in (start, previous):
        if moment is None:
            continue
        at = as_datetime(moment, tz)
        if now - timedelta(hours=1) <= at <= now + timedelta(hours=SOON_HOURS):
            return f"calendar event {payload.get('change')} starting within {SOON_HOURS} hours"
    return None


def pressing(text: str, now: datetime, tz) -> str | None:
    """Why a mail might need the user before tomorrow, or None when nothing in it could: a pressing word, a
    situation the rules know (health, travel trouble, a deadline today), or a date today or tomorrow. A
    recall-first screen: `judge_message` ranks precisely, and a promotion's footer or a word it lacks can
    hide a closure or a cancellation from it; this errs towards asking a model."""
    for rule in (PRESSING_RE, HEALTH_RE, DISRUPTION_RE, TODAY_DEADLINE_RE, ASKING_RE):
        found = rule.search(text)
        if found:
            return f"“{found.group(0)}”"
    tomorrow = now.astimezone(tz).date() + timedelta(days=1)
    dated = next((f for f in search(text, now, tz) if local_date(f.value, tz) <= tomorrow), None)
    return f"a date by tomorrow ({fmt_moment(dated.value, tz)})" if dated else None


def judge_calendar(payload: dict, now: datetime, tz) -> Judgement:
    """A calendar change: time-critical when it touches the rest of today, or when the event starts (or
    started, before a move) within hours (`time_critical`); pressing within two days. The RAS judges calendar
    rows by this rule with a model too: a calendar change is structured data, and its urgency is its time."""
    critical = time_critical(payload, now, tz)
    if critical is not None:
        return Judgement(1, critical)
    change = payload.get("change")
    start = parse_moment(payload.get("start"), tz)
    soon = start is not None and now - timedelta(hours=12) <= as_datetime(start, tz) <= now + timedelta(hours=48)
    if soon:
        return Judgement(1, f"calendar event {change} starting within 48 hours")
    return Judgement(2, f"calendar event {change}")


def arousing(judgement: Judgement) -> bool:
    """What the RAS wakes the thalamus for before the next sync: the urgent, and what is better proposed now."""
    return judgement.level == 1 or judgement.early
