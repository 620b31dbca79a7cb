"""Versioned schema migrations.

Each migration is a function of (database, migrator) registered in order.
Version 1 creates the tables; later versions use playhouse.migrate operations
(add_column, add_index, ...) so that an existing home directory upgrades in place.
"""

from __future__ import annotations

import copy
from datetime import datetime

import peewee
from loguru import logger
from playhouse.migrate import SchemaMigrator
from playhouse.migrate import migrate as apply

from storage import hot, kv, models
from storage.db import database
from storage.engram import install_index
from wilson.kernel.clock import wall_now


_statements: dict = {}  # (model, kind of database) -> its CREATE TABLE and CREATE INDEX statements


def create_tables(db, tables: list) -> None:
    """`db.create_tables(tables)` (each only if it is not there), with each model's statements built once per
    process: peewee built them anew for every new database, about half of what making one cost, and a process
    that makes many homes (the tests, an evaluation) made them hundreds of times."""
    for model in peewee.sort_models(tables):
        if any(field.sequence for field in model._meta.sorted_fields):  # peewee looks for those and makes them
            model.create_table(safe=True)
            continue
        key = (model, type(db))
        statements = _statements.get(key)
        if statements is None:
            schema = model._schema
            made = [schema._create_table(safe=True), *schema._create_indexes(safe=True)]
            statements = _statements[key] = [context.query() for context in made]
        for sql, params in statements:
            db.execute_sql(sql, params)


def _v1_create_tables(db, migrator):
    create_tables(db, models.ALL_MODELS)


def _v2_engram_index(db, migrator):
    """Once a hand-made term index; the database's own full-text search replaced it (v17)."""


def _v3_sent_messages(db, migrator):
    """The ids of delivered messages get a table of their own (an exact, indexed lookup for replies and
    reactions); what was delivered before is indexed from the outbox rows' results."""
    create_tables(db, [models.SentMessage])
    rows = []
    box = models.Outbox
    delivered = box.select().where((box.status == "delivered") & box.result.is_null(False))
    for box in delivered.iterator():
        result = box.result if isinstance(box.result, dict) else {}
        if result.get("chat_id") is None:
            continue
        rows += [
            {
                "channel": box.channel,
                "chat_id": str(result["chat_id"]),
                "message_id": str(message_id),
                "outbox_id": box.id,
            }
            for message_id in result.get("message_ids") or []
        ]
    for start in range(0, len(rows), 200):
        models.SentMessage.insert_many(rows[start : start + 200]).on_conflict_ignore().execute()


def add_missing_columns(db, migrator, fields) -> None:
    """Add each field's column unless it is there: v1 creates the tables as the models are today.

    A column is always added nullable (a NOT NULL one filled with its default): making it NOT NULL
    afterwards would have SQLite rebuild the table, and dropping the old table cascades through
    foreign keys (a proposal's items would go with it). The models never write NULL there."""
    for field in fields:
        table = field.model._meta.table_name
        if field.column_name not in {c.name for c in db.get_columns(table)}:
            addable = copy.copy(field)
            addable.null = True
            apply(migrator.add_column(table, field.column_name, addable))
            if not field.null and field.default is not None:
                apply(migrator.apply_default(table, field.column_name, field))


def _v4_leases_and_decisions(db, migrator):
    """Claims get an owner and a lease; decisions become rows; outbox rows remember their attempts;
    turns and proposals know whose they are and whether they were shown."""
    add_missing_columns(
        db,
        migrator,
        [
            models.Inbox.owner,
            models.Inbox.lease_until,
            models.Outbox.next_attempt_at,
            models.Outbox.sending_at,
            models.Turn.user_id,
            models.Approval.presented_at,
            models.Approval.idempotency_key,
        ],
    )
    if "approval_idempotency_key" not in {i.name for i in db.get_indexes("approval")}:
        db.execute_sql('CREATE UNIQUE INDEX "approval_idempotency_key" ON "approval" ("idempotency_key")')
    create_tables(db, [models.DecisionRow])
    # proposals older than this schema were presented when they were made
    models.Approval.update(presented_at=models.Approval.created_at).execute()


