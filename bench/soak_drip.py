"""A watched feed whose server drips its headers, against a real `wilson run` on the real clock.

    PYTHONPATH=$PWD .venv/bin/python -m bench.soak_drip [--minutes 10] [--sample 30]

Two sources are watched on loopback, each every 5 minutes (the most often Wilson allows): one server
answers with a status line and then one header line every 5 s, never finishing (tests/web_harness.py's
DripSite); the other is a normal RSS feed that gains an item after Wilson's first look at it. Wilson runs
as a separate process (its own temporary WILSON_HOME, dashboard on a free loopback port, watchdog on,
offline model). Every `--sample` seconds the table gets a row: the process's threads (/proc/PID/status),
whether the dashboard's first port still answers HTTP, the web channel's starts, restarts and hangs (from
wilson.log), the dripping source's recorded failures, error and next look, and the feed rows buffered.
Each look at the dripping source is timed (from its recorded start to the moment its failure is
recorded, polled every second). The verdict line says whether every look gave up within the watchdog's
allowance for one look, the failures were recorded with a growing back-off, the channel was never
restarted and its dashboard kept its port, the thread count stayed flat, and the good feed's new item was
buffered. Everything started here is stopped at the end (Wilson through the end of its input, then
SIGTERM, then SIGKILL, each bounded).

Measured on 2026-12-06 (2 shared cores), 10 minutes, a row every 30 s (abridged):

      t s  thr  dash start/rest/hung drip fail  looking next look in  feed buffered
        3   17   401     1/0/0               0      yes        299 s     -        0
       61   17   401     1/0/0               0      yes        241 s     -        0
       91   17   401     1/0/0               1       no        211 s  feed        0
      300   17   401     1/0/0               1       no          2 s  feed        0
      330   17   401     1/0/0               1      yes        571 s  feed        0
      360   17   401     1/0/0               2       no        541 s  feed        1
      571   17   401     1/0/0               2       no        331 s  feed        1

    look 1 gave up after 61 s (next 5 min after it began), look 2 after 31 s (next 10 min after)
    VERDICT: PASS: no restart (web started once, 0 restarts, 0 hangs), dashboard on one port answering
    every sample, threads 17 throughout, the other feed's new item buffered.

Two things the figures show: the first look takes two 30 s deadlines (robots.txt drips too, and a
robots.txt that cannot be read allows, so the feed itself is asked next); later looks reuse the robots
answer and take one. And looks are sequential: on the first tick the good feed waited about 60 s behind
the dripping one before it was read.
"""

from __future__ import annotations

import argparse
import http.client
import os
import re
import signal
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

from bench.common import ROOT, TempHome

EVERY = timedelta(minutes=5)
DRIP_EVERY = 5.0  # seconds between the dripping server's header lines

FEED = """<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel><title>Embassy news</title><link>http://127.0.0.1/</link>
<description>Notices</description>
{items}
</channel></rss>"""
ITEM = (
    "<item><guid>http://127.0.0.1/notice/{n}</guid><title>Embassy notice {n}</title>"
    "<description>Opening hours change {n}</description></item>"
)


def feed(count: int) -> str:
    return FEED.format(items="\n".join(ITEM.format(n=n) for n in range(count, 0, -1)))


