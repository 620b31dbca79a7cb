"""`python -m bench --smoke` runs the whole organism with the watchdog on; a stall fails the build.

It runs in a process of its own under a time limit, so a stall fails `make test` instead of
hanging it. Only that it finishes, with its figures and without a problem found, is asserted
here: speed is the benchmarks' business."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

STALL = 110  # seconds: far beyond the ~5 s it takes, and past bench's own limit for it (90 s)


@pytest.mark.timeout(STALL + 30)
def test_the_smoke_benchmark_finishes_with_its_figures_and_nothing_lost_or_repeated():
    env = {k: v for k, v in os.environ.items() if not k.startswith("WILSON_")}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "bench", "--smoke"],
            cwd=str(ROOT),
            env=env,
            capture_output=True,
            text=True,
            timeout=STALL,
        )
    except subprocess.TimeoutExpired as exc:
        said = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else exc.stdout or ""
        raise AssertionError(f"python -m bench --smoke stalled: no end after {STALL} s\n{said}") from None
    report = done.stdout + done.stderr
    assert done.returncode == 0, report
    assert "== smoke (watchdog on)" in report, report
    for figure in (
        "reply with a 1.5 s model call:",
        "messages counted in flight when idle: 0",
        "actor restarts: 0",
        "a simulated week",
    ):
        assert figure in report, report
    assert "PROBLEM" not in report and "FAILED" not in report, report
