"""What Wilson believes about the user, as the user checks it: a read of the engram.

The hippocampus learns these rows and the memory skill retires them; listing them is only a
read, so the dashboard's Memory page, Telegram's /memory and the list_memories tool all take it
from here, without reaching into the hippocampus."""

from __future__ import annotations

from datetime import datetime

from storage import engram
from wilson.kernel.clock import as_utc


def memory_list(at: datetime | None = None, limit: int = 40) -> list[dict]:
    """What Wilson believes, for the user to check: principles, beliefs and interpretations with their
    id (for `forget N`), since when, strength and provenance."""
    order = {"principle": 0, "belief": 1, "interpretation": 2}
    rows = [m for kind in order for m in engram.live(kind, at)]
    return [{"id": m.id, "kind": m.kind, "text": m.text,
             "since": as_utc(m.created_at).date().isoformat() if m.created_at else None,
             "strength": m.strength, "provenance": m.provenance} for m in rows[:limit]]
