"""A sender who writes twice about the same thing costs the user one message, not two: a background run
about a mail sees what Wilson told the user about its thread in the last 24 hours (actors/cortex/told.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from actors.cortex.told import thread_of, told_before
from storage import inbox, outbox
from storage.models import Outbox
from tests.brain import context_of, is_cortex
from tests.cortex_support import background, user_texts

NOW = datetime(2027, 1, 5, 12, tzinfo=UTC)
TZ = ZoneInfo("Europe/Berlin")


def mail(sender: str, subject: str) -> dict:
    return {"buffers": [{"buffer_id": 1, "channel": "email", "from": sender, "subject": subject}]}


def row_about(sender: str, subject: str, key: str, origin: str = "background"):
    return inbox.add(
        source="email",
        kind="buffered",
        origin=origin,
        priority=1,
        at=NOW,
        text=f"{subject}: x",
        payload=mail(sender, subject),
        dedup_key=key,
    )


def told(row, text: str, at: datetime, key: str, **kw) -> Outbox:
    return outbox.add(channel="repl", text=text, trace_id=row.trace_id, key=key, at=at, **kw)


def test_a_thread_is_its_sender_and_its_subject_without_the_replies_prefixes():
    assert thread_of(mail("Landlord@Mail.example", "Re: RE: Fwd:  Lease  renewal")["buffers"][0]) == (
        "landlord@mail.example",
        "lease renewal",
    )
    assert thread_of({"channel": "email", "from": "a@b.example", "subject": "AW: WG[2]: Lease"}) == (
        "a@b.example",
        "lease",
    )
    assert thread_of({"channel": "email", "from": "A Name", "subject": "Lease"}) is None, "a name alone is nobody"
    assert thread_of({"channel": "email", "from": "a@b.example"}) is None
    assert thread_of({"channel": "calendar", "title": "Lease"}) is None


def test_what_went_out_about_the_same_thread_within_a_day_is_shown_and_nothing_else(db):
    first = row_about("landlord@mail.example", "Sign the lease", "a")
    told(
        first,
        "From the email “Sign the lease” from landlord@mail[.]example: sign by Friday\nmore",
        NOW - timedelta(hours=3),
        "surface:a",
    )
    other = row_about("bank@bank.example", "Sign the lease", "b")  # another sender's mail of the same subject
    told(other, "From the bank", NOW - timedelta(hours=2), "surface:b")
    old = row_about("landlord@mail.example", "Re: Sign the lease", "c")
    told(old, "Two days ago", NOW - timedelta(hours=25), "surface:c")
    dropped = row_about("landlord@mail.example", "Sign the lease", "d")
    told(dropped, "Acknowledged meanwhile", NOW - timedelta(hours=1), "surface:d")
    Outbox.update(status="dropped").where(Outbox.idempotency_key == "surface:d").execute()
    silent = row_about("landlord@mail.example", "Sign the lease", "e")
    told(silent, "Not for the user", NOW - timedelta(hours=1), "surface:e", surfaced=False)

    again = row_about("landlord@mail.example", "Re: Sign the lease", "f")
    told(again, "What this very run said", NOW - timedelta(minutes=1), "surface:f")  # its own: not told before
    assert told_before(again, NOW, TZ) == [
        {
            "at": "2027-01-05T10:00+01:00",
            "text": "From the email “Sign the lease” from landlord@mail[.]example: sign by Friday",
        }
    ]
    asked = row_about("landlord@mail.example", "Sign the lease", "g", origin="user")
    assert told_before(asked, NOW, TZ) == [], "the user's own runs see what they missed another way"


def test_a_proposal_says_where_it_stands_a_held_message_says_so_and_the_newest_three_are_shown(db):
    from storage.models import Approval, ApprovalItem

    proposing = row_about("school@school.example", "Field trip form", "p")
    approval = Approval.create(
        trace_id=proposing.trace_id,
        approver="owner",
        channel="repl",
        nonce="n",
        created_at=NOW,
        expires_at=NOW + timedelta(days=3),
        inbox_id=proposing.id,
    )
    ApprovalItem.create(approval=approval, position=1, tool="create_task", args={}, description="New task: Sign it")
    told(
        proposing,
        "I'd like to do this: approve, modify or reject?",
        NOW - timedelta(hours=5),
        f"proposal:{approval.id}",
    )
    told(proposing, "Asked again", NOW - timedelta(hours=4), f"proposal:{approval.id}:again:9")  # the same one
    for hour in (3, 2, 1):
        row = row_about("school@school.example", "Re: Field trip form", f"s{hour}")
        told(
            row,
            f"Said {hour} hours ago",
            NOW - timedelta(hours=hour),
            f"surface:{hour}",
            deliver_after=NOW + timedelta(hours=8) if hour == 1 else None,
        )
    reply = row_about("school@school.example", "RE: Field trip form", "r")
    assert told_before(reply, NOW, TZ) == [
        {"at": "2027-01-05T10:00+01:00", "text": "Said 3 hours ago"},
        {"at": "2027-01-05T11:00+01:00", "text": "Said 2 hours ago"},
        {"at": "2027-01-05T12:00+01:00", "text": "Said 1 hours ago", "status": "held for quiet hours"},
    ]
    Outbox.delete().where(Outbox.idempotency_key.startswith("surface:")).execute()
    assert told_before(reply, NOW, TZ) == [
        {"at": "2027-01-05T08:00+01:00", "text": "Proposal 1, waiting for your answer: New task: Sign it"}
    ]


def test_a_resent_urgent_mail_is_told_once_and_the_second_run_sees_the_first_message(scripted):
    def surface_unless_told(ctx, body):
        if ctx.get("told_before"):
            return {"text": ""}
        return {
            "tool_calls": [
                {
                    "name": "surface",
                    "arguments": {"text": "The client call moved to 14:00 today.", "why": "urgent", "urgent": True},
                }
            ]
        }

    app, server = scripted(surface_unless_told)
    urgent = mail("boss@work.example", "URGENT: client call moved to 14:00")
    background(app, "Email from boss@work.example: URGENT: client call moved to 14:00", payload=urgent, priority=1)
    app.advance(timedelta(minutes=15))
    again = mail("boss@work.example", "Re: URGENT: client call moved to 14:00")
    background(app, "Email from boss@work.example: Re: URGENT: client call moved to 14:00", payload=again, priority=1)
    assert user_texts(app) == [
        "From the email “URGENT: client call moved to 14:00” from boss@work[.]example: "
        "The client call moved to 14:00 today."
    ]
    first, second = (context_of(r["body"]) for r in server.requests if is_cortex(r["body"]))
    assert "told_before" not in first
    assert [t["text"] for t in second["told_before"]["told"]] == user_texts(app)
    assert second["told_before"]["untrusted"].startswith("these lines may quote mail")


def test_without_a_model_the_same_heads_up_twice_is_said_once_and_a_new_one_is_said(make_app):
    app = make_app()
    subject = "The quarterly budget review for the regional offices and the planning of next year's travel"
    text = f"Email from boss@work.example: {subject}\nPlease review the budget draft by Friday."
    for _ in range(2):  # a long heads-up, over the 160 characters of a line in other views
        background(app, text, payload=mail("boss@work.example", subject))
        app.advance(timedelta(minutes=15))
    background(
        app,
        f"Email from boss@work.example: Re: {subject}\nThe review moved to Monday.",
        payload=mail("boss@work.example", f"Re: {subject}"),
    )
    said = user_texts(app)
    assert len(said) == 2 and len(said[0]) > 160 and f"Re: {subject}" in said[1], said


def test_without_a_model_a_heads_up_that_says_nothing_of_its_own_is_never_taken_for_one_said_before(make_app):
    app = make_app()
    sender = {"subject": "Final notice", "from": "bills@shop.example"}
    for notice in ("pay today at http://pay.example", "pay tomorrow at http://pay.example"):
        app.inject_buffered("email", f"Final notice: {notice}", sender)
        app.advance(timedelta(hours=2))  # each wakes triage early, and Wilson says each
    vague = "From the email “Final notice” from bills@shop[.]example: Heads-up: this may need you."
    assert user_texts(app) == [vague, vague], "two notices that say nothing of their own are two, not one"


def test_a_line_cut_short_or_a_links_lost_scheme_never_matches_what_would_be_said():
    from wilson.model.offline.told import said_before

    def told(text):
        return {"told_before": {"told": [{"text": text}]}}

    pay = "Heads-up: “Pay by Friday”"
    assert said_before(pay, told(f"From the email “Bill” from a@b[.]example: {pay}"))
    assert not said_before(pay, told("From …: Heads-up: “Pay by Fri…"))
    assert not said_before("Heads-up: “Pay at https://a.example”", told("From …: Heads-up: “Pay at a[.]example”"))
