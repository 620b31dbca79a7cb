"""A long-running Wilson gives back to the system the memory its threads freed (glibc's malloc_trim, which the
supervisor's watchdog calls once a minute), rather than keeping the month's highest heap for good."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import ROOT

FREED = """
import json
from pathlib import Path
from wilson.kernel import memory

def rss():
    return next(int(l.split()[1]) for l in Path("/proc/self/status").read_text().splitlines()
                if l.startswith("VmRSS:")) / 1024

took = memory.limit_arenas()
blocks = [bytes(2048) for _ in range(40_000)]  # 80 MiB in malloc's heap (each larger than pymalloc's blocks)
kept = blocks[::500]  # a few stay, so the heap cannot just shrink from its top
del blocks
before = rss()
gave = memory.give_back()
print(json.dumps({"took": took, "before": before, "after": rss(), "gave": gave}))
"""


def test_freed_heap_memory_goes_back_to_the_system():
    done = subprocess.run(
        [sys.executable, "-c", FREED],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.splitlines()[-1])
    assert found["took"] and found["gave"]  # glibc took the cap on arenas and gave pages back
    assert found["before"] - found["after"] > 50, found  # of the 80 MiB freed, most left the process


def test_every_actor_thread_connection_keeps_a_small_page_cache(db):
    import threading

    from storage.models import Inbox

    sizes = []

    def read():  # each actor thread has a connection of its own
        Inbox.select().count()
        sizes.append(db.execute_sql("PRAGMA cache_size").fetchone()[0])

    threads = [threading.Thread(target=read) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # negative: KiB; SQLite's own 2 MiB a connection held some 7 MiB over a dozen actors after a month of mail
    assert sizes == [-256, -256, -256]
