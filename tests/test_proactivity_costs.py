"""What background work costs: rows are not paid for twice, and the cortex context carries no duplicates.

Real actors on SQLite with a simulated clock and the scripted model server (as in test_thalamus).
"""

from __future__ import annotations

import json

from actors.cortex.context import build_context
from actors.thalamus import WAITING, waiting_decisions
from storage import inbox
from storage.models import Inbox, ReceptorBuffer, Task
from tests.thalamus_support import NO_RETRIES, START, advance_to, at, brain, ids_asked, requests_of  # noqa: F401

FYI = "FYI: your parcel has shipped"


def test_a_row_kept_for_the_briefing_is_triaged_once_not_at_every_early_sync(make_app, serve):
    server = serve(brain())
    app = make_app(start=START, llm=server.base_url, env=NO_RETRIES)
    advance_to(app, at(app, 5, 10, 3))
    fyi = app.inject_buffered("email", FYI, {"from": "parcel@example.com"})
    first = app.inject_buffered("email", "URGENT: the flight is cancelled", {"from": "air@example.com"})
    advance_to(app, at(app, 5, 10, 20))
    assert [ids_asked(r) for r in requests_of(server, "fast")] == [[fyi.id, first.id]]
    assert ReceptorBuffer.get_by_id(fyi.id).outcome == WAITING and ReceptorBuffer.get_by_id(fyi.id).processed_at is None

    second = app.inject_buffered("email", "URGENT: the school closes at noon", {"from": "school@example.com"})
    advance_to(app, at(app, 5, 10, 35))
    assert [ids_asked(r) for r in requests_of(server, "fast")] == [[fyi.id, first.id], [second.id]], (
        "the second early sync does not pay for the waiting row again"
    )

    advance_to(app, at(app, 6, 7, 1))
    assert len(requests_of(server, "fast")) == 2, "nothing new in the morning: the briefing needs no triage call"
    briefing = Inbox.get(Inbox.kind == "briefing")
    assert FYI in briefing.text and briefing.payload["items"][0]["buffer_ids"] == [fyi.id]
    assert ReceptorBuffer.get_by_id(fyi.id).outcome == "briefing"


def test_waiting_decisions_keep_groups_and_survive_a_missing_note(db):
    from datetime import datetime, timezone

    from storage import buffers

    now = datetime(2027, 1, 5, 9, tzinfo=timezone.utc)
    rows = [buffers.add(channel="email", text=f"FYI {n}", dedup_key=f"k{n}", at=now) for n in range(3)]
    kept = {"summary": "two parcels", "reason": "fyi", "topic": None, "group": [rows[0].id, rows[1].id]}
    for row in rows[:2]:
        row.payload = {"triage": kept}
    decisions = waiting_decisions(rows)
    assert [d["buffer_ids"] for d in decisions] == [[rows[0].id, rows[1].id], [rows[2].id]]
    assert decisions[0]["summary"] == "two parcels" and decisions[1]["summary"] == "FYI 2"


def test_the_cortex_context_lists_open_tasks_briefly_and_a_briefing_once(db):
    from datetime import datetime
    from zoneinfo import ZoneInfo

    tz = ZoneInfo("Europe/Berlin")
    now = datetime(2027, 1, 5, 9, tzinfo=tz)
    Task.create(title="Renew passport", due=datetime(2027, 2, 1, tzinfo=tz), due_is_date=True, created_at=now)
    row = inbox.add(
        source="thalamus",
        kind="briefing",
        origin="background",
        priority=3,
        at=now,
        text="Morning briefing:\n- parcel shipped",
        dedup_key="b1",
        payload={"items": [{"summary": "parcel shipped", "buffer_ids": [1]}]},
    )
    context = build_context(Inbox.get_by_id(row.id), now, tz, [])
    assert context["tasks"] == [{"id": 1, "title": "Renew passport", "due": "2027-02-01", "topic": None}]
    # the briefing's text already lists its items; the payload must not send them a second time
    assert "parcel shipped" in context["stimulus"]["text"]
    assert "parcel shipped" not in json.dumps(context["stimulus"]["payload"])


def test_a_mails_prompt_leaves_out_where_it_is_stored_and_the_headers_its_text_says_but_the_rules_see_all(db):
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from actors.cortex.context import build_messages

    tz = ZoneInfo("Europe/Berlin")
    now = datetime(2027, 1, 5, 9, tzinfo=tz)
    mail = {
        "channel": "email",
        "buffer_id": 7,
        "from": "landlord@flats.example",
        "from_name": "Mr Berger",
        "subject": "Sign the lease",
        "uid": 29,
        "uidvalidity": 1,
        "folder": "INBOX",
        "size": 662,
        "message_id": "<29@flats.example>",
        "priority": 3,
        "truncated": False,
        "attachments": [],
        "in_reply_to": "<28@flats.example>",
        "date": "2027-01-05T08:09:30+01:00",
    }
    row = Inbox.get_by_id(
        inbox.add(
            source="email",
            kind="buffered",
            origin="background",
            priority=2,
            at=now,
            dedup_key="m1",
            text="Email from Mr Berger <landlord@flats.example>: Sign the lease\nPlease sign by Friday.",
            payload={"buffers": [mail], "topic": None},
        ).id
    )
    context = build_context(row, now, tz, [])
    assert context["stimulus"]["payload"]["buffers"] == [mail], "the offline rules read the payload whole"
    shown = json.loads(build_messages(context, row, [])[1]["content"].removeprefix("CONTEXT "))
    assert shown["stimulus"]["payload"]["buffers"] == [
        {"buffer_id": 7, "in_reply_to": "<28@flats.example>", "date": "2027-01-05T08:09:30+01:00"}
    ]
    # as the email channel writes it, the text says when it was sent: the date is not repeated beside it
    row.text = "Email from Mr Berger <landlord@flats.example>: Sign the lease\nSent Tue 05 Jan 2027 08:09\nPlease sign."
    context = build_context(row, now, tz, [])
    assert context["stimulus"]["payload"]["buffers"] == [mail], "the offline rules still read the date"
    shown = json.loads(build_messages(context, row, [])[1]["content"].removeprefix("CONTEXT "))
    assert shown["stimulus"]["payload"]["buffers"] == [{"buffer_id": 7, "in_reply_to": "<28@flats.example>"}]
    # one of a group's mails keeps its date: their texts are joined, and the later ones may be cut
    row.payload = {"buffers": [mail, {**mail, "buffer_id": 8, "date": "2027-01-04T18:00:00+01:00"}], "topic": None}
    shown = json.loads(build_messages(build_context(row, now, tz, []), row, [])[1]["content"].removeprefix("CONTEXT "))
    assert [b.get("date") for b in shown["stimulus"]["payload"]["buffers"]] == [
        "2027-01-05T08:09:30+01:00",
        "2027-01-04T18:00:00+01:00",
    ]
