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
    for i, (topic, owner, due) in enumerate(
        [
            (shared, OWNER, NOW + timedelta(days=3)),
            (mine, GUEST, None),
            (None, OWNER, NOW + timedelta(days=1)),
            (None, GUEST, NOW),
            (None, None, None),
            (mine, GUEST, NOW + timedelta(days=1)),
        ]
    ):
        Task.create(title=f"task {i}", topic=topic, due=due, created_at=NOW, owner_id=owner)
    Task.create(title="done", status="done", created_at=NOW, owner_id=GUEST)
    Task.create(title="paused", status="snoozed", due=NOW + timedelta(days=2), created_at=NOW, owner_id=GUEST)
    for i, (user, topic) in enumerate(
        [
            (OWNER, None),
            (None, None),
            (GUEST, None),
            (OWNER, shared.id),
            (GUEST, shared.id),
            (GUEST, None),
            (OWNER, None),
        ]
        * 3
    ):
        Turn.create(
            channel="telegram",
            role="user" if i % 2 else "assistant",
            user_id=user,
            text=f"turn {i}",
            topic_id=topic,
            created_at=NOW + timedelta(seconds=i),
        )
    for i, (approver, status, expires) in enumerate(
        [
            (GUEST, "pending", 1),
            (GUEST, "partial", 1),
            (GUEST, "pending", -1),
            (OWNER, "pending", 1),
            (GUEST, "approved", 1),
            (GUEST, "pending", 1),
        ]
    ):
        approval = Approval.create(
            trace_id=f"t{i}",
            status=status,
            approver=approver,
            channel="telegram",
            nonce="n",
            created_at=NOW,
            expires_at=NOW + timedelta(hours=expires),
        )
        for position, item_status in enumerate(["pending", "executed", "pending"][: 3 - i % 3], start=1):
            ApprovalItem.create(
                approval=approval,
                position=position,
                tool="add_task",
                args={},
                description=f"item {i}.{position}\nsecond line",
                status=item_status,
            )


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
    query = (
        Approval.select()
        .where(
            Approval.status.in_(("pending", "partial"))
            & (Approval.expires_at > now)
            & (Approval.approver == str(approver))
        )
        .order_by(Approval.id.desc())
        .limit(limit)
    )
    shown = []
    for approval in query:
        items = [
            (i.position, i.description)
            for i in approval.items.where(ApprovalItem.status == "pending").order_by(ApprovalItem.position)
        ]
        if items:
            shown.append((approval.id, items))
    return shown


@pytest.mark.parametrize(
    "user_id,topic_id,owner",
    [
        (OWNER, None, OWNER),
        (GUEST, None, OWNER),
        (None, None, OWNER),
        (GUEST, "shared", OWNER),
        (None, None, None),
        (GUEST, None, None),
    ],
)
def test_recent_turns_and_first_contact_match_the_peewee_queries(any_db, user_id, topic_id, owner):
    seed()
    if topic_id == "shared":
        topic_id = Topic.get(Topic.title == "Japan trip").id
    for limit in (3, 12, 100):
        assert same(
            reads.recent_turns(user_id, topic_id, owner, limit), peewee_recent_turns(user_id, topic_id, owner, limit)
        )
    spoke = Turn.select().where((Turn.role == "assistant") & whose(user_id, owner)).exists()
    assert reads.assistant_spoke(user_id, owner) is spoke
    newest = reads.recent_turns(user_id, topic_id, owner, 4)
    assert newest and newest[-1].created_at.tzinfo is not None


@pytest.mark.parametrize("viewer,owner", [(OWNER, OWNER), (GUEST, OWNER), (None, OWNER), (GUEST, None)])
def test_open_topics_and_tasks_match_the_visibility_rules(any_db, viewer, owner):
    seed()
    topics = list(
        Topic.select().where((Topic.status != "closed") & visible_to(Topic, viewer, owner)).order_by(Topic.id)
    )
    tasks = list(
        Task.select()
        .where(Task.status.in_(("open", "snoozed")) & visible_to(Task, viewer, owner))
        .order_by(Task.due.is_null(), Task.due, Task.id)
        .limit(200)
    )
    assert same(reads.open_topics(viewer, owner), topics)
    assert same(reads.open_tasks(viewer, owner, 200), tasks)
    assert same(reads.open_tasks(viewer, owner, 2), tasks[:2])
    if viewer == GUEST:  # the guest's own and the shared topic's, not the owner's private ones
        assert {t.title for t in reads.open_topics(viewer, owner)} == {"Japan trip", "Taxes"}
        # a snoozed task is still theirs to finish or drop; a done one is not
        assert "paused" in {t.title for t in reads.open_tasks(viewer, owner, 200)}
        assert "done" not in {t.title for t in reads.open_tasks(viewer, owner, 200)}


