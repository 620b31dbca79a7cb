"""Requests said plainly, without the words the older rules waited for: a thing and its day with no verb, an
appointment jotted with its hour, a sum and its day with no bill word, a repeating reminder said schedule first or in
German, short answers typed loosely; and the lines around them that must stay answers (someone else's plans, the
past, "what if", thanks said at length)."""

from __future__ import annotations

import pytest

from tests.offline_support import BERLIN, NOW, REMINDER, read
from wilson.model.offline import answers, dates

TASKS = [{"id": 21, "title": "Hand in the seminar paper", "due": "2027-01-29", "status": "open"}]


# a thing and its day, no verb: a task ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, title, due",
    [
        ("expense report by friday", "Expense report", "2027-01-08"),
        ("parents' evening forms back to school by Thursday", "Parents' evening forms back to school", "2027-01-07"),
        ("the application for the Kita place must be in by 31 January", "Application for the Kita place", "2027-01-31"),
        ("registration for the marathon closes on Feb 15", "Registration for the marathon", "2027-02-15"),
        ("the deadline for the grant application is 28 Feb", "Grant application", "2027-02-28"),
        ("ok so the slides by monday", "Slides", "2027-01-11"),
    ],
)
def test_a_thing_and_its_day_without_a_verb_is_a_task_due_then(text, title, due):
    assert read(text).calls == [("create_task", {"title": title, "due": due})]


def test_a_thing_and_its_day_that_names_a_task_moves_it():
    assert read("the seminar paper by the 20th", tasks=TASKS).calls == [
        ("update_task", {"task_id": 21, "due": "2027-01-20"})
    ]


@pytest.mark.parametrize(
    "text",
    [
        "the report was finished by Friday",  # what happened
        "we were home by 10",
        "the party by the lake on Saturday",  # more than a day after "by"
        "is the report due by friday?",  # a question
    ],
)
def test_news_and_questions_with_a_day_are_no_task(text):
    assert not any(name in ("create_task", "update_task") for name, _ in read(text).calls)


# an appointment jotted with its hour: a reminder then --------------------------------------------------------------


@pytest.mark.parametrize(
    "text, label, at",
    [
        ("dentist fri 3pm", "dentist", "2027-01-08T15:00:00+01:00"),
        ("Zahnarzt am Freitag um 3", "Zahnarzt", "2027-01-08T15:00:00+01:00"),
        ("hairdresser saturday 11am", "hairdresser", "2027-01-09T11:00:00+01:00"),
        ("haircut tomorrow 10:30", "haircut", "2027-01-06T10:30:00+01:00"),
    ],
)
def test_an_appointment_jotted_with_its_day_and_hour_is_a_reminder_at_that_hour(text, label, at):
    assert read(text).calls == [("remind", {"text": label, "at": at})]


@pytest.mark.parametrize(
    "text",
    [
        "I have a dentist appointment next Tuesday at 10",  # told as a sentence: the appointment's plan
        "knee surgery fri 8am",  # something to prepare for
    ],
)
def test_an_appointment_told_or_one_to_prepare_for_keeps_its_plan(text):
    assert "create_topic" in [name for name, _ in read(text).calls]


def test_a_jotted_time_among_other_sentences_only_tells_why():
    reply = read(
        "Busy week ahead. The boiler guy comes on Thursday at 8. Can you remind me Wednesday at 8pm to clear it?"
    )
    assert [args["at"] for name, args in reply.calls if name == "remind"] == ["2027-01-06T20:00:00+01:00"]


# a sum and its day, no bill word: the bill's plan --------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, topic",
    [
        ("annual membership for the rowing club, 260 €, due end of January", "Annual membership for the rowing club"),
        ("the Kita lunch money for four months, 196 euros by the 20th", "Kita lunch money for four months"),
        ("the kids' school trip money, 35 euros, by Monday", "Kids' school trip money"),
    ],
)
def test_a_sum_and_its_day_is_a_bill_to_plan_for_titled_by_what_it_is_for(text, topic):
    calls = read(text).calls
    ((_, made),) = [(n, a) for n, a in calls if n == "create_topic"]
    assert made["title"].startswith(topic) and "EUR)" in made["title"]
    assert any(name == "create_task" and args["title"] == "Pay or cancel" for name, args in calls)


