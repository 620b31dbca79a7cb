"""What the benchmarks share: figures with their baselines, percentiles, a Wilson whose
actor list a benchmark can change, and a recorder of the SQL statements Wilson issues.

Every figure is printed beside a baseline measured in the same run and the ratio of
the two: absolute times on a shared machine are noise, ratios much less so.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import tempfile
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Figure:
    """One measured figure beside its baseline. `ok` is None when the issue sets no goal for it."""

    label: str
    value: float | None
    unit: str = ""
    baseline_label: str = ""
    baseline: float | None = None
    ratio: float | None = None
    goal: str = ""
    ok: bool | None = None
    note: str = ""

    def line(self) -> str:
        value = _fmt(self.value)
        text = f"{self.label}: {value}{' ' + self.unit if self.unit else ''}"
        if self.baseline_label:
            text += f"  | baseline {self.baseline_label}: {_fmt(self.baseline)}{' ' + self.unit if self.unit else ''}"
        if self.ratio is not None:
            text += f"  | ratio {self.ratio:.3g}"
        if self.goal:
            verdict = "" if self.ok is None else ("  ok" if self.ok else "  MISSED")
            text += f"  | goal {self.goal}{verdict}"
        if self.note:
            text += f"  ({self.note})"
        return text


def _fmt(value) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        if value == 0:
            return "0"
        if abs(value) >= 100:
            return f"{value:,.0f}"
        return f"{value:.3g}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def ratio(value, baseline) -> float | None:
    if value is None or not baseline:
        return None
    return round(value / baseline, 4)


def result(name: str, figures: list[Figure], details: dict | None = None, notes: list[str] | None = None) -> dict:
    return {"name": name, "figures": [asdict(f) for f in figures], "details": details or {}, "notes": notes or []}


def print_result(res: dict, out=None) -> None:
    print(f"== {res['name']}", file=out, flush=True)
    for fig in res["figures"]:
        print("  " + Figure(**fig).line(), file=out, flush=True)
    for note in res.get("notes") or []:
        print(f"  note: {note}", file=out, flush=True)


def emit(res: dict, as_json: bool) -> None:
    if as_json:
        print("BENCH-JSON " + json.dumps(res, default=str), flush=True)
    else:
        print_result(res)


def cli(module: str, doc: str, run, argv=None) -> int:
    """The command line every benchmark module shares: `python -m bench.NAME [--quick] [--json]`."""
    parser = argparse.ArgumentParser(prog=f"python -m {module}", description=doc.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON line")
    args = parser.parse_args(argv)
    emit(run(args.quick), args.json)
    return 0


def percentile(values: list[float], q: float) -> float | None:
    """Linear interpolation between closest ranks (q in 0..100)."""
    if not values:
        return None
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 3)


def machine() -> dict:
    memory_kb = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory_kb = int(line.split()[1])
    except OSError:
        pass
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "nproc": os.cpu_count(),
        "memory_gib": round(memory_kb / 1024 / 1024, 1) if memory_kb else None,
        "python": platform.python_version(),
        "cpu": cpu,
        "system": platform.platform(),
    }


# A home directory per run ------------------------------------------------------


class TempHome:
    def __init__(self, prefix: str):
        self.path = Path(tempfile.mkdtemp(prefix=f"wilson-bench-{prefix}-"))

    def __enter__(self) -> Path:
        return self.path

    def __exit__(self, *exc):
        shutil.rmtree(self.path, ignore_errors=True)


def bench_config(home: Path, **env):
    from wilson.kernel import config as configmod

    environ = {
        "WILSON_CORE_TIMEZONE": "Europe/Berlin",
        "WILSON_CORE_QUIET_HOURS": "22:00-07:00",
        # A budget that never bites: a baseline that ran out of tokens would look cheaper than it is.
        "WILSON_LLM_DAILY_BUDGET": "1000000000",
        "WILSON_LLM_USER_RESERVE": "1000000000",
        "WILSON_WEB_ENABLED": "false",  # no dashboard: two benchmark runs would fight over its port
    }
    environ.update({k: str(v) for k, v in env.items()})
    return configmod.load(home, environ=environ)


def make_wilson(config, clock, *, llm="offline", printer=None, replace: dict | None = None, watchdog: bool = True):
    """A Wilson whose actor list can be changed by name: replace={"triage": (Class, kwargs)}.

    The watchdog runs as it does in `wilson run`, unless a benchmark says otherwise.

    The application has no parameter for its actor list, so the benchmark swaps
    `wilson.app.application.build_specs` for the length of `start()` only.
    """
    from wilson.app.application import Wilson

    class BenchWilson(Wilson):
        def start(self):
            from wilson.app import application as appmod
            from wilson.kernel.supervisor import ActorSpec

            original = appmod.build_specs

            def rewritten(config, printer=None, role="all"):
                specs = original(config, printer, role)
                out = []
                for spec in specs:
                    if spec.name in (replace or {}):
                        cls, kwargs = replace[spec.name]
                        out.append(ActorSpec(spec.name, cls, dict(kwargs)))
                    else:
                        out.append(spec)
                return out

            appmod.build_specs = rewritten
            try:
                return super().start()
            finally:
                appmod.build_specs = original

    return BenchWilson(config, clock, llm=llm, printer=printer, log_level="WARNING", watchdog=watchdog)


# Recording the SQL Wilson issues -------------------------------------------------


@dataclass
class Unit:
    """One SQLite transaction as issued: an explicit BEGIN..COMMIT, or one autocommitted statement.

    A statement is its SQL text with its parameters as Wilson bound them, or (for what peewee
    sends past its query hooks: BEGIN, COMMIT) the text alone."""

    thread: str
    statements: list = field(default_factory=list)  # (sql, params) or sql

    @property
    def writes(self) -> bool:
        return any(_text(s).lstrip()[:6].upper() in ("INSERT", "UPDATE", "DELETE") for s in self.statements)


def _text(statement) -> str:
    return statement if isinstance(statement, str) else statement[0]


class SqlRecorder:
    """Records every statement Wilson issues, grouped into transactions, in commit order.

    A trace callback on every connection the database opens from now on sees each statement
    as it starts (BEGIN and COMMIT included) and groups them per thread; peewee's query hook,
    called on the same thread once the statement ran, swaps in the SQL with its placeholders
    and the bound parameters, so a replay issues exactly what Wilson handed to sqlite3 (and
    sqlite3's statement cache serves it as it served Wilson). Commit order is the order
    SQLite applied the transactions in, so they can be replayed on a copy.
    """

    def __init__(self, db):
        self.db = db
        self.recording = False
        self.units: list[Unit] = []
        self._open: dict[str, Unit] = {}
        self._last: dict[str, tuple[Unit, int] | None] = {}  # per thread: where its latest statement went
        self._lock = threading.Lock()
        original = db._add_conn_hooks

        def hooked(conn):
            original(conn)
            conn.set_trace_callback(self._statement)

        db._add_conn_hooks = hooked
        db.query_hooks.append(self._bound)
        if not db.is_closed():
            db.close()  # this thread's connection reopens with the hook

    def _statement(self, sql: str) -> None:
        if not self.recording:
            return
        thread = threading.current_thread().name
        head = sql.lstrip()[:16].upper()
        with self._lock:
            unit = self._open.get(thread)
            self._last[thread] = None
            if head.startswith("BEGIN"):
                self._open[thread] = Unit(thread, [sql])
                return
            if unit is not None:
                unit.statements.append(sql)
                self._last[thread] = (unit, len(unit.statements) - 1)
                if head.startswith(("COMMIT", "ROLLBACK", "END")):
                    del self._open[thread]
                    self.units.append(unit)
                return
            if head.startswith("PRAGMA"):
                return
            self.units.append(Unit(thread, [sql]))
            self._last[thread] = (self.units[-1], 0)

    def _bound(self, event) -> None:
        if not self.recording:
            return
        with self._lock:
            slot = self._last.pop(threading.current_thread().name, None)
            if slot is None:
                return
            unit, index = slot
            seen = unit.statements[index]
            if isinstance(seen, str) and seen.split(None, 1)[:1] == event.sql.split(None, 1)[:1]:
                unit.statements[index] = (event.sql, tuple(event.params or ()))

    def start(self) -> None:
        with self._lock:
            self.units, self._open, self._last = [], {}, {}
        self.recording = True

    def stop(self) -> list[Unit]:
        self.recording = False
        with self._lock:
            return list(self.units)


def snapshot_database(source: Path, target: Path) -> None:
    """A consistent copy of a live WAL database (SQLite's online backup)."""
    import sqlite3

    src = sqlite3.connect(str(source))
    dst = sqlite3.connect(str(target))
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()


def replay_by_thread(units: list[Unit], path: Path) -> dict[str, float]:
    """The CPU seconds of replaying each thread's statements (on a connection per thread, in commit order): where
    the replay's work sits, beside Wilson's CPU by thread. Its own clock reads make the sum a little above what
    `replay` measures, so it is a breakdown, never the figure set beside Wilson's."""
    import sqlite3
    import time

    from storage.db import SQLITE_PRAGMAS, STATEMENT_CACHE

    connections: dict[str, sqlite3.Connection] = {}
    for unit in units:
        if unit.thread not in connections:
            conn = connections[unit.thread] = sqlite3.connect(
                str(path), isolation_level=None, check_same_thread=False, cached_statements=STATEMENT_CACHE
            )
            for key, value in SQLITE_PRAGMAS.items():
                conn.execute(f"PRAGMA {key} = {value}")
    spent = dict.fromkeys(connections, 0.0)
    for unit in units:
        conn = connections[unit.thread]
        start = time.thread_time()
        for statement in unit.statements:
            sql, params = (statement, ()) if isinstance(statement, str) else statement
            try:
                conn.execute(sql, params).fetchall()
            except sqlite3.Error:
                pass
        spent[unit.thread] += time.thread_time() - start
    for conn in connections.values():
        conn.close()
    return spent


def replay(units: list[Unit], path: Path, per_thread: bool = False) -> tuple[float, float, int]:
    """Issue the recorded transactions again, in order, with Wilson's pragmas: on one connection, or with
    `per_thread` on a connection for each thread that issued them, as Wilson issues them (one connection per
    actor thread, each with its own page cache and statement cache; in WAL mode a commit on one connection
    empties the others' page caches, so the next read there loads its pages again).
    Returns (seconds, CPU seconds of this thread, statements that failed): on a loaded machine the wall
    time also holds the waits for a core, which the CPU time a benchmark sets beside it does not."""
    import sqlite3
    import time

    from storage.db import SQLITE_PRAGMAS, STATEMENT_CACHE
    from wilson.kernel.clock import monotonic

    connections: dict[str, sqlite3.Connection] = {}
    for unit in units:  # opened before the clock starts, as Wilson's actors open theirs when they start
        name = unit.thread if per_thread else ""
        if name not in connections:
            # per thread, Wilson's statement cache too; the one connection keeps sqlite3's default, as it always did
            cache = {"cached_statements": STATEMENT_CACHE} if per_thread else {}
            conn = connections[name] = sqlite3.connect(
                str(path), isolation_level=None, check_same_thread=False, **cache
            )
            for key, value in SQLITE_PRAGMAS.items():
                conn.execute(f"PRAGMA {key} = {value}")
    failed = 0
    start, cpu_start = monotonic(), time.thread_time()
    for unit in units:
        conn = connections[unit.thread if per_thread else ""]
        for statement in unit.statements:
            sql, params = (statement, ()) if isinstance(statement, str) else statement
            try:
                conn.execute(sql, params).fetchall()
            except sqlite3.Error:
                failed += 1
    elapsed, cpu = monotonic() - start, time.thread_time() - cpu_start
    for conn in connections.values():
        conn.close()
    return elapsed, cpu, failed
