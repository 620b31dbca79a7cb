"""Delivering email (a mixin of EmailChannel): the outbox rows of channel "email", each a mail the user approved.

channels/email/smtp.py explains the exactly-once protocol: the attempt is committed before
the SMTP conversation, the hand-over just before the mail's last line, the delivery as soon as
the server takes it. A temporary refusal is retried later (less often each time), a lasting one
is told to the user; an attempt cut short before the hand-over is sent again at once (it surely
did not go out), one cut short after it is settled by the Sent folder, never by sending again
blindly. A copy is filed in Sent after the delivery is recorded.
"""

from __future__ import annotations

from datetime import timedelta

from loguru import logger

from channels.email.imap import SENT_NAMES, ImapError
from channels.email.settings import enabled
from channels.email.smtp import SendError, SendUnknown, build
from storage import outbox, trace
from storage.models import Outbox
from wilson.kernel import faults, liveness
from wilson.kernel.messages import Deliver

RETRY_FIRST = timedelta(minutes=1)
RETRY_MAX = timedelta(hours=1)
TELL_AFTER = 2  # failed attempts (a minute apart) before the user is told a mail has not gone out yet


class Outbound:
    """The delivering half of EmailChannel (its settings, factories, clock and trace come from the channel)."""

    def deliver_owed(self) -> None:
        for row in list(
            Outbox.select(Outbox.id)
            .where((Outbox.channel == self.name) & Outbox.status.in_(outbox.DUE))
            .order_by(Outbox.id)
        ):
            self.deliver_row(row.id)

    def deliver_row(self, outbox_id: int) -> None:
        row = Outbox.get_or_none(Outbox.id == outbox_id)
        if row is None or row.status not in outbox.DUE:
            return
        now = self.now()
        if row.status == "retry" and row.next_attempt_at is not None and row.next_attempt_at > now:
            return
        if row.sending_at is not None and outbox.handing(row):
            self._settle_cut_short(row, now)
            return
        if row.sending_at is not None:  # cut short before the mail was handed over: it did not go out
            outbox.mark_retry(row.id, now, "Wilson stopped before the mail was handed to the server")
            row = Outbox.get_by_id(row.id)
        payload = dict(row.payload or {})
        try:
            msg = build(payload, now)
        except Exception as exc:
            self.record_failure(row, f"the mail cannot be built: {type(exc).__name__}: {exc}", now)
            self._tell_user(row, f"I could not send the email “{payload.get('subject', '')}”: it is malformed ({exc}).")
            return
        if not outbox.start_attempt(row.id, now):
            return
        faults.point("email:before-send")
        liveness.beat(90, f"email: sending outbox {row.id}")
        delivered = []

        def handing():
            outbox.mark_handing(row.id, now)

        def accepted(result):  # recorded before the connection is even closed: the unknown window is this short
            delivered.append(self.record_delivery(row, result, now))

        try:
            self._smtp_factory().send(msg, handing=handing, accepted=accepted)
        except SendError as exc:
            attempts = row.attempts + 1
            if exc.lasting:
                self.record_failure(row, str(exc), now, counted=True)
                self._tell_user(
                    row, f"I could not send the email “{payload.get('subject', '')}” to {payload.get('to')}: {exc}."
                )
                return
            wait = min(RETRY_FIRST * (2 ** min(attempts - 1, 10)), RETRY_MAX)
            self.record_retry(row, str(exc), now, now + wait, attempts=attempts)
            if attempts == TELL_AFTER:  # not a blip: the user hears it has not gone out, and that it will
                self._tell_user(
                    row,
                    f"The email “{payload.get('subject', '')}” to {payload.get('to')} has not gone "
                    f"out yet ({exc}). I'll keep trying with the same message, so it arrives only "
                    "once.",
                    key="email-delayed",
                )
            return
        except SendUnknown as exc:
            self._settle_cut_short(Outbox.get_by_id(row.id), now, reason=str(exc))
            return
        faults.point("email:after-send")  # killed here: the delivery is recorded, nothing is sent again
        if delivered and delivered[0]:
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
        self.record_failure(
            row, f"{reason}; it may have gone out; not sent again to avoid a duplicate", now, counted=True
        )
        self._tell_user(
            row,
            f"I'm not sure the email “{subject}” to {(row.payload or {}).get('to')} went out "
            f"({reason}). Please check your Sent folder; I won't send it again on my own.",
        )

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

    def _tell_user(self, row: Outbox, text: str, key: str = "email-report") -> None:
        channel = self.config.primary_channel
        told = outbox.add(
            channel=channel,
            text=text,
            trace_id=row.trace_id,
            key=f"{key}:{row.id}",
            at=self.now(),
            payload={"email_outbox": row.id},
        )
        self.tell(channel, Deliver(told.id))
