"""The terminal channel as a newcomer meets it: sentences are said, typos get a suggestion, log lines stay
in the log file, times are local, a piped script echoes its commands, simulated time never runs backwards."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from storage import mute
from storage import trace
from storage.models import Inbox, Memory

from channels import views
from wilson.app.repl import Command, CommandError, Repl, parse

ROOT = Path(__file__).resolve().parent.parent
REPL = [sys.executable, str(ROOT / "bin" / "wilson-repl")]
START = "2027-01-05T08:00:00+01:00"


def run(repl: Repl, line: str) -> str:
    repl.out = io.StringIO()
    assert repl.run_line(line)
    return repl.out.getvalue()


def repl_process(home: Path, script: str, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WILSON_")}
    env["WILSON_CORE_TIMEZONE"] = "Europe/Berlin"
    env["WILSON_WEB_ENABLED"] = "false"  # no dashboard on a fixed port in a test
    return subprocess.run(
        REPL + ["--home", str(home), "--llm", "offline", "--clock", "sim", *args],
        input=script,
        text=True,
        capture_output=True,
        timeout=60,
        env=env,
        cwd=ROOT,
    )


def test_a_bare_sentence_is_said_to_wilson(make_app):
    app = make_app()
    out = run(Repl(app), "I have a trip to Rome next month")
    assert "error" not in out
    assert [r.text for r in Inbox.select()] == ["I have a trip to Rome next month"]
    assert parse("Today I have the dentist").name == "say"  # a command word that starts a sentence
    assert parse("quite a day").name == "say"  # near `quiet`, but not its arguments
    assert parse("Webb telescope pictures are out").name == "say"  # near `web`, which takes any text
    for answer in ("no", "No!", "ok", "yes", "hey"):  # "no" is near `now`: an answer to a proposal all the same
        assert parse(answer) == Command("say", (answer,))


@pytest.mark.parametrize(
    "line, meant",
    [
        ("calender add Bar @ 2027-03-05", "calendar"),
        ("calender", "calendar"),
        ("taks", "tasks"),
        ("approv 3", "approve"),
        ("memorys", "memories"),
    ],
)
def test_a_typo_gets_did_you_mean_and_is_not_sent_to_the_model(line, meant):
    with pytest.raises(CommandError, match=f"did you mean {meant}\\?"):
        parse(line)


def test_a_typo_in_the_repl_is_one_line_and_nothing_reaches_the_inbox(make_app):
    app = make_app()
    out = run(Repl(app), "calender add Bar @ 2027-03-05")
    assert out == "error: 'calender' is not a command: did you mean calendar? (type help)\n"
    assert not Inbox.select().exists()


def test_today_quiet_and_memories_answer(make_app):
    app = make_app()
    repl = Repl(app)
    assert "looking at what's new" in run(repl, "today")
    app.wait_idle()
    assert app.user_deliveries()[-1]["text"] == "Nothing new in your calendar."  # what the look found
    out = run(repl, "quiet 3h")
    assert "Quiet until Tue 05 Jan 11:00 (Europe/Berlin)" in out and "quiet off ends it early" in out
    assert mute.muted_until() == datetime(2027, 1, 5, 10, 0, tzinfo=timezone.utc)
    assert "Quiet is over" in run(repl, "quiet off") and mute.muted_until() is None
    assert "For how long? For example quiet 3h" in run(repl, "quiet soon")
    assert run(repl, "memories") == "(no memories)\n"
    Memory.create(kind="belief", text="Prefers window seats", created_at=app.clock.now())
    assert "Prefers window seats" in run(repl, "memories")


DINNER = "email Sam <sam@example.com> | Dinner tonight? | Dinner tonight? Usual place at 8?"


def held_until() -> list:
    from storage.models import Outbox

    return [(row.status, row.deliver_after) for row in Outbox.select().where(Outbox.surfaced == True)]


def test_quiet_changed_or_lifted_holds_what_it_held_exactly_as_long_as_it_now_says(make_app):
    app = make_app(start="2027-01-05T08:00:00+01:00", env={"WILSON_CORE_QUIET_HOURS": "22:00-07:00"})
    repl = Repl(app)
    now = app.clock.now()
    run(repl, "quiet 3h")
    run(repl, DINNER)
    run(repl, "sync")
    assert held_until() == [("held", now + timedelta(hours=3))]
    run(repl, "quiet 30m")  # shorter: it waits 30 minutes, not 3 hours
    assert held_until() == [("held", now + timedelta(minutes=30))]
    run(repl, "quiet 5h")  # longer: the new quiet holds it too
    assert held_until() == [("held", now + timedelta(hours=5))]
    run(repl, "quiet off")  # over: it goes now, without waiting for time to pass
    assert [status for status, _ in held_until()] == ["delivered"]
    assert any("Dinner tonight?" in d["text"] for d in app.user_deliveries())


def test_quiet_off_leaves_what_the_daily_cap_holds_until_tomorrow(make_app):
    app = make_app(
        env={"WILSON_CORE_QUIET_HOURS": "off", "WILSON_THALAMUS_BRIEFING": "off", "WILSON_ATTENTION_MAX_PER_DAY": "1"}
    )
    repl = Repl(app)
    run(repl, DINNER)
    run(repl, "email Ann <ann@example.com> | Lunch on Friday? | Lunch on Friday? The new place?")
    run(repl, "sync")
    [(status, until)] = [row for row in held_until() if row[0] != "delivered"]
    assert status == "held" and until > app.clock.now() + timedelta(hours=12)  # the cap's: tomorrow morning
    run(repl, "quiet off")
    assert [row for row in held_until() if row[0] != "delivered"] == [("held", until)]


def test_a_longer_quiet_never_carries_a_proposals_reminder_later(make_app):
    from storage import outbox

    app = make_app(env={"WILSON_CORE_QUIET_HOURS": "off"})
    repl = Repl(app)
    run(repl, "quiet 1h")
    soon = app.clock.now() + timedelta(hours=1)
    outbox.add(
        channel="repl",
        text="Proposal 4 is still waiting",
        trace_id="r",
        key="remind:4",
        at=app.clock.now(),
        deliver_after=soon,
        payload={"reminder_for": 4},
    )  # as the gate holds a reminder
    run(repl, "quiet 8h")  # the proposal may be gone by then: the reminder keeps its hour
    assert held_until() == [("held", soon)]
    run(repl, "quiet 10m")
    assert held_until() == [("held", app.clock.now() + timedelta(minutes=10))]


def test_quiet_off_at_night_leaves_the_night_to_the_quiet_hours(make_app):
    app = make_app(start="2027-01-05T23:00:00+01:00", env={"WILSON_CORE_QUIET_HOURS": "22:00-07:00"})
    repl = Repl(app)
    run(repl, "quiet 12h")
    run(repl, DINNER)
    run(repl, "sync")
    run(repl, "quiet off")
    assert held_until() == [("held", datetime(2027, 1, 6, 6, 0, tzinfo=timezone.utc))]  # 07:00 in Berlin


def test_trace_times_are_local(make_app):
    app = make_app()
    trace.record("3f2a9c1b7d4e", "received", "repl", "a test step", at=datetime(2027, 1, 5, 7, 0, tzinfo=timezone.utc))
    out = run(Repl(app), "trace 3f2a9c1b7d4e")
    assert out.startswith("2027-01-05 08:00:00 received")  # 07:00 UTC is 08:00 in Berlin
    assert views.trace_steps("3f2a9c1b7d4e", ZoneInfo("America/Los_Angeles"))[0]["at"] == "2027-01-04T23:00:00-08:00"


def test_piped_script_echoes_commands_and_keeps_log_lines_in_the_log_file(tmp_path):
    home = tmp_path / "home"
    done = repl_process(home, "say hello\nnow\n", "--start", START)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "wilson> say hello"
    assert lines.index("wilson> now") < lines.index("· now Tue 05 Jan 2027 08:00")
    assert not [line for line in done.stdout.splitlines() + done.stderr.splitlines() if " INFO " in line]
    assert " INFO " in (home / "wilson.log").read_text()

    verbose = repl_process(home, "now\n", "--verbose")
    assert verbose.returncode == 0, verbose.stderr
    assert " INFO " in verbose.stderr and " INFO " not in verbose.stdout


def test_a_start_earlier_than_the_homes_simulated_time_is_refused(tmp_path):
    home = tmp_path / "home"
    assert repl_process(home, "advance 2d\n", "--start", START).returncode == 0
    refused = repl_process(home, "now\n", "--start", "2027-01-06T08:00:00+01:00")
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.count("\n") == 1 and "already Thu 07 Jan 2027 08:00 (Europe/Berlin)" in refused.stderr
    resumed = repl_process(home, "now\n")  # without --start it continues where it was
    assert resumed.returncode == 0, resumed.stderr
    assert "· now Thu 07 Jan 2027 08:00" in resumed.stdout
