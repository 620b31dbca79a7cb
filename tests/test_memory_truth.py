"""Only true episodes: what the hippocampus learns rests on what happened, not on what was merely proposed.

A modification records what the user changed; an item removed in it leaves no trace; a due the user moved
teaches a habit only once the moved task was approved.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from actors.hippocampus.episodes import collect_episodes
from actors.hippocampus.nightly import consolidate
from storage.models import Approval, ApprovalItem, Memory
from tests.hippocampus_support import LATE, FakeSynapse, at, live, night, proposal


@pytest.fixture
def db(any_db):
    """Each test on SQLite, and on PostgreSQL when WILSON_TEST_DATABASE_URL names one."""
    return any_db


def add_item(approval: Approval, position: int, title: str, due: str, status: str) -> ApprovalItem:
    return ApprovalItem.create(
        approval=approval,
        position=position,
        tool="create_task",
        args={"title": title, "due": due},
        description=f"New task: {title} — due {due}",
        status=status,
    )


def supersede(original: Approval, items: list[tuple[str, str]], when, *, status: str, item_status: str) -> Approval:
    """The user asked for a change: `items` (title, due) is the replacement proposal, decided `status`."""
    decided = when + timedelta(minutes=5) if status != "pending" else None
    successor = proposal(
        items[0][0], items[0][1], decided=decided, status=status, item_status=item_status, created=when
    )
    for position, (title, due) in enumerate(items[1:], start=2):
        add_item(successor, position, title, due, item_status)
    successor.supersedes = original.id
    successor.save()
    original.status, original.superseded_by, original.decided_at = "superseded", successor.id, when
    original.save()
    ApprovalItem.update(status="superseded").where(ApprovalItem.approval == original.id).execute()
    return successor


def learned() -> list[str]:
    return [m.text for m in Memory.select().where(Memory.kind != "episode", Memory.invalidated_at.is_null())]


def test_an_item_removed_in_a_modification_is_no_due_move_and_teaches_nothing(db):
    original = proposal(
        "Book flights", "2027-01-20", decided=None, status="pending", item_status="pending", created=at("2027-01-05", 9)
    )
    add_item(original, 2, "Plan how to celebrate", "2027-01-08", "pending")
    # "drop the celebration, add the restaurant": the new item sits where the removed one was
    supersede(
        original,
        [("Book flights", "2027-01-20"), ("Book the restaurant", "2027-01-15")],
        at("2027-01-05", 10),
        status="approved",
        item_status="executed",
    )

    episodes = collect_episodes(at("2027-01-01"), at("2027-01-06"))
    consolidate(night("2027-01-06"), FakeSynapse())

    texts = " | ".join(e["text"] for e in episodes)
    assert "celebrate" not in texts  # neither moved nor modified: it was removed
    assert "2027-01-08" not in texts and "moved" not in texts
    assert not [t for t in learned() if "celebrate" in t or "restaurant" in t.lower()]
    assert not Memory.select().where(Memory.kind == "episode", Memory.text.contains("celebrate")).exists()


def test_a_moved_due_teaches_nothing_until_the_moved_task_is_approved(db):
    rejected = proposal(
        "Book flights", "2027-01-20", decided=None, status="pending", item_status="pending", created=at("2027-01-05", 9)
    )
    supersede(
        rejected, [("Book flights", "2027-02-01")], at("2027-01-05", 10), status="rejected", item_status="rejected"
    )
    waiting = proposal(
        "Book a hotel",
        "2027-01-20",
        decided=None,
        status="pending",
        item_status="pending",
        created=at("2027-01-05", 9),
        expires=at("2027-01-30"),
    )
    pending = supersede(
        waiting, [("Book a hotel", "2027-02-01")], at("2027-01-05", 11), status="pending", item_status="pending"
    )
    pending.expires_at = at("2027-01-30")
    pending.save()

    consolidate(night("2027-01-06"), FakeSynapse())

    assert live("interpretation", LATE) is None
    assert live("interpretation", "user books hotels late") is None
    assert not [t for t in learned() if " late" in t]
    # what the user asked for is still on record, as a request
    asked = Memory.get((Memory.kind == "episode") & Memory.text.contains(f"Proposal {rejected.id} "))
    assert "due moved from 2027-01-20 to 2027-02-01" in asked.text

    # Approved later, the moved hotel booking is a habit observed, resting on both proposals.
    pending.status, pending.decided_at = "approved", at("2027-01-08")
    pending.save()
    ApprovalItem.update(status="executed").where(ApprovalItem.approval == pending.id).execute()
    consolidate(night("2027-01-09"), FakeSynapse())

    habit = live("interpretation", "user books hotels late")
    assert habit is not None and habit.provenance == [f"approval:{waiting.id}", f"approval:{pending.id}"]
    assert live("interpretation", LATE) is None
