"""A short follow-up to the proposal just made, read against it: "no, I already did that" declines it; "and on
Tuesday?", "what about 9?" change its time (wilson/model/offline/answers.py modify reads the change).

Only right after the proposal (the context marks it `just_asked`: the user's first message since) is a day said
alone a change to it; later it may be about anything. A no with its reason is a no whenever one waits, as a bare
"no" is.
"""

from __future__ import annotations

import re

from wilson.model.offline import dates
from wilson.model.offline.answers import HOUR_NUMBERS, TIME_ONLY, YES_AGAIN
from wilson.model.offline.put_right import INSTEAD_OF_DAY_RE
from wilson.model.offline.relative import relative_change
from wilson.model.offline.phrases import Chat, Reply, normal
from wilson.model.offline.short_answers import word_answer
from wilson.kernel.lazy_regex import lazy_regex


# "and on Tuesday?", "what about 9?", "or Friday instead": a day or an hour said alone right after a proposal
_ABOUT = (
    # "hmm no, quarter past 9", "a bit later please, 8 o'clock": a no or a please before the new time
    r"(?:and|or|but|what about|how about|maybe|rather|actually|then|better|instead|hmm+|oh|ok|okay|well|wait|"
    r"no|nope|nah|please|pls|"
    r"earlier|later|like|a bit|a little|slightly|not (?:today|tomorrow|tonight|then|that day|(?:mon|tues|wednes|thurs|fri|satur|sun)day)|"
    r"sorry|(?:can|could) (?:you|we) (?:do|make it|make that|say)|let(?:'?s| us) (?:do|say|make it)|do|say|"
    r"(?:change|move|set|put|make) (?:the )?(?:time|day|date|it|that|this) (?:to|for))"
)
FOLLOW_UP_RE = lazy_regex(
    rf"^(?:{_ABOUT}\s+)*(?P<when>.+?)(?:\s+(?:instead|then|please|maybe|rather|actually|too|though|"
    # "saturday would suit me better actually", "6 would work for me"
    r"(?:works|would work|is|would be|suits|would suit)(?:\s+(?:for\s+)?me)?(?:\s+better)?|is fine|if possible))*$"
)
# "no, I already did that", "nope - not needed": a no with its reason after it
NO_BECAUSE_RE = lazy_regex(
    r"^\s*(?P<no>[^\W\d_]+)\b\s*(?:[,;:.!-]+|\s+(?:because|since|as|i|we|it|that|this|my|our|he|she|they|you|"
    r"thanks|thank|wait|sorry|actually|not|that'?s|thats|"
    # and in German: "nein danke, hab schon alles geklärt", "nö brauch ich nicht"
    r"danke|ich|wir|hab|habe|haben|brauch|brauche|das|es|ist|schon|leider|doch|warte|moment|lass)\b)\s*(?P<why>.*)$",
    re.I,
)


_SAID_TWICE_RE = lazy_regex(r"^\s*([^\W\d_]+)(?:\s+\1\b)+", re.I)
# "not necessary, I did it online", "I've already done that", "don't bother, it's sorted": a no without the word,
# right after the proposal (later, "it's done" may be about anything)
NOT_NEEDED_RE = lazy_regex(
    r"^(?:(?:oh|ah|ok|okay|thanks|thank you|but|well|actually|sorry|hm+)[\s,!.]+)*"
    r"(?:not (?:necessary|needed)|no need|don'?t bother|"
    r"(?:i'?ve|i have|we'?ve|we have|i|we)\s+(?:already\s+|just\s+)?(?:done|did|paid|booked|sent|"
    r"signed|renewed|submitted|sorted|handled|taken care of|took care of)\s+(?:it|that|this|them)"
    r"(?:\s+already)?(?=\W|$)(?<!\bi did it)(?<!\bwe did it)|"
    r"already\s+(?:done|did it|paid|sorted|handled|taken care of)|"
    r"(?:it'?s|that'?s|it is|that is)\s+(?:already\s+)?(?:sorted|done|handled|taken care of|paid))"
    r"(?:\W|$)",
    re.I,
)