def test_pending_items_are_the_open_proposals_newest_first_in_one_query(any_db):
    seed()
    for approver in (GUEST, OWNER, "nobody"):
        for limit in (1, 10):
            assert reads.pending_items(approver, NOW, limit) == peewee_pending(approver, NOW, limit)
    assert reads.pending_items(GUEST, NOW, 10)[0][1] == [(1, "item 5.1\nsecond line")]
    newest_open = [Approval.get(Approval.trace_id == t).id for t in ("t5", "t1")]  # t4 is decided, t2 expired
    assert [a for a, _ in reads.pending_items(GUEST, NOW, 2)] == newest_open


def test_strongest_memories_are_engrams_profile_read(any_db):
    for i, (kind, strength, invalidated) in enumerate(
        [
            ("belief", 0.5, None),
            ("principle", 2.0, None),
            ("episode", 9.0, None),
            ("belief", 3.0, NOW),
            ("belief", 2.0, None),
            ("principle", 1.0, None),
        ]
    ):
        Memory.create(
            kind=kind,
            text=f"memory {i}",
            strength=strength,
            created_at=NOW - timedelta(days=i),
            invalidated_at=invalidated,
        )
    for at in (None, NOW - timedelta(hours=1), NOW - timedelta(days=3, hours=1)):
        for limit in (2, 5):
            alive = engram._alive(at)  # the rule the read must keep
            expected = list(
                Memory.select()
                .where(Memory.kind.in_(list(engram.LEARNED)), alive)
                .order_by(Memory.strength.desc(), Memory.id.desc())
                .limit(limit)
            )
            assert same(reads.strongest_memories(engram.LEARNED, limit, at), expected)
    assert [m.text for m in reads.strongest_memories(engram.LEARNED, 5)] == [
        "memory 4",
        "memory 1",
        "memory 5",
        "memory 0",
    ]  # ties by strength: the newer id first


def test_a_row_created_through_the_hot_insert_reads_back_as_peewee_reads_it(any_db):
    turn = hot.create(Turn, channel="repl", role="user", user_id=OWNER, text="hi", created_at=NOW)
    stored = Turn.get_by_id(turn.id)
    assert (stored.channel, stored.role, stored.user_id, stored.text, stored.created_at, stored.topic_id) == (
        "repl",
        "user",
        OWNER,
        "hi",
        NOW,
        None,
    )
    assert same([hot.by_id(Turn, turn.id)], [stored])


def test_rows_inserted_together_are_stored_in_their_order_as_peewee_stores_them(any_db):
    said = [
        Turn(channel="repl", role="user", user_id=OWNER, text="hi", created_at=NOW, topic_id=None, trace_id="t"),
        Turn(
            channel="repl",
            role="assistant",
            user_id=OWNER,
            text="hello",
            created_at=NOW + timedelta(seconds=1),
            topic_id=None,
            trace_id="t",
        ),
    ]
    hot.insert_rows(Turn, said)
    hot.insert_rows(Turn, said[:1])  # another count of rows is another statement
    stored = list(Turn.select().order_by(Turn.id))
    assert [(t.role, t.text, t.user_id, t.created_at, t.trace_id) for t in stored] == [
        ("user", "hi", OWNER, NOW, "t"),
        ("assistant", "hello", OWNER, NOW + timedelta(seconds=1), "t"),
        ("user", "hi", OWNER, NOW, "t"),
    ]


# Shortcuts on the hot path, each against the full work it stands for -----------------------------------------
def test_turns_read_again_are_the_rows_as_stored_and_each_call_gets_its_own(any_db):
    seed()
    first = reads.recent_turns(OWNER, None, OWNER, 12)
    again = reads.recent_turns(OWNER, None, OWNER, 12)  # every row converted once already
    assert same(again, first) and same(again, peewee_recent_turns(OWNER, None, OWNER, 12))
    again[-1].text = "changed in one caller's hands"
    assert reads.recent_turns(OWNER, None, OWNER, 12)[-1].text == first[-1].text
    Turn.update(text="edited").where(Turn.id == first[-1].id).execute()  # a changed row is another row
    assert reads.recent_turns(OWNER, None, OWNER, 12)[-1].text == "edited"
    assert same(reads.recent_turns(OWNER, None, OWNER, 12), peewee_recent_turns(OWNER, None, OWNER, 12))


