""" "It" in a request is the thing named just before it: "My residence permit runs out on April 30. Could you put
getting it extended on my list?" asks for getting the residence permit extended, by April 30 (the day said with
the thing is the request's when it says none of its own).

Pure: `with_referent(text, now, tz)` gives the request with the thing in place of "it" (and its day after it), or
None when the text names no thing before a request about "it".
"""

from __future__ import annotations

import re
from datetime import datetime

from wilson.model.offline import dates, formal, payments
from wilson.kernel.lazy_regex import lazy_regex

# the thing told first, with what is happening to it: "my residence permit runs out", "the car's TÜV is due",
# "our lease ends", "my passport expires", "the boiler is broken"
_NAMED_RE = lazy_regex(
    r"^(?:(?:so|ok|okay|btw|fyi|oh|hey|hi|well|also|and)[\s,]+)*"
    r"(?P<thing>(?:my|our|the|his|her|their)\s+(?:[\w’'-]+\s+){0,3}?[\w’'-]+?)\s+"
    r"(?:expires?|will\s+expire|runs?\s+out|(?:is|are)\s+(?:due|up|expiring|running\s+out|broken|valid\s+until)|"
    r"ends?|lapses?|broke|stopped\s+working|needs?\s+\w+ing)\b(?P<rest>[^.;!?]*)",
    re.I,
)
# the thing someone needs of the user, in a sentence of its own: "She needs the receipts for the home office. Can you
# add a task to scan them by the 1st of February?"
_NEEDED_RE = lazy_regex(
    r"\b(?:needs?|wants?|asked\s+(?:me\s+)?for|requires?|is\s+waiting\s+for)\s+"
    r"(?P<thing>(?:the|my|our|his|her|their|some)\s+[^.;!?,]{2,50}?)(?=\s*[.;!?])",
    re.I,
)
# where the telling ends and the request begins: a sentence's end, a comma, or "so" / "and" / "can you" after it
_REQUEST_START_RE = lazy_regex(
    r"\s*(?:[.;!?]+|,|\s-\s|\s(?=so\s|and\s|(?:can|could|would|will)\s+you\s|please\s))\s*(?:(?:so|and)\s+)?", re.I
)
_PUT_IT_ON_RE = lazy_regex(r"^(?:put|set|move|change)\s+(?P<it>it|them)\s+(?:on|to|for)\s+(?=\S)", re.I)
# how the need changed is no part of the thing: "the translation earlier than planned"
_SOONER_RE = lazy_regex(r"\s+(?:earlier|sooner|later)(?:\s+than\s+(?:planned|expected|agreed))?$", re.I)
_IT_RE = lazy_regex(r"\b(?:it|them)\b", re.I)
_NOT_IT_RE = lazy_regex(r"\b(?:it'?s|it\s+is|it\s+was|make\s+it\b|is\s+it)\b", re.I)


def with_referent(text: str, now: datetime, tz) -> str | None:
    """The request after a thing told, with the thing for its "it"; None when there is no such pair."""
    named = _NAMED_RE.match((text or "").strip()) or _NEEDED_RE.search((text or "").strip())
    if named is None:
        return None
    # the thing needed ends its sentence: its stop is where the request begins
    start = _REQUEST_START_RE.search(named.string, named.end("thing") + (named.re.pattern != _NEEDED_RE.pattern))
    if start is None:
        return None
    told, asked = named.string[: start.start()], formal.plain(named.string[start.end() :].strip())
    # "… needs the translation earlier than planned. Could you put it on Monday?": a move of the thing to that day
    asked = _PUT_IT_ON_RE.sub(r"move \g<it> to ", asked)
    if (
        not asked
        or not _IT_RE.search(asked)
        or _NOT_IT_RE.search(asked)
        or asked.rstrip().endswith("?")
        and not (re.match(r"(?:can|could|would|will)\s+you\b", asked, re.I))
    ):
        return None
    thing = _SOONER_RE.sub("", named.group("thing"))
    thing = thing[:1].lower() + thing[1:]  # "My permit …" begins a sentence; in the request it is mid-sentence
    asked = _IT_RE.sub(thing, asked, count=1).rstrip(" ?.!")
    asked = re.sub(r"[\s,]+(?:please|pls|thanks|thank you)$", "", asked, flags=re.I)
    when = dates.search(told, now, tz)
    if when and not dates.search(asked, now, tz):
        phrase = re.sub(r"^(?:on|in|at|by)\s+", "", when[0].phrase.strip(), flags=re.I)
        listed = re.search(r"\s+(?:on|to)\s+(?:my|the|our)\s+(?:[\w-]+\s+)?list$", asked, re.I)
        at = listed.start() if listed else len(asked)  # "put X on my list": the day goes with X
        asked = f"{asked[:at]} by {phrase}{asked[at:]}"
    return asked


# "… amounts to 164.80 EUR for 2027. Please transfer the amount by 1 February": the sum named before
_THE_AMOUNT_RE = lazy_regex(
    r"\b(?:the|this|that)\s+(?:total\s+|full\s+|outstanding\s+)?(?:amount|sum)\b(?!\s+of\b)|"
    # "settle it by 22 January": the sum asked for, by its pronoun
    r"(?:(?<=\bsettle)|(?<=\bpay)|(?<=\btransfer))\s+it\b",
    re.I,
)


def with_amount(text: str) -> str:
    """The text with "the amount" a letter asks to pay read as the sum it named before; as it was otherwise."""
    named = payments.AMOUNT_RE.search(text)
    if named is None:
        return text
    nouns = list(_PAID_FOR_RE.finditer(text[: named.start()]))  # "the annual premium … amounts to 164.80 EUR"
    german = _GERMAN_AMOUNT_RE.search(text, named.end())
    if not nouns and german is None:
        return text  # the sum of nothing named: the rules that read bills read the letter as it is
    if german is not None:  # "Gerichtskosten in Höhe von 143,20 EUR. Bitte überweisen Sie den Betrag …"
        return text[: german.end()] + f" von {named.group(0)}" + text[german.end() :]
    sum_of = f"the {nouns[-1].group('noun').lower()} of {named.group(0)}"
    said = _THE_AMOUNT_RE.sub(lambda m: f" {sum_of}" if m.group(0).startswith(" ") else sum_of, text[named.end() :], 1)
    return text[: named.end()] + said


_PAID_FOR_RE = lazy_regex(
    # "the course fee", "your semester contribution", "our records invoice no. …": a word or two may name it
    r"\b(?:the|your|our|an?)\s+(?:[\w-]+\s+){0,2}?"
    r"(?P<noun>premium|fee|contribution|bill|invoice|"
    r"rent|tax|deposit|fine)\b",
    re.I,
)
_GERMAN_AMOUNT_RE = lazy_regex(r"\bden\s+(?:offenen\s+|gesamten\s+)?betrag\b(?!\s+von\b)", re.I)
