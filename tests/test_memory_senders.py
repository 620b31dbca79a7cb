"""Mail from senders the user ignores sinks, once the user agrees: mail that reached the user (on its own or in
the morning briefing) and got no reaction within a day, from one sender on three nights, becomes a belief,
which the night offers as a proposal; only once approved does triage name the sender to the model, and the offline rules keep that sender's mail for the briefing
(unless it is about something urgent), traced with the memory. A reacted-to mail refutes the belief,
and forgetting it restores triage as it was."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from actors.hippocampus import advice, consent
from actors.hippocampus.heeded import HEED_WITHIN, mail_episodes
from actors.hippocampus.nightly import consolidate
from actors.hippocampus.rules import counter_evidence, interpret
from actors.hippocampus.skill import forget
from actors.thalamus import apply_triage
from actors.triage import triage_context, triage_request
from storage import buffers, inbox, outbox, trace
from storage.models import Feedback, Outbox, ReceptorBuffer, Turn
from tests.hippocampus_support import FakeSynapse, at, night
from wilson.kernel.clock import UTC
from wilson.model.offline import triage as offline_triage

SENDER = "news@shop.example"
BELIEF = f"user ignores mail from {SENDER}"
DAYS = ("2027-01-04", "2027-01-11", "2027-01-18", "2027-01-25")


@pytest.fixture
def db(any_db):
    return any_db


def mail(n: int, day: str, subject: str, text: str, sender: str = SENDER) -> ReceptorBuffer:
    payload = {"channel": "email", "from": sender, "subject": subject}
    return buffers.add(channel="email", text=text, dedup_key=f"mail:{sender}:{n}", at=at(day, 7), payload=payload)


def surfaced(row: ReceptorBuffer, day: str, *, reacted: bool = False, replied: str | None = None) -> Outbox:
    """The mail told on its own at 09:00 on `day` (as triage and the cortex leave it)."""
    run = inbox.add(
        source="email",
        kind="buffered",
        origin="background",
        priority=2,
        at=at(day, 8),
        text=row.text,
        trace_id=row.trace_id,
        payload={"buffers": [dict(row.payload, buffer_id=row.id, channel=row.channel)]},
    )
    box = outbox.add(
        channel="repl",
        text=f"New mail: {row.payload['subject']}",
        trace_id=run.trace_id,
        key=f"surface:{run.id}:0",
        at=at(day, 9),
    )
    return _delivered(box, day, reacted=reacted, replied=replied)


def briefed(row: ReceptorBuffer, day: str) -> Outbox:
    """The mail told in the morning briefing at 09:00 on `day`."""
    box = outbox.add(
        channel="repl", text="Good morning", trace_id=trace.new_trace_id(), key=f"briefing:{day}", at=at(day, 7)
    )
    inbox.add(
        source="thalamus",
        kind="briefing",
        origin="background",
        priority=3,
        at=at(day, 7),
        text=f"Morning briefing:\n- {row.payload['subject']}",
        dedup_key=f"briefing:{row.id}:1",
        payload={"items": [{"summary": row.payload["subject"], "buffer_ids": [row.id]}], "briefing_outbox": box.id},
    )
    return _delivered(box, day)


def _delivered(box: Outbox, day: str, *, reacted: bool = False, replied: str | None = None) -> Outbox:
    Outbox.update(status="delivered", delivered_at=at(day, 9)).where(Outbox.id == box.id).execute()
    if reacted:
        Feedback.create(outbox_id=box.id, kind="reaction", value="👍", at=at(day, 10))
    if replied:
        Turn.create(channel="repl", role="user", text=replied, created_at=at(day, 11))
    return box


def nights_of_newsletters(*, reacted_on: int | None = None, nights: int = 3, agree: bool = True) -> None:
    """The nights' mail; `agree`: the user then approves what the nights offered (sinking the sender)."""
    for n, day in enumerate(DAYS[:nights]):
        row = mail(n, day, f"Your weekly picks #{n}", "Hand-picked for you this week.")
        if n == 1:
            briefed(row, day)  # the briefing tells mail too
        else:
            surfaced(row, day, reacted=n == reacted_on)
        consolidate(night(day) + timedelta(days=2), FakeSynapse())
    if agree:
        agreed(night(DAYS[nights - 1]) + timedelta(days=3))


