"""wilson/model/offline/intents.py: what a person's message asks for, as proposals, answers or honest help."""

from __future__ import annotations

from datetime import date, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wilson.model.offline import intents, looks, phrases, places
from tests.offline_support import BERLIN, NOW, PLAYBOOK, TASKS, TOOLS, TOPICS, answer


def test_a_deadline_in_words_becomes_a_topic_named_after_it():
    reply = answer("I need to file my taxes by the 25th")
    topic = reply.calls[0]
    assert topic == (
        "create_topic",
        {
            "title": "File taxes",
            "starts": "2027-01-25",
            "notes": "From your message: I need to file my taxes by the 25th",
        },
    )
    tasks = {args["title"]: args["due"] for name, args in reply.calls[1:]}
    assert tasks["Submit"] == "2027-01-23" and all(due < "2027-01-25" for due in tasks.values())
    assert all(args["topic"] == "File taxes" for _, args in reply.calls[1:])
    assert "“the 25th” → Mon 25 Jan" in reply.rule and reply.text == ""


@pytest.mark.parametrize(
    "text, call",
    [
        ("remind me to call mom on Sunday", ("remind", {"text": "call mom", "at": "2027-01-10T09:00:00+01:00"})),
        (
            "remind me tomorrow at 3pm to send the invoice",
            ("remind", {"text": "send the invoice", "at": "2027-01-06T15:00:00+01:00"}),
        ),
        (
            "remind me every first Monday at 8 to pay rent",
            ("create_reminder", {"text": "pay rent", "cron": "0 8 1-7 * 1"}),
        ),
        ("add pay rent by Friday", ("create_task", {"title": "Pay rent", "due": "2027-01-08"})),
        # "When should I remind you?" before
        (
            "remind me this weekend to clean the garage",
            ("remind", {"text": "clean the garage", "at": "2027-01-09T09:00:00+01:00"}),
        ),
        ("remind me at half past 5 to call Tom", ("remind", {"text": "call Tom", "at": "2027-01-05T17:30:00+01:00"})),
        (
            "remind me to book the half past 6 class tomorrow",
            ("remind", {"text": "book the half past 6 class", "at": "2027-01-06T09:00:00+01:00"}),
        ),
        (
            "remind me at half past 5 a.m. to go running",
            ("remind", {"text": "go running", "at": "2027-01-06T05:30:00+01:00"}),
        ),
        ("remind me at 6 a.m. to run", ("remind", {"text": "run", "at": "2027-01-06T06:00:00+01:00"})),
        # the reminder's text was "between   to call the bank", "next to renew the permit", "UTC tomorrow to call Tom"
        (
            "remind me between 2pm and 4pm tomorrow to call the bank",
            ("remind", {"text": "call the bank", "at": "2027-01-06T14:00:00+01:00"}),
        ),
        (
            "remind me the Friday after next to renew the permit",
            ("remind", {"text": "renew the permit", "at": "2027-01-15T09:00:00+01:00"}),
        ),
        (
            "remind me at 10:00 UTC tomorrow to call Tom",
            ("remind", {"text": "call Tom", "at": "2027-01-06T11:00:00+01:00"}),
        ),
        (
            "add call the plumber between 10 and 12 tomorrow",
            ("create_task", {"title": "Call the plumber", "due": "2027-01-06T10:00:00+01:00"}),
        ),
        (
            "remind me to call Tom at half past 5 on the 20th",
            ("remind", {"text": "call Tom", "at": "2027-01-20T17:30:00+01:00"}),
        ),
        (
            "todo: buy a birthday present by the 20th",
            ("create_task", {"title": "Buy a birthday present", "due": "2027-01-20"}),
        ),
        # "I didn't understand that" before, and "Oat milk to my shopping list" as the title
        ("note to self: buy milk", ("create_task", {"title": "Buy milk"})),
        ("Note to self - buy milk", ("create_task", {"title": "Buy milk"})),
        ("add buying milk to my shopping list", ("create_task", {"title": "Buy milk"})),
        # what follows a note's words is read as said, and kept as a task when nothing else reads it
        (
            "note: remind me tomorrow at 9 to call mum",
            ("remind", {"text": "call mum", "at": "2027-01-06T09:00:00+01:00"}),
        ),
        ("note to self: move the passport task to next Tuesday", ("update_task", {"task_id": 1, "due": "2027-01-12"})),
        ("note: cancel the flights task", ("cancel_task", {"task_id": 2})),
        ("note: I already paid the rent", ("create_task", {"title": "I already paid the rent"})),
        (
            "memo: the plumber's number is in the drawer",
            ("create_task", {"title": "The plumber's number is in the drawer"}),
        ),
        ("add oat milk to my shopping list", ("create_task", {"title": "Buy oat milk"})),
        ("put eggs on my grocery list", ("create_task", {"title": "Buy eggs"})),
        ("add get bread to the shopping list", ("create_task", {"title": "Get bread"})),
        # no notes: they would replace the task's own
        ("move the passport task to next Tuesday", ("update_task", {"task_id": 1, "due": "2027-01-12"})),
        ("snooze the flights until Monday", ("snooze_task", {"task_id": 2, "until": "2027-01-11T09:00:00+01:00"})),
        ("done with the flights", ("complete_task", {"task_id": 2})),
        ("drop the passport task", ("cancel_task", {"task_id": 1})),
        ("forget the Japan trip", ("close_topic", {"topic_id": 7})),
        ("close the Japan topic", ("close_topic", {"topic_id": 7})),
    ],
)
def test_requests_become_one_proposed_change(text, call):
    reply = answer(text)
    assert reply.calls == [call] and reply.text == ""


def test_a_reminder_for_a_time_that_has_passed_says_so_and_asks_when():
    # "When should I remind you?" before, as if no time had been said
    reply = answer("remind me today at 8am to stretch")  # at 10:00
    assert reply.calls == [] and reply.text.startswith("Tue 5 Jan 2027 08:00 has passed already (it's 10:00 now).")
    assert "to stretch?" in reply.text and "Nothing was set." in reply.text
    late = intents.answer(
        phrases.Chat(
            text="remind me today to call the bank",
            now=NOW.replace(hour=16),
            tz=BERLIN,
            playbook=PLAYBOOK,
            tasks=[],
            topics=[],
            pending=[],
            offered=TOOLS,
        )
    )
    assert late.calls == [] and late.text.startswith("When today should I remind you to call the bank?")


def test_a_task_with_a_time_moved_to_another_day_keeps_its_time():
    # "Fri 8 Jan" before: the dentist at 10:00 lost its hour
    dentist = [{"id": 5, "title": "Dentist appointment", "due": "2027-01-07T10:00:00+01:00", "status": "open"}]
    assert answer("move the dentist to Friday", tasks=dentist).calls == [
        ("update_task", {"task_id": 5, "due": "2027-01-08T10:00:00+01:00"})
    ]
    assert answer("move the dentist to Saturday at 11", tasks=dentist).calls == [
        ("update_task", {"task_id": 5, "due": "2027-01-09T11:00:00+01:00"})
    ]
    assert answer("move the passport task to Friday").calls == [("update_task", {"task_id": 1, "due": "2027-01-08"})]
    # a new time alone keeps the day (it was today at 15:00); a time already past is not kept (overdue at once)
    reply = answer("move the dentist to 3pm", tasks=dentist)
    assert reply.calls == [("update_task", {"task_id": 5, "due": "2027-01-07T15:00:00+01:00"})]
    assert "“3pm” → Thu 7 Jan 2027 15:00" in reply.rule
    assert answer("move the dentist to half past 3", tasks=dentist).calls == [
        ("update_task", {"task_id": 5, "due": "2027-01-07T15:30:00+01:00"})
    ]
    early = [dict(dentist[0], due="2027-01-07T07:00:00+01:00")]
    assert answer("move the dentist to today", tasks=early).calls == [
        ("update_task", {"task_id": 5, "due": "2027-01-05"})
    ]


