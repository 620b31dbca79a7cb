"""The Synapse against the scripted model server, over real HTTP on 127.0.0.1."""

from __future__ import annotations

import io
import json
import os
import socket
import sys
import threading
from datetime import datetime, timedelta, timezone

import httpx
import pytest
from loguru import logger

from storage.db import open_database
from storage.migrations import migrate
from storage.models import TokenUsage, Trace
from wilson.app.doctor import run_doctor
from wilson.kernel import clock as clockmod
from wilson.kernel import config as configmod
from wilson.kernel.clock import SimClock
from wilson.kernel.logs import setup_logging
from wilson.model.errors import BudgetExhausted, ModelOutputError, ModelUnavailable, SynapseError
from wilson.model.replies import ChatResult, ToolCall
from wilson.model.scripted import ScriptedServer, load_script
from wilson.model import synapse as synapse_module
from wilson.model.synapse import Synapse, make_synapse

START = datetime(2027, 1, 5, 8, 0, tzinfo=timezone.utc)
TASK_TOOL = {
    "type": "function",
    "function": {
        "name": "create_task",
        "description": "Propose a task.",
        "parameters": {
            "type": "object",
            "properties": {"title": {"type": "string"}, "due": {"type": "string"}},
            "required": ["title"],
        },
    },
}
ASK = [{"role": "system", "content": "You are Wilson."}, {"role": "user", "content": "Plan my trip to Japan"}]


@pytest.fixture
def store(db):
    """The working memory the synapse counts tokens in (conftest.py db)."""
    return db


@pytest.fixture
def clock():
    return SimClock(START)


@pytest.fixture
def connect(tmp_path, clock, store):
    """Synapse factory: llm settings as keyword arguments; every synapse is closed afterwards."""
    made = []

    def build(environ=None, backoff_base=0.01, clock_=None, **llm):
        config = configmod.load(tmp_path / "home", environ=environ or {})
        for key, value in llm.items():
            config.set("llm", key, value)
        synapse = Synapse(config, clock_ or clock, backoff_base=backoff_base)
        made.append(synapse)
        return synapse

    yield build
    for synapse in made:
        synapse.close()


@pytest.fixture
def log_lines():
    lines = []
    handler = logger.add(lambda message: lines.append(str(message)), format="{message}", level="DEBUG")
    yield lines
    logger.remove(handler)


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def usage_row(role: str, day: str = "2027-01-05") -> TokenUsage | None:
    return TokenUsage.get_or_none((TokenUsage.day == day) & (TokenUsage.role == role))


# -- the wire -------------------------------------------------------------------


def test_tool_call_round_trip(serve, connect):
    server = serve(
        [
            {"match": {"role": "deep", "last_contains": "task_id"}, "reply": {"text": "Booked it in."}},
            {
                "match": {"role": "deep", "tool": "create_task"},
                "reply": {
                    "tool_calls": [{"name": "create_task", "arguments": {"title": "Book flights", "due": "2027-02-01"}}]
                },
            },
        ]
    )
    synapse = connect(base_url=server.base_url, model="wilson-test")

    first = synapse.chat("deep", ASK, [TASK_TOOL], origin="user")
    assert isinstance(first, ChatResult) and not first.offline
    assert first.model == "wilson-test"
    assert len(first.tool_calls) == 1
    call = first.tool_calls[0]
    assert isinstance(call, ToolCall)
    assert (call.name, call.arguments) == ("create_task", {"title": "Book flights", "due": "2027-02-01"})

    follow_up = ASK + [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                }
            ],
        },
        {"role": "tool", "tool_call_id": call.id, "content": json.dumps({"status": "proposed", "task_id": 7})},
    ]
    second = synapse.chat("deep", follow_up, [TASK_TOOL], origin="user")
    assert second.text == "Booked it in." and second.tool_calls == ()

    sent = server.requests[1]
    assert sent["headers"]["x-wilson-role"] == "deep"
    assert sent["body"]["model"] == "wilson-test"
    assert sent["body"]["tools"] == [TASK_TOOL]
    assert sent["body"]["messages"][-1] == {
        "role": "tool",
        "tool_call_id": call.id,
        "content": json.dumps({"status": "proposed", "task_id": 7}),
    }
    assert sent["body"]["messages"][-2]["tool_calls"][0]["id"] == call.id


def test_json_response_format_is_sent_and_returned(serve, connect):
    server = serve([{"reply": {"text": '```json\n{"urgent": false}\n```'}}])
    synapse = connect(base_url=server.base_url)
    result = synapse.chat("fast", ASK, response_format={"type": "json_object"})
    assert json.loads(result.text) == {"urgent": False}
    assert server.requests[0]["body"]["response_format"] == {"type": "json_object"}


# -- failures -------------------------------------------------------------------