def test_a_model_with_a_json_field_is_converted_on_every_read(any_db):
    from storage.models import Inbox

    row = Inbox.create(trace_id="t", source="repl", text="hi", priority=0, payload={"a": [1]}, created_at=NOW)
    values = hot.execute(
        "inbox row", lambda: f'SELECT {hot.column_list(Inbox)} FROM "inbox" WHERE "id" = ?', [row.id]
    ).rows[0]
    one, two = hot.known(Inbox, values), hot.known(Inbox, values)
    one.payload["a"].append(2)  # a payload changed in one caller's hands is not the next reader's
    assert two.payload == {"a": [1]} and hot.known(Inbox, values).payload == {"a": [1]}


def test_a_row_made_by_hot_new_is_the_row_peewee_makes():
    from storage.models import Inbox, Outbox, Task

    for model, fields in [
        (Inbox, dict(trace_id="t", source="repl", text="hi", priority=0, payload={}, at=None)),
        (
            Outbox,
            dict(
                channel="repl",
                text="x",
                trace_id="t",
                idempotency_key="k",
                created_at=NOW,
                payload={"why": "w"},
                surfaced=True,
                status="pending",
                deliver_after=None,
            ),
        ),
        (
            Turn,
            dict(channel="repl", role="user", text="hi", trace_id="t", created_at=NOW, topic_id=None, user_id=OWNER),
        ),
    ]:
        fields.pop("at", None)
        made, expected = hot.new(model, **fields), model(**fields)
        assert made.__data__ == expected.__data__ and made._dirty == expected._dirty
    topic = Topic(id=7, title="x")
    task = hot.new(Task, title="t", topic=topic)  # a foreign key's object goes peewee's way
    assert task.topic_id == 7 and task.topic is topic


def test_stored_moments_and_payloads_are_what_the_fields_convert_them_to():
    import json

    import peewee

    from storage.models import Inbox, JSONField, UTCDateTimeField

    field = Inbox.created_at

    def full(value):  # the conversion without the remembered last moment
        if isinstance(value, datetime) and value.tzinfo is not None:
            value = value.astimezone(timezone.utc).replace(tzinfo=None)
        return peewee.DateTimeField.db_value(field, value)

    berlin = timezone(timedelta(hours=1))
    moments = [
        NOW,
        NOW,
        NOW.astimezone(berlin),
        NOW.replace(tzinfo=None),
        NOW + timedelta(microseconds=1),
        NOW.replace(tzinfo=None),
        NOW.astimezone(berlin),
        None,
        "2027-01-05 08:00:00",
        NOW,
    ]
    for value in moments:
        assert field.db_value(value) == full(value), value
        assert type(field.db_value(value)) is type(full(value))
    assert isinstance(field, UTCDateTimeField)
    payload = Inbox.payload
    assert isinstance(payload, JSONField)
    for value in ({}, {"b": 1, "a": [2]}, [], None, {"when": NOW}):
        assert payload.db_value(value) == (None if value is None else json.dumps(value, sort_keys=True, default=str))


def test_an_insert_skips_the_converters_only_where_they_change_nothing():
    from storage.models import Outbox

    for field in (Outbox.channel, Outbox.text, Outbox.attempts, Outbox.surfaced, Outbox.payload, Outbox.created_at):
        convert = hot._to_db(field)
        for value in ("text", 3, True, None, b"bytes", 2.5, {"a": 1}, NOW):
            try:
                expected = field.db_value(value)
            except (TypeError, ValueError):
                continue
            assert convert(value) == expected and type(convert(value)) is type(expected), (field.name, value)


def test_kept_messages_go_back_to_pending_oldest_first_only_while_the_user_waits(any_db):
    from storage import inbox
    from storage.models import Inbox

    kept = [inbox.add(source="telegram", text=f"kept {i}", priority=0, at=NOW, payload={"n": i}) for i in range(3)]
    Inbox.update(status="kept").where(Inbox.id.in_([row.id for row in kept])).execute()

    assert inbox.release_kept(oldest_only=True, while_user_waits=True) == 0  # nobody wrote again
    assert {row.status for row in Inbox.select()} == {"kept"}

    inbox.add(source="telegram", text="written again", priority=0, at=NOW)
    assert inbox.release_kept(oldest_only=True, while_user_waits=True) == 1
    assert [Inbox.get_by_id(row.id).status for row in kept] == ["pending", "kept", "kept"]

    assert inbox.release_kept(oldest_only=False) == 2  # the model answered: every kept one, marked so
    assert [Inbox.get_by_id(row.id).payload for row in kept] == [
        {"n": 0},
        {"n": 1, "kept_after_answer": True},
        {"n": 2, "kept_after_answer": True},
    ]
