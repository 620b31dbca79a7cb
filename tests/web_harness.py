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
