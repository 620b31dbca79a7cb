"""Telegram set up by following the words on the screen: `wilson pair` without a token says what to do first, and
a running Wilson with a token but nobody allowed or paired says how to pair (against the fake Bot API)."""

from __future__ import annotations

import os
import signal
import subprocess
import threading

import pytest

from tests.fake_telegram import DEFAULT_TOKEN, FakeTelegram
from tests.config_support import WILSON, cli, no_traceback


@pytest.fixture
def telegram():
    server = FakeTelegram()
    server.start()
    yield server
    server.stop()


def test_pair_without_a_token_says_to_make_a_bot_first_and_prints_no_code(tmp_path):
    result = cli(tmp_path, "pair")
    no_traceback(result)
    assert result.returncode == 1
    assert result.stderr == (
        "wilson pair: there is no Telegram bot to pair with yet: no token is set (what to do first is above).\n"
    )
    assert "@BotFather, send /newbot" in result.stdout and "export WILSON_TELEGRAM_TOKEN=" in result.stdout
    assert "/start" not in result.stdout + result.stderr  # no code for a bot that does not exist


def run_until(home, wanted: str, **env) -> tuple[str, bool]:
    """Start `wilson run`, read what it prints until `wanted` or "Ctrl-C stops it." and a moment beyond; stop it."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("WILSON_") and k != "TZ"}
    environ.update(WILSON_HOME=str(home), WILSON_WEB_ENABLED="false", WILSON_TELEGRAM_POLL_TIMEOUT="1", **env)
    proc = subprocess.Popen(
        WILSON + ["run", "--llm", "offline"], env=environ, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    lines: list[str] = []
    seen = threading.Event()

    def read():
        for line in proc.stdout:
            lines.append(line)
            if wanted in line:
                seen.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        found = seen.wait(60)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        reader.join(timeout=10)
    return "".join(lines), found


def test_a_running_wilson_with_a_token_and_nobody_allowed_says_how_to_pair(tmp_path, telegram):
    out, found = run_until(
        tmp_path,
        "Nobody may talk to the bot yet",
        WILSON_TELEGRAM_TOKEN=DEFAULT_TOKEN,
        WILSON_TELEGRAM_BASE_URL=telegram.base_url,
    )
    assert found, out
    assert (
        "Nobody may talk to the bot yet. To make it yours, run `wilson pair` in another terminal and send the "
        "code it prints to your bot"
    ) in out
    assert DEFAULT_TOKEN not in out


def test_a_running_wilson_with_an_allowed_user_gives_no_pairing_hint(tmp_path, telegram):
    out, found = run_until(
        tmp_path,
        "Ctrl-C stops it.",
        WILSON_TELEGRAM_TOKEN=DEFAULT_TOKEN,
        WILSON_TELEGRAM_BASE_URL=telegram.base_url,
        WILSON_TELEGRAM_ALLOWED_USERS="1001",
    )
    assert found, out
    assert "wilson pair" not in out
