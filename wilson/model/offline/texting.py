"""A message as it was meant, before the rules read it: the shorthand people type on a phone ("tmrw", "pls", "abt",
"can u") and a date word or "remind" mistyped ("wendesday", "tomorow", "remnd") read as the word.

The shorthand is the ordinary texting vocabulary, whole words only. A typo is matched by distance (one edit, two in a
long word: Damerau-Levenshtein) against the few words the rules key on (days, months, "tomorrow",
"tonight", "remind"), never against the user's own words: "Monaco" stays Monaco, "sunday" is already right.
"""

from __future__ import annotations

import re

from wilson.model.offline.edit_distance import distance
from wilson.kernel.lazy_regex import lazy_regex

_SHORTHAND = {
    "tmrw": "tomorrow",
    "tmr": "tomorrow",
    "tmrow": "tomorrow",
    "tmw": "tomorrow",
    "tomoz": "tomorrow",
    "2moro": "tomorrow",
    "2morrow": "tomorrow",
    "2morow": "tomorrow",
    "tonite": "tonight",
    "2nite": "tonight",
    "abt": "about",
    "u": "you",
    "ur": "your",
    "pls": "please",
    "plz": "please",
    "pleas": "please",
    "b4": "before",
    "thurs": "thursday",
    "thur": "thursday",
    "tues": "tuesday",
    "weds": "wednesday",
    "wk": "week",
    "nxt": "next",
    "mins": "minutes",
    "hrs": "hours",
    "thx": "thanks",
    "thanx": "thanks",
    "bday": "birthday",
    "appt": "appointment",
    "cuz": "because",
    "im": "I'm",
    "ive": "I've",
    "dont": "don't",
    "cant": "can't",
    "wont": "won't",
    "didnt": "didn't",
    "nvm": "never mind",
    "asap": "as soon as possible",
    "2day": "today",
    "gonna": "going to",
    "gotta": "got to",
    "wanna": "want to",
    "hafta": "have to",
    "needa": "need to",
    "shld": "should",
    "shd": "should",
    "shoud": "should",
    "prob": "probably",
    "def": "definitely",
    "rly": "really",
    "smth": "something",
    "sth": "something",
    "bc": "because",
    "l8r": "later",
}
# the words the rules key on, as a typo of one is read
_KEY_WORDS = (
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "tomorrow",
    "tonight",
    "january",
    "february",
    "august",
    "september",
    "october",
    "november",
    "december",
    "remind",
    "weekend",
    "morning",
    "evening",
    "afternoon",
)
# real words near a key word that mean something else
_REAL_WORDS = frozenset(
    {
        "mundane",
        "sundae",
        "sundry",
        "afternoons",
        "marc",
        "marches",
        "remand",
        "rewind",
        "remains",
        "reminds",
        "tonights",
        "friday's",
        "evenings",
        "mornings",
        "mourning",
        "weekends",
        "marched",
        "juice",
        "julie",
        "tuesdays",
        "mondays",
        "fridays",
        "sundays",
        "saturdays",
        "thursdays",
        "wednesdays",
        "augusta",
        "junes",
        "jules",
        "april's",
        "morrow",
        "tomorrows",
        # the same words in the languages the dates are read in (German, French, Spanish)
        "januar",
        "februar",
        "oktober",
        "dezember",
        "septembre",
        "octobre",
        "novembre",
        "decembre",
        "agosto",
        "octubre",
        "noviembre",
        "diciembre",
        "septiembre",
        "sonntag",
        "freitag",
    }
)
_WORD = lazy_regex(r"(?<![\w'])[\w']+(?![\w'])")


_HOURS = {w: str(n) for n, w in enumerate("one two three four five six seven eight nine ten eleven twelve".split(), 1)}
_HOUR_WORD = "|".join(_HOURS)
# an hour said in words where a clock is meant: "at seven", "half past seven", "seven thirty", "eight pm"
_CLOCK_WORDS = lazy_regex(
    rf"\b(?P<lead>at|past|around|until|till|half|quarter to)\s+(?P<n>{_HOUR_WORD})"
    rf"(?:\s+(?P<minl>thirty|fifteen|forty-?five))?\b"
    rf"(?!\s+(?:of|point|days?|weeks?|months?|years?|people|times)\b)"
    rf"|\b(?P<n2>{_HOUR_WORD})(?:\s+(?P<min>thirty|fifteen|forty-?five))?(?=\s*(?:am|pm|a\.m\.|p\.m\.|o'?clock)\b)"
    rf"|\b(?P<n3>{_HOUR_WORD})\s+(?P<min3>thirty|fifteen|forty-?five)\b",
    re.I,
)
_MINUTES = {"thirty": "30", "fifteen": "15", "fortyfive": "45"}
# "half past two of the call", "quarter to six": a clock whatever follows it (_CLOCK_WORDS leaves "past two of …")
_PAST_WORDS = lazy_regex(rf"\b(?P<lead>(?:half|quarter)\s+(?:past|to))\s+(?P<n>{_HOUR_WORD})\b", re.I)


