"""The day's one notice that background reasoning paused for the model budget: whether it was given.

A week of rows is kept (one indexed delete when the next is written): enough to see in the database when
the budget ran out lately, and the table stays a few rows long.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from storage.models import BudgetNotice
from wilson.kernel.clock import as_utc

KEEP = timedelta(days=7)


def given(day: str) -> bool:
    return BudgetNotice.select().where(BudgetNotice.day == day).exists()


def note(day: str, error: str, now: datetime) -> None:
    now = as_utc(now)
    BudgetNotice.insert(day=day, error=error[:200], at=now).on_conflict_ignore().execute()
    BudgetNotice.delete().where(BudgetNotice.at < now - KEEP).execute()
