"""What the thirteenth blind batch's dev half said that the rules misread (tests/data/fresh/BRIEF.md, "Thirteenth
batch"), each as a rule: a yes said as "sieht gut aus, mach so"; a no in Polish with its reason; "alle dreii"; a list
whose items carry a weekday before their date and a sum after a comma; a request after a sentence of news; a thing
"fällig" with no sum is no bill; a deed done today at an office is no plan for that office."""

from __future__ import annotations

from datetime import datetime

from tests.offline_support import BERLIN, PLAYBOOK, REMINDER, TOOLS, read
from wilson.model.offline import intents, phrases
from wilson.model.offline.short_answers import short_answer


def answer(said: str, now: datetime, tasks=()) -> phrases.Reply:
    chat = phrases.Chat(text=said, now=now, tz=BERLIN, playbook=PLAYBOOK, offered=TOOLS, tasks=list(tasks))
    return intents.answer(chat)


def test_a_yes_said_as_pleased_words_in_german_french_or_polish():
    for said in (
        "sieht gut aus, mach so 🏺 danke dir",
        "klingt gut",
        "das passt so",
        "parfait, merci",
        "tak, dziękuję",
    ):
        assert read(said, pending=[REMINDER]).calls == [("decide", {"proposal": 4, "action": "approve"})], said
    # plain words alone, a question, or thanks alone are no yes
    for said in ("Aus!", "Das", "so so", "Passt das so?", "Gut?", "Mach das aus", "Merci", "Danke dir"):
        assert read(said, pending=[REMINDER]).calls == [], said
    assert short_answer("ja lass") is None and short_answer("yes off") is None
    assert short_answer("jepp alle dreii") == "yes"
    # with nothing just asked, pleased words change nothing
    assert read("sieht gut aus").calls == []


def test_a_no_in_polish_with_its_reason_turns_the_plan_down():
    said = "nie, dzięki 🙂 Bartek bucht Stand, Hotel und den Bus für das ganze Studio – nothing to plan for me"
    assert read(said, pending=[REMINDER]).calls == [("decide", {"proposal": 4, "action": "reject"})]


def test_a_list_with_a_weekday_before_each_date_and_a_sum_after_a_comma_is_a_task_each():
    now = datetime(2029, 3, 23, 17, 30, tzinfo=BERLIN)
    said = (
        "Drei Dinge für meine Liste: den Fortbildungsnachweis an die Tierärztekammer bis Donnerstag, 29.3., die "
        "Anmeldung zum Röntgen-Aktualisierungskurs by march 28, und die Praxis-Haftpflicht, 312 €, bis 15.4."
    )
    assert [(args["title"], args["due"]) for _, args in answer(said, now).calls] == [
        ("Fortbildungsnachweis an die Tierärztekammer", "2029-03-29"),
        ("Anmeldung zum Röntgen-Aktualisierungskurs", "2029-03-28"),
        ("Praxis-Haftpflicht", "2029-04-15"),
    ]
    # a sum or a day after a comma is an item of its own when the item before it has its day already
    assert [args["title"] for _, args in read("add: pay 50 € to Tom by Friday, 20 € to Anna by Monday").calls] == [
        "Pay 50 € to Tom",
        "20 € to Anna",
    ]
    said = "3 Sachen für die Liste bitte: die Kalibrierung bis Mittwoch, 24. Januar, und das Seminar bis 2. Februar"
    assert [args["due"] for _, args in answer(said, datetime(2029, 1, 8, 18, 30, tzinfo=BERLIN)).calls] == [
        "2029-01-24",
        "2029-02-02",
    ]


def test_a_request_after_a_sentence_of_news_is_read():
    said = (
        "und noch was: die Schultüte bastel ich mit Oma Gerda. erinner mich am Samstag, 4. August um 10, Pappe und "
        "Krepppapier zu kaufen"
    )
    (call,) = answer(said, datetime(2029, 7, 2, 18, 40, tzinfo=BERLIN)).calls
    assert call == ("remind", {"text": "Pappe und Krepppapier zu kaufen", "at": "2029-08-04T10:00:00+02:00"})
    assert read("Long day at work. Anna is going to Rome on Friday.").calls == []
    # a sentence that does not begin as a request is more news, typed in lower case or not
    assert read("the boss is on holiday. team lunch friday at 12.").calls == []
    # a sentence that names nothing of its own ("ping me again") is about what was said before it: no reminder "again"
    assert read("ugh the parking permit, not this weekend. ping me again monday").calls == []


def test_a_thing_due_with_no_sum_is_a_task_not_a_bill():
    said = "Die HU für unseren Leichenwagen ist fällig – bis 31.5. muss er beim TÜV gewesen sein. Setz mir das bitte auf die Liste."
    assert answer(said, datetime(2029, 4, 26, 15, 50, tzinfo=BERLIN)).calls == [
        ("create_task", {"title": "HU für unseren Leichenwagen", "due": "2029-05-31"})
    ]


def test_a_deed_done_today_at_an_office_plans_no_visit_to_it():
    now = datetime(2029, 2, 13, 17, 30, tzinfo=BERLIN)
    said = "Ayşe war heute für mich beim Bezirksamt – die Genehmigung fürs Ladenschild ist bis 2031 verlängert 🎉"
    assert not [name for name, _ in answer(said, now).calls if name == "create_topic"]
    # an appointment made for a day ahead is still planned
    assert [name for name, _ in answer("Termin beim Bürgeramt am 2. März", now).calls][:1] == ["create_topic"]


def test_a_yes_with_remind_me_only_the_day_before_keeps_the_day_and_drops_the_earlier_heads_ups():
    from wilson.model.offline import answers

    bill = {
        "id": 1,
        "items": [
            {
                "position": 1,
                "tool": "create_task",
                "description": "New task: Pay the bill from Ingenieur-Haftpflicht VVaG — due Thu 31 May 2029",
                "args": {"title": "Pay the bill from Ingenieur-Haftpflicht VVaG", "due": "2029-05-31"},
            }
        ],
    }
    now = datetime(2029, 5, 4, 17, 50, tzinfo=BERLIN)
    for said in ("aber erinner mich erst am Tag vorher dran", "but remind me only the day before"):
        reply = answers.modify(bill, said, now, BERLIN)
        assert reply.calls == [
            (
                "create_task",
                {
                    "title": "Pay the bill from Ingenieur-Haftpflicht VVaG",
                    "due": "2029-05-31",
                    "escalation": "1d,overdue",
                },
            )
        ], said
    assert answers.modify(bill, "move it to 30 may", now, BERLIN).calls[0][1].get("escalation") is None
    # more said than the day before is no such quiet time
    for said in ("remind me only the day before, and on the day itself", "just the day before is fine"):
        calls = answers.modify(bill, said, now, BERLIN).calls
        assert not calls or calls[0][1].get("escalation") is None, said


def test_a_yes_then_a_request_in_a_sentence_of_its_own_is_both():
    said = "ja, 18:30 in der Bibliothek passt mir. remind me tomorrow at 16:45 to pack the laptop and the HDMI adapter"
    assert read(said, pending=[REMINDER]).calls == [
        ("decide", {"proposal": 4, "action": "approve"}),
        ("remind", {"text": "pack the laptop and the HDMI adapter", "at": "2027-01-06T16:45:00+01:00"}),
    ]
