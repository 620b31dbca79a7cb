"""Small keyed state: settings and cursors, each read, written (an upsert) and deleted one way.

Settings (table `setting`) are what the user changes in conversation or pairing (quiet until,
paired users); state that grows with use has tables of its own. Cursors (table `cursor`) are where a reader left off
(Telegram's offset, a calendar's snapshot, the RAS scan mark), with when they were written.
Values are JSON. A write joins the caller's transaction when there is one, so a cursor can move
in the same commit as the rows it accounts for.

The reads and upserts by key are hot statements (storage/hot.py), their SQL built once: the tick, the
channels and every consolidation read and move cursors all day, and peewee's building of each statement
cost several times what SQLite took to run it.
"""

from __future__ import annotations

from datetime import datetime

from storage import hot
from storage.models import Cursor, Setting


def get_setting(key: str, default=None):
    """The setting's value; `default` when it was never set or was set to null."""
    row = hot.by_column(Setting, Setting.key, key)
    return default if row is None or row.value is None else row.value


def put_setting(key: str, value) -> None:
    hot.upsert(Setting, Setting.key, key=key, value=value)


def delete_setting(key: str) -> bool:
    """Whether there was one to delete."""
    return Setting.delete().where(Setting.key == key).execute() > 0


def delete_settings(prefix: str) -> int:
    """Every setting whose key starts with `prefix` (a family, such as the dashboard's sessions); how many."""
    return Setting.delete().where(Setting.key.startswith(prefix)).execute()


def settings_with_prefix(prefix: str) -> dict:
    """Every setting whose key starts with `prefix`, by the rest of its key (a family read whole)."""
    return {
        row.key[len(prefix) :]: row.value
        for row in Setting.select().where(Setting.key.startswith(prefix)).order_by(Setting.key)
    }


def get_cursor(name: str, default=None):
    """The cursor's value; `default` when there is none or it holds null."""
    row = cursor_row(name)
    return default if row is None or row.value is None else row.value


def cursor_row(name: str) -> Cursor | None:
    """The row itself, for a reader that also needs when it was written (`updated_at`)."""
    return hot.by_column(Cursor, Cursor.name, name)


def put_cursor(name: str, value, at: datetime) -> None:
    hot.upsert(Cursor, Cursor.name, name=name, value=value, updated_at=at)


def delete_cursor(name: str) -> None:
    Cursor.delete().where(Cursor.name == name).execute()
