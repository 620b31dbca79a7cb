"""Wake-ups between processes: what another Wilson process wrote reaches the actors here.

In one process, whoever commits a row tells the actor that works on it. With several
processes on one PostgreSQL database (`wilson run --role worker|ingress`), that tell
cannot cross: triggers on the inbox, outbox, decision and approval tables NOTIFY
`wilson` with the table's name when a row becomes workable (storage/migrations.py),
and this thread LISTENs and nudges the local actors. A slow poll (`Recover` to every
actor every `core.poll_seconds`) is the fallback for a notification missed while the
listening connection was down, and the way expired leases are found.
"""

from __future__ import annotations

import os
import select
import threading

from loguru import logger

from wilson.kernel.clock import monotonic
from wilson.kernel.messages import Recover

# what a notification for each table means to the actors of this process
NUDGES = {
    "inbox": ("cortex", "cortex-realtime"),
    "decision": ("approval",),
    "approval": ("approval",),
    "outbox": None,  # every channel: the row names its channel, a sweep of its own rows is cheap
}


class Waker:
    def __init__(self, directory, names: list[str], channels: list[str], *, dsn: str | None, poll_seconds: float):
        self.directory = directory
        self.names = set(names)
        self.channels = [c for c in channels if c in self.names]
        self.dsn = dsn
        self.poll_seconds = poll_seconds
        self._stop = threading.Event()
        # written to by stop(): the listening select wakes at once instead of at the end of its poll_seconds
        # (a process on PostgreSQL took up to 5 s, the join's limit, to stop)
        self._wake_read, self._wake_write = os.pipe()
        self._thread = threading.Thread(target=self._run, name="waker", daemon=True)

    def start(self) -> "Waker":
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._stop.is_set():  # stopped before: its pipe may be closed
            return
        self._stop.set()
        os.write(self._wake_write, b"x")
        self._thread.join(timeout=5)
        if not self._thread.is_alive():  # else it may still select on the pipe: left to the process's end
            os.close(self._wake_read)
            os.close(self._wake_write)

    def nudge(self, tables: set[str]) -> None:
        targets: set[str] = set()
        for table in tables:
            targets.update(self.channels if NUDGES.get(table) is None else NUDGES[table])
        for name in sorted(targets & self.names):
            self.directory.tell(name, Recover())

    def sweep(self) -> None:
        self.nudge(set(NUDGES))

    def _run(self) -> None:
        while not self._stop.is_set():
            if self.dsn is None:
                self._stop.wait(self.poll_seconds)
                self.sweep()
                continue
            try:
                self._listen()
            except Exception as exc:  # the database went away: poll until it is back
                logger.warning("waker: listening failed ({}); polling every {:g}s", exc, self.poll_seconds)
                self._stop.wait(self.poll_seconds)
                self.sweep()

    def _listen(self) -> None:
        # lazy: psycopg2 is installed only where PostgreSQL is used
        import psycopg2
        import psycopg2.extensions

        connection = psycopg2.connect(self.dsn)
        try:
            connection.set_isolation_level(psycopg2.extensions.ISOLATION_LEVEL_AUTOCOMMIT)
            connection.cursor().execute("LISTEN wilson")
            self.sweep()  # what was written before we listened
            swept = monotonic()
            while not self._stop.is_set():
                readable, _, _ = select.select([connection, self._wake_read], [], [], self.poll_seconds)
                if self._stop.is_set():
                    break
                if monotonic() - swept >= self.poll_seconds:
                    # also under steady notifications: expired leases announce themselves to nobody
                    self.sweep()
                    swept = monotonic()
                if connection not in readable:
                    continue
                connection.poll()
                tables = {n.payload for n in connection.notifies}
                connection.notifies.clear()
                if tables:
                    self.nudge(tables)
        finally:
            connection.close()
