"""`wilson doctor` looks at each configured channel for real and, for each failure a person meets, exits non-zero
with the cause and the setting to change in its words: a wrong IMAP password (Dovecot), a folder that does not
exist, a refused SMTP login (aiosmtpd), a calendar URL that 404s, a Telegram token that getMe refuses, the
dashboard's port taken by another program, a watched feed that is gone."""

from __future__ import annotations

import socket
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler

import pytest

from tests.fake_telegram import DEFAULT_TOKEN, FORUM_CHAT_ID, FakeTelegram
from tests.mailservers import PASSWORD, USER, SmtpSink
from channels.web import watcher
from storage.db import open_database
from storage.migrations import migrate
from tests.config_support import cli, no_traceback
from tests.web_harness import base_url
from wilson.kernel.loopback import LoopbackServer

ICS = (
    b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:a\r\nDTSTAMP:20270101T000000Z\r\n"
    b"DTSTART:20270108T113000Z\r\nDTEND:20270108T123000Z\r\nSUMMARY:Lunch\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
)


class Calendars(LoopbackServer):
    """/cal.ics is a calendar; every other address is gone (404), as an old secret link is."""

    thread_name = "ics-doctor"

    class handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            found = self.path == "/cal.ics"
            self.send_response(200 if found else 404)
            self.send_header("Content-Type", "text/calendar" if found else "text/plain")
            body = ICS if found else b"Not Found"
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)


@pytest.fixture(scope="module")
def mailbox(dovecot):
    """The module's Dovecot with a Receipts folder that holds one mail."""
    dovecot.append_many([b"Subject: hi\r\n\r\nhello\r\n"], "Receipts")
    return dovecot


@pytest.fixture(scope="module")
def smtp():
    server = SmtpSink().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def calendars():
    server = Calendars()
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def telegram():
    server = FakeTelegram(forum_chat_id=FORUM_CHAT_ID)
    server.start()
    yield server
    server.stop()


def mail(imap_port: int | None = None, smtp_port: int | None = None, **more) -> dict:
    env = {"WILSON_EMAIL_USERNAME": USER, "WILSON_EMAIL_PASSWORD": PASSWORD}
    if imap_port:
        env.update(
            WILSON_EMAIL_IMAP_HOST="127.0.0.1", WILSON_EMAIL_IMAP_PORT=str(imap_port), WILSON_EMAIL_IMAP_SECURITY="none"
        )
    if smtp_port:
        env.update(
            WILSON_EMAIL_SMTP_HOST="127.0.0.1", WILSON_EMAIL_SMTP_PORT=str(smtp_port), WILSON_EMAIL_SMTP_SECURITY="none"
        )
    return {**env, **more}


def doctor(home, **env):
    env.setdefault("WILSON_WEB_ENABLED", "false")  # the dashboard's default port may be anyone's on a shared machine
    result = cli(home, "doctor", **env)
    no_traceback(result)
    return result


def fixes(result) -> list[str]:
    return [line for line in result.stdout.splitlines() if "FIX:" in line]


def test_every_channel_working_is_said_and_doctor_exits_zero(tmp_path, mailbox, smtp, calendars, telegram):
    result = doctor(
        tmp_path,
        **mail(mailbox.port, smtp.port, WILSON_EMAIL_FOLDERS="INBOX,Receipts"),
        WILSON_CALENDAR_URL=calendars.base_url + "/cal.ics",
        WILSON_TELEGRAM_TOKEN=DEFAULT_TOKEN,
        WILSON_TELEGRAM_BASE_URL=telegram.base_url,
        WILSON_TELEGRAM_ALLOWED_USERS="1001",
    )
    assert result.returncode == 0, result.stdout
    out = result.stdout
    assert f"email: IMAP ok, logged in at 127.0.0.1 as {USER}; reads INBOX, Receipts" in out
    assert f"email: SMTP ok at 127.0.0.1:{smtp.port}, logged in as {USER}" in out
    assert "calendar: ok, http://127.0.0.1:" in out and "1 document(s)" in out
    assert "telegram: ok, the token is @wilson_test_bot's" in out
    assert DEFAULT_TOKEN not in out and PASSWORD not in out


