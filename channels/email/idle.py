"""New mail as it arrives: one thread per watched folder holding an IMAP connection in IDLE.

The thread never reads or writes a mail: when the server announces one (and right after each
(re)connect, for whatever came while it was away) it tells the email channel actor, which
fetches and commits with the same cursor as a poll. So the actor's mailbox never waits on the
network, and the poll stays as the safety net for a server without IDLE or a watcher that
cannot get through. IDLE is left and entered again every `refresh` seconds, before the 29
minutes after which RFC 2177 lets a server drop an idle client. A lost connection is
reconnected with backoff until the channel stops.
"""

from __future__ import annotations

import threading
from typing import Callable

import pykka
from loguru import logger

from channels.email.imap import IDLE_REFRESH, ImapClient, ImapError

RETRY_FIRST = 5.0
RETRY_MAX = 300.0


class IdleWatcher:
    def __init__(
        self,
        connect: Callable[[], ImapClient],
        folder: str,
        on_change: Callable[[str], None],
        *,
        refresh: float = IDLE_REFRESH,
        retry_first: float = RETRY_FIRST,
        retry_max: float = RETRY_MAX,
    ):
        self.connect, self.folder, self.on_change = connect, folder, on_change
        self.refresh, self.retry_first, self.retry_max = refresh, retry_first, retry_max
        self.supported: bool | None = None  # None until the server was asked
        self.connects = 0  # sessions that reached IDLE
        self.rounds = 0  # IDLE commands completed (a refresh or news)
        self.ended = False  # the thread is done (stopped, or the server has no IDLE)
        self.changed = threading.Condition()  # notified whenever one of the counters above moves
        self._stop = threading.Event()
        self._client: ImapClient | None = None
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def start(self) -> "IdleWatcher":
        self._thread = threading.Thread(target=self._run, name=f"email-idle-{self.folder}", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        with self._lock:
            if self._client is not None:
                self._client.interrupt()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def wait_for(self, predicate: Callable[["IdleWatcher"], bool], timeout: float = 20.0) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: predicate(self), timeout=timeout)

    def _moved(self, **counts) -> None:
        with self.changed:
            for name, value in counts.items():
                setattr(self, name, value)
            self.changed.notify_all()

    def _run(self) -> None:
        try:
            self._watch()
        finally:
            self._moved(ended=True)

    def _watch(self) -> None:
        wait = self.retry_first
        while not self._stop.is_set():
            client = self.connect()
            try:
                with self._lock:
                    if self._stop.is_set():
                        return
                    self._client = client
                client.connect()
                if "IDLE" not in client.capabilities():
                    logger.info("email: {} does not offer IDLE; {} is polled", client.host, self.folder)
                    self._moved(supported=False)
                    return
                client.select(self.folder)
                wait = self.retry_first
                self.on_change(self.folder)  # what arrived while there was no connection
                self._moved(supported=True, connects=self.connects + 1)
                while not self._stop.is_set():
                    news = client.idle(self.refresh)
                    if news and not self._stop.is_set():
                        self.on_change(self.folder)  # told before the round is counted: a waiter sees both
                    self._moved(rounds=self.rounds + 1)
            except pykka.ActorDeadError:
                # the channel that started this watcher is gone (replaced after a hang): its successor has its own
                logger.info("email: the IDLE watcher of {} ends with its channel", self.folder)
                self._stop.set()
                return
            except ImapError as exc:
                if self._stop.is_set():
                    return
                logger.warning(
                    "email: waiting for new mail in {} failed ({}); again in {:.0f}s", self.folder, exc, wait
                )
            except Exception as exc:  # a bug here must not end new-mail news for good: the poll still runs
                if self._stop.is_set():
                    return
                logger.error("email: the IDLE watcher of {} failed: {}: {}", self.folder, type(exc).__name__, exc)
            finally:
                with self._lock:
                    self._client = None
                client.close()
            self._stop.wait(wait)
            wait = min(wait * 2, self.retry_max)
