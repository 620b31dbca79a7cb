"""Recall: memories found by text and ranked, on the database's own full-text engine.

The index is the engram's (storage/engram.py): FTS5 on SQLite, ranked by bm25; a
`tsvector` column on PostgreSQL, ranked by `ts_rank_cd`. Both give the text relevance
of a bounded set of candidates; that relevance is then blended with importance (kind
and strength) and recency by weights (`Weights`, config section [memory]), so one API
answers on both. A hook (`EMBEDDER`) may add a semantic score; it is off unless set.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

import peewee
from loguru import logger

from storage import hot, reads
from storage.db import database
from storage.engram import FTS_TABLE, LEARNED, terms
from storage.models import Memory

CANDIDATES = 50  # text matches re-ranked by importance and recency; at least limit x 5

KIND_WEIGHT = {"principle": 1.0, "belief": 0.8, "calibration": 0.6, "interpretation": 0.5, "episode": 0.3}

# Optional semantic scoring: a callable(query, [texts]) -> [similarity 0..1], or None (off).
EMBEDDER = None


@dataclass(frozen=True)
class Weights:
    """How recall blends text relevance (0..1, best candidate = 1), importance and recency."""

    text: float = 1.0
    importance: float = 0.6
    recency: float = 0.1
    half_life_days: float = 60.0
    diversity: float = 0.5  # penalty per unit of word overlap with a memory already chosen (MMR)
    semantic: float = 0.0  # used only when EMBEDDER is set

    @classmethod
    def from_config(cls, config) -> "Weights":
        """Section [memory]: weight_text, weight_importance, weight_recency, half_life_days, weight_diversity,
        weight_semantic."""
        if config is None:
            return cls()
        values = {}
        for name, key in (
            ("text", "weight_text"),
            ("importance", "weight_importance"),
            ("recency", "weight_recency"),
            ("half_life_days", "half_life_days"),
            ("diversity", "weight_diversity"),
            ("semantic", "weight_semantic"),
        ):
            value = config.get("memory", key)
            if value is not None:
                values[name] = float(value)
        return cls(**values)


def _postgres() -> bool:
    return isinstance(database.obj, peewee.PostgresqlDatabase)


COLUMNS = "m.id, m.kind, m.text, m.key, m.provenance, m.strength, m.created_at, m.invalidated_at"


def recall_query(
    query: str, limit: int = 5, at: datetime | None = None, *, kinds: tuple[str, ...] | None = None
) -> tuple[str, list] | None:
    """(SQL, params) for the text-relevance candidates of `query`, best first; None without searchable words.

    Words are OR-ed: a memory sharing any word with the query is a candidate, and the engine's
    ranking (bm25 / ts_rank_cd) prefers those sharing more, and rarer, words."""
    words = terms(query)
    if not words or limit <= 0:
        return None
    p = database.obj.param
    where, params = [], []
    if at is None:
        where.append("m.invalidated_at IS NULL")
    else:
        moment = Memory.created_at.db_value(at)
        where.append(f"m.created_at <= {p} AND (m.invalidated_at IS NULL OR m.invalidated_at > {p})")
        params += [moment, moment]
    if kinds:
        where.append(f"m.kind IN ({', '.join([p] * len(kinds))})")
        params += list(kinds)
    filters = "".join(f" AND {w}" for w in where)
    if _postgres():
        # only word characters reach the tsquery, so the text cannot speak its syntax
        # normalisation 1 (rank / (1 + log length)), as bm25 weighs a match in a long text less
        sql = (
            f"SELECT {COLUMNS}, ts_rank_cd(m.search, q, 1) AS relevance "
            f"FROM memory m, to_tsquery('english', {p}) q WHERE m.search @@ q{filters} "
            f"ORDER BY relevance DESC, m.id DESC LIMIT {p}"
        )
        return sql, [" | ".join(words)] + params + [limit]
    match = " OR ".join(f'"{w}"' for w in words)
    sql = (
        f"SELECT {COLUMNS}, -bm25({FTS_TABLE}) AS relevance FROM {FTS_TABLE} "
        f"JOIN memory m ON m.id = {FTS_TABLE}.rowid WHERE {FTS_TABLE} MATCH {p}{filters} "
        f"ORDER BY bm25({FTS_TABLE}), m.id DESC LIMIT {p}"
    )
    return sql, [match] + params + [limit]


def text_matches(
    query: str, limit: int = 5, at: datetime | None = None, *, kinds: tuple[str, ...] | None = None
) -> list[Memory]:
    """Plain text-relevance recall (bm25 / ts_rank_cd only), best first; each memory carries `.relevance`."""
    built = recall_query(query, limit, at, kinds=kinds)
    if built is None:
        return []
    sql, params = built
    # run on every stimulus: the rows become Memory instances as storage/hot.py makes them, without
    # peewee's raw-query machinery (the text differs only by the shape of the filters)
    found = []
    for values in database.execute_sql(sql, params).fetchall():
        memory = hot.instance(Memory, values[:-1])
        memory.relevance = values[-1]
        found.append(memory)
    return found


def _importance(memory: Memory) -> float:
    # Strength counts nights of evidence; past eight more of it adds little.
    strength = min(1.0, math.log1p(max(memory.strength or 0.0, 0.0)) / math.log1p(8))
    return 0.5 * KIND_WEIGHT.get(memory.kind, 0.3) + 0.5 * strength


def rank(
    memories: list[Memory], now: datetime | None, weights: Weights, query: str = "", limit: int = 20
) -> list[Memory]:
    """Order text candidates by the weighted blend; each gains `.score`."""
    if not memories:
        return []
    best = max((m.relevance or 0.0) for m in memories) or 1.0
    newest = now or max(m.created_at for m in memories)
    semantic = [0.0] * len(memories)
    if EMBEDDER is not None and weights.semantic and query:
        try:
            semantic = list(EMBEDDER(query, [m.text for m in memories]))
        except Exception as exc:  # a broken embedder costs ranking quality, never recall itself
            logger.warning("memory embedder failed: {}", exc)
    for memory, similarity in zip(memories, semantic):
        age = max((newest - memory.created_at).total_seconds() / 86400, 0.0)
        recency = 0.5 ** (age / weights.half_life_days) if weights.half_life_days > 0 else 0.0
        memory.score = round(
            weights.text * (memory.relevance or 0.0) / best
            + weights.importance * _importance(memory)
            + weights.recency * recency
            + weights.semantic * similarity,
            6,
        )
    ordered = sorted(memories, key=lambda m: (-m.score, -m.id))
    return _diverse(ordered, weights.diversity, limit) if weights.diversity > 0 else ordered


def _diverse(ordered: list[Memory], penalty: float, count: int) -> list[Memory]:
    """Maximal marginal relevance: each next memory is the best after a penalty for the words it shares
    with those already chosen, so ten episodes repeating one sentence do not bury the belief drawn from them."""
    words = [set(terms(m.text)) for m in ordered]
    scores = [m.score for m in ordered]
    overlap = [0.0] * len(ordered)  # each candidate's largest overlap with a chosen one, kept up to date
    left = list(range(len(ordered)))
    chosen: list[int] = []
    while left and len(chosen) < count:
        # ties keep the ranked order: `left` stays sorted and max returns the first best
        pick = max(left, key=lambda i: scores[i] - penalty * overlap[i])
        left.remove(pick)
        chosen.append(pick)
        for i in left:
            union = len(words[i] | words[pick]) or 1
            overlap[i] = max(overlap[i], len(words[i] & words[pick]) / union)
    return [ordered[i] for i in chosen + left]


def recall(
    query: str,
    limit: int = 5,
    at: datetime | None = None,
    *,
    kinds: tuple[str, ...] | None = None,
    weights: Weights | None = None,
) -> list[Memory]:
    """Memories that speak to `query`, best first: the engine's text relevance blended with importance
    (kind, strength) and recency by `weights`.

    With `at`, recall as things stood then: memories formed by `at` and not yet
    invalidated at that moment. Each returned memory carries `.relevance` and `.score`.
    """
    if limit <= 0 or not reads.engram_holds_memories():
        return []
    pool = max(CANDIDATES, limit * 5)
    matches = text_matches(query, pool, at, kinds=kinds)
    candidates = {m.id: m for m in matches}
    learned = [k for k in (kinds or LEARNED) if k in LEARNED]
    # fewer than `pool` matches are every match, the learned ones among them: no need to ask again
    if learned and (weights or Weights()).importance > 0 and len(matches) >= pool:
        # many episodes quoting the same words must not crowd the few beliefs out of the candidates
        for memory in text_matches(query, limit, at, kinds=tuple(learned)):
            candidates.setdefault(memory.id, memory)
    return rank(list(candidates.values()), at, weights or Weights(), query, limit)[:limit]


# -- plain recall rows (`wilson memory recall`) ---------------------------------------------------


def recall_rows(query: str, limit: int = 10, at: datetime | None = None, weights: Weights | None = None) -> list[dict]:
    """Recall as plain rows, best first: id, kind, score, source (the memory's first provenance), text."""
    return [
        {"id": m.id, "kind": m.kind, "score": m.score, "source": (m.provenance or [None])[0], "text": m.text}
        for m in recall(query, limit, at, weights=weights)
    ]
