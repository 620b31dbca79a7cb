"""Sending mail over SMTP, and the queue row that makes one approved mail go out exactly once.

An approved `send_email` does not talk to the SMTP server itself: the approval gate runs its
items inside one database transaction, and a send inside it could not be taken back if the
transaction rolled back. Instead `queue_send` writes an outbox row for the channel "email"
in that transaction, keyed by the proposal item, with the Message-ID chosen there and then.
The email channel sends the row, and what it commits says how far the send got:

- `sending_at` before the SMTP conversation begins. A server only takes a mail when the
  line that ends it (".") arrives; a connection that ends before it aborts the transaction
  (RFC 5321). So a row cut short with `sending_at` and nothing more surely did not go out:
  it is sent again, with the same Message-ID, as soon as Wilson is back.
- `handing_at` (in the row's result) just before that final line is written.
- the delivery, the moment the server answers 250, before the connection is closed.

Only a row cut short between the last two (the final line written, the answer not yet
recorded: a few milliseconds) is truly unknown. It is never sent again blindly: the Sent
folder is searched for its Message-ID, and when it is not there the user is told exactly
that, with what to do.
"""

from __future__ import annotations

import hashlib
import re
import smtplib
import ssl
from datetime import datetime
from email.message import EmailMessage
from email.utils import format_datetime

from channels.accounts import AccountError, GrantRevoked, sasl
from channels.email.imap import ImapError, LOOPBACK, check_security, tls_problem
from storage import outbox
from wilson.kernel import deadline

SEND_SECONDS = 80.0  # the whole SMTP conversation, however the server drips (the channel's watchdog allows 90)


class SendError(Exception):
    """The server refused or could not be reached before it took the mail: it was not sent."""

    def __init__(self, reason: str, *, lasting: bool = False):
        super().__init__(reason)
        self.lasting = lasting  # retrying cannot help (a refused recipient, a refused login)


class SendUnknown(Exception):
    """The connection broke while the server was taking the mail: it may or may not have gone out."""


def message_id_for(key: str, from_address: str) -> str:
    """Chosen when the mail is queued, from the proposal item's key: the same mail always has the same id."""
    domain = from_address.rsplit("@", 1)[-1].strip(" >") if "@" in from_address else "wilson.invalid"
    return f"<wilson.{hashlib.sha256(key.encode()).hexdigest()[:24]}@{domain}>"


def build(payload: dict, at: datetime) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = payload["from"]
    msg["To"] = payload["to"]
    msg["Subject"] = payload.get("subject") or ""
    msg["Date"] = format_datetime(at)
    msg["Message-ID"] = payload["message_id"]
    if payload.get("in_reply_to"):
        msg["In-Reply-To"] = payload["in_reply_to"]
        msg["References"] = " ".join([*(payload.get("references") or []), payload["in_reply_to"]][-20:])
    msg.set_content(payload.get("body") or "")
    return msg


def queue_send(args: dict, *, key: str, trace_id: str, at: datetime, config) -> dict:
    """The execution of an approved send_email: one outbox row for the email channel (call it inside the
    gate's transaction). The same key returns the row written before: approving twice queues once."""
    sender = str(config.get("email", "from_address") or config.get("email", "username") or "").strip()
    if not config.get("email", "smtp_host") or not sender:
        raise SendError("email sending is not set up (no [email] smtp_host or from_address)", lasting=True)
    payload = {
        "to": str(args["to"]).strip(),
        "subject": str(args.get("subject") or ""),
        "body": str(args.get("body") or ""),
        "from": sender,
        "message_id": message_id_for(key, sender),
    }
    for extra in ("in_reply_to", "references"):
        if args.get(extra):
            payload[extra] = args[extra]
    row = outbox.add(
        channel="email",
        text=f"Email to {payload['to']}: {payload['subject']}",
        trace_id=trace_id,
        key=f"email-send:{key}",
        at=at,
        payload=payload,
        surfaced=False,
    )
    return {"queued": True, "outbox_id": row.id, "message_id": payload["message_id"]}


