"""Mail setups people have: a relay on this computer that offers no AUTH, `smtp_username = ""` on purpose, and
error lines that name the real cause (a missing STARTTLS, a refused login), all against aiosmtpd on loopback."""

from __future__ import annotations

import pytest

from channels.email.smtp import SendError, SmtpSender
from storage.models import Outbox
from tests.mailservers import PASSWORD, USER, SmtpSink
from tests.email_support import environ, queue, start_channel
from wilson.kernel.messages import Deliver, Ping


@pytest.fixture
def relay():
    server = SmtpSink(auth=False).start()
    yield server
    server.stop()


def test_a_reply_approved_twice_reaches_a_relay_without_auth_once(home, relay, monkeypatch):
    # the IMAP username and password are set, as they are for reading mail: Wilson must not try them on a relay
    # that offers no login
    ref, config, _ = start_channel(home, environ(home, relay.port), monkeypatch)
    try:
        first, again = queue(config), queue(config)
        ref.tell(Deliver(first["outbox_id"]))
        ref.tell(Deliver(again["outbox_id"]))
        assert ref.ask(Ping(), timeout=30) == "pong"
        assert relay.wait_for(1)
        assert len(relay.messages) == 1 and relay.messages[0][1] == ["ann@example.org"]
        assert Outbox.get_by_id(first["outbox_id"]).status == "delivered"
        assert relay.auth == []
    finally:
        ref.stop()


def test_smtp_username_set_empty_on_purpose_sends_without_logging_in(home, sink, monkeypatch):
    env = {**environ(home, sink.port), "WILSON_EMAIL_SMTP_USERNAME": ""}
    ref, config, _ = start_channel(home, env, monkeypatch)
    try:
        ref.tell(Deliver(queue(config)["outbox_id"]))
        assert ref.ask(Ping(), timeout=30) == "pong"
        assert sink.wait_for(1) and len(sink.messages) == 1
        assert sink.auth == []  # the relay offers AUTH, and was not asked
    finally:
        ref.stop()


def test_smtp_username_left_unset_logs_in_with_the_mail_username(home, sink, monkeypatch):
    ref, config, _ = start_channel(home, environ(home, sink.port), monkeypatch)
    try:
        ref.tell(Deliver(queue(config)["outbox_id"]))
        assert ref.ask(Ping(), timeout=30) == "pong"
        assert sink.wait_for(1) and sink.auth == [(USER, PASSWORD)]
    finally:
        ref.stop()


def test_a_relay_without_starttls_is_told_as_that_and_not_as_a_login_problem(relay):
    sender = SmtpSender("127.0.0.1", relay.port, "starttls", USER, PASSWORD, timeout=10)
    with pytest.raises(SendError, match="does not offer STARTTLS; try smtp_security = ssl") as failed:
        sender.check()
    assert failed.value.lasting and "AUTH" not in str(failed.value)


def test_a_refused_login_says_which_settings_to_check(sink):
    sender = SmtpSender("127.0.0.1", sink.port, "none", USER, "not-the-password", timeout=10)
    with pytest.raises(
        SendError, match=f"127.0.0.1 refused the login for {USER}; check smtp_username and WILSON_EMAIL_PASSWORD"
    ):
        sender.check()


def test_a_folder_gone_while_wilson_runs_is_told_once_with_the_folders_there(home, monkeypatch):
    from tests.mailservers import start_dovecot
    from wilson.kernel.messages import ChannelSync

    dovecot = start_dovecot()
    try:
        dovecot.append_many([b"Subject: hi\r\n\r\nhello\r\n"], "Receipts")
        env = {**environ(home, 25, dovecot.port), "WILSON_EMAIL_FOLDERS": "INBOX,Reciepts"}
        ref, config, directory = start_channel(home, env, monkeypatch)
        try:
            ref.tell(ChannelSync("test"))
            ref.tell(ChannelSync("test"))
            assert ref.ask(Ping(), timeout=30) == "pong"
        finally:
            ref.stop()
    finally:
        dovecot.stop()
    told = [row.text for row in Outbox.select().where(Outbox.channel == "repl")]
    assert len(told) == 1
    assert told[0].startswith(
        "I can't read your mail folder “Reciepts”: folder 'Reciepts' does not exist at "
        "127.0.0.1; the folders there are: "
    )
    assert '"Receipts"' in told[0]
