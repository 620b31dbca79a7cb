"""wilson/model/offline/recognition.py and places.py: what an event is, by its words, its place and its length."""

from __future__ import annotations

import random
import re
from zoneinfo import ZoneInfo

import pytest

from wilson.model.offline import places
from wilson.model.offline.recognition import (
    load_playbook,
    match_words,
    negative_cue,
    place_title,
    recognise_event,
    recognise_message,
)

BERLIN = ZoneInfo("Europe/Berlin")
PLAYBOOK = load_playbook()
HOME = places.home_place(None, "Europe/Berlin")


def kind(title, location=None, start="2027-03-10", end="2027-03-11", home=HOME):
    found = recognise_event(PLAYBOOK, title, location, start, end, BERLIN, home)
    return (found.event.name if found.event else None), found.rule


def test_home_defaults_from_the_timezone_and_can_be_set():
    assert (HOME.name, HOME.country) == ("Berlin", "DE")
    assert places.home_place("Paris", "Europe/Berlin").country == "FR"
    assert places.home_place(None, "UTC") is None


@pytest.mark.parametrize(
    "title",
    ["Urlaub", "Vacances en Provence", "Vacaciones", "Holiday", "Ski trip", "Flight to Lisbon", "Hike in the Alps"],
)
def test_travel_words_in_several_languages_without_a_location(title):
    assert kind(title)[0] == "trip"


@pytest.mark.parametrize(
    "title, expected",
    [
        ("Hochzeit Anna & Tom", "wedding"),
        ("Mariage de Julie", "wedding"),
        ("Tax return deadline", "official"),
        ("Web Summit", "conference"),
        ("Chemistry exam", "exam"),
        ("Moving day", "move"),
        ("Dentist", "medical"),
        ("Mum's birthday", "birthday"),
        ("Electricity bill due", "bill"),
        ("Job interview at Siemens", "interview"),
        ("Vorstellungsgespräch", "interview"),  # not an appointment's
    ],
)
def test_life_events_by_their_words(title, expected):
    assert kind(title)[0] == expected


@pytest.mark.parametrize(
    "title",
    ["Trip report review meeting", "Holiday photos slides", "Team standup", "Expense report for the Tokyo trip"],
)
def test_negative_cues_stop_a_keyword_from_misfiring(title):
    name, rule = kind(title, "Tokyo")
    assert name is None and rule.startswith("negative cue")


def test_a_place_abroad_is_travel_whatever_the_title():
    name, rule = kind("Family visit", "Lisbon, Portugal", "2027-03-10", "2027-03-14")
    assert name == "trip"  # the trip's plan, not the conference entry that is of the travel kind too
    assert rule == "the place, Lisbon, is abroad (Portugal)"
    assert kind("Meeting", "Tokyo Big Sight", "2027-03-10T10:00", "2027-03-10T11:00")[0] == "trip"


def test_a_stay_far_from_home_is_travel_a_day_there_is_not():
    assert kind("Family visit", "Hamburg", "2027-03-10", "2027-03-13") == ("trip", "3 days in Hamburg, far from home")
    assert kind("Family visit", "Hamburg", "2027-03-10", "2027-03-11")[0] is None
    name, rule = kind("Family visit", "Potsdam", "2027-03-10", "2027-03-14")
    assert name is None and "Potsdam is not away from home" in rule


def test_without_a_location_or_a_word_nothing_is_recognised():
    assert kind("Family visit", None, "2027-03-10", "2027-03-14") == (None, "no playbook word in the title")
    assert kind("Team call", "https://zoom.us/j/123")[0] is None
    assert kind("Family visit", "Lisbon", "2027-03-10", "2027-03-14", home=None)[0] is None  # no home: no "away"


def test_home_decides_what_is_abroad():
    paris = places.home_place("Paris", None)
    assert kind("Family visit", "Berlin", "2027-03-10", "2027-03-14", home=paris)[0] == "trip"
    assert kind("Family visit", "Paris", "2027-03-10", "2027-03-14", home=paris)[0] is None


def test_the_place_is_found_in_the_location_or_the_title():
    assert places.find_place("Hotel Sacher Wien").country == "AT"
    assert places.find_place("Valencia, España").country == "ES"
    assert places.find_place(None, "Conference in Lisbon").name == "Lisbon"
    assert places.find_place("Room 4.12") is None


def test_a_wedding_abroad_keeps_its_plan_and_says_where():
    name, rule = kind("Hochzeit Anna", "Wien", "2027-05-20", "2027-05-21")
    assert name == "wedding" and rule.endswith("Vienna is abroad")


