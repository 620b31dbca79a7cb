"""Hot-path statements: the few every realtime stimulus runs, with their SQL text built once.

Peewee builds a statement by walking its expression tree anew on every call: 50-150 µs of
Python each, several times what SQLite needs to run it. On the realtime path that was most
of the CPU a stimulus cost, so the statements run for every stimulus (insert a row, read one
by id, the inbox claim) keep their SQL text here, built on first use per backend and reused.
Everything else in storage/ stays plain peewee.

The text is standard SQL that SQLite (≥ 3.35, for RETURNING) and PostgreSQL read alike; values
pass through the model fields' own `db_value`, and rows come back as model instances through
the fields' `python_value`, so a caller cannot tell them from what peewee returns.
"""

from __future__ import annotations

import contextlib

import peewee

from storage.db import WRITES, database

_text: dict = {}  # (key, param style) -> SQL text


def _quote(name: str) -> str:
    return f'"{name}"'


def _sql(key, build) -> str:
    """The statement for `key` in the open database's parameter style, built once."""
    param = database.obj.param
    cached = _text.get((key, param))
    if cached is None:
        cached = _text[(key, param)] = build().replace("?", param)
    return cached


def columns(model) -> list:
    return list(model._meta.sorted_fields)


def column_list(model, prefix: str = "") -> str:
    return ", ".join(prefix + _quote(f.column_name) for f in columns(model))


def instance(model, values) -> peewee.Model:
    """A model instance from a row of `columns(model)`, converted as peewee converts them."""
    data = {}
    for field, value in zip(columns(model), values):
        data[field.name] = field.python_value(value) if value is not None else None
    row = model(__no_default__=1, **data)
    row._dirty.clear()
    return row


class Result:
    """A statement's rows (read to the end) and how many rows it changed."""

    __slots__ = ("rows", "rowcount")

    def __init__(self, rows: list, rowcount: int):
        self.rows, self.rowcount = rows, rowcount


def execute(key, build, params=()) -> Result:
    """Run the statement named `key` (SQL from `build()` the first time) with `params`.

    Its rows are read to the end before it returns: an unfinished SELECT would hold SQLite's
    read snapshot, an unfinished `… RETURNING` its write lock."""
    sql = _sql(key, build)
    writing = getattr(database.obj, "writing", None)
    scope = writing() if writing is not None and sql[:7].upper().startswith(WRITES) else contextlib.nullcontext()
    with scope:
        cursor = database.execute_sql(sql, params)
        rows = cursor.fetchall() if cursor.description else []
    return Result(rows, cursor.rowcount)


def insert(model, row: peewee.Model, *, skip_duplicate: bool = False, returning: bool = True):
    """INSERT the field values of the unsaved `row`; its new id (set on it too), or None when
    `skip_duplicate` and a unique key was taken already (ON CONFLICT DO NOTHING: no savepoint needed)."""
    fields = [f for f in columns(model) if f.name in row.__data__ and f is not model._meta.primary_key]
    names = tuple(f.name for f in fields)

    def build():
        sql = (f"INSERT INTO {_quote(model._meta.table_name)} ({', '.join(_quote(f.column_name) for f in fields)}) "
               f"VALUES ({', '.join('?' for _ in fields)})")
        if skip_duplicate:
            sql += " ON CONFLICT DO NOTHING"
        if returning:
            sql += f" RETURNING {_quote(model._meta.primary_key.column_name)}"
        return sql

    result = execute(("insert", model, names, skip_duplicate, returning), build,
                     [f.db_value(row.__data__[f.name]) for f in fields])
    if not returning:
        return None
    if not result.rows:
        return None
    row.id = result.rows[0][0]
    row._dirty.clear()
    return row.id


def by_id(model, row_id: int):
    """The row with this id as a model instance, or None."""
    result = execute(("by_id", model), lambda: (
        f"SELECT {column_list(model)} FROM {_quote(model._meta.table_name)} WHERE "
        f"{_quote(model._meta.primary_key.column_name)} = ?"), (row_id,))
    return instance(model, result.rows[0]) if result.rows else None
