"""Issue 44: the offline rules understand a request however it is put. Families of paraphrases, one per intent
("remind me", "add", a command, a payment, "move it", "I already did it", "what's due", a yes, a no, a change right
after a proposal), each said politely, typed on a phone (shorthand, typos, lower case), run on, or with the date
first, and each expected to come out as the same proposal a person would expect. None of them may get the generic
"I didn't understand".

Written from how people talk, not from the rules: a line that fails here is a rule to make more general, not a word
to add for that line.
"""

from __future__ import annotations

import dataclasses

import pytest

from tests.offline_support import BERLIN, NOW, OLDER, PLAYBOOK, REMINDER, TOOLS, read
from wilson.model.offline import intents, phrases
from wilson.model.offline.phrases import HELP

TASKS = [
    {"id": 1, "title": "Renew passport", "due": "2027-01-20", "status": "open"},
    {"id": 2, "title": "Book flights", "due": "2027-02-09", "status": "open"},
    {"id": 3, "title": "Return library books", "due": "2027-01-12", "status": "open"},
]


def calls_of(text: str, pending=(), tasks=TASKS):
    reply = read(text, pending, tasks)
    assert HELP not in reply.text, f"{text!r} got the generic answer"
    return reply.calls


def only(text: str, tool: str, pending=(), tasks=TASKS) -> dict:
    calls = calls_of(text, pending, tasks)
    assert [name for name, _ in calls] == [tool], (text, calls)
    return calls[0][1]


@pytest.mark.parametrize(
    "text, what, at",
    [
        ("Could you please remind me to call the dentist tomorrow?", "call the dentist", "2027-01-06T09:00:00+01:00"),
        ("pls remind me to call mom tmrw at 5", "call mom", "2027-01-06T17:00:00+01:00"),
        ("can u remind me to pick up the parcel tomorrow", "pick up the parcel", "2027-01-06T09:00:00+01:00"),
        ("would you mind reminding me to call the vet on Thursday", "call the vet", "2027-01-07T09:00:00+01:00"),
        ("i want to be reminded to stretch at 4pm", "stretch", "2027-01-05T16:00:00+01:00"),
        ("set a reminder for 6pm: call Sam", "call Sam", "2027-01-05T18:00:00+01:00"),
        ("remind me on wendesday to call Tom at 5pm", "call Tom", "2027-01-06T17:00:00+01:00"),
        ("please remind me at noon to eat lunch", "eat lunch", "2027-01-05T12:00:00+01:00"),
        (
            "hey wilson remind me tomorrow morning at half past seven to put the bins out",
            "put the bins out",
            "2027-01-06T07:30:00+01:00",
        ),
        (
            "okay so tomorrow I need to remember to bring the signed contract to the office so can you remind me at 8 in "
            "the morning",
            "bring the signed contract to the office",
            "2027-01-06T08:00:00+01:00",
        ),
        ("I have to call the plumber on Friday, remind me at 9", "call the plumber", "2027-01-08T09:00:00+01:00"),
        ("Please remember to remind me about the dentist on Friday at 9", "the dentist", "2027-01-08T09:00:00+01:00"),
    ],
)
def test_a_reminder_asked_for_in_any_words_is_that_reminder(text, what, at):
    assert only(text, "remind") == {"text": what, "at": at}


