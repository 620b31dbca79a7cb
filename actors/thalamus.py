"""The thalamus: routes every stimulus and triages buffered input in batches.

Routing rules (pure, run on the receptor's own thread so the row is durable
before anyone is told): realtime stimuli go to the inbox at priority 0, buffered
ones to receptor_buffers.
"""

from __future__ import annotations

from datetime import datetime

from storage import buffers, inbox

REALTIME_PRIORITY = 0


def commit_realtime(*, source: str, text: str, user_id: str | None, at: datetime, dedup_key: str | None = None,
                    payload: dict | None = None, kind: str = "message"):
    return inbox.add(source=source, text=text, priority=REALTIME_PRIORITY, at=at, kind=kind, origin="user",
                     payload=payload, user_id=user_id, reply_channel=source, dedup_key=dedup_key)


def commit_buffered(*, channel: str, text: str, dedup_key: str, at: datetime, payload: dict | None = None):
    return buffers.add(channel=channel, text=text, dedup_key=dedup_key, at=at, payload=payload)
