"""The thalamus: realtime routing and batched triage of buffered input (issue 6).

The pure functions are tested without threads; everything else runs the real
actors on SQLite with a simulated clock and the scripted model server over HTTP,
so the assertions count real requests and real rows.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from datetime import date, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest

from actors import thalamus
from actors.thalamus import apply_triage
from actors import triage
from actors.triage import chunks, look_answer, normalise_decisions
from storage import buffers, trace
from storage.db import database
from storage.models import Inbox, Outbox, ReceptorBuffer, TokenUsage
from tests.calendar_support import add_event
from wilson.kernel import clock as clockmod
from wilson.model.scripted import tool_names
from tests.thalamus_support import (
    NO_RETRIES,
    START,
    advance_to,
    assert_each_once,
    at,
    brain,
    call,
    ids_asked,
    offers,
    request_items,
    requests_of,
    triage_item,
    triage_reply,
    triage_requests,
    where_rows_went,
)
from tests.poll import wait_for

ROOT = Path(__file__).resolve().parent.parent
T0 = datetime.fromisoformat(START)


def emails(app, count: int, text) -> list[int]:
    return [app.inject_buffered("email", text(n), {"from": f"sender{n}@example.com"}).id for n in range(count)]


def a_day_of_mail(app) -> list[int]:
    """30 emails spread over the afternoon: newsletters, mail that needs the user, FYIs."""
    ids = []
    for n in range(30):
        kind = n % 3
        text = (
            f"Weekly newsletter #{n}: deals inside"
            if kind == 0
            else f"Email from colleague {n}: notes about project {n}, please review"
            if kind == 1
            else f"FYI parcel {n} has shipped"
        )
        ids.append(app.inject_buffered("email", text, {"subject": text[:30]}).id)
        app.advance(timedelta(minutes=13))
    return ids


def calls_recorded() -> int:
    return sum(r.calls for r in TokenUsage.select())


# Pure functions ------------------------------------------------------------------------------
def rows_like(*texts, start=1):
    return [
        SimpleNamespace(id=start + n, text=t, snippet=t[:20], trace_id=f"t{start + n}", channel="email", payload={})
        for n, t in enumerate(texts)
    ]


def sent_chars(rows) -> int:
    return sum(len(json.dumps(triage.item_for(r), ensure_ascii=False)) for r in rows)


def test_chunks_respect_the_budget_and_keep_order():
    rows = rows_like(*["x" * 300] * 10)
    batches = chunks(rows, 1500)
    assert [r.id for b in batches for r in b] == [r.id for r in rows]
    assert all(sent_chars(b) <= 1500 for b in batches)
    assert all(sent_chars(b + n[:1]) > 1500 for b, n in zip(batches, batches[1:])), "each one filled before the next"
    big = rows_like("y" * 5000, "z")
    assert [[r.id for r in b] for b in chunks(big, 1000)] == [[1], [2]], "an oversized row still goes, alone"
    assert chunks([], 1000) == []


def test_a_chunk_holds_newsletters_by_the_line_triage_reads_not_by_their_bodies():
    letters = rows_like(*["Weekly digest\n" + "story " * 2000] * 40)
    for row in letters:
        row.payload = {"bulk": "it has a List-Unsubscribe header", "from": "news@example.com", "subject": "Digest"}
    batches = chunks(letters, 12000)
    assert len(batches) == 1, "forty one-line newsletters are one call"
    assert sent_chars(letters) <= 12000 < sum(len(r.text) for r in letters)


def test_normalise_ignores_unknown_ids_and_keeps_forgotten_rows():
    rows = rows_like("a", "b", "c", "d")
    raw = [
        {"buffer_ids": [1, 999], "summary": "a", "priority": 7, "action": "inbox", "reason": "r"},
        {"buffer_ids": [1, 2], "summary": "again", "priority": "high", "action": "drop", "reason": "dup"},
        {"buffer_ids": [999], "summary": "ghost", "action": "drop", "reason": "not ours"},
        "not an item",
        {"buffer_ids": ["3"], "summary": "string id", "action": "drop"},
    ]
    decisions = normalise_decisions(raw, rows)
    by_first = {d["buffer_ids"][0]: d for d in decisions}
    assert sorted(i for d in decisions for i in d["buffer_ids"]) == [1, 2, 3, 4]
    assert by_first[1]["buffer_ids"] == [1] and by_first[1]["priority"] == 3
    assert by_first[2]["buffer_ids"] == [2] and by_first[2]["action"] == "drop" and by_first[2]["priority"] == 2
    for forgotten in (3, 4):
        assert by_first[forgotten]["action"] == "inbox" and "did not mention" in by_first[forgotten]["reason"]


def test_apply_triage_drops_with_reason_and_gathers_one_briefing(db):
    now = T0
    ids = [buffers.add(channel="email", text=t, dedup_key=t, at=now).id for t in ("ad", "fyi 1", "fyi 2", "call me")]
    rows = buffers.unprocessed()
    decisions = [
        {
            "buffer_ids": [ids[0]],
            "summary": "ad",
            "priority": 3,
            "action": "drop",
            "reason": "advertising",
            "topic": None,
        },
        {"buffer_ids": [ids[1]], "summary": "fyi 1", "priority": 3, "action": "inbox", "reason": "", "topic": None},
        {"buffer_ids": [ids[2]], "summary": "fyi 2", "priority": 3, "action": "inbox", "reason": "", "topic": None},
        {"buffer_ids": [ids[3]], "summary": "call me", "priority": 2, "action": "inbox", "reason": "", "topic": None},
    ]
    created = apply_triage(decisions, rows, now, daily=True)
    kinds = sorted(Inbox.get_by_id(i).kind for i in created)
    assert kinds == ["briefing", "buffered"]
    briefing = Inbox.get(Inbox.kind == "briefing")
    assert "fyi 1" in briefing.text and "fyi 2" in briefing.text and briefing.priority == 3
    dropped = ReceptorBuffer.get_by_id(ids[0])
    assert (dropped.outcome, dropped.reason) == ("drop", "advertising")
    assert [(s.stage, s.reason) for s in trace.path(dropped.trace_id)] == [("dropped", "advertising")]
    assert not buffers.unprocessed()


def test_a_triage_answered_one_row_at_a_time_is_applied_in_a_few_statements(db):
    # the write lock is held for the whole of it while a user's message may wait: the rows the model dropped one
    # decision each go in one UPDATE per reason, and their trace lines in a few INSERTs
    rows = [buffers.add(channel="email", text=f"offer {n}", dedup_key=str(n), at=T0) for n in range(120)]
    decisions = normalise_decisions(
        [{"buffer_ids": [r.id], "action": "drop", "reason": "ads" if r.id % 2 else "spam"} for r in rows], rows
    )
    statements: list[str] = []
    connection = database.obj.connection()
    connection.set_trace_callback(statements.append)
    try:
        apply_triage(decisions, rows, T0, daily=False)
    finally:
        connection.set_trace_callback(None)
    assert {(b.outcome, b.reason) for b in ReceptorBuffer.select()} == {("drop", "ads"), ("drop", "spam")}
    assert not buffers.unprocessed()
    assert all([t.stage for t in trace.path(r.trace_id)] == ["dropped"] for r in rows)
    writes = [s for s in statements if s.lstrip().upper().startswith(("INSERT", "UPDATE"))]
    assert len(writes) <= 5, writes


def test_a_chunked_daily_sync_gathers_the_briefing_until_its_last_chunk(db):
    rows = [buffers.add(channel="email", text=f"fyi {n}", dedup_key=str(n), at=T0) for n in range(4)]
    gathered = []
    for batch in (rows[:2], rows[2:]):
        decisions = [
            {"buffer_ids": [r.id], "summary": r.text, "priority": 3, "action": "inbox", "reason": "", "topic": None}
            for r in batch
        ]
        assert apply_triage(decisions, batch, T0, daily=True, briefing=gathered) == []
    assert len(buffers.unprocessed()) == 4, "a crash before the briefing is written leaves them for the next sync"
    row = Inbox.get_by_id(thalamus.write_briefing(gathered, T0))
    assert row.kind == "briefing" and all(f"fyi {n}" in row.text for n in range(4))
    assert not buffers.unprocessed() and Inbox.select().count() == 1


def test_apply_triage_is_one_transaction(db, monkeypatch):
    rows = [buffers.add(channel="email", text=f"mail {n}", dedup_key=str(n), at=T0) for n in range(3)]
    decisions = normalise_decisions([], rows)
    real, made = thalamus._inbox_for, []

    def dies_on_the_third(*args):
        if len(made) == 2:
            raise RuntimeError("power cut")
        made.append(1)
        return real(*args)

    monkeypatch.setattr(thalamus, "_inbox_for", dies_on_the_third)
    with pytest.raises(RuntimeError):
        apply_triage(decisions, rows, T0, daily=False)
    assert Inbox.select().count() == 0 and len(buffers.unprocessed()) == 3


# The morning sync -----------------------------------------------------------------------------
def test_a_day_of_buffered_input_is_one_fast_call_at_the_morning_sync(make_app, serve):
    server = serve(brain())
    app = make_app(start=START, llm=server.base_url, env=NO_RETRIES)
    ids = a_day_of_mail(app)
    add_event(
        app.calendar_file(),
        "Dentist",
        datetime(2027, 1, 12, 10, 0),
        datetime(2027, 1, 12, 11, 0),
        tz=app.config.timezone,
    )
    advance_to(app, at(app, 6, 6, 59))
    assert requests_of(server, "fast") == [], "buffered input waits for the morning"
    assert len(buffers.unprocessed()) == 31, "the mail, and the calendar change a poll buffered"
    assert requests_of(server, "reflex"), "the RAS did glance at the new rows"

    advance_to(app, at(app, 6, 7, 1))
    fast = requests_of(server, "fast")
    assert len(fast) == 1, "one batched call, not one per row"
    calendar_row = ReceptorBuffer.get(ReceptorBuffer.channel == "calendar")
    assert sorted(ids_asked(fast[0])) == sorted(ids + [calendar_row.id])
    assert fast[0]["body"].get("tool_choice") == "required"
    assert_each_once(ids + [calendar_row.id])
    dropped = ReceptorBuffer.select().where(ReceptorBuffer.outcome == "drop").count()
    assert dropped == 10


def test_a_small_context_budget_splits_the_sync_into_well_formed_chunks(make_app, serve):
    server = serve(brain())
    app = make_app(start=START, llm=server.base_url, env={**NO_RETRIES, "WILSON_THALAMUS_CHUNK_CHARS": "1500"})
    ids = emails(app, 30, lambda n: f"Email from colleague {n}: notes about project {n}")
    expected = chunks(buffers.unprocessed(), 1500)
    assert len(expected) > 2
    advance_to(app, at(app, 6, 7, 1))
    fast = requests_of(server, "fast")
    assert len(fast) == len(expected)
    asked = [ids_asked(entry) for entry in fast]
    assert asked == [[r.id for r in batch] for batch in expected], "each chunk once, in order, none split"
    for entry in fast:
        system, user = entry["body"]["messages"]
        assert system["role"] == "system" and "triage" in system["content"]
        body = json.loads(user["content"])
        assert body["timezone"] == "Europe/Berlin" and body["now"].startswith("2027-01-06T07:00")
        assert all(set(i) >= {"buffer_id", "untrusted", "text"} for i in body["items"])
        assert tool_names(entry["body"]) == ["triage"]
    assert_each_once(ids)


def test_an_idle_day_costs_no_model_call(make_app, serve):
    server = serve(brain())
    app = make_app(start=START, llm=server.base_url, env=NO_RETRIES)
    app.advance(timedelta(days=2))
    assert server.requests == [] and TokenUsage.select().count() == 0

    emails(app, 3, lambda n: f"Email from colleague {n}: lunch?")
    app.advance(timedelta(days=2))  # the sync, then the night that consolidates it
    assert requests_of(server, "fast")
    seen, spent = len(server.requests), calls_recorded()
    app.advance(timedelta(days=3))
    assert len(server.requests) == seen and calls_recorded() == spent, "no input, no tokens"
    assert app.user_deliveries() == []


# Nothing lost, nothing twice ---------------------------------------------------------------------
def test_a_chunk_that_fails_is_triaged_at_the_next_sync(make_app, serve):
    server = serve(
        brain(
            {"match": offers("triage"), "reply": triage_reply, "times": 1},
            {"match": offers("triage"), "fault": "malformed_json", "times": 1},
        )
    )
    app = make_app(start=START, llm=server.base_url, env={**NO_RETRIES, "WILSON_THALAMUS_CHUNK_CHARS": "4000"})
    ids = emails(app, 30, lambda n: f"Email from colleague {n}: notes about project {n}")
    first, second = chunks(buffers.unprocessed(), 4000)
    advance_to(app, at(app, 6, 7, 1))
    assert [r.id for r in buffers.unprocessed()] == [r.id for r in second]
    for row in second:
        assert "postponed" in [s.stage for s in trace.path(row.trace_id)]
    assert all(where_rows_went([r.id for r in first]).values())

    app.sync()
    app.wait_idle()
    assert ids_asked(triage_requests(server)[-1]) == [r.id for r in second], "only what is left is asked again"
    assert_each_once(ids)


def test_a_process_that_stops_between_chunks_loses_and_duplicates_nothing(make_app, serve, monkeypatch, tmp_path):
    server = serve(brain())
    env = {**NO_RETRIES, "WILSON_THALAMUS_CHUNK_CHARS": "4000"}
    app = make_app(start=START, llm=server.base_url, env=env, home=tmp_path / "home")
    ids = emails(app, 30, lambda n: f"Email from colleague {n}: notes about project {n}")
    first, second = chunks(buffers.unprocessed(), 4000)
    real, made, died = thalamus._inbox_for, [], threading.Event()

    def dies_halfway_through_the_second_chunk(decision, members, now):
        if len(made) == len(first) + 3:
            died.set()
            raise RuntimeError("killed mid-chunk")
        made.append(decision["buffer_ids"])
        return real(decision, members, now)

    monkeypatch.setattr(thalamus, "_inbox_for", dies_halfway_through_the_second_chunk)
    app.sync()

    # No wait_idle here: it nudges the cortex itself, which a real process has nobody to do.
    def first_chunk_done():
        done = Inbox.select().where((Inbox.origin == "background") & (Inbox.status == "done")).count()
        return died.is_set() and done == Inbox.select().count() == len(first)

    assert wait_for(first_chunk_done), "what the first chunk committed reached the cortex despite the crash"
    assert [r.id for r in buffers.unprocessed()] == [r.id for r in second], "the broken chunk rolled back whole"
    app.wait_idle()
    app.stop()

    monkeypatch.setattr(thalamus, "_inbox_for", real)
    again = make_app(start=app.clock.now().isoformat(), llm=server.base_url, env=env, home=tmp_path / "home")
    advance_to(again, at(again, 7, 7, 1))
    assert ids_asked(triage_requests(server)[-1]) == [r.id for r in second]
    assert_each_once(ids)


def test_forgotten_rows_are_kept_and_unknown_ids_ignored(make_app, serve):
    def forgetful(body):
        items = request_items(body)
        decided = [triage_item(i) for i in items[:2]]
        decided.append(
            {
                "buffer_ids": [4242, items[0]["buffer_id"]],
                "summary": "ghost",
                "priority": 1,
                "action": "drop",
                "reason": "made up",
            }
        )
        return call("triage", items=decided)

    server = serve(brain({"match": offers("triage"), "reply": forgetful}))
    app = make_app(start=START, llm=server.base_url, env=NO_RETRIES)
    ids = emails(app, 4, lambda n: f"Email from colleague {n}: notes")
    advance_to(app, at(app, 6, 7, 1))
    assert_each_once(ids)
    assert ReceptorBuffer.select().where(ReceptorBuffer.outcome == "drop").count() == 0, "the ghost dropped nothing"
    for forgotten in ids[2:]:
        row = ReceptorBuffer.get_by_id(forgotten)
        assert row.outcome == "inbox" and "did not mention" in row.reason


def test_a_look_someone_asked_for_answers_them_with_what_it_found(make_app, serve):
    server = serve(brain({"match": offers("triage"), "fault": "malformed_json", "times": 1}))
    app = make_app(start=START, llm=server.base_url, env=NO_RETRIES)

    def looked() -> list[str]:
        app.sync(answer_on="repl")
        app.wait_idle()
        return [d["text"] for d in app.user_deliveries() if d["channel"] == "repl"]

    assert looked() == ["Nothing new in your calendar."]  # and no model call for nothing
    assert not triage_requests(server)
    emails(app, 1, lambda n: "Email from a colleague: the offsite moved to Thursday")
    emails(app, 1, lambda n: "FYI the canteen has a new menu")
    emails(app, 2, lambda n: f"Newsletter {n}: this week's deals")
    assert looked()[-1] == (
        "I couldn't sort 4 new items just now: the model didn't answer. "
        "They're kept, and I'll try again at the next look."
    )
    assert len(buffers.unprocessed()) == 4
    assert looked()[-1] == (
        "Looked at 4 new items: 1 worth a closer look now, 1 for the morning briefing and 2 set aside."
    )
    app.sync()  # a look nobody asked for (the RAS's, the daily one) answers nobody
    app.wait_idle()
    assert len([d for d in app.user_deliveries() if d["channel"] == "repl"]) == 3


@pytest.mark.parametrize(
    "broken",
    [
        {"fault": "bad_arguments", "reply": call("triage", items=[]), "times": 2},
        {"reply": {"text": "Sure! Here is my triage: everything is fine."}},
    ],
    ids=["bad-arguments-twice", "free-text-instead-of-the-call"],
)
def test_a_triage_answer_that_breaks_the_protocol_is_a_failed_run_the_rules_take_over(make_app, serve, broken):
    server = serve(brain({"match": offers("triage"), **broken}))
    app = make_app(start=START, llm=server.base_url, env=NO_RETRIES)
    ids = emails(app, 2, lambda n: f"Email from colleague {n}: can you send the notes by Friday?")
    app.sync()
    app.wait_idle()
    assert triage_requests(server), "the model was asked"
    assert buffers.unprocessed() == [], "triaged by the offline rules, not left for the next sync"
    for buffer_id in ids:
        stages = [(s.stage, s.reason) for s in trace.path(ReceptorBuffer.get_by_id(buffer_id).trace_id)]
        assert "postponed" not in [stage for stage, _ in stages]
    usage = TokenUsage.get(TokenUsage.role == "fast")
    assert (usage.runs, usage.failed) == (1, 1)
    assert usage.failure in (
        "tool arguments not valid JSON twice in a row",
        "it answered with free text instead of the required tool call",
    )


@pytest.mark.parametrize(
    "broken",
    [
        {"fault": "bad_arguments", "reply": call("triage", items=[]), "times": 1},
        {"fault": "malformed_json"},
        {"reply": call("triage", items="all of them, inbox")},
        {"reply": call("triage", drop=[])},
        {"reply": call("triage", drop=[{"buffer_ids": [4242], "reason": "not ours"}])},
    ],
    ids=["bad-arguments-once", "malformed-json", "items-not-a-list", "empty-drop-only", "drop-only-naming-no-row"],
)
def test_broken_model_output_leaves_the_rows_for_the_next_sync(make_app, serve, broken):
    server = serve(brain({"match": offers("triage"), "times": 2, **broken}))
    if broken.get("fault") == "bad_arguments":  # the repair round's answer is broken once more, by another rule
        server = serve(
            brain(
                {"match": offers("triage"), "times": 1, "fault": "bad_arguments"},
                {"match": offers("triage"), "times": 1, "reply": call("triage", items="all of them, inbox")},
            )
        )
    app = make_app(start=START, llm=server.base_url, env=NO_RETRIES)
    ids = emails(app, 3, lambda n: f"Email from colleague {n}: notes")
    app.sync()
    app.wait_idle()
    assert triage_requests(server), "the model was asked"
    assert [r.id for r in buffers.unprocessed()] == ids
    assert all("postponed" in [s.stage for s in trace.path(r.trace_id)] for r in buffers.unprocessed())
    assert Inbox.select().count() == 0
    assert app.supervisor.health["triage"].restarts == 0, "handled, not crashed"
    app.sync()  # a repair round may have used the second broken answer already
    app.wait_idle()
    advance_to(app, at(app, 6, 7, 1))
    assert_each_once(ids)


def test_dropped_rows_keep_their_reason_in_the_trace(make_app, serve):
    server = serve(brain())
    app = make_app(start=START, llm=server.base_url, env=NO_RETRIES)
    ad = app.inject_buffered("email", "Weekly newsletter: 50% off socks", {})
    advance_to(app, at(app, 6, 7, 1))
    steps = [(s.stage, s.actor, s.reason) for s in trace.path(ad.trace_id)]
    assert ("dropped", "thalamus", "newsletter nobody asked for") in steps
    assert steps[0][0] == "routed"
    assert ReceptorBuffer.get_by_id(ad.id).reason == "newsletter nobody asked for"
    assert Inbox.select().count() == 0 and requests_of(server, "deep") == []


# Bulk mail triage keeps dropping -------------------------------------------------------------
OFFERS = "offers@airline.example"


def bulk_mail(app, subject: str, sender: str = OFFERS) -> ReceptorBuffer:
    """A bulk mail as the email channel buffers one: marked bulk, and scanned (the RAS has nothing to look for)."""
    row = app.inject_buffered(
        "email",
        f"Email from Airline Offers <{sender}>: {subject}\nView in your browser",
        {"from": sender, "subject": subject, "bulk": "it has a List-Unsubscribe header"},
    )
    ReceptorBuffer.update(scanned_at=app.clock.now()).where(ReceptorBuffer.id == row.id).execute()
    return row


def test_which_bulk_mail_is_dropped_by_rule_and_why():
    rows = rows_like("a", "b", "c", "d", "e")
    subjects = ["Fares newsletter", "Last seats: sale ends today", "Fares newsletter", "Fares newsletter", ""]
    senders_ = [OFFERS, OFFERS, OFFERS, "news@daily.example", OFFERS]
    for row, subject, sender, bulk in zip(rows, subjects, senders_, [True, True, False, True, True]):
        row.payload = {"from": sender, "subject": subject, **({"bulk": "a list"} if bulk else {})}
    assert triage.drop_reasons(rows, {OFFERS: 7}, T0, clockmod.UTC) == {
        1: f"bulk mail from {OFFERS}: triage dropped its last 7; no model call",
        5: f"bulk mail from {OFFERS}: triage dropped its last 7; no model call",
    }, "not a pressing subject, not mail that is not bulk, not another sender's"


def test_bulk_mail_from_a_sender_triage_keeps_dropping_is_dropped_without_a_model_call(make_app, serve):
    server = serve(brain())
    app = make_app(start=START, llm=server.base_url, env=NO_RETRIES)
    advance_to(app, at(app, 5, 14, 3))
    first = [bulk_mail(app, f"Fares newsletter #{n}: Lisbon from 49 EUR").id for n in range(5)]
    advance_to(app, at(app, 6, 7, 1))
    assert len(triage_requests(server)) == 1 and ids_asked(triage_requests(server)[0]) == first

    ruled = bulk_mail(app, "Fares newsletter #5: Porto from 59 EUR")
    pressing = bulk_mail(app, "Fares newsletter #6: the sale ends today")
    other = bulk_mail(app, "Your morning newsletter", sender="news@daily.example")
    direct = app.inject_buffered(
        "email", f"Email from {OFFERS}: Your booking OX12", {"from": OFFERS, "subject": "Your booking"}
    )
    advance_to(app, at(app, 7, 7, 1))
    assert len(triage_requests(server)) == 2
    assert ids_asked(triage_requests(server)[1]) == [pressing.id, other.id, direct.id], (
        "a pressing subject, another sender's newsletter and mail that is not bulk are the model's to read"
    )
    why = f"bulk mail from {OFFERS}: triage dropped its last 5; no model call"
    row = ReceptorBuffer.get_by_id(ruled.id)
    assert (row.outcome, row.reason, row.processed_at is not None) == ("drop", why, True)
    assert [(s.stage, s.actor, s.reason) for s in trace.path(ruled.trace_id)][-1] == ("dropped", "thalamus", why)

    alone = bulk_mail(app, "Fares newsletter #7: Rome from 39 EUR")
    advance_to(app, at(app, 8, 6, 59))
    asked = len(requests_of(server, "fast"))
    advance_to(app, at(app, 8, 7, 1))
    assert len(requests_of(server, "fast")) == asked, "a sync whose rows are all dropped by rule asks no model"
    assert (
        ReceptorBuffer.get_by_id(alone.id).reason == f"bulk mail from {OFFERS}: triage dropped its last 6; no "
        "model call"
    ), "the pressing one the model read and dropped counts too"
    assert not buffers.unprocessed()


def test_drop_after_zero_has_the_model_read_every_bulk_mail(make_app, serve):
    server = serve(brain())
    app = make_app(start=START, llm=server.base_url, env={**NO_RETRIES, "WILSON_THALAMUS_DROP_AFTER": "0"})
    advance_to(app, at(app, 5, 14, 3))
    for n in range(5):
        bulk_mail(app, f"Fares newsletter #{n}")
    advance_to(app, at(app, 6, 7, 1))
    late = bulk_mail(app, "Fares newsletter #5")
    advance_to(app, at(app, 7, 7, 1))
    assert ids_asked(triage_requests(server)[-1]) == [late.id]


def test_triage_keeps_what_it_lists_and_drops_grouped_ids_and_a_kept_mention_wins(make_app, serve):
    def grouped(body):
        first, second, third = (i["buffer_id"] for i in request_items(body))
        return call(
            "triage",
            items=[
                {
                    "buffer_ids": [first],
                    "summary": "the landlord asks about Friday",
                    "priority": 2,
                    "reason": "needs an answer",
                }
            ],
            drop=[{"buffer_ids": [second, third, first], "reason": "promotions"}],
        )

    server = serve(brain({"match": offers("triage"), "reply": grouped}))
    app = make_app(start=START, llm=server.base_url, env=NO_RETRIES)
    ids = emails(app, 3, lambda n: f"Email from sender {n}: hello")
    advance_to(app, at(app, 6, 7, 1))
    assert_each_once(ids)
    outcomes = {r.id: (r.outcome, r.reason) for r in ReceptorBuffer.select()}
    assert outcomes[ids[0]] == ("inbox", "needs an answer"), "kept in items and named in drop: kept"
    assert outcomes[ids[1]] == outcomes[ids[2]] == ("drop", "promotions")


def test_a_triage_that_drops_everything_needs_no_items_list(make_app, serve):
    def all_dropped(body):
        return call(
            "triage", drop=[{"buffer_ids": [i["buffer_id"] for i in request_items(body)], "reason": "newsletters"}]
        )

    server = serve(brain({"match": offers("triage"), "reply": all_dropped}))
    app = make_app(start=START, llm=server.base_url, env=NO_RETRIES)
    ids = emails(app, 2, lambda n: f"Weekly digest {n}")
    advance_to(app, at(app, 6, 7, 1))
    assert [(r.outcome, r.reason) for r in ReceptorBuffer.select().where(ReceptorBuffer.id.in_(ids))] == [
        ("drop", "newsletters")
    ] * 2
    assert Inbox.select().count() == 0


def test_triage_reads_a_calendar_change_from_its_sentence_without_the_payload_it_was_made_from(make_app, serve):
    server = serve(brain())
    app = make_app(start=START, llm=server.base_url, env=NO_RETRIES)
    app.inject_buffered(
        "calendar",
        "Moved: Dentist, now Thu 7 January 2027 10:00–10:30 (was Wed 6 January)",
        {
            "change": "moved",
            "title": "Dentist",
            "start": "2027-01-07T09:00:00+00:00",
            "end": "2027-01-07T09:30:00+00:00",
            "previous": {"start": "2027-01-06T09:00:00+00:00"},
        },
    )
    app.inject_buffered(
        "email",
        "Email from a@example.com: the dentist moved you",
        {"from": "a@example.com", "in_reply_to": "<1@example.com>"},
    )
    advance_to(app, at(app, 6, 7, 1))
    calendar_item, mail_item = request_items(triage_requests(server)[0]["body"])
    assert "payload" not in calendar_item and "Dentist" in calendar_item["text"]
    assert mail_item["payload"] == {"in_reply_to": "<1@example.com>"}, "a mail's unsaid facts still go"


# The morning briefing -------------------------------------------------------------------------
def test_the_morning_sync_makes_at_most_one_briefing_even_across_chunks(make_app, serve):
    server = serve(brain())
    app = make_app(start=START, llm=server.base_url, env={**NO_RETRIES, "WILSON_THALAMUS_CHUNK_CHARS": "1500"})
    ids = emails(app, 12, lambda n: f"FYI parcel {n} has shipped and arrives soon")
    assert len(chunks(buffers.unprocessed(), 1500)) > 1
    advance_to(app, at(app, 6, 7, 1))
    briefings = list(Inbox.select().where(Inbox.kind == "briefing"))
    assert len(briefings) == 1 and all(f"parcel {n} " in briefings[0].text for n in range(12))
    assert Inbox.select().count() == 1
    said = app.user_deliveries()
    assert len(said) == 1 and said[0]["text"].startswith("Good morning!")
    # triage's summaries, one line each, inside the day's briefing: the deep model is not asked to repeat them
    assert "\n\nFrom your email:\n• FYI parcel 0 has shipped and arrives soon\n• FYI parcel 1 " in said[0]["text"]
    assert requests_of(server, "deep") == []
    assert_each_once(ids)


def test_the_briefing_says_the_same_thing_once_with_how_many_there_were(make_app, serve):
    server = serve(brain())
    app = make_app(start=START, llm=server.base_url, env=NO_RETRIES)
    emails(app, 3, lambda n: f"FYI your storage receipt is ready\nReceipt number {n}")
    emails(app, 1, lambda n: "FYI parcel 7 has shipped and arrives soon")
    advance_to(app, at(app, 6, 7, 1))
    said = app.user_deliveries()
    assert len(said) == 1
    assert (
        "From your email:\n• FYI your storage receipt is ready (3 of these)\n"
        "• FYI parcel 7 has shipped and arrives soon"
    ) in said[0]["text"]


def test_a_morning_with_nothing_worth_saying_says_nothing(make_app, serve):
    server = serve(brain())
    app = make_app(start=START, llm=server.base_url, env=NO_RETRIES)
    emails(app, 5, lambda n: f"Weekly newsletter #{n}")
    advance_to(app, at(app, 6, 7, 1))
    assert len(requests_of(server, "fast")) == 1
    assert Inbox.select().where(Inbox.kind == "briefing").count() == 0
    assert requests_of(server, "deep") == [] and app.user_deliveries() == []
    advance_to(app, at(app, 7, 7, 1))
    assert len(requests_of(server, "fast")) == 1, "nothing new, no sync call"
    assert app.user_deliveries() == []


# Realtime routing -----------------------------------------------------------------------------
def test_realtime_stimuli_go_to_the_inbox_at_priority_zero_and_never_wait_for_a_sync(make_app, serve):
    server = serve(brain({"match": offers("triage"), "reply": triage_reply, "latency_ms": 1000}))
    seen_at_reply = []

    def printer(record):
        # What the triage had written when the user's answer went out.
        seen_at_reply.append((Inbox.select().where(Inbox.origin == "background").count(), len(buffers.unprocessed())))

    app = make_app(start=START, llm=server.base_url, env=NO_RETRIES, printer=printer)
    emails(app, 5, lambda n: f"Email from colleague {n}: notes")
    app.sync()
    assert wait_for(lambda: triage_requests(server))
    said = app.say("hello, are you there?")
    assert (said.priority, said.origin) == (0, "user")
    app.wait_idle()
    assert seen_at_reply == [(0, 5)], "the reply went out while the sync was still waiting for its model"
    reply = Outbox.get(Outbox.idempotency_key == f"reply:{said.id}")
    assert reply.status == "delivered" and reply.text == "OK."
    triaged = list(Inbox.select().where(Inbox.origin == "background"))
    assert len(triaged) == 5
    assert not buffers.unprocessed()
    steps = [(s.stage, s.actor) for s in trace.path(said.trace_id)]
    assert steps[:2] == [("routed", "thalamus"), ("claimed", "cortex-realtime")]


# The REPL, end to end -------------------------------------------------------------------------
REPL_SCRIPT = """calendar add "Trip to Japan" @ 2027-04-10 -> 2027-04-24; Tokyo
advance 1d
quit
"""


def run_repl(home: Path, llm: str) -> list[dict]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WILSON_")}
    env["WILSON_CORE_TIMEZONE"] = "Europe/Berlin"
    env["WILSON_WEB_ENABLED"] = "false"  # no dashboard on a fixed port in a test
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bin" / "wilson-repl"),
            "--json",
            "--clock",
            "sim",
            "--start",
            START,
            "--home",
            str(home),
            "--llm",
            llm,
        ],
        input=REPL_SCRIPT,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def scripted_file(path: Path) -> Path:
    """Static rules only: the triage cannot know buffer ids, so it decides nothing and the
    thalamus keeps every forgotten row; the cortex's rule fires once on the trip."""
    rules = [
        {"match": {"tool": "triage"}, "reply": call("triage", items=[])},
        {"match": {"tool": "arousal"}, "reply": call("arousal", urgent=False, reason="calm", buffer_ids=[])},
        {
            "match": {"role": "deep", "tool": "create_topic", "any_contains": "Trip to Japan"},
            "times": 1,
            "reply": {
                "tool_calls": [
                    {
                        "name": "create_topic",
                        "arguments": {
                            "title": "Trip to Japan",
                            "starts": "2027-04-10",
                            "ends": "2027-04-24",
                            "notes": "Tokyo",
                        },
                    },
                    {
                        "name": "create_task",
                        "arguments": {"title": "Book flights", "due": "2027-02-15", "topic": "Trip to Japan"},
                    },
                ]
            },
        },
        {"reply": {"text": ""}},
    ]
    path.write_text(json.dumps({"rules": rules}))
    return path


