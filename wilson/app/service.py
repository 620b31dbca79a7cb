"""`wilson service install|status|uninstall`: Wilson as a service the system restarts.

Linux: a systemd user unit (~/.config/systemd/user/wilson.service, Restart=on-failure, output to
journald). macOS: a launchd agent (~/Library/LaunchAgents/local.wilson.plist, KeepAlive on failure,
output to WILSON_HOME/service.log). The files are made by pure functions (`systemd_unit`,
`launchd_plist`) so they can be checked without a service manager; installing talks to
systemctl/launchctl, and where there is none (a container, a machine without a user session) it says
so in one line and how to run Wilson by hand instead.

Secrets do not go into the unit: it reads WILSON_HOME/service.env (KEY=value lines, readable only by
you), which `install` creates with a commented template when it is missing.
"""

from __future__ import annotations

import os
import plistlib
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

NAME = "wilson"
UNIT = f"{NAME}.service"
LABEL = "local.wilson"
ENV_FILE = "service.env"
# exit status 2 is a configuration Wilson refused: restarting cannot fix it, so the manager should not try
CONFIG_EXIT = 2
ENV_TEMPLATE = """\
# Environment for Wilson when it runs as a service (`wilson service install`). One KEY=value a line,
# no quotes needed. This file is readable only by you; keep secrets here, not in wilson.toml.
# WILSON_TELEGRAM_TOKEN=123456:ABC...
# WILSON_TELEGRAM_ALLOWED_USERS=12345
# WILSON_LLM_BASE_URL=http://127.0.0.1:11434/v1
# WILSON_LLM_MODEL=qwen2.5:7b-instruct
# WILSON_LLM_API_KEY=sk-...
"""


class ServiceError(RuntimeError):
    """Something the user can act on; str() is one line."""


@dataclass(frozen=True)
class Result:
    code: int
    lines: list[str]


def command(python: str | None = None) -> list[str]:
    """How the service starts Wilson: this Python (a venv's python is kept as the symlink it is, so the
    venv stays in effect) running the CLI without the terminal channel, which has no terminal to read."""
    return [python or sys.executable, "-m", "wilson.app.cli", "run", "--no-terminal"]


def project_root() -> Path:
    """Where `python -m wilson.app.cli` finds the package: the checkout, or wherever pip put it."""
    return Path(__file__).resolve().parents[2]


# --- systemd ------------------------------------------------------------------------------------------


def _systemd_word(word: str) -> str:
    """One ExecStart argument: quoted when it has spaces or quotes, with systemd's % and $ specifiers escaped."""
    escaped = word.replace("%", "%%").replace("$", "$$")
    if not escaped or any(c in escaped for c in " \t\"'\\;"):
        escaped = '"' + escaped.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return escaped


def _systemd_path(path: Path | str) -> str:
    """A path in a setting that is not a command line: only % is special there; spaces are allowed."""
    return str(path).replace("%", "%%")


def _systemd_env(key: str, value: str) -> str:
    quoted = value.replace("%", "%%").replace("\\", "\\\\").replace('"', '\\"')
    return f'Environment="{key}={quoted}"'


def systemd_unit(argv: list[str], home: Path, workdir: Path) -> str:
    """The text of the systemd user unit that runs `argv` with WILSON_HOME=home."""
    for value in (*argv, str(home), str(workdir)):
        if "\n" in value or "\r" in value:
            raise ServiceError(f"a path with a line break cannot go into a unit file: {value!r}")
    return "\n".join(
        [
            "# Written by `wilson service install`; `wilson service uninstall` removes it.",
            "[Unit]",
            "Description=Wilson, a proactive assistant",
            # a crash loop stops after 5 starts in 10 minutes instead of spinning
            "StartLimitIntervalSec=600",
            "StartLimitBurst=5",
            "",
            "[Service]",
            "Type=simple",
            "ExecStart=" + " ".join(_systemd_word(word) for word in argv),
            f"WorkingDirectory={_systemd_path(workdir)}",
            _systemd_env("WILSON_HOME", str(home)),
            "Environment=PYTHONUNBUFFERED=1",
            f"EnvironmentFile=-{_systemd_path(Path(home) / ENV_FILE)}",
            "Restart=on-failure",
            "RestartSec=10",
            f"RestartPreventExitStatus={CONFIG_EXIT}",
            "StandardOutput=journal",
            "StandardError=journal",
            f"SyslogIdentifier={NAME}",
            "KillSignal=SIGTERM",
            "TimeoutStopSec=30",
            "",
            "[Install]",
            "WantedBy=default.target",
            "",
        ]
    )


