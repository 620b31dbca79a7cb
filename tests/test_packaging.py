"""`pip install .` gives working `wilson` and `wilson-repl` commands.

The wheel is built from HEAD (as a fresh clone has it) without build isolation or an index, so nothing is
downloaded; it is installed into a new, empty virtualenv, whose only view of the dependencies is this
checkout's .venv site-packages (a .pth line, which adds a directory but runs none of its hooks, so the
editable install of this checkout stays out of sight). The commands then run from outside the source tree.
"""

from __future__ import annotations

import configparser
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT


def console_scripts_in_setup_cfg() -> dict[str, str]:
    setup = configparser.ConfigParser()
    setup.read(ROOT / "setup.cfg")
    lines = setup["options.entry_points"]["console_scripts"].strip().splitlines()
    return {name.strip(): target.strip() for name, _, target in (line.partition("=") for line in lines)}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("packaging")
    source = work / "src"
    source.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "HEAD"], capture_output=True, check=True, timeout=60)
    subprocess.run(["tar", "-x", "-C", str(source)], input=archive.stdout, check=True, timeout=60)
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--quiet",
            "-w",
            str(work / "dist"),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert built.returncode == 0, (
        "the wheel does not build (`wheel` is in the test extras: run make)\n" + built.stderr[-2000:]
    )
    [found] = (work / "dist").glob("wilson-*.whl")
    return found


def test_the_wheel_declares_both_commands_and_carries_every_package(wheel):
    scripts = console_scripts_in_setup_cfg()
    assert scripts == {"wilson": "wilson.app.cli:main", "wilson-repl": "wilson.app.repl:main"}
    with zipfile.ZipFile(wheel) as whl:
        names = whl.namelist()
        [entry_points] = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        parser = configparser.ConfigParser()
        parser.read_string(whl.read(entry_points).decode())
    assert {k: v for k, v in parser["console_scripts"].items()} == scripts
    for package in (
        "wilson/app/cli.py",
        "wilson/app/repl.py",
        "wilson/app/service.py",
        "wilson/model/playbook.toml",
        "actors/__init__.py",
        "channels/__init__.py",
        "storage/__init__.py",
    ):
        assert package in names, f"{package} is not in the wheel"
    assert not [n for n in names if n.startswith(("tests/", "bench/"))]


def test_pip_install_gives_working_wilson_and_wilson_repl_commands(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    installed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "--no-deps",
            "--no-index",
            "--quiet",
            str(wheel),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert installed.returncode == 0, installed.stderr[-2000:]
    site = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.strip()
    (Path(site) / "wilson-test-deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {
        "PATH": f"{venv / 'bin'}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "WILSON_HOME": str(tmp_path / "home"),
        "LANG": "C.UTF-8",
    }

    def command(*argv: str, stdin: str = "") -> subprocess.CompletedProcess:
        return subprocess.run(
            list(argv), cwd=elsewhere, env=env, input=stdin, capture_output=True, text=True, timeout=120
        )

    where = command(str(venv / "bin" / "python"), "-c", "import wilson; print(wilson.__file__)")
    assert where.stdout.startswith(site), where.stdout + where.stderr  # the installed copy, not this checkout

    for script in ("wilson", "wilson-repl"):
        helped = command(script, "--help")
        assert helped.returncode == 0 and helped.stdout.startswith(f"usage: {script}"), helped.stderr
    assert command("wilson", "config").returncode == 0
    talk = command("wilson-repl", "--llm", "offline", stdin="say hello\nquit\n")  # playbook.toml came along
    assert talk.returncode == 0 and "Wilson:" in talk.stdout, talk.stdout + talk.stderr
    assert "Traceback" not in talk.stderr
    assert os.path.exists(tmp_path / "home" / "wilson.toml")
