"""What the Telegram channel keeps in the database between updates, and the record of one update.

Cursors and settings are named here, once: the offset, the outage, the health line, and the
per-user or per-proposal settings (Modify's wait, where a press came from, toggled items,
renamed threads).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

OFFSET_CURSOR = "telegram:offset"
OUTAGE_CURSOR = "telegram:outage"  # {"since": first failed send, "told": chats already told of the delay}
HEALTH_CURSOR = "health:telegram"
AWAITING_MODIFY = "awaiting_modify"  # storage/marks.py kind: user id -> {"approval_id", "nonce", "at"}
RENAMED = "renamed"  # storage/marks.py kind: approval item id -> the name its forum thread was given
LEFT_OUT = "left_out"  # storage/marks.py kind: approval id -> item positions toggled off (the rest are approved)


@dataclass(frozen=True)
class Incoming:
    """One message or press being handled: who sent it, where an answer goes (`where`: the chat and
    thread; `reply`: the message it answers), its update's key, when, and what to do once committed."""

    uid: str
    where: dict
    reply: dict
    key: str
    now: datetime
    after: list


class NoRecipient(Exception):
    """Nobody to send to: no allowed user is configured and nobody has paired."""
