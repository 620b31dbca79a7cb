"""A kept mail that needs no plan is acted on as triage said, without a second model call (issue 21): its line
is told with its source named, its task proposed. The model still reads it when its context needs judgement
(Wilson told the user about the thread within a day, the task would repeat an open one) or when what triage
said cannot be used."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from actors.cortex.noted import triage_note
from actors.triage import normalise_decisions, note_of
from storage.models import Approval, ApprovalItem, Inbox, Outbox, Task, Trace
from tests.brain import call, context_of, is_cortex, tool_names

FORM = "Email from the school: sign the field trip consent form by Friday"


def triage_noting(
    say: str | None = "The school needs the trip form signed by Friday.", task: dict | None = None, priority: int = 2
):
    """Triage keeping every item as needing no plan, with the line and the task it would have the user get."""

    def reply(body):
        items = json.loads(body["messages"][-1]["content"])["items"]
        return {
            "tool_calls": [
                call(
                    "triage",
                    drop=[],
                    items=[
                        {
                            "buffer_ids": [i["buffer_id"]],
                            "priority": priority,
                            "reason": "a form to sign",
                            "plan": False,
                            **({"say": say} if say else {}),
                            **({"task": task} if task else {}),
                        }
                        for i in items
                    ],
                )
            ]
        }

    return [{"match": lambda body, headers: "triage" in tool_names(body), "reply": reply}]


def noter(ctx, body):
    return {"tool_calls": [call("surface", text="From the model: sign the form.", why="a form")]}


def mail(app, text: str = FORM, sender: str = "school@school.example") -> Inbox:
    app.inject_buffered("email", text, {"from": sender, "subject": text.split(": ", 1)[-1]})
    app.sync()
    assert app.wait_idle(), "Wilson did not settle"
    return Inbox.select().where(Inbox.kind == "buffered").order_by(Inbox.id.desc()).get()


def cortex_runs(server) -> list[str]:
    return [r["headers"].get("x-wilson-role") for r in server.requests if is_cortex(r["body"])]


def routed(row: Inbox) -> str:
    return [t.reason for t in Trace.select().where((Trace.trace_id == row.trace_id) & (Trace.stage == "routed"))][-1]


def told(row: Inbox) -> list[str]:
    return [
        o.text
        for o in Outbox.select().where((Outbox.trace_id == row.trace_id) & (Outbox.channel != "silent"))
        if o.idempotency_key.startswith("surface:")
    ]


def test_a_mail_triage_said_what_to_do_about_is_told_and_its_task_proposed_without_a_second_model_call(scripted):
    app, server = scripted(noter, rules=triage_noting(task={"title": "Sign the field trip form", "due": "2027-01-08"}))
    row = mail(app)
    assert cortex_runs(server) == [], "triage's call was the only model call"
    assert routed(row) == "template: triage said what to do about it (no second model call)"
    assert told(row) == [
        "From the email “sign the field trip consent form by Friday” from school@school[.]example: "
        "The school needs the trip form signed by Friday."
    ]
    [item] = ApprovalItem.select()
    assert item.tool == "create_task" and item.args["title"] == "Sign the field trip form"
    assert item.args["due"].startswith("2027-01-08")
    assert Task.select().count() == 0, "a proposal, not a task: the user approves it"


NIGHT = "2027-01-05T23:00:00+01:00"


def test_an_urgent_mail_in_quiet_hours_is_left_to_the_model_whose_own_urgent_flag_may_wake_the_user(scripted):
    def waking(ctx, body):
        return {"tool_calls": [call("surface", text="The water is off in an hour.", why="urgent", urgent=True)]}

    app, server = scripted(waking, start=NIGHT, rules=triage_noting(priority=1))
    row = mail(app)
    assert cortex_runs(server) == ["fast"], "triage's priority alone never breaks the quiet"
    assert routed(row).endswith(
        "it is urgent and the user's quiet holds messages: the model judges whether it may wake them"
    )
    box = Outbox.get(Outbox.trace_id == row.trace_id, Outbox.idempotency_key.startswith("surface:"))
    assert box.deliver_after is None and box.status == "delivered"


def test_a_mail_that_needs_action_is_held_by_the_quiet_hours_until_the_morning(scripted):
    app, server = scripted(noter, start=NIGHT, rules=triage_noting(priority=2))
    row = mail(app)
    assert cortex_runs(server) == []
    box = Outbox.get(Outbox.trace_id == row.trace_id, Outbox.idempotency_key.startswith("surface:"))
    assert (
        box.status == "held"
        and box.deliver_after.astimezone(app.config.timezone).isoformat() == "2027-01-06T07:00:00+01:00"
    )


def test_an_urgent_mail_by_day_is_told_at_once_from_triages_line(scripted):
    app, server = scripted(noter, rules=triage_noting(priority=1))
    row = mail(app)
    assert cortex_runs(server) == []
    box = Outbox.get(Outbox.trace_id == row.trace_id, Outbox.idempotency_key.startswith("surface:"))
    assert box.status == "delivered" and box.text.endswith("The school needs the trip form signed by Friday.")


def test_a_line_alone_is_told_and_proposes_nothing(scripted):
    app, server = scripted(noter, rules=triage_noting())
    row = mail(app)
    assert cortex_runs(server) == [] and Approval.select().count() == 0
    assert told(row)[0].endswith("The school needs the trip form signed by Friday.")


def test_a_thread_wilson_told_the_user_of_within_a_day_is_read_by_the_model(scripted):
    app, server = scripted(noter, rules=triage_noting())
    first = mail(app)
    assert cortex_runs(server) == [] and told(first)
    app.advance(timedelta(hours=2))
    again = mail(app, "Email from the school: Re: sign the field trip consent form by Friday")
    assert cortex_runs(server) == ["fast"], "the resend is judged beside what was told"
    assert routed(again) == (
        "fast: triage found nothing to plan in it; not from triage's note: "
        "Wilson told the user about this thread within a day"
    )
    [body] = [r["body"] for r in server.requests if is_cortex(r["body"])]
    assert context_of(body)["told_before"]["told"], "the model sees what was told"
    assert "note" not in json.dumps(context_of(body)["stimulus"]["payload"]), "triage's note is not shown"


def test_a_task_that_repeats_an_open_one_is_left_to_the_model(scripted):
    app, server = scripted(noter, rules=triage_noting(task={"title": "Sign the field trip form", "due": "2027-01-08"}))
    Task.create(title="sign field trip form", created_at=app.clock.now())
    row = mail(app)
    assert cortex_runs(server) == ["fast"]
    assert routed(row).endswith(
        "the user already has a task like it (“sign field trip form”): the model may update it instead"
    )
    assert told(row) == [
        "From the email “sign the field trip consent form by Friday” from school@school[.]example: "
        "From the model: sign the form."
    ]


def test_a_task_like_one_waiting_for_the_users_word_is_left_to_the_model(scripted):
    app, server = scripted(noter, rules=triage_noting(task={"title": "Sign the field trip form", "due": "2027-01-08"}))
    first = mail(app)
    assert cortex_runs(server) == [] and Approval.select().count() == 1
    app.advance(timedelta(days=2))  # the thread is no longer what was told today
    again = mail(app, "Email from the school: field trip form, second copy")
    assert cortex_runs(server) == ["fast"]
    assert routed(again).endswith(
        f"a proposal waiting for the user has a task like it (proposal "
        f"{Approval.get(Approval.inbox_id == first.id).id})"
    )
    assert Approval.select().count() == 1, "the model said nothing of a task: nothing proposed twice"


def test_a_task_that_what_wilson_learned_holds_back_is_left_to_the_model(scripted):
    from storage import engram

    app, server = scripted(noter, rules=triage_noting(task={"title": "Sign the field trip form", "due": "2027-01-08"}))
    from actors.hippocampus import consent

    engram.store(
        "belief", "user does not want tasks like 'Sign the field trip form'", ["night:1"], app.clock.now(), weight=3
    )
    [(_, change)] = consent.offers(app.clock.now(), 3)
    consent.adopt(change["key"], True, None, change["does"], app.clock.now())  # the user agreed to hold it back
    row = mail(app)
    assert cortex_runs(server) == ["fast"], "the model may ask the user in a line instead"
    assert "but its propose was refused" in routed(row)
    assert Approval.select().count() == 0


def test_a_task_triage_gave_that_cannot_be_used_sends_the_mail_to_the_model(scripted):
    app, server = scripted(noter, rules=triage_noting(task={"title": "Sign the form", "due": "whenever"}))
    row = mail(app)
    assert cortex_runs(server) == ["fast"]
    assert "but its create_task was refused" in routed(row)
    assert Approval.select().count() == 0, "nothing of triage's note was kept"
    assert told(row)[0].endswith("From the model: sign the form.")


def test_a_group_of_mails_is_told_once_with_its_sources_counted(scripted):
    def grouped(body):
        items = json.loads(body["messages"][-1]["content"])["items"]
        return {
            "tool_calls": [
                call(
                    "triage",
                    drop=[],
                    items=[
                        {
                            "buffer_ids": [i["buffer_id"] for i in items],
                            "priority": 2,
                            "reason": "one form, twice",
                            "summary": "The trip form",
                            "plan": False,
                            "say": "The school asks twice for the trip form.",
                        }
                    ],
                )
            ]
        }

    app, server = scripted(
        noter, rules=[{"match": lambda body, headers: "triage" in tool_names(body), "reply": grouped}]
    )
    for text in (FORM, "Email from the school: Re: sign the field trip consent form by Friday"):
        app.inject_buffered("email", text, {"from": "school@school.example", "subject": text.split(": ", 1)[-1]})
    app.sync()
    assert app.wait_idle()
    [row] = Inbox.select().where(Inbox.kind == "buffered")
    assert cortex_runs(server) == [] and len(row.payload["buffers"]) == 2
    assert told(row) == [
        "From the email “sign the field trip consent form by Friday” from school@school[.]example "
        "and 1 more item: The school asks twice for the trip form."
    ]


def test_a_link_in_triages_line_is_shown_defanged_with_its_source(scripted):
    app, server = scripted(noter, rules=triage_noting(say="Verify your account at https://evil.example/login today"))
    row = mail(app, "Email from IT: verify your account", sender="it@evil.example")
    [text] = told(row)
    assert "https://evil.example" not in text and "evil[.]example" in text
    assert text.startswith("From the email “verify your account” from it@evil[.]example: ")


# What triage's answer may carry --------------------------------------------------------------------
class Row:
    def __init__(self, id, text="Email from a@b.example: hello"):
        self.id, self.text, self.channel, self.payload = id, text, "email", {}


@pytest.mark.parametrize(
    "item, note",
    [
        ({"plan": False, "priority": 2, "say": "  Sign the\nform  "}, {"say": "Sign the form"}),
        (
            {"plan": False, "priority": 1, "task": {"title": "Pay", "due": "2027-01-08"}},
            {"task": {"title": "Pay", "due": "2027-01-08"}},
        ),
        ({"plan": False, "priority": 2, "task": {"title": "Pay"}, "say": 3}, {"task": {"title": "Pay"}}),
        ({"plan": False, "priority": 3, "say": "for the briefing"}, None),
        ({"plan": True, "priority": 1, "say": "a plan is the planner's"}, None),
        ({"priority": 2, "say": "no word on planning: a plan is assumed"}, None),
        ({"plan": False, "priority": 2, "say": "", "task": {"title": "  "}}, None),
        ({"plan": False, "priority": 2, "task": "Pay"}, None),
    ],
)
def test_only_a_kept_item_without_a_plan_that_needs_the_user_carries_a_note(item, note):
    [decision] = normalise_decisions([{"buffer_ids": [1], "reason": "r", **item}], [Row(1)])
    assert decision.get("note") == note


def test_a_note_is_bounded_and_dropped_items_carry_none():
    note = note_of({"say": "x" * 5000, "task": {"title": "t" * 500, "due": " 2027-01-08 "}})
    assert len(note["say"]) == 300 and len(note["task"]["title"]) == 120 and note["task"]["due"] == "2027-01-08"
    [kept, dropped] = normalise_decisions(
        [{"buffer_ids": [1], "priority": 2, "plan": False, "say": "hi"}],
        [Row(1), Row(2)],
        [{"buffer_ids": [2], "reason": "promo", "say": "x"}],
    )
    assert kept["note"] == {"say": "hi"} and "note" not in dropped


def test_only_a_background_row_without_a_plan_has_a_note_to_act_on():
    note = {"say": "hi"}
    assert triage_note(Inbox(origin="background", payload={"plan": False, "note": note})) == note
    assert triage_note(Inbox(origin="background", payload={"note": note})) is None
    assert triage_note(Inbox(origin="user", payload={"plan": False, "note": note})) is None
    assert triage_note(Inbox(origin="background", payload={"plan": False, "note": {"say": ""}})) is None
