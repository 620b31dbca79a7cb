"""Real mail servers on loopback for the email tests: Dovecot (IMAP) and aiosmtpd (SMTP).

Dovecot runs in the foreground from a throwaway directory with its own config, one
passwd-file user and a maildir, as a non-root user (Dovecot refuses uid 0 for mail).
aiosmtpd keeps every message it accepts in memory, so a test can count deliveries.
With `tls=True` Dovecot also offers STARTTLS on its plain port and implicit TLS on `tls_port`,
with a server certificate from a throwaway CA made by `openssl` (`ca_file`).
"""

from __future__ import annotations

import grp
import imaplib
import os
import pwd
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from wilson.kernel import clock as clockmod
from tests.ports import free_port

USER = "wilson"
PASSWORD = "mail-test-secret"
DOVECOT = shutil.which("dovecot") or "/usr/sbin/dovecot"

CONF = """\
protocols = imap
listen = 127.0.0.1
base_dir = {dir}/run
state_dir = {dir}/state
log_path = {dir}/dovecot.log
info_log_path = {dir}/dovecot.log
{ssl}
disable_plaintext_auth = no
# A refused login is answered at once (Dovecot waits 2 s), as tests refuse logins on purpose
auth_failure_delay = 0
auth_mechanisms = {mechanisms}
mail_location = maildir:{dir}/mail/%u
default_login_user = {user}
default_internal_user = {user}
default_internal_group = {group}
first_valid_uid = 1
{oauth_passdb}passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {dir}/users
}}
userdb {{
  driver = passwd-file
  args = username_format=%u {dir}/users
}}
service imap-login {{
  chroot =
  inet_listener imap {{
    address = 127.0.0.1
    port = {port}
  }}
  inet_listener imaps {{
    address = 127.0.0.1
    port = {tls_port}
    ssl = yes
  }}
}}
service anvil {{
  chroot =
  # No penalty per address after refused logins (2 s doubling to 15 s before every later login from 127.0.0.1,
  # good ones too, for half a minute): the auth process cannot reach this socket, so it keeps none.
  # login_trusted_networks, said to skip it, does not in Dovecot 2.3.19.
  unix_listener anvil-auth-penalty {{
    mode = 0
  }}
}}
service ipc {{
  chroot =
}}
service stats {{
  chroot =
}}
service pop3-login {{
  chroot =
}}
{extra}
"""


def start_dovecot(**options) -> "Dovecot":
    """A started Dovecot, or the test fails saying why: not skipped, since CI installs Dovecot (and openssl)
    and a machine without them should say so."""
    import pytest

    try:
        return Dovecot(**options).start()
    except DovecotUnavailable as exc:
        pytest.fail(f"Dovecot is needed for the email tests: {exc}")


class DovecotUnavailable(RuntimeError):
    pass


