"""The offline provider: deterministic answers, as tool calls, through the same Synapse path."""

from __future__ import annotations

import json
from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest

from actors import tools
from storage.db import open_database
from storage.migrations import migrate
from storage.models import TokenUsage
from wilson.kernel import config as configmod
from wilson.kernel.clock import SimClock
from wilson.model.offline import find_dates, words
from wilson.model.synapse import Synapse
from tests.offline_rules_support import CORTEX_TOOLS, NOW, START, calendar, calls, cortex, synapse, tool  # noqa: F401 (fixtures)

BERLIN = ZoneInfo("Europe/Berlin")


TRIP_TASKS = {
    # its 90 days fall in the quiet week after the plan (made 5 Jan): due the eighth day, its heads-up the seventh
    "Check passport validity": "2027-01-13",
    "Check visa and entry requirements": "2027-01-25",
    "Book flights": "2027-02-09",
    "Book accommodation": "2027-02-24",
    "Buy travel insurance": "2027-03-11",
    "Check in": "2027-04-09",
    "Pack": "2027-04-08",
}


# -- cortex: life events ------------------------------------------------------------


def test_trip_three_months_ahead_becomes_a_prepared_plan(synapse):
    result = cortex(
        synapse,
        "event",
        "New calendar event: Trip to Japan",
        calendar("new", "Trip to Japan", "2027-04-10", end="2027-04-24", location="Tokyo"),
    )
    assert result.offline
    made = calls(result)
    name, topic = made[0]
    assert name == "create_topic" and topic["notes"].startswith("Location: Tokyo\nPlanned by the offline rules")
    assert {k: v for k, v in topic.items() if k != "notes"} == {
        "title": "Trip to Japan",
        "starts": "2027-04-10",
        "ends": "2027-04-24",
    }
    tasks = {args["title"]: args for name, args in made[1:] if name == "create_task"}
    assert len(tasks) == len(made) - 1
    assert {title: args["due"] for title, args in tasks.items()} == TRIP_TASKS
    for args in tasks.values():
        assert args["topic"] == "Trip to Japan"
        assert date(2027, 1, 5) < date.fromisoformat(args["due"]) < date(2027, 4, 10)
    assert "passport" in " ".join(tasks).lower() and "visa" in " ".join(tasks).lower()
    # no model answered: no tokens are counted, and the rule that fired comes with the answer
    assert not TokenUsage.select().exists()
    assert "“Trip” in the title" in result.rule


def test_a_run_offered_less_than_the_rules_would_do_hands_the_whole_on_when_it_can(synapse):
    noting = cortex(
        synapse,
        "event",
        "New calendar event: Trip to Japan",
        calendar("new", "Trip to Japan", "2027-04-10", end="2027-04-24"),
        offered=tools.schemas_for("noting"),
    )
    [(name, args)] = calls(noting)
    assert name == "escalate" and "create_topic" in args["why"], "no task for a topic that is never made"
    background = cortex(
        synapse,
        "event",
        "New calendar event: Trip to Japan",
        calendar("new", "Trip to Japan", "2027-04-10", end="2027-04-24"),
        offered=tools.schemas_for("background"),
    )
    assert [n for n, _ in calls(background)] == ["propose"], "offered everything: the rules plan it themselves"


def test_a_trip_too_close_for_lead_times_gets_no_past_deadlines(synapse):
    result = cortex(synapse, "event", "", calendar("new", "Flight to Lisbon", "2027-01-20T07:30:00+01:00"))
    dues = [date.fromisoformat(a["due"]) for n, a in calls(result) if n == "create_task"]
    # passport, visa, flights... caught up from the day after tomorrow (the trip is more than a week away), spread
    assert dues and min(dues) == date(2027, 1, 7) and len(set(dues)) == len(dues)
    assert date(2027, 1, 18) in dues  # packing keeps its own two days


