"""Beliefs the user can see and correct: `memories` lists them with ids, dates and provenance; forgetting
one (an approved proposal's execution) retires it and what was learned from it, keeps the history, and
the same evidence never builds it again."""

from __future__ import annotations

from datetime import timedelta

import pytest

from actors.hippocampus import advice, skill
from actors.hippocampus import nightly
from actors.hippocampus.nightly import consolidate
from actors.hippocampus.skill import forget
from channels import views
from storage import engram, recall
from storage import trace as traces
from storage.beliefs import memory_list
from storage.models import Memory
from tests.hippocampus_support import LATE, FakeSynapse, at, done_task, live, night

PRINCIPLE = "Propose flight booking earlier than usual"


@pytest.fixture
def db(any_db):
    """Each test on SQLite, and on PostgreSQL when WILSON_TEST_DATABASE_URL names one."""
    return any_db


def four_late_bookings():
    for n, month in enumerate(("01", "02", "03", "04"), start=1):
        done_task(f"Book flights #{n}", f"2027-{month}-10", at(f"2027-{month}-12"))
        consolidate(night(f"2027-{month}-13"), FakeSynapse())


def test_memories_lists_what_is_believed_with_id_date_and_provenance(db):
    four_late_bookings()
    listed = memory_list()
    assert [m["kind"] for m in listed] == ["principle", "belief", "interpretation"]
    belief = next(m for m in listed if m["kind"] == "belief")
    assert belief["text"] == LATE and belief["since"] == "2027-02-13"
    assert belief["provenance"][:2] == ["task:1", "task:2"]
    shown = views.table("memories", views.memories(None))
    assert f"#{belief['id']:<4} belief" in shown and "since 2027-02-13" in shown and "(from task:1, task:2" in shown


def test_forgetting_a_belief_retires_what_grew_from_it_and_keeps_the_history(db):
    four_late_bookings()
    belief, principle = live("belief", LATE), live("principle", PRINCIPLE)
    interpretation = live("interpretation", LATE)
    now = night("2027-04-20")

    retired = forget(belief.id, now, "I book flights early, the dates were the airline's")

    assert set(retired) == {belief.id, principle.id, interpretation.id}
    assert forget(belief.id, now) == []  # once is enough
    assert Memory.select().where(Memory.id.in_(retired)).count() == 3  # the rows stay, dated
    assert all(m.invalidated_at == now for m in Memory.select().where(Memory.id.in_(retired)))
    assert [m.id for m in recall.recall("flights late", at=now - timedelta(days=1), kinds=("belief",))] == [belief.id]
    assert recall.recall("flights late", kinds=("belief", "principle", "interpretation")) == []
    reason = traces.path(f"memory:{principle.id}")[0].reason
    assert reason.startswith("retired by the user: I book flights early") and f"memory {belief.id}" in reason
    assert memory_list() == []
    assert advice.proposal_advice("create_task", {"title": "Book flights", "due": "2027-06-01"}, now) is None


def test_a_retired_belief_stays_retired_after_the_next_nights(db):
    four_late_bookings()
    belief = live("belief", LATE)
    forget(belief.id, night("2027-04-20"))

    done_task("Water the plants", "2027-04-25", at("2027-04-26"))  # another night with something to learn
    consolidate(night("2027-04-27"), FakeSynapse())
    assert live("belief", LATE) is None and live("principle", PRINCIPLE) is None

    # New evidence starts over from one night: an interpretation, not the old belief back.
    done_task("Book flights #5", "2027-05-10", at("2027-05-12"))
    consolidate(night("2027-05-13"), FakeSynapse())
    assert live("interpretation", LATE).strength == 1
    assert live("belief", LATE) is None


def test_the_same_evidence_cannot_rebuild_a_retired_belief(db):
    belief = engram.store("belief", LATE, ["task:1", "task:2"], night("2027-01-13"), weight=2)
    forget(belief.id, night("2027-01-14"))
    assert engram.was_retired("belief", LATE, ["task:1"])
    assert not engram.was_retired("belief", LATE, ["task:1", "task:9"])
    # an interpretation resting on that evidence alone is not promoted again
    engram.store("interpretation", LATE, ["task:1", "task:2"], night("2027-01-15"), weight=2)
    touched = {m.id: m for m in Memory.select().where(Memory.kind == "interpretation")}
    assert nightly._promote(touched, {}, night("2027-01-15")) == (0, 0)
    assert live("belief", LATE) is None


# Through the gate ----------------------------------------------------------------------------
def memory_box():
    from actors.tools import core
    from wilson.skills import Installed, Toolbox

    return Toolbox([tool() for tool in core.TOOLS], [Installed("memory", skill.SKILL, "wilson test")])


def test_forgetting_is_a_proposal_the_gate_executes_once(db):
    from zoneinfo import ZoneInfo

    from actors import tools
    from storage.models import Approval, ApprovalItem
    from wilson.skills import Call

    four_late_bookings()
    belief = live("belief", LATE)
    box, now, tz = memory_box(), night("2027-04-20"), ZoneInfo("Europe/Berlin")
    forget_tool = box.get("forget_memory")
    call = Call(now=now, tz=tz, user_id="owner")
    assert forget_tool.user_only and "forget_memory" not in {s["function"]["name"] for s in box.schemas()}
    assert forget_tool.validate({"memory": 99999}, call) == "there is no learned memory 99999; see list_memories"
    assert forget_tool.validate({"memory": "x"}, call).startswith("memory must be an integer")
    args = {"memory": belief.id, "reason": "the airline moved the dates"}
    assert forget_tool.validate(args, call) is None
    line = forget_tool.describe(args, call)
    assert line == f"Forget what I learned: “{LATE}” (belief {belief.id}) — because: the airline moved the dates"
    assert live("belief", LATE) is not None  # proposing changes nothing

    approval = Approval.create(
        trace_id="t",
        approver="owner",
        channel="repl",
        nonce="n",
        created_at=now,
        expires_at=now + timedelta(hours=72),
        status="approved",
        decided_at=now,
    )
    item = ApprovalItem.create(
        approval=approval, position=1, tool="forget_memory", args=args, description=line, status="pending"
    )
    with pytest.raises(tools.NotApproved):  # an item the gate did not claim
        tools.execute_approved(item, "owner", now, tz, {}, box=box)
    assert live("belief", LATE) is not None
    ApprovalItem.update(status="executing").where(ApprovalItem.id == item.id).execute()
    result, _ = tools.execute_approved(item, "owner", now, tz, {}, box=box)
    assert belief.id in result["retired"] and live("belief", LATE) is None
    assert forget_tool.validate(args, call) == f"memory {belief.id} is already forgotten"
    assert [t["text"] for t in box.get("list_memories").execute({}, call)] == []
