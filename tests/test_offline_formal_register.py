"""Requests in a formal, indirect register, as a careful writer (or one writing in a language not their own) puts
them: "would you be so kind as to …", "I would like you to note that I must …", "I would be grateful for a reminder
…", "please note that …", "until Friday" for "by Friday"; a yes said in full ("Yes, thank you very much."); a task
asked to be brought up again in so many words; and the lines around them that must stay as they were."""

from __future__ import annotations

import pytest

from tests.offline_support import REMINDER, read
from wilson.model.offline import agreed, formal, put_off

TASKS = [
    {"id": 31, "title": "Send the invoice to Lindqvist Verlag", "due": "2027-01-15", "status": "open"},
    {"id": 32, "title": "Pay the print shop invoice", "due": "2027-01-10", "status": "open"},
    {"id": 33, "title": "Call Mrs. Wendler about the tax documents", "due": "2027-01-08", "status": "open"},
    {"id": 34, "title": "Sort the receipts for the tax return", "due": "2027-01-31", "status": "open"},
    {"id": 35, "title": "Write the thank-you cards", "status": "open"},
    {"id": 36, "title": "Research health insurance for freelancers", "status": "open"},
]


# formal wrappers come off: what is left is read like any request ----------------------------------------------------


@pytest.mark.parametrize(
    "text, title, due",
    [
        (
            "Would you be so kind as to add a task for me: send the glossary to Mr. Feldmann until Friday.",
            "Send the glossary to Mr. Feldmann",
            "2027-01-08",
        ),
        ("Could you be so kind and add: order new toner by Thursday", "Order new toner", "2027-01-07"),
        ("It would be very kind if you could add 'buy a new desk lamp' by Monday", "Buy a new desk lamp", "2027-01-11"),
        (
            "I would like to have a task to update my CV on ProZ, let's say by the middle of the month.",
            "Update my CV on ProZ",
            "2027-01-15",
        ),
        (
            "I would be grateful if you could add a task to renew the library card by the 20th",
            "Renew the library card",
            "2027-01-20",
        ),
    ],
)
def test_a_task_asked_for_formally_is_that_task(text, title, due):
    assert read(text).calls == [("create_task", {"title": title, "due": due})]


@pytest.mark.parametrize(
    "text, due",
    [
        ("I would like you to note that I must renew my passport before April.", "2027-03-31"),
        ("Please note that the contract with the agency must be signed and sent back until 12.03.", "2027-03-12"),
        ("Please put on my list that the translation for Auerbach has to be delivered on 3rd of March.", "2027-03-03"),
        (
            "Note for my list: the publisher needs my signed declaration on the 20th of January at the latest.",
            "2027-01-20",
        ),
    ],
)
def test_a_need_noted_formally_is_a_task_due_then(text, due):
    calls = read(text).calls
    assert [name for name, _ in calls] == ["create_task"] and calls[0][1]["due"] == due


@pytest.mark.parametrize(
    "text, at",
    [
        (
            "Would you be so kind as to remind me tomorrow at 8 o'clock to call the notary's office?",
            "2027-01-06T08:00:00+01:00",
        ),
        ("I would be grateful for a reminder on Sunday at 18:00 to plan my week.", "2027-01-10T18:00:00+01:00"),
        ("I would like you to remind me on Friday at half past two of the video call.", "2027-01-08T14:30:00+01:00"),
        ("May I ask you to remind me at a quarter to six to bring the key?", "2027-01-05T17:45:00+01:00"),
    ],
)
def test_a_reminder_asked_for_formally_is_that_reminder(text, at):
    calls = read(text).calls
    assert [name for name, _ in calls] == ["remind"] and calls[0][1]["at"] == at
    assert "would" not in calls[0][1]["text"].lower() and "kind" not in calls[0][1]["text"].lower()


def test_the_formal_wrapper_is_taken_off_and_nothing_else():
    assert formal.plain("Would you be so kind as to remind me at 9 to call Tom?") == "remind me at 9 to call Tom"
    assert formal.plain("Please note that I cancelled the newspaper subscription.") == (
        "I cancelled the newspaper subscription."
    )
    assert formal.plain("add call Tom, let's say for Friday") == "add call Tom for Friday"


@pytest.mark.parametrize(
    "text",
    [
        "The bakery stays closed until the 18th.",  # "until" in news stays "until"
        "Would you be so kind?",  # nothing asked
        "Note that it is snowing.",  # nothing to keep
        "It would be kind of them to call.",
        "I would like you to know that I am grateful.",
    ],
)
def test_formal_words_asking_for_nothing_make_no_proposal(text):
    assert not read(text).calls


