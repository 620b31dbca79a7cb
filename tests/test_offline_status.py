"""`wilson status` and `budget` say plainly when no model is connected: the offline rules spend no tokens."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime, timezone

from tests.conftest import ROOT
from wilson.kernel import config as configmod
from wilson.kernel.clock import SimClock
from wilson.model.synapse import Synapse


def status(home, **env) -> str:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("WILSON_")}
    environ.update(WILSON_WEB_ENABLED="false", **env)
    done = subprocess.run(
        [sys.executable, str(ROOT / "bin" / "wilson"), "--home", str(home), "status"],
        capture_output=True,
        text=True,
        timeout=60,
        env=environ,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_status_without_a_model_says_so(tmp_path):
    out = status(tmp_path / "home")
    assert "model: none connected; the offline rules answer, and no tokens are spent" in out
    assert "tokens\n" not in out.replace("no tokens are spent", "")  # no token counts of a model that is not there


def test_status_with_a_model_names_it_per_role(tmp_path):
    out = status(tmp_path / "home", WILSON_LLM_BASE_URL="http://127.0.0.1:9/v1", WILSON_LLM_MODEL="qwen-small")
    assert "model deep: qwen-small" in out and "none connected" not in out


def test_budget_without_a_model_counts_no_tokens(tmp_path, db):
    synapse = Synapse(configmod.load(tmp_path, environ={}), SimClock(datetime(2027, 1, 5, tzinfo=timezone.utc)))
    try:
        report = synapse.budget_report()
    finally:
        synapse.close()
    assert report.count("no language model (offline rules), no tokens") == 3
    assert " of " not in report  # no "0 of 2,000,000 tokens" for a model that does not exist
