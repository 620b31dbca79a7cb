"""A whole Wilson with no model (make_app(llm="offline")) on a simulated clock: urgency without a
model ranks, and breaks quiet hours only for a clear emergency (tests/test_offline_mail_told.py); a sick
child's fever waits for the morning; no run says "Noted."."""

from __future__ import annotations

import io
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from storage.models import Trace
from wilson.app.repl import Repl

BERLIN = ZoneInfo("Europe/Berlin")
SICK = (
    "Kita Sonnenschein <office@kita-sonnenschein.de> | Leo | Your son has a high fever, please pick him up "
    "as soon as you can."
)
DINNER = "Sam <sam@example.com> | Dinner tonight? | Dinner tonight? Usual place at 8?"


def local(delivery: dict) -> datetime:
    return datetime.fromisoformat(delivery["at"]).astimezone(BERLIN)


def repl_of(app) -> Repl:
    return Repl(app, out=io.StringIO(), as_json=True)


def test_a_sick_child_at_night_comes_first_when_quiet_hours_end_and_dinner_wakes_nobody(make_app):
    app = make_app(start="2027-01-05T21:00:00+01:00")  # quiet hours 22:00-07:00
    repl = repl_of(app)
    repl.run_line('calendar add "Dentist" @ 2027-01-06T16:00')  # the morning will have a briefing too
    app.advance(timedelta(hours=6, minutes=15))
    assert app.clock.now().astimezone(BERLIN).strftime("%H:%M") == "03:15"
    evening = len(app.user_deliveries())
    repl.run_line(f"email {DINNER}")
    repl.run_line(f"email {SICK}")
    app.advance(timedelta(hours=6))
    morning = app.user_deliveries()[evening:]
    assert morning, "nothing reached the user"
    # nothing during the night: offline urgency does not break quiet hours on its own
    assert all(local(d) >= datetime(2027, 1, 6, 7, 0, tzinfo=BERLIN) for d in morning), morning
    first = morning[0]
    assert local(first) == datetime(2027, 1, 6, 7, 0, tzinfo=BERLIN)
    assert "high fever" in first["text"] and "pick him up" in first["text"]
    assert any("Dinner tonight?" in d["text"] for d in morning[1:])
    # the rules woke the sync for the child (traced as an offline rule), not for the dinner
    woke = [r.reason for r in Trace.select() if "urgency rules" in r.reason or "situation:" in r.reason]
    assert "email: situation: your child needs you" in woke and not any("Dinner" in reason for reason in woke)


def test_a_busy_offline_week_never_says_noted(make_app):
    app = make_app(start="2027-01-05T09:00:00+01:00")
    repl = repl_of(app)
    script = [
        'calendar add "Trip to Japan" @ 2027-04-10 -> 2027-04-24; Tokyo',
        'calendar add "Family visit" @ 2027-03-10 -> 2027-03-14; Lisbon, Portugal',
        'calendar add "Team standup" @ 2027-01-07T09:00',
        'calendar add "Tax return deadline" @ 2027-01-29',
        "sync",
        "hello",
        "I need to file my taxes by the 25th",
        "remind me to call mom on Sunday",
        "what's on my plate this week?",
        "forget the Japan trip",
        "move the passport task to next week",
        "remind me tomorrow at 3pm to send the invoice",
        "remind me every Monday at 8 to water the plants",
        "thanks!",
        "yes",
        "what's the weather like?",
        f"email {DINNER}",
        "email news@shop.example | Weekly deals | 30% off everything. Unsubscribe.",
        "web The visa office closes for holidays on Jan 9.",
    ]
    for line in script:
        assert repl.run_line(line)
    for approval in (1, 2, 3):
        repl.run_line(f"approve {approval}")
    app.advance(timedelta(days=6))  # mornings, follow-ups and reminders
    said = [d["text"] for d in app.user_deliveries()]
    assert len(said) >= 10
    assert all(text.strip() for text in said)
    assert not [text for text in said if "Noted" in text]


