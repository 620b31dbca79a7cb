"""Reminders a user lets pass may thin, once the user agrees: heads-ups (the reminders before a due) about a
kind of task that the user let pass on three nights become a belief, which the night offers as a proposal
with its evidence; only once approved does the tick keep only the due and overdue reminders for that kind,
traced with the memory. A heads-up counts as let pass only when its task was then done late or not at all
and the user answered other messages around it: silence alone, or a task done on time, is no evidence. A
heads-up acted on refutes it, and forgetting it brings the heads-ups back."""

from __future__ import annotations

from datetime import timedelta

import pytest

from actors.hippocampus import advice as hippocampus_advice, consent
from actors.hippocampus.nightly import consolidate
from actors.hippocampus.skill import forget
from actors.deadlines import plan_task, scan_deadlines, task_windows
from storage import inbox, outbox, trace
from storage.models import Feedback, Memory, Outbox, Task, Turn
from tests.hippocampus_support import FakeSynapse, at, night
from wilson.kernel.clock import UTC

WINDOWS = ["7d", "1d", "due", "overdue"]
BELIEF = "user lets early reminders about bill payment pass"


@pytest.fixture
def db(any_db):
    return any_db


def told(
    title: str, window: str, day: str, *, acted: bool = False, answering: bool = True, done_on_time: bool = False
) -> Task:
    """A task due the next day with a reminder about it delivered at 09:00 on `day` (as the tick and cortex
    leave it); `answering`: the user wrote to Wilson about something else that day."""
    task = Task.create(
        title=title, due=at(day, 0) + timedelta(days=1), due_is_date=True, created_at=at(day) - timedelta(days=20)
    )
    if done_on_time:
        Task.update(status="done", completed_at=at(day, 20)).where(Task.id == task.id).execute()
    if answering:
        Turn.create(channel="repl", role="user", text="what's the weather tomorrow?", created_at=at(day, 11))
    run = inbox.add(
        source="tick",
        text=f"{title}: {window}",
        priority=4,
        at=at(day, 9),
        kind="deadline",
        origin="background",
        payload={"task_id": task.id, "window": window},
    )
    box = outbox.add(
        channel="repl",
        text=f"Reminder: {title}",
        trace_id=run.trace_id,
        key=f"surface:{run.id}:0",
        at=at(day, 9),
        payload={"tasks": [task.id]},
    )
    Outbox.update(status="delivered", delivered_at=at(day, 9)).where(Outbox.id == box.id).execute()
    if acted:
        Feedback.create(outbox_id=box.id, kind="reaction", value="✅", at=at(day, 10))
    return task


def approve_learning(now) -> list[str]:
    """The user says yes to every change the nights offered (the gate's execution of each proposal)."""
    offered = consent.offers(now, hippocampus_advice.HOLD_BACK_AT)
    for _, change in offered:
        consent.adopt(change["key"], True, None, change["does"], now)
    return [change["does"] for _, change in offered]


def nights_of_bills(*, acted_on: int | None = None, window: str = "7d") -> None:
    for n, day in enumerate(("2027-01-04", "2027-01-11", "2027-01-18", "2027-01-25")):
        told(f"Pay the electricity bill #{n}", window, day, acted=n == acted_on)
        consolidate(night(day) + timedelta(days=2), FakeSynapse())


