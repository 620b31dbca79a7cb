"""The email channel's settings, read without starting it: whether it is on, its password, its status line.

The password comes only from the environment (WILSON_EMAIL_PASSWORD): one written into
wilson.toml is not used, and the log says so.
"""

from __future__ import annotations

import os

from loguru import logger

from channels import accounts

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


def folders(config) -> list[str]:
    value = config.get("email", "folders")
    return [value] if isinstance(value, str) else [str(f) for f in value]


def missing_folders(config, existing: list[str]) -> str | None:
    """One line naming the configured folders the server does not have, with those it has; None when all exist.
    INBOX is a name in any case (RFC 3501); other folder names are matched as typed."""
    have = {name.upper() if name.upper() == "INBOX" else name for name in existing}
    missing = [f for f in folders(config) if (f.upper() if f.upper() == "INBOX" else f) not in have]
    if not missing:
        return None
    listed = ", ".join(f'"{name}"' for name in existing[:30]) + (" …" if len(existing) > 30 else "")
    return (
        f"{'folder' if len(missing) == 1 else 'folders'} {', '.join(repr(f) for f in missing)} "
        f"{'does' if len(missing) == 1 else 'do'} not exist at {config.get('email', 'imap_host')}; the folders "
        f'there are: {listed or "none"}. Set [email] folders to a list of those, e.g. folders = ["INBOX"]'
    )


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
    sending = (
        "sends through " + str(config.get("email", "smtp_host"))
        if config.get("email", "smtp_host")
        else "cannot send (no smtp_host)"
    )
    return (
        f"email: reads {folders} at {config.get('email', 'imap_host')} "
        f"({config.get('email', 'imap_security')}) {when}; {sending}"
    )


def token_source(config):
    """For `[email] oauth = "google"` (or "microsoft"): a callable giving a fresh access token from the account
    `wilson account add` stored (channels/accounts.py); None when mail logs in with the password."""
    return accounts.token_source(config, "email")
