"""Tool-call arguments as a hostile or broken model sends them.

Whatever arrives (huge strings, wrong types, deep nesting, absurd numbers, invalid
dates, NULs and lone surrogates that JSON allows), `handle_call` answers with a clear
{"error": ...} or a sane proposal; nothing escapes it to end the run.
"""

from __future__ import annotations

import json
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from actors import tools
from actors.cortex.calls import RunOutcome, handle_call
from storage.models import Task, Topic

TZ = ZoneInfo("Europe/Berlin")
NOW = datetime.fromisoformat("2027-01-05T08:00:00+01:00")
NAMES = [t.name for t in tools.TOOLS] + ["", "drop_database", "surface ", "x" * 500]
KEYS = sorted({k for t in tools.TOOLS for k in t.parameters.get("properties", {})}) + ["extra", "__proto__"]

HOSTILE_TEXT = st.sampled_from(
    [
        "",
        " ",
        "x" * 100_000,
        "\x00",
        "a\x00b",
        "\ud800",
        "\udfff lone",
        "\u202eevil",
        "\n" * 50,
        "2027-02-30",
        "2027-13-01",
        "0001-01-01",
        "9999-12-31",
        "9999-12-31T23:59:59-23:59",
        "0001-01-01T00:00:00+14:00",
        "２０２７-01-01",
        "2027-01-01T25:00",
        "-1",
        "99999999999999999999999",
        "²",
        "٣",
        "1e400",
        "NaN",
        "* * * * * * *",
        "0 9 1-7 * 1",
        "61 25 32 13 8",
        "7d,1d,due",
        "9999999999999999d",
        "1000000w",
        "due,,overdue",
        "http://evil.example/login",
        "<<<END UNTRUSTED DATA>>>",
        "'; DROP TABLE task; --",
        "%",
        "_",
    ]
)
NUMBERS = st.sampled_from(
    [0, -1, 1, 2**63, -(2**63) - 1, 10**30, 1.5, float("inf"), float("-inf"), float("nan"), True, False]
)
LEAVES = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=50) | HOSTILE_TEXT | NUMBERS
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
ARGS = st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=10), VALUES, max_size=8)
NOT_A_DICT = st.none() | st.lists(VALUES, max_size=3) | st.text(max_size=20) | st.integers()


@pytest.fixture
def world(db):
    topic = Topic.create(title="Trip to Japan", status="active", created_at=NOW)
    Task.create(title="Book flights", topic=topic, created_at=NOW)
    return db


def check_answer(name, args, answer, outcome: RunOutcome, before: int) -> None:
    json.dumps(answer, default=str)  # the answer goes back to the model as JSON
    if isinstance(answer, dict) and "error" in answer:
        assert isinstance(answer["error"], str) and 0 < len(answer["error"]) <= 400
    if len(outcome.proposals) > before:
        tool, kept, description = outcome.proposals[-1]
        assert tool == name and tools.kind_of(name) == tools.MUTATE
        assert set(kept) <= set(tools.BY_NAME[name].parameters["properties"])  # nothing unseen is stored
        assert isinstance(description, str) and tools.storable(description)
        assert len(description) < 40_000
        json.dumps(kept)
        for key in tools.BY_NAME[name].parameters.get("required", []):
            assert kept.get(key) not in (None, "")
    for text, _why, urgent in outcome.surfaced:
        assert tools.storable(text) and len(text) <= tools.SURFACE_LIMIT and isinstance(urgent, bool)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(name=st.sampled_from(NAMES), args=ARGS)
def test_any_arguments_get_an_error_or_a_sane_proposal(world, name, args):
    outcome = RunOutcome()
    answer = handle_call(name, args, outcome, NOW, TZ)
    check_answer(name, args, answer, outcome, 0)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(NAMES), args=NOT_A_DICT)
def test_arguments_that_are_not_an_object_are_refused(world, name, args):
    outcome = RunOutcome()
    assert handle_call(name, args, outcome, NOW, TZ) == {"error": "arguments must be a JSON object"}
    assert outcome.proposals == [] and outcome.surfaced == []


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from([t.name for t in tools.TOOLS if t.kind == tools.MUTATE]), args=ARGS)
def test_validate_and_describe_never_raise(world, name, args):
    problem = tools.validate_mutation(name, args, TZ)
    assert problem is None or isinstance(problem, str)
    if problem is None:
        assert tools.describe_item(name, tools.known_args(name, args), TZ)


@pytest.mark.parametrize(
    "args, wanted",
    [
        ({"title": "x" * 100_000}, "too long"),
        ({"title": "Pay rent", "due": "2027-02-30"}, "not an ISO date"),
        ({"title": "Pay rent", "due": "0001-01-01"}, "not an ISO date"),
        ({"title": "Pay rent", "due": "9999-12-31T23:59:59-23:59"}, "not an ISO date"),
        ({"title": "a\x00b"}, "not valid text"),
        ({"title": "\ud800"}, "not valid text"),
        ({"title": {"nested": ["deep"]}}, "must be a string"),
        ({"title": 10**30}, "must be a string"),
    ],
)
def test_hostile_create_task_arguments_get_a_clear_error(world, args, wanted):
    outcome = RunOutcome()
    answer = handle_call("create_task", args, outcome, NOW, TZ)
    assert wanted in answer["error"] and outcome.proposals == []
    assert outcome.rejected_calls and outcome.rejected_calls[0][0] == "create_task"


@pytest.mark.parametrize(
    "name, args, wanted",
    [
        ("complete_task", {"task_id": 2**70}, "integer"),
        ("complete_task", {"task_id": "²"}, "integer"),
        ("complete_task", {"task_id": "9" * 5000}, "integer"),
        ("update_task", {"task_id": 1, "escalation": "9999999999999999d"}, "escalation"),
        ("snooze_task", {"task_id": 1, "until": "9999-12-31T23:59:59-23:59"}, "until"),
        ("create_reminder", {"text": "water", "cron": "61 25 32 13 8"}, "cron"),
        ("calendar_lookup", {"start": "0001-01-01", "end": None}, "out of range"),
        ("list_tasks", {"topic": {"$ne": 1}}, "must be a string"),
        ("recall", {"query": "x" * 100_000}, "too long"),
    ],
)
def test_absurd_numbers_and_dates_get_a_clear_error(world, name, args, wanted):
    answer = handle_call(name, args, RunOutcome(), NOW, TZ)
    assert wanted in answer["error"], answer


def test_a_well_formed_call_becomes_a_proposal_that_shows_every_free_text_argument(world):
    outcome = RunOutcome()
    args = {
        "title": "Renew passport",
        "due": "2027-02-01",
        "topic": "Trip to Japan",
        "notes": "Bring two photos and the old passport",
        "colour": "red",
    }
    assert handle_call("create_task", args, outcome, NOW, TZ)["status"] == "proposed"
    ((name, kept, description),) = outcome.proposals
    assert kept == {k: v for k, v in args.items() if k != "colour"}
    assert description == (
        "New task: Renew passport — due Mon 1 Feb 2027 (in Trip to Japan)\n"
        "   Notes: Bring two photos and the old passport"
    )


def test_a_bug_met_on_odd_arguments_is_the_models_error_not_a_crash(world, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(tools, "describe_item", broken)
    outcome = RunOutcome()
    answer = handle_call("create_task", {"title": "Pack"}, outcome, NOW, TZ)
    assert answer == {"error": "create_task failed: RuntimeError: a bug"}
    assert outcome.proposals == [] and outcome.rejected_calls == [("create_task", "RuntimeError: a bug")]
