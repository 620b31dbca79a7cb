"""Committing a watcher's look, for the watch tests."""

from __future__ import annotations
from storage import routing


def commit(now):
    def one(text, key, payload):
        return routing.commit_buffered(channel="web", text=text, dedup_key=key, payload=payload, at=now)

    return one