@pytest.mark.parametrize("llm", ["offline", "scripted"])
def test_repl_calendar_event_becomes_a_proposal_the_next_morning(tmp_path, llm):
    spec = "offline" if llm == "offline" else "scripted:" + str(scripted_file(tmp_path / "script.json"))
    lines = run_repl(tmp_path / "home", spec)
    # the plan arrives inside the morning briefing, which offers it for a decision
    proposals = [d for d in lines if d.get("type") == "delivery" and d.get("proposals")]
    assert len(proposals) == 1, lines
    assert proposals[0]["text"].startswith("Good morning!") and "Proposal 1: I'd like" in proposals[0]["text"]
    when = datetime.fromisoformat(proposals[0]["at"]).astimezone(datetime.fromisoformat(START).tzinfo)
    assert when.date() == date(2027, 1, 6)
    assert "Trip to Japan" in proposals[0]["text"]
    # Which brain answered: the offline one plans the whole trip, the script only books flights.
    assert ("passport" in proposals[0]["text"]) == (llm == "offline")
    assert "Book flights" in proposals[0]["text"]


def test_the_nudge_carries_the_priority_that_picks_the_lane_and_one_without_it_reads_the_row(db, tmp_path):
    from tests.actor_support import RecordingDirectory
    from tests.conftest import make_config
    from storage import inbox
    from wilson.kernel.actor import Context
    from wilson.kernel.messages import InboxReady, StimulusCommitted

    directory = RecordingDirectory(strict=True)
    ctx = Context(config=make_config(tmp_path), clock=clockmod.SimClock(T0), synapse=None, directory=directory)
    ref = thalamus.ThalamusActor.start(ctx)
    try:
        background = inbox.add(source="email", text="later", priority=2, at=T0, origin="background")
        ref.ask(StimulusCommitted("inbox", 10_000, "no-row", 0))  # carried: no read, so no row needed
        ref.ask(StimulusCommitted("inbox", background.id, background.trace_id))  # a sender that left it out
        ref.ask(StimulusCommitted("inbox", 10_001, "gone"))  # neither carried nor there: nobody to nudge
    finally:
        ref.stop()
    assert directory.told == [("cortex-realtime", InboxReady()), ("cortex", InboxReady())]


