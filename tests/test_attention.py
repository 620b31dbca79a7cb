"""Attention is a budget: sixty days of a life with a trip, a dentist and a birthday.

The scenario is the Trip-to-Japan story (tests/test_japan.py) with two more calendar
entries and a user who approves what is proposed and finishes a task now and then.
What is counted are the messages Wilson sends without being asked: surfaced
follow-ups and heads-ups, morning briefings, and proposals from background runs.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

from channels.calendar import add_event
from storage.models import Approval, Inbox, Outbox, Task
from wilson import quiet

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