def test_429_waits_for_retry_after_then_succeeds(serve, connect):
    server = serve([{"fault": "429", "retry_after": 1, "times": 1}, {"reply": {"text": "ok"}}])
    synapse = connect(base_url=server.base_url, retries=2)
    began = clockmod.monotonic()
    result = synapse.chat("reflex", ASK)
    waited = clockmod.monotonic() - began
    assert result.text == "ok"
    assert [r["status"] for r in server.requests] == [429, 200]
    assert waited >= 0.95  # the server's Retry-After, not the 0.01 s backoff


def test_retry_after_is_capped(serve, tmp_path, clock, store):
    server = serve([{"fault": "429", "retry_after": 120, "times": 1}, {"reply": {"text": "ok"}}])
    config = configmod.load(tmp_path, environ={"WILSON_LLM_BASE_URL": server.base_url})
    synapse = Synapse(config, clock, backoff_base=0.01, max_backoff=0.2)
    began = clockmod.monotonic()
    assert synapse.chat("reflex", ASK).text == "ok"
    assert clockmod.monotonic() - began < 30  # the cap (0.2 s), not the server's 120 s; slack for a loaded machine
    synapse.close()


@pytest.mark.parametrize("fault", ["500", "502", "malformed_json"])
def test_server_errors_are_retried(serve, connect, fault):
    server = serve([{"fault": fault, "times": 2}, {"reply": {"text": "recovered"}}])
    synapse = connect(base_url=server.base_url, retries=3)
    assert synapse.chat("fast", ASK).text == "recovered"
    assert len(server.requests) == 3


def test_server_errors_beyond_retries_raise_model_unavailable(serve, connect):
    server = serve([{"fault": "500"}])
    synapse = connect(base_url=server.base_url, retries=2)
    with pytest.raises(ModelUnavailable) as raised:
        synapse.chat("fast", ASK, origin="user")
    assert isinstance(raised.value, SynapseError)
    assert "server error 500" in str(raised.value)
    assert len(server.requests) == 3
    assert usage_row("fast") is None  # failed attempts cost nothing


def test_timeout_then_retry_succeeds(serve, connect):
    # The timeout leaves the answering retry a whole second: at 0.3 s a loaded machine made it time out too.
    server = serve([{"fault": "timeout", "sleep_ms": 5000, "times": 1}, {"reply": {"text": "late but here"}}])
    synapse = connect(base_url=server.base_url, timeout=1.0, retries=2)
    assert synapse.chat("deep", ASK).text == "late but here"
    assert len(server.requests) == 2


def test_timeout_every_time_fails_quickly(serve, connect):
    server = serve([{"fault": "timeout", "sleep_ms": 3000}])
    synapse = connect(base_url=server.base_url, timeout=0.25, retries=1)
    began = clockmod.monotonic()
    with pytest.raises(ModelUnavailable, match="no answer within"):
        synapse.chat("deep", ASK, origin="user")
    # two 0.25 s timeouts, not the 2 x 3 s the server holds its answers for (slack for a loaded machine)
    assert clockmod.monotonic() - began < 5
    assert len(server.requests) == 2


def test_unreachable_endpoint_raises_model_unavailable(connect):
    synapse = connect(base_url=closed_port_url(), retries=1)
    with pytest.raises(ModelUnavailable, match="cannot connect"):
        synapse.chat("reflex", ASK, origin="user")


def test_fallback_to_the_next_model(serve, connect):
    server = serve(
        [
            {"match": {"model": "primary"}, "fault": "500"},
            {"match": {"model": "backup"}, "reply": {"text": "from backup"}},
        ]
    )
    synapse = connect(base_url=server.base_url, model="primary", deep_fallback_models="backup", retries=1)
    result = synapse.chat("deep", ASK)
    assert (result.text, result.model) == ("from backup", "backup")
    assert [r["body"]["model"] for r in server.requests] == ["primary", "primary", "backup"]
    # the chain is per role: fast has no fallback configured
    with pytest.raises(ModelUnavailable):
        synapse.chat("fast", ASK, origin="user")


def test_malformed_arguments_get_one_repair_round(serve, connect):
    good = {"tool_calls": [{"name": "create_task", "arguments": {"title": "Book flights"}}]}
    server = serve(
        [
            {"match": {"tool": "create_task"}, "reply": good, "fault": "bad_arguments", "times": 1},
            {"match": {"tool": "create_task"}, "reply": good},
        ]
    )
    synapse = connect(base_url=server.base_url)
    result = synapse.chat("deep", ASK, [TASK_TOOL])
    assert result.tool_calls[0].arguments == {"title": "Book flights"}
    assert len(server.requests) == 2
    repair = server.requests[1]["body"]["messages"]
    assert repair[: len(ASK)] == ASK
    assert "not a valid JSON object" in repair[-1]["content"]
    assert "create_task" in repair[-2]["content"]  # the broken output went back to the model
    assert usage_row("deep").calls == 2  # both round trips are paid for
    assert result.prompt_tokens == sum(r["usage"]["prompt_tokens"] for r in server.requests)


