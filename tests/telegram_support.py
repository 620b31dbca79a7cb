"""What the Telegram tests share: a Wilson on the fake Bot API with a scripted model, and the steps of a chat with it."""

from __future__ import annotations

from datetime import datetime
import json
import pytest
from storage.models import Cursor, SentMessage, Topic
from tests.fake_telegram import DEFAULT_TOKEN
from wilson.app.application import Wilson
from wilson.kernel.clock import RealClock, SimClock
from wilson.kernel.config import load
from wilson.model.scripted import ScriptedServer


OWNER = 1001


FRIEND = 1002  # allow-listed, but proposals are not hers to decide


LONG_REPLY = "\n\n".join(f"Paragraph {i}: " + "x" * 86 for i in range(60))  # 6,000+ characters


def _last_user_text(body) -> str | None:
    last = (body.get("messages") or [{}])[-1]
    return last.get("content") if last.get("role") == "user" else None


def _said(phrase: str):
    return lambda body, headers: phrase.lower() in (_last_user_text(body) or "").lower()


def _proposal(*calls):
    return {"tool_calls": [{"name": name, "arguments": args} for name, args in calls]}


MODEL_RULES = [
    {
        "match": _said("flying to Japan"),
        "reply": _proposal(
            ("create_topic", {"title": "Japan trip", "starts": "2027-04-10", "ends": "2027-04-20"}),
            ("create_task", {"title": "Book flights", "due": "2027-03-01", "topic": "Japan trip"}),
        ),
    },
    {"match": _said("April 12"), "reply": _proposal(("create_topic", {"title": "Japan trip", "starts": "2027-04-12"}))},
    {"match": _said("long answer"), "reply": {"text": LONG_REPLY}},
    {"match": _said("trip is over"), "reply": _proposal(("close_topic", {"topic_id": 1}))},
    {
        "match": _said("rename the trip"),
        "reply": _proposal(("rename_topic", {"topic_id": 1, "title": "Japan and Korea"})),
    },
    {
        "match": lambda body, headers: _last_user_text(body) is not None,
        "reply": lambda body: {"text": "echo: " + _last_user_text(body)},
    },
]


@pytest.fixture
def model():
    server = ScriptedServer(MODEL_RULES)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def wilson(tmp_path, fake, model):
    """Start Wilson apps on one home, on the real clock or at a simulated moment (`at`); all are stopped at the end.
    Returns start(logs=None, log_level="INFO", at=None, **env) -> app."""
    apps = []

    def start(logs: list | None = None, log_level: str = "INFO", at: str | None = None, **env):
        environ = {
            "WILSON_TELEGRAM_TOKEN": DEFAULT_TOKEN,
            "WILSON_TELEGRAM_BASE_URL": fake.base_url,
            "WILSON_TELEGRAM_ALLOWED_USERS": f"{OWNER},{FRIEND}",
            "WILSON_TELEGRAM_POLL_TIMEOUT": "1",
            "WILSON_CORE_QUIET_HOURS": "off",
            "WILSON_WEB_ENABLED": "false",  # no dashboard on a fixed port in a test
        }
        environ.update({f"WILSON_{k.upper()}": str(v) for k, v in env.items()})
        config = load(tmp_path, environ=environ)
        sink = logs.append if logs is not None else (lambda line: None)
        clock = SimClock(datetime.fromisoformat(at)) if at else RealClock()
        app = Wilson(config, clock, llm=model.base_url, log_sink=sink, log_level=log_level)
        apps.append(app)
        return app.start()

    yield start
    for app in apps:
        if app.supervisor is not None and not app.db.is_closed():
            app.stop()


def wait_text(fake, chat_id, needle, timeout=10.0, thread_id=None) -> dict:
    return fake.wait_for(
        lambda: next((m for m in fake.sent_to(chat_id, thread_id) if needle in m["text"]), None),
        timeout,
        f"a message containing {needle!r} in chat {chat_id}",
    )


def wait_delivered(fake, chat_id, needle, timeout=10.0) -> dict:
    """A message containing `needle`, once Wilson has recorded sending it.

    A person replies to or reacts on a message seconds after it appears; the fake Bot API answers a reaction
    within milliseconds, before Wilson may have stored the message's id, so a test waits for that record first.
    """
    message = wait_text(fake, chat_id, needle, timeout)
    fake.wait_for(
        lambda: SentMessage.get_or_none(
            (SentMessage.chat_id == str(chat_id)) & (SentMessage.message_id == str(message["message_id"]))
        ),
        timeout,
        f"the delivery of {needle!r} recorded",
    )
    return message


def buttons(message) -> dict[str, str]:
    row = message["reply_markup"]["inline_keyboard"][0]
    return {b["callback_data"].split(":")[2]: b["callback_data"] for b in row}


def model_saw(model, text: str) -> list[dict]:
    """The CONTEXT of every model request whose last user message is `text`."""
    found = []
    for request in model.requests:
        body = request["body"]
        if _last_user_text(body) != text:
            continue
        context = next(
            (
                m["content"]
                for m in body["messages"]
                if m["role"] == "user" and str(m.get("content") or "").startswith("CONTEXT ")
            ),
            None,
        )
        found.append(json.loads(context[len("CONTEXT ") :]) if context else {})
    return found


def handled(fake, update: dict, timeout: float = 10.0) -> None:
    """Wait until the channel has handled `update` (its offset moved past it)."""

    def past():
        cursor = Cursor.get_or_none(Cursor.name == "telegram:offset")
        return cursor is not None and cursor.value > update["update_id"]

    fake.wait_for(past, timeout, f"update {update['update_id']} handled")


def propose_japan(fake) -> dict:
    fake.send_text(OWNER, "I'm flying to Japan on 2027-04-10")
    return wait_text(fake, OWNER, "Proposal")


def approve_japan(fake) -> dict:
    """The Japan plan proposed and approved with its button; its "Done:" receipt."""
    proposal = propose_japan(fake)
    fake.press(OWNER, proposal, buttons(proposal)["approve"])
    return wait_text(fake, OWNER, "Done:")


def japan_thread(fake) -> tuple[Topic, int]:
    """The Japan plan approved in a chat with a forum: its topic and the forum thread it got."""
    approve_japan(fake)
    topic = fake.wait_for(lambda: Topic.get_or_none(Topic.thread_ref.is_null(False)), 10, "a forum thread")
    return topic, int(topic.thread_ref)


def keyboard_rows(message: dict) -> list[list[dict]]:
    return message.get("reply_markup", {}).get("inline_keyboard", [])