def plain(text: str) -> str:
    """`text` with shorthand spelled out, key words' typos corrected and hours said in words written as a clock
    shows them, and emoji read as the words they stand for; everything else as it was."""
    text = _WORD.sub(_plain_word, emoji_said(text or ""))
    text = _CLOCK_WORDS.sub(
        _clock, _PAST_WORDS.sub(lambda m: f"{m.group('lead')} {_HOURS[m.group('n').lower()]}", text)
    )
    text = _FEW.sub(lambda m: f"{'2' if m.group('few').lower().startswith('couple') else '3'} {m.group('unit')}", text)
    text = _AT_SIGN.sub("at ", _TO_VERB.sub("to ", text))
    text = _ISH.sub(lambda m: f"at {m.group('hour')}", text)
    text = _HOUR_H.sub(lambda m: f"at {m.group('hour')}:{m.group('minute') or '00'}", text)
    text = _FIRST_THING.sub("", text)
    text = _SHORT_DAY.sub(lambda m: f"{m.group('lead')} {_DAY_NAMES[m.group('day').lower()]}", text)
    text = _FIRST_OF_MONTH.sub(
        # "every" stays: "on the first of every month" repeats
        lambda m: {"first": "1st", "last": "last day"}[m.group(1).lower()] + f" of {m.group(2)} month",
        text,
    )
    text = _THE_FIRST.sub(lambda m: f"{m.group('lead')} the 1st", text)
    text = _SCHEDULE_WORDS.sub(_schedule_said, text)
    text = _DAYS_FIRST.sub(_days_first, text)
    text = _GERMAN_CLOCK.sub(_german_clock, text)
    text = _GERMAN_DAYPART.sub(_german_daypart, text)
    text = _MONTH_END_DE.sub(lambda m: "the end of next month" if m.group("next") else "the end of the month", text)
    text = _GERMAN_ASKED_REMIND.sub(_german_asked_remind, text)
    text = _GERMAN_REMIND.sub("remind me", text)
    return _NOON.sub(lambda m: f"{m.group('lead')} 12:00", text)


# "remind me 2 call mom @ 6": "2" before a verb is "to", "@" before an hour is "at" (never "2 hours", "me@x.org")
_TO_VERB = lazy_regex(r"(?<=\bme )2\s+(?=[a-z]{3,})(?!(?:hours?|days?|weeks?|minutes?|mins?|hrs?|months?)\b)", re.I)
_AT_SIGN = lazy_regex(r"(?<!\S)@\s*(?=\d)")
# "7ish", "around 7-ish": about that hour
_ISH = lazy_regex(r"(?P<at>\b(?:at|around|about)\s+)?\b(?P<hour>\d{1,2}(?::\d\d)?(?:\s*(?:am|pm))?)\s*-?ish\b", re.I)
# "thursday 19h", "19h30": the hour of the 24-hour clock as written in much of Europe ("at 19h" keeps its "at")
_HOUR_H = lazy_regex(r"(?<!\bat )(?<![\d:.])\b(?P<hour>[01]?\d|2[0-3])h(?P<minute>[0-5]\d)?\b", re.I)
# "first thing Monday", "first thing tomorrow": the morning, as a reminder without an hour is anyway
_FIRST_THING = lazy_regex(
    r"\bfirst thing(?:\s+on)?\s+(?=(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|tomorrow\b|"
    r"in the morning\b|next\b)",
    re.I,
)
# "by next wed", "this sat": a weekday's short form after a word that announces a day (alone, "wed", "sat" and
# "sun" are words too)
_DAY_NAMES = {
    "mon": "monday",
    "tue": "tuesday",
    "wed": "wednesday",
    "thu": "thursday",
    "fri": "friday",
    "sat": "saturday",
    "sun": "sunday",
}
_SHORT_DAY = lazy_regex(
    r"\b(?P<lead>(?:by|on|until|till|before|from|every|each)(?:\s+next|\s+this)?|next|this)\s+"
    r"(?P<day>mon|tue|wed|thu|fri|sat|sun)\b(?!['’.]\w)",
    re.I,
)
_FIRST_OF_MONTH = lazy_regex(r"\b(first|last)\s+of\s+(the|every|each)\s+month\b", re.I)
# "Erinnere mich morgen um 8 an den Zahnarzt": the German request, in the words the rules read (its dates the date
# reader reads in German)
_GERMAN_REMIND = lazy_regex(r"^\s*(?:bitte\s+)?erinnere?\s+mich(?:\s+bitte)?(?:\s+daran)?\b", re.I)


