"""A sender who writes twice about the same thing costs the user one message, not two: a background run
about a mail sees what Wilson told the user about its thread in the last 24 hours (actors/cortex/told.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from actors.cortex.told import thread_of, told_before
from storage import inbox, outbox
from storage.models import Outbox
from tests.brain import context_of, is_cortex
from tests.test_cortex import background, scripted, user_texts  # noqa: F401 (a fixture)

NOW = datetime(2027, 1, 5, 12, tzinfo=UTC)
TZ = ZoneInfo("Europe/Berlin")


def mail(sender: str, subject: str) -> dict:
    return {"buffers": [{"buffer_id": 1, "channel": "email", "from": sender, "subject": subject}]}


def row_about(sender: str, subject: str, key: str, origin: str = "background"):
    return inbox.add(source="email", kind="buffered", origin=origin, priority=1, at=NOW, text=f"{subject}: x",
                     payload=mail(sender, subject), dedup_key=key)


def told(row, text: str, at: datetime, key: str, **kw) -> Outbox:
    return outbox.add(channel="repl", text=text, trace_id=row.trace_id, key=key, at=at, **kw)


def test_a_thread_is_its_sender_and_its_subject_without_the_replies_prefixes():
    assert thread_of(mail("Landlord@Mail.example", "Re: RE: Fwd:  Lease  renewal")["buffers"][0]) == (
        "landlord@mail.example", "lease renewal")
    assert thread_of({"channel": "email", "from": "a@b.example", "subject": "AW: WG[2]: Lease"}) == ("a@b.example",
                                                                                                   "lease")
    assert thread_of({"channel": "email", "from": "A Name", "subject": "Lease"}) is None, "a name alone is nobody"
    assert thread_of({"channel": "email", "from": "a@b.example"}) is None
    assert thread_of({"channel": "calendar", "title": "Lease"}) is None


def test_what_went_out_about_the_same_thread_within_a_day_is_shown_and_nothing_else(db):
    first = row_about("landlord@mail.example", "Sign the lease", "a")
    told(first, "From the email “Sign the lease” from landlord@mail[.]example: sign by Friday\nmore",
         NOW - timedelta(hours=3), "surface:a")
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
    assert told_before(again, NOW, TZ) == [
        {"at": "2027-01-05T10:00+01:00", "text": "From the email “Sign the lease” from landlord@mail[.]example: "
                                                 "sign by Friday"}]
    asked = row_about("landlord@mail.example", "Sign the lease", "g", origin="user")
    assert told_before(asked, NOW, TZ) == [], "the user's own runs see what they missed another way"


def test_a_resent_urgent_mail_is_told_once_and_the_second_run_sees_the_first_message(scripted):
    def surface_unless_told(ctx, body):
        if ctx.get("told_before"):
            return {"text": ""}
        return {"tool_calls": [{"name": "surface", "arguments": {"text": "The client call moved to 14:00 today.",
                                                                 "why": "urgent", "urgent": True}}]}

    app, server = scripted(surface_unless_told)
    urgent = mail("boss@work.example", "URGENT: client call moved to 14:00")
    background(app, "Email from boss@work.example: URGENT: client call moved to 14:00", payload=urgent, priority=1)
    app.advance(timedelta(minutes=15))
    again = mail("boss@work.example", "Re: URGENT: client call moved to 14:00")
    background(app, "Email from boss@work.example: Re: URGENT: client call moved to 14:00", payload=again,
               priority=1)
    assert user_texts(app) == ["From the email “URGENT: client call moved to 14:00” from boss@work[.]example: "
                               "The client call moved to 14:00 today."]
    first, second = (context_of(r["body"]) for r in server.requests if is_cortex(r["body"]))
    assert "told_before" not in first
    assert [t["text"] for t in second["told_before"]["told"]] == user_texts(app)
    assert second["told_before"]["untrusted"].startswith("these lines may quote mail")


def test_without_a_model_the_same_heads_up_twice_is_said_once_and_a_new_one_is_said(make_app):
    app = make_app()
    text = "Email from boss@work.example: Budget review\nPlease review the budget draft by Friday."
    for _ in range(2):
        background(app, text, payload=mail("boss@work.example", "Budget review"))
        app.advance(timedelta(minutes=15))
    background(app, "Email from boss@work.example: Re: Budget review\nThe review moved to Monday.",
               payload=mail("boss@work.example", "Re: Budget review"))
    said = user_texts(app)
    assert len(said) == 2 and "Re: Budget review" in said[1], "the reply is new: said, as the first mail was"
