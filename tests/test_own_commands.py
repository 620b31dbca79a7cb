"""The user's own clear command is the approval (DESIGN principle 17): a press on Wilson's own Done, Snooze,
Drop, Stop or Undo button, or a command naming its target ("done 3", "snooze 3 2d"), takes effect at once,
traced and undoable; words Wilson had to interpret ("done with the passport") still become one proposal that
one "yes" approves.

At the terminal (a whole Wilson, offline, on a simulated clock) and on Telegram (the real PTB client against
the fake Bot API server)."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest

from storage import outbox, trace
from storage.models import Approval, Schedule, Task, Trace
from tests.telegram_support import OWNER, approve_japan, keyboard_rows, model, wait_text, wilson  # noqa: F401 (fixtures)
from wilson.app.repl import Repl
from wilson.kernel.messages import Deliver
from tests.repl_support import said


@pytest.fixture
def app(make_app):
    return make_app(start="2027-01-05T08:00:00+01:00")


@pytest.fixture
def repl(app):
    return Repl(app, out=io.StringIO(), as_json=True)


def waiting() -> int:
    return Approval.select().where(Approval.status.in_(("pending", "partial"))).count()


def a_task(app, repl, words: str) -> Task:
    said(app, repl, words)
    said(app, repl, "yes")
    return Task.select().order_by(Task.id.desc()).get()


def test_done_snooze_and_drop_by_number_take_effect_at_once_and_can_be_undone(app, repl):
    task = a_task(app, repl, "add renew the passport by Friday")
    assert said(app, repl, f"done {task.id}") == ["Done:\n✓ Mark done: Renew the passport"]
    assert Task.get_by_id(task.id).status == "done" and waiting() == 0
    assert "your own command, taken as your approval" in Trace.get(Trace.stage == "command").reason
    assert said(app, repl, "undo") == ["Put back:\n✓ Undo: Renew the passport — open again"]
    assert Task.get_by_id(task.id).status == "open" and waiting() == 0

    assert said(app, repl, f"snooze {task.id} 2d") == ["Done:\n✓ Snooze: Renew the passport until Thu 7 Jan 2027"]
    assert Task.get_by_id(task.id).status == "snoozed"
    assert said(app, repl, f"drop {task.id}")[0].startswith("Done:\n✓ Drop task: Renew the passport")
    assert Task.get_by_id(task.id).status == "cancelled" and waiting() == 0


def test_a_command_that_names_nothing_changes_nothing_and_says_why(app, repl):
    assert said(app, repl, "done 42") == ["I have no task 42 (`tasks` lists them)."]
    assert said(app, repl, "stop 1") == ["I have no reminder 1 (`reminders` lists them)."]  # a builtin job
    task = a_task(app, repl, "add call the bank")
    assert said(app, repl, f"snooze {task.id} someday") == [
        "“someday” is not a time I can read: try 2d, 12h or a date like 2027-03-01."]
    assert Task.get_by_id(task.id).status == "open"


def test_stop_ends_a_reminder_in_one_step(app, repl):
    said(app, repl, "remind me every day at 8am to take my pills")
    said(app, repl, "yes")
    reminder = Schedule.get(Schedule.kind == "reminder")
    assert said(app, repl, f"stop {reminder.id}")[0].startswith("Done:\n✓ Stop reminder: take my pills")
    assert not Schedule.get_by_id(reminder.id).enabled and waiting() == 0


def test_words_wilson_interprets_take_one_proposal_and_one_yes(app, repl):
    task = a_task(app, repl, "add check the passport by Friday")
    proposals = Approval.select().count()
    asked = said(app, repl, "done with the passport")
    assert Approval.select().count() == proposals + 1 and "Mark done: Check the passport" in asked[-1]
    assert Task.get_by_id(task.id).status == "open"  # words are read, not obeyed: a proposal first
    assert said(app, repl, "yes")[0].startswith("Done:\n✓ Mark done: Check the passport")
    assert Task.get_by_id(task.id).status == "done" and waiting() == 0


def test_a_follow_up_at_the_terminal_shows_its_one_step_answers(app, repl):
    task = a_task(app, repl, "add pay the rent by Friday")
    app.advance(timedelta(days=3))
    [follow_up] = [d for d in app.user_deliveries() if d.get("tasks")]
    assert follow_up["tasks"] == [task.id] and "rent" in follow_up["text"].lower()
    printed = io.StringIO()
    Repl(app, out=printed).print_delivery(follow_up)
    assert printed.getvalue().rstrip().endswith(f"→ done {task.id} | snooze {task.id} 1d | drop {task.id}")
    assert said(app, repl, f"snooze {task.id} 1d")[0].startswith("Done:\n✓ Snooze: Pay the rent")


def test_the_done_button_under_a_follow_up_marks_it_done_in_one_tap(wilson, fake):  # noqa: F811
    app = wilson()
    approve_japan(fake)
    task = Task.get()
    box = outbox.add(channel="telegram", text=f"Reminder: “{task.title}” is due tomorrow.",
                     trace_id=trace.new_trace_id(), key="test:follow-up", at=app.clock.now(),
                     payload={"tasks": [task.id]})
    app.supervisor.tell("telegram", Deliver(box.id))
    follow_up = wait_text(fake, OWNER, "is due tomorrow")
    [[done, snooze, drop]] = keyboard_rows(follow_up)
    assert (done["text"], snooze["text"], drop["text"]) == ("Done ✓", "Snooze a day 💤", "Drop ✗")
    press = fake.press(OWNER, follow_up, done["callback_data"])
    receipt = wait_text(fake, OWNER, "✓ Mark done:")
    assert fake.answer(press)["text"] == "Marking it done…"
    assert app.wait_idle(10)
    assert Task.get_by_id(task.id).status == "done" and waiting() == 0  # one tap, no second approval
    [[undo]] = keyboard_rows(receipt)
    fake.press(OWNER, receipt, undo["callback_data"])
    fake.wait_for(lambda: Task.get_by_id(task.id).status == "open", 10, "the task open again")


def test_done_typed_in_the_chat_is_a_command_not_a_message_for_the_model(wilson, fake, model):  # noqa: F811
    app = wilson()
    approve_japan(fake)
    task = Task.get()
    fake.send_text(OWNER, f"done {task.id}")
    wait_text(fake, OWNER, "✓ Mark done:")
    assert app.wait_idle(10)
    assert Task.get_by_id(task.id).status == "done"
    assert not [r for r in model.requests if f"done {task.id}" in str(r)]


def test_slash_done_and_overdue_in_the_chat_are_answered_by_code(wilson, fake, model):  # noqa: F811
    app = wilson()
    approve_japan(fake)
    task = Task.get()
    Task.update(due=app.clock.now() - timedelta(days=3)).where(Task.id == task.id).execute()
    fake.send_text(OWNER, "overdue")
    listed = wait_text(fake, OWNER, "was due")
    assert task.title in listed["text"] and f"done {task.id} · move {task.id} DATE" in listed["text"]
    fake.send_text(OWNER, f"/done {task.id}")
    wait_text(fake, OWNER, "✓ Mark done:")
    assert app.wait_idle(10)
    assert Task.get_by_id(task.id).status == "done"
    assert not [r for r in model.requests if "overdue" in str(r["body"]["messages"][-1])]


def test_a_recurring_reminder_carries_stop_reminding_and_its_press_is_the_stop_command():
    from actors.proposals import commands
    from channels.telegram.text import follow_up_keyboard, parse_command_data

    [[stop]] = follow_up_keyboard([], reminder=5).inline_keyboard
    assert stop.text == "Stop reminding ✋"
    assert commands.parse(parse_command_data(stop.callback_data)) == commands.Command("stop", 5)
    assert parse_command_data("ap:3:approve:abcd") is None  # a proposal's button is not a command
    assert commands.parse("done with the passport") is None  # words to read, not a command
    assert commands.parse("move 3") is None and commands.parse("done 3 tomorrow") is None
