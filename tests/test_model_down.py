"""A model that stops answering: background work goes on by the offline rules, the user hears of it once.

Real actors on SQLite with a simulated clock; the scripted model server answers over real HTTP
and is switched to "500" (or "timeout") for as long as a test wants the model down.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from loguru import logger

from actors.cortex.prompts import MODEL_DOWN
from storage import trace
from storage.models import Approval, ApprovalItem, Inbox, Outbox, Setting
from tests.cortex_support import say, user_texts
from tests.thalamus_support import NO_RETRIES, START, advance_to, at, brain, requests_of  # noqa: F401
from wilson.model.synapse import BACK_NOTICE, DOWN_KEY, DOWN_NOTICE, FALLBACK_REASON

JAPAN = {
    "channel": "calendar",
    "change": "new",
    "uid": "japan-1",
    "title": "Trip to Japan",
    "start": "2027-04-10",
    "end": "2027-04-24",
    "all_day": True,
    "location": "Tokyo",
    "previous": None,
}


def switchable(fault: str = "500", **extra):
    """A rule that fails every request while `state["down"]` is true, then the usual answers."""
    state = {"down": True}
    rule = {"match": lambda body, headers: state["down"], "fault": fault, **extra}
    return state, brain(rule)


@pytest.fixture
def log_records():
    """Records from the moment `listen()` is called (after the app set its logging up)."""
    records, sinks = [], []

    def listen():
        sinks.append(logger.add(lambda message: records.append(message.record), level="DEBUG"))
        return records

    yield listen
    for sink in sinks:
        try:
            logger.remove(sink)
        except ValueError:
            pass  # a restarted app set its logging up again


def warnings_from_synapse(records) -> list[str]:
    return [r["message"] for r in records if r["level"].name == "WARNING" and r["name"] == "wilson.model.synapse"]


def told(app, text: str) -> int:
    return user_texts(app).count(text)


@pytest.mark.parametrize("fault", ["500", "timeout"])
def test_with_the_model_down_a_calendar_event_gets_its_proposal_from_the_offline_rules(make_app, serve, fault):
    _, rules = switchable(fault, sleep_ms=2000)
    server = serve(rules)
    app = make_app(start=START, llm=server.base_url, env={**NO_RETRIES, "WILSON_LLM_TIMEOUT": "0.3"})
    row = app.inject_buffered("calendar", "New calendar event: Trip to Japan, 10–24 April 2027", JAPAN)
    app.sync()
    assert app.wait_idle()

    (proposal,) = Approval.select()
    tools = [item.tool for item in proposal.items.order_by(ApprovalItem.position)]
    assert tools[0] == "create_topic" and "create_task" in tools
    path = trace.path(proposal.trace_id)
    stages = [t.stage for t in path]
    assert proposal.trace_id == row.trace_id, "the event's own path"
    fallbacks = [t for t in path if t.stage == "fallback"]
    assert len(fallbacks) == 1 and FALLBACK_REASON in fallbacks[0].reason, [(t.actor, t.reason) for t in path]
    assert stages.index("fallback") < stages.index("proposed")
    # each role met the dead endpoint once; afterwards the breaker answers without a request
    assert len(requests_of(server, "fast")) == 1 and len(requests_of(server, "deep")) == 1


def test_one_notice_over_a_day_down_and_one_when_the_model_is_back(make_app, serve, log_records, tmp_path):
    listen = log_records
    state, rules = switchable("500")
    server = serve(rules)
    home = tmp_path / "home"
    app = make_app(start=START, llm=server.base_url, env=NO_RETRIES, home=home)
    log_records = listen()
    scans = 0
    for hour in range(24):  # a day of RAS scans, each with something new to look at
        app.inject_buffered(
            "email", f"Email {hour}: notes from the team, have a look", {"from": f"c{hour}@example.com"}
        )
        app.advance(timedelta(hours=1))
        scans += 1
    reflex_calls = len(requests_of(server, "reflex"))
    assert 0 < reflex_calls <= scans, "a dead endpoint is asked at most once per probe, never once per retry"
    assert told(app, DOWN_NOTICE) == 1 and told(app, BACK_NOTICE) == 0
    assert len(warnings_from_synapse(log_records)) == 1, warnings_from_synapse(log_records)
    assert not [r for r in log_records if r["level"].name == "WARNING" and "postponed" in r["message"]]
    assert Setting.get(Setting.key == DOWN_KEY).value["roles"]

    # a restart while the model is still down does not tell the user again
    moment = app.clock.now()
    app.stop()
    app = make_app(start=moment.isoformat(), llm=server.base_url, env=NO_RETRIES, home=home)
    log_records = listen()
    app.inject_buffered("email", "Email after the restart: minutes attached", {"from": "c@example.com"})
    app.advance(timedelta(hours=1))
    assert Outbox.select().where(Outbox.text == DOWN_NOTICE).count() == 1

    state["down"] = False
    app.inject_buffered("email", "Email: the model is back, is it?", {"from": "d@example.com"})
    app.advance(timedelta(minutes=30))
    app.inject_buffered("email", "Email: and another one", {"from": "e@example.com"})
    app.advance(timedelta(hours=3))
    assert told(app, BACK_NOTICE) == 1
    assert Outbox.select().where(Outbox.text == BACK_NOTICE).count() == 1
    assert Outbox.select().where(Outbox.text == DOWN_NOTICE).count() == 1
    assert Setting.get_or_none(Setting.key == DOWN_KEY) is None
    assert [r for r in log_records if r["level"].name == "INFO" and "answers again" in r["message"]]


def test_the_notice_waits_for_the_end_of_quiet_hours(make_app, serve):
    _, rules = switchable("500")
    server = serve(rules)
    app = make_app(start=START, llm=server.base_url, env=NO_RETRIES)
    advance_to(app, at(app, 5, 23, 10))
    app.inject_buffered("email", "Email: late-night notes", {"from": "night@example.com"})
    advance_to(app, at(app, 5, 23, 50))
    (notice,) = Outbox.select().where(Outbox.text == DOWN_NOTICE)
    assert notice.status == "held" and told(app, DOWN_NOTICE) == 0
    advance_to(app, at(app, 6, 7, 5))
    assert told(app, DOWN_NOTICE) == 1
    delivered = [d for d in app.user_deliveries() if d["text"] == DOWN_NOTICE]
    assert delivered and Outbox.get_by_id(notice.id).delivered_at >= at(app, 6, 7, 0)


def test_user_messages_while_down_get_the_honest_answer(make_app, serve):
    state, rules = switchable("500")
    server = serve(rules)
    app = make_app(start=START, llm=server.base_url, env={"WILSON_LLM_RETRIES": "2"})
    row = say(app, "Can you plan my week?")
    assert row.status == "kept"
    assert user_texts(app) == [MODEL_DOWN]
    asked = len(requests_of(server, "deep"))
    assert asked == 3, "the first call is retried as always"
    assert not [t for t in trace.path(row.trace_id) if t.stage == "fallback"], "a user's run is never the rules'"

    app.advance(timedelta(minutes=1))
    again = say(app, "Hello?")
    assert again.status == "kept" and user_texts(app)[-1] == MODEL_DOWN
    # while down, one attempt each and no retries: the kept message first (order), then this one
    assert len(requests_of(server, "deep")) == asked + 2
    assert DOWN_NOTICE not in user_texts(app), "the user heard it already, in the reply"

    state["down"] = False
    back = say(app, "And now?")
    assert back.status == "done" and user_texts(app)[-3:] == ["OK."] * 3  # the kept two first, then this one
    assert [Inbox.get_by_id(r.id).status for r in (row, again)] == ["done", "done"]


def test_six_messages_kept_during_an_outage_are_answered_in_order_once_within_one_retry_interval(make_app, serve):
    """Nobody writes after the model comes back: the kept messages are still answered, oldest first, each
    once, at the next try (inbox.KEPT_RETRY after the last one failed), and "I'll keep" was said once each."""
    from storage.inbox import KEPT_RETRY
    from tests.thalamus_support import brain as answers

    state = {"down": True}

    def echo(body):
        import re

        asked = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
        return {"text": "Answer to " + re.findall(r"\[(m\d+)\]", asked)[-1]}

    server = serve(
        answers(
            {"match": lambda body, headers: state["down"], "fault": "500"},
            {"match": lambda body, headers: True, "reply": echo},
        )
    )
    app = make_app(start=START, llm=server.base_url, env=NO_RETRIES)
    rows = []
    for n in range(1, 7):
        rows.append(say(app, f"[m{n}] question number {n}"))
        app.advance(timedelta(minutes=1))
    assert [Inbox.get_by_id(r.id).status for r in rows] == ["kept"] * 6
    assert user_texts(app) == [MODEL_DOWN] * 6
    state["down"] = False
    app.advance(KEPT_RETRY)
    answered = [t for t in user_texts(app) if t.startswith("Answer to")]
    assert answered == [f"Answer to m{n}" for n in range(1, 7)]
    assert [Inbox.get_by_id(r.id).status for r in rows] == ["done"] * 6
    app.advance(timedelta(hours=1))
    assert user_texts(app).count(MODEL_DOWN) == 6 and len(user_texts(app)) == 12  # nothing twice
