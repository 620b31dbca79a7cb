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

    def expire(self) -> None:
        with self._lock:
            if self.done or self.expired:
                return
            self.expired = True
            sockets = [ref() for ref in self._sockets]
        for sock in sockets:
            if sock is not None:
                _shut(sock)


def _shut(sock) -> None:
    try:
        if sock.fileno() >= 0:  # a socket wrapped for TLS gave its descriptor to the wrapper, watched too
            sock.shutdown(socket.SHUT_RDWR)
    except OSError:  # already closed or never connected: nothing to wake
        pass


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
    # Called for every audit event of the process: leave at once unless it is a new socket in a block.
    if event != "socket.__new__":
        return
    stack = getattr(_local, "stack", None)
    if stack:
        for deadline in stack:
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
        deadline.expire()


def _start() -> None:
    global _started
    with _wake:
        if _started:
            return
        sys.addaudithook(_audit)
        threading.Thread(target=_reaper, name="deadlines", daemon=True).start()
        _started = True


@contextlib.contextmanager
def within(seconds: float, what: str = "the answer"):
    """Bound every network read of the block to `seconds` in all. Raises Expired (with `what` in its text)
    when the deadline passed and the block failed; a block that still finished keeps its result."""
    _start()
    deadline = Deadline(seconds, what)
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
