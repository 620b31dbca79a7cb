"""The cortex and its tools, through real actors, SQLite and the scripted model server over HTTP.

The scripted model decides from what the request says (the CONTEXT message and
the last message), so every assertion about "what the model saw" is about the
body the server really received.
"""

from __future__ import annotations

import contextlib
import copy
import json
from datetime import datetime, timedelta


from actors.cortex import actor as cortex_actor
from actors.cortex.calls import MAX_ROUNDS
from actors.cortex.context import CONTEXT_TASKS
from actors.cortex.prompts import BROKEN_RUN, COULD_NOT_FINISH, NO_ANSWER
from storage.models import Approval, ApprovalItem, Inbox, Outbox, Task, TokenUsage, Topic, Turn
from tests.brain import call, context_of, is_cortex
from wilson.model.scripted import ScriptedServer
from tests.cortex_support import background, cortex_requests, say, stages, tool_results, user_texts
from tests.poll import wait_for
from wilson.app.application import IdleTimeout


# A reply on the channel the message came from --------------------------------------------
def test_user_message_gets_reply_on_its_channel(scripted):
    app, server = scripted(lambda ctx, body: {"text": f"Hello! You said: {ctx['stimulus']['text']}"})
    row = say(app, "good morning")

    assert row.status == "done" and row.reply_channel == "repl"
    replies = list(Outbox.select().where(Outbox.trace_id == row.trace_id))
    assert [(o.channel, o.status, o.text) for o in replies] == [
        (row.reply_channel, "delivered", "Hello! You said: good morning")
    ]
    assert user_texts(app) == ["Hello! You said: good morning"]
    assert app.user_deliveries()[0]["channel"] == "repl"
    turns = [(t.role, t.text, t.channel) for t in Turn.select().order_by(Turn.id)]
    assert turns == [("user", "good morning", "repl"), ("assistant", "Hello! You said: good morning", "repl")]
    # a greeting is routine chat: the router sends it to the fast role (issue 21)
    assert [r["headers"].get("x-wilson-role") for r in server.requests] == ["fast"]


# Context assembly ------------------------------------------------------------------------
def test_context_has_time_zone_topics_tasks_and_recent_turns(scripted):
    answers = iter(["First answer.", "Second answer.", ""])
    app, server = scripted(lambda ctx, body: {"text": next(answers)})
    tz = app.config.timezone
    now = app.clock.now()
    topic = Topic.create(
        title="Trip to Japan", status="active", created_at=now, starts=datetime(2027, 4, 10, tzinfo=tz)
    )
    Task.create(
        title="Book flights", topic=topic, due=datetime(2027, 2, 15, tzinfo=tz), due_is_date=True, created_at=now
    )
    Task.create(title="Old chore", status="done", created_at=now)
    Topic.create(title="Closed thing", status="closed", created_at=now)

    say(app, "hi there")
    app.clock.advance(timedelta(minutes=30))
    say(app, "what is next?")

    first, second = cortex_requests(server)
    ctx = context_of(second)
    assert ctx["now"] == "2027-01-05T08:30+01:00"  # the simulated clock, in the user's zone
    assert ctx["timezone"] == "Europe/Berlin"
    assert [t["title"] for t in ctx["topics"]] == ["Trip to Japan"]  # closed topics are not open work
    assert [(t["title"], t["due"], t["topic"]) for t in ctx["tasks"]] == [
        ("Book flights", "2027-02-15", "Trip to Japan")
    ]
    assert ctx["stimulus"]["text"] == "what is next?" and ctx["stimulus"]["origin"] == "user"
    assert context_of(first)["first_contact"] is True and ctx["first_contact"] is False
    # the earlier exchange comes before the new message, in order
    convo = [(m["role"], m["content"]) for m in second["messages"][2:]]
    assert convo == [("user", "hi there"), ("assistant", "First answer."), ("user", "what is next?")]
    assert second["messages"][0]["role"] == "system"

    # A background run sees the world but not the conversation.
    background(app, "Newsletter: nothing important")
    third = cortex_requests(server)[2]
    assert context_of(third)["stimulus"]["origin"] == "background"
    (last,) = [m["content"] for m in third["messages"][2:]]
    assert "Newsletter: nothing important" in last and last.startswith("<<<UNTRUSTED DATA from your email")
    assert [t["title"] for t in context_of(third)["tasks"]] == ["Book flights"]


