"""What a sender wrote, as a heads-up quotes it: the mail's point (point.py) past the summary, cut at a word,
and never a sentence that carries an address (a phishing mail's "verify at …" is not passed on)."""

from __future__ import annotations

import re

from wilson.model.offline.point import ask, point, said_sentences
from wilson.kernel.lazy_regex import lazy_regex

OPENING_CHARS = 160  # of what a sender wrote, quoted in a heads-up
# an address in a stranger's words (a link, a site, a mail address): never relayed as something to act on
ADDRESS = lazy_regex(r"https?://|\bwww\.|\b[\w-]+\.[a-z]{2,}(?:/|\b)|@", re.I)


def opening(text: str, subjects: set[str]) -> str:
    """The mail's point, past the summary on the first line (the channel's lines, a greeting or a date line are
    not it); cut at a word within OPENING_CHARS. Empty when the item has nothing but its subject, or when that
    sentence holds an address: a phishing mail's "verify at …" is not passed on."""
    said = point("\n".join(text.splitlines()[1:]), subjects)
    if not said or ADDRESS.search(said):
        return ""
    return shortened(said)


# where a long sentence's clauses meet; what comes after is what it leads to ("…, so we have to move it to 13:30")
CLAUSE = lazy_regex(r",\s+(?:so|and so|which is why|that is why|therefore|but|however)\s+|;\s+|\s+[–—-]\s+", re.I)


def shortened(said: str, chars: int = OPENING_CHARS) -> str:
    """A sentence within `chars`: without its asides in brackets, else its last clause that says what follows
    from the rest, else cut at a word."""
    if len(said) <= chars:
        return said
    said = re.sub(r"\s*\([^()]{0,80}\)", "", said)
    if len(said) <= chars:
        return said
    for found in CLAUSE.finditer(said):
        rest = said[found.end() :]
        if 20 <= len(rest) <= chars:
            return rest[:1].upper() + rest[1:]
    return said[:chars].rsplit(" ", 1)[0] + "…"


def asked_of(text: str, subjects: set[str]) -> str:
    """What the sender asks the reader to do, past the point ("Please leave the building now, …"), shortened;
    "" when nothing is asked or the sentence holds an address."""
    said = ask("\n".join(text.splitlines()[1:]), subjects)
    return "" if not said or ADDRESS.search(said) else shortened(said)


_WHEN = lazy_regex(
    r"\b\d{1,2}[:.]\d{2}\b|\b\d{1,2}\s*(?:am|pm|uhr)\b|\b\d{1,2}(?:st|nd|rd|th)?\.?\s+(?:jan|feb|mar|apr|may|"
    r"jun|jul|aug|sep|oct|nov|dec|januar|februar|märz|mai|juni|juli|oktober|dezember)\w*",
    re.I,
)


def change_of(text: str, subjects: set[str], said: str, change: re.Pattern) -> str:
    """When the quoted point (`said`) gives no time or date, the later sentence that says what changed and when
    ("Your appointment on Tuesday has been moved to 11:30."), shortened; "" when none does or it holds an address."""
    if _WHEN.search(said):
        return ""
    for sentence in said_sentences("\n".join(text.splitlines()[1:]), subjects)[1:]:
        if _WHEN.search(sentence) and change.search(sentence) and not ADDRESS.search(sentence):
            return shortened(sentence)
    return ""


# what replaces what was cancelled or moved: "We have rebooked you on VC 3156 at 13:10", "Der Unterricht beginnt um 10:00"
_INSTEAD = lazy_regex(
    r"\b(?:rebook\w*|re-?book\w*|instead|replacement|alternative|new (?:time|date|flight|train|slot|"
    r"appointment)|moved to|now (?:at|on|starts?|begins?)|starts? (?:later|at)|begins? (?:later|at)|"
    r"will (?:start|begin|open|leave|depart)|departing|umgebucht|stattdessen|ersatz\w*|neue[rn]? "
    r"(?:termin|uhrzeit|zeit)|verschoben auf|beginnt (?:erst )?um|öffnet (?:erst )?um|erst um|"
    r"kommen sie|please (?:come|arrive)|new (?:departure|arrival|gate|platform)|neue[rs]? "
    r"(?:abfahrt|gleis|gate)|rescheduled to|"
    # when the thing delayed can be had: "Sie können ihn morgen ab 16:00 Uhr abholen", "you can collect it at 17:00"
    r"(?:(?:können|kannst) (?:sie|du)|(?:sie|du) (?:können|kannst)) (?:ihn|sie|es|das \w+|den \w+|die \w+)\b"
    r"[^.!?\n]{0,40}\b(?:abholen|holen)|"
    r"(?:can|could) (?:pick|collect) (?:it|him|her|them|your \w+)|ready (?:for (?:pick-?up|collection) )?(?:from|at|on|"
    r"tomorrow)|abholbereit|now (?:departs|leaves|arrives|takes place)|neuer termin)\b",
    re.I,
)


def instead_of(text: str, subjects: set[str], said: str) -> str:
    """After a point that says something was cancelled, moved or closed, the later sentence that says what replaces
    it and when ("We have rebooked you on flight VC 3156, departing today at 13:10."), shortened; "" when none does
    or it holds an address."""
    for sentence in said_sentences("\n".join(text.splitlines()[1:]), subjects)[1:]:
        if (
            _WHEN.search(sentence)
            and _INSTEAD.search(sentence)
            and not ADDRESS.search(sentence)
            and sentence.lower() not in said.lower()
        ):
            return shortened(sentence)
    return ""


def says_when(said: str) -> bool:
    """The sentence gives a time or a date ("at 17:15", "9. März")."""
    return bool(_WHEN.search(said))


# where an ambulance or the police took someone: "Der Rettungswagen bringt sie ins Vivantes Klinikum Neukölln"
_TAKEN = lazy_regex(
    r"\b(?:hospital|clinic|a&e|emergency (?:room|department)|klinik\w*|krankenhaus|notaufnahme|spital|"
    r"police station|polizeiwache|revier)\b",
    re.I,
)


def taken_to(text: str, subjects: set[str]) -> str:
    """In an emergency, the later sentence that names the hospital or station someone was taken to, shortened; ""
    when none does or it holds an address."""
    for sentence in said_sentences("\n".join(text.splitlines()[1:]), subjects)[1:]:
        if _TAKEN.search(sentence) and not ADDRESS.search(sentence):
            return shortened(sentence)
    return ""
