"""Attention is a budget: when a message Wilson was not asked for may interrupt the user.

Every surfacing of a background run passes through `surface`, inside the run's own
transaction, and is placed in one of three ways:
- now: an interruption, counted against `[attention] max_per_day` for the local day;
- held: quiet hours (or a mute) are on; it goes out when they end, and counts for that day;
- waiting: the day's interruptions are spent; it is told in the next morning briefing.

Only a run's explicit `urgent` flag breaks quiet hours: a model's, or the offline provider's
for a clear emergency while `[attention] offline_wake` is on (wilson/model/offline/urgency.emergency).
The daily cap is also lifted for rows triage ranked
urgent (priority 1: the RAS or the triage judged them so).

Follow-ups fired by the tick in one scan (one local hour) are one bundle: each run's
surfaced text waits (status `bundling`) until every run of its bundle has ended, and the
bundle then goes out as one message. A follow-up about a task the user meanwhile
acknowledged (done, snoozed, cancelled, a ✅ reaction to an earlier follow-up of it, or an
"on it" said in reply to one or right after it) is dropped while it waits, so it is never
told again in the same window; a follow-up fired after the acknowledgement (the next window)
is told. News of calendar events (a change to tonight's dinner) held by quiet hours or waiting for
the briefing is dropped when the last of them is over before it may go (`over_at`).

The count lives in the database: surfaced rows keyed `surface:`/`followups:` that went,
or will go, to the user, by the local day of `deliver_after` (else `created_at`).

Size: one budget: placing a surfacing, bundling it, holding it for the briefing and dropping it when stale
share the same counters and windows, and each is a short function over them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from storage import hot, mute, outbox, trace
from storage.prepared import prepared
from storage.models import Feedback, Inbox, Outbox, OutboxStatus, Schedule, Task, TaskFiring
from wilson.kernel.clock import UTC, as_utc
from wilson.kernel.quiet import parse_window
from wilson.kernel.timeparse import local_moment
from wilson.model.offline import dates
from wilson.model.offline.intents import is_on_it

# the outbox states of the attention loop (their meaning is in storage/models.py OutboxStatus)
BUNDLING, BUNDLED, WAITING = OutboxStatus.BUNDLING.value, OutboxStatus.BUNDLED.value, OutboxStatus.WAITING.value
BRIEFED, DROPPED, COMPOSE = OutboxStatus.BRIEFED.value, OutboxStatus.DROPPED.value, OutboxStatus.COMPOSE.value
COUNTED = ("pending", "retry", "held", "delivered", "failed")
PROACTIVE_KEYS = ("surface:", "followups:")
ACK_REACTIONS = {"✅", "👍", "👌", "✔", "✔️", "☑️", "🆗"}
BRIEFING_MODES = ("when_useful", "always")
# "on it", "I'm on it", "working on it", "will do": the whole message, give or take an "ok", a thanks or an emoji
ACK_AFTER = timedelta(hours=6)  # an "on it" that does not reply to anything answers the follow-up this recent


def max_per_day(config) -> int:
    try:
        return max(0, int(config.get("attention", "max_per_day")))
    except (TypeError, ValueError):
        return 3


def briefing_mode(config) -> str:
    mode = str(config.get("attention", "briefing")).strip().lower()
    return mode if mode in BRIEFING_MODES else "when_useful"


def briefing_enabled(config) -> bool:
    return str(config.get("thalamus", "briefing") or "off").strip().lower() not in ("", "off")


def day_bounds(day: date, tz) -> tuple[datetime, datetime]:
    start = datetime.combine(day, time(0, 0)).replace(tzinfo=tz).astimezone(UTC)
    end = datetime.combine(day + timedelta(days=1), time(0, 0)).replace(tzinfo=tz).astimezone(UTC)
    return start, end


def interruptions_on(day: date, tz) -> int:
    """Proactive messages that went (or will go) to the user on this local day."""
    start, end = day_bounds(day, tz)
    keyed = _unasked()
    when = (Outbox.deliver_after.is_null() & (Outbox.created_at >= start) & (Outbox.created_at < end)) | (
        Outbox.deliver_after.is_null(False) & (Outbox.deliver_after >= start) & (Outbox.deliver_after < end)
    )
    return (
        Outbox.select()
        .where(keyed & when & Outbox.status.in_(COUNTED) & (Outbox.surfaced == True) & (Outbox.channel != "silent"))
        .count()
    )


@dataclass(frozen=True)
class Placement:
    action: str  # now, held, waiting
    until: datetime | None = None
    reason: str = ""
    by_cap: bool = False  # held because the day's interruptions are spent, not for quiet


def place(
    *,
    urgent: bool,
    over_cap_ok: bool,
    quiet_end: datetime | None,
    spent: int,
    cap: int,
    briefing: bool = True,
    next_morning: datetime | None = None,
) -> Placement:
    """Where one proactive message goes. `spent`: interruptions already on the day it would arrive
    (the day of `quiet_end` when quiet, else today); `over_cap_ok`: the cap does not apply to it."""
    if urgent:
        return Placement("now", None, "flagged urgent")
    if spent >= cap and not over_cap_ok:
        if briefing:
            return Placement("waiting", None, f"the day's {cap} interruption(s) are spent; kept for the briefing")
        return Placement(
            "held", next_morning, f"the day's {cap} interruption(s) are spent; held until tomorrow", by_cap=True
        )
    if quiet_end is not None:
        return Placement("held", quiet_end, f"quiet hours until {quiet_end:%H:%M} UTC")
    return Placement("now", None, "")


def placement_for(now: datetime, config, quiet_end: datetime | None, *, urgent: bool, pressing: bool) -> Placement:
    tz = config.timezone
    arrives = quiet_end or now
    day = as_utc(arrives).astimezone(tz).date()
    next_morning = quiet_end_of_next_night(now, config)
    return place(
        urgent=urgent,
        over_cap_ok=pressing,
        quiet_end=quiet_end,
        spent=interruptions_on(day, tz),
        cap=max_per_day(config),
        briefing=briefing_enabled(config),
        next_morning=next_morning,
    )


def quiet_end_of_next_night(now: datetime, config) -> datetime:
    """Without a briefing, what is over the cap waits until the next morning."""
    tz = config.timezone
    window = parse_window(config.get("core", "quiet_hours"))
    at = window[1] if window else time(9, 0)
    return local_moment(as_utc(now).astimezone(tz).date() + timedelta(days=1), at, tz)


# Acknowledgement ----------------------------------------------------------------


def acknowledged(task_ids, since: datetime | None) -> set[int]:
    """Of these tasks, those the user acknowledged: closed or snoozed now, or a ✅ or an "on it" on a
    follow-up of them since `since`."""
    task_ids = {int(t) for t in task_ids if t is not None}
    if not task_ids:
        return set()
    done = {
        t.id
        for t in Task.select(Task.id, Task.status).where(Task.id.in_(sorted(task_ids)))
        if t.status in ("done", "cancelled", "snoozed")
    }
    done |= task_ids - {t.id for t in Task.select(Task.id).where(Task.id.in_(sorted(task_ids)))}
    query = Feedback.select(Feedback.outbox_id, Feedback.kind, Feedback.value).where(
        Feedback.kind.in_(("reaction", "ack")) & Feedback.outbox_id.is_null(False)
    )
    if since is not None:
        query = query.where(Feedback.at >= since)
    reacted = [f.outbox_id for f in query if f.kind == "ack" or f.value in ACK_REACTIONS]
    if reacted:
        for row in Outbox.select(Outbox.payload).where(Outbox.id.in_(reacted)):
            done |= {int(t) for t in (row.payload or {}).get("tasks") or []} & task_ids
    return done


def acknowledged_followup(row: Inbox, now: datetime) -> Outbox | None:
    """The follow-up an "on it" answers (answered_followup). None when the message is not an "on it" or answers no
    follow-up."""
    if row.origin != "user" or not is_on_it(row.text):
        return None
    return answered_followup(row, now)


def answered_followup(row: Inbox, now: datetime, within: timedelta = ACK_AFTER) -> Outbox | None:
    """The follow-up of tasks a user's message answers: the one it replies to (Telegram's reply_to), else the latest
    one delivered `within` before it, when nothing Wilson sent unasked came after it. None otherwise."""
    if row.origin != "user":
        return None
    replied = ((row.payload or {}).get("reply_to") or {}).get("outbox_id")
    if replied is not None:
        box = hot.by_id(Outbox, int(replied))
        return box if box is not None and (box.payload or {}).get("tasks") else None
    # only right after a follow-up: a later message Wilson sent unasked is what "on it" answers
    since = as_utc(now) - within
    for box_id, key, delivered in LATEST_DELIVERED.rows():
        if key.startswith(PROACTIVE_KEYS):
            delivered = Outbox.delivered_at.python_value(delivered)  # as stored: text on SQLite
            box = hot.by_id(Outbox, box_id) if since <= as_utc(delivered) <= as_utc(now) else None
            return box if box is not None and (box.payload or {}).get("tasks") else None
    return None


def _unasked():
    keyed = Outbox.idempotency_key.startswith(PROACTIVE_KEYS[0])
    for prefix in PROACTIVE_KEYS[1:]:
        keyed |= Outbox.idempotency_key.startswith(prefix)
    return keyed


# the newest messages delivered, by id (the primary key's order, no sort): read for a user's short messages, on the
# reply's path; which of them Wilson sent unasked is told by its key
LATEST_DELIVERED = prepared(
    lambda s: (
        Outbox.select(Outbox.id, Outbox.idempotency_key, Outbox.delivered_at)
        .where((Outbox.status == "delivered") & (Outbox.channel != "silent"))
        .order_by(Outbox.id.desc())
        .limit(20)
    )
)


def record_ack(row: Inbox, now: datetime) -> int | None:
    """Record a user's "on it" as an acknowledgement (a Feedback row, kind "ack") of the follow-up it
    answers, in the caller's transaction; it then counts like a ✅ on that follow-up. The outbox id, or None."""
    box = acknowledged_followup(row, now)
    if box is None:
        return None
    value = f"inbox:{row.id}"  # one acknowledgement per message, however often its run is redone
    if (
        not Feedback.select()
        .where((Feedback.outbox_id == box.id) & (Feedback.kind == "ack") & (Feedback.value == value))
        .exists()
    ):
        Feedback.create(outbox_id=box.id, kind="ack", value=value, at=now)
        trace.record(
            row.trace_id,
            "acknowledged",
            "attention",
            f"follow-up {box.id} (tasks {(box.payload or {}).get('tasks')}): {row.text.strip()[:40]!r}",
            now,
        )
    return box.id


