"""Attention is a budget: sixty days of a life with a trip, a dentist and a birthday.

The scenario is the Trip-to-Japan story (tests/test_japan.py) with two more calendar
entries and a user who approves what is proposed and finishes a task now and then.
What is counted are the messages Wilson sends without being asked: surfaced
follow-ups and heads-ups, morning briefings, and proposals from background runs.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from actors import attention
from actors.attention import Placement, place
from storage.models import Approval, Inbox, Outbox, Task
from tests.calendar_support import add_event
from wilson.kernel import quiet
from wilson.kernel.clock import UTC

TRIP = "Trip to Japan"
START = "2027-01-05T08:00:00+01:00"
DAYS = 60


def _background_proposal(row: Outbox) -> bool:
    approval = Approval.get_or_none(Approval.id == int(row.idempotency_key.split(":")[1]))
    origin = Inbox.select(Inbox.origin).where(Inbox.id == approval.inbox_id).scalar() if approval else None
    return origin == "background"


def proactive_messages() -> list[Outbox]:
    """Delivered rows nobody asked for, oldest first."""
    rows = []
    for row in (
        Outbox.select()
        .where((Outbox.status == "delivered") & (Outbox.surfaced == True) & (Outbox.channel != "silent"))
        .order_by(Outbox.delivered_at, Outbox.id)
    ):
        key = row.idempotency_key
        if key.startswith(("surface:", "followups:", "briefing:")):
            rows.append(row)
        elif key.startswith("proposal:") and ":again:" not in key and _background_proposal(row):
            rows.append(row)
    return rows


def live_sixty_days(app) -> None:
    tz = app.config.timezone
    calendar = app.calendar_file()
    add_event(calendar, TRIP, date(2027, 4, 10), date(2027, 4, 24), "Tokyo", tz=tz)
    add_event(
        calendar,
        "Dentist appointment",
        datetime(2027, 2, 9, 10, 0, tzinfo=tz),
        datetime(2027, 2, 9, 11, 0, tzinfo=tz),
        "Dr. Weiss",
        tz=tz,
    )
    add_event(calendar, "Anna's birthday", date(2027, 2, 20), date(2027, 2, 20), tz=tz)
    app.wait_idle()
    for day in range(DAYS):
        app.advance(timedelta(days=1))
        for approval in list(Approval.select().where(Approval.status == "pending")):
            app.decide(approval.id, "approve")  # a user who says yes to what is proposed
        app.wait_idle()
        if day in (12, 40):  # now and then a task gets done
            first = Task.select().where(Task.status == "open").order_by(Task.due).first()
            if first is not None:
                app.say(f"done with {first.title.split()[-1].lower()}")
                app.wait_idle()
                for approval in list(Approval.select().where(Approval.status == "pending")):
                    app.decide(approval.id, "approve")
                app.wait_idle()


def test_sixty_days_of_life_stay_within_the_attention_budget(make_app):
    app = make_app(start=START, llm="offline")
    live_sixty_days(app)
    tz = app.config.timezone
    messages = proactive_messages()
    per_day: dict[date, list[Outbox]] = {}
    for row in messages:
        per_day.setdefault(row.delivered_at.astimezone(tz).date(), []).append(row)
    print(
        f"\n{len(messages)} proactive messages in {DAYS} days "
        f"({sum(1 for r in messages if r.idempotency_key.startswith('briefing:'))} briefings)"
    )
    for day, rows in sorted(per_day.items()):
        print(day, [r.text.splitlines()[0][:70] for r in rows])
    # Measured on the same scenario before the attention budget: 59 (windows 14d,7d,3d,1d,due,overdue,
    # each follow-up its own message, no briefing). Then 29 with bundling, the cap and the briefing; now 25,
    # since the plans of the morning's sync, the night's plans and that day's heads-ups arrive inside the
    # briefing.
    assert len(messages) <= 25
    cap = app.config.get("attention", "max_per_day")
    for day, rows in per_day.items():
        interruptions = [r for r in rows if r.idempotency_key.startswith(("surface:", "followups:"))]
        assert len(interruptions) <= cap, (day, [r.text for r in interruptions])
        assert sum(1 for r in rows if r.idempotency_key.startswith("briefing:")) <= 1
    start, end = quiet.parse_window(app.config.get("core", "quiet_hours"))
    for row in messages:
        wall = row.delivered_at.astimezone(tz).time()
        assert not (wall >= start or wall < end), f"non-urgent message in quiet hours: {row.text!r}"
    # the three plans of the first morning came as one message: its briefing
    assert [r.idempotency_key for r in per_day[date(2027, 1, 6)]] == ["briefing:2027-01-06"]
    assert per_day[date(2027, 1, 6)][0].text.count("I'd like to do this") == 3
    dentist = Outbox.get(Outbox.idempotency_key == "briefing:2027-02-09").text
    assert "10:00–11:00 Dentist appointment" in dentist and "Book flights" in dentist


# The placement rule, without threads --------------------------------------------------
NOW = datetime(2027, 1, 5, 10, 0, tzinfo=UTC)
MORNING = datetime(2027, 1, 6, 6, 0, tzinfo=UTC)


def test_under_the_cap_a_message_goes_now_and_over_it_waits_for_the_briefing():
    assert place(urgent=False, over_cap_ok=False, quiet_end=None, spent=2, cap=3).action == "now"
    assert place(urgent=False, over_cap_ok=False, quiet_end=None, spent=3, cap=3).action == "waiting"
    assert place(
        urgent=False, over_cap_ok=False, quiet_end=None, spent=3, cap=3, briefing=False, next_morning=MORNING
    ) == Placement(
        "held",
        MORNING,
        place(
            urgent=False, over_cap_ok=False, quiet_end=None, spent=3, cap=3, briefing=False, next_morning=MORNING
        ).reason,
        by_cap=True,
    )


def test_urgent_breaks_cap_and_quiet_hours_while_triage_urgency_breaks_only_the_cap():
    assert place(urgent=True, over_cap_ok=False, quiet_end=MORNING, spent=9, cap=3).action == "now"
    assert place(urgent=False, over_cap_ok=True, quiet_end=None, spent=9, cap=3).action == "now"
    held = place(urgent=False, over_cap_ok=True, quiet_end=MORNING, spent=0, cap=3)
    assert (held.action, held.until, held.by_cap) == ("held", MORNING, False)


def test_the_cap_is_counted_per_local_day_from_the_outbox(db):
    from storage import outbox

    tz = ZoneInfo("Europe/Berlin")
    late = datetime(2027, 1, 5, 22, 30, tzinfo=UTC)  # 23:30 in Berlin: still the 5th
    outbox.add(channel="repl", text="a", trace_id="t1", key="surface:1:0", at=NOW)
    outbox.add(channel="repl", text="b", trace_id="t2", key="followups:x", at=late)
    outbox.add(channel="repl", text="c", trace_id="t3", key="surface:3:0", at=late, deliver_after=MORNING)
    outbox.add(channel="repl", text="reply", trace_id="t4", key="reply:4", at=NOW)
    outbox.add(channel="silent", text="", trace_id="t5", key="silent:5", at=NOW, surfaced=False)
    assert attention.interruptions_on(date(2027, 1, 5), tz) == 2
    assert attention.interruptions_on(date(2027, 1, 6), tz) == 1, "a held message counts on the day it arrives"


# "On it" ---------------------------------------------------------------------------


def test_on_it_is_recognised_as_the_whole_message_only():
    for said in ("on it", "On it!", "I'm on it", "I’m on it 👍", "ok, working on it", "will do, thanks"):
        assert attention.is_on_it(said), said
    for said in ("what is on it?", "I am working on the report", "on it tomorrow maybe", "done", ""):
        assert not attention.is_on_it(said), said


def _followup(task_id: int, key: str, at: datetime, **kw) -> Outbox:
    from storage import outbox

    return outbox.add(
        channel="repl", text=f"Follow-up {key}", trace_id=key, key=key, at=at, payload={"tasks": [task_id]}, **kw
    )


def _user_says(text: str, at: datetime, **payload) -> Inbox:
    from storage import inbox

    return inbox.add(source="repl", text=text, priority=0, at=at, origin="user", payload=payload or None)


def test_on_it_after_a_follow_up_drops_the_rest_of_that_window_but_not_the_next(db):
    from storage.models import Feedback

    task = Task.create(title="Call the plumber", created_at=NOW)
    told = _followup(task.id, "followups:1d", NOW)
    Outbox.update(status="delivered", delivered_at=NOW).where(Outbox.id == told.id).execute()
    # the same window's second message (the run surfaced two), held for the morning
    same = _followup(task.id, "surface:7:1", NOW, deliver_after=MORNING)
    assert (
        attention.record_ack(_user_says("I'm on it", NOW + timedelta(minutes=5)), NOW + timedelta(minutes=5)) == told.id
    )
    # the next window fires after the acknowledgement, also held for the morning
    following = _followup(task.id, "followups:due", NOW + timedelta(hours=3), deliver_after=MORNING)
    assert attention.drop_stale_held(MORNING) == [same.id]
    assert Outbox.get_by_id(following.id).status == "held", "the next window is still told"
    assert Feedback.get(Feedback.kind == "ack").outbox_id == told.id


def test_on_it_counts_only_as_an_answer_to_a_follow_up(db):
    from storage.models import Feedback

    task = Task.create(title="Call the plumber", created_at=NOW)
    old = _followup(task.id, "followups:7d", NOW - timedelta(days=2))
    Outbox.update(status="delivered", delivered_at=NOW - timedelta(days=2)).where(Outbox.id == old.id).execute()
    assert attention.record_ack(_user_says("on it", NOW), NOW) is None, "two days later it answers nothing"
    replied = _user_says("on it", NOW, reply_to={"outbox_id": old.id, "from_wilson": True})
    assert attention.record_ack(replied, NOW) == old.id, "a reply names the follow-up however old"
    assert attention.record_ack(replied, NOW) == old.id and Feedback.select().count() == 1, "once per message"
    assert attention.acknowledged([task.id], NOW - timedelta(days=2)) == {task.id}
    assert attention.record_ack(_user_says("what's on the list?", NOW), NOW) is None
    heads_up = Outbox.create(
        channel="repl",
        text="Heads-up",
        trace_id="h",
        idempotency_key="surface:9:0",
        status="delivered",
        created_at=NOW,
        delivered_at=NOW,
        payload={},
    )
    assert heads_up.id and attention.record_ack(_user_says("on it", NOW), NOW) is None, (
        "the latest message Wilson sent unasked was no follow-up"
    )


def test_on_it_typed_after_a_follow_up_is_recorded_and_the_next_window_still_comes(make_app):
    from actors.deadlines import plan_task
    from storage.models import Feedback

    app = make_app(start="2027-01-05T08:00:00+01:00", llm="offline")
    tz = app.config.timezone
    now = app.clock.now()
    task = Task.create(
        title="Call the plumber", due=datetime(2027, 1, 7, 21, 0, tzinfo=tz), created_at=now, escalation=["1d", "due"]
    )
    plan_task(task, now, ["1d", "due"], tz)
    app.advance(timedelta(days=1, hours=13, minutes=5))  # to 21:05 on the 6th: the 1d follow-up is out
    told = [r for r in proactive_messages() if task.id in (r.payload or {}).get("tasks", [])]
    assert len(told) == 1
    app.say("on it")
    app.wait_idle()
    assert [f.outbox_id for f in Feedback.select().where(Feedback.kind == "ack")] == [told[0].id]
    assert "won't chase you" in app.user_deliveries()[-1]["text"]
    app.advance(timedelta(days=1))
    later = [r for r in proactive_messages() if task.id in (r.payload or {}).get("tasks", [])]
    assert len(later) == 2 and "due today" in later[1].text, "the next window is told"


def test_news_of_calendar_events_is_over_when_the_last_of_them_is_over_before_and_after_the_change():
    from types import SimpleNamespace

    def row(*buffers):
        return SimpleNamespace(payload={"buffers": list(buffers)})

    berlin = ZoneInfo("Europe/Berlin")
    tonight = {
        "channel": "calendar",
        "start": "2027-01-05T23:00:00+01:00",
        "end": "2027-01-05T23:30:00+01:00",
        "occurrences": 1,
        "previous": {"start": "2027-01-05T21:00:00+01:00", "end": None},
    }
    moved_on = dict(tonight, start="2027-01-07T10:00:00+01:00", end=None)
    all_day = {"channel": "calendar", "start": "2027-01-04T23:00:00+00:00", "end": "2027-01-06", "all_day": True}
    assert attention.over_at(row(tonight), berlin) == datetime(2027, 1, 5, 22, 30, tzinfo=UTC)
    assert attention.over_at(row(tonight, moved_on), berlin) == datetime(2027, 1, 7, 9, 0, tzinfo=UTC)
    assert attention.over_at(row(all_day), berlin) == datetime(2027, 1, 5, 23, 0, tzinfo=UTC)  # Berlin's midnight
    endless = dict(all_day, end=None)  # an all-day event without DTEND lasts its day
    assert attention.over_at(row(endless), berlin) == datetime(2027, 1, 5, 23, 0, tzinfo=UTC)
    mail = {"channel": "email", "subject": "Dinner tonight?"}
    assert attention.over_at(row(tonight, mail), berlin) is None, "a mail is not over by the clock"
    assert attention.over_at(row(dict(tonight, occurrences=10)), berlin) is None, "a series goes on"
    assert attention.over_at(row(dict(tonight, end="soon", start="later")), berlin) is None, "never guessed"
    assert attention.over_at(SimpleNamespace(payload={}), berlin) is None


def test_a_reminder_asked_for_in_answer_to_a_follow_up_puts_that_task_off(make_app):
    from actors.deadlines import plan_task

    app = make_app(start="2027-03-03T08:00:00+01:00", llm="offline")
    tz = app.config.timezone
    now = app.clock.now()
    task = Task.create(
        title="Get the bike serviced", due=datetime(2027, 3, 26, tzinfo=tz), due_is_date=True, created_at=now
    )
    plan_task(task, now, ["7d", "1d", "due"], tz)
    app.advance(timedelta(days=16, hours=10))  # Friday the 19th, 18:00: the 7-day heads-up went out at 09:00
    told = [r for r in proactive_messages() if task.id in (r.payload or {}).get("tasks", [])]
    assert len(told) == 1 and "due in 7 days" in told[0].text
    app.say("not now, remind me next week instead")  # that evening, naming nothing: the follow-up says what
    app.wait_idle()
    items = [i for a in Approval.select() for i in a.items]
    assert [(i.tool, i.args.get("task_id")) for i in items] == [("snooze_task", task.id)], "no reminder of nothing"
    until = datetime.fromisoformat(items[0].args["until"]).astimezone(tz).date()
    assert date(2027, 3, 22) <= until <= date(2027, 3, 26)
