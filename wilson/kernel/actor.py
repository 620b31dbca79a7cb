"""The base every Wilson actor stands on.

An actor gets a `Context` (configuration, clock, Synapse and the directory of
its peers) and implements `receive(message)`. Peers are addressed by name
through the directory, never by a stored reference, because a crashed actor is
replaced by a fresh one under the same name.

Two things are kept for the supervisor, whatever path a message took to get here:
its mailbox counts every message put in (`CountedInbox`), and `on_receive` records
when the current handler started and how long it may take (`wilson.kernel.liveness`).
"""

from __future__ import annotations

import queue
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

import pykka
from loguru import logger

from wilson.kernel import liveness
from wilson.kernel.clock import Clock
from wilson.kernel.config import DEFAULTS, Config
from wilson.kernel.lanes import for_the_user, writes_first
from wilson.kernel.messages import Ping


class Models(Protocol):
    """What actors ask of the model layer (wilson/model/synapse.py `Synapse`, which sits above the kernel)."""

    def chat(self, role: str, messages: list[dict], tools: list[dict] | None = None, **options): ...

    def is_offline(self, role: str) -> bool: ...

    def paused(self, role: str) -> bool: ...

    def budget_report(self) -> str: ...


class Directory(Protocol):
    """How an actor reaches its peers by name and reports on itself (wilson/kernel/supervisor.py `Supervisor`)."""

    def tell(self, name: str, message) -> bool: ...

    def handled(self, name: str, urn: str | None = None) -> None: ...

    def crashed(self, name: str, error: BaseException, urn: str | None = None) -> None: ...


@dataclass
class Context:
    config: Config
    clock: Clock
    synapse: Models | None  # None in tests of organs that never ask a model
    directory: Directory


def counted(message) -> bool:
    """Work the supervisor waits for: not pings, not Pykka's own stop and proxy messages."""
    return not isinstance(message, Ping) and not type(message).__module__.startswith("pykka")


class CountedInbox(queue.SimpleQueue):
    """A mailbox that reports each message put in, so idle accounting sees self-tells, asks and tells alike.

    A `SimpleQueue` (all Pykka asks of a mailbox is put, get and empty): its put and get are one lock in C,
    where `queue.Queue` takes a Python lock and a condition around each and wakes the reader through a
    second lock; every hop of a message costs about half the CPU this way."""

    on_put = None

    def put(self, item, block=True, timeout=None):
        if self.on_put is not None and counted(item.message):
            self.on_put()
        super().put(item, block, timeout)


class WilsonActor(pykka.ThreadingActor):
    use_daemon_thread = True  # a hung actor must not keep the process alive on shutdown
    name = "actor"
    realtime = False  # the user waits on this actor: its database writes go first
    serves_user = False  # its handlers are a user's run: background loops give way to them (kernel/lanes.py)

    @staticmethod
    def _create_actor_inbox():
        return CountedInbox()

    def __init__(self, ctx: Context, name: str | None = None):
        super().__init__()
        self.ctx = ctx
        if name:
            self.name = name
        self.handler = liveness.Handler(owner=f"{liveness.PROCESS}/{self.name}#{self.actor_urn[-8:]}")
        enlist = getattr(ctx.directory, "enlist", None)
        if enlist is not None:
            enlist(self)

    # Pykka entry point: pings answer at once, everything else goes to receive().
    def on_receive(self, message):
        if isinstance(message, Ping):
            return "pong"
        if self.realtime:
            writes_first()
        liveness.begin(self.handler, type(message).__name__, self.handler_budget(message))
        try:
            if self.serves_user:
                with for_the_user():
                    return self.receive(message)
            return self.receive(message)
        finally:
            liveness.end(self.handler)
            self.ctx.directory.handled(self.name, self.actor_urn)

    def handler_budget(self, message) -> float:
        """How long a handler may go without progress; model calls renew it themselves (liveness.beat)."""
        config = self.ctx.config
        if config is None:  # tests of a single actor may run it without settings
            return float(DEFAULTS["supervisor"]["handler_budget"])
        return float(config.get("supervisor", "handler_budget"))

    def receive(self, message):
        raise NotImplementedError(f"{type(self).__name__} cannot handle {message!r}")

    def on_failure(self, exception_type, exception_value, traceback):
        logger.error("{} crashed: {}: {}", self.name, exception_type.__name__, exception_value)
        self.ctx.directory.crashed(self.name, exception_value, self.actor_urn)

    # Conveniences
    def tell(self, name: str, message) -> None:
        self.ctx.directory.tell(name, message)

    def now(self) -> datetime:
        return self.ctx.clock.now()

    @property
    def owner(self) -> str:
        """Who holds this incarnation's claims: the process and this actor's own life."""
        return self.handler.owner

    @property
    def config(self):
        return self.ctx.config
