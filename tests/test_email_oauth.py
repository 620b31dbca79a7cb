"""Google and Microsoft accounts end to end, against a stand-in identity provider (tests/identity_provider.py), a
Dovecot that checks bearer tokens with it (its oauth2 passdb, a local introspection URL) and an aiosmtpd that does
the same: `wilson account add` runs the device flow and stores the grant 0600, mail is read and sent with XOAUTH2,
an access token refused by the server is refreshed, and a revoked grant is told once with the command that fixes it."""

from __future__ import annotations

import stat

import pytest

from channels import accounts
from storage.models import Approval, ReceptorBuffer
from tests.identity_provider import USER_CODE, IdentityProvider
from tests.mailservers import USER, SmtpSink, start_dovecot
from tests.config_support import cli, no_traceback
from tests.oauth_support import REVOKED, account_env, add_account
from wilson.kernel import config as configmod
from wilson.kernel.messages import ChannelSync


@pytest.fixture(scope="module")
def idp():
    with IdentityProvider(USER) as server:
        yield server


@pytest.fixture(scope="module")
def oauth_dovecot(idp):
    server = start_dovecot(oauth_url=idp.introspection_url)
    yield server
    server.stop()


@pytest.fixture
def smtp(idp):
    server = SmtpSink(oauth_check=idp.is_active).start()
    yield server
    server.stop()


def test_the_device_flow_shows_the_code_and_stores_the_grant_readable_only_by_the_user(tmp_path, idp):
    result = add_account(tmp_path, idp, pending_polls=2)
    lines = result.stdout.splitlines()
    assert lines[0] == (
        f"Open {idp.base_url}/device on any device, sign in to your Google account and enter the code {USER_CODE}"
    )
    assert idp.polls == 3  # asked at the provider's interval until the user had signed in
    path = tmp_path / "accounts" / "google.json"
    assert (
        lines[1]
        == f"Done: Wilson may now read and send {USER}'s mail. The grant is kept in {path} (only you can read it)."
    )
    assert '  oauth = "google"' in lines and '  imap_host = "imap.gmail.com"' in lines
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    grant = accounts.load_grant(tmp_path, accounts.PROVIDERS["google"])
    assert grant["refresh_token"].startswith("1//refresh-") and grant["account"] == USER
    assert grant["refresh_token"] not in result.stdout + result.stderr


def test_a_client_the_provider_does_not_know_is_told_and_nothing_is_stored(tmp_path, idp):
    result = cli(
        tmp_path,
        "account",
        "add",
        "google",
        "--email",
        USER,
        **{**account_env(idp), "WILSON_ACCOUNTS_CLIENT_ID": "someone-else"},
    )
    no_traceback(result)
    assert result.returncode == 1
    assert result.stderr == (
        "wilson account: Google would not start the sign-in (The OAuth client was not found.); "
        "check [accounts] client_id\n"
    )
    assert not (tmp_path / "accounts" / "google.json").exists()


def test_declining_on_the_sign_in_page_is_told_and_nothing_is_stored(tmp_path, idp):
    idp.polls, idp.declines = 0, True
    try:
        result = cli(tmp_path, "account", "add", "microsoft", "--email", USER, **account_env(idp))
    finally:
        idp.declines = False
    no_traceback(result)
    assert result.returncode == 1
    assert result.stdout.startswith(f"Open {idp.base_url}/device on any device, sign in to your Microsoft account")
    assert result.stderr == "wilson account: you declined on the sign-in page; nothing was stored\n"
    assert not (tmp_path / "accounts").exists()


