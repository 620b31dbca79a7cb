"""Prepared reads (storage/prepared.py): the rows peewee's own query gives, from text built once per backend."""

from __future__ import annotations

import importlib
import pkgutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import peewee
import pytest

from storage import engram, hot, outbox
from storage.models import Approval, ApprovalItem, Outbox, Task
from storage.prepared import Prepared, prepared

ROOT = Path(__file__).resolve().parent.parent

NOW = datetime(2027, 1, 5, 8, 0, tzinfo=timezone.utc)
BERLIN = timezone(timedelta(hours=1))


def _mail(n: int) -> None:
    for i in range(n):
        outbox.add(
            channel="calendar" if i % 2 else "repl",
            text=f"line {i}",
            trace_id=f"t{i}",
            key=f"k{i}",
            at=NOW + timedelta(hours=i),
        )


def test_a_prepared_read_gives_the_rows_and_instances_the_plain_query_gives(any_db):
    _mail(6)
    Task.create(title="Renew the passport", due=NOW + timedelta(days=3), created_at=NOW)
    Task.create(title="Book the flights", due=NOW + timedelta(days=9), created_at=NOW)

    owed = prepared(
        lambda s: (
            Outbox.select(Outbox.id, Outbox.text)
            .where((Outbox.channel == s.channel) & Outbox.status.in_(outbox.DUE))
            .order_by(Outbox.id)
        )
    )
    plain = Outbox.select(Outbox.id, Outbox.text).where((Outbox.channel == "calendar") & Outbox.status.in_(outbox.DUE))
    assert (
        owed.rows(channel="calendar") == list(plain.order_by(Outbox.id).tuples())
        and len(owed.rows(channel="calendar")) == 3
    )

    # a moment given in another zone is converted as the field converts it: the same rows match
    since = prepared(lambda s: Outbox.select().where(Outbox.created_at >= s.since).order_by(Outbox.id))
    moment = (NOW + timedelta(hours=3)).astimezone(BERLIN)
    got = since.models(since=moment)
    want = list(Outbox.select().where(Outbox.created_at >= moment).order_by(Outbox.id))
    assert [r.__data__ for r in got] == [r.__data__ for r in want] and len(got) == 3
    assert isinstance(got[0], Outbox) and got[0].created_at == NOW + timedelta(hours=3)

    due = prepared(
        lambda s: Task.select().where(Task.due < s.before, Task.title != s.not_titled).order_by(Task.due).limit(1)
    )
    assert [t.title for t in due.models(before=NOW + timedelta(days=30), not_titled="x")] == ["Renew the passport"]
    assert due.models(before=NOW, not_titled="x") == []
    count = prepared(lambda s: Task.select(peewee.fn.COUNT(Task.id)).where(Task.due >= s.since))
    assert count.value(since=NOW + timedelta(days=5)) == 1

    # a foreign key's slot takes an id or the row itself, as the field does; JSON comes back as it went in
    approval = Approval.create(
        trace_id="t", approver="1", channel="repl", nonce="n", created_at=NOW, expires_at=NOW + timedelta(days=1)
    )
    for position in (2, 1):
        ApprovalItem.create(
            approval=approval, position=position, tool="create_task", args={"n": position}, description="d"
        )
    items = prepared(
        lambda s: ApprovalItem.select().where(ApprovalItem.approval == s.approval).order_by(ApprovalItem.position)
    )
    assert [i.args for i in items.models(approval=approval.id)] == [{"n": 1}, {"n": 2}]
    assert [i.id for i in items.models(approval=approval)] == [
        i.id for i in approval.items.order_by(ApprovalItem.position)
    ]


def test_the_text_is_built_once_per_backend(any_db):
    built = []

    def build(s):
        built.append(1)
        return Outbox.select(Outbox.id).where(Outbox.channel == s.channel)

    read = prepared(build)
    for channel in ("repl", "calendar", "telegram"):
        read.rows(channel=channel)
    assert len(built) == 1


def test_a_wrong_slot_a_none_or_models_of_a_partial_select_is_a_clear_error(db):
    read = prepared(lambda s: Outbox.select(Outbox.id).where(Outbox.channel == s.channel))
    with pytest.raises(TypeError, match=r"slots are \['channel'\]; given \['chanel'\]"):
        read.rows(chanel="repl")
    with pytest.raises(TypeError, match="IS NULL"):
        read.rows(channel=None)
    with pytest.raises(TypeError, match="every column"):
        read.models(channel="repl")


