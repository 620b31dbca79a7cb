"""The mission's own example: "Trip to Japan" lives through months of simulated time.

The same story runs twice, once with the offline provider and once against the
scripted model server over HTTP. The assertions are about Wilson's behaviour —
what was created and when, which follow-ups fired, when it stayed silent — not
about the model's wording.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

import pytest

from storage.models import Approval, ApprovalItem, Memory, Setting, Task, TaskFiring, Topic, TokenUsage, Trace
from tests.brain import call, context_of, routine_reply
from tests.calendar_support import add_event
from wilson.model.scripted import ScriptedServer
from tests.japan_support import PLAN, START, TRIP


def scripted_reply(body: dict) -> dict:
    routine = routine_reply(body)
    if routine is not None:
        return routine
    context = context_of(body)
    stimulus = context["stimulus"]
    kind, payload = stimulus["kind"], stimulus["payload"]
    if kind == "event":
        event = payload["buffers"][0]
        if event["change"] == "new" and event["title"] == TRIP:
            calls = [call("create_topic", title=TRIP, starts="2027-04-10", ends="2027-04-24", notes="Tokyo")]
            calls += [call("create_task", title=t, due=d, topic=TRIP) for t, d in PLAN]
            return {"tool_calls": calls}
        if event["change"] == "changed" and event.get("previous"):
            shift = (datetime.fromisoformat(event["start"]) - datetime.fromisoformat(event["previous"]["start"])).days
            topic = next(t for t in context["topics"] if t["title"] == TRIP)
            return {
                "tool_calls": [call("update_topic", topic_id=topic["id"], starts="2027-05-08", ends="2027-05-22")]
                + [
                    call(
                        "update_task",
                        task_id=t["id"],
                        due=(date.fromisoformat(t["due"]) + timedelta(days=shift)).isoformat(),
                    )
                    for t in context["tasks"]
                    if t["topic"] == TRIP and t["due"]
                ]
            }
        return {"text": ""}
    if kind == "modify":
        return {"tool_calls": [call("create_task", title="Book flights", due="2027-02-01", topic=TRIP)]}
    if kind == "deadline":
        return {
            "tool_calls": [
                call(
                    "surface",
                    text=f"{payload['title']}: {payload['window']}",
                    why=f"deadline window {payload['window']}",
                )
            ]
        }
    if kind == "topic_end":
        return {"tool_calls": [call("close_topic", topic_id=payload["topic_id"])]}
    if kind == "message" and stimulus["text"].startswith("done with"):
        word = stimulus["text"].split()[-1]
        task = next(t for t in context["tasks"] if word in t["title"].lower())
        return {"tool_calls": [call("complete_task", task_id=task["id"])]}
    return {"text": "OK." if stimulus["origin"] == "user" else ""}


@pytest.fixture(params=["offline", "scripted"])
def wilson(request, make_app):
    # The watchdog runs as in `wilson run`, only checking more often: months of simulated life
    # must never look like a hang to it.
    watch = {"WILSON_SUPERVISOR_WATCHDOG_SECONDS": "0.5"}
    if request.param == "offline":
        yield make_app(start=START, llm="offline", env=watch, watchdog=True)
        return
    with ScriptedServer([{"match": lambda body, headers: True, "reply": scripted_reply}]) as server:
        yield make_app(start=START, llm=server.base_url, env={"WILSON_LLM_MODEL": "scripted", **watch}, watchdog=True)


# Helpers ---------------------------------------------------------------------------
def calls_total() -> int:
    return sum(row.calls for row in TokenUsage.select())


def pending_proposal() -> Approval:
    return Approval.select().where(Approval.status.in_(("pending", "partial"))).order_by(Approval.id.desc()).get()


def item_position(approval: Approval, word: str) -> int:
    for item in approval.items.order_by(ApprovalItem.position):
        if word in item.description.lower():
            return item.position
    raise AssertionError(f"no item about {word!r} in {[i.description for i in approval.items]}")


def task(word: str) -> Task:
    return Task.select().where(Task.title.contains(word)).get()


def local_day(app, record: dict) -> date:
    return datetime.fromisoformat(record["at"]).astimezone(app.config.timezone).date()


def live_quiet_days(app, days: int) -> list[date]:
    """Advance day by day; on each day with nothing due and no input, nothing may reach the user or a model.

    The first day is never counted (the user just acted, and the night consolidates that), nor is a
    day right after a follow-up fired (the night may consolidate it)."""
    quiet = []
    busy_yesterday = True
    for _ in range(days):
        firings, calls, said = TaskFiring.select().count(), calls_total(), len(app.user_deliveries())
        proposals = Approval.select().count()
        day = app.clock.now().astimezone(app.config.timezone).date()
        app.advance(timedelta(days=1))
        nothing_due = TaskFiring.select().count() == firings and Approval.select().count() == proposals
        counts, busy_yesterday = not busy_yesterday, not nothing_due
        if nothing_due and counts:
            quiet.append(day)
            assert len(app.user_deliveries()) == said, f"spoke on a quiet day {day}"
            assert calls_total() == calls, f"called a model on a quiet day {day}"
    return quiet


# The story --------------------------------------------------------------------------
@pytest.mark.slow
def test_trip_to_japan_end_to_end(wilson):
    app = wilson
    add_event(app.calendar_file(), TRIP, date(2027, 4, 10), date(2027, 4, 24), "Tokyo", tz=app.config.timezone)
    app.wait_idle()
    assert app.user_deliveries() == [], "the calendar is buffered: nothing before the morning sync"

    # 1. The next morning's sync routes it; the cortex proposes a topic and preparation tasks.
    app.advance(timedelta(days=1))
    proposal = pending_proposal()
    items = list(proposal.items.order_by(ApprovalItem.position))
    tools = [i.tool for i in items]
    assert tools[0] == "create_topic" and items[0].args["title"] == TRIP
    text = " ".join(i.description.lower() for i in items)
    for word in ("passport", "visa", "flights", "accommodation", "insurance", "pack"):
        assert word in text
    trip_start = date(2027, 4, 10)
    for item in items[1:]:
        assert date.fromisoformat(item.args["due"][:10]) < trip_start
    # It arrives inside the morning briefing, in full: one message that morning, not two.
    [shown] = app.user_deliveries()
    assert shown["text"].startswith("Good morning!") and shown["proposals"] == [proposal.id]
    assert f"Proposal {proposal.id}: I'd like to do this" in shown["text"] and "passport" in shown["text"].lower()
    assert local_day(app, shown) == date(2027, 1, 6)

    # 2. Nothing exists until the user answers; then approve most, modify one, reject one.
    assert Topic.select().count() == 0 and Task.select().count() == 0
    packing, flights = item_position(proposal, "pack"), item_position(proposal, "flights")
    app.decide(proposal.id, "reject", items=(packing,))
    app.wait_idle()
    others = tuple(i.position for i in items if i.position not in (packing, flights))
    app.decide(proposal.id, "approve", items=others)
    app.wait_idle()
    app.decide(proposal.id, "modify", text="book flights by Feb 1")
    app.wait_idle()
    replacement = pending_proposal()
    assert replacement.supersedes == proposal.id
    assert Approval.get_by_id(proposal.id).status == "superseded"
    app.decide(replacement.id, "approve")
    app.wait_idle()
    assert Topic.get(Topic.title == TRIP).status == "active"
    assert task("flights").due.astimezone(app.config.timezone).date() == date(2027, 2, 1)
    assert not Task.select().where(Task.title.contains("Pack")).exists()
    approved_again = len(app.user_deliveries())
    app.decide(replacement.id, "approve")  # a second press executes nothing
    app.wait_idle()
    assert Task.select().where(Task.title.contains("flights")).count() == 1
    assert "Already done" in app.user_deliveries()[approved_again]["text"]

    # 3. Silent unless something is due; follow-ups at the windows; done stops them.
    quiet = live_quiet_days(app, 12)
    assert quiet, "some days have nothing due"
    passport = task("passport")
    assert TaskFiring.select().where(TaskFiring.task == passport).exists()
    app.say("done with the passport")
    app.wait_idle()
    app.decide(pending_proposal().id, "approve")
    app.wait_idle()
    assert task("passport").status == "done"
    fired = TaskFiring.select().where(TaskFiring.task == passport).count()
    live_quiet_days(app, 30)  # through 16 February: flights (due 1 Feb) goes overdue
    assert TaskFiring.select().where(TaskFiring.task == passport).count() == fired, "done stops follow-ups"
    flight_windows = [f.window for f in TaskFiring.select().where(TaskFiring.task == task("flights"))]
    assert flight_windows.count("overdue") == 1 and len(flight_windows) == len(set(flight_windows))
    # the morning briefing says it (its "Overdue" section) instead of a follow-up of its own
    overdue_said = [
        d for d in app.user_deliveries() if "flights" in d["text"].lower() and "overdue" in d["text"].lower()
    ]
    assert len(overdue_said) == 1, "an overdue task is escalated once, not nagged"
    assert overdue_said[0]["text"].startswith("Good morning!"), "the morning briefing tells the day"
    app.say("done with the flights")  # booked late
    app.wait_idle()
    app.decide(pending_proposal().id, "approve")
    app.wait_idle()

    # 4. The trip moves: Wilson proposes to move the dependent deadlines.
    tz = app.config.timezone
    before = {t.id: t.due.astimezone(tz).date() for t in Task.select().where(Task.status == "open")}
    add_event(app.calendar_file(), TRIP, date(2027, 5, 8), date(2027, 5, 22), "Tokyo", tz=app.config.timezone)
    app.advance(timedelta(days=1))
    moves = pending_proposal()
    assert {i.tool for i in moves.items} == {"update_task", "update_topic"}
    assert {i.args["task_id"] for i in moves.items if i.tool == "update_task"} == set(before)
    app.decide(moves.id, "approve")
    app.wait_idle()
    for task_id, due in before.items():
        assert Task.get_by_id(task_id).due.astimezone(tz).date() - due == timedelta(days=28)

    # 5. After the trip, the topic is proposed for closing; the night remembers what it learned.
    for _ in range(110):
        app.advance(timedelta(days=1))
        closing = (
            Approval.select()
            .join(ApprovalItem)
            .where((ApprovalItem.tool == "close_topic") & Approval.status.in_(("pending", "partial")))
            .first()
        )
        if closing:
            break
    assert closing is not None, "the finished trip is proposed for closing"
    assert app.clock.now().astimezone(app.config.timezone).date() >= date(2027, 5, 22)
    app.decide(closing.id, "approve")
    app.advance(timedelta(days=1))
    assert Topic.get(Topic.title == TRIP).status == "closed"
    learned = [m.text.lower() for m in Memory.select().where(Memory.invalidated_at.is_null())]
    assert any("flights" in text and "late" in text for text in learned), learned

    # 6. Nothing was still open at departure without Wilson having raised it with the trip, at the trip's
    # escalation windows, with the user's choices (the close then dropped what was left).
    departure = Topic.get(Topic.title == TRIP).starts
    left = list(Task.select().where((Task.topic == Topic.get(Topic.title == TRIP).id) & (Task.status == "cancelled")))
    assert left, "the user left some preparation undone"
    for leftover in left:
        raised = [
            f.fired_at
            for f in TaskFiring.select().where(
                (TaskFiring.task == leftover.id) & TaskFiring.window.startswith("event:")
            )
        ]
        assert raised and min(raised) < departure, f"{leftover.title} was never raised before departure"
    # No learning that would make Wilson say less acted without the user's yes: the heads-ups the user did not
    # answer (while not answering anything else) are no evidence, and no reminder was left out for them.
    assert not any("let" in text and "pass" in text for text in learned), learned
    assert not Setting.select().where(Setting.key.startswith("learning:adopted:")).exists()
    assert not Trace.select().where(Trace.reason.contains("heads-ups left out")).exists()
    replaced = {name: h.restarts for name, h in app.supervisor.health.items() if h.restarts}
    assert replaced == {}, "the watchdog replaced an actor that was working"
