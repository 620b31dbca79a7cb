"""Kinds of language the seventh dev batch's twins (phrases_dev_h.txt, phrases_dev_i.txt) showed the rules missing,
each read as a kind, in wordings of our own, beside lines of the same shape that must not match:

- a deed said as people say it (a talk for a call, a mail sent by its noun, a thing in its state);
- a new time said with a word before or after it, a short answer typed loosely or with what to leave, pleasure
  said later;
- deadlines said as the time left ("I've got a week from today to …", "before the month is out"), a thing that has
  to do something by a day, where a task goes said before it ("Also put on the list: …");
- how Wilson is and whether a day is busy, asked in other words; other people's trips told with who goes along or
  as news; a move said by when the home must be left;
- money owed or that "has to go out"; what others do before one request asked outright; a task told of, then
  moved as "that one"; leave given ("you can delete …") as a request; a licence's riding test;
- a pasted letter's sum asked for as "it", "the amount" after a named fee, "den Betrag", or handed to a child.
"""

from __future__ import annotations

import pytest

from tests.offline_support import BERLIN, NOW, OLDER, REMINDER, read
from wilson.model.offline import dates

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


# a new time right after a proposal, with a word before or after it -----------------------------------------------


@pytest.mark.parametrize(
    "text, changes",
    [
        ("9 would be better actually", "at 9"),
        ("hmm no, half past 7", "half past 7"),
        ("nope, 10 o'clock please", "at 10 o'clock"),
        ("a little earlier please, 8am", "8am"),
        ("thursday would suit me better", "thursday"),
        ("and monday too?", "monday"),
        ("friday works for me", "friday"),
        ("wednesday would work better though", "wednesday"),
    ],
)
def test_a_new_time_with_words_around_it_changes_the_proposal_just_made(text, changes):
    assert read(text, pending=[REMINDER, OLDER]).calls == [
        ("decide", {"proposal": 4, "action": "modify", "changes": changes})
    ]


@pytest.mark.parametrize(
    "text",
    [
        "friday would suit me better, the dentist moved",  # more said than a time
        "and what about the flights on tuesday?",
        "no, Tom is coming at 9",
    ],
)
def test_a_time_with_more_said_is_no_bare_change(text):
    assert ("decide", {"proposal": 4, "action": "modify", "changes": text}) not in read(
        text, pending=[REMINDER, OLDER]
    ).calls
    assert not any(
        args.get("changes") in ("friday", "tuesday", "at 9") for name, args in read(text, pending=[REMINDER]).calls
    )


# short answers typed loosely, a no with what to leave ------------------------------------------------------------


@pytest.mark.parametrize(
    "text, action",
    [
        ("yeah go ahed", "approve"),
        ("yes pleas", "approve"),
        ("yep go ahaed", "approve"),
        ("nah leave it", "reject"),
        ("nope, skip it", "reject"),
        ("no, forget that one", "reject"),
    ],
)
def test_a_short_answer_typed_loosely_decides_the_proposal(text, action):
    assert read(text, pending=[REMINDER]).calls == [("decide", {"proposal": 4, "action": action})]


@pytest.mark.parametrize("text", ["yes leave it", "leave it to me", "go ahead and add the milk"])
def test_a_yes_with_a_no_or_with_a_request_is_no_bare_answer(text):
    assert ("decide", {"proposal": 4, "action": "approve"}) not in read(text, pending=[REMINDER]).calls
    assert ("decide", {"proposal": 4, "action": "reject"}) not in read(text, pending=[REMINDER]).calls


WAITING = {"id": 4, "items": [{"position": 1, "description": "New task: Pay rent — due Fri 8 Jan 2027"}]}


@pytest.mark.parametrize("text", ["cheers, that's great", "that's great!", "thanks, that's perfect"])
def test_pleasure_said_later_is_about_what_was_said_since(text):
    assert not read(text, pending=[WAITING]).calls  # messages on from the proposal: no answer to it


