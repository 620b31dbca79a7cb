"""How long the current handler of each actor has run, against the budget it has.

A handler is hung when it has made no progress for longer than its budget, not when
its mailbox is slow to answer: a model call may legitimately take a minute, three
times over. Each actor thread has one `Handler` record; `begin` and `end` bracket a
handler, and long steps inside it (a model call, a retry's wait) call `beat(budget)`
to say "I am working, give me this long for the next step". The supervisor's watchdog
reads the records from its own thread.
"""

from __future__ import annotations

import os
import secrets
import socket
import threading
from dataclasses import dataclass

from wilson.kernel.clock import monotonic

_current = threading.local()


@dataclass
class Handler:
    """One actor incarnation's current handler (read by the watchdog, written by the actor's thread)."""

    owner: str
    busy: bool = False
    since: float = 0.0  # monotonic time of the last sign of progress
    budget: float = 0.0  # seconds allowed from `since` before the handler counts as hung
    what: str = ""
    fenced: bool = False  # replaced as hung: its claims are no longer its own

    def overdue(self, now: float) -> float:
        """Seconds past the budget (0 when on time or idle)."""
        if not self.busy:
            return 0.0
        return max(0.0, now - self.since - self.budget)


def begin(handler: Handler, what: str, budget: float) -> None:
    # `since` first: the watchdog reads these from its own thread, and an old `since` with a new,
    # shorter budget would look like a hang
    handler.since = monotonic()
    handler.budget, handler.what = budget, what
    handler.busy = True
    _current.handler = handler


def end(handler: Handler) -> None:
    handler.busy = False
    _current.handler = None


def beat(budget: float, what: str | None = None) -> None:
    """Progress on the calling thread's handler: the next step may take `budget` seconds."""
    handler = getattr(_current, "handler", None)
    if handler is None:
        return
    handler.since = monotonic()
    handler.budget = budget
    if what:
        handler.what = what


def _process_identity() -> str:
    # host and pid find a dead process on this host; the token tells a reused pid from ours
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


PROCESS = _process_identity()


def owner_alive(owner: str, host: str | None = None) -> bool | None:
    """Whether the process named in a claim's owner still runs: True, False, or None when it is on
    another host (only its lease can tell)."""
    process = owner.split("/", 1)[0]
    parts = process.split(":")
    if len(parts) != 3 or not parts[1].isdigit():
        return False
    their_host, pid = parts[0], int(parts[1])
    if their_host != (host or socket.gethostname()):
        return None
    if process == PROCESS:
        return True
    if pid == os.getpid():
        return False  # our pid, another token: an earlier life of this process' pid
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
