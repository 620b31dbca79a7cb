"""Engram: dedup by normalised text, recall on the database's full-text engine, invalidation and pruning.

Runs on SQLite always, and on PostgreSQL too when WILSON_TEST_DATABASE_URL names one.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import peewee
import pytest

from storage import engram, reads, recall
from storage import trace as traces
from storage.db import database, open_database
from storage.migrations import migrate
from storage.models import Memory

T0 = datetime(2027, 1, 10, 3, 0, tzinfo=timezone.utc)


@pytest.fixture
def db(any_db):
    """Every test here runs on each backend (conftest.py any_db)."""
    return any_db


def test_normalised_key_ignores_case_punctuation_and_spacing():
    assert engram.normalise("  User BOOKS flights, late!  ") == "user books flights late"
    assert engram.normalise("user's   “flights”\n") == "users flights"
    assert engram.make_key("A" * 300) != engram.make_key("A" * 299 + "B")
    assert len(engram.make_key("word " * 200)) <= 255


def test_query_terms_skip_filler_and_keep_word_forms_for_the_engine():
    assert engram.terms("The user booked the flights") == ["booked", "flights"]
    assert engram.terms("the and of") == []


def test_recall_meets_across_word_forms(db):
    late = engram.store("belief", "The user booked the flights late", [], T0)
    assert [m.id for m in recall.recall("booking a flight")] == [late.id]
    assert [m.id for m in recall.recall("books flights")] == [late.id]


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
    # Indexed once per memory, not once per store: one hit per live memory.
    assert sorted(m.id for m in recall.recall("flights late", limit=10)) == sorted([first.id, other_kind.id])


def test_store_many_ends_where_storing_one_by_one_ends(db):
    entries = [
        ("User said: hi", ["turn:1"]),
        ("The user said: pay the gas bill", ["turn:2"]),
        ("user said HI", ["turn:3"]),
        ("The user said: pay the gas bill!", ["turn:2", "turn:4"]),
    ]
    engram.store("episode", "User said: hi", ["turn:0"], T0)
    engram.store("interpretation", "The user said: pay the gas bill", ["turn:9"], T0)  # another kind: untouched
    one_by_one = [engram.store("episode", text, prov, T0) for text, prov in entries]
    expected = sorted(
        (m.key, Memory.get_by_id(m.id).strength, tuple(Memory.get_by_id(m.id).provenance))
        for m in {m.id: m for m in one_by_one}.values()
    )
    Memory.delete().where(Memory.kind == "episode").execute()

    engram.store("episode", "User said: hi", ["turn:0"], T0)
    assert engram.store_many("episode", entries, T0) == 1  # one new memory; "hi" was there already
    stored = sorted((m.key, m.strength, tuple(m.provenance)) for m in Memory.select().where(Memory.kind == "episode"))
    assert stored == expected
    assert [m.text for m in recall.recall("gas bill", kinds=("episode",))] == ["The user said: pay the gas bill"]


def test_store_refuses_empty_text(db):
    with pytest.raises(ValueError):
        engram.store("episode", "   ", [], T0)


def test_recall_ranks_by_text_then_importance_and_recency(db):
    late = engram.store("interpretation", "user books flights late", ["task:1"], T0)
    cheap = engram.store("interpretation", "flights to Lisbon are cheap in spring", ["turn:1"], T0)
    engram.store("episode", "dentist appointment moved to Friday", ["task:9"], T0)

    found = recall.recall("book flights late")
    assert [m.id for m in found] == [late.id, cheap.id]  # more of the query's words win
    assert found[0].relevance > found[1].relevance > 0
    assert found[0].score > found[1].score

    # Equal text: the stronger, the higher-rung and the more recent memory comes first.
    weak = engram.store("interpretation", "user likes aisle seats", [], T0)
    strong = engram.store("interpretation", "user likes window seats", [], T0, weight=6)
    assert [m.id for m in recall.recall("seats")] == [strong.id, weak.id]
    belief = engram.store("belief", "user likes quiet trains", [], T0)
    episode = engram.store("episode", "user took noisy trains", [], T0)
    assert [m.id for m in recall.recall("trains")] == [belief.id, episode.id]
    old = engram.store("episode", "paid the gas bill", [], T0)
    new = engram.store("episode", "paid the water bill", [], T0 + timedelta(days=120))
    assert [m.id for m in recall.recall("bill", at=T0 + timedelta(days=121))] == [new.id, old.id]
    # Weights come from config: with recency off, age no longer counts, and the two tie.
    no_recency = recall.Weights(recency=0.0)
    first, second = recall.recall("bill", at=T0 + timedelta(days=121), weights=no_recency)
    assert {first.id, second.id} == {new.id, old.id} and first.score == second.score

    assert recall.recall("book flights late", limit=1)[0].id == late.id
    assert recall.recall("gardening") == []
    assert recall.recall("the of and") == []
    assert [m.text for m in recall.recall("dentist", kinds=("episode",))] == ["dentist appointment moved to Friday"]
    assert recall.recall("dentist", kinds=("belief",)) == []


def test_query_text_cannot_speak_the_engines_syntax(db):
    engram.store("belief", "user books flights late", [], T0)
    for nasty in ['flights" OR "x', "flights & !late | (", "NEAR(flights late)", "flights:* <-> late", "'; DROP"]:
        recall.recall(nasty)  # no syntax error from FTS5 or to_tsquery
    assert [m.text for m in recall.recall('"flights"* AND')] == ["user books flights late"]


def test_weights_are_read_from_the_memory_section():
    class Config:
        def get(self, section, key, default=None):
            return {"weight_recency": "0.5", "half_life_days": 10}.get(key) if section == "memory" else None

    weights = recall.Weights.from_config(Config())
    assert (weights.recency, weights.half_life_days, weights.text) == (0.5, 10.0, 1.0)


def test_the_core_profile_is_the_strongest_live_beliefs_and_principles(db):
    engram.store("episode", "a strong episode", [], T0, weight=9)
    belief = engram.store("belief", "user books flights late", [], T0, weight=3)
    principle = engram.store("principle", "Propose flight booking earlier than usual", [], T0, weight=4)
    gone = engram.store("belief", "user hates trains", [], T0, weight=8)
    engram.invalidate(gone.id, T0, "said otherwise")
    assert [m.id for m in engram.profile()] == [principle.id, belief.id]


def test_recall_excludes_invalidated_and_answers_as_of_a_moment(db):
    late = engram.store("belief", "user books flights late", ["approval:1"], T0)
    later = engram.store("belief", "flights are booked by the assistant", ["turn:4"], T0 + timedelta(days=5))

    assert engram.invalidate(late.id, T0 + timedelta(days=3), "contradicted by task:7")
    assert not engram.invalidate(late.id, T0 + timedelta(days=4), "again")  # once is enough

    assert [m.id for m in recall.recall("flights")] == [later.id]
    # As things stood on day 1: the belief held and the later one did not exist yet.
    assert [m.id for m in recall.recall("flights", at=T0 + timedelta(days=1))] == [late.id]
    assert [m.id for m in recall.recall("flights", at=T0 + timedelta(days=4))] == []

    reasons = [r.reason for r in traces.path(f"memory:{late.id}")]
    assert reasons == ["contradicted by task:7"]

    # A contradicted thought that comes back starts over instead of reviving.
    fresh = engram.store("belief", "user books flights late", ["task:8"], T0 + timedelta(days=6))
    assert fresh.id != late.id and fresh.strength == 1.0
    assert engram.find("belief", "User books flights late").id == fresh.id


def test_prune_removes_weak_old_and_long_invalidated_memories(db):
    now = T0 + timedelta(days=200)
    engram.store("episode", "old passing remark about weather", [], T0)
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
    assert [m.id for m in recall.recall("weather")] == [weak_new.id]
    assert engram.prune(now, min_strength=2, older_than=timedelta(days=90)) == 0


def test_prune_can_be_limited_to_kinds(db):
    now = T0 + timedelta(days=200)
    episode = engram.store("episode", "weak episode", [], T0)
    engram.store("interpretation", "weak interpretation", [], T0)
    assert engram.prune(now, 2, timedelta(days=90), kinds=("episode",)) == 1
    assert not Memory.select().where(Memory.id == episode.id).exists()
    assert Memory.select().count() == 1


def test_memories_from_before_the_index_become_recallable_after_migration(tmp_path):
    from storage.migrations import MIGRATIONS
    from storage.models import SchemaVersion
    from wilson.kernel.clock import wall_now

    handle = open_database(None, tmp_path)
    try:
        # A home directory at schema v13 has memories and no full-text index.
        for number, _, step in [m for m in MIGRATIONS if m[0] <= 13]:
            step(handle, None)
            SchemaVersion.create(version=number, applied_at=wall_now())
        Memory.create(
            kind="belief",
            text="user prefers aisle seats",
            key="user prefers aisle seats",
            provenance=[],
            strength=2,
            created_at=T0,
        )
        assert migrate() >= 17
        assert [m.text for m in recall.recall("aisle seat")] == ["user prefers aisle seats"]
    finally:
        handle.close()


def test_recall_is_an_index_lookup_not_a_scan(db):
    engram.store("belief", "user books flights late", [], T0)
    sql, params = recall.recall_query("flights late")
    if isinstance(db, peewee.PostgresqlDatabase):
        # a tiny table is cheaper to read whole: forbid that, and the plan must find the GIN index
        database.execute_sql("SET enable_seqscan = off")
        plan = " ".join(str(r[0]) for r in database.execute_sql("EXPLAIN " + sql, params).fetchall())
        database.execute_sql("SET enable_seqscan = on")
        assert "memory_search" in plan, plan
    else:
        steps = [str(row[-1]) for row in database.execute_sql("EXPLAIN QUERY PLAN " + sql, params).fetchall()]
        assert any("VIRTUAL TABLE INDEX" in s for s in steps), steps  # the FTS5 index answers the match
        assert not [s for s in steps if s in ("SCAN m", "SCAN memory")], steps  # memory rows only by id


def test_bench_reports_a_ratio_and_leaves_the_database_alone(db):
    from bench import engram_recall

    engram.store("belief", "user books flights late", [], T0)
    result = engram_recall.run(quick=True, sizes=(200, 2000))
    assert set(result["sizes"]) == {200, 2000}
    assert result["ratio"] > 0 and result["sizes"][2000]["hits_of_20"] == 20
    assert [m.text for m in recall.recall("flights")] == ["user books flights late"]


def test_derived_memories_and_retired_evidence_are_found_on_each_database(db):
    belief = engram.store("belief", "user books flights late", ["task:1", "task:2"], T0)
    principle = engram.store("principle", "Propose flight booking earlier", ["task:1", f"memory:{belief.id}"], T0)
    engram.store("principle", "Keep in mind: cites memory:1x", [f"memory:{belief.id}0"], T0)  # another id
    assert [m.id for m in engram.derived_from([belief.id])] == [principle.id]
    assert not engram.was_retired("belief", "user books flights late", ["task:1"])
    engram.invalidate(belief.id, T0, "wrong")
    assert engram.was_retired("belief", "User books flights LATE", ["task:1"])
    assert not engram.was_retired("belief", "user books flights late", ["task:3"])


def test_episodes_repeating_one_sentence_do_not_bury_the_belief_drawn_from_them(db):
    belief = engram.store("belief", "user books Kyoto ryokans late", ["task:1"], T0, weight=3)
    for n in range(12):
        engram.store("episode", f"The user said: Kyoto ryokans booking question number{n}", [f"turn:{n}"], T0)
    query = "booking Kyoto ryokans question"
    assert belief.id not in [m.id for m in recall.text_matches(query, 10)]  # text alone: twelve echoes first
    assert belief.id in [m.id for m in recall.recall(query, 10)][:3]
    no_help = recall.Weights(importance=0.0, diversity=0.0)
    assert belief.id not in [m.id for m in recall.recall(query, 10, weights=no_help)]


def test_memory_bench_measures_recall_beside_the_bm25_baseline(db):
    from bench import memory_recall

    result = memory_recall.run(quick=True, sizes=(600,))
    row = result["sqlite 600"]
    assert set(row["recall"]) == {"recall@5", "recall@10", "p50_ms", "p99_ms"}
    assert row["recall"]["recall@10"] >= row["bm25"]["recall@10"]
    assert [m.text for m in recall.recall("flights")] == []  # the test's own database is left alone


def test_import_lines_store_memories_and_recall_rows_name_their_source(db):
    lines = [
        '{"text": "User books flights late", "at": "2027-01-02T10:00:00Z", "kind": "belief", "source": "s1"}',
        '{"text": "Dentist moved to Friday", "at": "2027-01-03T10:00:00+01:00", "source": 7}',
        '{"text": "user books flights LATE", "kind": "belief", "source": "s3"}',
        "not json",
        '{"text": ""}',
        '{"text": "x", "at": "yesterday"}',
        "",
    ]
    stored, problems = engram.import_lines(lines, T0)
    assert stored == 3 and [p.split(":")[0] for p in problems] == ["line 4", "line 5", "line 6"]
    belief = engram.find("belief", "user books flights late")
    assert belief.strength == 2 and belief.provenance == ["s1", "s3"]
    assert belief.created_at == datetime(2027, 1, 2, 10, tzinfo=timezone.utc)
    dentist = engram.find("episode", "Dentist moved to Friday")
    assert dentist.created_at == datetime(2027, 1, 3, 9, tzinfo=timezone.utc)
    rows = recall.recall_rows("flights")
    assert [(r["id"], r["kind"], r["source"], r["text"]) for r in rows] == [
        (belief.id, "belief", "s1", "User books flights late")
    ]
    assert set(rows[0]) == {"id", "kind", "score", "source", "text"}


def test_importing_ten_thousand_lines_stores_them_all(db):
    import json

    lines = [
        json.dumps({"text": f"note {n} about item{n % 997}", "at": "2027-01-02T10:00:00Z", "source": f"n{n}"})
        for n in range(10_000)
    ]
    assert engram.import_lines(lines, T0) == (10_000, [])
    assert Memory.select().count() == 10_000
    assert [r["source"] for r in recall.recall_rows("item5 note 5", limit=1)] == ["n5"]


def test_weight_diversity_is_a_setting_of_the_memory_skill(tmp_path):
    from wilson.kernel import config as configmod

    (tmp_path / "wilson.toml").write_text("[memory]\nweight_diversity = 0\n", encoding="utf-8")
    config = configmod.load(tmp_path, environ={})
    assert not [w for w in config.warnings if "weight_diversity" in w], config.warnings
    assert recall.Weights.from_config(config).diversity == 0.0
    assert recall.Weights.from_config(configmod.load(tmp_path / "fresh", environ={})).diversity == 0.5


def test_an_empty_engram_is_not_searched_and_the_first_memory_is_found(db, monkeypatch):
    monkeypatch.setattr(reads, "_engram_held", False)  # as in a process that never saw a memory
    asked = []
    monkeypatch.setattr(recall, "text_matches", lambda *a, **k: asked.append(a) or [])
    monkeypatch.setattr(reads, "strongest_memories", lambda *a, **k: asked.append(a) or [])
    assert recall.recall("flights") == [] and engram.profile(3) == [] and asked == []
    monkeypatch.undo()
    monkeypatch.setattr(reads, "_engram_held", False)
    engram.store("belief", "user books flights late", [], T0)
    assert [m.text for m in recall.recall("flights")] == ["user books flights late"]
    assert [m.text for m in engram.profile(3)] == ["user books flights late"]