@pytest.mark.parametrize(
    "text, kind",
    [
        ("Add: pay for the school trip to the Harz, 185 €, by 29 January", "create_task"),  # names its own task
        ("The car insurance bill of 480 euros has to be paid by jan 20", "create_task"),  # a payment, as before
        ("my sister owes me 50 euros by Friday", None),  # money coming in
        ("I paid 40 euros for the concert on Friday", None),
    ],
)
def test_a_sum_asked_as_a_task_or_not_owed_is_no_bill_plan(text, kind):
    names = [name for name, _ in read(text).calls]
    assert "create_topic" not in names and (names[:1] == [kind] if kind else not names)


# repeating reminders said in other shapes ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, what, cron",
    [
        ("on the first of every month remind me to transfer 50 € to Jana", "transfer 50 € to Jana", "0 9 1 * *"),
        ("every sunday evening at 9pm nudge me to plan the week", "plan the week", "0 21 * * 0"),
        ("Erinner mich bitte jeden Donnerstag um 18 Uhr an die Biotonne", "die Biotonne", "0 18 * * 4"),
        ("jeden Ersten des Monats um 8 an die Miete erinnern", "die Miete", "0 8 1 * *"),
        (
            "remind me every wednesday and saturday to water the balcony plants",
            "water the balcony plants",
            "0 9 * * 3,6",
        ),
        ("remind me every Tuesday and Friday at 7 to go running", "go running", "0 7 * * 2,5"),
        ("every year on 2 March remind me it's Paula's birthday", "it's Paula's birthday", "0 9 2 3 *"),
        ("remind me every year on 14 Feb to buy flowers", "buy flowers", "0 9 14 2 *"),
    ],
)
def test_a_repeating_reminder_is_read_whatever_order_or_language_it_is_said_in(text, what, cron):
    assert read(text).calls == [("create_reminder", {"text": what, "cron": cron})]


def test_a_one_off_reminder_on_a_day_of_the_month_stays_one():
    ((name, args),) = read("remind me on the 1st of February to pay the rent").calls
    assert name == "remind" and args["at"] == "2027-02-01T09:00:00+01:00"


# short answers typed loosely -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["okk", "okay", "sure why not", "why not"])
def test_a_loose_yes_right_after_a_proposal_approves_it(text):
    assert read(text, [REMINDER]).calls == [("decide", {"proposal": 4, "action": "approve"})]


def test_a_no_with_its_reason_after_it_declines():
    assert read("nah my phone does that already", [REMINDER]).calls == [("decide", {"proposal": 4, "action": "reject"})]


@pytest.mark.parametrize("text", ["oh", "on it"])
def test_words_one_letter_from_ok_are_no_yes(text):
    assert read(text, [REMINDER]).calls == []


# what must stay an answer --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "our neighbours are moving to Bremen in March",
        "my sister's flying to Seoul next Friday for work",
        "went to the dentist before Christmas, all fine",
        "I'd rather not think about taxes today",
        "what if I moved to Lisbon, would that be crazy?",
    ],
)
def test_others_plans_the_past_and_musings_stay_news(text):
    reply = read(text)
    assert reply.calls == [] and reply.text.startswith("Thanks for telling me.")


@pytest.mark.parametrize(
    "text",
    [
        "danke dir, echt hilfreich",
        "haha you're the best",
        "Anyway, you've been a big help this morning, thank you so much for sorting all of that out with me, I really "
        "appreciate it and I'll probably be back later when I've had lunch",
    ],
)
def test_thanks_however_said_get_a_word_back(text):
    reply = read(text)
    assert reply.calls == [] and reply.text in ("You're welcome!", "Thank you!", "You're welcome! Nothing was changed.")


