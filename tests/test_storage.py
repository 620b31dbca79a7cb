"""Working memory on SQLite and PostgreSQL: atomic claims by (priority, id), dedup, outbox once."""

from __future__ import annotations

import socket
import threading
from datetime import datetime, timezone

import pytest

from storage import buffers, inbox, outbox, trace
from storage.db import FairLock
from storage.migrations import MIGRATIONS, current_version, migrate
from storage.models import Approval, Inbox, SchemaVersion
from wilson.kernel import clock as clockmod
from wilson.kernel import liveness

NOW = datetime(2027, 1, 5, 8, 0, tzinfo=timezone.utc)


def test_migrations_are_versioned_and_idempotent(any_db):
    assert current_version() == MIGRATIONS[-1][0]
    assert migrate() == MIGRATIONS[-1][0]


def test_the_tables_made_from_statements_built_once_are_the_ones_peewee_makes(tmp_path):
    import peewee

    from storage.migrations import create_tables
    from storage.models import ALL_MODELS

    def schema(way: str) -> list:
        db = peewee.SqliteDatabase(str(tmp_path / f"{way}.sqlite3"))
        with db.bind_ctx(ALL_MODELS):
            if way == "peewee":
                db.create_tables(ALL_MODELS)
            else:
                create_tables(db, ALL_MODELS)
                create_tables(db, ALL_MODELS)  # the kept statements, on tables that are there now
        made = db.execute_sql("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name").fetchall()
        db.close()
        return made

    built_once = schema("once")
    assert len([row for row in built_once if row[0] == "table"]) == len(ALL_MODELS)
    assert built_once == schema("peewee")


def test_priority_zero_behind_a_hundred_background_rows_is_claimed_first(any_db):
    for n in range(100):
        inbox.add(source="tick", text=f"deadline {n}", priority=4, at=NOW, origin="background")
    urgent = inbox.add(source="repl", text="hello", priority=0, at=NOW)
    assert inbox.claim_next(NOW).id == urgent.id


def test_fifo_within_a_priority(any_db):
    ids = [inbox.add(source="x", text=str(n), priority=2, at=NOW).id for n in range(5)]
    claimed = [inbox.claim_next(NOW).id for _ in range(5)]
    assert claimed == ids
    assert inbox.claim_next(NOW) is None


def test_priority_range_separates_lanes(any_db):
    inbox.add(source="x", text="background", priority=3, at=NOW)
    user = inbox.add(source="x", text="user", priority=0, at=NOW)
    assert inbox.claim_next(NOW, min_priority=1).priority == 3
    assert inbox.claim_next(NOW, min_priority=1) is None
    assert inbox.claim_next(NOW, max_priority=0).id == user.id


def test_concurrent_claimers_never_claim_a_row_twice(any_db):
    for n in range(200):
        inbox.add(source="x", text=str(n), priority=n % 5, at=NOW)
    claimed: list[int] = []
    lock = threading.Lock()

    def worker():
        while True:
            row = inbox.claim_next(NOW)
            if row is None:
                return
            with lock:
                claimed.append(row.id)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(claimed) == 200 and len(set(claimed)) == 200


def test_inbox_dedup_by_natural_key(any_db):
    assert inbox.add(source="telegram", text="hi", priority=0, at=NOW, dedup_key="telegram:7") is not None
    assert inbox.add(source="telegram", text="hi", priority=0, at=NOW, dedup_key="telegram:7") is None
    assert Inbox.select().count() == 1


def test_a_dead_processes_claims_are_released_on_start_and_a_live_ones_kept(any_db):
    dead = inbox.add(source="x", text="was being worked when its process died", priority=1, at=NOW)
    live = inbox.add(source="x", text="is being worked right now", priority=1, at=NOW)
    inbox.claim_next(NOW, lane="cortex", owner=f"{socket.gethostname()}:{2**22 + 7}:0badc0/cortex#1")
    inbox.claim_next(NOW, lane="cortex", owner=f"{liveness.PROCESS}/cortex#2")
    assert inbox.recover(NOW) == 1
    assert Inbox.get_by_id(dead.id).status == "pending" and Inbox.get_by_id(dead.id).attempts == 0
    assert [t.reason for t in trace.path(dead.trace_id) if "taken over" in t.reason] == [
        f"inbox {dead.id} taken over from {socket.gethostname()}:{2**22 + 7}:0badc0/cortex#1, which is gone"
    ]
    assert Inbox.get_by_id(live.id).status == "claimed"