def test_an_item_triage_kept_without_a_summary_is_named_by_its_opening_words(db):
    rows = [buffers.add(channel="email", text="Email from the gym: classes move to 18:00", dedup_key="g", at=T0)]
    [decision] = normalise_decisions(
        [{"buffer_ids": [rows[0].id], "summary": "  ", "priority": 3, "action": "inbox", "reason": "fyi"}], rows
    )
    assert decision["summary"] == "Email from the gym: classes move to 18:00"


def test_a_kept_item_without_a_summary_is_read_once_and_briefed_by_its_first_line(make_app, serve):
    def kept_bare(body):  # as the prompt asks: no summary where the item's first line says what it is
        form, notice = (i["buffer_id"] for i in request_items(body))
        return call(
            "triage",
            items=[
                {"buffer_ids": [form], "priority": 2, "reason": "needs a signature"},
                {"buffer_ids": [notice], "priority": 3, "reason": "fyi"},
            ],
            drop=[],
        )

    server = serve(brain({"match": offers("triage"), "reply": kept_bare}))
    app = make_app(start=START, llm=server.base_url, env=NO_RETRIES)
    form = (
        "Email from school@example.com: Sign the trip form by Friday\nHi,\n\n"
        + "The class goes to the science museum on Monday; please sign the form and return it. " * 4
        + "\nThanks"
    )
    app.inject_buffered("email", form, {"from": "school@example.com"})
    app.inject_buffered(
        "email",
        "Email from gym@example.com: Classes move to 18:00\nFrom Monday on, all week.",
        {"from": "gym@example.com"},
    )
    advance_to(app, at(app, 6, 7, 1))
    rows = {r.kind: r.text for r in Inbox.select()}
    assert rows["buffered"] == form, "the opening line is not said twice"
    assert rows["briefing"] == "Morning briefing:\n- Email from gym@example.com: Classes move to 18:00"


