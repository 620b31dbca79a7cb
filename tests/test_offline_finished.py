"""wilson/model/offline/finished.py: which questions are a look at what is done, and the days each names."""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest

from wilson.model.offline import finished
from wilson.model.offline.phrases import Chat

TODAY = date(2027, 1, 5)  # a Tuesday


@pytest.mark.parametrize(
    "text, first, last",
    [
        ("what did I finish?", date(2026, 12, 23), TODAY),
        ("What have I done so far this week?", date(2027, 1, 4), TODAY),
        ("what have I done this week so far?", date(2027, 1, 4), TODAY),
        ("what did I finish since Monday?", date(2027, 1, 4), TODAY),
        ("what did I finish since yesterday?", date(2027, 1, 4), TODAY),  # it was yesterday alone
        ("what did I get done in the last week?", date(2026, 12, 30), TODAY),
        ("what did I finish in the past month?", date(2026, 12, 7), TODAY),  # it was the last two weeks
        ("what did I finish last week?", date(2026, 12, 28), date(2027, 1, 3)),
        ("what did I finish last month?", date(2026, 12, 1), date(2026, 12, 31)),
        ("what did I finish last year?", date(2026, 1, 1), date(2026, 12, 31)),
        ("what did I finish last Friday?", date(2027, 1, 1), date(2027, 1, 1)),
        ("what did I finish today, Wilson?", TODAY, TODAY),
    ],
)
def test_each_question_names_its_days(text, first, last):
    assert finished._ASKED.fullmatch(text) is not None
    assert finished.span(text, TODAY)[:2] == (first, last)


@pytest.mark.parametrize(
    "text",
    [
        "what did I do wrong",
        "what did I do with the passport?",
        "What did I do to deserve this",
        "which did I complete? mark the other done",
        "what have I done, mark passport done",
    ],
)
def test_a_request_or_another_question_is_no_look_at_what_is_done(text):
    assert finished.look(chat(text), text) is None
    assert finished.look(chat("what did I finish?"), "what did I finish?").calls == [("list_tasks", {"status": "done"})]


def chat(text: str) -> Chat:
    return Chat(
        text=text,
        now=datetime(2027, 1, 5, 10, 0, tzinfo=ZoneInfo("Europe/Berlin")),
        tz=ZoneInfo("Europe/Berlin"),
        playbook=None,
        offered=("list_tasks",),
    )
