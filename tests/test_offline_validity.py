"""“My passport is valid until 2030”, said with no model: the offline rules mark the passport check done when it
is valid six months beyond the trip, and say so plainly, leaving the check open, when it is not."""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest

from wilson.model.offline import intents, phrases
from wilson.model.offline.recognition import load_playbook
from wilson.model.offline.validity import read_expiry

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2027, 1, 6, 8, 0, tzinfo=BERLIN)
CHECK = {"id": 7, "title": "Check passport validity", "due": "2027-01-10", "status": "open", "topic": "Trip to Japan"}
FLIGHTS = {"id": 8, "title": "Book flights", "due": "2027-02-09", "status": "open", "topic": "Trip to Japan"}
TRIP = {"id": 1, "title": "Trip to Japan", "status": "active", "starts": "2027-04-10", "ends": "2027-04-24"}
DONE = [("complete_task", {"task_id": 7})]


def answer(text, tasks=(CHECK, FLIGHTS), topics=(TRIP,)):
    return intents.answer(
        phrases.Chat(
            text=text,
            now=NOW,
            tz=BERLIN,
            playbook=load_playbook(),
            tasks=list(tasks),
            topics=list(topics),
            offered=("complete_task", "create_task"),
        )
    )


@pytest.mark.parametrize(
    "text",
    [
        "my passport is valid until 2030",
        "My passport expires in 2031.",
        "passport valid until 3 March 2029",
        "the passport is good till 2028-12-01",
        "my passport is valid until November 2027",
    ],
)
def test_valid_six_months_beyond_the_trip_proposes_the_check_done(text):
    assert answer(text).calls == DONE


def test_valid_for_less_than_six_months_after_the_trip_is_said_and_nothing_is_proposed():
    reply = answer("my passport is valid until August 2027")
    assert reply.calls == []
    assert reply.text == (
        "Your passport is valid until August 2027, less than six months after Trip to Japan ends "
        "(Sat 24 Apr). Many countries ask for six months beyond your return, so it may need "
        "renewing; “Check passport validity” stays open."
    )


def test_a_passport_that_ran_out_needs_renewing():
    reply = answer("passport valid until 3 March 2026")
    assert reply.calls == [] and reply.text.startswith("Your passport ran out on Tue 3 Mar 2026")


def test_without_a_trip_any_future_date_will_do_and_without_a_check_it_is_not_taken_for_one():
    alone = dict(CHECK, topic=None)
    assert answer("my passport is valid until May 2027", tasks=[alone], topics=[]).calls == DONE
    assert answer("my passport is valid until 2030", tasks=[FLIGHTS]).calls != DONE
    assert answer("my visa is valid until 2030").calls != DONE  # the check is the passport's


def test_an_unreadable_date_leaves_the_check_open_and_says_how_to_say_it():
    reply = answer("my passport is valid until the cows come home")
    assert reply.calls == [] and "Try “valid until 3 March 2030”" in reply.text


@pytest.mark.parametrize(
    "words, read",
    [
        ("3 March 2030", (date(2030, 3, 3), True)),
        ("March 3rd, 2030", (date(2030, 3, 3), True)),
        ("2030-03-03", (date(2030, 3, 3), True)),
        ("March 2030", (date(2030, 3, 1), False)),
        ("03/2030", (date(2030, 3, 1), False)),
        ("2030", (date(2030, 1, 1), False)),
        ("31 April 2030", None),
        ("13/2030", None),
        ("soon", None),
    ],
)
def test_expiry_dates_as_people_write_them_a_month_or_a_year_read_as_its_first_day(words, read):
    assert read_expiry(words) == read
