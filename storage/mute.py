"""The user's mute ("/quiet 3h"): stored as the Setting "quiet_until", read with the quiet hours.

The quiet-hours arithmetic is the kernel's (wilson/kernel/quiet.py); this module keeps the stored half.
"""

from __future__ import annotations

from datetime import datetime

from storage import kv
from storage.db import claim_transaction
from storage.models import Outbox, OutboxStatus
from wilson.kernel import timeparse
from wilson.kernel.clock import as_utc
from wilson.kernel.quiet import quiet_until

MUTE_KEY = "quiet_until"
HELD_BY_CAP = "daily cap"  # a held row's payload["held_by"]: held until tomorrow by the cap, not by quiet


def muted_until() -> datetime | None:
    """The moment the user's mute ends (may already be past), or None when never muted."""
    try:
        return timeparse.utc_or_none(kv.get_setting(MUTE_KEY))
    except ValueError:
        return None


def mute(until: datetime | None) -> None:
    """Mute non-urgent surfacing until `until` (None lifts the mute)."""
    value = as_utc(until).isoformat() if until is not None else None
    with claim_transaction():
        kv.put_setting(MUTE_KEY, value)


def retime_held(config, now: datetime) -> int:
    """After the mute changed (lifted, shortened or made longer): a message held for quiet waits exactly as
    long as the quiet hours and the mute now say, and the tick releases what may go. Two keep their time: a
    message the daily cap holds until tomorrow, and a proposal's reminder that the longer mute would carry
    past the proposal's expiry (it is only ever brought forward). How many moved."""
    until = hold_until(config, now) or as_utc(now)
    with claim_transaction():
        rows = [
            row.id
            for row in Outbox.select(Outbox.id, Outbox.payload, Outbox.deliver_after).where(
                (Outbox.status == "held") & (Outbox.deliver_after != until)
            )
            if (row.payload or {}).get("held_by") != HELD_BY_CAP
            and not ((row.payload or {}).get("reminder_for") and as_utc(row.deliver_after) < until)
        ]
        if not rows:
            return 0
        # a morning briefing held past its own day would be a stale morning: it is dropped instead
        day = as_utc(until).astimezone(config.timezone).date().isoformat()
        stale = [
            row.id
            for row in Outbox.select(Outbox.id, Outbox.payload).where(Outbox.id.in_(rows))
            if (row.payload or {}).get("briefing") not in (None, day)
        ]
        if stale:
            (
                Outbox.update(status=OutboxStatus.DROPPED.value)
                .where(Outbox.id.in_(stale) & (Outbox.status == "held"))
                .execute()
            )
        return (
            Outbox.update(deliver_after=until)
            .where(Outbox.id.in_([r for r in rows if r not in stale]) & (Outbox.status == "held"))
            .execute()
        ) + len(stale)  # not one released meanwhile


def hold_until(config, now: datetime) -> datetime | None:
    """Convenience for writers of non-urgent rows: quiet hours from config plus the stored mute."""
    return quiet_until(now, config.timezone, config.get("core", "quiet_hours"), muted_until())