def test_still_malformed_after_repair_raises_model_output_error(serve, connect):
    server = serve(
        [{"reply": {"tool_calls": [{"name": "create_task", "arguments": {"title": "x"}}]}, "fault": "bad_arguments"}]
    )
    synapse = connect(base_url=server.base_url)
    with pytest.raises(ModelOutputError, match="create_task"):
        synapse.chat("deep", ASK, [TASK_TOOL])
    assert len(server.requests) == 2  # exactly one repair, no more


def test_invalid_json_answer_is_repaired_once(serve, connect):
    server = serve([{"reply": {"text": "Sure! urgent: yes"}, "times": 1}, {"reply": {"text": '{"urgent": true}'}}])
    synapse = connect(base_url=server.base_url)
    result = synapse.chat("reflex", ASK, response_format={"type": "json_object"})
    assert json.loads(result.text) == {"urgent": True}
    assert "not valid JSON" in server.requests[1]["body"]["messages"][-1]["content"]

    stubborn = serve([{"reply": {"text": "no json here"}}])
    synapse = connect(base_url=stubborn.base_url)
    with pytest.raises(ModelOutputError):
        synapse.chat("reflex", ASK, response_format={"type": "json_object"})
    assert len(stubborn.requests) == 2


def test_a_response_of_the_wrong_shape_is_a_model_output_error(serve, connect):
    server = serve([{"reply": {"text": "fine"}}])
    original = server.answer

    def odd(body, raw, headers):
        status, _, _ = original(body, raw, headers)  # a JSON body of its own: not the stream it was asked for
        return status, json.dumps({"choices": [{"message": {"tool_calls": "not a list of calls"}}]}).encode(), {}

    server.answer = odd
    synapse = connect(base_url=server.base_url)
    with pytest.raises(ModelOutputError, match="not a chat completion"):
        synapse.chat("deep", ASK, [TASK_TOOL])


# -- accounting and budget ---------------------------------------------------------


def test_accounting_equals_what_the_server_reported(serve, connect):
    server = serve(
        [
            {"match": {"role": "reflex"}, "fault": "500", "times": 1},
            {
                "match": {"role": "deep"},
                "fault": "bad_arguments",
                "times": 1,
                "reply": {"tool_calls": [{"name": "create_task", "arguments": {"title": "a"}}]},
            },
            {
                "match": {"role": "deep"},
                "reply": {"tool_calls": [{"name": "create_task", "arguments": {"title": "a"}}]},
            },
            {"reply": {"text": "fine"}},
        ]
    )
    synapse = connect(base_url=server.base_url)
    synapse.chat("reflex", ASK)
    synapse.chat("fast", ASK, origin="user")
    synapse.chat("fast", ASK + [{"role": "user", "content": "and more " * 40}])
    synapse.chat("deep", ASK, [TASK_TOOL])

    for role in ("reflex", "fast", "deep"):
        billed = [r for r in server.answered() if r["headers"]["x-wilson-role"] == role]
        row = usage_row(role)
        assert row.calls == len(billed)
        assert row.prompt_tokens == sum(r["usage"]["prompt_tokens"] for r in billed)
        assert row.completion_tokens == sum(r["usage"]["completion_tokens"] for r in billed)
    fast_user = [r for r in server.answered() if r["headers"]["x-wilson-role"] == "fast"][0]["usage"]
    assert usage_row("fast").user_tokens == fast_user["prompt_tokens"] + fast_user["completion_tokens"]
    today = synapse.usage_today()
    assert today["deep"]["calls"] == 2 and today["reflex"]["calls"] == 1
    assert "deep" in synapse.budget_report()


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request, tmp_path):
    url = os.environ.get("WILSON_TEST_DATABASE_URL") if request.param == "postgres" else None
    if request.param == "postgres" and not url:
        pytest.skip("WILSON_TEST_DATABASE_URL is not set")
    db = open_database(url, tmp_path)
    if url:
        db.connect(reuse_if_open=True)
        for table in db.get_tables():
            db.execute_sql(f'DROP TABLE IF EXISTS "{table}" CASCADE')
    migrate()
    yield db
    db.close()


def _forty_calls(synapse) -> list:
    """Four threads, ten calls each, all at once."""
    results = []

    def work(n):
        for i in range(10):
            results.append(synapse.chat("fast", [{"role": "user", "content": f"worker {n} call {i}"}]))

    workers = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return results


def test_concurrent_calls_are_counted_exactly(backend, tmp_path, clock, serve):
    server = serve([{"reply": {"text": "ok"}}])
    config = configmod.load(tmp_path, environ={"WILSON_LLM_BASE_URL": server.base_url, "WILSON_LLM_MODEL": "m"})
    synapse = Synapse(config, clock)
    try:
        results = _forty_calls(synapse)
    finally:
        synapse.close()
    row = usage_row("fast")
    assert row.calls == 40 == len(results)
    assert row.prompt_tokens == sum(r.prompt_tokens for r in results)
    assert row.completion_tokens == sum(r.completion_tokens for r in results)
    assert TokenUsage.select().count() == 1


