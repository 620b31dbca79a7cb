"""Deadline follow-ups go to a model only when their context needs judgement (issue 21): an overdue task
alone is told from its template; a change to the task waiting for approval, or words the user wrote
about it since its previous follow-up, send it to the deep role. The router's choice is traced."""

from __future__ import annotations

import json
from datetime import timedelta

from actors.cortex.prompts import NOTING_PROMPT
from actors.cortex.route import choose_route, judgement_for
from storage import inbox
from storage.models import Approval, Inbox, Outbox, Task, TaskFiring, Trace, Turn
from tests.brain import call, context_of, is_cortex, tool_names
from tests.cortex_support import background, say
from wilson.kernel.messages import InboxReady


def planner(ctx, body):
    text = ctx["stimulus"]["text"].lower()
    if ctx["stimulus"]["origin"] == "user" and "move" in text:
        task = next(t for t in ctx["tasks"] if t["title"] == "Book flights")
        return {
            "tool_calls": [
                call("propose", changes=[{"action": "update_task", "task_id": task["id"], "due": "2027-02-01"}])
            ]
        }
    if ctx["stimulus"]["origin"] == "user":
        return {"text": "Noted."}
    return {
        "tool_calls": [
            call("surface", text="Flights are overdue; the move to 1 Feb still waits for you.", why="a pending change")
        ]
    }


def flights(app, fired_days_ago: int | None = None) -> Task:
    now = app.clock.now()
    task = Task.create(title="Book flights", due=now - timedelta(days=1), created_at=now - timedelta(days=20))
    if fired_days_ago is not None:
        TaskFiring.create(task=task, window="7d", due=task.due, fired_at=now - timedelta(days=fired_days_ago))
    return task


def overdue(app, task: Task) -> Inbox:
    row = inbox.add(
        source="tick",
        kind="deadline",
        origin="background",
        priority=1,
        at=app.clock.now(),
        text=task.title,
        payload={"task_id": task.id, "title": task.title, "window": "overdue", "due": task.due.isoformat()},
    )
    app.supervisor.tell("cortex", InboxReady())
    assert app.wait_idle()
    return Inbox.get_by_id(row.id)


def routed(row: Inbox) -> list[str]:
    return [t.reason for t in Trace.select().where((Trace.trace_id == row.trace_id) & (Trace.stage == "routed"))]


def told(row: Inbox) -> list[str]:
    return [o.text for o in Outbox.select().where(Outbox.trace_id == row.trace_id)]


def cortex_calls(server) -> int:
    return sum(1 for r in server.requests if is_cortex(r["body"]))


def test_an_overdue_task_with_nothing_to_judge_is_told_from_its_template_without_a_model(scripted):
    app, server = scripted(planner)
    row = overdue(app, flights(app, fired_days_ago=8))
    assert cortex_calls(server) == 0
    assert routed(row) == ["template: deadline follow-up from a template (nothing to judge)"]
    assert told(row) and told(row)[0].startswith("“Book flights” is overdue")


def test_an_overdue_task_whose_change_awaits_approval_goes_to_the_deep_role(scripted):
    app, server = scripted(planner)
    task = flights(app)
    say(app, "move the flights to February")
    before = cortex_calls(server)
    row = overdue(app, task)
    assert [r["headers"].get("x-wilson-role") for r in server.requests if is_cortex(r["body"])][before:] == ["deep"]
    assert routed(row) == ["deep: a deadline needs judgement: a change to this task awaits the user's approval"]
    assert told(row) == ["Flights are overdue; the move to 1 Feb still waits for you."]


def test_words_about_the_task_since_its_last_follow_up_are_a_reply_to_handle(scripted):
    app, server = scripted(planner)
    task = flights(app, fired_days_ago=8)
    now = app.clock.now()
    Turn.create(
        channel="repl",
        role="user",
        text="I'm waiting for the airline to confirm my flights",
        created_at=now - timedelta(days=2),
    )
    row = Inbox(
        kind="deadline",
        origin="background",
        text=task.title,
        id=0,
        payload={"task_id": task.id, "title": task.title, "window": "overdue"},
    )
    assert judgement_for(row, now) == "the user wrote about it since its last follow-up"
    assert choose_route(row, judgement_for(row, now))[0] == "deep"