def test_messages_and_their_topic_titles():
    event, trigger = recognise_message(PLAYBOOK, "I'm flying to Japan on 2027-04-10")
    assert event.name == "trip" and place_title(event, "I'm flying to Japan on 2027-04-10", trigger) == "Trip to Japan"
    event, trigger = recognise_message(PLAYBOOK, "my chemistry exam is on Friday")
    assert place_title(event, "my chemistry exam is on Friday", trigger) == "Chemistry exam"
    assert recognise_message(PLAYBOOK, "the trip report review is on Friday") is None


@pytest.mark.parametrize(
    "text, title",
    [
        ("I have my driving test on March 3", "Driving test"),  # not the playbook's label, "Exam"
        ("I have a dentist appointment on 20 Jan", "Dentist appointment"),  # the next word is a trigger too
        ("dentist checkup next Tuesday at 10", "Dentist checkup"),
        ("my mom's birthday is on May 2", "Mom's birthday"),
        ("I have an exam on Friday", "Exam"),
        ("Appointment with the vet on Monday", "Appointment"),
    ],
)
def test_a_topic_told_in_words_is_named_by_the_words_that_told_it(text, title):
    event, trigger = recognise_message(PLAYBOOK, text)
    assert place_title(event, text, trigger) == title


def test_skills_add_entries_but_never_rewrite_the_users():
    extra = (
        '[concert]\ntriggers = ["concert"]\ntasks = [{ title = "Buy earplugs", days_before = 5 }]\n'
        '[trip]\ntriggers = ["outing"]\ntasks = []\n'
    )
    playbook = load_playbook(None, extra)
    assert playbook.of_kind("concert").tasks[0].title == "Buy earplugs"
    assert "outing" not in playbook.of_kind("trip").triggers


def _each_in_turn(playbook, text):
    """match_words as it was before the one-pattern shortcut: every negative cue, then every trigger, one by one."""
    for cue in playbook.negative:
        if re.search(rf"(?<![\w-]){re.escape(cue)}(?![\w-])", text, re.I):
            return None
    for event in playbook:
        found = event.find(text)
        if found:
            return event.name, found.span()
    return None


def test_the_one_pattern_shortcut_finds_what_asking_each_trigger_finds():
    words = [t for event in PLAYBOOK for t in event.triggers] + list(PLAYBOOK.negative)
    rng = random.Random(21)
    texts = ["ping 3", "", "hello there", "pre-" + words[0], words[0] + "-ish", words[1].upper() + "!"]
    for _ in range(3000):
        picked = rng.sample(words, rng.randint(0, 3))
        glue = rng.choice([" ", "-", "", ", ", "_", "x"])
        texts.append(glue.join(picked + rng.sample(["my", "next", "week", "on", "Friday"], 2)))
    hits = 0
    for text in texts:
        found = match_words(PLAYBOOK, text)
        expected = _each_in_turn(PLAYBOOK, text)
        assert (None if found is None else (found[0].name, found[1].span())) == expected, text
        assert negative_cue(PLAYBOOK, text) == next(
            (c for c in PLAYBOOK.negative if re.search(rf"(?<![\w-]){re.escape(c)}(?![\w-])", text, re.I)), None
        )
        hits += expected is not None
    assert 300 < hits < len(texts) - 300  # the corpus holds both matches and misses


@pytest.mark.parametrize("location", ["Trattoria Roma", "Café Wien", "Pizzeria Napoli", "Café Lisboa"])
def test_an_evening_at_a_place_named_after_a_city_abroad_is_not_a_trip(location):
    name, rule = kind("Dinner with Anna", location, "2027-03-10T19:30", "2027-03-10T22:00")
    assert name is None and rule.endswith(f"only in the name “{location}”, for a few hours: not a trip")
    # the same names for days are stays there, and the city named on its own is the place
    assert kind("Weekend away", location, "2027-03-10", "2027-03-13")[0] == "trip"
    assert kind("Dinner with Anna", f"{location}, Rome, Italy", "2027-03-10T19:30", "2027-03-10T22:00")[0] == "trip"


@pytest.mark.parametrize(
    "location",
    ["Rue de Rivoli 10, 75001 Paris", "Philharmoniker Str. 4, 1010 Wien", "Via del Corso 12, 00186 Roma, Italy"],
)
def test_a_street_address_with_its_postcode_before_the_city_names_the_city(location):
    assert kind("Meeting with Pierre", location, "2027-03-10T10:00", "2027-03-10T12:00")[0] == "trip"


@pytest.mark.parametrize("location", ["4500 Vienna Way", "2100 Lisbon Avenue"])
def test_a_house_number_before_a_street_named_after_a_city_is_no_postcode(location):
    assert kind("Meeting with Pierre", location, "2027-03-10T10:00", "2027-03-10T12:00")[0] is None


def test_a_cafe_named_after_a_city_with_its_street_is_still_only_a_name():
    assert kind("Coffee with Sam", "Café Wien, Kastanienallee 5", "2027-03-10T10:00", "2027-03-10T11:00")[0] is None


