"""Talking about tasks: drop, snooze, a one-off reminder, rename, repeats flagged, schedules in words.

Every change is a proposal the user approves; the tick then keeps the time. Offline where
the rules understand the request, the scripted model over HTTP where a model proposes.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from actors import tools
from actors.cortex.calls import RunOutcome, handle_call
from actors.deadlines import plan_task
from storage.models import Approval, ApprovalItem, Schedule, Task, TaskFiring, Topic
from tests.brain import call

START = "2027-01-05T08:00:00+01:00"  # a Tuesday morning in Berlin
BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime.fromisoformat(START)


def approve_latest(app):
    app.say("yes")
    assert app.wait_idle()
    assert Approval.select().order_by(Approval.id.desc()).get().status == "approved"


def said_after(app, count: int, needle: str) -> list[tuple[datetime, str]]:
    """(local time, text) of what reached the user after the first `count` deliveries and mentions `needle`."""
    return [
        (datetime.fromisoformat(d["at"]).astimezone(BERLIN), d["text"])
        for d in app.user_deliveries()[count:]
        if needle in d["text"]
    ]


def taxes(app, due="2027-01-12") -> Task:
    now = app.clock.now()
    task = Task.create(
        title="File taxes", due=datetime.fromisoformat(due).replace(tzinfo=BERLIN), due_is_date=True, created_at=now
    )
    plan_task(task, now, ["7d", "1d", "due", "overdue"], BERLIN)
    return task


# A one-off reminder ---------------------------------------------------------------------------
def test_a_one_off_reminder_fires_once_at_its_time(make_app):
    app = make_app(start=START)
    app.say("remind me tomorrow at 18:00 to call Mum")
    assert app.wait_idle()
    item = ApprovalItem.get()
    assert (item.tool, item.args) == ("remind", {"text": "call Mum", "at": "2027-01-06T18:00:00+01:00"})
    assert item.description == "Remind you once, Wed 6 Jan 2027 18:00: call Mum"
    assert not Schedule.select().where(Schedule.kind == "once").exists(), "nothing before approval"
    approve_latest(app)
    count = len(app.user_deliveries())

    app.advance(timedelta(days=4))

    said = said_after(app, count, "call Mum")
    assert [(at.strftime("%Y-%m-%d %H:%M"), text) for at, text in said] == [("2027-01-06 18:00", "Reminder: call Mum")]
    (schedule,) = Schedule.select().where(Schedule.kind == "once")
    assert not schedule.enabled, "fired once, then off"


def test_a_reminder_for_a_time_already_past_is_refused(db):
    outcome = RunOutcome()
    answer = handle_call("remind", {"text": "call Mum", "at": "2027-01-05T07:00"}, outcome, NOW, BERLIN)
    assert "already passed" in answer["error"] and outcome.proposals == []


# Snooze -----------------------------------------------------------------------------------------
def test_a_snoozed_follow_up_comes_back_at_the_new_time(make_app):
    app = make_app(start=START)
    task = taxes(app)
    app.advance(timedelta(hours=2))  # the 7-day follow-up, Tue 5 Jan 09:00
    assert [f.window for f in TaskFiring.select()] == ["7d"]

    app.say("snooze taxes until 2027-01-08 18:00")
    assert app.wait_idle()
    assert ApprovalItem.select().order_by(ApprovalItem.id.desc()).get().args == {
        "task_id": task.id,
        "until": "2027-01-08T18:00:00+01:00",
    }
    approve_latest(app)
    count = len(app.user_deliveries())
    app.advance(timedelta(days=3, hours=7, minutes=59))  # Fri 8 Jan 17:59: still asleep
    assert said_after(app, count, "File taxes") == []
    assert Task.get_by_id(task.id).status == "snoozed"

    app.advance(timedelta(minutes=2))
    back = said_after(app, count, "File taxes")
    assert [(at.strftime("%a %H:%M"), text) for at, text in back] == [
        ("Fri 18:00", "Reminder: “File taxes” is back, as you asked (due Tue 12 Jan)")
    ]
    assert Task.get_by_id(task.id).status == "open"

    app.advance(timedelta(days=3))  # the rest of the plan goes on as before: the day-before follow-up
    assert [f.window for f in TaskFiring.select().order_by(TaskFiring.id)] == ["7d", "1d"]
    assert len(said_after(app, count, "File taxes")) == 2


def test_a_snooze_past_a_window_comes_back_once_not_twice(make_app):
    app = make_app(start=START)
    task = taxes(app, due="2027-01-08")  # 1d window: Thu 7 Jan 09:00
    app.say("snooze taxes until 2027-01-07 12:00")
    assert app.wait_idle()
    approve_latest(app)
    count = len(app.user_deliveries())
    app.advance(timedelta(days=2, hours=6))  # to Thu 7 Jan 14:00

    woke = said_after(app, count, "File taxes")
    assert len(woke) == 1 and woke[0][0].strftime("%a %H:%M") == "Thu 12:00"
    assert [f.window for f in TaskFiring.select().where(TaskFiring.task == task.id)] == ["1d"]


# Drop and rename --------------------------------------------------------------------------------
def test_dropping_a_task_stops_its_follow_ups(make_app):
    app = make_app(start=START)
    task = taxes(app, due="2027-01-20")
    app.say("drop the taxes task")
    assert app.wait_idle()
    item = ApprovalItem.get()
    assert (item.tool, item.description) == (
        "cancel_task",
        "Drop task: File taxes (due Wed 20 Jan 2027) — no more follow-ups",
    )
    assert Task.get_by_id(task.id).status == "open", "nothing before approval"
    approve_latest(app)
    count = len(app.user_deliveries())
    app.advance(timedelta(days=20))
    assert Task.get_by_id(task.id).status == "cancelled"
    assert said_after(app, count, "File taxes") == [] and not TaskFiring.select().exists()


def test_renaming_a_topic(make_app):
    app = make_app(start=START)
    topic = Topic.create(title="Trip", status="active", created_at=app.clock.now(), thread_ref="77")
    app.say("rename trip to Trip to Japan")
    assert app.wait_idle()
    assert ApprovalItem.get().description == "Rename topic: Trip → “Trip to Japan”"
    approve_latest(app)
    assert Topic.get_by_id(topic.id).title == "Trip to Japan"
    assert ApprovalItem.get().result["renamed"] == {"from": "Trip", "to": "Trip to Japan", "thread_ref": "77"}


# Repeats ------------------------------------------------------------------------------------------
def test_a_proposal_that_repeats_an_open_task_or_topic_says_so(scripted):
    calls = [
        call("create_task", title="File my taxes", due="2027-01-25"),
        call("create_topic", title="Japan trip"),
        call("create_task", title="Book flights", topic="Trip to Japan"),
    ]
    app, server = scripted(lambda context, body: {"tool_calls": calls})
    now = app.clock.now()
    Task.create(title="File taxes", due=datetime(2027, 1, 25, tzinfo=BERLIN), due_is_date=True, created_at=now)
    Topic.create(title="Trip to Japan", status="active", created_at=now, starts=datetime(2027, 4, 10, tzinfo=BERLIN))
    rome = Topic.create(title="Trip to Rome", status="active", created_at=now)
    Task.create(title="Book flights", topic=rome, created_at=now)  # another trip's: not a repeat

    app.say("sort out my taxes and the Japan trip")
    assert app.wait_idle()

    assert [i.description for i in ApprovalItem.select().order_by(ApprovalItem.position)] == [
        "New task: File my taxes — due Mon 25 Jan 2027 — you already have “File taxes” due Mon 25 Jan 2027",
        "New topic: Japan trip — you already have the topic “Trip to Japan” (Sat 10 Apr 2027)",
        "New task: Book flights (in Trip to Japan)",
    ]
    answers = [json.loads(m["content"]) for m in server.requests[-1]["body"]["messages"] if m["role"] == "tool"]
    assert [a.get("repeats", {}).get("title") for a in answers] == ["File taxes", "Trip to Japan", None]


@pytest.mark.parametrize(
    "a, b, same",
    [
        ("File taxes", "file my taxes", True),
        ("Book flights", "Book accommodation", False),
        ("Buy travel insurance", "Buy insurance", True),
        ("Pack", "Pack bags", True),
        ("Check passport validity", "Check visa and entry requirements", False),
    ],
)
def test_similar_titles(a, b, same):
    assert tools.similar_titles(a, b) is same


# Schedules in words --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "cron, words",
    [
        ("0 9 * * 0", "at 09:00, only on Sunday"),
        ("0 9 1-7 * 1", "at 09:00, on the first Monday of the month"),  # how the tick spells it: days 1-7 AND Monday
        ("30 18 * * *", "at 18:30"),
        ("0 9 15 * 5", "at 09:00, on day 15 of the month, and only on Friday"),
        ("not a cron", "not a cron"),
    ],
)
def test_cron_in_words(cron, words):
    assert tools.describe_cron(cron) == words


def test_reminders_are_shown_in_words(make_app):
    app = make_app(start=START)
    app.say("remind me every first Monday: pay rent")
    assert app.wait_idle()
    assert ApprovalItem.get().description == "New reminder: pay rent (at 09:00, on the first Monday of the month)"
    approve_latest(app)
    app.say("remind me tomorrow at 18:00 to call Mum")
    assert app.wait_idle()
    approve_latest(app)

    outcome = RunOutcome()
    listed = handle_call("list_reminders", {}, outcome, app.clock.now(), BERLIN)
    assert [{k: v for k, v in r.items() if k != "id"} for r in listed] == [
        {"text": "call Mum", "when": "once, Wed 6 Jan 2027 18:00", "next": "Wed 6 Jan 2027 18:00", "kind": "once"},
        {
            "text": "pay rent",
            "when": "at 09:00, on the first Monday of the month",
            "next": "Mon 1 Feb 2027 09:00",
            "kind": "reminder",
        },
    ]
    # each with the id cancel_reminder takes
    assert [r["id"] for r in listed] == [Schedule.get(Schedule.text == t).id for t in ("call Mum", "pay rent")]


@pytest.mark.parametrize(
    "starts, ends, shown",
    [
        # a dentist's hour said the last day's date with no hours ("Thu 7 Jan 2027 10:30 – Thu 7 Jan 2027")
        ("2027-01-07T10:30:00+01:00", "2027-01-07T11:15:00+01:00", "Thu 7 Jan 2027 10:30–11:15"),
        # a birthday was "Tue 12 Jan 2027 – Tue 12 Jan 2027"
        ("2027-01-12", "2027-01-12", "Tue 12 Jan 2027"),
        ("2027-01-12T00:00:00+01:00", "2027-01-13T00:00:00+01:00", "Tue 12 Jan 2027"),  # an exclusive all-day end
        ("2027-04-10", "2027-04-24", "Sat 10 Apr 2027 – Sat 24 Apr 2027"),
        ("2027-04-10T10:00:00+02:00", "2027-04-24T18:00:00+02:00", "Sat 10 Apr 2027 10:00 – Sat 24 Apr 2027"),
        # the days the clocks change: an all-day end is the local midnight, not 24 hours later
        ("2027-10-31T00:00:00+02:00", "2027-11-01T00:00:00+01:00", "Sun 31 Oct 2027"),
        ("2027-03-28T00:00:00+01:00", "2027-03-29T00:00:00+02:00", "Sun 28 Mar 2027"),
    ],
)
def test_a_topics_span_shows_one_day_once_and_its_hours_beside_it(starts, ends, shown):
    assert tools.show_span(starts, ends, BERLIN) == shown


def test_a_topic_read_by_the_model_ends_on_its_last_day_when_the_clocks_change(scripted):
    # stored as the midnight after; 24 hours back from it is the day before on 28 Mar, a 23-hour day
    topic = Topic.create(
        title="Trip to Lisbon",
        starts=datetime.fromisoformat("2027-03-25T00:00:00+01:00"),
        ends=datetime.fromisoformat("2027-03-29T00:00:00+02:00"),
        created_at=NOW,
    )
    assert tools.topic_view(topic, BERLIN)["ends"] == "2027-03-28"


# The user's own quiet time -------------------------------------------------------------------------
def test_a_task_proposed_with_its_own_follow_ups_is_made_with_them_and_says_so(db):
    outcome = RunOutcome()
    answer = handle_call(
        "create_task", {"title": "Pay GEMA", "due": "2027-01-19", "escalation": "due,overdue"}, outcome, NOW, BERLIN
    )
    assert answer["status"] == "proposed"
    ((name, args, description),) = outcome.proposals
    assert description == "New task: Pay GEMA — due Tue 19 Jan 2027, not followed up before its day"
    bad = handle_call("create_task", {"title": "Pay GEMA", "escalation": "sometimes"}, RunOutcome(), NOW, BERLIN)
    assert "escalation needs windows" in bad["error"]


def test_a_yes_that_says_not_before_then_is_followed_up_only_on_the_day(make_app):
    app = make_app(start=START)
    app.say("add pay the chimney sweep 64,30 € by friday the 15th")
    assert app.wait_idle()
    app.say("ja, aber erst für den 21., vorher ist das Konto leer. nerv mich vorher nicht damit")
    assert app.wait_idle()
    task = Task.get()
    assert task.escalation == ["due", "overdue"] and f"{task.due.astimezone(BERLIN):%Y-%m-%d}" == "2027-01-21"
    count = len(app.user_deliveries())
    app.advance(timedelta(days=17))
    told = said_after(app, count, "chimney")
    assert told and min(at for at, _ in told).date().isoformat() == "2027-01-21", told  # nothing before its day
