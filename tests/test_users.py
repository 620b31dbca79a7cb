"""Several allow-listed people, one Wilson: each has their own conversation and their own proposals.

What one person said in a private chat never reaches the model when another person
asks something; a topic's shared thread is shared. Checked on the requests the
scripted model server really received.
"""

from __future__ import annotations

import json

from storage import routing
from storage.models import Approval, Inbox, Task, Topic, Turn
from tests.cortex_support import background, cortex_requests, user_texts
from tests.brain import call, is_cortex
from wilson.kernel.messages import StimulusCommitted

SECRET = "my biopsy result came back: XYZZY-positive"


def say_as(app, user_id: str, text: str, topic_id: int | None = None) -> Inbox:
    """A message from one person, in their private chat or in a topic's shared thread."""
    row = routing.commit_realtime(
        source="repl",
        text=text,
        user_id=user_id,
        at=app.clock.now(),
        payload={"topic_id": topic_id} if topic_id else None,
    )
    app.supervisor.tell("thalamus", StimulusCommitted("inbox", row.id, row.trace_id))
    assert app.wait_idle(), "Wilson did not settle"
    return Inbox.get_by_id(row.id)


def request_for(server, text: str) -> str:
    """The whole body of the first-round cortex request that answered `text`, as one string."""
    for body in cortex_requests(server):
        if body["messages"][-1]["content"] == text:
            return json.dumps(body, ensure_ascii=False)
    raise AssertionError(f"no cortex request for {text!r}")


def echo(ctx, body):
    if "task" in ctx["stimulus"]["text"]:
        return {"tool_calls": [call("create_task", title="Water the plants", due="2027-01-09")]}
    return {"text": f"Got it: {ctx['stimulus']['text'][:40]}"}


def test_one_persons_private_words_never_reach_the_model_for_another(scripted):
    app, server = scripted(echo)
    say_as(app, "owner", SECRET)
    say_as(app, "bob", "hello, what do you know about me?")
    say_as(app, "owner", "and what did I tell you?")

    for_bob = request_for(server, "hello, what do you know about me?")
    assert "XYZZY" not in for_bob and "Got it: my biopsy" not in for_bob
    assert "XYZZY" in request_for(server, "and what did I tell you?"), "the owner's own history is still theirs"
    first_contact = [
        json.loads(b["messages"][1]["content"][len("CONTEXT ") :])["first_contact"] for b in cortex_requests(server)
    ]
    assert first_contact == [True, True, False], "meeting Wilson is per person"
    assert [(t.user_id, t.role) for t in Turn.select().order_by(Turn.id)] == [
        ("owner", "user"),
        ("owner", "assistant"),
        ("bob", "user"),
        ("bob", "assistant"),
        ("owner", "user"),
        ("owner", "assistant"),
    ]


def test_a_topics_shared_thread_is_shared_and_the_private_chat_is_not(scripted):
    app, server = scripted(echo)
    topic = Topic.create(title="Trip to Japan", status="active", created_at=app.clock.now())
    say_as(app, "owner", "the hotel door code is 4711", topic_id=topic.id)
    say_as(app, "bob", "what's the door code?", topic_id=topic.id)
    say_as(app, "bob", "anything private for me?")

    assert "4711" in request_for(server, "what's the door code?")
    assert "4711" not in request_for(server, "anything private for me?")


def test_a_proposal_is_decided_by_the_person_who_asked_for_it(scripted):
    app, server = scripted(echo, WILSON_APPROVAL_OWNER_DECIDES_ALL="false")
    row = say_as(app, "bob", "add a task to water the plants")
    approval = Approval.get(Approval.inbox_id == row.id)
    assert approval.approver == "bob"

    app.decide(approval.id, "approve", user_id="carol")
    assert app.wait_idle()
    assert user_texts(app)[-1] == "Sorry, only the person this proposal is for can decide on it."
    app.decide(approval.id, "approve", user_id="bob")
    assert app.wait_idle()
    assert user_texts(app)[-1].startswith("Done:")


def test_a_proposal_nobody_asked_for_goes_to_the_owner(scripted):
    app, server = scripted(lambda ctx, body: {"tool_calls": [call("create_task", title="Pay the gas bill")]})
    row = background(app, "Gas bill due on the 20th")
    assert Approval.get(Approval.inbox_id == row.id).approver == app.config.get("core", "owner")


def test_when_the_owner_decides_all_nobody_else_approves_modifies_or_rejects_even_their_own(scripted):
    from storage.models import DecisionRow as Decision

    def decider(ctx, body):
        text = ctx["stimulus"]["text"]
        if text.startswith("yes to "):  # "in words": the model hands the gate bob's spoken approval
            return {"tool_calls": [call("decide", proposal=int(text.split()[-1]), action="approve")]}
        return echo(ctx, body)

    app, server = scripted(decider)  # [approval] owner_decides_all is on by default
    owner = app.config.get("core", "owner")
    row = say_as(app, "bob", "add a task to water the plants")
    approval = Approval.get(Approval.inbox_id == row.id)
    assert approval.approver == "bob"
    refusal = "Sorry, only Wilson's owner can decide on it here: the settings say the owner decides every proposal."
    for action, text in (("approve", ""), ("modify", "make it Sunday"), ("reject", "")):
        app.decide(approval.id, action, user_id="bob", text=text)
        assert app.wait_idle()
        assert user_texts(app)[-1] == refusal, action
    say_as(app, "bob", f"yes to {approval.id}")
    assert Decision.select().where(Decision.user_id == "bob").count() == 4
    assert user_texts(app)[-1] == refusal
    assert Approval.get_by_id(approval.id).status == "pending" and Task.select().count() == 0

    app.decide(approval.id, "approve", user_id=owner)
    assert app.wait_idle()
    assert user_texts(app)[-1].startswith("Done:") and Task.select().count() == 1


