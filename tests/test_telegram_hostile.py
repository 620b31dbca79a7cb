"""Odd and hostile Telegram input: each update is read on its own, an unusable one is traced and
skipped, and the updates after it are answered; forged button data gets a clear answer.

The real PTB client talks to the fake Bot API (tests/fake_telegram.py), which hands over
whatever JSON a test queues; the property tests throw random and hostile JSON at the
reader (`parse_update`) and at a running Wilson.
"""

from __future__ import annotations

import copy
import itertools
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from channels.telegram.text import MAX_ID, Parsed, parse_callback, parse_update
from storage.models import Approval, Cursor, DecisionRow, Inbox, Task, Topic, Trace
from tests.telegram_support import OWNER, buttons, handled, model, propose_japan, wait_text, wilson  # noqa: F401

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")

GOOD = {
    "message_id": 1,
    "date": 1_700_000_000,
    "chat": {"id": OWNER, "type": "private"},
    "from": {"id": OWNER, "is_bot": False, "first_name": "Ann"},
    "text": "hello",
}


def odd(**changes) -> dict:
    """A message from the owner with some fields replaced (a value of ... removes the field)."""
    message = copy.deepcopy(GOOD)
    for key, value in changes.items():
        if value is ...:
            message.pop(key, None)
        else:
            message[key] = value
    return {"message": message}


ODD_UPDATES = {
    "no message_id": odd(message_id=...),
    "no date": odd(date=...),
    "a reply without its chat": odd(reply_to_message={"message_id": 3, "date": 1_700_000_000}),
    "a reply that is text": odd(reply_to_message="oops"),
    "a list where the chat belongs": odd(chat=[OWNER, "private"]),
    "an odd poll": odd(poll={"id": "p1", "question": "lunch?", "options": "pizza"}),
    "text that is a list": odd(text=["hello"]),
    "a user id that is text": odd(**{"from": {"id": "me", "is_bot": False, "first_name": "Ann"}}),
    "a date beyond any calendar": odd(date=10**30),
    "a press from nobody": {"callback_query": {"id": "q1", "chat_instance": "c", "data": "ap:1:approve:x"}},
}


def skipped(update_id: int) -> list[Trace]:
    return [t for t in Trace.select().where(Trace.stage == "skipped") if (t.data or {}).get("update_id") == update_id]


def test_odd_updates_between_two_good_messages_are_traced_and_skipped(wilson, fake):
    app = wilson()
    fake.send_text(OWNER, "before the odd ones")
    queued = {name: fake.queue_update(body) for name, body in ODD_UPDATES.items()}
    fake.serve_once(["not", "an", "update"])  # no update_id at all: nothing to acknowledge, still no harm
    last = fake.send_text(OWNER, "after the odd ones")
    wait_text(fake, OWNER, "echo: before the odd ones")
    wait_text(fake, OWNER, "echo: after the odd ones")
    assert app.wait_idle(10)
    for name, update in queued.items():
        [trace] = skipped(update["update_id"])  # one line each, saying why
        assert trace.actor == "telegram" and str(update["update_id"]) in trace.reason, name
    assert Cursor.get(Cursor.name == "telegram:offset").value == last["update_id"] + 1
    assert [m["text"] for m in fake.sent_to(OWNER)] == ["echo: before the odd ones", "echo: after the odd ones"]
    assert Inbox.select().count() == 2  # nothing odd reached the inbox
    press = queued["a press from nobody"]["callback_query"]["id"]  # unreadable, and still answered
    fake.wait_for(lambda: press in fake.callback_answers, 5, "the unreadable press answered")
    assert fake.callback_answers[press]["text"] == "Sorry, that did not work, and nothing changed."
    assert app.supervisor.health["telegram"].restarts == 0


def test_forged_numbers_in_button_data_get_a_clear_answer_and_change_nothing(wilson, fake):
    app = wilson()
    proposal = propose_japan(fake)
    nonce = buttons(proposal)["approve"].rsplit(":", 1)[1]
    forged = [
        "ap:99999999999999999999999:approve:" + nonce,  # beyond any database integer
        f"ap:{2**63}:approve:{nonce}",
        "ap:²:approve:x",
        "ap:-1:reject:x",
        "ap:1:approve:" + "x" * 80,
        "ap:1:launch:x",
    ]
    presses = [fake.press(OWNER, proposal, data) for data in forged]
    for press in presses:
        assert fake.answer(press, 10)["text"] == "That button does not work any more."
    assert Topic.select().count() == 0 and Approval.get().status == "pending"
    assert DecisionRow.select().count() == 0
    fake.press(OWNER, proposal, buttons(proposal)["approve"])  # the real button still works
    wait_text(fake, OWNER, "Done:")
    assert app.wait_idle(10)
    assert Task.select().count() == 1
    assert app.supervisor.health["approval"].restarts == 0 and app.supervisor.health["telegram"].restarts == 0


