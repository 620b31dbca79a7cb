"""Memory that changes behaviour: recall by the situation (topic, kind of event, people, places), and
learned outcomes that shape what is proposed: a kind of proposal the user keeps turning down is held
back, a task the user habitually does late is proposed earlier with the reason.

Unit tests run on SQLite; the last test is the whole loop through real actors and the scripted model
server: three trips teach Wilson, and the fourth trip's plan is different because of what it learned.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone
from types import SimpleNamespace

import pytest

from actors.hippocampus import consent, outcomes as hippocampus_outcomes, recall as hippocampus_recall
from actors.hippocampus.advice import HOLD_BACK_AT, proposal_advice, steer
from actors.hippocampus.nightly import consolidate
from actors.hippocampus.recall import relevant_memories, situation_of
from storage import engram, recall
from storage.models import Approval, ApprovalItem, Inbox, Memory, Task, Trace
from tests.brain import call, context_of
from tests.cortex_support import background, cortex_requests, tool_results
from tests.hippocampus_support import FakeSynapse, at, night, proposal

UTC = timezone.utc
NOW = datetime(2027, 3, 1, 9, tzinfo=UTC)


@pytest.fixture
def db(any_db):
    """Each unit test on SQLite, and on PostgreSQL when WILSON_TEST_DATABASE_URL names one."""
    return any_db


def rejected_on_nights(titles: tuple[str, ...], first: int = 0) -> None:
    """Each title proposed and rejected, two weeks apart, with a consolidation the night after."""
    for n, title in enumerate(titles, start=first):
        day = (date(2027, 1, 10) + timedelta(days=14 * n)).isoformat()
        proposal(title, day, decided=at(day), status="rejected", item_status="rejected")
        consolidate(night(day) + timedelta(days=1), FakeSynapse())


# Recall by the situation ------------------------------------------------------------------
def test_a_new_trip_recalls_flight_habits_though_its_text_never_says_flights(db):
    belief = engram.store("belief", "user books flights late", ["task:1"], NOW - timedelta(days=30), weight=3)
    engram.store("episode", "The user said: the Japan vase is fragile", ["turn:1"], NOW - timedelta(days=300))
    engram.store("belief", "user prefers aisle seats", ["turn:2"], NOW - timedelta(days=30), weight=2)
    row = Inbox(
        text="New event: Japan, 2–16 April 2027",
        kind="event",
        origin="background",
        payload={"buffers": [{"title": "Trip to Japan", "change": "new", "location": "Tokyo"}]},
    )

    # The stimulus text alone recalls an unrelated episode and nothing about flights.
    assert [m.text for m in recall.recall(row.text, at=NOW)] == ["The user said: the Japan vase is fragile"]

    situation = situation_of(row)
    assert situation["titles"] == ["Trip to Japan"] and situation["places"] == ["Tokyo"]
    memories = relevant_memories(situation, NOW)
    by_text = {m["text"]: m for m in memories}
    assert by_text["user books flights late"]["why"] in ("kind: trip", "title: Trip to Japan")
    assert by_text["user books flights late"]["id"] == belief.id
    assert [m["text"] for m in memories][0] == "user books flights late"  # a belief about the kind leads
    assert by_text["user prefers aisle seats"]["why"] == "profile"  # the core profile is always there


def test_an_exam_recalls_study_habits_and_a_bill_recalls_payment_habits(db):
    engram.store("belief", "user starts exam revision two weeks ahead", [], NOW, weight=2)
    engram.store("belief", "user pays bills late", [], NOW, weight=2)
    exam = relevant_memories({"text": "Statistics final on 12 June", "titles": ["Statistics final exam"]}, NOW)
    bill = relevant_memories({"text": "Invoice 2231 from Stadtwerke"}, NOW)
    assert "user starts exam revision two weeks ahead" in [m["text"] for m in exam if m["why"] != "profile"]
    assert [m["text"] for m in bill if m["why"] != "profile"] == ["user pays bills late"]
    assert hippocampus_recall.event_kinds("Trip to Japan", "flight LH 714") == ["trip"]
    assert hippocampus_recall.event_kinds("Book a taxi") == []


def test_recall_by_topic_and_person(db):
    engram.store("interpretation", "Anna prefers video calls in the morning", [], NOW)
    engram.store("interpretation", "the wedding budget topic is shared with Ben", [], NOW)
    found = relevant_memories({"text": "Meeting moved", "topic": "Wedding budget", "people": ["Anna"]}, NOW)
    whys = {m["text"]: m["why"] for m in found}
    assert whys["Anna prefers video calls in the morning"] == "person: Anna"
    assert whys["the wedding budget topic is shared with Ben"] == "topic: Wedding budget"


# Outcomes shape proposals --------------------------------------------------------------------
def agree(now) -> list[str]:
    """The user says yes to every change the nights offered (the gate's execution of each proposal)."""
    offered = consent.offers(now, HOLD_BACK_AT)
    for _, change in offered:
        consent.adopt(change["key"], True, None, change["does"], now)
    return [change["does"] for _, change in offered]


def test_three_rejected_packing_lists_hold_back_the_next_one_two_do_not(db):
    rejected_on_nights(("Pack for Lisbon", "Pack for Rome"))
    assert proposal_advice("create_task", {"title": "Pack for Japan", "due": "2027-04-01"}, NOW) is None

    rejected_on_nights(("Pack for Oslo",), first=2)
    # learned, but holding a kind of proposal back makes Wilson say less: it waits for the user's yes
    assert proposal_advice("create_task", {"title": "Packing list for Japan", "due": "2027-04-01"}, NOW) is None
    assert agree(NOW) == ["stop proposing packing lists"]
    advice = proposal_advice("create_task", {"title": "Packing list for Japan", "due": "2027-04-01"}, NOW)
    assert advice["action"] == "hold" and advice["because"] == "you turned down packing lists 3 times"
    assert Memory.get_by_id(advice["memory"]).text == "user does not want packing lists proposed"
    assert proposal_advice("create_task", {"title": "Book flights to Japan"}, NOW) is None


def test_calibration_counts_each_kind_of_proposal_and_holds_back_one_always_turned_down(db):
    # three packing lists turned down in one night: no belief yet (one night), but the outcome rates speak
    for city in ("Lisbon", "Rome", "Oslo"):
        proposal(f"Pack for {city}", "2027-01-20", decided=at("2027-01-10"), status="rejected", item_status="rejected")
    proposal("Book flights to Oslo", "2027-01-20", decided=at("2027-01-10"), status="approved", item_status="executed")
    consolidate(night("2027-01-11"), FakeSynapse())
    assert hippocampus_outcomes.subject_rates("packing") == {"approved": 0, "rejected": 3, "ignored": 0}
    assert hippocampus_outcomes.subject_rates("flights") == {"approved": 1, "rejected": 0, "ignored": 0}
    assert live_belief_count() == 0

    assert proposal_advice("create_task", {"title": "Pack for Japan"}, night("2027-01-12")) is None  # not agreed
    consent.adopt("rejected:packing lists", True, None, "stop proposing packing lists", night("2027-01-12"))
    advice = proposal_advice("create_task", {"title": "Pack for Japan"}, night("2027-01-12"))
    assert advice["action"] == "hold" and advice["memory"] == "calibration"
    assert advice["text"] == "proposals of packing lists: 0 approved, 3 turned down, 0 unanswered of 3"
    lines = hippocampus_recall.calibration_lines({"text": "Trip to Japan"})
    assert [line["why"] for line in lines] == ["calibration: packing"]  # flights: one outcome is too few to weigh


def live_belief_count() -> int:
    return Memory.select().where(Memory.kind == "belief", Memory.invalidated_at.is_null()).count()


def test_a_late_habit_brings_the_due_forward_with_its_reason(db):
    belief = engram.store("belief", "user books flights late", ["task:1", "task:2"], NOW, weight=2)
    advice = proposal_advice("create_task", {"title": "Book flights to Japan", "due": "2027-03-20"}, NOW)
    assert advice == {
        "action": "earlier",
        "memory": belief.id,
        "text": "user books flights late",
        "due": "2027-03-13",
        "because": "you usually book flights late",
    }
    # never closer than a day from now, and a due already that close is left alone
    assert proposal_advice("create_task", {"title": "Book flights", "due": "2027-03-05"}, NOW)["due"] == "2027-03-02"
    assert proposal_advice("create_task", {"title": "Book flights", "due": "2027-03-02"}, NOW) is None
    assert proposal_advice("create_task", {"title": "Water the plants", "due": "2027-03-20"}, NOW) is None


def test_only_plans_wilson_makes_itself_are_steered(db):
    engram.store("belief", "user books flights late", [], NOW, weight=2)
    effects: list = []
    args = {"title": "Book flights", "due": "2027-03-20"}
    assert steer("create_task", args, NOW, effects, background=False) == (args, None, "")
    assert effects == []
    steered, held, note = steer("create_task", args, NOW, effects, background=True)
    assert (
        steered["due"] == "2027-03-13"
        and held is None
        and note == " (earlier than usual: you usually book flights late)"
    )
    assert effects and "user books flights late" in effects[0]


# The whole loop ----------------------------------------------------------------------------
TRIPS = [("Lisbon", "2027-01-05"), ("Rome", "2027-02-02"), ("Oslo", "2027-03-02"), ("Tokyo", "2027-03-30")]
TRIP_RE = re.compile(r"Trip to (\w+) on (\d{4}-\d{2}-\d{2})")


def plan(ctx, body):
    """The same script for every trip: a packing list, and flights three weeks before the trip."""
    found = TRIP_RE.search(ctx["stimulus"]["text"])
    if not found:
        return {"text": ""}
    city, day = found.group(1), date.fromisoformat(found.group(2))
    return {
        "tool_calls": [
            call("create_task", title=f"Pack for {city}", due=(day - timedelta(days=1)).isoformat()),
            call("create_task", title=f"Book flights to {city}", due=(day - timedelta(days=21)).isoformat()),
        ]
    }


def trip(app, city: str, day: date) -> Approval:
    row = background(
        app,
        f"Trip to {city} on {day.isoformat()}",
        source="calendar",
        kind="event",
        payload={"buffers": [{"title": f"Trip to {city}", "change": "new", "location": city}]},
    )
    return Approval.get(Approval.inbox_id == row.id)


def test_three_trips_teach_wilson_and_the_fourth_plan_is_different(scripted):
    app, server = scripted(plan, start="2027-01-05T08:00:00+00:00")
    first_items = None
    for city, start in TRIPS[:3]:
        app.clock.set(datetime.fromisoformat(start).replace(hour=8, tzinfo=UTC))
        day = date.fromisoformat(start) + timedelta(days=42)
        approval = trip(app, city, day)
        items = list(approval.items.order_by(ApprovalItem.position))
        first_items = first_items or [(i.args["title"], i.args["due"]) for i in items]
        assert [i.args["title"] for i in items] == [f"Pack for {city}", f"Book flights to {city}"]
        app.decide(approval.id, "reject", items=(1,))
        app.decide(approval.id, "approve", items=(2,))
        assert app.wait_idle()
        flights = Task.get(Task.title == f"Book flights to {city}")
        # the user books the flights four days after the due
        done = flights.due + timedelta(days=4, hours=10)
        Task.update(status="done", completed_at=done).where(Task.id == flights.id).execute()
        app.clock.set(done.replace(hour=3) + timedelta(days=1))
        consolidate(app.clock.now(), app.synapse)  # the night, through the scripted model
    assert agree(app.clock.now()) == ["stop proposing packing lists"]  # the user said yes to what was offered
    assert first_items == [("Pack for Lisbon", "2027-02-15"), ("Book flights to Lisbon", "2027-01-26")]

    city, start = TRIPS[3]
    app.clock.set(datetime.fromisoformat(start).replace(hour=8, tzinfo=UTC))
    day = date.fromisoformat(start) + timedelta(days=42)
    approval = trip(app, city, day)

    # The plan differs from the same script's first one: no packing list, flights a week earlier, with why.
    items = list(approval.items.order_by(ApprovalItem.position))
    scripted_due = (day - timedelta(days=21)).isoformat()
    assert [(i.args["title"], i.args["due"]) for i in items] == [
        ("Book flights to Tokyo", (day - timedelta(days=28)).isoformat())
    ]
    assert "earlier than usual: you usually book flights late" in items[0].description
    # The request log shows the beliefs that led to it, recalled by the kind of event.
    memories = context_of(cortex_requests(server)[-1])["memories"]
    texts = {m["text"]: m["why"] for m in memories}
    assert "user does not want packing lists proposed" in texts and "user books flights late" in texts
    # and how each kind of proposal fared, read from the calibration the nights wrote
    assert texts["proposals of packing lists: 0 approved, 3 turned down, 0 unanswered of 3"] == "calibration: packing"
    assert texts["proposals of flight booking: 3 approved, 0 turned down, 0 unanswered of 3"] == "calibration: flights"
    assert any(r.get("status") == "not proposed" and "packing lists" in r["because"] for r in tool_results(server))
    remembered = [
        t.reason for t in Trace.select().where((Trace.trace_id == approval.trace_id) & (Trace.stage == "remembered"))
    ]
    assert any("Pack for Tokyo" in r and "not proposed" in r for r in remembered)
    assert any(scripted_due in r and "user books flights late" in r for r in remembered), remembered


def test_the_offline_rules_plan_with_what_was_learned_too(make_app):
    """No model at all: the playbook's trip plan, steered by the same memories and calibration."""
    app = make_app(start="2027-01-05T08:00:00+00:00")
    for n, city in enumerate(("Lisbon", "Rome", "Oslo")):
        start = datetime(2027, 1, 5, 8, tzinfo=UTC) + timedelta(days=70 * n)
        app.clock.set(start)
        approval = trip_event(app, city, (start + timedelta(days=120)).date())
        items = {i.args.get("title"): i.position for i in approval.items}
        assert "Pack" in items and "Book flights" in items
        app.decide(approval.id, "reject", items=(items["Pack"],))
        app.decide(approval.id, "approve")
        assert app.wait_idle()
        flights = Task.select().where(Task.title == "Book flights", Task.status == "open").get()
        done = flights.due + timedelta(days=5, hours=10)
        Task.update(status="done", completed_at=done).where(Task.id == flights.id).execute()
        app.clock.set(done.replace(hour=3) + timedelta(days=1))
        consolidate(app.clock.now(), app.synapse)
    agree(app.clock.now())

    start = datetime(2027, 1, 5, 8, tzinfo=UTC) + timedelta(days=70 * 3)
    app.clock.set(start)
    trip_day = (start + timedelta(days=120)).date()
    approval = trip_event(app, "Tokyo", trip_day)
    items = {i.args.get("title"): i for i in approval.items}
    assert "Pack" not in items
    playbook_due = trip_day - timedelta(days=60)
    assert items["Book flights"].args["due"] == (playbook_due - timedelta(days=7)).isoformat()
    assert "earlier than usual: you usually book flights late" in items["Book flights"].description
    remembered = [
        t.reason for t in Trace.select().where((Trace.trace_id == approval.trace_id) & (Trace.stage == "remembered"))
    ]
    assert any("“Pack” not proposed" in r for r in remembered), remembered


def trip_event(app, city: str, day: date) -> Approval:
    row = background(
        app,
        f"Trip to {city} on {day.isoformat()}",
        source="calendar",
        kind="event",
        payload={
            "buffers": [
                {
                    "title": f"Trip to {city}",
                    "change": "new",
                    "location": city,
                    "start": f"{day.isoformat()}T00:00:00+00:00",
                }
            ]
        },
    )
    return Approval.get(Approval.inbox_id == row.id)


def test_an_episode_of_the_user_saying_this_very_thing_is_not_recalled_for_it(db):
    engram.store("episode", "The user said: what did I miss?", ["turn:1"], NOW - timedelta(days=2))
    engram.store(
        "episode", "The user said: what did I miss at the school meeting?", ["turn:2"], NOW - timedelta(days=1)
    )
    found = [m["text"] for m in relevant_memories({"text": "what did I miss?"}, NOW)]
    assert "The user said: what did I miss?" not in found, "an echo of the question tells the planner nothing"
    assert "The user said: what did I miss at the school meeting?" in found


def test_the_core_profile_is_about_the_user_and_a_habit_with_one_senders_mail_comes_when_they_write(db):
    sender = engram.store(
        "belief", "user ignores mail from news@shop.example", ["mail:1"], NOW - timedelta(days=3), weight=5.0
    )
    trait = engram.store("belief", "user prefers meetings in the morning", ["task:1"], NOW - timedelta(days=3))
    profile = [
        m["id"] for m in relevant_memories({"text": "what's on my calendar today?"}, NOW) if m["why"] == "profile"
    ]
    assert trait.id in profile and sender.id not in profile
    found = relevant_memories({"text": "Your weekly picks", "people": ["news@shop.example"]}, NOW)
    assert [m["why"] for m in found if m["id"] == sender.id] == ["person: news@shop.example"]


def test_a_senders_address_recalls_their_own_habit_and_their_name_but_not_others_at_the_same_domain(db):
    school = engram.store(
        "belief", "user ignores mail from school@mail.example", ["mail:1"], NOW - timedelta(days=3), weight=5.0
    )
    boss = engram.store("belief", "user ignores mail from boss@mail.example", ["mail:2"], NOW - timedelta(days=3))
    petra = engram.store("belief", "Petra wants the slides the evening before", ["turn:3"], NOW - timedelta(days=3))
    row = SimpleNamespace(
        text="Email from Petra Hall <boss@mail.example>: client call moved",
        payload={"buffers": [{"from": "boss@mail.example", "from_name": "Petra Hall", "subject": "client call moved"}]},
    )
    found = {m["id"]: m["why"] for m in relevant_memories(situation_of(row), NOW)}
    assert boss.id in found and petra.id in found
    assert school.id not in found, "another sender at the same domain is not this sender"


def test_an_address_is_matched_whole_not_inside_a_longer_one(db):
    own = engram.store("belief", "user ignores mail from Boss@Mail.Example", ["mail:1"], NOW - timedelta(days=3))
    longer = [
        engram.store("belief", f"user ignores mail from {a}", [f"mail:{n}"], NOW - timedelta(days=3))
        for n, a in enumerate(("bigboss@mail.example", "boss@mail.example.org", "boss@mail.examples"), 2)
    ]
    found = [m.id for m in engram.mentioning_address("boss@mail.example", ("belief",), 10, at=NOW)]
    assert found == [own.id], [m.text for m in longer if m.id in found]


def test_a_mail_recalls_its_own_senders_habits_not_those_of_others_sharing_a_word_with_it(db):
    own = engram.store("belief", "user ignores mail from alerts@airline.example", ["mail:1"], NOW - timedelta(days=3))
    bank = engram.store("belief", "user ignores mail from alerts@bank.example", ["mail:2"], NOW - timedelta(days=3))
    school = engram.store(
        "episode",
        "Mail from school@school.example (“URGENT: school closes today”) was let pass",
        ["outbox:1"],
        NOW - timedelta(days=2),
    )
    before = engram.store(
        "episode",
        "Mail from alerts@airline.example (“URGENT: your flight today is cancelled”) was let pass",
        ["outbox:2"],
        NOW - timedelta(days=1),
    )
    row = SimpleNamespace(
        text="Email from Airline Alerts <alerts@airline.example>: URGENT: your flight today is cancelled, rebook today",
        payload={
            "buffers": [
                {
                    "channel": "email",
                    "from": "alerts@airline.example",
                    "from_name": "Airline Alerts",
                    "subject": "URGENT: your flight today is cancelled, rebook today",
                }
            ]
        },
    )
    found = {m["id"] for m in relevant_memories(situation_of(row), NOW)}
    assert {own.id, before.id} <= found, "the airline's own habit and how its last mail fared"
    assert bank.id not in found, "the name 'Airline Alerts' shares a word with the bank's address, not its sender"
    assert school.id not in found, "another sender's urgent mail today is not this one"
    asked = {m["id"] for m in relevant_memories({"text": "did the school write about closing today?"}, NOW)}
    assert school.id in asked, "a question of the user's names no sender: mail episodes still answer it"


def test_every_sender_of_a_batch_keeps_their_own_habits_and_a_memory_naming_no_address_stays(db):
    senders = [f"news{n}@shop{n}.example" for n in range(4)]
    habits = [
        engram.store("belief", f"user ignores mail from {a}", [f"mail:{n}"], NOW - timedelta(days=3))
        for n, a in enumerate(senders)
    ]
    by_name = engram.store(
        "episode",
        "Mail from Shop Three Weekly (“Your weekly picks”) was let pass",
        ["outbox:1"],
        NOW - timedelta(days=1),
    )
    row = SimpleNamespace(
        text="Your weekly picks from four shops",
        payload={
            "buffers": [
                {"channel": "email", "from": a, "from_name": f"Shop {n} Weekly", "subject": "Your weekly picks"}
                for n, a in enumerate(senders)
            ]
        },
    )
    found = {m["id"] for m in relevant_memories(situation_of(row), NOW)}
    assert {h.id for h in habits} <= found, "the fourth sender's habit is theirs, past the five people named"
    assert by_name.id in found, "a memory that names no address cannot be another sender's"


def test_an_attendees_address_does_not_turn_away_what_is_known_about_mail(db):
    school = engram.store(
        "episode",
        "Mail from office@school.example (“Parents' evening”) was let pass",
        ["outbox:1"],
        NOW - timedelta(days=1),
    )
    row = SimpleNamespace(
        text="New event: Parents' evening at school",
        payload={"channel": "calendar", "title": "Parents' evening", "attendees": ["teacher@school.example"]},
    )
    assert school.id in {m["id"] for m in relevant_memories(situation_of(row), NOW)}


def test_a_belief_and_the_interpretation_it_grew_from_are_shown_once(db):
    engram.store("interpretation", "user prefers meetings in the morning", ["task:1"], NOW - timedelta(days=9))
    belief = engram.store(
        "belief", "User prefers meetings in the  morning", ["task:1", "task:2"], NOW - timedelta(days=3)
    )
    found = [
        m
        for m in relevant_memories({"text": "when should the team meeting be?"}, NOW)
        if "prefers meetings" in m["text"]
    ]
    assert [m["id"] for m in found] == [belief.id], "the interpretation the belief grew from is not shown beside it"


def test_an_episode_sharing_one_chance_word_with_the_stimulus_is_not_recalled_and_one_sharing_two_is(db):
    chance = engram.store(
        "episode",
        "Mail from calendar@work.example (“Meeting notes from Thursday”) was let pass",
        ["outbox:1"],
        NOW - timedelta(days=2),
    )
    same = engram.store(
        "episode", "The user said: move the client meeting to the afternoon", ["turn:1"], NOW - timedelta(days=1)
    )
    found = {m["id"] for m in relevant_memories({"text": "what should I prepare for the client meeting?"}, NOW)}
    assert same.id in found, "the client meeting, again"
    assert chance.id not in found, "a meeting is not this meeting"
    one_word = {m["id"] for m in relevant_memories({"text": "meeting?"}, NOW)}
    assert {chance.id, same.id} <= one_word, "a one-word question needs only that word"
    plural = engram.store("episode", "The user said: the cars need their taxes paid", ["turn:2"], NOW)
    assert plural.id in {m["id"] for m in relevant_memories({"text": "what about the car tax?"}, NOW)}, (
        "car and cars, tax and taxes are the same words"
    )
