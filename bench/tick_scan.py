"""How the tick's scan scales: time per scan at 1k, 10k and 100k tasks.

    python -m bench.tick_scan [--quick]

Each size gets a fresh SQLite database filled in bulk: most tasks have their next
follow-up somewhere in the coming year, some are done (no follow-up), and a fixed
20 are due right now. One scan fires those 20 (a TaskFiring, an inbox row and a
trace row each) and looks at nothing else, because it is a range query on
Task.next_fire_at. Between timed scans the 20 are re-armed (their firings and rows
deleted, next_fire_at set back), so every timed scan does the same real work.
A scan with nothing due (what the tick does every second most of the time) and
`next_due`, which a simulated clock calls before every step, are timed as well.

Prints one line per size and the ratio time(100k) / time(1k); the goal is < 3.
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
from zoneinfo import ZoneInfo

from loguru import logger

from actors.tick.actor import run_scan
from actors.tick.schedules import next_due
from storage.db import database, open_database
from storage.migrations import migrate
from storage.models import Inbox, Task, TaskFiring, Trace
from wilson.kernel.clock import monotonic

SIZES = (1_000, 10_000, 100_000)
DUE_NOW = 20
DONE_SHARE = 0.2
NOW = datetime(2027, 1, 5, 12, 0, tzinfo=timezone.utc)
TZ = ZoneInfo("UTC")
WINDOWS = ["14d", "7d", "3d", "1d", "due", "overdue"]
GOAL = 3.0


def _fill(size: int, rng: random.Random) -> list[int]:
    """Insert `size` tasks in bulk; returns the ids of the ones due now."""
    rows = []
    for i in range(size - DUE_NOW):
        if rng.random() < DONE_SHARE:
            due = NOW - timedelta(days=rng.randint(1, 400))
            rows.append(
                {
                    "title": f"done {i}",
                    "due": due,
                    "status": "done",
                    "created_at": due - timedelta(days=30),
                    "completed_at": due,
                }
            )
            continue
        # from two hours on: a scan also fires what falls due later in its local hour (one bundle), and
        # these must not join the 20 it is timed on
        fire = NOW + timedelta(minutes=rng.randint(120, 365 * 24 * 60))
        rows.append(
            {
                "title": f"task {i}",
                "due": fire + timedelta(days=3),
                "status": "open",
                "next_fire_at": fire,
                "next_window": "3d",
                "created_at": NOW - timedelta(days=1),
            }
        )
    due_at = NOW + timedelta(days=3) - timedelta(minutes=1)  # its 3d window passed a minute ago
    for i in range(DUE_NOW):
        rows.append(
            {
                "title": f"due {i}",
                "due": due_at,
                "status": "open",
                "next_fire_at": due_at - timedelta(days=3),
                "next_window": "3d",
                "created_at": NOW - timedelta(days=1),
            }
        )
    with database.atomic():
        for start in range(0, len(rows), 500):
            Task.insert_many(rows[start : start + 500]).execute()
    return [t.id for t in Task.select(Task.id).where(Task.title.startswith("due "))]


def _rearm(due_ids: list[int]) -> None:
    with database.atomic():
        TaskFiring.delete().where(TaskFiring.task.in_(due_ids)).execute()
        Inbox.delete().execute()
        Trace.delete().execute()
        Task.update(next_fire_at=NOW + timedelta(minutes=-1), next_window="3d").where(Task.id.in_(due_ids)).execute()


def _measure(size: int, repeats: int) -> dict:
    due_ids = _fill(size, random.Random(size))
    # Fold the bulk insert into the main file now, so no timed scan pays for that checkpoint.
    database.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    scans, idles, lookups = [], [], []
    for attempt in range(repeats + 1):  # the first round warms the page cache and is not counted
        _rearm(due_ids)
        start = monotonic()
        result = run_scan(NOW, TZ, WINDOWS, lambda name, message: None)
        elapsed = monotonic() - start
        if len(result.deadlines) != DUE_NOW:
            raise AssertionError(f"a scan at {size} tasks fired {len(result.deadlines)}, not {DUE_NOW}")
        start = monotonic()
        idle = run_scan(NOW, TZ, WINDOWS, lambda name, message: None)  # the common case: nothing due
        idle_elapsed = monotonic() - start
        if idle.deadlines:
            raise AssertionError("a second scan at the same moment fired again")
        start = monotonic()
        next_due(NOW)
        looked = monotonic() - start
        if attempt:
            scans.append(elapsed)
            idles.append(idle_elapsed)
            lookups.append(looked)
    return {
        "scan_ms": round(statistics.median(scans) * 1000, 3),
        "idle_scan_ms": round(statistics.median(idles) * 1000, 3),
        "next_due_ms": round(statistics.median(lookups) * 1000, 3),
        "fired_per_scan": DUE_NOW,
    }


def run(quick: bool = False) -> dict:
    """Time one scan at each size; returns {"sizes": {n: {...}}, "ratio": t(100k)/t(1k), "goal": 3.0, "ok": ...}."""
    repeats = 7 if quick else 21
    previous = database.obj
    results: dict[int, dict] = {}
    # One log line per trace row would flood the figures; the scan's own work is what is timed.
    quiet_modules = ("storage.trace", "storage.migrations", "actors.tick")
    for module in quiet_modules:
        logger.disable(module)
    try:
        for size in SIZES:
            home = Path(tempfile.mkdtemp(prefix="tick-bench-"))
            try:
                open_database(None, home)
                migrate()
                results[size] = _measure(size, repeats)
            finally:
                database.obj.close()
                shutil.rmtree(home, ignore_errors=True)
    finally:
        for module in quiet_modules:
            logger.enable(module)
        if previous is not None:
            database.initialize(previous)
    first, last = results[SIZES[0]], results[SIZES[-1]]
    ratio = round(last["scan_ms"] / first["scan_ms"], 2) if first["scan_ms"] else None
    next_due_ratio = round(last["next_due_ms"] / first["next_due_ms"], 2) if first["next_due_ms"] else None
    idle_ratio = round(last["idle_scan_ms"] / first["idle_scan_ms"], 2) if first["idle_scan_ms"] else None
    return {
        "sizes": results,
        "ratio": ratio,
        "idle_ratio": idle_ratio,
        "next_due_ratio": next_due_ratio,
        "goal": GOAL,
        "ok": ratio is not None and ratio < GOAL,
        "repeats": repeats,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.tick_scan", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer timed scans per size")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    result = run(quick=args.quick)
    if args.json:
        print(json.dumps(result))
        return 0
    for size, row in result["sizes"].items():
        print(
            f"{size:>7} tasks  scan {row['scan_ms']:8.3f} ms (fires {row['fired_per_scan']})  "
            f"idle scan {row['idle_scan_ms']:7.3f} ms  next_due {row['next_due_ms']:7.3f} ms"
        )
    verdict = "ok" if result["ok"] else "OVER GOAL"
    print(
        f"ratio 100k/1k: scan {result['ratio']} (goal < {result['goal']}: {verdict})  "
        f"idle scan {result['idle_ratio']}  next_due {result['next_due_ratio']}  [median of {result['repeats']} scans]"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