def test_known_topic_and_tasks_are_not_proposed_twice(synapse):
    result = cortex(
        synapse,
        "event",
        "",
        calendar("new", "Trip to Japan", "2027-04-10"),
        topics=[{"id": 3, "title": "Trip to Japan", "status": "active"}],
        tasks=[
            {
                "id": 9,
                "title": "Book flights",
                "due": "2027-02-09",
                "status": "open",
                "topic_id": 3,
                "topic": "Trip to Japan",
            }
        ],
    )
    names = [(n, a.get("title")) for n, a in calls(result)]
    assert ("create_topic", "Trip to Japan") not in names and ("create_task", "Book flights") not in names
    assert ("create_task", "Pack") in names


def test_moved_event_shifts_its_open_tasks(synapse):
    tasks = [
        {
            "id": 1,
            "title": "Book flights",
            "due": "2027-02-09",
            "status": "open",
            "topic_id": 3,
            "topic": "Trip to Japan",
        },
        {"id": 2, "title": "Pack", "due": "2027-04-08T18:00:00+02:00", "status": "open", "topic_id": 3, "topic": None},
        {"id": 5, "title": "Dentist", "due": "2027-02-01", "status": "open", "topic_id": None, "topic": None},
    ]
    payload = calendar(
        "changed", "Trip to Japan", "2027-04-17", previous={"start": "2027-04-10", "title": "Trip to Japan"}
    )
    result = cortex(
        synapse, "event", "", payload, tasks=tasks, topics=[{"id": 3, "title": "Trip to Japan", "status": "active"}]
    )
    assert calls(result) == [
        ("update_task", {"task_id": 1, "due": "2027-02-16"}),
        ("update_task", {"task_id": 2, "due": "2027-04-15T18:00:00+02:00"}),
    ]


def test_cancelled_event_closes_its_topic(synapse):
    result = cortex(
        synapse,
        "event",
        "",
        calendar("cancelled", "Trip to Japan", "2027-04-10"),
        topics=[
            {"id": 3, "title": "Trip to Japan", "status": "active"},
            {"id": 4, "title": "Exam", "status": "active"},
        ],
    )
    assert calls(result) == [("close_topic", {"topic_id": 3})]


def test_event_without_a_playbook_match_stays_silent(synapse):
    result = cortex(synapse, "event", "", calendar("new", "Elternabend Klasse 3b", "2027-01-07T19:00:00+01:00"))
    # an evening at home needs no word, not even in the briefing's "new in your calendar"
    assert result.tool_calls == () and result.text == "" and result.rule.startswith("seen, nothing to plan")
    away = cortex(synapse, "event", "", calendar("new", "Workshop", "2027-01-07", end="2027-01-10"))
    # days somewhere the rules cannot place may need a plan: seen and left for the briefing's "new in your calendar"
    assert away.tool_calls == () and away.text.startswith("seen, no plan (offline rules)")


def test_a_routine_meeting_days_ahead_is_not_even_listed_as_new(synapse):
    result = cortex(synapse, "event", "", calendar("new", "Team standup", "2027-01-07T09:00:00+01:00"))
    assert result.tool_calls == () and result.text == ""


def test_the_playbook_is_editable(tmp_path):
    playbook = tmp_path / "playbook.toml"
    playbook.write_text(
        '[concert]\nlabel = "Concert"\ntriggers = ["concert"]\ntasks = [{ title = "Buy earplugs", days_before = 5 }]\n'
    )
    db = open_database(None, tmp_path)
    migrate()
    config = configmod.load(tmp_path, environ={"WILSON_LLM_PLAYBOOK": str(playbook)})
    synapse = Synapse(config, SimClock(START))
    result = cortex(synapse, "event", "", calendar("new", "Concert in the park", "2027-03-01"))
    assert calls(result)[1] == (
        "create_task",
        {"title": "Buy earplugs", "due": "2027-02-24", "topic": "Concert in the park", "notes": ""},
    )
    assert cortex(synapse, "event", "", calendar("new", "Trip to Japan", "2027-04-10")).tool_calls == ()
    synapse.close()
    db.close()


# -- cortex: tick, briefing, reminders ------------------------------------------------------


