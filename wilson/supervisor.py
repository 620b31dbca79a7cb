"""The supervisor: starts actors in order, restarts the crashed, finds the hung.

Pykka stops an actor whose `tell` handler raised and cannot restart it; the
supervisor starts a fresh one under the same name, which rebuilds its state from
the database in `on_start`. Restarts back off exponentially, and an actor that
crashes more than `max_restarts` times within `restart_window` seconds is given up
on (logged, shown by `wilson status`) instead of looping forever.

The supervisor is also the directory actors use to reach each other by name, and
it counts messages sent and handled so that `wait_idle` can tell when the whole
organism has nothing left to do.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass, field

import pykka
from loguru import logger

from wilson import clock as clockmod
from wilson.messages import Ping


@dataclass(frozen=True)
class ActorSpec:
    name: str
    actor_class: type
    kwargs: dict = field(default_factory=dict)


@dataclass
class Health:
    state: str = "starting"  # running, restarting, hung, gave-up, stopped
    restarts: int = 0
    last_error: str = ""
    recent_crashes: deque = field(default_factory=lambda: deque(maxlen=64))


class Supervisor:
    def __init__(self, ctx, specs: list[ActorSpec], *, max_restarts: int = 5, restart_window: float = 60.0,
                 base_backoff: float = 0.05, max_backoff: float = 5.0, watchdog_seconds: float = 10.0,
                 ping_timeout: float = 5.0):
        self.ctx = ctx
        self.specs = list(specs)
        self.max_restarts = max_restarts
        self.restart_window = restart_window
        self.base_backoff = base_backoff
        self.max_backoff = max_backoff
        self.watchdog_seconds = watchdog_seconds
        self.ping_timeout = ping_timeout
        self._refs: dict[str, pykka.ActorRef] = {}
        self.health: dict[str, Health] = {s.name: Health() for s in self.specs}
        self._lock = threading.Lock()
        self._sent = 0
        self._handled = 0
        self._stopping = threading.Event()
        self._watchdog: threading.Thread | None = None

    # Lifecycle -----------------------------------------------------------
    def start(self) -> None:
        for spec in self.specs:
            self._start_one(spec)
        if self.watchdog_seconds > 0:
            self._watchdog = threading.Thread(target=self._watch, name="watchdog", daemon=True)
            self._watchdog.start()

    def _start_one(self, spec: ActorSpec) -> None:
        ref = spec.actor_class.start(self.ctx, name=spec.name, **spec.kwargs)
        with self._lock:
            self._refs[spec.name] = ref
        self.health[spec.name].state = "running"
        logger.info("started {}", spec.name)

    def stop(self, timeout: float = 5.0) -> None:
        """Stop in reverse order; an actor that does not stop in time is abandoned (daemon thread)."""
        self._stopping.set()
        for spec in reversed(self.specs):
            ref = self._refs.get(spec.name)
            if ref is None:
                continue
            try:
                ref.stop(block=True, timeout=timeout)
            except pykka.Timeout:
                logger.warning("{} did not stop within {}s; abandoned", spec.name, timeout)
            except pykka.ActorDeadError:
                pass
            self.health[spec.name].state = "stopped"

    # Directory -----------------------------------------------------------
    def ref(self, name: str) -> pykka.ActorRef | None:
        with self._lock:
            return self._refs.get(name)

    def names(self) -> list[str]:
        return [s.name for s in self.specs]

    def tell(self, name: str, message) -> bool:
        """Send by name. A message to a dead or missing actor is dropped: the database has the truth."""
        ref = self.ref(name)
        if ref is None:
            return False
        with self._lock:
            self._sent += 1
        try:
            ref.tell(message)
            return True
        except pykka.ActorDeadError:
            self.handled(name)
            logger.debug("{} is not running; {} dropped", name, type(message).__name__)
            return False

    def ask(self, name: str, message, timeout: float = 10.0):
        """For the application layer and tests only; actors never ask each other."""
        ref = self.ref(name)
        if ref is None:
            raise LookupError(f"no actor named {name}")
        return ref.ask(message, timeout=timeout)

    def handled(self, name: str) -> None:
        with self._lock:
            self._handled += 1

    def in_flight(self) -> int:
        with self._lock:
            return self._sent - self._handled

    # Failures ------------------------------------------------------------
    def crashed(self, name: str, error: BaseException) -> None:
        if self._stopping.is_set():
            return
        threading.Thread(target=self._restart, args=(name, error), name=f"restart-{name}", daemon=True).start()

    def _restart(self, name: str, error: BaseException) -> None:
        health = self.health[name]
        now = clockmod.monotonic()
        health.recent_crashes.append(now)
        health.last_error = f"{type(error).__name__}: {error}"
        recent = [t for t in health.recent_crashes if now - t <= self.restart_window]
        if len(recent) > self.max_restarts:
            health.state = "gave-up"
            logger.error("{} crashed {} times in {}s; not restarting", name, len(recent), self.restart_window)
            return
        health.state = "restarting"
        backoff = min(self.base_backoff * 2 ** (len(recent) - 1), self.max_backoff)
        clockmod.pause(backoff)
        if self._stopping.is_set():
            return
        spec = next(s for s in self.specs if s.name == name)
        old = self.ref(name)
        if old is not None and old.is_alive():
            old.stop(block=False)
        self._start_one(spec)
        health.restarts += 1
        logger.warning("{} restarted after {:.2f}s ({})", name, backoff, health.last_error)

    def check(self) -> dict[str, str]:
        """Ping every actor once; a silent one is hung and gets replaced."""
        for spec in self.specs:
            ref = self.ref(spec.name)
            health = self.health[spec.name]
            if ref is None or health.state in ("gave-up", "restarting", "stopped"):
                continue
            try:
                ref.ask(Ping(), timeout=self.ping_timeout)
                if health.state == "hung":
                    health.state = "running"
            except pykka.Timeout:
                health.state = "hung"
                health.last_error = f"no answer to ping within {self.ping_timeout}s"
                logger.error("{} is hung ({})", spec.name, health.last_error)
                self._replace_hung(spec)
            except pykka.ActorDeadError:
                # Pykka stops an actor whose on_start raised without telling anyone: the ping finds it.
                if health.state == "running":
                    health.state = "restarting"
                    self.crashed(spec.name, RuntimeError("found dead by the watchdog"))
        return {name: h.state for name, h in self.health.items()}

    def _replace_hung(self, spec: ActorSpec) -> None:
        old = self.ref(spec.name)
        if old is not None:
            old.stop(block=False)  # runs whenever the stuck handler returns, if ever
        self._start_one(spec)
        self.health[spec.name].restarts += 1
        self.health[spec.name].state = "hung-replaced"

    def _watch(self) -> None:
        while not self._stopping.wait(self.watchdog_seconds):
            self.check()

    # Quiescence ----------------------------------------------------------
    def ping_all(self, timeout: float = 30.0) -> None:
        for spec in self.specs:
            ref = self.ref(spec.name)
            if ref is None:
                continue
            try:
                ref.ask(Ping(), timeout=timeout)
            except (pykka.ActorDeadError, pykka.Timeout):
                pass
