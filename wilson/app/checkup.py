"""`wilson doctor`'s look at each configured channel, for real: the IMAP login and folders, the SMTP greeting and
login, each calendar source fetched once, the Telegram token asked with getMe, the dashboard's port, each
watched page or feed fetched once, and each MCP server started and listed.

Each finding is one line; a problem is a "FIX:" line that says what to change, in the words of the setting to
change. Nothing here is kept or retried: this is a one-off look, and its lines are printed with secrets masked.
"""

from __future__ import annotations

import errno
import socket
import threading

from channels.calendar.event import SourceError
from channels.calendar.sources import AppleCalendarSource, IcsUrlSource, sources_from_config
from channels.email import settings as email_settings
from channels.email.imap import ImapClient, ImapError
from channels.email.smtp import SendError, SmtpSender
from channels.mcp import servers as mcp_servers, skill as mcp_skill
from channels.telegram.access import parse_ids, paired_users
from channels.web import fetching, watcher
from wilson.kernel.redact import redact, register

TIMEOUT = 20.0  # one look at one server; a person is waiting at the terminal


def run(config) -> list[str]:
    register(config.secrets())
    lines = email(config) + calendar(config) + telegram(config) + web(config) + feeds() + mcp(config)
    return [redact(line) for line in lines]


def email(config) -> list[str]:
    if not email_settings.enabled(config):
        return ["email: not read (no [email] imap_host)"] + (smtp(config) if config.get("email", "smtp_host") else [])
    get = config.get
    host = str(get("email", "imap_host")).strip()
    lines = []
    try:
        client = ImapClient(
            host,
            int(get("email", "imap_port") or 0),
            str(get("email", "imap_security") or "ssl"),
            str(get("email", "username") or ""),
            email_settings.password(config),
            timeout=TIMEOUT,
            token=email_settings.token_source(config),
        )
        client.connect()
    except ImapError as exc:
        return [f"email: FIX: IMAP: {exc}; {_imap_hint(str(exc))}"] + smtp(config)
    try:
        missing = email_settings.missing_folders(config, client.folder_names())
        if missing:
            lines.append(f"email: FIX: {missing}")
        else:
            lines.append(
                f"email: IMAP ok, logged in at {host} as {get('email', 'username')}; reads "
                f"{', '.join(email_settings.folders(config))}"
            )
    except ImapError as exc:
        lines.append(f"email: FIX: IMAP: {exc}")
    finally:
        client.close()
    return lines + smtp(config)


def folders_at_start(config) -> str | None:
    """Before Wilson starts: the line that refuses a configured folder the server does not have (with the ones it
    has), else None. A server that cannot be reached now is no reason to refuse: the channel tries again."""
    if not email_settings.enabled(config):
        return None
    get = config.get
    try:
        client = ImapClient(
            str(get("email", "imap_host")).strip(),
            int(get("email", "imap_port") or 0),
            str(get("email", "imap_security") or "ssl"),
            str(get("email", "username") or ""),
            email_settings.password(config),
            timeout=10.0,
            token=email_settings.token_source(config),
        )
        client.connect()
    except ImapError:
        return None
    try:
        return email_settings.missing_folders(config, client.folder_names())
    except ImapError:
        return None
    finally:
        client.close()


def _imap_hint(said: str) -> str:
    if "refused the login" in said:
        return (
            "check [email] username and WILSON_EMAIL_PASSWORD (Gmail and Outlook want an app password, not "
            "your account password)"
        )
    if "certificate" in said or "TLS" in said:
        return "see the reason above"
    return "check [email] imap_host, imap_port and imap_security"


def smtp(config) -> list[str]:
    get = config.get
    host = str(get("email", "smtp_host") or "").strip()
    if not host:
        return ["email: cannot send (no [email] smtp_host); set it to send the mails you approve"]
    try:
        sender = SmtpSender(
            host,
            int(get("email", "smtp_port") or 0),
            str(get("email", "smtp_security") or ""),
            email_settings.smtp_username(config),
            email_settings.password(config),
            timeout=TIMEOUT,
            token=email_settings.token_source(config),
        )
        return [f"email: SMTP ok at {host}:{sender.port}, {sender.check()}"]
    except (SendError, ImapError) as exc:  # ImapError: a security setting Wilson does not take
        return [f"email: FIX: SMTP: {exc}"]


