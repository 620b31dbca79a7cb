"""Hot-path statements: the few every realtime stimulus runs, with their SQL text built once.

Peewee builds a statement by walking its expression tree anew on every call: 50-150 µs of
Python each, several times what SQLite needs to run it. On the realtime path that was most
of the CPU a stimulus cost, so the statements run for every stimulus (insert a row, read one
by id, the inbox claim) keep their SQL text here, built on first use per backend and reused;
so do the keyed reads and upserts (`by_column`, `upsert`) of settings and cursors (storage/kv.py),
which the tick, the channels and the consolidation run all day. Everything else in storage/ stays plain peewee.

The text is standard SQL that SQLite (≥ 3.35, for RETURNING) and PostgreSQL read alike; values
pass through the model fields' own `db_value`, and rows come back as model instances through
the fields' `python_value`, so a caller cannot tell them from what peewee returns.
"""

from __future__ import annotations

import functools
from datetime import datetime, timezone

import peewee

from storage.db import WRITES, database
from storage.models import UTCDateTimeField

_text: dict = {}  # (key, param style) -> (SQL text, whether it writes)


def _quote(name: str) -> str:
    return f'"{name}"'


def _sql(key, build) -> tuple[str, bool]:
    """The statement for `key` in the open database's parameter style (built once), and whether it writes."""
    param = database.obj.param
    cached = _text.get((key, param))
    if cached is None:
        sql = build().replace("?", param)
        cached = _text[(key, param)] = (sql, is_write(sql))
    return cached


def is_write(sql: str) -> bool:
    """Whether the statement writes (it then takes SQLite's write lock in this process: storage/db.py)."""
    return sql.lstrip()[:7].upper().startswith(WRITES)


_columns: dict = {}  # model -> its fields in table order, with the converter of each


def columns(model) -> list:
    found = _columns.get(model)
    if found is None:
        found = _columns[model] = list(model._meta.sorted_fields)
    return found


# Fields whose value the driver hands back as it is kept (text as str, integers as int): their converters
# only return it. Exact types: a JSON or date field is a TextField by descent, not by this list.
_AS_STORED = (peewee.CharField, peewee.TextField, peewee.IntegerField, peewee.AutoField, peewee.BigIntegerField)


def _converters(model) -> tuple[list, list]:
    """(every field's name in column order, (name, converter) of those whose stored value needs one)."""
    key = (model, "convert")
    found = _columns.get(key)
    if found is None:
        fields = columns(model)
        found = _columns[key] = (
            [f.name for f in fields],
            [
                (f.name, _fast_time(f) if isinstance(f, UTCDateTimeField) else f.python_value)
                for f in fields
                if type(f) not in _AS_STORED
            ],
        )
    return found


_STORED_AS = {peewee.CharField: str, peewee.TextField: str, peewee.IntegerField: int, peewee.BigIntegerField: int}


def _to_db(field):
    """The field's `db_value`, skipped for a value already of the type it stores (text, an integer), which
    the converter would hand back unchanged."""
    convert, kind = field.db_value, _STORED_AS.get(type(field))
    if kind is None:
        return convert
    return lambda value: value if type(value) is kind else convert(value)


def _fast_time(field):
    """SQLite hands times back as text: `fromisoformat` reads peewee's format at a fraction of the cost of
    its `strptime` attempts; anything else goes to the field's own converter."""

    def convert(value):
        if isinstance(value, str):
            try:
                parsed = datetime.fromisoformat(value)
            except ValueError:
                parsed = None
            if parsed is not None and parsed.tzinfo is None:
                return parsed.replace(tzinfo=timezone.utc)
        return field.python_value(value)

    return convert


def column_list(model, prefix: str = "") -> str:
    return ", ".join(prefix + _quote(f.column_name) for f in columns(model))


def instance(model, values) -> peewee.Model:
    """A model instance from a row of `columns(model)`, converted as peewee converts them.

    Filled as peewee's own cursor fills one (`Model.__init__` with `__no_default__`), without the
    attribute-by-attribute assignment: a row of twelve turns is read on every user's message."""
    names, convert = _converters(model)
    data = dict(zip(names, values))
    for name, converter in convert:
        value = data[name]
        if value is not None:
            data[name] = converter(value)
    row = model.__new__(model)
    row.__data__, row._dirty, row.__rel__ = data, set(), {}
    return row


def new(model, **fields) -> peewee.Model:
    """`model(**fields)`, an unsaved row with its defaults, filled without peewee's attribute-by-attribute way
    (a descriptor call per field): for rows made on every stimulus. Names that are not plain fields (a
    foreign key's object, a property) go peewee's way."""
    if not _plain(model, fields):
        return model(**fields)
    data = model._meta.get_default_dict()
    data.update(fields)
    row = model.__new__(model)
    row.__data__, row._dirty, row.__rel__ = data, set(data), {}
    return row


