"""The hippocampus consolidates real working-memory rows (SQLite) night after night.

The model sits behind a small in-test stand-in with Synapse's `chat` signature:
it answers the way the offline provider does (echoing the candidates as
record_memories items), or says something else, or fails.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pykka
import pytest

from actors.hippocampus.actor import HippocampusActor
from actors.hippocampus.episodes import collect_episodes
from actors.hippocampus.model import build_request, parse_items
from actors.hippocampus.nightly import consolidate
from actors.hippocampus.outcomes import calibration
from actors.hippocampus.rules import interpret, subject_of
from storage import engram, recall
from storage import trace as traces
from storage.models import Approval, ApprovalItem, Cursor, Feedback, Memory, Outbox, Setting, Task, Trace, Turn
from wilson.kernel.actor import Context
from wilson.kernel.clock import SimClock
from wilson.kernel.config import Config
from wilson.kernel.messages import Consolidate
from tests.actor_support import RecordingDirectory

from wilson.model.errors import BudgetExhausted, SynapseError
from tests.hippocampus_support import Call, FakeSynapse, LATE, Reply, UTC, at, done_task, live, night, proposal


# -- working-memory rows, as the approval gate and the cortex leave them ----------


def modified(original: Approval, new_due: str, when: datetime) -> tuple[Approval, Task]:
    """The user moved the due in a modification, then approved the replacement."""
    title = original.items[0].args["title"]
    successor = proposal(
        title, new_due, decided=when + timedelta(minutes=5), status="approved", item_status="executed", created=when
    )
    successor.supersedes = original.id
    successor.save()
    original.status, original.superseded_by, original.decided_at = "superseded", successor.id, when
    original.save()
    ApprovalItem.update(status="superseded").where(ApprovalItem.approval == original.id).execute()
    task = Task.create(
        title=title, due=datetime.fromisoformat(new_due).replace(tzinfo=UTC), due_is_date=True, created_at=when
    )
    return successor, task


# -- the scenario ------------------------------------------------------------------


def test_moving_a_flight_booking_later_is_interpreted_with_provenance(db):
    original = proposal(
        "Book flights", "2027-01-20", decided=None, status="pending", item_status="pending", created=at("2027-01-10", 9)
    )
    successor, task = modified(original, "2027-02-01", at("2027-01-10", 10))
    synapse = FakeSynapse()

    counts = consolidate(night("2027-01-11"), synapse)

    assert len(synapse.calls) == 1
    call = synapse.calls[0]
    assert (call["role"], call["origin"]) == ("fast", "background")  # [hippocampus] role's default
    assert [t["function"]["name"] for t in call["tools"]] == ["record_memories"]
    request = json.loads(call["messages"][-1]["content"])
    assert request["now"] == night("2027-01-11").isoformat()
    assert {e["id"] for e in request["episodes"]} == {f"approval:{original.id}", f"approval:{successor.id}"}
    assert "2027-01-20 to 2027-02-01 (12 days later)" in next(
        e["text"] for e in request["episodes"] if e["id"] == f"approval:{original.id}"
    )
    assert [c["text"] for c in request["candidates"]] == [LATE]

    memory = live("interpretation", LATE)
    assert memory is not None and memory.strength == 1
    assert memory.provenance == [f"approval:{original.id}", f"approval:{successor.id}"]
    assert Memory.select().where(Memory.kind == "episode").count() == 2
    assert live("belief", LATE) is None
    assert counts["by"] == "model" and counts["episodes"] == 2 and counts["stored"] == 1

    assert Cursor.get(Cursor.name == "hippocampus:last_run").value == {"until": night("2027-01-11").isoformat()}
    run = Trace.get(Trace.stage == "consolidated")
    assert run.actor == "hippocampus" and run.data["episodes"] == 2 and run.data["stored"] == 1
    figures = Setting.get(Setting.key == "calibration").value
    assert figures["proposals"]["modified"] == 1 and figures["proposals"]["approved"] == 1


def test_a_quiet_night_makes_no_model_call_and_nothing_is_consolidated_twice(db):
    original = proposal("Book flights", "2027-01-20", decided=None, status="pending", item_status="pending")
    modified(original, "2027-02-01", at("2027-01-10", 10))
    synapse = FakeSynapse()
    consolidate(night("2027-01-11"), synapse)

    counts = consolidate(night("2027-01-12"), synapse)

    assert len(synapse.calls) == 1
    assert counts["episodes"] == 0 and counts["by"] == "nobody"
    assert live("interpretation", LATE).strength == 1
    assert Memory.select().where(Memory.kind == "episode").count() == 2
    assert [t.reason for t in Trace.select().where(Trace.stage == "consolidated").order_by(Trace.id)][
        -1
    ] == "nothing new"


def test_the_same_pattern_on_two_nights_becomes_a_belief_and_counter_evidence_invalidates_it(db):
    original = proposal("Book flights", "2027-01-20", decided=None, status="pending", item_status="pending")
    successor, task = modified(original, "2027-02-01", at("2027-01-10", 10))
    synapse = FakeSynapse()
    consolidate(night("2027-01-11"), synapse)

    # The booking itself then happened two days after the (already postponed) due.
    task.status, task.completed_at = "done", at("2027-02-03", 18)
    task.save()
    consolidate(night("2027-02-04"), synapse)

    interpretation = live("interpretation", LATE)
    belief = live("belief", LATE)
    assert interpretation.strength == 2
    assert belief is not None and belief.strength == 2
    assert set(belief.provenance) == {f"approval:{original.id}", f"approval:{successor.id}", f"task:{task.id}"}
    assert [m.id for m in recall.recall("flights booked late", kinds=("belief",))] == [belief.id]

    # Weeks ahead of its due, the next flight booking is done: the belief no longer holds.
    early = done_task("Book flights to Lisbon", "2027-04-01", at("2027-03-01", 9))
    counts = consolidate(night("2027-03-02"), synapse)

    assert counts["invalidated"] == 2
    assert live("belief", LATE) is None and live("interpretation", LATE) is None
    assert Memory.get_by_id(belief.id).invalidated_at == night("2027-03-02")
    assert recall.recall("flights late", kinds=("belief", "interpretation")) == [
        live("interpretation", "user books flights early")
    ]
    assert f"task:{early.id}" in traces.path(f"memory:{belief.id}")[0].reason


def test_four_nights_of_late_bookings_make_a_principle(db):
    synapse = FakeSynapse()
    for n, month in enumerate(("01", "02", "03", "04"), start=1):
        done_task(f"Book flights #{n}", f"2027-{month}-10", at(f"2027-{month}-12"))
        consolidate(night(f"2027-{month}-13"), synapse)

    belief = live("belief", LATE)
    assert live("interpretation", LATE).strength == 4
    assert belief.strength == 4
    principle = live("principle", "Propose flight booking earlier than usual")
    assert principle is not None and principle.strength == 4
    assert f"memory:{belief.id}" in principle.provenance
    assert {f"task:{t.id}" for t in Task.select()} <= set(principle.provenance)
    assert len(synapse.calls) == 4


def test_without_the_model_the_rule_candidates_are_stored(db):
    original = proposal("Book flights", "2027-01-20", decided=None, status="pending", item_status="pending")
    successor, _ = modified(original, "2027-02-01", at("2027-01-10", 10))
    synapse = FakeSynapse(error=BudgetExhausted("deep budget spent for today"))

    counts = consolidate(night("2027-01-11"), synapse)

    assert len(synapse.calls) == 1
    assert counts["by"] == "rules"
    assert live("interpretation", LATE).provenance == [f"approval:{original.id}", f"approval:{successor.id}"]
    assert "(rules)" in Trace.get(Trace.stage == "consolidated").reason
    assert Cursor.get(Cursor.name == "hippocampus:last_run").value["until"] == night("2027-01-11").isoformat()

    # Any error of the gateway, not only the budget, degrades the same way.
    done_task("Book flights home", "2027-02-01", at("2027-02-05"))
    assert consolidate(night("2027-02-06"), FakeSynapse(error=SynapseError("provider down")))["by"] == "rules"
    assert live("belief", LATE).strength == 2


def test_an_unexpected_failure_commits_nothing_and_the_next_run_resumes_from_the_cursor(db):
    done_task("Book flights", "2027-01-05", at("2027-01-08"))

    with pytest.raises(RuntimeError):
        consolidate(night("2027-01-09"), FakeSynapse(error=RuntimeError("bug")))
    assert Memory.select().count() == 0
    assert not Cursor.select().where(Cursor.name == "hippocampus:last_run").exists()

    synapse = FakeSynapse()
    consolidate(night("2027-01-10"), synapse)
    assert live("interpretation", LATE) is not None
    assert len(synapse.calls) == 1


def test_the_model_may_add_memories_but_only_with_provenance_that_exists(db):
    turn = Turn.create(
        channel="repl", role="user", text="I always forget the plants when I travel", created_at=at("2027-01-10")
    )
    task = done_task("Book flights", "2027-01-05", at("2027-01-08"))
    synapse = FakeSynapse(
        extra_items=[
            {"kind": "interpretation", "text": "User books flights LATE.", "provenance": [f"task:{task.id}"]},
            {
                "kind": "interpretation",
                "text": "user forgets the plants when travelling",
                "provenance": [f"turn:{turn.id}"],
            },
            {"kind": "belief", "text": "user owns a boat", "provenance": ["approval:999"]},
            {"kind": "opinion", "text": "unknown kind", "provenance": [f"turn:{turn.id}"]},
        ]
    )

    counts = consolidate(night("2027-01-11"), synapse)

    assert live("interpretation", "user forgets the plants when travelling").provenance == [f"turn:{turn.id}"]
    assert live("belief", "user owns a boat") is None
    assert not Memory.select().where(Memory.text == "unknown kind").exists()
    assert live("interpretation", LATE).strength == 1  # said twice in one night counts once
    assert counts["stored"] == 2


def test_the_model_keeps_a_candidate_by_its_number_in_the_candidates_own_words(db):
    turn = Turn.create(
        channel="repl", role="user", text="I always forget the plants when I travel", created_at=at("2027-01-10")
    )
    done_task("Book flights", "2027-01-05", at("2027-01-08"))
    synapse = FakeSynapse(
        arguments={
            "keep": ["1", 7, True],
            "items": [
                {
                    "kind": "interpretation",
                    "text": "user forgets the plants when travelling",
                    "provenance": [f"turn:{turn.id}"],
                }
            ],
        }
    )

    counts = consolidate(night("2027-01-11"), synapse)

    [candidate] = json.loads(synapse.calls[0]["messages"][-1]["content"])["candidates"]
    assert candidate["n"] == 1 and candidate["text"] == LATE
    kept = live("interpretation", LATE)
    assert kept is not None and kept.provenance == candidate["provenance"], (
        "its words and evidence, as the rules had them"
    )
    assert live("interpretation", "user forgets the plants when travelling") is not None
    assert counts["by"] == "model" and counts["stored"] == 2, "a number written as text counts; others keep nothing"


def test_a_keep_that_names_no_candidate_leaves_the_night_to_the_rules(db):
    done_task("Book flights", "2027-01-05", at("2027-01-08"))
    candidates = [{"kind": "interpretation", "text": LATE, "provenance": ["task:1"]}]
    unusable = Reply(tool_calls=[Call("record_memories", {"keep": [9, "first"], "items": []})])
    assert parse_items(unusable, {"task:1"}, candidates) is None
    kept = Reply(tool_calls=[Call("record_memories", {"keep": [1], "items": []})])
    assert parse_items(kept, {"task:1"}, candidates) == candidates
    nothing = Reply(tool_calls=[Call("record_memories", {"keep": [], "items": []})])
    assert parse_items(nothing, {"task:1"}, candidates) == [], "keeping nothing is an answer"

    counts = consolidate(night("2027-01-11"), FakeSynapse(arguments={"keep": [9], "items": []}))

    assert counts["by"] == "rules" and live("interpretation", LATE) is not None


def test_rows_committed_while_the_model_thinks_are_consolidated_once(db):
    done_task("Book flights", "2027-01-05", at("2027-01-08"))

    class SlowSynapse(FakeSynapse):
        def chat(self, role, messages, tools=None, origin="user", **sizing):
            reply = super().chat(role, messages, tools=tools, origin=origin, **sizing)
            self.meanwhile = done_task("Renew passport", "2027-01-06", at("2027-01-09", 2))
            return reply

    synapse = SlowSynapse()
    counts = consolidate(night("2027-01-09"), synapse)

    assert counts["episodes"] == 2
    renewal = live("interpretation", "user renews documents late")
    assert renewal is not None and renewal.provenance == [f"task:{synapse.meanwhile.id}"]
    assert consolidate(night("2027-01-10"), synapse)["episodes"] == 0
    assert Memory.select().where(Memory.kind == "episode").count() == 2


def test_a_broken_model_answer_falls_back_to_the_rules(db):
    done_task("Book flights", "2027-01-05", at("2027-01-08"))
    counts = consolidate(night("2027-01-09"), FakeSynapse(arguments="{not json"))
    assert counts["by"] == "rules"
    assert live("interpretation", LATE) is not None


def test_rejected_and_ignored_proposals_are_interpreted_and_refuted_by_later_answers(db):
    rejected = proposal(
        "Water the plants", "2027-01-15", decided=at("2027-01-10"), status="rejected", item_status="rejected"
    )
    ignored = proposal(
        "Book a hotel in Porto",
        "2027-02-01",
        decided=None,
        status="pending",
        item_status="pending",
        created=at("2027-01-07"),
        expires=at("2027-01-10"),
    )
    consolidate(night("2027-01-11"), FakeSynapse())

    unwanted = live("interpretation", "user does not want tasks like 'Water the plants'")
    unanswered = live("interpretation", "proposals about hotel booking go unanswered")
    assert unwanted.provenance == [f"approval:{rejected.id}"]
    assert unanswered.provenance == [f"approval:{ignored.id}"]

    # Once the user says yes to the same kind of task, neither holds any more.
    proposal("Water the plants", "2027-01-20", decided=at("2027-01-12"), status="approved", item_status="executed")
    proposal("Book a hotel in Porto", "2027-02-01", decided=at("2027-01-12"), status="rejected", item_status="rejected")
    consolidate(night("2027-01-13"), FakeSynapse())
    assert Memory.get_by_id(unwanted.id).invalidated_at == night("2027-01-13")
    assert Memory.get_by_id(unanswered.id).invalidated_at == night("2027-01-13")


def test_collect_episodes_reads_only_the_window_and_names_its_sources(db):
    before = done_task("Pay rent", "2027-01-01", at("2027-01-02"))
    inside = done_task("Pay rent", "2027-02-01", at("2027-01-20"))
    box = Outbox.create(
        trace_id="t",
        channel="repl",
        idempotency_key="k",
        text="Your rent is due soon",
        surfaced=True,
        created_at=at("2027-01-18"),
    )
    reaction = Feedback.create(outbox_id=box.id, kind="reaction", value="👍🏽", at=at("2027-01-18", 13))
    Turn.create(channel="repl", role="assistant", text="Noted.", created_at=at("2027-01-18"))
    said = Turn.create(channel="repl", role="user", text="thanks", created_at=at("2027-01-18"))

    episodes = collect_episodes(at("2027-01-10"), at("2027-01-25"))

    by_id = {e["id"]: e for e in episodes}
    assert set(by_id) == {f"task:{inside.id}", f"feedback:{reaction.id}", f"turn:{said.id}"}
    assert f"task:{before.id}" not in by_id
    assert by_id[f"task:{inside.id}"]["timing"] == "early" and by_id[f"task:{inside.id}"]["days"] == 12
    assert by_id[f"feedback:{reaction.id}"]["sentiment"] == "up"
    assert by_id[f"feedback:{reaction.id}"]["provenance"] == [f"feedback:{reaction.id}", f"outbox:{box.id}"]
    assert interpret(episodes) == [
        {
            "kind": "interpretation",
            "text": "user pays bills early",
            "provenance": [f"task:{inside.id}"],
            "pattern": "early:bills",
            "principle": None,
            "contradicts": [
                "user pays bills late",
                "Keep in mind: user pays bills late",
                "Propose bill payment earlier than usual",
            ],
        }
    ]


def test_a_partly_decided_proposal_counts_each_item_once_across_nights(db):
    approval = proposal(
        "Book flights",
        "2027-02-01",
        decided=at("2027-01-10"),
        status="partial",
        item_status="executed",
        created=at("2027-01-09"),
        expires=at("2027-01-12"),
    )
    ApprovalItem.create(
        approval=approval,
        position=2,
        tool="create_task",
        args={"title": "Book a hotel"},
        description="New task: Book a hotel",
        status="pending",
    )

    first = collect_episodes(at("2027-01-09"), at("2027-01-11"))
    second = collect_episodes(at("2027-01-11"), at("2027-01-13"))

    assert [(f["title"], f["outcome"]) for f in first[0]["items"]] == [("Book flights", "approved")]
    assert [(f["title"], f["outcome"]) for f in second[0]["items"]] == [("Book a hotel", "ignored")]
    assert second[0]["outcome"] == "ignored"


def test_calibration_counts_outcomes_and_thumbs(db):
    proposal("A", "2027-01-15", decided=at("2027-01-10"), status="approved", item_status="executed")
    proposal("B", "2027-01-15", decided=at("2027-01-10"), status="rejected", item_status="rejected")
    proposal("C", "2027-01-15", decided=at("2027-01-10"), status="rejected", item_status="rejected")
    proposal(
        "D",
        "2027-01-15",
        decided=None,
        status="expired",
        item_status="pending",
        created=at("2027-01-06"),
        expires=at("2027-01-09"),
    )
    original = proposal("E", "2027-01-15", decided=None, status="pending", item_status="pending")
    modified(original, "2027-01-18", at("2027-01-10"))
    for n, value in enumerate(["👍", "👎", "👍🏻", "🎉"]):
        box = Outbox.create(
            trace_id="t", channel="repl", idempotency_key=f"k{n}", text="hi", surfaced=True, created_at=at("2027-01-10")
        )
        Feedback.create(outbox_id=box.id, kind="reaction", value=value, at=at("2027-01-10", 13))
    Outbox.create(
        trace_id="t",
        channel="silent",
        idempotency_key="quiet",
        text="kept quiet",
        surfaced=False,
        created_at=at("2027-01-10"),
    )

    figures = calibration(at("2027-01-01"), at("2027-01-31"))

    assert figures["proposals"] == {"approved": 2, "rejected": 2, "modified": 1, "ignored": 1, "partial": 0}
    assert figures["approval_rate"] == round(2 / 6, 3)
    assert figures["surfaced"] == 4
    assert figures["reactions"] == {"up": 2, "down": 1, "other": 1}
    assert figures["thumbs_up_rate"] == round(2 / 3, 3)
    assert calibration(at("2027-02-01"))["proposals"]["approved"] == 0


def test_the_actor_consolidates_when_told_and_a_fresh_actor_resumes(db):
    done_task("Book flights", "2027-01-05", at("2027-01-08"))
    clock = SimClock(night("2027-01-09"))
    synapse = FakeSynapse()
    ctx = Context(
        config=Config(home=Path(".")),
        clock=clock,
        synapse=synapse,
        directory=RecordingDirectory(strict=True, delivers=False),
    )

    first = HippocampusActor.start(ctx)
    try:
        counts = first.ask(Consolidate(), timeout=10)
    finally:
        first.stop()
    assert counts["episodes"] == 1 and live("interpretation", LATE) is not None

    clock.advance(timedelta(days=1))
    second = HippocampusActor.start(ctx)
    try:
        assert second.ask(Consolidate(), timeout=10)["episodes"] == 0
    finally:
        second.stop()
    assert len(synapse.calls) == 1 and synapse.calls[0]["role"] == "fast"
    assert ctx.directory.handled_by == ["hippocampus", "hippocampus"]
    assert not pykka.ActorRegistry.get_by_class(HippocampusActor)


def test_the_configured_role_consolidates_and_a_wrong_one_is_a_clear_error(db, tmp_path):
    from wilson.kernel import config as configmod

    done_task("Book flights", "2027-01-05", at("2027-01-08"))
    synapse = FakeSynapse()
    config = configmod.load(tmp_path, {"WILSON_HIPPOCAMPUS_ROLE": "Deep"})
    ctx = Context(
        config=config,
        clock=SimClock(night("2027-01-09")),
        synapse=synapse,
        directory=RecordingDirectory(strict=True, delivers=False),
    )
    actor = HippocampusActor.start(ctx)
    try:
        actor.ask(Consolidate(), timeout=10)
    finally:
        actor.stop()
    assert [c["role"] for c in synapse.calls] == ["deep"]

    with pytest.raises(configmod.ConfigError, match="WILSON_HIPPOCAMPUS_ROLE.*reflex, fast or deep"):
        configmod.load(tmp_path, {"WILSON_HIPPOCAMPUS_ROLE": "huge"})


def test_old_weak_memories_are_pruned_during_consolidation(db):
    engram.store("episode", "an old passing remark", ["turn:1"], at("2026-06-01"))
    keep = engram.store("belief", "user likes aisle seats", ["turn:2"], at("2026-06-01"), weight=3)
    done_task("Book flights", "2027-01-05", at("2027-01-08"))

    counts = consolidate(night("2027-01-09"), FakeSynapse())

    assert counts["pruned"] == 1
    assert not Memory.select().where(Memory.text == "an old passing remark").exists()
    assert Memory.get_by_id(keep.id).strength == 3


def test_subjects_name_known_habits_and_quote_the_rest():
    assert subject_of("Book flight to Oslo")[1] == "books flights"
    assert subject_of("File taxes 2026")[2] == "tax filing"
    assert subject_of("Call grandma")[1:] == ("does tasks like 'Call grandma'", "tasks like 'Call grandma'")


def offline_synapse(tmp_path, **environ):
    from wilson.kernel import config as configmod
    from wilson.model.synapse import Synapse

    return Synapse(configmod.load(tmp_path, environ=environ), SimClock(night("2027-01-11")))


def test_with_the_offline_provider_the_candidates_are_recorded(db, tmp_path):
    original = proposal("Book flights", "2027-01-20", decided=None, status="pending", item_status="pending")
    successor, _ = modified(original, "2027-02-01", at("2027-01-10", 10))

    counts = consolidate(night("2027-01-11"), offline_synapse(tmp_path))

    assert counts["by"] == "model"
    assert live("interpretation", LATE).provenance == [f"approval:{original.id}", f"approval:{successor.id}"]


def test_a_spent_budget_degrades_to_the_rules(db, tmp_path):
    done_task("Book flights", "2027-01-05", at("2027-01-08"))

    counts = consolidate(night("2027-01-11"), offline_synapse(tmp_path, WILSON_LLM_DAILY_BUDGET="0"))

    assert counts["by"] == "rules"
    assert live("interpretation", LATE) is not None


def test_the_model_sees_each_candidate_as_it_may_answer_it_and_not_the_rules_bookkeeping():
    candidate = {
        "kind": "interpretation",
        "text": "user books flights late",
        "provenance": ["task:3"],
        "pattern": "late:flights",
        "principle": "Remind about flights earlier",
        "contradicts": ["x"],
    }
    [shown] = json.loads(build_request(datetime(2027, 1, 5, tzinfo=UTC), [candidate], [])[1]["content"])["candidates"]
    assert shown == {"n": 1, "kind": "interpretation", "text": "user books flights late", "provenance": ["task:3"]}