def test_a_wrong_imap_password_is_told_with_the_settings_to_check(tmp_path, mailbox):
    result = doctor(tmp_path, **mail(mailbox.port, WILSON_EMAIL_PASSWORD="not-the-right-one"))
    assert result.returncode == 1
    [line] = fixes(result)
    assert line.startswith(f"email: FIX: IMAP: 127.0.0.1 refused the login for {USER} (")
    assert line.endswith(
        "check [email] username and WILSON_EMAIL_PASSWORD (Gmail and Outlook want an app "
        "password, not your account password)"
    )
    assert "not-the-right-one" not in result.stdout + result.stderr


def test_a_folder_that_does_not_exist_is_told_with_the_folders_there(tmp_path, mailbox):
    result = doctor(tmp_path, **mail(mailbox.port, WILSON_EMAIL_FOLDERS="INBOX,Reciepts"))
    assert result.returncode == 1
    [line] = fixes(result)
    assert line.startswith("email: FIX: folder 'Reciepts' does not exist at 127.0.0.1; the folders there are: ")
    assert '"INBOX"' in line and '"Receipts"' in line and "Set [email] folders to a list of those" in line


def test_a_refused_smtp_login_is_told_with_the_settings_to_check(tmp_path, smtp):
    result = doctor(tmp_path, **mail(smtp_port=smtp.port, WILSON_EMAIL_PASSWORD="not-the-right-one"))
    assert result.returncode == 1
    assert fixes(result) == [
        f"email: FIX: SMTP: 127.0.0.1 refused the login for {USER}; check smtp_username and "
        "WILSON_EMAIL_PASSWORD (Gmail and Outlook want an app password)"
    ]


def test_a_calendar_url_that_404s_is_told_with_where_to_find_the_address(tmp_path, calendars):
    result = doctor(tmp_path, WILSON_CALENDAR_URL=calendars.base_url + "/private-abc123/basic.ics")
    assert result.returncode == 1
    [line] = fixes(result)
    assert line.startswith("calendar: FIX: http://127.0.0.1:") and ": HTTP 404; the address is gone" in line
    assert "into [calendar] url" in line and "private-abc123" not in result.stdout  # the secret path stays hidden


def test_a_telegram_token_that_getme_refuses_is_told_with_where_to_get_it(tmp_path, telegram):
    wrong = "4242424242:AAnot-the-token-at-all"
    result = doctor(tmp_path, WILSON_TELEGRAM_TOKEN=wrong, WILSON_TELEGRAM_BASE_URL=telegram.base_url)
    assert result.returncode == 1
    assert fixes(result) == [
        "telegram: FIX: Telegram refused the token (Unauthorized); copy it again from "
        "@BotFather (/mybots → your bot → API Token) into WILSON_TELEGRAM_TOKEN"
    ]
    assert wrong not in result.stdout + result.stderr


def test_a_token_with_nobody_allowed_says_how_to_pair(tmp_path, telegram):
    result = doctor(tmp_path, WILSON_TELEGRAM_TOKEN=DEFAULT_TOKEN, WILSON_TELEGRAM_BASE_URL=telegram.base_url)
    assert "telegram: nobody may talk to the bot yet: run `wilson pair`" in result.stdout


def test_wilson_refuses_to_start_with_a_folder_that_does_not_exist(tmp_path, mailbox):
    result = cli(
        tmp_path,
        "run",
        "--llm",
        "offline",
        stdin="quit\n",
        **mail(mailbox.port, WILSON_EMAIL_FOLDERS="Reciepts", WILSON_EMAIL_POLL="off"),
    )
    no_traceback(result)
    assert result.returncode == 2
    assert "\nwilson: folder 'Reciepts' does not exist at 127.0.0.1; the folders there are: " in result.stderr
    assert '"Receipts"' in result.stderr


