"""Who may see the dashboard: one token, login codes and sessions, all stored hashed.

`wilson web-token` makes a new token (the old one stops working) and a one-time login
code. The token is for API calls (`Authorization: Bearer <token>`) and the login form;
the code rides in the login URL it prints, works once within LOGIN_CODE_TIME, and the
page it opens redirects at once, so no secret stays in the address bar or the history
entry that remains. Only SHA-256 digests are stored: the token and the codes are 256-bit
random strings, so a plain digest is as good as a slow hash here, and the database alone
lets nobody in.

A login starts a session: its id goes into an HttpOnly, SameSite=Strict cookie, and each
session has its own CSRF token that every state-changing form sends back.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import datetime, timedelta

from storage import kv, web_sessions
from storage.db import database

TOKEN_KEY = "web:token"
CODE_KEY = "web:login_code"
LOGIN_CODE_TIME = timedelta(minutes=15)
SESSION_TIME = timedelta(days=30)
MAX_SECRET = 200  # characters; anything longer is not one of ours and is not hashed


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "replace")).hexdigest()


def new_token(now: datetime) -> tuple[str, str]:
    """A fresh token and login code (the previous token and every session end); returns both."""
    token, code = secrets.token_urlsafe(32), secrets.token_urlsafe(24)
    with database.atomic():
        kv.put_setting(TOKEN_KEY, {"hash": digest(token), "created": now.isoformat()})
        kv.put_setting(CODE_KEY, {"hash": digest(code), "expires": (now + LOGIN_CODE_TIME).isoformat()})
        web_sessions.end_all()
    return token, code


def has_token() -> bool:
    return bool((kv.get_setting(TOKEN_KEY) or {}).get("hash"))


def token_ok(token: str | None) -> bool:
    stored = (kv.get_setting(TOKEN_KEY) or {}).get("hash")
    if not stored or not token or len(token) > MAX_SECRET:
        return False
    return hmac.compare_digest(digest(token), stored)


def use_login_code(code: str | None, now: datetime) -> bool:
    """True once for the current code within its time; spent whether it was right or not is not
    told apart from outside (a wrong code leaves the right one usable)."""
    if not code or len(code) > MAX_SECRET:
        return False
    with database.atomic():
        stored = kv.get_setting(CODE_KEY) or {}
        if not stored.get("hash") or not hmac.compare_digest(digest(code), stored["hash"]):
            return False
        kv.delete_setting(CODE_KEY)
        try:
            return now < datetime.fromisoformat(stored["expires"])
        except (KeyError, TypeError, ValueError):
            return False


def new_session(now: datetime) -> str:
    sid = secrets.token_urlsafe(32)
    web_sessions.start(digest(sid), secrets.token_urlsafe(24), now, now + SESSION_TIME)
    return sid


def session(sid: str | None, now: datetime) -> dict | None:
    """The session's record ({"csrf", ...}) while it is valid, else None."""
    if not sid or len(sid) > MAX_SECRET:
        return None
    return web_sessions.valid(digest(sid), now)


def end_session(sid: str | None) -> None:
    if sid and len(sid) <= MAX_SECRET:
        web_sessions.end(digest(sid))


def csrf_ok(record: dict | None, sent: str | None) -> bool:
    expected = (record or {}).get("csrf")
    return bool(expected and sent and len(sent) <= MAX_SECRET and hmac.compare_digest(expected, sent))