def _tasks_of(row: Inbox) -> list[int]:
    payload = row.payload or {}
    if row.kind in ("deadline", "reminder") and isinstance(payload.get("task_id"), int):
        return [int(payload["task_id"])]  # a follow-up, or a snoozed task come back
    return []


def _reminder_of(row: Inbox) -> dict:
    """A recurring reminder's firing carries its id: "Stop reminding" under it stops it in one tap."""
    payload = row.payload or {}
    if row.kind != "reminder" or payload.get("once") or not isinstance(payload.get("schedule"), str):
        return {}
    found = Schedule.get_or_none((Schedule.name == payload["schedule"]) & (Schedule.kind == "reminder"))
    return {"reminder": found.id} if found is not None else {}


# Surfacing ----------------------------------------------------------------------


def surface(
    row: Inbox, items: list, now: datetime, config, quiet_until, *, channel: str, base_payload: dict
) -> list[tuple[str, int]]:
    """Write one run's surfaced messages (`items`: (text, why, urgent), already presented), in the
    caller's transaction. Returns the (channel, outbox id) pairs to deliver now."""
    deliver: list[tuple[str, int]] = []
    user_run = row.origin == "user"
    bundle = (row.payload or {}).get("bundle") if row.kind == "deadline" and not user_run else None
    briefing_box = (row.payload or {}).get("briefing_outbox") if row.kind == "briefing" else None
    if briefing_box is not None:
        if keep_words(briefing_box, [text for text, _, _ in items]):
            trace.record(row.trace_id, "surfaced", "cortex", "in the morning briefing", now)
            return []  # the briefing goes when the last of its runs has ended (actors/briefing.py)
    tasks = _tasks_of(row)
    urgent_run = row.priority <= 1 or any(urgent for _, _, urgent in items)
    gathering = None if user_run or urgent_run else awaiting_briefing(row.id)
    if gathering is not None:  # a run of this morning's sync: what it tells goes inside the one morning message
        # (what is urgent goes at once: the briefing may still wait for a slow run)
        return join_briefing(gathering, row, items, channel, base_payload, tasks, now)
    over = None if user_run else over_at(row, config.timezone)
    for index, (text, why, urgent) in enumerate(items):
        payload = dict(
            base_payload,
            why=why,
            **({"tasks": tasks} if tasks else {}),
            **_reminder_of(row),
            **({"over_at": over.isoformat()} if over else {}),
        )
        key = f"surface:{row.id}:{index}"
        if user_run:
            box = outbox.add(channel=channel, text=text, trace_id=row.trace_id, key=key, at=now, payload=payload)
            trace.record(row.trace_id, "surfaced", "cortex", why, now)
            deliver.append((channel, box.id))
            continue
        if bundle is not None:
            box = outbox.add(
                channel=channel,
                text=text,
                trace_id=row.trace_id,
                key=key,
                at=now,
                surfaced=False,
                payload=dict(payload, bundle=bundle, urgent=bool(urgent)),
            )
            Outbox.update(status=BUNDLING).where((Outbox.id == box.id) & (Outbox.status == "pending")).execute()
            trace.record(row.trace_id, "surfaced", "cortex", f"{why} (bundled with the follow-ups of this hour)", now)
            continue
        placement = placement_for(
            now, config, None if urgent else quiet_until(now), urgent=bool(urgent), pressing=row.priority <= 1
        )
        deliver += _write(
            placement, channel=channel, text=text, trace_id=row.trace_id, key=key, now=now, payload=payload, why=why
        )
    if bundle is not None:
        deliver += flush_bundle(bundle, now, config, quiet_until, finishing=row.id)
    return deliver


