"""Recall for the cortex, tolerant of an engram that has nothing yet."""

from __future__ import annotations

from datetime import datetime


def recall(query: str, now: datetime, limit: int = 5) -> list:
    from storage import recall as found

    if not query.strip():
        return []
    return list(found.recall(query, limit=limit, at=now))
