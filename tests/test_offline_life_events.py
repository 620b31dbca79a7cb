"""A chat line that announces the user's own dated life event gets that event's plan (wilson/model/offline/intents.py
`_life_event`, the playbook's words in wilson/model/playbook.toml); news about others, a past event or a
hypothetical stays an answer. Wordings of our own, several per kind; "now" is Tue 5 Jan 2027 in Berlin."""

from __future__ import annotations

import pytest

from tests.offline_support import BERLIN, NOW, read
from wilson.model.offline import dates


def plan_of(text: str) -> tuple[str | None, list[str]]:
    """(the topic proposed, the tasks proposed) for a message read with nothing open."""
    reply = read(text)
    topics = [args["title"] for name, args in reply.calls if name == "create_topic"]
    tasks = [args["title"] for name, args in reply.calls if name == "create_task"]
    return (topics[0] if topics else None), tasks


@pytest.mark.parametrize(
    "text, task",
    [
        # a conference told by what one does there
        ("we're exhibiting at the Hannover Messe on 12 April", "Book accommodation"),
        ("I'll be on our booth at the CES in Las Vegas from 6 to 9 January next year", "Book travel"),
        ("presenting a poster at the ICML workshop on 20 March, need to print it", "Prepare your talk or materials"),
        ("my abstract got accepted, the meeting is in Vienna on 14 April", "Register and get your ticket"),
        ("got my ticket for re:Invent in Las Vegas on 29 November", "Book travel"),
        # a wedding named in another tradition
        ("Yusuf and Leyla's nikah is on 5 June in Cologne", "Buy a gift"),
        ("my cousin's shaadi in Leicester on 20 August, need an outfit", "Get the outfit ready"),
        # a document running out
        ("my passport expires on 3 April 😬", "Gather the documents"),
        ("heads up: my ID card runs out on 2 March", "Fill in and check the forms"),
        # a language test by its name
        ("TOEFL on 20 February, help me prepare", "Make a study plan"),
        ("I've got the IELTS on 1 March", "Practise with past papers"),
        # an operation said short, or by what it treats
        ("eye op on 3 February, my husband drives me home", "Prepare documents and questions"),
        ("cataract surgery on the 9th of March", "Confirm the appointment and plan the way there"),
        # a move said by where from, or by the lease
        ("moving from Kreuzberg to Wedding on 30 April", "Book movers or a van"),
        ("we finally signed the lease, keys on 1 March", "Arrange internet and utilities at the new place"),
    ],
)
def test_the_users_own_dated_event_gets_its_plan(text, task):
    topic, tasks = plan_of(text)
    assert topic is not None, f"{text!r} proposed no plan"
    assert task in tasks


def test_another_persons_move_the_user_organises_is_planned():
    topic, tasks = plan_of("my dad is moving into a care home on 1 April and I'm organising everything")
    assert topic == "Move" and "Book movers or a van" in tasks
    topic, _ = plan_of("Oma is moving to Potsdam on 10 March and we're handling the move")
    assert topic is not None


def test_the_thing_to_do_is_planned_not_the_trip_that_dates_it():
    topic, tasks = plan_of("I need a new passport for Lina before we fly to Canada in May")
    assert "Gather the documents" in tasks and "Book flights" not in tasks
    assert "fly" not in (topic or "")  # the clause that only says by when stays out of the topic's name
    topic, tasks = plan_of("have to renew my Personalausweis before I travel in June")
    assert "Submit" in tasks and "Pack" not in tasks


@pytest.mark.parametrize(
    "text",
    [
        "my sister is moving in March",
        "my brother is moving into a new flat on 15 March",
        "we moved last year",
        "if I ever do the IELTS on 6 March I'd need a study plan",
        "maybe we'll move to Hamburg in June",
        "I'm thinking about doing the TOEFL in May",
        "my colleague Tom has a poster at the EGU on 25 April",
        # a tool moved from, a poster put up: no home, no conference
        "we're moving from Jira to Linear on 1 Feb",
        "putting up a poster at the Kita on Friday",
    ],
)
def test_news_the_past_and_the_hypothetical_stay_answers(text):
    reply = read(text)
    assert not any(name == "create_topic" for name, _ in reply.calls), f"{text!r} got a plan: {reply.calls}"
    assert reply.text  # the user is still answered


