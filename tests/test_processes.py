"""Several Wilson processes on one PostgreSQL database: one ingress, several workers.

The processes are the real `bin/wilson run --role …`, talking to a fake Bot API and a
scripted model server in this process. What is checked is what the user sees (the
fake Bot API's record of sent messages) and what the database holds.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from storage.models import Inbox, Schedule, Trace
from tests.conftest import POSTGRES_URL, empty_postgres
from tests.brain import context_of
from tests.crash_workload import OWNER, TAG, RecordingTelegram, model_reply
from wilson.model.scripted import ScriptedServer
from tests.poll import wait_for

ROOT = Path(__file__).resolve().parent.parent
LEASE = 3  # seconds: short, so a killed worker's rows are taken over within the test

pytestmark = [pytest.mark.postgres, pytest.mark.skipif(not POSTGRES_URL, reason="WILSON_TEST_DATABASE_URL is not set")]


class Gate:
    """Holds the model's first answer about one tagged message until released, so that a test can kill the
    worker waiting for it while that worker surely holds its row (however slow the machine is)."""

    def __init__(self, tag: str | None = None):
        self.tag, self.entered, self.released = tag, threading.Event(), threading.Event()

    def reply(self, body: dict) -> dict:
        text = (context_of(body).get("stimulus") or {}).get("text") or ""
        if self.tag and self.tag in text and not self.released.is_set():
            self.entered.set()
            self.released.wait(60)
        return model_reply(body)


class Cluster:
    def __init__(self, tmp_path: Path, fake: RecordingTelegram, model: ScriptedServer, gate: Gate):
        self.tmp_path, self.fake, self.model, self.gate = tmp_path, fake, model, gate
        self.procs: dict[str, subprocess.Popen] = {}

    def env(self, name: str, telegram: bool = True) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith("WILSON_")}
        home = self.tmp_path / name
        home.mkdir(exist_ok=True)
        env.update(
            {
                "WILSON_HOME": str(home),
                "WILSON_WEB_ENABLED": "false",  # no dashboard on a fixed port in a test
                "WILSON_DATABASE_URL": POSTGRES_URL,
                "WILSON_TELEGRAM_TOKEN": self.fake.token,
                "WILSON_TELEGRAM_BASE_URL": self.fake.base_url,
                "WILSON_TELEGRAM_ALLOWED_USERS": str(OWNER),
                "WILSON_TELEGRAM_POLL_TIMEOUT": "1",
                "WILSON_LLM_BASE_URL": self.model.base_url,
                "WILSON_LLM_MODEL": "scripted",
                "WILSON_CORE_TIMEZONE": "Europe/Berlin",
                "WILSON_CORE_QUIET_HOURS": "off",
                "WILSON_CORE_POLL_SECONDS": "1",
                "WILSON_TICK_INTERVAL_SECONDS": "0.2",
                "WILSON_SUPERVISOR_LEASE_SECONDS": str(LEASE),
                "WILSON_SUPERVISOR_WATCHDOG_SECONDS": "1",
            }
        )
        if not telegram:
            del env["WILSON_TELEGRAM_TOKEN"]
        return env

    def start(self, name: str, role: str, telegram: bool = True) -> None:
        log = open(self.tmp_path / f"{name}.log", "wb")
        self.procs[name] = subprocess.Popen(
            [sys.executable, str(ROOT / "bin" / "wilson"), "--log-level", "WARNING", "run", "--role", role],
            env=self.env(name, telegram),
            cwd=str(ROOT),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        log.close()

    def kill(self, name: str) -> None:
        proc = self.procs[name]
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def log(self, name: str) -> str:
        return (self.tmp_path / f"{name}.log").read_text(errors="replace")


@pytest.fixture
def cluster(tmp_path):
    empty_postgres(POSTGRES_URL, tmp_path)  # migrated here: the processes started next find it done
    # 100 ms a call: the workers' claims overlap, so the work is shared
    gate = Gate()
    model = ScriptedServer([{"match": lambda body, headers: True, "reply": gate.reply, "latency_ms": 100}])
    model.start()
    fake = RecordingTelegram()
    fake.start()
    made = Cluster(tmp_path, fake, model, gate)
    yield made
    gate.released.set()
    made.stop()
    fake.stop()
    model.stop()


def answers(fake: RecordingTelegram) -> Counter:
    """How many times each tagged message was answered, by what the user was shown."""
    return Counter(
        found.group(0)
        for sent in fake.shown_copy()
        if (found := TAG.search(sent.get("text") or "")) and "Answer to" in sent["text"]
    )


@pytest.mark.slow
def test_three_workers_and_an_ingress_answer_each_message_once_even_when_a_worker_dies(cluster):
    cluster.start("ingress", "ingress")
    for n in range(3):
        cluster.start(f"worker-{n}", "worker")
    tags = [f"[m{i}]" for i in range(300)]
    cluster.gate.tag = "[m100]"
    for index, tag in enumerate(tags):
        cluster.fake.send_text(OWNER, f"chat {tag} how is it going")
        if index == 100:
            # a worker dies holding a row it claimed (its model call held): its lease runs out, another takes it
            # a hundred messages before it: on a loaded machine that can take a while (a bound, not a pause)
            assert cluster.gate.entered.wait(120), "no worker asked the model about [m100]"
            held = Inbox.get((Inbox.kind == "message") & Inbox.text.contains("[m100]"))
            assert held.status == "claimed"
            victim = next(n for n in cluster.procs if f":{cluster.procs[n].pid}:" in held.owner)
            cluster.kill(victim)
            cluster.gate.released.set()
            still = Inbox.get_by_id(held.id)
            assert (still.status, still.owner) == ("claimed", held.owner)
    wait_for(
        lambda: len(answers(cluster.fake)) == len(tags),
        120,
        f"every message answered (ingress log: {cluster.log('ingress')[-3000:]})",
    )
    counts = answers(cluster.fake)
    assert set(counts) == set(tags)
    assert [tag for tag, n in counts.items() if n != 1] == []
    assert Inbox.select().where(Inbox.kind == "message").count() == len(tags)
    assert Inbox.select().where((Inbox.kind == "message") & (Inbox.status != "done")).count() == 0
    owners = {r.owner.split("/")[0] for r in Inbox.select(Inbox.owner).where(Inbox.owner.is_null(False))}
    assert len(owners) >= 2  # the work was really shared
    taken = Inbox.get_by_id(held.id)
    assert taken.status == "done" and taken.owner != held.owner
    assert not [n for n in cluster.procs if "Traceback" in cluster.log(n)]
    assert Trace.select().where((Trace.trace_id == taken.trace_id) & Trace.reason.contains("taken over")).exists()


def test_a_schedule_due_now_fires_once_and_a_second_ingress_is_refused(cluster):
    first = datetime.now(timezone.utc) + timedelta(seconds=4)  # after the ingress is up and ticking
    later = first + timedelta(seconds=2)  # by when it has ticked ten times since the first
    for name, due in (("water the plants", first), ("call mum", later)):
        Schedule.create(
            name=name,
            cron="0 9 * * *",
            kind="reminder",
            text=name.capitalize(),
            timezone="Europe/Berlin",
            next_fire_at=due,
            staleness_seconds=3600,
        )
    cluster.start("ingress-0", "ingress")
    wait_for(lambda: "Wilson is running on Telegram" in cluster.log("ingress-0"), 60, "the ingress to start")
    # a second process that would keep time and poll Telegram on the same database is refused, told by whom
    cluster.start("ingress-1", "ingress")
    assert cluster.procs["ingress-1"].wait(timeout=60) == 1
    said = [line for line in cluster.log("ingress-1").splitlines() if not line.startswith("First run: ")]
    assert len(said) == 1 and said[0].startswith("wilson run: the database ")
    assert said[0].endswith(
        f" is run by process {cluster.procs['ingress-0'].pid} on {socket.gethostname()} "
        "(role ingress): stop it first, or start this one with --role worker"
    )
    wait_for(lambda: Inbox.select().where(Inbox.kind == "reminder").count() >= 2, 60, "both reminders")
    fired = Counter(row.payload["schedule"] for row in Inbox.select().where(Inbox.kind == "reminder"))
    assert fired == {"water the plants": 1, "call mum": 1}
    cluster.start("worker", "worker")
    cluster.fake.send_text(OWNER, "chat [m1] still there?")  # and the ingress with its worker answers
    wait_for(lambda: answers(cluster.fake)["[m1]"] >= 1, 30, "the answer")
    assert answers(cluster.fake) == {"[m1]": 1}
    assert cluster.procs["ingress-0"].poll() is None and cluster.procs["worker"].poll() is None
    assert not [n for n in cluster.procs if "Traceback" in cluster.log(n)]
