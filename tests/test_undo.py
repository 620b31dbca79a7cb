"""Undo: a change the user approved can be put back. The undo is the user's own clear command: it takes effect
at once, recorded as a proposal made by code from what the approved items recorded (so it is traced, and an
undo can itself be undone), never asked for a second time.

A whole Wilson with no model on a simulated clock, driven as at the terminal (`undo`, `undo 3`, "undo that").
"""

from __future__ import annotations

import io
from datetime import datetime, timedelta

import pytest

from actors import tools
from actors.proposals.undo import inverse, inverse_or_why, undoable
from actors.proposals.words import undo_named
from actors.cortex.calls import RunOutcome, propose_call
from storage.models import Approval, ApprovalItem, Schedule, Task, Topic, Trace
from wilson.app.repl import Command, Repl, parse
from wilson.kernel.messages import Decision
from tests.repl_support import repl_of, said


def newest() -> Approval:
    return Approval.select().order_by(Approval.id.desc()).get()


def approved(app, repl, line: str) -> Approval:
    """Say `line`, approve the proposal it makes; that proposal."""
    said(app, repl, line)
    proposal = newest()
    said(app, repl, f"approve {proposal.id}")
    assert Approval.get_by_id(proposal.id).status == "approved"
    return proposal


@pytest.fixture
def app(make_app):
    return make_app(start="2027-01-05T08:00:00+01:00")


@pytest.fixture
def repl(app):
    return repl_of(app)


def test_undoing_a_new_task_drops_it_at_once_and_says_so(app, repl):
    made = approved(app, repl, "add buy a present for Anna by Saturday")
    task = Task.get()
    answer = said(app, repl, "undo that")
    undo = newest()
    assert undo.id != made.id and undo.status == "approved"
    assert answer == ["Put back:\n✓ Drop task: Buy a present for Anna (due Sat 9 Jan 2027) — no more follow-ups"]
    assert Task.get_by_id(task.id).status == "cancelled"  # one step: no second approval
    assert Trace.get(Trace.stage == "undone").reason.startswith("proposal 0 undo by owner: Put back:")


def test_undoing_done_reopens_the_task_and_its_follow_ups_come_back(app, repl):
    approved(app, repl, "add renew the passport by Friday")
    task = Task.get()
    assert task.next_fire_at is not None
    done = approved(app, repl, "done with the passport")
    assert Task.get_by_id(task.id).status == "done" and Task.get_by_id(task.id).next_fire_at is None
    said(app, repl, f"undo {done.id}")
    assert "Undo: Renew the passport — open again" in newest().items.get().description
    said(app, repl, f"approve {newest().id}")
    back = Task.get_by_id(task.id)
    assert (back.status, back.completed_at) == ("open", None)
    assert back.next_fire_at == task.next_fire_at  # the follow-up planned before is planned again


def test_undoing_a_move_puts_the_old_due_date_back_and_a_task_without_one_gets_none(app, repl):
    approved(app, repl, "add call the bank by Friday")
    approved(app, repl, "add water the plants")
    bank, plants = Task.select().order_by(Task.id)
    assert plants.due is None
    moved = approved(app, repl, "move the bank task to next Wednesday")
    assert Task.get_by_id(bank.id).due != bank.due
    said(app, repl, f"undo {moved.id}")
    assert newest().items.get().description == "Undo: Call the bank — due back to Fri 8 Jan 2027"
    said(app, repl, f"approve {newest().id}")
    assert Task.get_by_id(bank.id).due == bank.due
    # a change the offline rules do not make (a date on a task that had none) is undone to "no due date"
    item = ApprovalItem(tool="update_task", result={"task_id": plants.id, "before": {"due": [None, False]}})
    Task.update(due=datetime(2027, 1, 9, 23, 0), due_is_date=True).where(Task.id == plants.id).execute()
    name, args = inverse(item, app.clock.now())
    assert name == "restore_task"
    assert tools.describe_item(name, args, app.config.timezone) == "Undo: Water the plants — no due date again"