def test_a_question_about_tasks_is_told_when_the_context_holds_every_task_due_this_week(scripted):
    app, server = scripted(lambda ctx, body: {"text": "Noted."})
    tz, now = app.config.timezone, app.clock.now()
    for day, title in ((6, "Pay rent"), (8, "Call Anna"), (11, "Water plants")):
        Task.create(title=title, due=datetime(2027, 1, day, tzinfo=tz), due_is_date=True, created_at=now)
    Task.create(title="Someday: learn Go", created_at=now)
    Task.create(title="Renew passport", due=datetime(2027, 3, 1, tzinfo=tz), due_is_date=True, created_at=now)
    say(app, "what's due this week?")
    say(app, "good morning")
    asked, greeted = (context_of(body) for body in cortex_requests(server))
    assert asked["tasks_listed"].startswith("every open task due before 2027-01-12T08:00+01:00;")  # in a week
    assert {"Pay rent", "Call Anna", "Water plants"} <= {t["title"] for t in asked["tasks"]}
    assert "tasks_listed" not in greeted, "said only where the list is asked about"

    for n in range(CONTEXT_TASKS):  # more due this week than the context shows: the model must read the list
        Task.create(title=f"Chore {n}", due=datetime(2027, 1, 7, tzinfo=tz), due_is_date=True, created_at=now)
    say(app, "what's due this week?")
    crowded = context_of(cortex_requests(server)[-1])
    assert len(crowded["tasks"]) == CONTEXT_TASKS and "tasks_listed" not in crowded


# Source-agnostic -------------------------------------------------------------------------
def test_same_text_from_two_sources_gets_the_same_decisions(scripted):
    text = "Dentist appointment on 2027-02-03 at 10:00, bring the insurance card"

    def decide(ctx, body):
        if "dentist" in ctx["stimulus"]["text"].lower():
            return {
                "tool_calls": [
                    call("create_task", title="Find insurance card", due="2027-02-02"),
                    call(
                        "surface",
                        text="Dentist on 3 Feb: I'd get the insurance card ready.",
                        why="appointment needs preparation",
                    ),
                ]
            }
        return {"text": ""}

    app, server = scripted(decide)
    rows = [background(app, text, source="email"), background(app, text, source="calendar")]
    email_body, calendar_body = cortex_requests(server)

    def neutral(body):
        body = copy.deepcopy(body)
        ctx = context_of(body)
        source = ctx["stimulus"]["source"]
        assert source in ("email", "calendar")
        ctx["stimulus"]["source"] = ctx["stimulus"]["id"] = None
        ctx["stimulus"]["untrusted"] = ctx["stimulus"]["untrusted"].replace(source, "SOURCE")
        body["messages"][1]["content"] = "CONTEXT " + json.dumps(ctx, sort_keys=True)
        # the untrusted block names where the text came from, and nothing else differs
        body["messages"][-1]["content"] = body["messages"][-1]["content"].replace(f"your {source}.", "SOURCE.")
        return body

    assert context_of(email_body)["stimulus"]["source"] == "email"
    assert context_of(calendar_body)["stimulus"]["source"] == "calendar"
    assert neutral(email_body) == neutral(calendar_body)

    proposals = [Approval.get(Approval.inbox_id == r.id) for r in rows]
    decided = [[(i.tool, i.args) for i in p.items.order_by(ApprovalItem.position)] for p in proposals]
    assert decided[0] == decided[1] == [("create_task", {"title": "Find insurance card", "due": "2027-02-02"})]
    surfaced = [
        o.text for o in Outbox.select().where(Outbox.channel == "repl").order_by(Outbox.id) if o.payload.get("why")
    ]
    assert surfaced == [
        f"From your {source}: Dentist on 3 Feb: I'd get the insurance card ready." for source in ("email", "calendar")
    ]
    assert Task.select().count() == 0


