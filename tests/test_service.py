"""`wilson service`: the systemd unit and the launchd agent, their install, status and uninstall.

The files come from pure functions and are checked by the tools that will read them (systemd-analyze
verify, plistlib). Install runs against a temporary HOME/XDG_CONFIG_HOME; the service managers are
stand-in programs on PATH that log their arguments (the process boundary), or absent, or refusing as
systemctl does on a machine without a user session.
"""

from __future__ import annotations

import os
import plistlib
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from wilson.app import cli, service

ODD_HOME = Path('/tmp/wilson home/100% "quoted"')
ARGV = service.command(sys.executable)


def unit_settings(text: str) -> dict[str, list[str]]:
    settings: dict[str, list[str]] = {}
    for line in text.splitlines():
        if "=" in line and not line.startswith("#"):
            key, _, value = line.partition("=")
            settings.setdefault(key, []).append(value)
    return settings


def test_unit_restarts_on_failure_logs_to_journald_and_runs_the_cli_without_a_terminal():
    unit = service.systemd_unit(ARGV, Path("/home/ann/.wilson"), ROOT)
    settings = unit_settings(unit)
    assert settings["Restart"] == ["on-failure"]
    assert settings["RestartPreventExitStatus"] == ["2"]  # a refused configuration is not restarted in a loop
    assert settings["StandardOutput"] == settings["StandardError"] == ["journal"]
    assert settings["ExecStart"] == [f"{sys.executable} -m wilson.app.cli run --no-terminal"]
    assert 'Environment="WILSON_HOME=/home/ann/.wilson"' in unit.splitlines()
    assert settings["EnvironmentFile"] == ["-/home/ann/.wilson/service.env"]  # optional: '-'
    assert settings["WantedBy"] == ["default.target"]


def test_unit_quotes_spaces_and_escapes_percent_signs():
    unit = service.systemd_unit([sys.executable, "--home", "/a b/50%"], ODD_HOME, ROOT)
    settings = unit_settings(unit)
    assert settings["ExecStart"] == [f'{sys.executable} --home "/a b/50%%"']
    assert 'Environment="WILSON_HOME=/tmp/wilson home/100%% \\"quoted\\""' in unit.splitlines()
    with pytest.raises(service.ServiceError, match="line break"):
        service.systemd_unit(ARGV, Path("/tmp/a\nExecStartPre=/bin/false"), ROOT)