@pytest.mark.parametrize("text", ["cheers, that's great", "thanks, that's perfect"])
def test_pleasure_said_right_after_the_proposal_agrees_to_it(text):
    assert read(text, pending=[{**WAITING, "just_asked": True}]).calls == [
        ("decide", {"proposal": 4, "action": "approve"})
    ]


def test_a_yes_in_words_said_later_still_agrees():
    assert read("yes, that's great", pending=[WAITING]).calls == [("decide", {"proposal": 4, "action": "approve"})]


# deadlines said as the time left ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "phrase, day",
    [
        ("before the month is out", "2027-01-31"),
        ("by the time the week is over", "2027-01-10"),
        ("before the year is out", "2027-12-31"),
        ("one month from today", "2027-02-05"),
        ("a month from now", "2027-02-05"),
    ],
)
def test_the_end_of_a_period_and_a_month_from_today_are_days(phrase, day):
    assert [dates.iso(f.value) for f in dates.search(f"pay it {phrase}", NOW, BERLIN)] == [day]


@pytest.mark.parametrize(
    "text, title, due",
    [
        ("I've got a week from today to return the rental car", "Return the rental car", "2027-01-12"),
        ("we have two weeks to renew the parking permit", "Renew the parking permit", "2027-01-19"),
        ("I only have ten days to send in the claim form", "Send in the claim form", "2027-01-15"),
        ("remember I need to cancel the trial before the month is out", "Cancel the trial", "2027-01-31"),
    ],
)
def test_the_time_left_to_do_something_is_its_deadline(text, title, due):
    assert read(text).calls == [("create_task", {"title": title, "due": due})]


@pytest.mark.parametrize(
    "text",
    [
        "I've got a week to think about it",  # time to think is no errand
        "Tom has two weeks to finish his report",  # someone else's
        "do I have a week to send the form?",
    ],
)
def test_time_to_think_or_someone_elses_time_is_no_task(text):
    assert "create_task" not in [name for name, _ in read(text).calls]


# a thing that has to do something by a day ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, title, due",
    [
        (
            "The van has to go through its safety check before June",
            "The van: go through its safety check",
            "2027-05-31",
        ),
        ("the boiler needs to pass its inspection by March 1", "The boiler: pass its inspection", "2027-03-01"),
        ("the gutters have to be swept before April", "Sweep the gutters", "2027-03-31"),
    ],
)
def test_what_a_thing_has_to_do_by_a_day_is_a_task_due_then(text, title, due):
    assert read(text).calls == [("create_task", {"title": title, "due": due})]


@pytest.mark.parametrize(
    "text",
    [
        "my brother has to fly to Rome by Friday",  # a person's doing
        "the kids have to be in bed by 8",
        "the van has to go through its safety check",  # no day
        "does the van have to go through its check before June?",
    ],
)
def test_a_person_who_has_to_or_no_day_is_no_task(text):
    assert "create_task" not in [name for name, _ in read(text).calls]


# where a task goes, said before it -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, title, due",
    [
        ("Also put on the list: return the ladder by March 3", "Return the ladder", "2027-03-03"),
        ("and put this on my to-do list too - book the vet by Friday", "Book the vet", "2027-01-08"),
        ("add to the list: sell the pram", "Sell the pram", None),
    ],
)
def test_a_task_after_where_it_goes_is_added(text, title, due):
    args = {"title": title, **({"due": due} if due else {})}
    assert read(text).calls == [("create_task", args)]


@pytest.mark.parametrize("text", ["put it on the list", "is the ladder on the list?"])
def test_the_list_named_with_no_task_after_it_adds_nothing_new(text):
    assert ("create_task", {"title": "On the list"}) not in read(text).calls


# how Wilson is, whether a day is busy ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["you doing ok today?", "Are you doing alright, Wilson?", "everything good with you?", "how's life?"]
)
def test_how_wilson_is_asked_in_other_words_gets_a_word_back(text):
    reply = read(text)
    assert reply.calls == [] and reply.rule == "how Wilson is"


@pytest.mark.parametrize(
    "text",
    ["Is Thursday afternoon busy for me?", "is tomorrow free?", "how busy is my friday?", "how does next week look?"],
)
def test_whether_a_day_is_busy_is_a_look_at_it(text):
    reply = read(text)
    assert reply.calls == [] and reply.text.startswith("Nothing due")


