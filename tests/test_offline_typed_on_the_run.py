"""Messages typed fast on a phone, half in German: answers with a slipped key ("ues") or in German ("ok mach"), a no
whose reason comes before the new day, times written "9.30", "1:30" or "halb 4", schedules said "every school day" or
"tue and thu", a deadline said after a day ("on saturday, has to be bought by friday"), a reason after a comma that
is no part of the title, things done or moved said by their participle or in German, and a plan at a place no
gazetteer knows. And the lines around them that must stay as they are: someone else's party, move or exam, a person
who paid, an hour written with its zero."""

from __future__ import annotations

import pytest

from tests.offline_support import BERLIN, NOW, REMINDER, read
from wilson.model.offline import answers, dates, texting

APPROVE = [("decide", {"proposal": 4, "action": "approve"})]
REJECT = [("decide", {"proposal": 4, "action": "reject"})]
TASKS = [
    {"id": 1, "title": "Pay the Hort fee for Jonas", "due": "2027-01-15", "status": "open"},
    {"id": 2, "title": "Book the parent-teacher meeting with Frau Brandauer", "due": "2027-01-20", "status": "open"},
    {"id": 3, "title": "Renew Frieda's children's passport", "due": "2027-02-12", "status": "open"},
    {"id": 4, "title": "Cancel the Disney+ subscription", "due": "2027-01-31", "status": "open"},
    {"id": 5, "title": "Find a babysitter for the 23rd", "due": "2027-01-20", "status": "open"},
    {"id": 6, "title": "Get the winter tyres checked", "due": "2027-01-29", "status": "open"},
    {"id": 7, "title": "Send the Nebenkosten documents to the tax advisor", "due": "2027-02-26", "status": "open"},
    {"id": 9, "title": "Transfer the class trip money for Frieda", "due": "2027-01-18", "status": "open"},
    {"id": 10, "title": "Buy new Hausschuhe for Frieda", "due": "2027-01-16", "status": "open"},
    {"id": 11, "title": "Pay Anna", "status": "open"},
    {"id": 12, "title": "Call Tom", "status": "open"},
]
TOPICS = [
    {"id": 7, "title": "Trip to Antwerp", "status": "active", "starts": "2027-02-18"},
    {"id": 8, "title": "Wedding in Freiburg", "status": "active", "starts": "2027-05-22"},
]


def _read(text, pending=()):
    return read(text, list(pending), TASKS, TOPICS)


def _names(text):
    return [name for name, _ in _read(text).calls]


# short answers -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["ues", "tes pls", "jaa bitte", "jup", "ya pls", "yeah go on", "ok mach", "alles klar, mach", "perfekt danke"],
)
def test_a_yes_typed_with_a_slipped_key_or_in_german_approves(text):
    assert _read(text, [REMINDER]).calls == APPROVE


@pytest.mark.parametrize("text", ["hope", "mope", "bah", "tesla"])
def test_words_beside_a_yes_on_the_keyboard_are_no_yes(text):
    assert _read(text, [REMINDER]).calls != APPROVE


@pytest.mark.parametrize(
    "text",
    [
        "nö, brauch ich doch nicht",
        "nein danke, hab schon alles mit der Klinik geklärt",
        "not that one",
        "no, the other one",
    ],
)
def test_a_no_in_german_or_to_the_wrong_pick_rejects(text):
    assert _read(text, [REMINDER]).calls == REJECT


@pytest.mark.parametrize(
    "text, changes",
    [
        ("no wait, the garage is closed next week. by friday pls", "by friday"),
        ("no, they're closed then. monday at 9", "monday at 9"),
    ],
)
def test_a_no_with_its_reason_then_a_new_day_changes_the_proposal(text, changes):
    assert _read(text, [REMINDER]).calls == [("decide", {"proposal": 4, "action": "modify", "changes": changes})]


def test_a_no_with_its_reason_and_no_new_day_stays_a_no():
    assert _read("no, I already did that. thanks", [REMINDER]).calls == REJECT


def test_the_same_hour_said_with_a_new_day_changes_the_day():
    assert _read("actually the 13th, same time", [REMINDER]).calls == [
        ("decide", {"proposal": 4, "action": "modify", "changes": "the 13th same time"})
    ]


