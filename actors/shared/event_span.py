"""A topic's event as the user's calendar has it now.

A topic planned from a calendar event keeps the dates it was planned with until the user approves a change;
the calendar, which the user edits themselves, may say otherwise meanwhile: the trip moved to May, or
cancelled. What Wilson raises about the event (its escalation windows, the day's line in the briefing, the
follow-ups of its preparation) goes by the calendar, so nothing is said against dates the user has given up.
A topic told in words (no event of its title in the calendar) keeps its own dates, and so does a cancelled one
whose closing the user said no to: they keep the plan, and hear of it again.
"""

from __future__ import annotations

from datetime import datetime

from storage import calendar_days
from storage.models import ApprovalItem
from wilson.kernel.clock import as_utc


def event_span(topic, tz) -> tuple[datetime, datetime | None] | None:
    """The topic's event as (start, exclusive end) in UTC, moved with the calendar; None when the calendar cancelled it
    (and the user did not say no to closing the topic), or the topic has no start: no event to raise."""
    if topic.starts is None:
        return None
    own = as_utc(topic.starts), as_utc(topic.ends) if topic.ends else None
    said = calendar_days.titled(topic.title, own[0], tz)
    if said is None:
        return own
    if isinstance(said, str):  # CANCELLED
        return own if _closing_declined(topic.id) else None
    return said.start, said.end


def cancelled(topic, tz) -> bool:
    """Whether the topic's preparation waits, unsaid, because the calendar cancelled its event."""
    return topic.starts is not None and event_span(topic, tz) is None


def _closing_declined(topic_id: int) -> bool:
    """Whether the user said no to a proposal to close this topic."""
    return any(
        str((item.args or {}).get("topic_id")) == str(topic_id)  # a model may quote an id: "7"
        for item in ApprovalItem.select(ApprovalItem.args).where(
            (ApprovalItem.tool == "close_topic") & (ApprovalItem.status == "rejected")
        )
    )