@pytest.mark.parametrize(
    "text, title, due",
    [
        ("Submit the visa application by Feb 20", "Submit the visa application", "2027-02-20"),
        ("Send the signed contract to HR by Friday", "Send the signed contract to HR", "2027-01-08"),
        ("Return the rental car on Sunday", "Return the rental car", "2027-01-10"),
        ("Call the bank tomorrow", "Call the bank", "2027-01-06"),
        ("Book a table at Luigi's for Saturday", "Book a table at Luigi's", "2027-01-09"),
        ("buy milk", "Buy milk", None),
        ("gotta call the landlord tomorrow", "Call the landlord", "2027-01-06"),
        ("need to order new glasses by end of the month", "Order new glasses", "2027-01-31"),
        ("I should really clean the garage this weekend", "Clean the garage", "2027-01-09"),
        ("I need to cancel my gym membership by the end of January", "Cancel my gym membership", "2027-01-31"),
        ("Don't forget: buy cat food", "Buy cat food", None),
        ("add to my list: bake a cake for Sunday", "Bake a cake", "2027-01-10"),
        (
            "please add task: renew the Anwohnerparkausweis, it expires on 31.01.",
            "Renew the Anwohnerparkausweis",
            "2027-01-31",
        ),
        ("the meter reading has to be sent in by 15.01", "Send in the meter reading", "2027-01-15"),
        ("the forms must be submitted by Friday", "Submit the forms", "2027-01-08"),
        ("I should get the winter tyres swapped before Easter", "Get the winter tyres swapped", "2027-03-27"),
        (
            "So I got a letter from the school today. They need Mira's certificate for the trip. Deadline is 12 February. "
            "Can you add that as a task?",
            "Send Mira's certificate for the trip",
            "2027-02-12",
        ),
    ],
)
def test_a_thing_to_do_said_in_any_words_is_that_task(text, title, due):
    assert only(text, "create_task") == {"title": title, **({"due": due} if due else {})}


@pytest.mark.parametrize(
    "text, title, due",
    [
        (
            "The car insurance from HUK wants 312,80 EUR by 1 March",
            "Pay for the car insurance from HUK (312,80 EUR)",
            "2027-03-01",
        ),
        ("the gym fee of €35 needs paying by Feb 1", "Pay gym fee (35 EUR)", "2027-02-01"),
        ("The phone bill of 39.99 euros is due on the 28th", "Pay phone bill (39.99 EUR)", "2027-01-28"),
    ],
)
def test_a_sum_to_pay_by_a_day_is_a_task_to_pay_it_then(text, title, due):
    assert only(text, "create_task") == {"title": title, "due": due}


@pytest.mark.parametrize(
    "text",
    [
        "yes",
        "yse",
        "ja",
        "sure thing",
        "yeah that's fine",
        "ok go",
        "perfect, yes",
        "yes that's right",
        "absolutely",
        "of course",
        "that works",
        "fine by me",
        "great",
        "cool",
        "alright",
        "perfect thanks",
    ],
)
def test_a_yes_in_any_words_right_after_a_proposal_approves_it(text):
    assert calls_of(text, [REMINDER, OLDER]) == [("decide", {"proposal": 4, "action": "approve"})]


@pytest.mark.parametrize(
    "text",
    [
        "nope",
        "no thanks",
        "no, not now",
        "no not that one",
        "no - I already booked it",
        "nah not needed, I'll see her that day anyway",
        "no that's fine",
        "forget it",
    ],
)
def test_a_no_in_any_words_rejects_it(text):
    assert calls_of(text, [REMINDER, OLDER]) == [("decide", {"proposal": 4, "action": "reject"})]


@pytest.mark.parametrize(
    "text, changes",
    [
        ("earlier please, 7am", "7am"),
        ("a bit later, 11?", "at 11"),
        ("not today, tomorrow", "tomorrow"),
        ("not at 9 but at 10", "at 10"),
        ("sorry, wednesday not tuesday", "wednesday not tuesday"),
        ("2pm would be better", "2pm"),
        ("can we do thursday", "thursday"),
    ],
)
def test_a_new_time_in_any_words_right_after_a_proposal_changes_it(text, changes):
    assert calls_of(text, [REMINDER, OLDER]) == [("decide", {"proposal": 4, "action": "modify", "changes": changes})]


@pytest.mark.parametrize(
    "text, task",
    [
        ("I took care of the flights", 2),
        ("got the flights sorted", 2),
        ("the passport thing is sorted", 1),
        ("I dropped off the library books after all", 3),
        ("passport renewed!", 1),
        ("booked the flights!", 2),
    ],
)
def test_a_task_done_said_in_any_words_is_marked_done(text, task):
    assert only(text, "complete_task") == {"task_id": task}


@pytest.mark.parametrize(
    "text, task, due",
    [
        ("can we move the passport task to feb 1", 1, "2027-02-01"),
        ("push the passport thing to next friday", 1, "2027-01-15"),
        ("move the flights to friday please", 2, "2027-01-08"),
    ],
)
def test_a_task_moved_in_any_words_is_moved(text, task, due):
    assert only(text, "update_task") == {"task_id": task, "due": due}


