"""What the offline chat rules read and say: the phrases each rule matches, its fixed lines, and the
shapes of a message read (`Chat`) and of its answer (`Reply`).

The rules themselves are wilson/model/offline/intents.py (a message) and wilson/model/offline/answers.py
(an answer to a pending proposal); the table is here so both read the same words.

Size: a table of phrases, not logic: the rules' vocabulary is read in one place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from datetime import date, datetime

from wilson.model.offline.acts import ACT_VERBS
from wilson.model.offline.framing import unframed
from wilson.model.offline.texting import plain as spelled_out
from wilson.model.offline.recognition import Playbook
from wilson.kernel.lazy_regex import lazy_regex

INTRO = (
    "Hi, I'm Wilson. I'm running without a language model, so I can only handle simple things for now. "
    "To connect one, set WILSON_LLM_BASE_URL and WILSON_LLM_MODEL (or start me with --llm URL)."
)
REQUESTS = (
    "“what's on my plate this week?”, “what's on my calendar today?”, “add pay rent by Friday”, "
    "“remind me to call Mum on Sunday”, “move the passport task to next week”, “done with the flights”, "
    "“drop the gym task”, “close the Japan topic”, or “yes”/“no” to my last proposal."
)
CAN_DO = f"I'm running offline (no language model connected), so I only follow simple requests: {REQUESTS}"
HELP = f"I didn't understand that — {CAN_DO} Nothing was changed."

# A second request after the first ("add pay rent by Friday and remind me to call Mum on Sunday"): the rules
# follow one request per message, and reading both as one would make a task called "Pay rent remind me to…".
# "add" is a request of its own only with a deadline after a stop or after the first request's day, or naming
# the list ("…, add buy an adapter by March 1", "…on Sunday and add pay rent by Friday", "and add the receipts
# to my list"): "remind me to check the tyres and add oil on Saturday",
# "and add a day in Florence" and "snooze it until Monday, remind me then" are one request each. A new sentence
# that begins with "add", or ", also add", is a request of its own ("what's on my plate? also add buy bread").
SECOND_REQUEST_RE = lazy_regex(
    r"(?:[,;.!?]|\band\b)\s*(?:(?:and|also|then|please|pls)\s+)*"
    r"(?:remind me\b(?!\s+(?:then|again|later|too|as well)\b|\s*[.!?]*$)|"
    r"don'?t let me forget\b|todo\b|to-do\b|(?:mark\s+)?done with\b|"
    r"add\b[^,;.!?]*\bto my (?:list|tasks|to-?dos?)\b)"
    r"|(?:[,;.!?]|\b(?:(?:mon|tues|wednes|thurs|fri|satur|sun|to|yester)day|tomorrow|tonight|"
    r"\d{1,2}(?:st|nd|rd|th)?|week|month)(?P<cut>)\s+and\b)"
    r"\s*(?:(?:and|also|then|please|pls)\s+)*add\b[^,;.!?]*\bby\b"
    r"|(?<!\ba\.m)(?<!\bp\.m)(?<!\bdr)(?<!\bmr)(?<!\bmrs)(?<!\bms)(?<!\bst)[;.!?]"
    r"\s*(?:(?:and|also|then|please|pls)\s+)*add\s+\w|,\s*(?:and\s+)?also\s+add\s+\w",
    re.I,
)
# A courtesy at the end ("add pay rent by Friday, thanks!") is no part of what is asked
# (after a stop only: "remind me to say thanks" keeps its thanks)
COURTESY_RE = lazy_regex(r"\s*[,;.!?]\s*(?:thanks|thank you|thx|ty|cheers|please|pls|ok|okay)\s*[.!?]*\s*$", re.I)
TRY = "Try “what's on my plate this week?”, “add pay rent by Friday” or “remind me to call Mum on Sunday”."
# Small talk, matched whole: a greeting, thanks or a goodbye with a word or two around it, never a request
# ("thanks, add pay rent by Friday" is a request, and is read as one)
_AROUND = (
    r"(?:\s*(?:there|wilson|mate|buddy|so much|a lot|again|for that|for the help|for this|very much|all|everyone|thanks|"
    r"thank you|[!.,:)?]+))*\s*"
)
# a season's wish said with a greeting or alone: "hi wilson, happy new year!"
_WISH = r"(?:[\s,!.]*(?:happy (?:new year|holidays|easter|birthday|friday|monday|weekend)|merry christmas|season'?s greetings))?"
_GREETING_WORDS = (
    r"hi|hello|hey|hiya|howdy|good\s+(?:morning|afternoon|evening)|morning|evening|afternoon|"
    # and in German: "guten Morgen!", "moin", "hallo", "servus"
    r"guten\s+(?:morgen|tag|abend)|moin(?:\s+moin)?|hallo|servus|grüß dich"
)
GREETING_RE = lazy_regex(
    rf"^(?:(?:{_GREETING_WORDS})\b{_AROUND}{_WISH}|"
    rf"(?:happy (?:new year|holidays|easter|friday|monday|weekend|sunday)|merry christmas)\b)"
    rf"{_AROUND}$",
    re.I,
)
# thanks, with praise after it or not ("thanks, you're a star", "thank you, that was quick")
_PRAISE = (
    r"(?:[\s,!.]*(?:you'?re|you are|that'?s|that was|that is|what a|(?:echt|sehr|super|voll)\s+(?:hilfreich|nett|lieb))"
    r"\b[\w\s']{0,30})?"
)
THANKS_RE = lazy_regex(
    rf"^(?:thanks|thank you|thank u|thx|ty|cheers|ta|danke(?:\s+(?:dir|schön|sehr|euch))?|"
    rf"vielen dank|merci(?: beaucoup)?|gracias)\b{_AROUND}{_PRAISE}{_AROUND}$",
    re.I,
)
ACK_RE = lazy_regex(
    rf"^(?:ok|okay|k|cool|great|nice|perfect|got it|sounds good|alright|all right|fine)\b{_AROUND}$", re.I
)
# words pleased with something, and nothing else ("ok cool", "perfect, thanks!"): an acknowledgement, never a yes
PLEASED_WORDS = frozenset(
    {
        "ok",
        "okay",
        "cool",
        "great",
        "nice",
        "perfect",
        "fine",
        "alright",
        "awesome",
        "lovely",
        "excellent",
        "super",
        "brilliant",
        "wonderful",
        "good",
        "sounds",
        "looks",
        "thanks",
        "thank",
        "you",
        "that's",
        "very",
        # and in German: "perfekt danke", "super, danke", "passt, danke"; phrases of plain words ("sieht gut aus, mach
        # so") are PLEASED_PHRASE_RE's, so that "Das", "Aus!" or "so so" alone stay what they are
        "perfekt",
        "prima",
        "toll",
        "danke",
        "gut",
        "passt",
        "schön",
        "klasse",
        "top",
        "spitze",
        "wunderbar",
        # and in the other languages people here write in: "parfait, merci", "świetnie, dzięki", "perfecto gracias"
        "parfait",
        "świetnie",
        "idealnie",
        "goed",
        "perfecto",
        "perfetto",
        "ótimo",
    }
)
# thanks alone, in the languages people here write in: "merci" is thanks, never a yes
THANK_WORDS = frozenset(
    "thanks thank you danke dir merci gracias grazie dzięki dziękuję bedankt obrigado obrigada".split()
)
# what a pleased message may be made of: pleased words and thanks, at least one of them pleased
PLEASED_OR_THANKS = PLEASED_WORDS | THANK_WORDS
# pleased, said in German plain words (after `normal`): "sieht gut aus, mach so 🏺 danke dir", "klingt gut", "das passt
# so", "mach das so"; whole, and never asked ("Passt das so?" is a question, not a yes)
PLEASED_PHRASE_RE = lazy_regex(
    r"^(?:(?:ja|jo|ok|okay|super|perfekt|prima)\s+)*"
    r"(?:sieht\s+(?:gut|super|top|prima)\s+aus|klingt\s+(?:gut|super|prima)|(?:das\s+)?passt(?:\s+(?:so|mir))?|"
    r"mach\s+(?:das\s+)?so|gut\s+so)"
    r"(?:\s+(?:mach\s+(?:das\s+)?so|danke(?:\s+dir)?|super|perfekt|prima|sieht\s+gut\s+aus|klingt\s+gut))*$"
)
ABILITIES_RE = lazy_regex(
    rf"^(?:what can you do|what do you do|what are you|who are you|how does this work|"
    rf"how do (?:i|you) use (?:you|this)|help|help me|what can i (?:say|ask)|"
    rf"(?:can|could) you help(?: me)?)\b{_AROUND}\??$",
    re.I,
)
ABOUT_ME_RE = lazy_regex(
    rf"^(?:what do you know about me|what do you remember(?: about me)?|"
    rf"what have you learn(?:ed|t)(?: about me)?)\b{_AROUND}\??$",
    re.I,
)
# "what time is it?", "what's the date?", "what day is it today?": the whole message asks the time or the day, read
# after `normal` (lower case, no punctuation); "what time is my flight?" asks about something else
CLOCK_RE = lazy_regex(
    r"^(?:(?:hey|hi|hello|ok|okay|so|sorry|wilson|please|quick question)\s+)*"
    r"(?:(?:do you know|can you tell me|could you tell me|tell me)\s+)?"
    r"(?:what(?:'?s| is)? the (?:time|date|day)|what time (?:is it|it is)"
    r"|what(?:'?s| is) today'?s date|what (?:day|date) (?:is it|it is|is today|of the week is it)"
    r"|which day is (?:it|today))"
    r"(?:\s+(?:now|right now|today|please|wilson|again|here))*$"
)
# "what did I miss?", "anything new?", "catch me up": the whole message asks what happened while the user was away,
# read after `normal` (lower case, no punctuation); "anything new on the Japan trip?" asks about a topic
MISSED_RE = lazy_regex(
    r"^(?:(?:hi|hey|hello|ok|okay|so|wilson|morning|good morning|i'm back|im back|back)\s+)*"
    r"(?:what did i miss|what have i missed|did i miss anything|have i missed anything|"
    r"anything new|what'?s new|any news|any updates?|catch me up|fill me in|"
    r"what happened|did anything happen|anything happen(?:ed)?)"
    r"(?:\s+(?:today|lately|so far|since|then|wilson|while i was (?:away|out|gone|asleep)|"
    r"while i was at (?:work|lunch)|this (?:morning|afternoon|evening)))*$"
)
ALL_MEMORIES = "All of it: “memories” in the terminal, /memory in Telegram."
BYE_RE = lazy_regex(
    rf"^(?:bye|goodbye|bye bye|see you|see ya|good night|night|later)\b"
    rf"(?:\s+(?:for now|then|later|soon|tomorrow|tonight|next week))?{_AROUND}$",
    re.I,
)
# how the user is or where, and nothing more: a word back, not "I didn't understand that"
_NOW_WORDS = (
    r"(?:[\s,]*(?:today|tonight|now|right now|this (?:morning|afternoon|evening|week)|at the moment|"
    r"for (?:a bit|a while|an hour|the day)|back (?:at|in|by|around) \d{1,2}(?:[:.]\d\d)?\s*(?:am|pm|h)?|"
    r"back (?:soon|later)|again|finally|[!.]+))*\s*$"
)
_UNWELL = (
    r"(?:(?:i'm|im|i am|i feel|i'm feeling|feeling|i've been|i've been feeling)\s+"
    r"(?:so |very |really |a bit |a little |quite |pretty |super |kind of |kinda )?"
    r"(?:sick|ill|unwell|poorly|tired|exhausted|knackered|worn out|stressed(?: out)?|overwhelmed|bored|"
    r"burn[te] out|not (?:well|great|good|feeling well)|under the weather|rough|awful|terrible)\b"
    # and in German: "ich bin heute so müde", "bin total kaputt", "mir geht's nicht gut"
    r"|(?:ich bin|bin)\s+(?:heute\s+|gerade\s+|echt\s+)?(?:so |sehr |total |echt |voll |ganz |richtig |etwas |ein bisschen )?"
    r"(?:müde|krank|erschöpft|kaputt|fertig|gestresst|platt|erkältet)\b|mir geht'?s (?:heute )?(?:nicht gut|schlecht))"
)
UNWELL_RE = lazy_regex("^" + _UNWELL + _NOW_WORDS, re.I)
_WHERE = (
    r"(?:(?:ok|okay|right|alright|anyway|so)[\s,]+)?(?:(?:i'm|im|i am|just)\s+)?"
    r"(?P<where>heading out|off to (?:bed|sleep|work)|going to (?:bed|sleep)|back to (?:work|it|my desk|the office)|"
    r"on my way(?: home| to work)?|leaving (?:now|work)|got (?:home|back|in)|back|home|at home|at work|"
    r"at the office|in the office|working from home|out)\b"
)
WHEREABOUTS_RE = lazy_regex("^" + _WHERE + _NOW_WORDS, re.I)
# What comes before the request itself, with a stop after it: a greeting, thanks, an "ok", where or how they are
# ("hi, add milk to my list", "thanks! remind me…", "I'm home, add bread", "I'm sick, remind me to call the
# doctor at 9"); the rules read the request without it (request_of). Not a bare "please", nor an "ok" without
# its stop ("ok remind me" is read as it is), nor a word joined by a hyphen ("home-made"); nor before a bare yes
# or no ("Oh, no!" is no answer to a proposal).
LEAD_RE = lazy_regex(
    r"^(?:(?:hi|hello|hey|hiya|howdy|good (?:morning|afternoon|evening)|thanks|thank you|thx|"
    r"cheers|ok|okay|great|cool|so|oh|sorry|"
    # news announced before it is told: "fun fact, my brother …", "guess what: …", "btw, …"
    r"fun fact|guess what|btw|by the way|news|big news|quick update|update|"
    + _WHERE.replace("(?P<where>", "(?:")
    + "|"
    + _UNWELL
    + r")(?:\s+(?:there|wilson|again|so much|a lot|now|today))*|wilson)"
    r"(?:\s*[,;:.!]+|\s+[-–]+(?=\s))\s*",
    re.I,
)


# a request put as a question: "can you remind me to take out the bins tonight?", "could you please add milk?"
# (only around a change: "can you check the flights are booked?" and "can you remind me what's on?" stay questions)
_ASKED_POLITELY = lazy_regex(
    r"^(?:can|could|would|will)\s+you\s+(?:please\s+|kindly\s+)?"
    r"(?P<ask>(?:remind me\b(?!\s+(?:what|when|where|who|which|how|if|whether)\b)|add|move|push|"
    r"postpone|reschedule|snooze|drop|delete|cancel|mark|rename|close|put|set up|create)\b.*?)"
    r"(?:[\s,]+please)?\s*\?+\s*$",
    re.I | re.S,
)


_GREETING_FIRST_RE = lazy_regex(
    rf"^\s*(?:{_GREETING_WORDS})(?:[\s,]+(?:wilson|zusammen|there))?\s*[!.,]+\s+(?=\S+\s+\S+\s+\S)",  # a message after it
    re.I,
)


def request_of(text: str, now: datetime | None = None, tz=None) -> str:
    """The message without what comes before the request itself (LEAD_RE), clause by clause while something
    is left ("hi, I'm home." keeps "I'm home.", small talk answered as such), and a request put as a question
    without its question ("can you add milk?" is "add milk"). Where or how the user is, and when, is kept
    whole: "heading out, back at 6" is no lead to "back at 6". Shorthand and typo'd date words are read as the
    words first ("can u remind me tmrw" is "can you remind me tomorrow")."""
    text = spelled_out(text)
    # "Guten Morgen! Bin gerade …": a greeting before the message is no part of it (its "Morgen" is no tomorrow)
    text = _GREETING_FIRST_RE.sub("", text) or text
    # "okay so um I was thinking I really need to … can you add that": the hesitation, then the thinking aloud
    text = _THINKING_ALOUD_RE.sub("", _SPOKEN_FILLER_RE.sub(" ", text))
    text = _ANOTHER_ONE_RE.sub("", text) or text  # "and another one: book a hotel …"
    text = _SET_A_TASK_RE.sub("add ", text)  # "set me a task to book the tickets": add book the tickets
    text = _TO_SELF_RE.sub("", text) or text  # "Reminder to self: renew the bike insurance by 1 March": the act
    forget = _NOT_FORGET_THING_RE.match(text)
    if forget:  # "don't let me forget Oma's birthday on the 14th": a reminder of it then (not a task's snooze)
        # with no day, a task; with a deadline ("has to be bought by friday"), a task due then
        said = (
            "remind me"
            if _DAY_SAID_RE.search(forget.group("what")) and not _DEADLINE_RE.search(forget.group("what"))
            else "add"
        )
        text = f"{said} {forget.group('what')}"
    mind = _WOULD_YOU_MIND_RE.match(text)
    if mind and _verb_of(mind.group("stem")):  # "would you mind nudging me friday morning about …": nudge me …
        text = _verb_of(mind.group("stem")) + text[mind.end() :]
    text = " ".join(_ADD_THAT_AFTER_RE.sub("", text).split()) or text
    while (
        (lead := LEAD_RE.match(plain := text.replace("’", "'")))
        and not _ONLY_ADDRESS.match(text, lead.end())
        and not _BARE_ANSWER.match(text, lead.end())
        and not (_ONLY_THANKS.match(text, lead.end()) and not THANKS_RE.match(text))  # "great, thanks": pleased
        and not re.match(r"but\b", text[lead.end() :], re.I)  # "thank you, but …" declines politely
        and not (WHEREABOUTS_RE.match(plain) or UNWELL_RE.match(plain))
    ):
        text = text[lead.end() :]
    asked = _ASKED_POLITELY.match(text)
    text = asked.group("ask") if asked else text
    text = COURTESY_RE.sub("", text) or text  # "when is the dentist? thanks!" asks when the dentist is
    return unframed(text, now, tz) or text


# hesitation said as it is typed, and the thinking aloud before a request: none of it is the request
_SPOKEN_FILLER_RE = lazy_regex(
    # (not a German verb's last word: "wir ziehen am 1. Mai nach Potsdam um")
    r"\b(?:u+m+|u+h+|e+r+m+|u+h+m+)\b(?!\s*\d)(?!\s+(?:halb|viertel|mitternacht))(?!\s+[a-zäöü]+\s+uhr)(?!\s*[.!]*\s*$),?",
    re.I,
)
_THINKING_ALOUD_RE = lazy_regex(
    r"^\s*(?:(?:ok(?:ay)?|so|well|right)[\s,]+)*(?:i\s+was\s+thinking|i\s+thought)(?:\s+that)?\b[\s,]*", re.I
)
# "… before the 20th can you add that": the request told, then asked to be kept in the same sentence (a sentence of
# its own, "Can you add that as a task?", names what the sentences before it told: intents._that_as_task)
_ADD_THAT_AFTER_RE = lazy_regex(
    r"(?<=\w)[\s,;-]+(?:so\s+)?(?:can|could|would)\s+you\s+(?:please\s+)?(?:add|note|put|save|write)\s+"
    r"(?:that|it|this)(?:\s+(?:down|on\s+(?:my|the)\s+list|as\s+a\s+task))?(?:\s+please)?[\s?.!]*$",
    re.I,
)
_TO_SELF_RE = lazy_regex(r"^\s*reminder\s+to\s+(?:self|myself)\s*[:\-–]?\s*(?=\S)", re.I)
_SET_A_TASK_RE = lazy_regex(
    r"^\s*(?:please\s+)?(?:set|make|create|give)\s+(?:me|us)?\s*(?:a\s+)?(?:new\s+)?(?:task|to-?do)\s*(?:[:\-–]|to\b|for\b)?\s*"
    r"(?:(?:me|us)\s+to\s+)?",
    re.I,
)
# "don't let me forget Oma's birthday on the 14th", "let me not forget the parents' evening": a thing, not an act
_NOT_FORGET_THING_RE = lazy_regex(
    r"^\s*(?:(?:please\s+)?(?:don'?t|do\s+not)\s+let\s+me\s+forget|let\s+me\s+not\s+forget)"
    r"(?=\s)(?!\s+(?:to|that|about\s+(?:it|that))\b)\s+(?:about\s+)?(?P<what>.+?)\s*[.!]*$",
    re.I,
)
_DEADLINE_RE = lazy_regex(r"\b(?:by|before|until|till|no later than|due|deadline)\s+(?=\S)", re.I)
_DAY_SAID_RE = lazy_regex(
    r"\b(?:today|tonight|tomorrow|next|this|(?:mon|tues|wednes|thurs|fri|satur|sun)day|weekend|\d{1,2}(?:st|nd|rd|th)?)\b",
    re.I,
)
_ANOTHER_ONE_RE = lazy_regex(
    r"^\s*(?:and\s+)?(?:another\s+one|one\s+more(?:\s+thing)?|and\s+also|(?:add\s+)?(?:this|these)\s+too)\s*[:,–-]\s*",
    re.I,
)
# "would you mind nudging me …", "do you mind adding …": the request in its -ing form
_WOULD_YOU_MIND_RE = lazy_regex(r"^\s*(?:would|do|could)\s+you\s+mind\s+(?P<stem>[a-z]+?)ing\b", re.I)
_ASKED_VERBS = frozenset(
    "remind nudge ping add move put set note remember keep give push snooze drop cancel let mark write".split()
)


def _verb_of(stem: str) -> str | None:
    """ "nudg" → "nudge", "putt" → "put", "add" → "add": the verb whose -ing form was said, when it is one a request
    begins with; None otherwise."""
    stem = stem.lower()
    for verb in (stem, stem + "e", stem[:-1]):
        if verb in _ASKED_VERBS or verb in ACT_VERBS:
            return verb
    return None


_ONLY_THANKS = lazy_regex(r"(?:thanks|thank you|thx|cheers|ta)\b(?:\s+(?:so much|a lot|mate|wilson))?[\s!.]*$", re.I)
_BARE_ANSWER = lazy_regex(r"(?:yes|yeah|yep|yup|no|nope|nah|sure|ok|okay)\b[\s!.]*$", re.I)


_ONLY_ADDRESS = lazy_regex(
    r"(?:wilson|there|all|everyone)?[\s,;:.!?-]*$", re.I
)  # "Good morning, Wilson!" is a greeting


QUIET_HINT = "To hold my non-urgent messages for a day: “quiet 1d” in the terminal, /quiet 1d in Telegram."
DONE_RES = [
    lazy_regex(
        r"^\s*(?:i(?:'m| am)\s+|i(?:'ve| have)\s+|i\s+|just\s+)?(?:just\s+)?(?:done with|finished|completed)\s+"
        r"(?P<what>.+)$",
        re.I,
    ),
    lazy_regex(r"^\s*mark\s+(?P<what>.+?)\s+(?:as\s+)?(?:done|complete|completed|finished)\b", re.I),
    # "passport renewal done", "flights all sorted": a thing named, then done (not "all done", "I'm done")
    lazy_regex(
        r"^\s*(?:the\s+|my\s+)?(?P<what>(?!(?:all|i'?m|we'?re|it'?s|that'?s|everything|we|i|you)\b)[\w' ]{3,40}?)"
        r"\s+(?:all\s+)?(?:done|finished|sorted)[\s.!✓✅]*$",
        re.I,
    ),
    # a note ticked off: "passport: done", "flights - done ✓"
    lazy_regex(r"^\s*(?P<what>[\w' ]{2,40}?)\s*(?::|-+|–|—)\s*(?:done|finished|completed|sorted)\b[\s.!✓✅]*$", re.I),
    lazy_regex(
        r"^\s*(?P<what>.+?)\s+(?:is|are)\s+(?:all\s+)?(?:done|finished|complete|completed|sorted(?: out)?|"
        r"taken care of|handled|dealt with)\b",
        re.I,
    ),
    # "I took care of the flights", "got the flights sorted", "dealt with the passport"
    lazy_regex(
        r"^\s*(?:i(?:'ve| have)?\s+|we(?:'ve| have)?\s+)?(?:just\s+|already\s+|finally\s+)*"
        r"(?:took care of|taken care of|dealt with|handled|sorted out|sorted)\s+(?P<what>.+?)\s*[.!]*$",
        re.I,
    ),
    lazy_regex(
        r"^\s*(?:i(?:'ve| have)?\s+|we(?:'ve| have)?\s+)?(?:just\s+|already\s+|finally\s+)*got\s+"
        r"(?P<what>.+?)\s+(?:sorted(?: out)?|done|finished|taken care of|booked|paid|sent|renewed|fixed|signed|"
        r"submitted|returned|ordered|cancell?ed)(?:\s+(?:yesterday|today|this morning|at last|finally))?\s*[.!]*$",
        re.I,
    ),
    # a call made at last: "finally got through to the pension office 🙌", "reached the landlord"
    lazy_regex(
        r"^\s*(?:i(?:'ve| have)?\s+|we(?:'ve| have)?\s+)?(?:just\s+|finally\s+)*(?:got through to|managed to reach)\s+"
        r"(?P<what>.+?)\s*[.!🙌🎉✅]*$",
        re.I,
    ),
    # someone else did their part: "Lindqvist Design paid up yesterday so no more chasing needed"
    lazy_regex(r"^\s*(?P<what>.+?)\s+(?:paid up|finally paid|has paid|have paid)\b", re.I),
    # in German: "Kita-Antrag abgegeben ✅", "Miete ist erledigt", "Flüge gebucht"
    lazy_regex(
        r"^\s*(?:die\s+|der\s+|das\s+)?(?P<what>[^\W\d][\w' -]{1,40}?)\s+(?:ist\s+|sind\s+)?(?:jetzt\s+)?"
        r"(?:erledigt|abgegeben|bezahlt|gekauft|gebucht|eingereicht|überwiesen|abgeschickt|verschickt|gemacht|fertig|"
        r"unterschrieben|gekündigt|beantragt|bestellt)\b[\s.!✓✅🎉]*$",
        re.I,
    ),
]
LIST_RE = lazy_regex(
    r"\b(tasks?|to-?dos?|to do list|what'?s due|what is due|open items|on my plate|what'?s coming|"
    r"what is coming|what'?s up next|what'?s next|agenda|schedule|what do i have|"
    r"what have i got|what do i need to do|anything (?:due|coming)|what'?s on|what is on|"
    # "do I have something on the 20th?", "anything due by the 3rd?": a day of the month asked about
    r"(?:anything|something)\s+(?:on|for|due(?:\s+on|\s+by)?)\s+(?:the\s+)?\d{1,2}(?:st|nd|rd|th)?\b|"
    r"something (?:(?:for|on|due)\s+)?(?:today|tomorrow|tonight|this|next|(?:mon|tues|wednes|thurs|fri|satur|sun)day)|"
    # asked about what is due, said other ways: "anything for tomorrow?", "what's left this week?", "any deadlines
    # next week?", "what was I supposed to do today", "is there anything I need to do today?", "was steht morgen an?"
    r"anything (?:(?:for|left|else|open|due)\s+(?:for\s+|on\s+)?)?(?:today|tomorrow|tonight|this|next|the weekend|"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)day)|anything (?:urgent|pressing|(?:left|open)(?=\s*\??\s*$))|"
    r"what'?s (?:still )?(?:left|open|pending)(?!\s+(?:for|in|on|with)\s+(?:the|my|our)\b)|"
    r"what is (?:still )?(?:left|open|pending)(?!\s+(?:for|in|on|with)\s+(?:the|my|our)\b)|any (?:deadlines?|to-?dos?)|"
    r"what (?:was|am) i (?:supposed|meant) to|(?:is there )?anything (?:i|we) (?:need|have|must|should) to|"
    r"what (?:do|must|should) (?:i|we) (?:still )?(?:need to |have to )?(?:do|get done|finish|sort out)|"
    r"how many (?:tasks|things|to-?dos)|was steht (?:\w+ )*an|was muss ich|was ist (?:noch )?(?:fällig|offen|zu tun)|"
    # "hab ich vorm WE noch was zu erledigen?", "muss ich diese Woche noch was machen?"
    r"(?:hab|habe|muss)\s+ich\s+(?:[\w-]+\s+){0,4}?(?:noch\s+)?(?:was|etwas)\s+(?:zu\s+)?(?:erledigen|tun|machen)|"
    # "hab ich diese woche noch was offen?", "ist diese Woche noch was fällig?"
    r"(?:hab|habe|ist|sind)\s+(?:ich\s+)?(?:[\w-]+\s+){0,4}?(?:noch\s+)?(?:was|etwas)\s+(?:offen|fällig|an))\b",
    re.I,
)
OVERDUE_RE = lazy_regex(
    r"\b(?:overdue|am i behind|late on|what did i forget|did i forget (?:anything|something)|"
    r"have i forgotten (?:anything|something))\b",
    re.I,
)  # asked (QUESTION_RE), a look; said, a request
# "stop reminding me to water the plants", "cancel the plants reminder", "no more reminders about the gym",
# "forget the plants reminder" (a reminder named as one is looked up as one, not as a task)
STOP_REMINDER_RES = [
    lazy_regex(
        r"^\s*(?:please\s+)?(?:stop reminding me|don'?t remind me|no more reminders?)\s+(?:about|to|of|for)?\s*"
        r"(?P<what>.+?)(?:\s+any\s?more)?\s*[.!]*$",
        re.I,
    ),
    lazy_regex(
        r"^\s*(?:please\s+)?(?:cancel|delete|remove|drop|stop|turn off|disable|forget(?: about)?|never ?mind)"
        r"\s+(?:the\s+|my\s+)?"
        r"(?:reminders?\s+(?:about|to|for|of)\s+(?P<what>.+?)|(?P<what2>.+?)\s+reminders?)\s*[.!]*$",
        re.I,
    ),
]
MY_REMINDERS_RE = lazy_regex(
    r"\b(?:my reminders|what reminders|which reminders|any reminders|"
    r"list (?:the |my )?reminders|show (?:me )?(?:the |my )?reminders|"
    r"what (?:did|have) i ask(?:ed)? you to remind me|what (?:are|will) you (?:going to )?"
    r"remind(?:ing)? me|"
    # "did I already set a reminder for the office rent?"
    r"(?:did|have)\s+i\s+(?:already\s+)?(?:set|made|created|asked\s+for)\s+a\s+reminder)\b",
    re.I,
)
# "I paid the rent", "I've booked the flights": done, in the past tense, by a verb that finishes what the task's
# own verb asks (paid → Pay rent); a need, a miss or a question is not a done
DONE_VERBS = {
    "dropped off": "drop",
    "brought back": "bring",
    "took back": "bring",
    "handed back": "hand",
    "handed out": "send",  # invitations handed out at school: sent
    "paid": "pay",
    "booked": "book",
    "renewed": "renew",
    "called": "call",
    "rang": "call",
    "phoned": "call",
    "rung": "call",
    "sent": "send",
    "bought": "buy",
    "filed": "file",
    "submitted": "submit",
    "signed": "sign",
    "packed": "pack",
    "ordered": "order",
    "returned": "return",
    "wrote": "write",
    "emailed": "email",
    "replied to": "reply",
    "answered": "answer",
    "registered": "register",
    "confirmed": "confirm",
    "scheduled": "schedule",
    "handed in": "hand",
    "picked up": "pick",
    "cleaned": "clean",
    "fixed": "fix",
    "cancelled": "cancel",
    "canceled": "cancel",
    "applied for": "apply",
    "collected": "collect",
    "prepared": "prepare",
    "made": "make",
    "gave": "give",
    "got": "get",
    "checked": "check",
    "gathered": "gather",
    "updated": "update",
}
PAST_DONE_RE = lazy_regex(
    r"^\s*(?:ok,?\s+)?(?:(?:i|we)(?:'ve| have)?\s+)?(?:just\s+|already\s+|finally\s+|now\s+)*"
    r"(?P<verb>"
    + "|".join(sorted(map(re.escape, DONE_VERBS), key=len, reverse=True))
    + r")\s+(?!to\b)(?P<what>.+?)\s*[.!]*$",
    re.I,
)
# "passport checked", "the flights are booked!": a done task named first, its verb last; never a need, a doubt
# or a part ("the rent needs to be paid", "flights not booked yet", "flights almost booked", "flights aren't
# booked"), nor a wish or a request ("hope the flights are booked", "get the flights booked"), nor a person who did
# it ("mum called" is no "Call mum" done: verbs done to a person are left out); "to" only before a place ("flights to
# Lisbon are booked", not "flights to be booked")
PARTICIPLE_DONE_RE = lazy_regex(
    r"^\s*(?:ok,?\s+)?(?:the\s+|my\s+|our\s+)?(?P<what>(?:(?!\b(?:not|never|yet|need|needs|must|should|will|"
    r"to(?!\s+(?-i:[A-ZÄÖÜ]))|be|"
    r"can|could|would|still|almost|nearly|partly|partially|half|mostly|hopefully|probably|maybe|being|getting|"
    r"get|gets|please|hope|want|wants|wish|let's|\w+n't)\b)[\w'-]+\s+){1,4}?)"
    r"(?:(?:is|are|has been|have been|all|now|finally|just|already)\s+)*"
    r"(?P<verb>"
    + "|".join(
        v
        for v in DONE_VERBS
        if (" " not in v or v == "handed out")
        and v not in ("got", "made", "called", "rang", "emailed", "wrote", "answered")
    )
    # "signed and handed in", "bought and wrapped": a second participle after the first adds nothing to which task
    + r")(?:\s+(?:and|&)\s+[a-z]+(?:ed|en|t)(?:\s+(?:in|off|up|out|back|over))?)?"
    # where and when it was done: "handed out at school yesterday"
    r"(?:\s+at\s+(?:the\s+)?[\w-]+)?(?:\s+(?:now|already|too|today|yesterday|this morning|at last))?"
    r"(?:\s+for\s+(?:[\w'’]+\s*){1,3})?\s*[.!]*$",
    re.I,
)
# Asked about, these are a look at the calendar; said, they may be a request ("add the dentist to my calendar")
ASKED_RE = lazy_regex(r"\b(my calendar|my day|(?:any|which|what) (?:meetings?|appointments?|events?))\b", re.I)
QUESTION_RE = lazy_regex(
    r"\?\s*$|^\s*(?:(?:please|can you|could you|would you)\s+)?(?:what|whats|which|when|any|anything|"
    r"do i|have i|am i|is|are there|how|show|list|check|tell me|look at|open)\b",
    re.I,
)
CALENDAR_RE = lazy_regex(r"\b(calendar|diary|appointments?|meetings?|events?|my day)\b", re.I)
REMIND_RE = lazy_regex(r"^\s*(?:please\s+)?remind me(?:\s*:\s*|\s+)(?:to\s+)?(?P<rest>.+?)\s*[.!]*$", re.I)
ABOUT_RE = lazy_regex(
    r"^\s*(?:please\s+)?remind me (?:about|of) (?:the\s+)?(?P<what>.+?)\s+(?:again\s+)?"
    r"(?P<when>(?:on|at|in|next|tomorrow|tonight|today)\b.*)$",
    re.I,
)
MOVE_RE = lazy_regex(
    r"^\s*(?:please\s+)?(?:move|push|shift|postpone|reschedule|snooze|delay|pause)\s+(?:the\s+)?"
    r"(?P<what>.+?)\s+(?:to|until|till|for|by|on)\s+(?P<when>.+?)\s*[.!]*$",
    re.I,
)
DROP_RE = lazy_regex(
    r"^\s*(?:please\s+)?(?:drop|cancel|delete|remove|forget about|forget|scrap|scratch|ditch|skip|"
    r"never ?mind)\s+"
    r"(?:the\s+)?(?P<what>.+?)\s*[.!]*$|^\s*(?:i|we) (?:don'?t|do not|won'?t|will not) need(?: to)? "
    r"(?:the\s+)?(?P<what2>.+?)(?:\s+any\s?more|\s+after all)?\s*[.!]*$"
    r"|^\s*(?:i'?ve|i have|we'?ve|we have)?\s*decided (?:not to|against) (?P<what3>.+?)\s*[.!]*$",
    re.I,
)
CLOSE_RE = lazy_regex(
    r"^\s*(?:please\s+)?(?:close|archive|end|finish)\s+(?:the\s+)?(?P<what>.+?)\s*[.!]*$"
    r"|^\s*(?:the\s+)?(?P<what2>.+?)\s+(?:is|are)\s+(?:over|behind me|finished for good)\s*[.!]*$",
    re.I,
)
RENAME_RE = lazy_regex(r"^\s*rename (?:the\s+)?(?:topic\s+)?(?P<old>.+?) (?:to|as) (?P<new>.+?)\s*[.!]*$", re.I)
# "put eggs on my shopping list" (not "put the bins out", nor the dentist in the calendar)
_PUT_ON_LIST = r"put(?=\s.+\s(?:on|to)\s(?:my|the|our)\s(?:[\w-]+\s)?list\s*[.!]*$)"
ADD_RE = lazy_regex(
    r"^\s*(?:please\s+)?(?:add\s+to\s+(?:my|the)\s+(?:to-?do\s+)?(?:list|tasks|to-?dos)\s*:|add(?: a)?(?: task)?(?: to)?:?|new task:?|todo:?|to-do:?|task:|"
    + _PUT_ON_LIST
    + "|"
    # a German day's dot is the date's ("bis 28."), not the sentence's
    r"(?:i|we) (?:need|have|must|should|got) to|(?:i|we)'ve got to|don'?t let me forget to|i must)\s+"
    r"(?P<what>.+?(?:\b(?:bis|zum|am|den)\s+\d{1,2}\.)?)\s*[.!]*$",
    re.I,
)
# "add …", "todo: …": the user names the task; no life event's plan is read into it
EXPLICIT_ADD_RE = lazy_regex(r"^\s*(?:please\s+)?(?:add\b|new task\b|todo\b|to-do\b|task:|" + _PUT_ON_LIST + ")", re.I)
# "note to self: buy milk", "memo - call the bank": what follows is read as said, and kept as a task when no other
# rule reads it
NOTE_RE = lazy_regex(
    r"^\s*(?:(?:note|reminder|memo)\s+to\s+(?:self|myself)\b\s*[:\-\u2013\u2014]?|(?:note|memo)\s*[:\-\u2013\u2014])\s*",
    re.I,
)
# "file my taxes" → "File taxes": a topic is named after the thing, not whose it is
POSSESSIVE_RE = lazy_regex(r"\b(?:my|our|his|her|their)\s+", re.I)
TOPICISH = lazy_regex(r"\b(topic|trip|project|plan|wedding|move|conference|holiday|vacation)\b", re.I)


@dataclass
class Reply:
    text: str = ""
    calls: list = field(default_factory=list)
    rule: str = ""


@dataclass
class Chat:
    """What a message is read against: the user's open tasks and topics, pending proposals, the time."""

    text: str
    now: datetime
    tz: object
    playbook: Playbook
    tasks: list = field(default_factory=list)
    topics: list = field(default_factory=list)
    pending: list = field(default_factory=list)
    offered: tuple = ()
    first_contact: bool = False
    home: object = None
    memories: list = field(default_factory=list)  # what the context recalled for the message
    whole_list: bool = False  # `tasks` is every open task (list_tasks' answer), not the context's few due soon
    missed: dict | None = None  # for "what did I miss?": the context's view of it (actors/cortex/missed.py)
    said_before: list = field(default_factory=list)  # what Wilson said in this conversation, oldest first
    followed_up: dict | None = None  # the follow-up of tasks the message answers (the context's `followed_up`)

    @property
    def today(self) -> date:
        return self.now.astimezone(self.tz).date()


@lru_cache(maxsize=64)  # several rules read the same message so
def normal(text: str) -> str:
    return " ".join(re.sub(r"[^\w'#\s-]", " ", text.lower().replace("’", "'")).split())
