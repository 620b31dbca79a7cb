"""The email channel: IMAP in (buffered), SMTP out (only what an approved proposal queued).

Receiving. On its `[email] poll` cadence (and at every thalamus sync) the channel opens each
configured folder read-only and fetches the messages above the folder's cursor (UIDVALIDITY
and the last UID seen, a `Cursor` row `email:<user@host>:<folder>`). Each message is parsed
and committed as one buffer row *together with* the cursor moving past it, so a kill at any
point neither loses a message nor reads one twice. The row's natural key is the Message-ID
(a hash of the bytes when there is none), so a folder whose UIDVALIDITY changed is read again
from the start without duplicating anything. A message that cannot be read becomes one trace
entry naming it and the problem, and the cursor moves past it; the next one still flows.
Bulk mail (list headers, auto-replies, configured senders) is marked by header rules and
committed as already scanned, so the RAS never spends a reflex call on a newsletter; the
thalamus still sees it at its sync.

Where the server offers IDLE, a watcher thread per folder (channels/email/idle.py, at most
MAX_IDLE_FOLDERS) waits for new mail and tells the actor `MailArrived`, which reads that folder
at once; the poll goes on as the safety net.

Delivering. Outbox rows of channel "email" hold a mail the user approved (channels/email/smtp.py
explains the exactly-once protocol). They are sent on start, when the channel is told
`Deliver`, and at each tick.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import timedelta

from loguru import logger

from channels.base import Channel
from channels.email import parse
from channels.email.idle import IdleWatcher
from channels.email.imap import SENT_NAMES, ImapClient, ImapError
from channels.email.smtp import SendError, SendUnknown, SmtpSender, build
from storage import kv, outbox, routing, trace
from storage.db import database
from storage.models import Outbox, ReceptorBuffer
from wilson import faults, liveness
from wilson.messages import Deliver, StimulusCommitted, TickNow

PASSWORD_ENV = "WILSON_EMAIL_PASSWORD"
BATCH = 25  # mails committed per transaction (with the cursor past them)
RETRY_FIRST = timedelta(minutes=1)
RETRY_MAX = timedelta(hours=1)
MAX_IDLE_FOLDERS = 4  # one connection each; servers cap connections per user (Gmail at 15)


@dataclass(frozen=True)
class MailArrived:
    """From an IDLE watcher: the server announced new mail in `folder` (or the watcher reconnected)."""

    folder: str


def password(config) -> str:
    """Only from the environment: a password written into wilson.toml is not used (and says so)."""
    source = str(getattr(config, "sources", {}).get(("email", "password"), ""))
    if config.get("email", "password") and not source.startswith("env"):
        logger.warning("email: a password in wilson.toml is ignored; set {} instead", PASSWORD_ENV)
    return os.environ.get(PASSWORD_ENV, "") or (config.get("email", "password") if source.startswith("env") else "")


def enabled(config) -> bool:
    return bool(str(config.get("email", "imap_host") or "").strip())


def status_line(config) -> str:
    """For `wilson status`: whether the channel is on, and where it reads."""
    if not enabled(config):
        return "email: off (no [email] imap_host)"
    folders = config.get("email", "folders")
    folders = ", ".join([folders] if isinstance(folders, str) else folders)
    poll = str(config.get("email", "poll") or "off")
    when = "at once where the server offers IDLE, " + ("else every " + poll if poll != "off" else "else at each sync")
    sending = "sends through " + str(config.get("email", "smtp_host")) if config.get("email", "smtp_host") \
        else "cannot send (no smtp_host)"
    return (f"email: reads {folders} at {config.get('email', 'imap_host')} "
            f"({config.get('email', 'imap_security')}) {when}; {sending}")


class EmailChannel(Channel):
    name = "email"
    realtime = False
    can_deliver = True

    def __init__(self, ctx, name: str = "email", imap_factory=None, smtp_factory=None, idle: bool = True,
                 idle_options: dict | None = None):
        super().__init__(ctx, name)
        self._imap_factory = imap_factory or self._imap
        self._smtp_factory = smtp_factory or self._smtp
        self._idle = idle
        self._idle_options = dict(idle_options or {})
        self.watchers: list[IdleWatcher] = []

    def on_start(self):
        super().on_start()
        if self._idle and enabled(self.config):
            me = self.actor_ref
            self.watchers = [IdleWatcher(self._imap_factory, folder, lambda f: me.tell(MailArrived(f)),
                                         **self._idle_options).start()
                             for folder in self.folders()[:MAX_IDLE_FOLDERS]]

    def on_stop(self):
        self._stop_watchers()

    def on_failure(self, exception_type, exception_value, traceback):
        self._stop_watchers()  # a replacement starts its own; two would read every mail twice as often
        super().on_failure(exception_type, exception_value, traceback)

    def _stop_watchers(self) -> None:
        watchers, self.watchers = self.watchers, []
        for watcher in watchers:
            watcher.stop()

    # Settings ---------------------------------------------------------------
    def _setting(self, key: str, default=None):
        value = self.config.get("email", key)
        return default if value in (None, "") else value

    def account(self) -> str:
        return f"{self._setting('username', '')}@{self._setting('imap_host', '')}"

    def _imap(self) -> ImapClient:
        return ImapClient(str(self._setting("imap_host")), int(self._setting("imap_port", 0) or 0),
                          str(self._setting("imap_security", "ssl")), str(self._setting("username", "")),
                          password(self.config))

    def _smtp(self) -> SmtpSender:
        return SmtpSender(str(self._setting("smtp_host")), int(self._setting("smtp_port", 0) or 0),
                          str(self._setting("smtp_security", "starttls")),
                          str(self._setting("smtp_username") or self._setting("username", "")), password(self.config))

    def folders(self) -> list[str]:
        folders = self.config.get("email", "folders")
        return [folders] if isinstance(folders, str) else [str(f) for f in folders]

    def receive(self, message):
        if isinstance(message, MailArrived):
            try:
                return self.sync("new mail", [message.folder])
            except Exception as exc:  # the next news or poll tries again; the actor carries on
                logger.error("email: reading {} after new mail failed: {}", message.folder, exc)
                return 0
        if isinstance(message, TickNow):
            self.deliver_owed()  # a mail approved since the last tick goes out without waiting for a poll
        return super().receive(message)

    # Receiving ------------------------------------------------------------------
    def sync(self, reason: str, folders: list[str] | None = None) -> int:
        if not enabled(self.config):
            return 0
        buffered = 0
        try:
            client = self._imap_factory()
            liveness.beat(float(getattr(client, "timeout", 30) or 30) + 30, "email: connecting")
            client.connect()
        except ImapError as exc:
            logger.warning("email: {}", exc)
            return 0
        try:
            for folder in folders or self.folders():
                for attempt in (1, 2):  # a connection dropped mid-fetch: once more on a new one
                    try:
                        buffered += self.sync_folder(client, folder)
                        break
                    except ImapError as exc:
                        logger.warning("email: {} ({})", exc, folder)
                        if attempt == 2 or client.conn is not None:
                            break
                        try:
                            client.connect()
                        except ImapError as again:
                            logger.warning("email: {}", again)
                            return buffered
        finally:
            client.close()
        if buffered:
            logger.info("email sync ({}): {} mail(s) buffered", reason, buffered)
        return buffered

    def sync_folder(self, client, folder: str) -> int:
        cursor_name = f"email:{self.account()}:{folder}"
        cursor = kv.cursor_row(cursor_name)
        state = dict(cursor.value or {}) if cursor is not None else {}
        validity, uidnext = client.select(folder)
        now = self.now()
        if cursor is not None and state.get("uidvalidity") not in (None, validity):
            # The server renumbered the folder: read it all again; the Message-ID keys keep out what was seen.
            logger.info("email: {} has a new UIDVALIDITY ({} → {}); reading it again",
                        folder, state.get("uidvalidity"), validity)
            trace.record(trace.new_trace_id(), "resynced", self.name,
                         f"folder {folder} was renumbered by the server; read again without duplicates", now)
            state = {"resync": True}
        last = int(state.get("last_uid") or 0)
        uids = client.uids_after(last)
        if not state and cursor is None:
            backfill = int(self._setting("backfill", 50) or 0)
            if len(uids) > backfill:
                # The first look at a mailbox of years: only the newest few, not a flood of old mail to triage.
                skipped = uids[:len(uids) - backfill]
                uids = uids[len(uids) - backfill:]
                last = skipped[-1]
                trace.record(trace.new_trace_id(), "skipped", self.name,
                             f"first look at {folder}: {len(skipped)} older mail(s) left unread", now)
        state["uidvalidity"] = validity
        # While a renumbered folder is read again (also across a kill), every mail is one seen before: no
        # "duplicate" trace for each of them.
        resync = bool(state.get("resync"))
        buffered = 0
        for at in range(0, len(uids), BATCH):
            buffered += self._take(client, folder, uids[at:at + BATCH], validity, cursor_name, state, quiet=resync)
        if resync:
            state.pop("resync", None)
            kv.put_cursor(cursor_name, {**state, "last_uid": state.get("last_uid", last)}, now)
        if not uids:
            kv.put_cursor(cursor_name, {**state, "last_uid": last}, now)
        return buffered

    def _take(self, client, folder: str, uids: list[int], validity: int, cursor_name: str, state: dict,
              quiet: bool = False) -> int:
        """A batch of messages: fetched and parsed, then committed in one transaction with the cursor past
        them (an unreadable one as a trace entry)."""
        liveness.beat(120, f"email: fetching {len(uids)} mail(s) from {folder}")
        fetched = client.fetch_many(uids, parse.MAX_PARSE_BYTES)  # ImapError: the folder is tried again
        prepared = []
        for uid in uids:
            raw, size = fetched[uid]
            liveness.beat(60, f"email: reading {folder} uid {uid}")
            prepared.append((uid, size, *self._read(raw, size, folder, uid, validity)))
        return self._commit(prepared, folder, validity, cursor_name, state, quiet)

    def _read(self, raw: bytes | None, size: int | None, folder: str, uid: int, validity: int):
        """(parsed, text, key, payload, problem): the problem is None when the mail could be read."""
        if raw is None:
            return None, None, None, None, ("it was gone before it could be read" if size is None
                                            else "the server sent no body")
        try:
            parsed = parse.parse_message(raw, size=size, bulk_senders=self.config.get("email", "bulk_senders") or [])
            text = parse.describe(parsed, self.config.timezone, folder=folder, thread=self._thread(parsed))
            return (parsed, text, parse.dedup_key(parsed, raw, self.account()),
                    parse.payload(parsed, folder=folder, uid=uid, uidvalidity=validity), None)
        except parse.ParseError as exc:
            return None, None, None, None, str(exc)
        except Exception as exc:  # a parser bug on one message must not stop the others
            return None, None, None, None, f"{type(exc).__name__}: {parse.one_line(exc, 160)}"

    def _commit(self, prepared: list, folder: str, validity: int, cursor_name: str, state: dict, quiet: bool) -> int:
        if not prepared:
            return 0
        now = self.now()
        rows = []
        with database.atomic():
            for uid, size, parsed, text, key, body, problem in prepared:
                if problem is not None:
                    trace.record(trace.new_trace_id(), "skipped", self.name,
                                 f"mail {folder} uid {uid} ({parse.human_size(size or 0)}) not read: {problem}", now,
                                 {"folder": folder, "uid": uid, "uidvalidity": validity})
                    continue
                row = routing.commit_buffered(channel=self.name, text=text, dedup_key=key, payload=body, at=now)
                if row is None:
                    if not quiet:  # after a renumbering every mail is one seen before: no line for each
                        trace.record(trace.new_trace_id(), "duplicate", self.name,
                                     f"mail {folder} uid {uid} has the Message-ID of a mail already read; "
                                     "not buffered again", now, {"folder": folder, "uid": uid,
                                                                 "message_id": parsed.message_id})
                    continue
                rows.append(row)
                if parsed.bulk:
                    # bulk mail waits for the thalamus' sync; the RAS has nothing to look for in it
                    ReceptorBuffer.update(scanned_at=now).where(ReceptorBuffer.id == row.id).execute()
                    trace.record(row.trace_id, "bulk", self.name, f"bulk mail: {parsed.bulk}", now)
                if parsed.defects:
                    trace.record(row.trace_id, "defects", self.name,
                                 f"read with defects: {', '.join(sorted(set(parsed.defects)))[:300]}", now)
            state["last_uid"] = prepared[-1][0]
            kv.put_cursor(cursor_name, dict(state), now)
        for uid, size, *_, problem in prepared:
            if problem is not None:
                logger.warning("email: mail {} uid {} not read: {}", folder, uid, problem)
        faults.point("email:after-commit")
        # Told only after the commit, so the thalamus never looks for a row that is not there yet.
        for row in rows:
            self.tell("thalamus", StimulusCommitted("buffer", row.id, row.trace_id))
        return len(rows)

    def _thread(self, parsed) -> str | None:
        """The subject of the earlier mail this one answers, when Wilson has read it."""
        refs = [r for r in [parsed.in_reply_to, *reversed(parsed.references)] if r]
        if not refs:
            return None
        keys = [parse.key_for_message_id(self.account(), ref) for ref in refs[:5]]
        known = ReceptorBuffer.select(ReceptorBuffer.payload).where(ReceptorBuffer.dedup_key.in_(keys)).first()
        return ((known.payload or {}).get("subject") or None) if known is not None else None

    # Delivering ---------------------------------------------------------------
    def deliver_owed(self) -> None:
        for row in list(Outbox.select(Outbox.id).where((Outbox.channel == self.name) & Outbox.status.in_(outbox.DUE))
                        .order_by(Outbox.id)):
            self.deliver_row(row.id)

    def deliver_row(self, outbox_id: int) -> None:
        row = Outbox.get_or_none(Outbox.id == outbox_id)
        if row is None or row.status not in outbox.DUE:
            return
        now = self.now()
        if row.status == "retry" and row.next_attempt_at is not None and row.next_attempt_at > now:
            return
        if row.sending_at is not None:
            self._settle_cut_short(row, now)
            return
        payload = dict(row.payload or {})
        try:
            msg = build(payload, now)
        except Exception as exc:
            self.record_failure(row, f"the mail cannot be built: {type(exc).__name__}: {exc}", now)
            self._tell_user(row, f"I could not send the email “{payload.get('subject', '')}”: "
                                 f"it is malformed ({exc}).")
            return
        if not outbox.start_attempt(row.id, now):
            return
        faults.point("email:before-send")
        liveness.beat(90, f"email: sending outbox {row.id}")
        try:
            result = self._smtp_factory().send(msg)
        except SendError as exc:
            attempts = row.attempts + 1
            if exc.lasting:
                self.record_failure(row, str(exc), now, counted=True)
                self._tell_user(row, f"I could not send the email “{payload.get('subject', '')}” "
                                     f"to {payload.get('to')}: {exc}.")
                return
            wait = min(RETRY_FIRST * (2 ** min(attempts - 1, 10)), RETRY_MAX)
            self.record_retry(row, str(exc), now, now + wait, attempts=attempts)
            return
        except SendUnknown as exc:
            self._settle_cut_short(Outbox.get_by_id(row.id), now, reason=str(exc))
            return
        # Killed here: the server has the mail and the row says an attempt started; see _settle_cut_short.
        faults.point("email:after-send")
        if self.record_delivery(row, result, now):
            faults.point("email:after-delivery")  # killed here: delivered once, with no copy in Sent
            self._file_in_sent(msg, row, now)

    def _file_in_sent(self, msg, row: Outbox, now) -> None:
        """A copy in the Sent folder, as a mail program keeps one: appended only after the delivery is recorded
        (so a copy there always means the server took the mail) and only when the server has not filed it
        itself (Gmail does). Killed in between, the copy is missing; the mail was sent once all the same."""
        if not enabled(self.config):
            return
        message_id = str(msg["Message-ID"])
        try:
            client = self._imap_factory()
            client.connect()
        except ImapError as exc:
            logger.warning("email: the sent mail was not filed in Sent: {}", exc)
            return
        try:
            folder = client.sent_folder()
            if folder is None:
                trace.record(row.trace_id, "filed", self.name, "no Sent folder on the server; no copy kept", now)
                return
            if client.has_message_id(folder, message_id):
                trace.record(row.trace_id, "filed", self.name, f"the server filed it in {folder} itself", now)
                return
            client.append(folder, msg.as_bytes())
            trace.record(row.trace_id, "filed", self.name, f"a copy kept in {folder}", now)
        except ImapError as exc:
            logger.warning("email: the sent mail was not filed in Sent: {}", exc)
        finally:
            client.close()

    def _settle_cut_short(self, row: Outbox, now, reason: str = "Wilson stopped while the mail was being sent") -> None:
        """An attempt that may have reached the server is never repeated blindly: the Sent folder decides,
        and when it cannot, the user is asked to look rather than risk a second copy."""
        message_id = (row.payload or {}).get("message_id")
        found = self._in_sent_folder(message_id) if message_id else None
        if found:
            self.record_delivery(row, {"message_id": message_id, "confirmed": f"found in {found}"}, now)
            return
        subject = (row.payload or {}).get("subject", "")
        self.record_failure(row, f"{reason}; it may have gone out; not sent again to avoid a duplicate", now,
                            counted=True)
        self._tell_user(row, f"I'm not sure the email “{subject}” to {(row.payload or {}).get('to')} went out "
                             f"({reason}). Please check your Sent folder; I won't send it again on my own.")

    def _in_sent_folder(self, message_id: str) -> str | None:
        if not enabled(self.config):
            return None
        try:
            client = self._imap_factory()
            client.connect()
        except ImapError:
            return None
        try:
            try:
                marked = client.sent_folder()
            except ImapError:
                marked = None
            for folder in dict.fromkeys([f for f in (marked, *SENT_NAMES) if f]):
                try:
                    if client.has_message_id(folder, message_id):
                        return folder
                except ImapError:
                    continue
            return None
        finally:
            client.close()

    def _tell_user(self, row: Outbox, text: str) -> None:
        channel = self.config.primary_channel
        told = outbox.add(channel=channel, text=text, trace_id=row.trace_id, key=f"email-report:{row.id}",
                          at=self.now(), payload={"email_outbox": row.id})
        self.tell(channel, Deliver(told.id))
