"""A mail's point: the first sentence that says something, as a heads-up quotes it.

The text is the buffer row's (channels/email/parse.py describe): an "Email from …: subject" line, the
channel's own lines ("Sent …", "In folder …", "Bulk mail …", "Attached: …"), then the body. None of those
is what the sender says, and neither is a forwarded header ("From: …", "Date: …"), a line that is only a
date or a place and a date, a greeting ("Dear parents,", "Hi!"), a pleasantry ("I hope you are well.")
or a signature ("Kind regards"). What is left, sentence by sentence, starts with the point.
"""

from __future__ import annotations

import re

from wilson.kernel.lazy_regex import lazy_regex

# the lines the email channel writes around a body (channels/email/parse.py describe)
CHANNEL_LINE = lazy_regex(
    r"^(?:Email from .*|Sent \w{3} \d{2} \w{3} \d{4} \d{2}:\d{2}|In folder .*|"
    r"A reply in the thread .*|Bulk mail \(.*\)|A large message \(.*|Attached: .*|"
    r"\(no readable text\))$"
)
HEADER_LINE = lazy_regex(r"^(?:from|to|cc|bcc|date|sent|subject|betreff|von|an|datum|reply-to)\s*:", re.IGNORECASE)
_MONTH = (
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?|januar|februar|märz|mai|juni|juli|"
    r"oktober|dezember"
)
# "6 December 2026", "Berlin, 06.12.2026", "Sunday, 6 Dec 2026 07:00", "2026-12-06": a date and no more
DATE_LINE = lazy_regex(
    rf"^(?:[A-ZÀ-Ý][\w .-]{{0,30}},\s*)?(?:(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?,?\s*)?"
    rf"(?:\d{{1,2}}(?:st|nd|rd|th)?\.?\s*(?:{_MONTH})\s*,?\s*\d{{2,4}}|(?:{_MONTH})\s+\d{{1,2}}"
    rf"(?:st|nd|rd|th)?,?\s*\d{{2,4}}|\d{{1,2}}[./-]\d{{1,2}}[./-]\d{{2,4}}|\d{{4}}-\d{{2}}-\d{{2}})"
    rf"(?:,?\s*(?:at\s*)?\d{{1,2}}[:.]\d{{2}})?\.?$",
    re.IGNORECASE,
)
GREETING = lazy_regex(
    r"^(?:(?:dear|hi|hello|hey|hiya|good (?:morning|afternoon|evening)|greetings|"
    r"hallo|liebe[rs]?|sehr geehrte[rs]?|guten tag|moin|servus|bonjour|salut|hola|ciao|olá|ola|"
    r"hej|buongiorno|an alle|to all|attention all|achtung an alle|guten (?:morgen|abend)|grüß gott|"
    # "Dear residents of Gubener Str. 14,": an abbreviation's dot does not end the greeting
    r"grüezi|hallo zusammen)\b(?:[^,!:.\n]|(?<=\b(?:nr|dr|st|mr|ms|no))\.|(?<=\b(?:str|mrs))\.|(?<=\bprof)\.){0,60}[,!:.]|"
    r"to whom it may concern[,:]?|fyi\b[,:!.]?)\s*",
    re.IGNORECASE,
)
PLEASANTRY = lazy_regex(
    r"^(?:i hope (?:this|you|all|that)\b|hope (?:this|you|all)\b|i trust (?:this|you)\b|"
    r"thanks? (?:you )?(?:so much |very much )?for (?:your|the) "
    r"(?:e-?mail|message|note|patience)\b|"
    r"(?:this is an? (?:automated|automatic) (?:message|e-?mail|notification))|"
    r"please do not reply to this\b|do not reply to this\b|"
    r"(?:please )?see (?:below|attached|the attached)\b[^.!?]{0,30}[.!]?$|fyi[.!:]?$|"
    r"(?:i am|i'm|we are|we're) (?:writing|contacting you|reaching out)(?: to you)?\.?$|"
    # a call for attention before the news: "Are you awake?", "Sorry to wake you"
    r"(?:(?:[A-ZÀ-Ý]\w+, )?(?:are you (?:awake|there|up|around|home|at home)|(?:bist du|sind sie) (?:\w+ )?"
    r"(?:wach|da|zu ?hause|daheim))|how are you(?: doing)?|how's it going|"
    r"sorry to (?:bother|wake|disturb) you|sorry (?:for|about) the (?:late )?(?:hour|time)|"
    r"sorry für die (?:späte )?(?:uhrzeit|störung|stunde)|entschuldig\w* (?:die|für die) (?:späte )?"
    r"(?:uhrzeit|störung|stunde))\b[^.!?]{0,20}[?!.]?$)",
    re.IGNORECASE,
)
SIGNATURE = lazy_regex(
    r"^(?:--\s*|(?:best|kind|warm|many thanks|thanks|thank you|cheers|regards|best regards|"
    r"kind regards|yours(?: sincerely| truly| faithfully)?|sincerely|love|xx+|viele grüße|"
    r"mit freundlichen grüßen|lg|vg|bises|cordialement)\b[\w ,!.]{0,30})$",
    re.IGNORECASE,
)
END = lazy_regex(r"[.!?]+(?=\s|$)")
# a full stop after these ends no sentence ("St. Georg hospital", "Dr. Sommer", "e.g. a form")
ABBREVIATION = lazy_regex(
    r"(?:\b(?:st|dr|mr|mrs|ms|prof|no|nr|ca|approx|incl|excl|ref|tel|str|vs|etc|e\.g|i\.e|"
    r"z\.b|bzw|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)|\b[A-Z])$",
    re.IGNORECASE,
)


