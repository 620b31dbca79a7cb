"""Issue 44, item 1: the offline rules read language as people write it. A typo'd yes or no answers the proposal
waiting, a short follow-up right after a proposal changes it, politeness and framing are no obstacle, a message
of several sentences (a pasted letter) gets one answer, every date phrase is found, a payment is a task to pay,
and topic titles keep the point. Rules alone where that is enough; a whole Wilson where the answer the user gets
is the point.
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from storage.models import Approval, ApprovalItem, Task
from tests.offline_support import OLDER, PLAYBOOK, REMINDER, answer, read  # noqa: F401 (shared with the paraphrases)
from wilson.model.offline import answers, intents, phrases, sentences
from wilson.model.offline.phrases import CAN_DO, HELP
from wilson.model.offline.short_answers import short_answer

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2027, 1, 5, 10, 0, tzinfo=BERLIN)  # a Tuesday


def only(reply, tool: str) -> dict:
    calls = [args for name, args in reply.calls if name == tool]
    assert len(calls) == 1, reply
    return calls[0]


# short answers, typed loosely ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, action",
    [
        ("y", "approve"),
        ("yse", "approve"),
        ("ys", "approve"),
        ("yep", "approve"),
        ("Yesss!", "approve"),
        ("yse pls", "approve"),
        ("noo", "reject"),
        ("nah", "reject"),
        ("n", "reject"),
        ("nope thanks", "reject"),
    ],
)
def test_a_typod_yes_or_no_answers_the_proposal_waiting(text, action):
    assert read(text, [REMINDER, OLDER]).calls == [("decide", {"proposal": 4, "action": action})]


@pytest.mark.parametrize("text", ["not", "now", "yet", "yes no", "yesterday", "nobody"])
def test_real_words_near_an_answer_are_no_answer(text):
    assert short_answer(text) is None


@pytest.mark.parametrize("text", ["yse", "no, I already did that last week"])
def test_an_answer_with_nothing_waiting_says_so_and_changes_nothing(text):
    reply = read(text)
    assert (
        reply.calls == [] and reply.text == "There's no proposal of mine waiting for an answer, so nothing was changed."
    )


# a follow-up right after a proposal ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, at",
    [
        ("make it 9 instead", "2027-01-11T09:00:00+01:00"),
        ("and on tuesday?", "2027-01-12T10:00:00+01:00"),
        ("what about Friday?", "2027-01-08T10:00:00+01:00"),
        ("or at 11?", "2027-01-11T11:00:00+01:00"),
        ("hmm, what about Monday?", "2027-01-11T10:00:00+01:00"),
        ("can you do 8 instead?", "2027-01-11T08:00:00+01:00"),
        ("can we do 10:30?", "2027-01-11T10:30:00+01:00"),
        ("Thursday works better", "2027-01-07T10:00:00+01:00"),
        ("change the time to 11", "2027-01-11T11:00:00+01:00"),
        ("no wait, Thursday", "2027-01-07T10:00:00+01:00"),
    ],
)
def test_a_short_follow_up_right_after_a_proposal_changes_that_proposals_time(text, at):
    ((name, args),) = read(text, [REMINDER, OLDER]).calls
    assert name == "decide" and args["proposal"] == 4 and args["action"] == "modify"
    reminder = {
        "id": 4,
        "items": [{"position": 1, "tool": "remind", "args": {"text": "call Bob", "at": "2027-01-11T10:00:00+01:00"}}],
    }
    assert answers.modify(reminder, args["changes"], NOW, BERLIN).calls == [("remind", {"text": "call Bob", "at": at})]


def test_an_hour_said_alone_after_a_reminder_moves_it_to_that_hour():
    proposal = {
        "id": 4,
        "items": [{"position": 1, "tool": "remind", "args": {"text": "vitamins", "at": "2027-01-06T09:00:00+01:00"}}],
    }
    assert read("actually 8 please", [REMINDER]).calls[0][1]["action"] == "modify"
    assert answers.modify(proposal, "actually 8", NOW, BERLIN).calls == [
        ("remind", {"text": "vitamins", "at": "2027-01-06T08:00:00+01:00"})
    ]
    evening = {
        "id": 4,
        "items": [{"position": 1, "tool": "remind", "args": {"text": "chicken", "at": "2027-01-05T18:00:00+01:00"}}],
    }
    assert answers.modify(evening, "make it 7 instead", NOW, BERLIN).calls == [
        ("remind", {"text": "chicken", "at": "2027-01-05T19:00:00+01:00"})
    ]  # the evening's 7


def test_the_same_words_later_in_the_conversation_ask_which_proposal():
    reply = read("make it 9 instead", [dict(REMINDER, just_asked=False), OLDER])
    assert reply.calls == [] and reply.text.startswith("Which proposal should change: 4")
    assert read("and on tuesday?", [dict(REMINDER, just_asked=False)]).calls == []


@pytest.mark.parametrize("text", ["great", "ok cool", "perfect, thanks", "alright", "fine", "cool"])
def test_pleased_words_right_after_a_proposal_approve_it(text):
    assert read(text, [REMINDER]).calls == [("decide", {"proposal": 4, "action": "approve"})]


@pytest.mark.parametrize("text", ["great", "ok cool", "perfect, thanks"])
def test_pleased_words_later_are_no_yes_and_say_it_still_waits(text):
    reply = read(text, [dict(REMINDER, just_asked=False)])
    assert reply.calls == [] and reply.text.startswith("Proposal 4 is still waiting for your answer")


def test_a_question_right_after_a_proposal_is_still_a_question():
    reply = read("what's due tomorrow?", [REMINDER])
    assert reply.calls == [] and reply.text.startswith("Nothing due tomorrow.")


@pytest.mark.parametrize(
    "text", ["no, I already did that", "nah, not needed", "No - I'll do it myself", "no need", "skip it"]
)
def test_a_no_with_its_reason_rejects(text):
    assert read(text, [REMINDER]).calls == [("decide", {"proposal": 4, "action": "reject"})]


def say(app, text: str) -> str:
    said = len(app.user_deliveries())
    app.say(text)
    assert app.wait_idle(), "Wilson did not settle"
    return "\n".join(d["text"] for d in app.user_deliveries()[said:])


def newest() -> Approval:
    return Approval.select().order_by(Approval.id.desc()).get()


def test_in_a_whole_wilson_make_it_9_and_on_tuesday_change_the_reminder_just_proposed(make_app):
    app = make_app(start="2027-01-05T10:00:00+01:00")
    say(app, "add pay rent by Friday")  # a second proposal waiting: "it" is still the one just made
    say(app, "remind me to call Bob on Monday at 10")
    first = newest()
    told = say(app, "make it 9 instead")
    moved = newest()
    assert moved.id != first.id and Approval.get_by_id(first.id).status == "superseded"
    assert [i.args["at"] for i in moved.items] == ["2027-01-11T09:00:00+01:00"]
    assert "09:00" in told and "I didn't understand" not in told
    told = say(app, "and on tuesday?")
    assert [i.args["at"] for i in newest().items] == ["2027-01-12T09:00:00+01:00"]
    assert "Tue 12 Jan" in told


def test_in_a_whole_wilson_a_no_with_a_reason_rejects_it_and_it_does_not_wait_to_expire(make_app):
    app = make_app(start="2027-01-05T10:00:00+01:00")
    say(app, "add pay rent by Friday")
    proposal = newest()
    told = say(app, "no, I already did that")
    assert Approval.get_by_id(proposal.id).status == "rejected"
    assert "I didn't understand" not in told and Task.select().count() == 0


def test_in_a_whole_wilson_a_typod_yes_approves(make_app):
    app = make_app(start="2027-01-05T10:00:00+01:00")
    say(app, "add pay rent by Friday")
    say(app, "yse")
    assert [t.title for t in Task.select()] == ["Pay rent"]


# politeness and framing ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, tool, args",
    [
        (
            "could you please remind me to take the bins out tomorrow at 7pm",
            "remind",
            {"text": "take the bins out", "at": "2027-01-06T19:00:00+01:00"},
        ),
        (
            "Can you remind me to call the vet on Friday please?",
            "remind",
            {"text": "call the vet", "at": "2027-01-08T09:00:00+01:00"},
        ),
        ("please remind me to call mum at 6pm", "remind", {"text": "call mum", "at": "2027-01-05T18:00:00+01:00"}),
        ("don't forget to buy milk", "create_task", {"title": "Buy milk"}),
        (
            "Don't forget to call Anna tomorrow at 5pm",
            "remind",
            {"text": "call Anna", "at": "2027-01-06T17:00:00+01:00"},
        ),
        ("also add: sell the old sofa by March 25", "create_task", {"title": "Sell the old sofa", "due": "2027-03-25"}),
        ("I need to call the bank by next Tuesday", "create_task", {"title": "Call the bank", "due": "2027-01-12"}),
        (
            "set a reminder to water the plants on Saturday at 10",
            "remind",
            {"text": "water the plants", "at": "2027-01-09T10:00:00+01:00"},
        ),
        (
            "in two weeks I have to hand in the seminar paper",
            "create_task",
            {"title": "Hand in the seminar paper", "due": "2027-01-19"},
        ),
        (
            "Quick one: remind me to call the insurance tomorrow at 10",
            "remind",
            {"text": "call the insurance", "at": "2027-01-06T10:00:00+01:00"},
        ),
    ],
)
def test_a_request_asked_politely_or_framed_is_that_request(text, tool, args):
    assert only(read(text), tool) == args


@pytest.mark.parametrize(
    "text, call",
    [
        (
            "every Sunday evening remind me to plan the week",
            ("create_reminder", {"text": "plan the week", "cron": "0 18 * * 0"}),
        ),
        (
            "remind me weekly on Mondays at 8 to put the bins out",
            ("create_reminder", {"text": "put the bins out", "cron": "0 8 * * 1"}),
        ),
        (
            "set a weekly reminder on Fridays at 4pm to submit my timesheet",
            ("create_reminder", {"text": "submit my timesheet", "cron": "0 16 * * 5"}),
        ),
        ("set a daily reminder at 8 to stretch", ("create_reminder", {"text": "stretch", "cron": "0 8 * * *"})),
        (
            "remind me at lunch to call the bank",
            ("remind", {"text": "call the bank", "at": "2027-01-05T12:00:00+01:00"}),
        ),
    ],
)
def test_a_reminder_in_other_words_is_set_as_said(text, call):
    assert read(text).calls == [call]


def test_later_today_asks_when_in_words_that_read_well():
    assert read("remind me later today to call mum").text.startswith("When today should I remind you to call mum?")


def test_a_move_said_as_news_moves_the_task():
    task = {"id": 3, "title": "Dentist appointment", "due": "2027-01-07", "status": "open"}
    assert read("I'm moving the dentist to Friday", tasks=[task]).calls == [
        ("update_task", {"task_id": 3, "due": "2027-01-08"})
    ]


def test_a_question_asked_politely_stays_an_honest_no():
    reply = read("Can you book me a table at Luigi's?")
    assert reply.calls == [] and reply.text == HELP


# what is not a request ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "I gave notice on the lease",
        "Anna is going to Rome on Friday",
        "ugh, it's raining again",
        "my boss says the presentation went really well",
        "Sarah's party was great",
        "My car broke down this morning",
        "I have to say, that was fun",
    ],
)
def test_news_gets_a_word_back_not_i_didnt_understand(text):
    reply = read(text)
    assert reply.calls == [] and "I didn't understand" not in reply.text
    assert reply.text.startswith("Thanks for telling me.") and reply.text.endswith("Nothing was changed.")


@pytest.mark.parametrize(
    "text",
    [
        "my colleague Tom has his final exam next week",
        "my sister is flying to Madrid on Friday",
        "Tom and Lisa are flying to Lisbon on May 3",
        "My neighbour is moving out on March 1",
        "Jonas flies to Tokyo on Monday",
        "The kids have a school trip on Friday",
    ],
)
def test_what_someone_else_does_is_no_plan_of_the_users(text):
    reply = read(text)
    assert reply.calls == [] and reply.text.startswith("Thanks for telling me.")


@pytest.mark.parametrize(
    "text, title",
    [
        ("My German exam is on 3 March", "German exam"),
        ("My sister's wedding is on June 12 in Hamburg", "Sister's wedding"),
        ("I'm taking the train to Munich on February 12 for three days", "Trip to Munich"),
    ],
)
def test_the_users_own_plans_are_still_planned(text, title):
    assert only(read(text), "create_topic")["title"] == title


def test_a_task_done_said_with_who_it_was_for_is_marked_done():
    task = {"id": 3, "title": "Book a table for Mum's birthday", "due": "2027-01-20", "status": "open"}
    assert read("the table is booked for Mum", tasks=[task]).calls == [("complete_task", {"task_id": 3})]


def test_snoozed_until_the_weekend_is_its_saturday():
    task = {"id": 4, "title": "Clean the balcony", "status": "open"}
    assert read("snooze the balcony until the weekend", tasks=[task]).calls == [
        ("snooze_task", {"task_id": 4, "until": "2027-01-09T09:00:00+01:00"})
    ]


TASKS = [
    {"id": 1, "title": "Book the Crete flights", "due": "2027-02-20", "status": "open"},
    {"id": 2, "title": "Buy a gift for Dad", "due": "2027-01-25", "status": "open"},
    {"id": 3, "title": "Call the plumber", "status": "open"},
]


@pytest.mark.parametrize(
    "text, call",
    [
        (
            "the Crete flights can wait until next Monday",
            ("snooze_task", {"task_id": 1, "until": "2027-01-11T09:00:00+01:00"}),
        ),
        ("no need for the gift for Dad anymore", ("cancel_task", {"task_id": 2})),
        ("scratch the plumber", ("cancel_task", {"task_id": 3})),
        ("Got the gift for dad", ("complete_task", {"task_id": 2})),
    ],
)
def test_an_open_task_done_moved_or_dropped_in_everyday_words(text, call):
    assert read(text, tasks=TASKS).calls == [call]


def test_notice_given_on_the_lease_marks_that_task_of_a_move_done():
    task = {"id": 9, "title": "Give notice on the current lease", "due": "2027-01-20", "status": "open"}
    assert read("I gave notice on the lease", tasks=[task]).calls == [("complete_task", {"task_id": 9})]


@pytest.mark.parametrize(
    "text, said",
    [
        ("are you there?", "Yes, I'm here"),
        ("good job", "Thank you!"),
        ("sorry, my mistake", "No problem."),
        ("can't wait for the weekend!", "🙂"),
        ("hello?", "Hi!"),
    ],
)
def test_small_talk_gets_a_word_back(text, said):
    reply = read(text)
    assert reply.calls == [] and reply.text.startswith(said)


def test_how_are_you_gets_a_word_back():
    assert read("how are you today?").text.startswith("All good here, thanks")


# sentences, and one answer ------------------------------------------------------------------------------------------


def test_sentences_are_cut_at_their_stops_not_at_abbreviations_or_decimals():
    assert sentences.split(
        "Dear Ms Weber,\nthe fee of 120.00 EUR goes to Mr. Schulz. Pay it by Jan. 20! Thanks?\n"
        "Kind regards, Bezirksamt Pankow"
    ) == ["the fee of 120.00 EUR goes to Mr. Schulz.", "Pay it by Jan. 20!", "Thanks?"]


def test_a_request_among_other_sentences_is_read_once():
    reply = read(
        "Busy week ahead. The boiler guy comes on Thursday at 8. Can you remind me Wednesday at 8pm to "
        "clear the hallway?"
    )
    assert reply.calls == [("remind", {"text": "clear the hallway", "at": "2027-01-06T20:00:00+01:00"})]


def test_a_task_asked_for_in_quotes_among_pleasantries_is_named_without_them():
    reply = read('Hi Wilson! I hope you are well. Could you add "call the electrician" for Thursday? Thanks!')
    assert reply.calls == [("create_task", {"title": "Call the electrician", "due": "2027-01-07"})]


def test_the_one_request_after_news_is_read_not_asked_for_again():
    reply = read(
        "Ugh, the landlord again. He says the heating will be checked on January 14 between 8 and 12, so "
        "someone has to be home. Please add a task to be home for the heating check on the 14th."
    )
    assert reply.calls == [("create_task", {"title": "Be home for the heating check", "due": "2027-01-14"})]


def test_a_letter_in_german_asking_for_a_sum_is_a_task_to_pay_it():
    assert read("Sehr geehrte Frau Weber, bitte überweisen Sie 45 EUR bis zum 20. Januar.").calls == [
        ("create_task", {"title": "Pay 45 EUR", "due": "2027-01-20"})
    ]


def test_a_letter_asking_for_a_payment_is_one_task_to_pay():
    reply = read(
        "Dear Ms Weber, we kindly remind you that the dog tax of 120.00 EUR for 2027 is due on 15 February "
        "2027. Please transfer the amount quoting reference HS-2027-4411. Kind regards, Bezirksamt Pankow"
    )
    assert reply.calls == [("create_task", {"title": "Pay dog tax (120.00 EUR)", "due": "2027-02-15"})]


def test_the_help_is_said_in_full_once_in_a_conversation():
    assert answer("blorp the frobnicator").text == HELP
    chat = phrases.Chat(text="blorp the frobnicator", now=NOW, tz=BERLIN, playbook=PLAYBOOK, said_before=[HELP])
    assert intents.answer(chat).text == intents.HELP_AGAIN and CAN_DO not in intents.HELP_AGAIN


def test_a_pasted_letter_gets_one_answer_with_no_paragraph_twice(make_app):
    app = make_app(start="2027-01-05T10:00:00+01:00")
    say(app, "hello")
    letter = (
        "Dear Wilson,\nI hope you are well. The landlord called yesterday.\nHe wants the keys back.\n"
        "Also the heating is broken again.\nBest, Sam"
    )
    said = len(app.user_deliveries())
    app.say(letter)
    assert app.wait_idle()
    told = [d["text"] for d in app.user_deliveries()[said:]]
    assert len(told) == 1, told
    paragraphs = told[0].split("\n\n")
    assert len(paragraphs) == len(set(paragraphs)) and "I didn't understand" not in told[0]


def test_lines_pasted_one_by_one_say_the_help_in_full_once(make_app):
    app = make_app(start="2027-01-05T10:00:00+01:00")
    say(app, "hello")
    said = len(app.user_deliveries())
    for line in ["blorp one", "blorp two", "blorp three"]:
        app.say(line)
    assert app.wait_idle()
    told = "\n".join(d["text"] for d in app.user_deliveries()[said:])
    assert told.count(CAN_DO) == 1 and told.count(intents.HELP_AGAIN) == 2


# dates --------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, due",
    [
        ("add renew the library card before February", "2027-01-31"),
        ("I have to get the boiler serviced before August", "2027-07-31"),
        ("add pay the deposit by the end of the month", "2027-01-31"),
        ("add check the tyres in two weeks", "2027-01-19"),
        ("add call the bank next Tuesday at 3pm", "2027-01-12T15:00:00+01:00"),
        ("add pay the nanny on the 15th", "2027-01-15"),
        ("add send the form before August 3", "2027-08-03"),
        ("add buy a present for Lisa by the day after tomorrow", "2027-01-07"),
        ("add submit the expense report by Friday next week", "2027-01-15"),
        ("add order new glasses by the end of next week", "2027-01-15"),
        ("add call the landlord before the weekend", "2027-01-08"),
    ],
)
def test_every_date_phrase_is_a_due_date(text, due):
    task = only(read(text), "create_task")
    assert task["due"] == due and not any(w in task["title"].lower() for w in ("before", "august", "february"))


def test_this_week_asked_on_a_sunday_lists_the_coming_monday_to_sunday(make_app):
    app = make_app(start="2027-01-08T10:00:00+01:00")  # a Friday: the tasks are made before the weekend
    for line in (
        "add call the landlord by Monday",
        "add pay the nanny by Thursday",
        "add return the drill by 2027-01-17",
        "add book the dentist by 2027-01-18",
    ):
        say(app, line)
        say(app, "yes")
    app.advance(datetime(2027, 1, 10, 10, 0, tzinfo=BERLIN) - app.clock.now())  # Sunday morning
    told = say(app, "what's on my plate this week?")
    assert "Call the landlord" in told and "Pay the nanny" in told and "Return the drill" in told
    assert "Book the dentist" not in told and "Nothing due this week" not in told


# a payment ----------------------------------------------------------------------------------------------------------


def test_the_car_insurance_bill_is_a_task_to_pay_its_amount_by_its_day_not_a_forms_plan():
    reply = read("The car insurance bill of 480 euros has to be paid by dec 20")
    assert reply.calls == [("create_task", {"title": "Pay car insurance bill (480 EUR)", "due": "2027-12-20"})]


def test_a_bill_to_pay_on_a_day_is_one_task():
    assert read("pay the gas bill on the 15th").calls == [
        ("create_task", {"title": "Pay gas bill", "due": "2027-01-15"})
    ]


def test_a_sum_to_pay_for_something_is_a_task_to_pay_for_it():
    assert read("I have to pay 35 euros for the school trip by Monday").calls == [
        ("create_task", {"title": "Pay for the school trip (35 EUR)", "due": "2027-01-11"})
    ]


@pytest.mark.parametrize(
    "text, title, due",
    [
        (
            "Dear parents, the school trip to the zoo costs 12 EUR per child. Please pay by Friday, 15 January. Best regards, "
            "Ms Becker",
            "Pay for the school trip to the zoo (12 EUR)",
            "2027-01-15",
        ),
        (
            "Invoice 2027-0113\nAmount due: 89.90 EUR\nDue date: 25.01.2027\nPlease transfer to IBAN DE12 3456",
            "Pay invoice (89.90 EUR)",
            "2027-01-25",
        ),
        ("pay Anna back 20 EUR by Friday", "Pay Anna back (20 EUR)", "2027-01-08"),
    ],
)
def test_a_pasted_notice_or_a_debt_is_a_task_to_pay_what_and_how_much(text, title, due):
    assert read(text).calls == [("create_task", {"title": title, "due": due})]


def test_a_deadline_told_is_kept_as_a_task():
    assert read("Reminder: your library books are due back on 12 January.").calls == [
        ("create_task", {"title": "Return library books", "due": "2027-01-12"})
    ]


def test_a_bill_already_paid_is_no_task_to_pay():
    assert not any(name == "create_task" for name, _ in read("I already paid the gas bill of 40 EUR on Monday").calls)


# topic titles -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, title",
    [
        ("Lisbon trip on May 3", "Trip to Lisbon"),
        ("I have a trip to lisbon on May 3", "Trip to Lisbon"),
        ("April 5: new flat", "Move to the new flat"),
        ("We move into the new flat on April 5", "Move to the new flat"),
        ("moving house on March 1 to Hamburg", "Move to Hamburg"),
        ("We're moving to Hamburg on April 30", "Move to Hamburg"),
        ("March 3 chemistry exam", "Chemistry exam"),
        ("We're throwing a party for Max's 6th birthday on April 10", "Max's birthday"),
        ("Leo turns 4 on May 2, we're having a party", "Leo's birthday"),
        ("Paul and I are getting married on August 21", "Wedding"),
        ("We are going on holiday to Greece on 1 July", "Trip to Greece"),
    ],
)
def test_a_topic_title_keeps_the_point(text, title):
    topic = only(read(text), "create_topic")
    assert topic["title"] == title and topic["starts"] > "2027-01-31"  # "6th" is Max's age, not the 6th


def test_in_a_whole_wilson_the_proposal_says_what_the_payment_is(make_app):
    app = make_app(start="2027-01-05T10:00:00+01:00")
    told = say(app, "The car insurance bill of 480 euros has to be paid by dec 20")
    assert "Pay car insurance bill (480 EUR)" in told and "Mon 20 Dec 2027" in told
    assert [i.tool for i in ApprovalItem.select()] == ["create_task"]


@pytest.mark.parametrize(
    "text",
    [
        "not necessary, I did it online yesterday",
        "I've already done that",
        "already did it",
        "no need, my wife took care of it",
        "don't bother, it's sorted",
    ],
)
def test_in_a_whole_wilson_done_already_said_without_a_no_right_after_a_proposal_rejects_it(make_app, text):
    app = make_app(start="2027-01-05T10:00:00+01:00")
    say(app, "add pay the dog tax by Friday")
    proposal = newest()
    told = say(app, text)
    assert Approval.get_by_id(proposal.id).status == "rejected"
    assert told.startswith("Rejected, nothing changed") and Task.select().count() == 0


def test_done_already_said_later_is_not_read_as_an_answer_to_an_older_proposal(make_app):
    app = make_app(start="2027-01-05T10:00:00+01:00")
    say(app, "add pay the dog tax by Friday")
    proposal = newest()
    say(app, "what's due this week?")  # the user's first message since the proposal was about something else
    say(app, "I've already done that")
    assert Approval.get_by_id(proposal.id).status == "pending"


def test_a_big_city_typed_in_lower_case_is_a_trip_and_a_small_one_that_is_also_a_word_is_not():
    reply = read(
        "so we decided we're driving up to copenhagen for the easter weekend march 26 to 29 with the kids "
        "can you help me plan that"
    )
    assert only(reply, "create_topic")["title"] == "Trip to Copenhagen"
    assert not [name for name, _ in read("we are going to nice in june").calls if name == "create_topic"]