def test_a_reason_after_a_task_leaves_its_title():
    assert read("I have to renew my passport before May, it runs out in June").calls == [
        ("create_task", {"title": "Renew my passport", "due": "2027-04-30"})
    ]


def test_within_a_time_is_no_part_of_the_title():
    assert read("Please add a task: apply for parental allowance within two weeks").calls == [
        ("create_task", {"title": "Apply for parental allowance", "due": "2027-01-19"})
    ]


# existing tasks, said of in other words --------------------------------------------------------------------------------

OPEN = [
    {"id": 1, "title": "Pick up the suit from the tailor", "status": "open"},
    {"id": 2, "title": "Back up the laptop", "status": "open"},
    {"id": 3, "title": "Return the drill to Kemal", "status": "open"},
    {"id": 4, "title": "Descale the coffee machine", "status": "open"},
    {"id": 5, "title": "Fill in the Kita survey", "status": "open"},
    {"id": 7, "title": "Reply to the school about the class outing", "due": "2027-01-12", "status": "open"},
    {"id": 8, "title": "Book the vet for Pixel", "due": "2027-01-20", "status": "open"},
]


@pytest.mark.parametrize(
    "text, task",
    [
        ("suit's picked up 👔", 1),
        ("finally backed up the laptop last night", 2),
        ("the laptop is backed up", 2),
        ("descaled the coffee machine", 4),
        ("Kemal has his drill back", 3),
    ],
)
def test_a_task_said_done_in_its_own_verb_is_completed(text, task):
    assert read(text, tasks=OPEN).calls == [("complete_task", {"task_id": task})]


@pytest.mark.parametrize(
    "text", ["Tom backed up the laptop", "my brother picked up the suit", "did I back up the laptop?"]
)
def test_someone_else_doing_it_or_a_question_completes_nothing(text):
    assert not any(name == "complete_task" for name, _ in read(text, tasks=OPEN).calls)


@pytest.mark.parametrize(
    "text, task, until",
    [
        ("coffee machine descaling: later, bug me about it in 3 days", 4, "2027-01-08T09:00:00+01:00"),
        ("Kita survey not today, ask me again tomorrow", 5, "2027-01-06T09:00:00+01:00"),
        ("remind me again in 3 days about the Kita survey", 5, "2027-01-08T09:00:00+01:00"),
    ],
)
def test_a_task_to_bring_up_again_later_is_snoozed(text, task, until):
    assert read(text, tasks=OPEN).calls == [("snooze_task", {"task_id": task, "until": until})]


def test_a_reminder_that_names_no_task_stays_a_reminder():
    ((name, _),) = read("remind me again in 3 days about the parcel", tasks=OPEN).calls
    assert name == "remind"


@pytest.mark.parametrize(
    "text, task, due",
    [
        ("Pixel's vet booking: make that due Friday", 8, "2027-01-08"),
        ("the school wants the reply about the outing by the 15th now, not the 12th", 7, "2027-01-15"),
    ],
)
def test_a_task_named_with_its_new_day_is_moved_not_made_again(text, task, due):
    assert read(text, tasks=OPEN).calls == [("update_task", {"task_id": task, "due": due})]


# requests said with more around them -----------------------------------------------------------------------------------


def test_a_thing_needed_by_a_day_is_a_task_to_get_it_and_a_need_with_no_day_is_news():
    assert read("i need new passport photos for the Personalausweis in the next fortnight").calls == [
        ("create_task", {"title": "Get new passport photos for the Personalausweis", "due": "2027-01-19"})
    ]
    assert read("I need new glasses").calls == [] and read("I need a break this weekend").calls == []


