"""What a new user says with no model while a proposal waits, and the time asked: the offline rules answer from
the run's clock, take "cancel the pills reminder" to mean the reminder still proposed, and read "actually make it
Sunday" as a change to the one proposal waiting."""

from __future__ import annotations

import json
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from wilson.model.offline import answers, intents, phrases
from wilson.model.offline.provider import OfflineProvider
from wilson.model.offline.recognition import load_playbook

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2027, 1, 5, 8, 0, tzinfo=BERLIN)  # a Tuesday
PLAYBOOK = load_playbook()
TOOLS = ("create_task", "cancel_task", "remind", "create_reminder", "list_reminders", "cancel_reminder", "decide")
PRESENT = {"id": 1, "items": [{"position": 1, "description": "New task: Buy a present for Anna — due Sat 9 Jan 2027"}]}
PILLS = {"id": 2, "items": [{"position": 1, "description": "New reminder: take my pills (at 08:00)"}]}
DOG = {"id": 3, "items": [{"position": 1, "description": "New reminder: walk the dog (at 09:00)"}]}
CALL = {"id": 4, "items": [{"position": 1, "description": "Remind you once, Wed 6 Jan 2027 08:00: call mum"}]}


def answer(text, pending=(), tasks=(), offered=TOOLS, now=NOW, tz=BERLIN):
    return intents.answer(
        phrases.Chat(
            text=text, now=now, tz=tz, playbook=PLAYBOOK, tasks=list(tasks), pending=list(pending), offered=offered
        )
    )


def said_in_the_end(text, pending=(), reminders=(), tasks=()):
    """What the provider ends with for one message, as the cortex runs it: with the reminders' look-up answered
    from `reminders` when the first round asks for it."""
    provider = OfflineProvider()
    context = {
        "kind": "cortex",
        "now": NOW.isoformat(timespec="minutes"),
        "timezone": "Europe/Berlin",
        "stimulus": {"id": 1, "kind": "message", "origin": "user", "source": "repl", "text": text},
        "tasks": list(tasks),
        "topics": [],
        "pending_proposals": list(pending),
    }
    messages = [{"role": "user", "content": text}]
    said, calls, _ = provider.respond(messages, list(TOOLS), context=context)
    if [name for name, _ in calls] == ["list_reminders"]:
        messages += [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "list_reminders", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": json.dumps(list(reminders))},
        ]
        said, calls, _ = provider.respond(messages, list(TOOLS), context=context)
    return said, calls


# -- the time asked --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "what time is it",
        "What time is it?",
        "what's the time?",
        "What’s the time",
        "what day is it today?",
        "what's the date?",
        "what is today's date?",
        "hey Wilson, what time is it now?",
        "do you know what day it is?",
    ],
)
def test_the_time_asked_is_answered_from_the_runs_clock(text):
    reply = answer(text)
    assert (reply.text, reply.calls) == ("It's 08:00 on Tuesday 5 January.", [])


def test_the_time_is_the_users_local_time_from_the_context_not_the_machines():
    late = datetime(2027, 3, 1, 23, 30, tzinfo=ZoneInfo("UTC"))  # already Tuesday in Tokyo
    assert answer("what time is it?", now=late, tz=ZoneInfo("Asia/Tokyo")).text == "It's 08:30 on Tuesday 2 March."
    said, calls = said_in_the_end("what's the date?")
    assert (said, calls) == ("It's 08:00 on Tuesday 5 January.", [])


@pytest.mark.parametrize(
    "text",
    [
        "what time is my flight?",
        "what's the date of the exam?",
        "what day is the party?",
        "what time is it in Tokyo?",
        "what time is the dentist tomorrow?",
    ],
)
def test_a_question_about_something_else_is_not_answered_with_the_time(text):
    assert not answer(text).text.startswith("It's ")


# -- a reminder or a task still proposed, cancelled in words ---------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "cancel the pills reminder",
        "never mind the pills reminder",
        "forget the pills reminder",
        "stop reminding me to take my pills",
        "delete the reminder",
    ],
)
def test_a_reminder_still_proposed_is_rejected_when_the_words_name_it_and_none_is_set(text):
    said, calls = said_in_the_end(text, [PILLS, PRESENT])
    assert (said, calls) == ("", [("decide", {"proposal": 2, "action": "reject", "items": [1]})])


def test_a_one_off_reminder_still_proposed_is_named_by_what_it_says():
    said, calls = said_in_the_end(
        "cancel the reminder to call mum",
        [CALL, PILLS],
        reminders=[{"id": 8, "text": "water the plants", "when": "at 09:00, daily"}],
    )
    assert calls == [("decide", {"proposal": 4, "action": "reject", "items": [1]})]


def test_a_reminder_that_is_set_is_stopped_before_one_still_proposed():
    set_pills = [{"id": 5, "text": "take my pills", "when": "at 08:00, daily"}]
    for text in ("cancel the pills reminder", "forget the pills reminder"):
        assert said_in_the_end(text, [PILLS], set_pills)[1] == [("cancel_reminder", {"reminder_id": 5})]


def test_several_reminders_still_proposed_that_the_words_name_are_asked_about():
    said, calls = said_in_the_end("cancel the reminder", [DOG, PILLS])
    assert calls == [] and said.startswith("Which one? Nothing was changed.")
    assert "Proposal 3, item 1: New reminder: walk the dog" in said and "Proposal 2, item 1" in said


