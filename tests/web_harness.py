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
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, name="test-site", daemon=True
        )

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
    def __init__(
        self, body: bytes, content_type: str, *, validators: bool = True, status: int = 200, redirect: str = ""
    ):
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
        kind = (
            header.group(1).decode("ascii", "replace").strip()
            if header
            else ("application/json" if path.suffix == ".json" else "application/xml")
        )
        found.append((f"{path.parent.name}/{path.name}", body, kind))
    return found


# A real browser ------------------------------------------------------------------------------------
VIEWPORT = (1200, 900)  # the screenshots' size, fixed so that they change only when the pages do


def chromium_paths() -> tuple[str | None, str | None]:
    import shutil

    return shutil.which("chromium"), shutil.which("chromedriver")


def chromium(profile):
    """Debian's headless Chromium through its chromedriver (no browser download, no network)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    binary, driver_path = chromium_paths()
    options = webdriver.ChromeOptions()
    options.binary_location = binary  # with both paths set, Selenium Manager never goes to the network
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--hide-scrollbars",
        "--force-color-profile=srgb",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=driver_path))
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": VIEWPORT[0], "height": VIEWPORT[1], "deviceScaleFactor": 1, "mobile": False},
    )
    driver.set_page_load_timeout(20)
    return driver


def browser_login(driver, app) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as seen
    from selenium.webdriver.support.ui import WebDriverWait

    _, code = token_and_code(app)
    driver.get(base_url() + f"/login?code={code}")
    WebDriverWait(driver, 15).until(seen.presence_of_element_located((By.ID, "briefing")))


def shoot(driver, path: str, out) -> bytes:
    """The page at `path` as a PNG of the fixed viewport, written to `out` (a Path)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as seen
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(base_url() + path)
    WebDriverWait(driver, 15).until(seen.presence_of_element_located((By.TAG_NAME, "main")))
    png = driver.get_screenshot_as_png()
    out.write_bytes(png)
    return png


PAGES = (
    ("today", "/today"),
    ("proposals", "/proposals"),
    ("conversation", "/conversation"),
    ("topics", "/topics"),
    ("topic", "/topics/1"),
    ("trace", "/trace"),
    ("memory", "/memory"),
    ("budget", "/budget"),
)