def test_hesitation_and_thinking_aloud_are_no_part_of_the_request():
    ((name, args),) = read(
        "okay so um I was thinking I really need to book a table for Mum's dinner um sometime before the 20th can you "
        "add that"
    ).calls
    assert name == "create_task" and args["title"] == "Book a table for Mum's dinner"


def test_um_before_an_hour_in_german_is_the_hour():
    ((name, args),) = read("Erinnere mich morgen um 8 an den Zahnarzt").calls
    assert name == "remind" and args["at"] == "2027-01-06T08:00:00+01:00"


def test_a_letters_day_to_pay_by_is_the_one_said_with_by_not_the_first_it_names():
    letter = (
        "Dear Ms Brandt, Thank you for your order of 14 December. Please find attached invoice no. 2027-0113 for EUR "
        "89.90. We kindly ask you to transfer the amount by 20 January 2027 to the account below, quoting the invoice "
        "number. Kind regards, Buchhandlung Lesezeichen"
    )
    assert read(letter).calls == [("create_task", {"title": "Pay invoice (89.90 EUR)", "due": "2027-01-20"})]


def test_them_is_what_someone_said_they_need_in_the_sentence_before():
    ((name, args),) = read(
        "Had a long chat with the accountant today. She needs the receipts for the home office. Can you add a task to "
        "scan them by the 1st of February?"
    ).calls
    assert (name, args["title"], args["due"]) == ("create_task", "Scan the receipts for the home office", "2027-02-01")


@pytest.mark.parametrize(
    "letter, title, due",
    [
        (
            "Sehr geehrte Frau Brandt, vielen Dank für die Anmeldung Ihres Sohnes zur Klassenfahrt nach Rügen. Bitte "
            "senden Sie uns die unterschriebene Einverständniserklärung bis zum 22.01.2027 zurück. Mit freundlichen "
            "Grüßen, Sekretariat Grundschule am Weinberg",
            "Unterschriebene Einverständniserklärung zurücksenden",
            "2027-01-22",
        ),
        (
            "Liebe Eltern, bitte zahlen Sie das Essensgeld bis zum 15. Februar ein. Viele Grüße, Kita Sonnenschein",
            "Essensgeld einzahlen",
            "2027-02-15",
        ),
    ],
)
def test_a_german_letters_request_of_its_reader_is_one_task_titled_as_a_german_writes_it(letter, title, due):
    assert read(letter).calls == [("create_task", {"title": title, "due": due})]


def test_would_you_mind_asks_for_the_act_it_names():
    ((name, args),) = read("would you mind nudging me friday morning about the invoices").calls
    assert (name, args["at"]) == ("remind", "2027-01-08T09:00:00+01:00") and "invoices" in args["text"]


def test_and_another_one_leads_a_request_it_is_no_part_of():
    assert read("and another one: book a hotel in Kassel for Sophie's wedding by Thursday 25 March").calls == [
        ("create_task", {"title": "Book a hotel in Kassel for Sophie's wedding", "due": "2027-03-25"})
    ]


TOPICS = [
    {"id": 2, "title": "Move to Leipzig", "status": "active"},
    {"id": 4, "title": "Ruth's wedding in Kraków", "status": "active"},
]


@pytest.mark.parametrize(
    "text, topic",
    [
        ("we're not moving after all, the landlord extended our lease 🎉", 2),
        ("Ruth and Piotr called the wedding off, so you can drop all of that", 4),
    ],
)
def test_news_that_an_event_is_off_closes_its_topic(text, topic):
    assert read(text, topics=TOPICS).calls == [("close_topic", {"topic_id": topic})]


@pytest.mark.parametrize("text", ["we're not going to the cinema after all", "the move went well"])
def test_news_of_something_else_off_or_of_the_event_going_well_closes_nothing(text):
    assert read(text, topics=TOPICS).calls == []


def test_a_weekday_with_a_day_of_the_month_is_that_day_not_this_weeks():
    ((_, topic), *_) = read("Leo's birthday party is on Saturday the 20th").calls
    assert topic["starts"] == "2027-02-20"  # the 20th that is a Saturday


