"""A proposal's life: it says why it was made and what a modification changed, it reminds once before it
expires, tells the user when it does, is listed as expired, and can be brought back.

The whole app runs on a simulated clock with the scripted model server over HTTP (tests/test_cortex.py);
decisions go in as the REPL sends them (`Wilson.decide`, or REPL lines through `Repl`).
"""

from __future__ import annotations

import io
import json
from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

from actors.proposals.rules import remind_moment
from actors.proposals.words import changes_between, reason_for
from actors import tools
from storage.models import Approval, ApprovalItem, Inbox, Outbox, Topic, Trace
from tests.calendar_support import add_event
from tests.approval_support import TRIP, UNDATED, created, decide, planner, propose, say, undated_planner
from tests.brain import call  # noqa: F401 (a fixture)
from channels import views
from wilson.app.repl import Repl

BERLIN = ZoneInfo("Europe/Berlin")


def said(app, needle: str) -> list[dict]:
    return [d for d in app.user_deliveries() if needle in d["text"]]


def repl(app, line: str) -> list[dict]:
    """One REPL line, as `wilson-repl --json` runs it; the JSON objects it printed."""
    out = io.StringIO()
    Repl(app, out=out, as_json=True).run_line(line)
    return [json.loads(text) for text in out.getvalue().splitlines()]


def local(moment: str) -> str:
    return datetime.fromisoformat(moment).astimezone(BERLIN).strftime("%a %H:%M")


# Never vanishing ------------------------------------------------------------------------------------
def test_an_unanswered_proposal_is_nudged_once_told_once_when_it_expires_and_listed_as_expired(scripted):
    app, server = scripted(undated_planner, WILSON_APPROVAL_EXPIRY_HOURS="6")  # Tue 08:00 → Tue 14:00
    approval = propose(app)
    assert approval.remind_at == approval.created_at + timedelta(hours=3)  # half its life: 24 h is longer

    app.advance(timedelta(days=2))
    nudges, notices = said(app, "Still waiting for your answer"), said(app, "I dropped proposal")
    assert [local(d["at"]) for d in nudges] == ["Tue 11:00"]  # no briefing before 14:00: a nudge of its own
    assert f"proposal {approval.id}, the “{TRIP}” plan" in nudges[0]["text"] and "Tue 5 Jan 14:00" in nudges[0]["text"]
    assert [local(d["at"]) for d in notices] == ["Tue 14:00"]
    assert notices[0]["text"] == (
        f"I dropped proposal {approval.id}, the “{TRIP}” plan: no answer in 6 hours, so "
        f"nothing changed. Say “show expired” to see it again, or “revive {approval.id}” "
        "to bring it back."
    )
    assert created() == ([], [])

    row = Approval.get_by_id(approval.id)
    assert row.status == "expired" and row.reminded_at is not None and row.expired_notice_at is not None
    assert [(a["id"], a["status"]) for a in views.approvals(app.config.timezone)] == [(approval.id, "expired")]
    (listing,) = repl(app, "approvals")
    assert [(a["id"], a["status"]) for a in listing["items"]] == [(approval.id, "expired")]
    table = views.table("approvals", views.approvals(app.config.timezone))
    assert f"#{approval.id}    expired    on 2027-01-05T14:00+01:00  (revive {approval.id})" in table
    (shown,) = repl(app, "show expired")
    assert shown["type"] == "expired" and [a["id"] for a in shown["items"]] == [approval.id]
    assert [i["description"] for i in shown["items"][0]["items"]][0].startswith(f"New topic: {TRIP}")

    app.advance(timedelta(days=5))  # nothing more about it, however long it stays expired
    assert len(said(app, "Still waiting for your answer")) == 1 and len(said(app, "I dropped proposal")) == 1
    keys = [o.idempotency_key for o in Outbox.select().where(Outbox.trace_id == approval.trace_id)]
    assert keys.count(f"remind:{approval.id}") == 1 and keys.count(f"expired:{approval.id}") == 1


