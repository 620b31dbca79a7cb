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