def agreed(now) -> None:
    """The user says yes to what the nights offered (the gate's execution of each proposal)."""
    for _, change in consent.offers(now, advice.HOLD_BACK_AT):
        consent.adopt(change["key"], True, None, change["does"], now)


def test_a_sender_learned_about_is_not_sunk_until_the_user_agrees(db):
    nights_of_newsletters(agree=False)
    assert advice.ignored_senders(NOW) == {}
    assert offline([next_mail(*ORDINARY)])[0]["priority"] == 2  # ranked as before
    [(memory, change)] = consent.offers(NOW, advice.HOLD_BACK_AT)
    assert memory.text == BELIEF and change["does"] == f"keep mail from {SENDER} for the morning briefing"
    assert consent.offer_text(memory, change).startswith(f"because you let mail from {SENDER} pass on 3 occasions")


def next_mail(subject: str, text: str, n: int = 99) -> ReceptorBuffer:
    return mail(n, "2027-02-01", subject, text)


NOW = at("2027-02-01", 8)
ORDINARY = (
    "Confirm your delivery address by Friday",
    "Please confirm your delivery address by Friday 5 February, or the parcel goes back to us.",
)


def offline(rows: list) -> list[dict]:
    return offline_triage.triage(triage_context(rows, NOW, UTC)["items"], NOW, UTC)["items"]


def test_three_nights_of_ignored_mail_sink_the_next_one_for_the_briefing_traced_with_the_memory(db):
    row = next_mail(*ORDINARY)
    [before] = offline([row])
    assert before["priority"] == 2  # a date within the week: needs action, before anything was learned

    nights_of_newsletters()
    belief = advice.ignored_senders(NOW)[SENDER]
    assert belief["text"] == BELIEF
    [decision] = offline([row])
    assert decision["priority"] == 3 and decision["action"] == "inbox"
    assert f"memory {belief['memory']}" in decision["reason"] and BELIEF in decision["reason"]

    apply_triage([decision], [row], NOW, daily=False)
    reasons = [t.reason for t in trace.path(row.trace_id)]
    assert any("kept for the morning briefing" in r and f"memory {belief['memory']}" in r for r in reasons)
    other = mail(100, "2027-02-01", *ORDINARY, sender="shop@another.example")
    assert offline([other])[0]["priority"] == 2  # another sender's mail is ranked as before


def test_the_models_triage_request_names_the_ignored_sender(db):
    nights_of_newsletters()
    memory = advice.ignored_senders(NOW)[SENDER]["memory"]
    row, other = next_mail(*ORDINARY), mail(100, "2027-02-01", *ORDINARY, sender="friend@example.org")
    body = json.loads(triage_request([row, other], NOW, UTC)[1]["content"])
    assert f"{SENDER} (memory {memory})" in body["learned"]
    assert "friend@example.org" not in body["learned"]
    assert "learned" not in json.loads(triage_request([other], NOW, UTC)[1]["content"])


def test_an_urgent_situation_from_an_ignored_sender_is_not_sunk(db):
    nights_of_newsletters()
    row = next_mail("Flight cancelled", "Your flight LH 400 to Tokyo has been cancelled. Please rebook today.")
    [decision] = offline([row])
    assert decision["priority"] == 1 and "memory" not in decision["reason"]


def test_a_mail_reacted_to_refutes_the_belief(db):
    nights_of_newsletters(reacted_on=3, nights=4)  # three let pass, then a 👍 within the day
    assert advice.ignored_senders(NOW) == {}
    assert offline([next_mail(*ORDINARY)])[0]["priority"] == 2


def test_words_about_the_mail_count_as_a_reaction(db):
    for n, day in enumerate(DAYS[:3]):
        row = mail(n, day, f"Your weekly picks #{n}", "Hand-picked for you this week.")
        surfaced(row, day, replied=f"what did {SENDER} want?" if n == 2 else None)
        consolidate(night(day) + timedelta(days=2), FakeSynapse())
    assert advice.ignored_senders(NOW) == {}


def test_forgetting_the_belief_restores_triage(db):
    nights_of_newsletters()
    memory = advice.ignored_senders(NOW)[SENDER]["memory"]
    forget(memory, night("2027-01-31"), "I read their mail")
    assert advice.ignored_senders(NOW) == {}
    row = next_mail(*ORDINARY)
    assert offline([row])[0]["priority"] == 2
    assert "learned" not in json.loads(triage_request([row], NOW, UTC)[1]["content"])


