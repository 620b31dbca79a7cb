"""A topic's event as the user's calendar has it now.

A topic planned from a calendar event keeps the dates it was planned with until the user approves a change;
the calendar, which the user edits themselves, may say otherwise meanwhile: the trip moved to May, or
cancelled. What Wilson raises about the event (its escalation windows, the day's line in the briefing, the
follow-ups of its preparation) goes by the calendar, so nothing is said against dates the user has given up.
A topic told in words (no event of its title in the calendar) keeps its own dates, and so does a cancelled one
whose closing the user said no to: they keep the plan, and hear of it again.
"""

from __future__ import annotations

from datetime import datetime, timedelta

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


def moved_later(topic, tz) -> timedelta | None:
    """How many days later than the plan's dates the calendar now has the topic's event, while the user has not said
    no to moving the plan; None when it has not moved a day or more later (a meeting an hour later moves no
    preparation; one moved earlier is raised by its own dates, sooner rather than late)."""
    span = event_span(topic, tz)
    if span is None or topic.starts is None:
        return None
    shift = span[0] - as_utc(topic.starts)
    if shift < timedelta(days=1) or _declined(topic.id, "update_topic"):
        return None
    return shift


def waits_for_move(task, now: datetime, shift: timedelta | None) -> bool:
    """Whether a follow-up of `task` waits because its event moved `shift` later: the task prepares the event (due
    by its planned start), and its date moved along with the event is still ahead. The plan's dates were counted
    back from the old start (the check-in on its eve); until the user moves them, nothing is said against a day the
    user has given up."""
    if shift is None or task.due is None or task.topic.starts is None:
        return False
    return as_utc(task.due) <= as_utc(task.topic.starts) and as_utc(now) < as_utc(task.due) + shift


def _closing_declined(topic_id: int) -> bool:
    """Whether the user said no to a proposal to close this topic."""
    return _declined(topic_id, "close_topic")


def _declined(topic_id: int, tool: str) -> bool:
    """Whether the user said no to a proposal of `tool` on this topic."""
    return any(
        str((item.args or {}).get("topic_id")) == str(topic_id)  # a model may quote an id: "7"
        for item in ApprovalItem.select(ApprovalItem.args).where(
            (ApprovalItem.tool == tool) & (ApprovalItem.status == "rejected")
        )
    )