@pytest.mark.parametrize(
    "text, said",
    [
        ("hi wilson, happy new year!", "What can I do for you"),
        ("thanks, you're a star", "Thank you!"),
        ("bye for now", "Bye for now"),
        ("It's my birthday today!", "Happy birthday"),
        ("when is the passport due?", "“Renew passport” is due Wed 20 Jan."),
        ("anything left for the ski trip?", "I don't have a topic called “ski trip”."),
        ("my neighbour Herr Köhler is moving out on saturday", "Thanks for telling me."),
    ],
)
def test_words_that_ask_for_no_change_get_a_fitting_word_back(text, said):
    reply = read(text, (), TASKS)
    assert reply.calls == [] and said in reply.text


@pytest.mark.parametrize(
    "text",
    [
        "book me a table at Luigi's",
        "do i have any reminders",
        "make it happen",
        "see you tomorrow",
        "Service was great today",
    ],
)
def test_words_that_only_look_like_a_command_make_no_task(text):
    assert not any(name == "create_task" for name, _ in read(text, (), TASKS).calls)


@pytest.mark.parametrize(
    "text, task", [("passport: done", 1), ("flights - done", 2), ("I got the passport renewed", 1)]
)
def test_a_task_ticked_off_in_a_note_or_said_as_got_done_is_marked_done(text, task):
    assert only(text, "complete_task") == {"task_id": task}


@pytest.mark.parametrize(
    "text, task",
    [
        ("I won't need the flights anymore", 2),
        ("I've decided not to book flights", 2),
        ("never mind the passport, I'll do it next year", 1),
    ],
)
def test_a_task_given_up_in_any_words_is_dropped(text, task):
    assert only(text, "cancel_task") == {"task_id": task}


@pytest.mark.parametrize(
    "text, said",
    [
        ("guess what, I passed my exam!", "Thanks for telling me."),
        ("long day at work", "Thanks for telling me."),
        ("Just landed in Lisbon", "Thanks for telling me."),
        ("morning!", "What can I do for you"),
        ("Happy Friday!", "What can I do for you"),
        ("can you help me?", "I only follow simple requests"),
        ("lol that's funny", "🙂"),
        ("hmm", "Take your time."),
        ("maybe later", "Take your time."),
        ("not sure yet", "Take your time."),
        ("Ugh, Mondays", "Hang in there!"),
    ],
)
def test_news_and_small_talk_get_a_word_back_not_the_generic_answer(text, said):
    reply = read(text, (), TASKS)
    assert reply.calls == [] and said in reply.text and HELP not in reply.text


@pytest.mark.parametrize("text", ["blorp the frobnicator", "ok remind me"])
def test_a_request_no_rule_follows_still_gets_the_honest_help(text):
    assert read(text, (), TASKS).text == HELP


@pytest.mark.parametrize(
    "text, title, starts",
    [
        ("My mum turns 70 on April 3", None, "2027-04-03"),  # 70 is her age, not the year 2070
        ("Conference in Berlin March 10-12", None, "2027-03-10"),
        ("I'm visiting my parents in Munich over Easter", "Trip to Munich", "2027-03-28"),
    ],
)
def test_a_plan_starts_on_the_day_said_however_the_day_is_put(text, title, starts):
    topic = next(args for name, args in calls_of(text) if name == "create_topic")
    assert topic["starts"] == starts and (title is None or topic["title"] == title)


@pytest.mark.parametrize(
    "text, title, due",
    [
        (
            "Dear parents, please return the signed permission slip for the zoo trip by Friday 15 January. Thank you, "
            "Ms Becker",
            "Return the signed permission slip for the zoo trip",
            "2027-01-15",
        ),  # no trip plan
        ("Hi Sam, could you send me the report by Thursday? Thanks, Julia", "Send the report", "2027-01-07"),
    ],
)
def test_a_pasted_letter_asking_for_something_by_a_day_is_that_task(text, title, due):
    assert only(text, "create_task") == {"title": title, "due": due}


def test_a_notice_pasted_is_news_and_a_reminder_to_go_to_bed_is_the_evenings():
    assert read(
        "Notice: Water will be shut off on 12 January from 9:00 to 13:00 for maintenance. Building management",
        (),
        TASKS,
    ).text.startswith("Thanks for telling me.")
    assert only("I'm exhausted. Remind me at 7 to go to bed.", "remind") == {
        "text": "go to bed",
        "at": "2027-01-05T19:00:00+01:00",
    }