def test_an_expired_lease_is_taken_over_and_the_old_owner_cannot_finish(any_db):
    row = inbox.add(source="x", text="work", priority=1, at=NOW)
    assert inbox.claim_next(NOW, lane="cortex", owner="slow", lease_seconds=-1).id == row.id
    assert inbox.claim_next(NOW, lane="cortex", owner="fresh").id == row.id
    with pytest.raises(inbox.LostClaim):
        inbox.finish(row.id, NOW, owner="slow")
    assert inbox.fail_or_retry(row.id, NOW, "late error", owner="slow") == "lost"
    inbox.finish(row.id, NOW, owner="fresh")
    assert Inbox.get_by_id(row.id).status == "done"


def test_a_takeover_is_traced_with_the_owner_it_took_the_row_from_and_the_row_is_wholly_the_new_owners(any_db):
    row = inbox.add(source="x", text="work", priority=1, at=NOW)
    inbox.claim_next(NOW, lane="cortex", owner="host:1:abc/cortex#1", lease_seconds=-1)
    taken = inbox.claim_next(NOW, lane="cortex", owner="host:2:def/cortex#2", lease_seconds=60)
    stored = Inbox.get_by_id(row.id)
    assert (taken.owner, stored.owner, stored.status) == ("host:2:def/cortex#2",) * 2 + ("claimed",)
    assert stored.lease_until == taken.lease_until and stored.lease_until > clockmod.wall_now()
    assert [t.reason for t in trace.path(row.trace_id) if t.stage == "claimed"] == [
        f"inbox {row.id} priority 1 (message)",
        f"inbox {row.id} priority 1 (message), taken over from host:1:abc/cortex#1 whose lease ran out",
    ]


def test_a_claim_that_finds_nothing_changes_nothing(any_db):
    row = inbox.add(source="x", text="work", priority=1, at=NOW)
    held = inbox.claim_next(NOW, lane="cortex", owner="a", lease_seconds=60)
    before = (Inbox.get_by_id(row.id).__data__, len(trace.path(row.trace_id)))
    assert inbox.claim_next(NOW, lane="cortex", owner="b") is None
    assert inbox.claim_next(NOW, lane="cortex", owner="b", min_priority=2) is None
    assert (Inbox.get_by_id(row.id).__data__, len(trace.path(row.trace_id))) == before
    assert held.owner == "a"


def test_a_live_lease_is_not_taken(any_db):
    inbox.add(source="x", text="work", priority=1, at=NOW)
    assert inbox.claim_next(NOW, lane="cortex", owner="a") is not None
    assert inbox.claim_next(NOW, lane="cortex", owner="b") is None
    assert inbox.renew(["a"], lease_seconds=60) == 1


def test_a_row_that_hung_its_worker_every_time_is_given_up(any_db):
    row = inbox.add(source="x", text="poison", priority=1, at=NOW)
    for attempt in range(inbox.MAX_ATTEMPTS):
        assert inbox.claim_next(NOW, lane="cortex", owner=f"cortex#{attempt}").id == row.id
        inbox.release_owner(f"cortex#{attempt}")
    assert Inbox.get_by_id(row.id).status == "failed"
    assert inbox.claim_next(NOW, lane="cortex") is None
    assert [r.id for r in inbox.given_up("cortex")] == [row.id]  # for the cortex to tell the user
    inbox.mark_reported(row.id)
    assert inbox.given_up("cortex") == []