def test_a_document_running_out_that_must_be_replaced_is_its_renewal_not_the_checks_answer():
    check = [{"id": 3, "title": "Check passport validity", "due": "2027-01-20", "status": "open", "topic": "Trip"}]
    reply = read("my passport runs out in March and I need a new one before I travel", tasks=check)
    assert "Gather the documents" in [args["title"] for name, args in reply.calls if name == "create_task"]
    # said alone, it still answers the check
    reply = read("my passport runs out in March", tasks=check)
    assert "couldn't read that date" in reply.text and not reply.calls


@pytest.mark.parametrize(
    "text, topic",
    [
        ("our grandson Ben turns one on 2 April, we'll go up to Kiel for it", "Ben's birthday"),
        ("Leo turns five on the 3rd of March", "Leo's birthday"),
        ("Opa wird neunzig am 4. April", "Opa's birthday"),
    ],
)
def test_an_age_said_in_words_is_a_birthday_and_no_hour(text, topic):
    got, tasks = plan_of(text)
    assert got == topic and "Get a present" in tasks
    assert all("T05:00" not in str(args) for _, args in read(text).calls)  # "five" is not 5 o'clock


def test_an_event_called_off_closes_the_topic_that_named_who_it_was_for():
    topics = [
        {"id": 1, "title": "Wedding", "status": "active"},
        {"id": 2, "title": "Sister Greta's wedding", "status": "active"},
    ]
    reply = read("Greta called off the wedding 😢", topics=topics)
    assert reply.calls == [("close_topic", {"topic_id": 2})]
    # naming neither, it guesses none
    assert not read("the wedding is off", topics=topics).calls


SCOTLAND_PLAN = {
    "id": 4,
    "items": [
        {"position": 1, "description": "New topic: Roadtrip Schottland (Sat 1 May 2027 – Sun 9 May 2027)"},
        {"position": 2, "description": "New task: Book accommodation — due Wed 17 Mar 2027 (in Roadtrip Schottland)"},
    ],
}


@pytest.mark.parametrize(
    "text",
    ["the Scotland trip is off, Lena broke her leg 😕", "the roadtrip is cancelled", "schottland fell through, sadly"],
)
def test_an_event_called_off_while_its_plan_waits_says_no_to_the_plan(text):
    # no topic yet: the plan for it still waits for an answer, and the news is the answer (named in either language)
    assert read(text, pending=[SCOTLAND_PLAN]).calls == [("decide", {"proposal": 4, "action": "reject"})]


JAPAN_PLAN = {
    "id": 5,
    "items": [{"position": 1, "description": "New topic: Trip to Japan (Sat 10 Apr 2027 – Sat 24 Apr 2027)"}],
}


@pytest.mark.parametrize(
    "text",
    [
        "the Paris trip is off",
        "the school trip is cancelled",  # the same kind of event is no word about which one
        "my business trip to Munich is off",
        "the Japanese class is cancelled",  # a longer word is no name of it
        "my dentist appointment got cancelled",
    ],
)
def test_news_of_another_event_called_off_leaves_a_waiting_plan_alone(text):
    assert not read(text, pending=[SCOTLAND_PLAN]).calls
    assert not read(text, pending=[JAPAN_PLAN]).calls
    assert read("the Japan trip is off", pending=[JAPAN_PLAN]).calls == [
        ("decide", {"proposal": 5, "action": "reject"})
    ]


def test_a_german_compound_joined_by_a_hyphen_names_the_task_it_finishes():
    tasks = [
        {"id": 9, "title": "Fill in the Kita application", "due": "2027-01-18", "status": "open"},
        {"id": 1, "title": "Renew passport", "due": "2027-01-20", "status": "open"},
    ]
    assert read("Kita-Antrag abgegeben ✅", tasks=tasks).calls == [("complete_task", {"task_id": 9})]
    assert read("Passport-Antrag eingereicht", tasks=tasks).calls == [("complete_task", {"task_id": 1})]
    # naming no open task, nothing is changed and the user is told
    reply = read("Hunde-Steuer bezahlt", tasks=tasks)
    assert not reply.calls and "couldn't tell which task" in reply.text


