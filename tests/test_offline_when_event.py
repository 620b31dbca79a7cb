"""wilson/model/offline/when_event.py: "when is the dentist?" answered from the calendar's events."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from wilson.model.offline import when_event
from wilson.model.offline.phrases import Chat
from wilson.model.offline.recognition import load_playbook

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2027, 1, 6, 8, 0, tzinfo=BERLIN)  # a Wednesday


def chat(offered=("calendar_lookup",)):
    return Chat(text="", now=NOW, tz=BERLIN, playbook=load_playbook(), offered=offered)


def event(title, start, **more):
    return {"title": title, "start": start, **more}


def test_the_year_ahead_is_read_only_when_the_words_name_something():
    assert when_event.lookup(chat(), "the dentist").calls == [
        ("calendar_lookup", {"start": "2027-01-06", "end": "2028-01-06"})
    ]
    assert when_event.lookup(chat(), "it") is None  # no word to look for
    assert when_event.lookup(chat(offered=()), "the dentist") is None  # no calendar to read


def test_the_events_named_soonest_first_and_how_far_off():
    found = [
        event("Yoga class", "2027-01-20T18:00:00+01:00"),
        event("Yoga class", "2027-01-13T18:00:00+01:00"),
        event("Dentist", "2027-01-06T15:00:00+01:00", location="Praxis Weber"),
        event("Yoga retreat", "2027-03-01", all_day=True),
    ]
    assert when_event.answer(chat(), "the dentist", found).text == "Dentist: Wed 6 Jan 15:00 (today), Praxis Weber."
    assert when_event.answer(chat(), "my yoga class", found).text == (
        "Yoga class: Wed 13 Jan 18:00 (in 7 days).\nYoga class: Wed 20 Jan 18:00 (in 14 days)."
    )
    assert when_event.answer(chat(), "next appointment", found).text.startswith("Dentist: Wed 6 Jan 15:00")
    assert when_event.answer(chat(), "the retreat", found).text == "Yoga retreat: Mon 1 Mar (in 54 days)."
    many = [event("Standup", f"2027-01-{day:02d}T09:00:00+01:00") for day in range(7, 13)]
    assert when_event.answer(chat(), "standup", many).text.endswith("\n(and 3 more)")
    assert when_event.answer(chat(), "the gym", found).text == (
        "I found nothing called “the gym” in your calendar for the year ahead."
    )


def test_an_open_task_named_is_answered_with_its_due_day():
    # "I found nothing called “rent” in your calendar" while "Pay rent" was due on Friday
    tasks = [
        {"id": 1, "title": "Pay rent", "due": "2027-01-08", "status": "open"},
        {"id": 2, "title": "Book flights", "due": None, "status": "open"},
    ]
    asked = Chat(text="", now=NOW, tz=BERLIN, playbook=load_playbook(), offered=("calendar_lookup",), tasks=tasks)
    assert when_event.lookup(asked, "the rent").text == "“Pay rent” is due Fri 8 Jan (in 2 days)."
    assert when_event.lookup(asked, "the flights task").text == "“Book flights” has no due date."


def test_a_question_about_a_day_or_the_calendar_is_left_to_the_look_at_days():
    for phrase in (
        "my calendar busy tomorrow",
        "my day free",
        "anything on my calendar this week",
        "my first meeting tomorrow",
    ):
        assert when_event.lookup(chat(), phrase) is None, phrase


def test_kind_words_do_not_hide_the_event_and_what_is_over_is_not_coming():
    found = [
        event("Dentist", "2027-01-06T07:00:00+01:00", end="2027-01-06T07:30:00+01:00"),  # over at 08:00
        event("Dentist", "2027-01-14T09:00:00+01:00"),
        event("Call with Anna", "2027-01-07T16:00:00+01:00"),
        event("Ski week", "2027-01-04", end="2027-01-10", all_day=True),
    ]
    assert when_event.answer(chat(), "my dentist appointment", found).text == "Dentist: Thu 14 Jan 09:00 (in 8 days)."
    assert (
        when_event.answer(chat(), "the meeting with Anna", found).text == "Call with Anna: Thu 7 Jan 16:00 (tomorrow)."
    )
    assert when_event.answer(chat(), "the ski week", found).text == "Ski week: Mon 4 Jan (under way)."
    # the next appointment is the next to begin, not one under way since Monday
    assert when_event.answer(chat(), "next appointment", found).text == "Call with Anna: Thu 7 Jan 16:00 (tomorrow)."


def test_only_the_year_ahead_read_by_lookup_is_answered_as_a_when_question():
    today = NOW.date()
    assert when_event.asked(chat(), today, today + when_event.AHEAD)
    assert not when_event.asked(chat(), today, today)  # "when does my day end?" read today: a look at the day


def test_whats_my_next_appointment_names_the_first_event_to_come(make_app):
    # "what's my next appointment?" got "I didn't understand"; "my first appointment tomorrow" became a medical plan
    from tests.table_support import Session

    session = Session(make_app(start="2027-01-05T10:00:00+01:00"))
    session.run('calendar add "Dentist" @ 2027-01-14T08:30 -> 2027-01-14T09:15; Praxis Weber, Berlin')
    session.run('calendar add "Team standup" @ 2027-01-06T09:30 -> 2027-01-06T09:45; Zoom')
    session.run("sync")
    for question in ("what's my next appointment?", "where is my next meeting?", "whats my next appointment"):
        said = len(session.app.user_deliveries())
        session.run(f"say {question}")
        told = "\n".join(d["text"] for d in session.app.user_deliveries()[said:])
        assert "Team standup: Wed 6 Jan 09:30 (tomorrow), Zoom." in told, question
    said = len(session.app.user_deliveries())
    session.run("say what is my first appointment tomorrow?")
    told = "\n".join(d["text"] for d in session.app.user_deliveries()[said:])
    assert "In your calendar tomorrow:\n• Team standup — Wed 6 Jan 09:30, Zoom" in told
    assert "Proposal 2" not in told  # no plan proposed for the question