def test_outbox_is_delivered_once_per_idempotency_key(any_db):
    first = outbox.add(channel="repl", text="hi", trace_id="t", key="reply:1", at=NOW)
    again = outbox.add(channel="repl", text="hi", trace_id="t", key="reply:1", at=NOW)
    assert first.id == again.id
    assert outbox.mark_delivered(first.id, NOW, {"ok": True}) is True
    assert outbox.mark_delivered(first.id, NOW, {"ok": True}) is False


def test_buffer_rows_dedup_and_track_scanning(any_db):
    assert buffers.add(channel="email", text="a", dedup_key="email:1", at=NOW) is not None
    assert buffers.add(channel="email", text="a", dedup_key="email:1", at=NOW) is None
    assert [r.text for r in buffers.unscanned()] == ["a"]
    assert [r.text for r in buffers.unprocessed()] == ["a"]


def test_the_write_lock_serves_waiters_in_order_and_the_user_first():
    lock = FairLock()
    assert lock.acquire(timeout=1)
    order: list[str] = []

    def waiter(name: str, urgent: bool) -> threading.Thread:
        def run():
            if lock.acquire(timeout=5, urgent=urgent):
                order.append(name)
                lock.release()

        thread = threading.Thread(target=run)
        queued = len(lock._queue)
        thread.start()
        while len(lock._queue) == queued:  # wait until it stands in line
            clockmod.pause(0.001)
        return thread

    threads = [
        waiter("triage", False),
        waiter("hippocampus", False),
        waiter("user", True),
        waiter("tick", False),
        waiter("user again", True),
    ]
    lock.release()
    for thread in threads:
        thread.join()
    assert order == ["user", "user again", "triage", "hippocampus", "tick"]


def test_a_waiter_that_gives_up_leaves_the_line_and_the_next_one_goes():
    lock = FairLock()
    assert lock.acquire(timeout=1)
    got: dict[str, bool] = {}

    def waiter(name: str, timeout: float) -> threading.Thread:
        thread = threading.Thread(target=lambda: got.__setitem__(name, lock.acquire(timeout=timeout)))
        queued = len(lock._queue)
        thread.start()
        while len(lock._queue) == queued:
            clockmod.pause(0.001)
        return thread

    impatient, patient = waiter("impatient", 0.05), waiter("patient", 5)
    impatient.join()  # gave up at the head of the line
    lock.release()
    patient.join()
    assert got == {"impatient": False, "patient": True} and len(lock._queue) == 0


def test_upgrading_a_home_from_schema_v3_keeps_every_proposal_and_its_items(db):
    """Columns added to a table with children must not rebuild it: SQLite's rebuild drops the old
    table, and the drop cascades through the foreign key into the proposal's items."""
    added_since_v3 = {
        "approval": [
            "presented_at",
            "idempotency_key",
            "reason",
            "changes",
            "remind_at",
            "reminded_at",
            "expired_notice_at",
        ],
        "inbox": ["owner", "lease_until"],
        "outbox": ["next_attempt_at", "sending_at"],
        "turn": ["user_id"],
    }
    for index in db.get_indexes("approval"):
        if any(column in added_since_v3["approval"] for column in index.columns):
            db.execute_sql(f'DROP INDEX "{index.name}"')
    for table, columns in added_since_v3.items():
        for column in columns:
            db.execute_sql(f'ALTER TABLE "{table}" DROP COLUMN "{column}"')
    db.execute_sql('DROP TABLE "decision"')
    SchemaVersion.delete().where(SchemaVersion.version > 3).execute()
    naive = NOW.replace(tzinfo=None)
    db.execute_sql(
        "INSERT INTO approval (trace_id, status, approver, channel, summary, nonce, created_at, "
        "expires_at) VALUES ('t', 'pending', 'owner', 'repl', 'trip', 'n', ?, ?)",
        (naive, naive),
    )
    db.execute_sql(
        "INSERT INTO approval_item (approval_id, position, tool, args, description, status) "
        "VALUES (1, 1, 'create_task', '{}', 'New task: Book flights', 'pending')"
    )

    assert migrate() == MIGRATIONS[-1][0]
    approval = Approval.get_by_id(1)
    assert [i.description for i in approval.items] == ["New task: Book flights"]
    assert approval.reason == "" and approval.presented_at == NOW  # shown when it was made


