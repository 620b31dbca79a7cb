"""`calendar_lookup` and the calendar questions it answers: a day asked for by its date is the whole day,
and an event still going on (a trip on its third day) is on it, whether a model asks or the offline rules do."""

from __future__ import annotations

import json
from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest

from actors.cortex.context import CALENDAR_EVENTS
from storage.models import Inbox
from tests.brain import call, context_of
from tests.calendar_support import add_event
from tests.cortex_support import say, tool_results

BERLIN = ZoneInfo("Europe/Berlin")
START = "2027-01-05T08:00:00+01:00"  # a Tuesday morning


def a_week_of_events(path) -> None:
    add_event(path, "Trip to Japan", date(2027, 1, 3), date(2027, 1, 9), location="Tokyo")  # on its third day
    add_event(path, "Dentist", datetime(2027, 1, 5, 15, 0), tz=BERLIN)  # this afternoon
    add_event(path, "First aid course", date(2027, 1, 4))  # all of yesterday: its end is today's midnight
    add_event(path, "Call with Anna", datetime(2027, 1, 6, 9, 0), tz=BERLIN)  # tomorrow


def test_a_day_asked_for_by_its_date_holds_its_afternoon_and_the_trip_going_on(scripted):
    def ask_for_today(ctx, body):
        if ctx["stimulus"]["origin"] != "user":
            return {"text": ""}  # the new events' own runs stay quiet
        return {"tool_calls": [call("calendar_lookup", start="2027-01-05", end="2027-01-05")]}

    app, server = scripted(ask_for_today, start=START)
    a_week_of_events(app.calendar_file())
    app.sync()
    assert app.wait_idle()
    say(app, "what's on my calendar today?")
    [result] = [r for r in tool_results(server) if "events" in r]
    assert [e["title"] for e in result["events"]] == ["Trip to Japan", "Dentist"]


def answer_from_the_context(ctx, body):
    """A model that answers a question about days from the CONTEXT's calendar when it is there, and reads the
    calendar with the tool only when it is not."""
    if ctx["stimulus"]["origin"] != "user":
        return {"text": ""}
    if "calendar" in ctx:
        return {"text": "Events: " + ", ".join(e["title"] for e in ctx["calendar"]["events"]) + "."}
    return {"tool_calls": [call("calendar_lookup", start="2027-01-05", end="2027-01-05")]}


def user_runs(server) -> list[list[dict]]:
    """The cortex requests of each user message, one list per message (a tool round adds one)."""
    runs: list[list[dict]] = []
    for request in server.requests:
        context = context_of(request["body"])
        if context.get("stimulus", {}).get("origin") != "user":
            continue
        if request["body"]["messages"][-1]["role"] != "tool":
            runs.append([])
        runs[-1].append(context)
    return runs


def test_a_question_about_a_day_sees_its_events_in_the_context_and_is_answered_in_one_model_call(scripted):
    app, server = scripted(answer_from_the_context, start=START)
    a_week_of_events(app.calendar_file())
    app.sync()
    assert app.wait_idle()
    say(app, "what's on my calendar today?")
    assert app.user_deliveries()[-1]["text"] == "Events: Trip to Japan, Dentist."
    say(app, "any meetings tomorrow?")
    assert app.user_deliveries()[-1]["text"] == "Events: Trip to Japan, Call with Anna."  # the trip goes on
    say(app, "when is the dentist?")
    assert app.user_deliveries()[-1]["text"] == "Events: Dentist."
    today, tomorrow, dentist = user_runs(server)
    assert [len(run) for run in (today, tomorrow, dentist)] == [1, 1, 1], "no calendar_lookup round"
    view = today[0]["calendar"]
    assert view["untrusted"].startswith("UNTRUSTED DATA from your calendar")  # others write event titles
    assert view["span"] == "today: 2027-01-05 to 2027-01-05" and "complete" in view
    assert view["events"] == [
        {"title": "Trip to Japan", "days": "2027-01-03 to 2027-01-09", "location": "Tokyo"},
        {"title": "Dentist", "start": "2027-01-05T15:00+01:00"},
    ]
    assert dentist[0]["calendar"]["span"].startswith("the year ahead: 2027-01-05")