@pytest.mark.parametrize(
    "text, topic, task",
    [
        # a dated event, then "ich muss …": a need told, the event's plan (not a to-do named by the whole line)
        ("Klausur am 16. Februar, ich muss lernen", "Klausur", "Make a study plan"),
        ("Magenspiegelung am 9. März, ich muss mich vorbereiten", "Magenspiegelung", "Prepare documents and questions"),
        # papers a family applies for; "once she's born" only says by when, and stays out of the topic's name
        (
            "we have to apply for Kindergeld and the birth certificate once he's born in April",
            "Apply for Kindergeld and the birth certificate",
            "Gather the documents",
        ),
        ("need a Führungszeugnis for the new job by 20 February", None, "Fill in and check the forms"),
    ],
)
def test_a_dated_errand_or_event_with_a_need_told_gets_its_plan(text, topic, task):
    got, tasks = plan_of(text)
    assert got is not None and (topic is None or got == topic), got
    assert task in tasks


def test_a_german_to_do_said_alone_stays_one_task():
    reply = read("Steuererklärung abgeben bis Freitag")
    assert [name for name, _ in reply.calls] == ["create_task"]


def test_a_stretch_of_days_said_with_to_starts_on_its_first_day_and_a_day_moved_from_one_to_another_does_not():
    starts = {args.get("starts", "")[:10] for name, args in read("booth at the Hannover Messe 12 to 14 April").calls}
    assert "2027-04-12" in starts
    moved = dates.search("move the dentist from 3 to 5 May", NOW, BERLIN, months=True)
    assert [f.value.isoformat()[:10] for f in moved] == ["2027-05-05"]
    for said in ("we're off to Porto from 3 to 6 June", "flying to Rome from 3 to 6 June"):
        trip = read(said).calls[0]
        assert trip[0] == "create_topic" and trip[1]["starts"][:10] == "2027-06-03", said
    stretch = dates.search("from 6 to 9 January next year", NOW, BERLIN)
    assert [f.value.isoformat()[:10] for f in stretch] == ["2028-01-06"]
    rescheduled = dates.search("can you reschedule the vet from 3 to 5 May", NOW, BERLIN, months=True)
    assert [f.value.isoformat()[:10] for f in rescheduled] == ["2027-05-05"]


@pytest.mark.parametrize(
    "text, topic, task",
    [
        ("my company is sending me to Tokyo for two weeks from 3 March", "Trip to Tokyo", "Book flights"),
        ("the agency is sending us to Lyon on 12 April", "Trip to Lyon", "Book accommodation"),
        # to a named thing in a place: the fair or conference there
        (
            "work is sending me to EuroShop in Düsseldorf, 8 to 12 March",
            "Conference in Düsseldorf",
            "Register and get your ticket",
        ),
    ],
)
def test_being_sent_by_work_is_going(text, topic, task):
    got, tasks = plan_of(text)
    assert got == topic and task in tasks


def test_a_step_the_message_says_is_done_is_left_out_of_the_plan():
    _, told_done = plan_of(
        "We signed the lease 🎉 Moving from Kreuzberg to Leipzig on 30 April, gave notice on the old flat today."
    )
    _, plain = plan_of("We signed the lease 🎉 Moving from Kreuzberg to Leipzig on 30 April.")
    assert "Give notice on the current lease" in plain
    assert told_done == [t for t in plain if t != "Give notice on the current lease"]
    # not done yet, someone else's deed, or only part of it: still planned
    for text, step in [
        ("Moving to Leipzig on 30 April, not yet given notice", "Give notice on the current lease"),
        (
            "Moving to Leipzig on 30 April, the landlord gave notice to the old tenants",
            "Give notice on the current lease",
        ),
        ("Trip to Japan on March 20, booked the flights to Osaka for my sister", "Book flights"),
        ("Trip to Japan on March 20, booked accommodation in Kyoto but not Tokyo", "Book accommodation"),
    ]:
        assert step in plan_of(text)[1], text
