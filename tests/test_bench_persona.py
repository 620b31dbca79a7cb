"""The cost benchmark's persona and baselines (bench/persona.py, bench/proactivity.py): mail read as the email
channel reads it, a classifier that errs at the stated rates, chats that take a tool round, the per-event agent's
turns, and the 60-open-task growth point."""

from __future__ import annotations

import json
import statistics
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from bench import persona, proactivity

TZ = ZoneInfo("Europe/Berlin")
START = datetime.fromisoformat(proactivity.START)


def _emails(days: int = 7):
    return [s for s in persona.stimuli(START, days, TZ) if s.kind == "email"]


def test_persona_mail_is_read_as_the_email_channel_reads_it_with_real_lengths_threads_and_bulk():
    mails = _emails()
    promo = [m for m in mails if m.label == "promo"]
    assert all(m.payload.get("bulk") for m in promo)  # a newsletter carries List-Unsubscribe
    assert not any(m.payload.get("bulk") for m in mails if m.label in ("urgent", "actionable"))
    assert statistics.mean(len(m.text) for m in promo) > 1000  # kilobyte newsletters, trimmed as the channel does
    assert all(m.text.startswith("Email from ") and m.payload["message_id"] for m in mails)
    replies = [m for m in mails if "A reply in the thread" in m.text]
    assert replies and all(m.payload["in_reply_to"] and m.payload["subject"].startswith("Re: ") for m in replies)
    assert not any("> " in m.text for m in replies)  # quoted history is trimmed away, as the channel trims it
    assert len({m.key for m in mails}) == len(mails)


def test_the_input_comes_a_day_at_a_time_each_days_input_within_that_day_and_in_order():
    days = list(persona.daily(START, 5, TZ))  # the calendar's edits come on days 1, 2 and 4
    assert len(days) == 5
    for number, day in enumerate(days):  # each day's input falls within that day, in time order
        first = START.astimezone(TZ).date() + timedelta(days=number)
        assert day and {s.at.astimezone(TZ).date() for s in day} == {first}
        assert day == sorted(day)
    assert [s.text for day in days for s in day if s.kind == "calendar"] == [
        "Emergency dentist",
        "Dinner with Sam",
        "Team offsite planning",
    ]


def test_without_the_corpus_every_newsletter_is_generated_at_kilobyte_size(tmp_path, monkeypatch):
    monkeypatch.setenv("WILSON_CORPUS_DIR", str(tmp_path))
    assert persona.corpus_bodies() == ()
    assert persona.mail_sources().startswith("no corpus at")
    promo = [m for m in _emails(2) if m.label == "promo"]
    assert min(len(m.text) for m in promo) > 1000


def test_the_erring_classifier_errs_at_its_rates_and_the_same_way_each_time():
    items = [
        {
            "buffer_id": i,
            "untrusted": "from your email",
            "text": f"Email from deals@shop.example: Spring sale {i}\nbody",
        }
        for i in range(2000)
    ]
    perfect = [proactivity._triage_item(i)["action"] for i in items]
    erring = [proactivity._triage_item(i, proactivity.SENSITIVITY)["action"] for i in items]
    assert set(perfect) == {"drop"}
    assert 0.08 < erring.count("inbox") / len(items) < 0.12
    assert erring == [proactivity._triage_item(i, proactivity.SENSITIVITY)["action"] for i in items]
    urgent = [{"buffer_id": i, "snippet": f"Email from x@y.example: URGENT: call {i}"} for i in range(2000)]
    missed = sum(not proactivity._ras_urgent(i, proactivity.SENSITIVITY) for i in urgent)
    assert 0.08 < missed / len(urgent) < 0.12
    assert all(proactivity._ras_urgent(i) for i in urgent)
    reply = {
        "buffer_id": 1,
        "untrusted": "from your email",
        "text": "Email from Petra <boss@work.example>: Re: URGENT: slides",
    }
    assert proactivity._triage_item(reply)["priority"] == 1  # a reply keeps its subject's words
    named = {
        "buffer_id": 2,
        "untrusted": "from your email",
        "text": "Email from Airline Alerts <a@b.example>: URGENT: rebook",
    }
    assert proactivity._triage_item(named)["priority"] == 1