def test_undoing_a_close_reopens_the_topic_and_only_the_tasks_the_close_dropped(app, repl):
    repl.run_line('calendar add "Trip to Japan" @ 2027-04-10 -> 2027-04-24; Tokyo')
    app.advance(timedelta(days=1))
    plan = newest()
    said(app, repl, f"approve {plan.id}")
    topic = Topic.get()
    tasks = list(Task.select().order_by(Task.id))
    approved(app, repl, f"drop the {tasks[-1].title.lower()} task")
    assert Task.get_by_id(tasks[-1].id).status == "cancelled"
    closed = approved(app, repl, "close the Japan topic")
    assert Topic.get_by_id(topic.id).status == "closed"
    said(app, repl, f"undo {closed.id}")
    assert newest().items.get().description == f"Undo: Trip to Japan — open again with its {len(tasks) - 1} tasks"
    said(app, repl, f"approve {newest().id}")
    assert Topic.get_by_id(topic.id).status == "active" and Topic.get_by_id(topic.id).closed_at is None
    statuses = [Task.get_by_id(t.id).status for t in tasks]
    assert statuses == ["open"] * (len(tasks) - 1) + ["cancelled"]  # dropped on its own before: still dropped
    assert all(Task.get_by_id(t.id).next_fire_at is not None for t in tasks[:-1] if t.due > app.clock.now())
    # and undoing that undo closes it again, with the same tasks
    said(app, repl, "undo")
    assert newest().items.get().tool == "close_topic"
    said(app, repl, f"approve {newest().id}")
    assert Topic.get_by_id(topic.id).status == "closed"
    assert [Task.get_by_id(t.id).status for t in tasks] == ["cancelled"] * len(tasks)


def test_undoing_a_whole_plan_closes_its_topic_in_one_item(app, repl):
    repl.run_line('calendar add "Trip to Japan" @ 2027-04-10 -> 2027-04-24; Tokyo')
    app.advance(timedelta(days=1))
    plan = newest()
    said(app, repl, f"approve {plan.id}")
    said(app, repl, f"undo {plan.id}")
    [item] = newest().items
    assert item.tool == "close_topic"
    count = Task.select().count()
    assert item.description == f"Close topic: Trip to Japan (and drop its {count} open tasks)"


def test_an_undo_is_done_once_and_a_second_press_says_so(app, repl):
    made = approved(app, repl, "add pay rent by Friday")
    said(app, repl, "undo")
    first = newest()
    assert first.status == "approved" and Task.get().status == "cancelled"
    assert said(app, repl, f"undo {made.id}") == [f"Proposal {made.id} was undone already, by proposal {first.id}."]
    assert said(app, repl, f"modify {first.id} only half of it") == [f"Already done: proposal {first.id} was approved."]
    assert Approval.select().count() == 2  # nothing was asked a second time
    assert Task.get().status == "cancelled"


def test_undo_alone_takes_the_latest_approval_so_a_second_undo_redoes(app, repl):
    approved(app, repl, "add pay rent by Friday")
    said(app, repl, "undo")
    said(app, repl, f"approve {newest().id}")
    assert Task.get().status == "cancelled"
    said(app, repl, "undo")  # the latest approval is now the undo itself
    assert newest().items.get().description == "Undo: Pay rent — open again"
    said(app, repl, f"approve {newest().id}")
    assert Task.get().status == "open"


def test_nothing_to_undo_and_unknown_proposals_are_answered_plainly(app, repl):
    assert said(app, repl, "undo") == ["There is nothing I changed for you to undo."]
    assert said(app, repl, "undo 42") == ["I don't know proposal 42."]
    said(app, repl, "add pay rent by Friday")
    waiting = newest()
    assert said(app, repl, f"undo {waiting.id}") == [
        f"Nothing of proposal {waiting.id} is done yet: reject it to drop it."
    ]
    said(app, repl, f"reject {waiting.id}")
    assert said(app, repl, f"undo {waiting.id}") == [
        f"Nothing of proposal {waiting.id} was done, so there is nothing to undo."
    ]


