"""Each channel's reach, for `wilson status`, the dashboard and the one message about a long outage.

The cursor `health:<channel>` holds the state, when the channel last reached its source (`last_ok`), its last
error and when it came (`error`, `error_at`), since when it has been failing without a success in between
(`failing_since`) and whether the user was told about that outage (`told`). Telegram and the dashboard write
their own `health:` cursors with the same keys where they have them (channels/telegram/polling.py,
channels/web/channel.py).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from storage import kv
from storage.db import database

PREFIX = "health:"
TELL_AFTER = timedelta(hours=1)  # a channel failing this long, with no success between, is told to the user once


def succeeded(name: str, at: datetime) -> None:
    """The channel reached its source: a failure before it is over (its error stays, as the last one)."""
    value = dict(kv.get_cursor(PREFIX + name) or {})
    value.update(state="ok", last_ok=at.isoformat(timespec="seconds"))
    value.pop("failing_since", None)
    value.pop("told", None)
    kv.put_cursor(PREFIX + name, value, at)


def failed(name: str, at: datetime, error: str) -> datetime | None:
    """The channel could not reach its source. Returns when the outage began if it has now lasted `TELL_AFTER`
    and was not told yet (marked told in the same transaction, so it is told once), else None."""
    with database.atomic():
        value = dict(kv.get_cursor(PREFIX + name) or {})
        since = datetime.fromisoformat(value.get("failing_since") or at.isoformat())
        value.update(
            state="failing",
            error=" ".join(str(error).split())[:300],
            error_at=at.isoformat(timespec="seconds"),
            failing_since=since.isoformat(timespec="seconds"),
        )
        tell = not value.get("told") and at - since >= TELL_AFTER
        if tell:
            value["told"] = at.isoformat(timespec="seconds")
        kv.put_cursor(PREFIX + name, value, at)
    return since if tell else None


def of(name: str) -> dict:
    return dict(kv.get_cursor(PREFIX + name) or {})
