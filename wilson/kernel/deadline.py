"""A total deadline for network reads, whatever library does them.

Socket timeouts bound each single read, not a whole exchange: a server that sends one header line
every few seconds never trips httpx's, imaplib's or requests' read timeout, and the thread waits for
ever. `within(seconds)` bounds everything a block does on the network: every socket this thread
creates inside the block (plain or TLS, found through Python's audit hook for new sockets, so it works
for httpx, caldav's HTTP client, imaplib and smtplib alike) is shut down when the deadline passes.
The read blocked on it returns at once, the library raises its own error, and the block leaves with
`Expired` (a TimeoutError) saying how long it was given.

One daemon thread watches every deadline of the process; a block that ends in time costs a heap entry.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import socket
import sys
import threading
import weakref

from wilson.kernel import clock as clockmod


class Expired(TimeoutError):
    """The block did not finish within its deadline; its sockets were shut down."""


class Deadline:
    def __init__(self, seconds: float, what: str):
        self.seconds = seconds
        self.what = what
        self.at = clockmod.monotonic() + seconds
        self.expired = False
        self.done = False
        self._sockets: list = []
        self._lock = threading.Lock()

    def remaining(self) -> float:
        return max(0.0, self.at - clockmod.monotonic())

    def watch(self, sock) -> None:
        with self._lock:
            if self.expired:
                _shut(sock)
                return
            try:
                self._sockets.append(weakref.ref(sock))
            except TypeError:  # a bare _socket.socket cannot be weakly referenced: keep it for the block
                self._sockets.append(lambda sock=sock: sock)

    def expire(self) -> bool:
        """Shut every socket of the block down; True while the block is still running (a socket that was
        still connecting could not be shut down yet, so the reaper sweeps again shortly)."""
        with self._lock:
            if self.done:
                return False
            self.expired = True
            sockets = [ref() for ref in self._sockets]
        for sock in sockets:
            if sock is not None:
                _shut(sock)
        return True


def _shut(sock) -> None:
    try:
        if sock.fileno() >= 0:  # a socket wrapped for TLS gave its descriptor to the wrapper, watched too
            # the plain socket's shutdown, also for TLS: ssl's own would change the wrapper under its reader
            socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:  # already closed or never connected: nothing to wake
        pass


SWEEP = 0.2  # seconds between shutting an expired block's sockets down again, until the block ends
_local = threading.local()
_heap: list = []
_order = itertools.count()
_wake = threading.Condition()
_started = False


def _active() -> list[Deadline]:
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def _audit(event: str, args) -> None:
    # Called for every audit event of the process: leave at once unless it is a socket's in a block.
    if event != "socket.__new__" and event != "socket.connect":
        return
    stack = getattr(_local, "stack", None)
    if not stack:
        return
    for deadline in stack:
        if event == "socket.connect" and deadline.expired:  # a new connection after the time is up: refused
            raise Expired(f"{deadline.what} did not come within {deadline.seconds:g} seconds")
        if event == "socket.__new__":
            deadline.watch(args[0])


def _reaper() -> None:
    while True:
        with _wake:
            while not _heap:
                _wake.wait()
            at, _, deadline = _heap[0]
            if deadline.done:
                heapq.heappop(_heap)
                continue
            left = at - clockmod.monotonic()
            if left > 0:
                _wake.wait(left)
                continue
            heapq.heappop(_heap)
        if deadline.expire():
            with _wake:
                heapq.heappush(_heap, (clockmod.monotonic() + SWEEP, next(_order), deadline))


def _start() -> None:
    global _started
    with _wake:
        if _started:
            return
        sys.addaudithook(_audit)
        threading.Thread(target=_reaper, name="deadlines", daemon=True).start()
        _started = True


@contextlib.contextmanager
def within(seconds: float, what: str = "the answer", watch=()):
    """Bound every network read of the block to `seconds` in all: the sockets it opens and those in
    `watch` (a connection opened before). Raises Expired (with `what` in its text) when the deadline
    passed and the block failed; a block that still finished keeps its result."""
    _start()
    deadline = Deadline(seconds, what)
    for sock in watch:
        if sock is not None:
            deadline.watch(sock)
    stack = _active()
    stack.append(deadline)
    with _wake:
        heapq.heappush(_heap, (deadline.at, next(_order), deadline))
        _wake.notify()
    try:
        yield deadline
    except BaseException as exc:
        if deadline.expired and not isinstance(exc, Expired):
            raise Expired(f"{what} did not come within {seconds:g} seconds") from exc
        raise
    finally:
        with deadline._lock:
            deadline.done = True
            deadline._sockets.clear()
        stack.remove(deadline)


@contextlib.contextmanager
def exempt():
    """Inside a bounded block, work that is not the exchange being bounded (a database commit between two
    steps of a send): a socket it opens is not shut down with the block's."""
    stack = _active()
    saved = list(stack)
    stack.clear()
    try:
        yield
    finally:
        stack[:] = saved
