"""What the offline rules tell of a mail says its point: the new time of a moved appointment, what replaces a cancelled
train, what to do in a leak, where a summons or a collection is, what a task from a mail asks in the sender's words;
and what must stay quiet does (a parcel-fee scam, a refund scam, a digest without list headers, a restaurant's
confirmed table). Each case is a kind the blind batches showed the rules missing."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from wilson.model.offline import asks, triage, urgency
from wilson.model.offline.point import ask, point
from wilson.model.offline.quoted import quotes

BERLIN = ZoneInfo("Europe/Berlin")


def mail(subject: str, body: str, sender: str, name: str = "", sent: str = "2027-03-02T09:00:00") -> dict:
    at = datetime.fromisoformat(sent).replace(tzinfo=BERLIN)
    who = f"{name} <{sender}>" if name else sender
    text = f"Email from {who}: {subject}\nSent {at:%a %d %b %Y %H:%M}\n{body.strip()}"
    payload = {"channel": "email", "from": sender, "from_name": name, "subject": subject, "date": at.isoformat()}
    return {"buffer_id": 1, "channel": "email", "text": text, "payload": payload}


def judged(item: dict, now: str) -> urgency.Judgement:
    return triage.judge(item, datetime.fromisoformat(now).replace(tzinfo=BERLIN), BERLIN)


def task(item: dict, now: str):
    at = datetime.fromisoformat(now).replace(tzinfo=BERLIN)
    return asks.mail_task(item["text"], item["payload"], at, BERLIN, letter=item["text"])


@pytest.mark.parametrize(
    "text, said",
    [
        # an abbreviation's dot in a greeting, and a greeting that names two
        ("Dear residents of Gubener Str. 14,\n\nthere is a fire in the basement.", "There is a fire in the basement."),
        (
            "Sehr geehrte Steuerzahlerin, sehr geehrter Steuerzahler,\n\nSie haben Anspruch auf eine Erstattung.",
            "Sie haben Anspruch auf eine Erstattung.",
        ),
        # a call for attention is no point
        ("Milan, bist du zuhause? Aus deiner Wohnungstür kommt Rauch.", "Aus deiner Wohnungstür kommt Rauch."),
        # a day's dot before its month, or a span of days, ends no sentence
        ("Wir sind vom 3. bis 10. April in Dresden. Könnten Sie gießen?", "Wir sind vom 3. bis 10. April in Dresden."),
        (
            "Bitte teilen Sie uns den Stand bis zum 28. Februar 2027 mit.",
            "Bitte teilen Sie uns den Stand bis zum 28. Februar 2027 mit.",
        ),
    ],
)
def test_the_point_of_a_mail_is_its_first_sentence_that_says_something(text, said):
    assert point(text) == said


def test_a_task_from_a_mail_quotes_what_is_needed_and_the_ask_with_its_date():
    item = mail(
        "Action required: your application GWF071234567",
        """Dear Applicant,

Your application for a Standard Visitor visa (reference GWF071234567) is on hold.
We need your bank statements for the last three months.
Please upload them in your application account by 4 March 2027.

