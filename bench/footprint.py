"""Footprint: how long Wilson takes to be ready, and how much memory it holds.

    python -m bench.footprint [--quick] [--json]
    python -m bench.footprint --ready-against DIR [--repeats N]

Ready: `bin/wilson --home DIR run --llm offline` is started as a process with
"say hi" on its standard input (no Telegram token, so it talks on the terminal),
and timed until its first delivery line is printed; the CPU it used by then is read
beside (Linux). Baseline: a bare Python process that imports the same libraries
(pykka, telegram, peewee, httpx, croniter, loguru, icalendar, recurring_ical_events,
caldav) and exits. Both are timed as a start after the first, with the byte-code of
every module cached: an untimed run caches it first, in a folder of the bench's own
(PYTHONPYCACHEPREFIX), also where the environment says PYTHONDONTWRITEBYTECODE, which
would otherwise time compiling all of Wilson's sources at every start (what no start
after `make run`'s or `pip install`'s first does).

Idle: CPU time (process_time) per wall second of a Wilson on the real clock with the offline model and
nothing arriving, after it settled, beside the same Wilson looking at what has come due every second (the
tick's interval before it became 10 s); the statements it issued meanwhile are counted too.

Memory: resident set size (VmRSS from /proc/self/status) of a process that ran
Wilson through one simulated hour carrying a full day's worth of the persona's input
(40 emails, 15 messages, 30 calendar events, 10 tasks) with the offline model, beside
a bare process that imports the same libraries. Each is its own process, so neither
inherits the other's heap. The same process then lives on through the persona's mail and
messages of the following days, each at its own time, and its RSS is read again after a
simulated week and a month (a week with --quick).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta
from pathlib import Path

from bench.common import ROOT, Figure, TempHome, emit, ratio, result
from wilson.kernel.clock import monotonic

LIBRARIES = "pykka, telegram, peewee, httpx, croniter, loguru, icalendar, recurring_ical_events, caldav"


def _env(root: Path = ROOT) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WILSON_")}
    env["PYTHONPATH"] = str(root)
    return env


def _start_env(root: Path = ROOT) -> dict:
    """A timed start's environment: byte-code cached (see the module's docstring), apart from the tree."""
    env = _env(root)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "wilson-bench-pycache")
    return env


def _cpu_seconds(pid: int) -> float | None:
    """CPU time (user and system) a running process has used so far; None where /proc has no stat."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _ready_seconds(root: Path = ROOT) -> tuple[float, float | None]:
    """`wilson run` (of the tree at `root`) until its first delivery line: wall seconds, and the CPU seconds it
    used by then."""
    with TempHome("ready") as home:
        start = monotonic()
        proc = subprocess.Popen(
            [
                sys.executable,
                str(root / "bin" / "wilson"),
                "--home",
                str(home),
                "--log-level",
                "WARNING",
                "run",
                "--llm",
                "offline",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=_start_env(root),
            cwd=str(home),
        )
        try:
            proc.stdin.write("say hi\n")
            proc.stdin.flush()
            for line in proc.stdout:
                if line.startswith("[") and "Wilson" in line:
                    elapsed = monotonic() - start
                    cpu = _cpu_seconds(proc.pid)
                    break
            else:
                raise RuntimeError("wilson run printed no delivery")
            proc.stdin.close()
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return elapsed, cpu


def ready_against(other: Path, repeats: int) -> list[str]:
    """This tree's start beside another's (an untouched copy of main, say), alternated start by start so that
    both meet the same load of a shared machine: the median wall and CPU seconds to the first delivery of each."""
    trees = [ROOT, other.resolve()]
    for tree in trees:
        _ready_seconds(tree)  # untimed: caches the byte-code
    starts: dict[Path, list[tuple[float, float | None]]] = {tree: [] for tree in trees}
    for _ in range(repeats):
        for tree in trees:
            starts[tree].append(_ready_seconds(tree))
    lines = []
    for tree in trees:
        walls, cpus = [w for w, _ in starts[tree]], [c for _, c in starts[tree] if c is not None]
        cpu = f", CPU median {statistics.median(cpus):.3f} s" if cpus else ""
        lines.append(f"{tree}: wall median {statistics.median(walls):.3f} s (best {min(walls):.3f}){cpu}")
    return lines + [f"{repeats} starts each, alternated; load average {os.getloadavg()[0]:.1f} at the end"]


def _bare_import_seconds() -> float:
    start = monotonic()
    subprocess.run([sys.executable, "-c", f"import {LIBRARIES}"], check=True, env=_start_env())
    return monotonic() - start


def _child(kind: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "bench.footprint", "--child", kind],
        check=True,
        env=_env(),
        capture_output=True,
        text=True,
        cwd=str(ROOT),
        timeout=1800,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def child_bare() -> dict:
    exec(f"import {LIBRARIES}")  # noqa: S102 - the same import line the baseline process runs
    return {"rss_kb": _status_kb("VmRSS"), "hwm_kb": _status_kb("VmHWM")}


def child_wilson(days: int = 1) -> dict:
    """One simulated hour with a day's worth of the persona's input, offline model; then, with `days` > 1,
    the following days' input at its own times until `days` days have passed, RSS read after a week and
    after the last day."""
    exec(f"import {LIBRARIES}")  # noqa: S102 - Wilson imports them lazily; count them the same way
    from bench import persona
    from bench.common import bench_config, make_wilson
    from wilson.kernel.clock import SimClock

    with TempHome("rss") as home:
        config = bench_config(home)
        clock = SimClock(datetime.fromisoformat("2027-03-01T08:00:00+01:00"))
        started = monotonic()
        app = make_wilson(config, clock, llm="offline")
        tz = config.timezone
        windows = [w.strip() for w in str(config.get("tick", "windows")).split(",") if w.strip()]
        persona.write_calendar(app.calendar_file(), clock.now(), tz)
        persona.create_tasks(clock.now(), tz, windows)
        app.start()
        start_seconds = monotonic() - started
        rss_started = _status_kb("VmRSS")
        try:
            begin = clock.now()
            midnight = datetime.combine(begin.astimezone(tz).date(), datetime.min.time(), tzinfo=tz)
            # a day of input at a time, as it would arrive: the harness holds no month of mail beside Wilson
            by_day = ([s for s in one if s.kind != "calendar"] for one in persona.daily(midnight, days, tz))
            day = next(by_day)
            first, last = day[0].at, day[-1].at
            span = (last - first).total_seconds() or 1
            app.sync()  # the calendar comes in at once
            app.wait_idle()
            for item in day:  # the day squeezed into one hour, in the same order
                at = begin + timedelta(seconds=(item.at - first).total_seconds() / span * 3600)
                if at > clock.now():
                    app.advance(at - clock.now())
                if item.kind == "chat":
                    app.say(item.text)
                else:
                    persona.deliver(app, item)
                app.wait_idle()
            app.advance(begin + timedelta(hours=1) - clock.now())
            from storage.models import Inbox, Outbox, ReceptorBuffer

            def counts(stimuli: int) -> dict:
                return {
                    "inbox": Inbox.select().count(),
                    "outbox": Outbox.select().count(),
                    "buffered": ReceptorBuffer.select().count(),
                    "stimuli": stimuli,
                }

            hour = {"rss_kb": _status_kb("VmRSS"), "counts": counts(len(day))}
            lived: dict[int, dict] = {}
            checkpoints = sorted({d for d in (7, days) if 1 < d <= days})
            rest = (s for one in by_day for s in one)
            pending = next(rest, None)
            seen = len(day)
            lived_started = monotonic()
            for mark in checkpoints:
                until = midnight + timedelta(days=mark)
                while pending is not None and pending.at < until:
                    item, pending = pending, next(rest, None)
                    if item.at > clock.now():
                        app.advance(item.at - clock.now())
                    if item.kind == "chat":
                        app.say(item.text)
                    else:
                        persona.deliver(app, item)
                    app.wait_idle()
                    seen += 1
                app.advance(until - clock.now())
                app.wait_idle()
                lived[mark] = {
                    "rss_kb": _status_kb("VmRSS"),
                    "counts": counts(seen),
                    "wall_seconds": round(monotonic() - lived_started, 1),
                }
        finally:
            app.stop()
    return {
        "rss_kb": hour["rss_kb"],
        "hwm_kb": _status_kb("VmHWM"),
        "rss_started_kb": rss_started,
        "start_seconds": round(start_seconds, 3),
        "counts": hour["counts"],
        "days": {str(mark): figures for mark, figures in lived.items()},
    }


def child_idle(interval: float, seconds: float) -> dict:
    """A Wilson on the real clock that nothing reaches: its CPU and statements per wall second."""
    import time

    from bench.common import SqlRecorder, bench_config, make_wilson
    from wilson.kernel.clock import RealClock

    with TempHome("idle") as home:
        app = make_wilson(bench_config(home, WILSON_TICK_INTERVAL_SECONDS=interval), RealClock(), llm="offline")
        recorder = SqlRecorder(app.db)
        app.start()
        try:
            app.say("hi")
            app.wait_idle()
            time.sleep(2 * interval)  # the start-up scans and the first timer looks are over
            recorder.start()
            cpu, wall = time.process_time(), monotonic()
            time.sleep(seconds)
            cpu, wall = time.process_time() - cpu, monotonic() - wall
            statements = sum(len(unit.statements) for unit in recorder.stop())
        finally:
            app.stop()
    return {"cpu_ms_per_s": cpu * 1000 / wall, "statements_per_s": statements / wall, "seconds": round(wall, 1)}


def run(quick: bool = False) -> dict:
    repeats = 2 if quick else 5
    days = 7 if quick else 30
    _ready_seconds()  # untimed: byte-compiles what the first run would
    _bare_import_seconds()
    starts = [_ready_seconds() for _ in range(repeats)]
    ready = [wall for wall, _ in starts]
    cpus = [cpu for _, cpu in starts if cpu is not None]
    bare = [_bare_import_seconds() for _ in range(repeats)]
    wilson, plain = _child(f"wilson:{days}"), _child("bare")
    idle_s = 20 if quick else 40  # whole multiples of the 10 s interval: the same number of looks in any phase
    idle, every_second = _child(f"idle:10:{idle_s}"), _child(f"idle:1:{idle_s}")
    ready_s, bare_s = statistics.median(ready), statistics.median(bare)
    rss, bare_rss = wilson["rss_kb"] / 1024, plain["rss_kb"] / 1024
    figures = [
        Figure(
            "`wilson run` to first delivery",
            round(ready_s, 3),
            "s",
            "bare python importing the same libraries",
            round(bare_s, 3),
            ratio(ready_s, bare_s),
            "<= 0.5 s",
            ready_s <= 0.5,
            f"median of {repeats}"
            + (f"; CPU by then {statistics.median(cpus):.3f} s" if cpus else "")
            + f"; Wilson(...).start() in process: {wilson['start_seconds']} s",
        ),
        Figure(
            "RSS after one simulated hour (a day's input, offline model)",
            round(rss, 1),
            "MiB",
            "bare python importing the same libraries",
            round(bare_rss, 1),
            ratio(rss, bare_rss),
            "",
            None,
            f"right after start {wilson['rss_started_kb'] / 1024:.1f} MiB",
        ),
    ]
    for mark, lived in wilson["days"].items():
        mib = lived["rss_kb"] / 1024
        month = mark == "30"  # the goal: under 100 MiB after a month with mail, within 2 x the bare interpreter
        figures.append(
            Figure(
                f"RSS after a simulated {'week' if mark == '7' else f'{mark} days'} (the persona's mail "
                "and messages, offline model)",
                round(mib, 1),
                "MiB",
                "bare python importing the same libraries",
                round(bare_rss, 1),
                ratio(mib, bare_rss),
                "<= 100 MiB and <= 2x" if month else "",
                (mib <= 100 and mib <= 2 * bare_rss) if month else None,
                f"{lived['counts']['stimuli']} stimuli, {lived['counts']['outbox']} outbox rows; "
                f"lived in {lived['wall_seconds']} s; peak {wilson['hwm_kb'] / 1024:.1f} MiB",
            )
        )
    figures += [
        Figure(
            "idle CPU per wall second (real clock, offline model, nothing arriving)",
            round(idle["cpu_ms_per_s"], 2),
            "ms/s",
            "the same with a look every second (the old tick)",
            round(every_second["cpu_ms_per_s"], 2),
            ratio(idle["cpu_ms_per_s"], every_second["cpu_ms_per_s"]),
            "",
            None,
            f"{idle['statements_per_s']:.1f} statements/s against {every_second['statements_per_s']:.1f}, "
            f"over {idle['seconds']} s each",
        ),
    ]
    notes = [
        f"the hour carried {wilson['counts']['stimuli']} stimuli: {wilson['counts']['buffered']} buffered rows, "
        f"{wilson['counts']['inbox']} inbox rows, {wilson['counts']['outbox']} outbox rows"
    ]
    return result(
        "footprint",
        figures,
        {
            "ready_s": ready,
            "ready_cpu_s": cpus,
            "bare_import_s": bare,
            "wilson": wilson,
            "bare": plain,
            "idle": idle,
            "idle_every_second": every_second,
        },
        notes,
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.footprint", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)  # wilson, bare or idle:INTERVAL:SECONDS
    parser.add_argument(
        "--ready-against",
        metavar="DIR",
        type=Path,
        help="only the start to the first delivery, alternated with the tree at DIR (e.g. `git archive` of main)",
    )
    parser.add_argument("--repeats", type=int, default=9, help="starts of each tree with --ready-against")
    args = parser.parse_args(argv)
    if args.ready_against:
        print("\n".join(ready_against(args.ready_against, args.repeats)))
        return 0
    if args.child:
        if args.child.startswith("idle:"):
            _, interval, seconds = args.child.split(":")
            print(json.dumps(child_idle(float(interval), float(seconds))))
        else:
            kind, _, days = args.child.partition(":")
            print(json.dumps(child_wilson(int(days or 1)) if kind == "wilson" else child_bare()))
        return 0
    emit(run(args.quick), args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
