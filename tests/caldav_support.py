"""A Radicale CalDAV server on loopback, and a calendar channel that reads it, for the CalDAV tests."""

from __future__ import annotations
from datetime import datetime, timezone
import caldav
import pytest
from channels.calendar import CalendarChannel
from storage.db import open_database
from storage.migrations import migrate
from wilson.kernel import config as configmod
from wilson.kernel.actor import Context
from wilson.kernel.clock import SimClock
from tests.actor_support import RecordingDirectory
from tests.calendar_support import free_port, radicale_server  # noqa: F401 (free_port: for the tests)


UTC = timezone.utc


NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def radicale(tmp_path_factory):
    with radicale_server(tmp_path_factory.mktemp("radicale")) as url:
        yield url


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