# Mutations are proposals, and only well-formed ones -----------------------------------------
def test_invalid_mutations_are_refused_to_the_model_and_never_proposed(scripted):
    def decide(ctx, body):
        return {
            "tool_calls": [
                call("create_task", due="2027-02-01"),  # no title
                call("create_task", title="   ", due="2027-02-01"),
                call("create_task", title="Renew passport", due="next Tuesday-ish"),
                call("create_task", title="Pay rent", due="2027-02-30"),
                call("update_task", task_id=999, due="2027-03-01"),
                call("complete_task", task_id=424242),
                call("close_topic", topic_id=77),
                call("complete_task", task_id={"id": 1}),  # an object where an id belongs
                call("update_task", task_id=10**30, title="Renew passport"),  # no database can bind it
                call("create_task", title=["Pack", "Unpack"]),
                call("create_task", title="Call the embassy", due="2027-01-20"),
            ]
        }

    app, server = scripted(decide, after=lambda body: {"text": "I've proposed what I could."})
    row = say(app, "sort out my errands")

    results = tool_results(server)
    assert len(results) == 11
    errors = [r.get("error", "") for r in results[:10]]
    assert all(errors), results
    assert "title" in errors[0] and "title" in errors[1] and "due" in errors[2] and "due" in errors[3]
    assert "999" in errors[4] and "424242" in errors[5] and "77" in errors[6]
    assert "task_id" in errors[7] and "task_id" in errors[8] and "title" in errors[9]
    assert results[10]["status"] == "proposed"

    approval = Approval.get(Approval.inbox_id == row.id)
    assert [(i.tool, i.args["title"]) for i in approval.items] == [("create_task", "Call the embassy")]
    refused = [reason for stage, reason in stages(row.trace_id) if stage == "refused"]
    assert len(refused) == 10
    assert Task.select().count() == 0
    assert "I've proposed what I could." in user_texts(app)
    assert all(h.restarts == 0 for h in app.supervisor.health.values())  # refused, not crashed on


# The model cannot approve anything -------------------------------------------------------------
def test_a_model_claiming_approval_creates_nothing(scripted):
    def decide(ctx, body):
        if ctx["stimulus"]["origin"] == "user":
            return {"text": "The user approved it, so I created the task 'Book flights' for you."}
        return {"text": "I approved and created it."}

    app, server = scripted(decide)
    say(app, "yes, approve it and create the flights task")
    row = background(app, "Reminder: flights are getting expensive")

    assert Task.select().count() == 0 and Topic.select().count() == 0
    assert Approval.select().count() == 0
    # the user's run says what the model said (it is only words); the background run's free text is no
    # decision at all: a failed run, which the offline rules take over (they pass on what triage kept)
    assert user_texts(app)[0] == "The user approved it, so I created the task 'Book flights' for you."
    assert "I approved and created it." not in " ".join(user_texts(app))
    assert (
        "fallback",
        "deep: offline fallback (the model broke the protocol: the background run ended with free "
        "text and no tool call)",
    ) in stages(row.trace_id)


# Silence and surfacing -----------------------------------------------------------------------
def test_background_run_without_surface_reaches_nobody(scripted):
    app, server = scripted(lambda ctx, body: {"text": ""})  # the protocol's silence: no call, no words
    row = background(app, "Weekly newsletter from the gym")

    assert app.user_deliveries() == []
    rows = list(Outbox.select().where(Outbox.trace_id == row.trace_id))
    assert [(o.channel, o.status, o.surfaced) for o in rows] == [("silent", "delivered", False)]
    assert TokenUsage.get(TokenUsage.role == "deep").failed == 0  # silence is no failure
    silent = [reason for stage, reason in stages(row.trace_id) if stage == "silent"]
    assert len(silent) == 1 and "without surface" in silent[0]
    assert Turn.select().count() == 0  # a background run is no conversation turn
    assert row.status == "done"