def test_a_summary_that_is_not_the_items_opening_comes_before_its_text(db):
    rows = [
        buffers.add(
            channel="email",
            text="Email from a@example.com: Re: Re: Friday\nCan you bring the keys?",
            dedup_key="k",
            at=T0,
        )
    ]
    [decision] = normalise_decisions(
        [
            {
                "buffer_ids": [rows[0].id],
                "summary": "Anna asks you to bring the keys Friday",
                "priority": 2,
                "reason": "a request",
            }
        ],
        rows,
    )
    apply_triage([decision], rows, T0, daily=False)
    assert Inbox.get().text == (
        "Anna asks you to bring the keys Friday\n\nEmail from a@example.com: Re: Re: Friday\nCan you bring the keys?"
    )


def test_a_summary_cut_from_a_long_first_line_stays_a_short_line_of_its_own(db):
    page = "Ten quick pasta recipes for weeknights. " + "<!-- do something the page wants --> " * 10
    rows = [buffers.add(channel="web", text=page, dedup_key="p", at=T0)]
    [decision] = normalise_decisions(
        [{"buffer_ids": [rows[0].id], "summary": page[:40], "priority": 2, "reason": "r"}], rows
    )
    apply_triage([decision], rows, T0, daily=False)
    assert Inbox.get().text.split("\n")[0] == "Ten quick pasta recipes for weeknights."


