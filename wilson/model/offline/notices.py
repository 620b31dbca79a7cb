"""A mail that only informs: a receipt, an order or booking confirmation, a shipping notice, a statement that is
available, a sign-in notice, an announced direct debit, a calendar system's invitation. It asks nothing of the
user, so telling it would spend their attention on nothing; the calendar tells of an invited event itself.

A notice that also asks for something by a date (asks, bills) or describes a situation (a cancellation, a closure
today, an emergency) is judged by those rules first: this one only keeps the rest quiet.
"""

from __future__ import annotations

import re
from wilson.kernel.lazy_regex import lazy_regex

# the sender says so itself
NO_ACTION_RE = lazy_regex(
    r"\bno (?:further |other )?action (?:is |will be )?(?:required|needed|necessary)\b|"
    r"\b(?:you )?(?:don'?t|do not|won'?t|will not) (?:need|have) to do anything\b|"
    r"\bthere(?:'s| is) nothing (?:(?:else|more) )?(?:for you )?to do\b|\bnothing (?:for you )?to do\b|"
    r"\bif (?:this|that|it) was you\b|\bno need to (?:do anything|act|reply|respond)\b|"
    r"\bfor your (?:records|information|reference)\b|\byou (?:can|may) (?:safely )?ignore this (?:message|mail|e-?mail)\b|\bkein(?:e|en)? (?:weitere[n]? )?handlungsbedarf\b|"
    r"\bsie m(?:ü|ue)ssen nichts (?:weiter )?tun\b",
    re.I,
)
# what happened or will happen without the user: an order placed or on its way, a payment taken, a renewal done
RECEIPT_RE = lazy_regex(
    r"\bthank(?:s| you) for (?:your )?(?:order|purchase|payment|booking|reservation|shopping)\b|"
    r"\b(?:order|booking|reservation|payment|purchase) (?:confirmation|confirmed|receipt|summary)\b|"
    r"\byour (?:order|booking|reservation|purchase|payment)(?: [\w#-]+)? (?:has been|was|is) "
    r"(?:placed|received|confirmed|processed|shipped|dispatched|successful|complete)\b|"
    r"\b(?:we(?:'ve| have)? )?received your (?:order|payment|booking)\b|"
    r"\b(?:happy|pleased|glad|delighted) to confirm your (?:reservation|booking|order|table)\b|\bpayment (?:received|successful)\b|"
    # a cancellation the user asked for, confirmed: "We confirm the cancellation of booking no. 48812"
    r"\bwe (?:hereby )?confirm (?:the |your )?cancellation\b|\bcancellation (?:is )?(?:confirmed|confirmation)\b|"
    r"\bstornierung(?:sbestätigung|\s+(?:ist|wurde)\s+bestätigt)\b|"
    r"\b(?:has|have) been (?:renewed|charged|debited|shipped|dispatched)\b|\bwe (?:have )?charged\b|"
    r"\byour (?:[\w-]+ )?receipt\b|\breceipt (?:for|from|of) your\b|\b(?:quittung|zahlungsbestätigung|"
    r"bestellbestätigung|versandbestätigung)\b|\b(?:bestellung|sendung|paket)\b[^.!?\n]{0,40}\b(?:wurde|ist) "
    r"(?:versandt|verschickt|unterwegs|zugestellt)\b|\bis (?:now )?confirmed\b|"
    r"\byour (?:parcel|package|order|delivery|shipment|items?)\b[^.!?\n]{0,40}\b(?:is on (?:its|the) way|"
    r"(?:has been|was|will be|is being) (?:shipped|dispatched|delivered|handed over)|out for delivery|"
    r"arriv\w+|is coming)\b|\btracking (?:number|link|code)\b|\btrack (?:your|the) (?:order|parcel|package|shipment)\b|"
    r"\b(?:statement|invoice|bill|document|payslip|letter)s? (?:for [\w ]{1,20} )?(?:is|are) (?:now )?"
    r"available (?:in|on|for download)\b|"
    r"\b(?:sendung|paket|bestellung|lieferung)\b[^.!?\n]{0,60}?\b(?:wurde|ist|wird)\b[^.!?\n]{0,30}?\b"
    r"(?:zugestellt|versandt|verschickt|geliefert|abgegeben|hinterlegt)\b(?![^.!?\n]{0,20}\bwerden\b)|"
    r"\bvielen dank für ihren (?:einkauf|kauf|besuch)\b|\b(?:digitale[rn]? )?kassenbon\b|\be-?bon\b|"
    r"\bkontoauszug\w* (?:\w+ ){0,3}(?:ist|sind|steht|stehen) (?:jetzt |nun )?(?:da|verfügbar|online|bereit|abrufbar)\b|"
    r"\b(?:statement|invoice|bill|document|payslip|letter|message)s?\b[^.!?\n]{0,40}\b(?:is|are|has been|have been) "
    r"(?:now )?(?:in|placed in|added to|uploaded to) your (?:online )?(?:postbox|inbox|mailbox|documents|account|"
    r"banking|portal)\b|\bneue[sn]? (?:dokument|kontoauszug|nachricht)\w* (?:in|im) (?:ihrem|ihr|deinem) "
    r"(?:postfach|postbox|online-banking)\b|"
    r"\b(?:advance |pre-?)notice of (?:your |the )?direct debit\b|\bwill (?:be )?(?:collect|debit)\w* "
    r"(?:[^.!?\n]{0,60}?)(?:by direct debit|from your (?:bank |credit )?(?:account|card))\b|"
    r"\bnew (?:sign-?in|log-?in|device)\b|"
    # an invoice already paid, a booking or an appointment confirmed, a debit announced: in German too
    r"\b(?:was|has been|have been|already|were) paid\b|\bpaid (?:by|with|via|using) (?:paypal|card|credit card|"
    r"debit card|visa|mastercard|amex|apple pay|google pay|klarna)\b|\b(?:bereits|wurde|wurden) (?:\w+ )?bezahlt\b|"
    r"\bvielen dank für ihre (?:buchung|bestellung|reservierung|zahlung)\b|\b(?:buchungs|reservierungs|termin|"
    r"auftrags)bestätigung\b|\b(?:ist|wurde|wurden|sind) (?:\w+ )?bestätigt\b|"
    r"\b(?:wird|werden)\b(?:[^.!?\n]|(?<=\d)\.(?=\d)){0,80}?\b(?:abgebucht|per lastschrift eingezogen|eingezogen)\b",
    re.I,
)
# an invitation that a calendar system sends: the event reaches the calendar, the mail says nothing more
INVITATION_RE = lazy_regex(
    r"\bthis is a reminder for the following event\b|\b(?:meeting|event) reminder\b|"
    r"\byour meeting\b[^.!?\n]{0,60}\b(?:starts|begins)\b|^\s*(?:reminder|notification|erinnerung|benachrichtigung): "
    r".{0,80}@ |^\s*(?:updated )?invitation(?: updated)?:|\byou (?:have been|are|were|'ve been) invited to the following\b|"
    r"^\s*(?:accepted|declined|tentative(?:ly accepted)?|einladung|aktualisierte einladung):|"
    r"\bgoing\??\s*(?:\(\S+\)\s*)?yes\s*[-–/|]\s*maybe\s*[-–/|]\s*no\b",
    re.I | re.M,
)


# a cancellation the user asked for, confirmed: no travel disruption, whatever "cancelled" the mail says
ASKED_FOR_CANCELLATION_RE = lazy_regex(
    r"\bas (?:you )?requested\b|\bat your request\b|\byour cancellation request\b|\bwie (?:gewünscht|besprochen)\b|"
    r"\bauf ihren wunsch\b|\bihrer? stornierung\b",
    re.I,
)


def notice(subject: str, text: str, asked: bool = False) -> str | None:
    """What kind of notice a mail is, when it only informs ("a receipt or a confirmation"), or None. `asked`: a rule
    found something asked by a date in it; then only the sender's own "no action is needed" makes it a notice."""
    blob = f"{subject}\n{text}"
    if NO_ACTION_RE.search(blob):
        return "a notice that says it needs nothing from you"
    if asked:
        return None
    if INVITATION_RE.search(blob):
        return "a calendar invitation (the calendar tells of the event)"
    if RECEIPT_RE.search(blob):
        return "a receipt, a confirmation or a notice of something done for you"
    return None