# a yes said in full -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Yes, please do so.",
        "Yes, thank you very much.",
        "That is fine now.",
        "Agreed, thank you.",
        "Yes, please, that is exactly what I need.",
        "That is correct, thanks a lot.",
    ],
)
def test_a_yes_said_in_full_approves_the_proposal(text):
    assert read(text, pending=[REMINDER]).calls == [("decide", {"proposal": 4, "action": "approve"})]


@pytest.mark.parametrize(
    "text",
    [
        "Thank you very much, that is all for today.",
        "Thank you.",
        "The weather is fine now.",
        "That is not fine.",
        "Good morning",
    ],
)
def test_thanks_or_fine_said_of_something_else_agree_to_nothing(text):
    assert not agreed.said_yes(text)


# a task brought up again later, in so many words --------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, task_id, until",
    [
        (
            "Please ask me about the receipts again on Monday at 9, this week I have no time for them.",
            34,
            "2027-01-11T09:00:00+01:00",
        ),
        (
            "It would be great if you could bring up the health insurance research again in two hours, I am in a call.",
            36,
            "2027-01-05T12:00:00+01:00",
        ),
        (
            "The thank-you cards must wait until my big deadline is over, please bring them up again in ten days.",
            35,
            None,
        ),
        ("remind me of the thank-you cards again tomorrow at 10", 35, "2027-01-06T10:00:00+01:00"),
    ],
)
def test_a_task_asked_about_again_is_snoozed_until_then(text, task_id, until):
    calls = read(text, tasks=TASKS).calls
    assert [name for name, _ in calls] == ["snooze_task"] and calls[0][1]["task_id"] == task_id
    assert until is None or calls[0][1]["until"] == until


@pytest.mark.parametrize(
    "text",
    ["bring up the weather again", "ask me about it", "the cards must wait, they are fine", "bring the kids up again"],
)
def test_words_that_name_no_moment_put_nothing_off(text):
    assert put_off.said_plainly(text) == text


# the lines around them ----------------------------------------------------------------------------------------------


def test_a_reminder_to_check_a_payment_is_a_reminder_not_a_payment_done():
    calls = read("Would you remind me in three hours to check whether the client from Vilnius has paid?", tasks=TASKS)
    assert [name for name, _ in calls.calls] == ["remind"]
    assert calls.calls[0][1]["at"] == "2027-01-05T13:00:00+01:00"


def test_a_reminder_of_a_call_with_someone_else_is_new_not_a_task_snoozed_by_its_verb():
    calls = read("Next Tuesday at 3 pm please remind me of the call with Dr. Haberland.", tasks=TASKS).calls
    assert [name for name, _ in calls] == ["remind"] and calls[0][1]["at"] == "2027-01-12T15:00:00+01:00"
    snoozed = read("remind me of the tax documents tomorrow at 9", tasks=TASKS).calls
    assert snoozed == [("snooze_task", {"task_id": 33, "until": "2027-01-06T09:00:00+01:00"})]


@pytest.mark.parametrize(
    "text",
    [
        "The invoice for Lindqvist Verlag can wait until the 20th, they asked me to include the January pages.",
        "move the invoice for Lindqvist Verlag to the 20th",
    ],
)
def test_a_task_named_with_for_moves_that_task(text):
    assert read(text, tasks=TASKS).calls == [("update_task", {"task_id": 31, "due": "2027-01-20"})]


# a task done, dropped or called off, told by how things turned out --------------------------------------------------

OUTCOME_TASKS = [
    {"id": 41, "title": "Call Mrs. Wendler about the tax documents", "due": "2027-01-08", "status": "open"},
    {"id": 42, "title": "Send the signed contract to Transpose GmbH", "due": "2027-01-07", "status": "open"},
    {"id": 43, "title": "Reserve a table for Marta's visit", "due": "2027-01-15", "status": "open"},
    {"id": 44, "title": "Apply for the Literaturfonds grant", "due": "2027-02-15", "status": "open"},
    {"id": 45, "title": "Send the certified translation to Mr. Brandstätter", "due": "2027-01-13", "status": "open"},
]
OUTCOME_TOPICS = [
    {"id": 7, "title": "Move to Schöneberg", "status": "open"},
    {"id": 8, "title": "Cousin Natalia's wedding", "status": "open"},
]