def test_an_event_without_a_plan_is_traced_and_listed_once_in_the_next_briefing(make_app):
    from storage.models import Inbox

    app = make_app(start="2027-01-05T10:00:00+01:00")
    repl = repl_of(app)
    repl.run_line('calendar add "Book club weekend" @ 2027-01-08 -> 2027-01-10')  # days somewhere unnamed: a trip?
    repl.run_line('calendar add "Trip to Japan" @ 2027-04-10 -> 2027-04-24; Tokyo')
    repl.run_line("sync")
    row = Inbox.get(Inbox.text.contains("Book club"))
    steps = [r.reason for r in Trace.select().where(Trace.trace_id == row.trace_id)]
    assert any("seen, no plan (offline rules): no playbook word in the title" in step for step in steps), steps
    said = len(app.user_deliveries())
    app.advance(timedelta(days=1))
    briefings = [d["text"] for d in app.user_deliveries()[said:] if d["text"].startswith("Good morning")]
    assert len(briefings) == 1
    assert (
        "New in your calendar (no plan from me: ask if one needs it):\n• Book club weekend (Fri 8 Jan)" in briefings[0]
    )
    assert "Trip to Japan (" not in briefings[0].split("New in your calendar")[1].split("\n\n")[0]
    app.advance(timedelta(days=2))  # to Friday's briefing: the one that reminds of the Japan plan
    later = [d["text"] for d in app.user_deliveries()[said:] if d["text"].startswith("Good morning")][1:]
    # listed as new once, then not again (on Friday it is simply today's event)
    assert later and not any("New in your calendar" in text for text in later)


def test_many_unplanned_events_are_named_up_to_a_few_and_counted(make_app):
    from actors.briefing import NEW_SHOWN

    app = make_app(start="2027-01-05T10:00:00+01:00")
    repl = repl_of(app)
    for day in range(NEW_SHOWN + 3):
        repl.run_line(f'calendar add "Choir {day}" @ 2027-01-{10 + day:02d} -> 2027-01-{11 + day:02d}')
    repl.run_line("sync")
    said = len(app.user_deliveries())
    app.advance(timedelta(days=1))
    (briefing,) = [d["text"] for d in app.user_deliveries()[said:] if d["text"].startswith("Good morning")]
    listed = briefing.split("New in your calendar")[1].split("\n\n")[0]
    assert listed.count("• Choir") == NEW_SHOWN and "• and 3 more" in listed


def test_an_evening_out_and_team_days_in_town_are_not_listed_as_new_in_the_briefing(make_app):
    # the user's own entries that need nothing: naming them the next morning would spend attention on nothing
    app = make_app(start="2027-01-05T10:00:00+01:00")
    repl = repl_of(app)
    repl.run_line('calendar add "Book club" @ 2027-01-08T19:00')
    repl.run_line('calendar add "Teamtage" @ 2027-01-11 -> 2027-01-12; Spreespeicher, Berlin')
    repl.run_line('calendar add "Offsite" @ 2027-01-18 -> 2027-01-20; Hotel Arts, Barcelona')
    repl.run_line("sync")
    said = len(app.user_deliveries())
    app.advance(timedelta(days=1))
    briefing = "\n".join(d["text"] for d in app.user_deliveries()[said:])
    assert "Book club" not in briefing and "Teamtage" not in briefing


def test_a_flight_cancelled_at_night_is_the_first_thing_told_when_quiet_hours_end(make_app):
    app = make_app(start="2027-01-05T21:00:00+01:00")  # quiet hours 22:00-07:00
    repl = repl_of(app)
    repl.run_line('calendar add "Dentist" @ 2027-01-06T16:00')  # the morning has a briefing to tell too
    app.advance(timedelta(hours=6, minutes=15))
    evening = len(app.user_deliveries())
    repl.run_line(f"email {DINNER}")
    app.inject_buffered(
        "email",
        "Email from Lufthansa <noreply@lufthansa.example>: Flight cancelled\n"
        "Your flight LH 1234 Berlin–Rome tomorrow at 09:40 has been cancelled. We rebooked you.",
        {
            "channel": "email",
            "from": "noreply@lufthansa.example",
            "from_name": "Lufthansa",
            "subject": "Flight cancelled",
            "bulk": "it was sent automatically",
        },
    )
    repl.run_line("email Lena <lena@friends.example> | Coffee next week? | Shall we have coffee on Wednesday?")
    app.advance(timedelta(hours=6))
    morning = app.user_deliveries()[evening:]
    # offline urgency never breaks quiet hours; at 07:00 the cancellation comes first
    assert morning and all(local(d) >= datetime(2027, 1, 6, 7, 0, tzinfo=BERLIN) for d in morning), morning
    first = morning[0]
    assert local(first) == datetime(2027, 1, 6, 7, 0, tzinfo=BERLIN)
    assert "has been cancelled" in first["text"], first["text"]
    assert not any(word in first["text"] for word in ("Dentist", "Dinner", "Coffee")), first["text"]
    assert any("Dinner tonight?" in d["text"] for d in morning[1:])


