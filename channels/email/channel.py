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
explains the exactly-once protocol; channels/email/outbound.py sends them). They are sent on
start, when the channel is told `Deliver`, and at each tick. The settings (whether the channel
is on, the password, the status line) are channels/email/settings.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from loguru import logger

from channels import accounts
from channels.base import Channel
from channels.email import parse
from channels.email.idle import IdleWatcher
from channels.email.imap import ImapClient, ImapError
from channels.email.outbound import Outbound
from channels.email.settings import enabled, missing_folders, password, smtp_username, token_source
from channels.email.smtp import SmtpSender
from storage import kv, outbox, routing, trace
from storage.db import database
from storage.models import ReceptorBuffer
from wilson.kernel import faults, liveness
from wilson.kernel.messages import Deliver, StimulusCommitted, TickNow

BATCH = 25  # mails committed per transaction (with the cursor past them)
MAX_IDLE_FOLDERS = 4  # one connection each; servers cap connections per user (Gmail at 15)


@dataclass(frozen=True)
class MailArrived:
    """From an IDLE watcher: the server announced new mail in `folder` (or the watcher reconnected)."""

    folder: str


class EmailChannel(Outbound, Channel):
    name = "email"
    what = "mail server"
    realtime = False
    can_deliver = True

    def __init__(
        self,
        ctx,
        name: str = "email",
        imap_factory=None,
        smtp_factory=None,
        idle: bool = True,
        idle_options: dict | None = None,
    ):
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
            self.watchers = [
                IdleWatcher(self._imap_factory, folder, lambda f: me.tell(MailArrived(f)), **self._idle_options).start()
                for folder in self.folders()[:MAX_IDLE_FOLDERS]
            ]

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
        return ImapClient(
            str(self._setting("imap_host")),
            int(self._setting("imap_port", 0) or 0),
            str(self._setting("imap_security", "ssl")),
            str(self._setting("username", "")),
            password(self.config),
            token=token_source(self.config),
        )

    def _smtp(self) -> SmtpSender:
        return SmtpSender(
            str(self._setting("smtp_host")),
            int(self._setting("smtp_port", 0) or 0),
            str(self._setting("smtp_security", "starttls")),
            smtp_username(self.config),
            password(self.config),
            token=token_source(self.config),
        )

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
            self.reached(str(exc))
            if exc.revoked:
                self._grant_revoked(str(exc))
            return 0
        errors: list[str] = []
        try:
            for folder in folders or self.folders():
                for attempt in (1, 2):  # a connection dropped mid-fetch: once more on a new one
                    try:
                        buffered += self.sync_folder(client, folder)
                        break
                    except ImapError as exc:
                        logger.warning("email: {} ({})", exc, folder)
                        if attempt == 2 or client.conn is not None:
                            errors.append(f"{exc} ({folder})")
                        if client.conn is not None and str(exc).startswith("SELECT "):  # perhaps gone: look
                            self._folder_gone(client, folder)
                        if attempt == 2 or client.conn is not None:
                            break
                        try:
                            client.connect()
                        except ImapError as again:
                            logger.warning("email: {}", again)
                            errors.append(str(again))
                            return buffered
        except Exception as exc:  # told as the last error, then raised as before
            errors.append(f"{type(exc).__name__}: {exc}")
            raise
        finally:
            client.close()
            self.reached("; ".join(errors) or None)
        if buffered:
            logger.info("email sync ({}): {} mail(s) buffered", reason, buffered)
        return buffered

    def _grant_revoked(self, text: str) -> None:
        """Told once per grant: the words name the command that gives Wilson access again."""
        channel = self.config.primary_channel
        told = outbox.add(
            channel=channel,
            text=text,
            trace_id=trace.new_trace_id(),
            key=accounts.revoked_key(self.config, "email"),
            at=self.now(),
            payload={"oauth": "email"},
        )
        if told.status == "pending":
            self.tell(channel, Deliver(told.id))

    def _folder_gone(self, client, folder: str) -> None:
        """A folder that is not there (renamed or deleted since Wilson started): told once, with those that are,
        instead of a warning in the log at every poll."""
        try:
            line = missing_folders(self.config, client.folder_names())
        except ImapError:
            return
        if line is None:
            return
        channel = self.config.primary_channel
        told = outbox.add(
            channel=channel,
            text=f"I can't read your mail folder “{folder}”: {line}.",
            trace_id=trace.new_trace_id(),
            key=f"email-folder-gone:{self.account()}:{folder}",
            at=self.now(),
            payload={"email_folder": folder},
        )
        if told.status == "pending":
            self.tell(channel, Deliver(told.id))

    def sync_folder(self, client, folder: str) -> int:
        cursor_name = f"email:{self.account()}:{folder}"
        cursor = kv.cursor_row(cursor_name)
        state = dict(cursor.value or {}) if cursor is not None else {}
        validity, uidnext = client.select(folder)
        now = self.now()
        if cursor is not None and state.get("uidvalidity") not in (None, validity):
            # The server renumbered the folder: read it all again; the Message-ID keys keep out what was seen.
            logger.info(
                "email: {} has a new UIDVALIDITY ({} → {}); reading it again",
                folder,
                state.get("uidvalidity"),
                validity,
            )
            trace.record(
                trace.new_trace_id(),
                "resynced",
                self.name,
                f"folder {folder} was renumbered by the server; read again without duplicates",
                now,
            )
            state = {"resync": True}
        last = int(state.get("last_uid") or 0)
        uids = client.uids_after(last)
        if not state and cursor is None:
            backfill = int(self._setting("backfill", 50) or 0)
            if len(uids) > backfill:
                # The first look at a mailbox of years: only the newest few, not a flood of old mail to triage.
                skipped = uids[: len(uids) - backfill]
                uids = uids[len(uids) - backfill :]
                last = skipped[-1]
                trace.record(
                    trace.new_trace_id(),
                    "skipped",
                    self.name,
                    f"first look at {folder}: {len(skipped)} older mail(s) left unread",
                    now,
                )
        state["uidvalidity"] = validity
        # While a renumbered folder is read again (also across a kill), every mail is one seen before: no
        # "duplicate" trace for each of them.
        resync = bool(state.get("resync"))
        buffered = 0
        for at in range(0, len(uids), BATCH):
            buffered += self._take(client, folder, uids[at : at + BATCH], validity, cursor_name, state, quiet=resync)
        if resync:
            state.pop("resync", None)
            kv.put_cursor(cursor_name, {**state, "last_uid": state.get("last_uid", last)}, now)
        if not uids:
            kv.put_cursor(cursor_name, {**state, "last_uid": last}, now)
        return buffered

    def _take(
        self, client, folder: str, uids: list[int], validity: int, cursor_name: str, state: dict, quiet: bool = False
    ) -> int:
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
            return (
                None,
                None,
                None,
                None,
                ("it was gone before it could be read" if size is None else "the server sent no body"),
            )
        try:
            parsed = parse.parse_message(raw, size=size, bulk_senders=self.config.get("email", "bulk_senders") or [])
            text = parse.describe(parsed, self.config.timezone, folder=folder, thread=self._thread(parsed))
            return (
                parsed,
                text,
                parse.dedup_key(parsed, raw, self.account()),
                parse.payload(parsed, folder=folder, uid=uid, uidvalidity=validity),
                None,
            )
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
                    trace.record(
                        trace.new_trace_id(),
                        "skipped",
                        self.name,
                        f"mail {folder} uid {uid} ({parse.human_size(size or 0)}) not read: {problem}",
                        now,
                        {"folder": folder, "uid": uid, "uidvalidity": validity},
                    )
                    continue
                row = routing.commit_buffered(channel=self.name, text=text, dedup_key=key, payload=body, at=now)
                if row is None:
                    if not quiet:  # after a renumbering every mail is one seen before: no line for each
                        trace.record(
                            trace.new_trace_id(),
                            "duplicate",
                            self.name,
                            f"mail {folder} uid {uid} has the Message-ID of a mail already read; not buffered again",
                            now,
                            {"folder": folder, "uid": uid, "message_id": parsed.message_id},
                        )
                    continue
                rows.append(row)
                if parsed.bulk:
                    # bulk mail waits for the thalamus' sync; the RAS has nothing to look for in it
                    ReceptorBuffer.update(scanned_at=now).where(ReceptorBuffer.id == row.id).execute()
                    trace.record(row.trace_id, "bulk", self.name, f"bulk mail: {parsed.bulk}", now)
                if parsed.defects:
                    trace.record(
                        row.trace_id,
                        "defects",
                        self.name,
                        f"read with defects: {', '.join(sorted(set(parsed.defects)))[:300]}",
                        now,
                    )
            state["last_uid"] = prepared[-1][0]
            kv.put_cursor(cursor_name, dict(state), now)
        for uid, _size, *_, problem in prepared:
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
