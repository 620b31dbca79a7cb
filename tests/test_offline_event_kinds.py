"""What the user is proposed for a calendar event whose kind only its shape or its last word gives away: a
conference named like one ("KubeCon Europe", "RustConf"), a title whose last noun says what it is ("Car insurance
payment" is a payment, not a forms errand), and a work stay abroad named by no travel word ("Offsite"), which is a
trip, not a conference to register for. Each event is added through the REPL and the plan read in the proposal
the user is sent (offline, no model)."""

from __future__ import annotations

import pytest

from tests.table_support import Session


def proposed(make_app, title: str, when: str, where: str = "") -> str:
    session = Session(make_app(start="2027-01-05T10:00:00+01:00"))
    session.run(f'calendar add "{title}" @ {when}' + (f"; {where}" if where else ""))
    session.run("sync")
    return "\n".join(d["text"] for d in session.app.user_deliveries())


@pytest.mark.parametrize(
    "title, where",
    [
        ("KubeCon Europe", "RAI Amsterdam, Netherlands"),
        ("RustConf", "Montreal, Canada"),
        ("Comic Con 2027", "San Diego, USA"),
    ],
)
def test_a_name_shaped_like_a_conference_gets_a_conference_plan(make_app, title, where):
    said = proposed(make_app, title, "2027-03-22 -> 2027-03-25", where)
    assert f"New topic: {title}" in said
    assert "Register and get your ticket" in said  # a conference's first step, not a holiday's
    assert "Buy travel insurance" not in said


def test_the_last_word_of_a_title_says_what_it_is(make_app):
    said = proposed(make_app, "Car insurance payment", "2027-01-20")
    assert "Pay or cancel — due" in said  # a payment to make
    assert "Fill in and check the forms" not in said  # not the forms errand "car insurance" alone would be


def test_a_work_stay_abroad_without_a_travel_word_is_a_trip(make_app):
    said = proposed(make_app, "Offsite", "2027-03-15 -> 2027-03-18", "Hotel Arts, Barcelona, Spain")
    assert "Book accommodation" in said and "Pack" in said
    assert "Register and get your ticket" not in said


def test_a_one_day_offsite_at_home_is_no_trip(make_app):
    said = proposed(make_app, "Offsite", "2027-03-15T09:00 -> 2027-03-15T17:00", "Office, Berlin")
    assert "Book flights" not in said and "Register and get your ticket" not in said


@pytest.mark.parametrize(
    "title, where",
    [("Bürgeramt", "Bürgeramt Neukölln, Berlin"), ("Ausländerbehörde", "Friedrich-Krause-Ufer 24, Berlin")],
)
def test_an_appointment_at_an_office_is_an_errand_with_papers(make_app, title, where):
    said = proposed(make_app, title, "2027-01-19T10:00 -> 2027-01-19T10:20", where)
    assert "Gather the documents" in said


def test_a_company_town_hall_is_no_errand(make_app):
    said = proposed(make_app, "Q1 Town Hall", "2027-01-19T16:00 -> 2027-01-19T17:00", "Office, Berlin")
    assert "Gather the documents" not in said