def test_callback_ids_are_bounded():
    assert parse_callback("ap:12:approve:abc") == (12, "approve", "abc")
    assert parse_callback(f"ap:{MAX_ID - 1}:reject:n") == (MAX_ID - 1, "reject", "n")
    for data in (
        f"ap:{MAX_ID}:approve:n",
        "ap:9" * 30,
        "ap:١٢:approve:n",
        "ap::approve:n",
        "ap:1:approve",
        None,
        12,
        "ap:1:approve:n\u00e9",
        "ap:1:approve:" + "n" * 60,
    ):
        assert parse_callback(data) is None, data


# Property tests -----------------------------------------------------------------------------
json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
    st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x1F), max_size=20),  # control characters
    st.sampled_from(["\x00", "\ud800", "ap:1:approve:x", "/start", "/quiet 99999999999h", "x" * 20_000]),
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)),
    max_leaves=12,
)
FIELDS = [
    "message_id",
    "date",
    "chat",
    "from",
    "text",
    "caption",
    "reply_to_message",
    "message_thread_id",
    "is_topic_message",
    "entities",
    "photo",
    "voice",
    "poll",
    "edit_date",
    "forum_topic_created",
]


@st.composite
def hostile_update(draw) -> dict:
    """A plausible update with some fields made hostile, or an arbitrary JSON object."""
    kind = draw(st.sampled_from(["message", "edited_message", "callback_query", "message_reaction"]))
    if draw(st.booleans()):  # the kind Wilson asked for, holding anything; sometimes with company
        update = {kind: draw(json_value)}
        if draw(st.booleans()):
            update[draw(st.sampled_from(["poll", "junk", "message"]))] = draw(json_value)
        return update
    if kind == "callback_query":
        body = {
            "id": "q1",
            "from": copy.deepcopy(GOOD["from"]),
            "chat_instance": "c",
            "data": "ap:1:approve:x",
            "message": copy.deepcopy(GOOD),
        }
        keys = ["id", "from", "data", "message", "chat_instance"]
    elif kind == "message_reaction":
        body = {
            "chat": copy.deepcopy(GOOD["chat"]),
            "message_id": 5,
            "user": copy.deepcopy(GOOD["from"]),
            "date": 1_700_000_000,
            "old_reaction": [],
            "new_reaction": [{"type": "emoji", "emoji": "👍"}],
        }
        keys = ["chat", "message_id", "user", "date", "old_reaction", "new_reaction"]
    else:
        body, keys = copy.deepcopy(GOOD), FIELDS
    for key in draw(st.lists(st.sampled_from(keys), min_size=1, max_size=3, unique=True)):
        body[key] = draw(json_value)
    if draw(st.booleans()):  # deep nesting somewhere Wilson does not look
        nested = "deep"
        for _ in range(draw(st.integers(min_value=1, max_value=60))):
            nested = {"x": [nested]}
        body["via_bot"] = nested
    return {kind: body}


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        hostile_update().map(lambda body: {"update_id": 700_001, **body}),
        json_value,
        st.dictionaries(st.just("update_id"), json_value),
    )
)
def test_reading_any_json_as_an_update_never_raises(raw):
    parsed = parse_update(raw)
    assert isinstance(parsed, Parsed)
    assert (parsed.update is None) != (parsed.error is None)  # usable, or refused with a reason
    if parsed.update is not None:
        assert parsed.update_id == raw["update_id"] and 0 <= parsed.update_id < MAX_ID
    else:
        assert isinstance(parsed.error, str) and json.dumps(parsed.error)


def test_hostile_updates_never_stop_the_channel(wilson, fake):
    app = wilson()
    rounds = itertools.count()

    @settings(
        max_examples=25,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(st.lists(hostile_update(), min_size=1, max_size=3))
    def one_batch(bodies):
        queued = [fake.queue_update(body) for body in bodies]
        barrier = fake.send_text(OWNER, f"barrier {next(rounds)}")
        handled(fake, barrier, timeout=20)
        wait_text(fake, OWNER, "echo: " + barrier["message"]["text"], timeout=20)
        for update in queued:  # refused by the reader: traced; taken in: sane words from the owner
            if parse_update(update).update is None:
                assert skipped(update["update_id"]), update
            row = Inbox.get_or_none(Inbox.dedup_key == f"telegram:{update['update_id']}")
            if row is not None:
                assert isinstance(row.text, str) and "\x00" not in row.text and len(row.text) <= 16_400
                assert row.user_id == str(OWNER) and row.text.strip()

    one_batch()
    assert app.wait_idle(20)
    assert app.supervisor.health["telegram"].restarts == 0
    health = Cursor.get(Cursor.name == "health:telegram").value
    assert health["state"] == "polling"