def threads(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Threads:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def answers(port: int) -> str:
    """The dashboard's HTTP status for GET /, or why there was none."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", "/")
        return str(conn.getresponse().status)
    except OSError as exc:
        return type(exc).__name__
    finally:
        conn.close()


def log_counts(log: Path) -> dict:
    text = log.read_text(errors="replace") if log.exists() else ""
    return {
        "started": len(re.findall(r"supervisor: started web$", text, re.M)),
        "restarted": len(re.findall(r"\bweb restarted after", text)),
        "hung": len(re.findall(r"\bweb is hung", text)),
        "ports": re.findall(r"dashboard on http://127\.0\.0\.1:(\d+)", text),
    }


def env() -> dict:
    out = {k: v for k, v in os.environ.items() if not k.startswith("WILSON_")}
    out.update(
        {
            "PYTHONPATH": str(ROOT),
            "WILSON_CORE_TIMEZONE": "Europe/Berlin",
            "WILSON_WEB_ENABLED": "true",
            "WILSON_WEB_PORT": "0",
            "WILSON_WEB_WATCH_POLL": "5m",
        }
    )
    return out


def stop(proc: subprocess.Popen) -> str:
    """End Wilson: the end of its input first (as a user's Ctrl-D), then SIGTERM, then SIGKILL."""
    if proc.poll() is not None:
        return f"had already exited ({proc.returncode})"
    try:
        proc.stdin.close()
    except OSError:
        pass
    for how, action in (
        ("at the end of its input", None),
        ("on SIGTERM", signal.SIGTERM),
        ("on SIGKILL", signal.SIGKILL),
    ):
        if action is not None:
            proc.send_signal(action)
        try:
            proc.wait(timeout=30)
            return f"exited {how} ({proc.returncode})"
        except subprocess.TimeoutExpired:
            continue
    return "did not exit"


def run(minutes: float, sample: float) -> bool:
    from channels.web import fetching, watcher
    from storage.db import open_database
    from storage.migrations import migrate
    from storage.models import ReceptorBuffer
    from tests.web_harness import DripSite, LoopbackSite
    from wilson.kernel.clock import RealClock, monotonic

    from loguru import logger

    logger.remove()  # this process's own lines (migrations, traces) are not the measurement
    logger.add(sys.stderr, level="WARNING")
    allowance = fetching.LOOK_SECONDS + fetching.TIMEOUT_SECONDS + 30  # what the channel's liveness beat allows a look
    clock = RealClock()
    rows, looks, notes = [], [], []
    with TempHome("soak-drip") as home, DripSite(every=DRIP_EVERY, lines=100_000) as drip, LoopbackSite() as site:
        site.put("/news.xml", feed(1), "application/rss+xml")
        slow, good = drip.url("/feed.xml"), site.url("/news.xml")
        db = open_database(None, home)
        migrate()
        now = clock.now()
        watcher.add(slow, EVERY, now)
        watcher.add(good, EVERY, now)
        log = home / "wilson.log"
        out = open(home / "run.out", "w")
        began = monotonic()
        proc = subprocess.Popen(
            [sys.executable, str(ROOT / "bin" / "wilson"), "--home", str(home), "run", "--llm", "offline"],
            stdin=subprocess.PIPE,
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
            env=env(),
            cwd=str(home),
        )
        try:
            port = None
            while port is None and monotonic() - began < 60 and proc.poll() is None:
                found = log_counts(log)["ports"]
                port = int(found[0]) if found else None
                time.sleep(0.5)
            if port is None:
                print("the dashboard never said where it is; see", log)
                return False
            changed = False
            seen_failures, next_sample = 0, began
            print(f"wilson run pid {proc.pid}, dashboard on port {port}, dripping source {slow}, feed {good}")
            print(
                f"{'t s':>5} {'thr':>4} {'dash':>5} {'start/rest/hung':>15} {'drip fail':>9} {'looking':>8} "
                f"{'next look in':>12} {'feed':>5} {'buffered':>8}  drip error"
            )
            end = began + minutes * 60
            while monotonic() < end and proc.poll() is None:
                t = monotonic()
                try:
                    s, g = watcher.get(slow) or {}, watcher.get(good) or {}
                    buffered = ReceptorBuffer.select().where(ReceptorBuffer.channel == "web").count()
                except Exception as exc:  # Wilson holds the write lock a moment: count it, read again
                    notes.append(f"t={t - began:.0f}s read failed: {exc}")
                    time.sleep(1)
                    continue
                failures = int(s.get("failures") or 0)
                if failures > seen_failures:
                    started = datetime.fromisoformat(s["checked_at"])
                    gave_up = clock.now()
                    backoff = datetime.fromisoformat(s["next_at"]) - started
                    looks.append(
                        {
                            "n": failures,
                            "seconds": (gave_up - started).total_seconds(),
                            "backoff": backoff,
                            "error": s.get("error") or "",
                        }
                    )
                    seen_failures = failures
                if not changed and g.get("kind") == "feed":
                    site.put("/news.xml", feed(2), "application/rss+xml")  # news after the first look
                    changed = True
                if t >= next_sample:
                    counts = log_counts(log)
                    nxt = s.get("next_at")
                    due_in = (datetime.fromisoformat(nxt) - clock.now()).total_seconds() if nxt else None
                    row = {
                        "t": t - began,
                        "threads": threads(proc.pid),
                        "dash": answers(port),
                        "started": counts["started"],
                        "restarted": counts["restarted"],
                        "hung": counts["hung"],
                        "ports": counts["ports"],
                        "failures": failures,
                        "looking": "looking_since" in s,
                        "next": due_in,
                        "feed": g.get("kind") or "-",
                        "buffered": buffered,
                        "error": s.get("error") or "",
                    }
                    rows.append(row)
                    print(
                        f"{row['t']:5.0f} {row['threads'] or '-':>4} {row['dash']:>5} "
                        f"{row['started']:>5}/{row['restarted']}/{row['hung']:<7} {failures:>9} "
                        f"{'yes' if row['looking'] else 'no':>8} "
                        f"{'-' if due_in is None else f'{due_in:.0f} s':>12} {row['feed']:>5} {buffered:>8}  "
                        f"{row['error'][:60]}",
                        flush=True,
                    )
                    next_sample += sample
                time.sleep(1)
            alive = proc.poll() is None
        finally:
            stopped = stop(proc)
            out.close()
            db.close()
        accepted, dropped = drip.accepted, drip.dropped
        final = log_counts(log)

    print()
    for look in looks:
        print(
            f"look {look['n']} at the dripping source gave up after {look['seconds']:.0f} s; next look "
            f"{look['backoff'].total_seconds() / 60:.0f} min after it began ({look['error']})"
        )
    print(
        f"the dripping server accepted {accepted} connections; Wilson hung up on {dropped} of them "
        f"(noticed at its next header line)"
    )
    print(f"wilson run {stopped}")
    for note in notes:
        print(note)

    counts = [r["threads"] for r in rows if r["threads"]]
    backoffs = [look["backoff"] for look in looks]
    checks = {
        "Wilson ran the whole time": alive,
        f"every look gave up within {allowance:.0f} s": bool(looks) and all(x["seconds"] <= allowance for x in looks),
        "failures recorded, back-off growing": len(looks) >= 2
        and all(b == EVERY * 2**i for i, b in enumerate(backoffs)),
        "web channel never restarted": final["started"] == 1 and final["restarted"] == 0 and final["hung"] == 0,
        "dashboard kept its port": len(set(final["ports"])) == 1 and all(r["dash"].isdigit() for r in rows),
        "threads flat": bool(counts) and max(counts) - min(counts) <= 2 and counts[-1] <= counts[0] + 1,
        "the other feed's news buffered": bool(rows) and rows[-1]["buffered"] >= 1,
    }
    ok = all(checks.values())
    print(
        f"VERDICT: {'PASS' if ok else 'FAIL'} over {minutes:g} min: "
        + "; ".join(f"{name} {'yes' if value else 'NO'}" for name, value in checks.items())
        + f" (threads {min(counts, default=0)}-{max(counts, default=0)}, "
        f"{len(looks)} dripping looks, {rows[-1]['buffered'] if rows else 0} rows buffered)"
    )
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--sample", type=float, default=30.0, help="seconds between table rows")
    opts = parser.parse_args(argv)
    return 0 if run(opts.minutes, opts.sample) else 1


if __name__ == "__main__":
    sys.exit(main())