def _write(placement: Placement, *, channel, text, trace_id, key, now, payload, why) -> list[tuple[str, int]]:
    held = placement.until if placement.action == "held" else None
    if held is not None and placement.by_cap:  # not the quiet's to shorten: lifting a mute leaves it be
        payload = dict(payload, held_by=mute.HELD_BY_CAP)
    box = outbox.add(
        channel=channel, text=text, trace_id=trace_id, key=key, at=now, payload=payload, deliver_after=held
    )
    if placement.action == "waiting":
        Outbox.update(status=WAITING).where((Outbox.id == box.id) & (Outbox.status == "pending")).execute()
    trace.record(
        trace_id,
        "surfaced" if placement.action != "waiting" else "waiting",
        "cortex",
        why + (f" ({placement.reason})" if placement.reason else ""),
        now,
    )
    return [(channel, box.id)] if placement.action == "now" else []


def flush_bundle(
    bundle: str, now: datetime, config, quiet_until, finishing: int | None = None
) -> list[tuple[str, int]]:
    """When every run of a bundle has ended, its follow-ups go out as one message (placed like any other)."""
    fired_at = as_utc(datetime.fromisoformat(bundle))
    members = [
        f.inbox_id
        for f in TaskFiring.select(TaskFiring.inbox_id).where(TaskFiring.fired_at == fired_at)
        if f.inbox_id is not None
    ]
    if (
        members
        and Inbox.select()
        .where(Inbox.id.in_(members) & (Inbox.id != (finishing or 0)) & Inbox.status.in_(("pending", "claimed")))
        .exists()
    ):
        return []  # a run of this hour is still thinking: the bundle waits for it
    rows = [
        r
        for r in Outbox.select().where(Outbox.status == BUNDLING).order_by(Outbox.id)
        if (r.payload or {}).get("bundle") == bundle
    ]
    if not rows:
        return []
    acked = acknowledged([t for r in rows for t in (r.payload or {}).get("tasks") or []], fired_at)
    keep = [r for r in rows if not set((r.payload or {}).get("tasks") or []) & acked]
    for row in rows:
        Outbox.update(status=BUNDLED if row in keep else DROPPED).where(Outbox.id == row.id).execute()
        if row not in keep:
            trace.record(row.trace_id, "dropped", "attention", "the task was acknowledged meanwhile", now)
    if not keep:
        return []
    text = keep[0].text if len(keep) == 1 else "Follow-ups:\n" + "\n".join(f"• {r.text}" for r in keep)
    urgent = any((r.payload or {}).get("urgent") for r in keep)
    tasks = sorted({t for r in keep for t in (r.payload or {}).get("tasks") or []})
    placement = placement_for(now, config, None if urgent else quiet_until(now), urgent=urgent, pressing=False)
    first = keep[0]
    payload = {
        "topic_id": (first.payload or {}).get("topic_id") if len(keep) == 1 else None,
        "why": "; ".join(sorted({(r.payload or {}).get("why") or "" for r in keep})),
        "tasks": tasks,
        "bundle": bundle,
        "members": [r.id for r in keep],
    }
    return _write(
        placement,
        channel=first.channel,
        text=text,
        trace_id=first.trace_id,
        key=f"followups:{bundle}",
        now=now,
        payload=payload,
        why=f"{len(keep)} follow-up(s) of one hour",
    )


