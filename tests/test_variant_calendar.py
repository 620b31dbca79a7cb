"""The calendar variants (tests/data/variants/calendar.txt): ordinary meetings, appointments, trips and conferences
titled in German and in English, written while tuning the offline rules. Held to the issue's floor like the fresh
dev tables; unlike them they were written by the rules' own hands, so they guard against a regression, they do not
measure how the rules generalise (the fresh held-back half does)."""

from __future__ import annotations

import pytest

from tests.table_support import DATA, assert_honest, run_half

FLOOR = 0.85


@pytest.mark.slow
def test_calendar_variants_meet_the_floor(make_app):
    events, _, invariants, said = run_half(make_app, DATA / "variants" / "calendar.txt", show_misses=True)
    assert_honest(invariants, said)
    assert events.expected >= 25 and events.precision >= FLOOR and events.recall >= FLOOR, events.wrong