def test_the_morning_briefing_that_lists_it_is_the_reminder(scripted):
    app, server = scripted(undated_planner)  # 72 h: Tue 08:00 → Fri 08:00; the Fri 07:00 briefing comes in time
    approval = propose(app)
    app.advance(timedelta(days=4))

    assert said(app, "Still waiting for your answer") == []  # the briefing said it: no nudge as well
    briefings = [d for d in said(app, "Good morning") if f"Proposal {approval.id}:" in d["text"]]
    assert local(briefings[-1]["at"]) == "Fri 07:00"
    assert Approval.get_by_id(approval.id).reminded_at is not None
    reminded = [
        t.reason for t in Trace.select().where((Trace.trace_id == approval.trace_id) & (Trace.stage == "reminded"))
    ]
    assert reminded == [f"proposal {approval.id} listed as waiting in the morning briefing"]
    assert [local(d["at"]) for d in said(app, "I dropped proposal")] == ["Fri 08:00"]


def test_an_expired_proposal_comes_back_once_and_executes_once(scripted):
    app, server = scripted(undated_planner, WILSON_APPROVAL_EXPIRY_HOURS="6")
    original = propose(app)
    app.advance(timedelta(hours=7))
    assert Approval.get_by_id(original.id).status == "expired"

    repl(app, f"revive {original.id}")
    again = Approval.get(Approval.supersedes == original.id)
    assert (again.status, again.idempotency_key) == ("pending", f"revive:{original.id}")
    assert again.expires_at == app.clock.now() + timedelta(hours=6) and again.nonce != original.nonce
    assert [(i.tool, i.args) for i in again.items.order_by(ApprovalItem.position)] == [
        (c["name"], c["arguments"]) for c in UNDATED
    ]
    (shown,) = [d for d in app.user_deliveries() if (d["approval"] or {}).get("id") == again.id]
    assert f"(Back again: proposal {original.id} had expired.)" in shown["text"]
    assert "Because you asked: “I'm flying to Japan on 2027-04-10”." in shown["text"]
    assert Approval.get_by_id(original.id).superseded_by == again.id
    (listing,) = repl(app, "show expired")
    assert listing["items"] == []  # back already: nothing left to bring back

    assert decide(app, original.id, "revive") == f"Proposal {original.id} is already back, as proposal {again.id}."
    assert "came back as proposal" in decide(app, original.id, "approve")
    assert decide(app, again.id, "approve").startswith("Done:")
    assert decide(app, again.id, "approve").startswith("Already done")
    assert created() == ([TRIP], ["Check passport", "Book flights", "Pack"])
    assert Approval.select().count() == 2


def test_only_an_expired_proposal_is_brought_back_and_only_by_its_person(scripted):
    app, server = scripted(planner)
    approval = propose(app)
    assert "still waiting for you" in decide(app, approval.id, "revive")
    app.advance(timedelta(days=4))
    assert "only Wilson's owner" in decide(app, approval.id, "revive", user_id="someone-else")
    assert Approval.select().count() == 1
    assert decide(app, 999, "revive") == "I don't know proposal 999."


def test_a_close_asked_when_its_topic_ended_lapses_quietly_and_can_be_revived(scripted):
    def closer(ctx, body):
        stimulus = ctx["stimulus"]
        if stimulus["kind"] == "topic_end":
            return {"tool_calls": [call("close_topic", topic_id=stimulus["payload"]["topic_id"])]}
        return {"text": ""}

    app, server = scripted(closer, WILSON_APPROVAL_EXPIRY_HOURS="6", WILSON_CORE_QUIET_HOURS="off")
    now = app.clock.now()
    midnight = datetime.combine(now.astimezone(BERLIN).date() + timedelta(days=1), datetime.min.time(), tzinfo=BERLIN)
    topic = Topic.create(
        title="Trip to Lisbon",
        status="active",
        starts=now - timedelta(days=7),
        ends=midnight,
        created_at=now - timedelta(days=30),
    )
    app.advance(
        midnight - now + timedelta(hours=1)
    )  # the trip is over: the tick asks the cortex, which proposes to close
    first = Approval.get()
    assert [i.tool for i in first.items] == ["close_topic"] and first.reason.startswith(
        "because “Trip to Lisbon” ended"
    )
    told_before = len(app.user_deliveries())

    app.advance(timedelta(hours=13))  # unanswered past its lapse: no nudge, no notice, no second asking
    assert Approval.get_by_id(first.id).status == "expired" and Approval.select().count() == 1
    assert app.user_deliveries()[told_before:] == []
    assert Topic.get_by_id(topic.id).status == "active"  # nothing changes without a yes
    lapsed = Trace.get((Trace.trace_id == first.trace_id) & (Trace.stage == "expired"))
    assert "lapsed quietly" in lapsed.reason

    (shown,) = repl(app, "show expired")
    assert [a["id"] for a in shown["items"]] == [first.id]
    repl(app, f"revive {first.id}")
    again = Approval.get(Approval.supersedes == first.id)
    app.advance(timedelta(hours=13))  # brought back by the user, it is theirs: its lapse is told
    assert [d["text"].split(",")[0] for d in said(app, "I dropped proposal")] == [f"I dropped proposal {again.id}"]
    repl(app, f"revive {again.id}")
    third = Approval.get(Approval.supersedes == again.id)
    assert decide(app, third.id, "approve").startswith("Done:")
    assert Topic.get_by_id(topic.id).status == "closed"