def test_deadline_windows_become_specific_reminders(synapse):
    seven = cortex(
        synapse,
        "deadline",
        "Book flights is due",
        {"task_id": 1, "title": "Book flights", "window": "7d", "due": "2027-02-01", "topic": "Trip to Japan"},
    )
    assert calls(seven) == [
        (
            "surface",
            {
                "text": "Reminder: “Book flights” (Trip to Japan) is due in 7 days (Mon 1 Feb).",
                "why": "deadline window 7d",
            },
        )
    ]
    late = cortex(
        synapse,
        "deadline",
        "",
        {"task_id": 1, "title": "Book flights", "window": "overdue", "due": "2027-02-01", "topic": None},
        now="2027-02-03T09:00+01:00",
    )
    assert calls(late)[0][1]["text"] == ("“Book flights” is overdue (was due 1 Feb). Want to move it or mark it done?")
    tomorrow = cortex(synapse, "deadline", "", {"task_id": 1, "title": "Pack", "window": "1d", "due": "2027-01-06"})
    assert "due tomorrow (Wed 6 Jan)" in calls(tomorrow)[0][1]["text"]


def test_reminder_and_topic_end(synapse):
    reminder = cortex(synapse, "reminder", "water the plants", {"text": "water the plants"})
    assert calls(reminder) == [("surface", {"text": "Reminder: water the plants", "why": "scheduled reminder"})]
    ended = cortex(synapse, "topic_end", "", {"topic_id": 3, "title": "Trip to Japan", "ends": "2027-04-24"})
    assert calls(ended) == [("close_topic", {"topic_id": 3})]
    assert cortex(synapse, "something_new", "whatever").tool_calls == ()
    kept = cortex(
        synapse,
        "buffered",
        "Final notice (from bank@example.com)\n\nYour account will be closed.",
        {"buffers": [{"channel": "email", "buffer_id": 4}], "topic": None},
    )
    assert calls(kept) == [
        (
            "surface",
            {
                "text": "Heads-up from your email: Final notice (from bank@example.com)",
                "why": "triage kept it as needing you",
            },
        )
    ]


# -- cortex: the user modifies a proposal ---------------------------------------------------


def japan_proposal() -> dict:
    items = [
        {
            "position": 1,
            "tool": "create_topic",
            "args": {"title": "Trip to Japan", "starts": "2027-04-10"},
            "description": "New topic: Trip to Japan (Sat 10 Apr)",
        }
    ]
    for position, (title, due) in enumerate(TRIP_TASKS.items(), start=2):
        items.append(
            {
                "position": position,
                "tool": "create_task",
                "args": {"title": title, "due": due, "topic": "Trip to Japan"},
                "description": f"New task: {title} — due {due}",
            }
        )
    return {"id": 12, "items": items}


def test_modify_moves_the_matching_item(synapse):
    proposal = japan_proposal()
    result = cortex(synapse, "modify", "book flights by Feb 1", origin="user", proposal=proposal)
    made = calls(result)
    assert [n for n, _ in made] == [i["tool"] for i in proposal["items"]]
    changed = {a["title"]: a["due"] for n, a in made if n == "create_task"}
    assert changed["Book flights"] == "2027-02-01"
    assert {t: d for t, d in changed.items() if t != "Book flights"} == {
        t: d for t, d in TRIP_TASKS.items() if t != "Book flights"
    }


def test_modify_can_drop_an_item_and_move_another(synapse):
    result = cortex(
        synapse, "modify", "skip the travel insurance, and pack on 7 April", origin="user", proposal=japan_proposal()
    )
    tasks = {a["title"]: a["due"] for n, a in calls(result) if n == "create_task"}
    assert "Buy travel insurance" not in tasks
    assert tasks["Pack"] == "2027-04-07" and len(tasks) == 6


def test_modify_it_cannot_understand_changes_nothing(synapse):
    result = cortex(synapse, "modify", "hmm, make it nicer", origin="user", proposal=japan_proposal())
    assert result.tool_calls == () and "couldn't tell" in result.text


# -- cortex: the user talks ---------------------------------------------------------------


