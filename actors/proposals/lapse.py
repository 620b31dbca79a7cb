"""Never vanishing: an unanswered proposal is reminded of once (by the morning briefing that lists it,
when one comes in time, else by a short nudge) and dropped with one notice when it expires. A close Wilson
asked on its own when a topic's event ended is housekeeping (rules.housekeeping): the briefing that lists it
is its only reminder, and it lapses without a word. Each transition is one transaction; the gate delivers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from actors import tools
from actors.proposals.rules import OPEN, briefed, briefing_ahead, housekeeping, items_of, remind_before
from actors.proposals.words import expiry_text, reminder_text
from storage import mute
from storage import outbox, trace
from storage.db import database
from storage.models import Approval, Outbox


def lapsed_in_time(approval: Approval, tz) -> bool:
    """Whether it lapsed, or will, because its changes' own time passed (tools.moot_at), not the wait."""
    items = [(i.tool, i.args) for i in items_of(approval.id)]
    return tools.moot_at(items, tz) == approval.expires_at


@dataclass
class Expired:
    """What the gate tells after an expiry commits: the proposal's channel and the notice (when one is owed,
    held until `held`)."""

    approval: Approval
    box: Outbox | None
    held: datetime | None


def expire(approval_id: int, now: datetime, config, actor: str = "approval") -> Expired | None:
    """Mark one proposal expired and write its person's notice once, unless it is housekeeping. None when there
    is nothing to do (told already, by another gate or a second nudge)."""
    box = held = None
    with database.atomic():
        Approval.update(status="expired", decided_at=now).where(
            (Approval.id == approval_id) & Approval.status.in_(OPEN) & (Approval.expires_at <= now)
        ).execute()
        if (
            not Approval.update(expired_notice_at=now)
            .where((Approval.id == approval_id) & (Approval.status == "expired") & Approval.expired_notice_at.is_null())
            .execute()
        ):
            return None
        approval = Approval.get_by_id(approval_id)
        if not housekeeping(approval):
            held = mute.hold_until(config, now)
            in_time = lapsed_in_time(approval, config.timezone)
            payload = {"reply_to": approval.message_ref, "topic_id": approval.topic_id}
            if not in_time:  # its time has passed: bringing it back as it was would not help
                payload["revive"] = {"id": approval.id, "nonce": approval.nonce}
            box = outbox.add(
                channel=approval.channel,
                text=expiry_text(approval, in_time),
                trace_id=approval.trace_id,
                at=now,
                key=f"expired:{approval.id}",
                deliver_after=held,
                payload=payload,
            )
        trace.record(
            approval.trace_id,
            "expired",
            actor,
            f"proposal {approval.id} unanswered until {approval.expires_at:%Y-%m-%d %H:%M} UTC"
            + (", user told" if box else ", lapsed quietly: a close asked when its topic ended"),
            now,
        )
    return Expired(approval, box, held)


def remind(
    approval_id: int, now: datetime, config, actor: str = "approval"
) -> tuple[str, Outbox, datetime | None] | None:
    """The one reminder before a proposal expires: the morning briefing that lists it, when one comes in
    time; else a short nudge, in reply to the proposal where the channel can. Returns (channel, nudge, held
    until) for the gate to deliver, or None when no nudge was written."""
    with database.atomic():
        approval = Approval.get_or_none(Approval.id == approval_id)
        if approval is None or approval.status not in OPEN or approval.reminded_at is not None:
            return None
        since = max(approval.presented_at or approval.created_at, approval.expires_at - remind_before(config))
        if not briefed(approval, since, now):
            later = briefing_ahead(since, now, approval.expires_at)
            if later is not None:
                Approval.update(remind_at=later).where(
                    (Approval.id == approval_id) & Approval.reminded_at.is_null()
                ).execute()
                return None
        if (
            not Approval.update(reminded_at=now)
            .where(
                (Approval.id == approval_id)
                & Approval.status.in_(OPEN)
                & Approval.reminded_at.is_null()
                & (Approval.expires_at > now)
            )
            .execute()
        ):
            return None
        if briefed(approval, since, now):
            trace.record(
                approval.trace_id,
                "reminded",
                actor,
                f"proposal {approval.id} listed as waiting in the morning briefing",
                now,
            )
            return None
        held = mute.hold_until(config, now)
        quiet = held is not None and held >= approval.expires_at
        if quiet or housekeeping(approval):
            # quiet until after it lapses: a nudge then would be no nudge, and one now would break the quiet; a
            # close asked when its topic ended gets no nudge of its own. None is owed any more, and none was
            # given (storage.reads.answered_since_shown reads reminded_at)
            Approval.update(reminded_at=None, remind_at=None).where(Approval.id == approval_id).execute()
            why = (
                f"quiet until {held:%Y-%m-%d %H:%M} UTC, after it lapses"
                if quiet
                else "a close asked when its topic ended"
            )
            trace.record(approval.trace_id, "not reminded", actor, f"proposal {approval.id}: {why}", now)
            return None
        box = outbox.add(
            channel=approval.channel,
            text=reminder_text(approval, config.timezone, now),
            trace_id=approval.trace_id,
            at=now,
            key=f"remind:{approval.id}",
            deliver_after=held,
            payload={"reminder_for": approval.id, "reply_to": approval.message_ref, "topic_id": approval.topic_id},
        )
        trace.record(approval.trace_id, "reminded", actor, f"proposal {approval.id} still unanswered", now)
    return approval.channel, box, held
