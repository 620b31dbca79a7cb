"""A running Wilson with its web channel on a free loopback port, for the dashboard tests."""

from __future__ import annotations

import httpx

from channels.web.auth import new_token
from channels.web.channel import ADDRESS_KEY
from storage.models import Setting


def base_url() -> str:
    address = Setting.get(Setting.key == ADDRESS_KEY).value
    return f"http://{address['host']}:{address['port']}"


def token_and_code(app) -> tuple[str, str]:
    return new_token(app.clock.now())


def logged_in(app) -> httpx.Client:
    """A browser-like client with a session cookie, logged in through the one-time link."""
    _, code = token_and_code(app)
    client = httpx.Client(base_url=base_url(), timeout=10)
    answer = client.get(f"/login?code={code}")
    assert answer.status_code == 303, answer.text
    return client


def csrf_of(html: str) -> str:
    import re

    return re.search(r'name="csrf" value="([^"]+)"', html).group(1)


class LoopbackSite:
    """A small web server on loopback that serves what a test puts in `pages` ({path: Page}),
    answers If-None-Match with 304, and counts what it was asked."""

    def __init__(self):
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.pages: dict[str, Page] = {}
        self.requests: list[tuple[str, dict]] = []
        self.not_modified = 0
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                site.requests.append((self.path, dict(self.headers)))
                page = site.pages.get(self.path)
                if page is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if page.redirect:
                    self.send_response(302)
                    self.send_header("Location", page.redirect)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                etag = page.etag()
                if page.validators and self.headers.get("If-None-Match") == etag:
                    site.not_modified += 1
                    self.send_response(304)
                    self.send_header("ETag", etag)
                    self.end_headers()
                    return
                self.send_response(page.status)
                self.send_header("Content-Type", page.content_type)
                self.send_header("Content-Length", str(len(page.body)))
                if page.validators:
                    self.send_header("ETag", etag)
                self.end_headers()
                self.wfile.write(page.body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, name="test-site", daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def put(self, path: str, body: bytes | str, content_type: str = "text/html; charset=utf-8", **kw) -> "Page":
        self.pages[path] = Page(body.encode() if isinstance(body, str) else body, content_type, **kw)
        return self.pages[path]

    def asked(self, path: str) -> int:
        return sum(1 for p, _ in self.requests if p == path)


class Page:
    def __init__(self, body: bytes, content_type: str, *, validators: bool = True, status: int = 200,
                 redirect: str = ""):
        self.body, self.content_type, self.validators = body, content_type, validators
        self.status, self.redirect = status, redirect

    def etag(self) -> str:
        import hashlib

        return '"' + hashlib.sha256(self.body).hexdigest()[:16] + '"'


def corpus_feeds():
    """The feed corpus (WILSON_CORPUS_DIR/feeds): [(name, bytes, content type from its Header: line)]."""
    import re

    from tests.conftest import corpus_dir

    folder = corpus_dir() / "feeds"
    found = []
    for path in sorted(folder.glob("*/*")):
        if not path.is_file() or path.name.startswith("."):
            continue
        body = path.read_bytes()
        header = re.search(rb"Header:\s*Content-type:\s*([^\r\n]+)", body[:600], re.IGNORECASE)
        kind = header.group(1).decode("ascii", "replace").strip() if header else (
            "application/json" if path.suffix == ".json" else "application/xml")
        found.append((f"{path.parent.name}/{path.name}", body, kind))
    return found