# times and days as typed ---------------------------------------------------------------------------------------------


def _first(text):
    found = dates.search(texting.plain(text), NOW, BERLIN, parts=True)
    return dates.iso(found[0].value) if found else None


@pytest.mark.parametrize(
    "text, when",
    [
        ("tomorrow at 9.30", "2027-01-06T09:30:00+01:00"),
        ("today at 1:30", "2027-01-05T13:30:00+01:00"),  # nobody means half past one at night
        ("um 3:30", "2027-01-05T15:30:00+01:00"),
        ("at 6:45", "2027-01-06T06:45:00+01:00"),  # from six on, as written
        ("at 01:30", "2027-01-06T01:30:00+01:00"),  # its zero says the night
        ("at 5:30 in the morning", "2027-01-06T05:30:00+01:00"),
        ("morgen nachmittag um halb 4", "2027-01-06T15:30:00+01:00"),  # German "halb 4" is 3:30
        ("morgen um viertel nach 8", "2027-01-06T08:15:00+01:00"),
        ("heute abend um 9", "2027-01-05T21:00:00+01:00"),
        ("by thurs", "2027-01-07"),
        ("by next wed", "2027-01-13"),
        ("the Dienstplan for february on monday", "2027-01-11"),  # the month names the plan, the day is Monday
        ("bis spätestens Freitag, 15.01., bei Frau Lindqvist", "2027-01-15"),  # the date written after its weekday
        ("Zeugnisse einscannen bis 22.1", "2027-01-22"),
    ],
)
def test_a_time_or_a_day_typed_short_is_read(text, when):
    assert _first(text) == when


@pytest.mark.parametrize("text", ["it costs 3.50 at the kiosk", "version 2.1", "we wed in june"])
def test_numbers_and_words_that_only_look_like_a_time_or_a_day_are_none(text):
    assert _first(text) is None


# repeating reminders -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, what, cron",
    [
        ("every school day at 6:45 remind me to pack the lunchboxes", "pack the lunchboxes", "45 6 * * 1-5"),
        ("remind me every workday at 8 to check the rota", "check the rota", "0 8 * * 1-5"),
        ("monthly on the 25th pls remind me to check my payslip", "check my payslip", "0 9 25 * *"),
        ("once a year on 3 march remind me the car insurance renews", "car insurance renews", "0 9 3 3 *"),
        ("annually on 1 june remind me to renew the ADAC membership", "renew the ADAC membership", "0 9 1 6 *"),
        ("tue and thu at 4pm remind me football training", "football training", "0 16 * * 2,4"),
        ("mon, wed and fri remind me to stretch", "stretch", "0 9 * * 1,3,5"),
        ("every tuesday and thursday at 4pm remind me to go to football", "go to football", "0 16 * * 2,4"),
    ],
)
def test_a_schedule_said_in_everyday_words_is_a_repeating_reminder(text, what, cron):
    assert _read(text).calls == [("create_reminder", {"text": what, "cron": cron})]


@pytest.mark.parametrize(
    "text",
    ["tue at 4pm remind me football", "remind me on Friday to tell the cleaner to come every Tuesday"],
)
def test_one_day_said_is_a_one_off(text):
    assert _names(text) == ["remind"]


# tasks: the title and the day ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, title",
    [
        (
            "need to cancel Frieda's ballet contract by friday, they want it in writing",
            "Cancel Frieda's ballet contract",
        ),
        (
            "can u add renew the Hort contract for next school year, needs doing next month",
            "Renew the Hort contract for next school year",
        ),
        ("add buy milk, the kids need it", "Buy milk"),
        ("add call the bank, no rush", "Call the bank"),
    ],
)
def test_why_or_how_said_after_a_comma_is_no_part_of_the_title(text, title):
    ((name, args),) = _read(text).calls
    assert name == "create_task" and args["title"] == title


def test_a_list_said_after_a_comma_stays_in_the_title():
    assert _read("add buy apples, pears and plums").calls[0][1]["title"] == "Buy apples, pears and plums"


