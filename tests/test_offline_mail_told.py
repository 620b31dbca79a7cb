"""Offline, through a running Wilson: what the user is told of a mail (its point, in time) and what is
proposed for it. Mails go in as the email channel writes them (channels/email/parse.py describe and
payload), its "Sent …" line and all."""

from __future__ import annotations

from datetime import datetime, timedelta
from email.utils import format_datetime

from channels.email.parse import describe, parse_message, payload
from channels.views import quiet
from storage.models import ApprovalItem
from tests.conftest import make_config
from wilson.kernel.clock import UTC


def receive(app, sender: str, subject: str, body: str, sent: datetime | None = None):
    """A mail arriving now, sent at `sent` (now when None), as the email channel buffers it."""
    sent = sent or app.clock.now()
    raw = (
        f"From: {sender}\r\nTo: you@example.org\r\nSubject: {subject}\r\nDate: {format_datetime(sent)}\r\n"
        f"Message-ID: <{abs(hash((subject, body)))}@example.org>\r\n\r\n"
    ).encode() + body.replace("\n", "\r\n").encode()
    parsed = parse_message(raw)
    return app.inject_buffered(
        "email", describe(parsed, app.config.timezone), payload(parsed, folder="INBOX", uid=1, uidvalidity=1)
    )


def told(app) -> list[tuple[datetime, str]]:
    return [
        (datetime.fromisoformat(d["at"]) if isinstance(d.get("at"), str) else d.get("at"), d["text"])
        for d in app.user_deliveries()
    ]


def proposed_tasks() -> list[dict]:
    return [item.args for item in ApprovalItem.select().where(ApprovalItem.tool == "create_task")]


# -- the point of a mail -------------------------------------------------------------------------------


def test_a_heads_up_quotes_the_mails_point_not_its_sent_line_greeting_date_or_signature(make_app):
    app = make_app(llm="offline", start="2026-12-06T07:00:00+01:00")
    receive(
        app,
        "Lena <lena@friends.example>",
        "Sunday",
        "Hi Sam,\n\nSunday, 6 December 2026\n\nI hope you are well. Are you still up for the flea market "
        "next Saturday? I can pick you up at ten.\n\nBest wishes\nLena",
    )
    app.advance(timedelta(days=1))
    [(_, said)] = told(app)  # at the next morning's sync, inside its briefing: one message
    assert said.startswith("Good morning!")
    assert said.endswith(
        "\n\nFrom the email “Sunday” from lena@friends[.]example: Heads-up (sent Sun 6 Dec): "
        "“Are you still up for the flea market next Saturday?”"
    )


def test_an_urgent_mails_heads_up_says_what_happened_not_when_it_was_sent(make_app):
    app = make_app(llm="offline", start="2027-01-14T14:10:00+01:00")
    receive(
        app,
        "Mum <mum@family.example>",
        "Dad is in hospital",
        "Dear Sam,\nDad fell this morning and is in St. Georg hospital. Please call me as soon as you can.\nMum",
    )
    app.advance(timedelta(hours=1))
    [(_, said)] = told(app)
    assert said == (
        "From the email “Dad is in hospital” from mum@family[.]example: Heads-up: "
        "“Dad fell this morning and is in St. Georg hospital.” “Please call me as soon as you can.”"
    )


# -- a mail's "today" is the day it was sent -----------------------------------------------------------


def test_a_school_closing_today_sent_at_eight_and_read_later_is_told_before_it_closes(make_app):
    app = make_app(llm="offline", start="2027-01-19T09:30:00+01:00")
    sent = app.clock.now() - timedelta(hours=1, minutes=30)  # 08:00, read at 09:30
    receive(
        app,
        "Lindenschule <office@lindenschule.example>",
        "Information for parents",
        "Dear parents,\n\nbecause of a heating failure the school closes at 13:00 today. Please pick up your "
        "child by 13:00.\n\nKind regards\nThe school office",
        sent=sent,
    )
    app.advance(timedelta(hours=6))
    [(at, said)] = told(app)
    assert at <= datetime.fromisoformat("2027-01-19T13:00:00+01:00"), "told before the school closes"
    # what happened, then what to do about it
    assert said.endswith(
        "Heads-up: “Because of a heating failure the school closes at 13:00 today.” “Please pick up "
        "your child by 13:00.”"
    ), said