def test_what_is_coming_lists_the_span_asked_about():
    week = answer("what's on my plate this week?")
    assert week.calls == [] and week.text.startswith("Coming up this week:")
    assert "Trip to Japan starts Sat 9 Jan" in week.text and "Book flights" not in week.text
    assert "Renew passport" not in answer("what's coming?").text  # the next two weeks end on the 18th
    month = answer("what's coming this month?")
    assert month.text.startswith("Coming up this month:") and "Renew passport — due Wed 20 Jan" in month.text


def test_yes_and_no_answer_the_newest_pending_proposal():
    pending = [
        {"id": 9, "items": [{"position": 1, "description": "New task: Pay rent"}]},
        {"id": 4, "items": [{"position": 1, "description": "New task: Pack"}]},
    ]
    assert answer("yes please", pending).calls == [("decide", {"proposal": 9, "action": "approve"})]
    assert answer("nope", pending).calls == [("decide", {"proposal": 9, "action": "reject"})]
    assert answer("yes", []).calls == []  # nothing pending: not an answer to anything


@pytest.mark.parametrize(
    "text",
    [
        "put the bins out",
        "notebook is broken",
        "what did I do wrong",
        "which did I complete? mark the other done",
        "what's the weather like?",
        "Dinner tonight?",
        "hello, can you call the bank?",
        "note to self",
        "note:",
        "can you book me a table at Luigi's?",
        "remind me",
        "I'm sick, tell my boss",
        "I'm out of milk",
    ],
)
def test_what_no_rule_understands_gets_an_honest_answer(text):
    reply = answer(text)
    assert reply.calls == []
    assert "Nothing was" in reply.text and "Noted" not in reply.text


def test_first_contact_says_how_to_connect_a_model():
    reply = answer("hello", first_contact=True)
    assert reply.text.startswith(phrases.INTRO) and "WILSON_LLM_BASE_URL" in reply.text
    assert reply.text.endswith(phrases.TRY) and "didn't understand" not in reply.text  # a greeting is understood
    asked = answer("what can you do?", first_contact=True).text
    assert asked.startswith(phrases.INTRO) and asked.endswith(phrases.REQUESTS) and asked.count("offline") == 0


@pytest.mark.parametrize(
    "text, said",
    [
        ("hello", "Hi! What can I do for you?"),
        ("Good morning, Wilson!", "Hi! What can I do for you?"),
        ("thanks!", "You're welcome!"),
        ("thank you so much", "You're welcome!"),
        ("ok", "👍"),
        ("got it.", "👍"),
        ("ok thanks", "👍"),
        ("bye", "Bye for now!"),
        ("good night", "Bye for now!"),
        ("what can you do?", phrases.CAN_DO),
        ("help", phrases.CAN_DO),
        ("How does this work?", phrases.CAN_DO),
        # how or where the user is: "I didn't understand that" before
        ("I'm sick today", "Sorry to hear that."),
        ("I\u2019m so tired", "Sorry to hear that."),
        ("feeling a bit stressed today", "Sorry to hear that."),
        ("I'm not feeling well.", "Sorry to hear that."),
        ("heading out, back at 6", "👍"),
        ("I'm heading out, back at 6", "👍"),
        ("I\u2019m at work, back by 5", "👍"),
        ("I'm at work", "👍"),
        ("off to bed", "👍"),
        ("I'm back", "Welcome back!"),
        ("just got home", "Welcome back!"),
        ("I'm tired, back at 6", "Sorry to hear that."),
    ],
)
def test_small_talk_gets_a_word_back_and_changes_nothing(text, said):
    reply = answer(phrases.request_of(text))  # as the provider reads it, without what comes before a request
    assert reply.calls == [] and reply.text.startswith(said) and "Nothing was" not in reply.text


@pytest.mark.parametrize(
    "text, asked",
    [
        # "I didn't understand that" before: the greeting, thanks or whereabouts hid the request
        ("hi, add buy milk to my list", "add buy milk to my list"),
        ("Hello Wilson, remind me tomorrow to call Tom", "remind me tomorrow to call Tom"),
        ("thanks, add pay rent by Friday", "add pay rent by Friday"),
        ("I’m home, add buy bread", "add buy bread"),
        ("I'm back! done with the flights", "done with the flights"),
        ("I'm sick today, remind me at 9 tomorrow to call the doctor", "remind me at 9 tomorrow to call the doctor"),
        ("ok, drop the passport task", "drop the passport task"),
        ("hi! thanks - show my tasks", "show my tasks"),
        # a request put as a question
        ("can you remind me to call mum on Sunday?", "remind me to call mum on Sunday"),
        ("Could you please move the passport task to next Tuesday?", "move the passport task to next Tuesday"),
        ("hi, will you add pay rent by Friday, please?", "add pay rent by Friday"),
        ("oh, remind me to call mum on Sunday", "remind me to call mum on Sunday"),
        ("sorry, add milk", "add milk"),
    ],
)
def test_a_request_after_a_greeting_or_where_they_are_is_read_as_the_request(text, asked):
    assert phrases.request_of(text) == asked
    reply = answer(asked)
    assert (reply.calls or reply.text) and not reply.text.startswith("I didn't understand"), reply


@pytest.mark.parametrize(
    "text, kept, said",
    [
        ("hi", "hi", "Hi!"),
        ("hi, I'm home.", "I'm home.", "👍"),
        ("Good morning, Wilson!", "Good morning, Wilson!", "Hi!"),
        ("thanks, that's all", "that's all", "I didn't understand"),
        ("ok remind me", "ok remind me", "I didn't understand"),  # no stop after the "ok": read as it is
        ("I'm sick, tell my boss", "tell my boss", "I didn't understand"),
        ("can you?", "can you?", "I didn't understand"),
        ("can you do it", "can you do it", "I didn't understand"),
        # a question that is no change keeps its question mark: it was a task marked done, or a reminder of "what"
        ("can you check the flights are booked?", "can you check the flights are booked?", "I didn't understand"),
        ("can you remind me what's on my plate?", "can you remind me what's on my plate?", "Coming up"),
        ("Oh, no!", "Oh, no!", "I didn't understand"),
    ],
)
def test_what_is_left_of_a_message_without_its_lead_in(text, kept, said):
    assert phrases.request_of(text) == kept
    assert answer(kept).text.startswith(said)


@pytest.mark.parametrize(
    "text",
    [
        "home insurance: renew by Friday",
        "Hi-fi repair by Friday",
        "back-to-school shopping by Friday",
        "home-made jam for Anna by Friday",
    ],
)
def test_a_word_that_only_looks_like_a_greeting_or_a_place_is_kept(text):
    assert phrases.request_of(text) == text


def test_an_exclamation_before_no_answers_no_proposal():
    # "oh," was stripped as a lead-in, and "Oh, no!" rejected the proposal waiting
    pending = [{"id": 4, "items": [{"position": 1, "description": "New task: Pay rent"}]}]
    for text in ("Oh, no!", "sorry, no", "oh, yes"):
        assert phrases.request_of(text) == text
        assert answer(phrases.request_of(text), pending).calls == []