def awaiting_briefing(row_id: int) -> Outbox | None:
    """The morning briefing being gathered that waits for this run (one of its sync's rows), or None."""
    for box in Outbox.select().where(Outbox.status == COMPOSE).order_by(Outbox.id.desc()):
        if row_id in ((box.payload or {}).get("awaits") or []):
            return box
    return None


def join_briefing(
    box: Outbox, row: Inbox, items: list, channel: str, base_payload: dict, tasks: list, now: datetime
) -> list[tuple[str, int]]:
    """What a run of the morning's sync tells, as lines of the briefing, in the caller's
    transaction. Each is still an outbox row (status briefed, naming the briefing), so "what did I miss?" and
    the told-before check find it as told, without a second message at the same minute."""
    joined = list((box.payload or {}).get("joined") or [])
    for index, (text, why, urgent) in enumerate(items):
        if not text.strip():
            continue
        key = f"surface:{row.id}:{index}"
        told = outbox.add(
            channel=channel,
            text=text,
            trace_id=row.trace_id,
            key=key,
            at=now,
            payload=dict(base_payload, why=why, in_briefing=box.id, **({"tasks": tasks} if tasks else {})),
        )
        Outbox.update(status=BRIEFED).where(Outbox.id == told.id).execute()
        entry = {"row": row.id, "text": text.strip(), "urgent": bool(urgent)}
        joined = [e for e in joined if e.get("row") != row.id or e.get("text") != entry["text"]] + [entry]
        trace.record(row.trace_id, "surfaced", "cortex", f"{why} (inside the morning briefing, outbox {box.id})", now)
    joined.sort(key=lambda e: not e.get("urgent"))
    Outbox.update(payload=dict(box.payload or {}, joined=joined)).where(Outbox.id == box.id).execute()
    return []


