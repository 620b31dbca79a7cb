"""A thanks or "ok" that asks nothing is answered from a template, without a model (issue 21): it costs no
tokens and the answer is instant. It still goes to a model when it may be an answer: a proposal of the user's
waits, Wilson's last line asked a question, or it is the user's first word to Wilson."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from actors.cortex.route import acknowledged, asks, choose_route, is_acknowledgement, judgement_for
from storage import outbox
from storage.models import Approval, ApprovalItem, Inbox, Outbox, Turn
from tests.brain import context_of, routine_reply
from tests.router_support import cortex, routed, say
from wilson.model.scripted import ScriptedServer

TEMPLATE = "template: an acknowledgement that asks nothing (answered without a model)"


QUESTIONS = {"dentist": "Shall I add it?", "plumber": "Shall I add it? 🙂", "boiler": "Want a reminder?\n(yes/no)"}


def answer(body: dict) -> dict:
    text = context_of(body)["stimulus"]["text"]
    asked = next((question for word, question in QUESTIONS.items() if word in text), None)
    return routine_reply(body) or {"text": asked or "Here is your day."}


@pytest.fixture
def wilson(make_app):
    with ScriptedServer([{"match": lambda body, headers: True, "reply": answer}]) as server:
        yield make_app(llm=server.base_url, env={"WILSON_LLM_MODEL": "m"}), server


@pytest.mark.parametrize(
    "text, ack",
    [
        ("thanks!", True),
        ("Thank you", True),
        ("ok, sounds good", True),
        ("great, thanks 👍", True),
        ("OK.", True),
        ("got it", True),
        ("cheers", True),
        ("perfect, thank you so much!", True),
        ("hello", False),
        ("good morning", False),
        ("ok?", False),
        ("thanks, but move it to Friday", False),
        ("ok, book it", False),
        ("thanks for the reminder, when is it again?", False),
        ("I'm good", False),
        # a glad emoji may end it, a cross one is no plain "ok"; a run of k's is laughter, read at once
        ("thanks 🙏", True),
        ("ok :)", True),
        ("okay 👌", True),
        ("ok 👎", False),
        ("ok :(", False),
        ("great!!! 😡", False),
        ("k", True),
        ("kkkkkkkkkk", False),
        ("k" * 60 + " lol", False),
        ("ok " * 30, False),
    ],
)
def test_only_a_thanks_or_ok_and_nothing_more_is_an_acknowledgement(text, ack):
    assert is_acknowledgement(Inbox(origin="user", kind="message", text=text, payload={})) is ack


def test_the_template_welcomes_a_thanks_and_nods_to_an_ok():
    assert acknowledged(Inbox(origin="user", kind="message", text="great, thanks!")) == "You're welcome!"
    assert acknowledged(Inbox(origin="user", kind="message", text="ok, sounds good")) == "\N{THUMBS UP SIGN}"


def test_a_thanks_after_an_answer_is_answered_without_a_model(wilson):
    app, server = wilson
    say(app, "what's on today?")
    before = len(cortex(server))
    row = say(app, "thanks!")
    assert len(cortex(server)) == before, "no model call for a thanks"
    assert routed(row) == [TEMPLATE]
    assert [o.text for o in Outbox.select().where(Outbox.trace_id == row.trace_id)] == ["You're welcome!"]
    assert [(t.role, t.text) for t in Turn.select().order_by(Turn.id)][-2:] == [
        ("user", "thanks!"),
        ("assistant", "You're welcome!"),
    ], "both lines are in the conversation"


def test_the_first_word_to_wilson_goes_to_a_model_even_when_it_is_a_thanks(wilson):
    app, server = wilson
    row = say(app, "thanks!")
    assert len(cortex(server)) == 1
    assert routed(row) == ["fast: routine chat; not from a template: the user's first message"]


def test_an_ok_while_a_proposal_waits_goes_to_a_model_which_may_approve_it(wilson):
    app, server = wilson
    say(app, "what's on today?")
    now = app.clock.now()
    owner = str(app.config.get("core", "owner"))
    approval = Approval.create(
        trace_id="t", approver=owner, channel="repl", nonce="n", created_at=now, expires_at=now + timedelta(days=1)
    )
    ApprovalItem.create(approval=approval, position=1, tool="create_task", args={}, description="Add task 'Pack'")
    before = len(cortex(server))
    row = say(app, "ok, sounds good")
    assert len(cortex(server)) == before + 1
    assert routed(row) == ["fast: routine chat; not from a template: a proposal waits for the user's word"]


def test_an_ok_after_wilson_asked_a_question_goes_to_a_model(wilson):
    app, server = wilson
    say(app, "the dentist wants to see me next week")  # the model asks "Shall I add it?"
    before = len(cortex(server))
    row = say(app, "ok")
    assert len(cortex(server)) == before + 1
    assert routed(row) == ["fast: routine chat; not from a template: Wilson's last line asked a question"]


@pytest.mark.parametrize("told", ["the plumber comes on Friday", "the boiler needs a service"])
def test_a_question_with_something_after_its_mark_is_still_a_question(wilson, told):
    app, server = wilson
    say(app, told)  # "Shall I add it? 🙂", or "Want a reminder?" over "(yes/no)"
    before = len(cortex(server))
    say(app, "ok")
    assert len(cortex(server)) == before + 1


@pytest.mark.parametrize(
    "text, asked",
    [
        ("Shall I add it?", True),
        ("Shall I add it? 🙂", True),
        ("Want a reminder? (yes/no)", True),
        ("Want a reminder?\n(yes/no)", True),
        ("Any news? :)", True),
        ("Is it on? Yes, it is.", False),
        ("Done: added “Pack”.", False),
        ("Noted 👍", False),
        ("", False),
    ],
)
def test_what_counts_as_wilson_asking(text, asked):
    assert asks(text) is asked


@pytest.mark.parametrize("key", ["reply_to", "replaces", "attachment"])
def test_an_ok_that_answers_a_message_in_particular_is_no_template(key):
    row = Inbox(origin="user", kind="message", text="ok", payload={key: {"text": "Shall I move lunch to 1pm?"}})
    assert judgement_for(row, datetime(2027, 1, 5, 9, 0)) == f"it answers a message in particular ({key})"
    assert choose_route(row, judgement_for(row, datetime(2027, 1, 5, 9, 0)))[0] == "fast"


def told_unasked(app, text: str, key: str = "followups:1") -> None:
    """A message Wilson started that reached the user now (as a delivered follow-up leaves it)."""
    box = outbox.add(channel="repl", text=text, trace_id="t", key=key, at=app.clock.now())
    Outbox.update(status="delivered", delivered_at=app.clock.now(), surfaced=True).where(Outbox.id == box.id).execute()


def test_an_ok_after_a_follow_up_that_asked_goes_to_a_model(wilson):
    app, server = wilson
    say(app, "what's on today?")
    app.advance(timedelta(minutes=5))
    told_unasked(app, "“File tax return” is overdue (Tue 9 Mar). Done, or shall we move it?")
    app.advance(timedelta(minutes=5))
    before = len(cortex(server))
    row = say(app, "ok")
    assert len(cortex(server)) == before + 1
    assert routed(row) == ["fast: routine chat; not from a template: Wilson's last line asked a question"]


@pytest.mark.parametrize(
    "told, first",
    [
        ("Reminder: “Pack” is due in 3 days (Fri 12 Mar).", False),  # it asks nothing
        ("“File tax return” is overdue (Tue 9 Mar). Done, or shall we move it?", True),
    ],
)  # answered since
def test_an_ok_after_a_follow_up_that_asks_nothing_or_was_answered_since_is_a_template(wilson, told, first):
    app, server = wilson
    if first:
        told_unasked(app, told)
        app.advance(timedelta(minutes=5))
    say(app, "what's on today?")  # "Here is your day."
    if not first:
        app.advance(timedelta(minutes=5))
        told_unasked(app, told)
    app.advance(timedelta(minutes=5))
    row = say(app, "ok")
    assert routed(row) == [TEMPLATE]
