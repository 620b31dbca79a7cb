"""The base every Wilson actor stands on.

An actor gets a `Context` (configuration, clock, Synapse and the directory of
its peers) and implements `receive(message)`. Peers are addressed by name
through the directory, never by a stored reference, because a crashed actor is
replaced by a fresh one under the same name.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import pykka
from loguru import logger

from storage.db import writes_first
from wilson.messages import Ping


@dataclass
class Context:
    config: object  # wilson.config.Config
    clock: object  # wilson.clock.Clock
    synapse: object  # wilson.synapse.Synapse
    directory: object  # wilson.supervisor.Supervisor


class WilsonActor(pykka.ThreadingActor):
    use_daemon_thread = True  # a hung actor must not keep the process alive on shutdown
    name = "actor"
    realtime = False  # the user waits on this actor: its database writes go first

    def __init__(self, ctx: Context, name: str | None = None):
        super().__init__()
        self.ctx = ctx
        if name:
            self.name = name

    # Pykka entry point: pings answer at once, everything else goes to receive().
    def on_receive(self, message):
        if isinstance(message, Ping):
            return "pong"
        if self.realtime:
            writes_first()
        try:
            return self.receive(message)
        finally:
            self.ctx.directory.handled(self.name)

    def receive(self, message):
        raise NotImplementedError(f"{type(self).__name__} cannot handle {message!r}")

    def on_failure(self, exception_type, exception_value, traceback):
        logger.error("{} crashed: {}: {}", self.name, exception_type.__name__, exception_value)
        self.ctx.directory.crashed(self.name, exception_value)

    # Conveniences
    def tell(self, name: str, message) -> None:
        self.ctx.directory.tell(name, message)

    def now(self) -> datetime:
        return self.ctx.clock.now()

    @property
    def config(self):
        return self.ctx.config
