"""Deadline follow-ups go to a model only when their context needs judgement (issue 21): an overdue task
alone is told from its template; a change to the task waiting for approval, or words the user wrote
about it since its previous follow-up, send it to the deep role. The router's choice is traced."""

from __future__ import annotations

from datetime import timedelta

from actors.cortex.route import choose_route, judgement_for
from storage import inbox
from storage.models import Inbox, Outbox, Task, TaskFiring, Trace, Turn
from tests.brain import call, is_cortex
from tests.test_cortex import say, scripted  # noqa: F401 (a fixture)
from wilson.kernel.messages import InboxReady


def planner(ctx, body):
    text = ctx["stimulus"]["text"].lower()
    if ctx["stimulus"]["origin"] == "user" and "move" in text:
        task = next(t for t in ctx["tasks"] if t["title"] == "Book flights")
        return {"tool_calls": [call("propose", changes=[{"action": "update_task", "task_id": task["id"],
                                                         "due": "2027-02-01"}])]}
    if ctx["stimulus"]["origin"] == "user":
        return {"text": "Noted."}
    return {"tool_calls": [call("surface", text="Flights are overdue; the move to 1 Feb still waits for you.",
                                why="a pending change")]}


def flights(app, fired_days_ago: int | None = None) -> Task:
    now = app.clock.now()
    task = Task.create(title="Book flights", due=now - timedelta(days=1), created_at=now - timedelta(days=20))
    if fired_days_ago is not None:
        TaskFiring.create(task=task, window="7d", due=task.due, fired_at=now - timedelta(days=fired_days_ago))
    return task


def overdue(app, task: Task) -> Inbox:
    row = inbox.add(source="tick", kind="deadline", origin="background", priority=1, at=app.clock.now(),
                    text=task.title, payload={"task_id": task.id, "title": task.title, "window": "overdue",
                                              "due": task.due.isoformat()})
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
    Turn.create(channel="repl", role="user", text="I'm waiting for the airline to confirm my flights",
                created_at=now - timedelta(days=2))
    row = Inbox(kind="deadline", origin="background", text=task.title, id=0,
                payload={"task_id": task.id, "title": task.title, "window": "overdue"})
    assert judgement_for(row, now) == "the user wrote about it since its last follow-up"
    assert choose_route(row, judgement_for(row, now))[0] == "deep"


def test_words_before_the_last_follow_up_or_about_other_things_need_no_model(scripted):
    app, server = scripted(planner)
    task = flights(app, fired_days_ago=3)
    now = app.clock.now()
    Turn.create(channel="repl", role="user", text="remind me to book flights", created_at=now - timedelta(days=20))
    Turn.create(channel="repl", role="user", text="what's the weather like?", created_at=now - timedelta(days=1))
    row = Inbox(kind="deadline", origin="background", text=task.title, id=0,
                payload={"task_id": task.id, "title": task.title, "window": "overdue"})
    assert judgement_for(row, now) == ""
    first = Inbox(kind="deadline", origin="background", text="Pack", id=0,
                  payload={"task_id": flights(app).id, "title": "Book flights", "window": "1d"})
    assert judgement_for(first, now) == "", "a first follow-up has nothing earlier to reply to"
    assert choose_route(row, judgement_for(row, now))[0] == "template"
