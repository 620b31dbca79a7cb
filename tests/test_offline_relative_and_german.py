"""Issue 44, offline chat: kinds of line the blind batches lacked, read by general mechanisms.

- A follow-up said relative to the proposal just made ("an hour earlier", "the day after", "same time next week",
  "make it the morning", "eine Stunde später") moves its time from where it was, not from now; through the whole
  Wilson, as a user in a chat sees it: the proposal comes again with the new time.
- A German to-do written as Germans write one, the thing first and the verb last ("Steuererklärung abgeben bis
  Freitag"), is a task titled so, due on its day; German weekdays and weeks are dates.
- "It" in a request is the thing told just before, and the thing's day is the task's.
- Questions about what is due, in other words ("anything for tomorrow?", "any deadlines next week?"), list it.
"""

from __future__ import annotations

import pytest

from tests.offline_support import read
from tests.table_support import Session, chat_outcome
from wilson.model.offline.phrases import HELP

START = "2027-01-05T10:00:00"  # a Tuesday, Europe/Berlin

FOLLOW_UPS = [
    ("remind me to call mom tomorrow at 10", "make it an hour earlier", "at", "2027-01-06T09:00:00+01:00"),
    ("remind me to water the plants on friday at 6pm", "actually the day after", "at", "2027-01-09T18:00:00+01:00"),
    ("remind me to buy bread on thursday at 5pm", "same time next week", "at", "2027-01-14T17:00:00+01:00"),
    ("remind me to call the bank on monday at 3pm", "make it the morning", "at", "2027-01-11T09:00:00+01:00"),
    ("remind me to take out the bins tonight at 8", "30 minutes later please", "at", "2027-01-05T20:30:00+01:00"),
    ("remind me to stretch tomorrow at 7pm", "hmm, half an hour earlier?", "at", "2027-01-06T18:30:00+01:00"),
    ("erinnere mich morgen um 9 an den Zahnarzt", "eine Stunde später bitte", "at", "2027-01-06T10:00:00+01:00"),
    ("add a task to book the vet by friday", "the day before would be better", "due", "2027-01-07"),
    ("add buy a gift for Lena by saturday", "a day earlier", "due", "2027-01-08"),
    ("add renew the gym card by monday", "no, the week after", "due", "2027-01-18"),
    ("remind me to call the dentist on friday at 10", "push it back an hour", "at", "2027-01-08T11:00:00+01:00"),
    ("remind me to call Anna on thursday at 9", "move it to the afternoon", "at", "2027-01-07T14:00:00+01:00"),
    ("remind me every Monday at 7 to put the recycling out", "same time but tuesdays", "cron", "0 7 * * 2"),
]


@pytest.mark.parametrize("proposed, follow_up, key, expected", FOLLOW_UPS)
def test_a_follow_up_moves_the_proposal_from_its_own_time(make_app, proposed, follow_up, key, expected):
    session = Session(make_app(start=START))
    first, items, _ = chat_outcome(session, proposed)
    assert first in ("remind", "create_task", "create_reminder") and items, (proposed, first)
    tool = items[0].tool
    got, items, reply = chat_outcome(session, follow_up)
    assert got == tool, (follow_up, got, reply)
    assert items[0].args.get(key) == expected, (follow_up, items[0].args)


def test_a_relative_change_with_nothing_proposed_changes_nothing(make_app):
    session = Session(make_app(start=START))
    got, items, reply = chat_outcome(session, "an hour earlier")
    assert items == [] and got != "remind", reply


@pytest.mark.parametrize(
    "text, title, due",
    [
        ("Steuererklärung abgeben bis Freitag", "Steuererklärung abgeben", "2027-01-08"),
        ("Bitte Miete überweisen bis zum 1. Februar", "Miete überweisen", "2027-02-01"),
        ("Auto zum TÜV bringen nächste Woche", "Auto zum TÜV bringen", "2027-01-12"),
        ("Geschenk für Lena kaufen bis Samstag", "Geschenk für Lena kaufen", "2027-01-09"),
        ("Mama anrufen morgen", "Mama anrufen", "2027-01-06"),
        ("Kita-Gutschein beantragen bis 30. Juni", "Kita-Gutschein beantragen", "2027-06-30"),
        ("Tisch reservieren für Samstag", "Tisch reservieren", "2027-01-09"),
        ("den Müll rausbringen übermorgen", "Müll rausbringen", "2027-01-07"),
        ("Pakete zurückschicken", "Pakete zurückschicken", None),
        ("Aufgabe: Rechnung bezahlen in zwei Wochen", "Rechnung bezahlen", "2027-01-19"),
    ],
)
def test_a_german_to_do_is_a_task_titled_as_written(text, title, due):
    reply = read(text)
    assert [name for name, _ in reply.calls] == ["create_task"], (text, reply.calls, reply.text)
    args = reply.calls[0][1]
    assert (args["title"], args.get("due")) == (title, due)


