"""The supervisor: starts actors in order, restarts the crashed, finds the hung.

Pykka stops an actor whose `tell` handler raised and cannot restart it; the
supervisor starts a fresh one under the same name, which rebuilds its state from
the database in `on_start`. Restarts back off exponentially, and an actor that
crashes more than `max_restarts` times within `restart_window` seconds is given up
on (logged, shown by `wilson status`) instead of looping forever.

Liveness is judged by how long an actor's current handler has gone without progress
against the budget it was given (`wilson.kernel.liveness`), never by a ping that waits in
the mailbox behind a slow model call. A hung actor is fenced (its claims released,
its late results refused by the database) and a fresh one takes its place.

The supervisor is also the directory actors use to reach each other by name, and it
counts, per actor incarnation, messages put in a mailbox and not yet handled, so that
`wait_idle` can tell when the whole organism has nothing left to do.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass, field

import pykka
from loguru import logger

from wilson.kernel import clock as clockmod, liveness, memory
from wilson.kernel.messages import Ping
from wilson.kernel.redact import redact


@dataclass(frozen=True)
class ActorSpec:
    name: str
    actor_class: type
    kwargs: dict = field(default_factory=dict)


@dataclass
class Incarnation:
    """One life of a named actor: its handler record and the messages it has yet to handle."""

    name: str
    handler: liveness.Handler
    waiting: int = 0


@dataclass
class Claims:
    """What the supervisor does to the database for liveness (storage stays out of this module)."""

    renew: object = None  # renew(owners: list[str]) -> None: extend the leases of live owners
    release: object = None  # release(owner: str) -> None: a fenced owner's claims go back


@dataclass
class Health:
    state: str = "starting"  # running, restarting, hung, gave-up, stopped
    restarts: int = 0
    last_error: str = ""
    recent_crashes: deque = field(default_factory=lambda: deque(maxlen=64))


class Supervisor:
    def __init__(
        self,
        ctx,
        specs: list[ActorSpec],
        *,
        max_restarts: int = 5,
        restart_window: float = 60.0,
        base_backoff: float = 0.05,
        max_backoff: float = 5.0,
        watchdog_seconds: float = 10.0,
        lease_seconds: float = 120.0,
        claims: Claims | None = None,
    ):
        self.ctx = ctx
        self.specs = list(specs)
        self.max_restarts = max_restarts
        self.restart_window = restart_window
        self.base_backoff = base_backoff
        self.max_backoff = max_backoff
        self.watchdog_seconds = watchdog_seconds
        self.lease_seconds = lease_seconds
        self.claims = claims or Claims()
        self._refs: dict[str, pykka.ActorRef] = {}
        self._incarnations: dict[str, Incarnation] = {}  # by actor urn
        self.health: dict[str, Health] = {s.name: Health() for s in self.specs}
        self._lock = threading.Lock()
        self._settled = threading.Condition(self._lock)  # told when an actor has handled all it was sent
        # held while an actor starts and until its ref is known: a crash it reports in its first moments (its first
        # message fails before start() has returned here) waits for the ref instead of being taken for a stale one
        self._starting = threading.RLock()
        self._stopping = threading.Event()
        self._restarting: set[str] = set()  # incarnations whose restart is under way
        self._watchdog: threading.Thread | None = None

    # Lifecycle -----------------------------------------------------------
    def start(self) -> None:
        for spec in self.specs:
            self._start_one(spec)
        self._watchdog = threading.Thread(target=self._watch, name="watchdog", daemon=True)
        self._watchdog.start()

    def _start_one(self, spec: ActorSpec) -> None:
        with self._starting:
            ref = spec.actor_class.start(self.ctx, name=spec.name, **spec.kwargs)
            with self._lock:
                old = self._refs.get(spec.name)
                self._refs[spec.name] = ref
                if old is not None:
                    # what waited in the old mailbox is not coming: the new actor recovers it from the database
                    self._forget(old.actor_urn)
            self.health[spec.name].state = "running"
        logger.info("started {}", spec.name)

    def stop(self, timeout: float = 5.0) -> None:
        """Stop in reverse order; an actor that does not stop in time is abandoned (daemon thread)."""
        self._stopping.set()
        if self._watchdog is not None and self._watchdog is not threading.current_thread():
            self._watchdog.join(timeout=timeout)  # it must not start a replacement while we stop
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
            with self._lock:
                self._forget(ref.actor_urn)
            self.health[spec.name].state = "stopped"

    def take_down(self, name: str) -> None:
        """Stop one actor and leave it stopped (the watchdog does not revive it) until `crashed()` or a
        restart of the process: what a process that died would leave behind, for tests and maintenance."""
        self.health[name].state = "stopped"
        ref = self.ref(name)
        if ref is not None:
            ref.stop()

    # Directory -----------------------------------------------------------
    def enlist(self, actor) -> None:
        """Called by each actor as it is built: its mailbox reports to us, its handler record is ours to read."""
        urn = actor.actor_urn
        with self._lock:
            self._incarnations[urn] = Incarnation(actor.name, actor.handler)
        actor.actor_inbox.on_put = lambda: self._sent(urn)

    def ref(self, name: str) -> pykka.ActorRef | None:
        # no lock: the dict is only ever changed in place, one key at a time, and a look-up of one key is
        # atomic in the interpreter; every tell asks here, and the lock is taken again at the mailbox's put
        return self._refs.get(name)

    def names(self) -> list[str]:
        return [s.name for s in self.specs]

    def tell(self, name: str, message) -> bool:
        """Send by name. A message to a dead or missing actor is dropped: the database has the truth."""
        ref = self.ref(name)
        if ref is None:
            return False
        try:
            ref.tell(message)
            return True
        except pykka.ActorDeadError:
            logger.debug("{} is not running; {} dropped", name, type(message).__name__)
            return False

    def ask(self, name: str, message, timeout: float = 10.0):
        """For the application layer and tests only; actors never ask each other."""
        ref = self.ref(name)
        if ref is None:
            raise LookupError(f"no actor named {name}")
        return ref.ask(message, timeout=timeout)

    def _forget(self, urn: str) -> None:
        """Drop an incarnation's count (the lock held): what waited in its mailbox is not coming."""
        self._incarnations.pop(urn, None)
        self._settled.notify_all()

    def _sent(self, urn: str) -> None:
        with self._lock:
            incarnation = self._incarnations.get(urn)
            if incarnation is not None:
                incarnation.waiting += 1

    def handled(self, name: str, urn: str | None = None) -> None:
        with self._lock:
            incarnation = self._incarnations.get(urn)
            if incarnation is None:  # a replaced incarnation finishing late: its count was dropped with it
                return
            incarnation.waiting -= 1
            waiting = incarnation.waiting
            if waiting == 0:
                self._settled.notify_all()
        assert waiting >= 0, f"{name} handled more messages than it was sent"

    def in_flight(self) -> int:
        """Messages put in a live actor's mailbox and not yet handled (never below zero)."""
        with self._lock:
            return self._waiting()

    def _waiting(self) -> int:  # the lock held
        return sum(i.waiting for i in self._incarnations.values())

    def settle(self, timeout: float) -> bool:
        """Wait until no message is in flight (True) or `timeout` seconds have passed (False): woken as an
        actor handles its last message, where looking again every few milliseconds would spend the CPU the
        actors need."""
        deadline = clockmod.monotonic() + timeout
        with self._settled:
            while self._waiting() > 0:
                left = deadline - clockmod.monotonic()
                if left <= 0:
                    return False
                self._settled.wait(left)
        return True

    def busy(self) -> dict[str, str]:
        """What each live actor's current handler is doing, by name (for `wilson status`)."""
        with self._lock:
            return {i.name: i.handler.what for i in self._incarnations.values() if i.handler.busy}

    # Failures ------------------------------------------------------------
    def crashed(self, name: str, error: BaseException, urn: str | None = None) -> None:
        """`urn`: the incarnation that died. A replaced one failing late, or a death reported twice
        (by Pykka and by the watchdog), must not restart the actor that now has the name."""
        if self._stopping.is_set():
            return
        with self._starting, self._lock:
            current = self._refs.get(name)
            if urn is not None and (current is None or current.actor_urn != urn):
                return
            key = urn or (current.actor_urn if current is not None else name)
            if key in self._restarting:
                return
            self._restarting.add(key)
        self.health[name].state = "restarting"
        threading.Thread(target=self._restart, args=(name, error, key), name=f"restart-{name}", daemon=True).start()

    def _restart(self, name: str, error: BaseException, key: str) -> None:
        try:
            self._restart_once(name, error)
        finally:
            with self._lock:
                self._restarting.discard(key)

    def _restart_once(self, name: str, error: BaseException) -> None:
        health = self.health[name]
        now = clockmod.monotonic()
        health.recent_crashes.append(now)
        health.last_error = redact(f"{type(error).__name__}: {error}")  # `wilson status` may show it
        recent = [t for t in health.recent_crashes if now - t <= self.restart_window]
        if len(recent) > self.max_restarts:
            health.state = "gave-up"
            old = self.ref(name)
            if old is not None:
                with self._lock:
                    self._forget(old.actor_urn)
            logger.error("{} crashed {} times in {}s; not restarting", name, len(recent), self.restart_window)
            return
        backoff = min(self.base_backoff * 2 ** (len(recent) - 1), self.max_backoff)
        clockmod.pause(backoff)
        if self._stopping.is_set():
            return
        spec = next(s for s in self.specs if s.name == name)
        old = self.ref(name)
        if old is not None:
            self._fence(old)
            if old.is_alive():
                old.stop(block=False)
        health.restarts += 1  # counted before the new incarnation can finish anything: whoever sees its work sees it
        self._start_one(spec)
        logger.warning("{} restarted after {:.2f}s ({})", name, backoff, health.last_error)

    def check(self) -> dict[str, str]:
        """Judge every actor by its current handler's age: one past its budget is hung and gets replaced."""
        now = clockmod.monotonic()
        for spec in self.specs:
            ref = self.ref(spec.name)
            health = self.health[spec.name]
            if ref is None or health.state in ("gave-up", "restarting", "stopped"):
                continue
            if not ref.is_alive():
                # Pykka stops an actor whose on_start raised without telling anyone: the watchdog finds it.
                self.crashed(spec.name, RuntimeError("found dead by the watchdog"), ref.actor_urn)
                continue
            with self._lock:
                incarnation = self._incarnations.get(ref.actor_urn)
            if incarnation is None:
                continue
            handler = incarnation.handler
            overdue = handler.overdue(now)
            if overdue > 0:
                health.state = "hung"
                health.last_error = (
                    f"{handler.what or 'a handler'} made no progress for "
                    f"{handler.budget + overdue:.0f}s (budget {handler.budget:.0f}s)"
                )
                logger.error("{} is hung ({})", spec.name, health.last_error)
                self._replace_hung(spec, ref, handler)
            elif health.state == "hung-replaced":
                health.state = "running"
        return {name: h.state for name, h in self.health.items()}

    def _fence(self, old: pykka.ActorRef) -> None:
        """An incarnation that crashed or hung: what it had claimed goes back, and if it ever wakes it
        stops at its next row while the database refuses its results."""
        with self._lock:
            incarnation = self._incarnations.get(old.actor_urn)
        if incarnation is None:
            return
        incarnation.handler.fenced = True
        if self.claims.release is not None:
            try:
                self.claims.release(incarnation.handler.owner)
            except Exception as exc:  # its lease runs out instead
                logger.error("could not release the claims of {}: {}", incarnation.handler.owner, exc)

    def _replace_hung(self, spec: ActorSpec, old: pykka.ActorRef, handler: liveness.Handler) -> None:
        if self._stopping.is_set():
            return
        self._fence(old)
        old.stop(block=False)  # runs whenever the stuck handler returns, if ever
        self._start_one(spec)
        self.health[spec.name].restarts += 1
        self.health[spec.name].state = "hung-replaced"

    def renew_leases(self) -> None:
        """Extend the claims of every actor that is working and on time; a hung or dead one's run out."""
        if self.claims.renew is None:
            return
        now = clockmod.monotonic()
        with self._lock:
            owners = [
                i.handler.owner
                for i in self._incarnations.values()
                if i.handler.busy and not i.handler.fenced and not i.handler.overdue(now)
            ]
        if owners:
            try:
                self.claims.renew(owners)
            except Exception as exc:  # the next round tries again; a lease is longer than three rounds
                logger.warning("could not renew leases: {}", exc)

    def _watch(self) -> None:
        period = self.lease_seconds / 3
        if self.watchdog_seconds > 0:
            period = min(period, self.watchdog_seconds)
        trimmed = clockmod.monotonic()
        while not self._stopping.wait(period):
            self.renew_leases()
            if self.watchdog_seconds > 0:
                self.check()
            if clockmod.monotonic() - trimmed >= memory.TRIM_SECONDS:
                memory.give_back()
                trimmed = clockmod.monotonic()

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
