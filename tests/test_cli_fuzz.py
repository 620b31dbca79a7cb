"""No traceback for a user's mistake: random and hostile command lines, environments and wilson.toml files.

The CLI's entry function runs in-process for the property test (it returns its exit status instead of
raising), and a few real processes cover the paths a person actually takes: bin/wilson and
bin/wilson-repl from a shell, with a wrong option, a wrong setting or a broken file, and a REPL session
fed hostile bytes that still answers afterwards.
"""

from __future__ import annotations

import io
import os
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from unittest import mock

from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from tests.conftest import ROOT
from wilson.app import cli
from wilson.app.repl import CommandError, parse
from tests.cli_support import run_main

HOSTILE = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=st.characters(max_codepoint=0x9F, blacklist_characters="\x00"), max_size=40),
    st.binary(max_size=40).map(lambda b: b.decode("utf-8", "surrogateescape").replace("\x00", "")),
    st.sampled_from(
        [
            "",
            " ",
            "-",
            "--",
            "-h",
            "--home",
            "\x1b[2J",
            "é",
            "../../etc/passwd",
            "9" * 400,
            "--llm=",
            "run run",
            "%s%n",
            "${HOME}",
            "'",
            '"',
        ]
    ),
)
# argv cannot carry NUL: the kernel would cut the string there
ARG = HOSTILE.map(lambda s: s.replace("\x00", ""))
LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d (?:DEBUG|INFO) +[\w.]+: ")  # wilson/kernel/logs.py FORMAT
COMMANDS = ["run", "status", "trace", "doctor", "pair", "config", "service", "rnu", "stauts", "Config", "help"]

# Settings values a person gets wrong; no URL here names a host other than a closed loopback port
BAD_VALUES = {
    "WILSON_CORE_TIMEZONE": [
        "Berlin",
        "CET+1",
        "../../etc/passwd",
        "/etc/localtime",
        "Europe/Berlinn",
        "",
        "America/Los_Angeles",
    ],
    "WILSON_CORE_QUIET_HOURS": ["22-7", "25:00-07:00", "off", "22:00-07:00", "always"],
    "WILSON_LLM_TIMEOUT": ["-1", "nan", "inf", "ten", "1e999", "30"],
    "WILSON_LLM_BASE_URL": ["localhost:11434", "ftp://127.0.0.1", "http://127.0.0.1:9/v1", "http:/x", ""],
    "WILSON_CALENDAR_POLL": ["5 minutes", "-5m", "off", "5m", "99999999999999999999d"],
    "WILSON_TICK_WINDOWS": ["7d,soon", "due,overdue", ",,,", "1d"],
    "WILSON_THALAMUS_BRIEFING": ["61 7 * * *", "0 7 * * *", "every morning", "off"],
    "WILSON_DATABASE_URL": ["foo://x", "postgresql", "sqlite:////nonexistent/dir/x.db", "mysql://"],
    "WILSON_APPROVAL_EXPIRY_HOURS": ["-1", "0", "72", "seventy"],
    "WILSON_CORE_TIMEZON": ["Europe/Berlin"],  # a typo'd name: a warning with a did-you-mean
    "TZ": ["Mars/Olympus", ":Europe/Berlin", "EST5EDT", ""],
}
TOML_FILES = st.one_of(
    st.none(),
    st.sampled_from(
        [
            '[core]\ntimezone = "Europe/Berlin"\nuser_name = \n',  # malformed: no value
            "[core\ntimezone = 'x'\n",
            '[core]\ntimezon = "Europe/Berlin"\n[calender]\npoll = "5m"\n',
            "core = 3\n",
            '[core]\ntimezone = ["Europe/Berlin"]\n',
            '[llm]\nmax_tokens = "many"\ntimeout = -3\n',
            "[database]\nurl = { a = 1 }\n",
            "\xff\xfe binary?",
            '[core]\ntimezone = "Asia/Tokyo"\n',
        ]
    ),
    st.text(max_size=80),
)


@st.composite
def argvs(draw) -> list[str]:
    argv: list[str] = []
    if draw(st.booleans()):
        argv += ["--log-level", draw(st.one_of(st.sampled_from(["info", "DEBUG", "loud", ""]), ARG))]
    command = draw(st.one_of(st.sampled_from(COMMANDS), ARG))
    argv.append(command)
    if command == "run":
        # `run` gets at least one wrong option: a valid run would start Wilson in this process
        llm = draw(
            st.one_of(
                st.sampled_from(
                    ["foo", "scripted:/no/such/file", "replay:/no/such/dir", "", "http//127.0.0.1", "offline "]
                ),
                ARG,
            )
        )
        assume(not re.match(r"(?i)^\s*(https?://|offline\s*$)", llm))
        argv += draw(st.sampled_from([["--llm", llm], ["--role", llm or "x"], ["--llm", llm, "--role", "all"]]))
    elif command == "service":
        argv += draw(st.lists(st.one_of(st.sampled_from(["install", "status", "uninstall", "start"]), ARG), max_size=2))
    else:
        argv += draw(st.lists(ARG, max_size=3))
    return argv


