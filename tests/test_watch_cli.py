"""`wilson watch add URL` proposes watching a page (the gate shows it when Wilson runs; nothing is watched
before the approval); `wilson watch remove URL` proposes the opposite; `wilson watch list` shows them."""

from __future__ import annotations

from channels.web import watcher
from storage.models import Approval
from tests.cli_support import run_main

FEED = "https://news.example.org/feed.xml"


def test_watch_add_is_a_proposal_that_only_an_approval_turns_into_watching(tmp_path, make_app):
    home = tmp_path / "home"
    on = {"WILSON_WEB_ENABLED": "true", "WILSON_WEB_PORT": "0"}
    code, out, err = run_cli(home, on, "watch", "add", FEED, "--every", "6h")
    assert code == 0 and out.startswith("Proposal 1: Watch https://news.example.org/feed.xml (looked at every 6 hours)")
    code, out, _ = run_cli(home, on, "watch", "list")  # not "nothing watched" while it waits
    assert code == 0 and out == (
        "waiting for your approval (proposal 1): Watch https://news.example.org/feed.xml (looked at every 6 hours)\n"
    )

    # Wilson runs (from the moment the command was given): the gate shows the proposal where it talks with you
    app = make_app(start=Approval.get_by_id(1).created_at.isoformat(), home=home, env=on)
    assert app.wait_idle()
    [shown] = [d for d in app.user_deliveries() if d["approval"]]
    assert shown["approval"]["id"] == 1 and "Because you asked: wilson watch add" in shown["text"]
    assert watcher.get(FEED) is None  # nothing watched yet
    app.decide(1, "approve")
    assert app.wait_idle() and watcher.get(FEED) is not None
    assert Approval.get_by_id(1).status == "approved"
    code, out, _ = run_cli(home, on, "watch", "list")
    assert code == 0 and FEED in out


def test_a_watch_that_cannot_be_is_refused_in_one_line(tmp_path):
    home = tmp_path / "home"
    code, out, err = run_cli(home, {"WILSON_WEB_ENABLED": "true"}, "watch", "add", "ftp://files.example.org/x")
    assert (
        code == 2
        and out == ""
        and err.strip() == "wilson watch: Only http and https addresses can be watched (not ftp)."
    )
    code, _, err = run_cli(home, {"WILSON_WEB_ENABLED": "false"}, "watch", "add", FEED)
    assert code == 2 and "needs the web channel" in err
    code, _, err = run_cli(home, {"WILSON_WEB_ENABLED": "true"}, "watch", "remove")
    assert code == 2 and "which address?" in err


def run_cli(home, env: dict, *argv: str):
    import os
    from unittest import mock

    environ = {k: v for k, v in os.environ.items() if not k.startswith("WILSON_")}
    environ.update(env, WILSON_CORE_TIMEZONE="Europe/Berlin")
    with mock.patch.dict(os.environ, environ, clear=True):
        code, out, err = run_main(["--home", str(home), "--log-level", "WARNING", *argv])
    return code, out, "\n".join(line for line in err.splitlines() if " | INFO " not in line)
