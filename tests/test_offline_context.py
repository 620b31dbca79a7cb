"""actors/cortex/context.py `relevant`: a task named by a short word ("the gym task", "tax", "car", "vet") is in the
context the offline rules (and a model) read, so "drop the gym task" can find it among many others."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

import pytest

from actors.cortex.context import relevant

NOW = datetime(2027, 1, 5, 9, 0, tzinfo=timezone.utc)


def task(id_, title, due=None, topic_id=None):
    return SimpleNamespace(id=id_, title=title, due=due, topic_id=topic_id)


# more tasks than the context shows: the next few due and the ones due this week are always in, the rest only
# when the message names them
FAR = [task(i, f"Paperwork batch {i}", due=NOW + timedelta(days=30 + i)) for i in range(1, 21)]
SHORT = [
    task(101, "Renew gym membership"),
    task(102, "File the tax return"),
    task(103, "Service the car"),
    task(104, "Take the cat to the vet"),
]


def kept(text: str) -> set[str]:
    row = SimpleNamespace(text=text, payload={})
    _, tasks = relevant(row, [], FAR + SHORT, NOW, [])
    return {t.title for t in tasks}


@pytest.mark.parametrize(
    "text, title",
    [
        ("drop the gym task", "Renew gym membership"),
        ("snooze the gym task until Monday", "Renew gym membership"),
        ("done with the tax", "File the tax return"),
        ("move the car one to next week", "Service the car"),
        ("vet is done", "Take the cat to the vet"),
    ],
)
def test_a_three_letter_word_brings_its_task_into_context(text, title):
    assert title in kept(text)


@pytest.mark.parametrize(
    "text, title",
    [
        ("scrap the plant watering thing, my daughter is staying at the flat", "Water the plants"),
        ("the membership renewal at the gym can go", "Renew gym membership"),
    ],
)
def test_a_word_said_in_another_form_brings_its_task_into_context(text, title):
    row = SimpleNamespace(text=text, payload={})
    _, tasks = relevant(row, [], FAR + SHORT + [task(105, "Water the plants")], NOW, [])
    assert title in {t.title for t in tasks}


def test_short_stop_words_bring_nothing():
    # "the", "and", "for", "you", "new" are in every task title and message: they name no task
    assert kept("the and for you new") & {t.title for t in SHORT} == set()


def test_a_named_topics_tasks_are_kept_before_a_busy_week_fills_the_context():
    busy = [task(200 + i, f"Errand {i}", due=NOW + timedelta(hours=i + 1)) for i in range(30)]  # all due this week
    japan = SimpleNamespace(id=7, title="Trip to Japan")
    trip = [
        task(300, "Book flights", due=NOW + timedelta(days=40), topic_id=7),
        task(301, "Check visa", due=NOW + timedelta(days=50), topic_id=7),
    ]
    row = SimpleNamespace(text="what's in the Japan topic?", payload={})
    topics, tasks = relevant(row, [japan], busy + trip, NOW, [])
    assert {"Book flights", "Check visa"} <= {t.title for t in tasks} and japan in topics
    assert [t.title for t in tasks][2:5] == ["Errand 0", "Errand 1", "Errand 2"]  # then what is due, in order


@pytest.mark.parametrize(
    "text, title",
    [
        ("Anmeldung zum 10k geht noch bis 8.2., bitte Frist ändern", "Register for the 10k run"),
        ("B2 exam moved", "Book the B2 exam"),
    ],
)
def test_a_word_of_letters_and_digits_brings_its_task_into_context(text, title):
    row = SimpleNamespace(text=text, payload={})
    extra = [task(106, "Register for the 10k run"), task(107, "Book the B2 exam")]
    _, tasks = relevant(row, [], FAR + SHORT + extra, NOW, [])
    assert title in {t.title for t in tasks}


def test_a_bare_number_or_time_brings_no_task_into_context():
    row = SimpleNamespace(text="at 10:30 on 8.2.", payload={})
    _, tasks = relevant(row, [], FAR + SHORT + [task(106, "Register for the 10k run")], NOW, [])
    assert "Register for the 10k run" not in {t.title for t in tasks}
