"""Undo in a Telegram chat: the receipt of an approval carries an Undo button, and "undo" typed in the chat is
handled by code like a press (never by the model). The real PTB client against the fake Bot API server."""

from __future__ import annotations

import pytest

from storage.models import Approval, Task, Topic
from tests.test_telegram import (FRIEND, OWNER, buttons, keyboard_rows, model, model_saw,  # noqa: F401 (fixtures)
                                 propose_japan, wait_text, wilson)

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")


def test_the_undo_button_under_a_receipt_proposes_putting_it_back_once(wilson, fake):
    app = wilson()
    proposal = propose_japan(fake)
    fake.press(OWNER, proposal, buttons(proposal)["approve"])
    receipt = wait_text(fake, OWNER, "Done:")
    [[undo]] = keyboard_rows(receipt)
    assert undo["text"] == "Undo ↶"
    presses = [fake.press(OWNER, receipt, undo["callback_data"]) for _ in range(2)]
    undoing = wait_text(fake, OWNER, "Because you asked to undo proposal")
    wait_text(fake, OWNER, "which waits for you")  # the second press finds the first undo waiting
    assert fake.answer(presses[0])["text"] == "Putting together what would undo it…"
    assert app.wait_idle(10)
    assert Approval.select().count() == 2
    assert "Close topic: Japan trip (and drop its 1 open task)" in undoing["text"]
    assert Topic.get().status == "active"  # nothing changes until the undo is approved
    fake.press(OWNER, undoing, buttons(undoing)["approve"])
    fake.wait_for(lambda: Topic.get().status == "closed", 10, "the topic closed")
    assert Task.get().status == "cancelled"


def test_undo_typed_in_the_chat_is_handled_by_code_for_the_person_who_types_it(wilson, fake, model):
    app = wilson()
    proposal = propose_japan(fake)
    fake.press(OWNER, proposal, buttons(proposal)["approve"])
    wait_text(fake, OWNER, "Done:")
    fake.send_text(FRIEND, "undo")  # she approved nothing: the owner's plan is not hers to undo
    wait_text(fake, FRIEND, "There is nothing I changed for you to undo.")
    fake.send_text(OWNER, "undo that")
    wait_text(fake, OWNER, "Because you asked to undo proposal")
    assert app.wait_idle(10)
    assert model_saw(model, "undo") == [] and model_saw(model, "undo that") == []
    assert Approval.select().count() == 2