@pytest.mark.parametrize("text", ["are you ok with me adding the milk?", "is the kitchen free?"])
def test_other_questions_with_the_same_words_are_neither(text):
    assert read(text).rule not in ("how Wilson is", "list what's coming")


# other people's trips --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Jonas and his girlfriend are going skiing in Austria next week",
        "Mira and her dad are flying to Lisbon on Friday",
        "fun fact, my brother just booked a trip to Bangkok for the 20th",
        "guess what, my sister already booked a trip to Oslo for March",
    ],
)
def test_someone_elses_trip_is_no_plan_of_the_users(text):
    assert read(text).calls == []


@pytest.mark.parametrize(
    "text", ["guess what, I'm going to Lisbon on March 3!", "I just booked a trip to Bangkok for the 20th"]
)
def test_the_users_own_trip_told_as_news_is_planned(text):
    assert "create_topic" in [name for name, _ in read(text).calls]


# a move said by when the home must be left ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "the landlord accepted our notice, we have to be out of the flat by March 31",
        "notice is in, I need to be out of here by the end of May",
    ],
)
def test_having_to_be_out_of_the_home_by_a_day_is_a_move(text):
    calls = read(text).calls
    assert calls[0][0] == "create_topic" and "Pack boxes" in [args.get("title") for _, args in calls]


@pytest.mark.parametrize("text", ["Tom has to be out of the flat by May", "I have to be out of the office by 6"])
def test_someone_else_out_or_out_of_the_office_is_no_move(text):
    assert "Pack boxes" not in [args.get("title") for _, args in read(text).calls]


# money owed, money that has to go out ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, title, due",
    [
        (
            "dont forget, I still owe Mia my half of the cabin, by end of January",
            "Pay Mia my half of the cabin",
            "2027-01-31",
        ),
        ("we owe Tom 40 euros by Friday", "Pay Tom (40 EUR)", "2027-01-08"),
        ("hort snack money of 18.50 euros has to go out by feb 3", "Pay hort snack money (18.50 EUR)", "2027-02-03"),
        ("the rent has to go out by the 3rd", "Pay rent", "2027-02-03"),
    ],
)
def test_money_owed_or_to_go_out_by_a_day_is_a_payment_task(text, title, due):
    assert read(text).calls == [("create_task", {"title": title, "due": due})]


@pytest.mark.parametrize(
    "text", ["Tom owes me 40 euros by Friday", "the invitations have to go out by Friday", "I owe you one"]
)
def test_money_coming_in_or_things_going_out_are_no_payment(text):
    assert not any(str(args.get("title", "")).startswith("Pay") for _, args in read(text).calls)


# context, then one request asked outright -----------------------------------------------------------------------


def test_sentences_before_the_one_request_only_say_why():
    text = "ok so Mia's school trip is on the 20th and she needs 15 euros in cash. please remind me tomorrow at 7:30 to put the money in her bag"
    assert read(text).calls == [("remind", {"text": "put the money in her bag", "at": "2027-01-06T07:30:00+01:00"})]


@pytest.mark.parametrize(
    "text, call",
    [
        (
            "Crazy few days. My parents arrive on Saturday and the plumber comes Friday at 8. please remind me "
            "Thursday at 7pm to clear the bathroom",
            ("remind", {"text": "clear the bathroom", "at": "2027-01-07T19:00:00+01:00"}),
        ),
        (
            "so the school trip costs 20 euros and it's on the 18th. add pack the lunch box by the 18th",
            ("create_task", {"title": "Pack the lunch box", "due": "2027-01-18"}),
        ),
    ],
)
def test_what_others_do_before_the_one_request_is_its_reason(text, call):
    assert read(text).calls == [call]


@pytest.mark.parametrize(
    "text",
    [
        "add milk. remind me to call Anna at 6",  # two asked outright
        "I'm going to Japan on March 20. remind me to buy an adapter on March 1",  # the user's own news
        "what's due this week? remind me to pack on Friday",  # a question
    ],
)
def test_the_users_own_news_a_question_or_two_requests_are_asked_one_at_a_time(text):
    assert read(text).calls == []