def systemd_unit_path(environ: dict | None = None) -> Path:
    environ = os.environ if environ is None else environ
    base = environ.get("XDG_CONFIG_HOME") or str(Path(environ.get("HOME") or Path.home()) / ".config")
    return Path(base) / "systemd" / "user" / UNIT


# --- launchd ------------------------------------------------------------------------------------------


def launchd_plist(argv: list[str], home: Path, workdir: Path) -> bytes:
    """The launchd agent: started at login, started again when it exits with a failure.

    launchd has no EnvironmentFile, so a small sh wrapper reads service.env and then execs Wilson. The
    file is read line by line, not sourced, so a value means the same as under systemd (spaces and all,
    no shell expansion); the arguments pass as "$@", never through the shell's parser."""
    env_file = str(Path(home) / ENV_FILE)
    wrapper = (
        'if [ -r "$WILSON_ENV_FILE" ]; then while IFS= read -r line || [ -n "$line" ]; do '
        'case "$line" in [A-Za-z_]*=*) case "${line%%=*}" in *[!A-Za-z0-9_]*) ;; '
        '*) export "$line" ;; esac ;; esac; '
        'done < "$WILSON_ENV_FILE"; fi; exec "$@"'
    )
    agent = {
        "Label": LABEL,
        "ProgramArguments": ["/bin/sh", "-c", wrapper, "wilson", *argv],
        "WorkingDirectory": str(workdir),
        "EnvironmentVariables": {"WILSON_HOME": str(home), "WILSON_ENV_FILE": env_file, "PYTHONUNBUFFERED": "1"},
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},  # as Restart=on-failure
        "ThrottleInterval": 10,
        "ProcessType": "Background",
        "StandardOutPath": str(Path(home) / "service.log"),
        "StandardErrorPath": str(Path(home) / "service.log"),
    }
    return plistlib.dumps(agent, fmt=plistlib.FMT_XML, sort_keys=False)


def launchd_plist_path(environ: dict | None = None) -> Path:
    environ = os.environ if environ is None else environ
    return Path(environ.get("HOME") or Path.home()) / "Library" / "LaunchAgents" / f"{LABEL}.plist"


# --- install, status, uninstall -----------------------------------------------------------------------


def _run(argv: list[str], environ: dict) -> subprocess.CompletedProcess | None:
    """A service manager command; None when the program is not there."""
    if not shutil.which(argv[0], path=environ.get("PATH")):
        return None
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=30, env=environ)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return subprocess.CompletedProcess(argv, 1, "", str(exc))


def _why(result: subprocess.CompletedProcess | None, program: str) -> str:
    if result is None:
        return f"{program} is not installed here"
    text = " ".join((result.stderr or result.stdout or f"exit status {result.returncode}").split())
    return text if len(text) <= 120 else text[:117] + "..."


def by_hand(home: Path) -> str:
    return f"run it by hand instead: WILSON_HOME={home} {' '.join(command())} (or `make run` in a terminal)"


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name("." + path.name + ".new")
    partial.write_bytes(data)
    partial.replace(path)


def _env_file(home: Path) -> tuple[Path, bool]:
    """service.env, created (mode 600) with a commented template when missing; (path, created)."""
    path = Path(home) / ENV_FILE
    if path.exists():
        return path, False
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(ENV_TEMPLATE)
    return path, True


def platform_name(platform: str | None = None) -> str:
    platform = platform or sys.platform
    if platform.startswith("linux"):
        return "linux"
    if platform == "darwin":
        return "darwin"
    raise ServiceError(
        f"`wilson service` knows systemd (Linux) and launchd (macOS), not {platform}; "
        "run `wilson run --no-terminal` under your system's service manager"
    )