def test_a_bill_mail_becomes_a_task_to_pay_it_with_the_sender_in_the_reason(make_app):
    from storage.models import Approval, ApprovalItem

    app = make_app(start="2027-01-12T10:00:00+01:00")
    repl_of(app).run_line(
        "email Stadtwerke <billing@stadtwerke.example> | Your electricity bill for December | "
        "Your bill for December is 84.20 EUR. Please pay by 26 January 2027."
    )
    app.advance(timedelta(days=1))
    item = ApprovalItem.get(ApprovalItem.tool == "create_task")
    assert (item.args["title"], item.args["due"]) == ("Pay electricity bill", "2027-01-24")
    reason = Approval.get_by_id(item.approval_id).reason
    assert "Stadtwerke" in reason and "84.20 EUR" in reason and "offline rules" in reason
    assert any("Pay electricity bill" in d["text"] for d in app.user_deliveries())


def test_a_renewal_notice_becomes_a_task_before_it_renews(make_app):
    from storage.models import ApprovalItem

    app = make_app(start="2027-01-12T10:00:00+01:00")
    repl_of(app).run_line(
        "email AllSafe <service@allsafe.example> | Your car insurance renewal | "
        "Your car insurance renews on 1 March 2027. The new premium is 412.00 EUR a year."
    )
    app.advance(timedelta(days=1))
    item = ApprovalItem.get(ApprovalItem.tool == "create_task")
    assert (item.args["title"], item.args["due"]) == ("Review car insurance renewal", "2027-02-22")
    assert any("car insurance" in d["text"] for d in app.user_deliveries())


def test_a_reminder_declined_in_words_never_fires(make_app):
    from storage.models import Approval, ApprovalItem

    app = make_app(start="2027-01-26T20:00:00+01:00")
    repl = repl_of(app)
    repl.run_line("say remind me to water the plants on Saturday at 10")
    item = ApprovalItem.get(ApprovalItem.tool == "remind")
    assert item.args["at"] == "2027-01-30T10:00:00+01:00"
    repl.run_line("say no, forget it")
    assert Approval.get_by_id(item.approval_id).status == "rejected"
    said = len(app.user_deliveries())
    app.advance(timedelta(days=5))
    assert not any("plants" in d["text"] for d in app.user_deliveries()[said:])


def test_an_appointment_deleted_and_made_again_earlier_is_told_as_a_move_within_a_poll_and_a_ras_interval(make_app):
    from storage.models import Approval, ApprovalItem

    app = make_app(start="2027-01-05T08:00:00+01:00")
    repl = repl_of(app)
    # tomorrow's: one added for later today is told, not planned (nothing is left to prepare)
    repl.run_line('calendar add "Dentist appointment" @ 2027-01-06T15:00')
    repl.run_line("sync")
    app.wait_idle()
    repl.run_line("approve 1")
    app.wait_idle()
    edited = app.clock.now()
    repl.run_line('calendar cancel "Dentist appointment"')  # as some apps move an event: a new one, a new UID
    repl.run_line('calendar add "Dentist appointment" @ 2027-01-06T11:00')
    app.advance(timedelta(hours=1))  # no poll of its own: the edit is seen at the calendar's next poll
    [moved] = Approval.select().where(Approval.id != 1)
    items = [i.tool for i in ApprovalItem.select().where(ApprovalItem.approval == moved.id)]
    assert items[0] == "update_topic" and set(items) == {
        "update_topic",
        "update_task",
    }  # moved with its tasks, not closed
    told = next(d for d in app.user_deliveries() if f"Proposal {moved.id}:" in d["text"])
    # a 5-minute poll, then the RAS's 15-minute interval
    assert local(told) <= edited.astimezone(BERLIN) + timedelta(minutes=20)


def _busy_list(app, topic_title: str | None = None) -> None:
    """18 tasks due within the week (past the context's 15) in a trip, and one with no date."""
    from storage.models import Task, Topic

    now = app.clock.now()
    topic = Topic.create(title=topic_title, starts=now + timedelta(days=9), created_at=now) if topic_title else None
    for n in range(18):
        Task.create(title=f"Errand {n:02d}", due=now + timedelta(days=1, hours=n), topic=topic, created_at=now)
    Task.create(title="Call the plumber", created_at=now)


def test_the_whole_list_is_read_however_the_question_is_put(make_app):
    # the context holds at most 15 tasks due soon: "show my tasks" left out the undated one, and so did
    # the same question put as a greeting ("hi, my tasks please"), whose run is offered no read tool
    app = make_app(start="2027-01-05T09:00:00+01:00")
    _busy_list(app)
    repl = repl_of(app)
    for question in ("show my tasks", "hi, my tasks please"):
        said = len(app.user_deliveries())
        repl.run_line(question)
        answer = "\n".join(d["text"] for d in app.user_deliveries()[said:])
        assert "Your open tasks:" in answer and "Call the plumber" in answer, answer
        assert all(f"Errand {n:02d}" in answer for n in range(18)), answer


