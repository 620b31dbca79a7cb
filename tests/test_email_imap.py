"""The email channel reading a real Dovecot over IMAP: one buffer row per new mail, nothing twice
(re-sync, UIDVALIDITY change), an unreadable mail traced while the next still flows, the corpus."""

from __future__ import annotations

import itertools
import os
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from channels.email import parse
from channels.email.channel import EmailChannel
from channels.email.imap import ImapClient, ImapError, check_security
from channels.email.settings import status_line
from storage.db import open_database
from storage.migrations import migrate
from storage.models import Cursor, ReceptorBuffer, Trace
from tests.mailservers import PASSWORD, USER
from wilson.kernel import config as configmod
from wilson.kernel.actor import Context
from wilson.kernel.clock import SimClock
from wilson.kernel.messages import ChannelSync, Ping, StimulusCommitted
from tests.actor_support import RecordingDirectory

CORPUS = Path(os.environ.get("WILSON_CORPUS_DIR") or Path(__file__).resolve().parents[2] / "shared" / "corpus")
FILES = sorted((CORPUS / "eml").glob("**/*.eml"))
START = datetime(2027, 1, 5, 8, 0, tzinfo=timezone.utc)
_folders = itertools.count(1)


@pytest.fixture
def channel(tmp_path, dovecot, monkeypatch):
    """A started email channel reading a fresh folder of the module's Dovecot; `.folder`, `.sync()`."""
    db = open_database(None, tmp_path)
    migrate()
    monkeypatch.setenv("WILSON_EMAIL_PASSWORD", PASSWORD)
    folder = f"T{next(_folders)}"
    dovecot.append_many([], folder)  # creates it
    config = configmod.load(
        tmp_path,
        environ={
            "WILSON_CORE_TIMEZONE": "Europe/Berlin",
            "WILSON_EMAIL_IMAP_HOST": "127.0.0.1",
            "WILSON_EMAIL_IMAP_PORT": str(dovecot.port),
            "WILSON_EMAIL_IMAP_SECURITY": "none",
            "WILSON_EMAIL_USERNAME": USER,
            "WILSON_EMAIL_PASSWORD": PASSWORD,
            "WILSON_EMAIL_FOLDERS": folder,
            "WILSON_EMAIL_BACKFILL": "1000",
        },
    )
    directory = RecordingDirectory()
    ctx = Context(config=config, clock=SimClock(START), synapse=None, directory=directory)
    ref = EmailChannel.start(ctx, idle=False)  # each test says when the channel reads

    def sync():
        ref.tell(ChannelSync("test"))
        assert ref.ask(Ping(), timeout=60) == "pong"
        assert directory.crashes == []

    ref.folder, ref.sync, ref.directory, ref.config = folder, sync, directory, config
    yield ref
    ref.stop()
    db.close()


def note(subject: str, message_id: str, body: str = "Lunch on Friday?", extra: str = "") -> bytes:
    return (
        f"From: Ann Example <ann@example.org>\r\nTo: you@example.org\r\nSubject: {subject}\r\n"
        f"Date: Tue, 05 Jan 2027 07:00:00 +0000\r\nMessage-ID: {message_id}\r\n{extra}\r\n{body}\r\n"
    ).encode()


def rows():
    return list(ReceptorBuffer.select().where(ReceptorBuffer.channel == "email").order_by(ReceptorBuffer.id))


def test_new_mail_becomes_one_buffer_row_and_a_resync_adds_nothing(dovecot, channel):
    dovecot.append_many(
        [note("Lunch", "<m1@example.org>"), note("Keys", "<m2@example.org>", "Where are the keys?")], channel.folder
    )
    channel.sync()
    first = rows()
    assert [r.payload["subject"] for r in first] == ["Lunch", "Keys"]
    assert first[0].text.startswith("Email from Ann Example <ann@example.org>: Lunch\nSent Tue 05 Jan 2027 08:00")
    assert first[0].payload["from"] == "ann@example.org" and first[0].payload["priority"] == 3
    assert [(n, m.table, m.row_id) for n, m in channel.directory.told if isinstance(m, StimulusCommitted)] == [
        ("thalamus", "buffer", r.id) for r in first
    ]
    channel.sync()
    assert rows() == first
    dovecot.append(note("Later", "<m3@example.org>"), channel.folder)
    channel.sync()
    assert [r.payload["subject"] for r in rows()] == ["Lunch", "Keys", "Later"]
    # read without marking anything as seen on the server
    imap = dovecot.client()
    imap.select(channel.folder, readonly=True)
    assert imap.search(None, "UNSEEN")[1][0].split() == [b"1", b"2", b"3"]
    imap.logout()


