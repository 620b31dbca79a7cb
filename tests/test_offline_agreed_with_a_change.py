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
    # a yes: the change is made and approved without asking again
    assert (name, args["action"]) == ("decide", "approve") and args["changes"].startswith(change)


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


@pytest.mark.parametrize(
    "text",
    [
        "stress fracture in my left foot 😩 Stockholm is dead for this year. kannst du alles dazu streichen?",
        "Stockholm fällt dieses Jahr aus",
        "Stockholm ist abgesagt",
    ],
)
def test_an_event_said_off_in_everyday_or_german_words_closes_its_topic(text):
    topics = [{"id": 1, "title": "Stockholm Marathon 🏃", "status": "active", "starts": "2027-06-04"}]
    assert read(text, topics=topics, tasks=[]).calls == [("close_topic", {"topic_id": 1})]


def test_a_question_whether_it_is_off_closes_nothing():
    topics = [{"id": 1, "title": "Stockholm Marathon 🏃", "status": "active", "starts": "2027-06-04"}]
    assert read("is the Stockholm marathon cancelled?", topics=topics, tasks=[]).calls == []


def test_a_list_after_a_colon_with_a_day_for_each_is_a_task_each():
    said = (
        "für die Liste: Abrechnung Mai an die Krankenkassen bis Donnerstag, Haftpflicht-Nachweis an den "
        "Hebammenverband bis Freitag, und die Fortbildung Stillberatung anmelden bis Ende des Monats"
    )
    assert [(name, args["due"]) for name, args in read(said).calls] == [
        ("create_task", "2027-01-07"),
        ("create_task", "2027-01-08"),
        ("create_task", "2027-01-31"),
    ]
    # without a day for each it is no such list
    assert len(read("for my list: milk, eggs and bread by Friday").calls) <= 1


def test_a_task_struck_in_german_with_its_reason_after_a_comma_is_dropped():
    tasks = [{"id": 2, "title": "Fortbildung Stillberatung anmelden", "due": "2027-01-31", "status": "open"}]
    said = "die Fortbildung kannst du streichen, der Kurs ist schon voll 🙄"
    assert read(said, tasks=tasks).calls == [("cancel_task", {"task_id": 2})]


@pytest.mark.parametrize(
    "text, heading",
    [
        ("hab ich vorm WE noch was zu erledigen?", "before the weekend"),
        ("anything due before the weekend?", "before the weekend"),
        ("was steht morgen an?", "tomorrow"),
    ],
)
def test_what_is_due_asked_in_german_or_before_the_weekend_lists_that_span(text, heading):
    tasks = [
        {"id": 1, "title": "Abrechnung Mai", "due": "2027-01-07", "status": "open"},
        {"id": 2, "title": "Fortbildung anmelden", "due": "2027-01-31", "status": "open"},
    ]
    reply = read(text, tasks=tasks)
    assert reply.calls == [] and heading in reply.text and "Fortbildung" not in reply.text


def test_what_to_sort_out_before_a_date_told_is_a_plan_named_by_its_telling_word():
    said = (
        "Hab jetzt den Termin für meinen Leistenbruch: Operation am 24. Februar im Vivantes Friedrichshain, ambulant. "
        "Was muss ich vorher alles regeln?"
    )
    ((name, args), *steps) = read(said).calls
    assert (name, args["title"], args["starts"]) == ("create_topic", "Leistenbruch Operation", "2027-02-24") and steps
    english = read("I have the date for my hernia operation: 24 February. What do I need to sort out before?")
    assert english.calls[0][0] == "create_topic"
    assert read("what do I need to do today?").calls == []  # no event told: a look at the list


def test_a_thing_that_must_be_out_before_the_operation_by_a_day_is_a_task_not_a_plan():
    said = "ach und: Materialbestellung für die Baustelle Grünberger Str. muss vor der Operation raus, spätestens 19.2."
    assert read(said).calls == [
        ("create_task", {"title": "Materialbestellung für die Baustelle Grünberger Str", "due": "2027-02-19"})
    ]


def test_a_german_no_wait_make_it_the_17th_changes_the_day_in_the_proposed_month():
    material = {
        "id": 2,
        "just_asked": True,
        "items": [
            {
                "position": 1,
                "tool": "create_task",
                "args": {"title": "Materialbestellung", "due": "2027-02-19"},
                "description": "New task: Materialbestellung — due Fri 19 Feb 2027",
            }
        ],
    }
    ((name, args),) = read("ne warte, mach den 17. draus, der Großhandel braucht zwei Tage", [material]).calls
    assert (name, args["action"]) == ("decide", "modify")
    assert answers.modify(material, args["changes"], NOW, BERLIN).calls == [
        ("create_task", {"title": "Materialbestellung", "due": "2027-02-17"})
    ]
    assert read("passt so, danke", [material]).calls == [("decide", {"proposal": 2, "action": "approve"})]


LICENCE = [
    {"id": 3, "title": "Sehtest und ärztliches Gutachten bei der Fahrerlaubnisbehörde abgeben", "status": "open"}
]


def test_the_one_dated_german_to_do_before_setz_mir_das_auf_die_liste_is_the_task():
    said = (
        "muss meinen Busführerschein verlängern, Klasse D läuft Ende Mai ab. Sehtest und ärztliches Gutachten bis Ende "
        "April bei der Fahrerlaubnisbehörde abgeben. Setz mir das auf die Liste"
    )
    assert read(said).calls == [
        (
            "create_task",
            {"title": "Sehtest und ärztliches Gutachten bei der Fahrerlaubnisbehörde abgeben", "due": "2027-04-30"},
        )
    ]


def test_papers_handed_in_where_the_task_says_finish_it_with_the_tick_after_them():
    said = "Unterlagen sind bei der Fahrerlaubnisbehörde abgegeben ✅"
    assert read(said, tasks=LICENCE).calls == [("complete_task", {"task_id": 3})]


def test_leave_me_alone_with_it_until_then_snoozes_the_one_task_to_the_day_after_the_day_said_inclusive():
    said = (
        "Bin bis einschließlich 25. im Nachtschicht-Block, vorher komm ich eh nich zum Arzt. Lass mich mit dem "
        "Führerschein-Kram bis dahin in Ruhe."
    )
    assert read(said, tasks=LICENCE).calls == [("snooze_task", {"task_id": 3, "until": "2027-01-26T09:00:00+01:00"})]