def _plain(model, fields: dict) -> bool:
    plain = _columns.get((model, "plain"))
    if plain is None:
        plain = _columns[(model, "plain")] = frozenset(
            name for name, f in model._meta.fields.items() if type(model.__dict__.get(name)) is peewee.FieldAccessor
        )
    return plain.issuperset(fields)


_converted: dict = {}  # (model, a row as read) -> its values converted: see `known`
KNOWN_ROWS = 512  # distinct rows remembered (emptied when full): the last turns of some forty conversations


def known(model, values) -> peewee.Model:
    """`instance(model, values)` for rows read again on every stimulus (the last turns of a conversation): each
    distinct row as read is converted once, and every call gets a fresh instance of its own. A row changed in
    any column reads as another key. Models with a field whose value is mutable once converted (JSON) would
    share it between instances: they are converted every time."""
    if _mutable(model):
        return instance(model, values)
    key = (model, tuple(values))
    data = _converted.get(key)
    if data is None:
        if len(_converted) >= KNOWN_ROWS:
            _converted.clear()
        data = _converted[key] = instance(model, values).__data__
    row = model.__new__(model)
    row.__data__, row._dirty, row.__rel__ = dict(data), set(), {}
    return row


def _mutable(model) -> bool:
    key = (model, "mutable")
    found = _columns.get(key)
    if found is None:
        found = _columns[key] = any(
            type(f) not in _AS_STORED and not isinstance(f, UTCDateTimeField) for f in columns(model)
        )
    return found


class Result:
    """A statement's rows (read to the end) and how many rows it changed."""

    __slots__ = ("rows", "rowcount")

    def __init__(self, rows: list, rowcount: int):
        self.rows, self.rowcount = rows, rowcount


def execute(key, build, params=()) -> Result:
    """Run the statement named `key` (SQL from `build()` the first time) with `params`.

    Its rows are read to the end before it returns: an unfinished SELECT would hold SQLite's
    read snapshot, an unfinished `… RETURNING` its write lock."""
    sql, writes = _sql(key, build)
    return run(sql, writes, params)


def run(sql: str, writes: bool, params) -> Result:
    """Run a statement whose text is built already (`writes`: whether it does; storage/prepared.py's)."""
    db = database.obj
    run_hot = getattr(db, "run_hot", None)  # SQLite's, without peewee's way to the connection (storage/db.py)
    if run_hot is not None:
        rows, rowcount = run_hot(sql, params, writes)
        return Result(rows, rowcount)
    cursor = db.execute_sql(sql, params)  # PostgreSQL: its own locks, no queue of writers here
    return Result(cursor.fetchall() if cursor.description else [], cursor.rowcount)


_inserts: dict = {}  # (model, the row's field names as filled, options) -> (converters, statement key, build)


def insert(model, row: peewee.Model, *, skip_duplicate: bool = False, returning: bool = True):
    """INSERT the field values of the unsaved `row`; its new id (set on it too), or None when
    `skip_duplicate` and a unique key was taken already (ON CONFLICT DO NOTHING: no savepoint needed)."""
    data = row.__data__
    plan = _inserts.get((model, tuple(data), skip_duplicate, returning))  # a call site fills its rows alike
    if plan is None:
        fields = [f for f in columns(model) if f.name in data and f is not model._meta.primary_key]

        def build():
            sql = (
                f"INSERT INTO {_quote(model._meta.table_name)} "
                f"({', '.join(_quote(f.column_name) for f in fields)}) VALUES ({', '.join('?' for _ in fields)})"
            )
            if skip_duplicate:
                sql += " ON CONFLICT DO NOTHING"
            if returning:
                sql += f" RETURNING {_quote(model._meta.primary_key.column_name)}"
            return sql

        plan = _inserts[(model, tuple(data), skip_duplicate, returning)] = (
            [(f.name, _to_db(f)) for f in fields],
            ("insert", model, tuple(f.name for f in fields), skip_duplicate, returning),
            build,
        )
    converters, key, build = plan
    result = execute(key, build, [convert(data[name]) for name, convert in converters])
    if not returning:
        return None
    if not result.rows:
        return None
    row.id = result.rows[0][0]
    row._dirty.clear()
    return row.id


