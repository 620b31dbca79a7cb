"""The supervisor with real Pykka actors: order, restart after a crash, hung detection, shutdown."""

from __future__ import annotations

import queue
import threading
from datetime import datetime, timezone

from actors.cortex.actor import CortexActor
from storage import inbox
from storage.models import Inbox
from wilson.kernel import clock as clockmod
from wilson.kernel import config as configmod
from wilson.kernel import liveness
from wilson.kernel.actor import Context, WilsonActor
from wilson.kernel.messages import InboxReady, Ping
from wilson.kernel.supervisor import ActorSpec, Claims, Supervisor
from tests.poll import wait_for

NOW = datetime(2027, 1, 5, 8, 0, tzinfo=timezone.utc)
EVENTS: list[str] = []


class Recorder(WilsonActor):
    budget = 0.2  # seconds a handler may go without progress

    def handler_budget(self, message) -> float:
        return self.budget

    def on_start(self):
        EVENTS.append(f"start {self.name}")

    def on_stop(self):
        EVENTS.append(f"stop {self.name}")

    def receive(self, message):
        if message == "boom":
            raise RuntimeError("boom")
        if isinstance(message, threading.Event):
            message.wait()  # hangs until the test sets it
        if isinstance(message, tuple) and message[0] == "work":
            _, steps, done = message
            for _ in range(steps):  # long, but saying so at each step, as a model call does
                liveness.beat(self.budget)
                done.wait(0.05)


def make(specs, config=None, **kw):
    ctx = Context(config=config, clock=clockmod.SimClock(NOW), synapse=None, directory=None)
    sup = Supervisor(ctx, specs, **kw)  # the watchdog runs as in `wilson run`; tests also call check() themselves
    ctx.directory = sup
    return sup


def test_starts_in_order_and_stops_in_reverse():
    EVENTS.clear()
    sup = make([ActorSpec("a", Recorder), ActorSpec("b", Recorder), ActorSpec("c", Recorder)])
    sup.start()
    sup.stop()
    assert EVENTS == ["start a", "start b", "start c", "stop c", "stop b", "stop a"]


def test_crashed_actor_is_restarted_with_backoff():
    sup = make([ActorSpec("a", Recorder)], base_backoff=0.01)
    sup.start()
    first = sup.ref("a")
    sup.tell("a", "boom")
    assert wait_for(lambda: sup.ref("a") is not first and sup.ref("a").is_alive())
    assert sup.health["a"].restarts == 1
    assert "boom" in sup.health["a"].last_error
    sup.stop()


def test_restart_intensity_limit_gives_up():
    sup = make([ActorSpec("a", Recorder)], base_backoff=0.001, max_restarts=2, restart_window=60)
    sup.start()
    for _ in range(3):
        ref = sup.ref("a")
        sup.tell("a", "boom")
        wait_for(lambda ref=ref: sup.ref("a") is not ref or sup.health["a"].state == "gave-up")
    assert wait_for(lambda: sup.health["a"].state == "gave-up")
    sup.stop()


def test_hung_actor_is_detected_by_its_handler_age_and_replaced():
    sup = make([ActorSpec("a", Recorder)])
    sup.start()
    release = threading.Event()
    hung = sup.ref("a")
    sup.tell("a", release)
    assert wait_for(lambda: sup.busy().get("a") == "Event")
    handler = next(i.handler for i in sup._incarnations.values() if i.name == "a")
    assert wait_for(lambda: handler.overdue(clockmod.monotonic()) > 0)
    states = sup.check()
    assert states["a"] == "hung-replaced"
    assert handler.fenced
    assert sup.ref("a") is not hung
    assert sup.ask("a", Ping(), timeout=10) == "pong"
    release.set()
    sup.stop()


class Stepper(Recorder):
    """A long handler that says it is working at each step, stepping when the test says so."""

    budget = 30.0  # far beyond any stall of a loaded machine: the test moves the clock, not the machine

    def receive(self, message):
        if isinstance(message, queue.Queue):
            while (stepped := message.get()) is not None:
                liveness.beat(self.budget)
                stepped.set()
            return
        super().receive(message)