def test_first_contact_explains_offline_mode_and_how_to_connect(synapse):
    result = cortex(synapse, "message", "hello?", origin="user", first_contact=True)
    assert result.tool_calls == ()
    assert "Wilson" in result.text and "without a language model" in result.text
    assert "WILSON_LLM_BASE_URL" in result.text and "WILSON_LLM_MODEL" in result.text and "--llm" in result.text
    later = cortex(synapse, "message", "how are you", origin="user")
    assert "offline" in later.text and "WILSON_LLM_BASE_URL" not in later.text


OPEN = [
    {"id": 1, "title": "Book flights", "due": "2027-02-09", "status": "open", "topic_id": 3, "topic": "Trip to Japan"},
    {
        "id": 2,
        "title": "Book accommodation",
        "due": "2027-02-24",
        "status": "open",
        "topic_id": 3,
        "topic": "Trip to Japan",
    },
    {"id": 3, "title": "Renew gym membership", "due": None, "status": "open", "topic_id": None, "topic": None},
]


@pytest.mark.parametrize("text", ["done with the flights", "I finished booking flights", "Book flights is done"])
def test_done_completes_the_best_matching_task(synapse, text):
    result = cortex(synapse, "message", text, origin="user", tasks=OPEN)
    assert calls(result) == [("complete_task", {"task_id": 1})]


def test_done_without_a_match_lists_open_tasks(synapse):
    result = cortex(synapse, "message", "done with the taxes", origin="user", tasks=OPEN)
    assert result.tool_calls == ()
    assert "Book flights — due Tue 9 Feb" in result.text and "Renew gym membership" in result.text


def test_whats_due_reads_the_whole_list_and_lists_it_in_order(synapse):
    # the context holds only the tasks due soon: an undated task or one due in two months was left out
    asked = cortex(synapse, "message", "what's due?", origin="user", tasks=OPEN[:1])
    assert calls(asked) == [("list_tasks", {"status": "open"})] and not asked.text
    read = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "list_tasks", "arguments": '{"status": "open"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps(list(reversed(OPEN)))},
    ]
    text = cortex(synapse, "message", "what's due?", origin="user", tasks=OPEN[:1], extra=read).text
    assert text.index("Book flights") < text.index("Book accommodation") < text.index("Renew gym")
    assert (
        "1 open task has no date"
        in cortex(synapse, "message", "what's on my plate this week?", origin="user", tasks=OPEN[:1], extra=read).text
    )


def test_whats_overdue_reads_the_whole_list(synapse):
    # past the context's cap of tasks due soon, an overdue task may not be in it
    late = [{"id": 9, "title": "Call the bank", "due": "2027-01-04", "status": "open", "topic_id": None, "topic": None}]
    asked = cortex(synapse, "message", "anything overdue?", origin="user", tasks=OPEN)
    assert calls(asked) == [("list_tasks", {"status": "open"})]
    read = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "list_tasks", "arguments": '{"status": "open"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps(OPEN + late)},
    ]
    answered = cortex(synapse, "message", "anything overdue?", origin="user", tasks=OPEN, extra=read)
    assert answered.text == "Overdue:\n• Call the bank — was due Mon 4 Jan"


def test_a_trip_in_a_message_gets_the_same_plan(synapse):
    result = cortex(synapse, "message", "I'm flying to Japan on 2027-04-10", origin="user")
    made = calls(result)
    assert made[0][0] == "create_topic" and made[0][1]["title"] == "Trip to Japan"
    assert {a["title"]: a["due"] for n, a in made if n == "create_task"} == TRIP_TASKS


def test_after_tool_results_the_loop_ends_with_text(synapse):
    round_one = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "create_task", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": '{"status": "proposed"}'},
    ]
    user = cortex(synapse, "message", "I'm flying to Japan on 2027-04-10", origin="user", extra=round_one)
    assert user.tool_calls == () and "approval" in user.text
    first = cortex(
        synapse, "message", "I'm flying to Japan on 2027-04-10", origin="user", first_contact=True, extra=round_one
    )
    assert "without a language model" in first.text and "approval" in first.text
    background = cortex(synapse, "event", "", calendar("new", "Trip to Japan", "2027-04-10"), extra=round_one)
    assert background.tool_calls == () and background.text == ""