@pytest.mark.parametrize(
    "text, title, due",
    [
        (
            "My residence permit runs out on April 30. Could you put getting it extended on my list please?",
            "Get my residence permit extended",
            "2027-04-30",
        ),
        (
            "my residence permit runs out on March 15, put getting it extended on my list",
            "Get my residence permit extended",
            "2027-03-15",
        ),
        ("My passport expires on March 3, please add renewing it", "Renew my passport", "2027-03-03"),
        ("My passport expires on March 3 so I need to renew it", "Renew my passport", "2027-03-03"),
        ("my passport expires in March, I should renew it", "Renew my passport", "2027-02-28"),
    ],
)
def test_it_is_the_thing_told_just_before_with_its_day(text, title, due):
    reply = read(text)
    assert [name for name, _ in reply.calls] == ["create_task"], (text, reply.calls, reply.text)
    assert (reply.calls[0][1]["title"], reply.calls[0][1].get("due")) == (title, due)


def test_it_in_a_reminder_is_the_thing_told_before():
    reply = read("the boiler is broken so can you remind me to call someone about it tomorrow")
    assert reply.calls == [("remind", {"text": "call someone about the boiler", "at": "2027-01-06T09:00:00+01:00"})]


TASKS = [
    {"id": 1, "title": "Pay rent", "due": "2027-01-06", "status": "open"},
    {"id": 2, "title": "Book flights", "due": "2027-01-13", "status": "open"},
]


@pytest.mark.parametrize(
    "text, listed, left_out",
    [
        ("anything for tomorrow?", "Pay rent", "Book flights"),
        ("is there anything I need to do tomorrow?", "Pay rent", "Book flights"),
        ("any deadlines next week?", "Book flights", None),
        ("what was I supposed to do tomorrow", "Pay rent", "Book flights"),
        ("what's left this week?", "Pay rent", "Book flights"),
        ("was muss ich noch erledigen?", "Book flights", None),
    ],
)
def test_a_question_about_what_is_due_lists_it(text, listed, left_out):
    reply = read(text, tasks=TASKS)
    assert HELP not in reply.text and reply.calls == [], reply.text
    assert listed in reply.text and (left_out is None or left_out not in reply.text), reply.text


@pytest.mark.parametrize(
    "text, what, at",
    [
        (
            "could you sort out a reminder to chase up the landlord about the deposit next monday",
            "chase up the landlord about the deposit",
            "2027-01-11T09:00:00+01:00",
        ),
        (
            "please arrange a reminder to water the plants tomorrow at 8",
            "water the plants",
            "2027-01-06T08:00:00+01:00",
        ),
    ],
)
def test_a_reminder_sorted_out_or_arranged_is_a_reminder(text, what, at):
    assert read(text).calls == [("remind", {"text": what, "at": at})]


@pytest.mark.parametrize(
    "text, title, due",
    [
        ("can you chase up the plumber for me tomorrow", "Chase up the plumber", "2027-01-06"),
        ("could you call the plumber tomorrow", "Call the plumber", "2027-01-06"),
        ("can you pick up the parcel on friday", "Pick up the parcel", "2027-01-08"),
        ("look into cheaper phone contracts before february", "Look into cheaper phone contracts", "2027-01-31"),
        ("i shld really call grandma on sunday", "Call grandma", "2027-01-10"),
        ("find a new dentist by march", "Find a new dentist", "2027-02-28"),
        ("deal with the broken dishwasher this week", "Deal with the broken dishwasher", "2027-01-05"),
        (
            "after the Easter holidays I have to deal with the broken garden shed",
            "Deal with the broken garden shed",
            None,
        ),
        ("I need to chase up the Huber invoice on friday", "Chase up the Huber invoice", "2027-01-08"),
        (
            "gotta look into the Kita-Gutschein renewal before February",
            "Look into the Kita-Gutschein renewal",
            "2027-01-31",
        ),
    ],
)
def test_an_act_asked_of_wilson_or_said_loosely_is_the_users_task(text, title, due):
    reply = read(text)
    expected = {"title": title, **({"due": due} if due else {})}
    assert reply.calls == [("create_task", expected)], (text, reply.calls, reply.text)