def _everywhere() -> list[tuple[str, Prepared]]:
    """Every prepared read Wilson's packages define (alone, or in a tuple or dict of them), by where it is."""
    found = []
    for package in ("actors", "channels", "storage", "wilson"):
        for info in pkgutil.walk_packages([str(ROOT / package)], prefix=f"{package}."):
            if info.name.endswith("__main__"):
                continue  # a command's entry point runs when imported
            module = importlib.import_module(info.name)
            for name, value in vars(module).items():
                values = value.values() if isinstance(value, dict) else value if isinstance(value, tuple) else [value]
                found += [(f"{info.name}.{name}", v) for v in values if isinstance(v, Prepared)]
    return found


def test_every_prepared_read_builds_its_text_on_each_backend(any_db):
    found = _everywhere()
    assert len(found) >= 20, [where for where, _ in found]  # the nightly, morning and tick reads among them
    for where, read in found:
        assert read.text().lstrip().upper().startswith(("SELECT", "UPDATE")), where


def test_rows_by_ids_are_the_rows_peewee_reads_whatever_the_count(any_db):
    made = [Task.create(title=f"Task {i}", due=NOW + timedelta(days=i), created_at=NOW) for i in range(40)]
    ids = [t.id for t in made]
    for wanted in ([], ids[:1], ids[3:6], ids[::-1][:13], ids, ids + ids[:5], [ids[0], 99999]):
        got = hot.by_ids(Task, wanted)
        plain = list(Task.select().where(Task.id.in_(wanted or [0])).order_by(Task.id))
        assert [t.__data__ for t in got] == [t.__data__ for t in plain]
    assert [t.title for t in hot.by_ids(Task, [ids[5], ids[2]])] == ["Task 2", "Task 5"]
    # padded with the last value to a power of two: three lengths share one statement's text
    assert hot.padded([1, 2, 3]) == [1, 2, 3, 3] and hot.padded([7]) == [7] and len(hot.padded(list(range(5)))) == 8


def test_live_memories_are_found_by_kind_and_text_and_an_invalidated_one_is_not(any_db):
    at = NOW
    first = engram.store("belief", "User lets early reminders about taxes pass", [], at)
    engram.store("principle", "Remind about taxes only when it is due", [], at)
    gone = engram.store("belief", "User drinks tea", [], at)
    engram.invalidate(gone.id, at, "said otherwise")
    texts = ["user lets early reminders about taxes pass", "Remind about taxes only when it is due", "User drinks tea"]
    texts += [f"nothing kept {i}" for i in range(9)]
    found = engram.find_live(("belief", "principle"), texts)
    assert sorted(found) == [("belief", engram.make_key(texts[0])), ("principle", engram.make_key(texts[1]))]
    assert found[("belief", engram.make_key(texts[0]))].id == first.id
    assert engram.find_live(("episode",), texts) == {} and engram.find_live(("belief",), []) == {}


def test_an_update_by_id_writes_what_peewee_writes_and_only_that_row(any_db):
    one, other = (Task.create(title=f"Task {i}", due=NOW, created_at=NOW) for i in range(2))
    moved = (NOW + timedelta(days=2)).astimezone(BERLIN)  # another zone: stored as the field stores it
    assert hot.update_by_id(Task, one.id, due=moved, status="done") == 1
    Task.update(due=moved, status="done").where(Task.id == other.id).execute()
    raw = any_db.execute_sql('SELECT "due", "status" FROM "task" ORDER BY "id"').fetchall()
    assert tuple(raw[0]) == tuple(raw[1])  # the same text in the database
    assert Task.get_by_id(one.id).due == NOW + timedelta(days=2)
    assert hot.update_by_id(Task, 99999, status="done") == 0


def test_a_prepared_write_changes_what_peewees_changes_and_a_slot_among_its_new_values_is_refused(any_db):
    _mail(4)
    held = prepared(
        lambda s: Outbox.update(status="held").where((Outbox.channel == "repl") & (Outbox.created_at < s.before))
    )
    assert held.run(before=(NOW + timedelta(hours=3)).astimezone(BERLIN)) == 2  # a moment in another zone converted
    assert [o.status for o in Outbox.select().order_by(Outbox.id)] == ["held", "pending", "held", "pending"]
    with pytest.raises(TypeError, match="new values are constants"):
        prepared(lambda s: Outbox.update(status=s.status).where(Outbox.id == s.id)).run(status="held", id=1)