def test_heads_ups_let_pass_on_three_nights_leave_only_the_due_and_overdue_reminders_once_approved(db):
    nights_of_bills()
    assert hippocampus_advice.reminder_advice("Pay the water bill") is None  # learned, not yet agreed
    assert approve_learning(at("2027-02-01")) == ["remind you of bill payment only when it is due"]
    advice = hippocampus_advice.reminder_advice("Pay the water bill")
    assert advice is not None and advice["text"] == BELIEF
    water = Task.create(
        title="Pay the water bill", due=at("2027-03-01", 0), due_is_date=True, created_at=at("2027-02-01")
    )
    assert task_windows(water, WINDOWS) == ["due", "overdue"]
    plan_task(water, at("2027-02-01"), WINDOWS, UTC)
    assert water.next_window == "due"  # no "in 7 days", no "tomorrow"
    other = Task.create(title="Book flights", due=at("2027-03-01", 0), due_is_date=True, created_at=at("2027-02-01"))
    assert task_windows(other, WINDOWS) == WINDOWS  # another kind keeps its heads-ups
    own = Task.create(
        title="Pay rent",
        due=at("2027-03-01", 0),
        due_is_date=True,
        created_at=at("2027-02-01"),
        escalation=["3d", "due"],
    )
    assert task_windows(own, WINDOWS) == ["3d", "due"]  # chosen for the task: memory does not overrule it

    [fired] = scan_deadlines(at("2027-03-01", 10), UTC, WINDOWS)  # the due reminder fires, and says why so quiet
    reasons = [t.reason for t in trace.path(inbox.Inbox.get_by_id(fired).trace_id)]
    assert any(f"heads-ups left out: memory {advice['memory']} ({BELIEF})" in r for r in reasons)


def test_a_heads_up_acted_on_refutes_the_belief_and_reminders_on_the_day_are_no_evidence(db):
    nights_of_bills(acted_on=3)  # three let pass, then one answered with a ✅ within the day
    assert hippocampus_advice.reminder_advice("Pay the water bill") is None
    Task.delete().execute()


def test_due_day_reminders_let_pass_are_not_evidence_against_heads_ups(db):
    nights_of_bills(window="due")
    assert hippocampus_advice.reminder_advice("Pay the water bill") is None


def test_silence_alone_and_tasks_done_on_time_are_no_evidence_that_heads_ups_were_unwanted(db):
    for n, day in enumerate(("2027-01-04", "2027-01-11", "2027-01-18", "2027-01-25")):
        told(f"Pay the electricity bill #{n}", "7d", day, answering=False)  # away: said nothing at all
        consolidate(night(day) + timedelta(days=2), FakeSynapse())
    for n, day in enumerate(("2027-02-01", "2027-02-08", "2027-02-15", "2027-02-22")):
        told(f"Pay the gas bill #{n}", "7d", day, done_on_time=True)  # chatting, never answered it, did it in time
        consolidate(night(day) + timedelta(days=2), FakeSynapse())
    learned = [m.text for m in Memory.select().where(Memory.invalidated_at.is_null())]
    assert not [t for t in learned if "pass" in t], learned
    assert consent.offers(at("2027-03-01"), hippocampus_advice.HOLD_BACK_AT) == []


def test_forgetting_the_belief_brings_the_heads_ups_back(db):
    nights_of_bills()
    approve_learning(at("2027-02-01"))
    advice = hippocampus_advice.reminder_advice("Pay the water bill")
    forget(advice["memory"], night("2027-02-01"), "I want the week-ahead reminders")
    water = Task.create(
        title="Pay the water bill", due=at("2027-03-01", 0), due_is_date=True, created_at=at("2027-02-01")
    )
    assert task_windows(water, WINDOWS) == WINDOWS


KINDS = ("Pay the electricity bill", "Book flights", "Renew passport")  # three kinds of task
ANY = "Remind about tasks only when they are due"


def nights_of_three_kinds(days=("2027-01-04", "2027-01-11")) -> None:
    for n, day in enumerate(days):
        for title in KINDS:
            told(f"{title} #{n}", "7d", day)
        consolidate(night(day) + timedelta(days=2), FakeSynapse())


