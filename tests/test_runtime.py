"""The runtime under ordinary timing: slow models, restarts and idle accounting.

Each test runs a whole Wilson against the scripted model server over HTTP, with the
watchdog on where the test is about it.
"""

from __future__ import annotations

import threading

import pytest

from actors.cortex.actor import CortexActor
from storage import decisions
from storage.models import Approval, DecisionRow, Inbox, Outbox, Task
from tests.approval_support import PLAN, planner, propose
from tests.cortex_support import cortex_requests, model
from tests.poll import wait_for
from wilson.app.application import IdleTimeout
from wilson.kernel.messages import DecisionRecorded, InboxReady
from wilson.model.scripted import ScriptedServer
from wilson.kernel.supervisor import ActorSpec


def proposals_shown(app) -> list[int]:
    return [d["approval"]["id"] for d in app.user_deliveries() if d.get("approval")]


def stop_actor(app, name: str):
    """Stop one actor the way a crash would leave it: gone, with nothing restarting it yet."""
    ref = app.supervisor.ref(name)
    app.supervisor.take_down(name)
    assert not ref.is_alive()
    return ref


def restart_actor(app, name: str) -> None:
    old = app.supervisor.ref(name)
    app.supervisor.crashed(name, RuntimeError("stopped by the test"))
    assert wait_for(lambda: app.supervisor.ref(name) is not old and app.supervisor.ref(name).is_alive())


# A slow model is not a hung actor -----------------------------------------------------------------
def test_a_model_call_longer_than_two_watchdog_rounds_with_the_default_budgets_runs_once(make_app):
    """The watchdog looks every second here (10 s by default) and the call takes 2.5 s, so it is judged at least
    twice while it waits, as a 16-second call is once with the defaults; the budgets and leases are the defaults:
    one cortex, one proposal, one deep call."""
    server = ScriptedServer(
        [{"match": lambda body, headers: True, "latency_ms": 2_500, "reply": model(planner)[0]["reply"]}]
    )
    server.start()
    try:
        app = make_app(
            llm=server.base_url, env={"WILSON_LLM_MODEL": "m", "WILSON_SUPERVISOR_WATCHDOG_SECONDS": "1"}, watchdog=True
        )
        assert app.supervisor.watchdog_seconds == 1
        row = app.say("I'm flying to Japan on 2027-04-10")
        assert app.wait_idle(timeout=90)
        assert Inbox.get_by_id(row.id).status == "done"
        assert app.supervisor.health["cortex-realtime"].restarts == 0
        assert app.supervisor.health["cortex-realtime"].state == "running"
        assert Approval.select().count() == 1
        assert len(cortex_requests(server)) == 1
        assert proposals_shown(app) == [Approval.get().id]
    finally:
        server.stop()


class HangOnceCortex(CortexActor):
    """A cortex whose first run hangs without a sign of progress (a deadlock, a read with no timeout)."""

    release = threading.Event()
    hung = threading.Event()

    def handler_budget(self, message) -> float:
        return 0.3

    def run(self, row):
        if not HangOnceCortex.hung.is_set():
            HangOnceCortex.hung.set()
            HangOnceCortex.release.wait(30)
        super().run(row)


def test_a_really_hung_run_is_replaced_and_its_row_run_once_more(make_app):
    server = ScriptedServer(model(planner))
    server.start()
    try:
        app = make_app(
            llm=server.base_url,
            watchdog=True,
            env={"WILSON_LLM_MODEL": "m", "WILSON_SUPERVISOR_WATCHDOG_SECONDS": "0.1"},
        )
        really_hung(app)
    finally:
        server.stop()


def really_hung(app) -> None:
    app.supervisor.specs = [
        ActorSpec(s.name, HangOnceCortex, s.kwargs) if s.name == "cortex-realtime" else s for s in app.supervisor.specs
    ]
    restart_actor(app, "cortex-realtime")
    hung = app.supervisor.ref("cortex-realtime")

    row = app.say("I'm flying to Japan on 2027-04-10")
    assert HangOnceCortex.hung.wait(10)
    assert wait_for(lambda: Inbox.get_by_id(row.id).status == "done", timeout=20)
    assert app.supervisor.ref("cortex-realtime") is not hung
    HangOnceCortex.release.set()  # the old run wakes up and tries to record its outcome
    assert wait_for(lambda: not hung.is_alive(), timeout=10)
    assert app.wait_idle()
    assert Inbox.get_by_id(row.id).attempts == 1  # the hang counted once
    assert Approval.select().count() == 1
    assert len(proposals_shown(app)) == 1


