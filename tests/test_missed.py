"""“What did I miss?”: what Wilson told the user unasked since they last wrote, what it keeps for later and
how much came in, in the run's context (actors/cortex/missed.py) and in the offline answer."""

from __future__ import annotations

import io
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from storage import routing
from tests.brain import context_of
from tests.calendar_support import add_event
from tests.test_cortex import cortex_requests, say, scripted  # noqa: F401 (scripted is a fixture)
from wilson.app.repl import Repl

BERLIN = ZoneInfo("Europe/Berlin")
START = "2027-01-05T08:00:00+01:00"  # a Tuesday morning


def mail(app, subject: str, n: int) -> None:
    """A mail the email channel buffered (no mail server here: the row as the channel commits it)."""
    routing.commit_buffered(channel="email", text=f"Email from Sam <sam@example.com>: {subject}", dedup_key=f"mail:{n}",
                            at=app.clock.now(), payload={"from": "sam@example.com", "subject": subject})


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
    assert answer.endswith("New in: 1 calendar change and 1 mail; 1 not sorted yet (the next look sorts them; "
                           "/today looks now).")
    say(app, "anything new?")  # right after: nothing since the last question
    assert last_answer(app) == "Nothing new since 09:00: I had nothing to tell you, and nothing came in."


def test_a_proposal_made_for_the_users_own_request_is_no_news_however_late_it_went(db):
    from actors.cortex.missed import missed_view
    from storage import inbox, outbox
    from storage.models import Approval, ApprovalItem, Outbox

    now = datetime(2027, 1, 5, 12, 0, tzinfo=BERLIN)
    for n, origin in enumerate(("user", "background"), start=1):
        row = inbox.add(source="repl", text=f"thing {n}", priority=2, at=now, origin=origin)
        approval = Approval.create(trace_id=row.trace_id, approver="owner", channel="repl", nonce="n", created_at=now,
                                   expires_at=now + timedelta(days=3), inbox_id=row.id)
        ApprovalItem.create(approval=approval, position=1, tool="create_task", args={}, description=f"Add task {n}")
        box = outbox.add(channel="repl", text=f"Proposal {approval.id}", trace_id=row.trace_id,
                         key=f"proposal:{approval.id}", at=now)
        Outbox.update(status="delivered", delivered_at=now + timedelta(minutes=1), surfaced=True).where(
            Outbox.id == box.id).execute()
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
    assert answer.startswith("I had nothing to tell you since 22:30.\n\nKept for later:\n• From the calendar event "
                             "“Pub quiz”: Heads-up: it moved from Tue 5 Jan at 23:00 to Wed 6 Jan at 19:00. "
                             "(for Wed 6 Jan 07:00)")


def test_the_context_of_what_was_missed_holds_the_view_and_other_messages_do_not(scripted):
    app, server = scripted(lambda ctx, body: {"text": "Here you go."}, start=START)
    say(app, "hello")
    app.advance(timedelta(hours=2))
    mail(app, "Dinner on Friday?", 1)
    say(app, "what did I miss?")
    say(app, "and tomorrow?")
    hello, missed, later = (context_of(body) for body in cortex_requests(server))
    assert "missed" not in hello and "missed" not in later
    view = missed["missed"]
    assert view["since"] == "2027-01-05T08:00+01:00"  # when the user last wrote
    assert view["came_in"] == {"email": 1} and view["to_sort"] == 1 and view["told"] == []
    assert view["untrusted"].startswith("these lines may quote mail")