def test_a_bare_yes_approves_nothing_when_the_proposal_waiting_is_not_the_last_one_asked():
    # a bare "no" still declines it: it changes nothing in the user's world
    pending = [
        {
            "id": 4,
            "not_the_last_asked": True,
            "items": [
                {"position": 1, "description": "New task: Pay rent"},
                {"position": 2, "description": "New task: Call Mum"},
            ],
        }
    ]
    for text in ("yes", "ok", "sounds good"):
        reply = answer(text, pending)
        assert reply.calls == [] and reply.text == (
            "Which proposal do you mean? The one still waiting is proposal 4: New task: Pay rent (and 1 more). "
            "Say “approve 4” or “reject 4”. Nothing was changed."
        )
    assert answer("yes to proposal 4", pending).calls == [("decide", {"proposal": 4, "action": "approve"})]
    assert answer("no", pending).calls == [("decide", {"proposal": 4, "action": "reject"})]  # changes nothing
    assert answer("skip the rent", pending).calls[0] == ("decide", {"proposal": 4, "action": "reject", "items": [1]})
    assert answer("yes", [dict(pending[0], not_the_last_asked=False)]).calls[0][1]["action"] == "approve"


def test_an_acknowledgement_with_a_proposal_waiting_says_how_to_answer_it():
    pending = [{"id": 9, "items": [{"position": 1, "description": "New task: Pay rent"}]}]
    for text in ("great", "perfect!", "cool"):
        reply = answer(text, pending)
        assert reply.calls == [] and reply.text.startswith("Proposal 9 is still waiting for your answer")
    assert answer("ok", pending).calls == [("decide", {"proposal": 9, "action": "approve"})]  # "ok" is a yes


def test_small_talk_around_a_request_does_not_swallow_it():
    assert "You're welcome" not in answer("thanks, add pay rent by Friday").text
    assert answer("add pay rent by Friday, thanks").calls[0][0] == "create_task"
    assert "Coming up this week:" in answer("hi, what's on my plate this week?").text
    assert "You're welcome" not in answer("thanks, what's due this week?").text


@pytest.mark.parametrize(
    "text, span",
    [
        ("what's on my calendar today?", ("2027-01-05", "2027-01-05")),
        ("what is on my calendar tomorrow?", ("2027-01-06", "2027-01-06")),
        ("any meetings this week?", ("2027-01-05", "2027-01-10")),
        ("what appointments do I have next week?", ("2027-01-11", "2027-01-17")),
        ("check my calendar", ("2027-01-05", "2027-01-18")),
        ("can you show me my calendar for tomorrow", ("2027-01-06", "2027-01-06")),
        ("how's my day looking", ("2027-01-05", "2027-01-05")),
        ("is my calendar free on Friday", ("2027-01-08", "2027-01-08")),  # the day named
        ("what do I have on Friday?", ("2027-01-08", "2027-01-08")),
        ("what's on next Monday?", ("2027-01-11", "2027-01-11")),
        ("anything on the 12th?", ("2027-01-12", "2027-01-12")),
        ("what's on my calendar until Friday?", ("2027-01-05", "2027-01-08")),  # up to it
        ("what's on my calendar after the 12th?", ("2027-01-05", "2027-01-18")),  # no one day: the next two weeks
        ("what's on my calendar on Jan 3?", ("2027-01-05", "2027-01-18")),  # gone by: never next year's
        # a day's agenda is its events as well as what is due ("what's on my plate?" and "what's due?" are the list)
        ("what's on today?", ("2027-01-05", "2027-01-05")),
        ("what do I have tomorrow?", ("2027-01-06", "2027-01-06")),
        ("anything on this weekend?", ("2027-01-09", "2027-01-10")),
        ("what's on this evening?", ("2027-01-05", "2027-01-05")),  # a part of the day is today's
        ("anything on tomorrow morning?", ("2027-01-06", "2027-01-06")),
    ],
)
def test_a_calendar_question_reads_the_calendar_for_the_span_asked_about(text, span):
    chat = phrases.Chat(
        text=text,
        now=NOW,
        tz=BERLIN,
        playbook=PLAYBOOK,
        tasks=TASKS,
        topics=TOPICS,
        offered=TOOLS + ("calendar_lookup",),
    )
    assert intents.answer(chat).calls == [("calendar_lookup", {"start": span[0], "end": span[1]})]
    assert answer(text).calls == []  # not offered: the tasks and topics the run knows of instead


@pytest.mark.parametrize(
    "text", ["what's on my plate this week?", "what's due today?", "what's on my to do list today?"]
)
def test_a_question_about_the_list_stays_with_the_list(text):
    chat = phrases.Chat(
        text=text,
        now=NOW,
        tz=BERLIN,
        playbook=PLAYBOOK,
        tasks=TASKS,
        topics=TOPICS,
        offered=TOOLS + ("calendar_lookup",),
    )
    reply = intents.answer(chat)
    assert reply.calls == [] and reply.text


@pytest.mark.parametrize(
    "text, name",
    [
        ("I need to sync my calendar by Friday", "create_task"),
        ("I need to clean up my calendar", "create_task"),
        ("I have a dentist appointment next Tuesday at 10", "create_topic"),
        ("put the dentist in my calendar on Friday", "create_topic"),
    ],
)
def test_a_request_that_names_the_calendar_is_a_request_not_a_look_at_it(text, name):
    chat = phrases.Chat(
        text=text,
        now=NOW,
        tz=BERLIN,
        playbook=PLAYBOOK,
        tasks=TASKS,
        topics=TOPICS,
        offered=TOOLS + ("calendar_lookup",),
    )
    assert intents.answer(chat).calls[0][0] == name


def test_the_calendar_answer_lists_the_events_then_what_is_due():
    chat = phrases.Chat(
        text="what's on my calendar this week?", now=NOW, tz=BERLIN, playbook=PLAYBOOK, tasks=TASKS, topics=[]
    )
    events = [
        {
            "title": "Ski trip",
            "start": "2027-01-02T23:00:00+00:00",
            "end": "2027-01-07T23:00:00+00:00",
            "all_day": True,
            "location": "Alps",
        },
        {"title": "Dentist", "start": "2027-01-07T14:00:00+00:00", "all_day": False},
    ]
    text = looks.calendar_answer(chat, date(2027, 1, 5), date(2027, 1, 10), events)
    assert text == (
        "In your calendar this week:\n• Ski trip — since Sun 3 Jan, Alps\n• Dentist — Thu 7 Jan 15:00\n\n"
        "Nothing due this week."
    )
    assert looks.calendar_answer(chat, date(2027, 1, 5), date(2027, 1, 10), []).startswith(
        "No events in your calendar this week."
    )
    trip = dict(TOPICS[0], starts="2027-01-09")
    chat.topics = [trip]  # a plan of the user's that is in no calendar: theirs, beside the empty calendar
    assert looks.calendar_answer(chat, date(2027, 1, 5), date(2027, 1, 10), []) == (
        "No events in your calendar this week.\n\nOn your list this week:\n• Trip to Japan starts Sat 9 Jan"
    )
    chat.pending = [{"id": 4, "items": [{"description": "New task: Pack — due Fri 8 Jan 2027"}]}]
    assert looks.calendar_answer(chat, date(2027, 1, 5), date(2027, 1, 10), []).endswith(
        "\n\nWaiting for your answer:\n• Proposal 4: New task: Pack — due Fri 8 Jan 2027"
    )  # on the plate too


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", categories=("L", "N", "P", "Zs")), max_size=60))
def test_every_message_gets_a_change_or_words_and_never_noted(text):
    reply = answer(text)
    assert reply.calls or reply.text.strip()
    assert "Noted" not in reply.text
    for name, _ in reply.calls:
        assert name in TOOLS


