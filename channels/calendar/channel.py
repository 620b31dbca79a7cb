"""The calendar channel actor: fetch each source, diff against its cursor, buffer one sentence per change."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta

from loguru import logger

from channels import accounts
from channels.base import Channel
from channels.calendar.diff import dedup_key, diff, next_snapshot, payload
from channels.calendar.event import (
    CANCELLED,
    CalendarError,
    Event,
    OverBudget,
    SourceError,
    event_from_entry,
    is_over,
    one_line,
)
from channels.calendar.ics import PARSE_BUDGET_S, ParseReport, parse_calendar
from channels.calendar.sentences import describe
from channels.calendar.sources import CalendarSource, documents_digest, sources_from_config
from channels.calendar import editor, writers
from storage import kv, outbox, routing, trace
from storage.db import database
from storage.models import ReceptorBuffer
from wilson.kernel import clock as clockmod, faults, liveness
from wilson.kernel.timeparse import utc_or_none
from wilson.kernel.messages import Deliver, StimulusCommitted

OWN_WRITES = "calendar:own_writes"  # [uid, change kind] of moves and cancels Wilson made, not yet read back
OWN_WRITES_KEPT = 200
RETRY_FIRST = timedelta(minutes=1)
RETRY_MAX = timedelta(hours=1)
TELL_AFTER = 2  # failed tries of one write before the user hears it is late


class CalendarChannel(Channel):
    """Buffered: each sync buffers one sentence per calendar change. It delivers the events the user approved
    (create_event) into the .ics file, and knows them again when it reads the file: its own write is kept
    for look-ups but not triaged, so Wilson does not plan what it has just done."""

    name = "calendar"
    what = "calendar"
    realtime = False
    can_deliver = True

    def __init__(self, ctx, name: str = "calendar", sources: list[CalendarSource] | None = None):
        super().__init__(ctx, name)
        self.sources = list(sources) if sources is not None else sources_from_config(ctx.config)

    def send(self, row) -> dict:
        """An approved change, written once where the user's calendar lives (channels/calendar/writers.py): a
        new event's UID comes from the proposal item, so a write repeated after a crash, or a second Deliver,
        adds nothing. A write that fails is told to the user, and nothing else is changed."""
        payload = dict(row.payload or {})
        action = payload.get("action")
        tz = self.config.timezone
        try:
            writer = writers.writer_for(self.config)
            if writer is None:
                raise CalendarError("no calendar Wilson can write to is set up ([calendar] path, caldav_url or apple)")
            if action == "create":
                draft = writers.Draft(
                    payload["uid"],
                    payload["title"],
                    payload["start"],
                    payload.get("end"),
                    payload.get("location"),
                    payload.get("notes"),
                )
                done = writer.create(draft, tz=tz, stamp=self.now())
            elif action == "move":
                done = writer.move(payload["title"], payload["start"], payload.get("end"), tz=tz)
            elif action == "cancel":
                done = writer.cancel(payload["title"])
            else:
                raise CalendarError(f"unknown calendar action {action!r}")
            if done.written and not (action == "create" and editor.is_own_write(done.uid)):
                # a UID Wilson did not choose (Calendar.app gives its own) is known again by this record
                self._own_write(done.uid, {"create": "new", "move": "changed"}.get(action, "cancelled"))
            return {
                "uid": done.uid,
                "file" if isinstance(writer, writers.IcsFileWriter) else "where": done.where,
                "written": done.written,
            }
        except writers.Unreachable:
            raise  # waits for the next try (deliver_row); the user hears of it if it lasts
        except (OSError, ValueError, KeyError, CalendarError) as exc:
            verb = {"create": "add", "move": "move", "cancel": "cancel"}.get(action, "change")
            where = "to" if verb == "add" else "in"
            self._tell_user(
                row,
                f"I could not {verb} “{payload.get('title', '')}” {where} your calendar: "
                f"{one_line(exc).rstrip('.')}. Nothing else was changed.",
            )
            raise

    def deliver_owed(self) -> None:
        """Every write still owed, a waiting one once its time has come (also at each tick: see poll_if_due)."""
        for outbox_id in outbox.due_ids(self.name):
            self.deliver_row(outbox_id)

    def poll_if_due(self) -> int:
        self.deliver_owed()
        return super().poll_if_due()

    def deliver_row(self, outbox_id: int, row=None) -> None:
        """As every channel delivers, but a calendar server that does not answer keeps the write owed: tried
        again a minute later, then less and less often (at most hourly); the user hears of it at the second
        failed try, once, and of the write itself when it is done or refused."""
        row = outbox.get(outbox_id)
        now = self.now()
        if row is None or row.status not in outbox.DUE:
            return
        if row.status == "retry" and row.next_attempt_at is not None and clockmod.as_utc(row.next_attempt_at) > now:
            return
        if not outbox.start_attempt(row.id, now):  # counted, and due again as "pending" for the delivery mark
            return
        attempts = row.attempts + 1
        try:
            result = self.send(row)
        except writers.Unreachable as exc:
            wait = min(RETRY_FIRST * (2 ** min(attempts - 1, 10)), RETRY_MAX)
            self.record_retry(row, str(exc), now, now + wait, attempts=attempts)
            if attempts == TELL_AFTER:
                title = (row.payload or {}).get("title", "")
                self._tell_user(
                    row,
                    f"I could not reach your calendar to change “{title}” yet ({exc}). I'll keep "
                    "trying, and tell you when it is done.",
                    key="calendar-delayed",
                )
            return
        except Exception as exc:  # told to the user by send(); recorded, never lost silently
            self.record_failure(row, f"{type(exc).__name__}: {exc}", now, counted=True)
            return
        self.record_delivery(row, result, now)
        if row.attempts >= TELL_AFTER:  # the user heard it was late: now they hear it is done
            title = (row.payload or {}).get("title", "")
            self._tell_user(row, f"Done: “{title}” is changed in your calendar now.", key="calendar-done")

    @staticmethod
    def _own_write(uid: str, kind: str) -> None:
        """Remember a change Wilson made to an event the user named, so the next read settles it (once)."""
        pending = [w for w in kv.get_setting(OWN_WRITES, []) if w != [uid, kind]][-(OWN_WRITES_KEPT - 1) :]
        kv.put_setting(OWN_WRITES, pending + [[uid, kind]])

    @staticmethod
    def _is_own(change) -> bool:
        if change.kind == "new" and editor.is_own_write(change.event.uid):
            return True
        pending = kv.get_setting(OWN_WRITES, [])
        if [change.event.uid, change.kind] not in pending:
            return False
        pending.remove([change.event.uid, change.kind])
        kv.put_setting(OWN_WRITES, pending)
        return True

    def _grant_revoked(self, text: str) -> None:
        """Told once per grant (the same message the mail channel would give for the same account)."""
        channel = self.config.primary_channel
        told = outbox.add(
            channel=channel,
            text=text,
            trace_id=trace.new_trace_id(),
            key=accounts.revoked_key(self.config, "calendar"),
            at=self.now(),
            payload={"oauth": "calendar"},
        )
        if told.status == "pending":
            self.tell(channel, Deliver(told.id))

    def _tell_user(self, row, text: str, key: str = "calendar-report") -> None:
        channel = self.config.primary_channel
        told = outbox.add(
            channel=channel,
            text=text,
            trace_id=row.trace_id,
            key=f"{key}:{row.id}",
            at=self.now(),
            payload={"calendar_outbox": row.id},
        )
        self.tell(channel, Deliver(told.id))

    def horizon(self) -> timedelta:
        try:
            days = int(self.config.get("calendar", "horizon_days"))
        except (TypeError, ValueError):
            days = 365
        return timedelta(days=max(days, 1))

    def sync(self, reason: str) -> int:
        buffered = 0
        errors = []
        for source in self.sources:
            try:
                buffered += self.sync_source(source, cheap=reason == "poll")
            except (SourceError, CalendarError) as exc:
                logger.warning("calendar source {} skipped: {}", source.label, one_line(exc))
                errors.append(one_line(exc))
                if getattr(exc, "revoked", False):
                    self._grant_revoked(str(exc))
            except Exception as exc:  # one bad source must not stop the others, nor the actor
                logger.error("calendar source {} failed: {}: {}", source.label, type(exc).__name__, one_line(exc))
                errors.append(f"{source.label}: {type(exc).__name__}: {one_line(exc)}")
        if self.sources:
            self.reached("; ".join(errors) or None)
        if buffered:
            logger.info("calendar sync ({}): {} change(s) buffered", reason, buffered)
        return buffered

    def sync_source(self, source: CalendarSource, *, cheap: bool = False) -> int:
        """Fetch one source and buffer what changed. `cheap` (a poll): a source with its own change
        check (CalDAV's ctag) is only read in full when that check says it changed."""
        cursor_name = f"calendar:{source.id}"
        cursor = kv.cursor_row(cursor_name)
        state = dict(cursor.value or {}) if cursor is not None else {}
        old_fetch = dict(state.get("fetch") or {})
        # Each step renews the handler's budget with its own bound, so that a long sync of many
        # documents is progress, while one stuck step still counts as hung.
        liveness.beat(float(getattr(source, "timeout", 60) or 60) + 30, f"calendar: fetching {source.label}")
        check = getattr(source, "unchanged", None)
        if cheap and check is not None and not state.get("suspect") and check(dict(old_fetch)):
            return 0
        documents, fetch_state = source.fetch(dict(old_fetch))
        now = self.now()
        if documents is None:
            revalidated = fetch_state != old_fetch  # the same data under new validators (a touched file)
            if cursor is not None and (state.get("suspect") or revalidated):
                # Back to what it was before a suspect read: that read was a passing state, now forgotten.
                state.pop("suspect", None)
                state["fetch"] = fetch_state
                kv.put_cursor(cursor_name, state, now)
            return 0
        tz = self.config.timezone
        window_end = now + self.horizon()
        previous = dict(state.get("events") or {})
        events: list[Event] = []
        failed: set[str] = set()
        notes: list[str] = []
        skipped: set[tuple[str, str]] = set()  # (doc, uid) of series left out
        cuts: dict[tuple[str, str | None], datetime] = {}  # (doc, uid or None for all) -> read until
        slow_before, slow = set(state.get("slow") or ()), set()
        for name, data in documents:
            digest = hashlib.sha256(data).hexdigest()
            if digest in slow_before:
                # Ran out of time before, byte for byte the same: not worth another 15 s each sync.
                failed.add(name)
                slow.add(digest)
                continue
            report = ParseReport()
            liveness.beat(PARSE_BUDGET_S + 30, f"calendar: reading {one_line(name, 80)}")
            try:
                found = parse_calendar(data, name=name, window_start=now, window_end=window_end, tz=tz, report=report)
            except CalendarError as exc:
                logger.warning("calendar source {}: {}", source.label, one_line(exc))
                failed.add(name)
                if isinstance(exc, OverBudget):
                    slow.add(digest)
                    notes.append(str(exc))
                continue
            for note in report.notes:
                logger.warning("calendar source {}: {}", source.label, one_line(note))
            notes.extend(report.notes)
            skipped.update((name, uid) for uid in report.skipped_uids)
            if report.cut_at is not None:
                cuts[(name, None)] = report.cut_at
            cuts.update({(name, uid): moment for uid, moment in report.series_cut.items()})
            events.extend(found)
        current_keys = {e.key for e in events}

        def unread(entry: dict) -> bool:
            """Whether this sync did not really look at the entry: unreadable is not deleted."""
            doc, uid = entry.get("doc"), entry.get("uid")
            if doc in failed or (doc, uid) in skipped:
                return True
            start = utc_or_none(entry.get("start"))
            return any(key in cuts and start >= cuts[key] for key in ((doc, None), (doc, uid)))

        carried = {k: v for k, v in previous.items() if k not in current_keys and unread(v)}
        comparable = {k: v for k, v in previous.items() if k not in carried}
        suspect_docs = self._suspect_docs(documents, events, comparable, now, window_end)
        read = documents_digest(documents)
        suspect = None
        if suspect_docs and (state.get("suspect") or {}).get("digest") != read:
            # An empty read of a calendar that had events is most likely a writer part-way through
            # saving, or a server hiccup: nothing is cancelled until a second read says the same.
            suspect = {"digest": read, "since": now.isoformat(), "docs": sorted(suspect_docs)[:20]}
            held = {k: v for k, v in comparable.items() if v.get("doc") in suspect_docs}
            carried.update(held)
            comparable = {k: v for k, v in comparable.items() if k not in held}
            notes.append(
                f"{source.label}: read {len(held)} known event(s) as gone; "
                "waiting for a second read before telling anyone"
            )
            logger.warning(
                "calendar source {}: an empty read would cancel {} event(s); waiting for a second read",
                source.label,
                len(held),
            )
        known_until = utc_or_none(state.get("known_until"))
        horizon_end = min([window_end, *cuts.values()])
        changes = diff(comparable, events, now=now, known_until=known_until, horizon_end=window_end)
        current = next_snapshot(comparable, events, changes, now)
        current.update(carried)
        new_state = {
            "events": current,
            "known_until": horizon_end.isoformat(),
            # Keep the old validators while a document is broken or suspect, so the next sync reads it again.
            "fetch": fetch_state if not failed and suspect is None else old_fetch,
        }
        if suspect is not None:
            new_state["suspect"] = suspect
        if slow:
            new_state["slow"] = sorted(slow)
        rows = []
        with database.atomic():
            for change in changes:
                row = routing.commit_buffered(
                    channel=self.name,
                    text=describe(change, tz, now),
                    dedup_key=dedup_key(change),
                    payload=payload(change),
                    at=now,
                )
                if row is not None and self._is_own(change):
                    # kept for calendar_lookup, settled at once: neither the RAS nor triage plan Wilson's own write
                    ReceptorBuffer.update(
                        scanned_at=now,
                        processed_at=now,
                        outcome="drop",
                        reason="Wilson's own write, approved by the user",
                    ).where(ReceptorBuffer.id == row.id).execute()
                    trace.record(row.trace_id, "skipped", self.name, "Wilson's own write (an approved event)", now)
                elif row is not None:
                    rows.append(row)
            for note in notes:
                trace.record(trace.new_trace_id(), "skipped", self.name, one_line(note), now)
            kv.put_cursor(cursor_name, new_state, now)
        faults.point("calendar:after-commit")
        # Told only after the commit, so the thalamus never looks for a row that is not there yet.
        for row in rows:
            self.tell("thalamus", StimulusCommitted("buffer", row.id, row.trace_id))
        return len(rows)

    @staticmethod
    def _suspect_docs(
        documents, events: list[Event], comparable: dict, now: datetime, window_end: datetime
    ) -> set[str]:
        """Documents whose read would cancel every upcoming event they had: empty, or gone with the rest."""
        live: dict[str, int] = {}
        for entry in comparable.values():
            if entry.get("status") == CANCELLED:
                continue
            gone = event_from_entry(entry)
            if not is_over(gone, now) and gone.start < window_end:
                live[gone.doc] = live.get(gone.doc, 0) + 1
        if not live:
            return set()
        if not events:
            return set(live)  # the whole source reads as empty (or its listing came back empty)
        return {name for name, data in documents if name in live and not data.strip()}
