"""Undo in a Telegram chat: the receipt of an approval carries an Undo button, and "undo" typed in the chat is
handled by code like a press (never by the model). The real PTB client against the fake Bot API server."""

from __future__ import annotations

import pytest

from storage.models import Approval, Task, Topic
from tests.fake_telegram import FORUM_CHAT_ID as FORUM
from tests.telegram_support import (
    FRIEND,
    OWNER,
    approve_japan,
    buttons,
    japan_thread,
    keyboard_rows,
    model,  # noqa: F401 (a fixture)
    model_saw,
    wait_text,
    wilson,  # noqa: F401 (a fixture)
)

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")


def test_the_undo_button_under_a_receipt_puts_it_back_in_one_tap_once(wilson, fake):
    app = wilson()
    receipt = approve_japan(fake)
    [[undo]] = keyboard_rows(receipt)
    assert undo["text"] == "Undo ↶"
    presses = [fake.press(OWNER, receipt, undo["callback_data"]) for _ in range(2)]
    undone = wait_text(fake, OWNER, "Put back:")
    wait_text(fake, OWNER, "was undone already")  # the second press finds it undone
    assert fake.answer(presses[0])["text"] == "Undoing it…"
    assert app.wait_idle(10)
    assert Approval.select().count() == 2
    assert "Close topic: Japan trip (and drop its 1 open task)" in undone["text"]
    assert Topic.get().status == "closed" and Task.get().status == "cancelled"  # no second approval
    [[redo]] = keyboard_rows(undone)
    assert redo["text"] == "Undo ↶"  # an undo is a change like any other: it can be put back in turn


def test_undo_typed_in_the_chat_is_handled_by_code_for_the_person_who_types_it(wilson, fake, model):
    app = wilson()
    approve_japan(fake)
    fake.send_text(FRIEND, "undo")  # she approved nothing: the owner's plan is not hers to undo
    wait_text(fake, FRIEND, "There is nothing I changed for you to undo.")
    fake.send_text(OWNER, "undo that")
    wait_text(fake, OWNER, "Put back:")
    assert app.wait_idle(10)
    assert model_saw(model, "undo") == [] and model_saw(model, "undo that") == []
    assert Approval.select().count() == 2


def test_an_undo_asked_at_the_terminal_is_answered_there_and_a_friend_cannot_press_the_owners(wilson, fake):
    app = wilson()
    receipt = approve_japan(fake)
    [[undo]] = keyboard_rows(receipt)
    refused = fake.press(FRIEND, receipt, undo["callback_data"])
    assert fake.answer(refused)["text"] == (
        "Sorry, only Wilson's owner can do that here: the settings say the owner decides every proposal."
    )
    assert app.wait_idle(10)
    assert Approval.select().count() == 1
    app.decide(Approval.get().id, "undo", channel="repl")
    assert app.wait_idle(10)
    assert app.user_deliveries()[-1]["text"].startswith("Put back:")
    assert Approval.select().order_by(Approval.id.desc()).get().channel == "repl"


def test_undoing_a_close_opens_its_forum_thread_again(wilson, fake):
    app = wilson(telegram_forum_chat_id=FORUM)
    topic, thread = japan_thread(fake)
    fake.send_text(OWNER, "The trip is over")
    closing = wait_text(fake, OWNER, "Close topic: Japan trip")
    fake.press(OWNER, closing, buttons(closing)["approve"])
    fake.wait_for(lambda: fake.topics[thread]["closed"], 10, "the forum thread closed")
    receipt = fake.wait_for(
        lambda: next(
            (m for m in fake.sent_to(OWNER) if m["text"].startswith("Done:") and "Close topic" in m["text"]), None
        ),
        10,
        "the close's receipt",
    )
    [[undo]] = keyboard_rows(receipt)
    fake.press(OWNER, receipt, undo["callback_data"])
    wait_text(fake, OWNER, "Undo: Japan trip — open again")
    fake.wait_for(lambda: not fake.topics[thread]["closed"], 10, "the forum thread open again")
    assert app.wait_idle(10)
    assert Topic.get_by_id(topic.id).status == "active" and Task.get().status == "open"
