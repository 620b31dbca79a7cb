"""What the eleventh blind batch's dev half said that the rules misread (tests/data/fresh/BRIEF.md, "Eleventh batch"),
each as a rule: a plan asked in German ("Was muss ich alles bedenken?") or "before I go", one's own golden wedding as a
party to give, a move flown to, deeds noted in German without a verb, a sum someone else pays, a German "X muss ich
noch bestellen" as a title, a reason after a dash, a German bill's words, Ukrainian yes and no, and a reminder "the
evening before at 7" after the moment told; a plan asked for an event of no known kind, a step added with whom it is
for, and a plan's step of no known kind due long before its event keeping its week's heads-up."""

from __future__ import annotations

from datetime import datetime

from actors.cortex.calls import RunOutcome
from actors.cortex.outcome import yes_stands
from actors.deadlines import task_windows
from storage.models import Task, Topic
from tests.hippocampus_support import at
from tests.offline_support import BERLIN, NOW, PLAYBOOK, TOOLS, read
from wilson.model.offline import answers, bills, intents, moved_event, phrases, places, triage
from wilson.model.offline.short_answers import short_answer

GOLDEN = (
    "Guten Morgen. Meine Frau Helga und ich haben am 12. Februar Goldene Hochzeit. Ich möchte eine kleine Feier im "
    "Gemeindesaal von St. Marien machen, mittags, mit etwa 30 Gästen. Die Einladungen sollen bis Ende Dezember raus. "
    "Was muss ich alles bedenken?"
)


def test_ones_own_golden_wedding_asked_about_in_german_is_a_party_to_give():
    reply = read(GOLDEN)
    topic = [args["title"] for name, args in reply.calls if name == "create_topic"]
    steps = [args["title"] for name, args in reply.calls if name == "create_task"]
    assert topic == ["Goldene Hochzeit"]  # no month name before it, no wedding to go to
    assert "Send the invitations" in steps and "RSVP" not in steps


def test_someone_elses_anniversary_is_a_wedding_to_go_to_and_other_kinds_keep_their_plans():
    def plan(said: str) -> list[str]:
        return [args["title"] for name, args in read(said).calls if name == "create_task"]

    assert "RSVP" in plan("My parents' golden wedding is on 5 July, we're invited")
    assert "RSVP" in plan("Silberhochzeit von Tante Inge am 3. Mai, wir sind eingeladen")
    assert "Send the invitations" in plan("we are celebrating our silver wedding on 3 May, help me plan it")
    assert "Check passport validity" in plan("I'm flying to Lisbon on 3 May for my birthday party")
    assert "Make a study plan" in plan("My exam is on 3 May, garden party afterwards")


def test_a_trip_to_help_someone_move_or_a_stay_for_the_summer_is_no_move():
    for said in (
        "flying to Lisbon on 3 May to help my sister move into her new flat",
        "moving to Lisbon for the summer, flight is on 1 June",
    ):
        assert [args["title"] for name, args in read(said).calls if name == "create_topic"] == ["Trip to Lisbon"]


def test_moving_abroad_with_a_flight_is_a_move_and_before_i_go_asks_for_its_plan():
    reply = read(
        "so it's official: I'm moving to Montréal for good, flight is on 22 January. gave notice on the flat last "
        "week. what do I need to sort out before I go?"
    )
    topic = [args["title"] for name, args in reply.calls if name == "create_topic"]
    steps = [args["title"] for name, args in reply.calls if name == "create_task"]
    assert topic == ["Move to Montréal"]
    assert "Book movers or a van" in steps and "Give notice on the current lease" not in steps  # told done


INVITATIONS = {"id": 5, "title": "Send the invitations", "due": "2027-12-31", "topic": "Goldene Hochzeit"}
FOOD = {"id": 6, "title": "Sort out food and drinks", "due": "2028-01-29"}
FEE = {"id": 7, "title": "Pay Gebührenbescheid Feuerstättenschau bill", "due": "2028-01-21"}


