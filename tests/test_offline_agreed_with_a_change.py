"""A yes as people write it, with a change after it or a step the plan lacks; and the step then reported done.

These are the ninth blind batch's misreadings (tests/data/fresh/BRIEF.md, "Ninth batch"), each as a rule."""

from __future__ import annotations

import pytest

from tests.offline_support import BERLIN, NOW, answer, read
from wilson.model.offline import answers, sentences

FORM = {
    "id": 1,
    "just_asked": True,
    "items": [
        {
            "position": 1,
            "tool": "create_task",
            "args": {"title": "Send: Bienenhaltung – Angaben erforderlich", "due": "2027-03-11"},
            "description": "New task: Send: Bienenhaltung – Angaben erforderlich — due Thu 11 Mar 2027",
        }
    ],
}
PARTY = {
    "id": 2,
    "just_asked": True,
    "items": [
        {
            "position": 1,
            "tool": "create_topic",
            "args": {"title": "Smilla's birthday", "starts": "2027-07-03"},
            "description": "New topic: Smilla's birthday (Sat 3 Jul 2027)",
        },
        {
            "position": 2,
            "tool": "create_task",
            "args": {"title": "Get a present", "due": "2027-06-26", "topic": "Smilla's birthday"},
            "description": "New task: Get a present — due Sat 26 Jun 2027 (in Smilla's birthday)",
        },
    ],
}


@pytest.mark.parametrize(
    "text",
    ["ja, klingt gut – mach mal 🎶", "klingt gut, mach mal", "ja klingt gut 👍", "ja, klingt gut"],
)
def test_a_german_sounds_good_is_a_yes(text):
    assert read(text, [FORM]).calls == [("decide", {"proposal": 1, "action": "approve"})]


@pytest.mark.parametrize(
    "text, change",
    [
        ("ja, mach ne Aufgabe draus – aber für Freitag den 5., am Wochenende bin ich weg", "für Freitag den 5"),
        ("ja, aber bis zum 5.", "bis zum 5"),
        ("jo aber erst am 12.", "erst am 12"),
        ("ja gut, aber am Montag", "am Montag"),
    ],
)
def test_a_german_yes_but_is_the_proposal_changed_to_the_day_said(text, change):
    ((name, args),) = read(text, [FORM]).calls
    assert (name, args["action"]) == ("decide", "modify") and args["changes"].startswith(change)


def test_the_day_after_aber_redates_the_one_dated_item():
    changed = answers.modify(FORM, "für Freitag den 8., am Wochenende bin ich weg", NOW, BERLIN)
    assert [args["due"] for _, args in changed.calls] == ["2027-01-08"]


def test_a_step_the_plan_lacks_said_with_its_day_is_added_to_the_plan():
    changed = answers.modify(PARTY, "the invitations need to be out by june 1st latest", NOW, BERLIN)
    assert changed.calls[-1] == (
        "create_task",
        {"title": "Send the invitations", "due": "2027-06-01", "topic": "Smilla's birthday"},
    )
    assert len(changed.calls) == 3  # the plan as it was, and the step
    # a proposal that makes no plan gets no step: the change is not understood
    assert answers.modify(FORM, "the invitations need to be out by june 1st", NOW, BERLIN).calls == []


def test_invitations_handed_out_finish_the_task_to_send_them():
    tasks = [
        {"id": 4, "title": "Send the invitations", "due": "2027-06-01", "status": "open"},
        {"id": 5, "title": "Get a present", "due": "2027-06-26", "status": "open"},
    ]
    for said in ("invitations handed out at school yesterday, 7 yes already 🎉", "the invitations are handed out"):
        assert read(said, tasks=tasks).calls == [("complete_task", {"task_id": 4})]


def test_a_form_that_is_out_finishes_the_one_task_to_send_it():
    tasks = [{"id": 8, "title": "Send: Bienenhaltung – Angaben erforderlich", "status": "open"}]
    said = "Formular ans Veterinäramt ist raus, 3 Völker gemeldet 🐝"
    assert answer(said, tasks=tasks).calls == [("complete_task", {"task_id": 8})]


def test_a_german_day_of_a_short_month_ends_no_sentence():
    said = "Fliesen bestellen bis 15. Feb und den Container buchen bis zum 19."
    assert sentences.split(said) == [said]


def test_two_german_to_dos_joined_by_und_are_two_tasks_each_with_its_day():
    calls = read("Bitte notieren: Fliesen bestellen bis 15.2. und Container buchen bis 19.2.").calls
    assert [(name, args["title"], args["due"]) for name, args in calls] == [
        ("create_task", "Fliesen bestellen", "2027-02-15"),
        ("create_task", "Container buchen", "2027-02-19"),
    ]


def test_it_s_the_13th_to_the_18th_is_dates_not_a_birthday():
    said = "the Riga tour got pushed back 🙄 it's 13th to 18th of august now"
    assert not any(name == "create_topic" for name, _ in read(said).calls)
    ((name, args), *_) = read("Anna's 40th is on 3 July").calls  # a name's "'s" still is
    assert name == "create_topic" and "birthday" in args["title"]


@pytest.mark.parametrize(
    "text, action",
    [
        ("sí, porfa 🙏 ya confirmé el cupo por mail, solo falta pagar", "approve"),
        ("sim, perfeito – obrigada! 🙏", "approve"),
        ("si por favor", "approve"),
        ("não, obrigado", "reject"),
    ],
)
def test_a_yes_or_no_in_spanish_or_portuguese_answers_the_proposal(text, action):
    assert read(text, [FORM]).calls == [("decide", {"proposal": 1, "action": action})]