def test_a_closure_today_in_a_mail_sent_yesterday_is_about_yesterday(make_app):
    from wilson.model.offline.triage import judge

    now = datetime.fromisoformat("2027-01-20T09:30:00+01:00")
    item = {
        "text": "Email from office@lindenschule.example: Information\nSent Tue 19 Jan 2027 08:00\n"
        "The school closes at 13:00 today.",
        "payload": {
            "subject": "Information",
            "from": "office@lindenschule.example",
            "date": "2027-01-19T08:00:00+01:00",
        },
    }
    yesterday = judge(item, now, now.tzinfo)
    item["payload"]["date"] = "2027-01-20T08:00:00+01:00"
    today = judge(item, now, now.tzinfo)
    assert today.level == 1 and "closing today" in today.rule
    assert yesterday.level != 1, "the closure was the day before: it bit already, nothing to wake for"


# -- mail that asks for something ----------------------------------------------------------------------


def test_an_official_reminder_to_pay_becomes_a_payment_task_with_amount_and_reference(make_app):
    app = make_app(llm="offline", start="2027-01-05T10:00:00+01:00")
    receive(
        app,
        "Hauptzollamt <noreply@zoll.example>",
        "Reminder: vehicle tax",
        "Dear Sir or Madam,\n\nthis is a reminder that your vehicle tax of 120.00 EUR must be paid by "
        "15 January 2027. Please quote reference KZ-4471-2027 when paying to IBAN DE89 3704 0044 0532 0130 00."
        "\n\nYours faithfully\nHauptzollamt",
    )
    app.advance(timedelta(days=1))
    [task] = proposed_tasks()
    assert task["title"] == "Pay 120.00 EUR: Vehicle tax"
    assert task["due"] == "2027-01-14"
    assert "Amount: 120.00 EUR. Reference: KZ-4471-2027. To IBAN DE89 3704 0044 0532 0130 00." in task["notes"]
    said = "\n".join(text for _, text in told(app))
    assert "Pay 120.00 EUR: Vehicle tax" in said and "Fri 15 Jan" in said, said


def test_a_travel_notice_asking_to_check_in_becomes_a_task_with_the_booking_code(make_app):
    app = make_app(llm="offline", start="2027-03-01T10:00:00+01:00")
    receive(
        app,
        "SkyAir <noreply@skyair.example>",
        "Your flight to Lisbon on 12 March",
        "Dear passenger,\n\nonline check-in for your flight SA 123 is open. Please check in online by "
        "11 March at 18:00. Booking code: XYZ12A.",
    )
    app.advance(timedelta(days=1))
    [task] = proposed_tasks()
    assert (task["title"], task["due"]) == ("Check in: Your flight to Lisbon on 12 March", "2027-03-10")
    assert "Booking code: XYZ12A." in task["notes"]


def test_a_landlord_asking_to_sign_by_a_date_gets_a_task_that_says_where(make_app):
    app = make_app(llm="offline", start="2027-01-05T10:00:00+01:00")
    receive(
        app,
        "Hausverwaltung Krause <info@krause-immobilien.example>",
        "New house rules",
        "Dear tenants, the new house rules are attached. Please sign and return them before 20 January at "
        "the property office.\nRegards, Krause",
    )
    app.advance(timedelta(days=1))
    [task] = proposed_tasks()
    assert (task["title"], task["due"]) == ("Sign: New house rules", "2027-01-19")
    assert "Where: at the property office." in task["notes"]


# -- urgent at night -------------------------------------------------------------------------------------


LEAK = (
    "Hello, water is coming through my kitchen ceiling from your flat, I think a pipe has burst. "
    "Please come down or call me."
)


def test_a_water_leak_at_two_in_the_morning_is_told_within_the_hour(make_app):
    app = make_app(llm="offline", start="2027-01-14T02:00:00+01:00")
    receive(app, "Frau Müller <mueller@neighbours.example>", "Water in my kitchen", LEAK)
    app.advance(timedelta(hours=1))
    [(at, said)] = told(app)
    assert at <= datetime.fromisoformat("2027-01-14T03:00:00+01:00")
    assert said.endswith(
        "Heads-up: “Water is coming through my kitchen ceiling from your flat, I think a pipe "
        "has burst.” “Please come down or call me.”"
    ), said