# -- thalamus, RAS, hippocampus ----------------------------------------------------------------


def batch(tool_name, body, role):
    return [{"role": "system", "content": f"Use {tool_name}."}, {"role": "user", "content": json.dumps(body)}]


def test_triage_sorts_newsletters_events_and_urgent_mail(synapse):
    items = [
        {
            "buffer_id": 1,
            "channel": "email",
            "text": "Weekly digest: 30% off everything. Unsubscribe here.",
            "payload": {"subject": "Your weekly digest", "from": "shop@example.com"},
        },
        {
            "buffer_id": 2,
            "channel": "calendar",
            "text": "Dentist",
            "payload": {"change": "new", "title": "Dentist", "start": "2027-01-06T10:00:00+01:00"},
        },
        {
            "buffer_id": 3,
            "channel": "calendar",
            "text": "Trip",
            "payload": {"change": "new", "title": "Trip to Japan", "start": "2027-04-10"},
        },
        {
            "buffer_id": 4,
            "channel": "email",
            "text": "Final notice: your account will be closed.",
            "payload": {"subject": "Final notice"},
        },
        {
            "buffer_id": 5,
            "channel": "email",
            "text": "Invoice 2231 for December is attached.",
            "payload": {"subject": "Invoice 2231"},
        },
        {"buffer_id": 6, "channel": "email", "text": "Nice photos from the weekend!", "payload": {}},
        {"buffer_id": 7, "channel": "web", "text": "The visa office closes for holidays on Jan 9.", "payload": {}},
    ]
    body = {"now": NOW, "timezone": "Europe/Berlin", "items": items}
    result = synapse.chat("fast", batch("triage", body, "fast"), [tool("triage")], context={"kind": "triage", **body})
    ((name, args),) = calls(result)
    assert name == "triage"
    by_id = {entry["buffer_ids"][0]: entry for entry in args["items"]}
    assert sorted(by_id) == [1, 2, 3, 4, 5, 6, 7]
    assert (by_id[1]["action"], by_id[1]["reason"]) == ("drop", "newsletter or promotion")
    assert (by_id[2]["action"], by_id[2]["priority"], by_id[2]["topic"]) == ("inbox", 1, "Dentist")
    assert (by_id[3]["action"], by_id[3]["priority"]) == ("inbox", 2)
    assert (by_id[4]["action"], by_id[4]["priority"]) == ("inbox", 1)
    assert (by_id[5]["action"], by_id[5]["priority"]) == ("inbox", 2)
    assert (by_id[6]["action"], by_id[6]["reason"]) == ("drop", "nothing that needs you")
    assert by_id[7]["action"] == "inbox"
    assert by_id[1]["summary"] == "Your weekly digest (from shop@example.com)"


def test_a_mail_sent_before_today_says_which_day_so_its_tomorrow_reads_right():
    from wilson.model.offline.triage import triage_item

    def summary(date):
        item = {
            "buffer_id": 1,
            "channel": "email",
            "text": "Hi, the water will be off tomorrow from 9 to 12.",
            "payload": {"subject": "Water off tomorrow 9-12", "from": "landlord@example.com", "date": date},
        }
        return triage_item(item, datetime.fromisoformat(NOW), BERLIN)["summary"]

    # water off today or tomorrow bites soon: the summary says what, after the subject
    said = "Water off tomorrow 9-12: The water will be off tomorrow from 9 to 12."
    assert summary("2027-01-04T22:30:00+00:00") == f"{said} (from landlord@example.com, sent Mon 4 Jan)"
    assert summary("2027-01-05T07:15:00+01:00") == f"{said} (from landlord@example.com)"  # today
    assert summary(None) == f"{said} (from landlord@example.com)"
    item = {
        "buffer_id": 2,
        "channel": "email",
        "text": "Off tomorrow.",
        "payload": {"subject": "Water off tomorrow 9-12", "date": "2027-01-04T09:00:00+01:00"},
    }  # no sender
    assert triage_item(item, datetime.fromisoformat(NOW), BERLIN)["summary"] == (
        "Water off tomorrow 9-12 (sent Mon 4 Jan)"
    )