def test_a_deed_noted_in_german_that_is_not_done_or_names_another_thing_finishes_nothing():
    tyres = {"id": 1, "title": "Book tyre change", "due": "2027-01-20"}
    care = {"id": 2, "title": "Call the care home about Oma", "due": "2027-01-20"}
    for said in (
        "Noch nicht bezahlt, mach ich morgen",
        "Wird bezahlt, sobald das Gehalt da ist",
        "Morgen bezahlt, versprochen",
        "Flug gebucht, Hotel noch nicht",
        "Tisch reserviert",
        "Auto abgeholt",
    ):
        assert read(said, tasks=[tyres, care, FEE]).calls == [], said


def test_a_deed_noted_in_german_finishes_the_one_task_it_names():
    said = "Die Einladungen sind gestern alle zur Post gegangen, 27 Stück. Puh."
    assert read(said, tasks=[INVITATIONS, FOOD]).calls == [("complete_task", {"task_id": 5})]
    # a note without a verb: the thing and its participle; the one payment task is what was paid
    assert read("Schornsteinfeger bezahlt, 64,30 sind raus", tasks=[FEE, FOOD]).calls == [
        ("complete_task", {"task_id": 7})
    ]
    assert read("Rechnung bezahlt?", tasks=[FEE]).calls == []  # a question finishes nothing


def test_a_sum_someone_else_pays_is_no_bill_of_the_users():
    said = "Der Saal ist fest, hab heute im Pfarrbüro unterschrieben. Die 180 € Miete übernimmt unsere Tochter."
    assert read(said).calls == []
    assert read("The hall rent of 180 € is due Friday, my daughter is paying it").calls == []
    assert read("Die Miete von 180 € muss ich bis Freitag zahlen").calls[0][0] == "create_task"
    # the user still pays, or someone else does not
    for still in (
        "Die Krankenkasse übernimmt die Kosten nicht, ich muss die 85 € bis 20. März überweisen",
        "my company pays the hotel but I have to pay the 300 EUR deposit by Friday",
        "Ich muss die 240 € Kita-Gebühr bis zum 3. März zahlen, die Hälfte übernimmt später das Jugendamt",
    ):
        assert [name for name, _ in read(still).calls] == ["create_task"], still


def test_a_german_thing_i_must_still_do_is_titled_by_the_thing_and_its_verb():
    reply = read("ach, und das Rollstuhltaxi für Helga an dem Tag muss ich auch noch bestellen, bis Ende Januar")
    assert reply.calls == [("create_task", {"title": "Rollstuhltaxi für Helga bestellen", "due": "2027-01-31"})]


def test_a_reason_after_a_dash_and_what_its_date_left_stay_out_of_the_title():
    reply = read("also add: Abmeldung beim Bürgeramt, but not before jan 15 – they only do it within a week of leaving")
    assert [args["title"] for _, args in reply.calls] == ["Abmeldung beim Bürgeramt"]
    # a "not" that is part of the task, and a name after a dash, stay
    assert read("add: decide whether to go or not by friday").calls[0][1]["title"] == "Decide whether to go or not"
    assert (
        read("add Pay rent to landlord – da Silva by friday").calls[0][1]["title"] == "Pay rent to landlord – da Silva"
    )


def test_a_german_bill_keeps_the_case_of_its_words():
    found = bills.task_for(
        "Sehr geehrte Frau Demir, für die Feuerstättenschau berechnen wir 64,30 €. Bitte überweisen Sie den Betrag "
        "bis zum 28. Januar 2028.",
        {"subject": "Gebührenbescheid Feuerstättenschau – Rechnung Nr. 2028-0093", "from": "buero@krause.example"},
        datetime(2028, 1, 12, 8, 0, tzinfo=BERLIN),
        BERLIN,
    )
    assert found is not None and found.title == "Pay Gebührenbescheid Feuerstättenschau bill"


