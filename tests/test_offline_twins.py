"""Kinds of language the seventh dev batch's twins (phrases_dev_h.txt, phrases_dev_i.txt) showed the rules missing,
each read as a kind, in wordings of our own, beside lines of the same shape that must not match: a deed said as
people say it (a talk for a call, a mail sent by its noun, a thing in its state), ..."""

from __future__ import annotations

import pytest

from tests.offline_support import read

# a deed said as people say it: its task done ---------------------------------------------------------------------

DONE_TASKS = [
    {"id": 1, "title": "Call the locksmith", "status": "open"},
    {"id": 2, "title": "Email Ms. Brandt about the invoice", "status": "open"},
    {"id": 3, "title": "Collect the parcel from the post office", "status": "open"},
    {"id": 4, "title": "Book flights to Lisbon", "due": "2027-01-29", "status": "open"},
    {"id": 5, "title": "Get the snow chains fitted", "status": "open"},
    {"id": 6, "title": "Phone Aunt Vera", "status": "open"},
]


@pytest.mark.parametrize(
    "text, task_id",
    [
        ("just got off the phone with the locksmith", 1),
        ("spoke to the locksmith this morning, all sorted", 1),
        ("finally got hold of Aunt Vera last night, we talked for an hour", 6),
        ("talked with aunt vera earlier", 6),
        ("sent Ms. Brandt the email about the invoice ✔", 2),
        ("Just sent Ms Brandt an email about the invoice.", 2),
        ("collected the parcel from the post office on my way home", 3),
        ("collected the parcel from the post office two hours ago", 3),
        ("The Lisbon flights are bought.", 4),
        ("the snow chains are on", 5),
        ("snow chains are fitted now, the garage had a slot", 5),
    ],
)
def test_a_deed_said_as_people_say_it_completes_its_task(text, task_id):
    assert read(text, tasks=DONE_TASKS).calls == [("complete_task", {"task_id": task_id})]


@pytest.mark.parametrize(
    "text",
    [
        "Tom spoke to the locksmith",  # someone else's talk
        "did you speak to the locksmith?",  # a question
        "I still need to talk to the locksmith",  # a need
        "the lights are on",  # a state no task asks for
        "Anna sent me an email about the invoice",  # mail received
        "are the snow chains on?",
    ],
)
def test_other_peoples_deeds_needs_and_questions_complete_nothing(text):
    assert "complete_task" not in [name for name, _ in read(text, tasks=DONE_TASKS).calls]
