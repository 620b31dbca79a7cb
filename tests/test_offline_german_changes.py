"""wilson/model/offline/german_changes.py: a task done, moved or dropped as a German writes it in a status line."""

from __future__ import annotations

import pytest

from tests.offline_support import answer

CLUB = [
    {"id": 1, "title": "Mitgliedsbeiträge für den Gartenverein einsammeln", "due": "2027-05-31", "status": "open"},
    {"id": 2, "title": "Festzelt für unser Sommerfest beim Verleih reservieren", "due": "2027-05-28", "status": "open"},
    {"id": 3, "title": "Wasseruhren in allen Parzellen ablesen lassen", "due": "2027-05-25", "status": "open"},
]


@pytest.mark.parametrize(
    "text, call",
    [
        ("Die Beiträge sind vollständig da.", ("complete_task", {"task_id": 1})),  # the head of a compound
        ("das Zelt bitte auf den 4. Juni schieben", ("update_task", {"task_id": 2, "due": "2027-06-04"})),
        ("Und die Wasseruhren streichen, das macht Herr Pawlak.", ("cancel_task", {"task_id": 3})),
    ],
)
def test_one_line_s_change_to_the_task_its_words_name(text, call):
    assert answer(text, tasks=CLUB).calls == [call]


def test_a_status_message_of_three_lines_is_three_changes_and_no_one_else_s_holiday_is_a_trip():
    text = (
        "Kurzer Stand: Die Beiträge sind vollständig da. Das Zelt kann ich erst reservieren, wenn der Verleih am "
        "1. Juni aus dem Urlaub zurück ist, also bitte auf den 4. Juni schieben. Und die Wasseruhren streichen, das "
        "macht dieses Jahr Herr Pawlak vom Vorstand."
    )
    assert answer(text, tasks=CLUB).calls == [
        ("complete_task", {"task_id": 1}),
        ("update_task", {"task_id": 2, "due": "2027-06-04"}),
        ("cancel_task", {"task_id": 3}),
    ]


def test_words_that_name_no_open_task_change_none():
    assert answer("Die Wände streichen", tasks=CLUB).calls == [("create_task", {"title": "Wände streichen"})]
    assert answer("das Auto ist da", tasks=CLUB).calls == []


def test_the_user_s_own_holiday_is_still_a_trip():
    assert answer("Wir fahren am 3. Juni in den Urlaub nach Kreta", tasks=[]).calls[0][0] == "create_topic"


def test_a_thing_repaired_with_who_did_it_after_a_comma_is_its_task_done():
    tasks = [{"id": 9, "title": "Küchenfenster in der Müllerstraße reparieren lassen", "status": "open"}]
    said = "Fenster in der Müllerstraße ist repariert, der Glaser war heute Nachmittag da"
    assert answer(said, tasks=tasks).calls == [("complete_task", {"task_id": 9})]


def test_a_thing_that_came_or_a_painting_task_is_not_a_change():
    tasks = [
        {"id": 1, "title": "Rechnung vom Zahnarzt bezahlen", "status": "open"},
        {"id": 2, "title": "Mietvertrag-Unterlagen unterschreiben", "status": "open"},
        {"id": 3, "title": "Gartenzaun streichen", "status": "open"},
    ]
    for said in ("Die Rechnung ist da.", "Die Unterlagen sind da, aber noch nicht unterschrieben", "Zaun streichen"):
        assert not [c for c in answer(said, tasks=tasks).calls if c[0] in ("complete_task", "cancel_task")], said


def test_a_german_deed_finishes_the_one_task_with_its_verb_written_in_english():
    tasks = [
        {"id": 4, "title": "Fix: Kitchen window in flat 3 won't close", "status": "open"},
        {"id": 5, "title": "Pay: Invoice 2231", "status": "open"},
    ]
    said = "Fenster in der Müllerstraße ist repariert, der Glaser war heute Nachmittag da"
    assert answer(said, tasks=tasks).calls == [("complete_task", {"task_id": 4})]
    # two tasks with that verb: which one is not guessed
    twice = [*tasks, {"id": 6, "title": "Repair the garden gate", "status": "open"}]
    assert answer(said, tasks=twice).calls == []
    # "done" said of the thing, in German, of the one task that names it in English (Fenster: window)
    assert answer("Das Fenster ist erledigt", tasks=tasks).calls == [("complete_task", {"task_id": 4})]
    assert answer("Das Auto ist erledigt", tasks=tasks).calls == []