def test_a_topic_look_reads_every_task_of_the_topic(make_app):
    app = make_app(start="2027-01-05T09:00:00+01:00")
    _busy_list(app, "Trip to Japan")
    said = len(app.user_deliveries())
    repl_of(app).run_line("what's in the Japan topic?")
    answer = "\n".join(d["text"] for d in app.user_deliveries()[said:])
    assert "Open in Trip to Japan:" in answer, answer
    assert all(f"Errand {n:02d}" in answer for n in range(18)), answer


def test_the_calendar_answer_names_everything_due_in_its_span(make_app):
    app = make_app(start="2027-01-05T09:00:00+01:00")
    _busy_list(app)
    said = len(app.user_deliveries())
    repl_of(app).run_line("what's on this week?")
    answer = "\n".join(d["text"] for d in app.user_deliveries()[said:])
    assert "On your list" in answer and all(f"Errand {n:02d}" in answer for n in range(18)), answer


def test_a_question_about_this_evening_is_answered_for_today(make_app):
    # the first round looked at today; the answer named "the next two weeks", read again without the evening
    app = make_app(start="2027-01-05T09:00:00+01:00")
    repl = repl_of(app)
    repl.run_line('calendar add "Dinner with Anna" @ 2027-01-05T19:30')
    repl.run_line("advance 10m")  # the calendar's next poll (seen before it only when the first poll came late)
    said = len(app.user_deliveries())
    repl.run_line("what's on this evening?")
    answer = "\n".join(d["text"] for d in app.user_deliveries()[said:])
    assert "In your calendar on Tue 5 Jan:\n• Dinner with Anna — Tue 5 Jan 19:30" in answer, answer
    assert "two weeks" not in answer, answer


def test_a_request_after_a_greeting_becomes_its_proposal(make_app):
    # "I didn't understand that" before: the greeting or where the user is hid the request from the rules
    app = make_app(start="2027-01-05T09:00:00+01:00")
    repl = repl_of(app)
    for said, item in (
        ("hi, add buy milk to my list", "1. New task: Buy milk"),
        ("I'm home. Remind me tomorrow at 6 to call Tom", "1. Remind you once, Wed 6 Jan 2027 18:00"),
    ):
        before = len(app.user_deliveries())
        repl.run_line(said)
        answer = "\n".join(d["text"] for d in app.user_deliveries()[before:])
        assert item in answer and "didn't understand" not in answer, answer


def test_when_is_an_event_is_answered_from_the_calendar(make_app):
    # "I didn't understand that" before: only a topic's day was known to "when is …?"
    app = make_app(start="2027-01-06T08:00:00+01:00")
    repl = repl_of(app)
    repl.run_line('calendar add "Dentist" @ 2027-01-07T10:30 -> 2027-01-07T11:15 ; Praxis Dr. Weber')
    repl.run_line('calendar add "Mum\'s birthday" @ 2027-01-12')
    repl.run_line("advance 10m")  # the calendar's next poll
    for question, said in (
        ("when is the dentist?", "Dentist: Thu 7 Jan 10:30 (tomorrow), Praxis Dr. Weber."),
        ("when is my next appointment?", "Dentist: Thu 7 Jan 10:30 (tomorrow), Praxis Dr. Weber."),
        ("when is Mum's birthday?", "Mum's birthday: Tue 12 Jan (in 6 days)."),
        ("when is the board meeting?", "I found nothing called “board meeting” in your calendar for the year ahead."),
    ):
        before = len(app.user_deliveries())
        repl.run_line(question)
        assert [d["text"] for d in app.user_deliveries()[before:]][-1].endswith(said)  # after the first hello


def test_am_i_free_looks_at_the_calendar_of_that_day(make_app):
    app = make_app(start="2027-01-06T08:00:00+01:00")
    repl = repl_of(app)
    repl.run_line('calendar add "Team dinner" @ 2027-01-08T19:00 -> 2027-01-08T22:00')
    repl.run_line("advance 10m")
    before = len(app.user_deliveries())
    repl.run_line("am I free on Friday evening?")
    answer = "\n".join(d["text"] for d in app.user_deliveries()[before:])
    assert "In your calendar on Fri 8 Jan:\n• Team dinner — Fri 8 Jan 19:00" in answer, answer


