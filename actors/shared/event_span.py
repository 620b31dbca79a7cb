"""A topic's event as the user's calendar has it now.

A topic planned from a calendar event keeps the dates it was planned with until the user approves a change;
the calendar, which the user edits themselves, may say otherwise meanwhile: the trip moved to May, or
cancelled. What Wilson raises about the event (its escalation windows, the day's line in the briefing, the
follow-ups of its preparation) goes by the calendar, so nothing is said against dates the user has given up.
A topic told in words (no event of its title in the calendar) keeps its own dates.
"""

from __future__ import annotations

from datetime import datetime

from storage import calendar_days
from wilson.kernel.clock import as_utc


def event_span(topic) -> tuple[datetime, datetime | None] | None:
    """The topic's event as (start, exclusive end) in UTC, moved with the calendar; None when the calendar holds it
    only as cancelled. A topic without a start is None as well: it has no event to raise."""
    if topic.starts is None:
        return None
    said = calendar_days.titled(topic.title, as_utc(topic.starts))
    if said is None:
        return as_utc(topic.starts), as_utc(topic.ends) if topic.ends else None
    if isinstance(said, str):  # CANCELLED
        return None
    return said.start, said.end


def cancelled(topic) -> bool:
    """Whether the calendar cancelled the event this topic prepares (its preparation then waits, unsaid, for the
    user's answer to closing it)."""
    return (
        topic.starts is not None and calendar_days.titled(topic.title, as_utc(topic.starts)) == calendar_days.CANCELLED
    )
