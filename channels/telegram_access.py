"""Who the Telegram channel listens to: the allow-list, paired users, and strangers told no once.

The allow-list comes from the configuration (telegram.allowed_users); pairing adds
users at run time (Setting telegram:paired_users). Everything else here is small
bookkeeping in the Setting table.
"""

from __future__ import annotations

import peewee

from storage.db import database
from storage.models import Setting

PAIRING_CODE = "telegram:pairing_code"
PAIRED_USERS = "telegram:paired_users"
REFUSED_USERS = "telegram:refused"


def parse_ids(value) -> list[str]:
    """'123, 456' (or a list) -> ['123', '456']; anything that is not a numeric id is dropped."""
    items = value if isinstance(value, (list, tuple)) else str(value or "").replace(";", ",").split(",")
    return [str(i).strip() for i in items if str(i).strip().lstrip("-").isdigit()]


def get_setting(key: str, default=None):
    row = Setting.get_or_none(Setting.key == key)
    return default if row is None or row.value is None else row.value


def put_setting(key: str, value) -> None:
    Setting.insert(key=key, value=value).on_conflict(
        conflict_target=[Setting.key], update={Setting.value: value}).execute()


def delete_setting(key: str) -> None:
    Setting.delete().where(Setting.key == key).execute()


def paired_users() -> list[str]:
    return [str(u) for u in get_setting(PAIRED_USERS, [])]


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
    refused = [str(u) for u in get_setting(REFUSED_USERS, [])]
    if user_id in refused:
        return False
    put_setting(REFUSED_USERS, refused + [user_id])
    return True


def pair(user_id: str) -> None:
    """Add a user to the paired ones; a refusal they had is forgotten."""
    paired = paired_users()
    if user_id not in paired:
        put_setting(PAIRED_USERS, paired + [user_id])
    put_setting(REFUSED_USERS, [u for u in get_setting(REFUSED_USERS, []) if str(u) != user_id])