@pytest.mark.parametrize(
    "text, call",
    [
        (
            "I have spoken with Mrs. Wendler this morning, everything about the tax documents is clarified.",
            ("complete_task", {"task_id": 41}),
        ),
        ("we talked to Mrs. Wendler yesterday", ("complete_task", {"task_id": 41})),
        (
            "The signed contract for Transpose is already on its way, I posted it this morning.",
            ("complete_task", {"task_id": 42}),
        ),
        (
            "My sister Marta has cancelled her visit, so the table reservation is not needed anymore.",
            ("cancel_task", {"task_id": 43}),
        ),
        ("the table reservation is no longer needed", ("cancel_task", {"task_id": 43})),
        (
            "I decided not to apply for the Literaturfonds grant this year, please take it off my list.",
            ("cancel_task", {"task_id": 44}),
        ),
        (
            "We will not move to Schöneberg after all, the owner gave the flat to somebody else.",
            ("close_topic", {"topic_id": 7}),
        ),
        (
            "Natalia and her fiancé have called off the wedding, so I will not travel to Wrocław in April.",
            ("close_topic", {"topic_id": 8}),
        ),
        (
            "Mr. Brandstätter needs the certified translation earlier than planned. It would be great if you could put it "
            "on Monday.",
            ("update_task", {"task_id": 45, "due": "2027-01-11"}),
        ),
    ],
)
def test_an_outcome_told_changes_the_task_or_topic_it_names(text, call):
    assert read(text, tasks=OUTCOME_TASKS, topics=OUTCOME_TOPICS).calls == [call]


@pytest.mark.parametrize(
    "text",
    [
        "My colleague has spoken with the client.",  # someone else's doing
        "The parcel is on its way.",  # no task names it
        "Anna won't travel to Rome after all.",
        "I have spoken with Mr. Novak about the weather.",
        "we will not go to bed early tonight",
    ],
)
def test_outcomes_naming_no_task_of_the_users_change_nothing(text):
    assert not read(text, tasks=OUTCOME_TASKS, topics=OUTCOME_TOPICS).calls


def test_a_call_told_without_its_doer_is_still_the_users():
    tasks = [{"id": 51, "title": "Call the landlord about the heating", "due": "2027-01-08", "status": "open"}]
    assert read("talked to the landlord, all sorted", tasks=tasks).calls == [("complete_task", {"task_id": 51})]


@pytest.mark.parametrize(
    "text, call",
    [
        (
            'I\'d be grateful if you added "call the tax office" to my list for Thursday',
            ("create_task", {"title": "Call the tax office", "due": "2027-01-07"}),
        ),
        (
            "It would be kind if you reminded me at 5 to call Tom",
            ("remind", {"text": "call Tom", "at": "2027-01-05T17:00:00+01:00"}),
        ),
        (
            "I should like to be reminded every morning at 7 to take my vitamins",
            ("create_reminder", {"text": "take my vitamins", "cron": "0 7 * * *"}),
        ),
    ],
)
def test_a_wish_said_in_the_past_tense_or_with_should_is_the_request(text, call):
    assert read(text).calls == [call]


@pytest.mark.parametrize("text", ["It would be nice if you visited us in spring", "I'd be glad if you liked it"])
def test_a_wish_in_the_past_tense_of_no_request_asks_nothing(text):
    assert not read(text).calls


@pytest.mark.parametrize(
    "text, call",
    [
        ("the card to Gran is in the post", ("complete_task", {"task_id": 71})),
        ("we cancelled the anniversary dinner, so no table needed any more", ("cancel_task", {"task_id": 72})),
        ("not doing the yoga course this year, take it off the list", ("cancel_task", {"task_id": 73})),
    ],
)
def test_an_outcome_told_in_everyday_words_changes_the_task_it_names(text, call):
    tasks = [
        {"id": 71, "title": "Post the birthday card to Gran", "due": "2027-01-09", "status": "open"},
        {"id": 72, "title": "Book a table for the anniversary", "due": "2027-01-15", "status": "open"},
        {"id": 73, "title": "Sign up for the yoga course", "due": "2027-02-15", "status": "open"},
    ]
    assert read(text, tasks=tasks).calls == [call]


@pytest.mark.parametrize("text", ["the letter is in the post for you", "no sugar needed", "not doing much today"])
def test_everyday_words_naming_no_task_change_nothing(text):
    tasks = [{"id": 71, "title": "Post the birthday card to Gran", "due": "2027-01-09", "status": "open"}]
    assert not read(text, tasks=tasks).calls