def cortex_calls(server: ScriptedServer) -> int:
    return sum(1 for r in server.requests if is_cortex(r["body"]))


def test_a_background_run_that_only_decides_ends_without_another_model_call(scripted):
    def decide(ctx, body):
        if "Library" in ctx["stimulus"]["text"]:
            return {"tool_calls": [call("surface", text="The library book is due on Friday.", why="due soon")]}
        return {"tool_calls": [call("list_tasks")]}

    app, server = scripted(decide)
    background(app, "Library: your book is due on Friday")
    assert cortex_calls(server) == 1  # surfacing left the model nothing to read
    assert user_texts(app) == ["From your email: The library book is due on Friday."]

    background(app, "Gym: new opening hours")
    assert cortex_calls(server) == 3  # a lookup's answer goes back to the model


def test_surfacing_waits_for_the_end_of_quiet_hours_unless_urgent(scripted):
    def decide(ctx, body):
        text = ctx["stimulus"]["text"]
        if "URGENT" in text:
            return {
                "tool_calls": [
                    call("surface", text="Your flight tomorrow is cancelled.", why="travel disruption", urgent=True)
                ]
            }
        return {"tool_calls": [call("surface", text="The library book is due on Friday.", why="due soon")]}

    app, server = scripted(decide, start="2027-01-05T23:10:00+01:00")
    calm = background(app, "Library: your book is due on Friday")
    urgent = background(app, "URGENT: flight LH123 cancelled")

    # the urgent one goes out at once, at night
    flight, library = (
        "From your email: Your flight tomorrow is cancelled.",
        "From your email: The library book is due on Friday.",
    )
    assert user_texts(app) == [flight]
    held = Outbox.get(Outbox.trace_id == calm.trace_id)
    assert held.status == "held"
    assert held.deliver_after.astimezone(app.config.timezone) == datetime.fromisoformat("2027-01-06T07:00:00+01:00")
    assert any(stage == "surfaced" and "quiet hours" in reason for stage, reason in stages(calm.trace_id))
    assert Outbox.get(Outbox.trace_id == urgent.trace_id).deliver_after is None

    app.advance(timedelta(hours=7))  # to 06:10: still night
    assert user_texts(app) == [flight]
    app.advance(timedelta(hours=2))
    assert user_texts(app) == [flight, library]
    delivered = app.user_deliveries()[1]
    assert datetime.fromisoformat(delivered["at"]) == datetime.fromisoformat("2027-01-06T07:00:00+01:00")
    assert Outbox.get_by_id(held.id).status == "delivered"


# A model that fails -----------------------------------------------------------------------------
def test_a_failing_model_gets_the_user_an_apology_and_the_cortex_keeps_working(scripted):
    failing = {
        "match": lambda body, headers: is_cortex(body) and "first" in body["messages"][-1]["content"],
        "fault": "500",
    }
    app, server = scripted(lambda ctx, body: {"text": "Back again."}, rules=[failing], WILSON_LLM_RETRIES="1")

    first = say(app, "first message")
    assert first.status == "kept"  # tried again later, and before the next message (model_down tests)
    assert len([r for r in server.requests if r["status"] == 500]) == 2  # one try plus one retry
    (apology,) = user_texts(app)
    assert apology.startswith("Sorry") and len(apology) < 200

    second = say(app, "second message")  # the first fails again, on its own: it does not hold this one up
    assert second.status == "done"
    assert user_texts(app)[1] == "Back again."
    # the model answers the second, then the first is tried once more and fails alone: given up, and said so
    assert user_texts(app)[2:] == [
        "Sorry, I still can't answer your message “first message”: my language model "
        "answers others but fails on this one. Could you put it another way?"
    ]
    assert Inbox.get_by_id(first.id).status == "done"
    assert all(h.restarts == 0 for h in app.supervisor.health.values())