def test_arousal_flags_urgent_items_only(synapse):
    body = {
        "now": NOW,
        "items": [
            {"buffer_id": 10, "channel": "email", "snippet": "URGENT: please sign the contract asap"},
            {"buffer_id": 11, "channel": "email", "snippet": "Lunch sometime next month?"},
            {"buffer_id": 12, "channel": "web", "snippet": "Your parcel arrives 2027-01-06T14:00"},
            {"buffer_id": 13, "channel": "email", "snippet": "Your son has a high fever, please pick him up"},
        ],
    }
    result = synapse.chat(
        "reflex", batch("arousal", body, "reflex"), [tool("arousal")], context={"kind": "arousal", **body}
    )
    ((name, args),) = calls(result)
    assert name == "arousal" and args["urgent"] is True
    assert args["buffer_ids"] == [10, 13]  # a parcel tomorrow is news, not an alarm
    calm_body = {"now": NOW, "items": [body["items"][1]]}
    calm = synapse.chat(
        "reflex", batch("arousal", calm_body, "reflex"), [tool("arousal")], context={"kind": "arousal", **calm_body}
    )
    assert calls(calm)[0][1] == {"urgent": False, "reason": "nothing urgent", "buffer_ids": []}


def test_record_memories_keeps_candidates(synapse):
    candidates = [{"kind": "interpretation", "text": "Books flights early", "provenance": ["e1", "e4"]}]
    result = synapse.chat(
        "deep", batch("record_memories", {"candidates": candidates, "episodes": []}, "deep"), [tool("record_memories")]
    )
    assert calls(result) == [("record_memories", {"items": candidates})]


def test_plain_chat_without_tools_says_it_is_offline(synapse):
    result = synapse.chat("fast", [{"role": "user", "content": "hi"}], origin="user")
    assert "without a language model" in result.text
    assert (
        synapse.chat("fast", [{"role": "user", "content": "hi"}], response_format={"type": "json_object"}).text == "{}"
    )
    assert synapse.usage_today()["fast"]["calls"] == 0  # the rules spend no model tokens


# -- reading dates and words ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("book flights by Feb 1", date(2027, 2, 1)),
        ("on 1 February", date(2027, 2, 1)),
        ("1st of February 2028", date(2028, 2, 1)),
        ("due 2027-02-01", date(2027, 2, 1)),
        ("on March 3rd", date(2027, 3, 3)),
        ("am 03.03.2027", date(2027, 3, 3)),
        ("Jan 3", date(2028, 1, 3)),  # already past this year: the next one
        ("tomorrow", date(2027, 1, 6)),
    ],
)
def test_find_dates(text, expected):
    assert find_dates(text, date(2027, 1, 5), BERLIN) == [expected]


def test_find_dates_ignores_non_dates():
    assert find_dates("March 2027 was busy; 31 Feb never happens; version 1.2", date(2027, 1, 5), BERLIN) == []


def test_words_ignore_stop_words_dates_and_plurals():
    assert words("Book the flights by Feb 1!") == {"book", "flight"}


# -- through the real cortex: others' text in its untrusted block ----------------------------


def test_offline_mail_heads_up_says_its_subject_once(make_app):
    from datetime import timedelta

    app = make_app(llm="offline")
    app.inject_buffered(
        "email",
        "Final notice: pay today at http://pay.evil.example or lose your account",
        {"subject": "Final notice", "from": "billing@evil.example"},
    )
    app.advance(timedelta(days=1))
    said = [d["text"] for d in app.user_deliveries()]
    # the subject is said once, in the source's name; words that carry a link are not passed on
    assert said == ["From the email “Final notice” from billing@evil[.]example: Heads-up: this may need you."]