def test_done_with_a_task_still_proposed_says_where_it_waits():
    # "I couldn't tell which task you mean … Nothing is due soon." before, with the task on screen in a proposal
    for text in ("mark the present as done", "done with the present for Anna"):
        reply = answer(text, [PILLS, PRESENT])
        assert reply.calls == [] and reply.text == (
            "“Buy a present for Anna” isn't on your list yet: proposal 1 still waits for your answer. If it's done "
            "already, reject it there. Nothing was changed."
        )
    assert answer("done with the gym", [PRESENT]).text.startswith("I couldn't tell which task you mean")


def test_the_list_of_reminders_names_those_still_waiting_for_an_answer():
    # "You have no reminders." before, right after the user asked for one
    said, calls = said_in_the_end("what reminders do I have?", [PRESENT, CALL, PILLS])
    assert calls == [] and said == (
        "You have no reminders set.\n\nWaiting for your answer:\n"
        "• Proposal 4: Remind you once, Wed 6 Jan 2027 08:00: call mum\n"
        "• Proposal 2: New reminder: take my pills (at 08:00)"
    )
    said, _ = said_in_the_end("show my reminders", [DOG], [{"id": 8, "text": "water the plants", "when": "at 09:00"}])
    assert said == (
        "Your reminders:\n• water the plants — at 09:00\n\n"
        "Waiting for your answer:\n• Proposal 3: New reminder: walk the dog (at 09:00)"
    )
    assert said_in_the_end("what reminders do I have?", [PRESENT])[0] == "You have no reminders set."


def test_a_reminder_nobody_set_or_proposed_still_has_nothing_to_stop():
    said, calls = said_in_the_end("cancel the gym reminder", [PILLS])
    assert (said, calls) == ("You have no reminders, so there is nothing to stop.", [])


@pytest.mark.parametrize(
    "text",
    ["drop the present task", "cancel the present task", "forget the present task", "never mind the present task"],
)
def test_a_task_still_proposed_is_rejected_and_an_open_one_is_cancelled(text):
    assert said_in_the_end(text, [PILLS, PRESENT])[1] == [("decide", {"proposal": 1, "action": "reject", "items": [1]})]
    present = [{"id": 6, "title": "Buy a present for Anna", "status": "open"}]
    assert said_in_the_end(text, [PILLS], tasks=present)[1] == [("cancel_task", {"task_id": 6})]


# -- "actually make it Sunday" ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "actually make it Sunday",
        "make it Sunday instead",
        "change it to 9am",
        "Actually, make it Sunday!",
        "no, move it to Sunday",
    ],
)
def test_a_change_to_it_modifies_the_one_proposal_waiting(text):
    reply = answer(text, [PRESENT])
    assert reply.calls == [("decide", {"proposal": 1, "action": "modify", "changes": text})]


@pytest.mark.parametrize("text", ["actually make it Sunday", "change it to 9am"])
def test_a_change_to_it_with_nothing_waiting_keeps_its_answer_and_with_two_asks_which(text):
    nothing = answer(text)
    assert nothing.calls == [] and nothing.text == phrases.HELP
    two = answer(text, [PILLS, PRESENT])
    assert two.calls == [] and two.text.startswith("Which proposal should change: 2 (New reminder: take my pills")
    assert f"“proposal 2: {text}”" in two.text and "Nothing was changed." in two.text


def test_a_change_to_it_naming_the_proposal_changes_that_one_in_the_words_left():
    reply = answer("proposal 1: make it Sunday", [PILLS, PRESENT])
    assert reply.calls == [("decide", {"proposal": 1, "action": "modify", "changes": "make it Sunday"})]


def test_words_that_say_yes_to_it_are_no_change():
    assert answer("make it happen", [PRESENT]).calls == []


@pytest.mark.parametrize(
    "item, change, changed",
    [
        (
            {"tool": "create_task", "args": {"title": "Buy a present for Anna", "due": "2027-01-09"}},
            "actually make it Sunday",
            {"title": "Buy a present for Anna", "due": "2027-01-10"},
        ),
        (
            {"tool": "remind", "args": {"text": "call mum", "at": "2027-01-06T08:00:00+01:00"}},
            "make it Sunday instead",
            {"text": "call mum", "at": "2027-01-10T08:00:00+01:00"},
        ),
        (
            {"tool": "remind", "args": {"text": "call mum", "at": "2027-01-06T08:00:00+01:00"}},
            "change it to 9am",
            {"text": "call mum", "at": "2027-01-06T09:00:00+01:00"},
        ),
        (
            {"tool": "create_reminder", "args": {"text": "take my pills", "cron": "0 8 * * *"}},
            "change it to 9:30am",
            {"text": "take my pills", "cron": "30 9 * * *"},
        ),
    ],
)
def test_a_change_naming_no_item_goes_to_the_one_item_with_a_time(item, change, changed):
    reply = answers.modify({"id": 1, "items": [{"position": 1, **item}]}, change, NOW, BERLIN)
    assert reply.calls == [(item["tool"], changed)]


def test_a_change_naming_no_item_is_not_guessed_among_several_nor_made_a_schedule_it_is_not():
    two = {
        "id": 1,
        "items": [
            {"position": 1, "tool": "create_task", "args": {"title": "Pack", "due": "2027-01-09"}},
            {"position": 2, "tool": "create_task", "args": {"title": "Pay", "due": "2027-01-08"}},
        ],
    }
    assert answers.modify(two, "make it Sunday", NOW, BERLIN).rule == "modify not understood"
    daily = {
        "id": 1,
        "items": [{"position": 1, "tool": "create_reminder", "args": {"text": "take my pills", "cron": "0 8 * * *"}}],
    }
    assert answers.modify(daily, "make it Sunday", NOW, BERLIN).rule == "modify not understood"
