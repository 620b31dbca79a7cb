"""What the email tests share: a configured home, the outbox rows to send, and a started email channel."""

from __future__ import annotations
from datetime import datetime, timezone
from pathlib import Path
from channels.email.channel import EmailChannel
from channels.email.smtp import queue_send
from storage import trace
from tests.mailservers import PASSWORD, USER
from wilson.kernel import config as configmod
from wilson.kernel.actor import Context
from wilson.kernel.clock import SimClock
from wilson.kernel.messages import Ping
from tests.actor_support import RecordingDirectory


START = datetime(2027, 1, 5, 8, 0, tzinfo=timezone.utc)


DRAFT = {
    "to": "ann@example.org",
    "subject": "Friday",
    "body": "See you Friday at noon.",
    "in_reply_to": "<lunch-1@example.org>",
}


def environ(home: Path, smtp_port: int, imap_port: int | None = None) -> dict:
    env = {
        "WILSON_CORE_TIMEZONE": "Europe/Berlin",
        "WILSON_EMAIL_SMTP_HOST": "127.0.0.1",
        "WILSON_EMAIL_SMTP_PORT": str(smtp_port),
        "WILSON_EMAIL_SMTP_SECURITY": "none",
        "WILSON_EMAIL_USERNAME": USER,
        "WILSON_EMAIL_FROM_ADDRESS": "you@example.org",
        "WILSON_EMAIL_PASSWORD": PASSWORD,
        "WILSON_EMAIL_IMAP_SECURITY": "none",
        "WILSON_EMAIL_POLL": "off",
    }
    if imap_port:
        env.update(WILSON_EMAIL_IMAP_HOST="127.0.0.1", WILSON_EMAIL_IMAP_PORT=str(imap_port))
    return env


def start_channel(home: Path, env: dict, monkeypatch, clock=None):
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    config = configmod.load(home, environ=env)
    config.set("core", "primary_channel", "repl")
    directory = RecordingDirectory(strict=True)
    ref = EmailChannel.start(
        Context(config=config, clock=clock or SimClock(START), synapse=None, directory=directory), idle=False
    )
    assert ref.ask(Ping(), timeout=30) == "pong"
    return ref, config, directory


def queue(config, key: str = "approval:1:1") -> dict:
    return queue_send(DRAFT, key=key, trace_id=trace.new_trace_id(), at=START, config=config)