def test_an_urgent_mail_is_passed_on_with_its_subject_said_once(make_app):
    from datetime import timedelta

    app = make_app(llm="offline")
    app.inject_buffered(
        "email",
        "The production server is down, please call me now.",
        {"subject": "URGENT: server down", "from": "boss@work.example"},
    )
    app.advance(timedelta(hours=1))  # the RAS wakes triage early
    said = [d["text"] for d in app.user_deliveries()]
    # it was "…: Heads-up: URGENT: server down: The production server is down, please call me now."
    assert said == [
        "From the email “URGENT: server down” from boss@work[.]example: Heads-up: "
        "“The production server is down, please call me now.”"
    ]
    # a long sentence: triage's summary is cut inside its "(from …)", which is not quoted as the sender's
    long = (
        "The production server is down and every customer in all of Europe sees an error page since noon, call me now."
    )
    app.inject_buffered("email", long, {"subject": "URGENT: outage", "from": "boss-with-a-long-name@work.example"})
    app.advance(timedelta(hours=1))
    heads_up = app.user_deliveries()[-1]["text"]
    assert heads_up.endswith(f"Heads-up: “{long}”"), heads_up


def test_offline_mail_heads_up_says_which_day_a_mail_was_sent_when_not_today(make_app):
    from datetime import timedelta

    app = make_app(llm="offline")
    sent = app.clock.now().isoformat()
    app.inject_buffered(
        "email",
        "The meter reader comes tomorrow between 9 and 12.",
        {"subject": "Meter reading tomorrow", "from": "landlord@example.com", "date": sent},
    )
    app.advance(timedelta(days=1))  # told at the next morning's sync: "tomorrow" is today by then
    said = [d["text"] for d in app.user_deliveries()]
    day = app.clock.now() - timedelta(days=1)
    # told inside that morning's briefing: one message
    assert len(said) == 1 and said[0].startswith("Good morning!")
    assert said[0].endswith(
        f"From the email “Meter reading tomorrow” from landlord@example[.]com: Heads-up "
        f"(sent {day:%a} {day.day} {day:%b}): “The meter reader comes tomorrow between 9 and 12.”"
    )


def test_offline_mail_heads_up_quotes_the_opening_cut_at_a_word_and_nothing_when_there_is_none(make_app):
    from datetime import timedelta

    from wilson.model.offline.opening import opening

    app = make_app(llm="offline")
    long_body = "Could you send me the signed form for the school trip " + "and the one for the swimming course " * 6
    app.inject_buffered(
        "email", long_body + "? Thanks!", {"subject": "Action needed: school trip form", "from": "school@example.org"}
    )
    app.advance(timedelta(days=1))
    [said] = [d["text"] for d in app.user_deliveries()]
    quoted = said.split("Heads-up: ", 1)[1]
    assert quoted.startswith("“Could you send me the signed form") and quoted.endswith(" swimming…”")
    assert len(quoted) <= 163
    # an item that says nothing but its subject has no opening to quote
    subject = "action needed: call me back"
    assert (
        opening(
            "Action needed: call me back\n\nEmail from sam@example.org: Action needed: call me back\n"
            "Action needed: call me back",
            {subject},
        )
        == ""
    )


# -- cortex: answers to a pending proposal, and tasks managed in words ----------------------------------

USER_TOOLS = CORTEX_TOOLS + [tool(n) for n in ("decide", "cancel_task", "snooze_task", "remind", "rename_topic")]
PENDING = [
    {
        "id": 7,
        "items": [
            {"position": 1, "description": "New task: Book flights — due Tue 9 Feb 2027"},
            {"position": 2, "description": "New task: Buy travel insurance — due Thu 11 Mar 2027"},
            {"position": 3, "description": "New task: Pack — due Thu 8 Apr 2027"},
        ],
    },
    {"id": 4, "items": [{"position": 1, "description": "New task: Prepare documents and questions"}]},
]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("yes", [("decide", {"proposal": 7, "action": "approve"})]),
        ("Go ahead, thanks!", [("decide", {"proposal": 7, "action": "approve"})]),
        ("no thanks", [("decide", {"proposal": 7, "action": "reject"})]),
        ("approve 4", [("decide", {"proposal": 4, "action": "approve"})]),
        (
            "skip the insurance one",
            [
                ("decide", {"proposal": 7, "action": "reject", "items": [2]}),
                ("decide", {"proposal": 7, "action": "approve", "items": [1, 3]}),
            ],
        ),
        (
            "approve all but insurance and packing",
            [
                ("decide", {"proposal": 7, "action": "reject", "items": [2, 3]}),
                ("decide", {"proposal": 7, "action": "approve", "items": [1]}),
            ],
        ),
        ("skip the documents one", [("decide", {"proposal": 4, "action": "reject", "items": [1]})]),
        ("reject the flights", [("decide", {"proposal": 7, "action": "reject", "items": [1]})]),
        (
            "move the flights one to 1 March",
            [("decide", {"proposal": 7, "action": "modify", "changes": "move the flights one to 1 March"})],
        ),
    ],
)
def test_answers_to_a_pending_proposal(synapse, text, expected):
    result = cortex(synapse, "message", text, origin="user", pending=PENDING, offered=USER_TOOLS)
    assert calls(result) == expected