def test_wilson_starts_with_folders_that_exist(tmp_path, mailbox):
    result = cli(
        tmp_path,
        "run",
        "--llm",
        "offline",
        stdin="quit\n",
        **mail(mailbox.port, WILSON_EMAIL_FOLDERS="INBOX,Receipts", WILSON_EMAIL_POLL="off"),
    )
    no_traceback(result)
    assert result.returncode == 0, result.stderr


def forum_doctor(home, telegram, chat_id=FORUM_CHAT_ID):
    return doctor(
        home,
        WILSON_TELEGRAM_TOKEN=DEFAULT_TOKEN,
        WILSON_TELEGRAM_BASE_URL=telegram.base_url,
        WILSON_TELEGRAM_ALLOWED_USERS="1001",
        WILSON_TELEGRAM_FORUM_CHAT_ID=str(chat_id),
    )


def test_a_forum_where_the_bot_manages_topics_is_ok(tmp_path, telegram):
    result = forum_doctor(tmp_path, telegram)
    assert result.returncode == 0, result.stdout
    assert f"telegram: ok, the bot manages topics in {FORUM_CHAT_ID}" in result.stdout


def test_a_bot_that_is_no_admin_in_the_forum_is_told_to_get_manage_topics(tmp_path, telegram):
    telegram.bot_rights = {"status": "member"}
    try:
        result = forum_doctor(tmp_path, telegram)
    finally:
        telegram.bot_rights = {"status": "administrator", "can_manage_topics": True}
    assert result.returncode == 1
    assert fixes(result) == [
        f"telegram: FIX: the bot may not manage topics in {FORUM_CHAT_ID}: group → Edit → "
        "Administrators → the bot → switch on Manage Topics "
        "(docs/telegram.md walks through it)"
    ]


def test_a_forum_chat_id_the_bot_is_not_in_is_told(tmp_path, telegram):
    result = forum_doctor(tmp_path, telegram, chat_id=-1009999999)
    assert result.returncode == 1
    [line] = fixes(result)
    assert line.startswith(
        "telegram: FIX: the forum chat -1009999999 is not reachable (Bad Request: chat not found): "
        "add the bot to the group and check forum_chat_id"
    )


def test_the_dashboards_port_free_or_held_by_a_running_wilson_is_ok_and_taken_by_another_program_is_told(tmp_path, web):
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        taken = other.getsockname()[1]
        result = doctor(tmp_path, WILSON_WEB_ENABLED="true", WILSON_WEB_PORT=str(taken))
    assert result.returncode == 1
    assert fixes(result) == [
        f"web: FIX: port {taken} on 127.0.0.1 is taken by another program; set [web] port to "
        f"a free one (WILSON_WEB_PORT), e.g. {taken + 1}"
    ]
    result = doctor(tmp_path, WILSON_WEB_ENABLED="true", WILSON_WEB_PORT=str(taken))  # given up by the other
    assert result.returncode == 0 and f"web: ok, port {taken} on 127.0.0.1 is free for the dashboard" in result.stdout
    running = int(base_url().rsplit(":", 1)[1])
    result = doctor(tmp_path, WILSON_WEB_ENABLED="true", WILSON_WEB_PORT=str(running))
    assert f"web: ok, the dashboard of a running Wilson answers at 127.0.0.1:{running}" in result.stdout


def test_each_watched_feed_is_fetched_once_and_one_that_is_gone_is_told(tmp_path, calendars):
    home = tmp_path / "home"
    db = open_database(None, home)
    migrate()
    now = datetime(2027, 1, 5, 8, tzinfo=timezone.utc)
    for path in ("/cal.ics", "/news/feed.xml"):
        watcher.add(calendars.base_url + path, watcher.DEFAULT_EVERY, now)
    db.close()
    result = doctor(home)
    assert result.returncode == 1
    assert f"web: ok, watched {calendars.base_url}/cal.ics answered ({len(ICS):,} bytes)" in result.stdout
    assert fixes(result) == [
        f"web: FIX: watched {calendars.base_url}/news/feed.xml: the server answered HTTP 404; "
        f"check the address, or stop watching it with "
        f"`wilson watch remove {calendars.base_url}/news/feed.xml`"
    ]