def test_a_close_the_user_asked_for_is_still_told_when_it_lapses(scripted):
    # only Wilson's own housekeeping lapses quietly; a proposal made from the user's words is told
    app, server = scripted(
        lambda ctx, body: {"tool_calls": [call("close_topic", topic_id=1)]},
        WILSON_APPROVAL_EXPIRY_HOURS="6",
        WILSON_CORE_QUIET_HOURS="off",
    )
    now = app.clock.now()
    Topic.create(
        title="Trip to Lisbon",
        status="active",
        starts=now - timedelta(days=7),
        ends=now - timedelta(hours=1),
        created_at=now,
    )
    asked = Approval.get(Approval.inbox_id == say(app, "close the Lisbon trip").id)
    app.advance(timedelta(hours=13))
    assert Approval.get_by_id(asked.id).status == "expired"
    assert [d["text"].split(",")[0] for d in said(app, "I dropped proposal")] == [f"I dropped proposal {asked.id}"]


# Explaining themselves ------------------------------------------------------------------------------
def test_every_proposal_says_why_on_the_repl(scripted):
    app, server = scripted(planner)
    add_event(app.calendar_file(), TRIP, date(2027, 4, 10), date(2027, 4, 24), "Tokyo", tz=app.config.timezone)
    app.advance(timedelta(days=1))  # the morning sync routes the new event to the cortex
    from_calendar = Approval.get()
    assert Inbox.get_by_id(from_calendar.inbox_id).kind == "event"
    assert from_calendar.reason == f"because “{TRIP}” is in your calendar on Sat 10 Apr"
    asked = propose(app)
    assert asked.reason == "because you asked: “I'm flying to Japan on 2027-04-10”"

    for approval, line in (
        (from_calendar, f"Because “{TRIP}” is in your calendar on Sat 10 Apr."),
        (asked, "Because you asked: “I'm flying to Japan on 2027-04-10”."),
    ):
        # the calendar's plan is told inside the morning briefing, the asked-for one on its own
        (shown,) = [
            d
            for d in app.user_deliveries()
            if (d["approval"] or {}).get("id") == approval.id or approval.id in d["proposals"]
        ]
        lines = shown["text"].splitlines()
        heading = next(i for i, text in enumerate(lines) if text.startswith(f"Proposal {approval.id}:"))
        assert lines[heading + 1] == line
    listing = {a["id"]: a for a in repl(app, "approvals")[0]["items"]}
    assert listing[from_calendar.id]["reason"] == from_calendar.reason and listing[asked.id]["reason"] == asked.reason
    table = views.table("approvals", views.approvals(app.config.timezone))
    assert f"Because “{TRIP}” is in your calendar on Sat 10 Apr." in table


