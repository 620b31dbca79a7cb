"""What a task made from a mail quotes of it, so the user can act without opening the mail again: its point, the
sentence that says when (when the point does not), and the sentence that asks. "Please pick it up by 12 March:
Technisches Rathaus, room 112" says where; "the schedule of your flight changed" needs the next sentence's
"now departs at 06:50".

A clause holding an address (a link, a site, a mail address) is cut off: a stranger's link is never relayed as
something to act on.
"""

from __future__ import annotations

import re

from wilson.model.offline.opening import ADDRESS, says_when, shortened
from wilson.model.offline.point import ASK, said_sentences
from wilson.kernel.lazy_regex import lazy_regex

# a sentence that says what the sender still needs
NEEDED = lazy_regex(
    r"\b(?:we|i) (?:still |also )?(?:need|require)\b|\b(?:is|are) (?:still )?missing\b|\bbenötigen wir\b|"
    r"\bbrauchen wir\b|\bfehl(?:t|en) (?:uns )?noch\b|\bwir benötigen\b|\bwir brauchen\b",
    re.I,
)
# a request put as a question: "Könnten Sie in der Zeit unsere Tomaten gießen?"
ASKED = lazy_regex(
    r"^(?:could|can|would|will) you\b.*\?$|^(?:könnten|können|würden) sie\b.*\?$|^(?:kannst|könntest|würdest) du\b.*\?$",
    re.I,
)
# the point says what will not happen as planned: the sentence after it that says when is what happens instead ("…
# leider nicht wie üblich um 6:00 Uhr bringen." "Wir kommen voraussichtlich gegen 10:30 Uhr.")
NOT_AS_PLANNED = lazy_regex(
    r"\b(?:leider nicht|nicht wie (?:üblich|geplant|vereinbart)|nicht (?:mehr )?(?:stattfinden|möglich)|can'?t|cannot|"
    r"won'?t be able|unable to|no longer|not as (?:planned|usual|scheduled)|fällt\s+(?:\w+\s+){0,2}aus|entfällt|"
    r"(?:is|has been)\s+cancell?ed|(?:wurde|ist)\s+abgesagt)\b",
    re.I,
)
# the other way on offer: "Alternativ können Sie die Ware ab 5:30 Uhr selbst abholen", "Alternatively, you can …"
CHOICE = lazy_regex(r"^(?:alternativ|alternatively|or else|otherwise you can|sie können aber auch)\b", re.I)
QUOTED_CHARS = 160  # of each sentence quoted
MOST = 4  # sentences quoted


def without_address(sentence: str) -> str:
    """The sentence up to the clause that holds an address ("… bis zum 28. Februar mit, im Kundenportal unter
    www…" → "… bis zum 28. Februar mit"); "" when little is left."""
    if not ADDRESS.search(sentence):
        return sentence
    kept = []
    for clause in re.split(r"(?<=[,:;])\s+|\s+[–—-]\s+", sentence):
        if ADDRESS.search(clause):
            break
        kept.append(clause)
    said = " ".join(kept).rstrip(",:;– ")
    return said if len(said) >= 20 else ""


def quotes(text: str, subjects: set[str], asked: str = "") -> str:
    """“point” “when” “ask”: the mail's sentences a task's notes carry (`asked`: words of the ask, such as its date
    phrase, that name the sentence it is in); "" when the mail says nothing past its subject."""
    named = [s.lower() for s in subjects if s]
    lines = (text or "").splitlines()
    if lines and any(lines[0].strip().lower().startswith(s) for s in named):
        lines = lines[1:]  # the summary line a kept item starts with ("Subject (from …)"): not the sender's words
    found = [without_address(s) for s in said_sentences("\n".join(lines), set(named))]
    found = [s for s in found if s]
    if not found:
        return ""
    picked = [found[0]]
    if not says_when(found[0]) or NOT_AS_PLANNED.search(found[0]):
        picked += [s for s in found[1:] if says_when(s)][:1]
    picked += [s for s in found[1:] if NEEDED.search(s) or ASKED.search(s)][:1]  # "We need …", "Could you …?": what
    picked += [s for s in found[1:] if CHOICE.match(s)][:1]  # the other way on offer, when the ask is to choose
    # the sentence with the ask's date, else the first that asks ("Bitte vereinbaren Sie … einen Termin.")
    picked += ([s for s in found if asked and asked.lower() in s.lower()] or [s for s in found[1:] if ASK.match(s)])[:1]
    unique = list(dict.fromkeys(picked))[:MOST]
    return " ".join(f"“{shortened(s, QUOTED_CHARS)}”" for s in unique)
