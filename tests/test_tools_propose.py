"""One `propose` tool for every change (issue 21): a run is offered its read tools and one compact
`propose`, whose changes each go the way the mutation tool called on its own would (its own validate and
describe, one proposal the user approves, executed by the gate only). The mutation tools' own names are
still accepted when a model (or a script) calls them directly."""

from __future__ import annotations

import json

from actors import tools
from storage.models import Approval, ApprovalItem, Task, Topic
from tests.brain import call
from tests.cortex_support import background, say, stages, tool_results
from tests.offline_rules_support import calendar, calls as offline_calls, cortex as offline_cortex, synapse  # noqa: F401

TRIP = "Trip to Japan"


def tokens(value) -> int:
    return len(json.dumps(value, ensure_ascii=False).encode()) // 4


def propose_of(run: str) -> dict:
    (schema,) = [s for s in tools.schemas_for(run) if s["function"]["name"] == tools.PROPOSE]
    return schema


def test_every_change_a_user_may_ask_for_is_an_action_of_one_much_smaller_propose():
    box = tools.toolbox()
    mutations = [t for t in box.order if t.kind == tools.MUTATE and not box.why_not(t) and not t.undo_only]
    user = tools.schemas_for("user")
    assert not {s["function"]["name"] for s in user} & {t.name for t in mutations}, "no mutation schema of its own"
    assert {t.name for t in mutations} <= tools.offered("user")
    # each action keeps its arguments, required ones plain and optional ones marked
    description = propose_of("user")["function"]["description"]
    assert "create_task(title, due?, topic?, notes?, escalation?): topic by its title" in description.splitlines()
    assert tokens(propose_of("user")) * 2.5 < sum(tokens(t.schema()) for t in mutations)


def test_a_background_propose_offers_fewer_actions_and_nothing_only_the_user_may_start():
    background_actions = tools.offered("background") - {s["function"]["name"] for s in tools.schemas_for("background")}
    user_actions = tools.offered("user") - {s["function"]["name"] for s in tools.schemas_for("user")}
    box = tools.toolbox()
    assert background_actions < user_actions
    assert not [name for name in background_actions if box.get(name).user_only]
    assert "cancel_task" not in background_actions and "create_task" in background_actions


def test_one_propose_with_a_topic_and_its_tasks_is_one_proposal_the_gate_executes(scripted):
    def decide(ctx, body):
        if "japan" in ctx["stimulus"]["text"].lower():
            return {
                "tool_calls": [
                    call(
                        tools.PROPOSE,
                        changes=[
                            {"action": "create_topic", "title": TRIP, "starts": "2027-04-10"},
                            {
                                "action": "create_task",
                                "args": {"title": "Book flights", "due": "2027-02-15", "topic": TRIP},
                            },
                        ],
                    )
                ]
            }
        return {"text": "OK."}

    app, server = scripted(decide)
    row = say(app, "I'm flying to Japan on 2027-04-10")
    approval = Approval.get(Approval.inbox_id == row.id)
    items = list(approval.items.order_by(ApprovalItem.position))
    assert [(i.tool, i.args) for i in items] == [
        ("create_topic", {"title": TRIP, "starts": "2027-04-10"}),
        ("create_task", {"title": "Book flights", "due": "2027-02-15", "topic": TRIP}),
    ]
    assert items[1].description == "New task: Book flights — due Mon 15 Feb 2027 (in Trip to Japan)"
    (answer,) = tool_results(server)
    assert answer["status"] == "proposed" and [c["action"] for c in answer["changes"]] == [
        "create_topic",
        "create_task",
    ]
    assert Task.select().count() == 0 and Topic.select().count() == 0, "nothing changes before the approval"
    app.decide(approval.id, "approve")
    assert app.wait_idle()
    assert [(t.title, t.topic.title) for t in Task.select()] == [("Book flights", TRIP)]


