"""The cortex's own tools, always there whatever skills are on: the time, memory, and the decision
tools the cortex interprets itself (`surface`, `request_sync`, `decide`)."""

from __future__ import annotations

from actors.tools.common import BuiltinTool, I, POSITIONS, S, _obj, _text_arg
from storage import engram_access
from wilson.skills import DECISION


class Now(BuiltinTool):
    name = "now"
    description = "The current date and time in the user's timezone."
    parameters = _obj()
    read_only = True

    def execute(self, args, call):
        local = call.now.astimezone(call.tz)
        return {"now": local.isoformat(), "weekday": f"{local:%A}", "timezone": str(call.tz)}


class Recall(BuiltinTool):
    name = "recall"
    description = "Recall long-term memories about a subject."
    parameters = _obj(["query"], query=S)
    read_only = True

    def validate(self, args, call):
        return None  # an empty query recalls what is most relevant now; a wrong one is refused below

    def execute(self, args, call):
        return [
            {"kind": m.kind, "text": m.text} for m in engram_access.recall(_text_arg(args, "query") or "", call.now)
        ]


class Surface(BuiltinTool):
    name = "surface"
    kind = DECISION
    description = (
        "Show a message to the user. The only way a run the user did not start reaches the user; give the reason."
    )
    parameters = _obj(["text", "why"], text=S, why=S, urgent={"type": "boolean"})


class RequestSync(BuiltinTool):
    name = "request_sync"
    kind = DECISION
    description = "Ask for an off-schedule sync of calendar, email and other buffered input."
    parameters = _obj(["reason"], reason=S)


class Decide(BuiltinTool):
    name = "decide"
    kind = DECISION
    user_only = True  # speaks for the user: never offered to a run the user did not start
    description = (
        "Record the user's answer to one of their pending proposals, only when their own "
        "words in this conversation give it: approve or reject (all, or the items listed), or modify with "
        "the change they asked for in `changes`; a yes with a change is approve with `changes`. "
        'For "skip the X one", reject X and approve the rest. The approval gate applies it.'
    )
    parameters = _obj(
        ["proposal", "action"],
        proposal=I,
        action={"type": "string", "enum": ["approve", "reject", "modify"]},
        items=POSITIONS,
        changes=S,
    )


TOOLS = (Recall, Now, Surface, RequestSync, Decide)
