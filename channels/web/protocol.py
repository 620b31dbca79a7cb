"""The dashboard's HTTP/1.1 connection: uvicorn's h11 protocol with a deadline for each request's headers
and a bound on open connections.

Uvicorn closes a connection that stays idle after a response (timeout_keep_alive), but not one that
opened and sent half a request line or some headers and then nothing: such a connection stayed open
for good, and a few hundred of them held as many sockets and file descriptors. Here every request's
headers must be complete within HEADER_SECONDS of the connection opening (or of the previous response
ending); otherwise the connection gets a 408 and is closed. The body has its own deadline where it is
read (channels/web/forms.py, BODY_SECONDS).

At most MAX_CONNECTIONS are open at once. One more closes the oldest connection still waiting for its
headers (a browser's request in progress is never cut), or, when none waits, the new one: a flood of
half-sent connections cannot keep the user out of their dashboard, even before the deadline.
"""

from __future__ import annotations

import asyncio

import h11
from loguru import logger
from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_SECONDS = 10.0  # a browser on loopback sends its headers in milliseconds
MAX_CONNECTIONS = 64  # browsers open about six per site; scripts a few
TIMED_OUT = b"HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
TOO_MANY = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


class DeadlineH11Protocol(H11Protocol):
    """H11Protocol whose requests' headers must arrive within HEADER_SECONDS (a timer per waiting
    connection), and whose server keeps at most MAX_CONNECTIONS open."""

    header_timer: asyncio.TimerHandle | None = None
    waiting_since: float | None = None  # loop time since when the headers of the next request are awaited

    def connection_made(self, transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._await_headers()
        if len(self.connections) > MAX_CONNECTIONS:
            self._make_room()

    def connection_lost(self, exc: Exception | None) -> None:
        self._headers_arrived()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        before = self.scope
        super().data_received(data)
        if self.scope is not before:  # h11 saw a complete request line and headers
            self._headers_arrived()

    def on_response_complete(self) -> None:
        before = self.scope
        if not self.transport.is_closing():
            self._await_headers()  # the next request on this keep-alive connection has its own deadline
        super().on_response_complete()
        if self.scope is not before:  # a pipelined request was already complete
            self._headers_arrived()

    def _await_headers(self) -> None:
        self._headers_arrived()
        self.waiting_since = self.loop.time()
        self.header_timer = self.loop.call_later(HEADER_SECONDS, self._too_slow)

    def _headers_arrived(self) -> None:
        if self.header_timer is not None:
            self.header_timer.cancel()
        self.header_timer, self.waiting_since = None, None

    def _too_slow(self) -> None:
        self.header_timer = None
        self._close_with(TIMED_OUT)

    def _close_with(self, answer: bytes) -> None:
        self.waiting_since = None
        if self.transport.is_closing():
            return
        # answered only when part of a request came (an idle keep-alive connection is just closed) and
        # nothing of a response was sent on it yet
        if self.conn.our_state is h11.IDLE and self.conn.trailing_data[0]:
            self.transport.write(answer)
        self.transport.close()

    def _make_room(self) -> None:
        waiting = [
            c
            for c in self.connections
            if isinstance(c, DeadlineH11Protocol)
            and c is not self
            and c.waiting_since is not None
            and not c.transport.is_closing()
        ]
        if waiting:
            oldest = min(waiting, key=lambda c: c.waiting_since or 0.0)
            oldest._headers_arrived()
            oldest._close_with(TOO_MANY)
        else:
            logger.warning(
                "dashboard: {} connections are open, the most it keeps; a new one was closed", len(self.connections) - 1
            )
            self._headers_arrived()
            self._close_with(TOO_MANY)
