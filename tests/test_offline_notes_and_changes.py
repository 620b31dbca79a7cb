"""Things the eighth and tenth blind batches said that the rules misread (tests/data/fresh/BRIEF.md), each as a rule:
a change naming in English a step the plan holds in German, a day of the month said for a deadline weeks away, a
dictated note of three deadlines without a full stop, "before the 15th", and a mail asking for a scan of what the
sentence before says it needs."""

from __future__ import annotations

from datetime import datetime

from tests.offline_support import BERLIN, read
from wilson.model.offline import answers, asks
from wilson.model.offline.words import best, words

MARCH = datetime(2027, 3, 16, 21, 50, tzinfo=BERLIN)
PLAN = {
    "id": 1,
    "items": [
        {
            "position": 1,
            "tool": "create_topic",
            "args": {"title": "Trip to Hamburg", "starts": "2027-05-15"},
            "description": "New topic: Trip to Hamburg (Sat 15 May 2027)",
        },
        {
            "position": 2,
            "tool": "create_task",
            "args": {"title": "Book train tickets", "due": "2027-03-23", "topic": "Trip to Hamburg"},
            "description": "New task: Book train tickets — due Tue 23 Mar 2027 (in Trip to Hamburg)",
        },
        {
            "position": 3,
            "tool": "create_task",
            "args": {
                "title": "Get the Einverständniserklärungen from all the parents",
                "due": "2027-04-30",
                "topic": "Trip to Hamburg",
            },
            "description": "New task: Get the Einverständniserklärungen from all the parents — due Fri 30 Apr 2027",
        },
    ],
}


def test_a_german_word_of_a_title_is_found_by_its_english_words_but_not_counted_as_said():
    tasks = [{"title": "Book train tickets"}, {"title": "Get the Einverständniserklärungen from all the parents"}]
    assert best(tasks, words("the consent forms")) == tasks[1]
    assert best(tasks, words("the Führungszeugnis")) is None
    # a title's own words stay its own: how much of a title was said is not counted in glosses
    assert words("Get the Einverständniserklärungen") == {"einverständniserklärungen"}


def test_a_change_naming_the_german_step_in_english_moves_it_to_that_day_in_the_month_near_its_old_one():
    reply = answers.modify(PLAN, "the consent forms by the 23rd", MARCH, BERLIN)
    changed = {args["title"]: args["due"] for _, args in reply.calls if "due" in args}
    # said in March of a deadline at the end of April: the 23rd of April, not of March
    assert changed["Get the Einverständniserklärungen from all the parents"].startswith("2027-04-2")
    assert changed["Book train tickets"] == "2027-03-23"


def test_a_day_of_the_month_alone_keeps_a_day_that_says_its_month():
    reply = answers.modify(PLAN, "the consent forms by 23 March", MARCH, BERLIN)
    due = {args["title"]: args.get("due") for _, args in reply.calls}
    assert due["Get the Einverständniserklärungen from all the parents"].startswith("2027-03-2")


def test_a_yes_with_a_change_approves_the_proposal_with_that_change():
    said = "yes but the consent forms by the 23rd, Elternabend is on the 22nd"
    assert read(said, [dict(PLAN, just_asked=True)]).calls == [
        (
            "decide",
            {
                "proposal": 1,
                "action": "approve",
                "changes": "the consent forms by the 23rd, Elternabend is on the 22nd",
            },
        )
    ]
    # a no with a change is no yes
    no = read("no, the consent forms by the 23rd", [dict(PLAN, just_asked=True)]).calls
    assert [args["action"] for _, args in no] in (["modify"], ["reject"])


def test_a_dictated_note_of_three_deadlines_without_a_full_stop_is_three_tasks():
    said = (
        "note for the next weeks uh invoice Studio Kranich for the January recordings 1800 euros by the end of the "
        "month then the VAT return for Q4 is due February 10th and the KSK wants my new income estimate before the "
        "15th of February ok thanks"
    )
    reply = read(said)
    assert [(name, args["due"]) for name, args in reply.calls] == [
        ("create_task", "2027-01-31"),
        ("create_task", "2027-02-10"),
        ("create_task", "2027-02-14"),  # before the 15th: done by the 14th
    ]
    titles = [args["title"] for _, args in reply.calls]
    assert titles[0].startswith("Invoice Studio Kranich")  # the user invoices the studio: no payment of theirs
    assert "VAT" in titles[1] and "KSK" in titles[2]


def test_days_told_in_one_line_that_are_no_things_to_do_make_no_list_of_tasks():
    for said in (
        "I have the dentist on Friday and then the party on Saturday",
        "Tom flies on Monday and Anna on Friday",
    ):
        reply = read(said)
        # no task a part: whatever else is read of it, not "I have the dentist" and "The party" due those days
        assert "(sentence by sentence)" not in reply.rule, reply


def test_a_mail_asking_for_a_scan_names_what_the_sentence_before_says_is_needed():
    body = (
        "Because you'll be working in our GMP lab, we need an extended certificate of good conduct (erweitertes "
        "Führungszeugnis) for your personnel file. Please send us a scan no later than 16 April 2027."
    )
    payload = {"subject": "Welcome to LumenBio – one document we still need", "from": "people@lumenbio.example"}
    task = asks.mail_task(body, payload, datetime(2027, 3, 24, 18, 0, tzinfo=BERLIN), BERLIN)
    assert task is not None and task.title == "Send a scan of the extended certificate of good conduct"


def test_a_deed_done_for_a_person_named_after_to_finishes_its_task_and_a_place_still_must_be_the_tasks():
    tasks = [
        {"id": 3, "title": "Send a scan of the extended certificate of good conduct", "status": "open"},
        {"id": 4, "title": "Book flights", "status": "open", "topic": "Trip to Lisbon"},
    ]
    assert read("I sent the certificate to Priya", tasks=tasks).calls == [("complete_task", {"task_id": 3})]
    assert read("booked the flights to Lisbon", tasks=tasks).calls == [("complete_task", {"task_id": 4})]
    assert read("booked the flights to Porto", tasks=tasks).calls == []  # another trip's flights
