"""Background work gives way to a user's run (wilson/kernel/lanes.py): while a realtime handler works, a
background loop waits between items, and goes on once the handler ends, waits on another process, or the
wait's bound passes. Each test orders what happened with events, never with sleeps."""

from __future__ import annotations

import threading

import pytest

from actors import floor
from tests.actor_support import RecordingDirectory
from tests.poll import wait_for
from wilson.kernel import lanes
from wilson.kernel.actor import Context, WilsonActor


class UserRun:
    """A thread that works for the user (inside `for_the_user`) until `end()`; `aside=True`: it waits on a model."""

    started: list[UserRun] = []  # ended after each test, passed or failed, so one failure stays one

    def __init__(self, aside: bool = False):
        UserRun.started.append(self)
        self.inside = threading.Event()
        self.release = threading.Event()
        self.log: list[str] = []
        self.aside = aside
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        assert self.inside.wait(10)

    def _run(self) -> None:
        with lanes.for_the_user():
            if self.aside:
                with lanes.waiting():
                    self.inside.set()
                    self.release.wait(30)
            else:
                self.inside.set()
                self.release.wait(30)
            self.log.append("user run ended")

    def end(self) -> None:
        self.release.set()
        self.thread.join(10)


def background(log: list[str], step=lambda: lanes.give_way(limit=30)) -> threading.Thread:
    """A background loop's one step in a thread of its own: it gives way, then logs that it went on."""

    def run():
        step()
        log.append("background went on")

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@pytest.fixture(autouse=True)
def no_message_on_its_way(monkeypatch):
    # an earlier test's user message may still be "on its way" for a tenth of a second
    monkeypatch.setattr(lanes, "_handover_until", 0.0)
    yield
    while UserRun.started:
        UserRun.started.pop().end()


def test_a_background_loop_waits_for_the_users_run_and_goes_on_when_it_ends():
    run = UserRun()
    loop = background(run.log)
    wait_for(lambda: lanes.giving_way() == 1, what="the background loop to give way")
    run.end()
    loop.join(10)
    assert run.log == ["user run ended", "background went on"]
    assert lanes.serving() == 0 and lanes.giving_way() == 0


def test_the_triage_floor_gives_way_before_each_row_it_judges():
    run = UserRun()
    row = type("Row", (), {"channel": "calendar", "text": "", "payload": {"change": "moved"}})()
    loop = background(run.log, lambda: floor.row_alarm(row, None, None))
    wait_for(lambda: lanes.giving_way() == 1, what="the floor to give way")
    run.end()
    loop.join(10)
    assert run.log == ["user run ended", "background went on"]


def test_a_user_run_waiting_on_the_model_lets_background_work_run():
    run = UserRun(aside=True)
    loop = background(run.log)
    loop.join(10)
    assert run.log == ["background went on"] and lanes.serving() == 0
    run.end()
    assert run.log == ["background went on", "user run ended"]


def test_giving_way_is_bounded_so_background_work_never_starves():
    run = UserRun()
    loop = background(run.log, lambda: lanes.give_way(limit=0.05))
    loop.join(10)
    assert run.log == ["background went on"] and lanes.serving() == 1  # the user's run is still working
    run.end()


def test_a_thread_working_for_the_user_never_waits_for_another():
    run = UserRun()
    done = threading.Event()

    def second_user_run():
        with lanes.for_the_user():
            lanes.give_way(limit=30)
            done.set()

    threading.Thread(target=second_user_run, daemon=True).start()
    assert done.wait(10) and not run.release.is_set()
    run.end()


def test_a_message_on_its_way_holds_background_work_until_a_realtime_handler_takes_it_up():
    lanes.arrived()
    log: list[str] = []
    loop = background(log)
    wait_for(lambda: lanes.giving_way() == 1, what="the background loop to give way")
    run = UserRun()  # the realtime lane takes the message up: from now on its run counts itself
    run.log = log
    run.end()
    loop.join(10)
    assert log == ["user run ended", "background went on"]


def test_a_message_nobody_takes_up_holds_background_work_only_for_its_hand_over(monkeypatch):
    monkeypatch.setattr(lanes, "HANDOVER_SECONDS", 1.0)  # long enough to be seen waiting, however loaded the machine
    lanes.arrived()
    log: list[str] = []
    loop = background(log)
    wait_for(lambda: lanes.giving_way() == 1 or log, what="the background loop to give way")
    assert log == [], "it went on while the message was on its way"
    loop.join(10)
    assert log == ["background went on"] and lanes.serving() == 0


class Recorder(WilsonActor):
    name = "recorder"

    def receive(self, message):
        return lanes.serving()


@pytest.mark.parametrize("serves_user", [True, False])
def test_a_handler_of_a_users_run_counts_as_work_for_the_user(serves_user):
    # the cortex's realtime lane serves the user; a channel, realtime for its writes, may spend seconds on the network
    kind = type("UserRecorder" if serves_user else "OtherRecorder", (Recorder,), {"serves_user": serves_user})
    actor = kind.start(Context(config=None, clock=None, synapse=None, directory=RecordingDirectory(strict=True)))
    try:
        assert actor.ask("look", timeout=10) == (1 if serves_user else 0)
    finally:
        actor.stop()
    assert lanes.serving() == 0
