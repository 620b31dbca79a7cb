"""Engram: dedup by normalised text, indexed recall, invalidation and pruning.

Runs on SQLite always, and on PostgreSQL too when WILSON_TEST_DATABASE_URL names one.
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone

import peewee
import pytest

from storage import engram
from storage import trace as traces
from storage.db import database, open_database
from storage.engram import MemoryTerm
from storage.migrations import migrate
from storage.models import ALL_MODELS, Memory

T0 = datetime(2027, 1, 10, 3, 0, tzinfo=timezone.utc)

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=BACKENDS)
def db(request, tmp_path):
    if request.param == "postgres":
        url = os.environ.get("WILSON_TEST_DATABASE_URL")
        if not url:
            pytest.skip("WILSON_TEST_DATABASE_URL is not set")
        handle = open_database(url, tmp_path)
        handle.drop_tables(engram.ENGRAM_MODELS + ALL_MODELS, cascade=True)
    else:
        handle = open_database(None, tmp_path)
    migrate()
    yield handle
    if request.param == "postgres":
        handle.drop_tables(engram.ENGRAM_MODELS + ALL_MODELS, cascade=True)
    handle.close()


def test_normalised_key_ignores_case_punctuation_and_spacing():
    assert engram.normalise("  User BOOKS flights, late!  ") == "user books flights late"
    assert engram.normalise("user's   “flights”\n") == "users flights"
    assert engram.make_key("A" * 300) != engram.make_key("A" * 299 + "B")
    assert len(engram.make_key("word " * 200)) <= 255


def test_terms_meet_across_word_forms_and_skip_filler():
    assert engram.terms("The user booked the flights") == ["book", "flight"]
    assert engram.terms("booking a flight") == ["book", "flight"]
    assert engram.terms("taxes; passes; bus") == ["tax", "pass", "bus"]
    assert engram.terms("the and of") == []


def test_store_dedups_same_kind_and_key_by_strengthening(db):
    first = engram.store("interpretation", "User books flights late.", ["approval:1"], T0)
    again = engram.store("interpretation", "user  books FLIGHTS late", ["task:3", "approval:1"], T0 + timedelta(days=1))
    assert again.id == first.id
    row = Memory.get_by_id(first.id)
    assert row.strength == 2.0
    assert row.provenance == ["approval:1", "task:3"]
    assert row.text == "User books flights late."  # the first wording stays
    assert row.created_at == T0

    other_kind = engram.store("belief", "user books flights late", ["approval:1"], T0)
    assert other_kind.id != first.id
    assert Memory.select().count() == 2
    # Terms are indexed once per memory, not once per store.
    assert MemoryTerm.select().where(MemoryTerm.memory == first.id).count() == 3


def test_store_many_ends_where_storing_one_by_one_ends(db):
    entries = [("User said: hi", ["turn:1"]), ("The user said: pay the gas bill", ["turn:2"]),
               ("user said HI", ["turn:3"]), ("The user said: pay the gas bill!", ["turn:2", "turn:4"])]
    engram.store("episode", "User said: hi", ["turn:0"], T0)
    engram.store("interpretation", "The user said: pay the gas bill", ["turn:9"], T0)  # another kind: untouched
    one_by_one = [engram.store("episode", text, prov, T0) for text, prov in entries]
    expected = sorted((m.key, Memory.get_by_id(m.id).strength, tuple(Memory.get_by_id(m.id).provenance))
                      for m in {m.id: m for m in one_by_one}.values())
    expected_terms = MemoryTerm.select().count()
    Memory.delete().where(Memory.kind == "episode").execute()
    MemoryTerm.delete().execute()
    engram.reindex()

    engram.store("episode", "User said: hi", ["turn:0"], T0)
    assert engram.store_many("episode", entries, T0) == 1  # one new memory; "hi" was there already
    stored = sorted((m.key, m.strength, tuple(m.provenance)) for m in Memory.select().where(Memory.kind == "episode"))
    assert stored == expected
    assert MemoryTerm.select().count() == expected_terms
    assert [m.text for m in engram.recall("gas bill", kinds=("episode",))] == ["The user said: pay the gas bill"]


def test_store_refuses_empty_text(db):
    with pytest.raises(ValueError):
        engram.store("episode", "   ", [], T0)


def test_recall_ranks_by_matched_terms_times_strength(db):
    late = engram.store("interpretation", "user books flights late", ["task:1"], T0)
    cheap = engram.store("interpretation", "flights to Lisbon are cheap in spring", ["turn:1"], T0)
    engram.store("interpretation", "flights to Lisbon are cheap in spring", ["turn:2"], T0)  # strength 2
    engram.store("episode", "dentist appointment moved to Friday", ["task:9"], T0)

    found = engram.recall("book flights late")
    assert [m.id for m in found] == [late.id, cheap.id]  # 3 terms x 1 beats 1 term x 2
    assert (found[0].matched, found[0].score) == (3, 3.0)
    assert (found[1].matched, found[1].score) == (1, 2.0)

    for _ in range(2):  # strength 4: 1 term x 4 now beats 3 x 1
        engram.store("interpretation", "Flights to Lisbon are cheap in spring!", [], T0)
    assert [m.id for m in engram.recall("booking flights late")] == [cheap.id, late.id]

    assert engram.recall("booking flights late", limit=1)[0].id == cheap.id
    assert engram.recall("gardening") == []
    assert engram.recall("the of and") == []
    assert [m.text for m in engram.recall("dentist", kinds=("episode",))] == ["dentist appointment moved to Friday"]
    assert engram.recall("dentist", kinds=("belief",)) == []


def test_recall_excludes_invalidated_and_answers_as_of_a_moment(db):
    late = engram.store("belief", "user books flights late", ["approval:1"], T0)
    later = engram.store("belief", "flights are booked by the assistant", ["turn:4"], T0 + timedelta(days=5))

    assert engram.invalidate(late.id, T0 + timedelta(days=3), "contradicted by task:7")
    assert not engram.invalidate(late.id, T0 + timedelta(days=4), "again")  # once is enough

    assert [m.id for m in engram.recall("flights")] == [later.id]
    # As things stood on day 1: the belief held and the later one did not exist yet.
    assert [m.id for m in engram.recall("flights", at=T0 + timedelta(days=1))] == [late.id]
    assert [m.id for m in engram.recall("flights", at=T0 + timedelta(days=4))] == []

    reasons = [r.reason for r in traces.path(f"memory:{late.id}")]
    assert reasons == ["contradicted by task:7"]

    # A contradicted thought that comes back starts over instead of reviving.
    fresh = engram.store("belief", "user books flights late", ["task:8"], T0 + timedelta(days=6))
    assert fresh.id != late.id and fresh.strength == 1.0
    assert engram.find("belief", "User books flights late").id == fresh.id


def test_prune_removes_weak_old_and_long_invalidated_memories(db):
    now = T0 + timedelta(days=200)
    weak_old = engram.store("episode", "old passing remark about weather", [], T0)
    strong_old = engram.store("belief", "user likes window seats", [], T0, weight=3)
    weak_new = engram.store("episode", "new passing remark about weather", [], now - timedelta(days=2))
    dead_old = engram.store("belief", "user hates trains", [], T0, weight=5)
    engram.invalidate(dead_old.id, T0 + timedelta(days=1), "said otherwise")
    dead_new = engram.store("belief", "user hates buses", [], T0, weight=5)
    engram.invalidate(dead_new.id, now - timedelta(days=1), "said otherwise")

    removed = engram.prune(now, min_strength=2, older_than=timedelta(days=90))

    assert removed == 2
    left = {m.id for m in Memory.select()}
    assert left == {strong_old.id, weak_new.id, dead_new.id}
    assert not MemoryTerm.select().where(MemoryTerm.memory.in_([weak_old.id, dead_old.id])).exists()
    assert [m.id for m in engram.recall("weather")] == [weak_new.id]
    assert engram.prune(now, min_strength=2, older_than=timedelta(days=90)) == 0


def test_prune_can_be_limited_to_kinds(db):
    now = T0 + timedelta(days=200)
    episode = engram.store("episode", "weak episode", [], T0)
    engram.store("interpretation", "weak interpretation", [], T0)
    assert engram.prune(now, 2, timedelta(days=90), kinds=("episode",)) == 1
    assert not Memory.select().where(Memory.id == episode.id).exists()
    assert Memory.select().count() == 1


def test_memories_from_before_the_index_become_recallable_after_reindex(db):
    # A home directory from before schema v2 has memories but no terms.
    Memory.create(kind="belief", text="user prefers aisle seats", key="user prefers aisle seats",
                  provenance=[], strength=2, created_at=T0)
    assert engram.recall("aisle") == []
    assert engram.reindex() == 3
    assert [m.text for m in engram.recall("aisle seat")] == ["user prefers aisle seats"]


def test_recall_is_an_index_lookup_not_a_scan(db):
    if not isinstance(db, peewee.SqliteDatabase):
        pytest.skip("query plans are checked on SQLite")
    engram.store("belief", "user books flights late", [], T0)
    sql, params = engram.recall_query("flights late").sql()
    steps = [str(row[-1]) for row in database.execute_sql("EXPLAIN QUERY PLAN " + sql, params).fetchall()]
    assert not [s for s in steps if s.startswith("SCAN")], steps  # no table is read end to end
    assert any("INDEX memory_term_term" in s for s in steps), steps


def test_bench_reports_a_ratio_and_leaves_the_database_alone(db):
    from bench import engram_recall

    engram.store("belief", "user books flights late", [], T0)
    result = engram_recall.run(quick=True, sizes=(200, 2000))
    assert set(result["sizes"]) == {200, 2000}
    assert result["ratio"] > 0 and result["sizes"][2000]["hits_of_20"] == 20
    assert [m.text for m in engram.recall("flights")] == ["user books flights late"]
