"""The schedule rows the user's words make: a recurring reminder, a one-off reminder, a snooze's comeback.

The toolbox writes them (after approval) and the tick fires them (actors/tick/schedules.py).
"""

from __future__ import annotations

from datetime import datetime

from actors.shared.cron import next_fire, valid_cron, zone_of
from storage.db import claim_transaction
from storage.models import Schedule
from wilson.kernel.clock import as_utc


def add_reminder(
    name: str, cron: str, text: str, tz_name: str, now: datetime, staleness_seconds: int = 6 * 3600
) -> Schedule:
    """Create or replace a recurring reminder (for the approval gate's "remind me every ..." tool)."""
    if not valid_cron(cron):
        raise ValueError(f"not a cron expression: {cron!r}")
    fire = next_fire(cron, zone_of(tz_name), now)
    with claim_transaction():
        row = Schedule.get_or_none(Schedule.name == name)
        if row is None:
            return Schedule.create(
                name=name,
                cron=cron,
                kind="reminder",
                text=text,
                timezone=tz_name,
                staleness_seconds=staleness_seconds,
                next_fire_at=fire,
                enabled=True,
            )
        row.cron, row.kind, row.text, row.timezone = cron, "reminder", text, tz_name
        row.staleness_seconds, row.next_fire_at, row.enabled = staleness_seconds, fire, True
        row.save()
        return row


def add_once(name: str, at: datetime, text: str, tz_name: str) -> Schedule:
    """Create or move a one-off reminder (kind "once"): it fires once at `at`, then switches itself off.
    Its cron names the same local moment, so anything that reads it as a cron still sees the right time."""
    at = as_utc(at)
    local = at.astimezone(zone_of(tz_name))
    cron = f"{local.minute} {local.hour} {local.day} {local.month} *"
    with claim_transaction():
        row = Schedule.get_or_none(Schedule.name == name)
        if row is None:
            return Schedule.create(
                name=name, cron=cron, kind="once", text=text, timezone=tz_name, next_fire_at=at, enabled=True
            )
        row.cron, row.kind, row.text, row.timezone, row.next_fire_at, row.enabled = (
            cron,
            "once",
            text,
            tz_name,
            at,
            True,
        )
        row.save()
        return row


def disable_snoozes(task_id: int) -> None:
    """Switch off a task's snooze comeback ("snooze:<task id>:<until>"): it is no longer snoozed."""
    Schedule.update(enabled=False).where(
        (Schedule.kind == "once") & Schedule.name.startswith(f"snooze:{task_id}:")
    ).execute()