@pytest.mark.parametrize(
    "title, location, start, end, expected",
    [
        # days away name their place anywhere in the title, and a negative cue does not make them stay home
        ("Sales kickoff Lisbon", None, "2027-03-08", "2027-03-11", ("trip", "the place, Lisbon, is abroad (Portugal)")),
        (
            "Q3 review Barcelona",
            None,
            "2027-03-08",
            "2027-03-11",
            ("trip", "3 days in Barcelona, away from home (abroad), though “review” is in the title"),
        ),
        ("Kundentermin München", None, "2027-03-08", "2027-03-10", ("trip", "2 days in Munich, far from home")),
        # from one day into the next is more than a day
        (
            "Project kickoff, Vienna office",
            None,
            "2027-03-08T09:00:00",
            "2027-03-09T17:00:00",
            ("trip", "the place, Vienna, is abroad (Austria)"),
        ),
        # a title's first word is capitalised anyway; a few hours in town is no stay away
        ("Reading Week", None, "2027-03-08", "2027-03-12", (None, "no playbook word in the title")),
        ("Mobile App Sprint", None, "2027-03-08", "2027-03-12", (None, "no playbook word in the title")),
        (
            "Kundentermin München",
            None,
            "2027-03-08T10:00:00",
            "2027-03-08T15:00:00",
            (None, "no playbook word in the title"),
        ),
        ("Code review sprint", None, "2027-03-08", "2027-03-12", (None, "negative cue “review” in the title")),
    ],
)
def test_an_event_of_several_days_away_from_home_is_travel_whatever_its_title(title, location, start, end, expected):
    assert kind(title, location, start, end) == expected


@pytest.mark.parametrize(
    "title, expected",
    [
        # German writes its nouns together: the compound's last part says what it is
        ("Kinderarzt mit Mia", "medical"),
        ("Zahnreinigung", "medical"),
        ("Physiotherapie", "medical"),
        ("Mathe-Klausur", "exam"),
        ("Führerscheinprüfung praktisch", "exam"),
        ("Hundesteuer fällig", "bill"),
        ("Mitgliedsbeitrag Sportverein", "bill"),
        ("Personalausweis abholen", "official"),
        ("Termin Jugendamt", "official"),
        ("Sommerurlaub", "trip"),
        ("Umzug", "move"),
        # a compound that only shares letters is none of them
        ("Preise vergleichen", None),
        ("Arztbrief lesen", None),
    ],
)
def test_a_german_compound_is_recognised_by_its_last_part(title, expected):
    assert kind(title, start="2027-03-10T10:00", end="2027-03-10T11:00")[0] == expected


def test_days_away_for_a_name_in_capitals_is_a_conference_and_a_few_hours_at_one_is_not():
    assert kind("FOSDEM", "ULB Solbosch, Brussels, Belgium", "2027-02-06", "2027-02-08")[0] == "conference"
    assert kind("MWC 2027", "Fira Gran Via, Barcelona, Spain", "2027-03-01", "2027-03-05")[0] == "conference"
    assert kind("IKEA", "IKEA Lichtenberg, Berlin", "2027-03-10T10:00", "2027-03-10T12:00")[0] is None


def test_a_meeting_at_an_hour_in_a_city_hours_away_is_a_journey_an_all_day_entry_there_is_not():
    assert kind("Pitch Helios", "Hamburg", "2027-01-21T11:00", "2027-01-21T12:00") == (
        "trip",
        "at 11:00 in Hamburg, far from home: a journey",
    )
    assert (
        kind("Beerdigung Tante Ruth", "Friedhof Ohlsdorf, Hamburg", "2027-01-14T11:00", "2027-01-14T12:00")[0] == "trip"
    )
    assert kind("Family visit", "Hamburg", "2027-03-10", "2027-03-11")[0] is None  # a day's entry, no hour
    assert kind("Pitch Helios", "Potsdam", "2027-01-21T11:00", "2027-01-21T12:00")[0] is None  # near home


@pytest.mark.parametrize(
    "title, expected",
    [
        ("Staatsexamen schriftlich", "exam"),
        ("Verteidigung", "exam"),
        ("Prüfungsfahrt", "exam"),
        ("U6 Lea", "medical"),
        ("ET 👶", "medical"),
        ("HU/AU Golf", "official"),
        ("Embassy appointment", "official"),
        ("Jule & Kemal 💍", "wedding"),
        ("Möbelwagen", "move"),
        ("Wohnungsabnahme", "move"),
    ],
)
def test_titles_a_student_a_parent_a_car_owner_and_a_mover_write(title, expected):
    assert kind(title, None, "2027-03-10T10:00", "2027-03-10T11:00")[0] == expected