def insert_rows(model, rows: list) -> None:
    """INSERT the unsaved `rows`, filled alike (the same fields set), in one statement and in their order (their
    ids ascend with it); they get no ids back: the caller does not need them (a run's two turns). No rows: nothing."""
    if not rows:
        return
    data = [row.__data__ for row in rows]
    plan = _inserts.get((model, tuple(data[0]), "rows", len(rows)))
    if plan is None:
        fields = [f for f in columns(model) if f.name in data[0] and f is not model._meta.primary_key]
        one = f"({', '.join('?' for _ in fields)})"

        def build():
            return (
                f"INSERT INTO {_quote(model._meta.table_name)} "
                f"({', '.join(_quote(f.column_name) for f in fields)}) VALUES {', '.join([one] * len(rows))}"
            )

        plan = _inserts[(model, tuple(data[0]), "rows", len(rows))] = (
            [(f.name, _to_db(f)) for f in fields],
            ("insert rows", model, tuple(f.name for f in fields), len(rows)),
            build,
        )
    converters, key, build = plan
    execute(key, build, [convert(values[name]) for values in data for name, convert in converters])
    for row in rows:
        row._dirty.clear()


def create(model, **fields) -> peewee.Model:
    """`model.create(**fields)` with the INSERT built once: for rows written on every stimulus."""
    row = model(**fields)
    insert(model, row)
    return row


def by_id(model, row_id: int):
    """The row with this id as a model instance, or None."""
    return by_column(model, model._meta.primary_key, row_id)


def by_column(model, field, value):
    """The row whose unique `field` holds `value`, as a model instance, or None."""
    result = execute(
        ("by column", model, field.name),
        lambda: (
            f"SELECT {column_list(model)} FROM {_quote(model._meta.table_name)} WHERE {_quote(field.column_name)} = ?"
        ),
        (field.db_value(value),),
    )
    return instance(model, result.rows[0]) if result.rows else None


IN_CHUNK = 512  # values of an IN list per statement: far below either backend's limit on parameters


def padded(values: list) -> list:
    """`values` (not empty) padded with its last to a power of two: statements with an IN list of them are a
    few texts, each built once, where a text per length would be as many as the lengths."""
    size = 1 << (len(values) - 1).bit_length()
    return values + values[-1:] * (size - len(values))


def marks(n: int) -> str:
    return ", ".join("?" * n)


def by_ids(model, ids) -> list:
    """The rows whose ids are among `ids`, by id, as model instances."""
    return among(model, model._meta.primary_key, ids)


def among(model, field, values) -> list:
    """The rows whose `field` holds one of `values`, by id, as model instances."""
    values = sorted({field.db_value(v) for v in values})
    found = []
    for start in range(0, len(values), IN_CHUNK):
        chunk = padded(values[start : start + IN_CHUNK])
        build = functools.partial(_among_sql, model, field, len(chunk))
        found += [instance(model, row) for row in execute(("among", model, field.name, len(chunk)), build, chunk).rows]
    return sorted(found, key=lambda row: row._pk) if len(values) > IN_CHUNK else found


def _among_sql(model, field, size: int) -> str:
    table, key = _quote(model._meta.table_name), _quote(model._meta.primary_key.column_name)
    return (
        f"SELECT {column_list(model)} FROM {table} WHERE {_quote(field.column_name)} IN ({marks(size)}) ORDER BY {key}"
    )


def update_by_id(model, row_id: int, **fields) -> int:
    """UPDATE these fields of the row with this id (values through the fields' `db_value`); how many rows changed."""
    named = [model._meta.fields[name] for name in fields]
    table, key = _quote(model._meta.table_name), _quote(model._meta.primary_key.column_name)
    sets = ", ".join(f"{_quote(f.column_name)} = ?" for f in named)
    result = execute(
        ("update by id", model, tuple(fields)),
        lambda: f"UPDATE {table} SET {sets} WHERE {key} = ?",
        [f.db_value(fields[f.name]) for f in named] + [row_id],
    )
    return result.rowcount


def upsert(model, conflict, **fields) -> None:
    """INSERT a row of `fields`, or UPDATE the other columns of the row whose unique `conflict` field holds the
    same value (ON CONFLICT … DO UPDATE, which SQLite and PostgreSQL read alike)."""
    named = [model._meta.fields[name] for name in fields]

    def build():
        columns = ", ".join(_quote(f.column_name) for f in named)
        updates = ", ".join(
            f"{_quote(f.column_name)} = excluded.{_quote(f.column_name)}" for f in named if f is not conflict
        )
        return (
            f"INSERT INTO {_quote(model._meta.table_name)} ({columns}) VALUES ({', '.join('?' for _ in named)}) "
            f"ON CONFLICT ({_quote(conflict.column_name)}) DO UPDATE SET {updates}"
        )

    execute(("upsert", model, conflict.name, tuple(fields)), build, [f.db_value(fields[f.name]) for f in named])
