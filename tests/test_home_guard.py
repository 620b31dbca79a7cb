"""Safe by default: a simulated clock never runs on a home that lives in real time unless told --force, and
a second Wilson on the same home refuses to start, naming the process that holds it."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.conftest import POSTGRES_URL, reset_postgres
from wilson.app import home_guard
from tests.poll import wait_for

ROOT = Path(__file__).resolve().parent.parent
START = "2027-01-05T08:00:00+01:00"


def clean_env(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WILSON_")}
    env.update({"WILSON_HOME": str(home), "WILSON_CORE_TIMEZONE": "Europe/Berlin", "WILSON_WEB_ENABLED": "false"})
    return env


def repl(home: Path, script: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "bin" / "wilson-repl"), "--llm", "offline", *args],
        input=script,
        text=True,
        capture_output=True,
        timeout=60,
        env=clean_env(home),
        cwd=ROOT,
    )


def start_run(home: Path, log: Path) -> subprocess.Popen:
    with open(log, "wb") as out:
        return subprocess.Popen(
            [sys.executable, str(ROOT / "bin" / "wilson"), "run", "--no-terminal", "--llm", "offline"],
            env=clean_env(home),
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )


def running(log: Path) -> bool:
    return log.exists() and "Wilson is running" in log.read_text(errors="replace")


def test_sim_clock_on_a_home_that_lived_in_real_time_is_refused_unless_forced(tmp_path):
    home = tmp_path / "home"
    real = repl(home, "say hello\n", "--clock", "real")
    assert real.returncode == 0, real.stderr

    refused = repl(home, "now\n", "--clock", "sim", "--start", START)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.count("\n") == 1
    assert "has lived on the real clock" in refused.stderr and "--force" in refused.stderr
    assert not (home / home_guard.SIM_TIME_FILE).exists()  # nothing moved

    forced = repl(home, "now\n", "--clock", "sim", "--start", START, "--force")
    assert forced.returncode == 0, forced.stderr
    assert "· now Tue 05 Jan 2027 08:00" in forced.stdout


def test_a_home_from_before_the_marker_is_known_by_its_database_without_simulated_time(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "wilson.sqlite3").write_bytes(b"SQLite format 3\x00" + bytes(100))
    refused = repl(home, "now\n", "--clock", "sim", "--start", START)
    assert refused.returncode == 2 and "has lived on the real clock" in refused.stderr


def test_a_simulated_home_stays_usable_on_the_simulated_clock(tmp_path):
    home = tmp_path / "home"
    assert repl(home, "advance 1d\n", "--clock", "sim", "--start", START).returncode == 0
    again = repl(home, "now\n", "--clock", "sim")
    assert again.returncode == 0, again.stderr
    assert "· now Wed 06 Jan 2027 08:00" in again.stdout


def test_holding_a_held_home_names_the_holder(tmp_path):
    with home_guard.hold(tmp_path):
        with pytest.raises(home_guard.HomeInUse, match=f"in use by process {os.getpid()}"):
            with home_guard.hold(tmp_path):
                pass
    with home_guard.hold(tmp_path):  # released at the end of the block
        pass


def test_a_second_wilson_on_the_same_home_refuses_and_a_dead_ones_lock_is_taken_over(tmp_path):
    home = tmp_path / "home"
    first = start_run(home, tmp_path / "first.log")
    try:
        wait_for(lambda: running(tmp_path / "first.log"), 60, "the first Wilson to start")

        second = subprocess.run(
            [sys.executable, str(ROOT / "bin" / "wilson"), "run", "--no-terminal"],
            env=clean_env(home),
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert second.returncode == 1 and second.stdout == ""
        assert (
            second.stderr
            == f"wilson run: {home} is in use by process {first.pid}: stop it first, or use another --home\n"
        )

        on_sim = repl(home, "now\n", "--clock", "sim", "--start", START, "--force")
        assert on_sim.returncode == 1 and f"in use by process {first.pid}" in on_sim.stderr

        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
        third = start_run(home, tmp_path / "third.log")
        try:
            wait_for(lambda: running(tmp_path / "third.log"), 60, "a Wilson to start where a killed one held the home")
            assert (home / home_guard.LOCK_FILE).read_text().split() == [str(third.pid)]
        finally:
            third.send_signal(signal.SIGTERM)
            third.wait(timeout=30)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()


@pytest.mark.postgres
@pytest.mark.skipif(not POSTGRES_URL, reason="WILSON_TEST_DATABASE_URL is not set")
def test_the_workers_of_one_postgresql_database_may_share_a_home(tmp_path):
    reset_postgres(POSTGRES_URL, tmp_path)
    home = tmp_path / "home"
    env = {**clean_env(home), "WILSON_DATABASE_URL": POSTGRES_URL}
    logs = [tmp_path / f"worker-{n}.log" for n in range(2)]
    workers = []
    try:
        for log in logs:
            with open(log, "wb") as out:
                workers.append(
                    subprocess.Popen(
                        [sys.executable, str(ROOT / "bin" / "wilson"), "run", "--role", "worker", "--llm", "offline"],
                        env=env,
                        cwd=ROOT,
                        stdout=out,
                        stderr=subprocess.STDOUT,
                        stdin=subprocess.DEVNULL,
                    )
                )
        wait_for(lambda: all(running(log) for log in logs), 60, "both workers to start on the same home")
        assert all(worker.poll() is None for worker in workers)
    finally:
        for worker in workers:
            worker.send_signal(signal.SIGTERM)
        for worker in workers:
            worker.wait(timeout=30)


def role_command(role: str) -> list[str]:
    return [sys.executable, str(ROOT / "bin" / "wilson"), "run", "--role", role, "--no-terminal", "--llm", "offline"]


def start_role(home: Path, log: Path, role: str, database: str) -> subprocess.Popen:
    with open(log, "wb") as out:
        return subprocess.Popen(
            role_command(role),
            env={**clean_env(home), "WILSON_DATABASE_URL": database},
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )


def run_role(home: Path, role: str, database: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        role_command(role),
        env={**clean_env(home), "WILSON_DATABASE_URL": database},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def second_ingress_is_refused(tmp_path: Path, database: str, where: str) -> None:
    """An ingress holds `database`; a second ingress and an `all` from other homes are refused with one line
    naming it, a worker may join, and once the holder is killed a new ingress takes the database over."""
    first = start_role(tmp_path / "a", tmp_path / "first.log", "ingress", database)
    try:
        wait_for(lambda: running(tmp_path / "first.log"), 60, "the first ingress to start")
        holder = f"process {first.pid} on {socket.gethostname()} (role ingress)"
        for role in ("ingress", "all"):
            second = run_role(tmp_path / f"b-{role}", role, database)
            assert second.returncode == 1 and second.stdout == "", second.stdout
            said = [line for line in second.stderr.splitlines() if not line.startswith("First run: ")]
            assert said == [
                f"wilson run: {where} is run by {holder}: stop it first, or start this one with --role worker"
            ]
        worker = start_role(tmp_path / "c", tmp_path / "worker.log", "worker", database)
        try:
            wait_for(lambda: running(tmp_path / "worker.log"), 60, "a worker to join the ingress")
        finally:
            stop(worker)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
        third = start_role(tmp_path / "d", tmp_path / "third.log", "ingress", database)
        try:
            wait_for(lambda: running(tmp_path / "third.log"), 60, "an ingress where a killed one held the database")
        finally:
            stop(third)
    finally:
        stop(first)


def test_a_second_ingress_on_one_sqlite_database_refuses_naming_the_holder(tmp_path):
    shared = tmp_path / "shared" / "wilson.sqlite3"
    second_ingress_is_refused(tmp_path, f"sqlite:///{shared}", f"the database {shared}")


@pytest.mark.postgres
@pytest.mark.skipif(not POSTGRES_URL, reason="WILSON_TEST_DATABASE_URL is not set")
def test_a_second_ingress_on_one_postgresql_database_refuses_naming_the_holder(tmp_path):
    reset_postgres(POSTGRES_URL, tmp_path)
    parts = urlsplit(POSTGRES_URL)
    second_ingress_is_refused(
        tmp_path,
        POSTGRES_URL,
        f"the database {parts.path.lstrip('/')} on {parts.hostname}" + (f":{parts.port}" if parts.port else ""),
    )