def test_a_yes_decides_nothing_when_decide_is_not_offered_or_nothing_is_pending(synapse):
    assert calls(cortex(synapse, "message", "yes", origin="user", pending=PENDING)) == []
    assert calls(cortex(synapse, "message", "yes", origin="user", pending=[], offered=USER_TOOLS)) == []


TASKS = [
    {"id": 3, "title": "Book hotel", "due": "2027-02-01", "topic": None},
    {"id": 4, "title": "Book flights to Japan", "due": "2027-02-03", "topic": "Japan"},
    {"id": 5, "title": "File taxes", "due": "2027-01-25", "topic": None},
]


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "remind me at 7pm to take the bins out",
            ("remind", {"text": "take the bins out", "at": "2027-01-05T19:00:00+01:00"}),
        ),
        (
            "remind me tomorrow to call the bank",
            ("remind", {"text": "call the bank", "at": "2027-01-06T09:00:00+01:00"}),
        ),
        (
            "remind me to water the plants on 12 Jan at 18:30",
            ("remind", {"text": "water the plants", "at": "2027-01-12T18:30:00+01:00"}),
        ),
        ("snooze taxes until 20 Jan", ("snooze_task", {"task_id": 5, "until": "2027-01-20T09:00:00+01:00"})),
        ("I don't need to book a hotel anymore", ("cancel_task", {"task_id": 3})),
        ("drop the taxes task", ("cancel_task", {"task_id": 5})),
        (
            "rename japan to Trip to Japan and Korea",
            ("rename_topic", {"topic_id": 2, "title": "Trip to Japan and Korea"}),
        ),
        (
            "rename the taxes task to file taxes with Anna",
            ("update_task", {"task_id": 5, "title": "File taxes with Anna"}),
        ),
        ("rename the hotel to “Book hotel in Kyoto”", ("update_task", {"task_id": 3, "title": "Book hotel in Kyoto"})),
        # a topic and a task that share the word: the topic, unless the words say "task"
        ("rename japan to Japan and Korea", ("rename_topic", {"topic_id": 2, "title": "Japan and Korea"})),
        (
            "rename the japan task to Book flights to Tokyo",
            ("update_task", {"task_id": 4, "title": "Book flights to Tokyo"}),
        ),
    ],
)
def test_tasks_managed_in_words(synapse, text, expected):
    result = cortex(
        synapse,
        "message",
        text,
        origin="user",
        tasks=TASKS,
        offered=USER_TOOLS,
        topics=[{"id": 2, "title": "Japan", "status": "active"}],
    )
    assert calls(result) == [expected]


def test_a_list_read_to_the_tools_limit_says_there_may_be_more(synapse):
    many = [
        {"id": n, "title": f"Errand {n}", "due": None, "status": "open", "topic_id": None, "topic": None}
        for n in range(100)
    ]  # list_tasks answers at most 100
    read = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "list_tasks", "arguments": '{"status": "open"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps(many)},
    ]
    text = cortex(synapse, "message", "show my tasks", origin="user", extra=read).text
    assert text.endswith("(I read your first 100 open tasks; there may be more.)")
    assert (
        "there may be more"
        not in cortex(
            synapse,
            "message",
            "show my tasks",
            origin="user",
            extra=read[:1] + [dict(read[1], content=json.dumps(many[:99]))],
        ).text
    )