def test_words_before_the_last_follow_up_or_about_other_things_need_no_model(scripted):
    app, server = scripted(planner)
    task = flights(app, fired_days_ago=3)
    now = app.clock.now()
    Turn.create(channel="repl", role="user", text="remind me to book flights", created_at=now - timedelta(days=20))
    Turn.create(channel="repl", role="user", text="what's the weather like?", created_at=now - timedelta(days=1))
    row = Inbox(
        kind="deadline",
        origin="background",
        text=task.title,
        id=0,
        payload={"task_id": task.id, "title": task.title, "window": "overdue"},
    )
    assert judgement_for(row, now) == ""
    first = Inbox(
        kind="deadline",
        origin="background",
        text="Pack",
        id=0,
        payload={"task_id": flights(app).id, "title": "Book flights", "window": "1d"},
    )
    assert judgement_for(first, now) == "", "a first follow-up has nothing earlier to reply to"
    assert choose_route(row, judgement_for(row, now))[0] == "template"


# A background item triage found nothing to plan in -------------------------------------------------
def triaged(app, text: str) -> Inbox:
    """A mail through the real triage (which says whether acting on it takes a plan), then the cortex."""
    app.inject_buffered("email", text, {"from": "school@school.example"})
    app.sync()
    assert app.wait_idle()
    return Inbox.get(Inbox.kind == "buffered")


def triage_saying(plan: bool | None):
    """Triage keeping every item; `plan` None: it says nothing about planning."""

    def reply(body):
        items = json.loads(body["messages"][-1]["content"])["items"]
        return {
            "tool_calls": [
                call(
                    "triage",
                    items=[
                        {
                            "buffer_ids": [i["buffer_id"]],
                            "summary": i["text"].splitlines()[0],
                            "priority": 2,
                            "action": "inbox",
                            "reason": "needs the user",
                            **({} if plan is None else {"plan": plan}),
                        }
                        for i in items
                    ],
                )
            ]
        }

    return [{"match": lambda body, headers: "triage" in tool_names(body), "reply": reply}]


def roles_of_cortex_runs(server) -> list[tuple[str, set[str]]]:
    return [
        (r["headers"].get("x-wilson-role"), tool_names(r["body"]))
        for r in server.requests
        if is_cortex(r["body"]) and r["body"]["messages"][-1]["role"] != "tool"
    ]


def test_a_mail_triage_found_nothing_to_plan_in_goes_to_the_fast_role_with_the_tools_of_a_note(scripted):
    def note(ctx, body):
        return {
            "tool_calls": [
                call("surface", text="School asks you to sign the trip form by Friday.", why="a form to sign")
            ]
        }

    app, server = scripted(note, rules=triage_saying(False))
    row = triaged(app, "Email from the school: sign the field trip form by Friday")
    [(role, offered)] = roles_of_cortex_runs(server)
    # the context already recalls memories and shows the tasks the mail names; the mail came with a sync
    assert role == "fast" and offered == {
        "calendar_lookup",
        "list_tasks",
        "surface",
        "escalate",
        "propose",
        "create_task",
        "update_task",
        "complete_task",
        "remind",
    }
    [body] = [r["body"] for r in server.requests if is_cortex(r["body"])]
    assert body["messages"][0]["content"].startswith(NOTING_PROMPT), "the short prompt of a note, not the planner's"
    assert routed(row)[-1] == ("fast: triage found nothing to plan in it (the fast role may hand it on)")
    assert told(row) == [
        "From the email from school@school[.]example: School asks you to sign the trip form by Friday."
    ]


def test_the_fast_role_hands_a_mail_that_needs_a_plan_to_the_deep_role_and_only_the_planners_words_count(scripted):
    def planner_or_noter(ctx, body):
        if "escalate" in tool_names(body):
            return {
                "tool_calls": [call("surface", text="half done", why="x"), call("escalate", why="a trip to prepare")]
            }
        return {
            "tool_calls": [
                call("surface", text="The class trip to Rome needs a plan: shall I draft one?", why="a trip to prepare")
            ]
        }

    app, server = scripted(planner_or_noter, rules=triage_saying(False))
    row = triaged(app, "Email from the school: the class trip to Rome in May")
    assert [role for role, _ in roles_of_cortex_runs(server)] == ["fast", "deep"]
    assert routed(row)[-1] == (
        "deep: triage found nothing to plan in it (the fast role may hand it on); escalated to deep: a trip to prepare"
    )
    assert told(row) == [
        "From the email from school@school[.]example: The class trip to Rome needs a plan: shall I draft one?"
    ]


