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
# not met yet, each named with why; strict, so one that starts to pass fails until it is taken off this list
NOT_YET: dict[str, str] = {
    "chat_what_is_due_next_week": "chat: “and another one: book a hotel … by Thursday 25 March” is not read as a "
    "second task, so “what have I got due next week?” names only the first",
    "chat_would_you_mind_nudging": "chat: “would you mind nudging me friday morning about …” is not read as a "
    "reminder for Friday morning",
    "followup_class_trip_paid_then_quiet": "chat: “I transferred the 145 euros for the class trip this morning” is "
    "not read as the approved task done, so its reminders go on",
    "followup_tax_return_plan": "chat: “collect all the receipts by Feb 19 and then submit it on ELSTER by March 5” "
    "becomes the generic forms plan, not a task for each date said",
    "followup_two_tasks_done_in_turn": "chat: “Two things: … renew the parking permit by 12 March, and cancel my "
    "gym membership before the end of March” becomes one task, not two",
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
