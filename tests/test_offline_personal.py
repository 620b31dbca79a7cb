"""wilson/model/offline/personal.py and the triage around it: a person's mail is told, now or in the morning
briefing, when it asks something of the user; news, thanks, greetings and "sounds good" are not, so the briefing
lists what needs the user instead of everything that arrived."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from wilson.model.offline import triage

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2027, 3, 10, 10, 0, tzinfo=BERLIN)  # a Wednesday


def judged(subject: str, sender: str, body: str):
    """The offline triage of a mail as the email channel writes it, sent an hour ago."""
    text = f"Email from {sender}: {subject}\nSent Wed 10 Mar 2027 09:00\n{body}"
    payload = {"channel": "email", "subject": subject, "from": sender, "date": "2027-03-10T09:00:00+01:00"}
    return triage.judge({"text": text, "payload": payload}, NOW, BERLIN)


@pytest.mark.parametrize(
    "subject, body",
    [
        ("Greetings from Crete!", "Hi! The weather is amazing and the kids love the beach. We're back on Saturday."),
        ("Thank you", "Thank you so much for the flowers on Sunday, they are lovely. Dad sends his love. Mum"),
        (
            "Re: slides",
            "Sounds good, thanks!\n\nTom\n\n> On Tue, 9 Mar 2027 you wrote:\n> Let me know if anything is missing.",
        ),
        ("FYI: badge readers", "FYI: from Monday the garage uses new badge readers. Nothing you need to do."),
        ("She's here!", "Little Mia was born yesterday, 3.4 kg, both healthy and happy! Photos soon."),
        ("Photos", "Here are the photos from Saturday's hike. What a day! See you soon, Ben"),
        ("Wieder zu Hause", "Hallo mein Schatz, wir sind gestern gut aus dem Urlaub zurück. Wie geht's dir? Oma"),
        ("Hello", "Hope you're well! We finally moved into the new flat last week. Love, Kim"),
    ],
)
def test_a_persons_mail_that_asks_nothing_is_not_told(subject, body):
    judgement = judged(subject, "anna.koenig@gmail.example", body)
    assert judgement.level is None, judgement.rule
    assert "asks nothing of you" in judgement.rule


@pytest.mark.parametrize(
    "subject, body",
    [
        ("budget file", "Please send me the budget file when you get to it, I need it for the review."),
        ("Dinner", "Dinner at ours on Friday at 7? Bring the kids."),
        ("BBQ", "We're firing up the grill on Saturday from 6 pm. Come by, bring whoever you like!"),
        ("Kurze Frage", "Kannst du mir die Nummer vom Klempner schicken?"),
        ("Re: Dinner on Friday?", "Works for me! 19:30 at Luigi's? I'll book the table if you confirm."),
        ("Office", "Heads-up: the office is closed on Friday because of the power works."),
        ("Friday", "My flight lands Friday at 18:40 at BER, terminal 1."),
        ("Besuch", "Wir kommen am Samstag gegen 15 Uhr bei euch an."),
    ],
)
def test_a_persons_mail_that_asks_or_changes_something_is_still_told(subject, body):
    judgement = judged(subject, "anna.koenig@gmail.example", body)
    assert judgement.level in (1, 2, 3), judgement.rule