@pytest.mark.parametrize(
    "text, due",
    [
        ("dont let me forget the present for Ole's party on saturday, has to be bought by friday", "2027-01-08"),
        ("add the cake for the party on sunday, has to be ordered by thursday", "2027-01-07"),
    ],
)
def test_the_day_a_thing_is_due_by_is_its_due_day_whatever_other_day_is_said(text, due):
    ((name, args),) = _read(text).calls
    assert name == "create_task" and args["due"] == due


def test_dont_let_me_forget_with_a_day_and_no_deadline_stays_a_reminder():
    assert _names("don't let me forget Oma's birthday on the 14th") == ["remind"]


@pytest.mark.parametrize(
    "text, due",
    [
        ("car needs its service, pls put it on my list, has to be done in the next 10 days", "2027-01-15"),
        ("the boiler needs a check, put it on my list, by friday", "2027-01-08"),
    ],
)
def test_a_clause_asking_to_keep_it_makes_a_task_of_the_others(text, due):
    ((name, args),) = _read(text).calls
    assert name == "create_task" and args["due"] == due


@pytest.mark.parametrize(
    "text, title, due",
    [
        (
            "Bitte als Aufgabe: Zeugnisse für die Bewerbung einscannen bis 22.1.",
            "Zeugnisse für die Bewerbung einscannen",
            "2027-01-22",
        ),
        ("Aufgabe bitte: Steuererklärung abgeben bis Freitag", "Steuererklärung abgeben", "2027-01-08"),
    ],
)
def test_a_task_asked_for_in_german_is_one(text, title, due):
    assert _read(text).calls == [("create_task", {"title": title, "due": due})]


@pytest.mark.parametrize(
    "text", ["write something funny for frieda's birthday card", "come up with a toast for the wedding"]
)
def test_words_asked_of_the_assistant_are_no_task(text):
    assert _read(text).calls == []


# existing tasks done, moved, snoozed, dropped --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, task",
    [
        ("found a babysitter for the 23rd, Greta from downstairs 🙌", 5),
        ("Disney+ ist gekündigt", 4),
        ("Disney+ cancelled", 4),
        ("the Disney+ subscription is cancelled", 4),
    ],
)
def test_a_task_said_done_by_its_past_or_participle_or_in_german_is_done(text, task):
    assert _read(text).calls == [("complete_task", {"task_id": task})]


@pytest.mark.parametrize("text", ["Anna paid", "Tom called", "found a nice café for the 23rd"])
def test_someone_doing_it_or_another_thing_found_marks_nothing_done(text):
    assert "complete_task" not in _names(text)


@pytest.mark.parametrize(
    "text, task, due",
    [
        ("frieda's passport can be done by mid feb, no rush", 3, "2027-02-15"),
        ("Winterreifen-Check bitte auf den 5.2. verschieben", 6, "2027-02-05"),
        ("the Steuerberaterin needs the nebenkosten docs earlier, by feb 19", 7, "2027-02-19"),
    ],
)
def test_a_task_moved_in_other_words_or_in_german_gets_its_new_day(text, task, due):
    assert _read(text).calls == [("update_task", {"task_id": task, "due": due})]


@pytest.mark.parametrize(
    "text, task, until",
    [
        ("ask me again about the brandauer meeting on thursday", 2, "2027-01-07T09:00:00+01:00"),
        ("the passport can sit for now, ping me about it on the 1st", 3, "2027-02-01T09:00:00+01:00"),
    ],
)
def test_a_task_to_bring_up_again_is_snoozed(text, task, until):
    assert _read(text).calls == [("snooze_task", {"task_id": task, "until": until})]


def test_a_task_named_better_than_a_trip_is_the_one_dropped():
    assert _read("drop the class trip money, the trip got cancelled bc of the strike").calls == [
        ("cancel_task", {"task_id": 9})
    ]
    assert _read("cancel the Antwerp trip").calls == [("close_topic", {"topic_id": 7})]


def test_a_thing_named_then_dropped_as_those_is_dropped():
    assert _read("i meant the hausschuhe, scratch those, oma is knitting her some").calls == [
        ("cancel_task", {"task_id": 10})
    ]


