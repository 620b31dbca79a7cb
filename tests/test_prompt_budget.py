"""Prompt size budgets (issue 21): each kind of cortex run is offered a compact tool set and sends a lean,
stable prompt, so the prompts cannot silently grow back. Tokens are counted as bytes/4, as the benchmarks
count them."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from actors import ras, tools, triage
from actors.cortex import prompts
from actors.hippocampus import model
from actors.proposals import make
from storage import inbox
from storage.models import Task, Topic
from tests.brain import context_of, is_cortex, routine_reply, tool_names
from wilson.kernel.messages import InboxReady
from wilson import skills
from wilson.model.scripted import ScriptedServer

# Tokens of the tool schemas each kind of run is offered (the built-in skills and the registered ones; every
# change is an action of one `propose`). A skill that adds a tool meets this ceiling on purpose: raise it
# knowingly, or leave the tool out of a run (actors/tools/__init__.py: BACKGROUND_LEAVES_OUT, FAST_READS,
# NOTING_READS, NOTING_ACTIONS).
TOOL_BUDGET = {"user": 1550, "background": 1000, "noting": 520, "note": 620, "fast": 720, "greeting": 260}
# Tokens of a whole request (tool schemas and messages) for each prompt shape, on a fresh Wilson.
REQUEST_BUDGET = {"hello": 450, "plan": 1600, "email": 1450, "note": 950, "noting": 950}


def tokens(value) -> int:
    return len(json.dumps(value, ensure_ascii=False).encode()) // 4


@pytest.mark.parametrize("run", tools.RUNS)
def test_each_runs_tool_schemas_stay_within_their_budget(run):
    assert tokens(tools.schemas_for(run)) <= TOOL_BUDGET[run]


def test_a_background_run_is_offered_fewer_tools_than_a_users_run_and_fast_fewer_still():
    user, background, fast = (tools.offered(run) for run in ("user", "background", "fast"))
    assert background < user and "decide" not in background
    assert (
        tokens(tools.schemas_for("fast")) < tokens(tools.schemas_for("background")) < tokens(tools.schemas_for("user"))
    )
    # routine chat may read and hand on, never propose a change itself
    box = tools.toolbox()
    assert {box.kind_of(n) for n in fast - {"escalate"}} <= {tools.READ, tools.DECISION}
    assert fast & {"surface", "request_sync"} == set()
    # a greeting or thanks reads nothing: it can hand on, and answer a pending proposal
    assert tools.offered("greeting") == {"escalate", "decide"}
    assert tools.names_in(tools.schemas_for("greeting", deciding=False)) == {"escalate"}


@pytest.fixture
def wilson(make_app):
    def reply(body):
        return routine_reply(body) or {"text": "Sure."}

    with ScriptedServer([{"match": lambda body, headers: True, "reply": reply}]) as server:
        app = make_app(llm=server.base_url, env={"WILSON_LLM_MODEL": "m"})
        yield app, server


def cortex_bodies(server) -> list[dict]:
    return [r["body"] for r in server.requests if is_cortex(r["body"])]


def say(app, text):
    app.say(text)
    assert app.wait_idle(), "Wilson did not settle"


def test_each_prompt_shape_stays_within_its_budget_and_sends_the_stimulus_once(wilson):
    app, server = wilson
    say(app, "hello")
    say(app, "plan my trip to Japan in April, with flights and a hotel")
    say(app, "note to self: buy milk")
    # what the thalamus hands the cortex for a mail that matters: a background inbox row
    inbox.add(
        source="email",
        text="Your invoice 4411 is due on Friday",
        priority=2,
        at=app.clock.now(),
        kind="buffered",
        origin="background",
        payload={"subject": "Invoice 4411"},
    )
    app.supervisor.tell("cortex", InboxReady())
    assert app.wait_idle()
    hello, plan = cortex_bodies(server)[:2]
    note = next(b for b in cortex_bodies(server) if b["messages"][-1]["content"] == "note to self: buy milk")
    email = next(b for b in cortex_bodies(server) if "Invoice 4411" in json.dumps(b))
    for name, body, text in (
        ("hello", hello, "hello"),
        ("plan", plan, "plan my trip to Japan"),
        ("note", note, "note to self"),
        ("email", email, "invoice 4411 is due"),
    ):
        assert tokens(body["messages"]) + tokens(body["tools"]) <= REQUEST_BUDGET[name], name
        said = [m for m in body["messages"] if text in (m.get("content") or "")]
        assert len(said) == 1 and said[0] is body["messages"][-1], f"{name}: the stimulus is sent once, last"
        assert body["messages"][0]["role"] == "system" and body["messages"][1]["content"].startswith("CONTEXT ")
    # the static part leads: each run starts with a fixed system prompt, the planner's, with the rules of the skills
    # whose tools it is offered (nothing waits for the user's answer yet, so it is not told how to take one)
    assert plan["messages"][0]["content"] == prompts.BACKGROUND_PROMPT + skills.prompt(
        app.config, tools.offered("user")
    )
    assert email["messages"][0]["content"] == prompts.BACKGROUND_PROMPT + skills.prompt(
        app.config, tools.offered("background")
    )
    # a skill's rule speaks to the runs offered its tools: only the user's own planning run may forget a memory
    memory_rule = "propose forget_memory"
    assert memory_rule in plan["messages"][0]["content"]
    assert memory_rule not in email["messages"][0]["content"] and memory_rule not in hello["messages"][0]["content"]
    assert "forget_memory" not in json.dumps(email["tools"]) + json.dumps(hello["tools"])


def test_a_mail_that_needs_a_note_sends_the_short_prompt_of_a_note(wilson):
    app, server = wilson
    inbox.add(
        source="email",
        text="Sign the lease renewal by Friday",
        priority=2,
        at=app.clock.now(),
        kind="buffered",
        origin="background",
        payload={"subject": "Lease renewal", "plan": False},
    )
    app.supervisor.tell("cortex", InboxReady())
    assert app.wait_idle()
    [body] = cortex_bodies(server)
    assert body["messages"][0]["content"] == prompts.NOTING_PROMPT + skills.prompt(app.config, tools.offered("noting"))
    assert tokens(body["messages"]) + tokens(body["tools"]) <= REQUEST_BUDGET["noting"]
    assert tokens(prompts.NOTING_PROMPT) < tokens(prompts.BACKGROUND_PROMPT)


def test_sixty_open_tasks_grow_a_prompt_by_less_than_fifteen_percent(wilson):
    app, server = wilson
    now = app.clock.now()
    topic = Topic.create(title="Garden", status="active", created_at=now)
    for i in range(6):
        Task.create(title=f"Garden chore {i}", topic=topic, due=now + timedelta(days=60 + i), created_at=now)
    say(app, "plan my trip to Japan in April")
    for i in range(54):
        Task.create(title=f"Household errand number {i}", due=now + timedelta(days=40 + i), created_at=now)
    say(app, "plan my trip to Japan in April")
    six, sixty = (tokens(b["messages"]) + tokens(b["tools"]) for b in cortex_bodies(server)[:2])
    assert sixty <= 1.15 * six, (six, sixty)
    context = context_of(cortex_bodies(server)[1])
    assert len(context["tasks"]) <= 15, "the rest are a list_tasks call away"


def test_history_is_trimmed_by_tokens_not_turns(wilson):
    app, server = wilson
    say(app, "hello")
    say(app, "here is my packing list: " + "socks, shirts, adapters, " * 400)
    say(app, "what is next?")
    body = cortex_bodies(server)[-1]
    history = body["messages"][2:-1]
    assert tokens([m["content"] for m in history]) <= 1500
    assert [m["content"] for m in history][-1] == "Sure.", "the newest turns are kept"


def test_routine_chat_sees_a_shorter_history_than_the_planner(wilson):
    app, server = wilson
    for day in ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday"):
        say(app, f"my notes for {day}: " + "the boiler, the garden gate, the kitchen tap; " * 12)
    say(app, "good morning")
    say(app, "plan my trip to Japan in April")
    *_, routine, plan = cortex_bodies(server)
    fast_history, deep_history = (tokens([m["content"] for m in body["messages"][2:-1]]) for body in (routine, plan))
    assert fast_history <= 400 < deep_history <= 1500
    assert routine["messages"][-2]["content"] == "Sure.", "the newest lines are the ones kept"


def test_a_pause_of_over_three_hours_ends_the_conversation_a_message_is_sent_with(wilson):
    app, server = wilson
    say(app, "my notes for the morning: the boiler, the garden gate")
    app.advance(timedelta(minutes=50))
    say(app, "and the kitchen tap")
    app.advance(timedelta(hours=3, minutes=10))  # lunch, errands: a new conversation
    say(app, "plan my trip to Japan in April")
    app.advance(timedelta(minutes=20))
    say(app, "with a day in Kyoto")
    said = {b["messages"][-1]["content"]: b for b in cortex_bodies(server)}
    morning, after_pause, same_talk = (
        said[t] for t in ("and the kitchen tap", "plan my trip to Japan in April", "with a day in Kyoto")
    )
    assert [m["content"] for m in morning["messages"][2:-1]] == [
        "my notes for the morning: the boiler, the garden gate",
        "Sure.",
    ], "50 minutes is one conversation"
    assert after_pause["messages"][2:-1] == [], "the morning's lines are not sent again after the pause"
    assert [m["content"] for m in same_talk["messages"][2:-1]] == ["plan my trip to Japan in April", "Sure."]


def test_a_question_wilson_asked_last_is_still_open_after_a_long_pause(make_app):
    def reply(body):
        asked = body["messages"][-1]["content"] == "remind me to call the bank"
        return routine_reply(body) or {"text": "Which day?" if asked else "Sure."}

    with ScriptedServer([{"match": lambda body, headers: True, "reply": reply}]) as server:
        app = make_app(llm=server.base_url, env={"WILSON_LLM_MODEL": "m"})
        say(app, "hello")
        say(app, "remind me to call the bank")
        app.advance(timedelta(hours=4))
        say(app, "Tuesday")
        answer = next(b for b in cortex_bodies(server) if b["messages"][-1]["content"] == "Tuesday")
        assert [m["content"] for m in answer["messages"][2:-1]] == ["remind me to call the bank", "Which day?"]


@pytest.mark.parametrize(
    "text, reads",
    [
        ("hello", False),
        ("thanks!", False),
        ("ok, sounds good", False),
        ("good morning", False),
        ("hi, what's due today?", True),
        ("what's on my calendar today?", True),
        ("good morning, anything new", True),
    ],
)
def test_a_greeting_or_thanks_is_offered_no_read_tool_and_a_question_is(wilson, text, reads):
    app, server = wilson
    say(app, text)
    (body,) = cortex_bodies(server)
    assert ("list_tasks" in tool_names(body)) == reads and "escalate" in tool_names(body)


def test_decide_is_offered_only_while_the_user_has_a_proposal_pending(wilson):
    app, server = wilson
    say(app, "hello")
    say(app, "plan my trip to Japan in April")
    say(app, "what's due this week?")
    say(app, "note to self: buy milk")
    assert all("decide" not in tool_names(body) for body in cortex_bodies(server))
    assert all(
        "`decide`" not in body["messages"][0]["content"]
        for body in cortex_bodies(server)
        if body["messages"][-1]["content"] != "plan my trip to Japan in April"
    ), "a fast run's prompt says nothing of a tool it is not offered"
    owner = app.config.get("core", "owner")
    make.propose_one(
        "create_task",
        {"title": "Pack"},
        owner=owner,
        channel="repl",
        reason="a test's proposal",
        key="test:pending",
        now=app.clock.now(),
        config=app.config,
    )
    say(app, "hello")
    say(app, "plan my trip to Japan in April")
    greeting, plan = cortex_bodies(server)[-2:]
    assert "decide" in tool_names(greeting) and "decide" in tool_names(plan)
    assert "`decide`" in greeting["messages"][0]["content"]
    say(app, "remind me to pack at 5 instead")  # a note may change the proposal waiting: a note's run decides too
    assert "decide" in tool_names(cortex_bodies(server)[-1]) and "remind" in tool_names(cortex_bodies(server)[-1])
    assert "`decide`" in cortex_bodies(server)[-1]["messages"][0]["content"]
    without, with_decide = (tools.schemas_for("user", deciding=d) for d in (False, True))
    assert with_decide[:-1] == without and with_decide[-1]["function"]["name"] == "decide", (
        "offered last, so that the schemas before it are the same prefix either way"
    )


def test_the_budget_shows_money_at_the_configured_prices(make_app):
    from wilson.model.replies import cost, prices, usd

    with ScriptedServer([{"match": lambda body, headers: True, "reply": {"text": "Hi!"}}]) as server:
        app = make_app(llm=server.base_url, env={"WILSON_LLM_MODEL": "m", "WILSON_LLM_PRICE_FAST": "1/0.5/4"})
        say(app, "hello")
        usage = app.synapse.usage_today()["fast"]
        assert prices(app.config)["fast"] == (1.0, 0.5, 4.0)
        expected = cost((1.0, 0.5, 4.0), usage["prompt_tokens"], usage["completion_tokens"])
        assert expected == (usage["prompt_tokens"] + 4 * usage["completion_tokens"]) / 1e6 > 0
        report = app.synapse.budget_report()
        assert f"about {usd(expected)}" in report and usd(expected) != "$0.0000"
        assert "in all at [llm] price_<role>" in report
    assert cost((2.0, 0.5, 8.0), 2_000_000, 0, cached=1_000_000) == 2.5, "cached input at its own price"


def test_the_rule_for_the_users_own_words_is_said_only_while_a_proposal_of_theirs_waits(db):
    from actors.cortex.context import build_messages

    now = datetime(2027, 1, 5, 9, tzinfo=UTC)
    rows = {
        origin: inbox.add(
            source="email" if origin == "background" else "repl",
            at=now,
            text="hello",
            kind="buffered" if origin == "background" else "message",
            origin=origin,
            priority=2 if origin == "background" else 0,
            dedup_key=origin,
        )
        for origin in ("user", "background")
    }
    waiting = {"stimulus": {"kind": "x"}, "pending_proposals": [{"id": 1, "items": []}]}
    user, background = (build_messages(waiting, rows[o], [])[0]["content"] for o in ("user", "background"))
    assert "`decide`" in user and "`decide`" not in background
    assert "UNTRUSTED DATA" in background and tokens(background) < tokens(user)
    # nothing waits for the user's answer: their own run is not told how to give one either
    idle = build_messages({"stimulus": {"kind": "x"}, "pending_proposals": []}, rows["user"], [])[0]["content"]
    assert idle == background


# The organs' fixed part of every request (tool schema, system prompt), in tokens: the RAS scans many times a
# day, triage every sync, consolidation every night. Triage's includes the line and the task of a kept item that
# needs no plan (`say`, `task`): about 35 tokens a sync instead of a second model call per such item.
ORGAN_BUDGET = {"arousal": (75, 100), "triage": (205, 250), "record_memories": (205, 245)}


@pytest.mark.parametrize("organ", sorted(ORGAN_BUDGET))
def test_each_organs_tool_and_system_prompt_stay_within_their_budget(organ):
    tool, system = {
        "arousal": (ras.AROUSAL_TOOL, ras.RAS_PROMPT),
        "triage": (triage.TRIAGE_TOOL, triage.TRIAGE_PROMPT),
        "record_memories": (model.RECORD_TOOL, model.SYSTEM_PROMPT),
    }[organ]
    assert tokens([tool]) <= ORGAN_BUDGET[organ][0] and tokens(system) <= ORGAN_BUDGET[organ][1]