def test_only_the_approver_may_undo_and_a_stale_button_does_nothing(app, repl):
    made = approved(app, repl, "add pay rent by Friday")
    before = Approval.select().count()
    app.decide(made.id, "undo", user_id="somebody-else")
    assert app.wait_idle()
    assert app.user_deliveries()[-1]["text"] == (
        "Sorry, only Wilson's owner can undo it here: the settings say the owner decides every proposal."
    )
    app.supervisor.tell(
        "approval", Decision(approval_id=made.id, action="undo", user_id="owner", channel="repl", nonce="stale")
    )
    assert app.wait_idle()
    assert app.user_deliveries()[-1]["text"] == "That button is out of date."
    assert Approval.select().count() == before


def test_what_cannot_be_undone_is_named_and_the_rest_is_proposed(app, repl):
    assert (
        inverse(ApprovalItem(tool="send_email", result={"sent": True}), app.clock.now())
        == "a sent mail can't be called back"
    )
    repl.run_line('calendar add "Trip to Japan" @ 2027-04-10 -> 2027-04-24; Tokyo')
    app.advance(timedelta(days=1))
    plan = newest()
    said(app, repl, f"approve {plan.id}")
    approved(app, repl, "done with the passport")
    answer = said(app, repl, f"undo {plan.id}")
    undo = newest()
    assert [i.tool for i in undo.items] == ["close_topic"]
    assert answer[0] == (
        f"Some of proposal {plan.id} stays as it is:\n"
        "• New task: Check passport validity — due Thu 14 Jan 2027 (in Trip to Japan) "
        "(it has been marked done since)\n"
        "Put back:\n✓ Close topic: Trip to Japan (and drop its 6 open tasks)"
    )
    done = Approval.select().where(Approval.id < undo.id).order_by(Approval.id.desc()).get()
    Task.update(status="open").where(Task.status == "done").execute()  # reopened since, another way
    assert said(app, repl, f"undo {done.id}") == [
        f"I can't undo proposal {done.id}:\n• Mark done: Check passport validity (it is as it was already)"
    ]


def test_a_reminder_set_by_mistake_is_stopped_by_its_undo(app, repl):
    made = approved(app, repl, "remind me every day at 8am to take my pills")
    schedule = Schedule.get(Schedule.kind == "reminder")
    said(app, repl, f"undo {made.id}")
    assert newest().items.get().description == "Stop reminder: take my pills (at 08:00)"
    said(app, repl, f"approve {newest().id}")
    assert not Schedule.get_by_id(schedule.id).enabled
    said(app, repl, "undo")  # and the stop undone sets it again, as it was
    said(app, repl, f"approve {newest().id}")
    again = Schedule.get_by_id(schedule.id)
    assert again.enabled and again.cron == schedule.cron and again.text == schedule.text


def test_the_restore_tools_are_offered_to_no_model():
    box = tools.toolbox()
    undo_only = {t.name for t in box.order if t.undo_only}
    # and the night's learning, proposed by code only (actors/hippocampus/consent.py), and the MCP skill's, which
    # Wilson proposes itself when a server changed a tool's description
    assert undo_only == {"restore_task", "restore_topic", "adopt_learning", "mcp_accept_description"}
    for run in tools.RUNS:
        assert not tools.offered(run, box) & undo_only, run
    assert not {s["function"]["name"] for s in box.schemas(True)} & undo_only  # nor counted as offerable


@pytest.mark.parametrize(
    "words, named",
    [
        ("undo", 0),
        ("Undo that!", 0),
        ("please undo it", 0),
        ("undo the last one", 0),
        ("undo 3", 3),
        ("undo proposal #12", 12),
        ("undo the milk task", None),
        ("undoing", None),
        ("can you undo", None),
    ],
)
def test_the_words_of_an_undo(words, named):
    assert undo_named(words) == named
    assert parse(words) == (Command("undo", (named,)) if named is not None else Command("say", (words,)))