def test_a_drop_said_while_drops_wait_is_one_more_drop_not_a_no():
    waiting = {
        "id": 28,
        "items": [
            {"position": 1, "description": "Drop task: Transfer the class trip money for Frieda — no more follow-ups"}
        ],
    }
    assert ("decide", {"proposal": 28, "action": "reject", "items": [1]}) not in _read(
        "drop the frieda one", [waiting]
    ).calls


def test_a_plan_proposed_is_still_turned_down_by_drop():
    waiting = {"id": 28, "items": [{"position": 1, "description": "New task: Book the Frieda party room"}]}
    assert _read("drop the frieda party room", [waiting]).calls == [
        ("decide", {"proposal": 28, "action": "reject", "items": [1]})
    ]


def test_an_event_called_off_closes_its_topic_and_plans_nothing():
    assert _read("my sister and her fiancé called it off... so no wedding in may").calls == [
        ("close_topic", {"topic_id": 8})
    ]
    assert read("so no wedding in may").calls == []  # no wedding open: nothing to close, and nothing to plan


def test_a_deadline_asked_of_no_open_task_is_answered():
    reply = _read("what did i say the Kellerraum deadline was")
    assert reply.calls == [] and "Kellerraum" in reply.text
    assert "due Sat 16 Jan" in _read("what did i say the Hausschuhe deadline was").text


# other people, and small talk ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Malte's in Munich for work wed to fri",
        "Malte's sister flies to Accra on the 20th",
        "the Yilmaz family next door are moving to Hannover in march",
        "Frieda's best friend has her birthday party on saturday",
        "my colleague Birgit is having a birthday party on friday",
        "mein Kollege Yusuf macht nächsten Monat seine Prüfung zum Fachwirt",
        "my colleague has surgery on friday",
        "Anna is going to Rhodes 3-9 May",
    ],
)
def test_someone_elses_plans_get_a_word_back_and_no_plan(text):
    reply = _read(text)
    assert reply.calls == [] and "didn't understand" not in reply.text


@pytest.mark.parametrize(
    "text",
    [
        "My mother has her 70th birthday on 13 March, I would like to organise a small dinner",
        "my best friend has her birthday party on saturday and we're going",
    ],
)
def test_a_birthday_the_user_takes_part_in_is_still_planned(text):
    assert "create_topic" in _names(text)


@pytest.mark.parametrize(
    "text", ["Ich bin heute so müde", "bin total kaputt", "ok back to work 💪", "you're a lifesaver honestly"]
)
def test_how_the_user_is_or_praise_gets_a_word_back(text):
    reply = _read(text)
    assert reply.calls == [] and "didn't understand" not in reply.text


# plans ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, title",
    [
        ("we're going to Rhodes in the easter hols, 30 march to 8 april, nothing booked yet", "Trip to Rhodes"),
        ("ski week in Saalbach with the kids 1-6 feb 🎿", "Trip to Saalbach"),
    ],
)
def test_a_stay_of_days_at_a_place_no_gazetteer_knows_is_a_trip(text, title):
    topics = [args["title"] for name, args in _read(text).calls if name == "create_topic"]
    assert topics == [title]


@pytest.mark.parametrize("text", ["we're going to IKEA on saturday", "going to Rhodes someday"])
def test_going_somewhere_unknown_without_a_span_of_days_plans_no_trip(text):
    assert "create_topic" not in _names(text)


def test_a_trade_fair_said_in_german_is_a_conference():
    calls = _read(
        "bin vom 15. bis 18. November auf der MEDICA in Düsseldorf, wir haben einen Stand fürs Klinikum"
    ).calls
    assert [args["title"] for name, args in calls if name == "create_topic"] == ["Conference in Düsseldorf"]


@pytest.mark.parametrize(
    "text",
    [
        "I have my Gallen-OP at the Vivantes Klinikum on feb 23, need to organise the kids for 3 days",
        "my son gets his tonsils out on 2 march",
        "Jonas gets his tonsils out on 2 march, the hospital says 2 nights",  # the Hort fee is paid for Jonas
    ],
)
def test_an_operation_of_the_users_or_a_childs_is_planned(text):
    assert "create_topic" in _names(text)