def test_concurrent_offline_calls_spend_no_tokens(backend, tmp_path, clock):
    synapse = Synapse(configmod.load(tmp_path, environ={}), clock)  # offline: no server needed
    assert len(_forty_calls(synapse)) == 40 and TokenUsage.select().count() == 0


def test_usage_is_estimated_when_the_server_sends_none(serve, connect):
    server = serve([{"reply": lambda body: {"text": "x" * 400}}])
    synapse = connect(base_url=server.base_url)
    original = server.answer

    def without_usage(body, raw, headers):
        if body.get("stream"):  # a stream carries the usage only when stream_options asks for it
            return original({k: v for k, v in body.items() if k != "stream_options"}, raw, headers)
        status, payload, extra = original(body, raw, headers)
        data = json.loads(payload)
        data.pop("usage", None)
        return status, json.dumps(data).encode(), extra

    server.answer = without_usage
    result = synapse.chat("fast", ASK)
    assert result.completion_tokens >= 100  # about len/4 of 400 characters
    assert result.prompt_tokens >= len(json.dumps(ASK)) // 4 - 5


def test_budget_pauses_background_but_not_the_user(serve, connect, clock, log_lines):
    server = serve([{"reply": {"text": "ok"}}])
    synapse = connect(base_url=server.base_url, daily_budget=1, user_reserve=400)
    synapse.chat("deep", ASK)  # spends past the budget of 1
    assert synapse.paused("deep") and not synapse.paused("fast")
    for _ in range(3):
        with pytest.raises(BudgetExhausted):
            synapse.chat("deep", ASK)
    paused_lines = [line for line in log_lines if "background reasoning paused: deep budget spent" in line]
    assert len(paused_lines) == 1
    assert len(server.requests) == 1  # refused calls never reach the model

    answered = 0
    with pytest.raises(BudgetExhausted, match="reserve"):
        for _ in range(30):
            synapse.chat("deep", ASK, origin="user")
            answered += 1
    assert answered >= 1
    row = usage_row("deep")
    spent = row.prompt_tokens + row.completion_tokens
    assert spent >= 401
    assert row.user_tokens > 0 and row.calls == 1 + answered
    assert synapse.chat("fast", ASK).text == "ok"  # budgets are per role

    clock.advance(timedelta(days=1))  # a new UTC day from the injected clock
    assert not synapse.paused("deep")
    assert synapse.chat("deep", ASK).text == "ok"
    assert usage_row("deep", "2027-01-06").calls == 1


# -- secrets ---------------------------------------------------------------------


@pytest.fixture
def restore_logging():
    yield
    logger.remove()
    logger.add(sys.stderr, level="INFO")


def test_api_key_reaches_the_server_but_never_the_logs(serve, tmp_path, clock, store, restore_logging):
    key = "sk-live-TOPSECRET-4242"
    server = serve([{"match": {"role": "fast"}, "fault": "500"}, {"reply": {"text": "fine"}}])
    config = configmod.load(
        tmp_path, environ={"WILSON_LLM_BASE_URL": server.base_url, "WILSON_LLM_API_KEY": key, "WILSON_LLM_RETRIES": "1"}
    )
    captured = io.StringIO()
    setup_logging(secrets=config.secrets(), sink=captured, level="DEBUG")
    synapse = Synapse(config, clock, backoff_base=0.01)
    synapse.chat("deep", ASK, trace_id="trace-1")
    with pytest.raises(ModelUnavailable):
        synapse.chat("fast", ASK, trace_id="trace-2", origin="user")
    logger.info("an accidental mention of {} is redacted too", key)
    synapse.close()

    assert server.requests[0]["headers"]["authorization"] == f"Bearer {key}"
    log = captured.getvalue()
    assert "fast model default unavailable" in log and "deep default answered" in log
    assert key not in log
    traces = list(Trace.select())
    assert traces and all(key not in f"{t.reason} {json.dumps(t.data)}" for t in traces)


class RefusingServer(ScriptedServer):
    """A proxy in front of the model that refuses every request with a 401 echoing the key it was sent."""

    def answer(self, body, raw, headers):
        sent = {k.lower(): v for k, v in headers.items()}.get("authorization", "").removeprefix("Bearer ")
        return 401, json.dumps({"error": {"message": f"Incorrect API key provided: {sent}"}}).encode(), {}


def test_a_401_that_echoes_the_key_leaves_it_out_of_the_error(tmp_path, clock, store):
    key = "Kestrel-0ne-Secret"  # not key-shaped: it is masked because it is configured
    server = RefusingServer()
    server.start()
    try:
        config = configmod.load(
            tmp_path,
            environ={"WILSON_LLM_BASE_URL": server.base_url, "WILSON_LLM_API_KEY": key, "WILSON_LLM_RETRIES": "0"},
        )
        synapse = Synapse(config, clock, backoff_base=0.01)
        with pytest.raises(ModelUnavailable) as caught:
            synapse.chat("deep", ASK)
        synapse.close()
    finally:
        server.stop()
    assert "HTTP 401" in str(caught.value) and "Incorrect API key provided: ***" in str(caught.value)
    assert key not in str(caught.value)


