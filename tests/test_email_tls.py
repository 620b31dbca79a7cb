"""TLS to a real Dovecot and aiosmtpd with a throwaway CA made by openssl: implicit TLS and STARTTLS
verify the server against that CA (through SSL_CERT_FILE, as a user with a self-hosted server would
set it); a certificate from another CA, or a server without STARTTLS, is refused in one clear line."""

from __future__ import annotations

import ssl
from datetime import datetime, timezone

import pytest

from channels.email.channel import EmailChannel
from channels.email.imap import ImapClient, ImapError
from channels.email.smtp import SendError, SmtpSender, build
from storage.db import open_database
from storage.migrations import migrate
from storage.models import ReceptorBuffer
from tests.mailservers import PASSWORD, USER, start_dovecot, SmtpSink, make_ca
from wilson.kernel import config as configmod
from wilson.kernel.actor import Context
from wilson.kernel.clock import SimClock
from wilson.kernel.messages import ChannelSync, Ping
from tests.actor_support import RecordingDirectory


@pytest.fixture(scope="module")
def tls_dovecot():
    server = start_dovecot(tls=True)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def other_ca(tmp_path_factory):
    return make_ca(tmp_path_factory.mktemp("other-ca"), "other", server=False)


def verified(ca) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(ca))


@pytest.mark.parametrize("security", ["ssl", "starttls"])
def test_tls_verifies_the_server_against_its_ca(tls_dovecot, security):
    port = tls_dovecot.tls_port if security == "ssl" else tls_dovecot.port
    client = ImapClient("127.0.0.1", port, security, USER, PASSWORD, ssl_context=verified(tls_dovecot.ca_file))
    client.connect()
    try:
        assert isinstance(client.conn.sock, ssl.SSLSocket)
        assert client.conn.sock.version() in ("TLSv1.2", "TLSv1.3")
        assert "IDLE" in client.capabilities()
        client.select("INBOX")
    finally:
        client.close()


@pytest.mark.parametrize("security", ["ssl", "starttls"])
def test_a_certificate_from_another_ca_is_refused_in_one_line(tls_dovecot, other_ca, security):
    port = tls_dovecot.tls_port if security == "ssl" else tls_dovecot.port
    client = ImapClient("127.0.0.1", port, security, USER, PASSWORD, ssl_context=verified(other_ca))
    with pytest.raises(ImapError) as caught:
        client.connect()
    said = str(caught.value)
    assert said == (
        f"the certificate of 127.0.0.1:{port} is not trusted (unable to get local issuer certificate); "
        "if the server uses its own CA, point SSL_CERT_FILE at that CA's certificate"
    )
    assert "\n" not in said and PASSWORD not in said and client.conn is None


def test_the_system_store_does_not_trust_a_throwaway_ca(tls_dovecot):
    client = ImapClient("127.0.0.1", tls_dovecot.tls_port, "ssl", USER, PASSWORD)
    with pytest.raises(ImapError, match="is not trusted"):
        client.connect()


def test_starttls_against_a_server_without_it_says_what_to_do():
    plain = start_dovecot()
    try:
        client = ImapClient("127.0.0.1", plain.port, "starttls", USER, PASSWORD)
        with pytest.raises(ImapError) as caught:
            client.connect()
        assert str(caught.value) == (
            f"127.0.0.1:{plain.port} does not offer STARTTLS; try imap_security = ssl (usually port 993)"
        )
    finally:
        plain.stop()


