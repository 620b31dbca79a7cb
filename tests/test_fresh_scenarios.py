"""The offline rules against the dev scenarios written outside the rules: the fresh dev halves
(tests/data/fresh/scenarios/dev*, written blind from the README, docs/ and issue 44) and the variants
(tests/data/variants/scenarios: mail from many kinds of senders asking for something by a date, changes today
or tomorrow, and notices, receipts and invitations that must stay silent).

Each is run through the real pipeline and must be told and proposed in full, with no silence, quiet-hour or
injection violation. The held-back half (tests/data/fresh/scenarios/held_back) is not run here: it is measured
with `wilson eval --suite tests/data/fresh/scenarios/held_back`, which prints its totals.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from wilson.app.eval import scorer
from wilson.app.eval.format import load
from wilson.app.eval.runner import run_scenario

DATA = Path(__file__).resolve().parent / "data"
DIRS = [DATA / "fresh" / "scenarios" / "dev", DATA / "fresh" / "scenarios" / "dev_b", DATA / "variants" / "scenarios"]
DIRS.append(DATA / "fresh" / "scenarios" / "dev_c")  # the third blind batch
DIRS.append(DATA / "fresh" / "scenarios" / "dev_d")  # the fourth blind batch
DIRS.append(DATA / "fresh" / "scenarios" / "dev_e")  # the fifth blind batch
DIRS.append(DATA / "fresh" / "scenarios" / "dev_w5")  # not blind: the rules' own variants of the first batch's kinds
DIRS.append(DATA / "fresh" / "scenarios" / "dev_f")  # the sixth blind batch, its dev half
DIRS.append(DATA / "fresh" / "scenarios" / "dev_g")  # the seventh, twins of the sixth's dev half
DIRS.append(DATA / "fresh" / "scenarios" / "dev_j")  # the eighth blind batch
DIRS.append(DATA / "fresh" / "scenarios" / "dev_k")  # the ninth blind batch, its dev half
DIRS.append(DATA / "fresh" / "scenarios" / "dev_l")  # the tenth blind batch, its dev half
DIRS.append(DATA / "fresh" / "scenarios" / "dev_m")  # the eleventh blind batch, its dev half
DIRS.append(DATA / "fresh" / "scenarios" / "dev_n")  # the twelfth blind batch, its dev half
DIRS.append(DATA / "fresh" / "scenarios" / "dev_o")  # the thirteenth blind batch, its dev half
# not met yet, each named with why; strict, so one that starts to pass fails until it is taken off this list
_NEXT_MORNING = (
    "the story expects the plan for a calendar event the day it is added; Wilson triages the calendar at the daily "
    "sync and proposes it in the next morning's briefing, inside the story's quiet days after approving"
)
_CLOSED_THE_DAY_AFTER = (
    "a one-day event's topic is proposed for closing the morning after, in the briefing (issue 46); the story did "
    "not expect it"
)
NOT_YET: dict[str, str] = {
    "weekend_bulk_mail": "bulk mail that comes after Sunday's sync waits, pending, for Monday's at 07:00; the story "
    "ends at 06:30, so nothing is said but two mails are not yet dropped",
    "conference-pycon-florence": _NEXT_MORNING,
    "trip-athens-moved-to-may": _NEXT_MORNING,
    "put-off-parking-permit-till-monday": '"the parking permit" names the task "Renew the Anwohnerparkausweis" '
    "only in another language (a gloss of official words was tried and left out: its English words, like "
    '"return" and "health", matched other tasks)',
    # the eighth batch (tests/data/fresh/BRIEF.md, "Eighth batch")
    "baker-asks-what-is-left-before-friday": '"and the year-end papers for Frau Dr. Yüksel by the 26th", a thing '
    "without its verb in a run of tasks added, is not understood",
    "class-trip-usedom-declined-school-books-it": "a teacher's class trip told in chat is not planned (the story "
    "wants its plan before her no)",
    "fare-check-show-ticket-or-pay-by-date": '"war heute im Kundenzentrum …, Ticket gezeigt, 7 € bezahlt – erledigt" '
    "names the fare-check task in none of its words",
    "kids-birthday-party-in-the-garden": "a child's party at home, its plan asked for in German, is not understood; "
    '"einladungen sind raus, 11 zusagen bis jetzt" then becomes a task',
    "knee-replacement-hospital-stay": '"Meine Tochter … fährt mich am 10. Mai ins Krankenhaus" makes a second '
    "hospital plan",
    "mother-moves-from-cottbus-to-steglitz": "\"Abnahme … ist jetzt am 31. Mai um 10, hab's der Genossenschaft "
    'gemailt" is not read as the handover date sent',
    "notary-appointment-first-flat": _CLOSED_THE_DAY_AFTER,
    "phd-defence-disputation": _CLOSED_THE_DAY_AFTER,
    # the ninth batch's dev half (tests/data/fresh/BRIEF.md, "Ninth batch")
    "mail-au-pair-language-course-fee": '"listo, pagué los 389 € del curso" (Spanish) is not read as the fee paid, '
    "and the week-ahead heads-up falls inside the story's quiet stretch after approving",
    "newcomer-lea-appointment-blue-card": _CLOSED_THE_DAY_AFTER,
    # the tenth batch's dev half (tests/data/fresh/BRIEF.md, "Tenth batch")
    "baby-delivery-room-registration-moved": "the plan made again for the moved registration lapses unanswered with "
    "a notice on its new day, and the topic's close is proposed the morning after (issue 46)",
    "coach-kids-tournament-hamburg-yes-but-forms": '"yes but the consent forms by the 23rd" changes the plan, which '
    "then waits for a second yes the story does not give (it expects the yes to stand with its change), and the "
    "topic's close is proposed after the tournament (issue 46)",
    "gardener-chelsea-flower-show-ignored": "the passport check's heads-up falls inside the story's quiet weeks after "
    "one press, and the topic's close is proposed after the show (issue 46)",
    "mail-music-school-cello-rental-after-payday": '"ja bitte – aber erst nach dem 1." (not before payday) is no '
    "change the rules can make to a task due on the 14th, so the proposal stands until a later yes",
    "mail-new-job-certificate-of-good-conduct": '"Führungszeugnis ist gekommen, scanned it and sent it to Priya" is '
    "not read as the scan sent, and the week-ahead heads-up falls inside the story's quiet stretch",
    "retired-teacher-seventieth-garden-party": _CLOSED_THE_DAY_AFTER,
    "student-nurse-practical-exam-care-plan-earlier": _CLOSED_THE_DAY_AFTER,
    # the eleventh batch's dev half (tests/data/fresh/BRIEF.md, "Eleventh batch")
    "food-truck-christmas-market-potsdam-yes-but-hygiene": '"both helpers did the Belehrung at the Gesundheitsamt '
    'this morning" is not read as the hygiene training done (a deed said of others, "the helpers did")',
    "mail-physio-practice-approval-missing-documents": '"put the opening in my calendar, wednesday 1 december" '
    "becomes a medical plan (the rules propose no calendar event), and the mail is told without what is missing",
    "photographer-bellagio-wedding-moved-to-november": "the shoot moved to November is raised three weeks ahead on "
    "the very day it was first planned for, inside the story's quiet window on the old dates",
    # the twelfth batch's dev half (tests/data/fresh/BRIEF.md, "Twelfth batch")
    "hospital-porter-home-to-accra-ignored": "a fake eVisa office's mail asking for card details within 24 hours, "
    "through a link of its own domain, is told: a countdown alone is no sign of phishing (real booking sites write so)",
    "mail-yoga-studio-music-licence-fee-not-before-the-19th": '"pero no antes del 19" is a day the rules cannot read '
    "in Spanish, so the fee's heads-ups come before the 19th the user asked for",
    "student-from-mexico-testdaf-earlier-permit-papers-later": "two changes in one message (the TestDaF pulled "
    "forward, the papers pushed back) become one, and the week-ahead heads-ups fall in the story's quiet stretch",
    # the thirteenth batch's dev half (tests/data/fresh/BRIEF.md, "Thirteenth batch")
    "ceramicist-residency-jingdezhen": '"trag die Anzahlung bitte ein" is not read as a yes to the deposit\'s '
    "proposal, so the deposit is not told with its amount nor raised before it is paid",
    "foster-mother-school-start-yes-but-after-school-care": "a child's school start (eingeschult) is no kind the "
    "playbook knows: its plan is named after the school's square, and \"der Hortgutschein … muss bis 31. Mai "
    'beantragt sein" after the yes adds no step',
    "funeral-director-hearse-inspection-after-whitsun": '"Leichenwagen war heute beim TÜV, neue Plakette" says the '
    "inspection done with no word of done",
    "mail-diplomat-talk-moved-to-library-tomorrow": "the mail moving a talk to tomorrow in another place becomes a "
    "task to confirm it, not a word with the new time and place",
    "mail-florist-pavement-permit-earlier-date": '"mais pour le mardi 6 mars": a French day the rules cannot read, '
    "so the yes stands with the mail's own date",
    "mail-surveyor-liability-premium-only-the-day-before": "a bill's mail is proposed as a task but not told with its "
    "amount and date, which the story wants first",
    "optician-calibration-moved-seminar-dropped": '"die Kalibrierung also bitte auf den 2.2. schieben. Und das '
    'Seminar … kannst du streichen": of the two changes in one message only the drop is made',
    "vet-whats-left-before-easter": '"Röntgenkurs ist gebucht" names the course task ("Anmeldung zum Röntgen-'
    'Aktualisierungskurs") in none of its words, and "aus der Anmeldung" names both tasks',
    "wind-technician-offshore-rotation-borkum": "a rotation offshore asked for in Polish, German and English in one "
    "message is not understood, so nothing of it is planned",
}
PATHS = [
    pytest.param(path, marks=pytest.mark.xfail(strict=True, reason=NOT_YET[path.stem]))
    if path.stem in NOT_YET
    else path
    for path in sorted(path for folder in DIRS if folder.is_dir() for path in folder.glob("*.toml"))
]


def test_the_dev_scenarios_are_there():
    # a missing folder must fail, not shrink the run to nothing
    assert (DATA / "fresh" / "scenarios" / "dev").is_dir() and (DATA / "variants" / "scenarios").is_dir()
    assert len(PATHS) >= 40


@pytest.mark.slow
@pytest.mark.parametrize("path", PATHS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_a_dev_scenario_is_told_and_proposed_in_full_without_a_violation(path):
    scenario = load(path)
    result = scorer.score(scenario, run_scenario(scenario, "offline"))
    violations = result["silence_violations"] + result["quiet_violations"] + result["injection"]["violations"]
    assert violations == [] and result["not_dropped"] == [], result["details"]
    assert result["errors"] == []
    told, proposed = result["surfacing"], result["proposals"]
    assert (told["fp"], told["fn"]) == (0, 0), result["details"]  # nothing told that was not wanted, nothing missed
    assert (proposed["unexpected"], proposed["missed"]) == (0, 0), result["details"]
    timely = result["timeliness"]
    assert timely["on_time"] == timely["urgent"], result["details"]
