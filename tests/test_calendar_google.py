"""A Google calendar over CalDAV with the account `wilson account add google` stored: read and written with an OAuth
bearer token (a proxy in front of Radicale stands in for Google's CalDAV server, checking each token with the
stand-in identity provider), a refused token renewed, and a revoked grant told once with the command that fixes it."""

from __future__ import annotations

import pytest
import radicale  # noqa: F401  (a test dependency: a broken install must fail here, not skip)

from storage.models import ReceptorBuffer
from tests.calendar_support import Meanwhile, radicale_server
from tests.identity_provider import IdentityProvider
from tests.caldav_write_support import DENTIST, FLIGHT, approved_twice, calendars_of, read_calendar, server_state, told
from tests.oauth_support import REVOKED, account_env, add_account

USER = "kate"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with radicale_server(tmp_path_factory.mktemp("radicale")) as url:
        yield url


@pytest.fixture(scope="module")
def idp():
    with IdentityProvider(USER) as provider:
        yield provider


def titles() -> list[str]:
    return [
        r.payload.get("title")
        for r in ReceptorBuffer.select().where(ReceptorBuffer.channel == "calendar").order_by(ReceptorBuffer.id)
    ]


def test_a_google_calendar_is_read_and_written_with_the_account(server, idp, tmp_path, make_app, monkeypatch):
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    add_account(home, idp)
    [work] = calendars_of(server, USER, "Work")
    work.save_event(FLIGHT.format(n=1, d=4, title="Flight block"))
    with Meanwhile(server, bearer_check=idp.is_active, as_user=USER) as google:
        app = make_app(
            home=home,
            env={
                **account_env(idp),
                "WILSON_CALENDAR_CALDAV_URL": google.url,
                "WILSON_CALENDAR_CALDAV_USERNAME": USER,
                "WILSON_CALENDAR_OAUTH": "google",
                "WILSON_CALENDAR_POLL": "off",
            },
        )
        read_calendar(app)
        assert titles() == ["Flight block"]
        assert not [s for s in google.seen if s[2] == 401]  # every request carried a token Google took

        approved_twice(app, "create_event", DENTIST)
        assert sorted(str(e) for e in server_state(work)) == [
            "flight-1",
            next(uid for uid in server_state(work) if uid.endswith("@own.wilson")),
        ]

        idp.active.clear()  # the access token is cut short: the refused read is tried once more with a fresh one
        work.save_event(FLIGHT.format(n=2, d=5, title="Team lunch"))
        read_calendar(app)
        assert "Team lunch" in titles() and [s for s in google.seen if s[2] == 401]

        idp.revoke()
        for _ in range(3):
            read_calendar(app)
        approved_twice(app, "move_event", {"title": "Team lunch", "start": "2027-01-16T10:00"})
    assert [t for t in told(app) if t == REVOKED] == [REVOKED]
    assert [t for t in told(app) if t.startswith("I could not move")] == [
        f"I could not move “Team lunch” in your calendar: {REVOKED[:-1]}. Nothing else was changed."
    ]