def test_credentials_in_the_base_url_stay_out_of_the_error(tmp_path, clock, store):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    config = configmod.load(
        tmp_path,
        environ={"WILSON_LLM_BASE_URL": f"http://ann:Brolga-2218@127.0.0.1:{port}/v1", "WILSON_LLM_RETRIES": "0"},
    )
    synapse = Synapse(config, clock, backoff_base=0.01)
    with pytest.raises(ModelUnavailable) as caught:
        synapse.chat("deep", ASK, origin="user")
    synapse.close()
    assert f"cannot connect to http://***@127.0.0.1:{port}/v1" in str(caught.value)
    assert "Brolga-2218" not in str(caught.value)


def test_role_keys_override_shared_keys(serve, tmp_path, clock, store):
    main, other = serve([{"reply": {"text": "main"}}]), serve([{"reply": {"text": "other"}}])
    environ = {
        "WILSON_LLM_BASE_URL": main.base_url,
        "WILSON_LLM_MODEL": "small",
        "WILSON_LLM_API_KEY": "shared-key",
        "WILSON_LLM_DEEP_MODEL": "big",
        "WILSON_LLM_FAST_BASE_URL": other.base_url,
        "WILSON_LLM_REFLEX_API_KEY": "reflex-key",
    }
    synapse = Synapse(configmod.load(tmp_path, environ=environ), clock, backoff_base=0.01)
    assert synapse.chat("deep", ASK).text == "main"
    assert synapse.chat("fast", ASK).text == "other"
    assert synapse.chat("reflex", ASK).text == "main"
    synapse.close()
    deep, reflex = main.requests
    assert (deep["body"]["model"], deep["headers"]["authorization"]) == ("big", "Bearer shared-key")
    assert (reflex["body"]["model"], reflex["headers"]["authorization"]) == ("small", "Bearer reflex-key")
    assert other.requests[0]["body"]["model"] == "small"
    assert other.requests[0]["headers"]["x-wilson-role"] == "fast"


# -- record and replay -------------------------------------------------------------


def test_record_then_replay_without_a_server(serve, tmp_path, clock, store):
    server = serve(
        [
            {
                "match": {"tool": "create_task"},
                "reply": {"tool_calls": [{"name": "create_task", "arguments": {"title": "Book flights"}}]},
            },
            {"reply": {"text": '{"urgent": true}'}},
        ]
    )
    record = tmp_path / "recorded"
    config = configmod.load(
        tmp_path,
        environ={"WILSON_LLM_BASE_URL": server.base_url, "WILSON_LLM_RECORD": str(record), "WILSON_LLM_MODEL": "m1"},
    )
    live = make_synapse(config, clock, backoff_base=0.01)
    first = live.chat("deep", ASK, [TASK_TOOL])
    second = live.chat("reflex", ASK, response_format={"type": "json_object"})
    live.close()
    server.stop()
    assert len(list(record.glob("*.json"))) == 2

    replay = make_synapse(config, clock, llm=f"replay:{record}")
    with pytest.raises(httpx.ConnectError):  # nothing is listening any more
        httpx.post(config.get("llm", "base_url") + "/chat/completions", json={}, timeout=1)
    # asked in the other order: the request hash finds the right answer
    assert replay.chat("reflex", ASK, response_format={"type": "json_object"}) == second
    assert replay.chat("deep", ASK, [TASK_TOOL]) == first
    with pytest.raises(ModelUnavailable, match="no recorded answer"):
        replay.chat("deep", ASK, [TASK_TOOL])
    assert usage_row("deep").calls == 2  # replayed answers are counted like live ones


def test_replay_falls_back_to_recorded_order(serve, tmp_path, clock, store):
    server = serve([{"reply": {"text": "first"}, "times": 1}, {"reply": {"text": "second"}}])
    record = tmp_path / "rec"
    config = configmod.load(
        tmp_path, environ={"WILSON_LLM_BASE_URL": server.base_url, "WILSON_LLM_RECORD": str(record)}
    )
    live = make_synapse(config, clock)
    live.chat("fast", [{"role": "user", "content": "now is 08:00"}])
    live.chat("fast", [{"role": "user", "content": "now is 08:05"}])
    live.close()
    replay = make_synapse(config, clock, llm=f"replay:{record}")
    assert replay.chat("fast", [{"role": "user", "content": "now is 09:00"}]).text == "first"
    assert replay.chat("fast", [{"role": "user", "content": "now is 09:05"}]).text == "second"


# -- make_synapse ------------------------------------------------------------------


