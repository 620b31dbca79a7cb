"""New mail without waiting for the poll (IMAP IDLE against a real Dovecot), polling where the server has no
IDLE, and the ways a connection is lost: the server restarted between polls or while idling, and a
connection dropped in the middle of a fetch. Every wait is on a condition (the watcher's counters, the
actor's mailbox), never on the clock."""

from __future__ import annotations

import itertools
from datetime import datetime, timezone

import pytest

from channels.email.channel import EmailChannel
from channels.email.idle import IdleWatcher
from channels.email.imap import IDLE_REFRESH, ImapClient
from storage.db import open_database
from storage.migrations import migrate
from storage.models import ReceptorBuffer, Trace
from tests.mailservers import PASSWORD, USER, CuttingProxy, Dovecot, start_dovecot
from wilson.kernel import config as configmod
from wilson.kernel.actor import Context
from wilson.kernel.clock import SimClock
from wilson.kernel.messages import ChannelSync, Ping, TickNow
from tests.actor_support import RecordingDirectory

START = datetime(2027, 1, 5, 8, 0, tzinfo=timezone.utc)
_folders = itertools.count(1)


@pytest.fixture
def start_channel(tmp_path, monkeypatch):
    """start_channel(server, port=None, poll="off", **idle_options) → a started email channel on a fresh folder."""
    db = open_database(None, tmp_path)
    migrate()
    monkeypatch.setenv("WILSON_EMAIL_PASSWORD", PASSWORD)
    refs = []

    def start(server: Dovecot, port: int | None = None, poll: str = "off", idle: bool = True, **idle_options):
        folder = f"I{next(_folders)}"
        server.append_many([], folder)
        config = configmod.load(
            tmp_path,
            environ={
                "WILSON_EMAIL_IMAP_HOST": "127.0.0.1",
                "WILSON_EMAIL_IMAP_PORT": str(port or server.port),
                "WILSON_EMAIL_IMAP_SECURITY": "none",
                "WILSON_EMAIL_USERNAME": USER,
                "WILSON_EMAIL_PASSWORD": PASSWORD,
                "WILSON_EMAIL_FOLDERS": folder,
                "WILSON_EMAIL_POLL": poll,
            },
        )
        directory = RecordingDirectory()
        ref = EmailChannel.start(
            Context(config=config, clock=SimClock(START), synapse=None, directory=directory),
            idle=idle,
            idle_options=idle_options,
        )
        refs.append(ref)
        ref.folder, ref.directory = folder, directory
        ref.watchers = ref.proxy().watchers.get(timeout=10)
        return ref

    yield start
    for ref in refs:
        ref.stop()
    db.close()


def note(subject: str, n: int) -> bytes:
    return (
        f"From: Ann <ann@example.org>\r\nTo: you@example.org\r\nSubject: {subject}\r\n"
        f"Date: Tue, 05 Jan 2027 07:00:00 +0000\r\nMessage-ID: <idle-{subject.replace(' ', '-')}-{n}@example.org>"
        f"\r\n\r\nHello {n}\r\n"
    ).encode()


def subjects() -> list[str]:
    return [r.payload["subject"] for r in ReceptorBuffer.select().order_by(ReceptorBuffer.id)]


def settled(ref) -> None:
    """Everything the actor was told so far is handled (its mailbox is FIFO)."""
    assert ref.ask(Ping(), timeout=60) == "pong"
    assert ref.directory.crashes == []


def test_a_mail_appended_while_idling_becomes_a_row_without_a_poll(dovecot, start_channel):
    channel = start_channel(dovecot)  # poll = off: only IDLE can bring it in
    [watcher] = channel.watchers
    assert watcher.wait_for(lambda w: w.connects == 1) and watcher.supported
    rounds = watcher.rounds
    dovecot.append(note("While idling", 1), channel.folder)
    assert watcher.wait_for(lambda w: w.rounds > rounds), "the server's news ended the IDLE"
    settled(channel)
    assert subjects() == ["While idling"]
    dovecot.append(note("And another", 2), channel.folder)
    assert watcher.wait_for(lambda w: w.rounds > rounds + 1)
    settled(channel)
    assert subjects() == ["While idling", "And another"]


