"""The README's quick start, as a newcomer runs it: a fresh clone of HEAD, `make run` with a sentence piped
in, then `bin/wilson doctor`, `bin/wilson-repl --help` and the README's simulated-clock lines from a
plain shell, with no virtualenv active and none on PATH.

The clone borrows this checkout's .venv through a symlink, so nothing is installed; its setup files (and
the lock) are dated before the venv's stamp, so `make` sees the venv as current (checked with `make -n` first: a
reinstall would point the shared venv at the temporary clone).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
STAMP = ROOT / ".venv" / ".installed"
PLAIN_PATH = "/usr/bin:/bin"


def _cannot() -> str | None:
    if not (ROOT / ".git").exists():
        return "not a git checkout, so there is no HEAD to clone"
    if not STAMP.exists():
        return "this checkout's .venv was not made by `make` (no .venv/.installed to share)"
    if not shutil.which("python3", path=PLAIN_PATH) or not shutil.which("make", path=PLAIN_PATH):
        return f"a plain shell here ({PLAIN_PATH}) has no python3 or make"
    return None


pytestmark = pytest.mark.skipif(_cannot() is not None, reason=f"quick start: {_cannot()}")


def code_blocks(text: str) -> list[list[str]]:
    return [block.strip("\n").splitlines() for block in re.findall(r"```\n(.*?)```", text, re.S)]


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("newcomer") / "wilson"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(dest)], check=True, timeout=60, capture_output=True)
    (dest / ".venv").symlink_to(ROOT / ".venv")
    before = STAMP.stat().st_mtime - 60
    for name in ("setup.cfg", "pyproject.toml", "requirements/lock.txt"):
        os.utime(dest / name, (before, before))
    return dest


def plain_shell(command: str, cwd: Path, home: Path, stdin: str = "") -> subprocess.CompletedProcess:
    """`command` as typed into a new terminal: sh, a system PATH, no VIRTUAL_ENV, no WILSON_* settings but
    the dashboard's port: 0, a free one. The default (8765) may be held by another Wilson on this machine,
    which the doctor rightly reports, and a Wilson this test starts must not hold it for anyone else."""
    env = {"PATH": PLAIN_PATH, "HOME": str(home), "LANG": "C.UTF-8", "WILSON_WEB_PORT": "0"}
    return subprocess.run(
        ["/bin/sh", "-c", command], cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=90
    )


def test_the_quick_start_is_two_commands():
    assert code_blocks(README)[0] == [
        "make run     # set up .venv on first use, then start Wilson (Telegram if configured, else your terminal)",
        "make test    # set up .venv on first use, then run the whole test suite",
    ]


@pytest.mark.slow
def test_make_run_then_wilson_doctor_and_repl_help_from_a_plain_shell(clone, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    dry = plain_shell("make -n run", clone, home)
    assert dry.returncode == 0 and "pip install" not in dry.stdout, dry.stdout  # the shared venv stays as it is

    sentence = re.search(r"Just type, e\.g\.\s+`([^`]+)`", README).group(1)  # the README's own example
    run = plain_shell("make run", clone, home, stdin=f"{sentence}\nquit\n")
    shown = run.stdout + run.stderr
    assert run.returncode == 0, shown
    assert "Traceback" not in shown
    settings = home / ".wilson" / "wilson.toml"  # ~/.wilson, as the README says
    assert f"First run: wrote your settings to {settings}" in run.stderr and settings.exists()
    assert "No Telegram token set, so Wilson talks to you here in the terminal." in run.stdout
    assert f"wilson> {sentence}" in run.stdout  # piped lines are echoed, so the transcript reads in order
    answer = run.stdout.split(f"wilson> {sentence}", 1)[1]
    assert "Wilson:" in answer and "approve 1" in answer, answer  # the trip is recognised and proposed
    assert " INFO " not in run.stdout  # log lines went to the log file
    assert (home / ".wilson" / "wilson.log").exists()

    doctor = plain_shell("bin/wilson doctor", clone, home)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert doctor.stdout.startswith("offline: no language model is configured"), doctor.stdout
    assert "Traceback" not in doctor.stderr

    helped = plain_shell("bin/wilson-repl --help", clone, home)
    assert helped.returncode == 0 and helped.stdout.startswith("usage: wilson-repl"), helped.stderr


def test_the_readmes_simulated_clock_lines_work_as_shown(clone, tmp_path):
    block = next(b for b in code_blocks(README) if b and b[0].startswith("bin/wilson-repl --clock sim"))
    command = block[0].replace("--home /tmp/w", f"--home {tmp_path / 'w'}")
    assert command != block[0]  # the README still uses a home the test can move
    typed = [line[len("wilson> ") :] for line in block[1:] if line.startswith("wilson> ")]
    assert len(typed) == len(block) - 1
    result = plain_shell(command, clone, tmp_path, stdin="\n".join(typed) + "\n")
    out = result.stdout
    assert result.returncode == 0 and "Traceback" not in out + result.stderr, result.stderr
    assert not [line for line in out.splitlines() if line.startswith("error: ")], out
    before_approve, after_approve = out.split("wilson> approve 1", 1)
    assert "Proposal 1" in before_approve and "Trip to Japan" in before_approve, out
    assert "Done:" in after_approve, after_approve
