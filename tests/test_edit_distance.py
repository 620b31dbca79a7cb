"""The offline rules' edit distance (wilson/model/offline/edit_distance.py): the typos they forgive are the ones
rapidfuzz's Damerau-Levenshtein counted, for the short words they compare."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import DamerauLevenshtein

from wilson.model.offline.edit_distance import distance
from wilson.model.offline.short_answers import word_answer
from wilson.model.offline.texting import plain


def test_a_letter_added_dropped_changed_or_swapped_is_one_edit():
    assert distance("tomorrow", "tomorrow") == 0
    assert distance("tomorow", "tomorrow") == 1  # dropped
    assert distance("yess", "yes") == 1  # added
    assert distance("nope", "nape") == 1  # changed
    assert distance("wendesday", "wednesday") == 1  # two letters swapped
    assert distance("ca", "abc") == 2  # swapped with a letter between: not three
    assert distance("", "remind") == 6


def test_with_a_cutoff_a_far_word_counts_one_past_it():
    assert distance("saturday", "x", 2) == 3
    assert distance("remnd", "remind", 1) == 1


words = st.text(alphabet="abcdeyson", max_size=9)


@settings(max_examples=2000, deadline=None)
@given(words, words, st.sampled_from([None, 1, 2]))
def test_it_counts_as_rapidfuzz_does(a, b, cutoff):
    expected = (
        DamerauLevenshtein.distance(a, b) if cutoff is None else DamerauLevenshtein.distance(a, b, score_cutoff=cutoff)
    )
    assert distance(a, b, cutoff) == expected


def test_the_rules_still_read_a_typo_as_the_word_meant():
    assert word_answer("yse") == "yes" and word_answer("noo") == "no" and word_answer("not") is None
    assert plain("remnd me on wendesday") == "remind me on wednesday"
    assert plain("Monaco on tomorow") == "Monaco on tomorrow"
