"""Reading the requests the scripted model server receives, and the organs' plain answers.

Tests script the cortex themselves; triage, the RAS and the hippocampus get the
answers below unless a test says otherwise: every buffered item goes to the
inbox, nothing is urgent, and the hippocampus keeps the candidates it is offered.
"""

from __future__ import annotations

import json


def context_of(body: dict) -> dict:
    """The CONTEXT the cortex sent with a request (empty for the other organs), with the stimulus' text
    put back where scripts read it: the cortex sends that text once, as the last user message."""
    for message in body["messages"]:
        content = message.get("content") or ""
        if message["role"] == "user" and content.startswith("CONTEXT "):
            context = json.loads(content[len("CONTEXT ") :])
            if "text" not in context.get("stimulus", {"text": None}):
                context["stimulus"]["text"] = stimulus_text(body)
            return context
    return {}


def stimulus_text(body: dict) -> str:
    """The last user message, unwrapped when it is others' text in an untrusted block."""
    last = next((m.get("content") or "" for m in reversed(body["messages"]) if m["role"] == "user"), "")
    if last.startswith("<<<UNTRUSTED DATA") and last.endswith("<<<END UNTRUSTED DATA>>>"):
        last = last.split("\n", 1)[1][: -len("\n<<<END UNTRUSTED DATA>>>")]
    return last


def tool_names(body: dict) -> set[str]:
    """The tools a request offers, and the actions of its `propose` tool."""
    from wilson.model.scripted import tool_names as offered

    return set(offered(body))


def is_cortex(body: dict) -> bool:
    """The cortex's requests: the deep role's (`surface` offered) and the fast role's (`escalate` offered)."""
    return bool({"surface", "escalate"} & tool_names(body))


def call(name: str, **arguments) -> dict:
    return {"name": name, "arguments": arguments}


def organ_reply(body: dict) -> dict | None:
    """The answer for a triage, RAS or hippocampus request; None for the cortex."""
    names = tool_names(body)
    last = body["messages"][-1]
    if "triage" in names:
        items = json.loads(last["content"])["items"]
        return {
            "tool_calls": [
                call(
                    "triage",
                    items=[
                        {
                            "buffer_ids": [i["buffer_id"]],
                            "summary": i["text"][:200],
                            "priority": 2,
                            "action": "inbox",
                            "reason": "needs a decision",
                        }
                        for i in items
                    ],
                )
            ]
        }
    if "arousal" in names:
        return {"tool_calls": [call("arousal", urgent=False, reason="nothing urgent", buffer_ids=[])]}
    if "record_memories" in names:
        return {"tool_calls": [call("record_memories", items=json.loads(last["content"])["candidates"])]}
    return None


def routine_reply(body: dict) -> dict | None:
    """An organ's answer, or the cortex's quiet end once its tool results are back; None when the
    cortex is asked to decide (the test's own script answers that)."""
    other = organ_reply(body)
    if other is not None:
        return other
    if body["messages"][-1]["role"] == "tool":
        return {"text": ""}
    return None