def test_a_repeating_reminder_said_with_its_schedule_first():
    assert answer("remind me every day at 7am to take my vitamins").calls == [
        ("create_reminder", {"text": "take my vitamins", "cron": "0 7 * * *"})
    ]
    assert answer("remind me every Sunday: call Grandma").calls == [
        ("create_reminder", {"text": "call Grandma", "cron": "0 9 * * 0"})
    ]
    assert [name for name, _ in answer("remind me tomorrow to call Grandma").calls] == ["remind"]
    assert date(2027, 1, 5).weekday() == 1  # the tests above read "Monday" and "Friday" from a Tuesday


@pytest.mark.parametrize(
    "text, cron, what",
    [
        ("remind me to call mum every Sunday at 6pm", "0 18 * * 0", "call mum"),  # the schedule last, as people say it
        ("remind me to pay rent on the first Monday of the month", "0 9 1-7 * 1", "pay rent"),
        ("remind me every first Monday of the month to pay rent", "0 9 1-7 * 1", "pay rent"),
        ("remind me on weekdays at 7:30 to stretch", "30 7 * * 1-5", "stretch"),
        ("remind me every evening at 6 to walk the dog", "0 18 * * *", "walk the dog"),
        ("remind me about the bins every Tuesday night", "0 21 * * 2", "the bins"),
        ("remind me every Friday afternoon at 3 to submit my hours", "0 15 * * 5", "submit my hours"),
        ("remind me every day at 3 to take my pills", "0 15 * * *", "take my pills"),  # was 03:00
        ("remind me every morning at 6 to go running", "0 6 * * *", "go running"),
        ("remind me every day at 6:30 to stretch", "30 6 * * *", "stretch"),  # minutes written: as written
        # a spoken time is a 12-hour clock's, read as a bare hour: it was “at half past 6 to take my pills”, at 09:00
        ("remind me every day at half past 6 to take my pills", "30 18 * * *", "take my pills"),
        ("remind me to take my pills every day at half past 6", "30 18 * * *", "take my pills"),
        ("remind me every morning at quarter past 7 to stretch", "15 7 * * *", "stretch"),
        ("remind me every Friday at quarter to 5 to submit my hours", "45 16 * * 5", "submit my hours"),
        ("remind me every day at quarter to 7 to leave for work", "45 6 * * *", "leave for work"),  # as 7 is: morning
        # a spoken time that names a thing is part of what to say, not the reminder's time
        (
            "remind me every weekday at 7 to catch the quarter past 7 train",
            "0 7 * * 1-5",
            "catch the quarter past 7 train",
        ),
        ("remind me every Monday to book the half past 6 class", "0 9 * * 1", "book the half past 6 class"),
        ("remind me every day at 5 to wake up the kids", "0 5 * * *", "wake up the kids"),
        ("remind me to pay the cleaner on the 15th of every month", "0 9 15 * *", "pay the cleaner"),
        ("remind me every 15th of the month to pay the cleaner", "0 9 15 * *", "pay the cleaner"),
        ("remind me to pay the cleaner every 15th", "0 9 15 * *", "pay the cleaner"),
        ("remind me on the first of every month to pay rent", "0 9 1 * *", "pay rent"),  # the day in words
        ("remind me to pay rent on the first day of every month at 8", "0 8 1 * *", "pay rent"),
        ("remind me on the fifteenth of each month to water the plants", "0 9 15 * *", "water the plants"),
        ("remind me every month to restock the first aid kit on the 3rd", "0 9 3 * *", "restock the first aid kit"),
        ("remind me to take my vitamins daily", "0 9 * * *", "take my vitamins"),
        ("remind me on Sundays to call Grandma", "0 9 * * 0", "call Grandma"),
        ("remind me every night at 12 to lock up", "0 0 * * *", "lock up"),
        ("remind me every day at noon to eat", "0 12 * * *", "eat"),
        ("remind me every day 7am to stretch", "0 7 * * *", "stretch"),
        ("remind me every Friday to book the 7pm yoga class", "0 9 * * 5", "book the 7pm yoga class"),
        ("remind me every Monday to send my monthly report", "0 9 * * 1", "send my monthly report"),
    ],
)
def test_a_repeating_reminder_is_read_wherever_the_schedule_stands(text, cron, what):
    assert answer(text).calls == [("create_reminder", {"text": what, "cron": cron})]


@pytest.mark.parametrize(
    "text",
    [
        "remind me to water the plants every other week",
        "remind me every 2 hours to drink",
        "remind me to renew the car tax yearly",
        "remind me twice a day to stretch",
        "remind me twice daily to stretch",
        "remind me on Mondays and Wednesdays at 7 to swim",
        "remind me each Monday through Friday to stretch",
        "remind me every weekday except Friday to stretch",
        "remind me every day until Friday to take the pills",
        "remind me every Monday in March to call the bank",
        "remind me every last Friday to pay the cleaner",
    ],
)
def test_a_repeating_reminder_the_rules_cannot_set_is_asked_about_and_never_set_once(text):
    reply = answer(text)
    assert reply.calls == [] and "Nothing was set" in reply.text and "every Sunday" in reply.text


@pytest.mark.parametrize(
    "text, question",
    [
        ("remind me to pay the cleaner on the 31st of every month", "Not every month has a 29th, 30th or 31st"),
        ("remind me every Monday morning", "What should I remind you of every Monday morning?"),
        ("remind me every month to pay rent", "On which day of the month?"),  # never every day
        ("remind me every month to check the first aid kit", "On which day of the month?"),
        ("remind me every month on the first Monday to pay rent", "On which day of the month?"),
        ("remind me to pay rent monthly on the thirtieth", "I can repeat a reminder"),
    ],
)
def test_a_repeating_reminder_that_cannot_be_set_says_what_is_missing(text, question):
    reply = answer(text)
    assert reply.calls == [] and reply.text.startswith(question)


@pytest.mark.parametrize(
    "text, call",
    [
        ("remind me to take my daily vitamins tomorrow at 8", ("remind", "take my daily vitamins")),
        ("remind me to check every window tomorrow at 8", ("remind", "check every window")),
        ("remind me on Sunday at 6pm to call mum", ("remind", "call mum")),
        # a day of its own makes it a one-off: the schedule is part of what to say
        (
            "remind me on Friday to tell the cleaner to come every Tuesday",
            ("remind", "tell the cleaner to come every Tuesday"),
        ),
        (
            "remind me tomorrow to ask Anna if she walks the dog every evening",
            ("remind", "ask Anna if she walks the dog every evening"),
        ),
        ("remind me tonight to set an alarm for every weekday", ("remind", "set an alarm for every weekday")),
    ],
)
def test_words_like_every_or_daily_inside_a_one_off_reminder_keep_it_one_off(text, call):
    [(name, args)] = answer(text).calls
    assert (name, args["text"]) == call


@pytest.mark.parametrize(
    "text, now, call, reading",
    [
        (
            "remind me to call the plumber tomorrow at 9",
            datetime(2027, 1, 21, 18, 0, tzinfo=BERLIN),
            ("remind", {"text": "call the plumber", "at": "2027-01-22T09:00:00+01:00"}),
            "9 read as 09:00, the morning",
        ),
        (
            "remind me to water the plants on Saturday at 10",
            datetime(2027, 1, 26, 20, 0, tzinfo=BERLIN),
            ("remind", {"text": "water the plants", "at": "2027-01-30T10:00:00+01:00"}),
            "10 read as 10:00, the morning",
        ),
        (
            "remind me at 8 this evening to call dad",
            datetime(2027, 1, 26, 12, 0, tzinfo=BERLIN),
            ("remind", {"text": "call dad", "at": "2027-01-26T20:00:00+01:00"}),
            "8 read as 20:00, the evening",
        ),
    ],
)
def test_a_reminder_at_a_bare_hour_states_how_the_hour_was_read(text, now, call, reading):
    reply = intents.answer(phrases.Chat(text=text, now=now, tz=BERLIN, playbook=PLAYBOOK, offered=TOOLS))
    assert reply.calls == [call]
    assert reading in reply.rule  # the rule is the proposal's reason line: the user sees the reading


