"""Hostile REPL input: absurd numbers, control characters, binary-ish and huge lines.

Every line gets a clear one-line answer or becomes a sane stimulus, and no actor dies.
The numbers that used to crash the approval actor (an id past SQLite's 64-bit range)
are stopped at the edge; the largest id that does fit reaches the actor and is answered.
"""

from __future__ import annotations

import io
import re
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from storage.models import Inbox, ReceptorBuffer
from wilson.app import cli
from wilson.app.repl import MAX_LINE, CommandError, Repl, parse
from wilson.kernel import bounds

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def run(repl: Repl, line: str) -> tuple[bool, str]:
    repl.out = io.StringIO()
    going_on = repl.run_line(line)
    return going_on, repl.out.getvalue()


def assert_alive(app) -> None:
    states = {name: (h.state, h.restarts) for name, h in app.supervisor.health.items()}
    assert states == {name: ("running", 0) for name in states}, states


BAD_LINES = [
    ("approve 99999999999999999999999", "far too large"),
    ("reject 9223372036854775808", "far too large"),
    ("modify 99999999999999999999999999999 make it Friday", "far too large"),
    ("approve -3", "positive"),
    ("approve three", "looks like 3"),
    ("approve ²", "looks like 3"),  # str.isdigit() says yes, int() says no
    ("approve 0", "start at 1"),
    ("approve 3 1,99999999999999999999", "at most 1000"),
    ("approve 3 one,two", "look like 1,3"),
    ("trace", "trace ID"),
    ("trace " + "f" * 5000, "looks like 3f2a9c1b7d4e"),
    ("advance 10000000d", "at most 366d"),
    ("advance 99999999999999999999999999w", "at most 366d"),
    ("advance -2d", "only runs forward"),
    ("advance soon", "not a duration"),
    ("calendar add Dentist @ 9999-12-31T23:59", "between 1900 and 2200"),
    ("calendar add Dentist @ 0001-01-01", "between 1900 and 2200"),
    ("say " + "x" * (MAX_LINE + 1), "too long"),
    ("\x00\x1b[31mapprove\x07 77777777777777777777777", "far too large"),
]


def test_bad_numbers_get_one_clear_line_and_no_actor_dies(make_app):
    app = make_app()
    repl = Repl(app)
    for line, answer in BAD_LINES:
        going_on, out = run(repl, line)
        assert going_on
        assert out.count("\n") == 1 and out.startswith("error: ") and answer in out, (line[:60], out)
        assert len(out) < 200, out
    assert_alive(app)


def test_the_largest_id_that_fits_reaches_the_approval_actor_and_is_answered(make_app):
    app = make_app()
    _, out = run(Repl(app), f"approve {bounds.MAX_ID}")
    assert out == ""  # not refused at the edge: it is a well-formed number
    assert any(f"I don't know proposal {bounds.MAX_ID}" in d["text"] for d in app.user_deliveries())
    assert_alive(app)


NUMBERS = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.integers(min_value=1, max_value=200).map(lambda n: "9" * n),
    st.sampled_from(["0", "-0", "00000000000000000000001", "1e400", "NaN", "inf", "0x10", "#7", "٣", "²", "1_000"]),
)
HOSTILE_TEXT = st.one_of(
    st.text(max_size=60),
    st.text(alphabet=st.characters(max_codepoint=0x9F), max_size=60),  # control characters
    st.binary(max_size=80).map(lambda b: b.decode("latin-1")),
    st.binary(max_size=80).map(lambda b: b.decode("utf-8", "surrogateescape")),  # lone surrogates
    st.integers(min_value=MAX_LINE - 5, max_value=MAX_LINE + 50).map(lambda n: "y" * n),
)
DURATIONS = st.one_of(
    st.from_regex(r"-?[0-9]{1,25}(\.[0-9]{1,3})?[smhdw]", fullmatch=True),
    st.sampled_from(["5m", "2h", "1d", "1d12h", "0s", "1e9d"]),
)
WORDS = [
    "say",
    "calendar add",
    "calendar cancel",
    "email",
    "web",
    "advance",
    "sync",
    "approve",
    "reject",
    "modify",
    "trace",
    "tasks",
    "topics",
    "approvals",
    "memories",
    "inbox",
    "outbox",
    "budget",
    "now",
    "help",
    "wait",
    "APPROVE",
    "Say",
    "frobnicate",
    "",
]


@st.composite
def repl_lines(draw) -> str:
    word = draw(st.sampled_from(WORDS))
    if word in ("approve", "reject", "modify", "APPROVE"):
        tail = draw(
            st.one_of(
                NUMBERS,
                st.tuples(NUMBERS, NUMBERS).map(" ".join),
                st.tuples(NUMBERS, st.lists(NUMBERS, max_size=4).map(",".join)).map(" ".join),
                HOSTILE_TEXT,
            )
        )
    elif word == "advance":
        tail = draw(st.one_of(DURATIONS, NUMBERS, HOSTILE_TEXT))
    elif word == "calendar add":
        when = draw(st.one_of(st.datetimes().map(lambda d: d.isoformat()), st.dates().map(str), HOSTILE_TEXT))
        tail = f"{draw(HOSTILE_TEXT)} @ {when}"
    elif word == "trace":
        tail = draw(st.one_of(HOSTILE_TEXT, NUMBERS, st.just("3f2a9c1b7d4e")))
    else:
        tail = draw(HOSTILE_TEXT)
    return draw(st.sampled_from(["{} {}", "{}{}", "  {}\t{}  ", "{} {}\r\n"])).format(word, tail)