def test_with_offline_wake_off_the_leak_waits_for_the_morning_and_so_does_a_friendly_mail(make_app):
    app = make_app(llm="offline", start="2027-01-14T02:00:00+01:00", env={"WILSON_ATTENTION_OFFLINE_WAKE": "false"})
    receive(app, "Frau Müller <mueller@neighbours.example>", "Water in my kitchen", LEAK)
    app.advance(timedelta(hours=4))
    assert told(app) == [], "nothing before the quiet hours end at 07:00"
    app.advance(timedelta(hours=2))
    [(at, said)] = told(app)
    assert at >= datetime.fromisoformat("2027-01-14T07:00:00+01:00") and "pipe has burst" in said


def test_a_friendly_mail_at_night_does_not_wake_the_user(make_app):
    app = make_app(llm="offline", start="2027-01-14T02:00:00+01:00")
    receive(
        app,
        "Lena <lena@friends.example>",
        "Coffee next week?",
        "Hi! I'm in town next week, shall we have coffee on Wednesday afternoon?",
    )
    app.advance(timedelta(hours=4))
    assert told(app) == []


def test_the_quiet_confirmation_says_exactly_what_still_comes_through(tmp_path, db):
    now = datetime(2027, 1, 14, 20, 0, tzinfo=UTC)
    on = quiet("3h", now, make_config(tmp_path / "a"))
    assert (
        "Only emergencies still come through: a water or gas leak, a fire, a medical emergency, the police, "
        "your child's school or care closing today, travel cancelled or moved within 12 hours."
    ) in on
    off = quiet("3h", now, make_config(tmp_path / "b", WILSON_ATTENTION_OFFLINE_WAKE="false"))
    assert "Nothing comes through until then, not even emergencies ([attention] offline_wake is off)." in off
    model = quiet("3h", now, make_config(tmp_path / "c", WILSON_LLM_BASE_URL="http://127.0.0.1:9/v1"))
    assert "Only what your model flags as urgent still comes through." in model
    assert all("Urgent things still come through" not in text for text in (on, off, model))


def test_the_day_a_mail_came_is_no_date_in_it(make_app):
    # mailed at 02:00 (its Sent line says today), the kita closes tomorrow: told when the quiet hours end, not
    # at night as if it closed today
    app = make_app(llm="offline", start="2027-01-14T02:00:00+01:00")
    receive(
        app,
        "Kita Sonnenschein <kita@sonnenschein.example>",
        "Training day",
        "Dear parents, the kita is closed tomorrow for a training day.",
    )
    app.advance(timedelta(hours=6))
    [(at, said)] = told(app)
    assert at >= datetime.fromisoformat("2027-01-14T07:00:00+01:00"), "not at night"
    assert said.endswith("Heads-up: “The kita is closed tomorrow for a training day.”"), said


def test_a_mail_asking_for_something_by_a_date_is_proposed_the_day_it_comes_and_no_with_a_reason_settles_it(make_app):
    # the task waited for the next morning's briefing, so a "no, I did that already" said after reading the
    # mail found nothing to turn down
    from storage.models import Approval

    app = make_app(llm="offline", start="2027-01-05T10:00:00+01:00")
    receive(
        app,
        "Stadtbibliothek Mitte <ausleihe@stadtbibliothek.example>",
        "Your library card",
        "Dear reader,\n\nyour library card expires at the end of the month. Please renew it at the counter "
        "by 15 January 2027.\n\nStadtbibliothek Mitte",
    )
    app.advance(timedelta(hours=1))
    said = "\n".join(text for _, text in told(app))
    assert "Proposal 1: I'd like to do this" in said and "Renew" in said and "Your library card" in said, said
    before = len(told(app))
    app.say("no, I already did that yesterday")
    app.advance(timedelta(minutes=5))
    assert "Rejected, nothing changed" in "\n".join(text for _, text in told(app)[before:])
    assert [a.status for a in Approval.select()] == ["rejected"]
    before = len(told(app))
    app.advance(timedelta(days=3))
    assert not any("library card" in text for _, text in told(app)[before:])  # settled: not raised again


def test_a_mail_asking_for_something_late_at_night_is_proposed_in_the_morning_not_at_night(make_app):
    # the early sync it wakes does not break quiet hours: a request is not an emergency
    app = make_app(llm="offline", start="2027-01-05T23:30:00+01:00")
    receive(
        app,
        "Stadtbibliothek Mitte <ausleihe@stadtbibliothek.example>",
        "Your library card",
        "Dear reader,\n\nplease renew your library card at the counter by 30 April 2027.\n\nStadtbibliothek Mitte",
    )
    app.advance(timedelta(hours=7))
    assert told(app) == []
    app.advance(timedelta(hours=3))
    [(at, said)] = told(app)
    assert at >= datetime.fromisoformat("2027-01-06T07:00:00+01:00") and "Renew your library card" in said, said