def test_yes_and_no_in_ukrainian_russian_italian_and_french():
    assert short_answer("так, дякую") == "yes"
    assert short_answer("ні, дякую 🙂") == "no"
    assert short_answer("да, спасибо") == "yes" and short_answer("нет") == "no"
    assert short_answer("sì grazie") == "yes" and short_answer("certo") == "yes"
    assert short_answer("ouais merci") == "yes"
    assert short_answer("da") is None  # a German "da" is no Russian yes


def test_remind_me_the_evening_before_at_7_to_do_something_counts_from_the_moment_told():
    said = (
        "got the Einladung: the test is thursday 21 january at 9 in the VHS. remind me the evening before at 7 to put "
        "my Aufenthaltstitel and the Einladung in my bag"
    )
    assert read(said).calls == [
        (
            "remind",
            {
                "text": "put my Aufenthaltstitel and the Einladung in my bag",
                "at": "2027-01-20T19:00:00+01:00",
            },
        )
    ]


def test_a_plan_asked_for_an_event_of_no_known_kind_has_the_steps_every_event_has():
    said = (
        "big news, my truck got a spot at the Potsdam Weihnachtsmarkt on Brandenburger Straße, 26 Nov to 23 Dec. "
        "what do I need to sort out before?"
    )
    home = places.home_place(None, "Europe/Berlin")  # Potsdam is next door: no trip
    reply = intents.answer(phrases.Chat(text=said, now=NOW, tz=BERLIN, playbook=PLAYBOOK, offered=TOOLS, home=home))
    topic = [args["title"] for name, args in reply.calls if name == "create_topic"]
    steps = [args["title"] for name, args in reply.calls if name == "create_task"]
    assert topic == ["Potsdam Weihnachtsmarkt"]
    assert steps == ["List what you need for it", "Book or order what you need", "Confirm the details"]
    assert read("I have a thing on Friday").calls == []  # told, not asked: no plan


def test_a_step_added_in_a_yes_says_whom_it_is_for():
    plan = {
        "id": 1,
        "items": [
            {
                "position": 1,
                "tool": "create_topic",
                "args": {"title": "Market", "starts": "2027-11-26"},
                "description": "New topic: Market (Fri 26 Nov 2027)",
            }
        ],
    }
    reply = answers.modify(
        plan, "the hygiene training for my two new helpers has to be done by 15 october", at("2027-09-01"), BERLIN
    )
    added = [args for name, args in reply.calls if name == "create_task"]
    assert [(a["title"], a["due"]) for a in added] == [
        ("Get the hygiene training for my two new helpers done", "2027-10-15")
    ]


def test_a_plans_step_of_no_known_kind_due_long_before_its_event_keeps_its_weeks_heads_up(db):
    windows = ["7d", "1d", "due", "overdue"]
    party = Topic.create(title="Goldene Hochzeit", starts=at("2028-02-12", 0), created_at=at("2027-11-14"))

    def step(title: str, due: str, made: str = "2027-11-14") -> Task:
        return Task.create(title=title, topic=party, due=at(due, 0), due_is_date=True, created_at=at(made))

    # due six weeks before: the event's first raise for such a step, three weeks ahead, comes after its day
    assert task_windows(step("Send the invitations", "2027-12-31"), windows) == windows
    # due two weeks before: that raise gives it its week, so only the nearest heads-up stays
    assert task_windows(step("Sort out food and drinks", "2028-01-29"), windows) == ["1d", "due", "overdue"]
    # made ten days before its day: a week's heads-up would fall in the plan's first week
    assert task_windows(step("Send the invitations", "2027-12-31", made="2027-12-21"), windows) == [
        "1d",
        "due",
        "overdue",
    ]
    # a document is raised with its event six weeks ahead, whatever its day: its nearest heads-up only
    assert task_windows(step("Check passport validity", "2027-11-30"), windows) == ["1d", "due", "overdue"]


def test_a_yes_then_what_the_proposal_does_anyway_is_the_yes_alone():
    waiting = {"id": 2, "just_asked": True, "items": [{"position": 1, "description": "New task: Submit the papers"}]}
    assert read("yes pls, put the ARGE stuff on my list", [waiting]).calls == [
        ("decide", {"proposal": 2, "action": "approve"})
    ]


