"""What the twelfth blind batch's dev half said that the rules misread (tests/data/fresh/BRIEF.md, "Twelfth batch"),
each as a rule: a plan asked for before someone leaves, in English and German; a wedding gone to abroad is a trip; a
payment or card details asked through a link against a countdown is phishing."""

from __future__ import annotations

from tests.offline_support import BERLIN, NOW, PLAYBOOK, TOOLS
from wilson.model.offline import intents, phrases, places, urgency

HOME = places.home_place(None, "Europe/Berlin")


def plan(said: str) -> tuple[list[str], list[str]]:
    reply = intents.answer(phrases.Chat(text=said, now=NOW, tz=BERLIN, playbook=PLAYBOOK, offered=TOOLS, home=HOME))
    topics = [args["title"] for name, args in reply.calls if name == "create_topic"]
    return topics, [args["title"] for name, args in reply.calls if name == "create_task"]


def test_a_plan_asked_for_before_someone_leaves():
    topics, steps = plan(
        "ok so it's official 🎉 our daughter (16) is doing her exchange year in New Zealand, she flies to Auckland on "
        "17 July with the other exchange students from the agency. what do we have to get done before she goes?"
    )
    assert topics and "Check visa and entry requirements" in steps
    topics, steps = plan(
        "Moin! As voyage crew on the barque Windrose, Kiel to Bergen, 14 to 24 July. Was muss ich bis dahin alles auf "
        "die Reihe kriegen?"
    )
    assert topics and steps


def test_a_wedding_gone_to_abroad_is_a_trip_and_one_at_home_stays_a_wedding():
    topics, steps = plan(
        "just booked it!!! going home to Accra for my little brother's wedding, 3 to 24 august. can you sort out what "
        "i need to do before i fly?"
    )
    assert topics == ["Trip to Accra"] and "Check visa and entry requirements" in steps
    topics, steps = plan("my cousin's wedding is on 3 July in Potsdam, help me plan it")
    assert "RSVP" in steps and "Check visa and entry requirements" not in steps


def test_card_details_through_a_link_against_a_countdown_is_phishing_even_from_the_links_own_domain():
    said = (
        "your eVisa application GH-2028-55017 is incomplete and will be rejected within 24 hours. To keep your travel "
        "date, pay the processing fee of 35 EUR and confirm your card details here: http://ghana-evisa-check.example/pay"
    )
    assert urgency.phishing(said, "Action required", "visa-service@ghana-evisa-check.example", "Ghana Immigration")
    # the same office asking for a fee by a date, without the clock, is a bill to pay
    calm = "The processing fee of 35 EUR is due by 30 May: pay it here http://ghana-evisa-check.example/pay"
    assert not urgency.phishing(calm, "Your eVisa fee", "visa-service@ghana-evisa-check.example", "Ghana Immigration")
