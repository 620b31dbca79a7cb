"""Small state about one thing, by kind: an event window already raised (actors/escalation.py), a forum thread
already renamed, the items a user toggled off in a proposal and the change a user is typing after Modify
(channels/telegram/), the chats the bot saw, files handed over and not read yet, and the dashboard's presses
(channels/web/channel.py). A kind with a lifetime in KEEP is pruned when one of its marks is written; a renamed
thread's mark stays, since every approved rename is looked at again after a restart.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from storage.models import Mark
from wilson.kernel.clock import as_utc

KEEP = {
    "escalation": timedelta(days=400),  # until the event has passed: events are planned up to a year ahead
    "left_out": timedelta(days=30),  # until the proposal is answered, revived or long expired
    "awaiting_modify": timedelta(days=7),
    "telegram_chat": timedelta(days=365),
    "web_press": timedelta(days=2),  # a dashboard form pressed twice counts once; its page is long gone by then
    "telegram_handover": timedelta(
        days=30
    ),  # a file handed over is read at the next start, well before this  # a chat the bot has not heard from in a year is no longer listed  # the change is wanted for an hour (channels/telegram/buttons.py)
}


def get(kind: str, key: str, default=None):
    row = Mark.get_or_none((Mark.kind == kind) & (Mark.key == key))
    return default if row is None or row.value is None else row.value


def put(kind: str, key: str, value, now: datetime) -> None:
    now = as_utc(now)
    Mark.insert(kind=kind, key=key, value=value, at=now).on_conflict(
        conflict_target=[Mark.kind, Mark.key], update={Mark.value: value, Mark.at: now}
    ).execute()
    if kind in KEEP:
        Mark.delete().where((Mark.kind == kind) & (Mark.at < now - KEEP[kind])).execute()


def delete(kind: str, key: str) -> bool:
    return Mark.delete().where((Mark.kind == kind) & (Mark.key == key)).execute() > 0
