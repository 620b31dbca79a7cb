"""Never vanishing: an unanswered proposal is reminded of once (by the morning briefing that lists it,
when one comes in time, else by a short nudge), dropped with one notice when it expires, and a close of
a topic whose end has passed is asked once more. Each transition is one transaction; the gate delivers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from actors import tools
from actors.proposals.make import copy_proposal
from actors.proposals.rules import OPEN, briefed, briefing_ahead, ended_topics_to_close, items_of, remind_before
from actors.proposals.words import expiry_text, one_line, reminder_text
from storage import mute
from storage import outbox, trace
from storage.db import database
from storage.models import Approval, ApprovalItem, Outbox, Topic


def lapsed_in_time(approval: Approval, tz) -> bool:
    """Whether it lapsed, or will, because its changes' own time passed (tools.moot_at), not the wait."""
    items = [(i.tool, i.args) for i in items_of(approval.id)]
    return tools.moot_at(items, tz) == approval.expires_at


@dataclass
class Expired:
    """What the gate tells after an expiry commits: the proposal's channel, the notice (when one is owed,
    held until `held`), and the proposal that asks again."""

    approval: Approval
    box: Outbox | None
    held: datetime | None
    again: Approval | None


def expire(approval_id: int, now: datetime, config, actor: str = "approval") -> Expired | None:
    """Mark one proposal expired and write its person's notice once; a close of a topic that has ended is
    asked again. None when there is nothing to do (told already, by another gate or a second nudge)."""
    box = again = held = None
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
        closing = [] if approval.superseded_by else ended_topics_to_close(approval, now)
        if closing:
            titles = ", ".join(f"“{one_line(Topic.get_by_id(i.args['topic_id']).title, 50)}”" for i in closing)
            again = copy_proposal(
                approval,
                closing,
                now,
                config,
                key=f"reclose:{approval.id}",
                reason=f"because {titles} has ended and is still open (proposal {approval.id} to close it expired)",
            )
            trace.record(
                approval.trace_id,
                "asked again",
                actor,
                f"proposal {approval.id} expired; closing asked again as proposal {again.id}",
                now,
            )
        rest = approval.items.where(ApprovalItem.status == "pending").count() - len(closing)
        if rest > 0:
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
            + (", user told" if box else ""),
            now,
        )
    return Expired(approval, box, held, again)


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
        if held is not None and held >= approval.expires_at:
            # quiet until after it lapses: a nudge then would be no nudge, and one now would break the quiet;
            # none is owed any more, and none was given (storage.reads.answered_since_shown reads reminded_at)
            Approval.update(reminded_at=None, remind_at=None).where(Approval.id == approval_id).execute()
            trace.record(
                approval.trace_id,
                "not reminded",
                actor,
                f"proposal {approval.id}: quiet until {held:%Y-%m-%d %H:%M} UTC, after it lapses",
                now,
            )
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