def calendar(config) -> list[str]:
    lines = []
    for source in sources_from_config(config):
        if isinstance(source, AppleCalendarSource):
            lines.append("calendar: Apple Calendar is read through osascript when Wilson runs; not checked here")
            continue
        try:
            documents, _ = source.fetch({})
        except SourceError as exc:
            lines.append(f"calendar: FIX: {exc}; {_calendar_hint(source, str(exc))}")
            continue
        except Exception as exc:  # a source's library may fail in its own way; the line says which
            lines.append(f"calendar: FIX: {source.label}: {type(exc).__name__}: {str(exc)[:160]}")
            continue
        size = sum(len(body) for _, body in documents or [])
        lines.append(f"calendar: ok, {source.label} read ({len(documents or [])} document(s), {size:,} bytes)")
    return lines or ["calendar: none configured (Wilson keeps its own calendar.ics in WILSON_HOME)"]


def _calendar_hint(source, said: str) -> str:
    if isinstance(source, IcsUrlSource):
        if "HTTP 404" in said or "HTTP 410" in said:
            return (
                "the address is gone: copy the calendar's secret .ics address again (Google: Settings → your "
                "calendar → Secret address in iCal format) into [calendar] url"
            )
        if "HTTP 401" in said or "HTTP 403" in said:
            return "the server wants a login: use the calendar's secret (private) .ics address in [calendar] url"
        return "check [calendar] url"
    if "caldav" in type(source).__name__.lower():
        return "check [calendar] caldav_url, caldav_username and WILSON_CALENDAR_CALDAV_PASSWORD"
    return "check [calendar] path"


def telegram(config) -> list[str]:
    # lazy: httpx (with its command-line extras, about 70 ms) only once a request is made
    import httpx

    token = str(config.get("telegram", "token") or "").strip()
    if not token:
        return ["telegram: off (no token); to use it, create a bot with @BotFather and set WILSON_TELEGRAM_TOKEN"]
    base = str(config.get("telegram", "base_url") or "https://api.telegram.org/bot")
    try:
        response = httpx.get(f"{base}{token}/getMe", timeout=TIMEOUT)
        answer = response.json() if response.headers.get("content-type", "").startswith("application/json") else {}
    except (httpx.HTTPError, ValueError) as exc:
        return [
            f"telegram: FIX: cannot reach the Bot API ({type(exc).__name__}); check the network or [telegram] base_url"
        ]
    if response.status_code in (401, 404) or not answer.get("ok"):
        said = answer.get("description") or f"HTTP {response.status_code}"
        return [
            f"telegram: FIX: Telegram refused the token ({said}); copy it again from @BotFather (/mybots → your "
            f"bot → API Token) into WILSON_TELEGRAM_TOKEN"
        ]
    bot = answer.get("result") or {}
    lines = [f"telegram: ok, the token is @{bot.get('username', '?')}'s"]
    forum = str(config.get("telegram", "forum_chat_id") or "").strip()
    if forum:
        lines.append(_forum(f"{base}{token}", forum, bot.get("id")))
    if not parse_ids(config.get("telegram", "allowed_users")) and not _paired():
        lines.append(
            "telegram: nobody may talk to the bot yet: run `wilson pair` and send the code it prints to "
            "the bot, or set WILSON_TELEGRAM_ALLOWED_USERS to your numeric user id"
        )
    return lines


