"""Fewer malloc arenas, and free pages given back: a long-running Wilson returns what its threads freed.

glibc gives each thread that contends for the heap an arena of its own (up to eight per core), and
memory freed in one arena is reused only there: a dozen actor threads each keeping their own free
space cost a month-long process some 12 MiB for nothing. Two arenas keep the contention low (the
actors mostly wait on their mailboxes) and the free space shared. Free pages inside the heap stay the
process' until malloc_trim gives them back (about 5 MiB after a simulated month); the supervisor's watchdog
does that once a TRIM_SECONDS. Elsewhere than glibc both do nothing.
"""

from __future__ import annotations

import ctypes
from functools import lru_cache

M_ARENA_MAX = -8  # from glibc's malloc.h
ARENAS = 2
TRIM_SECONDS = 60.0  # a trim walks the heap (a few ms): once a minute costs nothing that shows


@lru_cache(maxsize=1)
def _libc():
    try:
        return ctypes.CDLL(None)  # the C library this process already runs on
    except OSError:
        return None


@lru_cache(maxsize=None)
def limit_arenas(arenas: int = ARENAS) -> bool:
    """Cap malloc's arenas for the threads still to come (once a process); True when the C library took it."""
    mallopt = getattr(_libc(), "mallopt", None)  # none on musl or macOS: nothing to cap
    return bool(mallopt(M_ARENA_MAX, arenas)) if mallopt is not None else False


def give_back() -> bool:
    """Return the heap's free pages to the system; True when some were."""
    trim = getattr(_libc(), "malloc_trim", None)
    return bool(trim(0)) if trim is not None else False