def make_ca(directory: Path, name: str = "ca", server: bool = True) -> Path:
    """A throwaway CA (`<name>.crt`) and, with `server`, a certificate for 127.0.0.1 and localhost signed by
    it (`server.crt`, `server.key`). EC keys: made in milliseconds."""
    openssl = shutil.which("openssl")
    if openssl is None:
        raise DovecotUnavailable("openssl is needed to make the test certificates (apt-get install openssl)")
    directory.mkdir(parents=True, exist_ok=True)
    key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]

    def run(*args: str) -> None:
        done = subprocess.run([openssl, *args], capture_output=True, text=True, cwd=directory, timeout=60)
        if done.returncode != 0:
            raise DovecotUnavailable(f"openssl {args[0]} failed: {done.stderr.strip()[-300:]}")

    run(
        "req",
        "-x509",
        *key,
        "-keyout",
        f"{name}.key",
        "-out",
        f"{name}.crt",
        "-days",
        "2",
        "-subj",
        f"/CN=Wilson test {name}",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
    )
    if server:
        (directory / "server.ext").write_text(
            "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=critical,CA:FALSE\n"
            "keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n"
            "authorityKeyIdentifier=keyid\nsubjectKeyIdentifier=hash\n"
        )
        run("req", *key, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1")
        run(
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            f"{name}.crt",
            "-CAkey",
            f"{name}.key",
            "-CAcreateserial",
            "-out",
            "server.crt",
            "-days",
            "2",
            "-extfile",
            "server.ext",
        )
    return directory / f"{name}.crt"


@dataclass
class Dovecot:
    """One Dovecot instance: `start()`, `stop()`, and helpers that talk to it as a plain IMAP client."""

    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="dv", dir="/tmp")))
    port: int = 0
    process: subprocess.Popen | None = None
    tls: bool = False
    tls_port: int = 0
    ca_file: Path | None = None
    extra: str = ""  # more configuration lines, e.g. an imap_capability without IDLE
    # an identity provider's token introspection URL (RFC 7662): XOAUTH2 and OAUTHBEARER logins are checked there
    oauth_url: str = ""
    oauth_mechanisms: str = "xoauth2 oauthbearer"  # what it offers for bearer tokens

    def start(self, attempts: int = 5) -> "Dovecot":
        if not os.path.exists(DOVECOT):
            raise DovecotUnavailable("dovecot is not installed (apt-get install dovecot-imapd; .ci/run does it)")
        if os.getuid() == 0:
            user = pwd.getpwnam("nobody")
        else:
            user = pwd.getpwuid(os.getuid())
        group = grp.getgrgid(user.pw_gid).gr_name
        for sub in ("run", "state", "mail"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        (self.root / "users").write_text(
            f"{USER}:{{PLAIN}}{PASSWORD}:{user.pw_uid}:{user.pw_gid}::{self.root}/mail/{USER}\n"
        )
        os.chmod(self.root, 0o755)
        if os.getuid() == 0:
            for path in [self.root, *self.root.rglob("*")]:
                if path.name != "users":
                    os.chown(path, user.pw_uid, user.pw_gid)
        ssl_conf = "ssl = no"
        if self.tls:
            if self.ca_file is None:
                self.ca_file = make_ca(self.root / "tls")
                for path in (self.root / "tls").iterdir():
                    path.chmod(0o644)  # Dovecot reads the key as root before dropping privileges; tests only
            ssl_conf = f"ssl = yes\nssl_cert = <{self.root}/tls/server.crt\nssl_key = <{self.root}/tls/server.key"
        self._conf = (user.pw_name, group, ssl_conf)
        last = ""
        for _ in range(attempts):  # Dovecot has no ephemeral port: pick one, and pick again if taken
            self.port = free_port()
            self.tls_port = free_port() if self.tls else 0
            if self._launch():
                return self
            last = self._log()
            self.stop(keep_root=True)
        raise DovecotUnavailable(f"dovecot did not start: {last[-600:]}")

    def _launch(self) -> bool:
        user, group, ssl_conf = self._conf
        conf = self.root / "dovecot.conf"
        oauth = ""
        if self.oauth_url:
            (self.root / "oauth2.conf.ext").write_text(
                f"introspection_mode = post\nintrospection_url = {self.oauth_url}\nusername_attribute = username\n"
                "active_attribute = active\nactive_value = true\nforce_introspection = yes\n"
            )
            oauth = (
                f"passdb {{\n  driver = oauth2\n  mechanisms = {self.oauth_mechanisms}\n"
                f"  args = {self.root}/oauth2.conf.ext\n}}\n"
            )
        conf.write_text(
            CONF.format(
                dir=self.root,
                user=user,
                group=group,
                port=self.port,
                ssl=ssl_conf,
                tls_port=self.tls_port,
                extra=self.extra,
                oauth_passdb=oauth,
                mechanisms=f"plain login {self.oauth_mechanisms}" if oauth else "plain login",
            )
        )
        # its own process group: stopping it ends the imap processes of open sessions too, at once
        self.process = subprocess.Popen(
            [DOVECOT, "-F", "-c", str(conf)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
        )
        return self._wait_listening(10.0)

    def restart(self, while_down=None) -> None:
        """Stop and start again on the same ports with the same mail, as a server restarted for an upgrade:
        every open connection is dropped. `while_down()` runs while no server is listening."""
        self.stop(keep_root=True)
        if while_down is not None:
            while_down()
        if not self._launch():
            raise DovecotUnavailable(f"dovecot did not start again: {self._log()[-600:]}")

    def _log(self) -> str:
        out = ""
        if self.process is not None and self.process.poll() is not None and self.process.stdout:
            out = self.process.stdout.read().decode(errors="replace")
        log = self.root / "dovecot.log"
        return out + (log.read_text(errors="replace") if log.exists() else "")

    def _wait_listening(self, timeout: float) -> bool:
        deadline = clockmod.monotonic() + timeout
        while clockmod.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    if s.recv(200).startswith(b"* OK"):
                        return True
            except OSError:
                pass
            clockmod.pause(0.02)
        return False

    def stop(self, keep_root: bool = False) -> None:
        if self.process is not None and self.process.poll() is None:
            group = os.getpgid(self.process.pid)
            os.killpg(group, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(group, signal.SIGKILL)
                self.process.wait(timeout=5)
            try:
                os.killpg(group, signal.SIGKILL)  # a session's imap process the master left behind
            except ProcessLookupError:
                pass
        if self.process is not None and self.process.stdout:
            self.process.stdout.close()
        self.process = None
        if not keep_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def deliver(self, raw: bytes, folder: str) -> None:
        """Put a mail straight into the folder's maildir, as a mail delivery agent does (works while the
        IMAP server is down; Dovecot gives it a UID when it next looks)."""
        new = self.root / "mail" / USER / f".{folder}" / "new"
        path = new / f"{uuid.uuid4().hex}.test"
        path.write_bytes(raw)
        if os.getuid() == 0:
            owner = new.stat()
            os.chown(path, owner.st_uid, owner.st_gid)

    # As a plain client -------------------------------------------------------
    def client(self) -> imaplib.IMAP4:
        imap = imaplib.IMAP4("127.0.0.1", self.port, timeout=10)
        imap.login(USER, PASSWORD)
        return imap

    def append(self, raw: bytes, folder: str = "INBOX") -> None:
        self.append_many([raw], folder)

    def append_many(self, messages, folder: str = "INBOX", create: bool = True) -> None:
        imap = self.client()
        try:
            if create and folder != "INBOX":
                imap.create(folder)
            for raw in messages:
                typ, data = imap.append(folder, None, None, raw)
                assert typ == "OK", data
        finally:
            imap.logout()

    def recreate(self, folder: str = "INBOX", messages=()) -> None:
        """Empty the folder and give it a new UIDVALIDITY, as a server does after rebuilding a mailbox;
        then put `messages` in again (they get new UIDs, which may be ones the old messages had)."""
        self._uidvalidity = self.uidvalidity(folder)
        imap = self.client()
        try:
            imap.select(folder)
            imap.store("1:*", "+FLAGS", r"(\Deleted)")
            imap.expunge()
            imap.close()
        finally:
            imap.logout()
        self.doveadm("mailbox", "update", "-u", USER, "--uid-validity", str(self._uidvalidity + 1), folder)
        self.append_many(messages, folder, create=False)

    def doveadm(self, *args: str) -> str:
        done = subprocess.run(
            [shutil.which("doveadm") or "/usr/bin/doveadm", "-c", str(self.root / "dovecot.conf"), *args],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def uidvalidity(self, folder: str = "INBOX") -> int:
        imap = self.client()
        try:
            typ, data = imap.status(folder, "(UIDVALIDITY)")
            return int(data[0].split(b"UIDVALIDITY")[1].strip(b" ()"))
        finally:
            imap.logout()

    def folder_messages(self, folder: str) -> list[bytes]:
        imap = self.client()
        try:
            typ, data = imap.select(f'"{folder}"', readonly=True)
            assert typ == "OK", data
            typ, data = imap.uid("SEARCH", None, "ALL")
            out = []
            for uid in data[0].split():
                typ, got = imap.uid("FETCH", uid, "(BODY.PEEK[])")
                out.append(got[0][1])
            return out
        finally:
            imap.logout()


class SmtpSink:
    """aiosmtpd on loopback, port 0; `messages` holds (envelope sender, recipients, bytes) per accepted mail."""

    def __init__(self, tls_dir: Path | None = None, implicit: bool = False, auth: bool = True, oauth_check=None):
        """With `tls_dir` (from make_ca: server.crt, server.key) it requires STARTTLS, or with `implicit`
        speaks TLS from the first byte. Without `auth` it offers no AUTH at all, as a local relay that
        takes mail from this computer without a login."""
        from aiosmtpd.controller import Controller

        sink = self
        self.messages: list[tuple[str, list[str], bytes]] = []
        self.arrived = threading.Condition()
        self.auth: list[tuple[str, str]] = []

        class Handler:
            async def handle_DATA(self, server, session, envelope):
                with sink.arrived:
                    sink.messages.append((envelope.mail_from, list(envelope.rcpt_tos), envelope.original_content))
                    sink.arrived.notify_all()
                return "250 OK"

            async def handle_EHLO(self, server, session, envelope, hostname, responses):
                session.host_name = hostname
                return responses if auth else [line for line in responses if not line[4:].upper().startswith("AUTH")]

        class OAuthHandler(Handler):
            async def auth_XOAUTH2(self, server, args):
                """SASL XOAUTH2 (Gmail's): "user=U^Aauth=Bearer TOKEN^A^A", checked by `oauth_check(token)`."""
                from base64 import b64decode

                from aiosmtpd.smtp import AuthResult, LoginPassword

                said = b64decode(args[1]).decode() if len(args) > 1 else ""
                fields = dict(part.split("=", 1) for part in said.split("\x01") if "=" in part)
                user, token = fields.get("user", ""), fields.get("auth", "").removeprefix("Bearer ")
                sink.auth.append((user, "XOAUTH2"))
                if oauth_check(token):
                    return AuthResult(success=True, auth_data=LoginPassword(user.encode(), b""))
                return AuthResult(success=False, handled=False)  # else no 535 is sent

        def authenticate(server, session, envelope, mechanism, auth_data):
            from aiosmtpd.smtp import AuthResult

            sink.auth.append((auth_data.login.decode(), auth_data.password.decode()))
            return AuthResult(success=auth_data.password.decode() == PASSWORD, handled=False)  # else no 535 is sent

        tls = {}
        if tls_dir is not None:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(str(tls_dir / "server.crt"), str(tls_dir / "server.key"))
            tls = {"ssl_context": context} if implicit else {"tls_context": context, "require_starttls": True}
        handler = OAuthHandler() if oauth_check is not None else Handler()
        self._make = lambda port: Controller(
            handler,
            hostname="127.0.0.1",
            port=port,
            authenticator=authenticate if auth else None,
            auth_require_tls=False,
            auth_required=False,
            **tls,
        )

    def start(self, attempts: int = 5) -> "SmtpSink":
        for attempt in range(attempts):  # this aiosmtpd checks its port by connecting to it: no port 0
            self.port = free_port()
            self.controller = self._make(self.port)
            try:
                self.controller.start()
                return self
            except OSError:
                if attempt == attempts - 1:
                    raise
        return self

    def stop(self) -> None:
        self.controller.stop()

    def wait_for(self, count: int, timeout: float = 10.0) -> bool:
        with self.arrived:
            return self.arrived.wait_for(lambda: len(self.messages) >= count, timeout=timeout)


class CuttingProxy:
    """A TCP relay on loopback in front of a server that drops the connection once, when the server's
    side has sent `marker` (e.g. the first message body of a FETCH): a connection lost mid-fetch."""

    def __init__(self, port: int, marker: bytes):
        self.target, self.marker = port, marker
        self.cuts = 0
        self.armed = True
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self._open: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True, name="cutting-proxy")
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target))
            self._open += [client, upstream]
            threading.Thread(target=self._pipe, args=(client, upstream, False), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client, True), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket, from_server: bool) -> None:
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                at = data.find(self.marker) if from_server and self.armed else -1
                if at >= 0:
                    self.armed = False
                    self.cuts += 1
                    sink.sendall(data[: at + len(self.marker) + 40])  # the start of the answer, then gone
                    break
                sink.sendall(data)
        except OSError:
            pass
        for sock in (source, sink):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def close(self) -> None:
        try:
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread
        except OSError:
            pass
        self.listener.close()
        for sock in self._open:
            try:
                sock.close()
            except OSError:
                pass