def test_a_note_from_a_mail_sees_the_tasks_it_names_and_the_planner_it_hands_on_to_sees_the_weeks_too(scripted):
    def noter_then_planner(ctx, body):
        return {"text": ""} if "escalate" not in tool_names(body) else {"tool_calls": [call("escalate", why="a trip")]}

    app, server = scripted(noter_then_planner, rules=triage_saying(False))
    now = app.clock.now()
    Task.create(title="Pack a lunch for the field trip", due=now + timedelta(days=20), created_at=now)
    Task.create(title="Pay car insurance", due=now + timedelta(days=1), created_at=now)
    triaged(app, "Email from the school: sign the field trip form by Friday")
    fast, deep = ([t["title"] for t in context_of(r["body"])["tasks"]] for r in server.requests if is_cortex(r["body"]))
    assert fast == ["Pack a lunch for the field trip"], "a note needs the task it might repeat, not the week's"
    assert sorted(deep) == ["Pack a lunch for the field trip", "Pay car insurance"]


def test_a_fast_background_run_that_proposes_what_only_a_plan_makes_hands_the_mail_to_the_deep_role(scripted):
    def topic_or_nothing(ctx, body):
        if "escalate" in tool_names(body):
            return {"tool_calls": [call("propose", changes=[{"action": "create_topic", "title": "Rome trip"}])]}
        return {"text": ""}

    app, server = scripted(topic_or_nothing, rules=triage_saying(False))
    row = triaged(app, "Email from the school: the class trip to Rome in May")
    assert [role for role, _ in roles_of_cortex_runs(server)] == ["fast", "deep"]
    assert routed(row)[-1].endswith("escalated to deep: it called create_topic")
    assert Approval.select().count() == 0, "the deep run said nothing and the fast run's proposal was dropped"


def test_a_mail_triage_says_nothing_about_planning_goes_to_the_deep_role(scripted):
    app, server = scripted(lambda ctx, body: {"text": ""}, rules=triage_saying(None))
    row = triaged(app, "Email from the school: the class trip to Rome in May")
    assert [role for role, _ in roles_of_cortex_runs(server)] == ["deep"]
    assert routed(row)[-1] == "deep: a buffered needs judgement"
    assert (row.payload or {}).get("plan") is None, "a plan is assumed unless triage says there is none"


def test_what_a_fast_run_did_before_it_escalated_in_a_later_round_is_dropped(scripted):
    def first_round(ctx, body):
        if "escalate" not in tool_names(body):
            return {"text": ""}  # the planner ends quietly
        return {
            "tool_calls": [
                call("propose", changes=[{"action": "create_task", "title": "Sign the form", "due": "2027-01-08"}]),
                call("surface", text="half done", why="x"),
                call("calendar_lookup", start="2027-01-08", end="2027-01-08"),
            ]
        }

    def after_the_tools(body):
        if "escalate" in tool_names(body):
            return {"tool_calls": [call("escalate", why="it needs a plan after all")]}
        return {"text": ""}

    app, server = scripted(first_round, after_the_tools, rules=triage_saying(False))
    row = triaged(app, "Email from the school: sign the field trip form by Friday")
    assert [role for role, _ in roles_of_cortex_runs(server)] == ["fast", "deep"]
    assert Approval.select().count() == 0 and not any("half done" in t for t in told(row)), (
        "nothing of the fast run's was kept"
    )


def test_a_spent_fast_budget_pauses_a_background_mail_instead_of_moving_it_to_the_deep_role(scripted):
    app, server = scripted(lambda ctx, body: {"text": ""}, WILSON_LLM_FAST_DAILY_BUDGET="0")
    row = background(
        app,
        "Email from the school: sign the field trip form by Friday",
        payload={"buffers": [{"channel": "email", "buffer_id": 1}], "plan": False},
    )
    assert roles_of_cortex_runs(server) == [], "neither the fast nor the deep model was asked"
    assert row.status == "deferred" and "BudgetExhausted" in row.error


def test_the_briefings_lines_count_what_triage_grouped_and_what_it_said_twice(db):
    from datetime import datetime, timezone

    from actors.cortex.route import briefing_lines

    row = inbox.add(
        source="thalamus",
        kind="briefing",
        origin="background",
        priority=3,
        text="Morning briefing",
        at=datetime(2027, 1, 5, 7, tzinfo=timezone.utc),
        payload={
            "items": [
                {"summary": "Receipts from CloudBox", "buffer_ids": [1, 2]},
                {"summary": "Parcel shipped", "buffer_ids": [3]},
                {"summary": "Receipts  from\nCloudBox", "buffer_ids": [4]},
                {"summary": "", "buffer_ids": [5]},
            ]
        },
    )
    assert briefing_lines(row) == "• Receipts from CloudBox (3 of these)\n• Parcel shipped"
