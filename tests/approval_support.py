"""What the approval tests share: a planner that proposes the Japan trip, and the steps of deciding it."""

from __future__ import annotations
from storage.models import Approval, Task, Topic
from tests.brain import call
from tests.cortex_support import say, user_texts


TRIP = "Trip to Japan"


PLAN = [
    call("create_topic", title=TRIP, starts="2027-04-10", ends="2027-04-24"),
    call("create_task", title="Check passport", due="2027-01-20", topic=TRIP),
    call("create_task", title="Book flights", due="2027-02-15", topic=TRIP),
    call("create_task", title="Pack", due="2027-04-08", topic=TRIP),
]


# The same plan without dates: a proposal with no time of its own waits `[approval] expiry_hours` at most (a
# dated one waits until its event starts), so the tests of that wait use it.
UNDATED = [
    call("create_topic", title=TRIP),
    call("create_task", title="Check passport", topic=TRIP),
    call("create_task", title="Book flights", topic=TRIP),
    call("create_task", title="Pack", topic=TRIP),
]


def undated_planner(ctx, body):
    """The planner, with a plan that has no dates."""
    reply = planner(ctx, body)
    return {"tool_calls": UNDATED} if reply.get("tool_calls") == PLAN else reply


def planner(ctx, body):
    """Plans the trip from a message or a calendar event; on `modify` re-proposes what is pending,
    with the user's change to the flights applied."""
    stimulus = ctx["stimulus"]
    if stimulus["kind"] == "modify":
        calls = []
        for item in ctx["proposal"]["items"]:
            args = dict(item["args"])
            if "flights" in args.get("title", "").lower() and "feb 1" in stimulus["text"].lower():
                args["due"] = "2027-02-01"
            calls.append(call(item["tool"], **args))
        return {"tool_calls": calls}
    if "japan" in stimulus["text"].lower():
        return {"tool_calls": PLAN}
    return {"text": "OK." if stimulus["origin"] == "user" else ""}


def propose(app) -> Approval:
    row = say(app, "I'm flying to Japan on 2027-04-10")
    return Approval.get(Approval.inbox_id == row.id)


def decide(app, approval_id: int, action: str, **kw) -> str:
    """Decide and return what the gate answered the user."""
    before = len(app.user_deliveries())
    app.decide(approval_id, action, **kw)
    assert app.wait_idle()
    said = user_texts(app)[before:]
    assert len(said) <= 2, said
    return "\n".join(said)


def created() -> tuple[list[str], list[str]]:
    return ([t.title for t in Topic.select().order_by(Topic.id)], [t.title for t in Task.select().order_by(Task.id)])
