"""Bills and renewal notices in a mail, read by rules: what there is to pay or decide, and by when.

A bill needs an amount and a date to pay by; a renewal notice needs the date it renews or
expires. Either becomes one task due before that date, named after the thing ("Pay electricity
bill", "Review car insurance renewal"), for the approval gate like any other proposal. A mail
that reads like phishing (verify your account, gift cards, an instruction to the assistant)
gets no task: paying is exactly what such a mail wants.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from wilson.model.offline import dates
from wilson.model.offline.essentials import essentials, owed
from wilson.model.offline.mailtext import sent_at
from wilson.kernel.lazy_regex import lazy_regex

BILL_RE = lazy_regex(r"\b(bill|invoice|rechnung|facture|amount due|payment due)\b", re.I)
# a receipt or a refund is a bill already settled
SETTLED_RE = lazy_regex(
    r"\b(receipt|refund\w*|has been paid|was paid|already paid|paid in full|"
    r"payment (?:was |has been )?received|thank you for your payment|paid (?:by|with|via) "
    r"(?:credit card|card|paypal)|nothing to pay|"
    # collected by direct debit: the bank pays it, the user does nothing
    r"will be (?:debited|collected|taken) (?:from|via|by)|collected by direct debit|bereits bezahlt|"
    r"(?:wird|werden)\b(?:[^.!?\n]|(?<=\d)\.(?=\d)){0,80}?\b(?:abgebucht|eingezogen)|per lastschrift)\b"
    r"|(?<![\d.,])0(?:[.,]00?)?\s?(?:€|EUR\b|euros?\b|USD\b|\$|£|GBP\b)"  # nothing to pay
    r"|(?:€|EUR|USD|\$|£)\s?0(?:[.,]00?)?(?![\d.,])",
    re.I,
)
# a renewal already done and charged is a receipt: nothing to decide before it
RENEWED_RE = lazy_regex(
    r"\b(?:has|have) been (?:automatically |successfully )?renewed\b|\bwas (?:automatically |"
    r"successfully )?renewed\b|\b(?:successfully|automatically) renewed\b|\bwe (?:have )?charged\b",
    re.I,
)
RENEWAL_RE = lazy_regex(
    r"\b(renew\w*|auto-renew\w*|expir\w*|runs? out|verlänger\w*|abl(?:ä|ae)uft|ausl(?:ä|ae)uft|"
    r"l(?:ä|ae)uft\b(?:[^.!?\n]|(?<=\d)\.(?=\d)){0,40}\bab|ungültig (?:wird|werden))\b",  # "läuft am 30.04.2027 ab"
    re.I,
)
# a renewal the sender wants signed (a lease, a contract): signing is the task, not shopping around
# ("sign in to manage it", "thanks for signing up" ask nothing of the kind)
SIGN_RE = lazy_regex(r"\b(?:sign|countersign)(?!\s+(?:in|up|out|on)\b)\b", re.I)
SIGNED_THINGS = ("lease", "contract")
# what renews: the thing a renewal notice is about
RENEWABLE_RE = lazy_regex(
    r"\b(insurance|cover|coverage|policy|subscription|membership|licen[cs]e|contract|warranty|"
    r"domain|passport|permit|registration|plan|lease|visa|id card|identity card|\w*card|season ticket|"
    r"\w*ausweis|reisepass|führerschein|visum|aufenthalts(?:titel|erlaubnis)|\w*versicherung|vertrag|"
    r"mitgliedschaft|abo|abonnement)\b",
    re.I,
)
# an advertisement that names a bill ("save 20 EUR on your electricity bill") is not one
# ("we will offer the space to the next tenant", "save the scan" are no offer)
OFFER_RE = lazy_regex(
    r"\b(sale|save (?:up to|on|big|money|\d+|€|\$|£)|savings? (?:of|up to|on)|(?:big|huge) savings|discount|(?:special|exclusive|"
    r"limited[- ]time|our|this|best|great|new|latest|personal) offers?|offers? (?:ends?|expires?|"
    r"valid)|deals?|coupon|promo\w*|cashback|switch and)\b|% off",
    re.I,
)
# (not "log in to your account": real bills and insurers say it too)
PHISHING_RE = lazy_regex(
    r"\b(verify|verification|locked|suspended|unusual activity|confirm your (?:identity|account|"
    r"details)|gift ?cards?|bitcoin|crypto|wire transfer|prize|you(?:'ve| have) won|"
    r"ignore (?:all |any |your )?(?:previous|prior) (?:instructions|rules)|assistant:|"
    r"(?:note|instructions?) (?:for|to) the (?:ai|assistant))",
    re.I,
)
# words before a date that make it the date to pay by, or the date something renews
DUE_CUE_RE = lazy_regex(
    r"\b(pay|paid|payable|due|by|before|until|till|deadline|debit\w*|collected|renew\w*|"
    r"expir\w*|runs? out|ends?|fällig|bis)\b[^.!?\n]{0,25}$",
    re.I,
)
_NOT_A_NAME = set(
    """a an the your our my this that these new latest current monthly annual yearly quarterly final