def test_a_transaction_begun_inside_the_held_write_lock_fails_at_once_instead_of_waiting_for_itself(db):
    from storage.db import database, write_lock

    with write_lock():
        inbox.add(source="x", text="one", priority=1, at=NOW)  # statements commit one by one inside
        with pytest.raises(RuntimeError, match="cannot begin inside"):
            with database.atomic():
                pass
    with database.atomic():  # and the lock was let go
        inbox.add(source="x", text="two", priority=1, at=NOW)
    assert Inbox.select().count() == 2


def test_a_delivery_is_a_line_of_its_trace_whether_or_not_a_line_was_stored_for_it(any_db):
    # the REPL writes no line for a delivery (its row is the line); other channels, and older databases, do
    later = NOW.replace(minute=5)
    trace.record("t-1", "replied", "cortex", "reply on repl", NOW)
    quiet = outbox.add(channel="repl", text="hi", trace_id="t-1", key="a", at=NOW)
    stored = outbox.add(channel="telegram", text="hi", trace_id="t-1", key="b", at=NOW)
    waiting = outbox.add(channel="repl", text="later", trace_id="t-1", key="c", at=NOW)
    assert outbox.mark_delivered(quiet.id, NOW) and outbox.mark_delivered(stored.id, later)
    trace.record("t-1", "delivered", "telegram", f"outbox {stored.id}", later)
    trace.record("t-1", "filed", "email", "a copy kept", later)
    assert [(t.stage, t.actor, t.reason, t.at) for t in trace.path("t-1")] == [
        ("replied", "cortex", "reply on repl", NOW),
        ("delivered", "repl", f"outbox {quiet.id}", NOW),  # after the lines stored at its moment
        ("delivered", "telegram", f"outbox {stored.id}", later),  # once
        ("filed", "email", "a copy kept", later),
    ]
    assert waiting.id not in [int(t.reason.split()[-1]) for t in trace.path("t-1") if t.stage == "delivered"]


def test_held_lines_go_out_first_in_the_next_transaction_and_survive_its_rollback(any_db):
    from storage.db import database, has_transaction_hooks
    from storage.models import Trace

    def stages():
        return [t.stage for t in Trace.select().where(Trace.trace_id == "t-2").order_by(Trace.id)]

    with trace.held():
        trace.record("t-2", "claimed", "cortex", "inbox 1", NOW)
        assert stages() == ([] if has_transaction_hooks() else ["claimed"])  # PostgreSQL: written at once
        with pytest.raises(RuntimeError), database.atomic():
            trace.record("t-2", "refused", "cortex", "rolled back", NOW)
            raise RuntimeError
        assert stages() == ([] if has_transaction_hooks() else ["claimed"])
        with database.atomic():
            trace.record("t-2", "replied", "cortex", "reply on repl", NOW)
        assert stages() == ["claimed", "replied"]  # the held line first, as it was recorded first
        trace.record("t-2", "offline", "synapse", "rule", NOW)
    assert stages() == ["claimed", "replied", "offline"]  # the rest when the block ends


def test_recover_writes_the_claim_line_a_killed_run_held_back(any_db):
    row = inbox.add(source="repl", text="hi", priority=0, at=NOW)
    gone = f"{socket.gethostname()}:{2**22 + 7}:0badc0/cortex-realtime#1"
    with trace.held():
        inbox.claim_next(NOW, lane="cortex-realtime", owner=gone)
        (getattr(trace._local, "held", None) or []).clear()  # the process dies here: what it held is gone
    assert inbox.recover(NOW) == 1
    assert [(t.stage, t.actor, t.reason) for t in trace.path(row.trace_id)] == [
        ("routed", "thalamus", "inbox priority 0 from repl"),
        ("claimed", "cortex-realtime", f"inbox {row.id} priority 0 (message)"),
        ("released", "inbox", f"inbox {row.id} taken over from {gone}, which is gone"),
    ]
    assert inbox.recover(NOW) == 0  # nothing claimed is left: nothing more is written