# a task told of, then moved as "that one" ------------------------------------------------------------------------

MOVE_TASKS = [
    {"id": 11, "title": "Send Clara the photos", "due": "2027-01-10", "status": "open"},
    {"id": 12, "title": "Pay the window cleaner", "due": "2027-01-08", "status": "open"},
    {"id": 5, "title": "Fix the bike light", "status": "open"},
]


@pytest.mark.parametrize(
    "text, task_id, due",
    [
        ("Clara needs the photos sooner, can you change that one to this Friday?", 11, "2027-01-08"),
        ("the window cleaner comes later, could you move it to the 15th?", 12, "2027-01-15"),
        ("you can move the photos one to Friday", 11, "2027-01-08"),
    ],
)
def test_a_task_told_of_then_moved_as_that_one_moves(text, task_id, due):
    assert read(text, tasks=MOVE_TASKS).calls == [("update_task", {"task_id": task_id, "due": due})]


def test_that_one_naming_no_task_moves_nothing():
    assert read("I saw Tom yesterday, can you move it to Friday?", tasks=MOVE_TASKS).calls == []


@pytest.mark.parametrize(
    "text, call",
    [
        ("you can delete the bike light task, I sold the bike last weekend", ("cancel_task", {"task_id": 5})),
        (
            "you can remind me tomorrow at 9 to call the bank",
            ("remind", {"text": "call the bank", "at": "2027-01-06T09:00:00+01:00"}),
        ),
    ],
)
def test_leave_given_is_a_request(text, call):
    assert read(text, tasks=MOVE_TASKS).calls == [call]


# a licence's tests ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["I'm taking the motorbike riding test on March 9", "my road test is on Feb 3"])
def test_a_riding_or_road_test_is_an_exam(text):
    assert read(text).calls[0][0] == "create_topic"


def test_someone_elses_riding_test_is_theirs():
    assert read("Jule has her riding test next week").calls == []


# a pasted letter's sum, asked for by another name ------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, title, due",
    [
        (
            "Dear Mr Brandt, according to our records invoice no. 4471 of 54.20 EUR for the repair of your bike is still "
            "open. We kindly ask you to settle it by 20 January 2027. Should you have paid in the meantime, please "
            "disregard this letter. Kind regards, Radhaus Mitte",
            "Pay invoice (54.20 EUR)",
            "2027-01-20",
        ),
        (
            "Dear parents, the course fee for the winter term of the swimming class is 120.00 EUR. Please transfer the "
            "amount by 25 January 2027 with the reference SW-27. Thank you! Schwimmschule Nord",
            "Pay fee (120.00 EUR)",
            "2027-01-25",
        ),
        (
            "Sehr geehrte Frau Kaya, für Ihren Antrag berechnen wir Gebühren in Höhe von 35,00 EUR. Bitte überweisen "
            "Sie den Betrag bis zum 01.02.2027. Mit freundlichen Grüßen, Bezirksamt Mitte",
            "Pay 35,00 EUR",
            "2027-02-01",
        ),
        (
            "Dear parents, the class 2b outing to the zoo takes place on 28 January. Please give your child 8.00 EUR "
            "and return the signed form by Friday, 22 January 2027. Many thanks, Mr Peters",
            "Give your child 8.00 EUR and return the signed form",
            "2027-01-22",
        ),
    ],
)
def test_a_letters_sum_asked_for_by_another_name_is_a_task_with_the_sum(text, title, due):
    assert read(text).calls == [("create_task", {"title": title, "due": due})]


def test_a_letter_saying_only_that_a_sum_was_received_asks_nothing():
    text = (
        "Dear Ms Roth, we confirm that we received your payment of 54.20 EUR on 3 January 2027. We kindly ask you to "
        "keep this letter for your records. Kind regards, Radhaus Mitte"
    )
    assert "create_task" not in [name for name, _ in read(text).calls]