def test_a_modified_proposal_shows_what_changed_and_keeps_its_reason(scripted):
    app, server = scripted(planner)
    original = propose(app)
    decide(app, original.id, "modify", text="book flights by Feb 1")
    replacement = Approval.get(Approval.supersedes == original.id)
    assert replacement.reason == original.reason
    assert replacement.changes == "changed: Book flights due Mon 1 Feb 2027 (was Mon 15 Feb 2027)"
    (shown,) = [d for d in app.user_deliveries() if (d["approval"] or {}).get("id") == replacement.id]
    assert shown["text"].splitlines()[-2:] == [
        f"What changed from proposal {original.id}:",
        "  changed: Book flights due Mon 1 Feb 2027 (was Mon 15 Feb 2027)",
    ]
    table = views.table("approvals", views.approvals(app.config.timezone))
    assert "changed: Book flights due Mon 1 Feb 2027 (was Mon 15 Feb 2027)" in table


def test_changes_name_what_was_added_removed_and_changed():
    tz = BERLIN
    old = [
        ("create_task", {"title": "Book flights", "due": "2027-02-15"}, "New task: Book flights"),
        ("create_task", {"title": "Pack", "due": "2027-04-08"}, "New task: Pack"),
        ("close_topic", {"topic_id": 3}, "Close topic: Lisbon"),
    ]
    new = [
        ("create_task", {"title": "book  Flights", "due": "2027-02-15", "topic": "Japan"}, "New task: book Flights"),
        ("close_topic", {"topic_id": 3}, "Close topic: Lisbon"),
        ("create_task", {"title": "Insurance"}, "New task: Insurance"),
    ]
    assert changes_between(old, new, tz).splitlines() == [
        "changed: book Flights in Japan (was no topic)",
        "added: New task: Insurance",
        "removed: New task: Pack",
    ]
    assert changes_between(old, old, tz) == ""


def test_reasons_name_the_stimulus_and_quote_others_words_short_and_tame():
    now = datetime(2027, 1, 5, 7, tzinfo=timezone.utc)
    row = Inbox(
        kind="event",
        origin="background",
        source="calendar",
        text="x",
        payload={
            "buffers": [
                {
                    "channel": "calendar",
                    "change": "new",
                    "title": "Dentist\nsee http://evil.example/x " + "y" * 200,
                    "start": "2027-01-12T09:30:00+01:00",
                    "all_day": False,
                }
            ]
        },
    )
    line = reason_for(row, now, BERLIN)
    assert line == "because “Dentist see evil[.]example/x…” is in your calendar on Tue 12 Jan 09:30"  # cut at a word
    assert "\n" not in line and len(line) < 120
    deadline = Inbox(
        kind="deadline",
        origin="background",
        source="tick",
        text="x",
        payload={"title": "File taxes", "due": "2027-01-04T23:00:00+00:00", "due_is_date": True},
    )
    assert reason_for(deadline, now, BERLIN) == "because “File taxes” was due Tue 5 Jan"
    mail = Inbox(
        kind="buffered",
        origin="background",
        source="email",
        text="x",
        payload={"buffers": [{"channel": "email", "subject": "Invoice 42", "from": "shop@example.com"}]},
    )
    assert reason_for(mail, now, BERLIN) == "because of the email “Invoice 42” from shop@example[.]com"  # defanged


def test_the_reminder_comes_late_in_a_proposals_life():
    start = datetime(2027, 1, 5, 7, tzinfo=timezone.utc)
    assert remind_moment(start, start + timedelta(hours=72), timedelta(hours=24)) == start + timedelta(hours=48)
    assert remind_moment(start, start + timedelta(hours=2), timedelta(hours=24)) == start + timedelta(hours=1)


def test_a_topic_that_ended_with_its_last_day_is_said_to_end_on_that_day():
    now = datetime(2027, 5, 23, 5, tzinfo=timezone.utc)
    row = Inbox(
        kind="topic_end",
        origin="background",
        source="tick",
        text="x",
        payload={"title": "Trip to Japan", "ends": "2027-05-22T22:00:00+00:00"},
    )  # midnight after 22 May
    assert reason_for(row, now, BERLIN) == "because “Trip to Japan” ended on Sat 22 May"
    # the day the clocks go forward is 23 hours long: its midnight after is not 24 hours after its start
    spring = Inbox(
        kind="topic_end",
        origin="background",
        source="tick",
        text="x",
        payload={"title": "Trip to Lisbon", "ends": "2027-03-28T22:00:00+00:00"},
    )  # midnight after 28 Mar
    assert (
        reason_for(spring, datetime(2027, 3, 29, 5, tzinfo=timezone.utc), BERLIN)
        == "because “Trip to Lisbon” ended on Sun 28 Mar"
    )