def test_a_run_finished_in_its_transaction_says_whether_a_claim_would_find_more(any_db):
    from storage.db import database

    first = inbox.add(source="repl", text="one", priority=0, at=NOW)
    inbox.add(source="email", text="later", priority=2, at=NOW)
    claimed = inbox.claim_next(NOW, lane="cortex-realtime", max_priority=0, owner="me")
    assert inbox.more_after(claimed.id, 0)  # not finished yet: not known, so the drain claims and sees
    with database.atomic():
        inbox.finish(first.id, NOW, owner="me")
    assert not inbox.more_after(first.id, 0)  # the realtime lane has nothing left
    second = inbox.add(source="repl", text="two", priority=0, at=NOW)
    inbox.claim_next(NOW, lane="cortex-realtime", max_priority=0, owner="me")
    inbox.add(source="repl", text="three", priority=0, at=NOW)
    with database.atomic():
        inbox.finish(second.id, NOW, owner="me")
    assert inbox.more_after(second.id, 0)  # "three" waits
    assert inbox.more_after(second.id, 99)  # asked again: not known any more


def test_a_finish_whose_transaction_was_rolled_back_no_longer_says_nothing_is_left(any_db):
    """A run's commit that fails takes its finish back: the row is pending again, so the lane must look again."""
    from storage.db import database

    row = inbox.add(source="repl", text="one", priority=0, at=NOW)
    inbox.claim_next(NOW, lane="cortex-realtime", max_priority=0, owner="me")
    with pytest.raises(RuntimeError), database.atomic():
        inbox.finish(row.id, NOW, owner="me")  # its look saw nothing else to claim
        raise RuntimeError("the commit failed")
    assert inbox.fail_or_retry(row.id, NOW, "RuntimeError: the commit failed", owner="me") == "pending"
    assert inbox.more_after(row.id, 0)
    assert inbox.claim_next(NOW, lane="cortex-realtime", max_priority=0, owner="me").id == row.id


def test_a_finished_run_whose_lease_lapsed_does_not_count_itself_as_more(any_db):
    """The look rides on the finish's UPDATE, whose RETURNING sees the row before the change on PostgreSQL."""
    from storage.db import database

    row = inbox.add(source="repl", text="slow one", priority=0, at=NOW)
    inbox.claim_next(NOW, lane="cortex-realtime", max_priority=0, owner="me", lease_seconds=-60)
    with database.atomic():
        inbox.finish(row.id, NOW, owner="me")
    assert not inbox.more_after(row.id, 0)
    assert Inbox.get_by_id(row.id).status == "done"
    with database.atomic(), pytest.raises(inbox.LostClaim):  # done already: no longer this owner's to finish
        inbox.finish(row.id, NOW, owner="me")


def test_a_realtime_row_is_its_own_routing_line_and_a_modify_request_has_none(any_db):
    from storage import routing

    row = routing.commit_realtime(source="telegram", text="hi", user_id="7", at=NOW)
    trace.record(row.trace_id, "claimed", "cortex-realtime", inbox.claim_reason(row), NOW)  # the same moment
    assert [(t.stage, t.actor, t.reason) for t in trace.path(row.trace_id)] == [
        ("routed", "thalamus", "inbox priority 0 from telegram"),
        ("claimed", "cortex-realtime", f"inbox {row.id} priority 0 (message)"),
    ]
    # a database from before: its stored line is shown once
    trace.record(row.trace_id, "routed", "thalamus", "inbox priority 0 from telegram", NOW)
    assert [t.stage for t in trace.path(row.trace_id)].count("routed") == 1
    trace.record("t-p", "proposed", "cortex", "proposal 1 with 1 item(s)", NOW)
    inbox.add(
        source="telegram",
        text="make it Friday",
        priority=0,
        at=NOW,
        kind="modify",
        origin="user",
        reply_channel="telegram",
        trace_id="t-p",
    )
    assert [t.stage for t in trace.path("t-p")] == ["proposed"]