def test_a_renumbered_folder_is_read_again_without_duplicates(dovecot, channel):
    old = [note("One", "<r1@example.org>"), note("Two", "<r2@example.org>")]
    dovecot.append_many(old, channel.folder)
    channel.sync()
    before = dovecot.uidvalidity(channel.folder)
    dovecot.recreate(channel.folder, [*old, note("Three", "<r3@example.org>")])
    assert dovecot.uidvalidity(channel.folder) != before
    channel.sync()
    assert [r.payload["subject"] for r in rows()] == ["One", "Two", "Three"]
    assert Trace.select().where((Trace.stage == "resynced") & Trace.reason.contains(channel.folder)).count() == 1
    assert Trace.select().where(Trace.stage == "duplicate").count() == 0
    cursor = Cursor.get(Cursor.name == f"email:{USER}@127.0.0.1:{channel.folder}")
    assert cursor.value["uidvalidity"] == dovecot.uidvalidity(channel.folder) and "resync" not in cursor.value


def test_an_unreadable_mail_is_traced_and_the_next_one_still_flows(dovecot, channel):
    dovecot.append_many(
        [note("Before", "<p1@example.org>"), b"\r\n", note("After", "<p2@example.org>")], channel.folder
    )
    channel.sync()
    assert [r.payload["subject"] for r in rows()] == ["Before", "After"]
    [skipped] = Trace.select().where((Trace.stage == "skipped") & (Trace.actor == "email"))
    assert skipped.reason == f"mail {channel.folder} uid 2 (2 bytes) not read: the message is empty"
    channel.sync()  # and it is not tried again and again
    assert Trace.select().where(Trace.stage == "skipped").count() == 1


def test_bulk_mail_is_buffered_as_already_scanned_so_the_ras_spends_nothing(dovecot, channel):
    digest = note("Weekly digest", "<b1@example.org>", extra="List-Unsubscribe: <mailto:x@example.org>\r\n")
    dovecot.append_many([digest, note("Dinner?", "<b2@example.org>")], channel.folder)
    channel.sync()
    digest, dinner = rows()
    assert digest.payload["bulk"] == "it has a List-Unsubscribe header" and digest.scanned_at is not None
    assert "bulk" not in dinner.payload and dinner.scanned_at is None
    assert digest.processed_at is None  # the thalamus still sees it at its sync


def test_a_reply_names_its_thread(dovecot, channel):
    dovecot.append(note("Flat viewing", "<t1@example.org>"), channel.folder)
    channel.sync()
    dovecot.append(
        note("Re: Flat viewing", "<t2@example.org>", "Yes, 5pm.", extra="In-Reply-To: <t1@example.org>\r\n"),
        channel.folder,
    )
    channel.sync()
    assert "A reply in the thread “Flat viewing”" in rows()[-1].text


def test_the_first_look_at_a_big_folder_reads_only_the_newest(dovecot, channel):
    dovecot.append_many([note(f"Old {i}", f"<o{i}@example.org>") for i in range(5)], channel.folder)
    channel.config.set("email", "backfill", 2)
    channel.sync()
    assert [r.payload["subject"] for r in rows()] == ["Old 3", "Old 4"]
    assert Trace.get(Trace.stage == "skipped").reason == f"first look at {channel.folder}: 3 older mail(s) left unread"


def test_a_wrong_password_is_refused_without_showing_it(dovecot):
    client = ImapClient("127.0.0.1", dovecot.port, "none", USER, "not-the-password-123")
    with pytest.raises(ImapError) as caught:
        client.connect()
    assert "refused the login for wilson" in str(caught.value) and "not-the-password-123" not in str(caught.value)


def test_plain_imap_is_refused_for_a_remote_host():
    with pytest.raises(ImapError, match="only allowed for a loopback host"):
        check_security("none", "imap.example.com")
    with pytest.raises(ImapError, match="not one of ssl, starttls, none"):
        check_security("tls1", "imap.example.com")


