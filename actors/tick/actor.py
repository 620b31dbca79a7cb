"""One scan of everything due, and the tick actor that runs it on its timer or when nudged."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime
from zoneinfo import ZoneInfo

from loguru import logger

from actors import attention, briefing
from actors.proposals.make import release_kept
from actors.proposals.rules import OPEN, sweep_due, unshown
from actors.deadlines import ACTOR, DEADLINE_PRIORITY, scan_deadlines, scan_topic_ends
from actors.shared.windows import Windows, windows_config
from actors.tick.schedules import arm_schedules, due_schedules, ensure_builtin_schedules, fire_once
from storage import hot, inbox, mute, outbox, trace
from storage.db import claim_transaction
from storage.models import Approval, Inbox, Outbox, Schedule, Topic
from wilson.kernel.actor import WilsonActor
from wilson.kernel.clock import as_utc
from wilson.kernel.messages import Consolidate, Deliver, InboxReady, RasScan, Recover, SyncRequest, TickNow


# One scan -----------------------------------------------------------------------


@dataclass
class ScanResult:
    released: list[int] = field(default_factory=list)
    deadlines: list[int] = field(default_factory=list)
    topic_ends: list[int] = field(default_factory=list)
    fired: list[str] = field(default_factory=list)  # schedule names
    skipped: list[str] = field(default_factory=list)


def _record_skips(sched: Schedule, now: datetime) -> None:
    why = "older than its staleness window" if sched.occurrence is None else "a later one fires instead"
    for moment in sched.missed:
        trace.record(
            trace.new_trace_id(),
            "skipped",
            ACTOR,
            f"schedule {sched.name} missed at {moment:%Y-%m-%d %H:%M} UTC while down; {why}",
            now,
            {"schedule": sched.name, "missed": moment.isoformat()},
        )
    if sched.missed_more:
        trace.record(
            trace.new_trace_id(),
            "skipped",
            ACTOR,
            f"schedule {sched.name}: more occurrences missed while down (not listed)",
            now,
            {"schedule": sched.name, "more": True},
        )


def _columns(model) -> dict:
    return {f.name: f'"{f.column_name}"' for f in model._meta.sorted_fields}


def _table(model) -> str:
    return f'"{model._meta.table_name}"'


def _exists(model, where: str) -> str:
    return f"EXISTS (SELECT 1 FROM {_table(model)} WHERE {where})"


def _head_sql() -> str:
    """What the first steps of a scan would find (a held message due, an active topic, a bundle or a briefing
    being gathered, a one-off reminder due), in one statement: most steps of a simulated clock find nothing
    there, and each step's own statement (three of them a write transaction) cost far more Python to build."""
    box, topic, sched = _columns(Outbox), _columns(Topic), _columns(Schedule)
    return "SELECT " + ", ".join(
        (
            _exists(Outbox, f"{box['status']} = 'held' AND {box['deliver_after']} <= ?"),
            _exists(Topic, f"{topic['status']} = 'active'"),
            _exists(Outbox, f"{box['status']} = '{attention.BUNDLING}'"),
            _exists(Outbox, f"{box['status']} = '{attention.COMPOSE}'"),
            _exists(Schedule, f"{sched['kind']} = 'once' AND {sched['enabled']} = ? AND {sched['next_fire_at']} <= ?"),
        )
    )


def _tail_sql() -> str:
    """What the later steps of a scan would find (a schedule to arm or due, a kept message, a proposal kept for
    a briefing), asked after the first steps have written what they write."""
    sched, kept, approval = _columns(Schedule), _columns(Inbox), _columns(Approval)
    open_ = ", ".join(f"'{s}'" for s in OPEN)
    return "SELECT " + ", ".join(
        (
            _exists(Schedule, f"{sched['enabled']} = ? AND {sched['next_fire_at']} IS NULL"),
            _exists(Schedule, f"{sched['enabled']} = ? AND {sched['next_fire_at']} <= ?"),
            _exists(Inbox, f"{kept['status']} = 'kept'"),
            _exists(
                Approval,
                f"{approval['status']} IN ({open_}) AND {approval['presented_at']} IS NOT NULL AND "
                f"{approval['expires_at']} > ?",
            ),
        )
    )


def _fire_schedules(now: datetime, result: ScanResult, nudges: list) -> None:
    """The schedules due at `now`, each fired (or skipped by the missed-job policy) in one transaction."""
    with claim_transaction():
        for sched, action in due_schedules(now):
            _record_skips(sched, now)
            if action == "skip":
                result.skipped.append(sched.name)
                continue
            trace_id = trace.new_trace_id()
            at = sched.occurrence
            if sched.kind == "reminder":
                row = inbox.add(
                    source=ACTOR,
                    text=sched.text or sched.name,
                    priority=DEADLINE_PRIORITY,
                    at=now,
                    trace_id=trace_id,
                    kind="reminder",
                    origin="background",
                    payload={"schedule": sched.name, "text": sched.text},
                    dedup_key=f"reminder:{sched.name}:{at.isoformat()}",
                )
                if row is None:
                    continue  # this occurrence was delivered before
                nudges.append(("cortex", InboxReady()))
            elif sched.name == "briefing":
                nudges.append(("thalamus", SyncRequest("daily")))
            elif sched.name == "ras":
                nudges.append(("ras", RasScan()))
            elif sched.name == "consolidate":
                nudges.append(("hippocampus", Consolidate()))
            else:
                logger.warning("tick: builtin schedule {} has no action", sched.name)
                continue
            trace.record(
                trace_id,
                "fired",
                ACTOR,
                f"schedule {sched.name} ({sched.cron}) for {at:%Y-%m-%d %H:%M} UTC",
                now,
                {"schedule": sched.name, "occurrence": at.isoformat()},
            )
            result.fired.append(sched.name)


