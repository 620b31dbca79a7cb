"""Messages as people type them in chat, each the tenth blind batch's misreading made a rule (tests/data/fresh/BRIEF.md,
"Tenth batch"): an emergency about one of the user's own people, a practice's holiday that is no trip, a plan asked
for after a full stop, a party the user gives, and the steps the user names while telling it."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from tests.offline_support import read
from wilson.model.offline import urgency

BERLIN = ZoneInfo("Europe/Berlin")
NIGHT = datetime(2027, 4, 22, 2, 25, tzinfo=BERLIN)
REZEPT = [{"id": 5, "title": "Get a new Rezept for my Stelara pens", "due": "2027-03-11", "status": "open"}]


def test_a_care_home_writing_at_night_that_the_users_father_left_unnoticed_wakes_the_user():
    body = (
        "Ihr Vater, Herr Günther Kraus, hat heute Nacht gegen 1:45 Uhr unbemerkt den Wohnbereich verlassen. Wir haben "
        "um 2:10 Uhr die Polizei verständigt, die jetzt nach ihm sucht. Bitte rufen Sie uns sofort an."
    )
    subject = "DRINGEND: Ihr Vater hat das Haus verlassen"
    judged = urgency.judge_message(body, subject, "nachtdienst@haus-lindenhof.example", NIGHT, BERLIN)
    assert judged.level == 1 and judged.rule.startswith("emergency")
    # "Let me know if anything is missing" is no one missing
    calm = urgency.judge_message("Let me know if anything is missing.", "Re: slides", "tom@example.org", NIGHT, BERLIN)
    assert calm.level != 1


def test_a_practice_closed_for_its_holiday_is_no_trip_and_the_task_named_waits_until_the_day_said():
    said = (
        "ah the gastro practice is closed till 5 March, Praxisurlaub, there's a sign on the door. so dont bother me "
        "with the Rezept before monday the 8th"
    )
    assert read(said, tasks=REZEPT).calls == [("snooze_task", {"task_id": 5, "until": "2027-02-08T09:00:00+01:00"})]


def test_a_thing_needed_before_a_day_is_due_the_day_before_and_an_emoji_between_clauses_parts_them():
    said = (
        "need a new Rezept for my Stelara pens before the 12th of March, that's when my last one's due 💉 Dr. "
        "Yıldırım's practice. can u put it on my list"
    )
    assert read(said).calls == [("create_task", {"title": "Get a new Rezept for my Stelara pens", "due": "2027-03-11"})]
    done = "got the Rezept 🙌 pens are ordered at the Apotheke, picking them up thursday"
    assert read(done, tasks=REZEPT).calls == [("complete_task", {"task_id": 5})]


def test_a_trip_that_falls_through_in_german_closes_its_topic():
    topics = [{"id": 2, "title": "Kanutour Masuren 🛶", "status": "active", "starts": "2027-06-19"}]
    said = "Kanutour fällt flach, half the group dropped out – we'll do it next year. kannst du das ganze streichen?"
    assert read(said, topics=topics, tasks=[]).calls == [("close_topic", {"topic_id": 2})]


def test_a_plan_asked_after_a_full_stop_with_the_train_and_a_step_named_is_that_plan():
    said = (
        "I'm taking my E-Jugend to the Pfingstturnier in Hamburg, 15.-16. Mai, train both ways. and I need the "
        "Einverständniserklärungen from all the parents by end of april. what do I need to sort"
    )
    calls = read(said).calls
    assert calls[0][0] == "create_topic"
    titles = [args["title"] for name, args in calls if name == "create_task"]
    assert "Book train tickets" in titles and "Book flights" not in titles and "Check in" not in titles
    steps = [args for _, args in calls if "Einverständniserklärungen" in args.get("title", "")]
    assert [args["due"] for args in steps] == ["2027-04-30"]
    assert read("what do I need to do?").calls == []  # alone it is a look at the list


def test_a_party_the_user_gives_is_planned_with_invitations_by_the_day_they_said_after_a_greeting():
    said = (
        "Guten Morgen! Bin gerade zurück. Also: ich werde am 7. August siebzig und feiere ein Gartenfest in unserer "
        "Kolonie in Britz. Could you help me plan it? Die Einladungen sollen bis Mitte Juni raus."
    )
    ((name, topic), *tasks) = read(said).calls
    assert name == "create_topic" and topic["starts"] == "2027-08-07" and "Britz" not in topic["title"]
    assert ("Send the invitations", "2027-06-15") in [(args["title"], args["due"]) for _, args in tasks]
    assert not any("present" in args["title"].lower() for _, args in tasks)  # no present for one's own party
    ((name, args), *_) = read("Emma turns 5 on Friday").calls  # someone else's birthday keeps its present
    assert name == "create_topic" and args["title"] == "Emma's birthday"


def test_nee_lass_mal_with_its_reason_is_a_no():
    proposal = {
        "id": 1,
        "just_asked": True,
        "items": [{"position": 1, "tool": "create_task", "args": {"title": "Register"}, "description": "New task: …"}],
    }
    said = "nee lass mal, Mehmet hat sich letzte Woche schon selbst online angemeldet 😊"
    assert read(said, [proposal]).calls == [("decide", {"proposal": 1, "action": "reject"})]
    assert read("nee lass mal", [proposal]).calls == [("decide", {"proposal": 1, "action": "reject"})]


def test_three_things_for_the_list_each_with_its_day_in_either_language_are_three_tasks():
    said = (
        "3 things for the list pls: Lastenrad zur Inspektion bei Radhaus Kreuzberg bis freitag, Stundenzettel an die "
        "Kollektiv-Buchhaltung by saturday, Haftpflicht 64 € bis 28."
    )
    assert [args["due"] for _, args in read(said).calls] == ["2027-01-08", "2027-01-09", "2027-01-28"]
    assert read("add Container buchen bis zum 19.").calls == [
        ("create_task", {"title": "Container buchen", "due": "2027-01-19"})
    ]


def test_a_step_a_week_before_the_exam_named_in_the_ask_is_in_the_plan_and_done_with_a_lowercase_after():
    said = (
        "finally got my date for the praktisches Examen!! 21.04., Station 4B at the Vivantes Klinikum, starts 6:15 😬 "
        "and I need to hand in my Pflegeplanung to Frau Okonkwo a week before. can u help me plan this"
    )
    steps = [args for name, args in read(said).calls if "Pflegeplanung" in args.get("title", "")]
    assert [args["due"] for args in steps] == ["2027-04-14"]
    tasks = [{"id": 4, "title": "Hand in my Pflegeplanung to Frau Okonkwo", "due": "2027-04-09", "status": "open"}]
    assert read("Pflegeplanung abgegeben!!! printed twice and signed", tasks=tasks).calls == [
        ("complete_task", {"task_id": 4})
    ]


def test_a_dashed_list_for_my_list_is_a_task_an_item_each_named_up_to_its_comma():
    said = (
        "for my list:\n- Rechnung an Agentur Lindner, by friday\n- Beglaubigung Geburtsurkunde für Frau Sousa, she "
        "picks it up on the 29th\n- new Stempel, the old one is worn out – before mid-July"
    )
    assert [(args["title"], args["due"]) for _, args in read(said).calls] == [
        ("Rechnung an Agentur Lindner", "2027-01-08"),
        ("Beglaubigung Geburtsurkunde für Frau Sousa", "2027-01-29"),
        ("New Stempel", "2027-07-15"),
    ]


def test_a_task_that_can_wait_named_by_a_name_of_its_own_moves_to_the_day_said():
    tasks = [
        {"id": 1, "title": "Rechnung an Agentur Lindner", "due": "2027-06-11", "status": "open"},
        {"id": 2, "title": "New Stempel", "due": "2027-07-15", "status": "open"},
    ]
    said = "Lindner just called, the invoice can wait till after their quarter closes – so 2 July"
    assert read(said, tasks=tasks).calls == [("update_task", {"task_id": 1, "due": "2027-07-02"})]
    assert read("that can wait", tasks=tasks).calls == []