def test_an_offer_that_expires_tonight_is_never_said(make_app):
    # it was the next morning's "Heads-up": the offer's "tonight" read as news
    app = make_app(llm="offline", start="2027-01-13T10:00:00+01:00")
    receive(
        app,
        "Mealbox <hello@mealbox.example>",
        "Your exclusive offer expires tonight",
        "Get 3 boxes for the price of 2. Your exclusive offer expires tonight at 23:59.",
    )
    app.advance(timedelta(days=2))
    assert told(app) == []


def test_a_parcel_to_collect_by_a_date_is_still_a_task(make_app):
    app = make_app(llm="offline", start="2027-01-13T10:00:00+01:00")
    receive(
        app,
        "Post <benachrichtigung@post.example>",
        "Your parcel is waiting",
        "Your parcel is on its way back to the branch. Please collect it at the post office on Hauptstr. 5 by "
        "20 January 2027. Bring this notice and your ID.",
    )
    app.advance(timedelta(days=1))
    [task] = proposed_tasks()
    assert task["due"] == "2027-01-19" and task["title"].startswith("Collect")


def test_a_friends_question_with_a_day_to_answer_by_is_told_with_that_question(make_app):
    app = make_app(llm="offline", start="2027-05-03T09:30:00+02:00")
    receive(
        app,
        "Jonas Weber <jonas.w@posteo.example>",
        "Grillen am 22.?",
        "Hey Kim! We're doing a barbecue in the Hasenheide on Saturday 22 May. Can you tell me by Friday if you're "
        "coming and whether Bea comes too? Need to know for the meat order 🙂 Cheers, Jonas",
    )
    app.advance(timedelta(days=1))
    [(_, said)] = told(app)
    assert "barbecue" in said and "“Can you tell me by Friday if you're coming" in said  # what to answer, by when


def test_a_mail_asking_to_confirm_an_appointment_brings_the_appointment_up_the_evening_before(make_app):
    app = make_app(llm="offline", start="2027-02-23T11:00:00+01:00")
    receive(
        app,
        "Chirurgische Ambulanz <ambulanz@klinikum.example>",
        "Ihr Termin zum Vorgespräch",
        "Sehr geehrter Herr Kaya,\n\nIhr Vorgespräch zur Knie-Arthroskopie findet am Dienstag, 09.03.2027, um 08:15 "
        "Uhr in der Chirurgischen Ambulanz, Haus 3, statt. Bitte bestätigen Sie den Termin bis zum 02.03.2027 "
        "telefonisch.\n\nMit freundlichen Grüßen",
    )
    app.advance(timedelta(hours=1))
    reminders = [i.args for i in ApprovalItem.select().where(ApprovalItem.tool == "remind")]
    assert len(proposed_tasks()) == 1 and "Confirm" in proposed_tasks()[0]["title"]
    assert len(reminders) == 1 and "08:15" in reminders[0]["text"] and "Haus 3" in reminders[0]["text"]
    assert datetime.fromisoformat(reminders[0]["at"]) == datetime.fromisoformat("2027-03-08T18:00:00+01:00")


def test_a_scan_booked_with_a_confirmation_asked_by_reply_is_a_confirm_task_and_the_scan_comes_up_the_evening_before(
    make_app,
):
    app = make_app(llm="offline", start="2027-04-19T16:47:00+02:00")
    receive(
        app,
        "Radiologie am Spittelmarkt <appointments@radiologie.example>",
        "Your MRI appointment",
        "Dear Ms Okafor,\n\nwe have booked your MRI of the lumbar spine for Thursday, 6 May 2027, at 7:40 a.m. (2nd "
        "floor, entrance B). Please confirm the appointment by replying to this email no later than 28 April.\n\n"
        "On the day, please bring your referral and your health insurance card.\n\nKind regards",
    )
    app.advance(timedelta(hours=1))
    [task] = proposed_tasks()
    assert task["title"].startswith("Confirm")  # the ask, not what to bring on the day
    [reminder] = [i.args for i in ApprovalItem.select().where(ApprovalItem.tool == "remind")]
    assert "7:40" in reminder["text"] and reminder["at"].startswith("2027-05-05T18:00")
