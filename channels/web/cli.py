"""`wilson web-token`: a new dashboard token and a login link, for the command line."""

from __future__ import annotations

from datetime import datetime

from channels.web import auth
from channels.web.address import ADDRESS_KEY, HEALTH_KEY, is_loopback
from storage import kv


def login_base(config) -> str:
    """Where the dashboard is: the address it last listened on, else the configured one."""
    value = kv.get_setting(ADDRESS_KEY, {})
    value = value if isinstance(value, dict) else {}
    host = str(value.get("host") or config.get("web", "host"))
    port = value.get("port") or config.get("web", "port")
    if host in ("0.0.0.0", "::"):
        host = "127.0.0.1"  # listening everywhere: this computer is one of the places
    return f"http://{'[' + host + ']' if ':' in host else host}:{port}"


def web_token(config, now: datetime) -> list[str]:
    """Line 1: the token (API calls and the login form). Line 2: a link that logs in once, within
    15 minutes. Then a note; the old token and every open session stop working."""
    token, code = auth.new_token(now)
    lines = [
        token,
        f"{login_base(config)}/login?code={code}",
        "Line 1 is your dashboard token (for the login form, and for scripts: Authorization: Bearer <token>).",
        "Line 2 logs you in once, within 15 minutes. The previous token and logins no longer work.",
    ]
    if not config.get("web", "enabled"):
        lines.append("The dashboard is switched off: set [web] enabled = true (or WILSON_WEB_ENABLED=true).")
    elif not is_loopback(str(config.get("web", "host"))):
        lines.append(f"Careful: the dashboard listens on {config.get('web', 'host')}, not only on this computer.")
    return lines


def dashboard_line(config) -> str | None:
    """What `wilson run` says about the dashboard once its channel has started: where it is and how to log
    in, or why it is not there. None when it is switched off."""
    if not config.get("web", "enabled"):
        return None
    health = kv.get_cursor(HEALTH_KEY, {})
    health = health if isinstance(health, dict) else {}
    if health.get("state") == "serving" and health.get("address"):
        return f"Your dashboard is at {health['address']} (`wilson web-token` prints a link that logs you in)."
    if health.get("state") == "unavailable":
        return (
            f"The dashboard could not start ({health.get('error') or 'see wilson.log'}); Wilson runs on without "
            "it. Set WILSON_WEB_PORT to a free port."
        )
    return None
