"""The email channel's settings, read without starting it: whether it is on, its password, its status line.

The password comes only from the environment (WILSON_EMAIL_PASSWORD): one written into
wilson.toml is not used, and the log says so.
"""

from __future__ import annotations

import os

from loguru import logger

PASSWORD_ENV = "WILSON_EMAIL_PASSWORD"


def password(config) -> str:
    """Only from the environment: a password written into wilson.toml is not used (and says so)."""
    source = str(getattr(config, "sources", {}).get(("email", "password"), ""))
    if config.get("email", "password") and not source.startswith("env"):
        logger.warning("email: a password in wilson.toml is ignored; set {} instead", PASSWORD_ENV)
    return os.environ.get(PASSWORD_ENV, "") or (config.get("email", "password") if source.startswith("env") else "")


def smtp_username(config) -> str:
    """The SMTP login: smtp_username when it is set, else the IMAP username. Set to "" on purpose (in the file or
    the environment), it means no login at all: a relay that takes mail without AUTH."""
    source = str(getattr(config, "sources", {}).get(("email", "smtp_username"), "default"))
    own = str(config.get("email", "smtp_username") or "").strip()
    if own or source != "default":
        return own
    return str(config.get("email", "username") or "").strip()


def enabled(config) -> bool:
    return bool(str(config.get("email", "imap_host") or "").strip())


def status_line(config) -> str:
    """For `wilson status`: whether the channel is on, and where it reads."""
    if not enabled(config):
        return "email: off (no [email] imap_host)"
    folders = config.get("email", "folders")
    folders = ", ".join([folders] if isinstance(folders, str) else folders)
    poll = str(config.get("email", "poll") or "off")
    when = "at once where the server offers IDLE, " + ("else every " + poll if poll != "off" else "else at each sync")
    sending = "sends through " + str(config.get("email", "smtp_host")) if config.get("email", "smtp_host") \
        else "cannot send (no smtp_host)"
    return (f"email: reads {folders} at {config.get('email', 'imap_host')} "
            f"({config.get('email', 'imap_security')}) {when}; {sending}")