class PinnedChoice(random.Random):
    """A `picks` whose every choice is one value: an example pinned to one of BAD_VALUES."""

    def __init__(self, value: str):
        super().__init__(0)
        self.value = value

    def choice(self, seq):
        return self.value


def test_cli_answers_every_command_line_setting_and_file_with_a_status_and_clean_lines(tmp_path):
    seen: dict[int, int] = {}

    # a few lines that must be answered, whatever the random ones happen to be (and three that once were not)
    @example(argv=["status"], env={}, picks=random.Random(0), toml=None)
    @example(argv=["--log-level", "info", "status"], env={}, picks=random.Random(0), toml=None)
    @example(argv=["status"], env={"WILSON_DATABASE_URL": None}, picks=PinnedChoice("mysql://"), toml=None)
    @example(
        argv=["config"], env={"WILSON_CALENDAR_POLL": None}, picks=PinnedChoice("99999999999999999999d"), toml=None
    )
    @example(argv=["config"], env={}, picks=random.Random(0), toml=None)
    @example(argv=["skills"], env={}, picks=random.Random(0), toml=None)
    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(
        argv=argvs(),
        env=st.dictionaries(st.sampled_from(sorted(BAD_VALUES)), st.just(None), max_size=3),
        picks=st.randoms(use_true_random=False),
        toml=TOML_FILES,
    )
    def one(argv, env, picks, toml):
        home = Path(tempfile.mkdtemp(dir=tmp_path))
        if toml is not None:
            (home / "wilson.toml").write_bytes(toml.encode("utf-8", "surrogateescape"))
        environ = {k: v for k, v in os.environ.items() if not k.startswith("WILSON_") and k != "TZ"}
        environ.update({name: picks.choice(BAD_VALUES[name]) for name in env})
        # service install must not touch the real user's config; the state goes to this example's home
        environ.update(WILSON_HOME=str(home), HOME=str(home / "user"), XDG_CONFIG_HOME=str(home / "xdg"))
        with mock.patch.dict(os.environ, environ, clear=True), mock.patch.object(sys, "stdin", io.StringIO("quit\n")):
            code, out, err = run_main(argv)
        seen[code] = seen.get(code, 0) + 1
        assert code in (0, 1, 2, 3), (argv, code)
        assert "Traceback" not in out + err and "usage:" not in err, (argv, env, err)
        for line in err.splitlines():
            # every line names who speaks; the log's own lines (asked for with --log-level, in its FORMAT: time,
            # level, module) are not the user's errors
            assert line.startswith(("wilson", "First run:", "Could not write")) or LOG_LINE.match(line), (argv, err)
            assert len(line) < 400, line
        if code == 2:
            assert err.strip(), (argv, out)  # a refusal always says why

    one()
    assert seen.get(2) and seen.get(0), seen  # refused and answered lines were both tried


def test_usage_mistakes_are_one_line_with_the_way_to_help(tmp_path, monkeypatch):
    monkeypatch.setenv("WILSON_HOME", str(tmp_path))
    for argv, expected in (
        [["run", "--llm", "foo"], "'foo' is not one of: offline, an http(s) URL"],
        [["run", "--llm", "scripted:/no/such.json"], "is not a file here"],
        [["--log-level", "loud", "status"], "'loud' is not a log level"],
        [["stauts"], "invalid choice: 'stauts'"],
        [["trace", "a", "b\nFAKE LINE"], "unrecognized arguments: b FAKE LINE"],
        [["service", "start"], "invalid choice: 'start'"],
        [[], "the following arguments are required: command"],
    ):
        code, out, err = run_main(argv)
        assert code == 2 and out == ""
        assert err.count("\n") == 1 and expected in err and "--help)" in err, (argv, err)
    assert not list(tmp_path.iterdir())  # nothing was started or written for a refused command line


def test_help_returns_zero_instead_of_exiting(capsys):
    assert cli.main(["--help"]) == 0
    assert "usage: wilson" in capsys.readouterr().out


def test_an_unusable_database_is_one_line_not_a_traceback(tmp_path, monkeypatch):
    monkeypatch.setenv("WILSON_HOME", str(tmp_path))
    for url, code, expected in (
        ("foo://x", 2, "the scheme 'foo' is not one Wilson can open"),
        ("postgresql://ann:Quokka-5521@127.0.0.1:9/db", 1, "cannot use postgresql://"),
        ("sqlite:////nonexistent/dir/x.db", 1, "unable to open database file"),
        ("mysql://", 2, "database.url names no database"),
        ("postgresql://ann:Quokka-5521@127.0.0.1:port/db", 2, "database.url cannot be read"),
    ):
        monkeypatch.setenv("WILSON_DATABASE_URL", url)
        got, out, err = run_main(["status"])
        assert got == code and expected in err, err
        assert [line for line in err.splitlines() if line.startswith("wilson")] == err.strip().splitlines()[-1:]
        assert "Quokka" not in err