def test_a_workplace_moved_is_planned_as_a_move():
    assert "create_topic" in _names("I'm in charge of moving our whole department to Haus C on feb 15, need a plan")


# pasted texts --------------------------------------------------------------------------------------------------------


def test_a_german_letter_asking_for_a_form_and_a_sum_is_a_task_due_by_its_day():
    ((name, args),) = _read(
        "Liebe Eltern der Klasse 4b, am Mittwoch, 27.01., besuchen wir mit den Kindern das Naturkundemuseum. Bitte "
        "geben Sie die unterschriebene Einverständniserklärung und 8 € Eintrittsgeld bis spätestens Freitag, 15.01., "
        "bei Frau Lindqvist ab. Vielen Dank und herzliche Grüße, Ihr Klassenteam 4b"
    ).calls
    assert name == "create_task" and args["due"] == "2027-01-15" and "Einverständniserklärung" in args["title"]


@pytest.mark.parametrize(
    "text, at",
    [
        (
            "Praxis Dr. Adeyemi: Ihr Termin am Mi, 20.01. um 08:40 ist bestätigt. Bitte Versichertenkarte mitbringen. "
            "-- remind me the evening before pls",
            "2027-01-19T18:00:00+01:00",
        ),
        ("dentist on the 20th at 8:40. remind me the day before", "2027-01-19T09:00:00+01:00"),
        ("Your table at Luigi's is booked for Friday 8pm. Remind me 2 hours before", "2027-01-08T18:00:00+01:00"),
    ],
)
def test_a_reminder_asked_after_a_pasted_text_counts_from_its_moment(text, at):
    ((name, args),) = _read(text).calls
    assert name == "remind" and args["at"] == at


# the first batch's kinds in other words (variants written while tuning, not blind) -----------------------------------


MORE_TASKS = [
    {"id": 30, "title": "Call the landlord", "status": "open"},
    {"id": 31, "title": "Buy a birthday card for Oma", "due": "2027-01-15", "status": "open"},
]


@pytest.mark.parametrize(
    "text, title, due",
    [
        ("within 10 days I must return the rental car", "Return the rental car", "2027-01-15"),
        ("within two weeks I have to send the documents", "Send the documents", "2027-01-19"),
        ("in the next 10 days I need to renew my bahncard", "Renew my bahncard", "2027-01-15"),
    ],
)
def test_a_while_said_first_is_the_tasks_due_day(text, title, due):
    assert read(text).calls == [("create_task", {"title": title, "due": due})]


def test_the_first_as_a_day_of_the_month_is_read_where_a_day_is_announced():
    ((name, args),) = read("The rent of 950 EUR needs to go out on the first").calls
    assert name == "create_task" and args["due"] == "2027-02-01"
    assert dates.search(texting.plain("the first time we met"), NOW, BERLIN) == []


@pytest.mark.parametrize(
    "text, task",
    [("I phoned the landlord earlier", 30), ("birthday card for Oma bought", 31), ("skip the birthday card", 31)],
)
def test_a_task_done_or_dropped_in_other_words(text, task):
    assert [name for name, args in read(text, tasks=MORE_TASKS).calls if args.get("task_id") == task]


def test_someone_who_bought_marks_nothing_done():
    assert read("Tom bought", tasks=MORE_TASKS).calls == []


def test_a_stay_for_days_at_an_unknown_place_is_a_trip_but_not_someone_elses():
    assert "create_topic" in [name for name, _ in read("We're off to Crete on May 10 for ten days").calls]
    assert read("Anna is off to Crete on May 10 for ten days").calls == []
    assert read("Anna is heading to Rome on Friday").calls == []


@pytest.mark.parametrize("text", ["do I have something on the 20th?", "anything due by the 3rd?"])
def test_a_day_of_the_month_asked_about_is_answered_from_the_list(text):
    reply = read(text)
    assert reply.calls == [] and "didn't understand" not in reply.text