def test_a_message_that_asks_nothing_about_days_carries_no_calendar_and_neither_does_a_calendar_turned_off(scripted):
    app, server = scripted(answer_from_the_context, start=START)
    a_week_of_events(app.calendar_file())
    app.sync()
    assert app.wait_idle()
    for text in ("hi there", "I'm tired today", "what did I miss?", "put the dentist in my calendar"):
        say(app, text)
    assert all("calendar" not in run[0] for run in user_runs(server))
    off, off_server = scripted(answer_from_the_context, start=START, WILSON_SKILLS_DISABLED="calendar")
    say(off, "what's on my calendar today?")
    asked = [run[0] for run in user_runs(off_server) if run[0]["stimulus"]["text"] == "what's on my calendar today?"]
    assert asked and all("calendar" not in context for context in asked), "no calendar skill, no calendar to show"


def test_a_link_in_an_event_title_shown_in_the_context_is_defanged_in_the_reply(scripted):
    app, server = scripted(answer_from_the_context, start=START)
    add_event(
        app.calendar_file(), "Reset password at http://evil.example/login", datetime(2027, 1, 5, 17, 0), tz=BERLIN
    )
    app.sync()
    assert app.wait_idle()
    say(app, "what's on my calendar today?")
    reply = app.user_deliveries()[-1]["text"]
    assert "evil[.]example" in reply and "http://evil.example" not in reply, reply


def test_when_a_question_names_an_event_it_sees_the_year_ahead_and_an_odd_day_costs_no_answer(scripted):
    app, server = scripted(answer_from_the_context, start=START)
    add_event(app.calendar_file(), "Dentist", datetime(2027, 2, 20, 9, 0), tz=BERLIN)  # six weeks out
    app.sync()
    assert app.wait_idle()
    say(app, "when's my dentist appointment?")
    assert app.user_deliveries()[-1]["text"] == "Events: Dentist."
    row = say(app, "what's on the 0th?")  # no such day: the view is what a date parser can make of it, or none
    assert row.status == "done" and app.user_deliveries()[-1]["text"].startswith("Events:")
    for text in ("are you busy?", "is the gym free on Sundays?", "what was on my calendar yesterday?"):
        say(app, text)
    asked = [run[0] for run in user_runs(server)][-3:]
    assert [context["stimulus"]["text"] for context in asked if "calendar" in context] == [], (
        "another's time, a thing's opening hours and days gone by are no look at the coming days"
    )


def test_a_day_with_more_events_than_the_context_holds_says_how_many_more(scripted):
    app, server = scripted(answer_from_the_context, start=START)
    for n in range(60):
        add_event(app.calendar_file(), f"Slot {n}", datetime(2027, 1, 7, n // 4, n % 4 * 15), tz=BERLIN)
    app.sync()
    assert app.wait_idle()
    say(app, "how busy is Thursday?")
    [[context]] = user_runs(server)
    view = context["calendar"]
    assert len(view["events"]) == CALENDAR_EVENTS and view["events"][0]["title"] == "Slot 0"
    assert view["more"].startswith("40 more events") and "complete" not in view
    # the prompt's budget for a busy day: the cap holds it however full the calendar is (bytes/4, as benchmarks count)
    assert len(json.dumps(view, ensure_ascii=False).encode()) // 4 <= 400


def test_offline_a_calendar_question_is_answered_from_the_calendar(make_app):
    app = make_app(start=START)
    a_week_of_events(app.calendar_file())
    app.sync()
    assert app.wait_idle()
    say(app, "hi")  # the first contact's introduction is over
    said = len(app.user_deliveries())
    row = say(app, "what's on my calendar today?")
    [answer] = [d["text"] for d in app.user_deliveries()[said:]]
    assert answer.startswith("In your calendar today:\n")
    assert "• Trip to Japan — since Sun 3 Jan, Tokyo" in answer and "• Dentist — Tue 5 Jan 15:00" in answer
    assert "First aid course" not in answer and "Call with Anna" not in answer
    assert row.status == "done"
    tomorrow = say(app, "any meetings tomorrow?")
    assert tomorrow.status == "done"
    assert "• Call with Anna — Wed 6 Jan 09:00" in app.user_deliveries()[-1]["text"]


def test_offline_a_calendar_question_with_nothing_in_it_says_so(make_app):
    app = make_app(start=START)
    say(app, "hi")
    say(app, "what's on my calendar today?")
    assert app.user_deliveries()[-1]["text"].startswith("No events in your calendar today.")
    assert Inbox.select().where(Inbox.status != "done").count() == 0


WEEKLY = """BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//test//weekly//EN
BEGIN:VEVENT
UID:standup@example
DTSTAMP:20270101T000000Z
DTSTART;TZID=Europe/Berlin:20270105T093000
DTEND;TZID=Europe/Berlin:20270105T094500
RRULE:FREQ=WEEKLY;BYDAY=TU
SUMMARY:Team standup
END:VEVENT
END:VCALENDAR
"""


def test_offline_a_repeating_meeting_is_in_the_calendar_on_each_of_its_days(make_app):
    app = make_app(start=START)
    app.calendar_file().write_text(WEEKLY)
    app.sync()
    assert app.wait_idle()
    say(app, "hi")
    say(app, "any meetings next week?")
    answer = app.user_deliveries()[-1]["text"]
    assert answer.startswith("In your calendar next week:\n• Team standup — Tue 12 Jan 09:30"), answer
    assert answer.count("Team standup") == 1  # the week holds one of its occurrences


@pytest.mark.parametrize("result", ['{"error": "calendar unavailable"}', "not json", '{"events": "x"}'])
def test_offline_a_calendar_it_could_not_read_is_said_so_not_called_empty(result):
    from wilson.model.offline.provider import OfflineProvider

    lookup = {
        "id": "c1",
        "type": "function",
        "function": {"name": "calendar_lookup", "arguments": '{"start": "2027-01-05", "end": "2027-01-05"}'},
    }
    messages = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "what's on my calendar today?"},
        {"role": "assistant", "content": None, "tool_calls": [lookup]},
        {"role": "tool", "tool_call_id": "c1", "content": result},
    ]
    context = {
        "kind": "cortex",
        "now": START,
        "timezone": "Europe/Berlin",
        "stimulus": {"origin": "user", "kind": "message", "text": "what's on my calendar today?"},
    }
    body = OfflineProvider().complete({"messages": messages, "tools": []}, "fast", context)
    assert body["choices"][0]["message"]["content"] == "I couldn't read your calendar just now. Nothing was changed."


