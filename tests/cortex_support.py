"""What the cortex tests and the tests built on them share: the scripted model's rules for a cortex run, what the model was asked and told, and the steps of a conversation."""

from __future__ import annotations

import json


from storage import inbox
from storage.models import Inbox, Trace
from tests.brain import context_of, is_cortex, organ_reply
from wilson.kernel.messages import InboxReady
from wilson.model.scripted import ScriptedServer

START = "2027-01-05T08:00:00+01:00"  # a Tuesday morning in Berlin


# The scripted model --------------------------------------------------------------------
def model(decide, after=None) -> list[dict]:
    """Rules for a ScriptedServer: `decide(context, body)` answers a cortex run's first round;
    `after(body)` answers once the tool results are back (default: end quietly)."""

    def reply(body):
        other = organ_reply(body)
        if other is not None:
            return other
        if body["messages"][-1]["role"] == "tool":
            return after(body) if after else {"text": ""}
        return decide(context_of(body), body)

    return [{"match": lambda body, headers: True, "reply": reply}]


def cortex_requests(server: ScriptedServer) -> list[dict]:
    """First-round cortex requests (one per run), in order."""
    return [r["body"] for r in server.requests if is_cortex(r["body"]) and r["body"]["messages"][-1]["role"] != "tool"]


def tool_results(server: ScriptedServer) -> list[dict]:
    """What the cortex answered to the model's tool calls, across all requests."""
    seen, out = set(), []
    for r in server.requests:
        for message in r["body"]["messages"]:
            if message["role"] == "tool" and message["tool_call_id"] not in seen:
                seen.add(message["tool_call_id"])
                out.append(json.loads(message["content"]))
    return out


def say(app, text: str) -> Inbox:
    row = app.say(text)
    assert app.wait_idle(), "Wilson did not settle"
    return Inbox.get_by_id(row.id)


def background(
    app, text: str, *, source: str = "email", priority: int = 2, kind: str = "buffered", payload: dict | None = None
) -> Inbox:
    """What the thalamus hands the cortex for buffered input: a background inbox row."""
    row = inbox.add(
        source=source,
        text=text,
        priority=priority,
        at=app.clock.now(),
        kind=kind,
        origin="background",
        payload=payload or {},
    )
    app.supervisor.tell("cortex", InboxReady())
    assert app.wait_idle(), "Wilson did not settle"
    return Inbox.get_by_id(row.id)


def stages(trace_id: str) -> list[tuple[str, str]]:
    return [(t.stage, t.reason) for t in Trace.select().where(Trace.trace_id == trace_id).order_by(Trace.id)]


def user_texts(app) -> list[str]:
    return [d["text"] for d in app.user_deliveries()]