@pytest.mark.parametrize(
    "text, what, at",
    [
        ("please set a reminder: dentist on Friday 9am", "dentist", "2027-01-08T09:00:00+01:00"),
        ("remind me: call mum at 6", "call mum", "2027-01-05T18:00:00+01:00"),
        ("I'd appreciate a reminder on Thursday to call the school", "call the school", "2027-01-07T09:00:00+01:00"),
    ],
)
def test_a_reminder_asked_for_in_other_words_is_set(text, what, at):
    assert read(text).calls == [("remind", {"text": what, "at": at})]


def test_a_thing_put_on_the_list_is_a_task():
    assert read("put call grandma on my list for Sunday").calls == [
        ("create_task", {"title": "Call grandma", "due": "2027-01-10"})
    ]


@pytest.mark.parametrize("text", ["yea", "yeh"])
def test_yea_is_a_yes(text):
    assert read(text, [REMINDER]).calls == APPROVE


def test_a_thing_back_where_it_belongs_is_its_return_done():
    tasks = [{"id": 24, "title": "Return the library books", "status": "open"}]
    assert read("the library books are back", tasks=tasks).calls == [("complete_task", {"task_id": 24})]
    assert read("my kids are back", tasks=tasks).calls == []


@pytest.mark.parametrize(
    "change, at",
    [
        ("half past 7", "2027-01-05T19:30:00+01:00"),  # of a reminder at 18:00: the evening's, as "make it 7" is
        ("quarter to 8", "2027-01-05T19:45:00+01:00"),
        ("noon", "2027-01-05T12:00:00+01:00"),
    ],
)
def test_a_spoken_hour_or_noon_said_as_a_change_keeps_the_day(change, at):
    proposal = {
        "items": [
            {"position": 1, "tool": "remind", "args": {"text": "call the bank", "at": "2027-01-05T18:00:00+01:00"}}
        ]
    }
    assert answers.modify(proposal, change, NOW, BERLIN).calls == [("remind", {"text": "call the bank", "at": at})]


@pytest.mark.parametrize(
    "text, what",
    [
        ("Could you possibly remind me to call the garage on Monday morning?", "call the garage"),
        ("Would you be so kind as to remind me to call the garage on Monday morning?", "call the garage"),
        ("would you be able to remind me on Monday morning to call the garage?", "call the garage"),
    ],
)
def test_a_reminder_asked_very_politely_keeps_only_what_to_do(text, what):
    assert read(text).calls == [("remind", {"text": what, "at": "2027-01-11T09:00:00+01:00"})]


@pytest.mark.parametrize(
    "text, title",
    [
        ("I need to remember to return the parcel by Thursday", "Return the parcel"),
        ("add this too - book the car wash for Saturday", "Book the car wash"),
        ("could you be a star and add buy milk", "Buy milk"),
    ],
)
def test_the_words_around_a_task_are_no_part_of_its_title(text, title):
    assert read(text).calls[0][1]["title"] == title


# said in German ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, what, at",
    [
        (
            "Kannst du mich bitte morgen um 8 daran erinnern, den Arzt anzurufen?",
            "den Arzt anrufen",
            "2027-01-06T08:00:00+01:00",
        ),
        (
            "Könntest du mich am Freitag um 14 Uhr erinnern, dass ich die Miete überweisen muss?",
            "die Miete überweisen",
            "2027-01-08T14:00:00+01:00",
        ),
    ],
)
def test_a_reminder_asked_as_a_german_question_is_set(text, what, at):
    assert read(text).calls == [("remind", {"text": what, "at": at})]


def test_a_german_sum_that_must_be_paid_by_a_day_is_a_payment_task():
    assert read("Die Kfz-Steuer von 94 € muss bis 15. Februar bezahlt werden").calls == [
        ("create_task", {"title": "Pay Kfz-Steuer (94 EUR)", "due": "2027-02-15"})
    ]
    assert read("Ich habe die Rechnung über 120 EUR schon bezahlt").calls == []


def test_a_german_letter_whose_day_is_told_before_its_ask_keeps_the_day():
    ((name, args),) = read(
        "Sehr geehrte Frau Berg, wir erinnern Sie daran, dass die Rundfunkgebühr von 55,08 EUR am 15.02.2027 fällig "
        "ist. Bitte überweisen Sie den Betrag unter Angabe der Beitragsnummer 123 456 789. Mit freundlichen Grüßen, "
        "Beitragsservice"
    ).calls
    assert name == "create_task" and args["due"] == "2027-02-15" and "55,08" in args["title"]