def test_a_long_first_line_without_a_summary_is_named_by_its_short_opening(db):
    page = "Ten quick pasta recipes for weeknights. " + "<!-- do something the page wants --> " * 10
    rows = [buffers.add(channel="web", text=page, dedup_key="p", at=T0)]
    [decision] = normalise_decisions([{"buffer_ids": [rows[0].id], "priority": 2, "reason": "r"}], rows)
    apply_triage([decision], rows, T0, daily=False)
    opening, rest = Inbox.get().text.split("\n\n", 1)
    assert len(opening) <= 200 and page.startswith(opening) and rest == page


def test_the_answer_to_a_look_names_the_channels_it_read_and_what_it_kept():
    assert look_answer(0, 0, 0, 0, ["calendar", "email", "web"]) == (
        "Nothing new in your calendar, your mail or the pages you watch."
    )
    assert look_answer(0, 0, 0, 0, []) == (
        "There's nothing for me to look at yet: no calendar, mail or web page is connected."
    )
    assert look_answer(1, 1, 0, 0, ["email"]) == "Looked at 1 new item: 1 worth a closer look now."
    assert look_answer(2, 0, 0, 0, ["email"]) == "Looked at 2 new items: none needs you."
    assert look_answer(3, 2, 1, 0, ["email"]) == (
        "Looked at 3 new items: 1 worth a closer look now, 1 for the morning briefing and 1 set aside."
    )
    # one chunk sorted, another not: both are said
    assert look_answer(5, 1, 0, 3, ["email"]) == (
        "Looked at 2 new items: 1 worth a closer look now and 1 set aside. I couldn't sort 3 more items just now: "
        "the model didn't answer. They're kept, and I'll try again at the next look."
    )
