"""A life shown on the Today page."""

from __future__ import annotations
from datetime import datetime, timedelta
from channels.calendar.editor import add_event
from storage.models import Task, Topic


def at(app, day: str, time: str = "12:00") -> datetime:
    return datetime.fromisoformat(f"{day}T{time}").replace(tzinfo=app.config.timezone)


def a_life(app) -> dict:
    """Tue 5 January 2027, 08:00 in Berlin: a move in three weeks with its preparation half done, a dentist's
    appointment next week, a trip in April, a loose task due tonight."""
    now = app.clock.now()
    move = Topic.create(
        title="Move to Hamburg", created_at=now - timedelta(days=10), starts=at(app, "2027-01-25", "00:00")
    )
    tasks = {
        "notice": Task.create(
            title="Give notice on the flat",
            topic=move,
            due=at(app, "2027-01-04", "00:00"),
            due_is_date=True,
            created_at=now - timedelta(days=10),
        ),
        "boxes": Task.create(
            title="Order boxes",
            topic=move,
            due=at(app, "2027-01-03", "00:00"),
            due_is_date=True,
            status="done",
            completed_at=now - timedelta(days=3),
            created_at=now - timedelta(days=10),
        ),
        "van": Task.create(
            title="Book the van",
            topic=move,
            due=at(app, "2027-01-08", "00:00"),
            due_is_date=True,
            created_at=now - timedelta(days=10),
        ),
        "kitchen": Task.create(
            title="Pack the kitchen",
            topic=move,
            due=at(app, "2027-01-22", "00:00"),
            due_is_date=True,
            created_at=now - timedelta(days=10),
        ),
        "plants": Task.create(title="Water the plants", due=at(app, "2027-01-05", "17:00"), created_at=now),
    }
    trip = Topic.create(title="Trip to Japan", created_at=now, starts=at(app, "2027-04-10", "00:00"))
    tasks["flights"] = Task.create(
        title="Book flights", topic=trip, due=at(app, "2027-03-01", "00:00"), due_is_date=True, created_at=now
    )
    add_event(
        app.calendar_file(),
        "Dentist",
        datetime(2027, 1, 13, 10, 30),
        datetime(2027, 1, 13, 11, 15),
        "Dr. Weber",
        tz=app.config.timezone,
    )
    app.calendar_edited()
    app.advance(timedelta(minutes=6))  # the calendar's poll reads it
    assert app.wait_idle()
    return {"move": move, "trip": trip, **tasks}
