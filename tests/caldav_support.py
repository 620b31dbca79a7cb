"""A Radicale CalDAV server on loopback, and a calendar channel that reads it, for the CalDAV tests."""

from __future__ import annotations
import socket
import subprocess
import sys
from datetime import datetime, timezone
import caldav
import pytest
import radicale
from channels.calendar import CalendarChannel
from storage.db import open_database
from storage.migrations import migrate
from wilson.kernel import clock as clockmod
from wilson.kernel import config as configmod
from wilson.kernel.actor import Context
from wilson.kernel.clock import SimClock
from tests.actor_support import RecordingDirectory


UTC = timezone.utc


NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, seconds: float = 20.0) -> None:
    deadline = clockmod.monotonic() + seconds
    while clockmod.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"radicale exited: {process.stderr.read().decode(errors='replace')[-500:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        clockmod.pause(0.05)
    raise RuntimeError("radicale did not start listening")


@pytest.fixture(scope="module")
def radicale(tmp_path_factory):
    folder = tmp_path_factory.mktemp("radicale")
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "radicale", "--config", "", "--server-hosts", f"127.0.0.1:{port}",
         "--auth-type", "none", "--storage-filesystem-folder", str(folder / "collections"),
         "--auth-delay", "0", "--logging-level", "error"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def no_proxy(monkeypatch):
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def channel_for(tmp_path, no_proxy):
    db = open_database(None, tmp_path)
    migrate()

    def make(*sources):
        config = configmod.load(tmp_path, environ={})
        config.set("core", "timezone", "Europe/Berlin")
        ctx = Context(config=config, clock=SimClock(NOW), synapse=None, directory=RecordingDirectory())
        return CalendarChannel(ctx, sources=list(sources))

    yield make
    db.close()


def vcal(*events: str) -> str:
    body = "".join(f"BEGIN:VEVENT\r\n{e.strip()}\r\nEND:VEVENT\r\n" for e in events)
    return f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n{body}END:VCALENDAR\r\n"


def account(url: str, user: str):
    client = caldav.DAVClient(url=url, username=user, password="secret-pw", timeout=10)
    return client, client.principal()