DEV_TASKS = [
    {"id": 1, "title": "Book hotel", "due": "2027-02-01", "status": "open"},
    {"id": 4, "title": "Buy a birthday card for Oma", "due": "2027-01-15", "status": "open"},
    {"id": 5, "title": "Return the library books", "due": "2027-01-08", "status": "open"},
]


@pytest.mark.parametrize(
    "text, task",
    [
        ("returned the books", 5),  # the task "Return …", not "Book hotel" whose verb is a word of the phrase
        ("picked up the birthday card for Oma", 4),
        ("hotel's booked", 1),
    ],
)
def test_a_task_done_is_the_one_its_verb_finishes(text, task):
    assert only(text, "complete_task", tasks=DEV_TASKS) == {"task_id": task}


def test_a_new_deadline_told_of_a_task_moves_it_and_a_deadline_changed_in_words_asks_when_if_unclear():
    assert only("the library books are due on Monday now", "update_task", tasks=DEV_TASKS) == {
        "task_id": 5,
        "due": "2027-01-11",
    }
    assert read("change the hotel deadline to April", (), DEV_TASKS).text.startswith(
        "To when should “Book hotel” move?"
    )
    assert only("change the hotel deadline to next Friday", "update_task", tasks=DEV_TASKS) == {
        "task_id": 1,
        "due": "2027-01-15",
    }


@pytest.mark.parametrize(
    "text, title, due",
    [
        ("tomorrow: call the garage", "Call the garage", "2027-01-06"),
        ("call garage tmrw", "Call garage", "2027-01-06"),
    ],
)
def test_a_day_said_first_with_a_colon_or_as_shorthand_is_the_tasks_day(text, title, due):
    assert only(text, "create_task") == {"title": title, "due": due}


def test_a_couple_of_days_and_a_day_and_hour_said_apart_are_read():
    assert only("remind me in a couple of days to follow up with Tom", "remind") == {
        "text": "follow up with Tom",
        "at": "2027-01-07T09:00:00+01:00",
    }
    # jotted with no verb, the appointment is a reminder at its day and hour (tests/test_offline_plain_requests.py)
    assert only("Friday: dentist at 10", "remind") == {"text": "dentist", "at": "2027-01-08T10:00:00+01:00"}


PLANNED = [  # tasks of two plans, each task with its topic, as the cortex shows them
    {"id": 11, "title": "Book flights", "due": "2027-02-15", "status": "open", "topic": "Lisbon with Marta"},
    {"id": 12, "title": "Book accommodation", "due": "2027-03-02", "status": "open", "topic": "Lisbon with Marta"},
    {"id": 13, "title": "Register and get your ticket", "due": "2027-04-11", "status": "open", "topic": "PyCon Italia"},
    {"id": 14, "title": "Send the receipts to my tax advisor", "due": "2027-01-23", "status": "open"},
]


@pytest.mark.parametrize(
    "text, task",
    [
        # the task named with its plan's words: the place, the event
        ("flights to Lisbon are booked, got a good deal with TAP", 11),
        ("registered for PyCon, ticket's in my inbox", 13),
        ("I registered for PyCon", 13),
    ],
)
def test_a_task_done_said_with_its_plans_words_is_marked_done(text, task):
    assert calls_of(text, tasks=PLANNED) == [("complete_task", {"task_id": task})]


def test_words_that_name_two_tasks_of_a_plan_alike_mark_neither_done():
    # "booked for Lisbon": the flights or the accommodation, nobody can tell
    assert not any(name == "complete_task" for name, _ in calls_of("booked for Lisbon", tasks=PLANNED))


@pytest.mark.parametrize(
    "text, until",
    [
        # the user sets the timeline: the task comes back when they said, "after the 20th" the day after it
        ("the receipts thing - I'll do it after the 20th, work is crazy till then", "2027-01-21T09:00:00+01:00"),
        ("I'll do the receipts after the 20th", "2027-01-21T09:00:00+01:00"),
        ("I will deal with the receipts on Monday", "2027-01-11T09:00:00+01:00"),
        ("snooze the receipts until after the weekend", "2027-01-11T09:00:00+01:00"),
    ],
)
def test_a_task_put_off_to_a_time_the_user_names_is_snoozed_until_then(text, until):
    assert calls_of(text, tasks=PLANNED) == [("snooze_task", {"task_id": 14, "until": until})]


