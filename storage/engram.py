"""Engram: long-term memory. It stores; the hippocampus curates.

A memory is a line of text of some kind (episode, interpretation, belief,
principle, calibration) with its provenance and a strength. Storing the same
thought again (same kind, same normalised text) strengthens the existing row
instead of adding a second one, so repetition across nights is countable.

Recall must stay cheap as memory grows, so every memory's terms go into an
inverted index (`MemoryTerm`) when it is stored; a recall is an indexed lookup
of the query's terms, ranked by matched terms x strength. Plain peewee queries
only, so SQLite and PostgreSQL behave alike.
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime, timedelta

import peewee
from loguru import logger

from storage import trace
from storage.db import claim_transaction, database
from storage.models import BaseModel, Memory

# The key column is a VARCHAR(255); longer texts keep a readable prefix plus a digest
# so that two different long texts never collide.
KEY_LIMIT = 255
TERM_LIMIT = 64

# Words that match nearly every memory add cost to a lookup and nothing to ranking.
# "user" is here because almost every memory is about the user.
STOPWORDS = frozenset("""
a an and are as at be been but by can could did do does for from had has have he her
his i if in into is it its me my no not of on or our she so than that the their them
then there these they this those to too us was we were what when where which who why
will with would you your user users wilson
""".split())

_APOSTROPHES = re.compile(r"['\u2019\u02bc]")
_PUNCT = re.compile(r"[^\w\s]|_")
_SPACE = re.compile(r"\s+")


class MemoryTerm(BaseModel):
    """One row per (term, memory): the inverted index behind `recall`."""

    term = peewee.CharField(max_length=TERM_LIMIT)
    memory = peewee.ForeignKeyField(Memory, backref="terms", on_delete="CASCADE", index=True)

    class Meta:
        # Led by term, this one index answers recall's lookups and keeps postings unique.
        indexes = ((("term", "memory"), True),)


ENGRAM_MODELS = [MemoryTerm]


# -- text ---------------------------------------------------------------------

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
    return f"{norm[:KEY_LIMIT - len(digest) - 1]}#{digest}"


def _stem(word: str) -> str:
    # A deliberately small suffix stripper: "books", "booked", "booking" and "book"
    # must meet in one posting list; anything cleverer is not worth a dependency.
    if len(word) <= 4 or word.isdigit():
        return word
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                return word
            if suffix == "es" and not word.endswith(("ches", "shes", "sses", "xes", "zes")):
                continue
            return word[: -len(suffix)]
    return word


def terms(text: str) -> list[str]:
    """The index terms of a text, in first-seen order, without repeats."""
    seen: dict[str, None] = {}
    for word in normalise(text).split():
        if word in STOPWORDS or (len(word) < 2 and not word.isdigit()):
            continue
        seen.setdefault(_stem(word)[:TERM_LIMIT], None)
    return list(seen)


def _merge(old: list, new: list) -> list:
    merged = list(old or [])
    for item in new or []:
        if item not in merged:
            merged.append(item)
    return merged


# -- writing ------------------------------------------------------------------

def find(kind: str, text: str) -> Memory | None:
    """The live (not invalidated) memory of this kind with this normalised text."""
    return (Memory.select()
            .where(Memory.kind == kind, Memory.key == make_key(text), Memory.invalidated_at.is_null())
            .order_by(Memory.id)
            .first())


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
        memory = Memory.create(kind=kind, text=text, key=key, provenance=provenance, strength=weight,
                               created_at=at)
        rows = [{"term": term, "memory": memory.id} for term in terms(text)]
        for start in range(0, len(rows), 300):  # stays under SQLite's bound-parameter limit
            MemoryTerm.insert_many(rows[start:start + 300]).execute()
        return memory


def find_live(kinds: tuple[str, ...], texts: list[str]) -> dict[tuple[str, str], Memory]:
    """The live memory for each (kind, key) among `kinds` x `texts`, read in one query per 500 keys.

    The batch form of `find`: a consolidation looks up hundreds of texts inside its write
    transaction, and one query each would hold the write lock for all of them."""
    keys = list(dict.fromkeys(make_key(t) for t in texts if t and t.strip()))
    found: dict[tuple[str, str], Memory] = {}
    for start in range(0, len(keys), 500):
        query = (Memory.select()
                 .where(Memory.kind.in_(list(kinds)), Memory.key.in_(keys[start:start + 500]),
                        Memory.invalidated_at.is_null())
                 .order_by(Memory.id))
        for memory in query:
            found.setdefault((memory.kind, memory.key), memory)  # the oldest, as `find` answers
    return found


def store_many(kind: str, entries: list[tuple[str, list[str]]], at: datetime, *, weight: float = 1.0) -> int:
    """`store` for many (text, provenance) entries of one kind, with a handful of statements.

    The result is what storing them one by one gives: a text already live (or seen earlier
    in `entries`) is strengthened by `weight` per mention and gains the provenance; new texts
    become memories with their index terms. Returns how many memories were created."""
    return write_batch(prepare_batch(kind, entries, weight=weight), at)


def prepare_batch(kind: str, entries: list[tuple[str, list[str]]], *, weight: float = 1.0) -> dict:
    """The pure half of `store_many` (keys, merged provenance, index terms), done before any lock is taken."""
    merged: dict[str, dict] = {}  # key -> text, provenance, mentions, in first-seen order
    for text, provenance in entries:
        text = (text or "").strip()
        if not text:
            raise ValueError("a memory needs text")
        entry = merged.setdefault(make_key(text), {"text": text, "provenance": [], "mentions": 0})
        entry["provenance"] = _merge(entry["provenance"], [str(p) for p in (provenance or [])])
        entry["mentions"] += 1
    for entry in merged.values():
        entry["terms"] = terms(entry["text"])
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
                new.append({"kind": kind, "text": entry["text"], "key": key, "provenance": entry["provenance"],
                            "strength": weight * entry["mentions"], "created_at": at})
                continue
            memory.strength += weight * entry["mentions"]
            memory.provenance = _merge(memory.provenance, entry["provenance"])
            memory.save(only=[Memory.strength, Memory.provenance])
        for start in range(0, len(new), 100):  # RETURNING (SQLite 3.35+, PostgreSQL) names the new ids
            created = Memory.insert_many(new[start:start + 100]).returning(Memory.id, Memory.key).tuples()
            postings = [{"term": term, "memory": memory_id}
                        for memory_id, key in created.execute() for term in merged[key]["terms"]]
            for first in range(0, len(postings), 300):  # stays under SQLite's bound-parameter limit
                MemoryTerm.insert_many(postings[first:first + 300]).execute()
    return len(new)


def reindex() -> int:
    """Rebuild the term index from the memories; returns how many terms were written."""
    written = 0
    with database.atomic():
        MemoryTerm.delete().execute()
        batch: list[dict] = []
        for memory in Memory.select(Memory.id, Memory.text).iterator():
            batch.extend({"term": term, "memory": memory.id} for term in terms(memory.text))
            if len(batch) >= 300:
                written += _flush(batch)
        written += _flush(batch)
    return written


def _flush(batch: list[dict]) -> int:
    count = len(batch)
    if batch:
        MemoryTerm.insert_many(batch).execute()
        batch.clear()
    return count


def invalidate(memory_id: int, at: datetime, reason: str) -> bool:
    """Mark a memory as no longer true (kept for provenance, excluded from recall)."""
    updated = (Memory.update(invalidated_at=at)
               .where(Memory.id == memory_id, Memory.invalidated_at.is_null())
               .execute())
    if updated:
        # The reason lives in the trace so that `wilson trace memory:<id>` explains it.
        trace.record(f"memory:{memory_id}", "invalidated", "engram", reason, at, data={"memory": memory_id})
    return bool(updated)


def prune(at: datetime, min_strength: float, older_than: timedelta, *, kinds: tuple[str, ...] | None = None) -> int:
    """Forget memories weaker than `min_strength` created before `at - older_than`,
    and memories invalidated before then. Returns how many were removed."""
    cutoff = at - older_than
    weak = (Memory.strength < min_strength) & (Memory.created_at < cutoff)
    stale = Memory.invalidated_at.is_null(False) & (Memory.invalidated_at < cutoff)
    condition = weak | stale
    if kinds:
        condition &= Memory.kind.in_(list(kinds))
    with claim_transaction():
        ids = [m.id for m in Memory.select(Memory.id).where(condition)]
        removed = 0
        # Chunked so that a large prune stays under SQLite's bound-parameter limit.
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            MemoryTerm.delete().where(MemoryTerm.memory.in_(chunk)).execute()
            removed += Memory.delete().where(Memory.id.in_(chunk)).execute()
    if removed:
        logger.info("pruned {} memories (strength < {}, older than {})", removed, min_strength, cutoff)
    return removed


# -- reading ------------------------------------------------------------------

def live(kind: str | None = None, at: datetime | None = None) -> list[Memory]:
    query = Memory.select().order_by(Memory.strength.desc(), Memory.id)
    if kind:
        query = query.where(Memory.kind == kind)
    return list(query.where(_alive(at)))


def _alive(at: datetime | None):
    if at is None:
        return Memory.invalidated_at.is_null()
    return (Memory.created_at <= at) & (Memory.invalidated_at.is_null() | (Memory.invalidated_at > at))


def recall_query(query: str, limit: int = 5, at: datetime | None = None, *, kinds: tuple[str, ...] | None = None):
    """The peewee query behind `recall` (None when the text has no searchable terms)."""
    wanted = terms(query)
    if not wanted or limit <= 0:
        return None
    matched = peewee.fn.COUNT(MemoryTerm.id)
    score = matched * Memory.strength
    q = (Memory.select(Memory, matched.alias("matched"), score.alias("score"))
         .join(MemoryTerm, on=(MemoryTerm.memory == Memory.id))
         .where(MemoryTerm.term.in_(wanted), _alive(at))
         .group_by(Memory.id)
         .order_by(score.desc(), Memory.strength.desc(), Memory.id.desc())
         .limit(limit))
    if kinds:
        q = q.where(Memory.kind.in_(list(kinds)))
    return q


def recall(query: str, limit: int = 5, at: datetime | None = None, *, kinds: tuple[str, ...] | None = None) -> list[Memory]:
    """Memories sharing terms with `query`, best first (matched terms x strength).

    With `at`, recall as things stood then: memories formed by `at` and not yet
    invalidated at that moment. Each returned memory carries `.matched` and `.score`.
    """
    q = recall_query(query, limit, at, kinds=kinds)
    return [] if q is None else list(q)
