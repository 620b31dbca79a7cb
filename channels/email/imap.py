"""A thin wrapper over the standard library's imaplib: connect with the configured security, read
a folder's UIDVALIDITY and new UIDs, fetch one message (or only its beginning, when it is large)
without marking it read, append a message to a folder, wait in IDLE (RFC 2177) for new mail.

Every failure becomes `ImapError` with one line that never carries the password. Connecting (greeting,
TLS, login) and each command have a total deadline (wilson/kernel/deadline.py), not only a timeout per
read: a server that drips its answer a byte at a time is left, as one that says nothing is. A certificate
that does not verify says so in words, with the way out (SSL_CERT_FILE for a server with its
own CA), instead of OpenSSL's reason alone.

Size: one client over imaplib: connection, security, commands and IDLE share the socket's state and its
deadlines.
"""

from __future__ import annotations

import imaplib
import re
import socket
import ssl

from channels.accounts import AccountError, GrantRevoked, sasl
from wilson.kernel import clock as clockmod
from wilson.kernel import deadline

SECURITIES = ("ssl", "starttls", "none")
SENT_NAMES = ("Sent", "Sent Items", "Sent Messages", "INBOX.Sent", "[Gmail]/Sent Mail")
LOOPBACK = ("127.0.0.1", "::1", "localhost")


# RFC 2177: a server may drop a client idle for 30 minutes, so IDLE is left and entered again before that.
IDLE_REFRESH = 25 * 60.0
NEW_MAIL = re.compile(rb"^\* \d+ (EXISTS|RECENT)\b", re.I)


class ImapError(Exception):
    """The server could not be reached or said no; str() is one line for the log and the trace. `revoked`: the
    OAuth grant is no longer honoured (channels/accounts.py), which only `wilson account add` can fix."""

    def __init__(self, message: str, *, revoked: bool = False):
        super().__init__(message)
        self.revoked = revoked


def tls_problem(exc: BaseException, host: str, port: int) -> str:
    """One line for a failed TLS handshake: what is wrong and what to do about it."""
    if isinstance(exc, ssl.SSLCertVerificationError):
        why = exc.verify_message or "certificate verify failed"
        return (
            f"the certificate of {host}:{port} is not trusted ({why}); if the server uses its own CA, "
            f"point SSL_CERT_FILE at that CA's certificate"
        )
    reason = getattr(exc, "reason", None) or " ".join(str(exc).split())[:160]
    return f"TLS with {host}:{port} failed ({reason})"


def check_security(security: str, host: str) -> str:
    security = (security or "ssl").strip().lower()
    if security not in SECURITIES:
        raise ImapError(f"security {security!r} is not one of {', '.join(SECURITIES)}")
    if security == "none" and host not in LOOPBACK:
        raise ImapError(f"security = none is only allowed for a loopback host, not {host}")
    return security


def _quote(folder: str) -> str:
    return '"' + folder.replace("\\", "\\\\").replace('"', '\\"') + '"'


def command_seconds(timeout: float) -> float:
    """The whole of one command, whatever the server drips: a fetch of a few megabytes fits well within
    it, and it ends before the channel's watchdog budget for the command (liveness) would."""
    return 2 * timeout


def connect_seconds(timeout: float) -> float:
    """Connecting, TLS, the greeting and the login, in all (the watchdog allows timeout + 30 s)."""
    return 1.5 * timeout