def test_the_approvals_listing_indents_an_items_notes_under_it():
    row = {
        "id": 4,
        "status": "pending",
        "expires": "2027-01-08T07:00+01:00",
        "reason": "because you asked",
        "supersedes": None,
        "superseded_by": None,
        "changes": None,
        "items": [
            {
                "position": 1,
                "tool": "create_task",
                "status": "pending",
                "description": "New task: Pack — due Fri 8 Jan 2027\n   Notes: passport, adapters",
            }
        ],
    }
    assert views.table("approvals", [row]).splitlines()[-2:] == [
        "       1. [pending] New task: Pack — due Fri 8 Jan 2027",
        "          Notes: passport, adapters",
    ]


# A proposal whose time passes --------------------------------------------------------------------------
def test_a_proposal_lapses_when_its_changes_would_all_come_too_late():
    from actors import tools
    from actors.proposals.rules import expires
    from wilson.kernel.config import Config

    config = Config({})
    now = datetime(2027, 1, 5, 7, tzinfo=timezone.utc)  # Tue 08:00 in Berlin
    reminder = ("remind", {"text": "call the dentist", "at": "2027-01-06T09:00"})
    task = ("create_task", {"title": "Buy a present", "due": "2027-01-07"})
    interview = ("create_topic", {"title": "Job interview", "starts": "2027-01-07T14:00"})
    assert tools.moot_at([reminder], BERLIN) == datetime(2027, 1, 6, 8, tzinfo=timezone.utc)  # 09:00 in Berlin
    assert tools.moot_at([task], BERLIN) == datetime(2027, 1, 7, 23, tzinfo=timezone.utc)  # the end of its due day
    # a plan for an event is moot when the event starts; dated changes alone, when the earliest comes
    assert tools.moot_at([interview, task], BERLIN) == datetime(2027, 1, 7, 13, tzinfo=timezone.utc)
    assert tools.moot_at([task, reminder], BERLIN) == datetime(2027, 1, 6, 8, tzinfo=timezone.utc)
    assert tools.moot_at([interview], BERLIN) == datetime(2027, 1, 7, 13, tzinfo=timezone.utc)
    snooze = ("snooze_task", {"task_id": 1, "until": "2027-01-08"})  # a date alone: that morning, as it comes back
    assert tools.moot_at([snooze], BERLIN) == datetime(2027, 1, 8, 8, tzinfo=timezone.utc)
    # a change with no time of its own still makes sense whenever it is approved: the capped wait alone ends it
    assert tools.moot_at([task, ("create_task", {"title": "Pack"})], BERLIN) == datetime(
        2027, 1, 7, 23, tzinfo=timezone.utc
    )
    assert tools.moot_at([("create_task", {"title": "Pack"})], BERLIN) is None
    assert tools.moot_at([("complete_task", {"task_id": 1})], BERLIN) is None

    assert expires(now, tools.moot_at([reminder], BERLIN), config) == datetime(2027, 1, 6, 8, tzinfo=timezone.utc)
    # not by a clock: a plan for March waits for March (expiry_hours caps only the undated)
    assert expires(now, datetime(2027, 3, 1, tzinfo=timezone.utc), config) == datetime(2027, 3, 1, tzinfo=timezone.utc)
    assert expires(now, now - timedelta(hours=1), config) == now + timedelta(hours=72)  # already past: the wait
    assert expires(now, None, config) == now + timedelta(hours=72)