def test_a_yes_to_all_of_them_typed_loosely():
    assert short_answer("yes al three") == "yes" and short_answer("yes to both") == "yes"
    assert short_answer("all three") is None  # no yes in it


def test_the_perfect_without_its_subject_finishes_the_one_task_of_that_deed():
    portal = {"id": 5, "title": "Submit: Ihr Antrag auf Zulassung – fehlende Unterlagen", "due": "2027-01-28"}
    flights = {"id": 6, "title": "Book flights", "due": "2027-01-09"}
    said = "hab heute Haftpflicht-Nachweis und Grundriss im Portal hochgeladen ✅"
    assert read(said, tasks=[portal, flights]).calls == [("complete_task", {"task_id": 5})]
    assert read("hab ich das hochgeladen?", tasks=[portal, flights]).calls == []


def test_whats_still_open_this_week_asked_in_german_is_a_look():
    due = [{"id": 5, "title": "KSK Einkommensschätzung", "due": "2027-01-08"}]
    reply = read("hey, hab ich diese woche noch was offen? brain is full of rehearsals", tasks=due)
    assert reply.calls == [] and "KSK Einkommensschätzung" in reply.text


def test_a_list_item_said_with_its_article_is_titled_without_it():
    reply = read("add den Frack zurück in den Fundus by saturday")
    assert [args["title"] for _, args in reply.calls] == ["Frack zurück in den Fundus"]
    # a sentence kept as a note keeps its article
    assert read("memo: the plumber's number is in the drawer").calls[0][1]["title"].startswith("The plumber")


def test_a_reminder_counted_from_the_moment_told_takes_its_hour_and_what_to_do():
    told = "the flight is on thursday 21 january at 9."
    assert read(f"{told} remind me two hours before to bring my passport").calls == [
        ("remind", {"text": "bring my passport", "at": "2027-01-21T07:00:00+01:00"})
    ]
    assert read(f"{told} remind me the evening before at 7pm to pack my bag").calls == [
        ("remind", {"text": "pack my bag", "at": "2027-01-20T19:00:00+01:00"})
    ]


def test_an_english_renewal_keeps_its_words_in_lower_case():
    found = bills.task_for(
        "Your Car Insurance renews on 1 March 2027 for 480 EUR. Cancel by 15 February.",
        {"subject": "Your Car Insurance renews on 1 March", "from": "service@insurer.example"},
        datetime(2027, 1, 12, 10, 0, tzinfo=BERLIN),
        BERLIN,
    )
    assert found is not None and found.title == "Review car insurance renewal"


def test_a_cancellation_the_user_asked_for_confirmed_asks_nothing_but_a_cancelled_flight_is_told():
    now = datetime(2027, 9, 29, 12, 0, tzinfo=BERLIN)
    confirmed = {
        "text": "We confirm the cancellation of booking no. 48812 (28.10.–02.11.2027). No fee applies.",
        "payload": {"subject": "Cancellation confirmed – n. 48812", "from": "prenotazioni@bb.example"},
    }
    assert triage.judge(confirmed, now, BERLIN).level is None
    cancelled = {
        "text": "We regret to inform you that your flight LH123 tomorrow at 06:10 has been cancelled. Please rebook.",
        "payload": {"subject": "Flight cancelled", "from": "info@airline.example"},
    }
    assert triage.judge(cancelled, now, BERLIN).level == 1


SHOOT = {
    "id": 3,
    "title": "Hochzeit Bianchi & Keller – Shooting Bellagio",
    "starts": "2027-10-14",
    "ends": "2027-10-17",
    "status": "active",
}
TRAVEL = {"id": 7, "title": "Book travel and a place to stay", "due": "2027-08-30", "topic_id": 3}