@settings(max_examples=600, deadline=None)
@given(line=st.one_of(repl_lines(), HOSTILE_TEXT))
def test_parse_answers_every_line_with_a_command_or_a_clear_error(line):
    try:
        command = parse(line)
    except CommandError as exc:
        assert "\n" not in str(exc) and len(str(exc)) < 200
        return
    if command is None:
        return
    if command.name in ("approve", "reject", "modify"):
        assert 1 <= command.args[0] <= bounds.MAX_ID
    if command.name in ("approve", "reject"):
        assert all(1 <= item <= bounds.MAX_ITEM for item in command.args[1])
    if command.name == "advance":
        assert timedelta(0) < command.args[0] <= bounds.MAX_ADVANCE
    assert all(not CONTROL.search(a) for a in command.args if isinstance(a, str))


@pytest.mark.slow
def test_random_lines_leave_the_app_alive_and_its_stimuli_clean(make_app):
    app = make_app()
    repl = Repl(app)
    seen = {"errors": 0, "ran": 0}

    @settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(line=repl_lines())
    def one_line(line):
        going_on, out = run(repl, line)
        assert going_on  # only quit ends a session
        if out.startswith("error: "):
            seen["errors"] += 1
            assert out.count("\n") == 1 and len(out) < 300, out
            assert "Traceback" not in out
        else:
            seen["ran"] += 1

    one_line()
    assert seen["errors"] and seen["ran"]  # both kinds of line were tried
    assert_alive(app)
    texts = [r.text for r in Inbox.select()] + [r.text for r in ReceptorBuffer.select()]
    assert texts and not [t for t in texts if CONTROL.search(t)]
    assert all(len(t) <= MAX_LINE + 200 for t in texts)
    before = len(app.user_deliveries())
    run(repl, "say hello, still there?")
    assert len(app.user_deliveries()) > before  # and it still answers


def test_wilson_trace_refuses_an_id_that_is_not_one(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("WILSON_HOME", raising=False)
    home = str(tmp_path / "home")
    assert cli.main(["--home", home, "trace", "x" * 5000 + "\x1b[2J"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "a trace id looks like" in err and len(err) < 200
    assert cli.main(["--home", home, "trace", "3f2a9c1b7d4e"]) == 0
    assert capsys.readouterr().out == "no trace 3f2a9c1b7d4e\n"


def test_a_proposal_offers_a_choice_of_items_only_when_it_has_several(make_app):
    app = make_app(start="2027-01-05T08:00:00+01:00")
    repl = Repl(app, out=io.StringIO())
    for text in ("add pay rent by Friday", "I have a dentist appointment next Tuesday at 10"):
        app.say(text)
        assert app.wait_idle()
    for record in app.user_deliveries():  # as the terminal prints what reaches it
        repl.print_delivery(record)
    one, three = repl.out.getvalue().split("Proposal 2:")
    assert "→ approve 1 | modify 1 <change> | reject 1\n" in one and "or items" not in one
    assert "→ approve 2 | modify 2 <change> | reject 2  (or items: approve 2 1,2)" in three


def test_approve_or_reject_alone_answers_the_newest_proposal_as_a_yes_or_a_no_in_words(make_app):
    from storage.models import Approval

    app = make_app(start="2027-01-05T08:00:00+01:00")
    repl = Repl(app, out=io.StringIO())
    assert run(repl, "approve") == (True, "")  # not "approve ID": said to Wilson, who has nothing to approve
    assert app.user_deliveries()[-1]["text"].endswith(
        "There's no proposal of mine waiting for an answer, so nothing was changed."
    )
    for text in ("I have a dentist appointment on 20 Jan", "add pay rent by Friday"):
        run(repl, text)
    dentist, rent = Approval.select().order_by(Approval.id)
    run(repl, "approve")
    assert [Approval.get_by_id(a.id).status for a in (dentist, rent)] == ["pending", "approved"]
    run(repl, "reject")
    assert [Approval.get_by_id(a.id).status for a in (dentist, rent)] == ["rejected", "approved"]


def test_wilson_trace_alone_lists_the_latest_paths_each_with_when_and_its_first_step(make_app, capsys, monkeypatch):
    monkeypatch.setenv("WILSON_CORE_TIMEZONE", "Europe/Berlin")  # the CLI's settings, as the app's
    app = make_app(start="2027-01-05T08:00:00+01:00")
    app.say("add pay rent by Friday")
    assert app.wait_idle()
    home = str(app.config.home)
    capsys.readouterr()
    assert cli.main(["--home", home, "trace"]) == 0
    head, *lines = capsys.readouterr().out.splitlines()
    assert head == "recent traces (`wilson trace ID` shows one whole):" and lines
    said = Inbox.get(Inbox.text == "add pay rent by Friday")
    # in the user's zone, by its first step as `wilson trace ID` shows it (the routing its inbox row records)
    assert f"{said.trace_id}  Tue 05 Jan 08:00  routed: inbox priority 0 from {said.source}" in lines


def test_a_sentence_that_starts_with_a_commands_word_is_said_to_wilson():
    for line in (
        "show my tasks",
        "approve all but the insurance",
        "reject the packing one",
        "forget it",
        "approve it",
        "modify the plan please",
        "revive the old plan",
        "show tasks",
    ):
        assert parse(line) == parse(f"say {line}"), line
    # a number after the word is the command, and a command mistyped is still told how to write it
    assert parse("approve 3 1,2").name == "approve" and parse("modify 3 make it Friday").name == "modify"
    assert parse("show expired").name == "expired" and parse("show expired proposals").name == "expired"
    for line in ("approve three", "forget 0"):
        try:
            parse(line)
        except CommandError:
            continue
        raise AssertionError(f"{line!r} should be told how to write the command")
