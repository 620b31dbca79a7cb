"""wilson/model/offline/notices.py and the triage around it: a mail that only informs is dropped, so the user hears
nothing of it; one that asks something, changes today's plans or is about the user's own appointment is still kept."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from wilson.model.offline import triage

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2027, 2, 8, 10, 0, tzinfo=BERLIN)  # a Monday


def judged(subject: str, sender: str, body: str):
    """The offline triage of a mail as the email channel writes it, sent an hour ago."""
    text = f"Email from {sender}: {subject}\nSent Mon 08 Feb 2027 09:00\n{body}"
    payload = {"channel": "email", "subject": subject, "from": sender, "date": "2027-02-08T09:00:00+01:00"}
    return triage.judge({"text": text, "payload": payload}, NOW, BERLIN)


@pytest.mark.parametrize(
    "subject, sender, body",
    [
        (
            "Your order 302-1234567 has been placed",
            "order-update@shop.example",
            "Thank you for your order! Order total: 34.99 EUR. Estimated delivery: Thursday, 11 February.",
        ),
        (
            "Your parcel is coming tomorrow",
            "noreply@dhl.example",
            "Your parcel from Shop.example will be delivered tomorrow, 09.02.2027, between 10:00 and 14:00.",
        ),
        (
            "Ihre Bestellung wurde versandt",
            "versand@shop.example",
            "Ihre Bestellung 12345 wurde heute versandt und kommt voraussichtlich am 10.02.2027 an.",
        ),
        (
            "Payment received - invoice 2027-0012",
            "billing@stadtwerke.example",
            "We have received your payment of 84.20 EUR for invoice 2027-0012 on 5 February 2027. Thank you!",
        ),
        (
            "Your receipt from Music Premium",
            "no-reply@music.example",
            "Your Premium subscription has been renewed. We charged 10.99 EUR to your card on 8 February 2027.",
        ),
        (
            "Your Uber receipt",
            "uber.receipts@uber.example",
            "Thanks for riding, Anna. Total: 18.40 EUR. Trip on 7 February.",
        ),
        (
            "Your booking at Hotel Adlon is confirmed",
            "reservations@hotel.example",
            "We look forward to welcoming you from 12 February to 14 February 2027. Check-in from 15:00.",
        ),
        (
            "Advance notice of your direct debit",
            "service@huk.example",
            "We will collect your car insurance premium of 480.00 EUR by direct debit on 15 February 2027. "
            "You don't need to do anything.",
        ),
        (
            "Invitation: Weekly sync @ Wed 10 Feb 2027 10:00 - 10:30 (CET)",
            "calendar-notification@google.example",
            "You have been invited to the following event.\nWeekly sync\nWhen: Wednesday 10 Feb 2027 10:00\n"
            "Going? Yes - Maybe - No",
        ),
        (
            "New sign-in on Firefox on Linux",
            "no-reply@accounts.example",
            "We noticed a new sign-in to your account today at 08:58. If this was you, you don't need to do anything.",
        ),
        (
            "Your password was changed",
            "security@accounts.example",
            "The password for your account was changed on 8 February 2027. If you did this, you can ignore this message.",
        ),
        (
            "Your weekly screen time report",
            "no-reply@phone.example",
            "You averaged 3h 12m of screen time per day last week.",
        ),
        (
            "Wartungsarbeiten am Samstag",
            "info@sparkasse.example",
            "Am Samstag, 13.02.2027, ist das Online-Banking von 01:00 bis 05:00 Uhr wegen Wartungsarbeiten nicht erreichbar.",
        ),
    ],
)
def test_a_mail_that_only_informs_is_dropped(subject, sender, body):
    found = judged(subject, sender, body)
    assert found.level is None, found.rule


@pytest.mark.parametrize(
    "subject, sender, body, level",
    [
        # asked by a date, whoever sends it
        (
            "Your bill for February",
            "rechnung@telekom.example",
            "Your bill for February: 39.95 EUR. Please pay by 20 February 2027.",
            2,
        ),
        # a change today: told at once, receipt-like wording or not
        (
            "Your appointment today",
            "termine@salon.example",
            "Thank you for your booking. We have to move your appointment today from 15:00 to 17:00.",
            1,
        ),
        (
            "Kopenhagener Str. 9: water supply interruption",
            "service@hausverwaltung.example",
            "The water supply in your building will be off tomorrow, 9 February, from 08:00 to 14:00.",
            1,
        ),
        # the user's own appointment or journey, from an automatic sender
        (
            "Reminder: your appointment",
            "noreply@praxis.example",
            "This is a reminder of your appointment with Dr. Lang on Wednesday, 10 February, at 10:30.",
            2,
        ),
        (
            "Check-in is open",
            "online@airline.example",
            "Check-in for your flight LH 123 to Madrid on 10 February 2027 at 07:15 is now open. Check in online now.",
            2,
        ),
    ],
)
def test_a_mail_that_asks_changes_today_or_is_about_your_plans_is_kept(subject, sender, body, level):
    found = judged(subject, sender, body)
    assert found.level == level, found.rule


@pytest.mark.parametrize(
    "subject, sender, body",
    [
        (
            "Your invoice for order 123-456",
            "invoice@shop.example",
            "Attached is the invoice for your order 123-456. The amount of 49.99 EUR was paid by PayPal.",
        ),
        (
            "Ihre Rechnung Februar 2027",
            "rechnung@mobilfunk.example",
            "Ihre Rechnung ist da. Der Betrag von 39,95 € wird am 18.02.2027 von Ihrem Konto abgebucht.",
        ),
        (
            "Reminder: Weekly sync @ Wed 10 Feb 2027 10:00 - 10:30",
            "calendar-notification@calendar.example",
            "This is a reminder for the following event.\nWeekly sync\nWed 10 Feb 2027 10:00 - 10:30",
        ),
        (
            "Ihre Buchungsbestätigung",
            "buchung@bahn.example",
            "Vielen Dank für Ihre Buchung. Ihre Fahrt am 20.02.2027 nach Hamburg, Abfahrt 08:34.",
        ),
        (
            "Meeting reminder: Team sync tomorrow",
            "no-reply@zoom.example",
            "Your meeting Team sync starts tomorrow at 10:00. Join: https://zoom.example/j/1",
        ),
        (
            "Terminbestätigung",
            "noreply@praxis.example",
            "Ihr Termin bei Dr. Weber am Dienstag, 16.02.2027 um 09:30 Uhr ist bestätigt.",
        ),
    ],
)
def test_a_paid_invoice_a_direct_debit_a_calendar_reminder_and_a_confirmation_are_dropped(subject, sender, body):
    judgement = judged(subject, sender, body)
    assert judgement.level is None, judgement.rule
