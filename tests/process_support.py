"""What the tests that run Wilson's terminal as a separate process share: the command, one run of a script,
the deliveries it printed, and a wait that tolerates another process still creating its tables."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import partial
from pathlib import Path

from tests.conftest import ROOT
from tests.poll import wait_for as poll

# another process may still be creating its tables while these are asked
wait_for = partial(poll, timeout=20.0, meanwhile=(Exception,))

REPL = [sys.executable, str(ROOT / "bin" / "wilson-repl")]


def run_repl(home: Path, script: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    # no dashboard on a fixed port in a test
    env = dict(os.environ, WILSON_CORE_TIMEZONE="Europe/Berlin", WILSON_WEB_ENABLED="false")
    return subprocess.run(
        REPL + ["--home", str(home), "--json", *args],
        input=script,
        text=True,
        capture_output=True,
        timeout=timeout,
        env=env,
    )


def deliveries(stdout: str) -> list[dict]:
    return [d for d in map(json.loads, stdout.splitlines()) if d.get("type") == "delivery"]