def verify(tmp_path: Path, unit: str) -> subprocess.CompletedProcess:
    path = tmp_path / "wilson.service"  # verify wants the unit's own name
    path.write_text(unit)
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700, exist_ok=True)
    # a user manager needs a runtime directory, which a machine without a login session lacks
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}
    return subprocess.run(
        ["systemd-analyze", "verify", "--user", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=tmp_path,
    )


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed here")
def test_systemd_analyze_verifies_the_unit(tmp_path):
    for home in (tmp_path / "home", ODD_HOME):
        result = verify(tmp_path, service.systemd_unit(ARGV, home, ROOT))
        assert result.returncode == 0 and not result.stderr.strip(), result.stderr
    # and the check is a real one: a unit it must refuse is refused
    broken = service.systemd_unit(ARGV, tmp_path, ROOT).replace("ExecStart=", "ExecStart=/no/such/python ")
    assert verify(tmp_path, broken).returncode != 0


def test_launchd_plist_parses_and_keeps_the_agent_alive_on_failure(tmp_path):
    agent = plistlib.loads(service.launchd_plist(ARGV, ODD_HOME, ROOT))
    assert agent["Label"] == service.LABEL
    assert agent["KeepAlive"] == {"SuccessfulExit": False} and agent["RunAtLoad"] is True
    assert agent["EnvironmentVariables"]["WILSON_HOME"] == str(ODD_HOME)
    assert agent["StandardErrorPath"] == str(ODD_HOME / "service.log")
    program = agent["ProgramArguments"]
    assert program[:2] == ["/bin/sh", "-c"] and program[4:] == ARGV  # Wilson's argv passes as "$@", unparsed
    # the wrapper reads service.env and execs the command it was given, with odd paths intact
    (tmp_path / "service.env").write_text(
        "# a comment\nWILSON_CORE_USER_NAME=Ann Lee\nnot a line\nBAD NAME=x\nWILSON_LLM_API_KEY=$(touch pwned)"
    )  # no newline at the end
    shown = subprocess.run(
        program[:4]
        + [
            sys.executable,
            "-c",
            "import os, sys; print(os.environ['WILSON_CORE_USER_NAME'], sys.argv[1], os.environ['WILSON_LLM_API_KEY'])",
            '/a b/50% "x"',
        ],
        env={"WILSON_ENV_FILE": str(tmp_path / "service.env"), "PATH": os.environ["PATH"]},
        capture_output=True,
        text=True,
        timeout=30,
        cwd=tmp_path,
    )
    assert shown.stdout == 'Ann Lee /a b/50% "x" $(touch pwned)\n', shown.stderr
    assert not (tmp_path / "pwned").exists()  # values are text, as systemd reads them, never run


def stand_in(bin_dir: Path, name: str, log: Path, *, fail_with: str = "", stdout: str = "") -> None:
    """A program on PATH that appends its arguments to `log` (and fails with `fail_with` on stderr)."""
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / name
    body = f'echo "{name} $*" >> "{log}"\n'
    if fail_with:
        body += f'echo "{fail_with}" >&2\nexit 1\n'
    elif stdout:
        body += f"printf '%s\\n' '{stdout}'\n"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


def environ_for(tmp_path: Path, bin_dir: Path) -> dict:
    return {
        "HOME": str(tmp_path / "user"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "PATH": f"{bin_dir}:/usr/bin:/bin" if bin_dir.exists() else str(bin_dir),
    }


def test_install_writes_the_unit_enables_it_and_uninstall_removes_it(tmp_path):
    log, bin_dir, home = tmp_path / "calls.log", tmp_path / "bin", tmp_path / "wilson-home"
    stand_in(bin_dir, "systemctl", log, stdout="active")
    environ = environ_for(tmp_path, bin_dir)
    installed = service.install(home, platform="linux", environ=environ)
    unit = tmp_path / "xdg" / "systemd" / "user" / "wilson.service"
    assert installed.code == 0, installed.lines
    assert unit.read_text() == service.systemd_unit(service.command(), home, service.project_root())
    assert log.read_text().splitlines() == [
        "systemctl --user daemon-reload",
        "systemctl --user enable --now wilson.service",
    ]
    env_file = home / "service.env"
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600  # where the token goes: only the user reads it
    assert any("journalctl --user -u wilson" in line for line in installed.lines)

    status = service.status(home, platform="linux", environ=environ)
    assert status.code == 0 and status.lines[0].startswith("wilson.service: active"), status.lines

    env_file.write_text("WILSON_TELEGRAM_TOKEN=kept\n")
    removed = service.uninstall(home, platform="linux", environ=environ)
    assert removed.code == 0 and not unit.exists()
    assert "systemctl --user disable --now wilson.service" in log.read_text()
    assert env_file.read_text() == "WILSON_TELEGRAM_TOKEN=kept\n"  # the user's secrets are not deleted
    assert service.status(home, platform="linux", environ=environ).code == 3


@pytest.mark.parametrize("manager", ["missing", "no user bus"])
def test_without_a_user_manager_install_says_so_in_one_line_and_how_to_run_by_hand(tmp_path, manager):
    log, bin_dir = tmp_path / "calls.log", tmp_path / "bin"
    if manager == "no user bus":
        stand_in(bin_dir, "systemctl", log, fail_with="Failed to connect to bus: No medium found")
    environ = environ_for(tmp_path, bin_dir)
    result = service.install(tmp_path / "home", platform="linux", environ=environ)
    assert result.code == 1
    told = [line for line in result.lines if line.startswith("not enabled")]
    assert len(told) == 1 and "run it by hand" in told[0] and "run --no-terminal" in told[0]
    assert ("systemctl is not installed" if manager == "missing" else "No medium found") in told[0]
    assert (tmp_path / "xdg" / "systemd" / "user" / "wilson.service").exists()  # ready for when there is one
    status = service.status(tmp_path / "home", platform="linux", environ=environ)
    assert status.code == 1 and len(status.lines) == 1 and "not reachable" in status.lines[0]


def test_macos_install_bootstraps_the_agent_and_uninstall_boots_it_out(tmp_path):
    log, bin_dir, home = tmp_path / "calls.log", tmp_path / "bin", tmp_path / "wilson-home"
    stand_in(bin_dir, "launchctl", log, stdout="state = running")
    environ = environ_for(tmp_path, bin_dir)
    installed = service.install(home, platform="darwin", environ=environ)
    plist = tmp_path / "user" / "Library" / "LaunchAgents" / "local.wilson.plist"
    assert installed.code == 0, installed.lines
    assert plistlib.loads(plist.read_bytes())["EnvironmentVariables"]["WILSON_HOME"] == str(home)
    uid = os.getuid()
    assert f"launchctl bootstrap gui/{uid} {plist}" in log.read_text().splitlines()
    assert service.status(home, platform="darwin", environ=environ).lines[0].startswith("local.wilson: running")
    assert service.uninstall(home, platform="darwin", environ=environ).code == 0 and not plist.exists()
    assert log.read_text().splitlines()[-1] == f"launchctl bootout gui/{uid}/local.wilson"


def test_another_platform_is_one_line():
    with pytest.raises(service.ServiceError, match="not win32"):
        service.platform_name("win32")


def test_wilson_service_from_the_command_line_never_shows_a_traceback(tmp_path, monkeypatch, capsys):
    """On this machine as it is: whatever systemctl can do here, the answer is lines, not a traceback."""
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    home = str(tmp_path / "home")
    for action in ("status", "install", "status", "uninstall", "uninstall"):
        code = cli.main(["--home", home, "service", action])
        out = capsys.readouterr()
        assert code in (0, 1, 3), (action, out)
        assert "Traceback" not in out.out + out.err
        assert all(line.startswith(f"wilson service {action}: ") for line in out.out.splitlines()), out.out
    assert not (tmp_path / "xdg" / "systemd" / "user" / "wilson.service").exists()


OLD_UNIT_COMMAND = [sys.executable, "-m", "wilson.cli", "run", "--no-terminal"]  # units installed before wilson/app/


@pytest.mark.parametrize("command", [service.command(sys.executable), OLD_UNIT_COMMAND], ids=["new unit", "old unit"])
def test_the_command_the_unit_runs_starts_without_a_terminal_and_stops_on_sigterm(tmp_path, command):
    """ExecStart's own command line: no Telegram token and stdin closed, as under systemd; it keeps running
    (not the terminal channel, which would end at once on an empty stdin) until SIGTERM, then exits 0. A unit
    installed before the CLI moved to wilson/app/ still starts after an upgrade."""
    import selectors
    import signal
    import time

    env = {k: v for k, v in os.environ.items() if not k.startswith("WILSON_")}
    env.update(WILSON_HOME=str(tmp_path), PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        command,
        cwd=service.project_root(),
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        selector = selectors.DefaultSelector()
        selector.register(proc.stdout, selectors.EVENT_READ)
        deadline, line = time.monotonic() + 60, ""
        while not line and time.monotonic() < deadline and proc.poll() is None:
            if selector.select(timeout=1):
                line = proc.stdout.readline()
        assert line.startswith("Wilson is running without a chat channel"), (line, proc.poll())
        assert proc.poll() is None  # still running after it said so
        proc.send_signal(signal.SIGTERM)
        try:  # both pipes are read while it stops: a full stderr pipe must not be what holds it up
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
            raise AssertionError(f"still running 30 s after SIGTERM; its log ends:\n{err[-3000:]}") from None
        assert proc.returncode == 0, err[-3000:]
        assert "Traceback" not in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_stop_signal_wakes_the_waiting_run_even_one_that_came_before_the_wait_began():
    """The run waits for SIGTERM or SIGINT without a lock the signal's handler could need (a handler that set
    a threading.Event could deadlock when the signal came while the main thread held the Event's lock)."""
    import signal

    from wilson.app.run import stop_signals

    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    for signum in (signal.SIGTERM, signal.SIGINT):
        with stop_signals() as wait:
            os.kill(os.getpid(), signum)  # delivered before the wait begins, as a quick SIGTERM would be
            assert wait() == bytes([signum])
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before, "handlers restored"
