"""The user's own clear command is the approval (DESIGN principle 17): a press on Wilson's own Done, Snooze,
Drop, Stop or Undo button, or a command naming its target ("done 3", "snooze 3 2d"), takes effect at once,
traced and undoable; words Wilson had to interpret ("done with the passport") still become one proposal that
one "yes" approves.

At the terminal (a whole Wilson, offline, on a simulated clock) and on Telegram (the real PTB client against
the fake Bot API server)."""

from __future__ import annotations

import io
from datetime import datetime, timedelta, timezone

import pytest

from storage import outbox, trace
from storage.models import Approval, Inbox, Schedule, Task, Trace
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
        "“someday” is not a time I can read: try 2d, 12h or a date like 2027-03-01."
    ]
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
    assert (
        printed.getvalue()
        .rstrip()
        .endswith(f"→ done {task.id} | snooze {task.id} 1d | drop {task.id} | help {task.id}")
    )
    assert said(app, repl, f"snooze {task.id} 1d")[0].startswith("Done:\n✓ Snooze: Pay the rent")


def test_the_done_button_under_a_follow_up_marks_it_done_in_one_tap(wilson, fake):  # noqa: F811
    app = wilson()
    approve_japan(fake)
    task = Task.get()
    box = outbox.add(
        channel="telegram",
        text=f"Reminder: “{task.title}” is due tomorrow.",
        trace_id=trace.new_trace_id(),
        key="test:follow-up",
        at=app.clock.now(),
        payload={"tasks": [task.id]},
    )
    app.supervisor.tell("telegram", Deliver(box.id))
    follow_up = wait_text(fake, OWNER, "is due tomorrow")
    [[done, snooze, drop, helping]] = keyboard_rows(follow_up)
    assert (done["text"], snooze["text"], drop["text"], helping["text"]) == (
        "Done ✓",
        "Snooze a day 💤",
        "Drop ✗",
        "Help me 🙋",
    )
    press = fake.press(OWNER, follow_up, done["callback_data"])
    receipt = wait_text(fake, OWNER, "✓ Mark done:")
    assert fake.answer(press)["text"] == "Marking it done…"
    assert app.wait_idle(10)
    assert Task.get_by_id(task.id).status == "done" and waiting() == 0  # one tap, no second approval
    [[undo]] = keyboard_rows(receipt)
    fake.press(OWNER, receipt, undo["callback_data"])
    fake.wait_for(lambda: Task.get_by_id(task.id).status == "open", 10, "the task open again")


def follow_up_on_telegram(app, fake, task: Task) -> dict:
    box = outbox.add(
        channel="telegram",
        text=f"Reminder: “{task.title}” is due soon.",
        trace_id=trace.new_trace_id(),
        key=f"test:follow-up:{task.id}",
        at=app.clock.now(),
        payload={"tasks": [task.id]},
    )
    app.supervisor.tell("telegram", Deliver(box.id))
    return wait_text(fake, OWNER, "is due soon")


def test_the_snooze_button_under_a_follow_up_snoozes_it_a_day_in_one_tap(wilson, fake):  # noqa: F811
    app = wilson()
    approve_japan(fake)
    task = Task.get()
    follow_up = follow_up_on_telegram(app, fake, task)
    snooze = next(b for b in keyboard_rows(follow_up)[0] if b["text"] == "Snooze a day 💤")
    press = fake.press(OWNER, follow_up, snooze["callback_data"])
    receipt = wait_text(fake, OWNER, "✓ Snooze:")
    assert fake.answer(press)["text"] == "Snoozing it…"
    tomorrow = app.clock.now().astimezone(app.config.timezone) + timedelta(days=1)
    assert f"✓ Snooze: {task.title} until {tomorrow:%a} {tomorrow.day} {tomorrow:%b %Y}" in receipt["text"]
    assert app.wait_idle(10)
    assert Task.get_by_id(task.id).status == "snoozed" and waiting() == 0  # one tap, no second approval
    [[undo]] = keyboard_rows(receipt)
    assert undo["text"] == "Undo ↶"


def test_stop_reminding_under_a_reminder_stops_it_in_one_tap(wilson, fake):  # noqa: F811
    app = wilson()
    reminder = Schedule.create(
        name="reminder:pills",
        cron="0 8 * * *",
        kind="reminder",
        text="take my pills",
        timezone=str(app.config.timezone),
        next_fire_at=app.clock.now() + timedelta(days=1),
    )
    box = outbox.add(
        channel="telegram",
        text="Reminder: take my pills",
        trace_id=trace.new_trace_id(),
        key="test:reminder",
        at=app.clock.now(),
        payload={"reminder": reminder.id},
    )
    app.supervisor.tell("telegram", Deliver(box.id))
    fired = wait_text(fake, OWNER, "take my pills")
    [[stop]] = keyboard_rows(fired)
    assert stop["text"] == "Stop reminding ✋"
    press = fake.press(OWNER, fired, stop["callback_data"])
    receipt = wait_text(fake, OWNER, "✓ Stop reminder: take my pills")
    assert fake.answer(press)["text"] == "Stopping it…"
    assert app.wait_idle(10)
    assert not Schedule.get_by_id(reminder.id).enabled and waiting() == 0  # one tap, no second approval
    assert [b["text"] for row in keyboard_rows(receipt) for b in row] == ["Undo ↶"]