def demo(app, site: LoopbackSite) -> None:
    """A few days of a life in Wilson, for the screenshots: a trip with its plan approved and one task done
    early, a dentist's appointment and a birthday in the calendar, a proposal waiting, a watched page that
    changed, a belief, some model use."""
    from datetime import timedelta

    from channels.web import watcher
    from storage import engram
    from storage.models import Task, TokenUsage, Topic

    now = app.clock.now()
    trip = Topic.create(
        title="Trip to Japan",
        created_at=now - timedelta(days=3),
        starts=now + timedelta(days=95),
        ends=now + timedelta(days=109),
    )
    Task.create(
        title="Renew passport",
        topic=trip,
        due=now - timedelta(days=1),
        due_is_date=True,
        created_at=now - timedelta(days=3),
    )
    Task.create(
        title="Pay the deposit for the ryokan",
        topic=trip,
        due=now,
        due_is_date=True,
        created_at=now - timedelta(days=2),
    )
    Task.create(title="Water the neighbour's plants", due=now + timedelta(hours=9), created_at=now)
    app.say("I'm flying to Japan on 2027-04-10")  # the offline rules propose the trip's tasks
    app.wait_idle()
    from channels.calendar.editor import add_event
    from storage.models import Approval

    app.decide(Approval.select().order_by(Approval.id.desc()).get().id, "approve")  # the trip's plan, approved
    app.wait_idle()
    first = Task.get((Task.topic == trip) & Task.title.contains("passport validity"))
    app.propose("complete_task", {"task_id": first.id}, "done early")  # one task finished ahead of time
    app.wait_idle()
    app.decide(Approval.select().order_by(Approval.id.desc()).get().id, "approve")
    tz = app.config.timezone
    local = now.astimezone(tz).replace(tzinfo=None)
    add_event(
        app.calendar_file(),
        "Dentist",
        (local + timedelta(days=8)).replace(hour=10, minute=30),
        (local + timedelta(days=8)).replace(hour=11, minute=15),
        "Dr. Weber, Hauptstraße 5",
        tz=tz,
    )
    add_event(app.calendar_file(), "Mum's birthday", (local + timedelta(days=19)).date(), tz=tz)
    app.calendar_edited()
    app.say("remind me to call Mum tomorrow at 10")  # a proposal left waiting for the user's answer
    app.wait_idle()
    engram.store(
        "belief",
        "You book long-haul flights about five weeks ahead",
        ["approval:3", "approval:7"],
        now - timedelta(days=20),
    )
    engram.store(
        "principle",
        "Propose flight booking earlier than usual for trips abroad",
        ["memory:1"],
        now - timedelta(days=10),
    )
    day = app.synapse._day()
    for back, tokens in enumerate((5200, 3100, 0, 8800, 4100, 2600, 7000)):
        when = (datetime_of(day) - timedelta(days=back)).isoformat()
        TokenUsage.create(day=when, role="deep", calls=3, prompt_tokens=tokens, completion_tokens=tokens // 8)
        TokenUsage.create(day=when, role="fast", calls=2, prompt_tokens=tokens // 3, completion_tokens=90)
        TokenUsage.create(day=when, role="reflex", calls=6, prompt_tokens=tokens // 6, completion_tokens=20)
    page = (
        "<html><head><title>Visa for Japan — Embassy</title></head><body><main><h1>Visa</h1>"
        "<p>Short stays need no visa for up to 90 days.</p>{}</main></body></html>"
    )
    site.put("/visa", page.format(""))
    watcher.add(site.url("/visa"), timedelta(hours=6), now)
    app.advance(timedelta(minutes=1))
    site.put("/visa", page.format("<p>From 1 March 2027 travellers fill in an online form before departure.</p>"))
    app.advance(timedelta(hours=6, minutes=1))
    app.wait_idle()


def datetime_of(day: str):
    from datetime import date

    return date.fromisoformat(day)


def screenshots(out_dir) -> list:
    """`make screenshots`: each page of a demo Wilson in headless Chromium, as PNGs in `out_dir`."""
    import tempfile
    from datetime import datetime
    from pathlib import Path

    from tests.conftest import make_config
    from wilson.app.application import Wilson
    from wilson.kernel.clock import SimClock

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory() as scratch:
        config = make_config(Path(scratch) / "home", WILSON_WEB_ENABLED="true", WILSON_WEB_PORT="0")
        app = Wilson(
            config, SimClock(datetime.fromisoformat("2027-01-05T08:00:00+01:00")), llm="offline", log_level="WARNING"
        ).start()  # the watchdog on, as in `wilson run`
        try:
            with LoopbackSite() as site:
                demo(app, site)
                driver = chromium(Path(scratch) / "profile")
                try:
                    browser_login(driver, app)
                    for name, path in PAGES:
                        shoot(driver, path, out / f"{name}.png")
                        written.append(out / f"{name}.png")
                finally:
                    driver.quit()
        finally:
            app.stop()
    return written


if __name__ == "__main__":
    import sys

    for written in screenshots(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshots"):
        print(written)


class DripSite:
    """A server on loopback that answers every request with a status line and then one header line every
    `every` seconds, for at most `lines` lines, never finishing its headers: each read gets a byte well
    within any per-read timeout, so only a deadline on the whole answer ends the wait. (Any other protocol
    drips the same way, with its own `head` and `drip`.)"""

    def __init__(
        self,
        every: float = 1.0,
        lines: int = 40,
        head: bytes = b"HTTP/1.1 200 OK\r\n",
        drip: bytes = b"X-Drip-{n}: still coming\r\n",
        speaks_first: bool = False,
    ):
        """`head` is sent at once (after the request, or on connecting when the server `speaks_first`, as
        IMAP and SMTP servers do), then `drip` (with {n} its number) every `every` seconds."""
        import socket
        import threading

        self.every, self.lines = every, lines
        self.head, self.drip, self.speaks_first = head, drip, speaks_first
        self.accepted = 0
        self.dropped = 0  # connections the client gave up on before the drip ran out
        self.changed = threading.Condition()  # told when a connection was given up on
        self.handlers: list[threading.Thread] = []
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._accept, name="drip-site", daemon=True)

    def _accept(self):
        import threading

        while not self.stopping.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.accepted += 1
            handler = threading.Thread(target=self._drip, args=(conn,), name="drip-conn", daemon=True)
            self.handlers.append(handler)
            handler.start()

    def _drip(self, conn):
        with conn:
            try:
                if not self.speaks_first:
                    conn.recv(65536)
                conn.sendall(self.head)
                for n in range(self.lines):
                    if self.stopping.wait(self.every):
                        return
                    conn.sendall(self.drip.replace(b"{n}", str(n).encode()))
            except OSError:
                with self.changed:
                    self.dropped += 1
                    self.changed.notify_all()

    def wait_all_dropped(self, seconds: float = 10.0) -> bool:
        """Wait until the client gave up on every connection (each handler notices at its next line) and their
        threads have ended; False if that did not happen within `seconds`."""
        import time

        end = time.monotonic() + seconds
        with self.changed:
            if not self.changed.wait_for(lambda: self.dropped >= self.accepted, timeout=seconds):
                return False
        for handler in list(self.handlers):
            handler.join(timeout=max(0.0, end - time.monotonic()))
        return not any(handler.is_alive() for handler in self.handlers)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        import socket

        self.stopping.set()
        try:  # closing alone leaves the accepting thread blocked until its join gives up
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()
        self.thread.join(timeout=10)
        assert not self.thread.is_alive(), "the drip site's accepting thread did not end"

    @property
    def port(self) -> int:
        return self.listener.getsockname()[1]

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"