def test_idle_is_renewed_before_the_server_may_drop_it(dovecot, start_channel):
    assert IDLE_REFRESH < 29 * 60, "RFC 2177: re-issue IDLE at least every 29 minutes"
    assert IdleWatcher(lambda: None, "INBOX", print).refresh == IDLE_REFRESH
    channel = start_channel(dovecot, refresh=0.05)
    [watcher] = channel.watchers
    assert watcher.wait_for(lambda w: w.rounds >= 3), "IDLE left and entered again on its own"
    assert watcher.connects == 1, "renewed on the same connection"
    settled(channel)
    assert subjects() == [], "a renewal is not news"
    dovecot.append(note("After renewals", 1), channel.folder)
    # renewals move the counter all the time: wait for the row itself (each renewal wakes this wait)
    assert watcher.wait_for(lambda w: ReceptorBuffer.select().count() == 1)
    settled(channel)
    assert subjects() == ["After renewals"]


def test_a_server_without_idle_is_polled(start_channel):
    # Dovecot announcing the capabilities a server without IDLE has
    server = start_dovecot(extra="imap_capability = IMAP4rev1 LITERAL+ UIDPLUS")
    try:
        channel = start_channel(server, poll="5m")
        [watcher] = channel.watchers
        assert watcher.wait_for(lambda w: w.supported is False) and watcher.connects == 0
        assert watcher.wait_for(lambda w: w.ended), "no thread left waiting for nothing"
        server.append(note("Polled", 1), channel.folder)
        channel.tell(TickNow())  # the tick's beat: the poll is due on the channel's first one
        settled(channel)
        assert subjects() == ["Polled"]
    finally:
        server.stop()


def test_a_server_restarted_between_polls_loses_nothing(own_dovecot, start_channel):
    channel = start_channel(own_dovecot, idle=False, poll="5m")
    own_dovecot.append(note("Before", 1), channel.folder)
    channel.tell(ChannelSync("test"))
    settled(channel)
    own_dovecot.restart()
    own_dovecot.append(note("After", 2), channel.folder)
    channel.tell(ChannelSync("test"))
    settled(channel)
    assert subjects() == ["Before", "After"]


def test_the_idle_watcher_reconnects_after_a_server_restart(own_dovecot, start_channel):
    channel = start_channel(own_dovecot, retry_first=0.05, retry_max=0.5)
    [watcher] = channel.watchers
    assert watcher.wait_for(lambda w: w.connects == 1)
    # every connection dropped; a mail is delivered while no server listens
    own_dovecot.restart(while_down=lambda: own_dovecot.deliver(note("While away", 1), channel.folder))
    assert watcher.wait_for(lambda w: w.connects == 2), "connected again"
    settled(channel)
    assert subjects() == ["While away"], "read on reconnecting, without a poll"
    rounds = watcher.rounds
    own_dovecot.append(note("Back to idling", 2), channel.folder)
    assert watcher.wait_for(lambda w: w.rounds > rounds)
    settled(channel)
    assert subjects() == ["While away", "Back to idling"]


def test_a_connection_dropped_mid_fetch_is_retried_and_loses_nothing(dovecot, start_channel):
    proxy = CuttingProxy(dovecot.port, b"BODY[]")
    try:
        channel = start_channel(dovecot, port=proxy.port, idle=False)
        dovecot.append_many([note("Cut", n) for n in range(3)], channel.folder)
        channel.tell(ChannelSync("test"))
        settled(channel)
        assert proxy.cuts == 1, "the first fetch was cut in the middle"
        assert subjects() == ["Cut", "Cut", "Cut"]
        assert Trace.select().where(Trace.stage.in_(("skipped", "duplicate"))).count() == 0
        channel.tell(ChannelSync("test"))
        settled(channel)
        assert len(subjects()) == 3
    finally:
        proxy.close()


def test_the_watchers_stop_with_the_channel(dovecot, start_channel):
    channel = start_channel(dovecot)
    [watcher] = channel.watchers
    assert watcher.wait_for(lambda w: w.connects == 1)
    channel.stop()
    assert not watcher.alive


def test_a_watcher_whose_channel_is_gone_ends(dovecot):
    import pykka

    def gone(folder):
        raise pykka.ActorDeadError("the channel was replaced")

    dovecot.append_many([], "Gone")
    watcher = IdleWatcher(lambda: ImapClient("127.0.0.1", dovecot.port, "none", USER, PASSWORD), "Gone", gone).start()
    assert watcher.wait_for(lambda w: w.ended), "it does not hold a connection for a channel that is no more"
    assert watcher.connects == 0