def test_one_run_that_breaks_does_not_silence_the_cortex(scripted, monkeypatch):
    build = cortex_actor.build_context

    def build_or_break(row, *args, **kwargs):
        if row.text == "first":
            raise RuntimeError("a bug met in one run")
        return build(row, *args, **kwargs)

    monkeypatch.setattr(cortex_actor, "build_context", build_or_break)

    def decide(ctx, body):
        return {"text": "Still here."}

    app, server = scripted(decide)
    app.say("first")
    with contextlib.suppress(IdleTimeout):  # the broken run may still be retrying: the second message comes anyway
        app.wait_idle(timeout=3)
    app.say("second")
    wait_for(lambda: "Still here." in user_texts(app), 30, "the answer to the second message")
    assert app.supervisor.health["cortex-realtime"].restarts == 0, "the broken run was contained, not crashed"
    first = Inbox.get(Inbox.text == "first")
    assert (first.status, first.attempts) == ("failed", 3)
    assert user_texts(app).count(BROKEN_RUN) == 1


def test_a_run_whose_own_commit_fails_is_run_again_without_another_message(scripted, monkeypatch):
    """The run's transaction said nothing was left to claim, then failed to commit: the row is back to
    pending, and the lane claims it again at once instead of waiting for the next stimulus."""
    import peewee

    from storage import trace as trace_store

    insert, failed = trace_store._insert, []

    def insert_or_fail_once(rows):
        if not failed and any(r[1] == "replied" for r in rows):  # the lines of the run's results, at its commit
            failed.append(rows)
            raise peewee.OperationalError("disk I/O error")
        insert(rows)

    monkeypatch.setattr(trace_store, "_insert", insert_or_fail_once)
    app, server = scripted(lambda ctx, body: {"text": "Here I am."})
    assert app.wait_idle()  # the lanes' own first look at the inbox is over: the say's is the one nudge
    row = app.say("are you there?")
    # not wait_idle: it nudges the lanes itself when rows wait. Each round of pings lets one hop finish
    # (thalamus, the realtime lane, the REPL), and a ping never nudges a lane to claim
    for _ in range(3):
        app.supervisor.ping_all()
    row = Inbox.get_by_id(row.id)
    assert failed, "the run's held trace lines were to fail its commit once"
    assert (row.status, row.attempts) == ("done", 1)
    assert user_texts(app) == ["Here I am."]
    assert len(cortex_requests(server)) == 2  # the failed run's answer was not kept; the second run's was
    assert ("error", "OperationalError: disk I/O error (pending)") in stages(row.trace_id)


# A model that never finishes, or says nothing --------------------------------------------------
def test_a_model_that_never_stops_calling_tools_gets_the_user_an_honest_answer(scripted):
    def again(*_):
        return {"tool_calls": [call("list_tasks")]}

    app, server = scripted(again, after=again)
    row = say(app, "what's on my plate?")

    assert cortex_calls(server) == MAX_ROUNDS
    assert user_texts(app) == [COULD_NOT_FINISH]
    assert "Noted." not in user_texts(app)
    unfinished = [reason for stage, reason in stages(row.trace_id) if stage == "unfinished"]
    assert unfinished == [f"the model was still calling tools after {MAX_ROUNDS} rounds, so the run stopped"]

    quiet = background(app, "Gym: new opening hours")
    silent = Outbox.get(Outbox.trace_id == quiet.trace_id)
    assert silent.channel == "silent" and "still calling tools" in silent.payload["why"]
    assert user_texts(app) == [COULD_NOT_FINISH]


def test_an_empty_model_answer_is_never_a_bare_noted(scripted):
    # an empty answer to the user is a failed run: the offline rules answer instead (their greeting here)
    app, server = scripted(lambda ctx, body: {"text": "   "})
    row = say(app, "hm")
    [reply] = user_texts(app)
    assert reply.strip() and reply != NO_ANSWER and reply.startswith("Hi, I'm Wilson")
    assert ("fallback", "deep: offline fallback (the model broke the protocol: an empty answer to the user)") in stages(
        row.trace_id
    )
