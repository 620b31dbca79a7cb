"""Shared fixtures: a fresh database per test (SQLite, and PostgreSQL when configured),
the corpus location, and a factory for a whole running Wilson on a simulated clock.

Under pytest-xdist (`make test` runs on parallel workers) each worker has its own PostgreSQL
database, its own temporary directories (pytest's basetemp is per worker) and free ports (every
server in the tests binds port 0)."""

from __future__ import annotations

import os
import shutil
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import peewee
import pytest

from storage.db import open_database
from storage.migrations import MIGRATIONS, current_version, migrate
from storage.models import SchemaVersion
from wilson.kernel import config as configmod
from wilson.kernel.clock import SimClock
from wilson.model.scripted import ScriptedServer
from tests.cortex_support import START, model
from tests.mailservers import SmtpSink, start_dovecot

ROOT = Path(__file__).resolve().parent.parent


def worker_database(url: str | None, worker: str | None) -> str | None:
    """The database this test process uses: the one named, or under pytest-xdist the worker's own beside it
    (`wilson_test` -> `wilson_test_gw0`), created when missing, so that workers never drop each other's tables."""
    if not url or not worker:
        return url
    import psycopg2
    from psycopg2 import errors

    parts = urlsplit(url)
    name = f"{parts.path.lstrip('/')}_{worker}"
    try:
        conn = psycopg2.connect(url)
    except psycopg2.OperationalError as exc:
        raise pytest.UsageError(
            f"WILSON_TEST_DATABASE_URL: cannot connect to make {name}: {' '.join(str(exc).split())}"
        ) from None
    conn.autocommit = True
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
            if cur.fetchone() is None:
                try:
                    cur.execute(f'CREATE DATABASE "{name}"')
                except errors.DuplicateDatabase:
                    pass  # a worker of another run made it first
            # a commit need not wait for the disk: a test database outlives no server crash, and the tests'
            # migrations and many small transactions otherwise queue behind every other fsync of a busy machine
            cur.execute(f'ALTER DATABASE "{name}" SET synchronous_commit TO off')
    finally:
        conn.close()
    return urlunsplit(parts._replace(path=f"/{name}"))


# before any test module reads it (several read the environment at import, and child processes inherit it)
POSTGRES_URL = worker_database(os.environ.get("WILSON_TEST_DATABASE_URL"), os.environ.get("PYTEST_XDIST_WORKER"))
if POSTGRES_URL:
    os.environ["WILSON_TEST_DATABASE_URL"] = POSTGRES_URL


def pytest_collection_modifyitems(items):
    """Files with a test marked `slow` first, then the rest, each group largest file first. `make test` hands
    whole files to its workers in this order (--dist loadfile --no-loadscope-reorder): a long file handed out
    last would keep one worker busy for a minute or two while the others have finished."""
    files: dict[str, list] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::", 1)[0], []).append(item)
    slow = {name for name, tests in files.items() if any(t.get_closest_marker("slow") for t in tests)}
    ordered = sorted(files, key=lambda name: (name not in slow, -len(files[name])))
    items[:] = [item for name in ordered for item in files[name]]


def corpus_dir() -> Path:
    return Path(os.environ.get("WILSON_CORPUS_DIR") or ROOT.parent / "shared" / "corpus")


def reset_postgres(url: str, tmp_path: Path):
    db = open_database(url, tmp_path)
    db.connect(reuse_if_open=True)
    for table in db.get_tables():
        db.execute_sql(f'DROP TABLE IF EXISTS "{table}" CASCADE')
    return db


# The tables, indexes and triggers a whole migration made, per PostgreSQL database this process migrated
_POSTGRES_SHAPES: dict[str, set[tuple[str, str]]] = {}


def _postgres_shape(db) -> set[tuple[str, str]]:
    return set(
        db.execute_sql(
            "SELECT 'table', tablename FROM pg_tables WHERE schemaname = current_schema() "
            "UNION ALL SELECT 'index', indexname FROM pg_indexes WHERE schemaname = current_schema() "
            "UNION ALL SELECT 'trigger', tgname FROM pg_trigger WHERE NOT tgisinternal"
        ).fetchall()
    )


def empty_postgres(url: str, tmp_path: Path):
    """Working memory on PostgreSQL, migrated and empty. Emptying the tables of a whole schema takes a fraction
    of dropping and migrating them again for every test; a schema found otherwise (a test that dropped or
    changed something) is made afresh."""
    db = open_database(url, tmp_path)
    db.connect(reuse_if_open=True)
    shape = _postgres_shape(db)
    if shape and shape == _POSTGRES_SHAPES.get(url) and current_version() == MIGRATIONS[-1][0]:
        emptied = sorted(name for kind, name in shape if kind == "table" and name != SchemaVersion._meta.table_name)
        try:
            with db.atomic():
                # DELETE of a few rows costs a twentieth of TRUNCATE's new files; the replica role lets it
                # go in any order past the foreign keys (and wakes no one through the insert triggers)
                db.execute_sql("SET LOCAL session_replication_role = replica")
                for table in emptied:
                    db.execute_sql(f'DELETE FROM "{table}"')
                # ids start at 1 again, as in new tables (the kept schema version's sequence goes on)
                db.execute_sql(
                    "SELECT setval(s.oid, 1, false) FROM pg_class s JOIN pg_depend d ON d.objid = s.oid "
                    "AND d.deptype IN ('a', 'i') JOIN pg_class t ON t.oid = d.refobjid "
                    "WHERE s.relkind = 'S' AND t.relname = ANY(%s)",
                    (emptied,),
                )
        except peewee.ProgrammingError:  # a role that may not set it: TRUNCATE needs no more than owning
            db.execute_sql("TRUNCATE " + ", ".join(f'"{t}"' for t in emptied) + " RESTART IDENTITY CASCADE")
        return db
    db = reset_postgres(url, tmp_path)
    migrate()
    _POSTGRES_SHAPES[url] = _postgres_shape(db)
    return db


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def any_db(request, tmp_path):
    """Working memory on each backend; PostgreSQL runs when WILSON_TEST_DATABASE_URL is set."""
    if request.param == "postgres":
        if not POSTGRES_URL:
            pytest.skip("WILSON_TEST_DATABASE_URL is not set")
        db = empty_postgres(POSTGRES_URL, tmp_path)
    else:
        fresh_sqlite(request.getfixturevalue("migrated_sqlite"), tmp_path)
        db = open_database(None, tmp_path)
    migrate()
    yield db
    db.close()