class SmtpSender:
    def __init__(
        self,
        host: str,
        port: int | None,
        security: str,
        username: str,
        password: str,
        *,
        timeout: float = 60.0,
        ssl_context: ssl.SSLContext | None = None,
        token=None,
    ):
        """`token`: for an OAuth account, a callable giving a fresh access token (XOAUTH2 instead of the password)."""
        self.security = check_security(security or "starttls", host)
        self.host = host
        self.port = int(port) if port else {"ssl": 465, "starttls": 587, "none": 25}[self.security]
        self.username, self._password = username, password
        self.token = token
        self.timeout = timeout
        self.ssl_context = ssl_context or ssl.create_default_context()
        self.logged_in = False

    def greet_and_login(self, smtp: smtplib.SMTP) -> None:
        """EHLO, STARTTLS when configured, and the login when there is one to make. Each refusal is a SendError
        naming what the server lacks: STARTTLS, AUTH, or the login itself. A relay that offers no AUTH is used
        without logging in when it is on this computer, or when the user set smtp_username = "" on purpose."""
        self.logged_in = False
        smtp.ehlo()
        if self.security == "starttls":
            if not smtp.has_extn("starttls"):
                raise SendError(
                    f"{self.host}:{self.port} does not offer STARTTLS; try smtp_security = ssl (usually port 465)",
                    lasting=True,
                )
            smtp.starttls(context=self.ssl_context)
            smtp.ehlo()
        if not (self.username and (self._password or self.token is not None)):
            return
        if not smtp.has_extn("auth"):
            if loopback(self.host):
                return  # a local relay without AUTH: it takes mail from this computer as it is
            raise SendError(
                f"{self.host}:{self.port} offers no login (no AUTH after EHLO"
                + ("" if self.security != "none" else ", perhaps only after STARTTLS")
                + '); if it relays your mail without one, set smtp_username = "" in [email]',
                lasting=True,
            )
        if self.token is not None:
            self._oauth_login(smtp)
        else:
            smtp.login(self.username, self._password)
        self.logged_in = True

    def _oauth_login(self, smtp: smtplib.SMTP) -> None:
        """XOAUTH2 with the stored access token; refused, once more with a fresh one, whose refresh tells whether
        the grant itself is gone (as channels/email/imap.py does)."""
        for fresh in (False, True):
            try:
                mechanism, answer = sasl(smtp.esmtp_features.get("auth", ""), self.username, self.token(fresh))
            except AccountError as exc:
                raise SendError(str(exc), lasting=isinstance(exc, GrantRevoked)) from None
            try:
                # on a refusal the server sends its reason as a 334 challenge; the empty answer lets it say 535
                smtp.auth(mechanism, lambda challenge=None, said=answer: said if challenge is None else "")
                return
            except smtplib.SMTPAuthenticationError:
                if fresh:
                    raise

    def check(self) -> str:
        """For `wilson doctor`: connect, EHLO, STARTTLS and log in as a send would, and leave. One line on success;
        SendError (its words name what to change) on failure."""
        try:
            smtp = (
                smtplib.SMTP_SSL(self.host, self.port, timeout=self.timeout, context=self.ssl_context)
                if self.security == "ssl"
                else smtplib.SMTP(self.host, self.port, timeout=self.timeout)
            )
        except ssl.SSLError as exc:
            raise SendError(tls_problem(exc, self.host, self.port), lasting=True) from None
        except (OSError, smtplib.SMTPException) as exc:
            raise SendError(
                f"cannot reach {self.host}:{self.port} ({type(exc).__name__}); check smtp_host and smtp_port"
            ) from None
        try:
            try:
                self.greet_and_login(smtp)
            except smtplib.SMTPAuthenticationError:
                raise SendError(self._refused_login(), lasting=True) from None
            except ssl.SSLError as exc:
                raise SendError(tls_problem(exc, self.host, self.port), lasting=True) from None
            except (OSError, smtplib.SMTPException) as exc:
                raise SendError(f"{self.host}:{self.port}: {type(exc).__name__} while greeting") from None
            return (
                f"logged in as {self.username}"
                if self.logged_in
                else "takes mail without a login"
                if self.username == ""
                else "offers no login (loopback relay)"
            )
        finally:
            try:
                smtp.quit()
            except Exception:
                smtp.close()

    def _refused_login(self) -> str:
        return (
            f"{self.host} refused the login for {self.username}; check smtp_username and WILSON_EMAIL_PASSWORD "
            f"(Gmail and Outlook want an app password)"
        )

    def send(self, msg: EmailMessage, *, handing=None, accepted=None) -> dict:
        """Hand the mail to the server: SendError when it surely did not take it, SendUnknown when it may have.
        `handing()` runs just before the line that ends the mail is written, `accepted(result)` as soon as
        the server has answered that it took it (both are where the caller commits how far it got).
        The whole conversation has SEND_SECONDS: a server that drips its answers is left, and what is
        said depends on how far the mail got (not handed over: not sent; handed over: unknown)."""
        try:
            with deadline.within(SEND_SECONDS, "the server's answers"):
                return self._send(msg, handing, accepted)
        except deadline.Expired as exc:
            if isinstance(exc.__cause__, SendUnknown):
                raise SendUnknown(
                    f"{self.host} did not confirm it took the mail within {SEND_SECONDS:g} seconds"
                ) from None
            raise SendError(
                f"{self.host} did not answer within {SEND_SECONDS:g} seconds; the mail was not handed over"
            ) from None

    def _send(self, msg: EmailMessage, handing, accepted) -> dict:
        try:
            if self.security == "ssl":
                smtp = smtplib.SMTP_SSL(self.host, self.port, timeout=self.timeout, context=self.ssl_context)
            else:
                smtp = smtplib.SMTP(self.host, self.port, timeout=self.timeout)
        except ssl.SSLError as exc:  # a certificate problem does not go away by waiting: the user is told
            raise SendError(
                tls_problem(exc, self.host, self.port), lasting=isinstance(exc, ssl.SSLCertVerificationError)
            ) from None
        except (OSError, smtplib.SMTPException) as exc:
            raise SendError(f"cannot reach {self.host}:{self.port} ({type(exc).__name__})") from None
        try:
            try:
                self.greet_and_login(smtp)
                sender = msg["From"].addresses[0].addr_spec if msg["From"].addresses else str(msg["From"])
                recipients = [a.addr_spec for a in msg["To"].addresses] if msg["To"] else []
                if not recipients:
                    raise SendError("the mail has no recipient", lasting=True)
                code, said = smtp.mail(sender)
                if code == 530 and not self.logged_in:  # "authentication required": the one thing to change
                    raise SendError(
                        f"{self.host} wants a login before it takes mail; set smtp_username (or "
                        f"username) in [email] and WILSON_EMAIL_PASSWORD",
                        lasting=True,
                    )
                if code != 250:
                    raise SendError(f"the server refused the sender ({code})", lasting=500 <= code < 600)
                for rcpt in recipients:
                    code, said = smtp.rcpt(rcpt)
                    if code not in (250, 251):
                        raise SendError(
                            f"the server refused {rcpt} ({code} {said.decode(errors='replace')[:100]})",
                            lasting=500 <= code < 600,
                        )
            except smtplib.SMTPAuthenticationError:
                raise SendError(self._refused_login(), lasting=True) from None
            except ssl.SSLError as exc:
                raise SendError(
                    tls_problem(exc, self.host, self.port), lasting=isinstance(exc, ssl.SSLCertVerificationError)
                ) from None
            except (OSError, smtplib.SMTPException) as exc:
                raise SendError(f"{self.host}: {type(exc).__name__} before the mail was handed over") from None
            try:
                code, said = smtp.docmd("data")
                if code != 354:
                    raise SendError(f"the server refused the mail ({code})", lasting=500 <= code < 600)
                body = re.sub(rb"(?m)^\.", b"..", msg.as_bytes())  # as smtplib's data(): a line's leading dot doubled
                smtp.send(body if body.endswith(b"\r\n") else body + b"\r\n")
            except (OSError, smtplib.SMTPException) as exc:  # the mail is not ended: the server drops it
                raise SendError(f"{self.host}: {type(exc).__name__} before the mail was handed over") from None
            if handing is not None:
                with deadline.exempt():
                    handing()
            try:
                smtp.send(b".\r\n")
                code, said = smtp.getreply()
            except (OSError, smtplib.SMTPException) as exc:
                raise SendUnknown(
                    f"the connection to {self.host} broke while it took the mail ({type(exc).__name__})"
                ) from None
            if code != 250:
                raise SendError(f"the server refused the mail ({code})", lasting=500 <= code < 600)
            result = {"message_id": str(msg["Message-ID"]), "smtp": f"{code} {said.decode(errors='replace')[:120]}"}
            if accepted is not None:
                with deadline.exempt():
                    accepted(result)
            return result
        finally:
            try:
                smtp.quit()
            except Exception:
                try:
                    smtp.close()
                except Exception:
                    pass


def loopback(host: str) -> bool:
    return host in LOOPBACK


__all__ = ["SendError", "SendUnknown", "SmtpSender", "build", "queue_send", "message_id_for", "ImapError"]
