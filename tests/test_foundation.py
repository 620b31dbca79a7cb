"""The nervous system end to end: durable across kill -9, clean shutdown, the REPL contract."""

from __future__ import annotations


import json
import os
import signal
import subprocess
import sys

import pytest

from storage import trace
from storage.db import open_database
from storage.models import Inbox, Outbox
from tests.conftest import ROOT
from wilson.app.repl import CommandError, parse
from wilson.model.scripted import ScriptedServer
from tests.process_support import REPL, deliveries, run_repl, wait_for  # noqa: F401 (used below)


def test_newcomer_says_hello_and_gets_an_answer(tmp_path):
    result = run_repl(tmp_path, "say hello\nquit\n", "--llm", "offline")
    assert result.returncode == 0, result.stderr
    replies = deliveries(result.stdout)
    assert len(replies) == 1
    assert replies[0]["channel"] == "repl" and "Wilson" in replies[0]["text"]
    assert replies[0]["approval"] is None and replies[0]["at"]


def test_wilson_run_without_telegram_serves_the_terminal(tmp_path):
    # no dashboard on a fixed port in a test
    env = dict(os.environ, WILSON_HOME=str(tmp_path), WILSON_WEB_ENABLED="false")
    env.pop("WILSON_TELEGRAM_TOKEN", None)
    result = subprocess.run(
        [sys.executable, str(ROOT / "bin" / "wilson"), "run", "--llm", "offline"],
        input="say hello\nquit\n",
        text=True,
        capture_output=True,
        timeout=60,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert "WILSON_TELEGRAM_TOKEN" in result.stdout  # it says how to set Telegram up
    assert "Wilson" in result.stdout.split("WILSON_TELEGRAM_ALLOWED_USERS", 1)[1]


def test_stimulus_survives_kill_9_and_is_answered_exactly_once(tmp_path):
    home = tmp_path / "home"
    with ScriptedServer([{"match": {"role": "deep"}, "reply": {"text": "slow hello"}, "latency_ms": 30000}]) as server:
        env = dict(os.environ, WILSON_LLM_BASE_URL=server.base_url, WILSON_LLM_MODEL="m", WILSON_WEB_ENABLED="false")
        proc = subprocess.Popen(
            REPL + ["--home", str(home), "--json"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        proc.stdin.write("say hello from before the crash\n")
        proc.stdin.flush()
        db_file = home / "wilson.sqlite3"
        assert wait_for(lambda: db_file.exists())
        db = open_database(None, home)
        assert wait_for(lambda: Inbox.select().where(Inbox.status == "claimed").exists())
        assert wait_for(lambda: len(server.requests) >= 1)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        row = Inbox.get()
        assert row.status == "claimed"
        assert not Outbox.select().where(Outbox.channel == "repl").exists()
        db.close()

    # Restart with a model that answers: the row is picked up again and answered once.
    for _ in range(2):
        result = run_repl(home, "wait\nquit\n", "--llm", "offline")
        assert result.returncode == 0, result.stderr
    db = open_database(None, home)
    row = Inbox.get()
    assert row.status == "done"
    replies = list(Outbox.select().where(Outbox.channel == "repl"))
    assert len(replies) == 1 and replies[0].status == "delivered"
    stages = [t.stage for t in trace.path(row.trace_id)]
    assert stages.count("claimed") == 2 and stages.count("delivered") == 1
    db.close()


def test_shutdown_with_work_in_flight_stops_every_actor_and_loses_nothing(make_app, tmp_path):
    with ScriptedServer([{"match": {"role": "deep"}, "reply": {"text": "ok"}, "latency_ms": 200}]) as server:
        app = make_app(llm=server.base_url)
        rows = [app.say(f"message {n}") for n in range(8)]
        # in flight: a message is claimed and its model call has reached the server, with more waiting
        assert wait_for(
            lambda: (
                server.requests
                and Inbox.select().where(Inbox.status == "claimed").exists()
                and Inbox.select().where(Inbox.status == "pending").exists()
            )
        )
        refs = {name: app.supervisor.ref(name) for name in app.supervisor.names()}
        app.stop()
        assert [name for name, ref in refs.items() if ref.is_alive()] == [], "abandoned instead of stopped"
    app = make_app(llm="offline")
    assert app.wait_idle(timeout=60)
    for row in rows:
        assert Inbox.get_by_id(row.id).status == "done"
        assert Outbox.select().where(Outbox.idempotency_key == f"reply:{row.id}").count() == 1


@pytest.mark.parametrize(
    "line, name, args",
    [
        ("say hello there", "say", ("hello there",)),
        ("approve 3", "approve", (3, ())),
        ("approve 3 1,2", "approve", (3, (1, 2))),
        ("reject 4 7", "reject", (4, (7,))),
        ("modify 3 book flights by Feb 1", "modify", (3, "book flights by Feb 1")),
        ("email ann@example.org | Invoice | due Friday", "email", ("ann@example.org", "Invoice", "due Friday")),
        ("trace abc123", "trace", ("abc123",)),
        ("tasks", "tasks", ()),
    ],
)
def test_repl_commands_parse(line, name, args):
    command = parse(line)
    assert command.name == name and command.args == args


def test_repl_calendar_add_parses_dates_and_location():
    command = parse('calendar add "Trip to Japan" @ 2027-04-10 -> 2027-04-24; Tokyo')
    title, start, end, location = command.args
    assert (title, str(start), str(end), location) == ("Trip to Japan", "2027-04-10", "2027-04-24", "Tokyo")


@pytest.mark.parametrize("line", ["calender", "approve x", "advance soon", "calendar add nothing", "email a | b"])
def test_repl_rejects_malformed_commands_with_a_reason(line):
    with pytest.raises(CommandError) as info:
        parse(line)
    assert str(info.value)


def test_repl_session_goes_on_after_a_bad_command(tmp_path):
    result = run_repl(
        tmp_path,
        "calender\nsay hello\nquit\n",
        "--llm",
        "offline",
        "--clock",
        "sim",
        "--start",
        "2027-01-05T08:00:00+01:00",
    )
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines[0]["type"] == "error" and "did you mean calendar" in lines[0]["error"]
    assert any(d["type"] == "delivery" for d in lines[1:])


def test_trace_shows_the_path_of_a_stimulus_in_the_repl_and_the_cli(tmp_path):
    result = run_repl(tmp_path, "say hello\nquit\n", "--llm", "offline")
    assert result.returncode == 0, result.stderr
    db = open_database(None, tmp_path)
    trace_id = Inbox.get().trace_id
    db.close()
    result = run_repl(tmp_path, f"trace {trace_id}\nquit\n", "--llm", "offline")
    steps = [line for line in map(json.loads, result.stdout.splitlines()) if line["type"] == "trace"][0]["steps"]
    # the thalamus routes it, the cortex claims it and picks a model role (here the offline rules answer,
    # traced as such with the rule), replies, and the channel delivers
    stages = [s["stage"] for s in steps]  # (the offline rule's step is timed when it answered, within the run)
    assert stages[:2] == ["routed", "claimed"] and stages[-1] == "delivered"
    assert sorted(stages[2:-1]) == ["offline", "replied", "routed"]
    assert all(s["reason"] for s in steps)
    cli = subprocess.run(
        [sys.executable, str(ROOT / "bin" / "wilson"), "--home", str(tmp_path), "trace", trace_id],
        text=True,
        capture_output=True,
        timeout=60,
    )
    assert cli.returncode == 0 and "claimed" in cli.stdout and "delivered" in cli.stdout
    status = subprocess.run(
        [sys.executable, str(ROOT / "bin" / "wilson"), "--home", str(tmp_path), "status"],
        text=True,
        capture_output=True,
        timeout=60,
    )
    assert status.returncode == 0 and "inbox: 0 pending" in status.stdout and "no tokens are spent" in status.stdout
