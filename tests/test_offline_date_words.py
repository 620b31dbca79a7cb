"""The date search asks the parser only about text it could read a kept date from (wilson/model/offline/date_words.py)."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from wilson.model.offline import date_words, dates

TZ = ZoneInfo("Europe/Berlin")
NOW = datetime(2027, 1, 5, 10, 0, tzinfo=TZ)
LANGUAGES = tuple(dates.LANGUAGES)

# no word the parser knows, and only plain numbers: nothing it finds could be kept
NOTHING_TO_READ = [
    "ping 3",
    "buy 3 apples",
    "room 12B",
    "ping3 4",
    "3 4 2027",
    "order 4711 shipped",
    "ping 17.",
    "ping 3 ESTIMATE",
]
# a word of the parser's, a timezone, or digits written as a date or an hour
SOMETHING_TO_READ = [
    "call 3 on 5",
    "ping 25th",
    "meet 12.03.2027",
    "ping 10:30",
    "15h30",
    "ping 3 EST",
    "pay €30",
    "le 3 mars",
    "am 3. März",
    "el 3 de marzo",
    "3+4",
    "in 3 days",
    "ping 25est",
    "room 12cet",
]


@pytest.fixture
def parser_calls(monkeypatch):
    """The texts the date parser's search was asked about."""
    calls = []
    dateparser, search_dates = dates._parser()

    def counted(text, *args, **kwargs):
        calls.append(text)
        return search_dates(text, *args, **kwargs)

    monkeypatch.setattr(dates, "_parser", lambda: (dateparser, counted))
    dates.forget_readings()  # a text read before, kept, would not reach the parser: every call is counted
    return calls


@pytest.mark.parametrize("text", NOTHING_TO_READ)
def test_a_text_without_a_word_the_parser_knows_is_not_given_to_it(text, parser_calls):
    assert dates.search(text, NOW, TZ) == []
    assert parser_calls == []


@pytest.mark.parametrize("text", SOMETHING_TO_READ)
def test_a_text_with_a_date_word_timezone_or_written_date_is_left_to_the_parser(text):
    # whether the search then asks the parser is its own affair: it reads some dates ("3. März") itself first
    dates._parser()
    assert date_words.could_hold_date(text, LANGUAGES), f"the parser would not be asked about {text!r}"


@pytest.mark.parametrize("text", NOTHING_TO_READ + SOMETHING_TO_READ)
def test_the_search_finds_what_it_found_when_the_parser_read_everything(text, monkeypatch):
    gated = dates.search(text, NOW, TZ, months=True, parts=True)
    monkeypatch.setattr(dates, "could_hold_date", lambda text, languages: True)
    dates.forget_readings()  # read again without the check, not the reading kept from just above
    assert gated == dates.search(text, NOW, TZ, months=True, parts=True)


def test_the_words_are_the_parsers_own_in_each_language_searched():
    dates._parser()
    known = date_words.known_words(LANGUAGES)
    assert {"tomorrow", "morgen", "demain", "mañana", "märz", "ago", "fortnight"} <= known
    assert {"est", "cet", "utc"} <= known  # timezones, which it finds in any case
    assert not {"ping", "apples", "please", "remind", "order"} & known


def test_a_text_of_one_clause_is_given_to_the_parser_once(parser_calls):
    # when the whole text finds nothing, each clause is read alone; a text of one clause was that whole already
    dates.search("ping 3 at the office", NOW, TZ)
    assert parser_calls == ["ping 3 at the office"]