# The whole app: the sync's request to the model, and the offline rules behind the same sync ------


def believed(app) -> int:
    """The belief as three nights leave it (the evidence is the tests above), learned before the app's day."""
    from storage import engram

    memory = engram.store(
        "belief", BELIEF, ["mail:1", "mail:2", "mail:3"], app.clock.now() - timedelta(days=1), weight=3
    ).id
    agreed(app.clock.now())
    return memory


def test_the_morning_syncs_model_request_carries_the_hint(make_app):
    from tests.thalamus_support import START, advance_to, at as local, brain, requests_of
    from wilson.model.scripted import ScriptedServer

    server = ScriptedServer(brain())
    server.start()
    try:
        app = make_app(start=START, llm=server.base_url, env={"WILSON_LLM_RETRIES": "0"})
        memory = believed(app)
        app.inject_buffered("email", ORDINARY[1], {"from": SENDER, "subject": ORDINARY[0]})
        advance_to(app, local(app, 6, 7, 1))
        [request] = [r for r in requests_of(server, "fast") if "triage" in json.dumps(r["body"].get("tools"))]
    finally:
        server.stop()
    learned = json.loads(request["body"]["messages"][-1]["content"])["learned"]
    assert f"{SENDER} (memory {memory})" in learned


def test_offline_the_morning_sync_keeps_the_mail_for_the_briefing_traced_with_the_memory(make_app):
    app = make_app(start="2027-01-05T10:00:00+01:00")
    memory = believed(app)
    row = app.inject_buffered(
        "email",
        "Please confirm your delivery address by Thursday 7 January, or the parcel goes back to us.",
        {"from": SENDER, "subject": "Confirm your delivery address"},
    )
    app.advance(timedelta(hours=22))
    reasons = [t.reason for t in trace.path(row.trace_id)]
    assert any(r.startswith("for the morning briefing") and f"memory {memory}" in r for r in reasons), reasons


def test_a_briefing_of_many_senders_mail_is_evidence_about_each_sender_for_their_own_mail_only(db):
    day = DAYS[0]
    receipts = [
        mail(n, day, "Receipt for your storage plan", f"Receipt {n}", sender="noreply@cloud.example") for n in range(3)
    ]
    letter = mail(9, day, "Lease renewal", "Please sign.", sender="landlord@flats.example")
    notice = mail(10, day, "Rent statement", "Your statement.", sender="landlord@flats.example")
    box = outbox.add(
        channel="repl", text="Good morning", trace_id=trace.new_trace_id(), key=f"briefing:{day}", at=at(day, 7)
    )
    rows = receipts + [letter, notice]
    inbox.add(
        source="thalamus",
        kind="briefing",
        origin="background",
        priority=3,
        at=at(day, 7),
        text="Morning briefing",
        dedup_key="briefing:many",
        payload={
            "items": [{"summary": r.payload["subject"], "buffer_ids": [r.id]} for r in rows],
            "briefing_outbox": box.id,
        },
    )
    _delivered(box, day)
    Turn.create(channel="repl", role="user", text="I signed the lease renewal", created_at=at(day, 12))

    [episode] = mail_episodes(at(day, 0) + HEED_WITHIN, at(day, 23) + HEED_WITHIN)
    assert episode["text"] == (
        "Mail from noreply@cloud.example (“Receipt for your storage plan”, 3 mails) was "
        "let pass, from landlord@flats.example (“Lease renewal”) was reacted to, "
        "from landlord@flats.example (“Rent statement”) was let pass"
    )
    cloud, landlord = interpret([episode])
    assert cloud["text"] == "user ignores mail from noreply@cloud.example"
    assert cloud["provenance"] == [f"outbox:{box.id}"] + [f"buffer:{r.id}" for r in receipts]
    assert landlord["provenance"] == [f"outbox:{box.id}", f"buffer:{notice.id}"], "only the mail let pass"
    [refuted] = counter_evidence([episode])
    assert refuted["provenance"] == [f"outbox:{box.id}", f"buffer:{letter.id}"], "only the mail reacted to"