def joined_text(payload: dict) -> str:
    """The lines runs of the morning's sync told, as the briefing says them."""
    lines = [e.get("text", "") for e in (payload or {}).get("joined") or [] if isinstance(e, dict)]
    return "\n\n".join(line for line in lines if line)


def pending_bundles() -> set[str]:
    return {(r.payload or {}).get("bundle") for r in Outbox.select(Outbox.payload).where(Outbox.status == BUNDLING)} - {
        None
    }


def keep_words(box_id, texts: list[str]) -> bool:
    """The model's words on what triage kept, for the briefing being gathered; False when it is gone."""
    box = Outbox.get_or_none(Outbox.id == int(box_id))
    if box is None or box.status != COMPOSE:
        return False
    extra = "\n".join(t for t in texts if t.strip())
    Outbox.update(payload=dict(box.payload or {}, extra=extra)).where(Outbox.id == box.id).execute()
    return True


def drop_stale_held(now: datetime) -> list[int]:
    """Held messages due now that would come too late: follow-ups about tasks the user acknowledged since, and
    news of calendar events that are over (a change to tonight's event, held by quiet hours): never told."""
    dropped = []
    for row in Outbox.select().where((Outbox.status == "held") & (Outbox.deliver_after <= now)):
        tasks = (row.payload or {}).get("tasks") or []
        why = ""
        if tasks and acknowledged(tasks, row.created_at) >= set(tasks):
            why = "the task was acknowledged while it was held"
        elif is_over(row, now):
            why = f"what it was about was over at {row.payload['over_at']} while it was held"
        if why:
            Outbox.update(status=DROPPED).where((Outbox.id == row.id) & (Outbox.status == "held")).execute()
            trace.record(row.trace_id, "dropped", "attention", why, now)
            dropped.append(row.id)
    return dropped