def test_a_reminder_in_hours_counted_in_words():
    assert read("please remind me in two hours to take the washing out").calls == [
        ("remind", {"text": "take the washing out", "at": "2027-01-05T12:00:00+01:00"})
    ]


def test_a_german_ask_for_help_preparing_is_a_plan_from_the_first_of_its_days():
    calls = read("Könntest du mir helfen, die Fachtagung Pflege in Dresden am 22. und 23. Februar vorzubereiten?").calls
    ((_, topic),) = [(n, a) for n, a in calls if n == "create_topic"]
    assert topic["starts"] == "2027-02-22" and "Dresden" in topic["title"]


@pytest.mark.parametrize("text", ["you're welcome", "no worries"])
def test_a_courtesy_back_gets_a_word_back(text):
    reply = read(text)
    assert reply.calls == [] and reply.text == "🙂"


def test_two_acts_each_with_its_day_in_one_line_are_two_tasks():
    text = (
        "Two things: I need to renew the resident parking permit by 12 March, and cancel my gym membership before the "
        "end of March, they want it in writing."
    )
    assert read(text).calls == [
        ("create_task", {"title": "Renew the resident parking permit", "due": "2027-03-12"}),
        ("create_task", {"title": "Cancel my gym membership", "due": "2027-03-31"}),
    ]


@pytest.mark.parametrize("text", ["buy bread and milk tomorrow", "remind me to call Tom at 5 and buy milk"])
def test_one_act_with_and_in_it_stays_one(text):
    assert len(read(text).calls) == 1


PAY = [
    {"id": 9, "title": "Pay the Klassenfahrt Usedom 4a (145 EUR)", "status": "open", "due": "2027-03-17"},
    {"id": 10, "title": "Cancel my gym membership", "status": "open"},
]


@pytest.mark.parametrize(
    "text, task",
    [
        ("I transferred the 145 euros for the class trip this morning", 9),  # the sum names the task
        ("sent the gym cancellation letter today, registered mail", 10),  # the act named by its noun
    ],
)
def test_a_task_done_said_by_its_sum_or_its_acts_noun_is_completed(text, task):
    assert read(text, tasks=PAY).calls == [("complete_task", {"task_id": task})]


@pytest.mark.parametrize("text", ["I transferred 50 euros to Jana", "sent the letter to Tom"])
def test_a_payment_or_a_letter_no_task_names_is_news(text):
    reply = read(text, tasks=PAY)
    assert reply.calls == [] and reply.text.startswith("Thanks for telling me.")


@pytest.mark.parametrize("text", ["sounds good to me", "fine by me"])
def test_agreeing_with_to_me_approves(text):
    assert read(text, [REMINDER]).calls == [("decide", {"proposal": 4, "action": "approve"})]


@pytest.mark.parametrize(
    "text, title, due",
    [
        ("put renew the ID card on my list, due Monday", "Renew the ID card", "2027-01-11"),
        ("add a task for me to order the birthday cake, by the 12th", "Order the birthday cake", "2027-01-12"),
        ("set me a task to book the train tickets before the end of next week", "Book the train tickets", "2027-01-15"),
        ("Reminder to self: renew the bike insurance by 1 March", "Renew the bike insurance", "2027-03-01"),
    ],
)
def test_a_task_asked_for_in_other_framings_is_that_task(text, title, due):
    assert read(text).calls == [("create_task", {"title": title, "due": due})]


PLAN = {
    "id": 5,
    "just_asked": True,
    "items": [
        {"position": 1, "tool": "create_topic", "description": "New topic: Trip to Garda", "args": {"title": "Trip"}},
        {
            "position": 2,
            "tool": "create_task",
            "description": "New task: Book accommodation",
            "args": {"title": "Book"},
        },
        {"position": 3, "tool": "create_task", "description": "New task: Pack", "args": {"title": "Pack"}},
    ],
}