@pytest.mark.parametrize(
    "text",
    [
        "can you book me a table for friday",
        "look at this!",
        "could you check the flights are booked?",
        "can you order a pizza for tonight?",
        "could you call the plumber tomorrow?",
        "can you find a good restaurant for friday",
    ],
)
def test_an_act_wilson_is_asked_to_do_for_the_user_is_no_task(text):
    assert read(text).calls == []


@pytest.mark.parametrize("text", ["whats happening tomorrow", "how many things do I have open"])
def test_a_question_about_the_list_without_its_marks_lists_it(text):
    reply = read(text, tasks=TASKS)
    assert "Pay rent" in reply.text and reply.calls == []


# --- answers right after a proposal, in more words ---------------------------------------------------------------

JUST_ASKED = {
    "id": 4,
    "just_asked": True,
    "items": [{"position": 1, "description": "Remind you once, Mon 11 Jan 2027 10:00: call Bob"}],
}


@pytest.mark.parametrize(
    "text, action",
    [
        ("great, thanks", "approve"),
        ("sounds lovely, go ahead", "approve"),
        ("super, mach das", "approve"),
        ("yup, close it", "approve"),
        ("perfect, thanks!", "approve"),
        ("thank you, but the clinic sends me all the instructions", "reject"),
        ("thanks but no thanks", "reject"),
    ],
)
def test_pleased_or_polite_words_right_after_a_proposal_answer_it(text, action):
    assert read(text, [JUST_ASKED]).calls == [("decide", {"proposal": 4, "action": action})]


@pytest.mark.parametrize("text", ["thanks!", "thank you", "cheers mate"])
def test_thanks_alone_is_thanks_not_a_yes(text):
    reply = read(text, [JUST_ASKED])
    assert reply.calls == [] and "welcome" in reply.text


# --- tasks put off, dropped, done and topics closed in other words -----------------------------------------------

OPEN = [
    {"id": 1, "title": "Renew the car insurance", "status": "open"},
    {"id": 2, "title": "Get quotes from electricians", "status": "open"},
    {"id": 3, "title": "Book a dog sitter for Bruno", "status": "open"},
    {"id": 4, "title": "Chase up payment from Lindqvist Design", "status": "open"},
    {"id": 5, "title": "Call the pension office", "due": "2027-01-20", "status": "open"},
    {"id": 6, "title": "Renew Mila's passport", "due": "2027-03-15", "status": "open"},
    {"id": 7, "title": "Book the vet for Bruno's vaccination", "status": "open"},
    {"id": 8, "title": "Pay the income tax prepayment", "status": "open"},
    {"id": 9, "title": "Cancel the gym membership", "status": "open"},
    {"id": 11, "title": "Buy a gift for Leonie", "status": "open"},
]
OPEN_TOPICS = [
    {"id": 1, "title": "Trip to Porto", "status": "active", "starts": "2027-03-01"},
    {"id": 3, "title": "Statistics exam", "status": "active", "starts": "2027-02-10"},
    {"id": 5, "title": "Lotte's birthday party", "status": "active", "starts": "2027-02-01"},
]