# "Kannst du mich bitte morgen um 8 daran erinnern, den Arzt anzurufen?": the German request asked as a question, its
# when inside and what to do last ("anzurufen" is "anrufen")
_GERMAN_ASKED_REMIND = lazy_regex(
    r"^\s*(?:kannst|könntest|würdest)\s+du\s+mich\s+(?:bitte\s+)?(?P<when>.*?)\s*(?:bitte\s+)?(?:daran\s+)?erinnern"
    r"(?:\s*,\s*(?:dass\s+ich\s+)?(?P<what>[^?]+?))?\s*\??\s*$",
    re.I,
)


def _german_asked_remind(match: re.Match) -> str:
    what = (match.group("what") or "").strip()
    what = re.sub(r"\b(\w+?)zu(\w{3,}en)$", r"\1\2", what)  # "anzurufen" → "anrufen"
    what = re.sub(r"\s+(?:muss|soll)$", "", what)
    when = match.group("when").strip()
    return f"remind me {when} to {what}".strip() if what else f"remind me {when}".strip()


# "um halb 4" (3:30: German counts the half hour towards the next), "viertel nach 8", "viertel vor 9": written as a
# clock shows them; whether 3:30 is the afternoon's is the date reader's to say, as for "at 3:30"
_GERMAN_CLOCK = lazy_regex(
    r"\b(?:um\s+)?(?P<part>halb|viertel\s+nach|viertel\s+vor|dreiviertel)\s+(?P<hour>1[0-2]|[1-9])\b(?![:.,]?\d)", re.I
)


# "due on the first", "by the first": the 1st of the month, where a day is announced ("the first time" is none)
_THE_FIRST = lazy_regex(
    r"\b(?P<lead>on|by|until|till|before|from|due)\s+the\s+first\b(?!\s+(?:of\b|time|thing|day|week|one))", re.I
)
# a schedule in other words than the reminders read: "every school day" / "every workday" (Monday to Friday, holidays
# not counted), "monthly on the 25th", "once a year on 3 March", "weekly on Fridays"
_SCHEDULE_WORDS = lazy_regex(
    r"\b(?:(?P<weekdays>(?:every|each|on)\s+(?:school|work|working|business)\s*-?\s*days?)"
    r"|(?P<monthly>monthly|every\s+month|once\s+a\s+month)\s+on\s+the\s+(?P<mday>\d{1,2}(?:st|nd|rd|th)?)\b"
    r"|(?P<yearly>once\s+a\s+year|yearly|annually)\s+on\b"
    r"|(?P<weekly>weekly|once\s+a\s+week)\s+on\s+(?P<day>(?:mon|tues|wednes|thurs|fri|satur|sun)day)s?\b)",
    re.I,
)


# "tue and thu at 4pm remind me football training": two weekdays or more said together before the request are a
# schedule (one day, or "next tue", is a one-off)
_A_DAY = r"(?:mon|tue|tues|wed|weds|thu|thur|thurs|fri|sat|sun)(?:day)?s?|(?:wednes|satur)days?"
_DAYS_FIRST = lazy_regex(
    rf"^\s*(?:on\s+)?(?P<days>(?:{_A_DAY})(?:\s*(?:,|and|&|\+)\s*(?:{_A_DAY}))+)\b"
    r"(?=(?:\s+at\s+[\w:.]+(?:\s*(?:am|pm))?)?[\s,]+(?:please\s+|pls\s+)?(?:remind|nudge|ping)\s+me\b)",
    re.I,
)


def _days_first(match: re.Match) -> str:
    names = [_DAY_NAMES[day.lower()[:3]] for day in re.findall(rf"{_A_DAY}", match.group("days"), re.I)]
    return "every " + " and ".join(names)


def _schedule_said(match: re.Match) -> str:
    if match.group("weekdays"):
        return "every weekday"
    if match.group("monthly"):
        return f"on the {match.group('mday')} of every month"
    if match.group("yearly"):
        return "every year on"
    return f"every {match.group('day')}"


# "morgen nachmittag", "heute abend": the day and its part, as the date reader reads them together ("morgen" alone
# may be a morning: "guten Morgen")
_GERMAN_DAYPART = lazy_regex(r"\b(?P<day>morgen|heute)\s+(?P<part>früh|vormittag|nachmittag|abend)\b", re.I)
_GERMAN_PARTS = {"früh": "morning", "vormittag": "morning", "nachmittag": "afternoon", "abend": "evening"}


