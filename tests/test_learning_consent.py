"""Learning serves long-term agency (DESIGN principle 15): what the nights learned that would make Wilson say
less (fewer heads-ups, a kind of proposal held back, a sender sunk) is offered as one proposal with its
evidence and changes nothing until the user approves it; `memories` then lists the change with its evidence
and the one command that takes it back. What makes Wilson say more (a task the user is often late with,
proposed earlier) applies at once and is listed too.

A whole Wilson, offline, on a simulated clock; the belief is stored as three nights leave it (the evidence
for the belief itself is tests/test_memory_followups.py)."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest

from actors.hippocampus import advice
from actors.hippocampus.recall import relevant_memories
from storage import engram
from storage.models import Approval, ApprovalItem
from wilson.app.repl import Repl
from tests.repl_support import said

BELIEF = "user lets early reminders about bill payment pass"


@pytest.fixture
def app(make_app):
    return make_app(start="2027-01-05T10:00:00+01:00", llm="offline")


def table(repl, line: str) -> str:
    repl.out = io.StringIO()
    repl.run_line(line)
    return repl.out.getvalue()


def test_a_learned_reason_to_say_less_is_asked_with_its_evidence_and_undone_in_one_command(app):
    repl = Repl(app, out=io.StringIO())
    memory = engram.store("belief", BELIEF, ["outbox:3", "outbox:9", "outbox:14"], app.clock.now(), weight=3)
    assert advice.reminder_advice("Pay the water bill") is None  # learned, and nothing changes
    assert "changes nothing until you approve it" in table(repl, "memories")
    # a model that plans sees it, marked as not agreed
    [seen] = [m for m in relevant_memories({"text": "Pay the water bill"}, app.clock.now()) if m["id"] == memory.id]
    assert seen["not_agreed"].startswith("the user has not agreed to act on this")

    app.advance(timedelta(days=1))  # the night offers it; the morning briefing carries it
    offer = Approval.select().join(ApprovalItem).where(ApprovalItem.tool == "adopt_learning").get()
    [morning] = [d["text"] for d in app.user_deliveries() if d["text"].startswith("Good morning!")]
    assert f"Proposal {offer.id}: I'd like to do this" in morning
    assert (
        "the early reminders about bill payment went unanswered on 3 occasions (outbox 3, outbox 9, "
        "outbox 14), while you answered other messages and the tasks were late or left"
    ) in morning
    assert "From now on: remind you of bill payment only when it is due" in morning
    assert advice.reminder_advice("Pay the water bill") is None  # still asked, not done

    app.advance(timedelta(days=1))  # asked once: not again the next night
    assert Approval.select().join(ApprovalItem).where(ApprovalItem.tool == "adopt_learning").count() == 1

    assert said(app, repl, "yes")[0].startswith("Done:\n✓ From now on: remind you of bill payment only when it is due")
    assert advice.reminder_advice("Pay the water bill")["memory"] == memory.id
    [seen] = [m for m in relevant_memories({"text": "Pay the water bill"}, app.clock.now()) if m["id"] == memory.id]
    assert "not_agreed" not in seen
    listed = table(repl, "memories")
    assert (
        "now: remind you of bill payment only when it is due" in listed
        and f"undo: undo {offer.id}" in listed
        and "went unanswered on 3 occasions" in listed
    ), listed

    assert said(app, repl, f"undo {offer.id}")[0].startswith("Put back:\n✓ Stop: remind you of bill payment")
    assert advice.reminder_advice("Pay the water bill") is None  # one command, and the heads-ups are back
    assert "now: remind you of bill payment" not in table(repl, "memories")


def test_a_reason_to_say_more_applies_at_once_and_is_listed_with_its_undo(app):
    repl = Repl(app, out=io.StringIO())
    memory = engram.store("belief", "user books flights late", ["task:4", "task:9"], app.clock.now(), weight=2)
    steered = advice.proposal_advice("create_task", {"title": "Book flights", "due": "2027-03-01"}, app.clock.now())
    assert steered["action"] == "earlier"  # no question asked: it makes Wilson speak earlier, not less
    listed = table(repl, "memories")
    assert "now: user books flights late (so I propose such tasks a week earlier)" in listed
    assert f"undo: forget {memory.id}" in listed


def learning_offers() -> list[Approval]:
    return list(Approval.select().join(ApprovalItem).where(ApprovalItem.tool == "adopt_learning").order_by(Approval.id))


def test_a_declined_change_is_asked_again_only_when_as_many_new_occasions_have_come_and_says_so(app):
    repl = Repl(app, out=io.StringIO())
    engram.store("belief", BELIEF, ["outbox:3", "outbox:9", "outbox:14"], app.clock.now(), weight=3)
    app.advance(timedelta(days=1))  # the night asks
    [first] = learning_offers()
    said(app, repl, "no")
    assert Approval.get_by_id(first.id).status == "rejected"

    # two more unanswered heads-ups: new evidence, but not as much again as the "no" was given on
    engram.store("belief", BELIEF, ["outbox:20"], app.clock.now())
    app.advance(timedelta(days=1))
    engram.store("belief", BELIEF, ["outbox:25"], app.clock.now())
    app.advance(timedelta(days=1))
    assert learning_offers() == [first]  # a "no" is an answer
    assert advice.reminder_advice("Pay the water bill") is None  # and nothing changed on its own

    engram.store("belief", BELIEF, ["outbox:31"], app.clock.now())  # the third new occasion
    app.advance(timedelta(days=1))
    [_, again] = learning_offers()
    [morning] = [
        d["text"]
        for d in app.user_deliveries()
        if d["text"].startswith("Good morning!") and f"Proposal {again.id}" in d["text"]
    ]
    assert (
        "I asked on Wed 6 Jan and you said no; since then it happened 3 more times (outbox 20, outbox 25, "
        "outbox 31), so I ask once more"
    ) in morning
    assert "From now on: remind you of bill payment only when it is due" in morning
    assert advice.reminder_advice("Pay the water bill") is None  # asked again, still not done

    said(app, repl, "no")
    app.advance(timedelta(days=1))
    assert len(learning_offers()) == 2  # the second "no" stands as well


def test_a_declined_principle_counts_the_heads_ups_its_beliefs_rest_on_as_its_evidence(app):
    repl = Repl(app, out=io.StringIO())
    now = app.clock.now()
    kinds = ("bill payment", "hotel booking", "birthday")
    beliefs = [
        engram.store(
            "belief",
            f"user lets early reminders about {kind} pass",
            [f"outbox:{10 * n + 1}", f"outbox:{10 * n + 2}"],
            now,
        )
        for n, kind in enumerate(kinds)
    ]
    engram.store("principle", "Remind about tasks only when they are due", [f"memory:{b.id}" for b in beliefs], now)
    app.advance(timedelta(days=1))
    [first] = [a for a in learning_offers() if "tasks only when" in a.items.get().description]
    said(app, repl, f"reject {first.id}")
    asked = len(learning_offers())

    for n, belief in enumerate(beliefs):  # each kind let pass twice more: six new occasions, as many as before
        engram.store("belief", belief.text, [f"outbox:{100 + 2 * n}", f"outbox:{101 + 2 * n}"], app.clock.now())
    app.advance(timedelta(days=1))
    again = [a for a in learning_offers()[asked:] if "tasks only when" in a.items.get().description]
    assert len(again) == 1 and "since then it happened 6 more times (outbox 100, outbox 101" in again[0].reason
