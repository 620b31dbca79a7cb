"""A stay away told in words, without a playbook word: "I'm going to Japan on March 20 for two weeks",
"we'll be in Lisbon from the 3rd", "spending Christmas in Rome from Dec 20", "visiting Portugal next month".

Only the user's own going counts (said by "I" or "we", or with no one named: "Anna is going to Rome" is
Anna's trip), only a statement (not "Should I go to Paris?"), and only a place named whole: a city or a
country after "to" or "in" ("Paris Hilton's party" and "China Garden" are no places), a country alone
after "visit" ("visiting Anna" names a person). Pure: reads text, writes nothing.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from wilson.model.offline import places
from wilson.kernel.lazy_regex import lazy_regex

# who goes, then the verb: "I'm going", "we'll be", "I am heading", or the verb first ("Off to Japan on …")
_GOING_RE = lazy_regex(
    # at a sentence's start too: "just booked it!!! going home to Accra …"
    r"(?:^|(?<=[.!?]\s)|\b(?i:i|we|ich|wir)(?i:'m|'re|'ll|’m|’re|’ll|\s+am|\s+are|\s+will|\s+shall)?\s+"
    r"(?i:(?:have|need|got|'ve got)\s+to\s+|must\s+)?)"
    r"(?i:(?:also|then|finally|probably|really)\s+)?(?i:will\s+)?"
    r"(?P<verb>(?i:going\s+to\s+be|going|go|heading|head|off|be|visiting|visit|spending|spend|"
    r"taking|driving|travell?ing|travel|booked|booking|flying|fly|flies|taking a trip|"
    # in German: "ich fliege am 12. Februar nach Tallinn", "wir fahren nach Wien"
    r"fliege|fliegen|fahre|fahren|reise|reisen|"
    # "bin vom 15. bis 18. November auf der MEDICA in Düsseldorf": where the user will be, said in German
    r"(?<![\w-])(?-i:bin|sind)(?=\s+(?i:vom|von|am|ab|nächste|diese|im|über|in|auf|zur|zum)\b)))"
    r"(?i:\s+back)?\b"
)
_NAME = r"[A-Z][\w'’.-]*(?:\s+[A-Z][\w'’.-]*){0,2}"
# where, after the verb: "to Japan", "in Lisbon", "two weeks in Portugal", "Christmas in Rome", or a name alone
_WHERE_RE = lazy_regex(
    # up to nine words between: "vom 3. bis 5. März zur embedded world nach Nürnberg"
    rf"\s+(?:(?:[\w'’.-]+\s+){{0,9}}?(?i:to|in|nach)\s+(?P<at>{_NAME}|[a-z]+(?:\s+[a-z]+)?)"
    rf"|(?P<alone>{_NAME}))(?P<possessive>['’]s\b)?"
)
# countries whose names are also words ("turkey for dinner", "chad's place"): never read in lower case
_ALSO_WORDS = {
    "turkey",
    "chad",
    "jordan",
    "georgia",
    "china",
    "chile",
    "guinea",
    "jersey",
    "niger",
    "togo",
    "cuba",
    "malta",
    "monaco",
    "oman",
    "peru",
    "israel",
}
_QUESTION_RE = lazy_regex(
    r"^\s*(?:should|shall|can|could|would|will|do|does|did|is|are|why|how|what|when|where|"
    r"which|who)\b",
    re.I,
)

# where the named thing one goes to is: "to Embedded World in Nuremberg"
_EVENT_THERE_RE = lazy_regex(rf"\s+(?i:in|at)\s+(?P<at>{_NAME})")
# sent by work is going: "my company is sending me to Tokyo", "the office sends us to Lyon"
SENT_RE = lazy_regex(
    r"^.*?\b(?:is|are|'s|’s|will\s+be|has|have)?\s*(?:sending|sends|will\s+send)\s+(?P<who>me|us)\b(?=\s+(?:off\s+)?to\b)",
    re.I,
)
# How long, not when: "for two weeks" is never a trip's start ("spending two weeks in Portugal from June 1")
HOW_LONG_RE = lazy_regex(
    r"^(?:for\s+)?(?:a|an|one|two|three|four|five|six|a few|\d+)\s+"
    r"(?:days?|nights?|weeks?|months?)\b",
    re.I,
)
_STAY_RE = lazy_regex(
    r"\bfor\s+(?P<n>a|an|one|two|three|four|five|six|\d{1,3})\s+(?P<unit>day|night|week|month)s?\b", re.I
)
_COUNTS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
# the last day: three days from the 20th end on the 22nd; three nights, two weeks or a month count nights
_LAST_DAY = {"day": lambda n: n - 1, "night": lambda n: n, "week": lambda n: 7 * n, "month": lambda n: 30 * n}


def _sent_to_event(text: str) -> bool:
    sent = SENT_RE.search(text)
    if sent is None:
        return False
    where = re.match(rf"\s+to\s+(?:the\s+)?(?P<name>{_NAME})", text[sent.end() :])
    return (
        where is not None
        and _named(where.group("name")) is None
        and _EVENT_THERE_RE.match(text, sent.end() + where.end()) is not None
    )


# in German, going "zur embedded world nach Nürnberg": a named thing, then the place it is in
_ZUR_EVENT_RE = lazy_regex(
    r"\b(?i:zur|zum|auf\s+der|auf\s+dem)\s+(?P<name>(?:[\w'’.-]+\s+){1,4}?)(?i:nach|in)\s+(?P<at>[A-Z][\w'’.-]*)"
)


# "zur Oma nach Köln", "zur Hochzeit nach Lyon": a person or a private occasion, no fair
_PRIVATE_RE = lazy_regex(
    r"(?i:(?:meine[rm]?\s+|unsere[rm]?\s+)?(?:oma|opa|mama|papa|mutter|vater|eltern|familie|schwester|bruder|tante|"
    r"onkel|freund\w*|cousin\w*|kindern?|tochter|sohn|schwieger\w*|hochzeit|trauung|beerdigung|geburtstag\w*|party|"
    r"feier\w*|taufe|arzt|ärztin|zahnarzt|kur|reha|arbeit|schule|uni)\b)"
)


def sent_to_event(text: str) -> bool:
    """Work sends the user to a named thing in a place ("the company is sending me to Embedded World in
    Nuremberg"), or the user goes to one ("Ich fahre … zur embedded world nach Nürnberg"): a fair or a
    conference there, not a holiday."""
    said = _ZUR_EVENT_RE.search(text)
    if said is not None and not _PRIVATE_RE.match(said.group("name")) and _named(said.group("name").strip()) is None:
        return _named(said.group("at")) is not None
    return _sent_to_event(text)


def place_gone_to(text: str, home: places.Place | None) -> places.Place | None:
    """The place away from home the user says they are going to, or None."""
    if text.rstrip().endswith("?") or _QUESTION_RE.match(text):
        return None
    text = SENT_RE.sub(lambda m: "we are going" if m.group("who").lower() == "us" else "I am going", text, count=1)
    for going in _GOING_RE.finditer(text):
        where = _WHERE_RE.match(text, going.end())
        if where is None or where.group("possessive"):  # "Paris Hilton's party", "chad's place"
            continue
        if where.group("at"):
            place = _named(where.group("at"), lower_case_ok=text == text.lower())
            there = None if place is not None else _EVENT_THERE_RE.match(text, where.end())
            if there is not None:  # "to Embedded World in Nuremberg": an event, in a place
                place = _named(there.group("at"))
        elif going.group("verb").lower().startswith("visit"):
            place = _named(where.group("alone"), countries_only=True)  # "visiting Anna" is a person
        else:
            place = None
        if place is not None:
            # with no home known (a timezone of UTC), saying one goes there is what tells it is away
            return place if home is None or places.away(place, home) else None
    return None


def _named(name: str, countries_only: bool = False, lower_case_ok: bool = False) -> places.Place | None:
    """A city or country named whole ("Lisbon", "South Korea"), never a possessive ("Paris Hilton's"); in a
    message written all in lower case, a country too ("japan on": as far as the words name one), unless its
    name is also a word ("turkey", "china"), or a city of half a million or more ("copenhagen for")."""
    name = name.strip(" .")
    if re.search(r"['’]s$", name):
        return None
    if name[:1].islower():
        if not lower_case_ok:
            return None
        words = name.split()
        for size in range(len(words), 0, -1):
            candidate = " ".join(words[:size])
            if candidate not in _ALSO_WORDS and places.country(candidate):
                return places.country(candidate) if size == len(words) or words[size] in _FOLLOWING else None
        for size in range(len(words), 0, -1):  # a big city, as far as the words name one ("copenhagen for")
            city = places.big_city(" ".join(words[:size]))
            if city is not None and (size == len(words) or words[size] in _FOLLOWING):
                return city
        return None
    return places.country(name) if countries_only else places.named(name)


# the words that may follow a lower-case country ("japan on march 20", "japan for two weeks", "japan next week")
_FOLLOWING = {
    "on",
    "in",
    "for",
    "from",
    "next",
    "this",
    "at",
    "by",
    "until",
    "till",
    "tomorrow",
    "today",
    "tonight",
    "and",
    "with",
    "over",
    "during",
    "after",
    "before",
    "soon",
    "again",
}


def stay_end(text: str, start_day: date) -> str | None:
    """ "for two weeks" after a start → the trip's last day, ISO; None when the message says not how long."""
    found = _STAY_RE.search(text)
    if found is None:
        return None
    n = found.group("n").lower()
    count = int(n) if n.isdigit() else _COUNTS[n]
    days = _LAST_DAY[found.group("unit").lower()](count)
    return (start_day + timedelta(days=days)).isoformat() if 0 < days < 1000 else None


# "we're going to Rhodes … 30 march to 8 april", "ski week in Saalbach with the kids 1-6 feb": a stay of days at a
# place named whole that the gazetteer does not know (an island, a ski village)
_STAY_AT_RE = lazy_regex(
    rf"\b(?:(?i:going|go|off|heading|flying|fly|driving|travell?ing)\s+to|(?i:week|weekend|holidays?|hols|vacation|"
    rf"trip|skiing|stay|urlaub|ferien)\s+(?i:in|on|at)"
    # in German: "eine Woche nach Warnemünde", "ein paar Tage an die Ostsee nach Zingst", "fahren nach Usedom"
    rf"|(?i:woche|wochenende|tage|urlaub|fahren|fahre|reisen|reise|fliegen|fliege)\s+(?:[\wäöü]+\s+){{0,3}}?(?i:nach))"
    rf"\s+(?P<at>{_NAME})"
)
# a span of days: "30 march to 8 april", "1-6 feb", "vom 15. bis 18. November", "from the 3rd to the 9th"
_DAYS_SPAN_RE = lazy_regex(
    r"\b\d{1,2}(?:st|nd|rd|th|\.)?\s*(?:[a-zäöü]+\s*)?(?:[-–]|to|till|until|bis)\s*\d{1,2}(?:st|nd|rd|th|\.)?\s*[a-zäöü]{3,}",
    re.I,
)


_STAY_WORDS_RE = lazy_regex(
    r"\bfor\s+(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fourteen|\d{1,2})\s+"
    r"(?:days?|nights?|weeks?)\b",
    re.I,
)


# what German "nach" means "after" before: a feast, a day, a deed
_AFTER_NOT_TO = frozenset(
    {"ostern", "weihnachten", "pfingsten", "silvester", "neujahr", "karneval", "fasching", "feierabend", "abgabe",
     "abschluss", "ende", "anfang", "beginn", "schulschluss", "dienstschluss", "rückkehr", "ankunft", "absprache"}
)  # fmt: skip


def unknown_place_stayed(text: str) -> places.Place | None:
    """A place the gazetteer does not know, stayed at for a span of days the text gives ("we're going to Rhodes,
    30 march to 8 april"); its country unknown. None for a known place (place_gone_to reads those), a question, or
    no span of days."""
    if text.rstrip().endswith("?") or _QUESTION_RE.match(text):
        return None
    if not (_DAYS_SPAN_RE.search(text) or _STAY_RE.search(text) or _STAY_WORDS_RE.search(text)):
        return None  # "for ten days", "1-6 feb": a stay; a place alone may be a shop ("going to IKEA")
    found = _STAY_AT_RE.search(text)
    if found is None:
        return None
    name = re.split(r"(?<=\w{3})\.\s", found.group("at").strip())[0]  # "Warnemünde. Er sitzt …": the sentence ends it
    if name.split()[0].lower() in _AFTER_NOT_TO or re.match(r"\S+\s+(?:der|des|dem)\b", name):
        return None  # "eine Woche nach Ostern", "zwei Tage nach Abgabe der Arbeit": "nach" is "after" there
    if places.find_place(name) is not None or name.split()[0].lower() in ("the", "my", "our"):
        return None
    return places.Place(name, "")
