"""Whether the date parser could find a date in a text that `dates.search` keeps, decided without running it.

The parser's search costs milliseconds a message, and many messages hold no date: "ping 3" has a digit but no
word the parser knows. It builds a date only from words in its languages' data (month and weekday names,
relative words, the words it skips or rewrites), timezone names (in any case: "25est" is a date to it) and tokens
with digits; a phrase of digits alone is kept by `dates.search` only when written as a date ("12.03.2027",
"10:30"). So a text with none of those words and only plain numbers holds no date the search keeps, and the
parser is not asked.

The words are read from the parser's own data for the languages searched in, not listed here: a word it learns
in a new version is known here with it.
"""

from __future__ import annotations

from functools import lru_cache

from wilson.kernel.lazy_regex import lazy_regex

_LETTERS = lazy_regex(r"[^\W\d_]+")
_ESCAPE = lazy_regex(r"\\.")  # "\d", "\s" in a pattern of the parser's data are no words
# a token that is a plain number or a word with digits ("3", "ping3", "3rd"), a stop after it: the parser makes no
# date of it that `dates.search` keeps unless a word of it is the parser's (checked apart)
_PLAIN_TOKEN = lazy_regex(r"[^\W_]+[.,;!?]*")


def _strings(value):
    """Every string in some of the parser's data: keys and values, nested in lists and mappings."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            yield from _strings(item)


@lru_cache(maxsize=4)
def known_words(languages: tuple[str, ...]) -> frozenset[str]:
    """The runs of letters of every word and pattern the date parser knows in `languages`, and of every timezone
    name it knows (it finds those in any case: "25est" is a date to it), in lower case."""
    # lazy: dates._parser() imports dateparser with only these languages loaded; the loader shares them
    from dateparser.conf import settings
    from dateparser.freshness_date_parser import _UNITS
    from dateparser.languages.dictionary import ALWAYS_KEEP_TOKENS, PARSER_KNOWN_TOKENS
    from dateparser.languages.loader import LocaleDataLoader
    from dateparser.languages.locale import _WEEKDAY_MODIFIERS
    from dateparser.timezones import timezone_info_list

    texts = [*PARSER_KNOWN_TOKENS, *ALWAYS_KEEP_TOKENS, *settings.SKIP_TOKENS, *_WEEKDAY_MODIFIERS, _UNITS]
    for locale in LocaleDataLoader().get_locales(languages=list(languages)):
        texts.extend(_strings(list(locale.info.values())))  # its keys name the kinds of data ("date_order")
    for zones in timezone_info_list:  # the names, and the variants its "replace" rules make of them
        texts.extend(_strings([zones.get("timezones", []), zones.get("replace", [])]))
    return frozenset(run.lower() for text in texts for run in _LETTERS.findall(_ESCAPE.sub(" ", text)))


def could_hold_date(text: str, languages: tuple[str, ...]) -> bool:
    """False when the date parser can find nothing in `text` that `dates.search` keeps: no word of it is the
    parser's or a timezone's, and every token with a digit is a plain number or word (no "12.03.2027", "10:30",
    "€30", "3+4")."""
    if not known_words(languages).isdisjoint(map(str.lower, _LETTERS.findall(text))):
        return True
    return any(any(c.isdigit() for c in token) and not _PLAIN_TOKEN.fullmatch(token) for token in text.split())