@pytest.mark.parametrize(
    "text, call",
    [
        (
            "remind me on Friday evening to call Tom",
            ("remind", {"text": "call Tom", "at": "2027-01-08T18:00:00+01:00"}),
        ),
        (
            "remind me this evening to water the plants",
            ("remind", {"text": "water the plants", "at": "2027-01-05T18:00:00+01:00"}),
        ),
        (
            "remind me on Friday at lunchtime to book the table",
            ("remind", {"text": "book the table", "at": "2027-01-08T12:00:00+01:00"}),
        ),
        # a month alone is its first morning ("in June" asked when)
        (
            "remind me in June to renew the car insurance",
            ("remind", {"text": "renew the car insurance", "at": "2027-06-01T09:00:00+02:00"}),
        ),
    ],
)
def test_a_reminder_for_a_part_of_the_day_or_a_month_is_set_for_it(text, call):
    # "Friday evening" was set for 09:00 on Friday, and "this evening" asked when
    reply = intents.answer(
        phrases.Chat(
            text=text, now=datetime(2027, 1, 5, 8, 0, tzinfo=BERLIN), tz=BERLIN, playbook=PLAYBOOK, offered=TOOLS
        )
    )
    assert reply.calls == [call]


PENDING_REMINDER = [{"id": 12, "items": [{"position": 1, "description": "Remind you once, Sat 30 Jan 10:00: water"}]}]


@pytest.mark.parametrize("text", ["no, forget it", "forget it", "No thanks.", "nope, forget it"])
def test_no_forget_it_rejects_the_last_proposal(text):
    assert answer(text, pending=PENDING_REMINDER).calls == [("decide", {"proposal": 12, "action": "reject"})]


def test_no_forget_it_with_nothing_waiting_changes_nothing_and_says_so():
    reply = answer("no, forget it")
    assert reply.calls == [] and "nothing was changed" in reply.text


def test_what_do_you_know_about_me_lists_what_the_memory_learned_not_its_episodes(make_app):
    from storage import engram

    app = make_app(start="2027-01-05T08:00:00+01:00", llm="offline")
    app.say("hi")
    assert app.wait_idle()
    app.say("what do you know about me?")
    assert app.wait_idle()
    assert app.user_deliveries()[-1]["text"].startswith("Nothing yet: I learn from what you tell me")
    engram.store("belief", "The user prefers aisle seats on flights", ["import"], app.clock.now())
    app.say("What do you remember about me?")
    assert app.wait_idle()
    said = app.user_deliveries()[-1]["text"]
    assert "• You prefer aisle seats on flights" in said and said.endswith(phrases.ALL_MEMORIES)


def test_what_do_you_know_about_me_leaves_out_episodes_and_calibration_lines():
    memories = [
        {"id": 1, "kind": "episode", "text": "User said: remember me to Rome"},
        {"id": 2, "kind": "principle", "text": "Never book anything before 9 am"},
        {"id": None, "kind": "calibration", "text": "Flights: 2 of 3 proposals approved"},
    ]
    chat = phrases.Chat(
        text="what do you know about me?", now=NOW, tz=BERLIN, playbook=PLAYBOOK, offered=TOOLS, memories=memories
    )
    assert intents.answer(chat).text == (
        "Some of what I've learned about you:\n• Never book anything before 9 am\n" + phrases.ALL_MEMORIES
    )


@pytest.mark.parametrize(
    "text, task_id",
    [
        ("I renewed my passport", 1),
        ("I've booked the flights!", 2),
        ("just booked the flights", 2),
        ("I got an email from the airline about the flights on Friday", None),  # news about it, not it done
        ("I booked a dentist appointment for the 20th", None),  # names no task: a plan, not a done
        ("I called mom", None),
        # a need, a miss, a question or another verb is not a done
        ("I need to renew my passport", None),
        ("I've got to book the flights", None),
        ("did I book the flights?", None),
        ("I missed my flights", None),
        ("I cancelled the flights", None),
        ("I checked the flights prices", None),
        ("I made an appointment to renew my passport", None),
        # the task first and its verb last, as in a quick chat
        ("passport renewed", 1),
        ("flights booked!", 2),
        ("the flights are booked", 2),
        ("flights all booked now", 2),
        ("the passport needs to be renewed", None),
        ("flights not booked yet", None),
        ("flights booked?", None),
        ("passport checked", None),  # "check" does not finish "Renew passport"
        ("flights almost booked", None),
        ("flights nearly booked", None),
        ("passport being renewed", None),
        ("passport getting renewed", None),
        ("passport isn't renewed", None),
        ("flights aren't booked", None),
        ("flights weren't booked", None),
        ("flights hopefully booked", None),
        # still to do, only will be, or asked for
        ("the flights to be booked", None),
        ("the flights have to be booked", None),
        ("flights: to be booked", None),
        ("will have the flights booked", None),
        ("get the flights booked", None),
        ("hope the flights are booked", None),
        ("hotel to be booked, flights booked", 2),
    ],
)
def test_a_task_done_said_in_the_past_tense_is_proposed_done_only_when_the_words_name_it(text, task_id):
    reply = answer(text)
    done = [args["task_id"] for name, args in reply.calls if name == "complete_task"]
    assert done == ([task_id] if task_id else [])


def test_what_is_overdue_lists_the_open_tasks_whose_day_has_passed():
    late = [
        {"id": 5, "title": "Call the bank", "due": "2027-01-04", "status": "open"},
        {"id": 6, "title": "Old thing", "due": "2027-01-01", "status": "done"},
    ]
    for text in ("what's overdue?", "anything overdue?", "am I behind on anything?"):
        reply = answer(text, tasks=TASKS + late)
        assert reply.calls == [] and reply.text == "Overdue:\n• Call the bank — was due Mon 4 Jan"
    assert answer("what's overdue?").text == "Nothing is overdue."
    call = [{"id": 7, "title": "Call the bank", "due": "2027-01-05T09:00:00+01:00", "status": "open"}]
    assert answer("anything overdue?", tasks=call).text == "Overdue:\n• Call the bank — was due today at 09:00"
    # said, not asked: a request that mentions it
    request = answer("I need to pay the overdue invoice by Friday")
    assert [name for name, _ in request.calls][:1] in (["create_topic"], ["create_task"])


DENTIST_PLAN = [
    {
        "id": 1,
        "items": [
            {"position": 1, "description": "New topic: Dentist appointment (Wed 20 Jan 2027)"},
            {
                "position": 2,
                "description": "New task: Prepare documents and questions — due Sun 17 Jan 2027 "
                "(in Dentist appointment)",
            },
            {
                "position": 3,
                "description": "New task: Confirm the appointment and plan the way there — due Tue 19 Jan 2027 "
                "(in Dentist appointment)",
            },
        ],
    }
]


@pytest.mark.parametrize(
    "text, calls",
    [
        # a word of the topic's name in every task ("(in Dentist appointment)") does not make each one the topic
        ("approve all but the appointment", [("reject", [3]), ("approve", [1, 2])]),
        ("skip the appointment one", [("reject", [3]), ("approve", [1, 2])]),
        ("cancel the appointment confirmation", [("reject", [3])]),
        # the topic named: its tasks go with it
        ("drop the dentist appointment", [("reject", [1, 2, 3])]),
    ],
)
def test_an_item_is_named_by_its_own_words_and_a_topic_named_takes_its_tasks_with_it(text, calls):
    reply = answer(text, DENTIST_PLAN)
    assert [(args["action"], args["items"]) for _, args in reply.calls] == calls