def test_make_synapse_chooses_the_provider(serve, tmp_path, clock, store):
    server = serve([{"reply": {"text": "served"}}])
    empty = configmod.load(tmp_path, environ={})
    assert make_synapse(empty, clock).offline
    configured = configmod.load(tmp_path, environ={"WILSON_LLM_BASE_URL": server.base_url})
    forced = make_synapse(configured, clock, llm="offline")
    assert forced.offline and forced.chat("deep", ASK).offline
    assert server.requests == []

    by_url = make_synapse(empty, clock, llm=server.base_url)
    assert not by_url.offline
    result = by_url.chat("fast", ASK)
    assert (result.text, result.model) == ("served", "default")
    by_url.close()
    with pytest.raises(ValueError):
        make_synapse(empty, clock, llm="carrier-pigeon")


def test_make_synapse_scripted_file_runs_and_stops_a_server(tmp_path, clock, store):
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "latency_ms": 5,
                "rules": [
                    {
                        "match": {"role": "deep", "tool": "create_task"},
                        "reply": {"tool_calls": [{"name": "create_task", "arguments": {"title": "Pack"}}]},
                    }
                ],
            }
        )
    )
    synapse = make_synapse(configmod.load(tmp_path, environ={}), clock, llm=f"scripted:{script}")
    base_url = synapse.endpoints["deep"].base_url
    result = synapse.chat("deep", ASK, [TASK_TOOL])
    assert result.tool_calls[0].arguments == {"title": "Pack"}
    assert synapse.chat("fast", ASK).text == ""  # no rule matched: empty answer
    synapse.close()
    with pytest.raises(httpx.ConnectError):
        httpx.get(base_url + "/models", timeout=1)


# -- the scripted server itself ------------------------------------------------------


def test_scripted_server_rules(serve):
    seen = []
    server = serve(
        [
            {
                "match": lambda body, headers: headers.get("x-wilson-role") == "reflex",
                "reply": lambda body: {"text": f"{len(body['messages'])} messages"},
            },
            {"match": {"system_contains": "triage"}, "reply": {"text": "triaged"}, "times": 1},
            {"match": {"any_contains": "japan"}, "reply": {"text": "japan"}},
        ],
        models=["default", "big"],
    )
    with httpx.Client() as client:
        listing = client.get(server.base_url + "/models").json()
        assert [m["id"] for m in listing["data"]] == ["default", "big"]

        def ask(messages, role="deep"):
            response = client.post(
                server.base_url + "/chat/completions",
                headers={"X-Wilson-Role": role},
                json={"model": "default", "messages": messages},
            )
            seen.append(response.json())
            return response.json()["choices"][0]["message"]["content"]

        system = [{"role": "system", "content": "You triage."}, {"role": "user", "content": "hi"}]
        assert ask(system, role="reflex") == "2 messages"
        assert ask(system) == "triaged"
        assert ask(system) == ""  # `times` used up and nothing else matches
        assert ask(ASK) == "japan"
    assert [r["rule"] for r in server.requests] == [0, 1, None, 2]
    assert all(answer["usage"]["prompt_tokens"] > 0 for answer in seen)


def test_load_script_reads_rules_and_latency(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"latency_ms": 40, "rules": [{"match": {"model": "x"}, "reply": {"text": "y"}}]}))
    with load_script(path) as server:
        began = clockmod.monotonic()
        answer = httpx.post(server.base_url + "/chat/completions", json={"model": "x", "messages": []}).json()
        assert clockmod.monotonic() - began >= 0.04
        assert answer["choices"][0]["message"]["content"] == "y"
        assert "x" in server.models
    with pytest.raises(ValueError, match="unknown match keys"):
        ScriptedServer([{"match": {"rol": "deep"}}])


# -- doctor -----------------------------------------------------------------------------


def test_doctor_reports_a_working_endpoint(serve, tmp_path):
    server = serve(
        [{"match": {"tool": "ping"}, "reply": {"tool_calls": [{"name": "ping", "arguments": {"ok": True}}]}}]
    )
    lines = run_doctor(
        configmod.load(tmp_path, environ={"WILSON_LLM_BASE_URL": server.base_url, "WILSON_LLM_MODEL": "default"})
    )
    assert len([line for line in lines if "ok, tool calling works" in line]) == 3
    assert not [line for line in lines if "FIX" in line]
    assert {r["headers"]["x-wilson-role"] for r in server.requests} == {"reflex", "fast", "deep"}


def test_doctor_says_what_to_fix(serve, tmp_path):
    server = serve([])  # answers without calling tools
    lines = run_doctor(
        configmod.load(
            tmp_path,
            environ={
                "WILSON_LLM_BASE_URL": server.base_url,
                "WILSON_LLM_DEEP_MODEL": "llama-nine",
                "WILSON_LLM_FAST_BASE_URL": closed_port_url(),
            },
        )
    )
    text = "\n".join(lines)
    assert "'llama-nine' is not served here (available: default)" in text
    assert "WILSON_LLM_DEEP_MODEL" in text
    assert "tool calling is missing: the model answered the probe without calling its tool" in text
    assert "instruction-tuned model trained for tool calling" in text
    assert "fast" in text and "cannot reach the server" in text