def over_at(row: Inbox, tz) -> datetime | None:
    """When everything a background row is about is over: the latest end (or start, without one) of its
    calendar events, before a change and after it; None when any part is something else (a mail is not over
    by the clock) or a change to a whole series."""
    buffers = (row.payload or {}).get("buffers") if isinstance(row.payload, dict) else None
    if not isinstance(buffers, list) or not buffers:
        return None
    latest = None
    for buffer in buffers:
        if not isinstance(buffer, dict) or buffer.get("channel") != "calendar":
            return None
        if isinstance(buffer.get("occurrences"), int) and buffer["occurrences"] > 1:
            return None
        for side in (buffer, buffer.get("previous") or {}):
            moment = _end(side, tz) if isinstance(side, dict) else None
            if side and moment is None:
                return None  # a time that cannot be read: never guess that it is over
            if moment is not None and (latest is None or moment > latest):
                latest = moment
    return latest


def _end(event: dict, tz) -> datetime | None:
    """An event's end; without one, its start, or the midnight after its day when it lasts all day."""
    if event.get("end"):
        return _moment(event["end"], tz)
    start = dates.parse_moment(event.get("start"), tz)
    if start is None or not event.get("all_day"):
        return _moment(event.get("start"), tz)
    return as_utc(dates.as_datetime(dates.local_date(start, tz) + timedelta(days=1), tz))


def _moment(value, tz) -> datetime | None:
    moment = dates.parse_moment(value, tz)  # an all-day event's end is the midnight after its last day
    return None if moment is None else as_utc(dates.as_datetime(moment, tz))


def is_over(row: Outbox, now: datetime) -> bool:
    """Whether what an outbox row tells of is over (its `over_at`, from `over_at`)."""
    over = (row.payload or {}).get("over_at")
    try:
        return bool(over) and as_utc(datetime.fromisoformat(over)) <= as_utc(now)
    except (TypeError, ValueError):
        return False