NOTIFY_SQL = [
    """CREATE OR REPLACE FUNCTION wilson_notify() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN PERFORM pg_notify('wilson', TG_TABLE_NAME); RETURN NULL; END $$""",
    # a row becomes workable when it is written pending, or moves back to pending (a retry, a release)
    """CREATE TRIGGER inbox_new AFTER INSERT ON inbox FOR EACH ROW WHEN (NEW.status = 'pending')
       EXECUTE FUNCTION wilson_notify()""",
    """CREATE TRIGGER inbox_again AFTER UPDATE OF status ON inbox FOR EACH ROW
       WHEN (NEW.status = 'pending' AND OLD.status <> 'pending') EXECUTE FUNCTION wilson_notify()""",
    """CREATE TRIGGER outbox_new AFTER INSERT ON outbox FOR EACH ROW WHEN (NEW.status = 'pending')
       EXECUTE FUNCTION wilson_notify()""",
    """CREATE TRIGGER outbox_again AFTER UPDATE OF status ON outbox FOR EACH ROW
       WHEN (NEW.status = 'pending' AND OLD.status <> 'pending') EXECUTE FUNCTION wilson_notify()""",
    "CREATE TRIGGER decision_new AFTER INSERT ON decision FOR EACH ROW EXECUTE FUNCTION wilson_notify()",
    "CREATE TRIGGER approval_new AFTER INSERT ON approval FOR EACH ROW EXECUTE FUNCTION wilson_notify()",
]


def _v9_notify_between_processes(db, migrator):
    """On PostgreSQL, committed work wakes the other processes (wilson/kernel/waker.py LISTENs)."""
    if not isinstance(db, peewee.PostgresqlDatabase):
        return
    for statement in NOTIFY_SQL:
        db.execute_sql(statement)


def _v11_proposal_life(db, migrator):
    """Proposals say why they were made and what a modification changed; they remind once before
    expiring and tell the user when they did."""
    add_missing_columns(
        db,
        migrator,
        [
            models.Approval.reason,
            models.Approval.changes,
            models.Approval.remind_at,
            models.Approval.reminded_at,
            models.Approval.expired_notice_at,
        ],
    )
    # proposals older than this schema expired (or were decided) without a word: no late notices for them
    models.Approval.update(expired_notice_at=wall_now()).where(models.Approval.status == "expired").execute()


def _v13_task_owners(db, migrator):
    """Tasks and topics know whose they are, so one person's private ones stay out of another's prompt."""
    add_missing_columns(db, migrator, [models.Task.owner_id, models.Topic.owner_id])


def _v17_memory_full_text(db, migrator):
    """Recall runs on the database's full-text engine (FTS5 / tsvector); the hand-made term index goes."""

    db.execute_sql('DROP TABLE IF EXISTS "memoryterm"')
    db.execute_sql('DROP TABLE IF EXISTS "memory_term"')
    install_index(db)


def _v18_inbox_status_index(db, migrator):
    """The inbox's index on status alone goes: (status, priority, id) serves every look by status, and the
    second index cost a page write more on every insert, claim and finish."""
    db.execute_sql('DROP INDEX IF EXISTS "inbox_status"')


def _v19_mail_senders(db, migrator):
    """The RAS learns which senders' mail is routine (actors/ras.py), one row per address."""
    create_tables(db, [models.MailSender])


def _v20_mail_subjects(db, migrator):
    """The RAS learns routine mail by sender and subject too, one row per pair (actors/ras.py)."""
    create_tables(db, [models.MailSubject])


def _v21_bulk_senders(db, migrator):
    """Triage learns whose bulk mail it keeps dropping (actors/triage.py), one row per address."""
    create_tables(db, [models.BulkSender])


def _v22_model_failures(db, migrator):
    """Each role's runs and the runs whose model broke the protocol are counted per day (wilson/model/synapse.py)."""
    add_missing_columns(db, migrator, [models.TokenUsage.runs, models.TokenUsage.failed, models.TokenUsage.failure])


# the families of settings that were marks about one thing each, and their kind in the table `mark`
MARKS = {
    "escalation:": "escalation",
    "telegram:renamed:": "renamed",
    "telegram:left_out:": "left_out",
    "telegram:awaiting_modify:": "awaiting_modify",
}


