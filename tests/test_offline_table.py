"""The offline rules against a table of ordinary life: calendar events and chat lines, each with
the outcome a person would expect, run through the REPL (wilson/app/repl.py's Repl, as
bin/wilson-repl runs it) on a whole Wilson with no model.

tests/data/offline/dev.txt is the half the rules were tuned on; held_back.txt was written
before tuning and run once afterwards, never tuned on. Recognition is scored as precision
(of the plans and actions proposed, how many were the expected ones) and recall (of the
expected ones, how many were proposed), printed for each half (`pytest -s` shows them).

Measured (`.venv/bin/python -m pytest -q -s -p no:cacheprovider tests/test_offline_table.py`):
dev.txt (36 events, 35 chat lines): events precision 1.00 (27/27), recall 1.00 (27/27);
    chat precision 0.94 (30/32), recall 0.97 (30/31): its "Anna is going to Rome on Friday" row expects the old
    "I didn't understand", written before news got a word back (issue 44); the row is left as it was written. Its
    "Offsite in Barcelona" row expects a trip since the fresh tables showed a work stay away is one (issue 44).
held_back.txt (32 events, 21 chat lines, run after tuning, never tuned on): events precision 0.91 (21/23),
    recall 0.95 (21/22); chat precision 0.95 (18/19), recall 1.00 (18/18): its "thanks!" row expects the
    old "I didn't understand", written before small talk got a word back; the row is left as it was written.
Misses: a client workshop abroad is planned as a trip where a conference was expected; "Trip to the zoo" is
planned as a trip; a trip's passport check said in chat falls a day later than its row expects. (A task named by
a three-letter word, "the gym task", is found since the cortex's context keeps such words.)
"""

from __future__ import annotations

import pytest

from tests.table_support import DATA, assert_honest, run_half


@pytest.mark.parametrize(
    "half, floors",
    [
        ("dev.txt", (0.9, 0.9, 0.9, 0.9)),
        ("held_back.txt", (0.85, 0.85, 0.9, 0.9)),
    ],
)
def test_table_of_events_and_chat_lines(make_app, half, floors):
    """Each half meets its floors of precision and recall (events, then chat), plans never fall due
    after their event, and no delivery of the whole run says "Noted."."""
    events, chat, invariants, said = run_half(make_app, DATA / "offline" / half)
    assert_honest(invariants, said)
    event_p, event_r, chat_p, chat_r = floors
    assert events.precision >= event_p and events.recall >= event_r, events.wrong
    assert chat.precision >= chat_p and chat.recall >= chat_r, chat.wrong
