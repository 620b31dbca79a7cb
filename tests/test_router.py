"""The cortex's router (issue 21): routine chat goes to the fast role with a small prompt and a few read
tools, and is handed to the deep role when it needs planning; deadline follow-ups that need no judgement
are phrased from a template without a model. Each choice is traced."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from actors.cortex.route import choose_route
from storage import inbox
from storage.models import Approval, ApprovalItem, Inbox, Outbox
from tests.brain import call, context_of, routine_reply, tool_names
from wilson.kernel.messages import InboxReady
from wilson.model.scripted import ScriptedServer
from tests.router_support import cortex, routed, say


def role(request) -> str:
    return request["headers"].get("x-wilson-role")


def size(body: dict) -> int:
    return len(json.dumps({"messages": body["messages"], "tools": body.get("tools")}).encode()) // 4


def answer(body: dict) -> dict:
    routine = routine_reply(body)
    if routine is not None:
        return routine
    names = tool_names(body)  # the tools and the actions of `propose`
    text = context_of(body)["stimulus"]["text"]
    if "escalate" in names and "japan" in text.lower():
        return {"tool_calls": [call("escalate", why="a trip needs a plan")]}
    if "escalate" in names and "dentist" in text.lower():
        return {"tool_calls": [call("create_task", title="Dentist", due="2027-01-20")]}  # not offered here
    if "create_task" in names and "japan" in text.lower():
        return {"tool_calls": [call("create_task", title="Book flights to Japan", due="2027-02-15")]}
    return {"text": "Hello! How can I help?"}


@pytest.fixture
def wilson(make_app):
    with ScriptedServer([{"match": lambda body, headers: True, "reply": answer}]) as server:
        yield make_app(llm=server.base_url, env={"WILSON_LLM_MODEL": "m"}), server


def test_hello_goes_to_the_fast_role_with_the_small_prompt(wilson):
    app, server = wilson
    row = say(app, "hello")
    (request,) = cortex(server)
    assert role(request) == "fast"
    names = {t["function"]["name"] for t in request["body"]["tools"]}
    assert "escalate" in names and "create_task" not in names and "surface" not in names
    assert size(request["body"]) < 1300
    assert routed(row) == ["fast: routine chat"]
    assert Outbox.get(Outbox.trace_id == row.trace_id).text == "Hello! How can I help?"


def test_plan_my_trip_goes_to_the_deep_role_and_is_much_larger_than_hello(wilson):
    app, server = wilson
    say(app, "hello")
    row = say(app, "plan my trip to Japan")
    hello, plan = cortex(server)[:2]
    assert [role(hello), role(plan)] == ["fast", "deep"]
    # the planner's prompt is lean too (one `propose` for every change), so "much larger" is under twice
    assert size(plan["body"]) > 1.8 * size(hello["body"])
    assert routed(row) == ["deep: a request that may need planning"]


def test_a_routine_looking_question_escalates_to_deep_when_the_fast_model_asks(wilson):
    app, server = wilson
    row = say(app, "what about Japan?")
    fast, deep = cortex(server)[:2]
    assert [role(fast), role(deep)] == ["fast", "deep"]
    assert "create_task" in tool_names(deep["body"])
    assert routed(row) == ["deep: a lookup; escalated to deep: a trip needs a plan"]
    assert row.status == "done"


def test_a_fast_run_that_calls_a_tool_it_was_not_offered_proposes_nothing_and_escalates(wilson):
    app, server = wilson
    row = say(app, "what about the dentist?")
    assert [role(r) for r in cortex(server)][:2] == ["fast", "deep"]
    assert routed(row) == ["deep: a lookup; escalated to deep: it called create_task"]
    assert Approval.select().count() == 0, "the deep run, which proposed nothing, decides; the fast call is dropped"


def test_one_note_goes_to_the_fast_role_with_the_tools_of_a_note_and_becomes_a_proposal(wilson):
    app, server = wilson
    row = say(app, "note to self: buy milk")
    (request,) = cortex(server)
    assert role(request) == "fast"
    names = tool_names(request["body"])
    assert {"propose", "create_task", "remind", "escalate"} <= names
    assert not names & {"surface", "decide", "create_topic", "send_email", "request_sync", "list_topics"}
    assert "one note, task or reminder" in request["body"]["messages"][0]["content"]
    assert routed(row) == ["fast: one note, task or reminder"]


def test_a_note_that_needs_the_planner_is_handed_on_and_one_that_does_not_stays_fast(wilson):
    app, server = wilson
    row = say(app, "note to self: Japan")  # the script's fast model asks for the planner about Japan
    assert [role(r) for r in cortex(server)][:2] == ["fast", "deep"]
    assert routed(row) == ["deep: one note, task or reminder; escalated to deep: a trip needs a plan"]
    assert [i.args["title"] for i in ApprovalItem.select()] == ["Book flights to Japan"]

    before = len(cortex(server))
    row = say(app, "remind me about the dentist")  # the script proposes create_task: a note's action, it stands
    assert {role(r) for r in cortex(server)[before:]} == {"fast"}
    assert routed(row) == ["fast: one note, task or reminder"]
    assert [i.args["title"] for i in ApprovalItem.select().order_by(ApprovalItem.id)][1:] == ["Dentist"]


def follow_up(app, window: str) -> Inbox:
    row = inbox.add(
        source="tick",
        kind="deadline",
        origin="background",
        priority=1,
        at=app.clock.now(),
        text="Book flights",
        payload={"title": "Book flights", "window": window, "due": (app.clock.now() + timedelta(days=7)).isoformat()},
    )
    app.supervisor.tell("cortex", InboxReady())
    assert app.wait_idle()
    return Inbox.get_by_id(row.id)


def test_a_deadline_follow_up_is_phrased_from_a_template_without_a_model(wilson):
    app, server = wilson
    row = follow_up(app, "7d")
    assert cortex(server) == []
    assert routed(row) == ["template: deadline follow-up from a template (nothing to judge)"]
    said = [o.text for o in Outbox.select().where(Outbox.trace_id == row.trace_id)]
    assert said and said[0].startswith("Reminder: “Book flights” is due in 7 days")


def test_an_overdue_task_alone_is_phrased_from_its_template_too(wilson):
    # what does need judgement (a pending change, a reply to handle): tests/test_cortex_router.py
    app, server = wilson
    row = follow_up(app, "overdue")
    assert cortex(server) == []
    assert routed(row) == ["template: deadline follow-up from a template (nothing to judge)"]


@pytest.mark.parametrize(
    "text, route",
    [
        ("hello", "fast"),
        ("Thanks!", "template"),
        ("what did I miss?", "template"),
        ("what happened?", "fast"),
        ("good morning", "fast"),
        ("what's on my calendar today?", "fast"),
        ("plan my trip", "deep"),
        # one note, task or reminder goes to the fast role with the tools of a note ...
        ("add milk to my list", "fast"),
        ("remind me to call mum at 5", "fast"),
        ("note to self: buy milk", "fast"),
        ("Remind me tomorrow at 9 to water the plants", "fast"),
        ("put oat milk on my shopping list", "fast"),
        # ... but not a plan, mail, a repeat or a change to what exists, nor a look at what is due
        ("remind me to book the flights", "deep"),
        ("note to self: email the landlord", "deep"),
        ("remind me every day at 8 to take my pills", "deep"),
        ("remind me to pack and then plan the trip", "deep"),
        ("note to self: move the dentist to Friday", "deep"),
        ("remind me what's due this week", "fast"),
        ("note: the dinner with Anna is cancelled", "deep"),
        ("remind me on Mondays to put the bins out", "deep"),
        ("remind me at 9 on weekdays to stretch", "deep"),
        ("remind me to buy milk, call mum and pay the rent", "deep"),
        ("put milk on my shopping list and the bins out", "deep"),
        ("note to self: text Anna happy birthday", "deep"),
        ("note to self: I'm sick today, tell my boss", "deep"),
        ("memo to Sarah: the report is late", "deep"),
        ("remind me at 8am and 8pm to take pills", "deep"),
        ("Note to self - buy milk", "fast"),
        ("Note: any news from the school?", "fast"),
        ("memo: when's the dentist?", "fast"),
        ("hello, please book a table for two at 8", "deep"),
        ("the boiler is making a noise again", "deep"),
        ("when do I pay the car insurance?", "fast"),
        # the user saying how or where they are, and nothing more, is routine (with a phone's apostrophe too) ...
        ("I'm tired today", "fast"),
        ("I\u2019m tired today", "fast"),
        ("heading out, back at 6", "fast"),
        ("just got home", "fast"),
        ("I'm busy this afternoon", "fast"),
        # ... but not when it asks for something, or tells of something to plan
        ("I'm sick, let my boss know I won't be in", "deep"),
        ("I'm going to bed, wake me at 7", "deep"),
        ("I'm busy all day tomorrow, push my meetings", "deep"),
        ("I'm flying to Berlin on Friday", "deep"),
        ("I'm moving house next month", "deep"),
        ("I'm having surgery on the 12th", "deep"),
        ("I'm worried my passport expires in May", "deep"),
    ],
)
def test_the_router_sends_only_routine_chat_to_the_fast_role(text, route):
    row = Inbox(origin="user", kind="message", text=text, payload={})
    assert choose_route(row)[0] == route