def test_a_long_handler_that_makes_progress_is_not_hung(monkeypatch):
    """Five budgets long, with a sign of progress at each step: the watchdog leaves it alone.

    Each step takes half a budget on the monotonic clock because the test moves it on (the handler's
    record and the watchdog read the same clock), not because the machine is slow or fast: with real
    waits, a loaded machine that left the actor's thread unscheduled for a budget made it look hung."""
    real, ahead = clockmod.monotonic, [0.0]

    def moved() -> float:
        return real() + ahead[0]

    monkeypatch.setattr(clockmod, "monotonic", moved)
    monkeypatch.setattr(liveness, "monotonic", moved)
    sup = make([ActorSpec("a", Stepper)])
    sup.start()
    first = sup.ref("a")
    steps: queue.Queue = queue.Queue()
    sup.tell("a", steps)
    assert wait_for(lambda: sup.busy().get("a") == "Queue")
    checks = []
    for n in range(10):
        ahead[0] += Stepper.budget / 2  # the step took half a budget: judged just before it says so
        checks.append(sup.check()["a"])
        stepped = threading.Event()
        steps.put(stepped)
        assert stepped.wait(10), f"step {n} was not taken"
    ahead[0] += Stepper.budget / 2
    checks.append(sup.check()["a"])
    steps.put(None)
    assert wait_for(lambda: "a" not in sup.busy())
    assert checks == ["running"] * 11  # five and a half budgets since the handler began
    assert sup.ref("a") is first and sup.health["a"].restarts == 0
    sup.stop()


def test_in_flight_counts_every_message_and_never_goes_below_zero():
    sup = make([ActorSpec("a", Recorder)])
    sup.start()
    release = threading.Event()
    sup.tell("a", release)
    sup.ref("a").tell("direct")  # a self-tell or a direct tell is counted like one by name
    assert sup.in_flight() == 2
    release.set()
    assert wait_for(lambda: sup.in_flight() == 0)
    sup.ask("a", Ping(), timeout=10)
    assert sup.in_flight() == 0
    sup.stop()


def test_messages_left_in_a_crashed_actors_mailbox_are_not_counted_forever():
    sup = make([ActorSpec("a", Recorder)], base_backoff=0.01)
    sup.start()
    first = sup.ref("a")
    release = threading.Event()
    sup.tell("a", release)
    sup.tell("a", "boom")
    sup.tell("a", "after the crash")  # never handled: the actor dies on "boom" first
    release.set()
    assert wait_for(lambda: sup.ref("a") is not first and sup.ref("a").is_alive())
    assert wait_for(lambda: sup.in_flight() == 0)
    sup.stop()


def _settling(sup) -> threading.Thread:
    """A settle with a minute to spare, in a thread: done well before then only if something woke it."""
    waiter = threading.Thread(target=sup.settle, args=(60,), daemon=True)
    waiter.start()
    return waiter


def test_settle_is_woken_by_the_last_message_handled_and_gives_up_at_its_timeout():
    sup = make([ActorSpec("a", Recorder)])
    sup.start()
    release = threading.Event()
    sup.tell("a", release)
    assert sup.settle(0.05) is False and sup.in_flight() == 1  # still held: the timeout ends the wait
    waiter = _settling(sup)
    release.set()
    assert wait_for(lambda: not waiter.is_alive(), what="settle woken as the handler ended")
    assert sup.in_flight() == 0 and sup.settle(0) is True  # nothing in flight: at once
    sup.stop()


def test_settle_is_woken_when_a_crashed_actors_unhandled_messages_are_dropped():
    sup = make([ActorSpec("a", Recorder)], base_backoff=0.01)
    sup.start()
    release = threading.Event()
    sup.tell("a", release)
    sup.tell("a", "boom")
    sup.tell("a", "after the crash")  # never handled: its count goes with the crashed incarnation
    waiter = _settling(sup)
    release.set()
    assert wait_for(lambda: not waiter.is_alive(), what="settle woken as the crashed incarnation was dropped")
    assert sup.in_flight() == 0
    sup.stop()


class CrashOnceCortex(CortexActor):
    """A real cortex whose first run dies mid-row and cannot even record why (say the database went
    away for a moment), so the error escapes and kills the actor."""

    crashes = 0

    def run(self, row):
        kind = type(self)  # counted per class: each test's cortex crashes once
        if kind.crashes == 0:
            kind.crashes += 1
            raise RuntimeError("bug while working on the row")
        inbox.finish(row.id, self.now(), owner=self.owner)

    def contain(self, row, exc):
        raise exc


