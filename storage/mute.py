"""The user's mute ("/quiet 3h"): stored as the Setting "quiet_until", read with the quiet hours.

The quiet-hours arithmetic is the kernel's (wilson/kernel/quiet.py); this module keeps the stored half.
"""

from __future__ import annotations

from datetime import datetime

from storage import kv
from storage.db import claim_transaction
from wilson.kernel import timeparse
from wilson.kernel.clock import as_utc
from wilson.kernel.quiet import quiet_until

MUTE_KEY = "quiet_until"


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


def hold_until(config, now: datetime) -> datetime | None:
    """Convenience for writers of non-urgent rows: quiet hours from config plus the stored mute."""
    return quiet_until(now, config.timezone, config.get("core", "quiet_hours"), muted_until())
