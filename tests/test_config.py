"""Configuration: the first run's wilson.toml, checks at load, `wilson config`, bin/ from any Python."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from wilson.kernel import config as configmod
from tests.config_support import cli, no_traceback
from tests.ports import free_port

PLAIN_PYTHON = "/usr/bin/python3"


def test_first_run_writes_the_timezone_from_tz(tmp_path):
    result = cli(tmp_path, "run", "--llm", "offline", stdin="quit\n", TZ="America/Los_Angeles")
    assert result.returncode == 0, result.stderr
    toml = (tmp_path / "wilson.toml").read_text()
    assert 'timezone = "America/Los_Angeles"' in toml.splitlines()
    assert '# quiet_hours = "22:00-07:00"' in toml  # every key with its default, commented
    told = [line for line in result.stderr.splitlines() if "wilson.toml" in line]
    assert len(told) == 1 and str(tmp_path / "wilson.toml") in told[0]
    assert configmod.load(tmp_path, environ={}).get("core", "timezone") == "America/Los_Angeles"
    shown = cli(tmp_path, "config")
    assert any(
        line.startswith('timezone = "America/Los_Angeles"') and line.endswith("# file")
        for line in shown.stdout.splitlines()
    ), shown.stdout


def test_first_run_keeps_the_timezone_set_for_wilson_and_says_where_it_came_from(tmp_path):
    told = configmod.first_run(tmp_path, environ={"TZ": "America/Los_Angeles", "WILSON_CORE_TIMEZONE": "Europe/Berlin"})
    assert "(timezone Europe/Berlin, from WILSON_CORE_TIMEZONE)" in told
    assert 'timezone = "Europe/Berlin"' in (tmp_path / "wilson.toml").read_text().splitlines()
    other = tmp_path / "other"
    told = configmod.first_run(other, environ={"TZ": "America/Los_Angeles", "WILSON_CORE_TIMEZONE": "Berlin"})
    assert "(timezone America/Los_Angeles, from the system)" in told  # no zone: its error comes when it is read


def test_first_run_leaves_an_existing_file_alone(tmp_path):
    (tmp_path / "wilson.toml").write_text('[core]\ntimezone = "Asia/Tokyo"\n')
    assert configmod.first_run(tmp_path, environ={"TZ": "America/Los_Angeles"}) is None
    assert (tmp_path / "wilson.toml").read_text() == '[core]\ntimezone = "Asia/Tokyo"\n'


def test_detected_timezone_ignores_a_tz_that_is_no_zone_name():
    assert configmod.detect_timezone({"TZ": ":Europe/Berlin"}) == "Europe/Berlin"
    assert configmod.detect_timezone({"TZ": "Not/AZone"}) != "Not/AZone"


@pytest.mark.parametrize(
    "toml, env, expected",
    [
        ('[core]\ntimezone = "Berlin"\n', {}, 'core.timezone = "Berlin" in wilson.toml: expected an IANA timezone'),
        ("", {"WILSON_CORE_TIMEZONE": "Berlin"}, 'core.timezone = "Berlin" from WILSON_CORE_TIMEZONE: expected'),
        ('[calendar]\npoll = "5 minutes"\n', {}, 'calendar.poll = "5 minutes" in wilson.toml: expected a duration'),
        ('[tick]\nwindows = "7d,soon"\n', {}, 'tick.windows = "7d,soon" in wilson.toml: expected comma-separated'),
        ("", {"WILSON_THALAMUS_BRIEFING": "61 7 * * *"}, 'thalamus.briefing = "61 7 * * *" from WILSON_THALAMUS_'),
        ("", {"WILSON_LLM_BASE_URL": "localhost:11434"}, 'llm.base_url = "localhost:11434" from WILSON_LLM_BASE_URL'),
        ('[llm]\nmax_tokens = "many"\n', {}, 'llm.max_tokens = "many" in wilson.toml: expected a whole number'),
        ("", {"WILSON_APPROVAL_EXPIRY_HOURS": "-1"}, 'approval.expiry_hours = "-1" from WILSON_APPROVAL_EXPIRY_'),
    ],
)
def test_a_wrong_value_stops_the_start_with_one_line(tmp_path, toml, env, expected):
    if toml:
        (tmp_path / "wilson.toml").write_text(toml)
    with pytest.raises(configmod.ConfigError) as caught:
        configmod.load(tmp_path, environ=env)
    assert str(caught.value).startswith(expected) and "\n" not in str(caught.value)


def test_bad_timezone_suggests_the_zone(tmp_path):
    result = cli(tmp_path, "run", "--llm", "offline", stdin="quit\n", WILSON_CORE_TIMEZONE="Berlin")
    assert result.returncode == 2
    no_traceback(result)
    assert "did you mean Europe/Berlin?" in result.stderr
    assert len([line for line in result.stderr.splitlines() if "core.timezone" in line]) == 1


def test_unknown_key_is_warned_with_a_suggestion(tmp_path):
    (tmp_path / "wilson.toml").write_text('[core]\ntimezon = "Europe/Berlin"\n[calender]\npoll = "5m"\n')
    config = configmod.load(tmp_path, environ={})
    assert config.get("core", "timezone") == "UTC"
    assert any("core.timezon" in w and "did you mean core.timezone?" in w for w in config.warnings)
    assert any("[calender]" in w and "did you mean calendar?" in w for w in config.warnings)
    doctor = cli(tmp_path, "doctor")
    no_traceback(doctor)
    assert "did you mean core.timezone?" in doctor.stdout
    assert doctor.returncode == 1  # it printed something to fix


def test_doctor_exits_zero_when_nothing_needs_fixing(tmp_path):
    (tmp_path / "wilson.toml").write_text('[core]\ntimezone = "Europe/Berlin"\n')
    # a free port: the default one may be held by another Wilson on this machine, which the doctor rightly reports
    doctor = cli(tmp_path, "doctor", WILSON_WEB_PORT=str(free_port()))
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "FIX" not in doctor.stdout


def test_malformed_toml_is_named_with_its_line(tmp_path):
    (tmp_path / "wilson.toml").write_text('[core]\ntimezone = "Europe/Berlin"\nuser_name = \n')
    for args in (("run", "--llm", "offline"), ("doctor",), ("config",)):
        result = cli(tmp_path, *args, stdin="quit\n")
        assert result.returncode == 2
        no_traceback(result)
        assert "wilson.toml is not valid TOML" in result.stderr and "line 3" in result.stderr
    repl = subprocess.run(
        [sys.executable, str(ROOT / "bin" / "wilson-repl"), "--home", str(tmp_path)],
        input="quit\n",
        text=True,
        capture_output=True,
        timeout=60,
    )
    assert repl.returncode == 2 and "line 3" in repl.stderr
    no_traceback(repl)


def test_wilson_config_shows_sources_and_masks_secrets(tmp_path):
    (tmp_path / "wilson.toml").write_text('[core]\nuser_name = "Ann"\n')
    result = cli(
        tmp_path,
        "config",
        WILSON_LLM_API_KEY="sk-Wombat-77120934",
        WILSON_LLM_BASE_URL="http://ann:Quokka-5521@127.0.0.1:9/v1",
        WILSON_TELEGRAM_TOKEN="123:Numbat",
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith('user_name = "Ann"') and line.endswith("# file") for line in lines)
    assert any(line.startswith("api_key = ") and line.endswith("# environment WILSON_LLM_API_KEY") for line in lines)
    assert any(line.startswith('quiet_hours = "22:00-07:00"') and line.endswith("# default") for line in lines)
    assert any(line.startswith("max_tokens = 1024") for line in lines)  # a key named like a token is no secret
    for secret in ("Wombat-77120934", "Quokka-5521", "123:Numbat"):
        assert secret not in result.stdout


@pytest.mark.skipif(not Path(PLAIN_PYTHON).exists(), reason="no system python3 at /usr/bin/python3")
def test_bin_wilson_runs_from_a_python_without_the_packages(tmp_path):
    plain = {"PATH": "/usr/bin:/bin"}
    lacks = subprocess.run([PLAIN_PYTHON, "-c", "import httpx"], env=plain, capture_output=True)
    if lacks.returncode == 0:
        pytest.skip(f"{PLAIN_PYTHON} has httpx, so there is nothing to re-exec from")
    result = subprocess.run(
        [PLAIN_PYTHON, str(ROOT / "bin" / "wilson"), "--help"], env=plain, capture_output=True, text=True, timeout=60
    )
    assert (ROOT / ".venv").exists()
    assert result.returncode == 0, result.stderr
    assert "usage: wilson" in result.stdout  # re-executed in .venv
    repl = subprocess.run(
        [PLAIN_PYTHON, str(ROOT / "bin" / "wilson-repl"), "--help"],
        env=plain,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert repl.returncode == 0 and "usage: wilson-repl" in repl.stdout, repl.stderr
    # a checkout with no .venv: one line saying what to run
    shutil.copytree(ROOT / "bin", tmp_path / "bin")
    bare = subprocess.run(
        [PLAIN_PYTHON, str(tmp_path / "bin" / "wilson"), "--help"],
        env=plain,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bare.returncode == 2
    assert bare.stderr.strip().count("\n") == 0 and "make run" in bare.stderr and ".venv" in bare.stderr


def test_the_watchdog_can_be_switched_off_but_not_made_negative(tmp_path):
    assert (
        configmod.load(tmp_path, environ={"WILSON_SUPERVISOR_WATCHDOG_SECONDS": "0"}).get(
            "supervisor", "watchdog_seconds"
        )
        == 0
    )
    with pytest.raises(configmod.ConfigError, match="supervisor.watchdog_seconds"):
        configmod.load(tmp_path, environ={"WILSON_SUPERVISOR_WATCHDOG_SECONDS": "-1"})


def test_a_setting_a_config_lacks_is_its_default_and_an_unknown_one_is_none(tmp_path):
    partial = configmod.Config(home=tmp_path, data={"web": {"port": 9000}})  # built by hand, as tests do
    assert partial.get("web", "port") == 9000
    assert partial.get("web", "host") == configmod.DEFAULTS["web"]["host"] == "127.0.0.1"
    assert partial.get("supervisor", "lease_seconds") == 120.0
    assert partial.get("web", "no_such_key") is None and partial.get("no_such_section", "port") is None


def test_list_settings_are_written_as_toml_lists_and_read_back_when_uncommented(tmp_path):
    text = configmod.template("UTC")
    assert '# folders = ["INBOX"]' in text and "# disabled = []" in text
    (tmp_path / "wilson.toml").write_text(
        text.replace('# folders = ["INBOX"]', 'folders = ["INBOX"]').replace("# disabled = []", "disabled = []")
    )
    config = configmod.load(tmp_path, environ={})
    assert config.get("email", "folders") == ["INBOX"] and config.get("skills", "disabled") == []
