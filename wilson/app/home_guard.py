"""One Wilson per home, and no simulated clock on a home that lives in real time.

A home is held through an advisory lock (flock) on `wilson.lock`, which also names the holder's pid:
the kernel drops the lock when its process dies, however it died, so a lock left by a dead process is
simply taken over. The processes of one PostgreSQL database (`wilson run --role ingress` and its
workers) may share a home, as they share their configuration: only `--role all` holds it.

A home that has run on the real clock carries `real-clock`; one made before that file existed is
known by its SQLite database without a `simulated-time` beside it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

LOCK_FILE = "wilson.lock"
REAL_CLOCK_FILE = "real-clock"
SIM_TIME_FILE = "simulated-time"
DATABASE_FILE = "wilson.sqlite3"


class HomeInUse(Exception):
    """Another process holds this home; the message says which, in one line."""


@contextlib.contextmanager
def hold(home: Path) -> Iterator[None]:
    """Hold `home` for the block, or raise HomeInUse naming the process that holds it."""
    home.mkdir(parents=True, exist_ok=True)
    fd = os.open(home / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").split()
            who = f"process {holder[0]}" if holder and holder[0].isdigit() else "another process"
            raise HomeInUse(f"{home} is in use by {who}: stop it first, or use another --home") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def lived_on_real_clock(home: Path) -> bool:
    if (home / REAL_CLOCK_FILE).exists():
        return True
    database = home / DATABASE_FILE
    return database.exists() and database.stat().st_size > 0 and not (home / SIM_TIME_FILE).exists()


def mark_real_clock(home: Path, now: datetime) -> None:
    """Remember that this home lives in real time (the first such start is kept)."""
    path = home / REAL_CLOCK_FILE
    if not path.exists():
        home.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{now.isoformat()}\n")


def sim_refusal(home: Path) -> str | None:
    """Why a simulated clock may not run on `home`, in one line, or None when it may."""
    if not lived_on_real_clock(home):
        return None
    return (
        f"{home} has lived on the real clock; a simulated clock would move it through time (expire "
        "proposals, send stale briefings). Use a new --home, or --force if you mean it."
    )
