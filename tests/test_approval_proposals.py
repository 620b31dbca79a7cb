"""The proposals module on its own: it makes and replaces proposals, notes the message showing one, and its
`check()` only reads, so a channel may ask it on its own thread; the gate writes what a refusal implies.

A fresh database and no running Wilson: these are the row transitions the gate and the cortex call.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from actors.proposals import decide, make, rules
from storage import inbox
from storage.models import Approval, ApprovalItem, Trace
from tests.conftest import make_config
from wilson.kernel.messages import Decision

NOW = datetime.fromisoformat("2027-01-05T08:00:00+01:00")
ITEMS = [
    ("create_task", {"title": "Book flights", "due": "2027-02-15"}, "Create task “Book flights” due Mon 15 Feb"),
    ("create_task", {"title": "Pack"}, "Create task “Pack”"),
]


def message(text: str, **kw) -> inbox.Inbox:
    return inbox.add(source="repl", text=text, priority=0, at=NOW, user_id="ann", **kw)


def state(approval_id: int) -> tuple[str, list[str]]:
    row = Approval.get_by_id(approval_id)
    return row.status, [i.status for i in row.items.order_by(ApprovalItem.position)]


def test_a_modification_replaces_its_proposal_once_keeping_its_reason(db, tmp_path):
    config = make_config(tmp_path / "home")
    original = make.propose(message("I'm flying to Japan"), ITEMS, "repl", NOW, config)
    assert original.approver == "ann" and original.reason == "because you asked: “I'm flying to Japan”"
    # it waits until its earliest date has passed (the end of 15 Feb), not 72 hours
    assert original.remind_at is not None and original.expires_at == datetime(2027, 2, 15, 23, tzinfo=timezone.utc)

    change = message("flights by Feb 1", kind="modify", payload={"approval_id": original.id})
    changed = [
        ("create_task", {"title": "Book flights", "due": "2027-02-01"}, "Create task “Book flights” due Mon 1 Feb")
    ]
    later = NOW + timedelta(minutes=5)
    again = make.propose(change, changed, "repl", later, config)
    assert state(original.id) == ("superseded", ["superseded", "superseded"])
    assert Approval.get_by_id(original.id).superseded_by == again.id
    assert again.supersedes == original.id and again.reason == original.reason and again.approver == "ann"
    assert again.changes.splitlines() == [
        "changed: Book flights due Mon 1 Feb 2027 (was Mon 15 Feb 2027)",
        "removed: Create task “Pack”",
    ]
    # the same run recorded twice finds its proposal; it does not supersede anything a second time
    assert make.propose(change, changed, "repl", later, config).id == again.id
    assert Approval.select().count() == 2

    # a second modification of the original arrives after it was replaced: nothing is made
    late = message("and pack later", kind="modify", payload={"approval_id": original.id})
    assert make.propose(late, ITEMS, "repl", later, config) is None
    assert Approval.select().count() == 2 and state(again.id) == ("pending", ["pending"])
    assert Trace.select().where((Trace.stage == "dropped") & (Trace.trace_id == late.trace_id)).exists()


def test_check_only_reads_and_the_gate_marks_a_late_answer_expired_telling_it_once(db, tmp_path):
    config = make_config(tmp_path / "home")
    approval = make.propose(message("I'm flying to Japan"), ITEMS, "repl", NOW, config)
    late = approval.expires_at + timedelta(minutes=1)
    decision = Decision(approval_id=approval.id, action="approve", user_id="ann", channel="repl")

    problem = rules.check(decision, approval, late, config.timezone)
    assert problem.startswith(f"Proposal {approval.id} expired on 16 Feb 00:00")
    assert state(approval.id) == ("pending", ["pending", "pending"])  # asking changed nothing
    assert rules.check(decision, approval, late - timedelta(minutes=2), config.timezone) is None

    assert decide.refuse(decision, approval, late, config.timezone) == (problem, True)
    row = Approval.get_by_id(approval.id)
    assert row.status == "expired" and row.expired_notice_at is not None
    assert decide.refuse(decision, row, late, config.timezone) == (problem, False)  # told once

    # another person's answer is refused without touching the row
    stranger = Decision(approval_id=approval.id, action="approve", user_id="mallory", channel="repl")
    other = make.propose(message("Pack for Japan"), ITEMS[1:], "repl", NOW, config)
    assert decide.refuse(stranger, other, late - timedelta(days=1), config.timezone)[1] is False
    assert state(other.id) == ("pending", ["pending"])


def test_the_message_showing_a_proposal_is_noted_on_it(db, tmp_path):
    config = make_config(tmp_path / "home")
    approval = make.propose(message("I'm flying to Japan"), ITEMS, "repl", NOW, config)
    make.record_message_ref(approval.id, 4242, 17)
    assert Approval.get_by_id(approval.id).message_ref == {"chat_id": 4242, "message_id": 17}


def test_a_long_reason_is_cut_at_a_word_with_its_bracket_closed():
    reason = (
        "Because of the email “Lease renewal: please sign by Friday” from Mr Berger <landlord@mail[.]example> "
        "(offline rules: a renewal notice from Mr Berger <landlord@mail.example>: lease, “by Friday” → Fri 8 Jan)"
    )
    cut = rules.clipped(reason)
    assert len(cut) <= rules.MAX_REASON and cut.endswith("…)")
    assert cut[:-2] == reason[: len(cut) - 2] and reason[len(cut) - 2] == " "  # ends where a word ended
    assert rules.clipped("short enough") == "short enough"
    link = rules.clipped("Because of https://x.example/" + "a" * 300)  # one long word: cut, not the line
    assert len(link) <= rules.MAX_REASON and link.startswith("Because of https://x.example/aaa")
    quoted = rules.clipped("Because “" + "word " * 60 + "”")
    assert quoted.endswith("…”") and len(quoted) <= rules.MAX_REASON
    assert rules.clipped("((" + "word " * 60).endswith("…))")


def test_an_offline_rules_reading_is_kept_whole_and_the_users_words_are_cut_instead(db, tmp_path):
    # the reason ended "(2:30 read as 14:30, the…)": the user's own words, quoted before it, took the room
    config = make_config(tmp_path / "home")
    rule = "one-off reminder (“on Thursday at half past 2” → Thu 14 Jan 2027 14:30 (2:30 read as 14:30, the afternoon))"
    said = "remind me to call the embassy about the visa appointment on Thursday at half past 2"
    approval = make.propose(message(said), ITEMS[:1], "repl", NOW, config, offline=rule)
    assert len(approval.reason) <= rules.MAX_REASON
    assert approval.reason.endswith(f"(offline rules: {rule})")
    assert approval.reason.startswith("because you asked: “remind me to call the embassy") and "…”" in approval.reason
    # a link's every "." grows to "[.]" once quoted: measured as shown
    linked = make.propose(
        message("remind me about www.a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.example.com on Thursday"),
        ITEMS[:1],
        "repl",
        NOW,
        config,
        offline=rule,
    )
    assert len(linked.reason) <= rules.MAX_REASON and linked.reason.endswith(f"(offline rules: {rule})")
    short = make.propose(message("remind me at half past 2"), ITEMS[:1], "repl", NOW, config, offline=rule)
    assert short.reason == f"because you asked: “remind me at half past 2” (offline rules: {rule})"


def test_words_quoted_in_a_reason_are_cut_at_a_word():
    from actors.tools.untrusted import quoted

    # it was "I have a job interview next W…"
    assert quoted("I have a job interview next Wednesday at 2", 30) == "I have a job interview next…"
    assert quoted("short words", 30) == "short words"
    link = quoted("see https://x.example/" + "a" * 100, 40)  # one long word: cut inside it, not dropped
    assert link.startswith("see x[.]example/aaa") and link.endswith("a…") and len(link) <= 42