def test_a_planned_event_moved_in_words_moves_its_topic_and_tasks_and_is_no_second_plan():
    said = "the Bellagio wedding got pushed to november – the bride's dad needs surgery in october. same villa, 4th to 7th now"
    assert read(said, tasks=[TRAVEL], topics=[SHOOT]).calls == [
        ("update_topic", {"topic_id": 3, "starts": "2027-11-04", "ends": "2027-11-07"}),
        ("update_task", {"task_id": 7, "due": "2027-09-20"}),
    ]
    # "the wedding" alone names none of them
    assert read("the wedding got pushed to november", tasks=[TRAVEL], topics=[SHOOT]).calls == []


def test_an_event_moved_with_its_reason_and_then_its_new_days_moves_its_plan():
    tour = {
        "id": 3,
        "title": "Chorreise Riga – Kammerchor Cantamus",
        "starts": "2027-06-04",
        "ends": "2027-06-09",
        "status": "active",
    }
    passport = {"id": 9, "title": "Check passport validity", "topic_id": 3, "due": "2027-03-06"}
    flights = {"id": 1, "title": "Book flights", "topic_id": 3, "due": "2027-04-05"}
    said = "the Riga tour got pushed back, the concert hall was double booked 🙄 it's 13th to 18th of august now"
    calls = read(said, tasks=[passport, flights], topics=[tour]).calls
    assert calls[0] == ("update_topic", {"topic_id": 3, "starts": "2027-08-13", "ends": "2027-08-18"})
    assert {args["task_id"] for name, args in calls[1:] if name == "update_task"} == {9, 1}
    # a span of time is no new day, nor is a day before the old one after "pushed back"
    for said in (
        "the Riga tour got pushed back, it's 2 weeks later now",
        "the Riga tour was moved, it's 3 hours by bus now",
    ):
        assert read(said, tasks=[passport], topics=[tour]).calls == [], said
    # a move with no new day said is no move to make
    assert read("the Riga tour got pushed back, the hall was double booked", tasks=[flights], topics=[tour]).calls == []


def test_the_calendar_moving_an_event_already_moved_in_words_changes_nothing():
    moved = dict(SHOOT, starts="2027-11-04", ends="2027-11-07")
    buffer = {"title": SHOOT["title"], "start": "2027-11-04", "end": "2027-11-07", "previous": {"start": "2027-10-14"}}
    assert moved_event.moved(buffer, [moved], [TRAVEL], datetime(2027, 9, 7, 8, 0, tzinfo=BERLIN), BERLIN) == []
    assert moved_event.moved(buffer, [SHOOT], [TRAVEL], datetime(2027, 9, 7, 8, 0, tzinfo=BERLIN), BERLIN) != []


def test_a_yes_with_ok_or_pleased_words_in_other_languages():
    assert short_answer("ok passt") == "yes" and short_answer("ok no") == "no"
    assert short_answer("sì perfetto, go ahead 📸 grazie") == "yes"
    assert short_answer("ok") is None  # the acknowledgement alone is read by other rules


def test_hotel_booked_finishes_the_step_for_a_place_to_stay():
    assert read("hotel booked", tasks=[TRAVEL, {"id": 8, "title": "Buy a gift", "due": "2027-09-30"}]).calls == [
        ("complete_task", {"task_id": 7})
    ]


def test_a_german_thing_that_must_be_somewhere_by_a_day_is_a_task_named_after_what_the_sentence_before_named():
    said = (
        "Meine Fahrerkarte läuft am 31. Januar ab. Der Antrag für die neue muss spätestens am 14. Januar beim LABO "
        "sein, sonst wird's knapp mit dem Fahren. Aber lass mich damit bis nach Neujahr in Ruhe."
    )
    assert read(said).calls == [
        ("create_task", {"title": "Antrag für die neue Fahrerkarte beim LABO", "due": "2027-01-14"})
    ]


