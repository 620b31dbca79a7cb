"""What every channel shares: committing stimuli and delivering outbox rows.

Receiving: a channel commits the stimulus first (an inbox row for a realtime
channel, a receptor_buffers row for a buffered one, as the thalamus' routing
rules say), then tells the thalamus. Delivering: the channel is told
`Deliver(outbox_id)`, sends, and marks the row delivered in one transaction with
the result; on start it delivers whatever was left pending. A channel that can be
unreachable (Telegram) retries instead of failing: `record_retry` keeps the row owed
(storage/outbox.py), and only `record_failure` gives a row up, for what no retry can fix.

Polling: a buffered channel with a `[<channel>] poll` duration checks its source on that
cadence, with no model involved. The tick forwards every `TickNow` to the buffered
channels; a channel polls when its cadence has passed since its last poll or sync
(see channels/calendar/__init__.py for why the tick drives it).
"""

from __future__ import annotations

from collections import deque
from datetime import datetime, timedelta

from loguru import logger

from storage import health, outbox, routing, trace
from storage.db import database
from storage.models import Outbox
from wilson.kernel.actor import WilsonActor
from wilson.kernel.clock import parse_duration
from wilson.kernel.messages import ChannelSync, ChannelSynced, Deliver, Recover, StimulusCommitted, TickNow


class RecentIds:
    """The last `size` ids added, for `in`: a Deliver that names a row comes right after the row was written,
    so only recent deliveries can be the same row."""

    def __init__(self, size: int):
        self._order: deque = deque()
        self._ids: set = set()
        self._size = size

    def add(self, item) -> None:
        if item in self._ids:
            return
        self._ids.add(item)
        self._order.append(item)
        if len(self._order) > self._size:
            self._ids.discard(self._order.popleft())

    def __contains__(self, item) -> bool:
        return item in self._ids


