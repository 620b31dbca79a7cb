"""How engram recall scales: time per recall at 1k, 10k and 100k memories.

    python -m bench.engram_recall [--quick]

The memories are synthetic but shaped like a life's worth of notes: a few words
from a fixed everyday vocabulary plus names of people, places and things, whose
number grows with the memory (more memories, more distinct names). Queries name
something specific, the way the cortex recalls "dentist Marlowe", taken from
memories that exist. A full scan of the text (LIKE) is timed beside the indexed
recall for contrast: its cost grows with the number of memories, recall's should not.

Prints one line per size and the ratio time(100k) / time(1k).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

from storage import engram, recall
from storage.db import database, open_database
from storage.migrations import migrate
from storage.models import Memory
from wilson.kernel.clock import monotonic

SIZES = (1_000, 10_000, 100_000)
EVERYDAY = 2_000  # words of the fixed everyday vocabulary
NAMES_PER_MEMORY = 0.1  # distinct names per memory: 10k names at 100k memories
START = datetime(2027, 1, 1, tzinfo=timezone.utc)
SYLLABLES = ["ka", "lo", "mi", "ren", "tu", "sa", "vor", "el", "no", "ri", "dan", "pe", "zu", "ma", "tel", "wi"]


def _name(number: int) -> str:
    # Five base-16 digits spelled as syllables: distinct numbers give distinct names.
    digits = []
    for _ in range(5):
        number, digit = divmod(number, 16)
        digits.append(SYLLABLES[digit])
    return "".join(digits)


class Corpus:
    """Deterministic memory texts: text(i) is the same whenever it is asked for."""

    def __init__(self, seed: int = 7):
        rng = random.Random(seed)
        everyday: set[str] = set()
        while len(everyday) < EVERYDAY:  # three syllables, so never equal to a five-syllable name
            everyday.add("".join(rng.choice(SYLLABLES) for _ in range(3)))
        self.everyday = sorted(everyday)
        self.seed = seed

    def words(self, index: int) -> tuple[list[str], list[str]]:
        rng = random.Random(self.seed * 1_000_003 + index)
        known_names = int((index + 1) * NAMES_PER_MEMORY) + 1  # names are minted as memory grows
        return rng.sample(self.everyday, 3), [_name(rng.randrange(known_names)) for _ in range(2)]

    def text(self, index: int) -> str:
        (a, b, c), (x, y) = self.words(index)
        return f"the user {a} {x} with {b} at {y} {c}"


def _fill(corpus: Corpus, start: int, stop: int) -> None:
    """Insert memories [start, stop) in bulk: the same rows store() writes, without building 100k
    statements (store() one by one is the slow path, not the measured one). The full-text index
    follows by trigger, as it does for store()."""
    db = database.obj
    memory_sql = (
        f"INSERT INTO {Memory._meta.table_name} (id, kind, text, key, provenance, strength, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)"
    )
    rows = []
    for i in range(start, stop):
        text = corpus.text(i)
        rows.append(
            (
                i + 1,
                "interpretation",
                text,
                engram.make_key(text),
                Memory.provenance.db_value([f"bench:{i}"]),
                1.0 + (i % 5),
                Memory.created_at.db_value(START + timedelta(minutes=i)),
            )
        )
    with db.atomic():
        cursor = db.cursor()
        cursor.executemany(memory_sql, rows)


def _queries(corpus: Corpus, size: int, count: int, rng: random.Random) -> list[str]:
    queries = []
    for _ in range(count):
        everyday, names = corpus.words(rng.randrange(size))
        queries.append(f"{names[0]} {everyday[0]}")  # a name and an everyday word from a real memory
    return queries


def _time(fn, queries: list[str]) -> float:
    """Median seconds per call."""
    samples = []
    for q in queries:
        start = monotonic()
        fn(q)
        samples.append(monotonic() - start)
    return statistics.median(samples)


def _scan(query: str) -> list:
    # The unindexed alternative: every memory's text is read.
    word = query.split()[0]
    return list(
        Memory.select()
        .where(Memory.text.contains(word), Memory.invalidated_at.is_null())
        .order_by(Memory.strength.desc())
        .limit(5)
    )


def run(quick: bool = False, sizes: tuple[int, ...] = SIZES) -> dict:
    """Time recall at each size; returns {"sizes": {n: {...}}, "ratio": t(largest)/t(smallest), ...}."""
    query_count = 40 if quick else 300
    home = Path(tempfile.mkdtemp(prefix="engram-bench-"))
    previous = database.obj
    try:
        open_database(None, home)
        migrate()
        corpus = Corpus()
        rng = random.Random(11)
        results: dict[int, dict] = {}
        filled = 0
        for size in sizes:
            _fill(corpus, filled, size)
            filled = size
            queries = _queries(corpus, size, query_count, rng)
            for q in queries[:5]:
                recall.recall(q)  # warm the page cache so the first size is not penalised
            recall_s = _time(recall.recall, queries)
            scan_s = _time(_scan, queries[: max(5, query_count // 10)])
            hits = sum(1 for q in queries[:20] if recall.recall(q))
            results[size] = {
                "recall_ms": round(recall_s * 1000, 3),
                "scan_ms": round(scan_s * 1000, 3),
                "hits_of_20": hits,
            }
        first, last = results[sizes[0]], results[sizes[-1]]
        return {
            "sizes": results,
            "ratio": round(last["recall_ms"] / first["recall_ms"], 2) if first["recall_ms"] else None,
            "scan_ratio": round(last["scan_ms"] / first["scan_ms"], 2) if first["scan_ms"] else None,
            "queries": query_count,
        }
    finally:
        database.obj.close()
        if previous is not None:
            database.initialize(previous)
        shutil.rmtree(home, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.engram_recall", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer queries per size")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    result = run(quick=args.quick)
    if args.json:
        print(json.dumps(result))
        return 0
    for size, row in result["sizes"].items():
        print(
            f"{size:>7} memories  recall {row['recall_ms']:8.3f} ms  full scan {row['scan_ms']:8.3f} ms  "
            f"({row['hits_of_20']}/20 queries found something)"
        )
    sizes = list(result["sizes"])
    label = "/".join(f"{n // 1000}k" if n >= 1000 else str(n) for n in (sizes[-1], sizes[0]))
    print(f"ratio {label}: recall {result['ratio']}  (full scan {result['scan_ratio']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