def test_a_reminder_left_unanswered_past_its_time_is_dropped_then_and_never_fires(make_app):
    app = make_app()  # Tue 5 Jan 08:00, offline rules
    repl(app, "remind me to call the dentist tomorrow at 9")
    approval = Approval.select().order_by(Approval.id.desc()).get()
    app.advance(timedelta(days=1, hours=2))  # Wed 10:00

    (notice,) = said(app, "I dropped proposal")
    assert local(notice["at"]) == "Wed 09:00"
    assert notice["text"].startswith(f"I dropped proposal {approval.id}, “Remind you once, Wed 6 Jan 2027 09:00")
    assert ": its time has passed, so nothing changed." in notice["text"]
    assert "revive" not in notice["text"]  # bringing it back as it was would not help
    repl(app, f"approve {approval.id}")
    app.wait_idle()
    (answer,) = said(app, f"Proposal {approval.id} expired on")
    assert "so I changed nothing" in answer["text"]
    repl(app, f"revive {approval.id}")
    app.wait_idle()
    assert said(app, f"Proposal {approval.id}'s time has passed, so bringing it back as it was would not help")
    assert Approval.select().count() == 1
    app.advance(timedelta(days=1))
    assert said(app, "Reminder: call the dentist") == []


def test_a_plan_for_thursday_is_not_asked_about_on_friday(make_app):
    app = make_app()  # Tue 5 Jan 08:00
    repl(app, "I have a job interview on Thursday at 14:00")
    approval = Approval.select().order_by(Approval.id.desc()).get()
    app.advance(timedelta(days=3))  # Fri 08:00

    waiting = said(app, f"Proposal {approval.id}: New topic: Job interview")
    assert [local(d["at"]) for d in waiting] == ["Thu 07:00"]  # the morning of the day is its one reminder
    (notice,) = said(app, "I dropped proposal")
    assert local(notice["at"]) == "Thu 14:00" and "its time has passed" in notice["text"]
    assert Approval.get_by_id(approval.id).status == "expired"


def test_a_yes_after_answering_the_last_proposal_does_not_approve_an_older_one(make_app):
    app = make_app()  # offline rules: the words are read as a model would read the context
    repl(app, "add pay rent by Friday")
    repl(app, "add call the plumber by Saturday")
    older, newer = Approval.select().order_by(Approval.id)
    repl(app, "yes")  # the one just asked
    app.wait_idle()
    assert Approval.get_by_id(newer.id).status == "approved" and Approval.get_by_id(older.id).status == "pending"

    repl(app, "what's on my plate this week?")
    repl(app, "yes")  # about the list just shown, or anything else: not about the rent, asked two questions ago
    app.wait_idle()
    assert Approval.get_by_id(older.id).status == "pending"
    assert said(app, f"Which proposal do you mean? The one still waiting is proposal {older.id}: New task: Pay rent")
    repl(app, f"yes to proposal {older.id}")
    app.wait_idle()
    assert Approval.get_by_id(older.id).status == "approved"


def test_a_proposal_whose_time_comes_tonight_is_not_nudged_and_its_notice_waits_for_the_morning(make_app):
    app = make_app(start="2027-01-05T21:30:00+01:00")  # quiet hours 22:00-07:00
    repl(app, "remind me to take my pills at 23:00")
    approval = Approval.select().order_by(Approval.id.desc()).get()
    assert approval.remind_at is None  # an hour and a half to live: a nudge would only be noise
    app.advance(timedelta(hours=12))
    assert said(app, "Still waiting for your answer") == []
    (notice,) = said(app, "I dropped proposal")
    assert local(notice["at"]) == "Wed 07:00" and "its time has passed" in notice["text"]


def test_a_nudge_that_the_quiet_would_hold_past_the_lapse_is_not_sent_through_it(make_app):
    app = make_app()  # Tue 08:00; the proposal (no date of its own) waits 72 h, its nudge is due Thu 08:00
    repl(app, "add pay rent")
    approval = Approval.select().order_by(Approval.id.desc()).get()
    repl(app, "quiet 4d")  # until Sat 08:00, after it lapses on Fri 08:00
    app.advance(timedelta(days=3, hours=12))
    assert said(app, "Still waiting for your answer") == []  # before: sent at once, through the quiet
    assert Approval.get_by_id(approval.id).status == "expired"
    assert any(t.stage == "not reminded" for t in Trace.select().where(Trace.trace_id == approval.trace_id))
    assert Approval.get_by_id(approval.id).reminded_at is None  # never put before the user again


