"""Sending approved mail over a real SMTP server (aiosmtpd on loopback): queued once per proposal item,
sent once however often it is approved, never sent twice across a kill between the SMTP transaction
and its record, retried with backoff when the server is down."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import timedelta
from email import message_from_bytes, policy
from pathlib import Path

import pytest

from storage import trace
from storage.models import Outbox
from tests.mailservers import PASSWORD, USER, Dovecot, start_dovecot, free_port
from wilson.kernel import config as configmod
from wilson.kernel.clock import SimClock
from wilson.kernel.messages import Deliver, Ping
from tests.email_support import DRAFT, START, environ, queue, start_channel

ROOT = Path(__file__).resolve().parents[1]


def test_an_approved_mail_is_queued_and_sent_once_however_often_it_is_approved(home, sink, monkeypatch):
    ref, config, _ = start_channel(home, environ(home, sink.port), monkeypatch)
    try:
        first, again = queue(config), queue(config)  # approve pressed twice: the same proposal item
        assert first["outbox_id"] == again["outbox_id"] and Outbox.select().count() == 1
        ref.tell(Deliver(first["outbox_id"]))
        ref.tell(Deliver(first["outbox_id"]))
        assert ref.ask(Ping(), timeout=30) == "pong"
        assert sink.wait_for(1)
        assert len(sink.messages) == 1
        sender, recipients, raw = sink.messages[0]
        mail = message_from_bytes(raw, policy=policy.default)
        assert (sender, recipients) == ("you@example.org", ["ann@example.org"])
        assert mail["Message-ID"] == first["message_id"] and mail["In-Reply-To"] == "<lunch-1@example.org>"
        assert mail["Subject"] == "Friday" and mail.get_content().strip() == "See you Friday at noon."
        row = Outbox.get_by_id(first["outbox_id"])
        assert row.status == "delivered" and row.result["message_id"] == first["message_id"]
        assert sink.auth == [(USER, PASSWORD)]
    finally:
        ref.stop()


def test_sending_is_refused_honestly_when_no_smtp_server_is_set(home, tmp_path):
    config = configmod.load(home, environ={})
    with pytest.raises(Exception, match="email sending is not set up"):
        queue(config)
    assert Outbox.select().count() == 0


def test_a_server_that_is_down_is_tried_again_later(home, monkeypatch):
    clock = SimClock(START)
    ref, config, _ = start_channel(home, environ(home, free_port()), monkeypatch, clock)
    try:
        queued = queue(config)
        ref.tell(Deliver(queued["outbox_id"]))
        assert ref.ask(Ping(), timeout=30) == "pong"
        row = Outbox.get_by_id(queued["outbox_id"])
        assert (row.status, row.attempts, row.sending_at) == ("retry", 1, None)
        assert row.next_attempt_at == START + timedelta(minutes=1)
        assert "cannot reach 127.0.0.1" in row.result["error"]
        ref.tell(Deliver(queued["outbox_id"]))  # before its time: not tried
        assert ref.ask(Ping(), timeout=30) == "pong"
        assert Outbox.get_by_id(queued["outbox_id"]).attempts == 1
        assert Outbox.select().where(Outbox.channel == "repl").count() == 0  # one failure may be a blip
        clock.advance(timedelta(minutes=1))
        ref.tell(Deliver(queued["outbox_id"]))
        assert ref.ask(Ping(), timeout=30) == "pong"
        row = Outbox.get_by_id(queued["outbox_id"])
        assert (row.status, row.attempts, row.next_attempt_at) == ("retry", 2, START + timedelta(minutes=3))
        [told] = Outbox.select().where(Outbox.channel == "repl")
        assert told.text.startswith(
            "The email “Friday” to ann@example.org has not gone out yet (cannot reach 127.0.0.1"
        )
        assert told.text.endswith("I'll keep trying with the same message, so it arrives only once.")
    finally:
        ref.stop()


CHILD = textwrap.dedent("""
    import sys
    from datetime import datetime, timezone
    sys.path.insert(0, {root!r})
    from channels.email.channel import EmailChannel
    from storage.db import open_database
    from wilson.kernel import config as configmod
    from wilson.kernel.actor import Context
    from wilson.kernel.clock import SimClock
    from wilson.kernel.messages import Ping

    class Directory:
        def tell(self, *a): return True
        def handled(self, *a): pass
        def crashed(self, *a): pass

    from pathlib import Path
    open_database(None, Path({home!r}))
    config = configmod.load({home!r})
    ref = EmailChannel.start(Context(config=config, clock=SimClock(datetime(2027, 1, 5, 8, tzinfo=timezone.utc)),
                                     synapse=None, directory=Directory()), idle=False)
    ref.ask(Ping(), timeout=30)  # on start it delivers what is owed, and dies right after the send
    print("not killed")