# "no, that is not necessary, I have done it already this morning": the reason says no, whatever day it names
_NOT_NEEDED_WHY_RE = lazy_regex(
    r"^(?:(?:that|it)(?:'s|\s+is|\s+was)\s+)?(?:not\s+(?:necessary|needed)|no\s+need)\b", re.I
)


def follow_up(chat: Chat, text: str) -> Reply | None:
    """A short follow-up to the proposal just asked (the user's first message since): a no with its reason is a
    no, and a day or an hour said alone ("and on Tuesday?", "make it 9 instead" says it of "it") changes its
    time. None when no proposal was just asked, or the words are something else."""
    proposals = [p for p in chat.pending if isinstance(p, dict) and p.get("items")]
    if "decide" not in chat.offered or not proposals:
        return None
    newest = proposals[0]
    yes_but = _yes_but(text)
    if yes_but:
        # "yes but make it 9", "ok, but at 10": agreed, with a change; the change is read against the proposal,
        # and the changed proposal is approved without asking again
        return Reply(
            "",
            [
                (
                    "decide",
                    {"proposal": newest["id"], "action": "approve", "changes": yes_but.group("change").strip(" ,.!")},
                )
            ],
            "a yes with a change",
        )
    text = _HOUR_WORD_RE.sub(lambda m: str(HOUR_NUMBERS[m.group(0).lower()]), text)  # "seven would be better"
    text = _SAID_TWICE_RE.sub(r"\1", text)  # "yok yok, …", "no no no": the answer said once
    not_this = _NO_NOT_RE.match(text.strip())
    if not_this and word_answer(not_this.group("no")) == "no":
        text = text.strip()[not_this.end() :]  # "no, not tonight, tomorrow": the day it is not, then the new one
    no = NO_BECAUSE_RE.match(text.strip())
    if no and word_answer(no.group("no")) == "no" and TIME_ONLY.match(no.group("why").strip(" ,;:.!-")):
        # "no, 7": the hour changes, not the answer
        return Reply(
            "",
            [
                (
                    "decide",
                    {"proposal": newest["id"], "action": "modify", "changes": f"at {no.group('why').strip(' ,;:.!-')}"},
                )
            ],
            "a change to a proposal, after a no",
        )
    if no and word_answer(no.group("no")) == "no":
        why = no.group("why").strip(" ,;:.-")
        told_then = _when_said_last(chat, why)
        if told_then:  # "no wait, the garage is closed next week. by friday pls": the reason, then the new day
            return Reply(
                "",
                [("decide", {"proposal": newest["id"], "action": "modify", "changes": told_then})],
                "a change to a proposal, its reason first",
            )
        # "no, that's too early, I'd rather do it in May": a month alone is its first day, as for a reminder
        found = dates.search(why, chat.now, chat.tz, parts=True, months=bool(_RATHER_RE.search(why)))
        rest = normal(why)
        for one in found:
            rest = rest.replace(one.phrase.lower(), " ")
        if not _NOT_NEEDED_WHY_RE.match(why) and (
            relative_change(why)
            or found
            and (
                CHANGE_TO_RE.search(why)
                or not set(rest.split()) - _AROUND_A_TIME - {"wait", "sorry", "i", "meant", "mean"}
            )
        ):
            # "no, on Tuesday instead", "no wait, Thursday": the day changes, not the answer; a month alone ("in
            # May") goes as its first day, which the change reads (it reads no month alone)
            month_only = found and not dates.search(why, chat.now, chat.tz, parts=True)
            changes = dates.iso(found[0].value) if month_only else why
            return Reply(
                "",
                [("decide", {"proposal": newest["id"], "action": "modify", "changes": changes})],
                "a change to a proposal, after a no",
            )
        return Reply("", [("decide", {"proposal": newest["id"], "action": "reject"})], "no to a proposal, with why")
    if not newest.get("just_asked"):
        return None
    if _THANKS_BUT_RE.match(text.strip()):  # "thank you, but the clinic sends me all the instructions"
        return Reply(
            "", [("decide", {"proposal": newest["id"], "action": "reject"})], "thanks, but no, said right after"
        )
    if NOT_NEEDED_RE.match(normal(text)) or _NOT_YET_RE.match(normal(text)):
        return Reply("", [("decide", {"proposal": newest["id"], "action": "reject"})], "not needed, said right after")
    if relative_change(text):  # "an hour earlier", "the day after", "same time next week": against its time
        return Reply(
            "",
            [("decide", {"proposal": newest["id"], "action": "modify", "changes": text})],
            "a time relative to the proposed one, said right after",
        )
    # "wednesday not tuesday", "not at 9 but at 10": the time it is not is no part of the change
    said = text
    text = _NOT_THIS.sub(" ", text) if _NOT_THIS.sub(" ", text).strip(" ,.!?") else text
    found = FOLLOW_UP_RE.match(
        " ".join(re.sub(r"[,;!?]|\.(?!\d)|\s[-–—]+\s", " ", text.lower().replace("’", "'")).split())
    )
    when = found.group("when") if found else ""
    read = dates.search(when, chat.now, chat.tz, parts=True)
    if len(when.split()) > 5 or not (read or TIME_ONLY.match(when)):
        return None
    rest = when
    for one in read:
        rest = rest.replace(one.phrase.lower(), " ")
    if set(rest.split()) - _AROUND_A_TIME and not TIME_ONLY.match(when):
        return None  # "and the flights on Tuesday?", "what's due tomorrow?" say more than a time
    # the time alone, as the change reads it: "can you do 8 instead?" is "at 8"
    changes = when if read else f"at {when}"
    if INSTEAD_OF_DAY_RE.search(said):
        changes = said  # "wednesday not tuesday": the day it was is said, and the change is read against it
    return Reply(
        "",
        [("decide", {"proposal": newest["id"], "action": "modify", "changes": changes})],
        "a day or an hour said right after a proposal",
    )


