"""Delivery is never given up: Telegram outages delay replies, in order, with one line saying so.

A whole Wilson runs on the simulated clock against the fake Bot API (tests/fake_telegram.py)
and the scripted model server; the fake refuses sendMessage for as long as a test says.
The simulated clock lets an outage last 39 minutes, far past the five minutes after which
a send used to be given up; retry waits are real seconds, kept short here by
telegram.retry_max_seconds.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from storage import outbox
from storage.models import Cursor, Outbox, Trace
from tests.telegram_support import wilson  # noqa: F401 (a fixture)
from wilson.app.application import Wilson
from wilson.kernel.messages import Deliver
from wilson.model.scripted import ScriptedServer

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")

OWNER = 1001
FAMILY = -2024  # a group chat the owner writes in too
MORNING = "2027-01-05T10:00:00+01:00"
LONG_REPLY = "\n\n".join(f"Paragraph {i}: " + "x" * 86 for i in range(60))  # two messages' worth


def last_user_text(body) -> str:
    last = (body.get("messages") or [{}])[-1]
    return last.get("content") or "" if last.get("role") == "user" else ""


@pytest.fixture
def model():
    rules = [
        {"match": lambda body, headers: "long answer" in last_user_text(body), "reply": {"text": LONG_REPLY}},
        {
            "match": lambda body, headers: bool(last_user_text(body)),
            "reply": lambda body: {"text": "echo: " + last_user_text(body)},
        },
    ]
    with ScriptedServer(rules) as server:
        yield server


@pytest.fixture
def start(wilson):
    """Start Wilson on one home at a simulated moment, in Berlin, with short retries; stopped at the end."""

    def at_moment(at: str = MORNING, **env) -> Wilson:
        env = {
            "telegram_allowed_users": str(OWNER),
            "telegram_retry_max_seconds": "0.2",
            "core_timezone": "Europe/Berlin",
            **env,
        }
        return wilson(at=at, log_level="WARNING", **env)

    return at_moment


def shown(fake, chat_id=OWNER) -> list[str]:
    return [m["text"] for m in fake.sent_to(chat_id)]


def wait_text(fake, needle, chat_id=OWNER, timeout=10.0) -> dict:
    return fake.wait_for(
        lambda: next((m for m in fake.sent_to(chat_id) if needle in m["text"]), None),
        timeout,
        f"{needle!r} shown in chat {chat_id}",
    )


def refused_sends(fake) -> int:
    return sum(1 for c in fake.calls_of("sendMessage") if c["status"] != 200)


def test_a_39_minute_outage_delays_every_reply_in_order_with_one_line_and_loses_none(start, fake):
    app = start()
    fake.send_text(OWNER, "good morning")
    wait_text(fake, "echo: good morning")
    fake.go_down("sendMessage", 502)
    app.clock.advance(timedelta(minutes=2))  # 10:02: Telegram stops answering
    for words in ("one", "two", "three"):
        fake.send_text(OWNER, words)
    fake.send_text(OWNER, "and in the family chat", chat_id=FAMILY)
    fake.wait_for(lambda: Outbox.select().where(Outbox.status == "retry").count() == 4, 10, "four replies owed")
    fake.wait_for(lambda: refused_sends(fake) >= 12, 20, "a dozen refused sends")
    assert not Outbox.select().where(Outbox.status == "failed").exists()  # nothing given up
    assert app.wait_idle(10)  # replies waiting out an outage are not work in flight

    app.clock.advance(timedelta(minutes=39))  # 10:41, far past the old five-minute deadline
    fake.come_up("sendMessage")
    wait_text(fake, "echo: and in the family chat", chat_id=FAMILY)
    assert app.wait_idle(10)
    note = "(Delayed: I couldn't reach Telegram from 10:02 to 10:41.)"
    assert shown(fake) == ["echo: good morning", f"{note}\n\necho: one", "echo: two", "echo: three"]
    assert shown(fake, FAMILY) == [f"{note}\n\necho: and in the family chat"]  # one line for each chat
    accepted = [c["params"]["text"] for c in fake.calls_of("sendMessage") if c["status"] == 200]
    assert sorted(accepted) == sorted(shown(fake) + shown(fake, FAMILY))  # each shown once, none twice
    rows = list(Outbox.select().order_by(Outbox.id))
    assert [r.status for r in rows] == ["delivered"] * 5
    assert rows[1].attempts >= 12 and rows[1].sending_at is not None  # the attempt was recorded before the call
    assert Trace.select().where((Trace.stage == "retrying") & (Trace.trace_id == rows[1].trace_id)).exists()
    assert Cursor.get_or_none(Cursor.name == "telegram:outage") is None  # the next outage starts afresh

    fake.send_text(OWNER, "all good now?")  # after the backlog: no line about a delay any more
    wait_text(fake, "echo: all good now?")
    assert shown(fake)[-1] == "echo: all good now?"


def test_replies_owed_when_wilson_stops_are_delivered_after_a_restart(start, fake):
    first = start()
    fake.go_down("sendMessage", 500)
    fake.send_text(OWNER, "are you there?")
    row = fake.wait_for(lambda: Outbox.get_or_none(Outbox.status == "retry"), 10, "the reply owed")
    first.stop()
    assert Outbox.get_by_id(row.id).status == "retry"
    assert Cursor.get(Cursor.name == "telegram:outage").value["since"].startswith("2027-01-05T09:00")

    fake.come_up("sendMessage")
    second = start("2027-01-05T10:30:00+01:00")
    wait_text(fake, "echo: are you there?")
    assert second.wait_idle(10)
    assert shown(fake) == ["(Delayed: I couldn't reach Telegram from 10:00 to 10:30.)\n\necho: are you there?"]
    assert Outbox.get_by_id(row.id).status == "delivered"


def test_a_send_cut_short_by_a_kill_is_sent_again_once_and_traced(start, fake):
    first = start()
    first.supervisor.ref("telegram").stop()
    # What a process killed between recording an attempt and recording its result leaves behind.
    row = outbox.add(
        channel="telegram", text="Your flight leaves at 9.", trace_id="t-cut", key="note:cut", at=first.clock.now()
    )
    Outbox.update(sending_at=first.clock.now(), attempts=1).where(Outbox.id == row.id).execute()
    first.stop()

    second = start()
    wait_text(fake, "Your flight leaves at 9.")
    assert second.wait_idle(10)
    assert shown(fake) == ["Your flight leaves at 9."]  # this fake never saw the first try: shown once
    done = Outbox.get_by_id(row.id)
    assert (done.status, done.attempts) == ("delivered", 2)
    [resent] = Trace.select().where((Trace.trace_id == "t-cut") & (Trace.stage == "resending"))
    assert "may show it twice" in resent.reason


def test_a_refused_chat_fails_its_row_and_the_rest_still_go(start, fake):
    app = start()
    fake.fail("sendMessage", 400, times=4, description="Bad Request: chat not found")  # plain, the note, its plain
    fake.send_text(OWNER, "this one bounces")
    failed = fake.wait_for(lambda: Outbox.get_or_none(Outbox.status == "failed"), 10, "the refused row")
    assert "chat not found" in failed.result["error"].lower()
    fake.send_text(OWNER, "this one arrives")
    wait_text(fake, "echo: this one arrives")
    assert app.wait_idle(10)
    # once more as plain text, then the note that it was not shown (refused as well, also plain): no more
    assert [c["status"] for c in fake.calls_of("sendMessage")] == [400, 400, 400, 400, 200]
    assert Trace.select().where((Trace.stage == "failed") & (Trace.trace_id == failed.trace_id)).exists()


def test_a_long_reply_that_fails_halfway_goes_on_from_the_part_that_failed(start, fake):
    app = start()
    fake.fail("sendMessage", 502, times=3, after=1)  # the first part goes through, the second is refused
    fake.send_text(OWNER, "give me a long answer")
    fake.wait_for(lambda: len(shown(fake)) == 2, 10, "both parts")
    assert app.wait_idle(10)
    assert "\n\n".join(shown(fake)) == LONG_REPLY  # each part once, in order
    assert [c["status"] for c in fake.calls_of("sendMessage")] == [200, 502, 502, 502, 200]
    row = Outbox.get(Outbox.text == LONG_REPLY)
    assert row.result["message_ids"] == [m["message_id"] for m in fake.sent_to(OWNER)]


def test_deliver_for_a_held_or_delivered_row_sends_nothing(start, fake):
    app = start()
    fake.send_text(OWNER, "hello")
    wait_text(fake, "echo: hello")
    held = outbox.add(
        channel="telegram",
        text="after the night",
        trace_id="t-held",
        key="note:held",
        at=app.clock.now(),
        deliver_after=app.clock.now() + timedelta(hours=8),
    )
    delivered = Outbox.get(Outbox.text == "echo: hello")
    for row in (held, delivered):
        app.supervisor.tell("telegram", Deliver(row.id))
    fake.send_text(OWNER, "barrier")
    wait_text(fake, "echo: barrier")
    assert app.wait_idle(10)
    assert shown(fake) == ["echo: hello", "echo: barrier"]
    assert Outbox.get_by_id(held.id).status == "held"


def test_the_repl_sends_the_row_handed_on_with_its_deliver_and_never_a_row_twice(make_app):
    app = make_app()
    now = app.clock.now()
    stored = outbox.add(channel="repl", text="as stored", trace_id="t-a", key="a", at=now)
    # the row as its writer handed it on: sent as it came, without reading it again
    app.supervisor.tell("repl", Deliver(stored.id, replaced_row(stored, text="as handed on")))
    assert app.wait_idle()
    app.supervisor.tell("repl", Deliver(stored.id, stored))  # a second Deliver with a stale copy reads the row
    assert app.wait_idle()
    # a row another path delivered first (a Deliver without its row reads it): a late copy is not sent again
    other = outbox.add(channel="repl", text="once", trace_id="t-b", key="b", at=now)
    app.supervisor.tell("repl", Deliver(other.id))
    assert app.wait_idle()
    app.supervisor.tell("repl", Deliver(other.id, other))  # the copy still says pending
    assert app.wait_idle()
    assert [d["text"] for d in app.user_deliveries()] == ["as handed on", "once"]
    assert Outbox.get_by_id(other.id).status == "delivered"


def replaced_row(row: Outbox, **changes) -> Outbox:
    copy = Outbox(**{**row.__data__, **changes})
    copy._dirty.clear()
    return copy


def test_a_send_that_never_finishes_answering_is_given_up_and_tried_again(start, fake, monkeypatch):
    from channels.telegram import outbound

    monkeypatch.setattr(outbound, "SEND_SECONDS", 1.0)
    app = start()
    fake.delay("sendMessage", 4.0)  # the answer is held far past the whole call's time
    fake.send_text(OWNER, "are you there?")
    row = fake.wait_for(
        lambda: Outbox.get_or_none((Outbox.text == "echo: are you there?") & (Outbox.status == "delivered")),
        20,
        "the reply delivered",
    )
    assert row.attempts == 2  # the held call was left after 1 s, and the row sent again
    fake.send_text(OWNER, "and now?")  # the pump was not held up
    wait_text(fake, "echo: and now?")
    assert app.wait_idle(10)