# Proposals and decisions survive a gate that is down -----------------------------------------------
def test_a_proposal_committed_while_the_gate_is_down_is_shown_once_it_is_back(scripted):
    app, server = scripted(planner)
    stop_actor(app, "approval")
    row = app.say("I'm flying to Japan on 2027-04-10")
    assert wait_for(lambda: Inbox.get_by_id(row.id).status == "done", timeout=30)
    with pytest.raises(IdleTimeout, match="still busy after 0.5s"):  # a proposal nobody has shown is work to do
        app.wait_idle(timeout=0.5)
    approval = Approval.get(Approval.inbox_id == row.id)
    assert proposals_shown(app) == [] and approval.presented_at is None

    restart_actor(app, "approval")
    assert app.wait_idle()
    assert proposals_shown(app) == [approval.id]

    restart_actor(app, "approval")  # a second restart must not show it again
    assert app.wait_idle()
    assert proposals_shown(app) == [approval.id]


def test_a_press_made_while_the_gate_restarts_is_applied_once(scripted):
    app, server = scripted(planner)
    approval = propose(app)
    assert app.wait_idle()
    stop_actor(app, "approval")
    app.decide(approval.id, "approve")  # the row is written; the nudge finds nobody
    app.decide(approval.id, "approve")  # the user presses again, impatient
    assert DecisionRow.select().where(DecisionRow.status == "pending").count() == 2

    restart_actor(app, "approval")
    assert app.wait_idle()
    assert decisions.pending() == []
    assert Task.select().count() == len([c for c in PLAN if c["name"] == "create_task"])
    answers = [d["text"] for d in app.user_deliveries() if not d.get("approval")]
    assert sum(a.startswith("Done:") for a in answers) == 1
    assert sum("Already done" in a for a in answers) == 1

    # a stale nudge for an applied decision does nothing
    before = Outbox.select().count()
    app.supervisor.tell("approval", DecisionRecorded(DecisionRow.select().first().id))
    assert app.wait_idle()
    assert Outbox.select().count() == before


def test_huge_numbers_in_a_decision_get_an_answer_and_the_gate_lives(scripted):
    app, server = scripted(planner)
    gate = app.supervisor.ref("approval")
    app.decide(2**63 - 1, "approve")
    app.decide(1, "approve", items=(10**30,))
    assert app.wait_idle()
    assert app.supervisor.ref("approval") is gate and gate.is_alive()
    answers = [d["text"] for d in app.user_deliveries()]
    assert answers[0] == f"I don't know proposal {2**63 - 1}."
    assert answers[1] == "I don't know proposal 1."


# Idle accounting ---------------------------------------------------------------------------------------
def test_nothing_is_in_flight_when_idle_after_start_advance_and_a_cortex_restart(scripted):
    from datetime import timedelta

    app, server = scripted(planner)
    assert app.wait_idle()
    assert app.supervisor.in_flight() == 0
    app.advance(timedelta(days=2))
    assert app.supervisor.in_flight() == 0
    for _ in range(3):
        restart_actor(app, "cortex")
        assert app.wait_idle()
        assert app.supervisor.in_flight() == 0
    app.supervisor.tell("cortex", InboxReady())
    assert app.wait_idle()
    assert app.supervisor.in_flight() == 0


def test_a_decision_that_breaks_the_gate_is_answered_and_the_gate_lives(scripted):
    app, server = scripted(planner)
    approval = propose(app)
    gate = app.supervisor.ref("approval")
    # a stored decision the gate cannot apply (item numbers that are no numbers, say from an older version)
    broken = decisions.record(
        approval_id=approval.id, action="approve", user_id="owner", channel="repl", at=app.clock.now()
    )
    DecisionRow.update(items={"flights": 1}).where(DecisionRow.id == broken.id).execute()
    app.supervisor.tell("approval", DecisionRecorded(broken.id))
    assert app.wait_idle()
    assert app.supervisor.ref("approval") is gate and gate.is_alive()
    assert DecisionRow.get_by_id(broken.id).status == "applied"
    assert app.user_deliveries()[-1]["text"].startswith("Sorry, something went wrong on my side with your answer")
    assert Approval.get_by_id(approval.id).status == "pending"  # nothing changed

    app.decide(approval.id, "approve")  # and the next decision is applied as usual
    assert app.wait_idle()
    assert app.user_deliveries()[-1]["text"].startswith("Done:")