# --- the REPL parser: sentences, typos and the mistakes from the first hour ----------------------------

SENTENCE_WORDS = st.sampled_from(
    [
        "I",
        "have",
        "a",
        "trip",
        "to",
        "Rome",
        "next",
        "month",
        "calender",
        "aprove",
        "quite",
        "today",
        "now",
        "wait,",
        "approve",
        "3",
        "remind",
        "me",
        "@",
        "->",
        ";",
    ]
)


@settings(max_examples=300, deadline=None)
@given(words=st.lists(st.one_of(SENTENCE_WORDS, HOSTILE), min_size=1, max_size=8))
def test_repl_parser_turns_any_line_into_a_command_or_one_clear_line(words):
    line = " ".join(words)
    try:
        command = parse(line)
    except CommandError as exc:
        text = str(exc)
        assert text and "\n" not in text and len(text) < 200 and "Traceback" not in text
        return
    assert command is None or command.name


def test_a_hostile_repl_session_from_a_real_shell_keeps_answering(tmp_path):
    """bin/wilson-repl on piped bytes that are not all text: every bad line is one `error:` line, the end of
    the calendar entry before its start included, and Wilson still answers the last line."""
    lines = [
        b"calendar add Bar @ 2027-03-05 -> 2027-03-01",
        b"calender",
        b"approve 99999999999999999999999",
        b"\xff\xfe\x00 broken bytes \x1b[31m",
        b"advance -3d",
        b"trace ../../etc/passwd",
        b"x" * 30_000,
        b"quiet forever",
        b"say are you still there?",
        b"quit",
    ]
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bin" / "wilson-repl"),
            "--home",
            str(tmp_path),
            "--clock",
            "sim",
            "--start",
            "2027-01-05T08:00:00+01:00",
            "--llm",
            "offline",
        ],
        input=b"\n".join(lines) + b"\n",
        capture_output=True,
        timeout=120,
        env={**os.environ, "WILSON_CORE_TIMEZONE": "Europe/Berlin"},
    )
    out, err = result.stdout.decode(), result.stderr.decode()
    assert result.returncode == 0, err
    assert "Traceback" not in out + err
    errors = [line for line in out.splitlines() if line.startswith("error: ")]
    assert any("the end must come after the start" in line for line in errors), out
    assert any("did you mean calendar?" in line for line in errors), out
    assert len(errors) >= 6 and all(len(line) < 300 for line in errors)
    answered = out.split("wilson> say are you still there?", 1)[1]
    assert "Wilson:" in answered  # alive after all of it


def shell(*argv: str, home: Path, stdin: str = "", **env) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("WILSON_") and k != "TZ"}
    environ.update(WILSON_HOME=str(home), **env)
    return subprocess.run(list(argv), input=stdin, capture_output=True, text=True, timeout=60, env=environ)


def test_real_processes_refuse_with_one_line(tmp_path):
    wilson, repl = str(ROOT / "bin" / "wilson"), str(ROOT / "bin" / "wilson-repl")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "wilson.toml").write_text("[core\n")
    cases = [
        ((sys.executable, wilson, "run", "--llm", "foo"), tmp_path / "a", {}, "'foo' is not one of"),
        ((sys.executable, repl, "--llm", "foo"), tmp_path / "b", {}, "'foo' is not one of"),
        (
            (sys.executable, wilson, "run", "--llm", "offline"),
            tmp_path / "c",
            {"WILSON_CORE_TIMEZONE": "Europe/Berlinn"},
            "did you mean Europe/Berlin?",
        ),
        ((sys.executable, wilson, "status"), tmp_path / "broken", {}, "is not valid TOML"),
        ((sys.executable, repl, "--clock", "sim", "--start", "yesterday"), tmp_path / "d", {}, "wilson-repl: "),
    ]
    for argv, home, env, expected in cases:
        result = shell(*argv, home=home, stdin="quit\n", **env)
        told = [line for line in result.stderr.splitlines() if line.startswith("wilson")]
        assert result.returncode == 2, (argv, result.stderr)
        assert "Traceback" not in result.stderr + result.stdout
        assert len(told) == 1 and expected in told[0], (argv, result.stderr)


def test_a_command_on_a_new_home_prints_its_answer_and_no_log_lines(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("WILSON_")}
    run = subprocess.run(
        [sys.executable, str(ROOT / "bin" / "wilson"), "--home", str(tmp_path / "new"), "status"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert run.returncode == 0 and run.stdout.startswith("home: ") and run.stderr == ""
    # asked for, the log says what happened, once: the database was created, not migrated step by step
    code, _, err = run_main(["--home", str(tmp_path / "other"), "--log-level", "INFO", "status"])
    assert code == 0 and err.count("created a new database (schema v") == 1 and "migrated" not in err
