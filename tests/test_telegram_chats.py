"""`wilson telegram chats` lists the chats the bot is in, with their ids, whether topics are on and whether the bot
may manage them (the fake Bot API), from the updates waiting before Wilson ever ran and from the chats a running
Wilson saw."""

from __future__ import annotations

from wilson.app import cli as wilson_cli
from wilson.kernel.clock import RealClock
from wilson.kernel.config import load
from wilson.app.application import Wilson
from storage.models import Cursor
from tests.fake_telegram import DEFAULT_TOKEN, FORUM_CHAT_ID
from tests.config_support import cli, no_traceback

FAMILY = -1005550001
CLUB = -1005550002
OWNER = 1001


def test_before_wilson_ever_ran_the_waiting_updates_name_the_chats_and_none_is_used_up(tmp_path, fake):
    fake.groups[FAMILY] = {"title": "Family", "is_forum": False, "rights": {"status": "member"}}
    fake.send_text(OWNER, "hello forum", chat_id=FORUM_CHAT_ID)
    fake.send_text(OWNER, "hello family", chat_id=FAMILY)
    fake.send_text(OWNER, "hello bot")
    result = cli(
        tmp_path,
        "telegram",
        "chats",
        WILSON_TELEGRAM_TOKEN=DEFAULT_TOKEN,
        WILSON_TELEGRAM_BASE_URL=fake.base_url,
        WILSON_TELEGRAM_FORUM_CHAT_ID=str(FORUM_CHAT_ID),
    )
    no_traceback(result)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"{FORUM_CHAT_ID}  supergroup “Wilson topics”: topics on; the bot may manage topics  ← [telegram] forum_chat_id",
        f"{FAMILY}  supergroup “Family”: topics off (group → Edit → Topics switches them on)",
        f"{OWNER}  private chat with User{OWNER}",
    ]
    assert fake.pending_updates() == 3  # read without an offset: a Wilson started later still gets them
    assert DEFAULT_TOKEN not in result.stdout + result.stderr


def test_a_running_wilson_remembers_the_chats_it_saw(tmp_path, fake):
    fake.groups[CLUB] = {"title": "Book club", "is_forum": True, "rights": {"status": "member"}}
    environ = {
        "WILSON_TELEGRAM_TOKEN": DEFAULT_TOKEN,
        "WILSON_TELEGRAM_BASE_URL": fake.base_url,
        "WILSON_TELEGRAM_ALLOWED_USERS": str(OWNER),
        "WILSON_TELEGRAM_POLL_TIMEOUT": "1",
        "WILSON_WEB_ENABLED": "false",
    }
    app = Wilson(load(tmp_path, environ=environ), RealClock(), llm="offline", log_level="WARNING").start()
    try:
        sent = fake.send_text(OWNER, "hello club", chat_id=CLUB)
        fake.wait_for(
            lambda: (
                (c := Cursor.get_or_none(Cursor.name == "telegram:offset")) is not None and c.value > sent["update_id"]
            ),
            10,
            "the message handled",
        )
        fake.wait_for(lambda: fake.pending_updates() == 0, 10, "the update used up")  # only Wilson's record is left
        result = cli(tmp_path, "telegram", "chats", **environ)
    finally:
        app.stop()
    no_traceback(result)
    assert result.stdout.splitlines() == [
        f"{CLUB}  supergroup “Book club”: topics on; the bot may not manage topics (group → Edit → Administrators → "
        "the bot → Manage Topics)"
    ]


def test_without_a_token_it_says_to_make_a_bot_first(tmp_path, capsys):
    assert wilson_cli.main(["--home", str(tmp_path), "telegram", "chats"]) == 1
    assert capsys.readouterr().out == (
        "There is no bot yet: create one with @BotFather and set WILSON_TELEGRAM_TOKEN (docs/telegram.md).\n"
    )