def run_scan(now: datetime, tz: ZoneInfo, default_windows: Windows, tell, config=None) -> ScanResult:
    """Everything the tick does at one moment; `tell(name, message)` nudges the other actors after commit.

    With `config`, bundles of follow-ups whose runs have all ended but were not sent (a run that died
    after its commit) are sent here."""
    now = as_utc(now)
    result = ScanResult()
    stored, enabled = Schedule.next_fire_at.db_value(now), Schedule.enabled.db_value(True)
    held, topics, bundling, gathering, once_due = (
        bool(found) for found in hot.execute("scan head", _head_sql, (stored, enabled, stored)).rows[0]
    )
    if held:
        with claim_transaction():
            attention.drop_stale_held(now)
        for row in outbox.release_held(now):
            trace.record(row.trace_id, "released", ACTOR, "quiet hours are over", now, {"outbox_id": row.id})
            result.released.append(row.id)
            tell(row.channel, Deliver(row.id))
    result.deadlines = scan_deadlines(now, tz, default_windows)
    result.topic_ends = scan_topic_ends(now, tz) if topics else []
    if config is not None:
        for bundle in attention.pending_bundles() if bundling else ():
            with claim_transaction():
                flushed = attention.flush_bundle(bundle, now, config, lambda at: mute.hold_until(config, at))
            for channel, outbox_id in flushed:
                tell(channel, Deliver(outbox_id))
        # a morning briefing whose runs all ended without telling it (a run that died after its commit),
        # or that waited too long for them, goes from here
        box = briefing.settle(now, config) if gathering else None
        if box is not None:
            tell(box.channel, Deliver(box.id))
    # after the deadlines: a task's wake-up there silences its snooze comeback
    once = fire_once(now, tz) if once_due else []
    nudges: list[tuple[str, object]] = []
    unarmed, schedules_due, kept, kept_proposals = (
        bool(found) for found in hot.execute("scan tail", _tail_sql, (enabled, enabled, stored, stored)).rows[0]
    )
    if unarmed:
        arm_schedules(now)
    if unarmed or schedules_due:
        _fire_schedules(now, result, nudges)
    if result.deadlines or result.topic_ends or once:
        nudges.insert(0, ("cortex", InboxReady()))

    # a user's message kept while the model was down: its oldest is tried again every inbox.KEPT_RETRY
    retry = inbox.kept_due() if kept else None
    if retry is not None and retry <= now and inbox.release_kept(oldest_only=True):
        nudges.append(("cortex-realtime", InboxReady()))
    # a proposal to show (kept for a briefing that did not tell it, or made by another process: `wilson mcp
    # serve`, `wilson watch add`), remind of or expire: the gate does it
    if (kept_proposals and release_kept(now)) or sweep_due(now) or unshown():
        nudges.append(("approval", Recover()))
    sent = set()
    for name, message in nudges:
        if (name, message) not in sent:  # one InboxReady is enough for any number of rows
            sent.add((name, message))
            tell(name, message)
    return result


# The actor ----------------------------------------------------------------------


class TickActor(WilsonActor):
    """Scans on TickNow. With a real clock its own timer sends TickNow every tick.interval_seconds;
    with a simulated one whoever moves the clock sends it."""

    name = "tick"

    def __init__(self, ctx, name: str | None = None):
        super().__init__(ctx, name)
        self._halt = threading.Event()
        self._pending = threading.Event()  # a TickNow from the timer is queued: don't queue another
        self._timer: threading.Thread | None = None
        self._prepared = False

    def _prepare(self) -> None:
        if not self._prepared:
            ensure_builtin_schedules(self.config, self.now())
            self._prepared = True

    def on_start(self) -> None:
        # Pykka stops an actor whose on_start raises without telling anyone (no on_failure), so a
        # failure here is logged and the first TickNow tries again instead of the tick dying unseen.
        try:
            self._prepare()
            self.scan()  # the missed-job policy after downtime
        except Exception as exc:  # noqa: BLE001
            logger.error("tick: start-up scan failed ({}: {}); retrying on the next tick", type(exc).__name__, exc)
        if not getattr(self.ctx.clock, "simulated", False):
            interval = float(self.config.get("tick", "interval_seconds"))
            self._timer = threading.Thread(target=self._run_timer, args=(interval,), name="tick-timer", daemon=True)
            self._timer.start()

    def on_stop(self) -> None:
        self._halt.set()

    def on_failure(self, exception_type, exception_value, traceback):
        self._halt.set()  # the replacement actor runs its own timer
        super().on_failure(exception_type, exception_value, traceback)

    def _run_timer(self, interval: float) -> None:
        while not self._halt.wait(interval):
            if not self._pending.is_set():
                self._pending.set()
                if not self.ctx.directory.tell(self.name, TickNow()):
                    self._pending.clear()

    def receive(self, message):
        if isinstance(message, TickNow):
            self._pending.clear()
            return self.scan()
        logger.warning("tick: ignoring {}", type(message).__name__)
        return None

    def scan(self) -> ScanResult:
        self._prepare()
        result = run_scan(self.now(), self.config.timezone, windows_config(self.config), self.tell, config=self.config)
        # Buffered receptors poll on their own cadence, on this beat (channels/base.py): one timer
        # for the real clock, and every step of a simulated one, without adding steps of its own.
        for channel in self.config.get("core", "buffered_channels") or ():
            self.tell(channel, TickNow())
        return result
