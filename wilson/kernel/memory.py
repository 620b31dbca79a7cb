"""Fewer malloc arenas: a long-running Wilson gives back what its threads freed.

glibc gives each thread that contends for the heap an arena of its own (up to eight per core), and
memory freed in one arena is reused only there: a dozen actor threads each keeping their own free
space cost a month-long process some 12 MiB for nothing. Two arenas keep the contention low (the
actors mostly wait on their mailboxes) and the free space shared. Elsewhere than glibc it does nothing.
"""

from __future__ import annotations

import ctypes
from functools import lru_cache

M_ARENA_MAX = -8  # from glibc's malloc.h
ARENAS = 2


@lru_cache(maxsize=None)
def limit_arenas(arenas: int = ARENAS) -> bool:
    """Cap malloc's arenas for the threads still to come (once a process); True when the C library took it."""
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the C library this process already runs on
    except (OSError, AttributeError):  # no mallopt (musl, macOS): nothing to cap
        return False
    return bool(mallopt(M_ARENA_MAX, arenas))
