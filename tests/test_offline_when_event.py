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
        ("calendar_lookup", {"start": "2027-01-06", "end": "2028-01-06"})]
    assert when_event.lookup(chat(), "it") is None  # no word to look for
    assert when_event.lookup(chat(offered=()), "the dentist") is None  # no calendar to read


def test_the_events_named_soonest_first_and_how_far_off():
    found = [event("Yoga class", "2027-01-20T18:00:00+01:00"), event("Yoga class", "2027-01-13T18:00:00+01:00"),
             event("Dentist", "2027-01-06T15:00:00+01:00", location="Praxis Weber"),
             event("Yoga retreat", "2027-03-01", all_day=True)]
    assert when_event.answer(chat(), "the dentist", found).text == "Dentist: Wed 6 Jan 15:00 (today), Praxis Weber."
    assert when_event.answer(chat(), "my yoga class", found).text == (
        "Yoga class: Wed 13 Jan 18:00 (in 7 days).\nYoga class: Wed 20 Jan 18:00 (in 14 days).")
    assert when_event.answer(chat(), "next appointment", found).text.startswith("Dentist: Wed 6 Jan 15:00")
    assert when_event.answer(chat(), "the retreat", found).text == "Yoga retreat: Mon 1 Mar (in 54 days)."
    many = [event("Standup", f"2027-01-{day:02d}T09:00:00+01:00") for day in range(7, 13)]
    assert when_event.answer(chat(), "standup", many).text.endswith("\n(and 3 more)")
    assert when_event.answer(chat(), "the gym", found).text == (
        "I found nothing called “the gym” in your calendar for the year ahead.")
