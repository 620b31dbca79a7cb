"""The morning briefing is the day, built by code from the database (no threads, no model)."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from actors import thalamus
from storage.models import Approval, ApprovalItem, Cursor, Outbox, Task, TaskFiring
from tests.conftest import make_config

TZ = ZoneInfo("Europe/Berlin")
MORNING = datetime(2027, 2, 9, 7, 0, tzinfo=TZ)  # Tue 9 Feb, 07:00 local


def snapshot_with(*entries: dict) -> None:
    Cursor.create(name="calendar:test", value={"events": {e["uid"] + "|": e for e in entries}},
                  updated_at=MORNING)


def entry(uid, title, start, end, all_day=False, location=None, status=None) -> dict:
    return {"uid": uid, "recurrence_id": None, "sequence": 0, "title": title, "start": start.isoformat(),
            "end": end.isoformat(), "all_day": all_day, "location": location, "status": status, "doc": ""}


def config(tmp_path, **env):
    return make_config(tmp_path / "home", **env)


def test_the_briefing_lists_events_due_and_overdue_tasks_and_waiting_proposals_in_local_time(db, tmp_path):
    snapshot_with(entry("d", "Dentist", datetime(2027, 2, 9, 10, 0, tzinfo=TZ), datetime(2027, 2, 9, 11, 0, tzinfo=TZ),
                        location="Dr. Weiss"),
                  entry("b", "Anna's birthday", datetime(2027, 2, 9, tzinfo=TZ), datetime(2027, 2, 10, tzinfo=TZ),
                        all_day=True),
                  entry("x", "Cancelled lunch", datetime(2027, 2, 9, 12, 0, tzinfo=TZ),
                        datetime(2027, 2, 9, 13, 0, tzinfo=TZ), status="CANCELLED"),
                  entry("t", "Trip", datetime(2027, 2, 1, tzinfo=TZ), datetime(2027, 2, 12, tzinfo=TZ), all_day=True))
    flights = Task.create(title="Book flights", due=datetime(2027, 2, 9, tzinfo=TZ), due_is_date=True,
                          created_at=MORNING)
    Task.create(title="Call the bank", due=datetime(2027, 2, 9, 15, 30, tzinfo=TZ), created_at=MORNING)
    visa = Task.create(title="Visa", due=datetime(2027, 2, 8, tzinfo=TZ), due_is_date=True, created_at=MORNING)
    Task.create(title="Done already", due=datetime(2027, 2, 9, tzinfo=TZ), due_is_date=True, status="done",
                created_at=MORNING)
    approval = Approval.create(trace_id="t", approver="owner", channel="repl", nonce="n", created_at=MORNING,
                               expires_at=MORNING + timedelta(days=1))
    ApprovalItem.create(approval=approval, position=1, tool="create_task", args={}, description="Add task 'Pack'")

    box = thalamus.write_day_briefing(MORNING, config(tmp_path), compose=False)

    assert box.text.startswith("Good morning! Your Tue 9 Feb:")
    assert "• 10:00–11:00 Dentist (Dr. Weiss)" in box.text  # local time, not UTC
    assert "• Anna's birthday (all day)" in box.text
    assert "Cancelled lunch" not in box.text and "Trip" not in box.text  # cancelled; not its first day
    assert "• Book flights\n" in box.text and "• Call the bank at 15:30" in box.text
    assert "• Visa, was due Mon 8 Feb" in box.text and "Done already" not in box.text
    assert f"• Proposal {approval.id}: Add task 'Pack'" in box.text
    assert Outbox.select().where(Outbox.idempotency_key.startswith("briefing:")).count() == 1
    # what the briefing said is not said again by the tick's follow-ups at 09:00
    told = {(f.task_id, f.window) for f in TaskFiring.select()}
    assert told == {(flights.id, "due"), (visa.id, "overdue")}
    assert Task.get_by_id(flights.id).next_window == "overdue"
    assert thalamus.write_day_briefing(MORNING + timedelta(minutes=5), config(tmp_path), compose=False) is None


def test_a_day_with_nothing_sends_nothing_unless_always(db, tmp_path):
    Task.create(title="Later", due=datetime(2027, 3, 1, tzinfo=TZ), due_is_date=True, created_at=MORNING)
    snapshot_with(entry("n", "Next week", datetime(2027, 2, 16, 9, 0, tzinfo=TZ), datetime(2027, 2, 16, 10, 0, tzinfo=TZ)))
    assert thalamus.write_day_briefing(MORNING, config(tmp_path), compose=False) is None
    assert Outbox.select().count() == 0
    box = thalamus.write_day_briefing(MORNING, config(tmp_path, WILSON_ATTENTION_BRIEFING="always"), compose=False)
    assert box.text == thalamus.NOTHING_TODAY


def test_an_overdue_task_alone_makes_one_briefing_not_one_every_morning(db, tmp_path):
    Task.create(title="Visa", due=datetime(2027, 2, 8, tzinfo=TZ), due_is_date=True, created_at=MORNING)
    assert "Visa" in thalamus.write_day_briefing(MORNING, config(tmp_path), compose=False).text
    assert thalamus.write_day_briefing(MORNING + timedelta(days=1), config(tmp_path), compose=False) is None


def test_follow_ups_kept_back_by_the_cap_are_told_in_the_briefing_once(db, tmp_path):
    from storage import outbox
    from wilson import attention

    kept = outbox.add(channel="repl", text="Heads-up: the parcel is at the post office", trace_id="t",
                      key="surface:9:0", at=MORNING - timedelta(hours=10))
    Outbox.update(status=attention.WAITING).where(Outbox.id == kept.id).execute()
    box = thalamus.write_day_briefing(MORNING, config(tmp_path), compose=False)
    assert "• Heads-up: the parcel is at the post office" in box.text
    assert Outbox.get_by_id(kept.id).status == attention.BRIEFED
