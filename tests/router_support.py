"""What the routing tests share: a cortex on the offline rules, and how a message was routed."""

from __future__ import annotations
from storage.models import Inbox, Trace
from tests.brain import is_cortex


def say(app, text: str) -> Inbox:
    row = app.say(text)
    assert app.wait_idle(), "Wilson did not settle"
    return Inbox.get_by_id(row.id)


def routed(row: Inbox) -> list[str]:
    return [
        t.reason
        for t in Trace.select().where(
            (Trace.trace_id == row.trace_id) & (Trace.stage == "routed") & (Trace.actor == "cortex")
        )
    ]


def cortex(server) -> list[dict]:
    return [r for r in server.requests if is_cortex(r["body"])]