def test_a_refused_change_is_named_and_the_others_are_still_proposed(scripted):
    def decide(ctx, body):
        if "japan" in ctx["stimulus"]["text"].lower():
            return {
                "tool_calls": [
                    call(
                        tools.PROPOSE,
                        changes=[
                            {"action": "create_task", "title": "Book flights", "due": "2027-13-45"},
                            {"action": "list_tasks"},
                            {"action": "create_task", "title": "Pack"},
                            {"title": "no action"},
                        ],
                    )
                ]
            }
        return {"text": "OK."}

    app, server = scripted(decide)
    row = say(app, "Japan: flights and packing")
    (answer,) = tool_results(server)
    assert answer["error"] == "3 of 4 change(s) refused; the others are proposed"
    assert [("error" in c, c["action"]) for c in answer["changes"]] == [
        (True, "create_task"),
        (True, "list_tasks"),
        (False, "create_task"),
        (True, "None"),
    ]
    assert "due is not an ISO date" in answer["changes"][0]["error"]
    assert "list_tasks is not an action of propose" in answer["changes"][1]["error"]
    (item,) = Approval.get(Approval.inbox_id == row.id).items
    assert (item.tool, item.args) == ("create_task", {"title": "Pack"})
    refused = [reason for stage, reason in stages(row.trace_id) if stage == "refused"]
    assert len(refused) == 3 and all(r.startswith(("create_task:", "propose:")) for r in refused)


def test_a_background_run_cannot_propose_what_only_the_user_may_start(scripted):
    def decide(ctx, body):
        if ctx["stimulus"]["origin"] != "user":
            return {"tool_calls": [call(tools.PROPOSE, changes=[{"action": "forget_memory", "memory": 1}])]}
        return {"text": "OK."}

    app, server = scripted(decide)
    row = background(app, "Please forget that I like trains")
    (answer,) = tool_results(server)
    assert answer["error"] == "every change was refused, so nothing is proposed"
    assert "only for a request the user made" in answer["changes"][0]["error"]
    assert Approval.select().count() == 0
    assert any(stage == "refused" for stage, _ in stages(row.trace_id))


def test_a_propose_that_cannot_be_read_at_all_is_refused_in_one_line(scripted):
    def decide(ctx, body):
        if "japan" in ctx["stimulus"]["text"].lower():
            return {
                "tool_calls": [
                    call(tools.PROPOSE, changes="create a task"),
                    call(tools.PROPOSE, changes=[{"action": "create_task", "title": "x"}] * 21),
                ]
            }
        return {"text": "OK."}

    app, server = scripted(decide)
    say(app, "Japan please")
    assert [a["error"] for a in tool_results(server)] == [
        'propose needs `changes`: a list of {"action": NAME, ...its arguments}',
        "at most 20 changes in one propose call, got 21",
    ]
    assert Approval.select().count() == 0


def test_a_mutation_called_by_its_own_name_is_still_a_proposal(scripted):
    app, server = scripted(
        lambda ctx, body: (
            {"tool_calls": [call("create_task", title="Pack")]} if ctx["stimulus"]["origin"] == "user" else {"text": ""}
        )
    )
    row = say(app, "remind me to pack")
    approval = Approval.get(Approval.inbox_id == row.id)
    (item,) = approval.items
    assert (item.tool, item.args) == ("create_task", {"title": "Pack"})
    assert Task.select().count() == 0, "nothing changes before the approval"
    app.decide(approval.id, "approve")
    assert app.wait_idle()
    assert [t.title for t in Task.select()] == ["Pack"]


def test_the_offline_rules_answer_with_one_propose_holding_what_they_would_call_one_by_one(synapse):
    event = calendar("new", TRIP, "2027-04-10", end="2027-04-24", location="Tokyo")
    direct = offline_calls(offline_cortex(synapse, "event", f"New calendar event: {TRIP}", event))
    folded = offline_calls(
        offline_cortex(synapse, "event", f"New calendar event: {TRIP}", event, offered=tools.schemas_for("background"))
    )
    mutations = [(name, args) for name, args in direct if tools.kind_of(name) == tools.MUTATE]
    assert len(mutations) > 3, "the rules plan the trip"
    assert folded == [(tools.PROPOSE, {"changes": [{"action": name, **args} for name, args in mutations]})]