def _forum(api: str, chat_id: str, bot_id) -> str:
    """Whether the forum chat is there, has topics on, and lets the bot manage them: the steps of docs/telegram.md."""
    # lazy: httpx (with its command-line extras, about 70 ms) only once a request is made
    import httpx

    steps = "(docs/telegram.md walks through it)"
    try:
        chat = httpx.get(f"{api}/getChat", params={"chat_id": chat_id}, timeout=TIMEOUT).json()
        if not chat.get("ok"):
            return (
                f"telegram: FIX: the forum chat {chat_id} is not reachable ({chat.get('description')}): add the "
                f"bot to the group and check forum_chat_id, the group's id starting with -100 {steps}"
            )
        if not (chat.get("result") or {}).get("is_forum"):
            return f"telegram: FIX: topics are off in {chat_id}: open the group → Edit → Topics, switch them on {steps}"
        member = httpx.get(
            f"{api}/getChatMember", params={"chat_id": chat_id, "user_id": bot_id}, timeout=TIMEOUT
        ).json()
    except (httpx.HTTPError, ValueError) as exc:
        return f"telegram: FIX: the forum chat {chat_id} could not be checked ({type(exc).__name__})"
    rights = member.get("result") or {}
    if rights.get("status") != "creator" and not (
        rights.get("status") == "administrator" and rights.get("can_manage_topics")
    ):
        return (
            f"telegram: FIX: the bot may not manage topics in {chat_id}: group → Edit → Administrators → the "
            f"bot → switch on Manage Topics {steps}"
        )
    return f"telegram: ok, the bot manages topics in {chat_id}"


def _paired() -> list[str]:
    try:
        return paired_users()
    except Exception:  # no database opened: nobody has paired here
        return []


def mcp(config) -> list[str]:
    """Each enabled MCP server started, listed and stopped, side by side (nothing when none is configured)."""
    found = mcp_servers.specs(config.section("mcp"))
    if not found:
        return []
    connections = {}

    def try_one(spec) -> None:
        connections[spec.name] = mcp_skill.probe(spec)

    threads = [threading.Thread(target=try_one, args=(spec,)) for spec in found]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    lines = []
    for spec in found:
        connection = connections[spec.name]
        try:
            if connection.state == "ready":
                lines.append(
                    f"mcp: ok, {spec.name} answered ({len(connection.listed)} tool(s), "
                    f"{len(connection.resources)} resource(s))"
                )
            else:
                lines.append(
                    f"mcp: FIX: {spec.name} {connection.state[:200]}; check [mcp.servers.{spec.name}] "
                    f"(`wilson mcp test {spec.name}` shows what it offers)"
                )
        finally:
            connection.close()
    return lines


def web(config) -> list[str]:
    """The dashboard's port: free for Wilson to take, or held by a Wilson already running (its login page
    answers there); held by another program is a FIX with the setting to change."""
    # lazy: httpx (with its command-line extras, about 70 ms) only once a request is made
    import httpx

    enabled = config.get("web", "enabled")
    if isinstance(enabled, str):
        enabled = enabled.strip().lower() in ("1", "true", "yes", "on")
    if not enabled:
        return ["web: the dashboard is off ([web] enabled = false)"]
    host, port = str(config.get("web", "host") or "127.0.0.1"), int(config.get("web", "port") or 0)
    where = f"{host}:{port}"
    if port == 0:
        return [f"web: ok, the dashboard takes a free port on {host} when Wilson starts ([web] port = 0)"]
    try:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
            probe.bind((host, port))
        return [f"web: ok, port {port} on {host} is free for the dashboard"]
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE:
            return [f"web: FIX: the dashboard cannot listen on {where} ({exc.strerror or exc}); check [web] host"]
    try:
        answer = httpx.get(f"http://{'[' + host + ']' if ':' in host else host}:{port}/login", timeout=5.0)
        ours = "· Wilson</title>" in answer.text
    except httpx.HTTPError:
        ours = False
    if ours:
        return [f"web: ok, the dashboard of a running Wilson answers at {where}"]
    return [
        f"web: FIX: port {port} on {host} is taken by another program; set [web] port to a free one "
        f"(WILSON_WEB_PORT), e.g. {port + 1}"
    ]


def feeds() -> list[str]:
    """Each watched page or feed fetched once (robots.txt aside: this is one look a person asked for)."""
    try:
        sources = watcher.sources()
    except Exception:  # no database opened: nothing is watched here
        return []
    lines = []
    with fetching.client() as http:
        for state in sources:
            url = str(state["url"])
            try:
                got = fetching.fetch(http, url)
            except fetching.WatchError as exc:
                lines.append(
                    f"web: FIX: watched {url}: {exc}; check the address, or stop watching it with "
                    f"`wilson watch remove {url}`"
                )
                continue
            lines.append(f"web: ok, watched {url} answered ({len(got.body):,} bytes)")
    return lines
