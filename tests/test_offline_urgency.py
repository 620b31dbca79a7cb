"""wilson/model/offline/urgency.py and triage.py: how pressing an item is, by who, what situation and when."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from wilson.model.offline import triage, urgency

BERLIN = ZoneInfo("Europe/Berlin")
NIGHT = datetime(2027, 1, 6, 3, 15, tzinfo=BERLIN)


def judge(text, subject="", sender="", now=NIGHT):
    return urgency.judge_message(text, subject, sender, now, BERLIN)


@pytest.mark.parametrize(
    "text, subject, sender",
    [
        ("Your son has a high fever, please pick him up as soon as you can.", "Leo", "office@kita-sonnenschein.de"),
        (
            "Emma fell in the playground and hurt her arm. Please call us.",
            "Your daughter",
            "Frau Berger <berger@school.de>",
        ),
        ("Mum had an accident and is in hospital, call me", "", "Jonas <jonas@example.com>"),
        ("Your flight LH 123 has been cancelled. We rebooked you.", "Flight cancelled", "noreply@lufthansa.com"),
        ("Reminder: your tax return is due today.", "Deadline today", "noreply@elster.de"),
    ],
)
def test_situations_that_need_the_user_now(text, subject, sender):
    found = judge(text, subject, sender)
    assert found.level == 1 and urgency.arousing(found), found


def test_dinner_tonight_is_a_question_not_an_alarm():
    found = judge("Dinner tonight?", "", "Sam <sam@example.com>")
    assert found.level == 2 and not urgency.arousing(found)


@pytest.mark.parametrize(
    "text, sender, level",
    [
        ("Weekly digest: 30% off everything. Unsubscribe here.", "shop@example.com", None),
        (
            "Kids' flu season sale: thermometers 20% off",
            "deals@pharmacy.example",
            None,
        ),  # a child and a fever, but an ad
        ("Nice photos from the weekend!", "Anna <anna@example.com>", None),  # a person's news asks nothing
        ("Could you look at the photos from the weekend", "Anna <anna@example.com>", 2),
        ("Please pick a photo from the weekend for the album", "Anna <anna@example.com>", 3),
        ("Nice photos from the weekend!", "news@photos.example", None),
        ("Can you send me the slides?", "Anna <anna@example.com>", 2),
        ("Invoice 2231 for December is attached.", "billing@acme.example", 2),
    ],
)
def test_sender_and_kind_rank_the_rest(text, sender, level):
    assert judge(text, "", sender).level == level


def test_an_event_starting_within_hours_is_time_critical_whatever_its_words():
    soon = {"change": "new", "title": "Sync", "start": "2027-01-06T07:30:00+01:00"}
    later = {"change": "new", "title": "Sync", "start": "2027-02-06T07:30:00+01:00"}
    assert urgency.judge_calendar(soon, NIGHT, BERLIN).level == 1
    assert urgency.judge_calendar(later, NIGHT, BERLIN).level == 2
    moved_away = {
        "change": "changed",
        "title": "Sync",
        "start": "2027-02-06T07:30:00+01:00",
        "previous": {"start": "2027-01-06T05:00:00+01:00"},
    }
    assert urgency.judge_calendar(moved_away, NIGHT, BERLIN).level == 1  # it was about to start


def test_arousal_names_only_the_urgent_items_with_their_rule():
    items = [
        {"buffer_id": 1, "channel": "email", "text": "Dinner tonight?", "payload": {"from": "sam@example.com"}},
        {
            "buffer_id": 2,
            "channel": "email",
            "text": "Your son has a high fever, please pick him up",
            "payload": {"from": "office@kita.example"},
        },
    ]
    woke = triage.arousal(items, NIGHT, BERLIN)
    assert woke == {"urgent": True, "buffer_ids": [2], "reason": "email: situation: your child needs you"}
    ranked = {e["buffer_ids"][0]: e for e in triage.triage(items, NIGHT, BERLIN)["items"]}
    assert (ranked[2]["priority"], ranked[2]["action"]) == (1, "inbox")
    assert (ranked[1]["priority"], ranked[1]["action"]) == (2, "inbox")
    assert ranked[2]["reason"] == "situation: your child needs you"


DAY = datetime(2027, 1, 12, 10, 0, tzinfo=BERLIN)


def mail(buffer_id, text, subject, sender, bulk=None):
    payload = {"subject": subject, "from": sender, **({"bulk": bulk} if bulk else {})}
    return {"buffer_id": buffer_id, "channel": "email", "text": text, "payload": payload}


def test_bulk_mail_is_dropped_unless_its_situation_or_a_bill_needs_the_user():
    items = [
        # a social network's notification, sent automatically: nothing for the user, even with a question in it
        mail(
            1,
            "Anna commented on your photo: “Are you coming on Saturday?” See all comments.",
            "Anna commented on your photo",
            "notification@social.example",
            "it was sent automatically",
        ),
        mail(
            2,
            "New followers this week. Do you know Ben?",
            "You have 3 new followers",
            "hi@friendnet.example",
            "Precedence: bulk",
        ),
        mail(
            3,
            "URGENT: last chance to see who viewed your profile",
            "Who viewed your profile",
            "hi@friendnet.example",
            "it has a List-Unsubscribe header",
        ),
        # airlines and utilities send automatically too: a cancelled flight and a bill still reach the user
        mail(
            4,
            "Your flight LH 123 to Rome has been cancelled.",
            "Flight cancelled",
            "noreply@lufthansa.example",
            "it was sent automatically",
        ),
        mail(
            5,
            "Your bill for December is 84.20 EUR. Please pay by 26 January 2027.",
            "Your electricity bill for December",
            "billing@stadtwerke.example",
            "it was sent automatically",
        ),
    ]
    ranked = {e["buffer_ids"][0]: e for e in triage.triage(items, DAY, BERLIN)["items"]}
    assert [ranked[i]["action"] for i in (1, 2, 3)] == ["drop"] * 3
    assert ranked[1]["reason"] == "bulk mail (it was sent automatically) about nothing that needs you"
    assert (ranked[4]["action"], ranked[4]["priority"]) == ("inbox", 1)
    assert (ranked[5]["action"], ranked[5]["priority"]) == ("inbox", 2)
    assert ranked[5]["reason"].startswith("a bill from billing@stadtwerke.example: 84.20 EUR")
    # the cancelled flight is urgent; the bill to pay by a date wakes a sync too, so that its payment task is
    # proposed the day it comes, not the next morning
    assert triage.arousal(items, DAY, BERLIN)["buffer_ids"] == [4, 5]


def test_a_renewal_notice_with_a_date_needs_the_user():
    item = mail(
        1,
        "Your car insurance renews on 1 March 2027. Your new premium is 412.00 EUR a year.",
        "Your car insurance renewal",
        "service@allsafe.example",
    )
    (entry,) = triage.triage([item], DAY, BERLIN)["items"]
    assert (entry["action"], entry["priority"]) == ("inbox", 2)
    assert entry["reason"].startswith("a renewal notice from service@allsafe.example: car insurance")


# The routine-sender screen (actors/ras.py) asks a model about anything `pressing` finds: it errs wide.
@pytest.mark.parametrize(
    "text",
    [
        "School closes at 13:00, please collect your children",  # judge_message ranks this 2: no "pick up"
        "Your flight LH 123 has been cancelled. Unsubscribe from these alerts",  # a promotion's footer hides it there
        "Your card was blocked after a suspicious payment",
        "No water in your street from 14:00",  # a time today
        "Your parking permit expires on 7 Jan",  # a date by tomorrow (NIGHT is 6 Jan)
        "The boiler service is delayed",
        "Please call us back asap about your account",
    ],
)
def test_pressing_finds_what_may_not_wait_for_the_morning(text):
    assert urgency.pressing(text, NIGHT, BERLIN) is not None


@pytest.mark.parametrize(
    "text",
    [
        "Your order has shipped. It arrives in 3 to 5 days.",
        "Your monthly statement is ready to view.",
        "Class schedule changes next month",
        "Receipt for your storage plan: 2.99 EUR",
    ],
)
def test_pressing_leaves_a_routine_notice_alone(text):
    assert urgency.pressing(text, NIGHT, BERLIN) is None


def test_the_day_a_mail_was_sent_is_no_date_in_it_to_act_on():
    sent = "Email from noreply@praxis.example: Your appointment\nSent Wed 06 Jan 2027 03:10\nHello,\n\n"
    payload = {"channel": "email", "from": "noreply@praxis.example", "subject": "Your appointment"}
    quiet = triage.judge({"text": sent + "The details are in the app.", "payload": payload}, NIGHT, BERLIN)
    assert quiet.level is None and "date" not in quiet.rule
    found = triage.judge({"text": sent + "Your appointment is on Friday 8 Jan.", "payload": payload}, NIGHT, BERLIN)
    assert found.level == 2 and "8 Jan" in found.rule, "a date in the body still counts"


TWO_AM = datetime(2027, 1, 14, 2, 0, tzinfo=BERLIN)


@pytest.mark.parametrize(
    "text, subject, sender, emergency",
    [
        (
            "Water is coming through my kitchen ceiling from your flat, I think a pipe has burst.",
            "Water!",
            "Frau Müller <mueller@neighbours.example>",
            "a water leak",
        ),
        (
            "There is water coming through the ceiling of the flat below yours.",
            "Water leak",
            "info@hausverwaltung.example",
            "a water leak",
        ),
        (
            "Water is leaking from your flat into the one below. Turn off the main valve and call us back at once.",
            "URGENT: water leak",
            "notdienst@hausverwaltung.example",
            "a water leak",
        ),
        (
            "It smells of gas in the staircase, the fire brigade is on its way.",
            "Gas",
            "Tom <tom@example.com>",
            "a gas leak",
        ),
        (
            "Your dad collapsed, the ambulance is taking him to the Charité.",
            "Dad",
            "Mum <mum@family.example>",
            "a medical emergency",
        ),
        (
            "The police called: your car was broken into, they need you at the station.",
            "Your car",
            "neighbour@example.com",
            "the police",
        ),
        (
            "Because of a heating failure the kita closes today at 10:00. Please collect your child.",
            "Kita closed",
            "kita@sonnenschein.example",
            "your child's school or care closing today",
        ),
        (
            "Your train ICE 571 at 06:10 today has been cancelled.",
            "Cancellation",
            "noreply@bahn.example",
            "travel cancelled or moved within 12 hours",
        ),
    ],
)
def test_clear_emergencies_may_wake_the_user(text, subject, sender, emergency):
    assert urgency.emergency(text, subject, sender, TWO_AM, BERLIN) == emergency
    assert judge(text, subject, sender, now=TWO_AM).level == 1


@pytest.mark.parametrize(
    "text, subject, sender",
    [
        ("Burst pipe? Water damage? Our plumbers come 24/7 to your home.", "Help is near", "info@plumb.example"),
        (
            "The police are at your door? No: our new alarm system keeps burglars out.",
            "Safe at home",
            "Alarm Shop <info@shop.example>",
        ),
        ("Your son has a high fever, please pick him up as soon as you can.", "Leo", "office@kita-sonnenschein.de"),
        ("The kita is closed on 20 January for a training day.", "Training day", "kita@sonnenschein.example"),
        ("Your flight to Lisbon on 3 March has been moved to 10:45.", "Schedule change", "noreply@skyair.example"),
        ("Hi! I'm in town next week, shall we have coffee?", "Coffee", "Lena <lena@friends.example>"),
    ],
)
def test_what_is_not_a_clear_emergency_waits_for_the_morning(text, subject, sender):
    assert urgency.emergency(text, subject, sender, TWO_AM, BERLIN) is None


def test_a_mails_today_is_the_day_it_was_sent():
    sent = datetime(2027, 1, 19, 8, 0, tzinfo=BERLIN)
    text = "Because of a heating failure the school closes at 13:00 today."
    same_day = datetime(2027, 1, 19, 9, 30, tzinfo=BERLIN)
    next_day = datetime(2027, 1, 20, 9, 30, tzinfo=BERLIN)
    assert urgency.emergency(text, "Info", "office@school.example", same_day, BERLIN, sent) is not None
    assert urgency.emergency(text, "Info", "office@school.example", next_day, BERLIN, sent) is None
    assert urgency.judge_message(text, "Info", "office@school.example", next_day, BERLIN, sent).level != 1


def test_a_newsletters_closure_is_news_about_others_but_a_schools_list_mail_is_not():
    now = datetime(2027, 1, 19, 9, 0, tzinfo=BERLIN)
    digest = {
        "text": "Today: the ring road is closed, the pool closes early today, weather mild.",
        "payload": {
            "subject": "City News morning digest",
            "from": "digest@citynews.example",
            "bulk": "List-Unsubscribe",
        },
    }
    school = {
        "text": "Because of a heating failure the school closes at 13:00 today.",
        "payload": {"subject": "Information for parents", "from": "office@school.example", "bulk": "List-Id"},
    }
    assert triage.judge(digest, now, BERLIN).level is None
    assert triage.judge(school, now, BERLIN).level == 1


def test_travel_cancelled_for_tomorrow_wakes_the_user_the_night_before_but_not_at_two_in_the_morning():
    text = "Your flight tomorrow has been cancelled. We have rebooked you."
    late = datetime(2027, 1, 13, 23, 30, tzinfo=BERLIN)
    assert (
        urgency.emergency(text, "Flight", "noreply@skyair.example", late, BERLIN)
        == "travel cancelled or moved within 12 hours"
    )
    assert urgency.emergency(text, "Flight", "noreply@skyair.example", TWO_AM, BERLIN) is None  # that is a day on


def test_a_letters_own_date_line_is_not_when_anything_happens():
    now = datetime(2027, 1, 19, 9, 0, tzinfo=BERLIN)
    letter = {
        "text": "Email from info@pool.example: Repairs\nBerlin, 19 January 2027\n\nDear guests,\n"
        "the pool is closed for repairs.",
        "payload": {"subject": "Repairs", "from": "Pool Nord <info@pool.example>"},
    }
    assert triage.judge(letter, now, BERLIN).level != 1
    letter["text"] = letter["text"].replace("closed for repairs", "closed today for repairs")
    assert triage.judge(letter, now, BERLIN).level == 1


@pytest.mark.parametrize(
    "subject, body",
    [
        (
            "Your appointment tomorrow",
            "Unfortunately Dr. Lenz is ill. Your appointment tomorrow has been moved from 09:00 to 11:30.",
        ),
        ("Terminänderung", "Sehr geehrte Frau Weber, Ihr Termin morgen wurde von 09:00 auf 11:30 Uhr verschoben."),
        (
            "Zugausfall",
            "Ihr Zug RE1 morgen um 06:12 ab Berlin Ostbahnhof fällt aus. Bitte nutzen Sie den RE1 um 06:42.",
        ),
        ("Kita morgen geschlossen", "Liebe Eltern, wegen eines Wasserschadens bleibt die Kita morgen geschlossen."),
        ("Schwimmkurs", "Liebe Eltern, der Schwimmkurs heute um 17:00 fällt leider aus, weil das Bad geschlossen ist."),
        ("Wasser", "Liebe Mieter, morgen von 8 bis 12 Uhr wird das Wasser im ganzen Haus abgestellt."),
        (
            "Bauarbeiten",
            "Wegen Bauarbeiten kommt es morgen zwischen 9 und 13 Uhr in Ihrer Straße zu einer Stromunterbrechung.",
        ),
    ],
)
def test_a_change_today_or_tomorrow_is_urgent_in_german_or_english(subject, body):
    evening = datetime(2027, 2, 8, 18, 0, tzinfo=BERLIN)
    text = f"Email from info@service.example: {subject}\nSent Mon 08 Feb 2027 17:30\n{body}"
    payload = {
        "channel": "email",
        "subject": subject,
        "from": "info@service.example",
        "date": "2027-02-08T17:30:00+01:00",
    }
    found = triage.judge({"text": text, "payload": payload}, evening, BERLIN)
    assert found.level == 1 and found.situation, found.rule


@pytest.mark.parametrize(
    "text",
    [
        "Liebe Eltern, morgen ist Wandertag. Die Kinder brauchen festes Schuhwerk und ein Lunchpaket.",
        "Dear parents, tomorrow is sports day: pupils need to bring trainers and a water bottle.",
    ],
)
def test_what_a_child_needs_with_them_tomorrow_is_told_now(text):
    found = judge(text, "Wandertag", "info@school.example", now=datetime(2027, 1, 6, 9, 0, tzinfo=BERLIN))
    assert found.level == 1, found


@pytest.mark.parametrize(
    "subject, sender, text",
    [
        (
            "Wichtig: Ihre Karte wird gesperrt",
            "service@sparkasse-online.example",
            "Ihre Karte wird morgen gesperrt, wenn Sie Ihre Daten nicht bestätigen: https://sparkasse-sicherheit.example",
        ),
        (
            "Urgent request",
            "ceo@company-mail.example",
            "Hi, I need you to buy 5 Amazon gift cards for a client today. Send me the codes asap.",
        ),
        (
            "Payment declined",
            "noreply@netflix-billing.example",
            "Update your billing information within 48 hours to avoid suspension: https://netflix-billing.example",
        ),
    ],
)
def test_a_threat_with_a_link_or_a_gift_card_errand_reads_like_phishing(subject, sender, text):
    assert urgency.phishing(text, subject, sender)


def test_a_dunning_letter_that_threatens_a_block_without_a_link_is_still_a_bill():
    from wilson.model.offline import bills

    text = (
        "Ihre Rechnung über 89,90 € ist offen. Bitte zahlen Sie bis zum 20.01.2027, sonst wird Ihr Anschluss gesperrt."
    )
    assert not urgency.phishing(text, "Mahnung", "mahnung@telefon.example")
    found = bills.task_for(text, {"subject": "Mahnung", "from": "mahnung@telefon.example"}, NIGHT, BERLIN)
    assert found is not None and found.title.startswith("Pay")