def test_the_next_midnight_is_a_local_one_on_the_days_clocks_change():
    from datetime import timedelta, timezone

    from actors.tools.common import next_midnight

    spring = datetime(2027, 3, 28, tzinfo=BERLIN).astimezone(timezone.utc)  # clocks go forward at 02:00
    autumn = datetime(2027, 10, 31, tzinfo=BERLIN).astimezone(timezone.utc)  # and back at 03:00
    assert next_midnight(spring, BERLIN) - spring == timedelta(hours=23)
    assert next_midnight(autumn, BERLIN) - autumn == timedelta(hours=25)
    assert next_midnight(spring, BERLIN).astimezone(BERLIN) == datetime(2027, 3, 29, tzinfo=BERLIN)


def test_offline_today_holds_the_meetings_that_are_over_as_well(make_app):
    from datetime import timedelta

    app = make_app(start=START)
    add_event(app.calendar_file(), "Morning call", datetime(2027, 1, 5, 9, 0), tz=BERLIN)
    add_event(app.calendar_file(), "Dentist", datetime(2027, 1, 5, 15, 0), tz=BERLIN)
    app.sync()
    app.advance(timedelta(hours=4))  # noon: the call is over
    add_event(app.calendar_file(), "Evening run", datetime(2027, 1, 5, 19, 0), tz=BERLIN)
    app.sync()  # the calendar is read again: what it holds from now on no longer has the call
    assert app.wait_idle()
    say(app, "hi")
    say(app, "what's on my calendar today?")
    answer = app.user_deliveries()[-1]["text"]
    assert "• Morning call — Tue 5 Jan 09:00\n• Dentist — Tue 5 Jan 15:00\n• Evening run — Tue 5 Jan 19:00" in answer


def test_a_topic_ending_on_the_day_clocks_go_forward_ends_at_the_next_local_midnight(db):
    from actors.tools.tasks import CreateTopic, UpdateTopic
    from storage.models import Topic
    from wilson.skills import Call

    call = Call(now=datetime(2027, 3, 1, 9, 0, tzinfo=BERLIN), tz=BERLIN)
    made = CreateTopic().execute({"title": "Ski week", "starts": "2027-03-22", "ends": "2027-03-28"}, call)
    assert Topic.get_by_id(made["topic_id"]).ends.astimezone(BERLIN) == datetime(2027, 3, 29, tzinfo=BERLIN)
    UpdateTopic().execute({"topic_id": made["topic_id"], "ends": "2027-10-31"}, call)  # and back in autumn
    assert Topic.get_by_id(made["topic_id"]).ends.astimezone(BERLIN) == datetime(2027, 11, 1, tzinfo=BERLIN)
