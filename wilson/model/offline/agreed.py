"""A yes said in full sentences, as a careful or formal writer answers a proposal: "Yes, please do so.", "Yes, thank
you very much.", "That is fine now.", "Agreed, thank you.", "Yes, please, that is exactly what I need.".

The short answers (wilson/model/offline/short_answers.py) read a yes with a word or two of courtesy around it; a
formal writer says more of it. Here a message is a yes when it is made only of agreeing words and courtesy, and at
least one of them agrees: thanks alone ("Thank you very much, that is all") or a "fine" said of something else
("the weather is fine") agree to nothing.

Pure: `said_yes(text)` reads the words, nothing else.
"""

from __future__ import annotations

import re

from wilson.kernel.lazy_regex import lazy_regex

# words that agree to what was proposed
_AGREE = (
    r"yes|yeah|yep|agreed|i agree|exactly|correct|of course|certainly|please do(?: so| that)?|do so|go ahead|"
    r"(?:that|it|this)(?: is|'s| sounds| looks| seems)(?: all| now)? (?:fine|right|correct|good|perfect|great|ok|okay|"
    r"alright|all right|exactly right)(?: now| with me| for me| by me)?|that is exactly it|(?:that|this) works(?: for me)?"
)
# courtesy around them, agreeing to nothing alone
_COURTESY = (
    r"please|now|indeed|thank you(?: very much| so much| a lot| kindly)?|thanks(?: a lot| very much| so much)?|"
    r"many thanks|(?:that|this) is (?:exactly |just )?what i (?:need|needed|wanted|meant|had in mind)|perfect|great|"
    r"wonderful|very good|good|fine"
)
_SAID = lazy_regex(rf"^(?:(?:{_AGREE}|{_COURTESY})\s*)+$")
_AGREES = lazy_regex(rf"(?:^|\s)(?:{_AGREE})(?=\s|$)")


def _plain(text: str) -> str:
    """The words of a message, lower case, without punctuation."""
    return " ".join(re.sub(r"[^\w'\s]", " ", text.lower().replace("’", "'")).split())


def said_yes(text: str) -> bool:
    """Whether the whole message agrees to the proposal it answers, in words and courtesy only."""
    said = _plain(text)
    return bool(said) and len(said.split()) <= 12 and bool(_SAID.match(said)) and bool(_AGREES.search(said))


# a yes in its own words, not only pleasure ("that's great" may be about anything said since)
_YES_WORD = lazy_regex(
    r"(?:^|\s)(?:yes|yeah|yep|agreed|i agree|exactly|correct|of course|certainly|please do|do so|go ahead|"
    r"(?:that|this) works)(?=\s|$)"
)


def only_pleased(text: str) -> bool:
    """Whether a yes (said_yes) is pleasure alone, "that's great", "cheers, that sounds good", with no word that
    answers: right after a proposal it agrees to it; later it is about what was said since."""
    said = _plain(text)
    return said_yes(text) and not _YES_WORD.search(said)