class CrashesBeforeItsStartReturns(CrashOnceCortex):
    """CrashOnceCortex whose first start() returns to the supervisor only once the crash is being reported: on a
    loaded machine the actor's thread can take its first row and die before the supervisor's thread has the ref."""

    reported = threading.Event()
    starts = 0
    crashes = 0

    @classmethod
    def start(cls, *args, **kwargs):
        cls.starts += 1
        ref = super().start(*args, **kwargs)
        if cls.starts == 1:
            assert cls.reported.wait(10), "the first incarnation never reported its crash"
        return ref


def test_a_crash_reported_before_the_supervisor_has_the_actors_ref_restarts_it_at_once(db, tmp_path):
    row = inbox.add(source="calendar", text="work", priority=2, at=NOW, origin="background")
    sup = make(
        [ActorSpec("cortex", CrashesBeforeItsStartReturns)],
        config=configmod.load(tmp_path, environ={}),
        base_backoff=0.01,
        watchdog_seconds=600,  # the watchdog's round is not what restarts it
        claims=Claims(release=inbox.release_owner),
    )
    report = sup.crashed

    def crashed(*args, **kwargs):
        CrashesBeforeItsStartReturns.reported.set()
        report(*args, **kwargs)

    sup.crashed = crashed  # the actor reports through its directory, this supervisor
    sup.start()
    assert wait_for(lambda: Inbox.get_by_id(row.id).status == "done", what="the row done by the restarted cortex")
    assert sup.health["cortex"].restarts == 1
    sup.stop()


def test_row_in_hand_when_an_actor_crashes_is_not_lost(db, tmp_path):
    row = inbox.add(source="calendar", text="work", priority=2, at=NOW, origin="background")
    sup = make(
        [ActorSpec("cortex", CrashOnceCortex)],
        config=configmod.load(tmp_path, environ={}),
        base_backoff=0.01,
        claims=Claims(release=inbox.release_owner),
    )
    sup.start()
    assert wait_for(lambda: Inbox.get_by_id(row.id).status == "done")
    assert CrashOnceCortex.crashes == 1
    assert sup.health["cortex"].restarts == 1
    assert Inbox.get_by_id(row.id).attempts == 1  # the run raised: that counts against the row
    sup.stop()


def test_message_to_a_missing_actor_is_dropped_not_raised():
    sup = make([])
    assert sup.tell("nobody", InboxReady()) is False
    assert sup.in_flight() == 0


class FailsToStart(WilsonActor):
    attempts = 0

    def on_start(self):
        FailsToStart.attempts += 1
        if FailsToStart.attempts == 1:
            raise RuntimeError("could not open its source")

    def receive(self, message):
        return None


def test_actor_whose_start_failed_is_found_dead_and_restarted():
    sup = make([ActorSpec("a", FailsToStart)], base_backoff=0.01)
    sup.start()
    assert wait_for(lambda: not sup.ref("a").is_alive())
    sup.check()
    assert wait_for(lambda: sup.ref("a").is_alive() and FailsToStart.attempts == 2)
    sup.stop()


class FailsLate(Recorder):
    """Hangs past its budget, then raises: the watchdog has replaced it by the time it fails."""

    reported = threading.Event()

    def receive(self, message):
        if isinstance(message, threading.Event):
            message.wait()
            raise RuntimeError("woke up broken")
        return super().receive(message)

    def on_failure(self, exception_type, exception_value, traceback):
        super().on_failure(exception_type, exception_value, traceback)
        FailsLate.reported.set()


def test_a_replaced_incarnation_failing_late_leaves_its_replacement_alone():
    released = []
    sup = make([ActorSpec("a", FailsLate)], base_backoff=0.01, claims=Claims(release=released.append))
    sup.start()
    release = threading.Event()
    hung = sup.ref("a")
    sup.tell("a", release)
    handler = next(i.handler for i in sup._incarnations.values() if i.name == "a")
    assert wait_for(lambda: handler.overdue(clockmod.monotonic()) > 0)
    assert sup.check()["a"] == "hung-replaced"
    replacement = sup.ref("a")
    release.set()  # the old one fails now and reports its crash
    assert FailsLate.reported.wait(5)
    for thread in [t for t in threading.enumerate() if t.name == "restart-a"]:
        thread.join(5)  # a restart it set off (there must be none) has run its course
    assert sup.ref("a") is replacement and replacement is not hung and replacement.is_alive()
    assert released == [handler.owner]  # only the hung one's claims were released
    assert sup.health["a"].restarts == 1
    sup.stop()
