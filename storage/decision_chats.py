"""Where in Telegram the user answered a proposal or gave a command, so that what follows is told there.

One row per approval id (or "command:<decision row id>"), the last place wins. A row is only needed while
the gate's answer, an undo or a replacement may still come, so rows older than KEEP go when a new one is
written (one indexed delete).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from storage.models import DecisionChat
from wilson.kernel.clock import as_utc

KEEP = timedelta(days=90)  # longer than a proposal lives, is revived or undone


def remember(key: str, place: dict, now: datetime) -> None:
    now = as_utc(now)
    DecisionChat.insert(key=key, place=place, at=now).on_conflict(
        conflict_target=[DecisionChat.key], update={DecisionChat.place: place, DecisionChat.at: now}
    ).execute()
    DecisionChat.delete().where(DecisionChat.at < now - KEEP).execute()


def place(key: str) -> dict | None:
    row = DecisionChat.get_or_none(DecisionChat.key == key)
    return row.place if row is not None and isinstance(row.place, dict) else None
