"""One process per database runs its ingress (Telegram, the mail and calendar polls, the schedules, triage).

`--role all` and `--role ingress` both take it; workers take nothing and may be many. Two ingresses on one
database would poll Telegram against each other and keep time twice, so a second one is refused and told
which process holds the database.

The lock ends with its holder however that ends, so a killed holder's database is simply taken over:
on PostgreSQL it is an advisory lock on a connection of its own, whose application_name names the holder
(pid, host, role) for the one refused; on SQLite it is an flock on a file beside the database file, which
holds the same name.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import socket
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import peewee
from playhouse.db_url import connect as connect_url

KEY = "wilson:ingress"
# PostgreSQL keeps 63 bytes of an application_name: the pid and the role come first so they always fit
NAME = re.compile(r"wilson (?P<role>\w+) pid (?P<pid>\d+) on (?P<host>.*)")


class DatabaseInUse(Exception):
    """Another process runs this database's ingress; the message says which, in one line."""


def holder_name(role: str) -> str:
    return f"wilson {role} pid {os.getpid()} on {socket.gethostname()}"[:63]


def describe_holder(name: str | None) -> str:
    found = NAME.fullmatch(name or "")
    if not found:
        return "another process"
    return f"process {found['pid']} on {found['host']} (role {found['role']})"


def refusal(where: str, holder: str | None) -> str:
    return f"{where} is run by {describe_holder(holder)}: stop it first, or start this one with --role worker"


def sqlite_path(url: str | None, home: Path) -> Path | None:
    """The SQLite database file `url` names (the home's by default), or None for PostgreSQL or memory."""
    if not url:
        return home / "wilson.sqlite3"
    db = connect_url(url)  # builds the object only; nothing connects yet
    if isinstance(db, peewee.SqliteDatabase):
        return None if db.database in ("", ":memory:") else Path(db.database)
    return None


@contextlib.contextmanager
def hold(url: str | None, home: Path, role: str) -> Iterator[None]:
    """Hold the database's ingress for the block, or raise DatabaseInUse naming the process that holds it."""
    path = sqlite_path(url, home)
    if path is not None:
        with _hold_sqlite(path, role):
            yield
    elif url and urlsplit(url).scheme.startswith("postgres"):
        with _hold_postgres(url, role):
            yield
    else:
        yield  # a database in memory belongs to this process alone


@contextlib.contextmanager
def _hold_sqlite(path: Path, role: str) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(f"{path}-ingress.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip()
            raise DatabaseInUse(refusal(f"the database {path}", holder)) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{holder_name(role)}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


@contextlib.contextmanager
def _hold_postgres(url: str, role: str) -> Iterator[None]:
    # lazy: psycopg2 is installed only where PostgreSQL is used
    import psycopg2

    # keepalives: a holder whose machine vanished lets go within about a minute and a half
    connection = psycopg2.connect(
        url,
        application_name=holder_name(role),
        keepalives=1,
        keepalives_idle=30,
        keepalives_interval=10,
        keepalives_count=5,
    )
    connection.autocommit = True
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(hashtext(%s))", (KEY,))
            if not cursor.fetchone()[0]:
                raise DatabaseInUse(refusal(_postgres_where(url), _postgres_holder(cursor)))
        yield
    finally:
        connection.close()  # ending the session releases the lock


def _postgres_holder(cursor) -> str | None:
    # another role's sessions may hide their application_name (without pg_read_all_stats): then "another process"
    cursor.execute(
        "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
        "WHERE l.locktype = 'advisory' AND l.granted AND l.database = "
        "(SELECT oid FROM pg_database WHERE datname = current_database()) "
        "AND a.application_name LIKE 'wilson %% pid %%' AND a.pid <> pg_backend_pid()"
    )
    names = [row[0] for row in cursor.fetchall()]
    # the Telegram lock's connection has no such name, so a named session holding an advisory lock is the ingress
    return names[0] if len(names) == 1 else None


def _postgres_where(url: str) -> str:
    parts = urlsplit(url)  # never the password
    return f"the database {parts.path.lstrip('/') or '(default)'} on {parts.hostname or 'localhost'}" + (
        f":{parts.port}" if parts.port else ""
    )