def test_leaving_out_a_topic_leaves_the_proposals_other_items_as_they_are():
    mixed = [
        {
            "id": 2,
            "items": [
                {"position": 1, "description": "New topic: Gym (Mon 11 Jan 2027)"},
                {"position": 2, "description": "New task: Buy shoes — due Fri 8 Jan 2027 (in Gym)"},
                {"position": 3, "description": "New task: Pay rent — due Fri 8 Jan 2027"},
            ],
        }
    ]
    assert [(a["action"], a["items"]) for _, a in answer("skip the gym", mixed).calls] == [
        ("reject", [1, 2]),
        ("approve", [3]),
    ]
    assert [(a["action"], a["items"]) for _, a in answer("cancel the gym", mixed).calls] == [("reject", [1, 2])]


def test_a_plan_still_proposed_is_dropped_when_the_words_name_it_better_than_an_open_task():
    tasks = [{"id": 9, "title": "Find a new dentist", "status": "open"}]
    plan = answer("cancel the dentist appointment", DENTIST_PLAN, tasks=tasks)
    assert [(a["action"], a["items"]) for _, a in plan.calls] == [("reject", [1, 2, 3])]
    assert answer("cancel the dentist", DENTIST_PLAN, tasks=tasks).calls == [("cancel_task", {"task_id": 9})]
    by_number = answer("cancel item 2", DENTIST_PLAN, tasks=tasks)  # a number names an item, no words needed
    assert [(a["action"], a["items"]) for _, a in by_number.calls] == [("reject", [2])]


@pytest.mark.parametrize(
    "text",
    [
        "cancel the dentist appointment",
        "drop the gym task",
        "add this to my reminders",
        "remind me every Monday at 9 to check my reminders",
    ],
)
def test_words_about_other_things_do_not_look_up_the_reminders(text):
    chat = phrases.Chat(
        text=text,
        now=NOW,
        tz=BERLIN,
        playbook=PLAYBOOK,
        tasks=list(TASKS),
        offered=TOOLS + ("list_reminders", "cancel_reminder"),
    )
    assert ("list_reminders", {}) not in intents.answer(chat).calls
    for question in (
        "what are my reminders?",
        "what did I ask you to remind me about?",
        "what are you going to remind me of?",
    ):
        asked = phrases.Chat(text=question, now=NOW, tz=BERLIN, playbook=PLAYBOOK, offered=chat.offered)
        assert intents.answer(asked).calls == [("list_reminders", {})], question


REMINDERS = [
    {"id": 1, "text": "call grandma", "when": "at 18:00, only on Friday"},
    {"id": 2, "text": "call mum", "when": "at 10:00, only on Sunday"},
    {"id": 3, "text": "water the plants", "when": "at 09:00, only on Monday"},
]


@pytest.mark.parametrize(
    "text, stopped, said",
    [
        ("stop reminding me to water the plants", 3, ""),
        ("cancel the plants reminder", 3, ""),
        ("stop reminding me to pay the rent", None, "I couldn't find a reminder about “pay the rent”"),
        ("stop reminding me to call", None, "Which one should I stop?"),  # two say "call": asked, not guessed
        ("cancel the reminder", None, "Which reminder should I stop?"),
    ],
)
def test_a_reminder_is_stopped_only_when_the_words_name_it_and_no_other(text, stopped, said):
    chat = phrases.Chat(text=text, now=NOW, tz=BERLIN, playbook=PLAYBOOK, offered=("list_reminders", "cancel_reminder"))
    reply = looks.reminders_answer(chat, REMINDERS)
    assert reply.calls == ([("cancel_reminder", {"reminder_id": stopped})] if stopped else [])
    assert reply.text.startswith(said)
    assert looks.reminders_answer(chat, {"error": "the database is down"}).text.startswith(
        "I couldn't read your reminders"
    )


def test_what_is_on_my_plate_names_the_plans_still_waiting_for_an_answer():
    pending = [
        {
            "id": 4,
            "items": [
                {"position": 1, "description": "New topic: Trip to Rome (Mon 1 Mar 2027)"},
                {"position": 2, "description": "New task: Book flights (in Trip to Rome)"},
            ],
        }
    ]
    reply = answer("what's on my plate this week?", pending, tasks=[], topics=[])
    assert reply.text == (
        "Nothing due this week.\n\nWaiting for your answer:\n"
        "• Proposal 4: New topic: Trip to Rome (Mon 1 Mar 2027) (and 1 more)"
    )
    assert "Waiting" not in answer("what's on my plate this week?", tasks=[], topics=[]).text


def test_a_job_interview_is_planned_as_one_not_as_a_doctors_appointment():
    reply = answer("I have a job interview on Friday at 14:00")
    topic = [args for name, args in reply.calls if name == "create_topic"]
    tasks = [args for name, args in reply.calls if name == "create_task"]
    assert [t["title"] for t in topic] == ["Job interview"]
    assert [t["title"] for t in tasks] == [
        "Research the company and the role",
        "Prepare your answers and questions",
        "Plan the way there and what to wear",
    ]
    assert not any("Insurance card" in t["notes"] for t in tasks)


def test_someone_else_doing_the_tasks_verb_is_not_the_task_done():
    tasks = [
        {"id": 3, "title": "Call mum", "status": "open"},
        {"id": 4, "title": "Pay Anna", "status": "open"},
        {"id": 5, "title": "Email Tom", "status": "open"},
        {"id": 6, "title": "Pay rent", "status": "open"},
    ]
    for text in ("mum called", "mum rang", "Anna paid", "Tom emailed"):
        assert not [c for c in answer(text, tasks=tasks).calls if c[0] == "complete_task"], text
    assert answer("rent paid", tasks=tasks).calls == [("complete_task", {"task_id": 6})]


@pytest.mark.parametrize(
    "text, args",
    [
        ("add buy a rail pass to the Japan trip", {"title": "Buy a rail pass", "topic": "Trip to Japan"}),
        (
            "add book the hotel for the Japan topic by Friday",
            {"title": "Book the hotel", "topic": "Trip to Japan", "due": "2027-01-08"},
        ),
        ("add call mum to my to-do list", {"title": "Call mum"}),  # the list is where tasks are anyway
        ("add drive to the airport", {"title": "Drive to the airport"}),  # no topic is named: the words stay
        ("add buy shoes for the wedding in Rome", {"title": "Buy shoes for the wedding in Rome"}),  # not every word
        # the topic is named as a place to send something: the words stay, the task joins it
        (
            "add send the x-rays to the dentist",
            {"title": "Send the x-rays to the dentist", "topic": "Dentist appointment"},
        ),
        ("add get cash for the visa", {"title": "Get cash for the visa"}),  # two topics have "visa": none is guessed
    ],
)
def test_a_task_added_to_a_topic_by_name_joins_it(text, args):
    topics = [
        {"id": 1, "title": "Trip to Japan", "status": "active"},
        {"id": 2, "title": "Anna's wedding", "status": "active"},
        {"id": 3, "title": "Dentist appointment", "status": "active"},
        {"id": 4, "title": "Schengen visa", "status": "active"},
        {"id": 5, "title": "US visa", "status": "active"},
    ]
    assert answer(text, topics=topics).calls == [("create_task", args)]


@pytest.mark.parametrize(
    "text",
    [
        "what's in the Japan topic?",
        "what's left for the Japan trip?",
        "show me the Japan trip",
        "list what's left in my Japan topic",
    ],
)
def test_a_look_at_a_topic_lists_its_open_tasks_by_date(text):
    topics = [{"id": 1, "title": "Trip to Japan", "status": "active"}]
    tasks = TASKS + [{"id": 9, "title": "Call the bank", "due": "2027-01-06", "status": "open"}]
    reply = answer(text, topics=topics, tasks=tasks)
    assert reply.calls == []
    assert reply.text == ("Open in Trip to Japan:\n• Renew passport — due Wed 20 Jan\n• Book flights — due Tue 9 Feb")


