"""The approval gate: nothing changes until the right person approves, and then exactly once.

Proposals come from the cortex talking to the scripted model server over HTTP;
decisions go through `Wilson.decide` (or a raw `Decision`, for button presses
carrying a nonce), the way the REPL and Telegram send them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from datetime import date, timedelta
from pathlib import Path

import pytest

from actors.proposals.decide import approve, reject
from actors.proposals.rules import NoLongerOpen
from storage.models import Approval, ApprovalItem, Feedback, Inbox, Task, Topic, Trace
from tests.brain import tool_names
from tests.calendar_support import add_event
from tests.brain import call, context_of, is_cortex
from tests.cortex_support import model, say, stages, user_texts
from wilson.kernel.messages import ApprovalSettled, Decision
from tests.approval_support import PLAN, TRIP, created, decide, planner, propose, undated_planner

ROOT = Path(__file__).resolve().parent.parent


def press(app, approval_id: int, nonce: str, action: str = "approve", user_id: str = "owner") -> str:
    """A button press as a channel sends it: with the nonce from the rendered proposal."""
    before = len(app.user_deliveries())
    app.supervisor.tell(
        "approval", Decision(approval_id=approval_id, action=action, user_id=user_id, channel="repl", nonce=nonce)
    )
    assert app.wait_idle()
    return "\n".join(user_texts(app)[before:])


def spy_settled(app) -> list[int]:
    """Approval ids the gate reported settled to channels (what lets Telegram edit the proposal in place)."""
    seen: list[int] = []
    tell = app.supervisor.tell

    def spy(name, message):
        if isinstance(message, ApprovalSettled):
            seen.append(message.approval_id)
        return tell(name, message)

    app.supervisor.tell = spy
    return seen


def item_statuses(approval_id: int) -> list[str]:
    return [
        i.status
        for i in ApprovalItem.select().where(ApprovalItem.approval == approval_id).order_by(ApprovalItem.position)
    ]


# A background run proposes; nothing happens until the user says so ------------------------------
def test_calendar_driven_proposal_creates_nothing_until_approved(scripted):
    app, server = scripted(planner)
    add_event(app.calendar_file(), TRIP, date(2027, 4, 10), date(2027, 4, 24), "Tokyo", tz=app.config.timezone)
    app.advance(timedelta(days=1))  # the morning sync routes the new event to the cortex

    approval = Approval.get()
    run = Inbox.get_by_id(approval.inbox_id)
    assert (run.origin, run.source, run.kind) == ("background", "calendar", "event")
    assert [i.tool for i in approval.items.order_by(ApprovalItem.position)] == [c["name"] for c in PLAN]
    [shown] = app.user_deliveries()  # told in full inside the morning briefing
    assert shown["proposals"] == [approval.id] and f"Proposal {approval.id}:" in shown["text"]
    assert created() == ([], [])

    app.advance(timedelta(days=1))  # time alone approves nothing
    assert created() == ([], []) and Approval.get_by_id(approval.id).status == "pending"

    answer = decide(app, approval.id, "approve")
    assert answer.startswith("Done:") and "Book flights" in answer
    assert created() == ([TRIP], ["Check passport", "Book flights", "Pack"])
    assert all(t.topic.title == TRIP for t in Task.select())
    assert Approval.get_by_id(approval.id).status == "approved"
    assert "approved" in [s for s, _ in stages(approval.trace_id)]


def test_approve_twice_executes_once(scripted):
    app, server = scripted(planner)
    approval = propose(app)

    # two presses queued back to back, before either is handled
    app.decide(approval.id, "approve")
    app.decide(approval.id, "approve")
    assert app.wait_idle()
    assert created() == ([TRIP], ["Check passport", "Book flights", "Pack"])
    answers = user_texts(app)[-2:]
    assert answers[0].startswith("Done:")
    assert answers[1].startswith("Already done") and str(approval.id) in answers[1]

    again = decide(app, approval.id, "approve")
    assert again.startswith("Already done")
    assert created() == ([TRIP], ["Check passport", "Book flights", "Pack"])
    assert item_statuses(approval.id) == ["executed"] * 4


def test_modify_supersedes_and_only_the_modified_task_is_created(scripted):
    app, server = scripted(planner)
    original = propose(app)

    assert decide(app, original.id, "modify", text="book flights by Feb 1") != ""
    replacement = Approval.get(Approval.supersedes == original.id)
    old = Approval.get_by_id(original.id)
    assert (old.status, old.superseded_by) == ("superseded", replacement.id)
    assert item_statuses(original.id) == ["superseded"] * 4
    # the model saw the pending items it was asked to change
    modify_ctx = [r for r in server.requests if '"kind": "modify"' in r["body"]["messages"][1]["content"]]
    assert modify_ctx and "Book flights" in modify_ctx[0]["body"]["messages"][1]["content"]
    flights = [i for i in replacement.items if i.args["title"] == "Book flights"]
    assert [i.args["due"] for i in flights] == ["2027-02-01"]
    assert Feedback.get(Feedback.approval_id == original.id).kind == "modified"

    refused = decide(app, original.id, "approve")
    assert "replaced by proposal" in refused and str(replacement.id) in refused
    assert created() == ([], [])

    assert decide(app, replacement.id, "approve").startswith("Done:")
    tz = app.config.timezone
    dues = {t.title: t.due.astimezone(tz).date() for t in Task.select()}
    assert dues == {"Check passport": date(2027, 1, 20), "Book flights": date(2027, 2, 1), "Pack": date(2027, 4, 8)}
    assert Task.select().where(Task.title == "Book flights").count() == 1


def test_a_modification_that_becomes_no_proposal_leaves_the_original_standing(scripted):
    def muddled(ctx, body):
        if ctx["stimulus"]["kind"] == "modify":
            return {"text": "I'm not sure what to change."}
        return planner(ctx, body)

    app, server = scripted(muddled)
    original = propose(app)
    assert [d["approval"]["id"] for d in app.user_deliveries() if d["approval"]] == [original.id]

    answer = decide(app, original.id, "modify", text="make it nicer")
    assert "not sure what to change" in answer and f"Proposal {original.id} stands as it was" in answer
    assert Approval.get_by_id(original.id).status == "pending"
    assert Approval.select().count() == 1
    # shown again with its buttons, so the user still has something to press
    assert [d["approval"]["id"] for d in app.user_deliveries() if d["approval"]] == [original.id, original.id]
    assert decide(app, original.id, "approve").startswith("Done:")
    assert len(created()[1]) == 3


def test_a_proposal_decided_while_its_modification_is_thought_about_is_not_done_twice(scripted):
    thinking = threading.Event()

    def modifying(body, headers):
        if (
            is_cortex(body)
            and body["messages"][-1]["role"] != "tool"
            and context_of(body)["stimulus"]["kind"] == "modify"
        ):
            thinking.set()
            return True
        return False

    slow_modify = {"match": modifying, "reply": model(planner)[0]["reply"], "latency_ms": 500}
    app, server = scripted(planner, rules=[slow_modify])
    original = propose(app)

    app.decide(original.id, "modify", text="book flights by Feb 1")
    assert thinking.wait(10)
    app.decide(original.id, "approve")  # a second press on the old message, before the new one exists
    assert app.wait_idle()
    assert Approval.get_by_id(original.id).status == "approved"
    assert f"Proposal {original.id} was already approved before I finished changing it" in "\n".join(user_texts(app))
    for replacement in Approval.select().where(Approval.id != original.id):
        decide(app, replacement.id, "approve")
    assert Task.select().where(Task.title == "Book flights").count() == 1
    assert Topic.select().count() == 1


@pytest.mark.parametrize("action", ["approve", "reject"])
def test_a_decision_on_a_proposal_replaced_after_the_check_changes_nothing(scripted, action):
    app, server = scripted(planner)
    original = propose(app)
    seen = Approval.get_by_id(original.id)  # what the gate read before the cortex committed a replacement
    Approval.update(status="superseded", superseded_by=original.id + 1).where(Approval.id == original.id).execute()

    with pytest.raises(NoLongerOpen):
        if action == "approve":
            approve(seen, (), app.clock.now(), app.config.timezone, lambda task, now: None)
        else:
            reject(seen, (), app.clock.now())
    assert Approval.get_by_id(original.id).status == "superseded"
    assert item_statuses(original.id) == ["pending"] * 4
    assert created() == ([], [])
    assert Feedback.select().count() == 0


def test_reject_creates_nothing_and_is_recorded(scripted):
    app, server = scripted(planner)
    approval = propose(app)

    answer = decide(app, approval.id, "reject")
    assert answer.startswith("Rejected, nothing changed")
    assert created() == ([], [])
    assert Approval.get_by_id(approval.id).status == "rejected"
    assert item_statuses(approval.id) == ["rejected"] * 4
    feedback = Feedback.get(Feedback.approval_id == approval.id)
    assert (feedback.kind, feedback.value) == ("rejected", "1,2,3,4")
    assert any(stage == "rejected" and "reject by owner" in reason for stage, reason in stages(approval.trace_id))

    assert decide(app, approval.id, "approve").startswith("Already done")  # rejected stays rejected
    assert created() == ([], [])


def test_item_by_item_only_the_approved_exist(scripted):
    app, server = scripted(planner)
    approval = propose(app)

    first = decide(app, approval.id, "approve", items=(1, 3))
    assert "Still waiting" in first
    assert Approval.get_by_id(approval.id).status == "partial"
    assert decide(app, approval.id, "reject", items=(4,)).startswith("Rejected")
    assert created() == ([TRIP], ["Book flights"])
    assert Task.get(Task.title == "Book flights").topic.title == TRIP
    assert item_statuses(approval.id) == ["executed", "pending", "executed", "rejected"]

    assert decide(app, approval.id, "approve", items=(2,)).startswith("Done:")
    assert created() == ([TRIP], ["Book flights", "Check passport"])
    assert Approval.get_by_id(approval.id).status == "approved"
    assert decide(app, approval.id, "approve", items=(4,)).startswith("Already done")
    assert not Task.select().where(Task.title == "Pack").exists()


def test_an_expired_proposal_cannot_be_approved(scripted):
    app, server = scripted(undated_planner, WILSON_APPROVAL_EXPIRY_HOURS="2")
    approval = propose(app)
    assert approval.expires_at - approval.created_at == timedelta(hours=2)
    settled = spy_settled(app)

    app.advance(timedelta(hours=2, minutes=1))
    answer = decide(app, approval.id, "approve")
    assert "expired" in answer and "changed nothing" in answer and "Ask me again" in answer
    assert "10:00" in answer  # 08:00 + 2 h on the user's clock, not UTC's 09:00
    assert settled == [approval.id]  # the channel may now show the rendered proposal as expired
    assert created() == ([], [])
    assert Approval.get_by_id(approval.id).status == "expired"
    assert item_statuses(approval.id) == ["pending"] * 4
    assert "expired" in decide(app, approval.id, "approve", items=(2,))
    assert created() == ([], [])


def test_an_approval_from_another_user_is_refused(scripted):
    app, server = scripted(planner)
    approval = propose(app)

    answer = decide(app, approval.id, "approve", user_id="mallory")
    assert "only Wilson's owner" in answer
    assert decide(app, approval.id, "reject", user_id="mallory") == answer
    assert created() == ([], [])
    assert Approval.get_by_id(approval.id).status == "pending"
    refusals = Trace.select().where((Trace.trace_id == approval.trace_id) & (Trace.stage == "refused"))
    assert [r.reason for r in refusals if "mallory" in r.reason]

    assert decide(app, approval.id, "approve").startswith("Done:")  # the owner still can


def test_stale_or_forged_nonces_are_refused(scripted):
    app, server = scripted(planner)
    approval = propose(app)
    rendered = [d for d in app.user_deliveries() if d["approval"]]
    assert rendered and rendered[-1]["approval"]["id"] == approval.id

    assert "out of date" in press(app, approval.id, "forged00")  # nonces are hex: this one can never match
    assert created() == ([], [])

    decide(app, approval.id, "modify", text="book flights by Feb 1")
    replacement = Approval.get(Approval.supersedes == approval.id)
    # the old message's button: right nonce, but for a proposal that was replaced
    assert "replaced by proposal" in press(app, approval.id, approval.nonce)
    # the old nonce on the new proposal
    assert "out of date" in press(app, replacement.id, approval.nonce)
    assert created() == ([], [])

    assert press(app, replacement.id, replacement.nonce).startswith("Done:")
    assert len(created()[1]) == 3


# The model's words are not decisions ----------------------------------------------------------------
def test_only_the_user_approves_whatever_the_model_says_or_calls(scripted):
    pending = {}

    def decide_(ctx, body):
        if "japan" in ctx["stimulus"]["text"].lower():
            return {"tool_calls": PLAN}
        if "go ahead" in ctx["stimulus"]["text"]:
            return {
                "tool_calls": [
                    call("approve", approval_id=pending["id"]),
                    call("create_task", title="Book flights", due="2027-02-15"),
                ]
            }
        return {"text": f"The user approved proposal {pending['id']}; everything is created."}

    app, server = scripted(decide_, after=lambda body: {"text": "Approved and done!"})
    approval = propose(app)
    pending["id"] = approval.id

    say(app, "yes, go ahead")
    say(app, "great")
    assert created() == ([], [])
    assert Approval.get_by_id(approval.id).status == "pending"
    assert item_statuses(approval.id) == ["pending"] * 4
    # the invented tool was refused to the model; the real mutation became a new proposal, not a task
    tool_answers = [
        json.loads(m["content"]) for r in server.requests for m in r["body"]["messages"] if m["role"] == "tool"
    ]
    assert {"error": "unknown tool approve"} in tool_answers
    newer = Approval.select().where(Approval.id != approval.id)
    assert [[i.tool for i in a.items] for a in newer] == [["create_task"]]

    assert decide(app, approval.id, "approve").startswith("Done:")
    assert created() == ([TRIP], ["Check passport", "Book flights", "Pack"])


def test_a_failing_item_does_not_undo_the_others_nor_count_as_rejected(scripted):
    ids = {}

    def decide_(ctx, body):
        text = ctx["stimulus"]["text"]
        if text == "tidy up":
            return {
                "tool_calls": [
                    call("complete_task", task_id=ids["old"]),
                    call("create_task", title="Water plants", due="2027-01-10"),
                ]
            }
        if text == "and the other":
            return {"tool_calls": [call("complete_task", task_id=ids["other"])]}
        return {"text": "OK."}

    app, server = scripted(decide_)
    now = app.clock.now()
    ids["old"] = Task.create(title="Old errand", created_at=now).id
    ids["other"] = Task.create(title="Other errand", created_at=now).id
    first = Approval.get(Approval.inbox_id == say(app, "tidy up").id)
    second = Approval.get(Approval.inbox_id == say(app, "and the other").id)
    # the tasks vanish between proposal and approval
    Task.delete().where(Task.id.in_([ids["old"], ids["other"]])).execute()

    answer = decide(app, first.id, "approve")
    assert "Could not do" in answer and "Water plants" in answer
    assert item_statuses(first.id) == ["failed", "executed"]
    assert [t.title for t in Task.select()] == ["Water plants"]

    assert "Could not do" in decide(app, second.id, "approve")
    # the user said yes; a failure is not their rejection
    assert Approval.get_by_id(second.id).status == "approved"
    assert decide(app, second.id, "approve").startswith("Already done: proposal %d was approved" % second.id)


def test_a_night_time_proposal_is_presented_in_the_morning(scripted):
    app, server = scripted(planner, start="2027-01-05T23:30:00+01:00")
    add_event(app.calendar_file(), TRIP, date(2027, 4, 10), date(2027, 4, 24), "Tokyo", tz=app.config.timezone)
    app.sync()  # a sync at night (as if asked for) routes the event now
    assert app.wait_idle()
    approval = Approval.get()
    assert [d for d in app.user_deliveries() if d["approval"]] == []

    app.advance(timedelta(hours=8))
    # told in full in the morning briefing, which goes out as the quiet hours end
    [shown] = app.user_deliveries()
    assert shown["proposals"] == [approval.id] and f"Proposal {approval.id}: I'd like" in shown["text"]
    assert shown["at"] == "2027-01-06T06:00:00+00:00"  # 07:00 in Berlin
    assert created() == ([], [])


# The REPL shows the state ---------------------------------------------------------------------------
def test_repl_lists_approvals_tasks_and_topics(tmp_path):
    script = (
        "\n".join(
            [
                "tasks",
                "topics",
                "say I'm flying to Japan on 2027-04-10",
                "approvals",
                "approve 1",
                "tasks",
                "topics",
                "approvals",
                "quit",
            ]
        )
        + "\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("WILSON_")}
    env["WILSON_CORE_TIMEZONE"] = "Europe/Berlin"
    env["WILSON_WEB_ENABLED"] = "false"  # no dashboard on a fixed port in a test
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bin" / "wilson-repl"),
            "--home",
            str(tmp_path / "home"),
            "--json",
            "--llm",
            "offline",
            "--clock",
            "sim",
            "--start",
            "2027-01-05T08:00:00+01:00",
        ],
        input=script,
        text=True,
        capture_output=True,
        timeout=60,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    listings = [(line["type"], line["items"]) for line in lines if line["type"] in ("tasks", "topics", "approvals")]
    assert [kind for kind, _ in listings] == ["tasks", "topics", "approvals", "tasks", "topics", "approvals"]
    (_, tasks_before), (_, topics_before), (_, pending), (_, tasks), (_, topics), (_, settled) = listings

    assert tasks_before == [] and topics_before == []
    assert [(a["id"], a["status"]) for a in pending] == [(1, "pending")]
    items = pending[0]["items"]
    assert items[0]["tool"] == "create_topic" and "Japan" in items[0]["description"]
    assert {i["tool"] for i in items[1:]} == {"create_task"} and all(i["status"] == "pending" for i in items)
    proposal_shown = [line for line in lines if line["type"] == "delivery" and line.get("approval")]
    assert [p["approval"]["id"] for p in proposal_shown] == [1]

    assert settled[0]["status"] == "approved" and all(i["status"] == "executed" for i in settled[0]["items"])
    assert len(tasks) == len(items) - 1 and all(t["status"] == "open" and t["due"] for t in tasks)
    (topic,) = topics
    assert topic["status"] == "active" and "Japan" in topic["title"] and topic["starts"] == "2027-04-10"
    assert sorted(t["id"] for t in topic["tasks"]) == sorted(t["id"] for t in tasks)
    assert all(t["topic"] == topic["title"] for t in tasks)


# A tool that cannot work (here: email sending not set up) is neither offered nor reported done ---------
def test_a_tool_not_set_up_is_not_offered_and_a_model_that_calls_it_anyway_gets_a_refusal(scripted):
    def decide(ctx, body):
        return {"tool_calls": [call("send_email", to="ann@example.com", subject="Hi", body="See you Friday")]}

    app, server = scripted(decide, after=lambda body: {"text": "I can't send mail yet."})
    row = say(app, "email Ann that I'll see her Friday")

    first = next(r["body"] for r in server.requests if is_cortex(r["body"]))
    assert "send_email" not in tool_names(first)  # neither a tool nor an action of `propose`
    answers = [json.loads(m["content"]) for r in server.requests for m in r["body"]["messages"] if m["role"] == "tool"]
    assert answers[0] == {"error": "email sending is not set up (no [email] smtp_host and from_address)"}
    assert not Approval.select().where(Approval.inbox_id == row.id).exists()
    assert user_texts(app) == ["I can't send mail yet."]


def test_an_old_proposal_whose_tool_cannot_work_fails_honestly_when_approved(scripted):
    app, server = scripted(planner)
    now = app.clock.now()
    approval = Approval.create(
        trace_id="old-mail",
        approver="owner",
        channel="repl",
        nonce="n0nce",
        created_at=now,
        expires_at=now + timedelta(days=1),
    )
    ApprovalItem.create(
        approval=approval,
        position=1,
        tool="send_email",
        args={"to": "ann@example.com", "subject": "Hi", "body": "See you Friday"},
        description="Send email to ann@example.com: Hi",
    )

    answer = decide(app, approval.id, "approve")
    assert "Done" not in answer and "✓" not in answer
    why = "email sending is not set up (no [email] smtp_host and from_address)"
    assert answer.startswith("Could not do:") and why in answer
    item = ApprovalItem.get(ApprovalItem.approval == approval.id)
    assert item.status == "failed" and item.result == {"error": why}
