"""Prepared statements: a peewee query written once with named slots for its values, its SQL text built
once per backend and bound anew at each run.

Peewee walks a query's expression tree on every execution to build its text: 50-300 µs of Python
for a read SQLite answers in a fraction of that. The reads every tick, consolidation and briefing
repeat are written here as the same peewee expressions, with `s.<name>` where a value goes:

    OWED = prepared(lambda s: Outbox.select(Outbox.id).where(Outbox.channel == s.channel))
    for (outbox_id,) in OWED.rows(channel="calendar"):
        ...

A slot's value passes through the converter peewee would have applied at its place (the field's
`db_value` on the other side of a comparison), so the bound statement matches exactly the rows
the plain query would. A slot holds one value: an IN list is a constant of the statement, and
None is refused (peewee writes `= None` as IS NULL, which a placeholder cannot be). A write (an UPDATE
the mornings repeat) runs with `run`; its slots stand where a field is compared, its new values are constants.
"""

from __future__ import annotations

from collections.abc import Callable

import peewee

from storage import hot
from storage.db import database


class Slot(peewee.Node):
    """A named value of a prepared query: a placeholder in its text, remembered with its converter."""

    def __init__(self, name: str):
        super().__init__()
        self.name = name

    def __sql__(self, ctx):
        return ctx.value(_Bound(self.name, ctx.state.converter), converter=False)


class _Bound:
    """A slot's place among the statement's parameters."""

    __slots__ = ("name", "convert")

    def __init__(self, name: str, convert):
        self.name, self.convert = name, convert


class _Slots:
    def __getattr__(self, name: str) -> Slot:
        return Slot(name)


_ALIAS = '"t1".'  # peewee's alias of a query's own table


class _Plan:
    __slots__ = ("sql", "writes", "params", "names", "model")

    def __init__(self, sql: str, writes: bool, params: list, model):
        self.sql, self.writes, self.params, self.model = sql, writes, params, model
        self.names = frozenset(p.name for p in params if type(p) is _Bound)


class Prepared:
    """A query with named slots (see the module's doc); `rows`, `models` and `value` run it."""

    def __init__(self, build: Callable[[_Slots], peewee.Query]):
        self._build = build
        self._plans: dict = {}  # backend class -> _Plan

    def _plan(self) -> _Plan:
        backend = type(database.obj)  # the text differs by backend (its parameter style, its dialect)
        plan = self._plans.get(backend)
        if plan is None:
            query = self._build(_Slots())
            sql, params = query.sql()
            if hot.is_write(sql) and any(type(p) is _Bound and p.convert is None for p in params):
                # peewee converts an UPDATE's new values only when they are plain values, not slots
                raise TypeError(f"a write's slots go where a field is compared, its new values are constants: {sql}")
            model = getattr(query, "model", None)
            if model is not None and not sql.startswith(f"SELECT {hot.column_list(model, _ALIAS)} FROM "):
                model = None  # not every column of one model: its rows are tuples only
            plan = self._plans[backend] = _Plan(sql, hot.is_write(sql), params, model)
        return plan

    def _bind(self, plan: _Plan, values: dict) -> list:
        if values.keys() != plan.names:
            raise TypeError(f"the statement's slots are {sorted(plan.names)}; given {sorted(values)}: {plan.sql[:120]}")
        bound = []
        for param in plan.params:
            if type(param) is _Bound:
                value = values[param.name]
                if value is None:
                    raise TypeError(f"slot {param.name!r} is None: write IS NULL in the query itself")
                param = value if param.convert is None else param.convert(value)
            bound.append(param)
        return bound

    def text(self) -> str:
        """The statement's SQL on the open database's backend (its slots as placeholders)."""
        return self._plan().sql

    def rows(self, **values) -> list[tuple]:
        """Every row, as tuples of the selected columns' values as stored (a time is text on SQLite)."""
        plan = self._plan()
        return hot.run(plan.sql, plan.writes, self._bind(plan, values)).rows

    def models(self, **values) -> list[peewee.Model]:
        """Every row as a model instance, converted as peewee converts it (the query selects all its columns)."""
        model = self._plan().model
        if model is None:
            raise TypeError(f"models() needs every column of one model selected: {self.text()[:120]}")
        return [hot.instance(model, row) for row in self.rows(**values)]

    def run(self, **values) -> int:
        """Run a write (an UPDATE or DELETE); how many rows it changed."""
        plan = self._plan()
        return hot.run(plan.sql, plan.writes, self._bind(plan, values)).rowcount

    def value(self, **values):
        """The first column of the first row (a count, an id), or None when there is no row."""
        rows = self.rows(**values)
        return rows[0][0] if rows else None


def prepared(build: Callable[[_Slots], peewee.Query]) -> Prepared:
    """A read whose text is built once from `build(s)`, where `s.<name>` stands for a value given at each run."""
    return Prepared(build)
