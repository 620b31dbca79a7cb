"""More of a careful writer's ways, read in general: plans told with their own words ("attend the London Book Fair",
"an apostille", "the state examination", "wisdom teeth removed", "an eye laser operation … at a clinic", "we move on
1 April"); other people of one's work ("my client", "my tax advisor") whose plans are theirs; questions the older
rules left to the honest help (the open plans, a date's weekday, how a function works, an opinion, a wish); a pasted
letter's one request; a need then its reminder; "it's time I …"; a no with its reason that names a day; and the
lines around them that must stay as they were."""

from __future__ import annotations

import pytest

from tests.offline_support import BERLIN, NOW, PLAYBOOK, REMINDER, read
from wilson.model.offline import asked_about, dates, phrases, repeats


def _kinds(reply) -> list[str]:
    return [name for name, _ in reply.calls]


# plans told in their own words -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, topic_word",
    [
        ("Please note that I will attend the London Book Fair from 16/3 to 18/3 to meet publishers.", "Conference"),
        ("I need an apostille for my university diploma, the Ministry wants it until 26 February.", "Apostille"),
        ("I have decided to take the state examination for translators on 18 May.", "State examination"),
        ("I must have my wisdom teeth removed on 8 February at the oral surgeon in Wilmersdorf.", "wisdom teeth"),
        ("I will have an eye laser operation on 4 March at a clinic in Tempelhof.", "Eye laser operation"),
        ("I'm getting my wisdom tooth out on 4 February", "wisdom tooth"),
        ("We have signed the contract for a bigger flat in Neukölln, we move on 1 April.", "Neukölln"),
    ],
)
def test_a_plan_told_in_its_own_words_is_planned(text, topic_word):
    reply = read(text)
    topics = [args["title"] for name, args in reply.calls if name == "create_topic"]
    assert topics and topic_word.lower() in topics[0].lower()


def test_a_day_before_a_place_said_with_at_a_is_read():
    found = dates.search("an operation on 4 March at a clinic in Tempelhof", NOW, BERLIN)
    assert [f.value.isoformat() for f in found] == ["2027-03-04"]
    assert [f.phrase for f in dates.search("on 8 February at the oral surgeon", NOW, BERLIN)] == ["on 8 February"]
    assert not dates.search("policy number HR-2291-07", NOW, BERLIN)  # a policy number is no day


@pytest.mark.parametrize(
    "text",
    [
        "My client Mr. Brandstätter must go to hospital next week for an operation on his hip.",
        "My tax advisor Mrs. Wendler is on holiday until the 18th.",
        "My landlord is moving to Potsdam on 1 March.",
        "My colleague Dr. Weber has her exam on 3 February.",
    ],
)
def test_the_plans_of_the_people_of_ones_work_are_theirs(text):
    assert not read(text).calls


# questions answered honestly -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, says",
    [
        ("Is 12.03. a Friday?", "Yes"),
        ("Is 12.03. a Thursday?", "No"),
        ("What day is March 12?", "Friday"),
        ("How does the snooze function work exactly?", "snooze"),
        ("How do reminders work?", "remind me"),
        ("Do you think it is better to charge per word or per hour?", "your call"),
        ("Happy new year to you as well, by the way!", "to you"),
    ],
)
def test_a_question_the_rules_can_answer_gets_its_answer(text, says):
    reply = read(text)
    assert not reply.calls and says in reply.text and "didn't understand" not in reply.text


def test_the_open_plans_are_read_whole_and_listed():
    topics = [{"id": 1, "title": "Trip to Trieste", "starts": "2027-02-11", "status": "active"}]
    assert "Trip to Trieste" in read("Which plans do I have open at the moment?", topics=topics).text
    after = asked_about.topic_lines_after(["list_topics"], [topics])
    assert after is not None and "Trip to Trieste" in after.text and "2027-02-11" in after.text
    assert "no open plans" in asked_about.plans_answer([])