def _v23_state_tables(db, migrator):
    """Decision chats, budget notices, web sessions, watches and marks leave the settings table for tables of
    their own: each row is carried over as it was, and the settings keep only settings."""
    create_tables(db, [models.DecisionChat, models.BudgetNotice, models.WebSession, models.Watch, models.Mark])
    if not models.Setting.select().exists():  # a new database: nothing to carry over, and a dozen reads fewer
        return
    now = wall_now()
    for row in models.Setting.select().where(models.Setting.key.startswith("telegram:decision_chat:")):
        if isinstance(row.value, dict) and row.value.get("chat_id") is not None:
            models.DecisionChat.insert(
                key=row.key[len("telegram:decision_chat:") :], place=row.value, at=now
            ).on_conflict_ignore().execute()
    for row in models.Setting.select().where(models.Setting.key.startswith("budget_notice:")):
        models.BudgetNotice.insert(
            day=row.key[len("budget_notice:") :], error=str(row.value or "")[:200], at=now
        ).on_conflict_ignore().execute()
    for row in models.Setting.select().where(models.Setting.key.startswith("web:session:")):
        value = row.value if isinstance(row.value, dict) else {}
        try:
            created, expires = (datetime.fromisoformat(value[k]) for k in ("created", "expires"))
        except (KeyError, TypeError, ValueError):
            continue  # not a session this code wrote: it would not be let in either
        models.WebSession.insert(
            digest=row.key[len("web:session:") :], csrf=str(value.get("csrf") or ""), created=created, expires=expires
        ).on_conflict_ignore().execute()
    for row in models.Setting.select().where(models.Setting.key.startswith("web:watch:")):
        if isinstance(row.value, dict) and row.value.get("url"):
            models.Watch.insert(source=row.key[len("web:watch:") :], state=row.value).on_conflict_ignore().execute()
    for prefix, kind in MARKS.items():
        for key, value in kv.settings_with_prefix(prefix).items():
            models.Mark.insert(kind=kind, key=key, value=value, at=now).on_conflict_ignore().execute()
    for prefix in ("telegram:decision_chat:", "budget_notice:", "web:session:", "web:watch:", *MARKS):
        kv.delete_settings(prefix)


MIGRATIONS = [
    (1, "create working memory", _v1_create_tables),
    (2, "engram term index", _v2_engram_index),
    (3, "delivered message ids", _v3_sent_messages),
    (4, "claim leases, decision rows, delivery attempts", _v4_leases_and_decisions),
    (9, "wake-ups between processes", _v9_notify_between_processes),
    (11, "proposal reasons, reminders and expiry notices", _v11_proposal_life),
    (13, "task and topic owners", _v13_task_owners),
    (17, "memory recall on the database's full-text search", _v17_memory_full_text),
    (18, "one index on the inbox's status", _v18_inbox_status_index),
    (19, "what the RAS learned of mail senders", _v19_mail_senders),
    (20, "what the RAS learned of mail subjects", _v20_mail_subjects),
    (21, "what triage learned of bulk mail senders", _v21_bulk_senders),
    (22, "failed model runs per role and day", _v22_model_failures),
    (23, "state in tables of its own: decision chats, budget notices, web sessions, watches, marks", _v23_state_tables),
]


def current_version() -> int:
    db = database.obj
    if not db.table_exists(models.SchemaVersion._meta.table_name):
        return 0
    table = models.SchemaVersion._meta.table_name
    [(version,)] = hot.execute("schema version", lambda: f'SELECT MAX("version") FROM "{table}"').rows
    return version or 0


def migrate() -> int:
    """Bring the schema up to date; returns the version now in force."""
    db = database.obj
    if isinstance(db, peewee.PostgresqlDatabase):
        # several processes may start at once: one migrates, the others wait and find it done
        db.execute_sql("SELECT pg_advisory_lock(hashtext('wilson:migrate'))")
        try:
            return _migrate(db)
        finally:
            db.execute_sql("SELECT pg_advisory_unlock(hashtext('wilson:migrate'))")
    return _migrate(db)


def _migrate(db) -> int:
    migrator = SchemaMigrator.from_database(db)
    version = current_version()
    fresh = version == 0  # a new database is created, not migrated: one line says so, not one per step
    for number, title, step in MIGRATIONS:
        if number <= version:
            continue
        with db.atomic():
            if current_version() >= number:  # another process (the CLI beside `wilson run`) got here first
                version = current_version()
                continue
            step(db, migrator)
            hot.create(models.SchemaVersion, version=number, applied_at=wall_now())
        logger.log("DEBUG" if fresh else "INFO", "schema migrated to v{} ({})", number, title)
        version = number
    if fresh and version:
        logger.info("created a new database (schema v{})", version)
    return version