def test_what_was_finished_is_read_from_the_done_tasks_latest_first(make_app):
    # "I didn't understand that" before
    app = make_app(start="2027-01-05T09:00:00+01:00")
    repl = repl_of(app)
    for title in ("pay rent", "call the plumber"):
        repl.run_line(f"add {title} by Friday")
        repl.run_line("approve")
        repl.run_line("advance 1h")
        repl.run_line(f"done with {title}")
        repl.run_line("approve")
    repl.run_line("add renew the passport by Friday")
    repl.run_line("approve")
    for question in ("what did I finish?", "what have I done this week?"):
        said = len(app.user_deliveries())
        repl.run_line(question)
        answer = "\n".join(d["text"] for d in app.user_deliveries()[said:])
        assert "(2):\n• Call the plumber (Tue 5 Jan)\n• Pay rent (Tue 5 Jan)" in answer, answer
        assert "passport" not in answer.lower(), "an open task is not done"
    repl.run_line("advance 20d")
    said = len(app.user_deliveries())
    repl.run_line("what did I get done?")
    answer = "\n".join(d["text"] for d in app.user_deliveries()[said:])
    assert answer.endswith("Nothing marked done in the last two weeks."), answer
    repl.run_line("advance 7d")  # Tue 2 Feb: "last month" is January
    said = len(app.user_deliveries())
    repl.run_line("what did I finish last month?")
    answer = "\n".join(d["text"] for d in app.user_deliveries()[said:])
    assert "Done last month (2):" in answer, answer


def test_a_change_to_tonights_event_held_by_quiet_hours_is_not_told_once_the_event_is_over(make_app):
    from channels.calendar.editor import add_event, move_event
    from storage.models import Outbox

    app = make_app(start="2027-01-05T20:00:00+01:00")
    add_event(app.calendar_file(), "Pub quiz", datetime(2027, 1, 5, 23, 0), datetime(2027, 1, 5, 23, 30), tz=BERLIN)
    add_event(app.calendar_file(), "Late call", datetime(2027, 1, 5, 23, 15), datetime(2027, 1, 5, 23, 45), tz=BERLIN)
    app.sync()
    app.wait_idle()
    app.advance(timedelta(hours=2, minutes=30))  # 22:30: quiet hours
    move_event(app.calendar_file(), "Pub quiz", datetime(2027, 1, 5, 23, 30), datetime(2027, 1, 6, 0, 0), tz=BERLIN)
    move_event(app.calendar_file(), "Late call", datetime(2027, 1, 6, 15, 0), datetime(2027, 1, 6, 15, 30), tz=BERLIN)
    app.advance(timedelta(minutes=10))  # the calendar's next poll
    app.advance(timedelta(minutes=20))  # a RAS interval, then the early sync: both heads-ups are held
    held = {box.text: box for box in Outbox.select().where(Outbox.status == "held")}
    assert any("Pub quiz" in text for text in held) and any("Late call" in text for text in held), held
    said = len(app.user_deliveries())
    app.advance(timedelta(hours=8, minutes=30))  # 07:30: quiet hours are over
    morning = [d["text"] for d in app.user_deliveries()[said:]]
    assert any("Late call" in text and "Wed 6 Jan at 15:00" in text for text in morning), morning
    assert not any("Pub quiz" in text for text in morning), "the quiz was over at midnight: old news by 7:00"
    [quiz] = [box for text, box in held.items() if "Pub quiz" in text]
    assert Outbox.get_by_id(quiz.id).status == "dropped"
    [reason] = [t.reason for t in Trace.select().where((Trace.trace_id == quiz.trace_id) & (Trace.stage == "dropped"))]
    assert reason.startswith("what it was about was over at 2027-01-05T23:00:00+00:00")


def test_a_plan_for_tomorrows_appointment_added_late_at_night_waits_for_the_morning(make_app):
    from storage.models import Approval

    app = make_app(start="2027-01-05T23:30:00+01:00")  # quiet hours 22:00-07:00
    repl = repl_of(app)
    repl.run_line('calendar add "Dentist" @ 2027-01-06T16:00')  # within two days: the rules rank it urgent
    app.advance(timedelta(minutes=30))  # the calendar's poll and a RAS interval: an early sync plans it
    assert Approval.select().count() == 1, "the plan is made at night"
    night = [d for d in app.user_deliveries() if local(d) < datetime(2027, 1, 6, 7, 0, tzinfo=BERLIN)]
    assert night == [], "a plan for 16:00 tomorrow wakes nobody at midnight"
    app.advance(timedelta(hours=7, minutes=30))
    assert any("Dentist" in d["text"] for d in app.user_deliveries()), "told when the quiet hours end"