def test_status_says_when_the_channel_is_off(tmp_path):
    assert status_line(configmod.load(tmp_path, environ={})) == "email: off (no [email] imap_host)"


def test_wilson_status_shows_the_email_channel(tmp_path, monkeypatch, capsys):
    from wilson.app import cli

    monkeypatch.setenv("WILSON_EMAIL_IMAP_HOST", "imap.example.org")
    monkeypatch.setenv("WILSON_EMAIL_FOLDERS", "INBOX,Bills")
    assert cli.main(["--home", str(tmp_path / "on"), "status"]) == 0
    assert (
        "email: reads INBOX, Bills at imap.example.org (ssl) at once where the server offers IDLE, else every "
        "5m; cannot send (no smtp_host)"
    ) in capsys.readouterr().out.splitlines()
    monkeypatch.delenv("WILSON_EMAIL_IMAP_HOST")
    assert cli.main(["--home", str(tmp_path / "off"), "status"]) == 0
    assert "email: off (no [email] imap_host)" in capsys.readouterr().out.splitlines()


def duplicates() -> int:
    """Mails of the corpus with the natural key of an earlier one (Dovecot stores NUL bytes as 0x80)."""
    seen, repeats = set(), 0
    for path in FILES:
        raw = path.read_bytes().replace(b"\0", b"\x80")
        key = parse.dedup_key(parse.parse_message(raw), raw, f"{USER}@127.0.0.1")
        repeats += key in seen
        seen.add(key)
    return repeats


@pytest.mark.skipif(not FILES, reason=f"no email corpus at {CORPUS}/eml (set WILSON_CORPUS_DIR)")
def test_the_corpus_through_dovecot_gives_a_row_or_a_trace_for_every_mail(dovecot, channel):
    dovecot.append_many([path.read_bytes() for path in FILES], channel.folder)
    started = time.perf_counter()
    channel.sync()
    took = time.perf_counter() - started
    buffered = rows()
    traced = {t.data["uid"]: t for t in Trace.select().where(Trace.stage.in_(("skipped", "duplicate")))}
    uids = {r.payload["uid"] for r in buffered}
    assert uids.isdisjoint(traced) and uids | set(traced) == set(range(1, len(FILES) + 1))
    assert all(t.reason.startswith(f"mail {channel.folder} uid {t.data['uid']} ") for t in traced.values())
    assert all(len(r.text) < 4000 for r in buffered)
    print(f"\ncorpus through Dovecot: {len(FILES)} mails, {len(buffered)} rows, {len(traced)} traced, {took:.2f}s")
    # the corpus repeats Message-IDs (fixtures copied from each other): each repeat is one "duplicate" line
    assert Trace.select().where(Trace.stage == "duplicate").count() == duplicates()
    assert len(buffered) > len(FILES) * 0.7
    channel.sync()
    assert len(rows()) == len(buffered)


def test_a_server_that_drips_its_greeting_or_an_answer_is_left_within_the_deadline():
    """One byte every half second never trips the 1 s per-read timeout: connecting ends at 1.5 s all the same,
    and so does a login whose answer never comes, only untagged lines one at a time."""
    from tests.web_harness import DripSite

    with DripSite(every=0.5, lines=60, head=b"* OK ", drip=b"x", speaks_first=True) as drip:
        started = time.monotonic()
        with pytest.raises(ImapError, match="did not finish connecting and logging in within 1.5 seconds"):
            ImapClient("127.0.0.1", drip.port, "none", "ann", "pw", timeout=1.0).connect()
        assert time.monotonic() - started < 1.5 + 2
    greeting = b"* OK ready\r\n"
    with DripSite(every=0.5, lines=60, head=greeting, drip=b"* {n} RECENT\r\n", speaks_first=True) as drip:
        client = ImapClient("127.0.0.1", drip.port, "none", "ann", "pw", timeout=1.0)
        started = time.monotonic()
        with pytest.raises(ImapError, match="did not finish connecting and logging in within 1.5 seconds"):
            client.connect()  # the answer to LOGIN never comes: only untagged lines, one at a time
        assert time.monotonic() - started < 1.5 + 2
