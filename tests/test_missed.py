"""“What did I miss?”: what Wilson told the user unasked since they last wrote, what it keeps for later and
how much came in, in the run's context (actors/cortex/missed.py) and in the offline answer."""

from __future__ import annotations

import io
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from actors.cortex.route import missed_judgement
from storage import outbox, routing
from storage.models import Inbox, Outbox
from tests.brain import context_of
from tests.calendar_support import add_event
from tests.cortex_support import cortex_requests, say
from tests.router_support import routed
from wilson.app.repl import Repl

BERLIN = ZoneInfo("Europe/Berlin")
START = "2027-01-05T08:00:00+01:00"  # a Tuesday morning


def mail(app, subject: str, n: int) -> None:
    """A mail the email channel buffered (no mail server here: the row as the channel commits it)."""
    routing.commit_buffered(
        channel="email",
        text=f"Email from Sam <sam@example.com>: {subject}",
        dedup_key=f"mail:{n}",
        at=app.clock.now(),
        payload={"from": "sam@example.com", "subject": subject},
    )


def last_answer(app) -> str:
    return app.user_deliveries()[-1]["text"]


def test_offline_what_was_missed_names_the_proposal_a_new_event_brought_and_what_came_in_since(make_app):
    app = make_app(start=START)
    say(app, "hi")
    Repl(app, out=io.StringIO()).run_line("add buy bread by Friday")  # the user last wrote at 08:00
    app.wait_idle()
    add_event(app.calendar_file(), "Dentist", datetime(2027, 1, 7, 15, 0), tz=BERLIN)
    app.advance(timedelta(minutes=10))  # the calendar's poll
    app.sync()  # a look: a proposal for the dentist
    app.wait_idle()
    app.advance(timedelta(minutes=50))
    mail(app, "Dinner on Friday?", 1)  # not sorted yet
    say(app, "what did I miss?")
    answer = last_answer(app)
    assert answer.startswith("Since 08:00 I told you:\n• 08:")
    assert "Proposal 2, waiting for your answer: New topic: Dentist" in answer
    assert "bread" not in answer, "the answer to the user's own request is no news"
    assert answer.endswith(
        "New in: 1 calendar change and 1 mail; 1 not sorted yet (the next look sorts them; /today looks now)."
    )
    say(app, "anything new?")  # right after: nothing since the last question
    assert last_answer(app) == "Nothing new since 09:00: I had nothing to tell you, and nothing came in."


def test_a_proposal_made_for_the_users_own_request_is_no_news_however_late_it_went(db):
    from actors.cortex.missed import missed_view
    from storage import inbox, outbox
    from storage.models import Approval, ApprovalItem, Outbox

    now = datetime(2027, 1, 5, 12, 0, tzinfo=BERLIN)
    for n, origin in enumerate(("user", "background"), start=1):
        row = inbox.add(source="repl", text=f"thing {n}", priority=2, at=now, origin=origin)
        approval = Approval.create(
            trace_id=row.trace_id,
            approver="owner",
            channel="repl",
            nonce="n",
            created_at=now,
            expires_at=now + timedelta(days=3),
            inbox_id=row.id,
        )
        ApprovalItem.create(approval=approval, position=1, tool="create_task", args={}, description=f"Add task {n}")
        box = outbox.add(
            channel="repl", text=f"Proposal {approval.id}", trace_id=row.trace_id, key=f"proposal:{approval.id}", at=now
        )
        Outbox.update(status="delivered", delivered_at=now + timedelta(minutes=1), surfaced=True).where(
            Outbox.id == box.id
        ).execute()
    view = missed_view(now - timedelta(hours=1), now + timedelta(hours=1), BERLIN)
    assert [t["text"] for t in view["told"]] == ["Proposal 2, waiting for your answer: Add task 2"]


def test_offline_what_quiet_hours_hold_is_named_as_kept_for_later(make_app):
    from channels.calendar.editor import move_event

    app = make_app(start="2027-01-05T20:00:00+01:00")
    add_event(app.calendar_file(), "Pub quiz", datetime(2027, 1, 5, 23, 0), datetime(2027, 1, 5, 23, 30), tz=BERLIN)
    app.sync()
    app.wait_idle()
    app.advance(timedelta(hours=2, minutes=30))  # 22:30: quiet hours
    say(app, "hi")
    move_event(app.calendar_file(), "Pub quiz", datetime(2027, 1, 6, 19, 0), datetime(2027, 1, 6, 20, 0), tz=BERLIN)
    app.advance(timedelta(minutes=10))  # the calendar's next poll
    app.advance(timedelta(minutes=20))  # a RAS interval, then the early sync: the heads-up is held
    say(app, "what did I miss?")
    answer = last_answer(app)
    assert answer.startswith(
        "I had nothing to tell you since 22:30.\n\nKept for later:\n• From the calendar event "
        "“Pub quiz”: Heads-up: it moved from Tue 5 Jan at 23:00 to Wed 6 Jan at 19:00. "
        "(for Wed 6 Jan 07:00)"
    )


MISSED = "template: what the user missed, told from its view (answered without a model)"


def test_what_was_missed_asked_alone_is_told_from_its_view_without_a_model(scripted):
    app, server = scripted(lambda ctx, body: {"text": "Here you go."}, start=START)
    say(app, "hello")
    app.advance(timedelta(hours=2))
    mail(app, "Dinner on Friday?", 1)
    row = say(app, "what did I miss?")
    assert len(cortex_requests(server)) == 1, "only the hello reached the model"
    assert routed(row) == [MISSED]
    assert last_answer(app) == (
        "I had nothing to tell you since 08:00.\n\nNew in: 1 mail; 1 not sorted yet "
        "(the next look sorts them; /today looks now)."
    )


def test_a_link_wilson_passed_on_is_defanged_when_what_was_missed_repeats_it(scripted):
    app, server = scripted(lambda ctx, body: {"text": "Here you go."}, start=START)
    say(app, "hello")
    app.advance(timedelta(hours=1))
    box = outbox.add(
        channel="repl",
        text="From your email: reset your password at http://evil.example/login",
        trace_id="t",
        key="surface:1",
        at=app.clock.now(),
    )
    Outbox.update(status="delivered", delivered_at=app.clock.now(), surfaced=True).where(Outbox.id == box.id).execute()
    say(app, "what did I miss?")
    answer = last_answer(app)
    assert "evil[.]example/login" in answer and "http://evil.example" not in answer, answer


def test_what_was_missed_asked_as_the_first_word_goes_to_the_model_with_the_view(scripted):
    app, server = scripted(lambda ctx, body: {"text": "Here you go."}, start=START)
    mail(app, "Dinner on Friday?", 1)
    app.advance(timedelta(hours=2))
    row = say(app, "what did I miss?")  # Wilson has not introduced itself yet: the model answers
    say(app, "and tomorrow?")
    missed, later = (context_of(body) for body in cortex_requests(server))
    assert routed(row) == ["fast: a lookup; not from a template: the user's first message"]
    assert "missed" not in later, "only the question about it carries the view"
    view = missed["missed"]
    assert view["since"] == "2027-01-04T10:00+01:00"  # the user never wrote: the day before
    assert view["came_in"] == {"email": 1} and view["to_sort"] == 1 and view["told"] == []
    assert view["untrusted"].startswith("these lines may quote mail")


def test_what_was_missed_goes_to_a_model_for_anyone_but_the_owner():
    row = Inbox(origin="user", kind="message", text="what did I miss?", user_id="42", payload={})
    assert missed_judgement(row, owner="7") == "what was missed is the owner's to ask about"
