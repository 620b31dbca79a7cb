"""Opening the database: SQLite in WAL mode by default, PostgreSQL by URL.

All models bind to `database` (a peewee DatabaseProxy) so that the same code runs
on either backend. Claims go through `claim_transaction()`, which takes the write
lock up front on SQLite (BEGIN IMMEDIATE) so that two claimers never read the same
row; on PostgreSQL the claim query itself uses FOR UPDATE SKIP LOCKED.
"""

from __future__ import annotations

from pathlib import Path

import peewee
from playhouse.db_url import connect as connect_url

database = peewee.DatabaseProxy()

SQLITE_PRAGMAS = {
    "journal_mode": "wal",
    "synchronous": "normal",
    "foreign_keys": 1,
    "busy_timeout": 10_000,
}


def open_database(url: str | None, home: Path) -> peewee.Database:
    """Open (and bind) the database named by `url`, else `home/wilson.sqlite3`."""
    if url:
        db = connect_url(url)
        if isinstance(db, peewee.SqliteDatabase):
            db = peewee.SqliteDatabase(db.database, pragmas=SQLITE_PRAGMAS, lock_type="IMMEDIATE")
    else:
        home.mkdir(parents=True, exist_ok=True)
        # IMMEDIATE: a transaction that reads and then writes must hold the write lock from the
        # start, or SQLite fails it with "database is locked" when another writer got in between.
        db = peewee.SqliteDatabase(str(home / "wilson.sqlite3"), pragmas=SQLITE_PRAGMAS, lock_type="IMMEDIATE")
    database.initialize(db)
    return db


def is_postgres() -> bool:
    return isinstance(database.obj, peewee.PostgresqlDatabase)


def claim_transaction():
    """A transaction that holds the write lock from its first statement."""
    if isinstance(database.obj, peewee.SqliteDatabase):
        return database.atomic("IMMEDIATE")
    return database.atomic()


def skip_locked(query):
    """Add FOR UPDATE SKIP LOCKED on PostgreSQL; SQLite's IMMEDIATE lock already serialises."""
    if is_postgres():
        return query.for_update("FOR UPDATE SKIP LOCKED")
    return query
