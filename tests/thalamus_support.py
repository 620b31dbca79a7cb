"""What the thalamus tests and the tests of the organs around it share: the scripted brain (triage, arousal, cortex), what it was asked, and moments of a simulated January."""

from __future__ import annotations
import json
from datetime import datetime
from storage import buffers
from storage.models import Inbox, ReceptorBuffer
from tests.brain import context_of
from wilson.model.scripted import tool_names


START = "2027-01-05T08:00:00+01:00"


NO_RETRIES = {"WILSON_LLM_RETRIES": "0"}


# The scripted model: it reads what it is asked and answers deterministically -----------------
def offers(name):
    return lambda body, headers: name in tool_names(body)


def role_is(role):
    return lambda body, headers: headers.get("x-wilson-role") == role


def request_items(body: dict) -> list[dict]:
    return json.loads(body["messages"][-1]["content"])["items"]


def call(name: str, **arguments) -> dict:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def triage_item(item: dict) -> dict:
    text = item["text"]
    if "newsletter" in text.lower():
        return {
            "buffer_ids": [item["buffer_id"]],
            "summary": "newsletter",
            "priority": 3,
            "action": "drop",
            "reason": "newsletter nobody asked for",
        }
    priority = 1 if "URGENT" in text else 3 if text.startswith("FYI") else 2
    return {
        "buffer_ids": [item["buffer_id"]],
        "summary": text.splitlines()[0][:80],
        "priority": priority,
        "action": "inbox",
        "reason": "worth a look",
    }


def triage_reply(body: dict) -> dict:
    """Kept items in `items`; dropped ones in `drop`, ids only, grouped by reason (as the prompt asks)."""
    decided = [triage_item(i) for i in request_items(body)]
    drops: dict[str, list[int]] = {}
    for item in decided:
        if item["action"] == "drop":
            drops.setdefault(item["reason"], []).extend(item["buffer_ids"])
    return call(
        "triage",
        items=[{k: v for k, v in d.items() if k != "action"} for d in decided if d["action"] != "drop"],
        drop=[{"buffer_ids": ids, "reason": reason} for reason, ids in drops.items()],
    )


def arousal_reply(body: dict) -> dict:
    urgent = [i["buffer_id"] for i in request_items(body) if "URGENT" in i["snippet"]]
    return call("arousal", buffer_ids=urgent, **({"reason": "urgent mail"} if urgent else {}))


def deep_reply(body: dict) -> dict:
    last = body["messages"][-1]
    if last["role"] == "tool" or context_of(body).get("stimulus", {}).get("origin") != "user":
        return {"text": ""}  # a background run with nothing to surface says nothing
    return {"text": "OK."}


TRIAGE = {"match": offers("triage"), "reply": triage_reply}


AROUSAL = {"match": offers("arousal"), "reply": arousal_reply}


DEEP = {"match": role_is("deep"), "reply": deep_reply}


def brain(*first):
    """Rules: the test's own first, then the default triage, arousal and cortex behaviour."""
    return [*first, TRIAGE, AROUSAL, DEEP]


def requests_of(server, role: str) -> list[dict]:
    return [r for r in list(server.requests) if r["headers"].get("x-wilson-role") == role]


def triage_requests(server) -> list[dict]:
    return [r for r in list(server.requests) if "triage" in tool_names(r["body"])]


def ids_asked(entry: dict) -> list[int]:
    return [i["buffer_id"] for i in request_items(entry["body"])]


def at(app, day: int, hour: int, minute: int = 0) -> datetime:
    """A local moment in January 2027."""
    return datetime(2027, 1, day, hour, minute, tzinfo=app.config.timezone)


def advance_to(app, moment: datetime) -> None:
    app.advance(moment - app.clock.now())


def where_rows_went(ids) -> dict[int, list[str]]:
    """For each buffer id, every inbox row that carries it and whether it was dropped."""
    found: dict[int, list[str]] = {i: [] for i in ids}
    for row in Inbox.select().where(Inbox.origin == "background"):
        payload = row.payload or {}
        carried = [b["buffer_id"] for b in payload.get("buffers") or []]
        carried += [i for item in payload.get("items") or [] for i in item["buffer_ids"]]
        for i in carried:
            if i in found:
                found[i].append(f"inbox {row.id}")
    for row in ReceptorBuffer.select().where(ReceptorBuffer.id.in_(list(ids)) & (ReceptorBuffer.outcome == "drop")):
        found[row.id].append("drop")
    return found


def assert_each_once(ids) -> None:
    assert not buffers.unprocessed()
    places = where_rows_went(ids)
    assert all(len(p) == 1 for p in places.values()), {i: p for i, p in places.items() if len(p) != 1}