@pytest.mark.parametrize("security", ["ssl", "starttls"])
def test_the_channel_reads_mail_over_tls_with_the_ca_from_ssl_cert_file(tls_dovecot, tmp_path, monkeypatch, security):
    monkeypatch.setenv("SSL_CERT_FILE", str(tls_dovecot.ca_file))
    monkeypatch.setenv("WILSON_EMAIL_PASSWORD", PASSWORD)
    folder = f"TLS-{security}"
    tls_dovecot.append_many(
        [
            (
                f"From: ann@example.org\r\nSubject: Over {security}\r\nMessage-ID: <tls-{security}@x>\r\n"
                f"\r\nencrypted\r\n"
            ).encode()
        ],
        folder,
    )
    db = open_database(None, tmp_path)
    migrate()
    config = configmod.load(
        tmp_path,
        environ={
            "WILSON_EMAIL_IMAP_HOST": "127.0.0.1",
            "WILSON_EMAIL_IMAP_SECURITY": security,
            "WILSON_EMAIL_IMAP_PORT": str(tls_dovecot.tls_port if security == "ssl" else tls_dovecot.port),
            "WILSON_EMAIL_USERNAME": USER,
            "WILSON_EMAIL_PASSWORD": PASSWORD,
            "WILSON_EMAIL_FOLDERS": folder,
            "WILSON_EMAIL_POLL": "off",
        },
    )

    ref = EmailChannel.start(
        Context(
            config=config,
            clock=SimClock(datetime(2027, 1, 5, tzinfo=timezone.utc)),
            synapse=None,
            directory=RecordingDirectory(strict=True),
        ),
        idle=False,
    )
    try:
        ref.tell(ChannelSync("test"))
        assert ref.ask(Ping(), timeout=30) == "pong"
        assert [r.payload["subject"] for r in ReceptorBuffer.select()] == [f"Over {security}"]
    finally:
        ref.stop()
        db.close()


# Sending: aiosmtpd with the same throwaway certificate ---------------------------------------
def a_mail():
    return build(
        {
            "from": "you@example.org",
            "to": "ann@example.org",
            "subject": "Over TLS",
            "body": "hi",
            "message_id": "<tls-send@example.org>",
        },
        datetime(2027, 1, 5, tzinfo=timezone.utc),
    )


@pytest.fixture(params=["starttls", "ssl"])
def tls_sink(request, tls_dovecot):
    sink = SmtpSink(tls_dir=tls_dovecot.ca_file.parent, implicit=request.param == "ssl").start()
    sink.security = request.param
    yield sink
    sink.stop()


def test_mail_is_sent_over_tls_verified_against_the_ca(tls_dovecot, tls_sink, monkeypatch):
    monkeypatch.setenv("SSL_CERT_FILE", str(tls_dovecot.ca_file))  # the sender's default context reads it
    result = SmtpSender("127.0.0.1", tls_sink.port, tls_sink.security, USER, PASSWORD).send(a_mail())
    assert result["message_id"] == "<tls-send@example.org>" and tls_sink.wait_for(1)
    assert [m[1] for m in tls_sink.messages] == [["ann@example.org"]] and tls_sink.auth == [(USER, PASSWORD)]


def test_sending_to_a_server_with_a_certificate_from_another_ca_fails_for_good_in_one_line(tls_sink, other_ca):
    sender = SmtpSender("127.0.0.1", tls_sink.port, tls_sink.security, USER, PASSWORD, ssl_context=verified(other_ca))
    with pytest.raises(SendError) as caught:
        sender.send(a_mail())
    assert str(caught.value) == (
        f"the certificate of 127.0.0.1:{tls_sink.port} is not trusted (unable to get local "
        "issuer certificate); if the server uses its own CA, point SSL_CERT_FILE at that "
        "CA's certificate"
    )
    assert caught.value.lasting, "waiting does not fix a certificate: the user is told instead of a silent retry"
    assert tls_sink.messages == [] and tls_sink.auth == [], "nothing, not even the password, went over it"


def test_starttls_to_a_smtp_server_without_it_says_what_to_do():
    sink = SmtpSink().start()
    try:
        with pytest.raises(SendError) as caught:
            SmtpSender("127.0.0.1", sink.port, "starttls", USER, PASSWORD).send(a_mail())
        assert (
            str(caught.value)
            == (f"127.0.0.1:{sink.port} does not offer STARTTLS; try smtp_security = ssl (usually port 465)")
            and caught.value.lasting
        )
        assert sink.auth == []
    finally:
        sink.stop()