def test_the_scripted_triage_groups_kept_mail_of_one_subject_as_its_prompt_asks():
    def mail(i, subject, sender="Mr Berger <landlord@mail.example>"):
        return {"buffer_id": i, "untrusted": "from your email", "text": f"Email from {sender}: {subject}\nSent …"}

    items = [
        mail(1, "Action needed: sign the lease"),
        mail(2, "Action needed: sign the lease"),
        mail(3, "Re: Action needed: sign the lease"),
        mail(4, "Action needed: confirm the check-up"),
        mail(7, "Action needed: sign the lease", sender="Ms Weber <weber@flats.example>"),
        {"buffer_id": 5, "untrusted": "from your calendar", "text": "Changed: Dentist"},
        {"buffer_id": 6, "untrusted": "from your calendar", "text": "Changed: Dentist"},
    ]
    body = {
        "tools": [{"type": "function", "function": {"name": "triage"}}],
        "messages": [{"role": "user", "content": json.dumps({"items": items})}],
    }
    [answer] = proactivity.scripted_reply(body)["tool_calls"]
    kept = {tuple(i["buffer_ids"]): i.get("summary") for i in answer["arguments"]["items"]}
    assert kept == {(1, 2, 3): "Action needed: sign the lease", (4,): None, (5,): None, (6,): None, (7,): None}


def test_the_scripted_triage_gives_the_line_to_tell_only_for_a_kept_mail_that_needs_the_user_and_no_plan():
    def said(subject):
        item = {"buffer_id": 1, "untrusted": "from your email", "text": f"Email from a@b.example: {subject}\nSent …"}
        return proactivity._triage_item(item).get("say")

    assert said("URGENT: school closes at 13:00") == "Email from a@b.example: URGENT: school closes at 13:00"
    assert said("Action needed: sign the form") == "Email from a@b.example: Action needed: sign the form"
    assert said("URGENT: rebook your flight") is None, "a plan is the planner's to tell of"
    assert said("Your parcel has shipped") is None, "a line for the briefing is no message of its own"
    assert said("Spring sale: 30% off") is None


def _user_body(text: str, tools: list[str], after_tool: bool = False) -> dict:
    context = {"now": "2027-03-01T09:00+01:00", "stimulus": {"origin": "user", "kind": "chat"}}
    messages = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "CONTEXT " + json.dumps(context)},
        {"role": "user", "content": text},
    ]
    if after_tool:
        messages += [{"role": "assistant", "content": None}, {"role": "tool", "content": "{}"}]
    return {"messages": messages, "tools": [{"type": "function", "function": {"name": t}} for t in tools]}


def test_a_calendar_question_takes_a_tool_round_when_the_tool_is_offered():
    asked = proactivity.scripted_reply(_user_body("what's on my calendar today?", ["calendar_lookup", "now"]))
    assert asked == {
        "tool_calls": [{"name": "calendar_lookup", "arguments": {"start": "2027-03-01", "end": "2027-03-01"}}]
    }
    answered = proactivity.scripted_reply(_user_body("what's on my calendar today?", ["calendar_lookup"], True))
    assert answered["text"]
    assert "text" in proactivity.scripted_reply(_user_body("what's on my calendar today?", ["now"]))
    assert "text" in proactivity.scripted_reply(_user_body("thanks!", ["calendar_lookup"]))


def test_the_per_event_agent_runs_every_event_as_a_turn_on_its_bootstrap_and_session():
    follow_up = START + timedelta(hours=4)
    run = proactivity.per_event_agent(1, [follow_up], bootstrap_tokens=2_000)
    events = persona.stimuli(START, 1, TZ)
    assert run["turns"] == len(events) + 1
    calendar_chats = sum(
        1 for e in events if e.kind == "chat" and proactivity._chat_tool(e.text, {"calendar_lookup", "list_tasks"})
    )
    assert run["rounds"] > run["turns"] + calendar_chats  # tool rounds: calendar reads, messages to the user
    assert run["tokens"]["prompt"] > run["rounds"] * 2_000  # every call carries the bootstrap
    chats = [e.text for e in events if e.kind == "chat"]
    assert run["longest_prompt_messages"] > 2 * len(chats)  # the day's chats and their answers pile up in one session
    assert run["session_peak"] > 0
    assert run["billed"]["usd"] > 0


