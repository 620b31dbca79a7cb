"""What one calendar event is, as the rest of the calendar package sees it.

Every `Event.start`/`Event.end` is an aware UTC datetime (see the package's docstring
for floating times and all-day events); the errors every part raises live here too.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from wilson.kernel.timeparse import utc_or_none

UTC = timezone.utc
CANCELLED = "CANCELLED"
UID_CHARS = 255


class CalendarError(Exception):
    """A calendar that cannot be read; the message is one line naming the file and the problem."""


class OverBudget(CalendarError):
    """Reading a document took longer than its time budget."""


class SourceError(Exception):
    """A source that cannot be fetched (unreachable, refused, wrong platform). `revoked`: the OAuth grant it signs
    in with is no longer honoured (channels/accounts.py)."""

    def __init__(self, message: str = "", *, revoked: bool = False):
        super().__init__(message)
        self.revoked = revoked


def one_line(text: object, limit: int = 300) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# Events -------------------------------------------------------------------


@dataclass(frozen=True)
class Event:
    uid: str
    recurrence_id: str | None  # None unless the event is one occurrence of a recurring series
    sequence: int
    title: str
    start: datetime  # aware UTC
    end: datetime | None  # aware UTC, exclusive; None for an event that is a point in time
    all_day: bool
    location: str | None
    description: str | None
    attendees: tuple[str, ...]
    status: str | None
    doc: str = field(default="", compare=False)  # the document (file, CalDAV object) it came from
    more_attendees: int = 0  # attendees beyond those kept in `attendees`

    @property
    def key(self) -> str:
        return event_key(self.uid, self.recurrence_id)


def event_key(uid: str, recurrence_id: str | None) -> str:
    return f"{uid}|{recurrence_id or ''}"


def event_from_entry(entry: dict) -> Event:
    """The event a snapshot entry stands for (without the fields a snapshot does not keep)."""
    return Event(
        uid=entry["uid"],
        recurrence_id=entry.get("recurrence_id"),
        sequence=entry.get("sequence", 0),
        title=entry.get("title") or "(untitled)",
        start=utc_or_none(entry["start"]),
        end=utc_or_none(entry.get("end")),
        all_day=bool(entry.get("all_day")),
        location=entry.get("location"),
        description=None,
        attendees=(),
        status=entry.get("status"),
        doc=entry.get("doc", ""),
    )


def is_over(event: Event, now: datetime) -> bool:
    return (event.end or event.start + timedelta(seconds=1)) <= now


def raw_uid(component) -> str:
    return str(component.get("UID") or "").strip()


def uid_of(raw: str) -> str:
    # The UID becomes a snapshot key and part of every dedup key: a huge one is replaced by its hash.
    if len(raw) <= UID_CHARS:
        return raw
    return "uid-" + hashlib.sha1(raw.encode("utf-8", "replace")).hexdigest()
