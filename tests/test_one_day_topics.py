"""A one-day event's topic (a dentist appointment, a move) is proposed for closing the day after, in that
morning's briefing, with its undone preparation dropped with it; also when Wilson only knows its start (told
in words). A whole Wilson, offline, on a simulated clock."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from storage.models import Approval, ApprovalItem, Task, Topic
from tests.calendar_support import add_event


@pytest.fixture
def app(make_app):
    return make_app(start="2027-01-05T08:00:00+01:00", llm="offline", env={"WILSON_CORE_TIMEZONE": "Europe/Berlin"})


def closing() -> Approval | None:
    return (
        Approval.select()
        .join(ApprovalItem)
        .where((ApprovalItem.tool == "close_topic") & Approval.status.in_(("pending", "partial")))
        .first()
    )


def approve_all(app) -> None:
    for approval in Approval.select().where(Approval.status == "pending"):
        app.decide(approval.id, "approve")
    assert app.wait_idle()


def test_a_dentist_appointment_is_proposed_for_closing_the_next_morning_with_its_preparation(app):
    tz = app.config.timezone
    add_event(
        app.calendar_file(),
        "Dentist appointment",
        datetime(2027, 1, 12, 10, 0, tzinfo=tz),
        datetime(2027, 1, 12, 11, 0, tzinfo=tz),
        "Dr Weiss",
        tz=tz,
    )
    app.advance(timedelta(days=1))
    approve_all(app)
    topic = Topic.get(Topic.title == "Dentist appointment")
    app.advance(timedelta(days=6, hours=3))  # Tue 12 Jan, 11:00: the appointment is over
    assert closing() is None, "not minutes after the appointment"
    app.advance(timedelta(hours=21))  # Wed 08:00
    asked = closing()
    assert asked is not None
    [morning] = [d for d in app.user_deliveries() if d["text"].startswith("Good morning! Your Wed 13 Jan")]
    assert f"Proposal {asked.id}: I'd like to do this" in morning["text"]
    assert "Close topic: Dentist appointment (and drop its 2 open tasks)" in morning["text"]
    app.decide(asked.id, "approve")
    assert app.wait_idle()
    assert Topic.get_by_id(topic.id).status == "closed"
    assert {t.status for t in Task.select().where(Task.topic == topic.id)} == {"cancelled"}


def test_an_appointment_told_in_words_with_only_its_start_is_closed_the_day_after(app):
    app.say("I have a dentist appointment on Friday at 10:00")
    assert app.wait_idle()
    approve_all(app)
    topic = Topic.get()
    assert topic.ends is None and topic.starts is not None
    app.advance(timedelta(days=3, hours=12))  # Fri 20:00
    assert closing() is None
    app.advance(timedelta(hours=12))  # Sat 08:00
    asked = closing()
    assert asked is not None and f"Close topic: {topic.title}" in asked.items.get().description
