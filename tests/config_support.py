"""Running the wilson command as a person does, for the configuration tests."""

from __future__ import annotations
import os
import subprocess
import sys
from pathlib import Path
from tests.conftest import ROOT


WILSON = [sys.executable, str(ROOT / "bin" / "wilson")]


def cli(home: Path, *args: str, stdin: str = "", **env) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("WILSON_") and k != "TZ"}
    environ.update(WILSON_HOME=str(home), **env)
    return subprocess.run(WILSON + list(args), input=stdin, text=True, capture_output=True, timeout=60, env=environ)


def no_traceback(result: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in result.stderr + result.stdout