def test_a_look_at_a_topic_nobody_has_is_no_topic_look_and_two_that_share_the_words_are_asked_about():
    reply = answer("what's in the gym topic?", topics=[{"id": 1, "title": "Trip to Japan", "status": "active"}])
    assert reply.rule not in ("look at a topic", "look at which topic?")
    two = [
        {"id": 1, "title": "Trip to Japan", "status": "active"},
        {"id": 2, "title": "Japan visa", "status": "active"},
    ]
    reply = answer("what's in the Japan topic?", topics=two)
    assert (reply.text, reply.calls) == ("Which one? “Trip to Japan” or “Japan visa”.", [])


HOME = places.home_place(None, "Europe/Berlin")


def trip_answer(text, tasks=(), topics=()):
    return intents.answer(
        phrases.Chat(
            text=text,
            now=NOW,
            tz=BERLIN,
            playbook=PLAYBOOK,
            tasks=list(tasks),
            topics=list(topics),
            offered=TOOLS,
            home=HOME,
        )
    )


@pytest.mark.parametrize(
    "text, topic, start, ends",
    [
        ("I'm going to Japan on March 20 for two weeks", "Trip to Japan", "2027-03-20", {"ends": "2027-04-03"}),
        ("we're heading to Lisbon on the 3rd for 5 nights", "Trip to Lisbon", "2027-02-03", {"ends": "2027-02-08"}),
        ("we're heading to Lisbon on the 3rd for 3 days", "Trip to Lisbon", "2027-02-03", {"ends": "2027-02-05"}),
        ("I'll be in Tokyo from April 2", "Trip to Tokyo", "2027-04-02", {}),
        ("spending two weeks in Portugal from June 1", "Trip to Portugal", "2027-06-01", {}),  # how long is not when
        ("I'm off to Japan on 2027-03-20", "Trip to Japan", "2027-03-20", {}),
        ("i'm going to japan on march 20", "Trip to Japan", "2027-03-20", {}),
        ("I'm going to be in Rome on Friday", "Trip to Rome", "2027-01-08", {}),
        ("I'm going back to Japan on March 20", "Trip to Japan", "2027-03-20", {}),
        ("We're spending Christmas in Rome from Dec 20", "Trip to Rome", "2027-12-20", {}),
        ("visiting Portugal next month", "Trip to Portugal", "2027-02-01", {}),  # a country alone after "visit"
    ],
)
def test_going_to_a_place_abroad_without_a_trip_word_is_planned_as_a_trip(text, topic, start, ends):
    reply = trip_answer(text)
    assert reply.calls[0] == (
        "create_topic",
        {"title": topic, "starts": start, **ends, "notes": f"From your message: {text}"},
    )
    tasks = [args["title"] for name, args in reply.calls[1:]]
    assert "Check passport validity" in tasks and "Pack" in tasks
    assert "abroad" in reply.rule


@pytest.mark.parametrize(
    "text",
    [
        "Anna is going to Rome on Friday",  # her trip, not the user's
        "going to Berlin on Friday",  # home
        "send the form to Paris office by Friday",  # no going at all
        "We're visiting Anna on Sunday",  # a person (and a town in Russia)
        "I'm spending time with Anna on Friday",
        "Going to Paris Hilton's party on Friday",  # no place named whole
        "I'm going to China Garden on Friday",
        "Should I go to Paris on Friday?",  # questions
        "Can we go to Paris on Friday",
        "I'm going to Japan for two weeks",  # how long, but not when
        "spending two weeks in Portugal",
        "going to chad's on Friday",  # a possessive, in lower case too
        "i'm going to turkey for dinner on friday",  # a country's name that is also a word
        "i'm going to china town on friday",
        "I'm going to turkey on Friday",  # lower case in a message with capitals: a word, not a country
    ],
)
def test_someone_elses_going_a_question_or_no_place_or_day_is_no_trip(text):
    assert not any(name == "create_topic" for name, _ in trip_answer(text).calls)


@pytest.mark.parametrize(
    "text, first, rest",
    [
        (
            "I'm going to Japan on March 20, remind me to buy an adapter on March 1",
            "I'm going to Japan on March 20",
            "remind me to buy an adapter on March 1",
        ),
        (
            "I'm going to Japan on March 20. Add buy adapter by March 1",
            "I'm going to Japan on March 20",
            "Add buy adapter by March 1",
        ),
    ],
)
def test_a_trip_and_another_request_in_one_message_asks_for_them_one_at_a_time(text, first, rest):
    reply = trip_answer(text)
    assert reply.calls == [] and f"“{first}”, then “{rest}”" in reply.text and "Nothing was changed" in reply.text


@pytest.mark.parametrize(
    "text",
    [
        "I'm going to Rome on March 20, please put me up at a hotel",
        "I'm going to Rome on March 20 to see the Vatican and add a day in Florence",
    ],
)
def test_words_like_put_or_add_inside_the_trip_are_no_second_request(text):
    assert trip_answer(text).calls[0][1]["title"] == "Trip to Rome"


def test_a_trip_within_the_home_country_leaves_out_the_passport_and_the_visa():
    reply = trip_answer("I'm going to Hamburg on the 20th")
    assert reply.calls[0][1]["title"] == "Trip to Hamburg" and "far from home" in reply.rule
    tasks = [args["title"] for name, args in reply.calls[1:]]
    assert "Pack" in tasks and "Check passport validity" not in tasks
    assert "Check visa and entry requirements" not in tasks


@pytest.mark.parametrize("text", ["yes", "yes please", "go ahead", "sure"])
def test_yes_with_nothing_waiting_says_there_is_nothing_to_answer(text):
    reply = answer(text, [])
    assert reply.calls == [] and reply.text.startswith("There's no proposal of mine waiting")


def test_ok_with_nothing_waiting_is_an_acknowledgement():
    assert answer("ok", []).text == "👍"


JAPAN = [{"id": 7, "title": "Trip to Japan", "status": "active", "starts": "2027-03-20", "ends": "2027-04-03"}]


@pytest.mark.parametrize(
    "text", ["when is my trip?", "how many days until Japan?", "when do we leave for Japan?", "when is the Japan trip"]
)
def test_when_a_topic_starts_is_answered_with_its_day_and_how_far_off_it_is(text):
    reply = answer(text, topics=JAPAN)
    assert reply.calls == [] and reply.text == "Trip to Japan starts Sat 20 Mar, in 74 days, until Sat 3 Apr."


def test_when_a_topic_under_way_began_says_so():
    under_way = [dict(JAPAN[0], starts="2027-01-01", ends="2027-01-10")]
    assert (
        answer("when is my trip?", topics=under_way).text
        == "Trip to Japan began on Fri 1 Jan and runs until Sun 10 Jan."
    )


def test_what_is_left_for_a_topic_needs_no_article():
    assert answer("what's left for Japan?").text.startswith("Open in Trip to Japan:\n• Renew passport")


@pytest.mark.parametrize("text", ["cancel that", "never mind", "scrap it"])
def test_cancel_that_says_no_to_the_proposal_just_made(text):
    assert answer(text, pending=PENDING_REMINDER).calls == [("decide", {"proposal": 12, "action": "reject"})]


@pytest.mark.parametrize("text", ["don't cancel it", "no don't cancel"])
def test_dont_cancel_it_is_no_no(text):
    assert answer(text, pending=PENDING_REMINDER).calls == []


