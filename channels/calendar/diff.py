"""Change detection: the snapshot a source's cursor keeps, and what changed since it.

A snapshot maps ``uid|recurrence-id`` to an entry that keeps only what is worth telling
(title, times, place, status, sequence) and a version counting its changes, which is
part of each change's dedup key.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime

from channels.calendar.event import CANCELLED, Event, event_from_entry, is_over
from wilson.kernel.timeparse import utc_or_none


@dataclass(frozen=True)
class Change:
    kind: str  # new, changed, cancelled
    event: Event
    previous: dict | None = field(default=None, compare=False)  # the snapshot entry before
    what: tuple[str, ...] = ()  # for "changed": some of time, place, title
    occurrences: int = 1  # >1 when one change stands for many occurrences of a series
    # How many changes the event had before this one (0 for its first appearance): an event
    # cancelled and restored twice says the same things twice, and must be told both times.
    version: int = field(default=0, compare=False)
    keys: tuple[str, ...] = field(default=(), compare=False)  # the snapshot keys this change covers


def snapshot_entry(event: Event) -> dict:
    return {
        "uid": event.uid,
        "recurrence_id": event.recurrence_id,
        "sequence": event.sequence,
        "title": event.title,
        "start": event.start.isoformat(),
        "end": event.end.isoformat() if event.end else None,
        "all_day": event.all_day,
        "location": event.location,
        "status": event.status,
        "doc": event.doc,
    }


def snapshot(events: list[Event]) -> dict:
    return {e.key: snapshot_entry(e) for e in events}


def _version(entry: dict | None) -> int:
    try:
        return int((entry or {}).get("version") or 0)
    except (TypeError, ValueError):
        return 0


def _next_version(old: dict | None) -> int:
    return _version(old) + 1 if old is not None else 0


def _same_entry(old: dict, new: dict) -> bool:
    return {k: v for k, v in old.items() if k != "version"} == {k: v for k, v in new.items() if k != "version"}


def next_snapshot(previous: dict, events: list[Event], changes: list[Change], now: datetime) -> dict:
    """The snapshot after this sync: each entry with its version, and tombstones for cancellations.

    A version counts the entry's changes, so a later change never repeats an earlier dedup key.
    An event that vanished from the calendar stays as a cancelled tombstone (with its version)
    until it is over, so that if it comes back it is told as reinstated, under a new key.
    """
    entries = {}
    for key, entry in snapshot(events).items():
        old = previous.get(key)
        if old is None:
            entry["version"] = 0
        elif _same_entry(old, entry):
            entry["version"] = _version(old)
        else:
            entry["version"] = _version(old) + 1
        entries[key] = entry
    cancelled = {key for change in changes if change.kind == "cancelled" for key in change.keys}
    for key, old in previous.items():
        if key in entries or is_over(event_from_entry(old), now):
            continue
        if key in cancelled and old.get("status") != CANCELLED:
            entries[key] = {**old, "status": CANCELLED, "version": _version(old) + 1}
        elif old.get("status") == CANCELLED:
            entries[key] = old
    return entries


def _what_changed(old: dict, event: Event) -> tuple[str, ...]:
    what = []
    if (
        utc_or_none(old.get("start")) != event.start
        or utc_or_none(old.get("end")) != event.end
        or bool(old.get("all_day")) != event.all_day
    ):
        what.append("time")
    if (old.get("location") or None) != event.location:
        what.append("place")
    if (old.get("title") or "") != event.title:
        what.append("title")
    return tuple(what)


def diff(
    previous: dict,
    events: list[Event],
    *,
    now: datetime | None = None,
    known_until: datetime | None = None,
    horizon_end: datetime | None = None,
) -> list[Change]:
    """What changed between a stored snapshot and the calendar as it is now.

    `now`: events already over are neither new nor cancelled (they simply passed).
    `known_until`: the end of the window the snapshot was taken over; an occurrence of a
    known series starting after it has only come into the horizon and is not news.
    `horizon_end`: the end of the window `events` cover; what starts after it was not
    looked at, so its absence means nothing.
    Many changes of the same kind to one recurring series become one Change.
    """
    previous = previous or {}
    current = {e.key: e for e in events}
    known_series = {entry.get("uid") for entry in previous.values()}
    appeared: list[Event] = []
    changes: list[Change] = []
    for key, event in current.items():
        old = previous.get(key)
        if old is None:
            if event.status == CANCELLED or (now is not None and is_over(event, now)):
                continue
            if (
                known_until is not None
                and event.recurrence_id is not None
                and event.uid in known_series
                and event.start >= known_until
            ):
                continue
            appeared.append(event)
        elif event.status == CANCELLED:
            if old.get("status") != CANCELLED:
                changes.append(Change("cancelled", event, previous=old, version=_next_version(old), keys=(key,)))
        elif old.get("status") == CANCELLED:
            changes.append(Change("new", event, previous=old, version=_next_version(old), keys=(key,)))  # reinstated
        else:
            what = _what_changed(old, event)
            if what:
                changes.append(
                    Change("changed", event, previous=old, what=what, version=_next_version(old), keys=(key,))
                )
    vanished: list[dict] = []
    for key, old in previous.items():
        if key in current or old.get("status") == CANCELLED:
            continue
        gone = event_from_entry(old)
        if (now is not None and is_over(gone, now)) or (horizon_end is not None and gone.start >= horizon_end):
            continue
        vanished.append(old)
    changes.extend(_pair_shifted_series(appeared, vanished))
    return _collapse_series(_pair_recreated(changes))


def _pair_shifted_series(appeared: list[Event], vanished: list[dict]) -> list[Change]:
    """A series whose start time moved changes every recurrence id: pair them back up as moves.

    Occurrences of one UID that vanished and appeared in the same sync are matched in time order.
    """
    changes = []
    by_uid_new: dict[str, list[Event]] = {}
    for event in appeared:
        by_uid_new.setdefault(event.uid, []).append(event)
    by_uid_old: dict[str, list[dict]] = {}
    for old in vanished:
        by_uid_old.setdefault(old["uid"], []).append(old)
    for uid, olds in by_uid_old.items():
        news = by_uid_new.pop(uid, [])
        olds.sort(key=lambda o: o["start"])
        news.sort(key=lambda e: e.start)
        paired = min(len(olds), len(news))  # one UID is one event (RFC 5545), whatever its recurrence ids
        for old, event in zip(olds[:paired], news[:paired]):
            what = _what_changed(old, event)
            if what:
                changes.append(
                    Change("changed", event, previous=old, what=what, version=_next_version(old), keys=(event.key,))
                )
        for old in olds[paired:]:
            gone = event_from_entry(old)
            changes.append(Change("cancelled", gone, previous=old, version=_next_version(old), keys=(gone.key,)))
        for event in news[paired:]:
            changes.append(Change("new", event, keys=(event.key,)))
    for events in by_uid_new.values():
        changes.extend(Change("new", event, keys=(event.key,)) for event in events)
    return changes


RECREATED_WITHIN_DAYS = 31  # further apart, two events of one title are two events (this year's dentist, next)


def _pair_recreated(changes: list[Change]) -> list[Change]:
    """An event deleted and made again under a new UID in one sync (some apps and sync tools move an event
    so, and so do people) is one move: told as a cancellation and a new event, its topic would be closed.
    Each cancellation takes the nearest new event of its title; one made again as it was is no news."""

    def title(change: Change) -> str:
        return " ".join(change.event.title.split()).casefold()

    news: dict[str, list[Change]] = {}  # by title: a calendar may hold thousands of events
    for change in changes:
        if change.kind == "new" and change.previous is None and change.event.recurrence_id is None:
            news.setdefault(title(change), []).append(change)
    paired: dict[int, Change | None] = {}  # id of a cancellation or a new event -> its move (None: no news)
    for gone in changes:
        if (
            gone.kind != "cancelled"
            or gone.event.recurrence_id is not None
            or gone.previous is None
            or title(gone) not in news
        ):
            continue
        near = [
            n
            for n in news[title(gone)]
            if id(n) not in paired and abs((n.event.start - gone.event.start).days) <= RECREATED_WITHIN_DAYS
        ]
        if not near:
            continue
        match = min(near, key=lambda n: abs(n.event.start - gone.event.start))
        what = _what_changed(gone.previous, match.event)
        moved = Change("changed", match.event, previous=gone.previous, what=what, keys=match.keys) if what else None
        paired[id(gone)], paired[id(match)] = moved, moved
    kept, told = [], set()
    for change in changes:
        if id(change) not in paired:
            kept.append(change)
            continue
        moved = paired[id(change)]
        if moved is not None and id(moved) not in told:
            told.add(id(moved))
            kept.append(moved)
    return kept


def _collapse_series(changes: list[Change]) -> list[Change]:
    groups: dict[tuple, list[Change]] = {}
    order: list[tuple] = []
    for change in changes:
        if change.event.recurrence_id is None:
            group = (change.event.key, change.kind, change.what)
        else:
            group = (change.event.uid, change.kind, change.what)
        if group not in groups:
            groups[group] = []
            order.append(group)
        groups[group].append(change)
    collapsed = []
    for group in order:
        members = sorted(groups[group], key=lambda c: c.event.start)
        first = members[0]
        if len(members) > 1:
            first = Change(
                first.kind,
                first.event,
                previous=first.previous,
                what=first.what,
                occurrences=len(members),
                version=max(m.version for m in members),
                keys=tuple(k for m in members for k in m.keys),
            )
        collapsed.append(first)
    collapsed.sort(key=lambda c: (c.event.start, c.event.uid))
    return collapsed


def fingerprint(change: Change) -> str:
    old = change.previous or {}
    state = [
        change.kind,
        change.what,
        change.occurrences,
        change.event.sequence,
        change.event.title,
        change.event.start.isoformat(),
        change.event.end.isoformat() if change.event.end else None,
        change.event.all_day,
        change.event.location,
        change.event.status,
        old.get("start"),
        old.get("end"),
        old.get("title"),
        old.get("location"),
        old.get("status"),
    ]
    return hashlib.sha1(json.dumps(state, default=str).encode()).hexdigest()[:12]


def dedup_key(change: Change) -> str:
    event = change.event
    return f"calendar:{event.uid}:{event.recurrence_id}:{change.kind}:v{change.version}:{fingerprint(change)}"


def payload(change: Change) -> dict:
    event, old = change.event, change.previous
    previous = None
    if old is not None and change.kind != "new":
        previous = {
            "start": old.get("start"),
            "end": old.get("end"),
            "title": old.get("title"),
            "location": old.get("location"),
            "all_day": bool(old.get("all_day")),
        }
    return {
        "channel": "calendar",
        "change": change.kind,
        "uid": event.uid,
        "title": event.title,
        "start": event.start.isoformat(),
        "end": event.end.isoformat() if event.end else None,
        "all_day": event.all_day,
        "location": event.location,
        "previous": previous,
        "recurrence_id": event.recurrence_id,
        "occurrences": change.occurrences,
    }
