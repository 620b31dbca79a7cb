"""What the offline tests share: the playbook and answering one message by the rules."""

from __future__ import annotations
from datetime import datetime
from zoneinfo import ZoneInfo
from wilson.model.offline import intents, phrases
from wilson.model.offline.recognition import load_playbook


BERLIN = ZoneInfo("Europe/Berlin")


NOW = datetime(2027, 1, 5, 10, 0, tzinfo=BERLIN)  # a Tuesday


PLAYBOOK = load_playbook()


TOOLS = (
    "create_topic",
    "create_task",
    "update_task",
    "complete_task",
    "close_topic",
    "cancel_task",
    "snooze_task",
    "remind",
    "create_reminder",
    "rename_topic",
    "decide",
)


TASKS = [
    {"id": 1, "title": "Renew passport", "due": "2027-01-20", "status": "open", "topic": "Trip to Japan"},
    {"id": 2, "title": "Book flights", "due": "2027-02-09", "status": "open", "topic": "Trip to Japan"},
]


TOPICS = [{"id": 7, "title": "Trip to Japan", "status": "active", "starts": "2027-01-09"}]


def answer(text, pending=(), tasks=TASKS, topics=TOPICS, first_contact=False):
    return intents.answer(
        phrases.Chat(
            text=text,
            now=NOW,
            tz=BERLIN,
            playbook=PLAYBOOK,
            tasks=list(tasks),
            topics=list(topics),
            pending=list(pending),
            offered=TOOLS,
            first_contact=first_contact,
        )
    )


# a reminder just proposed, and an older proposal still waiting: what a short follow-up is read against
REMINDER = {
    "id": 4,
    "just_asked": True,
    "items": [{"position": 1, "description": "Remind you once, Mon 11 Jan 2027 10:00: call Bob"}],
}
OLDER = {"id": 3, "items": [{"position": 1, "description": "New task: Pay rent — due Fri 8 Jan 2027"}]}


def read(text: str, pending=(), tasks=(), topics=()):
    """The answer to `text` as the provider reads it: its request (politeness and framing off), then the rules."""
    return answer(phrases.request_of(text, NOW, BERLIN), list(pending), list(tasks), list(topics))
