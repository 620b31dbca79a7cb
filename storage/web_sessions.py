"""Dashboard sessions (channels/web/auth.py): the digest of each session's cookie, its CSRF token and when it
ends. Expired rows go when the next session starts; a new token ends every one."""

from __future__ import annotations

from datetime import datetime

from storage.models import WebSession
from wilson.kernel.clock import as_utc


def start(digest: str, csrf: str, now: datetime, expires: datetime) -> None:
    WebSession.delete().where(WebSession.expires <= as_utc(now)).execute()
    WebSession.create(digest=digest, csrf=csrf, created=as_utc(now), expires=as_utc(expires))


def valid(digest: str, now: datetime) -> dict | None:
    """The session's record ({"csrf", "created", "expires"}) while it has not ended, else None."""
    row = WebSession.get_or_none(WebSession.digest == digest)
    if row is None or as_utc(now) >= as_utc(row.expires):
        return None
    return {"csrf": row.csrf, "created": as_utc(row.created).isoformat(), "expires": as_utc(row.expires).isoformat()}


def end(digest: str) -> None:
    WebSession.delete().where(WebSession.digest == digest).execute()


def end_all() -> int:
    return WebSession.delete().execute()