def test_i_will_do_it_later_naming_nothing_changes_nothing():
    assert calls_of("I'll do it after the 20th", tasks=PLANNED) == []


@pytest.mark.parametrize(
    "text, snoozed",
    [
        ("not now, remind me next week instead", True),
        ("ask me again on Monday", True),
        # a thing of its own named: a reminder of it, whatever was followed up
        ("remind me to call mum next week", False),
    ],
)
def test_a_reminder_naming_nothing_after_a_follow_up_puts_that_task_off(text, snoozed):
    chat = phrases.Chat(
        text=text,
        now=NOW,
        tz=BERLIN,
        playbook=PLAYBOOK,
        tasks=PLANNED,
        offered=TOOLS,
        followed_up={"text": "Reminder: “Book flights” is due in 7 days.", "tasks": [11]},
    )
    calls = intents.answer(dataclasses.replace(chat, text=phrases.request_of(text, NOW, BERLIN))).calls
    assert [name for name, _ in calls] == (["snooze_task"] if snoozed else ["remind"])
    assert not snoozed or calls[0][1]["task_id"] == 11


@pytest.mark.parametrize(
    "text",
    [
        "add 3 things: 1) pay the Kita lunch money, 46 euros, by Feb 5 2) call the Hausverwaltung about the broken "
        "intercom by Feb 10 3) buy a present for Ayla's 7th birthday by Feb 13",
        "please add these:\n1. pay the Kita lunch money by 5.2.\n2. call the Hausverwaltung by Feb 10\n3. buy a present "
        "by Feb 13",
    ],
)
def test_a_numbered_list_is_a_task_for_each_item_with_its_own_day(text):
    calls = calls_of(text, tasks=[])
    assert [(name, args.get("due")) for name, args in calls] == [
        ("create_task", "2027-02-05"),
        ("create_task", "2027-02-10"),
        ("create_task", "2027-02-13"),
    ]
    assert "Hausverwaltung" in calls[1][1]["title"] and "present" in calls[2][1]["title"]


@pytest.mark.parametrize("text", ["yes all 3", "yes all three", "yep both", "ok all 3 of them"])
def test_a_yes_to_every_item_counted_approves_the_whole_proposal(text):
    assert calls_of(text, pending=[REMINDER]) == [("decide", {"proposal": REMINDER["id"], "action": "approve"})]


@pytest.mark.parametrize(
    "text, what, at",
    [
        (
            "remind me to renew my passport, it runs out in July - but not before March, I'm swamped till then",
            "renew my passport",
            "2027-03-01T09:00:00+01:00",
        ),
        ("remind me to call the bank but not before Friday", "call the bank", "2027-01-08T09:00:00+01:00"),
        # a need of the user's own, held off in words: reminded then, not planned by when the thing runs out
        (
            "I have to get my residence permit extended, it expires in September. don't bug me about it before "
            "mid-May though, the Ausländerbehörde only gives appointments about 3 months ahead",
            "get my residence permit extended",
            "2027-05-15T09:00:00+02:00",
        ),
        (
            "I need to renew my passport, it runs out in July. not before March though",  # was due "before March"
            "renew my passport",
            "2027-03-01T09:00:00+01:00",
        ),
    ],
)
def test_a_reminder_the_user_holds_off_until_a_time_comes_then(text, what, at):
    assert calls_of(text, tasks=[]) == [("remind", {"text": what, "at": at})]


def test_a_plan_held_off_in_words_is_titled_without_the_hold_and_due_no_step_before_it():
    calls = calls_of("Moving to Leipzig on 30 April! don't bug me about it before April though", tasks=[])
    assert calls[0][0] == "create_topic" and calls[0][1]["title"] == "Move to Leipzig"
    dues = [args["due"] for name, args in calls if name == "create_task"]
    assert len(dues) >= 4 and min(dues) == "2027-04-01"  # notice and movers were due in March
    taxes = calls_of("I have to do the tax return by July 31, but don't bother me with it before June", tasks=[])
    assert taxes[0][1]["title"] == "Do the tax return" and taxes[0][1]["starts"] == "2027-07-31"


