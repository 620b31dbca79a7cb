"""An approved MCP change across a real SIGKILL: `wilson-repl` (the real process) with an SDK server
(tests/mcp_servers.py) that appends each `add_note` call to a file. The user approves, the process dies at the
hand-off (right after the approval's commit, or right after the server answered), and a restart neither calls
the tool again nor keeps quiet: the user is told the outcome is unknown."""

from __future__ import annotations

import os
import signal
import subprocess

import pytest

from storage.db import open_database
from storage.models import Approval, ApprovalItem, Setting
from tests.brain import call
from tests.cortex_support import model
from tests.mcp_support import servers
from tests.process_support import REPL, deliveries, wait_for
from wilson.model.scripted import ScriptedServer

pytest.importorskip("mcp.server.mcpserver", reason="the mcp extra is not installed")  # the SDK, not our code


def decide(ctx, body):
    return {"tool_calls": [call("propose", changes=[{"action": "notes__add_note", "text": "buy oat milk"}])]}


def offered() -> bool:
    """The server listed its tools and the channel let them be used (it records the descriptions it allowed)."""
    row = Setting.get_or_none(Setting.key == "mcp:said")
    return row is not None and "notes__add_note" in (row.value or {})


@pytest.mark.parametrize(
    "point, calls", [("approval:after-calling-commit", ""), ("approval:after-call", "buy oat milk\n")]
)
def test_killed_right_after_approving_a_change_is_called_at_most_once_and_told_as_unknown(tmp_path, point, calls):
    home, log = tmp_path / "home", tmp_path / "log.txt"
    with ScriptedServer(model(decide, after=lambda body: {"text": "I proposed adding that note."})) as model_server:
        env = dict(
            os.environ,
            WILSON_CORE_TIMEZONE="Europe/Berlin",
            WILSON_LLM_BASE_URL=model_server.base_url,
            WILSON_LLM_MODEL="m",
            WILSON_FAULT_POINTS=point,
            WILSON_WEB_ENABLED="false",  # no dashboard on a fixed port in a test
            **servers(log),
        )
        proc = subprocess.Popen(
            REPL + ["--home", str(home), "--json"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        try:
            assert wait_for(lambda: (home / "wilson.sqlite3").exists())
            db = open_database(None, home)
            assert wait_for(offered, timeout=60)
            proc.stdin.write("say add a note to my notes server: buy oat milk\n")
            proc.stdin.flush()
            assert wait_for(lambda: Approval.select().where(Approval.presented_at.is_null(False)).exists(), timeout=60)
            approval = Approval.get()
            proc.stdin.write(f"approve {approval.id}\napprove {approval.id}\n")
            proc.stdin.flush()
            proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        assert proc.returncode == -signal.SIGKILL, proc.stderr.read()[-2000:]
        (item,) = approval.items
        assert ApprovalItem.get_by_id(item.id).status == "calling"
        assert (log.read_text(encoding="utf-8") if log.exists() else "") == calls
        db.close()

    restart = {k: v for k, v in env.items() if k != "WILSON_FAULT_POINTS"}
    result = subprocess.run(
        REPL + ["--home", str(home), "--json", "--llm", "offline"],
        input=f"wait\napprove {approval.id}\nwait\nquit\n",
        text=True,
        capture_output=True,
        timeout=120,
        env=restart,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    told = [d["text"] for d in deliveries(result.stdout)]
    assert (
        "I'm not sure this happened: Wilson stopped while it was being done, so I won't repeat it on my own. "
        "Please check yourself:\n? Use add_note on the MCP server notes (text: buy oat milk)"
    ) in told
    assert f"Already done: proposal {approval.id} was approved." in told  # approving again calls nothing
    assert (log.read_text(encoding="utf-8") if log.exists() else "") == calls  # never a second call
    db = open_database(None, home)
    assert ApprovalItem.get_by_id(item.id).status == "unknown"
    db.close()