def test_the_growth_point_adds_fifty_open_tasks_none_due_this_week(db):
    from storage.models import Task

    persona.create_tasks(START, TZ, ["7d", "1d", "due"], extra_open=50)
    assert Task.select().where(Task.status == "open").count() == 60
    week = START + timedelta(days=7)
    later = Task.select().where(Task.title.not_in(persona.TASKS))
    assert later.count() == 50
    assert all(t.next_fire_at is None or t.next_fire_at >= week for t in later)
    assert all(t.due >= START + timedelta(days=59) for t in later)


def test_an_urgent_mail_counts_as_from_a_routine_sender_only_once_the_screen_had_judged_that_sender(db):
    from storage import buffers, trace

    def mail(n: int, sender: str, hours: int, subject: str = ""):
        return buffers.add(
            channel="email",
            text=f"Email from {sender}: mail {n}",
            dedup_key=str(n),
            at=START + timedelta(hours=hours),
            payload={"from": sender, "subject": subject},
        )

    before = mail(1, "bank@example.com", 1)  # urgent, before any mail of the bank's was screened
    screened = mail(2, "bank@example.com", 2)
    trace.record(screened.trace_id, "routine", "ras", "routine sender", START + timedelta(hours=2))
    after = mail(3, "bank@example.com", 3)  # urgent, once the bank counted as routine
    other = mail(4, "school@example.com", 4, "School closes at noon")
    # the school's newsletter is routine by its subject: its other subjects are not
    newsletter = mail(5, "school@example.com", 5, "Newsletter")
    trace.record(newsletter.trace_id, "routine", "ras", "routine subject", START + timedelta(hours=5))
    closing = mail(6, "school@example.com", 6, "School closes at noon")
    on_subject = mail(7, "school@example.com", 7, "Re: Newsletter")  # urgent, on the routine subject
    ruled = mail(8, "offers@shop.example", 8)
    trace.record(
        ruled.trace_id,
        "dropped",
        "triage",
        "bulk mail from offers@shop.example: triage dropped its last 5",
        START + timedelta(hours=8),
    )
    assert proactivity._routine_screen([before.id, after.id, other.id, closing.id, on_subject.id]) == {
        "screened": 2,
        "urgent": 5,
        "urgent_screened": 0,
        "urgent_from_routine": 2,
        "bulk_ruled": 1,
    }


def test_the_scripted_model_says_nothing_about_a_thread_it_told_of_in_the_last_day():
    context = {
        "stimulus": {"origin": "background", "kind": "buffered"},
        "told_before": {"told": [{"at": "2027-03-01T10:30+01:00", "text": "From the email …"}]},
    }
    body = {
        "tools": [{"type": "function", "function": {"name": "surface"}}],
        "messages": [
            {"role": "user", "content": "CONTEXT " + json.dumps(context)},
            {"role": "user", "content": "Email from a@b.example: URGENT: call me"},
        ],
    }
    assert proactivity.scripted_reply(body) == {"text": ""}
    del context["told_before"]
    body["messages"][0]["content"] = "CONTEXT " + json.dumps(context)
    assert proactivity.scripted_reply(body)["tool_calls"][0]["name"] == "surface"


def test_the_naive_baseline_hands_the_cortex_a_mail_in_the_shape_the_thalamus_gives_a_kept_one(db):
    from actors.tools import source_label

    [item] = [m for m in persona.stimuli(START, 1, TZ) if m.kind == "email"][:1]
    row = proactivity.naive_row(item, START)
    [buffer] = row.payload["buffers"]
    assert buffer["channel"] == "email" and buffer["subject"] == item.payload["subject"]
    sender = item.payload["from"].replace(".", "[.]")  # a label defangs what others wrote
    assert source_label(row) == f"the email “{item.payload['subject']}” from {sender}"
