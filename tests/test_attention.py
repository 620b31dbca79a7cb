"""Attention is a budget: sixty days of a life with a trip, a dentist and a birthday.

The scenario is the Trip-to-Japan story (tests/test_japan.py) with two more calendar
entries and a user who approves what is proposed and finishes a task now and then.
What is counted are the messages Wilson sends without being asked: surfaced
follow-ups and heads-ups, morning briefings, and proposals from background runs.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from channels.calendar import add_event
from storage.models import Approval, Inbox, Outbox, Task
from wilson import attention, quiet
from wilson.attention import Placement, place

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
    for row in (Outbox.select().where((Outbox.status == "delivered") & (Outbox.surfaced == True)  # noqa: E712
                                      & (Outbox.channel != "silent")).order_by(Outbox.delivered_at, Outbox.id)):
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
    add_event(calendar, "Dentist appointment", datetime(2027, 2, 9, 10, 0, tzinfo=tz),
              datetime(2027, 2, 9, 11, 0, tzinfo=tz), "Dr. Weiss", tz=tz)
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
    print(f"\n{len(messages)} proactive messages in {DAYS} days "
          f"({sum(1 for r in messages if r.idempotency_key.startswith('briefing:'))} briefings)")
    for day, rows in sorted(per_day.items()):
        print(day, [r.text.splitlines()[0][:70] for r in rows])
    # Measured on the same scenario before the attention budget: 59 (windows 14d,7d,3d,1d,due,overdue,
    # each follow-up its own message, no briefing). Now 29; the bound leaves room for wording only.
    assert len(messages) <= 30
    cap = app.config.get("attention", "max_per_day")
    for day, rows in per_day.items():
        interruptions = [r for r in rows if r.idempotency_key.startswith(("surface:", "followups:"))]
        assert len(interruptions) <= cap, (day, [r.text for r in interruptions])
        assert sum(1 for r in rows if r.idempotency_key.startswith("briefing:")) <= 1
    start, end = quiet.parse_window(app.config.get("core", "quiet_hours"))
    for row in messages:
        wall = row.delivered_at.astimezone(tz).time()
        assert not (wall >= start or wall < end), f"non-urgent message in quiet hours: {row.text!r}"
    dentist = Outbox.get(Outbox.idempotency_key == "briefing:2027-02-09").text
    assert "10:00–11:00 Dentist appointment" in dentist and "Book flights" in dentist


# The placement rule, without threads --------------------------------------------------
NOW = datetime(2027, 1, 5, 10, 0, tzinfo=quiet.UTC)
MORNING = datetime(2027, 1, 6, 6, 0, tzinfo=quiet.UTC)


def test_under_the_cap_a_message_goes_now_and_over_it_waits_for_the_briefing():
    assert place(urgent=False, over_cap_ok=False, quiet_end=None, spent=2, cap=3).action == "now"
    assert place(urgent=False, over_cap_ok=False, quiet_end=None, spent=3, cap=3).action == "waiting"
    assert place(urgent=False, over_cap_ok=False, quiet_end=None, spent=3, cap=3, briefing=False,
                 next_morning=MORNING) == Placement("held", MORNING, place(
                     urgent=False, over_cap_ok=False, quiet_end=None, spent=3, cap=3, briefing=False,
                     next_morning=MORNING).reason)


def test_urgent_breaks_cap_and_quiet_hours_while_triage_urgency_breaks_only_the_cap():
    assert place(urgent=True, over_cap_ok=False, quiet_end=MORNING, spent=9, cap=3).action == "now"
    assert place(urgent=False, over_cap_ok=True, quiet_end=None, spent=9, cap=3).action == "now"
    held = place(urgent=False, over_cap_ok=True, quiet_end=MORNING, spent=0, cap=3)
    assert (held.action, held.until) == ("held", MORNING)


def test_the_cap_is_counted_per_local_day_from_the_outbox(db):
    from storage import outbox

    tz = ZoneInfo("Europe/Berlin")
    late = datetime(2027, 1, 5, 22, 30, tzinfo=quiet.UTC)  # 23:30 in Berlin: still the 5th
    outbox.add(channel="repl", text="a", trace_id="t1", key="surface:1:0", at=NOW)
    outbox.add(channel="repl", text="b", trace_id="t2", key="followups:x", at=late)
    outbox.add(channel="repl", text="c", trace_id="t3", key="surface:3:0", at=late, deliver_after=MORNING)
    outbox.add(channel="repl", text="reply", trace_id="t4", key="reply:4", at=NOW)
    outbox.add(channel="silent", text="", trace_id="t5", key="silent:5", at=NOW, surfaced=False)
    assert attention.interruptions_on(date(2027, 1, 5), tz) == 2
    assert attention.interruptions_on(date(2027, 1, 6), tz) == 1, "a held message counts on the day it arrives"
