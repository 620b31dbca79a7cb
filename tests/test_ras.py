"""The RAS: a cheap urgency scan of new buffered rows between the thalamus' syncs (issue 6).

Real actors on SQLite with a simulated clock; the scripted model server answers
over HTTP and flags as urgent exactly the snippets that say URGENT.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest

from actors.ras import CURSOR, RasActor, already_aroused
from storage import buffers, trace
from storage.db import open_database
from storage.migrations import migrate
from storage.models import Cursor, Inbox, ReceptorBuffer, Trace
from tests.conftest import make_config
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
    triage_requests,
)  # noqa: F401
from wilson.kernel.actor import Context
from wilson.kernel.clock import SimClock
from wilson.kernel.messages import SyncRequest
from wilson.model.synapse import make_synapse
from tests.actor_support import RecordingDirectory

URGENT = "URGENT: the school called, please pick up Mia by 15:00 today"
CALM = "Email from Tom: lunch sometime next month?"


def inbox_row_for(buffer_id: int) -> Inbox:
    rows = [r for r in Inbox.select() if buffer_id in [b["buffer_id"] for b in (r.payload or {}).get("buffers", [])]]
    assert len(rows) == 1, rows
    return rows[0]


def stages(row) -> list[str]:
    return [s.stage for s in trace.path(row.trace_id)]


def test_an_urgent_email_between_syncs_reaches_the_inbox_within_one_ras_interval(make_app, serve):
    server = serve(brain())
    app = make_app(start=START, llm=server.base_url, env=NO_RETRIES)
    advance_to(app, at(app, 5, 14, 3))
    assert server.requests == []
    arrived = app.clock.now()
    row = app.inject_buffered("email", URGENT, {"from": "school@example.com"})
    app.advance(timedelta(minutes=15))

    reflex, fast = requests_of(server, "reflex"), requests_of(server, "fast")
    assert len(reflex) == 1 and [i["buffer_id"] for i in request_items(reflex[0]["body"])] == [row.id]
    assert len(fast) == 1 and ids_asked(fast[0]) == [row.id]
    order = [r["headers"].get("x-wilson-role") for r in server.requests]
    assert order.index("reflex") < order.index("fast") < order.index("deep"), order
    made = inbox_row_for(row.id)
    assert made.priority == 1 and made.status == "done", "the cortex has seen it"
    assert arrived < made.created_at <= arrived + timedelta(minutes=15)
    assert made.created_at == at(app, 5, 14, 15), "at the first RAS tick after it arrived"
    assert stages(row)[:3] == ["routed", "aroused", "triaged"]


def test_a_calm_email_waits_for_the_morning_and_is_scanned_once(make_app, serve):
    server = serve(brain())
    app = make_app(start=START, llm=server.base_url, env=NO_RETRIES)
    advance_to(app, at(app, 5, 14, 3))
    row = app.inject_buffered("email", CALM, {"from": "tom@example.com"})
    advance_to(app, at(app, 5, 14, 30))
    assert len(requests_of(server, "reflex")) == 1 and requests_of(server, "fast") == []
    assert ReceptorBuffer.get_by_id(row.id).scanned_at is not None
    assert [r.id for r in buffers.unprocessed()] == [row.id]

    advance_to(app, at(app, 6, 6, 59))
    assert len(requests_of(server, "reflex")) == 1, "a row already looked at costs nothing more"
    assert requests_of(server, "fast") == [] and buffers.unprocessed()

    advance_to(app, at(app, 6, 7, 1))
    assert len(requests_of(server, "fast")) == 1
    assert inbox_row_for(row.id).created_at == at(app, 6, 7, 0)
    assert "aroused" not in stages(row)


def test_a_calendar_change_is_judged_by_its_times_without_the_model_which_reads_only_the_mail(make_app, serve):
    server = serve(brain())  # the model calls urgent only what says URGENT: never a calendar change
    app = make_app(start=START, llm=server.base_url, env=NO_RETRIES)
    advance_to(app, at(app, 5, 14, 3))
    today = app.inject_buffered(
        "calendar",
        "Moved: Dinner with Anna now 18:00 (was 19:30), today",
        {
            "channel": "calendar",
            "change": "changed",
            "title": "Dinner with Anna",
            "uid": "d1",
            "start": at(app, 5, 18, 0).isoformat(),
            "end": at(app, 5, 19, 0).isoformat(),
            "previous": {"start": at(app, 5, 19, 30).isoformat(), "end": at(app, 5, 20, 30).isoformat()},
        },
    )
    later = app.inject_buffered(
        "calendar",
        "New event: Dentist, in two weeks",
        {
            "channel": "calendar",
            "change": "new",
            "title": "Dentist",
            "uid": "d2",
            "start": at(app, 19, 9, 0).isoformat(),
            "end": at(app, 19, 10, 0).isoformat(),
        },
    )
    calm = app.inject_buffered("email", CALM, {"from": "tom@example.com"})
    app.advance(timedelta(minutes=15))

    [reflex] = requests_of(server, "reflex")
    assert [i["buffer_id"] for i in request_items(reflex["body"])] == [calm.id], "the model reads the mail only"
    assert "aroused" in stages(today) and inbox_row_for(today.id).created_at <= at(app, 5, 14, 15), (
        "tonight's dinner moved: told in time, whatever a cheap model would make of it"
    )
    assert "aroused" not in stages(later) and "aroused" not in stages(calm)
    assert all(ReceptorBuffer.get_by_id(r.id).scanned_at is not None for r in (today, later, calm))

    app.inject_buffered(
        "calendar",
        "Cancelled: Yoga, next month",
        {
            "channel": "calendar",
            "change": "cancelled",
            "title": "Yoga",
            "uid": "d3",
            "start": at(app, 28, 9, 0).isoformat(),
            "end": at(app, 28, 10, 0).isoformat(),
        },
    )
    app.advance(timedelta(minutes=15))
    assert len(requests_of(server, "reflex")) == 1, "a scan of calendar changes alone costs no model call"


def test_an_alarm_whose_early_sync_fails_is_raised_again_not_left_for_the_morning(make_app, serve):
    server = serve(brain({"match": offers("triage"), "fault": "malformed_json", "times": 1}))
    app = make_app(start=START, llm=server.base_url, env=NO_RETRIES)
    advance_to(app, at(app, 5, 14, 3))
    urgent = app.inject_buffered("email", URGENT, {})
    advance_to(app, at(app, 5, 14, 20))
    assert len(triage_requests(server)) == 1 and buffers.unprocessed(), "the early sync failed"
    assert "postponed" in stages(urgent)

    advance_to(app, at(app, 5, 14, 35))
    assert len(triage_requests(server)) == 2, "the sync is asked for again at the next interval"
    assert inbox_row_for(urgent.id).created_at == at(app, 5, 14, 30)
    assert len(requests_of(server, "reflex")) == 1, "the row was judged once"
    assert stages(urgent).count("aroused") == 1

    calm = app.inject_buffered("email", CALM, {})
    advance_to(app, at(app, 5, 21, 0))
    assert len(triage_requests(server)) == 2, "answered alarms are not raised again"
    advance_to(app, at(app, 6, 7, 1))
    assert ids_asked(triage_requests(server)[-1]) == [calm.id]
    assert_each_once([urgent.id, calm.id])


def test_retries_of_an_unanswered_alarm_back_off(make_app, serve):
    server = serve(brain({"match": offers("triage"), "fault": "malformed_json", "times": 1000}))
    app = make_app(start=START, llm=server.base_url, env=NO_RETRIES)
    advance_to(app, at(app, 5, 14, 3))
    urgent = app.inject_buffered("email", URGENT, {})
    advance_to(app, at(app, 5, 17, 0))
    # the alarm at 14:15, then retries after one interval, one, two and four
    failed = Trace.select().where((Trace.trace_id == urgent.trace_id) & (Trace.stage == "postponed"))
    assert [t.at for t in failed.order_by(Trace.id)] == [
        at(app, 5, h, m) for h, m in [(14, 15), (14, 30), (14, 45), (15, 15), (16, 15)]
    ]
    assert len(triage_requests(server)) == 5 and len(requests_of(server, "reflex")) == 1


def test_a_failing_reflex_model_leaves_new_rows_for_the_next_scan(make_app, serve):
    server = serve(brain({"match": offers("arousal"), "fault": "malformed_json", "times": 1}))
    app = make_app(start=START, llm=server.base_url, env=NO_RETRIES)
    advance_to(app, at(app, 5, 14, 3))
    row = app.inject_buffered("email", URGENT, {})
    advance_to(app, at(app, 5, 14, 20))
    assert len(requests_of(server, "reflex")) == 1 and requests_of(server, "fast") == []
    assert ReceptorBuffer.get_by_id(row.id).scanned_at is None, "not looked at, so looked at again"
    advance_to(app, at(app, 5, 14, 35))
    assert len(requests_of(server, "reflex")) == 2
    assert inbox_row_for(row.id).created_at == at(app, 5, 14, 30)


# The RAS actor's own bookkeeping, driven on the test's thread -------------------------------
def test_arousal_is_remembered_per_row(tmp_path, serve):
    server = serve(brain())
    config = make_config(tmp_path / "home", WILSON_LLM_RETRIES=0)
    db = open_database(None, config.home)
    migrate()
    clock = SimClock(datetime(2027, 1, 5, 14, 15, tzinfo=config.timezone))
    synapse = make_synapse(config, clock, server.base_url)
    directory = RecordingDirectory()
    ras = RasActor(Context(config=config, clock=clock, synapse=synapse, directory=directory))
    try:
        assert ras.scan() is False and server.requests == [], "nothing new: no model call"

        urgent = buffers.add(channel="email", text=URGENT, dedup_key="u1", at=clock.now())
        calm = buffers.add(channel="email", text=CALM, dedup_key="c1", at=clock.now())
        assert ras.scan() is True
        assert directory.told == [("thalamus", SyncRequest("arousal"))]
        assert already_aroused() == {urgent.id}
        # the early sync has not got through yet: it is asked for again, and nothing is judged twice
        assert ras.scan() is True and len(server.requests) == 1
        assert directory.told == [("thalamus", SyncRequest("arousal"))] * 2

        ReceptorBuffer.update(processed_at=clock.now()).where(ReceptorBuffer.id == urgent.id).execute()
        assert ras.scan() is False and len(server.requests) == 1, "answered: nothing more to do"

        # The same rows in front of the RAS again (e.g. a restored backup without scan or sync marks).
        ReceptorBuffer.update(scanned_at=None, processed_at=None).execute()
        assert ras.scan() is True and len(server.requests) == 2
        assert already_aroused() == {urgent.id}, "the alarm about them was raised already"
        assert Trace.select().where((Trace.trace_id == urgent.trace_id) & (Trace.stage == "aroused")).count() == 1
        ReceptorBuffer.update(processed_at=clock.now()).where(ReceptorBuffer.id == urgent.id).execute()

        fresh = buffers.add(channel="email", text=URGENT + " (again, about Ben)", dedup_key="u2", at=clock.now())
        assert ras.scan() is True and len(directory.told) == 4
        assert already_aroused() == {urgent.id, fresh.id}
        assert Cursor.get(Cursor.name == CURSOR).value == sorted({urgent.id, fresh.id})
        assert calm.id not in already_aroused()
    finally:
        synapse.close()
        db.close()


@pytest.mark.parametrize(
    "answer, aroused",
    [
        ({"buffer_ids": "urgent"}, "urgent"),  # the ids say it
        ({"buffer_ids": []}, "none"),
        ({"urgent": True, "reason": "all of it", "buffer_ids": []}, "all"),  # an older answer: no ids means every row
        ({"urgent": False, "reason": "calm", "buffer_ids": []}, "none"),
        ({"urgent": False, "buffer_ids": "urgent"}, "urgent"),  # the ids count: a missed alarm costs more
    ],
    ids=["ids", "no-ids", "old-all", "old-calm", "old-contradiction"],
)
def test_the_scan_reads_which_rows_are_urgent_from_the_ids_it_names(tmp_path, serve, answer, aroused):
    rows = {}

    def reply(body):
        args = dict(answer)
        if args.get("buffer_ids") == "urgent":
            args["buffer_ids"] = [rows["urgent"].id]
        return {"tool_calls": [{"name": "arousal", "arguments": args}]}

    server = serve([{"match": offers("arousal"), "reply": reply}])
    config = make_config(tmp_path / "home", WILSON_LLM_RETRIES=0)
    db = open_database(None, config.home)
    migrate()
    clock = SimClock(datetime(2027, 1, 5, 14, 15, tzinfo=config.timezone))
    synapse = make_synapse(config, clock, server.base_url)
    ras = RasActor(Context(config=config, clock=clock, synapse=synapse, directory=RecordingDirectory()))
    try:
        rows["urgent"] = buffers.add(channel="email", text=URGENT, dedup_key="u1", at=clock.now())
        rows["calm"] = buffers.add(channel="email", text=CALM, dedup_key="c1", at=clock.now())
        assert ras.scan() is (aroused != "none")
        expected = {"urgent": {rows["urgent"].id}, "none": set(), "all": {r.id for r in rows.values()}}[aroused]
        assert already_aroused() == expected
    finally:
        synapse.close()
        db.close()


# Routine senders: the model is not asked about a sender's mail once it has read enough of it calmly ---------
# as the email channel writes a mail: its "Sent" line is today, and no reason to read it
SHIPPED = (
    "Email from Parcel Service <noreply@parcel.example>: Your order has shipped. It arrives in 3 to 5 days."
    "\nSent Tue 05 Jan 2027 14:01\nHello,\n\nYour parcel is on its way."
)
NEWSLETTER = "Email from school@school.example: Newsletter from Class 3b"


def mail_each_interval(app, text: str, sender: str, count: int, subject: str | None = None) -> list:
    rows = []
    for _ in range(count):
        rows.append(
            app.inject_buffered("email", text, {"from": sender, "subject": subject or text.split(": ")[1][:40]})
        )
        app.advance(timedelta(minutes=15))
    return rows


def routine_stages(row) -> list:
    return [s for s in trace.path(row.trace_id) if s.stage == "routine"]


def test_a_routine_senders_next_calm_mail_costs_no_model_call_and_still_reaches_the_morning_triage(make_app, serve):
    server = serve(brain())
    app = make_app(start=START, llm=server.base_url, env=NO_RETRIES)
    advance_to(app, at(app, 5, 14, 3))
    mail_each_interval(app, SHIPPED, "noreply@parcel.example", 5)
    assert len(requests_of(server, "reflex")) == 5, "the first five are read by the model"

    [sixth] = mail_each_interval(app, SHIPPED, "NoReply@Parcel.example", 1)
    assert len(requests_of(server, "reflex")) == 5, "the sixth is judged by the rules alone"
    assert ReceptorBuffer.get_by_id(sixth.id).scanned_at is not None, "and is not read again"
    [routine] = routine_stages(sixth)
    assert routine.reason.startswith("routine sender: the model read 5 mails from noreply@parcel.example without alarm")
    other = app.inject_buffered("email", CALM, {"from": "tom@example.com"})
    app.advance(timedelta(minutes=15))
    assert [i["buffer_id"] for i in request_items(requests_of(server, "reflex")[-1]["body"])] == [other.id]

    advance_to(app, at(app, 6, 7, 1))
    assert sixth.id in [i for r in triage_requests(server) for i in ids_asked(r)], "the morning triage reads it"


@pytest.mark.parametrize(
    "pressing",
    [
        "Email from school@school.example: School closes at 13:00, please collect your children",
        "Email from school@school.example: The trip is cancelled. Unsubscribe from these updates",
        "Email from school@school.example: Parents' evening tomorrow at 18:00",
        "Email from school@school.example: Parents' evening\nSent Tue 05 Jan 2027 10:33\nIt is tomorrow at 18:00.",
    ],
)
def test_a_routine_senders_mail_with_anything_pressing_in_it_is_read_by_the_model(make_app, serve, pressing):
    server = serve(brain())
    app = make_app(start=START, llm=server.base_url, env=NO_RETRIES)
    advance_to(app, at(app, 5, 9, 3))
    mail_each_interval(app, NEWSLETTER, "school@school.example", 5)
    [calm] = mail_each_interval(app, NEWSLETTER, "school@school.example", 1)
    assert len(requests_of(server, "reflex")) == 5 and routine_stages(calm), "the school's sender is routine"

    [closing] = mail_each_interval(app, pressing, "school@school.example", 1)
    reflex = requests_of(server, "reflex")
    assert len(reflex) == 6 and [i["buffer_id"] for i in request_items(reflex[-1]["body"])] == [closing.id]
    assert routine_stages(closing) == []


def test_mail_the_rules_alone_judged_teaches_nothing_and_bulk_mail_never_makes_a_sender_routine(make_app, serve):
    server = serve(brain())
    app = make_app(start=START, llm=server.base_url, env=NO_RETRIES)
    advance_to(app, at(app, 5, 9, 3))
    for _ in range(6):  # a list the channel sets aside as bulk: scanned, never read by the model
        row = app.inject_buffered("email", NEWSLETTER, {"from": "school@school.example", "bulk": "a list"})
        ReceptorBuffer.update(scanned_at=app.clock.now()).where(ReceptorBuffer.id == row.id).execute()
        app.advance(timedelta(minutes=15))
    [direct] = mail_each_interval(app, NEWSLETTER, "school@school.example", 1)
    assert len(requests_of(server, "reflex")) == 1 and routine_stages(direct) == []


def test_a_sender_who_once_raised_the_alarm_is_no_routine_sender_but_a_calm_subject_of_theirs_is(make_app, serve):
    server = serve(brain())
    app = make_app(start=START, llm=server.base_url, env=NO_RETRIES)
    advance_to(app, at(app, 5, 9, 3))
    school = "school@school.example"
    [trip] = mail_each_interval(
        app, f"Email from {school}: Class trip\nURGENT: the coach leaves at 7:00", school, 1, subject="Class trip"
    )
    assert "aroused" in stages(trip), "the alarm marks the sender and this subject"
    mail_each_interval(app, NEWSLETTER, school, 5)
    assert len(requests_of(server, "reflex")) == 6

    [reply] = mail_each_interval(
        app, f"Email from {school}: Re: Newsletter from Class 3b", school, 1, subject="RE:  Newsletter from  CLASS 3b"
    )
    assert len(requests_of(server, "reflex")) == 6, "the newsletter's thread is routine, the alarm was about another"
    assert [s.reason for s in routine_stages(reply)] == [
        f"routine subject: the model read 5 mails 'newsletter from class 3b' from {school} without alarm on that "
        "subject, and nothing in this one is pressing; no model call"
    ]

    mail_each_interval(app, f"Email from {school}: Lost property\nA blue scarf was found.", school, 1)
    mail_each_interval(app, f"Email from {school}: Class trip\nThe photos are online.", school, 6, subject="Class trip")
    mail_each_interval(app, "Email from other@school.example: Newsletter from Class 3b", "other@school.example", 1)
    assert len(requests_of(server, "reflex")) == 14, (
        "a new subject of the sender, the alarmed subject however calm, another sender's newsletter: each read"
    )


def test_triage_keeping_a_mail_as_urgent_marks_its_sender_and_its_subject(make_app, serve):
    blind = {"match": offers("arousal"), "reply": lambda body: call("arousal", buffer_ids=[])}  # the RAS misses it
    alarmed = {
        "match": offers("triage"),
        "reply": lambda body: call(
            "triage",
            items=[
                {
                    "buffer_ids": [i["buffer_id"] for i in request_items(body)],
                    "priority": 1,
                    "reason": "a charge to check",
                }
            ],
        ),
    }
    server = serve(brain(blind, alarmed))
    app = make_app(start=START, llm=server.base_url, env=NO_RETRIES)
    advance_to(app, at(app, 5, 14, 3))
    statement = "Email from bank@bank.example: Your statement is ready"
    [missed] = mail_each_interval(app, statement, "bank@bank.example", 1)
    advance_to(app, at(app, 6, 7, 5))
    assert inbox_row_for(missed.id).priority == 1, "the morning triage kept it as urgent"
    mail_each_interval(app, statement, "bank@bank.example", 6)
    assert len(requests_of(server, "reflex")) == 7, "neither the sender nor the subject is routine"


def test_routine_after_zero_asks_the_model_about_every_mail(make_app, serve):
    server = serve(brain())
    app = make_app(start=START, llm=server.base_url, env={**NO_RETRIES, "WILSON_RAS_ROUTINE_AFTER": "0"})
    advance_to(app, at(app, 5, 14, 3))
    mail_each_interval(app, SHIPPED, "noreply@parcel.example", 7)
    assert len(requests_of(server, "reflex")) == 7


def test_the_scan_reads_a_mail_sent_today_without_the_line_saying_when_and_an_older_one_with_it(db):
    from zoneinfo import ZoneInfo

    from actors.ras import scan_request

    now = datetime.fromisoformat(START)

    def sent(day: str):
        text = f"Email from Tom <tom@mail.example>: Dinner\nSent {day} 16:45\nSee you at 8 tonight?"
        return buffers.add(
            channel="email",
            text=text,
            dedup_key=day,
            at=now,
            payload={
                "from": "tom@mail.example",
                "date": datetime.strptime(day + " 16:45 +0100", "%a %d %b %Y %H:%M %z").isoformat(),
            },
        )

    today, last_week = sent(f"{now:%a %d %b %Y}"), sent("Mon 28 Dec 2026")
    items = json.loads(
        scan_request([today, last_week], now + timedelta(hours=12), ZoneInfo("Europe/Berlin"))[-1]["content"]
    )["items"]
    assert [i["snippet"] for i in items] == [
        "Email from Tom <tom@mail.example>: Dinner\nSee you at 8 tonight?",
        "Email from Tom <tom@mail.example>: Dinner\nSent Mon 28 Dec 2026 16:45\nSee you at 8 tonight?",
    ], "a week-old mail's 'tonight' is read with the day it was written"
    assert {i["untrusted"] for i in items} == {"from your email"}
