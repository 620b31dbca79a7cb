"""An MCP server as a receptor: what `watch` names of it (a resource's URI, or a read tool called with no
arguments) is read on its cadence (`watch_minutes`), and a change becomes one buffered stimulus that the RAS
scans and the thalamus triages like a new mail.

The first look only takes a baseline: what was there before Wilson watched is not news. A change is its new
text (the server's words: untrusted, capped) and is buffered in the same transaction that records what was
seen, so a kill between the two can neither lose the change nor buffer it twice; a look that finds the same
text again buffers nothing. Only a read may be watched: a tool that would change something is never polled.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta

from channels.mcp.servers import Spec, capped, defanged
from storage import kv, routing
from storage.db import database

CHANGE_LIMIT = 4000  # characters of a changed text that are buffered


@dataclass(frozen=True)
class Change:
    text: str
    dedup_key: str
    payload: dict


def is_resource(target: str) -> bool:
    return "://" in target


def state_key(server: str, target: str) -> str:
    return f"mcp:watch:{server} {target}"


def due(state: dict | None, now: datetime) -> bool:
    return not state or not state.get("next_at") or datetime.fromisoformat(state["next_at"]) <= now


def seen(spec: Spec, target: str, text: str, state: dict | None, now: datetime) -> tuple[Change | None, dict]:
    """What a look that read `text` comes to: a change to buffer (None for a first look or the same text again)
    and the state to keep."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    after = {
        "hash": digest,
        "next_at": (now + timedelta(minutes=spec.watch_minutes)).isoformat(),
        "seen_at": now.isoformat(),
    }
    before = (state or {}).get("hash")
    if before is None or before == digest:
        return None, after
    what = f"“{target}”" if is_resource(target) else f"what its tool {target} answers"
    change = Change(
        text=f"The MCP server {spec.name} changed {what}; it now reads:\n{defanged(capped(text, CHANGE_LIMIT))}",
        dedup_key=f"mcp:{spec.name}:{target}:{before[:16]}>{digest[:16]}",
        payload={"server": spec.name, "watched": target, "title": f"{spec.name}: {target}"},
    )
    return change, after


def failed(spec: Spec, state: dict | None, reason: str, now: datetime) -> dict:
    """A look that could not read: tried again at the next cadence; what was seen before is kept."""
    return {
        **(state or {}),
        "next_at": (now + timedelta(minutes=spec.watch_minutes)).isoformat(),
        "error": capped(reason, 300),
    }


def record(spec: Spec, target: str, change: Change | None, state: dict, now: datetime):
    """The new state and the change's buffer row, in one transaction; the row, or None."""
    with database.atomic():
        row = None
        if change is not None:
            row = routing.commit_buffered(
                channel="mcp", text=change.text, dedup_key=change.dedup_key, payload=change.payload, at=now
            )
        kv.put_cursor(state_key(spec.name, target), state, now)
    return row
