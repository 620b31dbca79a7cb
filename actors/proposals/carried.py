"""Where a proposal is told: on its own by the gate, or inside a morning briefing that carries it.

The gate (actors/proposals/make.py) asks before it shows a proposal; the briefing (actors/briefing.py)
lists what these say it carries. Both read the briefing's outbox rows, so the rules live here, below both.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from peewee import Value, fn

from actors import attention
from actors.proposals.rules import OPEN
from storage import hot
from storage.models import Approval, Inbox, Outbox, Schedule
from storage.prepared import prepared
from wilson.kernel.clock import as_utc

SETTLE_AFTER = timedelta(minutes=45)  # the longest a briefing waits for the runs it awaits


def briefed_before(approval_ids: list[int], since: datetime) -> set[int]:
    """Of these proposals, those a briefing already sent (or being sent) since `since` listed."""
    listed: set[int] = set()
    for (payload,) in BRIEFINGS_SINCE.rows(since=since):
        listed.update(int(i) for i in (Outbox.payload.python_value(payload) or {}).get("proposals") or [])
    return listed & set(approval_ids)


# every morning's briefing asks it of every proposal it lists: the text built once
BRIEFINGS_SINCE = prepared(
    lambda s: Outbox.select(Outbox.payload).where(
        Outbox.idempotency_key.startswith("briefing:")
        & (Outbox.created_at >= s.since)
        & Outbox.status.not_in((attention.COMPOSE, attention.DROPPED))
    )
)


KEEP_FOR_BRIEFING = timedelta(hours=2)  # a briefing this soon after the quiet hours end tells what they held
ORPHAN_AFTER = timedelta(hours=27)  # kept, and no briefing came at all since: shown on its own then


def briefing_after_quiet(quiet_end: datetime, config) -> datetime | None:
    """When the morning briefing goes out, if it does so as the quiet hours end (give or take)."""
    if not attention.briefing_enabled(config):
        return None
    sched = Schedule.get_or_none(
        (Schedule.name == "briefing") & (Schedule.kind == "builtin") & (Schedule.enabled == True)
    )
    if sched is None or sched.next_fire_at is None:
        return None
    at = as_utc(sched.next_fire_at)
    return at if as_utc(quiet_end) - timedelta(minutes=1) <= at <= as_utc(quiet_end) + KEEP_FOR_BRIEFING else None


def _kept_for_briefing(s):
    # the tick asks every scan: one query that is nearly always empty (a proposal shown on its own,
    # the common case, has its outbox row and is not looked at again)
    own_row = Outbox.select(Outbox.id).where(
        Outbox.idempotency_key == Value("proposal:").concat(Approval.id.cast("text"))
    )
    return Approval.select().where(
        Approval.status.in_(OPEN)
        & Approval.presented_at.is_null(False)
        & (Approval.expires_at > s.now)
        & ~fn.EXISTS(own_row)
    )


KEPT_FOR_BRIEFING = prepared(_kept_for_briefing)


def orphaned(now: datetime) -> list[int]:
    """Proposals kept for a morning briefing that did not tell them: a briefing went out (or was
    dropped) since without them, or none came within ORPHAN_AFTER. The gate shows them on their own."""
    kept = KEPT_FOR_BRIEFING.models(now=now)
    if not kept:
        return []
    ids = [a.id for a in kept]
    told = briefed_before(ids, min(as_utc(a.created_at) for a in kept))
    found = []
    for approval in kept:
        if (
            approval.id in told
            or carries(approval, hot.by_id(Inbox, approval.inbox_id) if approval.inbox_id else None) is not None
        ):
            continue
        since = as_utc(approval.presented_at)
        passed_by = (
            Outbox.select()
            .where(
                Outbox.idempotency_key.startswith("briefing:")
                & (Outbox.created_at >= since)
                & (Outbox.status != attention.COMPOSE)
            )
            .exists()
        )
        if passed_by or since <= as_utc(now) - ORPHAN_AFTER:
            found.append(approval.id)
    return found


def carries(approval: Approval, source: Inbox | None) -> Outbox | None:
    """The morning briefing that tells this proposal (so the gate need not): one being gathered for the
    run that made it, or one already sent that lists it. None when the proposal is the gate's to show."""
    if source is None or source.origin == "user" or source.priority <= 1:
        return None  # asked for, or urgent: shown on its own, now
    for box in Outbox.select().where(
        Outbox.idempotency_key.startswith("briefing:")
        & (Outbox.created_at >= as_utc(approval.created_at) - SETTLE_AFTER)
    ):
        payload = box.payload or {}
        if box.status == attention.COMPOSE and source.id in (payload.get("awaits") or []):
            return box
        if (
            box.status != attention.COMPOSE
            and source.id in (payload.get("awaits") or [])
            and approval.id in (payload.get("proposals") or [])
        ):
            return box
    return None
