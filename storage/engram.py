"""Engram: long-term memory. It stores; the hippocampus curates.

A memory is a line of text of some kind (episode, interpretation, belief,
principle, calibration) with its provenance and a strength. Storing the same
thought again (same kind, same normalised text) strengthens the existing row
instead of adding a second one, so repetition across nights is countable.

The database's own full-text engine indexes every memory: an FTS5 table kept in
step with `memory` by triggers on SQLite (porter stemming), a generated `tsvector`
column with a GIN index on PostgreSQL (English stemming and stop words). Finding
memories by text and ranking them is storage/recall.py; here are the plain reads
(the live memories, the core profile), by strength.

Size: one module for the memory table's writes and plain reads, because they share its keys (`make_key`), its
provenance rules and its one transaction per batch; the statements the nightly run and every briefing repeat are
built once here too, beside the peewee they stand in for.
"""

from __future__ import annotations

import functools
import hashlib
import json
import operator
import re
from datetime import datetime, timedelta

import peewee
from loguru import logger

from storage import hot, reads, trace
from storage.db import claim_transaction
from storage.models import Memory, Trace
from storage.prepared import prepared
from wilson.kernel.timeparse import utc_or_none

# The key column is a VARCHAR(255); longer texts keep a readable prefix plus a digest
# so that two different long texts never collide.
KEY_LIMIT = 255
RETIRED_BY_USER = "retired by the user"  # how `forget` (actors/hippocampus/skill.py) begins its reason

# Words that match nearly every memory add cost to a lookup and nothing to ranking
# (SQLite's FTS5 has no stop list of its own). "user" is here because almost every
# memory is about the user.
STOPWORDS = frozenset(
    """
a an and are as at be been but by can could did do does for from had has have he her
his i if in into is it its me my no not of on or our she so than that the their them
then there these they this those to too us was we were what when where which who why
will with would you your user users wilson
""".split()
)

_APOSTROPHES = re.compile(r"['\u2019\u02bc]")
_PUNCT = re.compile(r"[^\w\s]|_")
_SPACE = re.compile(r"\s+")

FTS_TABLE = "memory_fts"
SQLITE_FTS = [
    # External content: the text lives once, in `memory`; the index holds only postings.
    f"""CREATE VIRTUAL TABLE IF NOT EXISTS {FTS_TABLE} USING fts5(
        text, content='memory', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2')""",
    f"""CREATE TRIGGER IF NOT EXISTS memory_fts_insert AFTER INSERT ON memory BEGIN
        INSERT INTO {FTS_TABLE}(rowid, text) VALUES (new.id, new.text); END""",
    f"""CREATE TRIGGER IF NOT EXISTS memory_fts_delete AFTER DELETE ON memory BEGIN
        INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, text) VALUES ('delete', old.id, old.text); END""",
    f"""CREATE TRIGGER IF NOT EXISTS memory_fts_update AFTER UPDATE OF text ON memory BEGIN
        INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, text) VALUES ('delete', old.id, old.text);
        INSERT INTO {FTS_TABLE}(rowid, text) VALUES (new.id, new.text); END""",
]
POSTGRES_FTS = [
    """ALTER TABLE memory ADD COLUMN IF NOT EXISTS search tsvector
       GENERATED ALWAYS AS (to_tsvector('english', coalesce(text, ''))) STORED""",
    "CREATE INDEX IF NOT EXISTS memory_search ON memory USING GIN (search)",
]

LEARNED = ("principle", "belief")


# -- text ---------------------------------------------------------------------


@functools.lru_cache(maxsize=4096)  # the same titles and patterns are normalised every night and every morning
def normalise(text: str) -> str:
    """Lowercase, punctuation stripped, whitespace collapsed."""
    text = _APOSTROPHES.sub("", text.casefold())
    text = _PUNCT.sub(" ", text)
    return _SPACE.sub(" ", text).strip()


def make_key(text: str) -> str:
    norm = normalise(text)
    if len(norm) <= KEY_LIMIT:
        return norm
    digest = hashlib.sha1(norm.encode("utf-8")).hexdigest()
    return f"{norm[: KEY_LIMIT - len(digest) - 1]}#{digest}"