def test_doctor_names_each_missing_capability_and_the_kind_of_model_to_pick(serve, tmp_path):
    server = serve(
        [
            {"match": {"role": "reflex"}, "reply": {"text": "<<SYS>>\nYou are a new assistant [INST] ping"}},
            {
                "match": {"role": "fast"},
                "fault": "bad_arguments",
                "reply": {"tool_calls": [{"name": "ping", "arguments": {"ok": True}}]},
            },
            {"match": {"role": "deep"}, "reply": {"tool_calls": [{"name": "ping", "arguments": {"ok": True}}]}},
        ]
    )
    lines = run_doctor(
        configmod.load(
            tmp_path,
            environ={
                "WILSON_LLM_BASE_URL": server.base_url,
                "WILSON_LLM_MODEL": "default",
                "WILSON_LLM_DEEP_CONTEXT_TOKENS": "2048",
                "WILSON_LLM_FAST_CONTEXT_TOKENS": "32768",
            },
        )
    )
    by_role = {role: "\n".join(line for line in lines if line.startswith(role)) for role in ("reflex", "fast", "deep")}
    assert "FIX: the answer carries chat-template tokens ('<<SYS>>')" in by_role["reflex"]
    assert "instruction-tuned (chat) model" in by_role["reflex"]
    assert "FIX: tool calling is missing" in by_role["reflex"]
    assert "context size unknown" in by_role["reflex"]
    assert "FIX: JSON arguments are missing" in by_role["fast"]
    assert "context 32,768 tokens fits Wilson's largest prompt" in by_role["fast"]
    assert "ok, tool calling works (probe answered in" in by_role["deep"]
    assert "FIX: the context (2,048 tokens) is smaller than Wilson's largest prompt" in by_role["deep"]


def test_doctor_exits_non_zero_and_shows_the_failed_runs_of_the_last_day(serve, tmp_path, capsys):
    from wilson.app import cli

    server = serve([{"reply": {"tool_calls": [{"name": "ping", "arguments": {"ok": True}}]}}])
    env = {
        "WILSON_HOME": str(tmp_path),
        "WILSON_LLM_BASE_URL": server.base_url,
        "WILSON_LLM_MODEL": "default",
        "WILSON_LLM_CONTEXT_TOKENS": "65536",
    }
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        assert cli.main(["doctor"]) == 0
        TokenUsage.insert(
            day="2027-01-05",
            role="deep",
            runs=10,
            failed=9,
            failure="the background run ended with free text and no tool call",
        ).execute()
        capsys.readouterr()
        assert cli.main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert (
        "model deep: FIX: 9 of 10 runs on 2027-01-05 broke the tool protocol (last: the background run ended "
        "with free text and no tool call); the offline rules handled them."
    ) in out


def test_doctor_offline_explains_how_to_connect(tmp_path):
    lines = run_doctor(configmod.load(tmp_path, environ={}))
    assert len(lines) == 1
    assert "offline" in lines[0] and "WILSON_LLM_BASE_URL" in lines[0] and "--llm" in lines[0]


# -- a model that is down -----------------------------------------------------------

ARROW = {"type": "function", "function": {"name": "arousal", "parameters": {"type": "object", "properties": {}}}}
SCAN = [
    {"role": "system", "content": "scan"},
    {
        "role": "user",
        "content": json.dumps(
            {
                "now": "2027-01-05T09:00+01:00",
                "timezone": "Europe/Berlin",
                "items": [{"buffer_id": 1, "channel": "email", "snippet": "lunch next month?"}],
            }
        ),
    },
]


def test_background_calls_to_a_dead_endpoint_are_answered_by_the_rules_behind_a_breaker(serve, connect, clock):
    down = {"now": True}
    server = serve(
        [
            {"match": lambda body, headers: down["now"], "fault": "500"},
            {"reply": {"tool_calls": [{"name": "arousal", "arguments": {"urgent": False}}]}},
        ]
    )
    synapse = connect(base_url=server.base_url, retries=2)
    first = synapse.chat("reflex", SCAN, [ARROW])
    assert first.offline and first.model == "offline" and first.tool_calls[0].name == "arousal"
    assert len(server.requests) == 3 and synapse.is_down("reflex") and synapse.is_offline("reflex")
    for _ in range(5):  # within the probe interval: no request, no timeout to wait for
        assert synapse.chat("reflex", SCAN, [ARROW]).offline
    assert len(server.requests) == 3
    assert usage_row("reflex") is None, "the rules cost no tokens"

    clock.advance(timedelta(minutes=5))
    assert synapse.chat("reflex", SCAN, [ARROW]).offline
    assert len(server.requests) == 4, "one probe, without retries"
    down["now"] = False
    assert synapse.chat("reflex", SCAN, [ARROW]).offline, "the breaker stays open until the next probe"
    clock.advance(timedelta(minutes=5))
    back = synapse.chat("reflex", SCAN, [ARROW])
    assert not back.offline and back.model == "default" and not synapse.is_down("reflex")
    assert len(server.requests) == 5