def test_an_office_that_wants_a_fee_paid_now_online_through_a_link_elsewhere_is_phishing():
    mail = {
        "text": "Ihr Aufenthaltstitel läuft in 7 Tagen ab. Um eine Ausreisepflicht zu vermeiden, zahlen Sie die "
        "Bearbeitungsgebühr von 29,00 € jetzt online: http://aufenthalt-verlaengerung-online.example/zahlung",
        "payload": {
            "subject": "Ihr Aufenthaltstitel läuft ab – jetzt online verlängern",
            "from": "service@aufenthalt-verlaengerung-online.example",
            "from_name": "Ausländerbehörde Berlin",
        },
    }
    assert triage.judge(mail, datetime(2027, 9, 13, 15, 0, tzinfo=BERLIN), BERLIN).level is None


def test_a_spanish_yes_with_a_change_and_a_time_set_is_no_leaving_out():
    waiting = {"id": 1, "just_asked": True, "items": [{"position": 1, "description": "New task: Pay GEMA"}]}
    ((name, args),) = read(
        "sí, hazme una tarea para la GEMA – pero no antes del 19, no me lo recuerdes antes", [waiting]
    ).calls
    assert (name, args["action"]) == ("decide", "approve") and args["changes"].startswith("no antes del 19")
    items = ["New task: Buy travel insurance — due Thu 11 Mar 2027", "New task: Book flights — due Tue 9 Feb 2027"]
    assert yes_stands("not before the 19th, don't remind me before then", RunOutcome(), items)
    assert not yes_stands("but not the insurance one", RunOutcome(), items)
    assert yes_stands("drop the packing", RunOutcome(), items)  # the plan holds no packing: nothing left out
    assert not yes_stands("the flights by March", RunOutcome(error="the model broke"), items)


def test_a_move_said_of_something_else_or_someone_elses_plan_moves_no_topic():
    party = {"id": 1, "title": "Anna's birthday party", "starts": "2027-01-20", "status": "active"}
    lisbon = {"id": 2, "title": "Trip to Lisbon", "starts": "2027-03-01", "ends": "2027-03-08", "status": "active"}
    japan = {"id": 3, "title": "Trip to Japan", "starts": "2027-04-01", "status": "active"}
    offsite = {"id": 4, "title": "Team offsite", "starts": "2027-04-10", "ends": "2027-04-14", "status": "active"}
    topics = [party, lisbon, japan, offsite]
    for said in (
        "We moved the Lisbon photos to the cloud on Friday",
        "Anna's dentist appointment was moved to the 14th",
        "my sister's trip to Japan got pushed to 3 November",
        "the Japan exhibition was moved to 5 March",
    ):
        assert not [c for c in read(said, topics=topics).calls if c[0] == "update_topic"], said
    # a multi-day event moved by its start keeps its length
    assert read("the offsite got pushed to 3 May", topics=topics).calls == [
        ("update_topic", {"topic_id": 4, "starts": "2027-05-03", "ends": "2027-05-07"})
    ]


def test_a_request_of_its_own_with_a_but_approves_no_waiting_proposal():
    waiting = {"id": 1, "just_asked": True, "items": [{"position": 1, "description": "New task: Send the contract"}]}
    said = "mach mir eine Erinnerung für den Zahnarzt, aber erst am Montag"
    assert not [c for c in read(said, [waiting]).calls if c[0] == "decide"]


def test_copying_a_contract_is_not_signing_it_and_a_quiet_time_keeps_a_reminder_asked_for():
    sign = {"id": 1, "title": "Sign the Mietvertrag", "due": "2027-01-20"}
    assert read("Mietvertrag kopiert", tasks=[sign]).calls == []
    assert read("Mietvertrag unterschrieben", tasks=[sign]).calls == [("complete_task", {"task_id": 1})]
    plan = {
        "id": 1,
        "items": [{"position": 1, "tool": "create_task", "args": {"title": "Pay rent", "due": "2027-01-25"}}],
    }
    kept = answers.modify(plan, "am 21., vorher nicht möglich, erinner mich am 18", NOW, BERLIN)
    assert not any("escalation" in args for _, args in kept.calls)
