"""A payment asked for in chat: "the car insurance bill of 480 euros has to be paid by dec 20", "pay the gas bill
on the 15th", a pasted letter saying the dog tax of 120.00 EUR is due on 15 February.

It is one task to pay, due on the day it must be paid by, its title naming what and how much ("Pay car insurance
bill (480 EUR)"): not the forms plan an official deadline gets, nor a bill's whole plan. No date, no task here:
the other rules read the rest ("add pay rent" is a task without a date already).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from wilson.model.offline import dates
from wilson.kernel.lazy_regex import lazy_regex

_CURRENCIES = {
    "€": "EUR",
    "eur": "EUR",
    "euro": "EUR",
    "euros": "EUR",
    "$": "USD",
    "usd": "USD",
    "dollar": "USD",
    "dollars": "USD",
    "£": "GBP",
    "gbp": "GBP",
    "pound": "GBP",
    "pounds": "GBP",
    "chf": "CHF",
}
_NUMBER = r"\d{1,3}(?:[.,\s]\d{3})*(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?"
AMOUNT_RE = lazy_regex(
    rf"(?P<pre>[€$£]|\b(?:EUR|USD|GBP|CHF)\b)\s?(?P<n1>{_NUMBER})"
    rf"|(?P<n2>{_NUMBER})\s?(?P<post>[€$£]|(?:EUR|USD|GBP|CHF|euros?|dollars?|pounds?)\b)",
    re.I,
)
# the words that make it a payment: paying, or a thing that is paid
PAY_RE = lazy_regex(
    r"\b(?:pay|paid|payable|transfer|settle|due|owe|bill|invoice|fee|fees|tax|rent|fine|premium|"
    r"wants|asks for|asking for|charges|requests|"  # "the insurance wants 312,80 EUR by 1 March"
    r"instal?ment|deposit|(?:be)?zahlen|bezahlt|überweisen|überwiesen|rechnung|gebühr|fällig|"
    # money that "has to go out by feb 10" is paid by then (invitations that go out are sent)
    r"(?:money|euros?|eur|sum|amount|payment|transfer)\b[^.!?]{0,20}?\b(?:has|have|needs?|must)\s+(?:to\s+)?go\s+out|"
    r"(?<=[€$£])\s*[\d.,]+\s+(?:has|have|needs?|must)\s+(?:to\s+)?go\s+out)\b",
    re.I,
)
# a debt of the user's: "I still owe Ines my share of the holiday flat", "we owe Tom 40 euros"
_OWED_RE = lazy_regex(
    r"\b(?:i|we)\s+(?:still\s+|also\s+)?owe\s+(?!(?:you|it|that|this)\b)(?P<thing>[^,.;!?]+?)"
    r"(?=\s*(?:[,.;!?]|\b(?:by|before|until|till|on)\b|$))",
    re.I,
)
_PAY_VERB = (
    r"\b(?:pay|transfer|settle|(?:be)?zahlen|bezahlt\s+werden|überweisen|überwiesen\s+werden|"
    r"(?:has|have|needs?|must)\s+(?:to\s+)?go\s+out)\b"
)
# a payment done or offered is no task
NOT_TO_PAY_RE = lazy_regex(
    r"\b(?:i|we)(?:'ve| have)?\s+(?:already\s+)?(?:paid|transferred|settled)\b|"
    r"\bto avoid (?:a|the|any)\b|"  # "return the books by 12 January to avoid a fee of 5 EUR"
    r"\b(?:refund|receipt|save|discount|offer)\b",
    re.I,
)
# someone else pays it, said as the message's last word on it: "Die 180 € Miete übernimmt unsere Tochter", "my
# daughter is paying the rent for the hall"; never when the user still pays something ("…, ich muss die 85 € bis
# 20. März überweisen", "… but I have to pay the deposit") or it is a no ("übernimmt die Kosten nicht")
_OTHERS_PAY_RE = lazy_regex(
    r"\b(?:übernimmt|übernehmen|zahlt|bezahlt)\s+(?:unsere?|meine?|mein|sein|ihr)\s+(?:[\w-]+\s+)?(?-i:[A-ZÄÖÜ])\w+"
    r"(?![^.;!?]*\bnicht\b)|"
    r"\b(?:my|our|his|her)\s+(?:[a-z]+\s+)?(?:son|daughter|brother|sister|mother|father|mum|mom|dad|parents|husband|"
    r"wife|partner|boss|company|employer)\s+(?:is\s+paying|pays|will\s+pay|covers|is\s+covering|will\s+cover)\b"
    r"(?![^.;!?]*\b(?:not|n't)\b)",
    re.I,
)
_I_STILL_PAY_RE = lazy_regex(
    r"\b(?:ich\s+muss|muss\s+ich|ich\s+zahle|i\s+(?:still\s+)?(?:have|need)\s+to|i\s+must|i'?ll\s+pay|but\s+i)\b|"
    r"\b(?:die\s+)?hälfte\b|\bhalf\b|\bteil\b|\bpart\s+of\b",
    re.I,
)


def not_to_pay(text: str) -> bool:
    """Whether a message's sum is none for the user to pay: paid already, an offer or a refund, or someone else's
    to pay (and the user pays no part of it)."""
    if NOT_TO_PAY_RE.search(text):
        return True
    return bool(_OTHERS_PAY_RE.search(text)) and not _I_STILL_PAY_RE.search(text)


# what is paid, as it is named before its amount or after "pay": "the car insurance bill of 480 euros", "pay the
# gas bill", "the dog tax of 120.00 EUR"
_THING_BEFORE_AMOUNT = lazy_regex(
    r"(?:\bthe|\byour|\bmy|\bour|\ba|\ban|\bdie|\bder|\bdas|\bihre|\bmeine|\bunsere)\s+(?P<thing>[\w' -]{2,40}?)\s+"
    r"(?:of|for|amounting to|totalling|totaling|:|costs?|comes to|amounts to|will cost|"
    # and in German: "die Kfz-Steuer von 94 €", "die Rechnung über 120 EUR", "in Höhe von"
    r"von|über|in\s+höhe\s+von|"
    r"is|are|wants|asks for|charges|requests)\s*$",
    re.I,
)
_THING_AFTER_PAY = lazy_regex(
    r"\b(?:pay|transfer|settle)\s+(?:off\s+)?(?:the\s+|my\s+|our\s+)?"
    r"(?P<thing>(?!(?:by|on|before|until|till|in|at|to|for|it|this|that|them|\d)\b)[\w' -]{2,40}?)"
    r"(?=\s+(?:on|by|before|until|till|for|of|to|in|at|next|this|tomorrow|today)\b|[,.;!?]|$|"
    r"\s+(?:[€$£]|\d))",
    re.I,
)
_THING_PAID = lazy_regex(
    r"(?:\bthe|\byour|\bmy|\bour)\s+(?P<thing>[\w' -]{2,40}?)\s+(?:has|have|needs?|must|is|are)\s+"
    r"(?:(?:to\s+be\s+|be\s+)?(?:paid|due|payable|settled)|(?:to\s+)?go\s+out)\b",
    re.I,
)
_THING_AFTER_AMOUNT = lazy_regex(
    r"\s+(?P<prep>for|to)\s+(?P<thing>(?:the\s+|my\s+|our\s+)?[\w' -]{2,40}?)"
    r"(?=\s+(?:on|by|before|until|till|next|this|tomorrow|today)\b|[,.;!?]|$)",
    re.I,
)
# what is paid named first, with no article: "kita lunch money of 62.50 euros has to go out by feb 10"
_NAMED_FIRST = lazy_regex(r"^\s*(?P<thing>[a-z][\w' -]{2,40}?)\s+(?:of|for|amounting to|totalling|totaling)\s*$", re.I)
_TRIM = lazy_regex(r"^(?:the|your|my|our|a|an)\s+|\s+(?:the|amount|sum)$", re.I)


# what is paid by its own name ("Pay gas bill"); anything else is paid for ("Pay for the school trip")
_PAID_THINGS = frozenset(
    {
        "bill",
        "bills",
        "invoice",
        "fee",
        "fees",
        "tax",
        "taxes",
        "rent",
        "fine",
        "premium",
        "deposit",
        "instalment",
        "installment",
        "subscription",
        "membership",
        "insurance",
        "loan",
        "mortgage",
        "tuition",
        "nanny",
        "babysitter",
        "cleaner",
        "plumber",
        "electrician",
        "landlord",
        "back",
        "payment",
        "back-payment",
        "money",  # "Pay kita lunch money"
    }
)


@dataclass(frozen=True)
class Payment:
    title: str
    due: dates.Found


def amount_of(text: str) -> str | None:
    """ "480 euros" → "480 EUR", "€50" → "50 EUR"; None when the text names no sum of money."""
    found = AMOUNT_RE.search(text)
    if not found:
        return None
    number = (found.group("n1") or found.group("n2")).strip()
    currency = _CURRENCIES.get(
        (found.group("pre") or found.group("post") or "").lower(),
        (found.group("pre") or found.group("post") or "").upper(),
    )
    return f"{number} {currency}"


def _thing(text: str) -> str | None:
    amount = AMOUNT_RE.search(text)
    if amount:
        after = _THING_AFTER_AMOUNT.match(text, amount.end())
        if after and re.search(r"\b(?:pay|transfer|settle)\s+$", text[: amount.start()], re.I):
            # "pay 35 euros for the school trip": pay for the school trip; "transfer 300 EUR to the landlord"
            return ("for " if after.group("prep").lower() == "for" else "") + after.group("thing")
        before = _THING_BEFORE_AMOUNT.search(text[: amount.start()]) or _NAMED_FIRST.match(text[: amount.start()])
        if before:
            return before.group("thing")
    for pattern in (_THING_AFTER_PAY, _THING_PAID):
        found = pattern.search(text)
        if found and not AMOUNT_RE.fullmatch(found.group("thing").strip()):
            return found.group("thing")
    return None


def payment(text: str, now: datetime, tz) -> Payment | None:
    """The payment a message asks for, with the day to pay by; None when it asks for none or names no day."""
    if not PAY_RE.search(text) or not_to_pay(text):
        return None
    amount = amount_of(text)
    owed = _OWED_RE.search(text)
    if amount is None and not re.search(_PAY_VERB, text, re.I) and owed is None:
        return None  # "the rent is due on Friday" without a sum is a deadline the other rules read
    thing = _thing(text)
    if thing and re.fullmatch(r"(?:the\s+)?(?:amount|sum|total)", thing.strip(), re.I):
        thing = None  # "transfer the amount by 20 January": what the amount is for is named elsewhere
    if not thing and amount:
        noun = re.search(r"\b(invoice|bill|fee|tax|rent|fine|premium|deposit|back[- ]payment|payment)\b", text, re.I)
        thing = f"the {noun.group(1).lower()}" if noun else None  # "Invoice 2027-0113, amount due: 89.90 EUR"
    if not thing and owed is not None:  # "Pay Ines my share of the holiday flat": whom, and what
        thing = " ".join(AMOUNT_RE.sub(" ", owed.group("thing")).split()) or None
    if not thing and amount and re.search(_PAY_VERB, text, re.I):
        thing = amount  # "bitte überweisen Sie 45 EUR bis zum 20. Januar": pay the sum itself
        amount = None
    if not thing:
        return None
    # a sum is no date ("the gym fee of €35 needs paying by Feb 1": not the year 2035)
    unpriced = AMOUNT_RE.sub(lambda m: " " * len(m.group(0)), text)
    found = [f for f in dates.search(unpriced, now, tz) if not re.fullmatch(r"\d{4}", f.phrase.strip())]
    if not found:
        return None
    # the day after a word that makes it the day to pay by ("due on", "by"), else the first
    cued = [
        f
        for f in found
        if re.search(
            r"\b(?:due|by|before|until|till|on|paid|pay|deadline|bis|fällig)\b[^.!?\n]{0,25}$", text[: f.start], re.I
        )
        or re.match(r"(?:by|before|until|till|bis|due)\b", f.phrase, re.I)  # the cue read with the day
    ]
    due = (cued or found)[0]
    for phrase in (f.phrase for f in found):  # "pay rent a week from Friday": the day is no part of what is paid
        at = thing.find(phrase)
        if at > 0:
            thing = re.sub(r"\s+(?:on|by|before|until|till|at|in|the)$", "", thing[:at].rstrip(" ,"), flags=re.I)
    thing = " ".join(_TRIM.sub("", thing.strip()).split())
    if (
        owed is None
        and not thing.startswith("for ")
        and thing.split()[-1].lower() not in _PAID_THINGS
        and not thing[:1].isupper()
        and not AMOUNT_RE.fullmatch(thing)
    ):
        thing = f"for the {thing}"  # "the school trip costs 12 EUR": pay for the school trip
    title = f"Pay {thing}" + (f" ({amount})" if amount else "")
    return Payment(title[:1].upper() + title[1:], due)