""")


def send_and_die(home: Path, env: dict, point: str = "email:after-send") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", CHILD.format(root=str(ROOT), home=str(home))],
        env={**env, "WILSON_FAULT_POINTS": point, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_killed_before_the_mail_is_handed_over_it_goes_out_once_at_restart_with_the_same_message_id(
    home, sink, own_dovecot, monkeypatch
):
    env = environ(home, sink.port, own_dovecot.port)
    queued = queue(configmod.load(home, environ=env))
    child = send_and_die(home, env, "email:before-send")
    assert child.returncode == -9, child.stderr[-2000:]
    row = Outbox.get_by_id(queued["outbox_id"])
    assert row.status == "pending" and row.sending_at is not None and sink.messages == []
    ref, _, _ = start_channel(home, env, monkeypatch)  # the restart delivers what is owed
    try:
        assert sink.wait_for(1) and len(sink.messages) == 1
        mail = message_from_bytes(sink.messages[0][2], policy=policy.default)
        assert mail["Message-ID"] == queued["message_id"]
        row = Outbox.get_by_id(queued["outbox_id"])
        assert row.status == "delivered" and row.attempts == 2
        assert Outbox.select().where(Outbox.channel == "repl").count() == 0  # nothing to warn about
    finally:
        ref.stop()


def test_killed_right_after_the_server_took_the_mail_it_is_delivered_and_nobody_is_warned(
    home, sink, own_dovecot, monkeypatch
):
    env = environ(home, sink.port, own_dovecot.port)
    queued = queue(configmod.load(home, environ=env))
    child = send_and_die(home, env, "email:after-send")
    assert child.returncode == -9, child.stderr[-2000:]
    assert sink.wait_for(1) and len(sink.messages) == 1
    assert Outbox.get_by_id(queued["outbox_id"]).status == "delivered"  # recorded as the server answered
    ref, _, _ = start_channel(home, env, monkeypatch)
    try:
        assert len(sink.messages) == 1  # never a second copy
        assert Outbox.select().where(Outbox.channel == "repl").count() == 0  # and no "not sure" warning
    finally:
        ref.stop()


@pytest.mark.parametrize("in_sent_folder", [False, True])
def test_cut_short_after_the_hand_over_the_sent_folder_decides_or_the_user_is_told_it_is_unknown(
    home, sink, own_dovecot, monkeypatch, in_sent_folder
):
    from storage import outbox

    env = environ(home, sink.port, own_dovecot.port)
    queued = queue(configmod.load(home, environ=env))
    # what a kill leaves between writing the mail's last line and recording the server's answer
    assert outbox.start_attempt(queued["outbox_id"], START)
    outbox.mark_handing(queued["outbox_id"], START)
    if in_sent_folder:  # e.g. Gmail files what its SMTP server took in the Sent folder
        from channels.email.smtp import build

        own_dovecot.append_many([build(Outbox.get_by_id(queued["outbox_id"]).payload, START).as_bytes()], "Sent")
    ref, _, directory = start_channel(home, env, monkeypatch)
    try:
        row = Outbox.get_by_id(queued["outbox_id"])
        assert sink.messages == []  # never sent again blindly
        if in_sent_folder:
            assert row.status == "delivered" and row.result["confirmed"] == "found in Sent"
            assert Outbox.select().where(Outbox.channel == "repl").count() == 0
        else:
            assert row.status == "failed" and "may have gone out" in row.result["error"]
            [told] = Outbox.select().where(Outbox.channel == "repl")
            assert told.text == (
                "I'm not sure the email “Friday” to ann@example.org went out (Wilson stopped "
                "while the mail was being sent). Please check your Sent folder; I won't send it again "
                "on my own."
            )
            assert ("repl", Deliver(told.id)) in directory.told
    finally:
        ref.stop()


def test_the_skill_tool_queues_one_row_per_approved_item_and_refuses_without_a_server(home, sink):
    from zoneinfo import ZoneInfo

    from channels.email.skill import SendEmail
    from wilson.skills import Call

    config = configmod.load(home, environ=environ(home, sink.port))
    tool = SendEmail()
    call = Call(now=START, tz=ZoneInfo("Europe/Berlin"), config=config, item_id=7, trace_id="t1", sender=lambda *a: 0)
    assert tool.validate(DRAFT, call) is None
    assert tool.validate({**DRAFT, "to": "ann"}, call) == "not an email address: ann"
    for subject in ("Friday\r\nBcc: eve@example.net", "Friday\nBcc: eve@example.net", "Friday\x0bnext"):
        assert tool.validate({**DRAFT, "subject": subject}, call) == (
            "the subject must be one line, without line breaks or control characters"
        )
    assert tool.validate({**DRAFT, "in_reply_to": "<a@b>\r\nBcc: eve@example.net"}, call) == (
        "the in-reply-to must be one line, without line breaks or control characters"
    )
    first, again = tool.execute(DRAFT, call), tool.execute(DRAFT, call)
    assert first == again and call.deliveries == [("email", first["outbox_id"])] * 2
    assert Outbox.get_by_id(first["outbox_id"]).idempotency_key == "email-send:item:7"
    bare = Call(now=START, tz=ZoneInfo("Europe/Berlin"), config=configmod.load(home, environ={}), item_id=8)
    assert tool.validate(DRAFT, bare) == "email sending is not set up (no [email] smtp_host and from_address)"
    shown = tool.describe(DRAFT, call)
    assert "Subject: Friday" in shown and "Body: See you Friday at noon." in shown


def sent_copies(server: Dovecot, folder: str) -> list:
    return [message_from_bytes(raw, policy=policy.default) for raw in server.folder_messages(folder)]


@pytest.mark.parametrize("filed_by_server", [False, True])
def test_a_sent_mail_is_kept_once_in_the_sent_folder(home, sink, own_dovecot, monkeypatch, filed_by_server):
    own_dovecot.append_many([], "Sent")
    ref, config, _ = start_channel(home, environ(home, sink.port, own_dovecot.port), monkeypatch)
    try:
        queued = queue(config)
        if filed_by_server:  # Gmail files what its SMTP server takes by itself: no second copy
            own_dovecot.append(f"Message-ID: {queued['message_id']}\r\nSubject: Friday\r\n\r\nx\r\n".encode(), "Sent")
        ref.tell(Deliver(queued["outbox_id"]))
        assert ref.ask(Ping(), timeout=30) == "pong"
        assert sink.wait_for(1) and len(sink.messages) == 1
        [copy] = sent_copies(own_dovecot, "Sent")
        assert copy["Message-ID"] == queued["message_id"] and copy["Subject"] == "Friday"
        if not filed_by_server:

            def text(raw: bytes) -> bytes:
                return raw.replace(b"\r\n", b"\n").rstrip()

            assert text(copy.as_bytes()) == text(sink.messages[0][2]), "the very mail the server took"
        [filed] = [t.reason for t in trace.path(Outbox.get_by_id(queued["outbox_id"]).trace_id) if t.stage == "filed"]
        assert filed == ("the server filed it in Sent itself" if filed_by_server else "a copy kept in Sent")
    finally:
        ref.stop()


def test_the_copy_goes_to_the_folder_the_server_marks_as_sent(home, sink, monkeypatch):
    server = start_dovecot(
        extra='namespace inbox {\n  inbox = yes\n  mailbox "Sent Items" {\n    auto = create\n'
        "    special_use = \\Sent\n  }\n}\n"
    )
    try:
        server.append_many([], "Sent")  # a folder by the usual name that is not the marked one
        ref, config, _ = start_channel(home, environ(home, sink.port, server.port), monkeypatch)
        try:
            queued = queue(config)
            ref.tell(Deliver(queued["outbox_id"]))
            assert ref.ask(Ping(), timeout=30) == "pong"
            assert [m["Message-ID"] for m in sent_copies(server, "Sent Items")] == [queued["message_id"]]
            assert sent_copies(server, "Sent") == []
        finally:
            ref.stop()
    finally:
        server.stop()


def test_killed_after_the_delivery_is_recorded_the_mail_is_not_sent_again(home, sink, own_dovecot, monkeypatch):
    own_dovecot.append_many([], "Sent")
    env = environ(home, sink.port, own_dovecot.port)
    queued = queue(configmod.load(home, environ=env))
    child = send_and_die(home, env, "email:after-delivery")
    assert child.returncode == -9, child.stderr[-2000:]
    assert sink.wait_for(1) and Outbox.get_by_id(queued["outbox_id"]).status == "delivered"
    ref, _, _ = start_channel(home, env, monkeypatch)
    try:
        assert len(sink.messages) == 1, "delivered is delivered: never sent again"
        assert sent_copies(own_dovecot, "Sent") == [], "the copy is the one thing a kill at that moment costs"
    finally:
        ref.stop()


POINTS = ("email:before-send", "email:after-send", "email:after-delivery")


def test_fifty_approved_sends_through_kills_at_every_point_and_at_random_arrive_once_or_are_told(
    home, sink, own_dovecot, monkeypatch
):
    """Each mail reaches the server exactly once, whatever moment Wilson is killed at. The one moment no
    process can know about (the mail's last line written, the server's answer not yet recorded) ends in
    the user being told exactly that; a kill anywhere else never produces that warning."""
    import random
    import time

    own_dovecot.append_many([], "Sent")
    env = environ(home, sink.port, own_dovecot.port)
    config = configmod.load(home, environ=env)
    queued = [queue(config, key=f"approval:{n}:1") for n in range(1, 51)]
    rng = random.Random(51)
    schedule = [f"{point}@{rng.randint(1, 6)}" for point in POINTS for _ in range(3)]
    schedule += ["random"] * 8
    rng.shuffle(schedule)
    kills, lives, started = {}, 0, time.monotonic()
    for plan in schedule + ["none"] * 5:
        if not Outbox.select().where((Outbox.channel == "email") & Outbox.status.in_(("pending", "retry"))).exists():
            break
        lives += 1
        point = "" if plan in ("random", "none") else plan
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD.format(root=str(ROOT), home=str(home))],
            env={**env, "WILSON_FAULT_POINTS": point, "PATH": "/usr/bin:/bin"},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        if plan == "random":
            try:
                child.wait(timeout=rng.uniform(0.6, 1.6))  # the workload's random moment, not a wait for a state
            except subprocess.TimeoutExpired:
                child.kill()
        out, err = child.communicate(timeout=60)
        if child.returncode == -9:
            kills[plan.split("@")[0]] = kills.get(plan.split("@")[0], 0) + 1
        else:
            assert child.returncode == 0 and "not killed" in out, err[-2000:]
    took = time.monotonic() - started
    ids = [message_from_bytes(raw, policy=policy.default)["Message-ID"] for _, _, raw in sink.messages]
    rows = {q["message_id"]: Outbox.get_by_id(q["outbox_id"]) for q in queued}
    told = [r.text for r in Outbox.select().where(Outbox.channel == "repl")]
    unknown = [m for m, r in rows.items() if r.status == "failed"]
    print(
        f"\n{len(queued)} sends, {lives} lives, kills {kills}, {len(ids)} mails arrived, {len(unknown)} "
        f"truly unknown ({sum(1 for m in unknown if m in ids)} of them had arrived), {took:.1f} s"
    )
    assert set(kills) >= {*POINTS, "random"}, kills  # every point was killed at, and random moments too
    assert sorted(ids) == sorted(set(ids)), "a mail arrived twice"
    for message_id, row in rows.items():
        assert row.status in ("delivered", "failed"), (message_id, row.status)
        if row.status == "delivered":
            assert ids.count(message_id) == 1, message_id
        else:  # only a kill inside the hand-over (smtp.py) may leave it unknown, and then the user is told so
            assert ids.count(message_id) <= 1 and "may have gone out" in row.result["error"], row.result
    assert len(told) == len(unknown) and all(t.startswith("I'm not sure the email") for t in told)


def test_a_subject_with_a_line_break_is_refused_before_any_proposal_is_shown(home, sink):
    from datetime import timedelta

    from actors.proposals import make, rules
    from storage.models import Approval

    config = configmod.load(home, environ={**environ(home, sink.port), "WILSON_SKILLS_ENABLED": "email"})
    forged = {**DRAFT, "subject": "Friday\r\nBcc: eve@example.net"}
    with pytest.raises(rules.CannotPropose, match="^The subject must be one line"):
        make.propose_one(
            "send_email",
            forged,
            owner="owner",
            channel="repl",
            reason="asked",
            key="k1",
            now=START + timedelta(minutes=1),
            config=config,
        )
    assert Approval.select().count() == 0 and Outbox.select().count() == 0
