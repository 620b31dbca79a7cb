"""Who the Telegram channel listens to: the allow-list, paired users, and strangers told no once.

The allow-list comes from the configuration (telegram.allowed_users); pairing adds
users at run time (Setting telegram:paired_users): `wilson pair` prints a one-time
code, and `/start CODE` in the chat pairs whoever sends it. A code is void after
ten minutes or five wrong codes from strangers, so it cannot be guessed at leisure.
Everything here is small bookkeeping in the Setting table.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta

import peewee

from storage import kv
from storage.db import database

PAIRING_CODE = "telegram:pairing_code"
PAIRED_USERS = "telegram:paired_users"
REFUSED_USERS = "telegram:refused"

PAIRING_TIME = timedelta(minutes=10)  # a code not used by then is void
PAIRING_TRIES = 5  # wrong codes from strangers before the code is void
CODE_LETTERS = "abcdefghjkmnpqrstuvwxyz23456789"  # no 0/o or 1/l/i to mistake for one another
CODE_LENGTH = 8  # 31**8, about 8.5e11 codes


def parse_ids(value) -> list[str]:
    """'123, 456' (or a list) -> ['123', '456']; anything that is not a numeric id is dropped."""
    items = value if isinstance(value, (list, tuple)) else str(value or "").replace(";", ",").split(",")
    return [str(i).strip() for i in items if str(i).strip().lstrip("-").isdigit()]


def paired_users() -> list[str]:
    return [str(u) for u in kv.get_setting(PAIRED_USERS, [])]


def is_allowed(config, user_id: str) -> bool:
    return user_id in parse_ids(config.get("telegram", "allowed_users")) or user_id in paired_users()


def owner_id(config) -> str | None:
    """Who Wilson works for on Telegram: the first allow-listed user, else the first paired one."""
    allowed = parse_ids(config.get("telegram", "allowed_users"))
    if allowed:
        return allowed[0]
    if database.obj is None:  # no database opened yet: nobody can have paired
        return None
    try:
        paired = paired_users()
    except peewee.PeeweeException:  # tables not migrated yet
        return None
    return paired[0] if paired else None


def first_refusal(user_id: str) -> bool:
    """True the first time a stranger is turned away (they are told so once); they are remembered."""
    refused = [str(u) for u in kv.get_setting(REFUSED_USERS, [])]
    if user_id in refused:
        return False
    kv.put_setting(REFUSED_USERS, refused + [user_id])
    return True


def pair(user_id: str) -> None:
    """Add a user to the paired ones; a refusal they had is forgotten."""
    paired = paired_users()
    if user_id not in paired:
        kv.put_setting(PAIRED_USERS, paired + [user_id])
    kv.put_setting(REFUSED_USERS, [u for u in kv.get_setting(REFUSED_USERS, []) if str(u) != user_id])


def start_pairing(now: datetime) -> str:
    """A new one-time code for `/start CODE` (any earlier code is void): it works for PAIRING_TIME,
    and PAIRING_TRIES wrong codes void it."""
    code = "".join(secrets.choice(CODE_LETTERS) for _ in range(CODE_LENGTH))
    kv.put_setting(
        PAIRING_CODE, {"code": code, "expires": (now + PAIRING_TIME).isoformat(), "tries_left": PAIRING_TRIES}
    )
    return code


def pairing_code_matches(code: str, now: datetime) -> bool:
    """Whether `code` is the live pairing code (case, spaces and dashes aside); once it matches it is spent.
    An expired code, or one written by an older `wilson pair` without an expiry, is void."""
    expected = kv.get_setting(PAIRING_CODE)
    if not isinstance(expected, dict) or now >= datetime.fromisoformat(expected["expires"]):
        kv.delete_setting(PAIRING_CODE)
        return False
    given = "".join(code.split()).replace("-", "").lower()
    if not secrets.compare_digest(given.encode(), str(expected["code"]).encode()):
        return False
    kv.delete_setting(PAIRING_CODE)  # one time only
    return True


def wrong_pairing_try() -> None:
    """A stranger sent a wrong code: one try fewer, and after the last the code is void."""
    expected = kv.get_setting(PAIRING_CODE)
    if not isinstance(expected, dict):
        return
    left = int(expected.get("tries_left", 0)) - 1
    if left <= 0:
        kv.delete_setting(PAIRING_CODE)
    else:
        kv.put_setting(PAIRING_CODE, {**expected, "tries_left": left})