def test_mail_is_read_and_sent_with_xoauth2_and_a_revoked_grant_is_told_once(
    tmp_path, idp, oauth_dovecot, smtp, make_app
):
    home = tmp_path / "home"
    add_account(home, idp)
    oauth_dovecot.append(
        b"From: Lufthansa <news@lufthansa.example>\r\nTo: wilson@example.org\r\n"
        b"Subject: Your flight LH 714 is confirmed\r\nMessage-ID: <lh714@lufthansa.example>\r\n\r\n"
        b"See you on board.\r\n"
    )
    app = make_app(
        home=home,
        env={
            **account_env(idp),
            "WILSON_EMAIL_IMAP_HOST": "127.0.0.1",
            "WILSON_EMAIL_IMAP_PORT": str(oauth_dovecot.port),
            "WILSON_EMAIL_IMAP_SECURITY": "none",
            "WILSON_EMAIL_USERNAME": USER,
            "WILSON_EMAIL_OAUTH": "google",
            "WILSON_EMAIL_SMTP_HOST": "127.0.0.1",
            "WILSON_EMAIL_SMTP_PORT": str(smtp.port),
            "WILSON_EMAIL_SMTP_SECURITY": "none",
            "WILSON_EMAIL_FROM_ADDRESS": "wilson@example.org",
            "WILSON_EMAIL_POLL": "off",
        },
    )
    app.supervisor.tell("email", ChannelSync("test"))
    assert app.wait_idle()
    subjects = [r.payload.get("subject") for r in ReceptorBuffer.select().where(ReceptorBuffer.channel == "email")]
    assert subjects == ["Your flight LH 714 is confirmed"]
    grant = accounts.load_grant(home, accounts.PROVIDERS["google"])
    assert grant["access_token"] in idp.introspected  # Dovecot asked the provider about the token it was shown

    assert (
        app.propose(
            "send_email", {"to": "ann@example.org", "subject": "Dinner", "body": "Friday at 8?"}, "because you asked"
        )
        is None
    )
    assert app.wait_idle()
    app.decide(Approval.select().order_by(Approval.id.desc()).get().id, "approve")
    assert app.wait_idle()
    assert smtp.wait_for(1) and smtp.auth == [(USER, "XOAUTH2")]
    assert smtp.messages[0][1] == ["ann@example.org"]

    idp.active.clear()  # the access token is cut short before its time: a fresh one is fetched and used
    assert (
        app.propose("send_email", {"to": "bob@example.org", "subject": "Lunch", "body": "Noon?"}, "because you asked")
        is None
    )
    assert app.wait_idle()
    app.decide(Approval.select().order_by(Approval.id.desc()).get().id, "approve")
    assert app.wait_idle()
    assert smtp.wait_for(2) and smtp.auth == [(USER, "XOAUTH2")] * 3  # the second mail: refused, then fresh
    renewed = accounts.load_grant(home, accounts.PROVIDERS["google"])["access_token"]
    assert renewed != grant["access_token"] and idp.is_active(renewed)

    idp.active.clear()  # and again, found by the IMAP login this time
    app.supervisor.tell("email", ChannelSync("test"))
    assert app.wait_idle()
    again = accounts.load_grant(home, accounts.PROVIDERS["google"])["access_token"]
    assert again != renewed and again in idp.introspected
    assert not [d for d in app.user_deliveries() if "no longer lets Wilson in" in d["text"]]

    idp.revoke()  # the user withdraws Wilson's access in their account settings
    for _ in range(3):
        app.supervisor.tell("email", ChannelSync("test"))
        assert app.wait_idle()
    assert [d["text"] for d in app.user_deliveries() if "no longer lets Wilson in" in d["text"]] == [REVOKED]


def test_doctor_logs_in_with_the_account(tmp_path, idp, oauth_dovecot):
    add_account(tmp_path, idp)
    result = cli(
        tmp_path,
        "doctor",
        WILSON_WEB_ENABLED="false",
        WILSON_EMAIL_IMAP_HOST="127.0.0.1",
        WILSON_EMAIL_IMAP_PORT=str(oauth_dovecot.port),
        WILSON_EMAIL_IMAP_SECURITY="none",
        WILSON_EMAIL_USERNAME=USER,
        WILSON_EMAIL_OAUTH="google",
        **account_env(idp),
    )
    no_traceback(result)
    assert f"email: IMAP ok, logged in at 127.0.0.1 as {USER}; reads INBOX" in result.stdout
    assert configmod.load(tmp_path, environ={}).get("email", "oauth") == ""  # nothing was written for the user


def test_a_server_that_offers_only_oauthbearer_is_logged_in_with_it(tmp_path, idp):
    server = start_dovecot(oauth_url=idp.introspection_url, oauth_mechanisms="oauthbearer")
    try:
        add_account(tmp_path, idp)
        result = cli(
            tmp_path,
            "doctor",
            WILSON_WEB_ENABLED="false",
            WILSON_EMAIL_IMAP_HOST="127.0.0.1",
            WILSON_EMAIL_IMAP_PORT=str(server.port),
            WILSON_EMAIL_IMAP_SECURITY="none",
            WILSON_EMAIL_USERNAME=USER,
            WILSON_EMAIL_OAUTH="google",
            **account_env(idp),
        )
    finally:
        server.stop()
    no_traceback(result)
    # XOAUTH2 is not offered there, so only an OAUTHBEARER login could have worked
    assert f"email: IMAP ok, logged in at 127.0.0.1 as {USER}; reads INBOX" in result.stdout
