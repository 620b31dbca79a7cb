"""Which threads the user waits on, and background work that gives way to them.

A thread marked here (an actor on the realtime path, a channel's event loop) has its database writes go
ahead of queued background writes (storage/db.py reads the mark). The mark lives in the kernel because
the actor base and the channel loops set it, and they sit below storage's callers.

Writes are not all: Python runs one thread's code at a time, and a background loop that spends
milliseconds of the offline rules on each of 25 mails (triage's floor) took the interpreter from a
user's run again and again, which made some replies twice as slow under load. So the cortex's realtime
lane counts as work for the user (`for_the_user`) except while it waits on another process (`waiting`:
a model's answer, the network), and background loops call `give_way` between items: while a user's
run needs the interpreter, they wait for it, for a bounded time so background work never starves.
(Only that lane: a channel's handler may spend seconds on the network, checking watched pages.)
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from wilson.kernel.clock import monotonic

_lane = threading.local()

# At most this long per item: a realtime run that computes longer than that (the offline rules on a long
# letter) shares the interpreter again rather than holding background work up without end.
GIVE_WAY_SECONDS = 0.25

# A user's message committed on a channel's thread is on its way to the realtime lane (two actor hand-offs):
# background loops give way for up to this long, until a realtime handler takes the message up.
HANDOVER_SECONDS = 0.1

_turn = threading.Condition()
_serving = 0  # threads now working for a waiting user (not while they wait on another process)
_handover_until = 0.0  # monotonic: a user's message is on its way until then
_giving_way = 0  # background threads waiting in give_way now


def writes_first() -> None:
    """Mark the calling thread as one the user waits on: its writes go ahead of queued background writes."""
    _lane.urgent = True


def is_urgent() -> bool:
    return getattr(_lane, "urgent", False)


def _count(change: int) -> None:
    global _serving
    with _turn:
        _serving += change
        if _serving == 0:
            _turn.notify_all()


@contextmanager
def for_the_user() -> Iterator[None]:
    """The calling thread works for a user who waits (the cortex's realtime lane): background loops give way."""
    if getattr(_lane, "serving", False):  # already counted: a nested handler
        yield
        return
    global _handover_until
    _lane.serving = True
    _handover_until = 0.0  # taken up: the handler counts itself from here
    _count(+1)
    try:
        yield
    finally:
        _count(-1)
        _lane.serving = False


@contextmanager
def waiting() -> Iterator[None]:
    """The user's run waits on another process (a model's answer, a server): background work may run meanwhile."""
    if not getattr(_lane, "serving", False) or getattr(_lane, "aside", False):
        yield
        return
    _lane.aside = True
    _count(-1)
    try:
        yield
    finally:
        _count(+1)
        _lane.aside = False


def serving() -> int:
    """How many threads work for a waiting user right now."""
    return _serving


def giving_way() -> int:
    """How many background threads wait in `give_way` right now."""
    return _giving_way


def arrived() -> None:
    """A user's message is being committed on a channel's thread: background loops give way until a realtime
    handler takes it up (or HANDOVER_SECONDS pass)."""
    global _handover_until
    _handover_until = monotonic() + HANDOVER_SECONDS


def _busy() -> bool:
    return _serving > 0 or _handover_until > monotonic()


def give_way(limit: float = GIVE_WAY_SECONDS) -> None:
    """Background work between two items, outside any transaction: wait while a user's run needs the interpreter,
    at most `limit` seconds. A thread that works for the user itself never waits here."""
    if getattr(_lane, "serving", False) or not _busy():
        return
    global _giving_way
    end = monotonic() + limit
    with _turn:
        _giving_way += 1
        try:
            while _busy():
                now = monotonic()
                if now >= end:
                    return
                # a message on its way wakes nobody when it is taken up: look again when its hand-over would end
                _turn.wait((end if _serving else min(end, _handover_until)) - now)
        finally:
            _giving_way -= 1
