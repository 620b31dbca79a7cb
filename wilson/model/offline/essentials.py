"""What a task from a mail needs to be done without opening the mail again: the amount, the reference to
quote, the account, and where (an office, a portal, a counter)."""

from __future__ import annotations

import re

from wilson.kernel.lazy_regex import lazy_regex

AMOUNT_RE = lazy_regex(
    r"(?:[€$£]|\b(?:EUR|USD|GBP|CHF))\s?\d+(?:[.,]\d+)*"
    r"|\b\d+(?:[.,]\d+)*\s?(?:[€$£]|(?:EUR|USD|GBP|CHF|euros?|dollars?|pounds?)\b)",
    re.I,
)
REFERENCE_RE = lazy_regex(
    r"\b(?P<label>reference|ref\.?|payment reference|invoice (?:no\.?|number|#)|booking (?:code|"
    r"reference|number|no\.?)|case (?:no\.?|number)|customer (?:no\.?|number)|order (?:no\.?|"
    r"number)|file (?:no\.?|number)|confirmation (?:code|number)|PNR|aktenzeichen|kassenzeichen|"
    r"verwendungszweck)(?:es|s)?\s*(?:is\s*)?[:#]?\s*(?P<ref>(?=[A-Z/._-]*\d|(?-i:[A-Z]{5,8})\b)[A-Z0-9][A-Z0-9/._-]{2,24}(?:\s\d{3,6}(?!\s*(?:[€$£]|EUR|euro)))"
    r"{0,3})(?<![.])",
    re.I,
)
IBAN_RE = lazy_regex(r"\bIBAN\s*:?\s*(?P<iban>[A-Z]{2}\d{2}(?:\s?[A-Z0-9]{4}){2,7}(?:\s?[A-Z0-9]{1,3})?)")
WHERE_RE = lazy_regex(
    r"\b(?:at|in|via|through|on|using)\s+(?P<where>(?:the |our |your )?(?:[\w'’-]+ ){0,3}?"
    r"(?:office|portal|website|web site|app|counter|desk|town hall|city hall|reception|terminal|"
    r"branch|station|gate|front desk|school office|secretary's office|Bürgeramt|Rathaus))\b",
    re.I,
)


def essentials(text: str, verb: str = "", amount: bool = True) -> str:
    """ "Amount: 120 EUR. Reference: KZ-4471. Where: at the town hall." (what there is of it), for the notes; the
    amount and the account only for a payment (`verb` "Pay"), the amount not when the notes say it already."""
    parts = []
    found = owed(text) if amount else None
    if found and verb == "Pay":
        parts.append(f"Amount: {found.group(0)}.")
    elif verb in ("Object", "Cancel") and amount:  # a new price, objected to by a date: the old and the new
        said = list(dict.fromkeys(m.group(0) for m in AMOUNT_RE.finditer(text)))[:3]
        if said:
            parts.append(f"Amounts in the mail: {', '.join(said)}.")
    reference = REFERENCE_RE.search(text)
    if reference:
        label = reference.group("label").rstrip(".:# ")
        label = label if label.isupper() else label[:1].upper() + label[1:].lower()
        parts.append(f"{label}: {reference.group('ref')}.")
    iban = IBAN_RE.search(text)
    if iban and verb == "Pay":
        parts.append(f"To IBAN {iban.group('iban').strip()}.")
    where = WHERE_RE.search(text)
    if where:
        parts.append(f"Where: {where.group(0)}.")
    return " ".join(parts)


# what a mail says is owed, before the amount: "Nachzahlung: EUR 1.234,56", "Amount due: 84.20 EUR"
OWED_RE = lazy_regex(
    r"\b(?:nachzahlung\w*|amount (?:due|owed|payable)|total (?:due|payable)|balance (?:due|owing)|"
    r"outstanding|to pay|zu zahlen|zahlbetrag|offene[rn]? betrag|restbetrag|fällige[rn]? betrag|"
    r"rechnungsbetrag|verwarnungsgeld|bußgeld|fine|back ?payment|additional payment|insgesamt|in total|"
    r"total of|gesamtbetrag)\b"
    r"[^.!?\n€$£\d]{0,30}$",
    re.I,
)


def owed(text: str) -> re.Match | None:
    """The amount a mail asks for: the first one labelled as owed ("Nachzahlung: EUR 1.234,56" after the total
    costs and the advances), else the first amount."""
    amounts = list(AMOUNT_RE.finditer(text or ""))
    for found in amounts:
        if OWED_RE.search(text[max(0, found.start() - 40) : found.start()]):
            return found
    return amounts[0] if amounts else None