# Tasks and topics: a person's own, and those of a shared topic (one with a forum thread) ----------
PRIVATE = "Collect the XYZZY biopsy results"


def planner(ctx, body):
    """ "task: TITLE | TOPIC" and "topic: TITLE" propose them; "list …" reads tasks and topics."""
    text = ctx["stimulus"]["text"]
    if text.startswith("task: "):
        title, _, topic = text[len("task: ") :].partition(" | ")
        return {"tool_calls": [call("create_task", title=title, **({"topic": topic} if topic else {}))]}
    if text.startswith("topic: "):
        return {"tool_calls": [call("create_topic", title=text[len("topic: ") :])]}
    if text.startswith("list"):
        return {"tool_calls": [call("list_tasks", status="all"), call("list_topics")]}
    return {"text": "Noted."}


def run_requests(server, text: str) -> str:
    """Every cortex request of the run that answered `text` (tool rounds too), as one string."""
    bodies = [
        r["body"]
        for r in server.requests
        if is_cortex(r["body"]) and any(m["role"] == "user" and m.get("content") == text for m in r["body"]["messages"])
    ]
    assert bodies, f"no cortex request for {text!r}"
    return json.dumps(bodies, ensure_ascii=False)


def approved(app, row: Inbox, user_id: str) -> None:
    app.decide(Approval.get(Approval.inbox_id == row.id).id, "approve", user_id=user_id)
    assert app.wait_idle()
    assert user_texts(app)[-1].startswith("Done:"), user_texts(app)[-1]


def test_a_persons_private_tasks_stay_theirs_and_a_shared_topics_are_everyones(scripted):
    app, server = scripted(
        planner, after=lambda body: {"text": "Here they are."}, WILSON_APPROVAL_OWNER_DECIDES_ALL="false"
    )  # each approves their own
    owner = app.config.get("core", "owner")
    Topic.create(title="Trip to Japan", status="active", thread_ref="77", owner_id="alice", created_at=app.clock.now())
    approved(app, say_as(app, "alice", f"task: {PRIVATE}"), "alice")
    approved(app, say_as(app, "alice", "topic: XYZZY clinic visits"), "alice")
    approved(app, say_as(app, "alice", "task: Book the ryokan | Trip to Japan"), "alice")
    approved(app, say_as(app, "bob", "task: Bring flowers | clinic visits"), "bob")

    assert {t.title: (t.owner_id, t.topic.title if t.topic else None) for t in Task.select()} == {
        PRIVATE: ("alice", None),
        "Book the ryokan": ("alice", "Trip to Japan"),
        "Bring flowers": ("bob", None),
    }, "what a proposal makes is the approver's; no task joins another's private topic"

    say_as(app, "bob", "list mine, bob")
    for_bob = run_requests(server, "list mine, bob")
    assert "XYZZY" not in for_bob, "neither alice's private task nor her private topic reaches bob's model"
    assert "Book the ryokan" in for_bob and "Trip to Japan" in for_bob and "Bring flowers" in for_bob

    say_as(app, "alice", "list mine, alice")
    say_as(app, owner, "list everything")
    background(app, "A letter from the clinic about the biopsy results")  # context holds relevant tasks only
    for_alice, for_owner = run_requests(server, "list mine, alice"), run_requests(server, "list everything")
    assert PRIVATE in for_alice and "XYZZY clinic visits" in for_alice and "Bring flowers" not in for_alice
    assert PRIVATE in for_owner and "Bring flowers" in for_owner, "the owner sees everyone's"
    assert PRIVATE in json.dumps(cortex_requests(server)[-1]), "a run nobody started works for the owner"

    from channels import views

    tz = app.config.timezone
    assert {t["title"] for t in views.tasks(tz, "open", "bob", owner)} == {"Book the ryokan", "Bring flowers"}
    assert {t["title"] for t in views.topics(tz, "bob", owner)} == {"Trip to Japan"}
    assert PRIVATE in {t["title"] for t in views.tasks(tz, "open", owner, owner)}


def test_a_new_task_repeats_only_a_task_its_asker_may_see(db):
    from datetime import datetime, timezone

    from actors.tools.common import repeated

    now = datetime(2027, 1, 5, tzinfo=timezone.utc)
    flat = Topic.create(title="The flat", thread_ref="forum:1", created_at=now)
    Task.create(title="Buy milk", owner_id="2", created_at=now)
    Task.create(title="Pay the rent", owner_id="1", topic=flat, created_at=now)
    Task.create(title="Water the plants", owner_id="1", created_at=now)

    def repeats(title: str, user: str) -> str | None:
        found = repeated("create_task", {"title": title}, user, owner="1")
        return found.title if found is not None else None

    # the second person sees their own and the shared topic's tasks, not the owner's private one
    assert [repeats(t, "2") for t in ("buy milk", "pay the rent", "water the plants")] == [
        "Buy milk",
        "Pay the rent",
        None,
    ]
    assert repeats("water the plants", "1") == "Water the plants"  # the owner sees everything