@pytest.mark.parametrize("text", ["ok but drop the packing", "fine, but leave out packing"])
def test_a_yes_that_leaves_out_one_step_approves_the_rest(text):
    assert read(text, [PLAN]).calls == [
        ("decide", {"proposal": 5, "action": "reject", "items": [3]}),
        ("decide", {"proposal": 5, "action": "approve", "items": [1, 2]}),
    ]


def test_hesitation_before_a_request_said_right_after_a_proposal_is_still_the_request():
    ((name, args),) = read(
        "okay so um I was thinking I really need to book a table for Mum's dinner um sometime before the 20th can you "
        "add that",
        [REMINDER],
    ).calls
    assert name == "create_task" and args["title"] == "Book a table for Mum's dinner"


WAITING = [
    {"id": 1, "title": "Send invoice to Kessler GmbH", "due": "2027-01-15", "status": "open"},
    {"id": 4, "title": "Book the Crete flights", "due": "2027-02-20", "status": "open"},
]


@pytest.mark.parametrize(
    "text, call",
    [
        # a day of the month agreed is the new deadline
        (
            "the kessler invoice can wait till the 20th, they said thats fine for them",
            ("update_task", {"task_id": 1, "due": "2027-01-20"}),
        ),
        ("the Crete flights can wait until 3 March", ("update_task", {"task_id": 4, "due": "2027-03-03"})),
        # a time to come back to it puts it off
        (
            "the Crete flights can wait until next Monday",
            ("snooze_task", {"task_id": 4, "until": "2027-01-11T09:00:00+01:00"}),
        ),
    ],
)
def test_a_task_that_can_wait_until_a_date_is_moved_and_until_a_time_put_off(text, call):
    assert read(text, tasks=WAITING).calls == [call]


@pytest.mark.parametrize(
    "text, call",
    [
        (
            "don't let me forget Oma's birthday on the 14th",
            ("remind", {"text": "Oma's birthday", "at": "2027-01-14T09:00:00+01:00"}),
        ),
        ("don't let me forget to call the bank", ("create_task", {"title": "Call the bank"})),
    ],
)
def test_a_thing_not_to_forget_on_a_day_is_a_reminder_and_an_act_a_task(text, call):
    assert read(text).calls == [call]


@pytest.mark.parametrize("text", ["on 14 and 15 April", "14th and 15th of April", "April 14 and 15"])
def test_two_days_said_with_and_begin_on_the_first(text):
    (found,) = dates.search(text, NOW, BERLIN)
    assert str(found.value) == "2027-04-14"


GAS = {
    "id": 6,
    "just_asked": True,
    "items": [
        {
            "position": 1,
            "tool": "create_task",
            "description": "New task: Pay the gas bill — due Fri 15 Jan 2027",
            "args": {"title": "Pay the gas bill", "due": "2027-01-15"},
        }
    ],
}


@pytest.mark.parametrize("text, due", [("push it a week", "2027-01-22"), ("wait, it's due on the 18th", "2027-01-18")])
def test_a_task_just_proposed_is_put_off_or_given_its_day_in_a_few_words(text, due):
    ((_, args),) = read(text, [GAS]).calls
    assert args["action"] == "modify"
    assert answers.modify(GAS, args["changes"], NOW, BERLIN).calls == [
        ("create_task", {"title": "Pay the gas bill", "due": due})
    ]


def test_a_question_about_what_is_due_right_after_a_proposal_changes_nothing():
    assert read("what's due tomorrow?", [GAS]).calls == []


def test_a_persons_name_that_is_also_a_town_going_somewhere_is_their_trip_not_the_users():
    assert read("Anna's flying to Rome on Friday").calls == []
    assert "create_topic" in [name for name, _ in read("I'm flying to Vienna on Friday").calls]


def test_how_is_your_day_is_asked_of_wilson():
    reply = read("how's your day?")
    assert reply.calls == [] and reply.text.startswith("All good here")