def test_a_number_before_a_date_is_no_year():
    # "zone 21 by 16 July" once read as 21 July 2116
    calls = calls_of("would you put this on my list: renew the Anwohnerparkausweis for zone 21 by 16 July", tasks=[])
    assert calls == [("create_task", {"title": "Renew the Anwohnerparkausweis for zone 21", "due": "2027-07-16"})]


@pytest.mark.parametrize(
    "text, action",
    [
        ("nah, not cancelling it - it's the cheapest plan I could find", "reject"),  # a no with its reason
        ("top, mach so", "approve"),
        ("passt, mach so", "approve"),
    ],
)
def test_a_german_yes_and_a_no_with_its_reason_answer_the_proposal(text, action):
    waiting = {
        "id": 8,
        "items": [{"position": 1, "description": "New task: Cancel the mobile contract — due Tue 1 Jun"}],
    }
    assert calls_of(text, pending=[waiting]) == [("decide", {"proposal": 8, "action": action})]


def test_a_list_with_a_dash_before_each_item_is_a_task_for_each():
    text = (
        "todo for the next weeks:\n- sign Emil up for the Schwimmkurs again, 75 €, by May 14\n"
        "- ring the chimney sweep to fix a date by May 19\n- get a farewell card for Frau Lindqvist by May 21"
    )
    assert [args.get("due") for _, args in calls_of(text, tasks=[])] == ["2027-05-14", "2027-05-19", "2027-05-21"]
    # notes with dashes are no list of things to do
    assert all(
        name != "create_task" or "flight" not in args["title"].lower()
        for name, args in calls_of("note: - the flight is at 9 - bring the passport", tasks=[])
    )


def test_three_acts_each_with_its_day_in_one_line_are_three_tasks():
    text = (
        "need to get these done: pick up the resized ring from the jeweller by april 9th, send Oma her birthday "
        "parcel by the 21st of April and cancel Sky before the 28.4."
    )
    assert [(args["title"], args.get("due")) for _, args in calls_of(text, tasks=[])] == [
        ("Pick up the resized ring from the jeweller", "2027-04-09"),
        ("Send Oma her birthday parcel", "2027-04-21"),
        ("Cancel Sky", "2027-04-28"),
    ]


@pytest.mark.parametrize("text", ["ja, alle drei", "jo mach", "ja, beide", "all good, add them"])
def test_more_ways_to_say_yes_approve(text):
    assert calls_of(text, pending=[REMINDER]) == [("decide", {"proposal": REMINDER["id"], "action": "approve"})]


def test_a_thing_told_then_put_on_the_list_as_it_is_the_task_with_that_thing():
    text = "I still have Malte's beamer at home, have to bring it back to his office by the 18th - put it on my list"
    assert calls_of(text, tasks=[]) == [
        ("create_task", {"title": "Bring Malte's beamer back to his office", "due": "2027-01-18"})
    ]


def test_a_task_named_first_then_not_before_a_day_is_put_off_until_then():
    tasks = [{"id": 2, "title": "Bring Malte's beamer back to his office", "due": "2027-01-18", "status": "open"}]
    text = "about Malte's beamer: I'm at a training in Hamburg till Monday the 11th, so not before Tuesday pls"
    assert calls_of(text, tasks=tasks) == [("snooze_task", {"task_id": 2, "until": "2027-01-12T09:00:00+01:00"})]