def terms(text: str) -> list[str]:
    """The searchable words of a text, in first-seen order, without repeats (stemming is the engine's)."""
    seen: dict[str, None] = {}
    for word in normalise(text).split():
        if word in STOPWORDS or (len(word) < 2 and not word.isdigit()):
            continue
        seen.setdefault(word[:64], None)
    return list(seen)


def _merge(old: list, new: list) -> list:
    merged = list(old or [])
    for item in new or []:
        if item not in merged:
            merged.append(item)
    return merged


# -- the index ------------------------------------------------------------------


def install_index(db) -> None:
    """Create the full-text index for this database (migration 17) and fill it from the memories."""
    if isinstance(db, peewee.PostgresqlDatabase):
        for statement in POSTGRES_FTS:  # a generated column fills itself for existing rows
            db.execute_sql(statement)
        return
    for statement in SQLITE_FTS:
        db.execute_sql(statement)
    db.execute_sql(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('rebuild')")


# -- writing ------------------------------------------------------------------


def find(kind: str, text: str) -> Memory | None:
    """The live (not invalidated) memory of this kind with this normalised text."""
    return (
        Memory.select()
        .where(Memory.kind == kind, Memory.key == make_key(text), Memory.invalidated_at.is_null())
        .order_by(Memory.id)
        .first()
    )


def store(kind: str, text: str, provenance: list[str] | None, at: datetime, *, weight: float = 1.0) -> Memory:
    """Remember `text`; the same thought again strengthens the live memory by `weight`.

    An invalidated memory is never revived: a thought that comes back after it was
    contradicted starts again from `weight`.
    """
    text = (text or "").strip()
    if not text:
        raise ValueError("a memory needs text")
    key = make_key(text)
    provenance = [str(p) for p in (provenance or [])]
    with claim_transaction():
        existing = find(kind, text)
        if existing is not None:
            existing.strength += weight
            existing.provenance = _merge(existing.provenance, provenance)
            existing.save(only=[Memory.strength, Memory.provenance])
            return existing
        return Memory.create(kind=kind, text=text, key=key, provenance=provenance, strength=weight, created_at=at)


def find_live(kinds: tuple[str, ...], texts: list[str]) -> dict[tuple[str, str], Memory]:
    """The live memory for each (kind, key) among `kinds` x `texts`, read in one query per `hot.IN_CHUNK` keys
    (a key's memories of other kinds and invalidated ones come too, and are left out here: they are few).

    The batch form of `find`: a consolidation looks up hundreds of texts inside its write
    transaction, and one query each would hold the write lock for all of them."""
    keys = {make_key(t) for t in texts if t and t.strip()}
    found: dict[tuple[str, str], Memory] = {}
    for memory in hot.among(Memory, Memory.key, keys):  # by id: the oldest first, as `find` answers
        if memory.kind in kinds and memory.invalidated_at is None:
            found.setdefault((memory.kind, memory.key), memory)
    return found


def store_many(kind: str, entries: list[tuple[str, list[str]]], at: datetime, *, weight: float = 1.0) -> int:
    """`store` for many (text, provenance) entries of one kind, with a handful of statements.

    The result is what storing them one by one gives: a text already live (or seen earlier
    in `entries`) is strengthened by `weight` per mention and gains the provenance; new texts
    become memories. Returns how many memories were created."""
    return write_batch(prepare_batch(kind, entries, weight=weight), at)


def prepare_batch(kind: str, entries: list[tuple[str, list[str]]], *, weight: float = 1.0) -> dict:
    """The pure half of `store_many` (keys, merged provenance), done before any lock is taken."""
    merged: dict[str, dict] = {}  # key -> text, provenance, mentions, in first-seen order
    for text, provenance in entries:
        text = (text or "").strip()
        if not text:
            raise ValueError("a memory needs text")
        entry = merged.setdefault(make_key(text), {"text": text, "provenance": [], "mentions": 0})
        entry["provenance"] = _merge(entry["provenance"], [str(p) for p in (provenance or [])])
        entry["mentions"] += 1
    return {"kind": kind, "weight": weight, "entries": merged}


def write_batch(batch: dict, at: datetime) -> int:
    """The writing half of `store_many`; returns how many memories were created."""
    kind, weight, merged = batch["kind"], batch["weight"], batch["entries"]
    if not merged:
        return 0
    with claim_transaction():
        existing = find_live((kind,), [e["text"] for e in merged.values()])
        new = []
        for key, entry in merged.items():
            memory = existing.get((kind, key))
            if memory is None:
                new.append(
                    {
                        "kind": kind,
                        "text": entry["text"],
                        "key": key,
                        "provenance": entry["provenance"],
                        "strength": weight * entry["mentions"],
                        "created_at": at,
                    }
                )
                continue
            memory.strength += weight * entry["mentions"]
            memory.provenance = _merge(memory.provenance, entry["provenance"])
            memory.save(only=[Memory.strength, Memory.provenance])
        for start in range(0, len(new), 100):  # the index follows by trigger (SQLite) or generated column
            Memory.insert_many(new[start : start + 100]).execute()
    return len(new)


def invalidate(memory_id: int, at: datetime, reason: str) -> bool:
    """Mark a memory as no longer true (kept for provenance, excluded from recall)."""
    updated = Memory.update(invalidated_at=at).where(Memory.id == memory_id, Memory.invalidated_at.is_null()).execute()
    if updated:
        # The reason lives in the trace so that `wilson trace memory:<id>` explains it.
        trace.record(f"memory:{memory_id}", "invalidated", "engram", reason, at, data={"memory": memory_id})
    return bool(updated)


def derived_from(memory_ids: list[int]) -> list[Memory]:
    """Live memories whose provenance cites one of `memory_ids` (one step down the ladder)."""
    wanted = {f"memory:{i}" for i in memory_ids}
    if not wanted:
        return []
    # provenance is a JSON list in a text column: a LIKE narrows, the exact check is in Python
    # the pattern is matched raw: the JSON field would otherwise encode it as a JSON string first
    like = functools.reduce(
        operator.or_,
        [
            peewee.Expression(Memory.provenance, peewee.OP.ILIKE, peewee.Value(f'%"{w}"%', converter=False))
            for w in wanted
        ],
    )
    query = Memory.select().where(Memory.invalidated_at.is_null() & like)
    return [m for m in query if wanted & set(m.provenance or [])]


def was_retired(kind: str, text: str, provenance: list[str]) -> bool:
    """True when a memory of this kind and text was invalidated while resting on all of `provenance`:
    the same evidence must not bring it back."""
    evidence = {str(p) for p in provenance or []}
    gone = Memory.select(Memory.provenance).where(
        Memory.kind == kind, Memory.key == make_key(text), Memory.invalidated_at.is_null(False)
    )
    return bool(evidence) and any(evidence <= set(m.provenance or []) for m in gone)


RETIRED = prepared(
    lambda s: Memory.select(Memory.id).where(
        (Memory.kind == s.kind) & (Memory.key == s.key) & Memory.invalidated_at.is_null(False)
    )
)


def retired_by_user(kind: str, text: str) -> bool:
    """Whether the user retired a memory of this kind and text (`forget`): no evidence brings such a one back."""
    gone = [memory_id for (memory_id,) in RETIRED.rows(kind=kind, key=make_key(text))]
    return bool(gone) and (
        Trace.select()
        .where(Trace.trace_id.in_([f"memory:{i}" for i in gone]) & Trace.reason.startswith(RETIRED_BY_USER))
        .exists()
    )


def _prunable(s):
    weak = (Memory.strength < s.below) & (Memory.created_at < s.cutoff)
    return weak | (Memory.invalidated_at.is_null(False) & (Memory.invalidated_at < s.cutoff))


# read every night: the texts built once
PRUNABLE = prepared(lambda s: Memory.select(Memory.id).where(_prunable(s)))
PRUNABLE_OF_KIND = prepared(lambda s: Memory.select(Memory.id).where((Memory.kind == s.kind) & _prunable(s)))


def prune(at: datetime, min_strength: float, older_than: timedelta, *, kinds: tuple[str, ...] | None = None) -> int:
    """Forget memories weaker than `min_strength` created before `at - older_than`,
    and memories invalidated before then. Returns how many were removed."""
    cutoff = at - older_than
    with claim_transaction():
        if kinds:
            found = [PRUNABLE_OF_KIND.rows(kind=kind, below=min_strength, cutoff=cutoff) for kind in kinds]
        else:
            found = [PRUNABLE.rows(below=min_strength, cutoff=cutoff)]
        ids = [memory_id for rows in found for (memory_id,) in rows]
        removed = 0
        # Chunked so that a large prune stays under SQLite's bound-parameter limit.
        for start in range(0, len(ids), 500):
            removed += Memory.delete().where(Memory.id.in_(ids[start : start + 500])).execute()
    if removed:
        logger.info("pruned {} memories (strength < {}, older than {})", removed, min_strength, cutoff)
    return removed


# -- reading ------------------------------------------------------------------


def live(kind: str | None = None, at: datetime | None = None) -> list[Memory]:
    query = Memory.select().order_by(Memory.strength.desc(), Memory.id)
    if kind:
        query = query.where(Memory.kind == kind)
    return list(query.where(_alive(at)))


def mentioning_address(address: str, kinds: tuple[str, ...], limit: int, at: datetime | None = None) -> list[Memory]:
    """Live memories of these kinds whose text names this email address, whole (not bigboss@ for boss@, nor
    boss@mail.example.org for boss@mail.example), strongest first. The full-text index cannot find one: it
    splits an address into words."""
    address = address.strip().lower()
    if "@" not in address or not reads.engram_holds_memories():
        return []
    whole = re.compile(rf"(?<![\w.+-]){re.escape(address)}(?![\w-]|\.\w)", re.I)
    candidates = (
        Memory.select()
        .where(Memory.kind.in_(kinds) & Memory.text.contains(address) & _alive(at))
        .order_by(Memory.strength.desc(), Memory.id.desc())
    )  # LIKE narrows; the pattern decides
    return [m for m in candidates if whole.search(m.text)][:limit]


def _alive(at: datetime | None):
    if at is None:
        return Memory.invalidated_at.is_null()
    return (Memory.created_at <= at) & (Memory.invalidated_at.is_null() | (Memory.invalidated_at > at))


def profile(limit: int = 5, at: datetime | None = None) -> list[Memory]:
    """The core profile: the strongest live principles and beliefs, always in context whatever is asked."""
    if not reads.engram_holds_memories():
        return []
    return reads.strongest_memories(LEARNED, limit, at)  # read on every run: its SQL is built once there


# -- bulk import (`wilson memory import`) --------------------------------------------------------


def import_lines(lines, default_at: datetime) -> tuple[int, list[str]]:
    """Memories from JSON lines: {"text", "at" (ISO time), "kind" (default episode), "source" (an id, kept
    as provenance)}. A line that is not such an object is reported (line number and why) and skipped;
    the rest is stored as `store` would, in a few statements per 500 lines. Returns (stored, problems)."""
    rows, problems = [], []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            if not isinstance(item, dict) or not isinstance(item.get("text"), str) or not item["text"].strip():
                raise ValueError("needs an object with text")
            at = utc_or_none(str(item["at"])) if item.get("at") else default_at
            kind = item.get("kind") or "episode"
            if not isinstance(kind, str) or len(kind) > 40:
                raise ValueError("kind must be a short text")
            source = item.get("source")
            rows.append((kind, item["text"].strip(), at, [str(source)] if source not in (None, "") else []))
        except (ValueError, TypeError) as exc:
            problems.append(f"line {number}: {exc}")
    stored = 0
    for start in range(0, len(rows), 500):
        stored += _import_chunk(rows[start : start + 500])
    return stored, problems


def _import_chunk(rows: list[tuple[str, str, datetime, list[str]]]) -> int:
    with claim_transaction():
        kinds = tuple({kind for kind, *_ in rows})
        live_now = find_live(kinds, [text for _, text, _, _ in rows])
        new: dict[tuple[str, str], dict] = {}
        for kind, text, at, provenance in rows:
            key = make_key(text)
            memory = live_now.get((kind, key))
            if memory is not None:  # the same thought again strengthens it, as store() does
                memory.strength += 1
                memory.provenance = _merge(memory.provenance, provenance)
                memory.save(only=[Memory.strength, Memory.provenance])
            elif (kind, key) in new:
                new[(kind, key)]["strength"] += 1
                new[(kind, key)]["provenance"] = _merge(new[(kind, key)]["provenance"], provenance)
            else:
                new[(kind, key)] = {
                    "kind": kind,
                    "text": text,
                    "key": key,
                    "provenance": provenance,
                    "strength": 1.0,
                    "created_at": at,
                }
        values = list(new.values())
        for start in range(0, len(values), 100):
            Memory.insert_many(values[start : start + 100]).execute()
    return len(rows)
