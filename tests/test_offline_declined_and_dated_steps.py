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