def _yes_but(text: str) -> re.Match | None:
    """A yes (or an ok) with a change after it, the change in its group `change`; None for anything else."""
    found = _YES_BUT_RE.match(text.strip())
    if found and (word_answer(found.group("yes")) == "yes" or found.group("yes").lower() in _OK_WORDS):
        return found
    return _MADE_SO_BUT_RE.match(text.strip())  # "(ok,) mach bitte ne Aufgabe draus … – aber …": the ok taken off


def _when_said_last(chat: Chat, why: str) -> str | None:
    """The last sentence after a no's reason when it is a day or an hour said alone ("… closed next week. by friday
    pls"); None when there is one sentence, or the last says more than a time."""
    said = [part.strip(" ,;:.!-") for part in re.split(r"(?<=[.!?;])\s+", why.strip()) if part.strip(" ,;:.!-")]
    if len(said) < 2:
        return None
    last = said[-1]
    found = dates.search(last, chat.now, chat.tz, parts=True)
    if not found:
        return None
    rest = normal(last)
    for one in found:
        rest = rest.replace(one.phrase.lower(), " ")
    return last if not set(rest.split()) - _AROUND_A_TIME - {"pls", "plz", "please", "then", "ok"} else None


# "no, not tonight, tomorrow": a no that only says which time it is not ("nah, not cancelling it - …" is a no with
# its reason)
_NO_NOT_RE = lazy_regex(
    r"^(?P<no>[^\W\d_]+)[\s,;:.!-]+(?=not\s+(?:today|tonight|tomorrow|this|next|on|at|in|then|that|so|before|"
    r"until|till|(?:mon|tues|wednes|thurs|fri|satur|sun)day|morning|evening|afternoon|\d))",
    re.I,
)
# an hour said in words, alone in a follow-up: "seven would be better", "make it seven"
_HOUR_WORD_RE = lazy_regex(
    r"(?<![\w-])(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)(?=\s*(?:$|[?!.,]|am\b|pm\b|"
    r"o'?clock|instead|then|please|would|works|is\s+(?:better|fine)|thirty|fifteen|forty))",
    re.I,
)


