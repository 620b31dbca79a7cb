"""A synapse on the offline rules and its calls, for the offline tests."""

from __future__ import annotations
import json
from datetime import datetime, timezone
import pytest
from storage.db import open_database
from storage.migrations import migrate
from wilson.kernel import config as configmod
from wilson.kernel.clock import SimClock
from wilson.model.synapse import Synapse


START = datetime(2027, 1, 5, 8, 0, tzinfo=timezone.utc)


NOW = "2027-01-05T09:00+01:00"


def tool(name: str) -> dict:
    return {
        "type": "function",
        "function": {"name": name, "description": name, "parameters": {"type": "object", "properties": {}}},
    }


CORTEX_TOOLS = [
    tool(n)
    for n in (
        "list_tasks",
        "create_topic",
        "create_task",
        "update_task",
        "complete_task",
        "close_topic",
        "surface",
        "request_sync",
    )
]


@pytest.fixture
def synapse(tmp_path):
    db = open_database(None, tmp_path)
    migrate()
    synapse = Synapse(configmod.load(tmp_path, environ={}), SimClock(START))
    yield synapse
    synapse.close()
    db.close()


def cortex(
    synapse,
    kind,
    text="",
    payload=None,
    origin="background",
    tasks=(),
    topics=(),
    proposal=None,
    first_contact=False,
    now=NOW,
    extra=(),
    pending=None,
    offered=CORTEX_TOOLS,
):
    context = {
        "now": now,
        "timezone": "Europe/Berlin",
        "first_contact": first_contact,
        "stimulus": {"id": 1, "kind": kind, "origin": origin, "source": "repl", "text": text, "payload": payload or {}},
        "topics": list(topics),
        "tasks": list(tasks),
        "memories": [],
        "proposal": proposal,
    }
    if pending is not None:
        context["pending_proposals"] = pending
    messages = [
        {"role": "system", "content": "You are Wilson."},
        {"role": "user", "content": "CONTEXT " + json.dumps(context, ensure_ascii=False)},
        {"role": "user", "content": text},
        *extra,
    ]
    return synapse.chat("deep", messages, offered, origin=origin, context={"kind": "cortex", **context})


def calls(result) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in result.tool_calls]


def calendar(change, title, start, previous=None, end=None, location=None):
    return {
        "buffers": [
            {
                "channel": "calendar",
                "change": change,
                "uid": "u1",
                "title": title,
                "start": start,
                "end": end,
                "all_day": len(start) == 10,
                "location": location,
                "previous": previous,
            }
        ]
    }
