"""Opening the database: SQLite in WAL mode by default, PostgreSQL by URL.

All models bind to `database` (a peewee DatabaseProxy) so that the same code runs
on either backend. Claims go through `claim_transaction()`, which takes the write
lock up front on SQLite (BEGIN IMMEDIATE) so that two claimers never read the same
row; on PostgreSQL the claim query itself uses FOR UPDATE SKIP LOCKED.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections import deque
from pathlib import Path

import peewee
from playhouse.db_url import connect as connect_url

from wilson.kernel import lanes
from wilson.kernel.clock import monotonic

database = peewee.DatabaseProxy()

SQLITE_PRAGMAS = {
    "journal_mode": "wal",
    "synchronous": "normal",
    "foreign_keys": 1,
    "busy_timeout": 10_000,
    # 256 KiB of page cache a connection (one per actor thread), not SQLite's 2 MiB: filled by a month of mail, the
    # dozen caches held some 7 MiB, and in WAL mode another connection's commit empties them anyway
    "cache_size": -256,
}


# Prepared statements each connection (one per actor thread) keeps: sqlite3's default of 128 held some 4 MiB
# more after a simulated month, and an actor's hot path uses a handful of statements
STATEMENT_CACHE = 24

WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE")


class FairLock:
    """A lock whose waiters get it in the order they asked, the user's writes first.

    `threading.Lock` hands a released lock to whichever thread runs first, so under steady
    writing one waiter (a user's message) can be overtaken again and again by busier
    threads. Here an urgent waiter waits at most for the holder and other urgent writes;
    background writers keep their order behind it."""

    def __init__(self):
        self._cond = threading.Condition(threading.Lock())
        self._queue: deque = deque()
        self._held = False

    def acquire(self, timeout: float, urgent: bool = False) -> bool:
        with self._cond:
            if not self._held and not self._queue:
                self._held = True
                return True
            ticket = (urgent, object())
            if urgent:  # ahead of the first background waiter
                place = next((i for i, (u, _) in enumerate(self._queue) if not u), len(self._queue))
                self._queue.insert(place, ticket)
            else:
                self._queue.append(ticket)
            deadline = monotonic() + timeout
            try:
                while self._held or self._queue[0] is not ticket:
                    left = deadline - monotonic()
                    if left <= 0:
                        self._leave(ticket)
                        return False
                    self._cond.wait(left)
            except BaseException:  # interrupted (Ctrl-C in the REPL): a ticket left in line would block everyone
                self._leave(ticket)
                raise
            self._queue.popleft()
            self._held = True
            return True

    def _leave(self, ticket) -> None:
        self._queue.remove(ticket)
        self._cond.notify_all()  # the next in line may be free to go now

    def release(self) -> None:
        with self._cond:
            self._held = False
            if self._queue:  # every waiter holds a ticket in the queue: with none there, nobody is woken
                self._cond.notify_all()


_commit_hooks: list = []
_end_hooks: list = []
_savepoint_hooks: list = []
SAVEPOINT_STATEMENTS = ("SAVEPOINT ", "ROLLBACK TO SAVEPOINT ", "RELEASE SAVEPOINT ")


def transaction_hooks(on_commit, on_end, on_savepoint) -> None:
    """For every transaction this process runs on SQLite, on the thread that runs it: `on_commit()` just
    before it commits (a last statement in it), `on_end(committed)` once it ended, and
    `on_savepoint(action, name)` after each SAVEPOINT, ROLLBACK (to a savepoint) and RELEASE in it
    (storage/trace.py writes the rows it held there)."""
    _commit_hooks.append(on_commit)
    _end_hooks.append(on_end)
    _savepoint_hooks.append(on_savepoint)


def has_transaction_hooks() -> bool:
    """Whether the open database runs `transaction_hooks` (SQLite here; not PostgreSQL)."""
    return isinstance(database.obj, QueuedWriterSqlite)


class QueuedWriterSqlite(peewee.SqliteDatabase):
    """SQLite whose writers in this process queue on a lock instead of polling SQLite's.

    SQLite lets one writer in at a time. A connection that finds the write lock taken
    waits in SQLite's busy handler, which sleeps 1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50,
    100 ms between tries: a writer behind a 3 ms transaction sleeps 8 ms, one behind a
    20 ms transaction 33 ms, and under steady writing a waiter can miss one free moment
    after another. Every transaction here takes the write lock up front (BEGIN IMMEDIATE),
    so the same rule is kept in process with a threading lock: the next writer is woken
    the moment the previous one commits. A write statement outside a transaction
    (autocommit) takes the lock for that statement. `busy_timeout` still governs waits
    on other processes (the command line, a second Wilson).
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._writer = FairLock()
        self._holding = threading.local()
        self._writer_timeout = SQLITE_PRAGMAS["busy_timeout"] / 1000

    def _take_writer(self) -> None:
        if not self._writer.acquire(timeout=self._writer_timeout, urgent=lanes.is_urgent()):
            raise peewee.OperationalError(
                f"database is locked (another writer of this process held it for {self._writer_timeout:g} s)"
            )
        self._holding.on = True

    def _drop_writer(self) -> None:
        if getattr(self._holding, "on", False):
            self._holding.on = False
            self._writer.release()

    def begin(self, lock_type=None):
        if getattr(self._holding, "on", False):  # FairLock is not reentrant: this would wait for itself
            raise RuntimeError("a transaction cannot begin inside writing(); begin it first")
        self._take_writer()
        try:
            super().begin(lock_type)
        except BaseException:
            self._drop_writer()
            raise

    def commit(self):
        for hook in _commit_hooks:
            hook()  # a failure here fails the commit: peewee rolls the transaction back (and lets the lock go)
        try:
            super().commit()
        finally:
            self._drop_writer()
        for hook in _end_hooks:
            hook(True)

    def rollback(self):
        try:
            super().rollback()
        finally:
            self._drop_writer()
            for hook in _end_hooks:
                hook(False)

    @contextlib.contextmanager
    def writing(self):
        """Hold the write lock around a write statement and the reading of its results: an
        `UPDATE … RETURNING` holds SQLite's lock until its rows are read to the end, so the next
        writer must not be woken when the statement merely started. Statements inside commit one
        by one; a transaction cannot begin inside (it would wait for this very lock)."""
        if getattr(self._holding, "on", False):
            yield
            return
        self._take_writer()
        try:
            yield
        finally:
            self._drop_writer()

    def run_hot(self, sql: str, params, writes: bool) -> tuple[list, int]:
        """A hot-path statement of storage/hot.py (never a savepoint; `writes` known from its text): its rows
        read to the end and how many it changed, the write lock held around both when it writes.

        On the connection itself: peewee's way to it (its cursor, logging and hook checks, then this
        class' look at the text) cost as much Python as SQLite took to run the read. Whoever listens to
        peewee (a query hook, its debug log) gets its way."""
        if self.query_hooks or peewee.logger.isEnabledFor(logging.DEBUG):
            with self.writing() if writes else contextlib.nullcontext():
                cursor = self.execute_sql(sql, params)
                rows = cursor.fetchall() if cursor.description else []
            return rows, cursor.rowcount
        take = writes and not getattr(self._holding, "on", False)
        if take:
            self._take_writer()
        try:
            state = self._state
            cursor = (state.conn if not state.closed else self.connection()).execute(sql, params)
            rows = cursor.fetchall() if cursor.description else []
        except Exception:
            with _PEEWEE_ERRORS:  # sqlite3's errors as peewee's, as every other statement raises them
                raise
        finally:
            if take:
                self._drop_writer()
        return rows, cursor.rowcount

    def execute_sql(self, sql, params=None):
        if sql.startswith(SAVEPOINT_STATEMENTS):  # as peewee spells them
            cursor = super().execute_sql(sql, params)
            action, name = sql.split(None, 1)[0], sql.rstrip("; ").rsplit(None, 1)[-1]
            for hook in _savepoint_hooks:
                hook(action, name)
            return cursor
        if getattr(self._holding, "on", False) or not sql.lstrip()[:7].upper().startswith(WRITES):
            return super().execute_sql(sql, params)
        self._take_writer()
        try:
            return super().execute_sql(sql, params)
        finally:
            self._drop_writer()


_PEEWEE_ERRORS = getattr(peewee, "__exception_wrapper__")  # noqa: B009 -- not in peewee's declared names


def open_database(url: str | None, home: Path) -> peewee.Database:
    """Open (and bind) the database named by `url`, else `home/wilson.sqlite3`."""
    if url:
        db = connect_url(url)
        if isinstance(db, peewee.SqliteDatabase):
            db = QueuedWriterSqlite(
                db.database, pragmas=SQLITE_PRAGMAS, lock_type="IMMEDIATE", cached_statements=STATEMENT_CACHE
            )
    else:
        home.mkdir(parents=True, exist_ok=True)
        # IMMEDIATE: a transaction that reads and then writes must hold the write lock from the
        # start, or SQLite fails it with "database is locked" when another writer got in between.
        db = QueuedWriterSqlite(
            str(home / "wilson.sqlite3"),
            pragmas=SQLITE_PRAGMAS,
            lock_type="IMMEDIATE",
            cached_statements=STATEMENT_CACHE,
        )
    database.initialize(db)
    return db


def write_lock():
    """This process' SQLite write lock held across several statements that each commit on their own:
    a realtime writer that takes it once does not queue behind background transactions twice. On
    PostgreSQL (no such lock) it is nothing."""
    writing = getattr(database.obj, "writing", None)
    return writing() if writing is not None else contextlib.nullcontext()


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


def serialise(name: str) -> None:
    """Inside a transaction: wait until no other process' transaction holds `name`, then hold it to
    commit. SQLite's IMMEDIATE transactions are serial already; PostgreSQL needs an advisory lock."""
    if is_postgres():
        database.execute_sql("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"wilson:{name}",))


_process_locks: dict = {}


def hold_for_process(url: str, name: str) -> bool:
    """Take `name` for as long as this process lives (PostgreSQL): True for the one process that has it.

    The lock lives on a connection of its own, so it ends with the process however it ends,
    and a standby process can take it then."""
    if name in _process_locks:
        return True
    # lazy: psycopg2 is installed only where PostgreSQL is used
    import psycopg2

    connection = psycopg2.connect(url)
    connection.autocommit = True
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(hashtext(%s))", (f"wilson:{name}",))
        held = cursor.fetchone()[0]
    if held:
        _process_locks[name] = connection
    else:
        connection.close()
    return held