# a polite no with its reason: "thank you, but the clinic sends me all the instructions", "thanks but I've got it"
_THANKS_BUT_RE = lazy_regex(r"^(?:thanks|thank you|thx|cheers)(?:\s+(?:so much|a lot))?[\s,!.]*but\b\s*\S", re.I)
_RATHER_RE = lazy_regex(r"\b(?:rather|instead|prefer|better|make it|do it)\b", re.I)
# "yes but make it 9 instead", "ok, but at 10", "sure, just change it to Friday", "ja, mach ne Aufgabe draus – aber
# für Freitag den 5.": a yes (and what says yes again) that changes something
_YES_BUT_RE = lazy_regex(
    rf"^(?P<yes>[^\W\d_]+)\b(?:[\s,;:.!–—-]+{YES_AGAIN})*[\s,;:.!–—-]*(?:but|just|only|aber|nur|pero|mas|mais|ma|ale|maar)\s+(?P<change>.*\S.*)$",
    re.I,
)
# the yes said as what to do with the proposal, its "ok" already taken off as courtesy: "mach bitte ne Aufgabe draus für
# den Wartungsvertrag – aber schon für Montag, den 26.", "hazme una tarea – pero …"
_MADE_SO_BUT_RE = lazy_regex(
    # "draus" makes it the proposal's: "mach mir eine Erinnerung für den Zahnarzt, aber …" is a request of its own
    r"^(?P<yes>mach\s+(?:(?:bitte|mal|mir)\s+)*(?:ne|eine)\s+aufgabe\s+(?:draus|daraus)\b[^–—,;]*?)"
    r"[\s,;:.!–—-]*aber\s+(?P<change>.*\S.*)$",
    re.I,
)
# "not yet, it's ages away", "maybe later, I'll ask you again": not now, said right after the proposal
_NOT_YET_RE = lazy_regex(
    r"^(?:(?:hmm+|nah|well|actually)\s+)*(?:not yet|not now|not right now|not at the moment|maybe later|"
    r"later maybe|too early)\b\s+\S"
)
_OK_WORDS = {"ok", "okay", "alright", "fine", "good", "great", "perfect"}
_NOT_THIS = lazy_regex(r"[,\s]*\b(?:and\s+|but\s+)?not\s+(?:on\s+|at\s+|the\s+)*[\w:.]+(?:\s+but\b)?", re.I)
_AROUND_A_TIME = {
    # "wait, it's due on the 18th": the proposal's day said again, as it should be
    "it's",
    "its",
    "due",
    "on",
    "at",
    "by",
    "for",
    "the",
    "in",
    "and",
    "or",
    "what",
    "about",
    "how",
    "maybe",
    "instead",
    "then",
    "please",
    "rather",
    "actually",
    "make",
    "it",
    "this",
    "next",
    # "actually the 13th, same time": the hour kept
    "same",
    "time",
}
# a change said after a no: it names the new time as the one wanted
CHANGE_TO_RE = lazy_regex(
    r"\b(?:instead|rather|make it|change it|move it|but|meant|not|what about|how about|wrong|"
    r"it'?s (?:on|at)|it is (?:on|at)|should be|"
    # "ne warte, mach den 17. draus", "lieber am Montag", "stattdessen Freitag"
    r"mach\s+(?:den|die|das|es|ihn)\b[^,;!?]*?\bdraus|lieber|stattdessen|besser)\b",
    re.I,
)
