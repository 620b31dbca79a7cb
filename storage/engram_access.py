"""Recall for the cortex, tolerant of an engram that has nothing yet."""

from __future__ import annotations

from datetime import datetime

from storage import recall as found


def recall(query: str, now: datetime, limit: int = 5) -> list:
    if not query.strip():
        return []
    return list(found.recall(query, limit=limit, at=now))