def test_undoing_a_snooze_wakes_the_task_and_its_comeback_is_switched_off(app, repl):
    approved(app, repl, "add call the bank by Friday")
    task = Task.get()
    assert app.propose("snooze_task", {"task_id": task.id, "until": "2027-01-20"}, "because you asked") is None
    assert app.wait_idle()
    snooze = newest()
    said(app, repl, f"approve {snooze.id}")
    comeback = Schedule.get(Schedule.name.startswith(f"snooze:{task.id}:"))
    assert comeback.enabled and Task.get_by_id(task.id).status == "snoozed"
    said(app, repl, f"undo {snooze.id}")
    said(app, repl, f"approve {newest().id}")
    back = Task.get_by_id(task.id)
    assert (back.status, back.snoozed_until) == ("open", None)
    assert not Schedule.get_by_id(comeback.id).enabled  # no "is back, as you asked" for a task never asleep


def test_a_snooze_undone_sleeps_until_the_first_date_again_and_a_cancel_undone_keeps_its_snooze(app, repl):
    approved(app, repl, "add call the bank")  # no due date: only the snooze wakes it
    task = Task.get()

    def snooze(until: str) -> Approval:
        assert app.propose("snooze_task", {"task_id": task.id, "until": until}, "because you asked") is None
        assert app.wait_idle()
        made = newest()
        said(app, repl, f"approve {made.id}")
        return made

    def comebacks() -> list[str]:
        rows = Schedule.select().where(Schedule.name.startswith(f"snooze:{task.id}:") & (Schedule.enabled == True))
        return [r.next_fire_at.date().isoformat() for r in rows]

    snooze("2027-01-20")
    second = snooze("2027-02-01")
    assert comebacks() == ["2027-02-01"]
    said(app, repl, f"undo {second.id}")
    said(app, repl, f"approve {newest().id}")
    assert Task.get_by_id(task.id).status == "snoozed" and comebacks() == ["2027-01-20"]
    assert app.propose("cancel_task", {"task_id": task.id}, "because you asked") is None
    assert app.wait_idle()
    said(app, repl, f"approve {newest().id}")
    assert comebacks() == []
    said(app, repl, "undo")
    said(app, repl, f"approve {newest().id}")
    assert Task.get_by_id(task.id).status == "snoozed" and comebacks() == ["2027-01-20"]


def test_an_undone_move_can_be_undone_in_turn(app, repl):
    approved(app, repl, "add call the bank by Friday")
    first_due = Task.get().due
    approved(app, repl, "move the bank task to next Wednesday")
    moved_due = Task.get().due
    said(app, repl, "undo")
    said(app, repl, f"approve {newest().id}")
    assert Task.get().due == first_due
    said(app, repl, "undo")
    assert newest().items.get().description == "Undo: Call the bank — due back to Wed 13 Jan 2027"
    said(app, repl, f"approve {newest().id}")
    assert Task.get().due == moved_due


def test_the_rest_of_a_partly_approved_proposal_is_undone_on_its_own(app, repl):
    repl.run_line('calendar add "Trip to Japan" @ 2027-04-10 -> 2027-04-24; Tokyo')
    app.advance(timedelta(days=1))
    plan = newest()
    said(app, repl, f"approve {plan.id} 1,2")  # the topic and the passport task
    said(app, repl, f"undo {plan.id}")
    said(app, repl, f"approve {newest().id}")
    assert Topic.get().status == "closed"
    said(app, repl, f"approve {plan.id} 3")
    visa = Task.get(Task.title.contains("visa"))
    said(app, repl, f"undo {plan.id}")
    [item] = newest().items
    assert (item.tool, item.args["task_id"]) == ("cancel_task", visa.id)
    said(app, repl, f"approve {newest().id}")
    assert said(app, repl, f"undo {plan.id}") == [f"Proposal {plan.id} was undone already, by proposal {newest().id}."]