def test_held_lines_of_a_savepoint_rolled_back_go_with_it_and_the_rest_in_one_statement_at_commit(any_db):
    from storage.db import database
    from storage.models import Trace

    with trace.held():
        trace.record("t-3", "claimed", "cortex", "inbox 1", NOW)
        with database.atomic():
            trace.record("t-3", "routed", "cortex", "deep: a request", NOW)
            with pytest.raises(RuntimeError), database.atomic():  # a savepoint
                trace.record("t-3", "proposed", "cortex", "undone", NOW)
                raise RuntimeError
            with database.atomic():
                trace.record("t-3", "replied", "cortex", "reply on repl", NOW)
    lines = list(Trace.select().where(Trace.trace_id == "t-3").order_by(Trace.id))
    assert [t.stage for t in lines] == ["claimed", "routed", "replied"]


def test_lines_held_in_a_block_that_ends_inside_an_open_transaction_go_into_it(any_db):
    from storage.db import database
    from storage.models import Trace

    def stages(trace_id):
        return [t.stage for t in Trace.select().where(Trace.trace_id == trace_id).order_by(Trace.id)]

    with database.atomic():
        with trace.held():
            trace.record("t-4", "dropped", "thalamus", "ads", NOW)
        trace.record("t-4", "triaged", "thalamus", "after the block", NOW)
    assert stages("t-4") == ["dropped", "triaged"]
    with pytest.raises(RuntimeError), database.atomic():
        with trace.held():
            trace.record("t-5", "dropped", "thalamus", "ads", NOW)
        raise RuntimeError
    assert stages("t-5") == [], "rolled back with the transaction it was written in"


def test_the_inbox_keeps_one_index_on_status_and_an_older_home_loses_its_second(any_db):
    """(status, priority, id) serves every look by status: the index on status alone only cost writes (v18)."""

    def status_indexes():
        return sorted(tuple(i.columns) for i in any_db.get_indexes("inbox") if i.columns[:1] == ["status"])

    assert status_indexes() == [("status", "priority", "id")]
    any_db.execute_sql('CREATE INDEX "inbox_status" ON "inbox" ("status")')  # as v1 made it until v18
    SchemaVersion.delete().where(SchemaVersion.version >= 18).execute()
    assert status_indexes() == [("status",), ("status", "priority", "id")]
    assert migrate() == MIGRATIONS[-1][0]
    assert status_indexes() == [("status", "priority", "id")]
    row = inbox.add(source="repl", text="hello", priority=0, at=NOW)
    assert inbox.claim_next(NOW).id == row.id


def test_a_hot_statement_on_sqlite_holds_the_write_lock_raises_peewees_errors_and_is_seen_by_query_hooks(db):
    """storage/hot.py runs its statements on the connection itself (storage/db.py run_hot), not through peewee."""
    import peewee

    from storage import hot

    taken = []
    take = db._take_writer
    db._take_writer = lambda: (taken.append("write"), take())[1]
    try:
        row = inbox.add(source="x", text="one", priority=1, at=NOW)  # a write takes this process' lock
        hot.by_id(Inbox, row.id)  # a read does not
    finally:
        db._take_writer = take
    assert taken == ["write"] and db._writer.acquire(timeout=0)  # and let it go again
    db._writer.release()
    with pytest.raises(peewee.IntegrityError):
        hot.execute("no trace id", lambda: 'INSERT INTO "inbox" ("source") VALUES (?)', ["x"])
    seen = []
    db.query_hooks.append(lambda event: seen.append(event.sql))
    try:
        assert hot.by_id(Inbox, row.id).text == "one"
    finally:
        db.query_hooks.clear()
    assert seen and seen[0].startswith("SELECT") and '"inbox"' in seen[0]  # what bench/common.py's recorder uses
