"""What the parts of the hippocampus share: the rungs it learns on, and how moments and thumbs are read."""

from __future__ import annotations

import re
from datetime import datetime

from wilson.kernel.clock import as_utc
from wilson.kernel.timeparse import utc_or_none

LEARNED_KINDS = ("interpretation", "belief", "principle")


def _iso(moment: datetime | None) -> str | None:
    return as_utc(moment).isoformat() if moment else None


def _day(moment: datetime | None) -> str | None:
    return as_utc(moment).date().isoformat() if moment else None


def _parse_due(value) -> datetime | None:
    if isinstance(value, datetime):
        return as_utc(value)
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        return utc_or_none(value.strip())
    except ValueError:
        return None


def _thumb(value: str) -> str | None:
    # Skin tones and variation selectors do not change what a thumb means.
    bare = re.sub("[\U0001f3fb-\U0001f3ff\ufe0f]", "", value or "").strip().lower()
    if bare in ("👍", "+1", "thumbs_up", "thumbsup", "like"):
        return "up"
    if bare in ("👎", "-1", "thumbs_down", "thumbsdown", "dislike"):
        return "down"
    return None