@pytest.mark.parametrize("fault", ["429", "malformed_json"])
def test_a_server_that_answers_badly_is_not_down(serve, connect, fault):
    server = serve([{"fault": fault, "retry_after": 0}])
    synapse = connect(base_url=server.base_url, retries=1)
    with pytest.raises(ModelUnavailable) as raised:
        synapse.chat("fast", ASK)
    assert not raised.value.unreachable and not synapse.is_down("fast")


def test_a_refused_request_is_not_papered_over_by_the_rules(tmp_path, clock, store):
    server = RefusingServer()
    server.start()
    try:
        config = configmod.load(tmp_path, environ={"WILSON_LLM_BASE_URL": server.base_url, "WILSON_LLM_RETRIES": "0"})
        synapse = Synapse(config, clock, backoff_base=0.01)
        with pytest.raises(ModelUnavailable, match="HTTP 401"):
            synapse.chat("deep", ASK)
        assert not synapse.is_down("deep")
        synapse.close()
    finally:
        server.stop()


def test_a_spent_budget_stops_background_calls_even_when_the_model_is_down(connect):
    synapse = connect(base_url=closed_port_url(), retries=0, daily_budget=10)
    assert synapse.chat("fast", ASK).offline  # down: the rules answer, and cost nothing
    TokenUsage.create(day="2027-01-05", role="fast", calls=1, prompt_tokens=20, completion_tokens=0, user_tokens=0)
    with pytest.raises(BudgetExhausted):
        synapse.chat("fast", ASK)


def test_a_role_the_rules_answer_rereads_the_budget_a_second_later_not_on_every_call(connect, monkeypatch):
    synapse = connect(daily_budget=10)  # no base_url: the offline rules answer every role
    moment = [1000.0]
    monkeypatch.setattr(clockmod, "monotonic", lambda: moment[0])
    assert synapse.chat("fast", ASK).offline
    # another process, configured with a model for the role, spends its budget
    TokenUsage.create(day="2027-01-05", role="fast", calls=1, prompt_tokens=20, completion_tokens=0, user_tokens=0)
    assert synapse.chat("fast", ASK).offline  # the last read stands for this call
    moment[0] += synapse_module.OFFLINE_SPENT_SECONDS
    with pytest.raises(BudgetExhausted):
        synapse.chat("fast", ASK)
    assert synapse.paused("fast") and not synapse.paused("deep")


def test_a_users_call_to_a_dead_endpoint_gets_the_honest_error(connect):
    synapse = connect(base_url=closed_port_url(), retries=0)
    synapse.chat("deep", ASK)  # a background call opens the breaker
    with pytest.raises(ModelUnavailable, match="cannot connect") as raised:
        synapse.chat("deep", ASK, origin="user")
    assert raised.value.unreachable


def test_a_model_server_that_drips_its_headers_is_given_up_within_the_endpoints_timeout():
    """The timeout bounds the whole answer, not each read: one header line every half second never trips a
    per-read timeout of 2 s, yet the call is over in about 2 s with a reason that says so."""
    import time

    from tests.web_harness import DripSite
    from wilson.model.endpoints import Endpoint
    from wilson.model.errors import Retryable
    from wilson.model.transports import HttpTransport

    with DripSite(every=0.5, lines=60) as drip:
        transport = HttpTransport()
        endpoint = Endpoint(role="deep", base_url=drip.url("/v1"), models=("m",), timeout=2.0)
        started = time.monotonic()
        with pytest.raises(Retryable, match="no answer within 2s in all"):
            transport.send(endpoint, "m", {"model": "m", "messages": [{"role": "user", "content": "hi"}]})
        took = time.monotonic() - started
        transport.close()
    assert took < 2.0 + 3, took  # the drip alone would last 30 s


def test_an_offline_answer_is_traced_with_its_rule_and_only_the_calls_beside_it(connect):
    synapse = connect()  # no base_url: the offline rules answer every role
    said = synapse.chat("deep", ASK, trace_id="words")
    called = synapse.chat("reflex", SCAN, [ARROW], trace_id="calls")
    words = Trace.get(Trace.trace_id == "words")
    calls = Trace.get(Trace.trace_id == "calls")
    assert words.stage == calls.stage == "offline"
    assert words.reason == f"deep: offline rule: {said.rule or 'none'}"
    assert words.data is None  # the reason names the role and the rule: the row does not say them twice
    assert calls.reason == f"reflex: offline rule: {called.rule or 'none'}"
    assert calls.data == {"tool_calls": ["arousal"]}


def test_a_model_transport_not_asked_yet_costs_no_http_client():
    """A Wilson starts without paying for httpx and its certificate store (about 0.2 s of CPU) until its model is
    first asked; a transport closed unasked closes nothing."""
    import subprocess

    probe = (
        "import sys\n"
        "from wilson.model.transports import HttpTransport\n"
        "transport = HttpTransport()\n"
        "print('httpx' in sys.modules)\n"
        "transport.close()\n"
        "transport.client\n"
        "print('httpx' in sys.modules)\n"
    )
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert found.stdout.split() == ["False", "True"], found.stderr