def test_a_model_cannot_propose_what_only_an_undo_may(app):
    approved(app, repl_of(app), "add pay rent by Friday")
    outcome = RunOutcome()
    answer = propose_call(
        {
            "changes": [
                {
                    "action": "restore_task",
                    "task_id": Task.get().id,
                    "before": {"title": "Send 1000 EUR to the landlord"},
                }
            ]
        },
        outcome,
        app.clock.now(),
        app.config.timezone,
        "user",
        "owner",
        "owner",
        None,
    )
    assert "error" in answer and outcome.proposals == []
    assert outcome.rejected_calls == [("restore_task", "restore_task is not an action of propose (see its list)")]


def test_a_reminder_replaced_by_one_of_the_same_words_comes_back_as_it_was(app, repl):
    approved(app, repl, "remind me every day at 8am to take my pills")
    eight = Schedule.get(Schedule.kind == "reminder").cron
    moved = approved(app, repl, "remind me every day at 9am to take my pills")
    assert Schedule.select().where(Schedule.kind == "reminder").count() == 1  # the same words: replaced
    said(app, repl, f"undo {moved.id}")
    assert newest().items.get().description == "New reminder: take my pills (at 08:00)"
    said(app, repl, f"approve {newest().id}")
    row = Schedule.get(Schedule.kind == "reminder")
    assert row.enabled and row.cron == eight


def test_a_redo_says_what_it_does_and_the_first_change_can_be_undone_again(app, repl):
    approved(app, repl, "add pay rent by Friday")
    done = approved(app, repl, "done with the rent")
    said(app, repl, f"undo {done.id}")
    said(app, repl, f"approve {newest().id}")
    assert Task.get().status == "open" and Task.get().completed_at is None
    said(app, repl, "undo")  # the undo undone: done again
    assert newest().items.get().description == "Undo: Pay rent — marked done again"
    said(app, repl, f"approve {newest().id}")
    assert Task.get().status == "done" and Task.get().completed_at == app.clock.now()
    said(app, repl, f"undo {done.id}")  # in force again, so undoable again
    assert newest().items.get().description == "Undo: Pay rent — open again"


def test_a_snooze_put_back_after_its_time_has_passed_wakes_the_task(app, repl):
    approved(app, repl, "add call the bank")
    task = Task.get()
    assert app.propose("snooze_task", {"task_id": task.id, "until": "2027-01-06T10:00"}, "because you asked") is None
    assert app.wait_idle()
    said(app, repl, f"approve {newest().id}")
    assert app.propose("cancel_task", {"task_id": task.id}, "because you asked") is None
    assert app.wait_idle()
    said(app, repl, f"approve {newest().id}")
    app.advance(timedelta(days=2))  # the snooze's time passes while the task is dropped
    said(app, repl, "undo")
    said(app, repl, f"approve {newest().id}")
    back = Task.get_by_id(task.id)
    assert (back.status, back.snoozed_until) == ("open", None)  # never asleep for good


def test_a_snapshot_of_the_wrong_shape_is_refused_before_it_is_proposed(app, repl):
    approved(app, repl, "add pay rent by Friday")
    task_id = Task.get().id
    for before in (
        {"due": None},
        {"due": ["2027-01-08"]},
        {"due": ["not a date", True]},
        {"status": "gone"},
        {"title": ""},
        {"escalation": ["soon"]},
        {"colour": "red"},
        [],
    ):
        problem = tools.validate_mutation("restore_task", {"task_id": task_id, "before": before}, app.config.timezone)
        assert problem, before
    assert (
        undoable([ApprovalItem(tool="update_task", result={"task_id": task_id, "before": ["odd"]})], app.clock.now())
        is False
    )  # no exception: the approval that asks stands
    assert (
        inverse_or_why(
            ApprovalItem(tool="update_task", result={"task_id": task_id, "before": ["odd"]}), app.clock.now()
        )
        == "I can't read what it recorded"
    )  # and an undo names it


def test_the_terminal_shows_how_to_undo_under_a_receipt(app, repl):
    made = approved(app, repl, "add pay rent by Friday")
    printed = Repl(app, out=io.StringIO())
    printed.print_delivery(app.user_deliveries()[-1])  # as the terminal prints the receipt
    assert printed.out.getvalue().endswith(f"✓ New task: Pay rent — due Fri 8 Jan 2027\n   → undo {made.id}\n")