@pytest.mark.parametrize(
    "text, due",
    [("bis Monatsende", "2027-01-31"), ("bis Ende des Monats", "2027-01-31"), ("Ende nächsten Monats", "2027-02-28")],
)
def test_the_end_of_the_month_said_in_german(text, due):
    assert _first(text) == due


@pytest.mark.parametrize(
    "text", ["Wir haben die Wohnung gekündigt und ziehen am 31. März aus", "wir ziehen am 1. Mai nach Potsdam um"]
)
def test_a_move_said_with_the_german_separable_verb_is_planned(text):
    assert "create_topic" in [name for name, _ in read(text).calls]


def test_someone_else_moving_in_german_is_theirs():
    assert read("Anna zieht im März aus").calls == []


@pytest.mark.parametrize(
    "text", ["guten Morgen!", "moin", "wie geht's dir?", "es regnet schon wieder", "Anna fliegt am Freitag nach Rom"]
)
def test_german_small_talk_and_news_get_a_word_back(text):
    reply = read(text)
    assert reply.calls == [] and "didn't understand" not in reply.text


def test_a_thing_no_longer_needed_is_dropped():
    tasks = [{"id": 40, "title": "Buy a present for Lena", "status": "open"}]
    assert read("the present for Lena isn't needed anymore, she got one already", tasks=tasks).calls == [
        ("cancel_task", {"task_id": 40})
    ]


@pytest.mark.parametrize(
    "text", ["Tom's wedding is on June 3 but we can't go", "Anna's exam is on Thursday, fingers crossed", "I'm bored"]
)
def test_an_event_the_user_skips_or_someone_elses_exam_is_no_plan(text):
    reply = read(text)
    assert reply.calls == [] and "didn't understand" not in reply.text


@pytest.mark.parametrize(
    "text", ["My sister's wedding is on June 12 in Hamburg", "my son's exam is on Monday, I need to help him prepare"]
)
def test_an_event_the_user_goes_to_or_helps_with_is_still_planned(text):
    assert "create_topic" in [name for name, _ in read(text).calls]


@pytest.mark.parametrize(
    "text, changes",
    [
        ("no, 7", "at 7"),
        ("seven would be better", "at 7"),
        ("no not tonight, tomorrow", "tomorrow"),
        ("no, not tonight - tomorrow", "tomorrow"),
    ],
)
def test_a_new_time_said_with_a_no_or_in_words_changes_the_proposal(text, changes):
    assert read(text, [REMINDER]).calls == [("decide", {"proposal": 4, "action": "modify", "changes": changes})]


@pytest.mark.parametrize("change", ["make it seven", "no make it 7"])
def test_an_hour_in_words_or_after_a_no_is_the_change_read(change):
    proposal = {
        "items": [
            {"position": 1, "tool": "remind", "args": {"text": "call the bank", "at": "2027-01-05T18:00:00+01:00"}}
        ]
    }
    assert answers.modify(proposal, change, NOW, BERLIN).calls == [
        ("remind", {"text": "call the bank", "at": "2027-01-05T19:00:00+01:00"})
    ]


@pytest.mark.parametrize("text", ["no thanks", "no, I already did that", "nope"])
def test_a_no_without_a_time_still_rejects(text):
    assert read(text, [REMINDER]).calls == REJECT


@pytest.mark.parametrize(
    "text, title, due",
    [
        ("Ich muss bis Ende Februar meinen Reisepass verlängern", "Reisepass verlängern", "2027-02-28"),
        ("ich muss noch die Steuererklärung bis 31. Juli abgeben", "Steuererklärung abgeben", "2027-07-31"),
        ("wir müssen die Wohnung bis Freitag putzen", "Wohnung putzen", "2027-01-08"),
    ],
)
def test_a_need_said_in_german_is_a_task_as_in_english(text, title, due):
    assert read(text).calls == [("create_task", {"title": title, "due": due})]
