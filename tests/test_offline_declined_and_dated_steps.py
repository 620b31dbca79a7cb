"""Offline chat: a proposal turned down by saying it is not needed, and a goal said as two dated steps."""

from __future__ import annotations

import pytest

from tests.offline_support import read

# the ID card's renewal, proposed from the citizens' office's letter; the user's next message answers it
RENEWAL = {
    "id": 21,
    "just_asked": True,
    "items": [{"position": 1, "description": "New task: Renew Personalausweis — due Fri 23 Apr 2027"}],
}
DENTIST = [{"id": 2, "title": "Book the dentist", "due": "2027-01-20", "status": "open"}]


@pytest.mark.parametrize(
    "text",
    [
        "no need for that, I already picked up my new Ausweis last week, the letter must have crossed with it",
        "no need for that",
        "No need for it, sorted already.",
        "don't bother, I did it yesterday",
        "not necessary, already done",
        "nah, already sorted",
    ],
)
def test_saying_the_proposal_is_not_needed_turns_it_down(text):
    assert read(text, pending=[RENEWAL]).calls == [("decide", {"proposal": 21, "action": "reject"})]


def test_no_need_for_a_named_task_still_drops_that_task_not_the_proposal():
    reply = read("no need for the dentist anymore", pending=[RENEWAL], tasks=DENTIST)
    assert reply.calls == [("cancel_task", {"task_id": 2})]


def test_no_need_for_that_long_after_the_proposal_declines_nothing():
    later = dict(RENEWAL, just_asked=False)
    assert read("no need for that, I already picked up my new Ausweis last week", pending=[later]).calls == []


def tasks_of(text: str) -> list[tuple[str, str]]:
    reply = read(text)
    assert all(name == "create_task" for name, _ in reply.calls), reply.calls
    return [(args["title"], args["due"]) for _, args in reply.calls]


@pytest.mark.parametrize(
    "text, tasks",
    [
        (
            "I have to hand in my master's thesis on April 30. My supervisor wants the full draft by April 9.",
            [("Hand in my master's thesis", "2027-04-30"), ("Send the full draft to my supervisor", "2027-04-09")],
        ),
        (
            "Can you help me finally get my tax return done? I need to collect all the receipts by Feb 19 and then "
            "submit it on ELSTER by March 5.",
            [("Collect all the receipts", "2027-02-19"), ("Submit it on ELSTER", "2027-03-05")],
        ),
        (
            "collect all the receipts by Feb 19 and then submit it on ELSTER by March 5",
            [("Collect all the receipts", "2027-02-19"), ("Submit it on ELSTER", "2027-03-05")],
        ),
        (
            "book the venue by March 1, and then send the invitations by March 10",
            [("Book the venue", "2027-03-01"), ("Send the invitations", "2027-03-10")],
        ),
    ],
)
def test_two_dated_steps_for_one_goal_are_one_task_per_day(text, tasks):
    assert tasks_of(text) == tasks


@pytest.mark.parametrize(
    "text, topic",
    [
        ("I'm flying to Lisbon on May 3. I need to renew my passport by April 20.", "Trip to Lisbon"),
        ("My exam is on March 12. Can you help me plan for it?", "Exam"),
    ],
)
def test_a_plan_with_its_one_day_stays_a_plan(text, topic):
    reply = read(text)
    assert reply.calls[0][0] == "create_topic" and reply.calls[0][1]["title"] == topic
    assert len(reply.calls) > 3  # the plan's steps, not one task per sentence


@pytest.mark.parametrize(
    "text, title",
    [
        ("booked a long weekend in Edinburgh 26-28 Feb, what do I need to sort?", "Trip to Edinburgh"),
        ("we're off to Porto from 3 to 6 June - what should we book?", "Trip to Porto"),
        ("Ich fahre vom 3. bis 5. März zur embedded world nach Nürnberg", "Conference in Nuremberg"),
        ("Wir fahren zum Kirchentag nach Hannover vom 1. bis 4. Juni", "Conference in Hannover"),
        ("ich fahre zur Oma nach Köln am Samstag", "Trip to Köln"),  # a visit to family is no fair
        ("I got the flat in Neukölln!! keys on Feb 1 and we move that weekend", "Move to Neukölln"),
        ("I'm applying for German citizenship, the Einbürgerung appointment is on 24 February", "Einbürgerung"),
        ("dentist appointment on 24 February", "Dentist appointment"),
        (
            "i gotta pass the B2 German exam in March for my citizenship",
            "Pass the B2 German exam in March for citizenship",
        ),
    ],
)
def test_a_stay_a_fair_a_move_or_an_office_visit_told_is_planned_as_such(text, title):
    reply = read(text)
    assert reply.calls[0] == ("create_topic", reply.calls[0][1]) and reply.calls[0][1]["title"] == title


def test_the_office_appointment_gets_the_official_plan_not_the_doctors():
    notes = " ".join(args.get("notes", "") for _, args in read("the Einbürgerung appointment is on 24 February").calls)
    assert "Insurance card" not in notes and "referrals" not in notes


@pytest.mark.parametrize(
    "text, reply_text",
    [("what do I need to do today?", "Nothing due today."), ("we move this meeting to Friday", None)],
)
def test_a_question_or_a_meeting_moved_plans_nothing(text, reply_text):
    reply = read(text)
    assert not any(name == "create_topic" for name, _ in reply.calls)
    if reply_text is not None:
        assert reply.text == reply_text


TEN_K = [
    {"id": 5, "title": "Register for the 10k run", "due": "2027-01-31", "status": "open"},
    {"id": 6, "title": "Pay the dentist bill", "due": "2027-01-20", "status": "open"},
]


@pytest.mark.parametrize(
    "text, task, due",
    [
        ("Anmeldung zum 10k geht noch bis 8.2., bitte Frist ändern", 5, "2027-02-08"),
        ("Zahlung an den Zahnarzt geht noch bis 25.1., bitte Frist ändern", 6, "2027-01-25"),
    ],
)
def test_a_german_update_names_the_english_task_by_its_noun(text, task, due):
    assert read(text, tasks=TEN_K).calls == [("update_task", {"task_id": task, "due": due})]


def test_a_german_update_naming_no_open_task_changes_none():
    assert read("Anmeldung zum Yoga geht noch bis 8.2., bitte Frist ändern", tasks=TEN_K).calls == []