def install(
    home: Path,
    *,
    platform: str | None = None,
    environ: dict | None = None,
    argv: list[str] | None = None,
    workdir: Path | None = None,
) -> Result:
    environ = dict(os.environ if environ is None else environ)
    platform = platform_name(platform)
    argv, workdir = argv or command(), workdir or project_root()
    home = Path(home).expanduser().absolute()
    env_path, created = _env_file(home)
    lines = [
        f"secrets and other settings for the service go in {env_path}"
        + (" (created, readable only by you)" if created else "")
    ]
    if platform == "linux":
        path = systemd_unit_path(environ)
        _write(path, systemd_unit(argv, home, workdir).encode())
        lines.insert(0, f"wrote {path}")
        reload = _run(["systemctl", "--user", "daemon-reload"], environ)
        if reload is None or reload.returncode != 0:
            lines.append(
                f"not enabled: systemd's user manager is not reachable ({_why(reload, 'systemctl')}); " + by_hand(home)
            )
            return Result(1, lines)
        enable = _run(["systemctl", "--user", "enable", "--now", UNIT], environ)
        if enable.returncode != 0:
            lines.append(f"not enabled: systemctl --user enable --now {UNIT} said: {_why(enable, 'systemctl')}")
            return Result(1, lines)
        lines.append(
            f"enabled and started; logs: journalctl --user -u {NAME} -f "
            f"(to keep it running while you are logged out: loginctl enable-linger)"
        )
        return Result(0, lines)
    path = launchd_plist_path(environ)
    _write(path, launchd_plist(argv, home, workdir))
    lines.insert(0, f"wrote {path}")
    uid = str(os.getuid())
    _run(["launchctl", "bootout", f"gui/{uid}/{LABEL}"], environ)  # a previous install is replaced
    load = _run(["launchctl", "bootstrap", f"gui/{uid}", str(path)], environ)
    if load is None or load.returncode != 0:
        lines.append(f"not loaded: {_why(load, 'launchctl')}; " + by_hand(home))
        return Result(1, lines)
    lines.append(f"loaded; it starts at login and again after a failure; logs: {home / 'service.log'}")
    return Result(0, lines)


def status(home: Path, *, platform: str | None = None, environ: dict | None = None) -> Result:
    """0 when installed and running, 1 when installed but not running (or not knowable), 3 when not installed."""
    environ = dict(os.environ if environ is None else environ)
    platform = platform_name(platform)
    path = systemd_unit_path(environ) if platform == "linux" else launchd_plist_path(environ)
    if not path.exists():
        return Result(3, [f"not installed ({path} is not there); `wilson service install` installs it"])
    if platform == "linux":
        active = _run(["systemctl", "--user", "is-active", UNIT], environ)
        if active is None or (active.returncode != 0 and not active.stdout.strip()):
            return Result(
                1, [f"installed at {path}, but systemd's user manager is not reachable ({_why(active, 'systemctl')})"]
            )
        enabled = _run(["systemctl", "--user", "is-enabled", UNIT], environ)
        state, when = active.stdout.strip(), (enabled.stdout.strip() if enabled else "") or "unknown"
        return Result(
            0 if state == "active" else 1, [f"{UNIT}: {state} ({when}); unit {path}; logs: journalctl --user -u {NAME}"]
        )
    shown = _run(["launchctl", "print", f"gui/{os.getuid()}/{LABEL}"], environ)
    if shown is None or shown.returncode != 0:
        return Result(1, [f"installed at {path}, but not loaded ({_why(shown, 'launchctl')})"])
    state = next(
        (line.split("=", 1)[1].strip() for line in shown.stdout.splitlines() if line.strip().startswith("state =")),
        "unknown",
    )
    return Result(0 if state == "running" else 1, [f"{LABEL}: {state}; agent {path}; logs: {home / 'service.log'}"])


def uninstall(home: Path, *, platform: str | None = None, environ: dict | None = None) -> Result:
    """Stops and removes the unit or agent; service.env stays (it is yours and may hold secrets)."""
    environ = dict(os.environ if environ is None else environ)
    platform = platform_name(platform)
    lines = []
    if platform == "linux":
        path = systemd_unit_path(environ)
        stop = _run(["systemctl", "--user", "disable", "--now", UNIT], environ) if path.exists() else None
        if path.exists() and (stop is None or stop.returncode != 0):
            lines.append(f"could not stop it through systemd ({_why(stop, 'systemctl')}); removing the unit anyway")
    else:
        path = launchd_plist_path(environ)
        if path.exists():
            _run(["launchctl", "bootout", f"gui/{os.getuid()}/{LABEL}"], environ)
    if not path.exists():
        return Result(0, lines + [f"not installed ({path} is not there)"])
    path.unlink()
    if platform == "linux":
        _run(["systemctl", "--user", "daemon-reload"], environ)
    return Result(0, lines + [f"removed {path}; {Path(home) / ENV_FILE} is left for you to keep or delete"])


def main(action: str, home: Path, environ: dict | None = None) -> Result:
    try:
        return {"install": install, "status": status, "uninstall": uninstall}[action](home, environ=environ)
    except ServiceError as exc:
        return Result(2, [str(exc)])
    except OSError as exc:  # a config directory that cannot be written, and the like
        return Result(1, [f"{action}: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": ")])