@pytest.mark.parametrize(
    "text, call",
    [
        ("not now for Mila's passport, ask me again in a week", ("snooze_task", 6, "2027-01-12T09:00:00+01:00")),
        (
            "not this week for the vet thing, bug me again after the weekend",
            ("snooze_task", 7, "2027-01-11T09:00:00+01:00"),
        ),
        ("bring the tax prepayment up again next month", ("snooze_task", 8, "2027-02-01T09:00:00+01:00")),
        ("stop nagging me about the gym cancellation until the 20th", ("snooze_task", 9, "2027-01-20T09:00:00+01:00")),
        ("I sold the car last week so forget about renewing the insurance", ("cancel_task", 1, None)),
        ("he'll do the wiring, so take the quotes off my list pls", ("cancel_task", 2, None)),
        ("we're taking Bruno with us now, so we don't need a dog sitter after all", ("cancel_task", 3, None)),
        ("finally got through to the pension office 🙌", ("complete_task", 5, None)),
        ("Lindqvist Design paid up yesterday so no more chasing needed", ("complete_task", 4, None)),
        ("Geschenk für Leonie gekauft", ("complete_task", 11, None)),
        ("nimm das Geschenk für Leonie raus, wir schenken zusammen mit den Nachbarn", ("cancel_task", 11, None)),
        ("lösch die Aufgabe mit dem Gym", ("cancel_task", 9, None)),
        ("porto's cancelled, the airline went bust", ("close_topic", 1, None)),
        ("I dropped the statistics course, so no exam for me 🎉", ("close_topic", 3, None)),
        ("Lotte has chickenpox, the party's off", ("close_topic", 5, None)),
    ],
)
def test_a_task_or_topic_changed_in_other_words(text, call):
    reply = read(text, (), OPEN, OPEN_TOPICS)
    tool, which, until = call
    assert [name for name, _ in reply.calls] == [tool], (text, reply.calls, reply.text)
    args = reply.calls[0][1]
    assert args.get("task_id", args.get("topic_id")) == which and args.get("until") == until


def test_news_of_something_else_called_off_closes_nothing():
    assert read("my flight to Rome got cancelled", (), OPEN, OPEN_TOPICS).calls == []


# --- a reminder counted from a task's due day or a topic's start ------------------------------------------------

KNOWN_TASKS = [
    {"id": 1, "title": "Renew passport", "due": "2027-01-20", "status": "open"},
    {"id": 2, "title": "Book flights", "due": "2027-02-09", "status": "open"},
    {"id": 3, "title": "Return library books", "due": "2027-01-12", "status": "open"},
]
KNOWN_TOPICS = [{"id": 9, "title": "Move to Leipzig", "status": "active", "starts": "2027-03-31"}]


@pytest.mark.parametrize(
    "text, what, at",
    [
        ("remind me the day before the library books are due", "Return library books", "2027-01-11T09:00:00+01:00"),
        ("remind me two days before the passport is due", "Renew passport", "2027-01-18T09:00:00+01:00"),
        ("remind me about the flights the day before", "Book flights", "2027-02-08T09:00:00+01:00"),
        ("remind me the evening before the move to Leipzig", "Move to Leipzig", "2027-03-30T18:00:00+02:00"),
        ("remind me a week before the Leipzig move", "Move to Leipzig", "2027-03-24T09:00:00+01:00"),
    ],
)
def test_a_reminder_before_a_known_day_is_counted_from_that_day(text, what, at):
    reply = read(text, (), KNOWN_TASKS, KNOWN_TOPICS)
    assert reply.calls == [("remind", {"text": what, "at": at})], (text, reply.calls, reply.text)


def test_the_day_after_tomorrow_is_counted_from_today():
    reply = read("remind me the day after tomorrow to bring the cake tin back", (), KNOWN_TASKS, KNOWN_TOPICS)
    assert reply.calls == [("remind", {"text": "bring the cake tin back", "at": "2027-01-07T09:00:00+01:00"})]


def test_a_reminder_before_nothing_known_asks_when():
    reply = read("remind me the day before the dentist", (), KNOWN_TASKS, KNOWN_TOPICS)
    assert reply.calls == [] and "When should I remind you" in reply.text


def test_a_german_trip_is_a_trip():
    reply = read("ich fliege am 12. Februar für eine Woche nach Tallinn")
    topics = [args for name, args in reply.calls if name == "create_topic"]
    assert topics and topics[0]["title"] == "Trip to Tallinn" and topics[0]["starts"] == "2027-02-12"


def test_a_run_on_that_ends_put_that_down_somewhere_is_the_task_it_told():
    reply = read(
        "ok so my landlord rang and said the heating guy is coming round at some point next week and um I also need "
        "to send him the meter readings by the 20th so put that down somewhere and yeah thats it"
    )
    assert reply.calls == [("create_task", {"title": "Send him the meter readings", "due": "2027-01-20"})]


def test_a_trip_written_as_a_slashed_stretch_of_days_starts_on_its_first():
    reply = read("gotta go to Warsaw for a client workshop 3/2 to 5/2, can you set things up")
    topics = [args for name, args in reply.calls if name == "create_topic"]
    assert topics and topics[0]["title"] == "Trip to Warsaw" and topics[0]["starts"] == "2027-02-03"
