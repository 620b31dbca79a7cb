"""The hot reads (storage/reads.py) return what the cortex's peewee queries return, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from actors.tools import visible_to
from storage import engram, hot, reads
from storage.models import Approval, ApprovalItem, Memory, Task, Topic, Turn

NOW = datetime(2027, 1, 5, 8, 0, tzinfo=timezone.utc)
OWNER, GUEST = "100", "200"


def seed() -> None:
    shared = Topic.create(title="Japan trip", status="active", created_at=NOW, thread_ref="77", owner_id=OWNER)
    mine = Topic.create(title="Taxes", status="active", created_at=NOW, owner_id=GUEST)
    Topic.create(title="Old", status="closed", created_at=NOW, owner_id=GUEST)
    Topic.create(title="Legacy", status="active", created_at=NOW)  # from before rows had an owner
    for i, (topic, owner, due) in enumerate([(shared, OWNER, NOW + timedelta(days=3)), (mine, GUEST, None),
                                             (None, OWNER, NOW + timedelta(days=1)), (None, GUEST, NOW),
                                             (None, None, None), (mine, GUEST, NOW + timedelta(days=1))]):
        Task.create(title=f"task {i}", topic=topic, due=due, created_at=NOW, owner_id=owner)
    Task.create(title="done", status="done", created_at=NOW, owner_id=GUEST)
    for i, (user, topic) in enumerate([(OWNER, None), (None, None), (GUEST, None), (OWNER, shared.id),
                                       (GUEST, shared.id), (GUEST, None), (OWNER, None)] * 3):
        Turn.create(channel="telegram", role="user" if i % 2 else "assistant", user_id=user, text=f"turn {i}",
                    topic_id=topic, created_at=NOW + timedelta(seconds=i))
    for i, (approver, status, expires) in enumerate([(GUEST, "pending", 1), (GUEST, "partial", 1),
                                                     (GUEST, "pending", -1), (OWNER, "pending", 1),
                                                     (GUEST, "approved", 1), (GUEST, "pending", 1)]):
        approval = Approval.create(trace_id=f"t{i}", status=status, approver=approver, channel="telegram",
                                   nonce="n", created_at=NOW, expires_at=NOW + timedelta(hours=expires))
        for position, item_status in enumerate(["pending", "executed", "pending"][: 3 - i % 3], start=1):
            ApprovalItem.create(approval=approval, position=position, tool="add_task", args={},
                                description=f"item {i}.{position}\nsecond line", status=item_status)


def same(a: list, b: list) -> bool:
    return [r.__data__ for r in a] == [r.__data__ for r in b]


# The peewee queries the hot reads stand for, as the cortex made them --------------------------------
def whose(user_id, owner):
    mine = Turn.user_id == str(user_id) if user_id is not None else Turn.user_id.is_null()
    if owner is not None and (user_id is None or str(user_id) == str(owner)):
        mine = mine | Turn.user_id.is_null()
    return mine


def peewee_recent_turns(user_id, topic_id, owner, limit):
    where = whose(user_id, owner)
    if topic_id is not None:
        where = where | (Turn.topic_id == topic_id)
    return list(reversed(list(Turn.select().where(where).order_by(Turn.id.desc()).limit(limit))))


def peewee_pending(approver, now, limit):
    query = (Approval.select().where(Approval.status.in_(("pending", "partial")) & (Approval.expires_at > now)
                                     & (Approval.approver == str(approver)))
             .order_by(Approval.id.desc()).limit(limit))
    shown = []
    for approval in query:
        items = [(i.position, i.description)
                 for i in approval.items.where(ApprovalItem.status == "pending").order_by(ApprovalItem.position)]
        if items:
            shown.append((approval.id, items))
    return shown


@pytest.mark.parametrize("user_id,topic_id,owner", [(OWNER, None, OWNER), (GUEST, None, OWNER), (None, None, OWNER),
                                                    (GUEST, "shared", OWNER), (None, None, None), (GUEST, None, None)])
def test_recent_turns_and_first_contact_match_the_peewee_queries(any_db, user_id, topic_id, owner):
    seed()
    if topic_id == "shared":
        topic_id = Topic.get(Topic.title == "Japan trip").id
    for limit in (3, 12, 100):
        assert same(reads.recent_turns(user_id, topic_id, owner, limit),
                    peewee_recent_turns(user_id, topic_id, owner, limit))
    spoke = Turn.select().where((Turn.role == "assistant") & whose(user_id, owner)).exists()
    assert reads.assistant_spoke(user_id, owner) is spoke
    newest = reads.recent_turns(user_id, topic_id, owner, 4)
    assert newest and newest[-1].created_at.tzinfo is not None


@pytest.mark.parametrize("viewer,owner", [(OWNER, OWNER), (GUEST, OWNER), (None, OWNER), (GUEST, None)])
def test_open_topics_and_tasks_match_the_visibility_rules(any_db, viewer, owner):
    seed()
    topics = list(Topic.select().where((Topic.status != "closed") & visible_to(Topic, viewer, owner))
                  .order_by(Topic.id))
    tasks = list(Task.select().where((Task.status == "open") & visible_to(Task, viewer, owner))
                 .order_by(Task.due.is_null(), Task.due, Task.id).limit(200))
    assert same(reads.open_topics(viewer, owner), topics)
    assert same(reads.open_tasks(viewer, owner, 200), tasks)
    assert same(reads.open_tasks(viewer, owner, 2), tasks[:2])
    if viewer == GUEST:  # the guest's own and the shared topic's, not the owner's private ones
        assert {t.title for t in reads.open_topics(viewer, owner)} == {"Japan trip", "Taxes"}


def test_pending_items_are_the_open_proposals_newest_first_in_one_query(any_db):
    seed()
    for approver in (GUEST, OWNER, "nobody"):
        for limit in (1, 10):
            assert reads.pending_items(approver, NOW, limit) == peewee_pending(approver, NOW, limit)
    assert reads.pending_items(GUEST, NOW, 10)[0][1] == [(1, "item 5.1\nsecond line")]
    newest_open = [Approval.get(Approval.trace_id == t).id for t in ("t5", "t1")]  # t4 is decided, t2 expired
    assert [a for a, _ in reads.pending_items(GUEST, NOW, 2)] == newest_open


def test_strongest_memories_are_engrams_profile_read(any_db):
    for i, (kind, strength, invalidated) in enumerate([("belief", 0.5, None), ("principle", 2.0, None),
                                                       ("episode", 9.0, None), ("belief", 3.0, NOW),
                                                       ("belief", 2.0, None), ("principle", 1.0, None)]):
        Memory.create(kind=kind, text=f"memory {i}", strength=strength, created_at=NOW - timedelta(days=i),
                      invalidated_at=invalidated)
    for at in (None, NOW - timedelta(hours=1), NOW - timedelta(days=3, hours=1)):
        for limit in (2, 5):
            alive = engram._alive(at)  # the rule the read must keep
            expected = list(Memory.select().where(Memory.kind.in_(list(engram.LEARNED)), alive)
                            .order_by(Memory.strength.desc(), Memory.id.desc()).limit(limit))
            assert same(reads.strongest_memories(engram.LEARNED, limit, at), expected)
    assert [m.text for m in reads.strongest_memories(engram.LEARNED, 5)] == [
        "memory 4", "memory 1", "memory 5", "memory 0"]  # ties by strength: the newer id first


def test_a_row_created_through_the_hot_insert_reads_back_as_peewee_reads_it(any_db):
    turn = hot.create(Turn, channel="repl", role="user", user_id=OWNER, text="hi", created_at=NOW)
    stored = Turn.get_by_id(turn.id)
    assert (stored.channel, stored.role, stored.user_id, stored.text, stored.created_at, stored.topic_id) == (
        "repl", "user", OWNER, "hi", NOW, None)
    assert same([hot.by_id(Turn, turn.id)], [stored])


def test_rows_inserted_together_are_stored_in_their_order_as_peewee_stores_them(any_db):
    said = [Turn(channel="repl", role="user", user_id=OWNER, text="hi", created_at=NOW, topic_id=None, trace_id="t"),
            Turn(channel="repl", role="assistant", user_id=OWNER, text="hello", created_at=NOW + timedelta(seconds=1),
                 topic_id=None, trace_id="t")]
    hot.insert_rows(Turn, said)
    hot.insert_rows(Turn, said[:1])  # another count of rows is another statement
    stored = list(Turn.select().order_by(Turn.id))
    assert [(t.role, t.text, t.user_id, t.created_at, t.trace_id) for t in stored] == [
        ("user", "hi", OWNER, NOW, "t"), ("assistant", "hello", OWNER, NOW + timedelta(seconds=1), "t"),
        ("user", "hi", OWNER, NOW, "t")]