# The eighth batch's ways of saying things (tests/data/fresh/BRIEF.md, "Eighth batch") --------------------------------
@pytest.mark.parametrize(
    "text, title, due",
    [
        # one errand, then the ask to keep it: a task with its day, not an office's three-step plan
        (
            "gotta hand in my BAföG Folgeantrag by June 30 or the money stops in october. pls put it on my list",
            "Hand in my BAföG Folgeantrag",
            "2027-06-30",
        ),
        (
            "need HR to fill in the Arbeitgeberbescheinigung for my Elterngeld, it has to be at the Elterngeldstelle "
            "by the 26th. add pls",
            "Get HR to fill in the Arbeitgeberbescheinigung for my Elterngeld",
            "2027-01-26",
        ),
        # a German list, one line at a time: its link or heading first, its day after a comma
        (
            "Bitte notieren: die Mitgliedsbeiträge für den Gartenverein einsammeln, bis 31. Mai.",
            "Mitgliedsbeiträge für den Gartenverein einsammeln",
            "2027-05-31",
        ),
        (
            "Und das Festzelt für unser Sommerfest beim Verleih reservieren, spätestens am 28.5.",
            "Festzelt für unser Sommerfest beim Verleih reservieren",
            "2027-05-28",
        ),
        (
            "Außerdem die Wasseruhren in allen Parzellen ablesen lassen, bis zum 25.",
            "Wasseruhren in allen Parzellen ablesen lassen",
            "2027-01-25",
        ),
    ],
)
def test_one_errand_kept_as_asked_is_one_task_with_its_day(text, title, due):
    assert calls_of(text, tasks=[]) == [("create_task", {"title": title, "due": due})]


ERRANDS = [
    {"id": 11, "title": "Hand in my BAföG Folgeantrag", "due": "2027-06-30", "status": "open"},
    {"id": 12, "title": "Get HR to fill in the Arbeitgeberbescheinigung for my Elterngeld", "due": "2027-03-26"},
    {"id": 13, "title": "P-Schein verlängern", "due": "2027-06-30", "status": "open"},
    {"id": 14, "title": "Nachweis für die Familienkasse hochladen (Kindergeld)", "due": "2027-04-30", "status": "open"},
]


@pytest.mark.parametrize(
    "text, task, until",
    [
        (
            "ugh leave the bafög thing alone till my Klausuren are done, last one's friday the 11th",
            11,
            "2027-06-12T09:00:00+02:00",  # the day after the last exam; and the exams being done is no task done
        ),
        (
            "HR is closed all of next week, they're moving floors 🙄 bring the Elterngeld thing up again the tuesday "
            "after next",
            12,
            "2027-01-19T09:00:00+01:00",
        ),
        (
            "P-Schein: frag mich in zwei wochen nochmal, vorher hat der betriebsarzt eh keinen termin frei",
            13,
            "2027-01-19T09:00:00+01:00",
        ),
        (
            "Jannik bringt den Ausbildungsvertrag erst am Wochenende mit. erinner mich Montag nochmal wegen Kindergeld",
            14,
            "2027-01-11T09:00:00+01:00",
        ),
    ],
)
def test_a_task_put_off_in_everyday_words_is_snoozed_until_then(text, task, until):
    assert calls_of(text, tasks=ERRANDS) == [("snooze_task", {"task_id": task, "until": until})]


PLAN = {"id": 7, "items": [{"position": 1, "description": "New topic: Ferienhaus Bornholm"}], "just_asked": True}


@pytest.mark.parametrize(
    "text, action",
    [
        ("ja, gerne! ferry + kids stuff, you know the drill", "approve"),  # a yes, then a word about it
        ("yes. the kids will love it", "approve"),
        ("yok yok, brauchen wir nicht – die Kinder sind den ganzen Sommer in Izmir", "reject"),  # Turkish, said twice
    ],
)
def test_a_yes_or_a_no_with_words_after_it_answers_the_proposal(text, action):
    assert calls_of(text, pending=[PLAN], tasks=[]) == [("decide", {"proposal": PLAN["id"], "action": action})]


@pytest.mark.parametrize("text", ["yes, but make it friday", "yes, the dentist moved my appointment to friday"])
def test_words_after_a_yes_that_change_or_tell_something_are_not_swallowed(text):
    assert ("decide", {"proposal": PLAN["id"], "action": "approve"}) not in calls_of(text, pending=[PLAN], tasks=[])


def test_a_topic_closed_in_german_words_after_its_news():
    text = "Bornholm fällt ins Wasser – Wasserschaden im Haus 🙄 we're staying home. du kannst das ganze Thema zumachen"
    topics = [{"id": 5, "title": "Ferienhaus Bornholm 🏖", "starts": "2027-07-10", "status": "active"}]
    assert read(text, (), [], topics=topics).calls == [("close_topic", {"topic_id": 5})]