def test_when_a_topic_ends_is_its_last_day():
    assert answer("when does the trip end?", topics=JAPAN).text == "Trip to Japan ends Sat 3 Apr, in 88 days."


def test_a_question_about_a_tasks_due_day_is_no_question_about_the_topic():
    reply = answer("when's the trip insurance due?", topics=JAPAN)  # before: the trip's start, as if asked
    assert reply.text == "I don't see an open task about “trip insurance”. Nothing was changed."


def test_a_topic_without_the_date_asked_for_says_what_it_has():
    assert answer("when does the trip end?", topics=[dict(JAPAN[0], ends=None)]).text == (
        "Trip to Japan has no end date yet; it starts Sat 20 Mar."
    )
    assert answer("when is my trip?", topics=[dict(JAPAN[0], starts=None)]).text == (
        "Trip to Japan has no start date yet; it ends Sat 3 Apr."
    )


@pytest.mark.parametrize(
    "text, said",
    [
        (
            "user lets early reminders about document renewal pass",
            "You let early reminders about document renewal pass",
        ),
        ("user does not want packing lists proposed", "You do not want packing lists proposed"),
        ("The user prefers aisle seats on flights", "You prefer aisle seats on flights"),
        ("user is vegetarian", "You are vegetarian"),
        ("user watches films on Fridays", "You watch films on Fridays"),
        ("user always books flights late", "You always book flights late"),
        ("user doesn't like early mornings", "You don't like early mornings"),
        ("user tends to book late", "You tend to book late"),
        ("Never book anything before 9 am", "Never book anything before 9 am"),  # not about "the user": as it is
        ("user id 42 is the owner", "user id 42 is the owner"),  # no verb of the user's after "user"
    ],
)
def test_what_was_learned_about_the_user_is_said_to_them(text, said):
    assert looks.to_you(text) == said


def test_what_do_you_know_about_me_says_a_belief_and_its_interpretation_once():
    memories = [
        {"id": 1, "kind": "belief", "text": "user books flights late"},
        {"id": 2, "kind": "interpretation", "text": "user books flights late"},
    ]
    chat = phrases.Chat(
        text="what do you know about me?", now=NOW, tz=BERLIN, playbook=PLAYBOOK, offered=TOOLS, memories=memories
    )
    assert intents.answer(chat).text == (
        "Some of what I've learned about you:\n• You book flights late\n" + phrases.ALL_MEMORIES
    )


@pytest.mark.parametrize(
    "text, first, rest",
    [
        (
            "add pay rent by Friday and remind me to call mum on Sunday",
            "add pay rent by Friday",
            "remind me to call mum on Sunday",
        ),
        (
            "remind me to call mum on Sunday and add pay rent by Friday",
            "remind me to call mum on Sunday",
            "add pay rent by Friday",
        ),
        (
            "done with the flights, and remind me to pack on Friday",
            "done with the flights",
            "remind me to pack on Friday",
        ),
    ],
)
def test_two_requests_in_one_message_are_asked_for_one_at_a_time_not_merged(text, first, rest):
    reply = answer(text)  # before: a task called "Pay rent remind me to call mum Sunday"
    assert reply.calls == [] and f"“{first}”, then “{rest}”" in reply.text and "Nothing was changed" in reply.text


def test_and_inside_one_request_is_no_second_request():
    assert answer("remind me to call mum and dad on Sunday").calls == [
        ("remind", {"text": "call mum and dad", "at": "2027-01-10T09:00:00+01:00"})
    ]


@pytest.mark.parametrize(
    "text, tool",
    [
        ("remind me to check the tyres and add oil to my car on Saturday", "remind"),
        ("remind me to make soup, add salt on Sunday", "remind"),
        ("remind me to add salt and add pepper by Friday", "remind"),
        ("add pick up the kids and add petrol to my car by Friday", "create_task"),
        ("snooze the flights until Monday, remind me then", "snooze_task"),
        ("add 2 more days in Rome. thanks", "create_task"),
        ("remind me tomorrow at 9 a.m. add the receipts to the expense report", "remind"),  # "a.m." ends no sentence
    ],
)
def test_add_or_remind_me_inside_one_request_is_no_second_request(text, tool):
    assert [name for name, _ in answer(text).calls] == [tool]


@pytest.mark.parametrize(
    "text",
    [
        "remind me to call mum on Sunday and add pay rent by Friday",  # "add" with its own day, after the first's
        "done with the flights? remind me to pack on Friday",  # a question mark ends a request too
        "what's on my plate this week and remind me to pack on Friday",  # a look and a change: one at a time too
        # a new sentence that begins with "add", or ", also add": the add was lost behind the look before
        "what's on my plate? also add buy bread",
        "what's on my plate, also add buy bread",
        "add pay rent by Friday. Add buy milk too",
    ],
)
def test_a_second_request_after_a_day_a_question_or_a_look_is_asked_for_on_its_own(text):
    reply = answer(text)
    assert reply.calls == [] and reply.rule == "two requests in one message"


@pytest.mark.parametrize(
    "text, call",
    [
        ("add pay rent by Friday, thanks!", ("create_task", {"title": "Pay rent", "due": "2027-01-08"})),
        ("remind me to call mum on Sunday, ok?", ("remind", {"text": "call mum", "at": "2027-01-10T09:00:00+01:00"})),
    ],
)
def test_a_courtesy_after_a_request_is_no_part_of_it(text, call):
    assert answer(text).calls == [call]  # before: a task called "Pay rent  , thanks"


def test_thanks_inside_a_request_stays():
    assert "say thanks" in answer("remind me on Sunday to say thanks").calls[0][1]["text"]


def test_with_no_home_known_going_to_a_place_is_still_a_trip():
    reply = intents.answer(
        phrases.Chat(
            text="I'm going to Japan on March 20", now=NOW, tz=BERLIN, playbook=PLAYBOOK, offered=TOOLS, home=None
        )
    )  # a timezone of UTC gives no home
    assert reply.calls[0][1]["title"] == "Trip to Japan"
    assert "Check passport validity" in [args["title"] for _, args in reply.calls[1:]]  # not known to be at home


@pytest.mark.parametrize(
    "text",
    [
        "remind me to check in 2 hours before the flight on Friday",
        "remind me to log in 5 minutes before the webinar tomorrow",
    ],
)
def test_a_verbs_in_is_no_while_from_now(text):
    """'check in 2 hours before' is when to check in, not a reminder two hours from now."""
    reply = answer(text)
    assert all(not args["at"].startswith(NOW.date().isoformat()) for name, args in reply.calls if name == "remind")
    assert reply.calls or "When should I remind you?" in reply.text


def test_a_message_that_asks_nothing_never_reaches_the_date_parser(monkeypatch):
    """The parser costs milliseconds a message: a look reads it only once the words ask about the list or a day."""

    def no_parser(*args, **kwargs):
        raise AssertionError("the date parser was asked")

    monkeypatch.setattr(looks.dates, "search", no_parser)
    for text in ("ping 5", "burst 123", "hello", "thanks!", "ok"):
        answer(text)


def test_a_question_about_a_day_is_read_by_the_date_parser_once(monkeypatch):
    asked = []
    search = looks.dates.search
    monkeypatch.setattr(looks.dates, "search", lambda *args, **kw: asked.append(args[0]) or search(*args, **kw))
    chat = phrases.Chat(
        text="what do I have on Friday?",
        now=NOW,
        tz=BERLIN,
        playbook=PLAYBOOK,
        tasks=TASKS,
        topics=TOPICS,
        offered=TOOLS + ("calendar_lookup",),
    )
    assert intents.answer(chat).calls == [("calendar_lookup", {"start": "2027-01-08", "end": "2027-01-08"})]
    assert len(asked) == 1