def test_a_yes_after_the_briefing_lists_the_proposal_again_approves_it(make_app):
    app = make_app()  # Tue 08:00; no dates of their own: they wait 72 h
    repl(app, "add pay rent")
    repl(app, "add call the plumber")
    older, newer = Approval.select().order_by(Approval.id)
    repl(app, "yes")  # the plumber, just asked
    app.advance(timedelta(days=2, hours=23, minutes=30))  # Fri 07:00: the briefing lists the rent, its one reminder
    assert said(app, f"Proposal {older.id}: New task: Pay rent")
    repl(app, "yes")
    app.wait_idle()
    assert Approval.get_by_id(older.id).status == "approved"


def test_a_reminder_approved_after_its_time_fails_and_says_so(db):
    from actors.tools.common import Call

    now = datetime(2027, 1, 6, 9, 30, tzinfo=timezone.utc)
    remind = tools.toolbox().get("remind")
    try:
        remind.execute({"text": "call the dentist", "at": "2027-01-06T09:00"}, Call(now=now, tz=BERLIN))
    except ValueError as exc:  # the gate shows it under "Could not do"
        assert str(exc) == "Wed 6 Jan 2027 09:00 has passed; ask me again with a new time"
    else:
        raise AssertionError("a reminder for a time already past was set")


def test_the_nudge_of_a_proposal_that_lapses_as_a_day_ends_names_that_day(db):
    from actors.proposals.words import reminder_text

    made = datetime(2027, 1, 5, 7, tzinfo=timezone.utc)
    approval = Approval.create(
        trace_id="t",
        approver="owner",
        channel="repl",
        nonce="n0nce",
        created_at=made,
        expires_at=datetime(2027, 1, 7, 23, tzinfo=timezone.utc),
    )  # midnight in Berlin
    ApprovalItem.create(
        approval=approval,
        position=1,
        tool="create_task",
        description="New task: Pay rent",
        args={"title": "Pay rent", "due": "2027-01-07"},
    )
    assert reminder_text(approval, BERLIN, made).endswith(
        "I'll drop it at the end of Thu 7 Jan if I don't hear from you."
    )
    approval.expires_at = datetime(2027, 1, 8, 7, tzinfo=timezone.utc)
    assert reminder_text(approval, BERLIN, made).endswith("I'll drop it on Fri 8 Jan 08:00 if I don't hear from you.")


def test_a_plan_for_a_trip_in_five_weeks_still_waits_listed_once_a_week_on_and_once_before_it_lapses(make_app):
    from tests.calendar_support import add_event

    app = make_app()  # Tue 5 Jan 08:00, offline rules
    add_event(
        app.calendar_file(), "Trip to Lisbon", date(2027, 2, 10), date(2027, 2, 14), "Lisbon", tz=app.config.timezone
    )
    app.advance(timedelta(days=1))
    plan = Approval.get()
    assert plan.expires_at == datetime(2027, 2, 9, 23, tzinfo=timezone.utc)  # when the trip starts, not in 72 h
    app.advance(timedelta(days=8))  # a week and more without an answer
    assert Approval.get_by_id(plan.id).status == "pending"
    listed = [d for d in said(app, "Good morning!") if "Waiting for your answer" in d["text"]]
    assert len(listed) == 1  # a week after it was shown
    assert f"Proposal {plan.id}: New topic: Trip to Lisbon" in listed[0]["text"]
    assert said(app, "I dropped proposal") == []
    # left unanswered until the trip starts, it is gone, and the user is told so once, with what to do
    app.advance(timedelta(days=27))  # Tue 16 Feb: the trip began on Wed 10 Feb
    # not listed every week meanwhile: once more only, the morning of its one reminder before it lapses
    listed = [d for d in said(app, "Good morning!") if "Waiting for your answer" in d["text"]]
    assert len(listed) == 2, [d["at"] for d in listed]
    assert Approval.get_by_id(plan.id).status == "expired"
    (notice,) = said(app, "I dropped proposal")
    assert notice["text"] == (
        f"I dropped proposal {plan.id}, the “Trip to Lisbon” plan: its time has passed, so "
        "nothing changed. Ask me again if you still want it."
    )
    assert "2027-02-10" <= datetime.fromisoformat(notice["at"]).astimezone(BERLIN).date().isoformat() <= "2027-02-11"