# "bis Monatsende", "bis Ende des Monats", "Ende nächsten Monats": the month's last day, as the date reader reads it
_MONTH_END_DE = lazy_regex(
    r"\b(?:monatsende|ende\s+(?:des|dieses)\s+monats|ende\s+(?P<next>(?:des\s+)?nächsten\s+monats))\b", re.I
)


def _german_daypart(match: re.Match) -> str:
    day, part = match.group("day").lower(), _GERMAN_PARTS[match.group("part").lower()]
    return "tonight" if (day, part) == ("heute", "evening") else f"{'tomorrow' if day == 'morgen' else 'this'} {part}"


def _german_clock(match: re.Match) -> str:
    hour, part = int(match.group("hour")), " ".join(match.group("part").lower().split())
    if part == "viertel nach":
        return f"um {hour}:15"
    before = hour - 1 or 12
    return f"um {before}:" + {"halb": "30", "viertel vor": "45", "dreiviertel": "45"}[part]


# emoji that answer or tick off: alone a yes or a no; a tick after words is "done" ("passport ✅"); any other
# pictograph says how the user feels, nothing the rules read ("buy flowers for Anna 🌸 saturday")
_YES_EMOJI = "👍👌🙏✅✔☑💯🆗🙌"
_NO_EMOJI = "👎❌🚫✖"
_EMOJI_CHARS = "[\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff\ufe0f\u200d\u20e3]+"
_EMOJI = lazy_regex(_EMOJI_CHARS)
_TICK_AFTER_WORDS = lazy_regex(r"(?<=\w)[\s:,-]*[✅✔☑]\uFE0F?")
_EMOJI_BETWEEN = lazy_regex(rf"(?<=[^\W\d_])\s*{_EMOJI_CHARS}\s+(?=[a-zäöüß])")


def emoji_said(text: str) -> str:
    """`text` with its emoji read: a message of emoji alone is the yes or no they show ("👍" is "yes"), a tick
    after a thing named is "done", any other emoji is dropped. Text without emoji is returned as it was."""
    if not _EMOJI.search(text):
        return text
    alone = _EMOJI.sub("", text).strip(" .!,")
    if not alone:
        if any(e in text for e in _NO_EMOJI):
            return "no"
        return "yes" if any(e in text for e in _YES_EMOJI) else text
    # a tick after a thing named is "done"; after a word that says so already ("cancelled ✔️") it adds nothing
    text = _TICK_AFTER_WORDS.sub(
        lambda m: "" if re.search(r"(?:ed|done|sorted|paid|sent|bought)$", m.string[: m.start()], re.I) else " done",
        text,
    )
    # an emoji between two clauses written in lower case stands for their comma: "got the Rezept 🙌 pens are ordered"
    text = _EMOJI_BETWEEN.sub(", ", text)
    return " ".join(_EMOJI.sub(" ", text).split())


# "in a couple of days", "a few weeks": a count the date reader reads
_FEW = lazy_regex(r"\b(?:a\s+)?(?P<few>couple(?:\s+of)?|few)\s+(?P<unit>minutes|hours|days|weeks|months)\b", re.I)
_NOON = lazy_regex(r"\b(?P<lead>at|by|before|until|till|around|after)\s+(?:12\s+)?(?:noon|midday)\b", re.I)


def _clock(match: re.Match) -> str:
    if match.group("lead"):
        minute = match.group("minl")
        return f"{match.group('lead')} {_HOURS[match.group('n').lower()]}" + (
            f":{_MINUTES[minute.lower().replace('-', '')]}" if minute else ""
        )
    hour = _HOURS[(match.group("n2") or match.group("n3")).lower()]
    minute = match.group("min") or match.group("min3")
    return f"{hour}:{_MINUTES[minute.lower().replace('-', '')]}" if minute else hour


def _plain_word(match: re.Match) -> str:
    word = match.group(0)
    lower = word.lower()
    if lower in _SHORTHAND:
        said = _SHORTHAND[lower]
        if lower == "u" and match.string[match.end() : match.end() + 1] == ".":
            return word  # "U.S."
        if lower == "im" and re.match(r"\s+[A-ZÄÖÜ]", match.string[match.end() :]):
            return word  # "im Nachtschicht-Block", "im Büro": the German "in the", before its noun
        return said[:1].upper() + said[1:] if word[:1].isupper() and lower not in ("im", "ive") else said
    if len(lower) < 5 or not lower.isalpha() or lower in _KEY_WORDS or lower in _REAL_WORDS:
        return word
    for key in _KEY_WORDS:  # six letters and more: a five-letter one is a name too often ("Marco", not March)
        allowed = 2 if len(key) >= 8 else 1
        if key[0] == lower[0] and abs(len(key) - len(lower)) <= allowed and distance(lower, key, allowed) <= allowed:
            return key.capitalize() if word[:1].isupper() else key
    return word