@pytest.mark.parametrize(
    "text",
    ["How does it work?", "Is Anna a Friday person?", "Do you think so.", "what plans do you have for the weekend"],
)
def test_other_questions_are_not_read_as_these(text):
    assert asked_about.answered(phrases.Chat(text=text, now=NOW, tz=BERLIN, playbook=PLAYBOOK), text) is None


# a pasted letter's one request -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, due, says",
    [
        (
            "Dear Policyholder, the annual premium for your household contents insurance, policy number HR-2291-07, "
            "amounts to 164.80 EUR for 2027. Please transfer the amount by 1 February 2027, quoting your policy number. "
            "Yours sincerely, Rheinland Mutual Insurance",
            "2027-02-01",
            "164.80",
        ),
        (
            "Dear Ms. Nowak, thank you very much for the quick delivery. Could you please also translate the two "
            "attached annexes (approx. 4,000 words) and send them to us by 22 January 2027? We would be grateful for a "
            "short confirmation. Kind regards, Johanna Riedl",
            "2027-01-22",
            "Translate the two attached annexes",
        ),
        (
            "Hello Ms. Nowak, for your income tax return 2025 I still need the annual certificate of your Riester "
            "contract. Please send them to me by 19.02. Best regards, Beate Wendler, Steuerberatung Wendler",
            "2027-02-19",
            "Send",
        ),
    ],
)
def test_a_letter_asking_for_one_thing_by_a_day_is_that_task(text, due, says):
    reply = read(text)
    assert _kinds(reply) == ["create_task"] and reply.calls[0][1]["due"] == due
    assert says in reply.calls[0][1]["title"]


@pytest.mark.parametrize(
    "letter",
    [
        "Dear Ms. Nowak, thank you for the lovely translation. Please keep up the good work. Kind regards, Johanna",
        "Dear Ms. Nowak, please note that our office is closed on Monday 11 January. Kind regards, Johanna Riedl",
    ],
)
def test_a_letter_that_asks_nothing_to_be_done_by_a_day_is_no_task(letter):
    assert "create_task" not in _kinds(read(letter))


# a need said, then its reminder; "it's time I …"; a deadline of a part of the day ----------------------------------


@pytest.mark.parametrize(
    "text, call",
    [
        (
            "I keep forgetting to back up my translation memories. Could you remind me every Friday at 17:00?",
            ("create_reminder", {"text": "back up my translation memories", "cron": "0 17 * * 5"}),
        ),
        (
            "I must call the bank. Please remind me tomorrow at 9.",
            ("remind", {"text": "call the bank", "at": "2027-01-06T09:00:00+01:00"}),
        ),
        (
            "Every Tuesday and Thursday at 7 in the morning, please remind me of the swimming.",
            ("create_reminder", {"text": "swimming", "cron": "0 7 * * 2,4"}),
        ),
        (
            "Please don't let me forget to switch off the heating in the office tonight at 8 pm.",
            ("remind", {"text": "switch off the heating in the office", "at": "2027-01-05T20:00:00+01:00"}),
        ),
    ],
)
def test_a_reminder_said_around_its_need_is_that_reminder(text, call):
    assert read(text).calls == [call]


def test_a_repeating_reminder_at_an_hour_of_a_part_of_the_day_reads_the_hour():
    assert repeats.read("to swim every Tuesday at 7 in the evening", NOW, BERLIN).cron == "0 19 * * 2"
    assert repeats.read("to swim every Tuesday at 7 in the morning", NOW, BERLIN).cron == "0 7 * * 2"


@pytest.mark.parametrize(
    "text, title, due",
    [
        (
            "It's time I answer the inquiry from the Goethe-Institut in Lublin, I would like to do it by the end of next "
            "week.",
            "Answer the inquiry from the Goethe-Institut in Lublin",
            "2027-01-15",
        ),
        ("It's high time we cleaned the garage by Friday.", "Clean the garage", "2027-01-08"),
        ("add call Tom by tomorrow evening", "Call Tom", "2027-01-06"),  # a part of the day is no hour said
        ("add call Tom tomorrow at 5pm", "Call Tom", "2027-01-06T17:00:00+01:00"),
        (
            "The new client wrote to me. Please add to my list that I send him my rates until tomorrow evening, he is "
            "waiting for them.",
            "Send him my rates",
            "2027-01-06",
        ),
    ],
)
def test_a_need_said_as_its_time_come_or_noted_for_the_list_is_a_task(text, title, due):
    assert read(text).calls == [("create_task", {"title": title, "due": due})]


