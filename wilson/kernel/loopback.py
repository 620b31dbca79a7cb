"""An HTTP server on loopback in a thread of its own: the base of the scripted model server and of test fakes.

A subclass names its request handler and URL path; the handler reaches the
server object as `self.server.owner`.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class LoopbackServer:
    handler: type[BaseHTTPRequestHandler]
    path = ""  # what base_url ends with, e.g. "/v1"
    thread_name = "loopback-server"

    def __init__(self, host: str = "127.0.0.1", port: int = 0):
        self.host, self.port = host, port
        self._stopping = threading.Event()  # wakes requests held back on purpose (latency, long polls)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> str:
        if self._httpd is None:
            self._stopping.clear()
            self._httpd = ThreadingHTTPServer((self.host, self.port), self.handler)
            self._httpd.daemon_threads = True
            self._httpd.owner = self
            self._thread = threading.Thread(
                target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name=self.thread_name, daemon=True
            )
            self._thread.start()
        return self.base_url

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError(f"the {self.thread_name} is not running")
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}{self.path}"  # type: ignore[str-bytes-safe]  # AF_INET: (str, int)

    def stop(self) -> None:
        self._stopping.set()
        self.wake()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._thread.join(timeout=5)
            self._httpd = None

    def wake(self) -> None:
        """Called on stop, for a subclass whose requests wait on something other than `_stopping`."""

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