first second last next upcoming outstanding open unpaid due for of from to is are will and or
attached enclosed signed please sign
ihre ihr ihren deine dein unsere unser die der das den votre vos ta ton sa son la le les su tu""".split()
)
_MONTHS = {
    m.lower() for m in ("January February March April May June July August September October November December").split()
}
PAY_LEAD_DAYS = 2  # a bill is paid a couple of days early: transfers take a day or two
RENEWAL_LEAD_DAYS = 7  # a week to compare offers or cancel before it renews


@dataclass(frozen=True)
class Due:
    """A task a mail calls for: its title, due date, and the rule in words (for the trace and the reason)."""

    title: str
    due: date
    notes: str
    rule: str


def _name_before(text: str, noun_re: re.Pattern, words: int = 2) -> tuple[str, str] | None:
    """("electricity", "bill") from "Your electricity bill for December": up to `words` words before the noun
    that name the thing (not "your", "new", a month); ("", "passport") when none do."""
    for found in noun_re.finditer(text or ""):
        before = re.findall(r"[A-Za-zÀ-ÿ][\w&'-]*", text[: found.start()])
        kept: list[str] = []
        for word in reversed(before[-words:]):
            if word.lower() in _NOT_A_NAME or word.lower() in _MONTHS:
                break
            kept.insert(0, word)
        noun = found.group(0)
        # a brand's inner capital (BahnCard) and a German noun keep their case: "Renew Personalausweis"
        kept_case = re.search(
            r"[a-z][A-Z]|[äöüß]|(?:ausweis|pass|schein|titel|erlaubnis|ung|vertrag|schaft|abo)$", noun
        )
        # words before a German or French bill word keep their case too: "Gebührenbescheid Feuerstättenschau"
        foreign = re.search(r"(?i)rechnung|gebühr|beitrag|bescheid|mahnung|factur|zahlung", noun)
        kept = [w if w.isupper() or foreign and w[:1].isupper() else w.lower() for w in kept]
        return " ".join(kept), noun if kept_case else noun.lower()
    return None


def _date_to_act_by(text: str, now: datetime, tz, sent: datetime | None = None) -> dates.Found | None:
    """The date a bill is due or a contract renews: the first date after a cue ("pay by", "renews on"),
    else the first date to come; today or later only. `sent`: the day its "tomorrow" is read from."""
    found = [
        f for f in dates.search(text, sent or now, tz) if dates.local_date(f.value, tz) >= now.astimezone(tz).date()
    ]
    cued = [f for f in found if DUE_CUE_RE.search(text[: f.start])]
    return (cued or found or [None])[0]


# words before a date that make it the last day to cancel, switch or say no to a renewal
NOTICE_CUE_RE = lazy_regex(
    r"\b(?:cancel\w*|switch\w*|terminat\w*|opt out|kündig\w*|widerspr\w*|notice|let us know|"
    r"tell us|contact us|inform us|write to us)\b[^.!?\n]{0,50}?(?:\b(?:by|before|until|no later than|"
    r"bis(?: zum)?|spätestens(?: am)?)\s*)?$",
    re.I,
)


def _renews_on(text: str, now: datetime, tz, sent: datetime) -> dates.Found | None:
    """The first date still to come said right after a renewal word ("renews on 1 March", "verlängert sich am 1.
    März"), in the same sentence; None when no date is."""
    return next(
        (
            f
            for f in dates.search(text, sent, tz)
            if dates.local_date(f.value, tz) >= now.astimezone(tz).date()
            and re.search(r"\b(?:renew\w*|verlänger\w*|expir\w*|runs? out)\b[^.!?\n]{0,25}$", text[: f.start], re.I)
        ),
        None,
    )


def _notice_by(text: str, now: datetime, tz, sent: datetime) -> dates.Found | None:
    """The first date still to come that a renewal notice gives as the last day to cancel or switch, or None."""
    found = [
        f
        for f in dates.search(text, sent, tz)
        if dates.local_date(f.value, tz) >= now.astimezone(tz).date() and NOTICE_CUE_RE.search(text[: f.start])
    ]
    return found[0] if found else None


def _due(act_by: date, lead: int, today: date) -> date:
    """`lead` days before `act_by`, never before tomorrow, and before `act_by` itself while there is a day left."""
    tomorrow = today + timedelta(days=1)
    if act_by <= tomorrow:
        return max(act_by, today)
    return min(max(act_by - timedelta(days=lead), tomorrow), act_by - timedelta(days=1))


def name_only(sender: str) -> str:
    """ "Stadtwerke Berlin <rechnung@stadtwerke.de>" → "Stadtwerke Berlin": a reason names who (the proposal says
    which mail, address and all), the notes say where."""
    return re.sub(r"\s*<[^>]*>\s*$", "", sender).strip(" \"'") or sender


def organisation(sender: str) -> str:
    """Who a bill is from, for its title: the display name, or for a bare address the organisation its domain
    names ("billing@stadtwerke.de" → "Stadtwerke", "noreply@hmrc.gov.uk" → "HMRC"); a person's address at a mail
    provider, or a domain that names nobody readable, stays the address."""
    name = name_only(sender)
    address = re.fullmatch(r"<?[^@\s<>]+@(?P<domain>[\w.-]+)>?", name)
    if address is None:
        return name
    labels = address.group("domain").lower().split(".")[:-1]  # without the top level (.de, .uk)
    if len(labels) > 1 and len(address.group("domain").rsplit(".", 1)[-1]) == 2 and labels[-1] in SECOND_LEVEL:
        labels = labels[:-1]  # "hmrc.gov.uk", "company.co.jp": the name is before the country's own level
    label = labels[-1] if labels else ""
    if len(label) < 2 or label.startswith("xn--") or label in MAIL_PROVIDERS or label in GENERIC_LABELS:
        return name.strip("<>")
    if len(label) <= 4 and "-" not in label:
        return label.upper()  # "BT", "EE", "HMRC", "DHL": short names are mostly letters said one by one
    return " ".join(word[:1].upper() + word[1:] for word in label.split("-") if word)


# a domain that is only a service's word ("service.gov.uk") names nobody
GENERIC_LABELS = frozenset(
    {
        "service",
        "services",
        "mail",
        "email",
        "info",
        "billing",
        "noreply",
        "no-reply",
        "news",
        "secure",
        "account",
        "accounts",
        "notifications",
        "online",
        "portal",
    }
)
# a country's own second level ("co.uk", "gov.uk", "gv.at", "com.au"): the name stands before it
SECOND_LEVEL = frozenset({"co", "com", "org", "net", "gov", "gv", "govt", "gob", "gouv", "ac", "edu", "or", "ne", "go"})
MAIL_PROVIDERS = frozenset(
    {
        "gmail",
        "googlemail",
        "yahoo",
        "ymail",
        "hotmail",
        "outlook",
        "live",
        "msn",
        "icloud",
        "me",
        "mac",
        "aol",
        "gmx",
        "web",
        "proton",
        "protonmail",
        "pm",
        "posteo",
        "t-online",
        "freenet",
        "mailbox",
        "fastmail",
        "zoho",
        "yandex",
        "orange",
        "free",
        "libero",
        "btinternet",
    }
)


def sender_of(payload: dict) -> str:
    return str(payload.get("from_name") or payload.get("from") or "the sender").strip()


FORWARDED_RE = lazy_regex(
    r"^\s*-{2,}\s*(?:forwarded message|weitergeleitete nachricht|original message|ursprüngliche nachricht)\s*-{2,}|"
    r"^\s*begin forwarded message:",
    re.I | re.M,
)
_QUOTE_HEAD = lazy_regex(r"^(?:on|am) .{4,80}(?:wrote|schrieb)\b.*:$", re.I)


def task_for(text: str, payload: dict, now: datetime, tz) -> Due | None:
    """The task a bill or renewal notice calls for, or None (not one, no date, or it reads like phishing)."""
    subject = str(payload.get("subject") or "")
    # a reply's quote is the earlier mail, already read: "> EUR 4.760,00, payable within 14 days" is not asked again
    said = "\n".join(
        line
        for line in (text or "").splitlines()
        if not line.lstrip().startswith(">") and not _QUOTE_HEAD.match(line.strip())
    )
    forwarded = FORWARDED_RE.search(said)
    if forwarded:
        # "Kannst du das übernehmen? Ich komme diese Woche nicht dazu" over a forwarded bill: the bill's dates are
        # in the bill, not in the note above it
        said = re.sub(
            r"^\s*(?:from|date|sent|subject|to|cc|von|datum|gesendet|betreff|an|kopie)\s*:.*$",
            "",
            said[forwarded.end() :],
            flags=re.I | re.M,
        )  # and its header lines are the forwarded mail's envelope: "Date: Mon, 1 Mar 2027 at 09:12" is no due date
    subject = re.sub(r"^\s*(?:(?:fwd?|wg|aw|re)\s*:\s*)+", "", subject, flags=re.I)
    blob = f"{subject}\n{said}"
    if payload.get("change") or PHISHING_RE.search(blob):
        return None
    today = now.astimezone(tz).date()
    sender = sender_of(payload)
    quoted = f"“{subject}”" if subject else "their mail"
    amount = owed(blob)
    if BILL_RE.search(blob) and amount and not SETTLED_RE.search(blob) and not OFFER_RE.search(blob):
        when = _date_to_act_by(blob, now, tz, sent_at(payload, now, tz))
        if when is None:
            return None
        named = _name_before(subject, BILL_RE)
        named = named if named and named[0] else _name_before(text, BILL_RE)
        # "Rechnung", "facture": the bill's own word in another language is said as a bill
        noun = named[1] if named and named[1] in ("bill", "invoice") else "bill"
        title = f"Pay {named[0]} {noun}" if named and named[0] else f"Pay the bill from {organisation(sender)}"
        pay_by = dates.local_date(when.value, tz)
        more = essentials(blob, "Pay", amount=False)
        return Due(
            title,
            _due(pay_by, PAY_LEAD_DAYS, today),
            f"{amount.group(0)} to {sender}, due {dates.fmt_day(pay_by)} ({quoted})." + (f" {more}" if more else ""),
            f"a bill from {name_only(sender)}: {amount.group(0)}, {when.stated(tz)}",
        )
    renews = RENEWAL_RE.search(blob)
    if re.search(r"\b(?:please|kindly|bitte)\s+(?:renew|verlänger)", blob, re.I):
        return None  # "please renew your library card by 30 April": an ask, read as one (asks.py)
    if renews and not RENEWED_RE.search(blob):
        when = _renews_on(blob, now, tz, sent_at(payload, now, tz)) or _date_to_act_by(
            blob, now, tz, sent_at(payload, now, tz)
        )
        named = _name_before(subject, RENEWABLE_RE)
        named = named if named and named[0] else (_name_before(text, RENEWABLE_RE) or named)
        if when is None or named is None:
            return None
        thing = " ".join(filter(None, named))
        act_by = dates.local_date(when.value, tz)
        # "to cancel, let us know by 31 January": the last day to decide comes before the renewal itself
        notice = _notice_by(blob, now, tz, sent_at(payload, now, tz))
        lead = RENEWAL_LEAD_DAYS
        if notice is not None and dates.local_date(notice.value, tz) < act_by:
            act_by, lead, when = dates.local_date(notice.value, tz), 1, notice
        expires = renews.group(0).lower().startswith(("expir", "run", "abl", "ausl", "läuft", "laeuft", "ungültig"))
        if SIGN_RE.search(blob) and named[1] in SIGNED_THINGS and not expires:
            title = f"Sign {thing} renewal"
            notes = f"To sign by {dates.fmt_day(act_by)} ({quoted}, from {sender})."
        else:
            title = f"Renew {thing}" if expires else f"Review {thing} renewal"
            notes = f"It {'expires' if expires else 'renews'} {dates.fmt_day(act_by)} ({quoted}, from {sender})." + (
                "" if expires else " Compare offers or cancel before then if it is no longer worth it."
            )
        return Due(
            title,
            _due(act_by, lead, today),
            notes,
            f"a renewal notice from {name_only(sender)}: {thing}, {when.stated(tz)}",
        )
    return None