def test_a_german_yes_with_do_it_and_a_word_after_it_approves():
    said = "ja mach bitte, Jannik muss mir den Vertrag geben"
    assert calls_of(said, pending=[PLAN], tasks=[]) == [("decide", {"proposal": PLAN["id"], "action": "approve"})]


def test_a_proof_uploaded_is_the_task_to_submit_it_done_and_a_put_off_plans_nothing():
    tasks = [{"id": 4, "title": "Submit: Kindergeld – Kindergeldnummer 155FK704219 – Nachweis…", "status": "open"}]
    assert calls_of("Nachweis hochgeladen ✔️", tasks=tasks) == [("complete_task", {"task_id": 4})]
    # the put-off names a thing of an office ("Kindergeld") but asks for no plan of it
    said = "erinner mich Montag nochmal wegen Kindergeld"
    assert calls_of(said, tasks=tasks) == [("snooze_task", {"task_id": 4, "until": "2027-01-11T09:00:00+01:00"})]
    assert "create_topic" not in [name for name, _ in calls_of(said, tasks=[])]  # a reminder, at most


@pytest.mark.parametrize("text", ["daleee 🙌", "ja gnau so", "genau so", "so machen wir das"])
def test_more_yes_words_approve(text):
    assert calls_of(text, pending=[PLAN], tasks=[]) == [("decide", {"proposal": PLAN["id"], "action": "approve"})]


def test_a_plan_asked_for_then_what_it_should_hold_is_the_plan():
    text = (
        "it's official: my Disputation is on April 14th, 10 c.t. in room 2.015 at the Institut für Geographie 🎓 "
        "could you make me a plan for it? slides, Thesenpapier, the committee stuff"
    )
    calls = calls_of(text, tasks=[])
    assert calls[0][0] == "create_topic"
    assert (calls[0][1]["title"], calls[0][1]["starts"]) == ("Disputation", "2027-04-14T10:15:00+02:00")


def test_what_follows_a_yes_is_still_read():
    tasks = [{"id": 3, "title": "Steuererklärung abgeben", "status": "open"}]
    said = calls_of("yes. remind me to call the plumber on friday", pending=[PLAN], tasks=tasks)
    assert said[0] == ("decide", {"proposal": PLAN["id"], "action": "approve"}) and said[1][0] == "remind"
    said = calls_of("ja! Steuererklärung abgegeben", pending=[PLAN], tasks=tasks)
    assert said == [("decide", {"proposal": PLAN["id"], "action": "approve"}), ("complete_task", {"task_id": 3})]
    assert calls_of("yes, please do so.", pending=[PLAN], tasks=[]) == [  # one yes, not two
        ("decide", {"proposal": PLAN["id"], "action": "approve"})
    ]
    assert ("create_task", {"title": "Sounds good"}) not in calls_of(
        "sounds good, add it pls", pending=[PLAN], tasks=[]
    )


def test_someone_else_s_holiday_beside_the_user_s_own_trip_keeps_the_trip():
    for text in (
        "We fly to Crete on 3 June and are back from holiday on the 10th",
        "I fly to Lisbon on 3 June while my boss is on holiday",
    ):
        assert calls_of(text, tasks=[])[0][0] == "create_topic", text


def test_a_done_said_with_its_recipient_or_before_a_put_off_is_still_done():
    tasks = [
        {"id": 1, "title": "Send letter to the landlord", "status": "open"},
        {"id": 2, "title": "Pay rent", "status": "open"},
    ]
    assert calls_of("letter to the landlord sent", tasks=tasks) == [("complete_task", {"task_id": 1})]
    assert calls_of("paid the rent, leave the rest till monday", tasks=tasks) == [("complete_task", {"task_id": 2})]


def test_a_hold_later_than_the_event_leaves_its_steps_before_it():
    calls = calls_of("Trip to Rome on 20 March, don't bug me about it before April", tasks=[])
    dues = [args["due"] for name, args in calls if name == "create_task"]
    assert dues and max(dues) < "2027-03-20"


def test_a_choice_in_a_task_is_kept_whole():
    said = calls_of("I have to call Tom or my sister about the car by Friday. add that please", tasks=[])
    assert said == [("create_task", {"title": "Call Tom or my sister about the car", "due": "2027-01-08"})]
