"""Calendar helpers for tests: the editor of a calendar file, as a user's calendar app would edit it, and a real
CalDAV server (Radicale) on loopback with a proxy in front of it for what another device does between Wilson's
read and its write.

The editor itself lives in channels/calendar/editor.py because the REPL's `calendar add` and
`calendar cancel` use it; tests import it from here so that they depend on one name only.
"""

import base64
import contextlib
import http.server
import socket
import subprocess
import sys
import threading
from pathlib import Path

import httpx

from tests.poll import wait_for

from channels.calendar.editor import add_event, cancel_event, move_event
from tests.ports import free_port

__all__ = ["Meanwhile", "add_event", "cancel_event", "free_port", "move_event", "radicale_server"]


def _listening(port: int, process: subprocess.Popen) -> bool:
    if process.poll() is not None:
        raise RuntimeError(f"radicale exited: {process.stderr.read().decode(errors='replace')[-500:]}")
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


@contextlib.contextmanager
def radicale_server(folder: Path, rights: str | None = None):
    """Radicale on a free loopback port, any login accepted; `rights`: the text of a rights file
    (who may read and write which collection), else each user owns their own calendars."""
    port = free_port()
    args = [
        sys.executable,
        "-m",
        "radicale",
        "--config",
        "",
        "--server-hosts",
        f"127.0.0.1:{port}",
        "--auth-type",
        "none",
        "--storage-filesystem-folder",
        str(folder / "collections"),
        "--auth-delay",
        "0",
        "--logging-level",
        "error",
    ]
    if rights is not None:
        (folder / "rights").write_text(rights)
        args += ["--rights-type", "from_file", "--rights-file", str(folder / "rights")]
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: _listening(port, process), 20, "radicale to listen")
        yield f"http://127.0.0.1:{port}/"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class Meanwhile:
    """An HTTP proxy in front of a CalDAV server that, just before the next conditional write (a PUT with
    If-Match) goes through, runs `then` — what another device does at that moment."""

    def __init__(self, upstream: str, *, bearer_check=None, as_user: str = ""):
        """`bearer_check(token) -> bool`: the proxy is a server that signs in with OAuth (as Google's CalDAV does):
        a request without a Bearer token it accepts is answered 401, one with it goes on as `as_user`."""
        self.upstream = upstream.rstrip("/")
        self.bearer_check = bearer_check
        self.as_user = as_user
        self.then = None
        self.down = False  # while True every request is answered 503, as a server in maintenance
        self.seen: list[tuple[str, str, int]] = []  # (method, path, status) of each request forwarded
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _forward(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if proxy.down:
                    proxy.seen.append((self.command, self.path, 503))
                    self.send_response(503)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if self.command == "PUT" and self.headers.get("If-Match") and proxy.then is not None:
                    then, proxy.then = proxy.then, None
                    then()
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
                if proxy.bearer_check is not None:
                    said = self.headers.get("Authorization") or ""
                    if not (said.startswith("Bearer ") and proxy.bearer_check(said[len("Bearer ") :])):
                        proxy.seen.append((self.command, self.path, 401))
                        self.send_response(401)
                        self.send_header("WWW-Authenticate", 'Bearer realm="caldav"')
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    headers["Authorization"] = "Basic " + base64.b64encode(f"{proxy.as_user}:x".encode()).decode()
                answer = httpx.request(self.command, proxy.upstream + self.path, content=body, headers=headers)
                proxy.seen.append((self.command, self.path, answer.status_code))
                self.send_response(answer.status_code)
                for name, value in answer.headers.items():
                    if name.lower() not in ("content-length", "transfer-encoding", "connection", "content-encoding"):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)

            do_GET = do_PUT = do_DELETE = do_PROPFIND = do_REPORT = do_OPTIONS = do_HEAD = _forward

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=10)