def test_heads_ups_let_pass_about_three_kinds_of_task_are_left_out_for_every_kind(db):
    nights_of_three_kinds()
    assert hippocampus_advice.reminder_advice("Buy a birthday present", "Anna's birthday") is None
    assert "remind you of tasks only when they are due" in approve_learning(at("2027-02-01"))
    advice = hippocampus_advice.reminder_advice("Buy a birthday present", "Anna's birthday")
    assert advice is not None and advice["text"] == ANY  # a kind never reminded of before
    groceries = Task.create(
        title="Buy a birthday present", due=at("2027-03-01", 0), due_is_date=True, created_at=at("2027-02-01")
    )
    assert task_windows(groceries, WINDOWS) == ["due", "overdue"]
    [principle] = Memory.select().where((Memory.kind == "principle") & (Memory.text == ANY))
    beliefs = Memory.select().where((Memory.kind == "belief") & Memory.text.startswith("user lets early reminders"))
    assert sorted(principle.provenance) == sorted(f"memory:{b.id}" for b in beliefs) and len(beliefs) == 3


def test_two_kinds_are_not_a_habit_of_every_kind(db):
    for n, day in enumerate(("2027-01-04", "2027-01-11")):
        for title in KINDS[:2]:
            told(f"{title} #{n}", "7d", day)
        consolidate(night(day) + timedelta(days=2), FakeSynapse())
    assert hippocampus_advice.reminder_advice("Buy a birthday present") is None


def test_one_heads_up_acted_on_brings_every_kinds_heads_ups_back_and_the_same_beliefs_do_not_undo_that(db):
    nights_of_three_kinds()
    told("Call the plumber", "7d", "2027-01-18", acted=True)  # a fourth kind, answered with a ✅
    consolidate(night("2027-01-18") + timedelta(days=2), FakeSynapse())
    assert hippocampus_advice.reminder_advice("Buy a birthday present") is None
    consolidate(night("2027-01-25") + timedelta(days=2), FakeSynapse())  # the three beliefs are still there
    assert hippocampus_advice.reminder_advice("Buy a birthday present") is None


def test_forgetting_the_principle_brings_every_kinds_heads_ups_back(db):
    nights_of_three_kinds()
    approve_learning(at("2027-02-01"))
    advice = hippocampus_advice.reminder_advice("Buy a birthday present")
    forget(advice["memory"], night("2027-02-01"), "I do want the week-ahead reminders")
    consolidate(night("2027-02-08"), FakeSynapse())
    assert hippocampus_advice.reminder_advice("Buy a birthday present") is None


def test_the_principle_is_not_made_on_a_night_that_refutes_it_nor_ever_again_once_forgotten(db):
    for n, day in enumerate(("2027-01-04", "2027-01-11")):
        for title in KINDS:
            told(f"{title} #{n}", "7d", day)
        if n == 1:
            told("Call the plumber", "7d", day, acted=True)  # the same night: a heads-up acted on
        consolidate(night(day) + timedelta(days=2), FakeSynapse())
    assert hippocampus_advice.reminder_advice("Buy a birthday present") is None

    told("Pack for the trip #0", "7d", "2027-01-18")  # the next night refutes nothing: now it is made
    consolidate(night("2027-01-18") + timedelta(days=2), FakeSynapse())
    approve_learning(at("2027-01-21"))
    advice = hippocampus_advice.reminder_advice("Buy a birthday present")
    assert advice is not None and advice["text"] == ANY
    forget(advice["memory"], night("2027-01-25"), "I do want the week-ahead reminders")
    for n, day in enumerate(("2027-02-01", "2027-02-08")):  # a fifth kind let pass on two nights
        told(f"Renew the gym membership #{n}", "7d", day)
        consolidate(night(day) + timedelta(days=2), FakeSynapse())
    assert hippocampus_advice.reminder_advice("Buy a birthday present") is None


def test_a_kind_followed_up_only_ahead_of_its_day_keeps_its_nearest_heads_up(db):
    nights_of_three_kinds()
    approve_learning(at("2027-02-01"))
    gift = Task.create(
        title="Buy a birthday present", due=at("2027-03-01", 0), due_is_date=True, created_at=at("2027-02-01")
    )
    assert task_windows(gift, ["7d", "1d"]) == ["1d"]  # never no reminder at all