class Channel(WilsonActor):
    realtime = False  # realtime: straight to the inbox at priority 0; else buffered
    can_deliver = False
    # a channel whose deliveries nobody else changes while it works (no retries, no queue of its own) may send
    # the row handed on with a Deliver instead of reading it again
    takes_rows = False
    # its delivered rows are their own trace lines (see record_delivery): it traces nothing after a delivery
    delivery_line_in_row = False
    polled_at: datetime | None = None  # the last poll or sync of this incarnation (a restart polls at once)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # rows this incarnation read to deliver (deliver_owed, a Deliver without its row): a row handed on
        # with a Deliver is read again when its id is here, as another path may have delivered it meanwhile
        self._seen_ids = RecentIds(4096)

    def on_start(self):
        self.deliver_owed()

    def deliver_owed(self) -> None:
        """Deliver what was left pending (on start, or when another process wrote it)."""
        if self.can_deliver:
            for row in outbox.pending_for(self.name):
                self.deliver_row(row.id)

    def receive(self, message):
        match message:
            case Deliver(outbox_id=outbox_id, row=row):
                if row is not None and self.takes_rows and outbox_id not in self._seen_ids:
                    self.deliver_row(outbox_id, row)
                else:
                    self.deliver_row(outbox_id)
            case Recover():
                self.deliver_owed()
            case ChannelSync(reason=reason):
                self.sync_and_report(reason)
            case TickNow():
                self.poll_if_due()
            case _:
                return self.receive_other(message)

    def receive_other(self, message):
        # e.g. ApprovalSettled: channels that can edit a rendered proposal in place override this
        logger.debug("{} has nothing to do for {!r}", self.name, message)

    # Receiving -----------------------------------------------------------
    def stimulus(
        self,
        text: str,
        *,
        user_id: str | None,
        dedup_key: str | None = None,
        payload: dict | None = None,
        kind: str = "message",
    ):
        """A realtime stimulus from the user: committed, then the thalamus is told."""
        row = routing.commit_realtime(
            source=self.name, text=text, user_id=user_id, dedup_key=dedup_key, payload=payload, kind=kind, at=self.now()
        )
        if row is not None:
            self.tell("thalamus", StimulusCommitted("inbox", row.id, row.trace_id, row.priority))
        return row

    def buffer(self, text: str, *, dedup_key: str, payload: dict | None = None):
        """A buffered stimulus: committed to receptor_buffers, then the thalamus is told."""
        row = routing.commit_buffered(channel=self.name, text=text, dedup_key=dedup_key, payload=payload, at=self.now())
        if row is not None:
            self.tell("thalamus", StimulusCommitted("buffer", row.id, row.trace_id))
        return row

    def sync_and_report(self, reason: str) -> None:
        """Sync, then tell the thalamus' triage this channel is done (even when the sync failed)."""
        count = 0
        self.polled_at = self.now()
        try:
            count = self.sync(reason) or 0
        except Exception as exc:  # a broken source must not stall the whole sync
            logger.error("{} sync failed: {}", self.name, exc)
        self.tell("triage", ChannelSynced(self.name, count))

    def poll_interval(self) -> timedelta | None:
        """The `[<channel>] poll` cadence; None when unset, "off" or unreadable (logged once)."""
        raw = str(self.config.get(self.name, "poll") or "").strip().lower()
        if raw in ("", "off", "0", "none", "false"):
            return None
        try:
            every = parse_duration(raw)
        except ValueError as exc:
            if not getattr(self, "_poll_warned", False):
                self._poll_warned = True
                logger.error("{}: poll = {!r} is not a duration ({}); not polling", self.name, raw, exc)
            return None
        return every if every > timedelta(0) else None

    def poll_if_due(self) -> int:
        """Poll the source when the cadence has passed: buffer what changed, with no triage after it
        (the RAS looks at new rows at its next interval; the thalamus triages them at its sync)."""
        every = self.poll_interval()
        if self.realtime or every is None:
            return 0
        now = self.now()
        if self.polled_at is not None and now < self.polled_at + every:
            return 0
        self.polled_at = now
        try:
            return self.sync("poll") or 0
        except Exception as exc:  # a broken source waits for the next poll; the actor carries on
            logger.error("{} poll failed: {}", self.name, exc)
            return 0

    def sync(self, reason: str) -> int:
        """Poll the source and buffer what changed; returns how many rows were buffered."""
        return 0

    # Reach -----------------------------------------------------------------
    what = "source"  # what the user calls the channel's source, in the one message about a long outage

    def reached(self, error: str | None = None) -> None:
        """Record whether this look reached the source (storage/health.py, for `wilson status` and the
        dashboard); a failure that has lasted an hour is told to the user once, with the error and the fix."""
        now = self.now()
        if error is None:
            health.succeeded(self.name, now)
            return
        since = health.failed(self.name, now, error)
        if since is None:
            return
        hours = max(1, int((now - since).total_seconds() // 3600))
        text = (
            f"I have not been able to reach your {self.what} for {'an hour' if hours == 1 else f'{hours} hours'}: "
            f"{' '.join(error.split())[:300]}. `wilson doctor` checks it and says what to change."
        )
        channel = self.config.primary_channel
        told = outbox.add(
            channel=channel,
            text=text,
            trace_id=trace.new_trace_id(),
            key=f"health:{self.name}:{since.isoformat()}",
            at=now,
            payload={"health": self.name},
        )
        if told.status == "pending":
            self.tell(channel, Deliver(told.id))

    # Delivering ----------------------------------------------------------
    def deliver_row(self, outbox_id: int, row: Outbox | None = None) -> None:
        """`row`: the row as its writer committed it, handed on with the Deliver (`takes_rows`); read otherwise,
        and always when this incarnation delivered that id already (a second Deliver, or deliver_owed first)."""
        if row is None:
            row = outbox.get(outbox_id)
        self._seen_ids.add(outbox_id)  # a later Deliver of this id reads the row, whatever it carries
        if row is None or row.status != "pending":
            return
        try:
            result = self.send(row)
        except Exception as exc:  # a channel's failure is recorded, never lost silently
            self.record_failure(row, f"{type(exc).__name__}: {exc}", self.now())
            return
        self.record_delivery(row, result, self.now())

    def record_delivery(self, row: Outbox, result: dict, at, also=None) -> bool:
        """Mark the row delivered and trace it in one transaction, with `also()` (what else the channel
        records about the delivery) inside it; False when the row had been delivered already.

        A channel that records nothing after its deliveries (`delivery_line_in_row`) writes no trace
        line: the delivered row is that line (`storage.trace.path` shows it, after the lines stored
        at the same moment), and the delivery is one statement."""
        if also is None and self.delivery_line_in_row:
            delivered = outbox.mark_delivered(row.id, at, result)  # atomic by itself
            if delivered:
                logger.info("[{}] delivered by {}: outbox {}", row.trace_id, self.name, row.id)
            return delivered
        with database.atomic():
            if also is not None:
                also()
            delivered = outbox.mark_delivered(row.id, at, result)
            if delivered:
                trace.record(row.trace_id, "delivered", self.name, f"outbox {row.id}", at)
        return delivered

    def record_failure(self, row: Outbox, reason: str, at, *, counted: bool = False) -> None:
        """Mark the row failed for good with `reason` and trace it, in one transaction; the attempt is
        counted here unless it was `counted` when it started."""
        with database.atomic():
            if not counted:
                Outbox.update(attempts=Outbox.attempts + 1).where(Outbox.id == row.id).execute()
            outbox.mark_failed(row.id, at, reason)
            trace.record(row.trace_id, "failed", self.name, f"delivery failed: {reason}", at)

    def record_retry(self, row: Outbox, reason: str, at, next_at, *, attempts: int, also=None) -> None:
        """The row stays owed and is tried again from `next_at`; traced at the 1st, 2nd, 4th, 8th...
        failed attempt, so a day-long outage leaves a handful of lines, not thousands."""
        with database.atomic():
            if also is not None:
                also()
            outbox.mark_retry(row.id, next_at, reason)
            if attempts & (attempts - 1) == 0:
                trace.record(
                    row.trace_id,
                    "retrying",
                    self.name,
                    f"delivery attempt {attempts} failed ({reason}); trying again",
                    at,
                    {"outbox_id": row.id, "attempts": attempts, "next_attempt_at": next_at.isoformat()},
                )

    def send(self, row: Outbox) -> dict:
        raise NotImplementedError