# "bis zum 28. Februar": a day's dot before its month ends no sentence
DAY_BEFORE = lazy_regex(r"\b\d{1,2}$")
MONTH_AFTER = lazy_regex(
    rf"\s+(?:{_MONTH}|april|august)\b|\s+(?:bis|und|-|–)\s+\d{{1,2}}\.", re.IGNORECASE
)  # "vom 3. bis 10."


def sentences(line: str) -> list[str]:
    """A line's sentences, each whole ("Please pay 12.50 EUR by 3 Jan." and "Dad is in St. Georg." stay one)."""
    found, start = [], 0
    for end in END.finditer(line):
        if end.group(0) == "." and (
            ABBREVIATION.search(line[start : end.start()])
            or (DAY_BEFORE.search(line[start : end.start()]) and MONTH_AFTER.match(line, end.end()))
        ):
            continue
        found.append(line[start : end.end()].strip())
        start = end.end()
    found.append(line[start:].strip())
    return [s for s in found if s]


def without_date_lines(text: str) -> str:
    """The text without the lines that are only a date ("Berlin, 19 January 2027"): a letter's own date says
    when it was written, not when anything happens."""
    return "\n".join(line for line in (text or "").split("\n") if not DATE_LINE.match(" ".join(line.split())))


def body_lines(text: str, subjects: set[str] = frozenset()) -> list[str]:
    """The paragraphs the sender wrote, each on one line (a mail's lines are often wrapped mid-sentence), without
    the channel's lines, a header, a date line, a bare subject, or a signature and what follows it."""
    kept: list[str] = []
    joining = listed = False
    for raw in (text or "").splitlines():
        line = " ".join(raw.split()).replace("“", '"').replace("”", '"')
        low = line.lower()
        if not line:
            joining = False
            continue
        # a list's items are each their own line, and so is the sentence after the list
        item = bool(LIST_ITEM.match(line))
        if item or listed:
            joining = False
        listed = item
        if (
            CHANNEL_LINE.match(line)
            or HEADER_LINE.match(line)
            or DATE_LINE.match(line)
            or low in subjects
            or any(s and low.endswith(": " + s) for s in subjects)
        ):
            joining = False
            continue
        if SIGNATURE.match(line) and kept:
            break  # what follows a sign-off is a name, a title, a phone number
        if joining and not GREETING.fullmatch(kept[-1]):
            kept[-1] = f"{kept[-1]} {line}"
        else:
            kept.append(line)
        joining = True
    return kept


LIST_ITEM = lazy_regex(r"^(?:[-•*–·]|\d{1,2}[.)])\s")
LEAD_IN_CHARS = 60  # "URGENT to all tenants of Boxhagener Str. 54:": a line this short ending in a colon leads in


def said_sentences(text: str, subjects: set[str] = frozenset()) -> list[str]:
    """The sentences of a mail that say something, in order: no greeting, pleasantry, signature or date line; a
    short lead-in ending in a colon is joined to the sentence it introduces."""
    found, lead = [], ""
    for line in body_lines(text, {s.lower() for s in subjects if s}):
        for sentence in sentences(line):
            # "Sehr geehrte Steuerzahlerin, sehr geehrter Steuerzahler,": a greeting may name two
            rest = GREETING.sub("", GREETING.sub("", sentence, count=1).strip(), count=1).strip()
            if not rest or PLEASANTRY.match(rest) or SIGNATURE.fullmatch(rest) or DATE_LINE.match(rest):
                continue
            if rest.endswith(":") and len(rest) <= LEAD_IN_CHARS:
                lead = f"{lead} {rest}".strip()
                continue
            said = f"{lead} {rest}" if lead else rest
            lead = ""
            found.append(said[:1].upper() + said[1:])
    return found + ([lead[:1].upper() + lead[1:]] if lead else [])


def point(text: str, subjects: set[str] = frozenset()) -> str:
    """The first sentence of a mail that says something (`subjects`, lower case: lines that only repeat the
    subject are not it); "" when there is none."""
    found = said_sentences(text, subjects)
    return found[0] if found else ""


# what the sender asks the reader to do: "Please leave the building now", "Bitte holen Sie Ihr Kind ab"
ASK = lazy_regex(
    # asked as a question too: "Can you tell me by Friday if you're coming?", "Kannst du mir bis Freitag sagen …"
    r"^(?:(?:hey|hi|so|and|also|oh)[\s,]+)?(?:can|could|would|will)\s+(?:you|u)\s+(?:please\s+)?"
    r"(?:tell|let|confirm|send|reply|answer|check|bring|pick|call|give)\b|"
    r"^(?:kannst|könntest)\s+du\s+(?:mir\s+)?(?:bitte\s+)?(?:bis|sagen|bescheid|schicken|bestätigen)\b|"
    r"^(?:please|kindly|bitte|you (?:must|need to|should|have to)|do not|don'?t|make sure|let me know|"
    r"(?:leave|call|stay|keep|turn|shut|open|close|go|come|pick|collect|evacuate|avoid|get|bring)\b)",
    re.IGNORECASE,
)


def ask(text: str, subjects: set[str] = frozenset()) -> str:
    """The first sentence past the point that asks the reader to do something, at its start or after a dash or a
    semicolon ("Unser Schlüsseldepot ist leer – bitte kommen Sie …"); "" when none does."""
    return next(
        (s for s in said_sentences(text, subjects)[1:] if any(ASK.match(part) for part in _CLAUSES_RE.split(s))), ""
    )


_CLAUSES_RE = lazy_regex(r"\s+[–—-]\s+|\s*;\s*")
