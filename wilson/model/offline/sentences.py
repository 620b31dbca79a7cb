"""A message cut into its sentences, as a person reads it: a line break, or a stop (".", "!", "?") before the next
sentence's capital, ends one; the stop of an abbreviation ("Mr.", "Dr.", "e.g.", "Jan."), a decimal ("120.00") or
an initial ("J. Smith") does not. A letter's salutation and its closing ("Dear Ms Weber,", "Kind regards, Sam")
are no sentences of what it says.
"""

from __future__ import annotations

import re
from functools import lru_cache

from wilson.kernel.lazy_regex import lazy_regex

_ABBREVIATIONS = frozenset(
    """mr mrs ms dr prof st mt no nr vs etc eg ie approx appt dept est inc ltd co jr sr
jan feb mar apr jun jul aug sep sept oct nov dec mon tue tues wed thu thur thurs fri sat sun ca tel p.s ps""".split()
)
_END = lazy_regex(
    r"(?<=[.!?])[\"'”’)]*\s+(?=[\"'“‘(]?[A-Z0-9ÀÖØ-Þ])"
    # a request joined to another by a comma: "remind me to call Tom at 5, and add buy stamps"
    r"|(?<=\w)\s*[,;]\s*(?i:and\s+)?(?i:also\s+)?(?=(?i:add|remind me|don'?t forget)\b)"
    r"|(?<=[.!?])\s+(?=(?i:add|remind me|don'?t forget)\b)"
)  # "add milk. add bread." typed in lower case
_SALUTATION = lazy_regex(r"^\s*(?:dear|hi|hello|hey|to whom it may concern)\b[^.!?\n]{0,60}[,:!]?\s*$", re.I)
_CLOSING = lazy_regex(
    r"^\s*(?:(?:kind|best|warm|many)\s+(?:regards|wishes|thanks)|regards|best|cheers|thanks|"
    r"thank you|sincerely|yours(?:\s+(?:sincerely|faithfully|truly))?|mit freundlichen grüßen|"
    r"love|xx+)\b[\s,!.]*(?:[A-Z][\w.-]*(?:[\s,]+[A-Z][\w.-]*){0,5})?[\s.,!]*$",
    re.I,
)


_MONTH_NEXT_RE = lazy_regex(
    r"(?:januar|jänner|februar|märz|april|mai|juni|juli|august|september|oktober|november|dezember|"
    r"jan|feb|febr|mär|mrz|apr|jun|jul|aug|sep|sept|okt|nov|dez)\b\.?",
    re.I,
)


def split(text: str) -> list[str]:
    """The sentences of `text`, in order, stripped; a salutation and a closing left out."""
    return list(_split(text))  # a list of its own: a caller may change it


@lru_cache(maxsize=64)  # the rules split the same message several times
def _split(text: str) -> tuple[str, ...]:
    sentences: list[str] = []
    for line in (text or "").splitlines():
        start = 0
        for end in _END.finditer(line):
            before = line[start : end.start()].rstrip("\"'”’)")
            last = re.search(r"([\w.]+)[.]$", before)
            if last and (
                last.group(1).lower().rstrip(".") in _ABBREVIATIONS
                or len(last.group(1)) == 1
                and last.group(1).isalpha()
            ):
                continue  # "Mr. Schulz", "J. Smith": the stop belongs to the word
            if last and last.group(1).isdigit() and _MONTH_NEXT_RE.match(line, end.end()):
                continue  # "bis zum 15. Februar": a German day of the month
            sentences.append(line[start : end.start()])
            start = end.end()
        sentences.append(line[start:])
    kept = [s.strip() for s in sentences if s.strip()]
    return tuple([s for s in kept if not _SALUTATION.match(s) and not _CLOSING.match(s)] or kept)


# "Dear parents, please return …", "Hi Sam, could you …": a letter's salutation before its first sentence;
# "… Thank you, Ms Becker", "… Regards, City Library": its closing after the last
_OPENING = lazy_regex(
    r"^\s*(?:dear|hi|hello|hey|to whom it may concern|sehr geehrte[rs]?|liebe[rs]?|hallo|guten tag)\b[^,.!?\n]{0,40},"
    r"\s*(?=\S)",
    re.I,
)
# (a closing is signed: "add pay rent by Friday, thanks" is no letter)
_SIGNED = lazy_regex(
    r"[.!?,]\s*(?i:(?:vielen\s+dank|many\s+thanks|thank\s+you|thanks)\s+(?:und|and)\s+)?"
    r"(?i:(?:kind|best|warm|many)\s+(?:regards|wishes|thanks)|regards|best|cheers|thanks|"
    r"thank you|sincerely|yours(?:\s+(?:sincerely|faithfully|truly))?|mit freundlichen grüßen|"
    r"(?:viele|liebe|beste|herzliche|freundliche)\s+grüße)"
    # the signature's names, with the small words of a German one ("Sekretariat Grundschule am Weinberg")
    r"\b[\s,!.]*[A-Z][\w.'-]*(?:[\s,]+(?:(?:am|an|der|die|des|von|und|für|im|zum|of|the|and)\s+)?[A-Z0-9][\w.'-]*){0,5}"
    r"[\s.,!]*$"
)


def letter_body(text: str) -> tuple[str, bool]:
    """A pasted letter's words without its salutation and closing, and whether it is one (then its requests are the
    sender's, asked of the user): opened with "Dear …" or signed. "Hello, can you call the bank?" is a chat line."""
    opened = _OPENING.match(text or "")
    body = _OPENING.sub("", text or "", count=1)
    signed = _SIGNED.search(body)
    if signed and body[: signed.start()].strip():
        body = body[: signed.start()] + (body[signed.start()] if body[signed.start()] in ".!?" else "")
    body = body.strip()
    letter = bool(signed) or bool(
        opened
        and re.match(
            r"\s*(?:dear|to whom|sehr geehrte|liebe[rs]?\s+(?:eltern|kunde|kundin|mieter))", opened.group(0), re.I
        )
    )
    return (body, True) if letter and body else (text, False)