def test_help_me_under_a_follow_up_asks_wilson_about_that_task_and_changes_nothing(wilson, fake, model):  # noqa: F811
    app = wilson()
    approve_japan(fake)
    task = Task.get()
    follow_up = follow_up_on_telegram(app, fake, task)
    helping = next(b for b in keyboard_rows(follow_up)[0] if b["text"] == "Help me 🙋")
    press = fake.press(OWNER, follow_up, helping["callback_data"])
    answer = wait_text(fake, OWNER, "echo: Help me with Book flights (due Mon 1 Mar, for Japan trip).")
    assert fake.answer(press)["text"] == "Asking Wilson to help…"
    assert (
        answer["reply_to_message"]["message_id"] == follow_up["message_id"]
    )  # the answer is about the message pressed
    assert app.wait_idle(10)
    assert Task.get_by_id(task.id).status == "open" and waiting() == 0  # a question, not a change


def test_help_typed_or_as_a_slash_command_asks_wilson_about_that_task(wilson, fake, model):  # noqa: F811
    app = wilson()
    approve_japan(fake)
    task = Task.get()
    fake.send_text(OWNER, f"help {task.id}")
    wait_text(fake, OWNER, "echo: Help me with Book flights (due Mon 1 Mar, for Japan trip).")
    fake.send_text(OWNER, f"/help {task.id + 40}")
    wait_text(fake, OWNER, f"I have no task {task.id + 40} (`tasks` lists them).")
    fake.send_text(OWNER, "/help")
    assert "/help 3 asks me to help with task 3" in wait_text(fake, OWNER, "/tasks")["text"]
    fake.send_text(OWNER, f"/help {task.id}")
    fake.wait_for(
        lambda: len([m for m in fake.sent_to(OWNER) if m["text"].startswith("echo: Help me with")]) == 2,
        10,
        "a second answer about the task",
    )
    assert app.wait_idle(10)
    assert Task.get_by_id(task.id).status == "open" and waiting() == 0


def test_help_at_the_terminal_asks_wilson_about_the_task_by_name(app, repl):
    task = a_task(app, repl, "add pay the rent by Friday")
    said(app, repl, f"help {task.id}")
    assert Inbox.select().order_by(Inbox.id.desc()).get().text == "Help me with Pay the rent (due Fri 8 Jan)."
    assert Task.get_by_id(task.id).status == "open" and waiting() == 0
    repl.run_line(f"help {task.id + 5}")
    assert f"I have no task {task.id + 5} (`tasks` lists them)." in repl.out.getvalue()


def test_help_without_a_model_answers_with_what_can_be_done_with_that_task_in_words_that_do_it(app, repl):
    task = a_task(app, repl, "add pay the rent by Friday")
    [answer] = said(app, repl, f"help {task.id}")
    assert answer.startswith("“Pay the rent” (due Fri 8 Jan).")
    assert f"“snooze {task.id} 2d” or “move {task.id} 2027-01-15”" in answer
    assert f"“done {task.id}”, “drop {task.id}”" in answer and "didn't understand" not in answer
    [typed] = said(app, repl, "say could you help me with the rent?")
    assert typed == answer
    assert Task.get_by_id(task.id).status == "open" and waiting() == 0


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


def test_a_briefing_that_raises_tasks_carries_done_snooze_drop_and_help_for_each(db):
    from actors.proposals import commands
    from channels.telegram.text import briefing_keyboard, follow_up_keyboard, parse_command_data

    visa = Task.create(title="Check visa requirements", created_at=datetime(2027, 1, 5, tzinfo=timezone.utc))
    hotel = Task.create(title="Book the hotel", created_at=datetime(2027, 1, 5, tzinfo=timezone.utc))
    rows = briefing_keyboard([], follow_up_keyboard(commands.follow_up_buttons([visa.id, hotel.id]))).inline_keyboard
    assert [[b.text for b in row] for row in rows] == [
        [f"Done ✓ {visa.id}", f"Snooze a day 💤 {visa.id}", f"Drop ✗ {visa.id}", f"Help me 🙋 {visa.id}"],
        [f"Done ✓ {hotel.id}", f"Snooze a day 💤 {hotel.id}", f"Drop ✗ {hotel.id}", f"Help me 🙋 {hotel.id}"],
    ]
    assert commands.help_target(parse_command_data(rows[1][3].callback_data)) == hotel.id
    assert commands.help_target("help me with 7") == 7 and commands.help_target("help me with the visa") is None