class ImapClient:
    def __init__(
        self,
        host: str,
        port: int | None,
        security: str,
        username: str,
        password: str,
        *,
        timeout: float = 30.0,
        ssl_context: ssl.SSLContext | None = None,
        token=None,
    ):
        """`token`: for an OAuth account, a callable giving a fresh access token (XOAUTH2 instead of the password)."""
        self.security = check_security(security, host)
        self.host = host
        self.port = int(port) if port else (993 if self.security == "ssl" else 143)
        self.username, self._password = username, password
        self.token = token
        self.timeout = timeout
        self.ssl_context = ssl_context or ssl.create_default_context()
        self.conn: imaplib.IMAP4 | None = None

    @property
    def label(self) -> str:
        return f"{self.username}@{self.host}:{self.port}"

    def __enter__(self) -> "ImapClient":
        self.connect()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def connect(self) -> None:
        try:
            with deadline.within(connect_seconds(self.timeout), "connecting and logging in"):
                self._connect()
        except deadline.Expired:
            raise ImapError(
                f"{self.host}:{self.port} did not finish connecting and logging in within "
                f"{connect_seconds(self.timeout):g} seconds"
            ) from None

    def _connect(self) -> None:
        try:
            if self.security == "ssl":
                conn = imaplib.IMAP4_SSL(self.host, self.port, ssl_context=self.ssl_context, timeout=self.timeout)
            else:
                conn = imaplib.IMAP4(self.host, self.port, timeout=self.timeout)
                if self.security == "starttls":
                    try:
                        conn.starttls(ssl_context=self.ssl_context)
                    except BaseException:
                        self._shut(conn)
                        raise
        except ssl.SSLError as exc:
            raise ImapError(tls_problem(exc, self.host, self.port)) from None
        except imaplib.IMAP4.error as exc:
            if "TLS not supported" in str(exc):
                raise ImapError(
                    f"{self.host}:{self.port} does not offer STARTTLS; try imap_security = ssl (usually port 993)"
                ) from None
            raise ImapError(f"cannot reach {self.host}:{self.port} ({_said(exc)})") from None
        except OSError as exc:
            raise ImapError(f"cannot reach {self.host}:{self.port} ({type(exc).__name__}: {exc})") from None
        try:
            if self.token is not None:
                self._oauth_login(conn)
            else:
                conn.login(self.username, self._password)
        except imaplib.IMAP4.error as exc:
            self._shut(conn)
            raise ImapError(f"{self.host} refused the login for {self.username} ({_said(exc)})") from None
        except OSError as exc:
            self._shut(conn)
            raise ImapError(f"{self.host} dropped the connection at login ({type(exc).__name__})") from None
        self.conn = conn

    def _oauth_login(self, conn) -> None:
        """XOAUTH2 with the stored access token; refused, once more with a fresh one (a token revoked or cut
        short before its time), whose refresh tells whether the grant itself is gone."""
        for fresh in (False, True):
            try:
                token = self.token(fresh)
            except AccountError as exc:
                self._shut(conn)
                raise ImapError(str(exc), revoked=isinstance(exc, GrantRevoked)) from None
            mechanism, said = sasl(" ".join(conn.capabilities), self.username, token)
            answer = said.encode()
            try:
                conn.authenticate(mechanism, lambda challenge, said=answer: said if not challenge else b"")
                return
            except imaplib.IMAP4.error:
                if fresh:
                    raise

    @staticmethod
    def _shut(conn) -> None:
        try:
            conn.shutdown()
        except Exception:
            pass

    def close(self) -> None:
        if self.conn is not None:
            try:
                self.conn.logout()
            except Exception:
                self._shut(self.conn)
            self.conn = None

    def _call(self, what: str, fn, *args):
        if self.conn is None:
            raise ImapError("not connected")
        try:
            with deadline.within(command_seconds(self.timeout), what, watch=[getattr(self.conn, "sock", None)]):
                typ, data = fn(*args)
        except deadline.Expired:
            self._shut(self.conn)
            self.conn = None
            raise ImapError(
                f"{self.host} did not finish {what} within {command_seconds(self.timeout):g} seconds"
            ) from None
        except (OSError, imaplib.IMAP4.abort, ssl.SSLError, socket.timeout) as exc:
            self._shut(self.conn)
            self.conn = None
            raise ImapError(f"the connection to {self.host} dropped during {what} ({type(exc).__name__})") from None
        except imaplib.IMAP4.error as exc:
            raise ImapError(f"{what} failed: {_said(exc)}") from None
        if typ != "OK":
            raise ImapError(f"{what} failed: {_said(data)}")
        return data

    def select(self, folder: str) -> tuple[int, int]:
        """Open a folder read-only: (UIDVALIDITY, UIDNEXT or 0 when the server does not say)."""
        self._call(f"SELECT {folder}", self.conn.select, _quote(folder), True)
        validity = self.conn.untagged_responses.get("UIDVALIDITY", [b"0"])[-1]
        uidnext = self.conn.untagged_responses.get("UIDNEXT", [b"0"])[-1]
        return int(validity), int(uidnext)

    def uids_after(self, last_uid: int) -> list[int]:
        """UIDs above `last_uid`, ascending (a UID range N:* always returns the highest UID: filtered)."""
        data = self._call("UID SEARCH", self.conn.uid, "SEARCH", None, f"UID {last_uid + 1}:*")
        uids = [int(u) for u in (data[0] or b"").split() if u.isdigit()]
        return sorted(u for u in uids if u > last_uid)

    def size(self, uid: int) -> int | None:
        data = self._call("UID FETCH size", self.conn.uid, "FETCH", str(uid), "(RFC822.SIZE)")
        for item in data:
            blob = item[0] if isinstance(item, tuple) else item
            found = re.search(rb"RFC822\.SIZE (\d+)", blob or b"")
            if found:
                return int(found.group(1))
        return None

    def fetch(self, uid: int, max_bytes: int) -> tuple[bytes | None, int | None]:
        """(bytes, full size) of one message, without setting \\Seen; only its first `max_bytes` when it is
        larger (one round trip either way). (None, None) when the message is gone (expunged meanwhile)."""
        data = self._call("UID FETCH", self.conn.uid, "FETCH", str(uid), f"(RFC822.SIZE BODY.PEEK[]<0.{max_bytes}>)")
        size, body = None, None
        for item in data:
            head = item[0] if isinstance(item, tuple) else item
            found = re.search(rb"RFC822\.SIZE (\d+)", head or b"")
            if found:
                size = int(found.group(1))
            if isinstance(item, tuple) and len(item) >= 2 and isinstance(item[1], (bytes, bytearray)):
                body = bytes(item[1])
        return body, size

    def fetch_many(self, uids: list[int], max_bytes: int) -> dict[int, tuple[bytes | None, int | None]]:
        """As `fetch` for several messages in one round trip; a UID missing from the answer (expunged) is
        (None, None)."""
        if not uids:
            return {}
        data = self._call(
            "UID FETCH",
            self.conn.uid,
            "FETCH",
            ",".join(str(u) for u in uids),
            f"(UID RFC822.SIZE BODY.PEEK[]<0.{max_bytes}>)",
        )
        found: dict[int, tuple[bytes | None, int | None]] = {}
        for item in data:
            head = item[0] if isinstance(item, tuple) else item
            uid = re.search(rb"UID (\d+)", head or b"")
            if uid is None:
                continue
            size = re.search(rb"RFC822\.SIZE (\d+)", head)
            body = bytes(item[1]) if isinstance(item, tuple) and isinstance(item[1], (bytes, bytearray)) else None
            found[int(uid.group(1))] = (body, int(size.group(1)) if size else None)
        return {u: found.get(u, (None, None)) for u in uids}

    def append(self, folder: str, raw: bytes, flags: str = r"(\Seen)") -> None:
        self._call(f"APPEND {folder}", self.conn.append, _quote(folder), flags, None, raw)

    def sent_folder(self) -> str | None:
        """The folder sent mail goes to: the one the server marks \\Sent (RFC 6154, as Gmail and Outlook do),
        else the first of the usual names that exists."""
        data = self._call("LIST", self.conn.list)
        names = {}
        for line in data:
            if not isinstance(line, bytes):
                continue
            found = re.match(rb'\((?P<flags>[^)]*)\) (?:"[^"]*"|NIL) (?P<name>.+)$', line)
            if not found:
                continue
            name = found.group("name").decode("utf-8", "replace").strip()
            name = name[1:-1].replace('\\"', '"').replace("\\\\", "\\") if name.startswith('"') else name
            if b"\\sent" in found.group("flags").lower():
                return name
            names[name.lower()] = name
        for usual in SENT_NAMES:
            if usual.lower() in names:
                return names[usual.lower()]
        return None

    def folder_names(self) -> list[str]:
        """Every folder the server lists, as a person would type it in `folders` (for `doctor` and a missing one)."""
        names = []
        for line in self._call("LIST", self.conn.list):
            found = (
                re.match(rb'\((?P<flags>[^)]*)\) (?:"[^"]*"|NIL) (?P<name>.+)$', line)
                if isinstance(line, bytes)
                else None
            )
            if found and b"\\noselect" not in found.group("flags").lower():
                name = found.group("name").decode("utf-8", "replace").strip()
                names.append(name[1:-1].replace('\\"', '"').replace("\\\\", "\\") if name.startswith('"') else name)
        return names

    def has_message_id(self, folder: str, message_id: str) -> bool:
        self._call(f"EXAMINE {folder}", self.conn.select, _quote(folder), True)
        data = self._call("UID SEARCH", self.conn.uid, "SEARCH", None, "HEADER", "Message-ID", _quote(message_id))
        return bool((data[0] or b"").split())

    def capabilities(self) -> set[str]:
        """What the server offers after login (the greeting's list may be the pre-login one)."""
        data = self._call("CAPABILITY", self.conn.capability)
        return {c.upper() for c in b" ".join(d for d in data if isinstance(d, bytes)).decode(errors="replace").split()}

    def idle(self, seconds: float) -> bool:
        """Wait in IDLE on the selected folder for at most `seconds`: True as soon as the server announces
        a new message, False when the time is up. IDLE is always left (DONE) before returning, so the
        connection can IDLE again. A dropped connection is ImapError, as everywhere else.

        imaplib (before Python 3.14) has no IDLE: the command is written on its connection and the
        answers read straight from the socket with a timeout. That is safe because imaplib's own
        buffer is empty between commands, and this connection runs no other command while idling."""
        if self.conn is None:
            raise ImapError("not connected")
        conn, sock = self.conn, self.conn.sock
        lines = _Lines(sock, self.host)
        tag = conn._new_tag()
        try:
            conn.send(tag + b" IDLE\r\n")
            first = lines.next(self.timeout)
            if first is None or not first.startswith(b"+"):
                raise ImapError(f"{self.host} refused IDLE ({_said(first or b'no answer')})")
            changed = False
            deadline = clockmod.monotonic() + seconds
            while not changed:
                line = lines.next(deadline - clockmod.monotonic())
                if line is None:
                    break
                if line.upper().startswith(b"* BYE"):
                    raise ImapError(f"{self.host} closed the connection ({_said(line)})")
                changed = bool(NEW_MAIL.match(line))
            conn.send(b"DONE\r\n")
            done_by = clockmod.monotonic() + self.timeout  # all of the answer, however it drips
            while True:
                line = lines.next(done_by - clockmod.monotonic())
                if line is None:
                    raise ImapError(f"{self.host} did not answer the end of IDLE")
                if NEW_MAIL.match(line):
                    changed = True
                if line.startswith(tag + b" "):
                    if not line[len(tag) + 1 :].upper().startswith(b"OK"):
                        raise ImapError(f"IDLE failed: {_said(line)}")
                    return changed
        except (OSError, ssl.SSLError) as exc:
            self._shut(conn)
            self.conn = None
            raise ImapError(f"the connection to {self.host} dropped during IDLE ({type(exc).__name__})") from None
        except ImapError:
            self._shut(conn)
            self.conn = None
            raise
        finally:
            if self.conn is not None:
                sock.settimeout(self.timeout)

    def interrupt(self) -> None:
        """From another thread: end a blocking wait (IDLE) at once by shutting the socket down."""
        conn = self.conn
        if conn is not None and getattr(conn, "sock", None) is not None:
            try:
                conn.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class _Lines:
    """CRLF lines read from a socket with a timeout per line (None when it passes)."""

    def __init__(self, sock, host: str):
        self.sock, self.host, self.buffer = sock, host, b""

    def next(self, timeout: float) -> bytes | None:
        deadline = clockmod.monotonic() + max(timeout, 0.0)
        while b"\r\n" not in self.buffer:
            left = deadline - clockmod.monotonic()
            if left <= 0:
                return None
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(4096)
            except (socket.timeout, TimeoutError):
                return None
            if not chunk:
                raise ImapError(f"{self.host} closed the connection")
            self.buffer += chunk
            if len(self.buffer) > 1 << 20:
                raise ImapError(f"{self.host} sent a line longer than 1 MB during IDLE")
        line, self.buffer = self.buffer.split(b"\r\n", 1)
        return line


def _said(value) -> str:
    if isinstance(value, list):
        value = b" ".join(v if isinstance(v, bytes) else str(v).encode() for v in value if v is not None)
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return " ".join(str(value).split())[:200]
