"""Several allow-listed people, one Wilson: each has their own conversation and their own proposals.

What one person said in a private chat never reaches the model when another person
asks something; a topic's shared thread is shared. Checked on the requests the
scripted model server really received.
"""

from __future__ import annotations

import json

from actors import thalamus
from storage.models import Approval, Inbox, Topic, Turn
from tests.test_cortex import (background, call, cortex_requests, scripted,  # noqa: F401 (a fixture)
                               user_texts)
from wilson.messages import StimulusCommitted

SECRET = "my biopsy result came back: XYZZY-positive"


def say_as(app, user_id: str, text: str, topic_id: int | None = None) -> Inbox:
    """A message from one person, in their private chat or in a topic's shared thread."""
    row = thalamus.commit_realtime(source="repl", text=text, user_id=user_id, at=app.clock.now(),
                                   payload={"topic_id": topic_id} if topic_id else None)
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
    first_contact = [json.loads(b["messages"][1]["content"][len("CONTEXT "):])["first_contact"]
                     for b in cortex_requests(server)]
    assert first_contact == [True, True, False], "meeting Wilson is per person"
    assert [(t.user_id, t.role) for t in Turn.select().order_by(Turn.id)] == [
        ("owner", "user"), ("owner", "assistant"), ("bob", "user"), ("bob", "assistant"),
        ("owner", "user"), ("owner", "assistant")]


def test_a_topics_shared_thread_is_shared_and_the_private_chat_is_not(scripted):
    app, server = scripted(echo)
    topic = Topic.create(title="Trip to Japan", status="active", created_at=app.clock.now())
    say_as(app, "owner", "the hotel door code is 4711", topic_id=topic.id)
    say_as(app, "bob", "what's the door code?", topic_id=topic.id)
    say_as(app, "bob", "anything private for me?")

    assert "4711" in request_for(server, "what's the door code?")
    assert "4711" not in request_for(server, "anything private for me?")


def test_a_proposal_is_decided_by_the_person_who_asked_for_it(scripted):
    app, server = scripted(echo)
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