UK Visas and Immigration""",
        "no-reply@ukvisas-centre.example",
        "UK Visa Application Centre",
        sent="2027-02-25T17:00:00",
    )
    notes = task(item, "2027-02-25T17:05:00").notes
    assert "“We need your bank statements for the last three months.”" in notes
    assert "“Please upload them in your application account by 4 March 2027.”" in notes


def test_a_quoted_sentence_loses_the_clause_with_a_link_and_the_list_items_stay_apart():
    said = quotes(
        "Um Ihren Schaden regulieren zu können, benötigen wir noch:\n- die Kaufrechnung des Fahrrads\n"
        "- das Aktenzeichen der Polizei\nBitte reichen Sie die Unterlagen bis zum 19. März 2027 ein, per Post oder an "
        "schaden@versicherung.example.",
        set(),
        "19. März 2027",
    )
    assert said == (
        "“Um Ihren Schaden regulieren zu können, benötigen wir noch: - die Kaufrechnung des Fahrrads” "
        "“Bitte reichen Sie die Unterlagen bis zum 19. März 2027 ein”"
    )


@pytest.mark.parametrize(
    "subject, body, sender, now, verb, due",
    [
        # an ask after what it is for
        (
            "Your price guarantee ends on 31 March 2027",
            "To keep a fixed price, choose one of our new tariffs in your customer account by 15 March 2027.",
            "kundenservice@strom.example",
            "2027-02-01T09:30:00",
            "Choose",
            "2027-03-14",
        ),
        # German: let me know by Sunday, show your ID by a date, book by the end of next week
        (
            "Kleine Bitte",
            "Könnten Sie unsere Tomaten gießen? Geben Sie mir bis Sonntag Bescheid?",
            "renate.koehler@t-online.example",
            "2027-03-24T18:00:00",
            "Reply",
            "2027-03-27",
        ),
        (
            "Aktualisierung Ihrer Kundendaten",
            "Bitte legen Sie uns bis zum 30.04.2027 Ihren gültigen Personalausweis in einer Filiale vor.",
            "service@sparkasse.example",
            "2027-04-06T10:00:00",
            "Send",
            "2027-04-29",
        ),
        (
            "Ihre Laborergebnisse",
            "Bitte vereinbaren Sie bis Ende nächster Woche telefonisch einen Termin.",
            "praxis@hausarzt.example",
            "2027-03-04T12:00:00",
            "Book",
            "2027-03-11",
        ),
        # a confirmed appointment with papers to bring: get them ready the day before
        (
            "Appointment confirmation - UK visa application",
            "Your appointment is confirmed for 24 February 2027 at 10:15. Please bring your passport and two photos.",
            "noreply@vfs.example",
            "2027-02-10T14:00:00",
            "Prepare",
            "2027-02-23",
        ),
    ],
)
def test_a_mail_that_asks_in_other_words_becomes_a_task_due_in_time(subject, body, sender, now, verb, due):
    found = task(mail(subject, body, sender, sent=now), now)
    assert found is not None and found.rule.split(": ")[1].startswith(verb.lower())
    assert found.due.isoformat() == due


def test_a_car_brought_at_a_new_time_is_no_list_of_things_to_bring():
    body = "We have to move your appointment tomorrow from 08:00 to 13:30. Please bring the car at 13:30 instead."
    found = task(mail("Your appointment tomorrow", body, "termine@werkstatt.example"), "2027-03-02T09:00:00")
    assert found is None


@pytest.mark.parametrize(
    "subject, body, sender, name",
    [
        (
            "Your parcel is waiting: customs fee outstanding",
            "A customs fee of 1.99 EUR is outstanding. Please pay it by today here: https://dhl-gebuehr.example.top/pay",
            "info@dhl-paket.example.top",
            "DHL Paket",
        ),
        (
            "Steuererstattung: 264,80 EUR für Sie bereit",
            "Sie haben Anspruch auf eine Steuererstattung von 264,80 EUR. Bitte reichen Sie Ihren Antrag innerhalb von "
            "48 Stunden ein: https://bzst-erstattung.example.com/antrag",
            "erstattung@bzst-online.example.com",
            "Bundeszentralamt für Steuern",
        ),
    ],
)
def test_a_fee_or_a_refund_through_a_link_is_phishing(subject, body, sender, name):
    assert judged(mail(subject, body, sender, name), "2027-03-02T09:05:00").level is None


@pytest.mark.parametrize(
    "subject, body, sender",
    [
        (
            "Your week in the neighbourhood",
            "A new bakery opens on Monday. To stop receiving this weekly email, click here.",
            "redaktion@stimme.example",
        ),
        (
            "Your table for 4 on Saturday",
            "We are happy to confirm your reservation for 4 people on Saturday at 19:30.",
            "info@trattoria.example",
        ),
    ],
)
def test_a_digest_without_list_headers_and_a_confirmed_table_stay_quiet(subject, body, sender):
    assert judged(mail(subject, body, sender), "2027-03-02T09:05:00").level is None


@pytest.mark.parametrize(
    "subject, body, sender, rule",
    [
        (
            "Your mother",
            "The emergency doctor admitted her to the Vivantes Klinikum Neukölln at 02:05.",
            "nachtdienst@pflegedienst.example",
            "emergency: a medical emergency",
        ),
        (
            "Rauch!!",
            "Aus deiner Wohnungstür kommt Rauch, ich habe die Feuerwehr gerufen.",
            "petra@web.example",
            "emergency: a fire",
        ),
        (
            "Wasser!!",
            "Bei uns tropft gerade Wasser durch die Küchendecke, das muss aus Ihrer Wohnung kommen!",
            "sabine@gmx.example",
            "emergency: a water leak",
        ),
    ],
)
def test_a_night_emergency_in_other_words_wakes_the_user(subject, body, sender, rule):
    found = judged(mail(subject, body, sender, sent="2027-03-02T02:30:00"), "2027-03-02T02:35:00")
    assert (found.level, found.rule) == (1, rule)


def test_kind_regards_is_no_child():
    body = "Dr. Aydin has to attend an emergency. Please call us. Kind regards, your practice"
    assert (
        urgency.emergency(
            body, "Your appointment", "praxis@hausarzt.example", datetime(2027, 3, 2, 2, tzinfo=BERLIN), BERLIN
        )
        is None
    )


NIGHT = datetime(2027, 4, 24, 23, 55, tzinfo=BERLIN)


@pytest.mark.parametrize(
    "subject, body, sender",
    [
        (
            "Bruno – emergency, please call!!",
            "Bruno ate most of a bar of dark chocolate. I'm at the Tierklinik with him. They need the owner's OK. "
            "Please call me (0176 555 0142) as soon as you see this!!",
            "hannah.weiss@mailbox.example",
        ),
        (
            "NOTRUF: Ihre Mutter – bitte kommen",
            # (no ambulance named: the sender's own "NOTRUF", a fall and the coming asked at once are the emergency)
            "Ihre Mutter ist im Bad gestürzt und kommt allein nicht hoch. Bitte kommen Sie so schnell wie möglich mit "
            "Ihrem Wohnungsschlüssel.",
            "leitstelle@hausnotruf-sued.example",
        ),
    ],
)
def test_an_emergency_the_sender_names_so_with_a_call_asked_at_once_wakes(subject, body, sender):
    assert (
        urgency.emergency(body, subject, sender, NIGHT, BERLIN)
        == "an emergency, and you are asked to call or come at once"
    )


def test_an_ambulance_on_its_way_in_german_is_a_medical_emergency():
    body = "Ihre Mutter ist gestürzt. Der Rettungsdienst ist alarmiert und auf dem Weg."
    assert (
        urgency.emergency(body, "Ihre Mutter", "leitstelle@hausnotruf.example", NIGHT, BERLIN) == "a medical emergency"
    )


def test_a_vet_s_routine_mail_or_a_word_of_emergency_aside_does_not_wake():
    for subject, body in (
        ("Bruno's vaccination", "Bruno is due for his vaccination. Please call us to book a slot."),
        ("Emergency numbers over Easter", "Our practice is closed over Easter; in an emergency call 030 555 0198."),
    ):
        assert urgency.emergency(body, subject, "praxis@tierarzt.example", NIGHT, BERLIN) is None, subject


def test_what_is_asked_after_a_dash_is_told_with_the_point():
    body = (
        "Ihre Mutter hat ihren Hausnotruf ausgelöst. Unser Schlüsseldepot ist leer – bitte kommen Sie mit Ihrem "
        "Wohnungsschlüssel oder rufen Sie uns sofort zurück."
    )
    assert "Wohnungsschlüssel" in ask(body)


def test_a_contract_s_new_instalment_is_told():
    body = "From 1 March 2027 the working price rises. Your monthly instalment will therefore change from 96 EUR to 109 EUR."
    found = judged(mail("Price adjustment for your gas contract", body, "service@gasag.example"), "2027-01-20T10:00:00")
    assert found.level == 2 and found.rule.startswith("a change to what you pay")


@pytest.mark.parametrize("subject", ["Abwesenheitsnotiz: Re: Bücherliste Lesekreis", "Automatic reply: Re: invoice"])
def test_an_automatic_reply_sent_without_its_headers_asks_nothing(subject):
    body = (
        "Vielen Dank für Ihre Nachricht. Ich bin bis einschließlich 17.05.2027 nicht im Haus. In dringenden Fällen "
        "wenden Sie sich bitte an info@stadtbibliothek.example."
    )
    found = judged(mail(subject, body, "j.hoffmann@stadtbibliothek.example", "Jana Hoffmann"), "2027-05-07T10:00:00")
    assert found.level is None and "automatic reply" in found.rule


def test_a_task_from_a_long_subject_is_cut_at_a_word():
    subject = "Kindergeld – Kindergeldnummer 155FK704219 – Nachweis erforderlich"
    body = "Bitte reichen Sie den Nachweis bis zum 07.05.2027 ein."
    due = task(mail(subject, body, "familienkasse@arbeitsagentur.example", "Familienkasse"), "2027-04-06T10:00:00")
    assert due is not None and due.title.endswith("Nachweis…") and "erforde" not in due.title


def test_a_school_s_word_about_an_absence_is_no_automatic_reply():
    body = "Leon ist heute nicht in der Schule erschienen und nicht entschuldigt. Bitte rufen Sie uns umgehend an."
    found = judged(mail("Abwesenheit Ihres Sohnes Leon", body, "sekretariat@schule.example"), "2027-03-02T09:30:00")
    assert found.level == 1


@pytest.mark.parametrize(
    "subject, body, sender",
    [
        ("Notfall-Kontaktdaten", "Bitte aktualisieren Sie umgehend Ihre Daten im Elternportal.", "kita@kita.example"),
        ("Hausnotruf für Oma", "Wir sollten für Oma einen Hausnotruf beantragen, ruf mich an.", "anna@mail.example"),
        ("Rechnung Hausnotruf Januar", "Ihre Rechnung für Januar liegt bei.", "service@johanniter.example"),
    ],
)
def test_an_emergency_word_in_a_routine_mail_does_not_wake(subject, body, sender):
    assert urgency.emergency(body, subject, sender, NIGHT, BERLIN) is None


def test_what_will_not_happen_as_planned_is_quoted_with_what_happens_instead_and_the_other_way_on_offer():
    said = quotes(
        "wegen des Warnstreiks können wir Ihre Lieferung morgen leider nicht wie üblich um 6:00 Uhr bringen. Wir kommen "
        "voraussichtlich gegen 10:30 Uhr.\n\nAlternativ können Sie die Ware ab 5:30 Uhr selbst in unserem Lager abholen."
        "\n\nBitte antworten Sie uns bis heute 20:00 Uhr, was Ihnen lieber ist.",
        set(),
        "heute 20:00 Uhr",
    )
    assert "gegen 10:30 Uhr" in said and "ab 5:30 Uhr selbst" in said and "bis heute 20:00 Uhr" in said
    # a point that says its own time, and nothing given up, keeps the later times out
    plain = quotes("Your appointment is on Monday at 9:00. Parking opens at 8:30.", set(), "")
    assert "8:30" not in plain


def test_a_lesson_cancelled_is_quoted_with_the_time_offered_instead():
    said = quotes(
        "leider ist Ihr Fahrlehrer krank, die Fahrstunde morgen um 7:30 Uhr fällt deshalb aus. Wir könnten Ihnen "
        "morgen stattdessen 15:15 Uhr anbieten.\n\nBitte geben Sie uns bis heute 21:00 Uhr kurz Bescheid, ob das passt.",
        set(),
        "heute 21:00 Uhr",
    )
    assert "15:15 Uhr" in said and "21:00 Uhr" in said