@pytest.mark.parametrize(
    "text", ["It's time I was in bed.", "It's time we went home.", "It's time I told you something."]
)
def test_its_time_said_of_no_act_to_do_asks_nothing(text):
    assert not read(text).calls


# a no with its reason -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "No, that is not necessary, I have done it already this morning.",
        "No, not needed, I sent it yesterday.",
        "No, it's not necessary, I'll do it tomorrow anyway.",
    ],
)
def test_a_no_with_a_reason_naming_a_day_declines(text):
    assert read(text, pending=[REMINDER]).calls == [("decide", {"proposal": 4, "action": "reject"})]


def test_a_no_with_a_new_day_still_changes_the_proposal():
    calls = read("no, on Tuesday instead", pending=[REMINDER]).calls
    assert calls and calls[0][1]["action"] == "modify"


def test_what_the_people_of_ones_work_need_of_the_user_is_still_a_task():
    reply = read("My editor needs the manuscript by Friday.")
    assert _kinds(reply) == ["create_task"] and reply.calls[0][1]["due"] == "2027-01-08"


@pytest.mark.parametrize(
    "text, asked",
    [
        ("which topics are open?", True),
        ("what plans have we got?", True),
        ("list my topics", True),
        ("what are my plans for tomorrow?", False),  # the day's agenda, not the list of plans
        ("Do I have to pay?", False),
    ],
)
def test_the_open_plans_are_asked_for_only_in_so_many_words(text, asked):
    reply = asked_about.answered(phrases.Chat(text=text, now=NOW, tz=BERLIN, playbook=PLAYBOOK), text)
    assert (reply is not None and reply.rule == "the open plans") == asked


# the same kinds in everyday words ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, says",
    [
        ("what's up?", "keeping an eye"),
        ("should I take the train or fly?", "your call"),
        ("is it better to call or write?", "your call"),
        ("sorry, wrong chat", "No problem"),
        ("oops, ignore that", "No problem"),
        ("brb", "👍"),
    ],
)
def test_everyday_questions_and_slips_get_a_word_back(text, says):
    reply = read(text)
    assert not reply.calls and says in reply.text


@pytest.mark.parametrize("text", ["should I renew the passport?", "what's up with the flights?", "wrong about that"])
def test_other_questions_are_not_taken_for_a_choice_or_a_slip(text):
    assert asked_about.answered(phrases.Chat(text=text, now=NOW, tz=BERLIN, playbook=PLAYBOOK), text) is None


def test_a_call_said_with_phoned_or_rang_is_the_call_made():
    tasks = [{"id": 61, "title": "Call the plumber", "status": "open"}]
    assert read("phoned the plumber earlier", tasks=tasks).calls == [("complete_task", {"task_id": 61})]
    assert read("I rang the plumber this morning", tasks=tasks).calls == [("complete_task", {"task_id": 61})]
    assert not read("rang the bell", tasks=tasks).calls


def test_a_family_member_who_gets_married_is_a_wedding_to_plan_for_and_a_colleague_is_not():
    assert "create_topic" in _kinds(read("my brother gets married on 3 July in Cologne"))
    assert not read("my colleague Anna gets married on 3 July").calls


def test_a_letter_asking_to_transfer_a_sum_named_before_keeps_the_sum():
    letter = (
        "Dear Mr Lang, your service charge statement for 2025 shows an additional payment of EUR 96.40. Please transfer "
        "this amount by 20 February 2027 to the usual account, quoting your tenant number 12-07. Kind regards, "
        "Property Office"
    )
    ((name, args),) = read(letter).calls
    assert (name, args["due"]) == ("create_task", "2027-02-20") and "96.40" in args["title"]