@pytest.fixture(scope="session")
def migrated_sqlite(tmp_path_factory) -> Path:
    """A working memory migrated once per test process: a test copies the file instead of running every
    migration again (a third of a second each, times hundreds of tests). Closed, so its WAL is folded in."""
    made = open_database(None, tmp_path_factory.mktemp("migrated"))
    migrate()
    path = Path(made.database)
    made.close()
    return path


def fresh_sqlite(template: Path, home: Path) -> None:
    """Put a copy of the migrated working memory in `home`, unless it has one: `open_database` then finds
    it, and `migrate()` finds nothing to do."""
    target = home / template.name
    if not target.exists():
        home.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(template, target)


@pytest.fixture
def db(tmp_path, migrated_sqlite):
    fresh_sqlite(migrated_sqlite, tmp_path)
    db = open_database(None, tmp_path)
    migrate()
    yield db
    db.close()


@pytest.fixture
def home(db, tmp_path):
    """A home directory whose working memory (the `db` fixture's) is migrated and open."""
    return tmp_path


def make_config(home: Path, **env):
    # the dashboard listens on a fixed port by default: a test that wants it turns it on (on port 0)
    environ = {
        "WILSON_CORE_TIMEZONE": "Europe/Berlin",
        "WILSON_CORE_QUIET_HOURS": "22:00-07:00",
        "WILSON_WEB_ENABLED": "false",
    }
    environ.update({k: str(v) for k, v in env.items()})
    return configmod.load(home, environ=environ)


@pytest.fixture
def make_app(tmp_path, migrated_sqlite):
    """Build and start a Wilson on a simulated clock; stopped at the end of the test."""
    from wilson.app.application import Wilson

    apps = []

    def factory(start="2027-01-05T08:00:00+01:00", llm="offline", home=None, env=None, **kw):
        home = home or tmp_path / "home"
        config = make_config(home, **(env or {}))
        if not config.get("database", "url"):
            fresh_sqlite(migrated_sqlite, home)
        clock = SimClock(datetime.fromisoformat(start))
        kw.setdefault("watchdog", True)  # as in `wilson run`: a test that needs it off says so
        app = Wilson(config, clock, llm=llm, log_level="WARNING", **kw)
        app.start()
        apps.append(app)
        return app

    yield factory
    for app in apps:
        app.stop()


@pytest.fixture
def web(make_app):
    """A running Wilson with its dashboard on a free loopback port (tests keep the dashboard off otherwise)."""
    app = make_app(env={"WILSON_WEB_ENABLED": "true", "WILSON_WEB_PORT": "0"})
    assert app.wait_idle()  # the channel has started listening (its on_start ran before the ping)
    return app


@pytest.fixture
def fake():
    """A fake Telegram Bot API server on loopback, with a forum supergroup (tests/fake_telegram.py)."""
    from tests.fake_telegram import FORUM_CHAT_ID, FakeTelegram

    with FakeTelegram(forum_chat_id=FORUM_CHAT_ID) as server:
        yield server


@pytest.fixture
def serve():
    """Scripted model servers on loopback (wilson/model/scripted.py), stopped after the test."""
    servers = []

    def start(rules=(), **kw):
        server = ScriptedServer(rules, **kw)
        server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def scripted(make_app, serve):
    """The one scripted-model fixture for a running Wilson: start(decide, after=None, start=START, rules=(), **env)
    -> (app, server), the model answering over real HTTP by tests/cortex_support.py model(decide, after)."""

    def start(decide, after=None, start=START, rules=(), **env):
        server = serve(list(rules) + model(decide, after))
        app = make_app(start=start, llm=server.base_url, env={"WILSON_LLM_MODEL": "m", **env})
        return app, server

    return start


@pytest.fixture(scope="module")
def dovecot():
    """The one Dovecot IMAP server of a test module, on loopback (tests/mailservers.py); tests take folders of
    their own in it."""
    server = start_dovecot()
    yield server
    server.stop()


@pytest.fixture
def own_dovecot():
    """A Dovecot of the test's own, to restart or to fill without the module's other tests seeing it."""
    server = start_dovecot()
    yield server
    server.stop()


@pytest.fixture
def sink():
    """The one SMTP server of a test, on loopback, keeping what it was sent (tests/mailservers.py)."""
    server = SmtpSink().start()
    yield server
    server.stop()
