"""bin/wilson: `run` (the long-running process), `status`, `trace ID`, `doctor`, `pair`, `config`."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

from wilson import clock as clockmod
from wilson import config as configmod
from wilson.bounds import parse_trace_id
from wilson.redact import redact, register

TELEGRAM_HINT = """No Telegram token set, so Wilson talks to you here in the terminal.
To use Telegram: create a bot with @BotFather, then
  export WILSON_TELEGRAM_TOKEN=...            # never put it in a file you share
  export WILSON_TELEGRAM_ALLOWED_USERS=12345  # your numeric Telegram user id (or use `wilson pair`)
and run `make run` again."""


def cmd_run(opts, config) -> int:
    from wilson.app import Wilson

    if not config.get("telegram", "token") and opts.role == "all":
        from wilson.repl import main as repl_main

        print(TELEGRAM_HINT, flush=True)
        args = ["--clock", "real", "--log-level", opts.log_level]
        if opts.home:
            args += ["--home", opts.home]
        if opts.llm:
            args += ["--llm", opts.llm]
        return repl_main(args, announce=False)
    app = Wilson(config, clockmod.RealClock(), llm=opts.llm, log_level=opts.log_level, role=opts.role).start()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    where = "on Telegram" if config.get("telegram", "token") else "without a chat channel"
    print(f"Wilson is running {where} (role {opts.role}). Ctrl-C stops it.", flush=True)
    stop.wait()
    app.stop()
    return 0


def _out(text: str) -> None:
    """What the CLI prints about stored state and servers may quote error text: it is redacted first."""
    print(redact(text), flush=True)


def _open(config):
    from storage.db import open_database
    from storage.migrations import migrate

    open_database(config.get("database", "url"), config.home)
    migrate()


def cmd_status(opts, config) -> int:
    from storage.models import Approval, Cursor, Inbox, Outbox, Task, TokenUsage

    _open(config)
    _out(f"home: {config.home}")
    _out(f"inbox: {Inbox.select().where(Inbox.status == 'pending').count()} pending, "
          f"{Inbox.select().where(Inbox.status == 'failed').count()} failed")
    _out(f"outbox: {Outbox.select().where(Outbox.status == 'pending').count()} pending, "
          f"{Outbox.select().where(Outbox.status == 'retry').count()} waiting to be retried, "
          f"{Outbox.select().where(Outbox.status == 'held').count()} held for quiet hours")
    _out(f"tasks: {Task.select().where(Task.status == 'open').count()} open; "
          f"proposals waiting: {Approval.select().where(Approval.status.in_(('pending', 'partial'))).count()}")
    for row in TokenUsage.select().order_by(TokenUsage.day.desc(), TokenUsage.role).limit(6):
        _out(f"model {row.day} {row.role:<6} {row.calls} calls, {row.prompt_tokens}+{row.completion_tokens} tokens")
    for row in Cursor.select().where(Cursor.name.startswith("health:")):
        _out(f"{row.name[7:]}: {row.value}")
    return 0


def cmd_trace(opts, config) -> int:
    from wilson import views

    _open(config)
    if not opts.id:
        _out("recent traces: " + ", ".join(views.latest_traces()))
        return 0
    try:
        trace_id = parse_trace_id(opts.id)
    except ValueError as exc:
        print(f"wilson trace: {exc}", file=sys.stderr)
        return 2
    _out(views.trace_text(trace_id, config.timezone))
    return 0


def cmd_doctor(opts, config) -> int:
    from wilson.doctor import run_doctor

    lines = [f"config: FIX: {warning}" for warning in config.warnings]
    try:
        lines += run_doctor(config)
    except ValueError as exc:  # a setting the checks cannot use; one line, not a traceback
        lines.append(f"FIX: {exc}")
    for line in lines:
        _out(line)
    return 1 if any("FIX:" in line for line in lines) else 0


def cmd_config(opts, config) -> int:
    for line in configmod.describe(config):
        _out(line)
    return 0


def cmd_pair(opts, config) -> int:
    from channels.telegram_access import PAIRING_TIME, PAIRING_TRIES, start_pairing

    _open(config)
    code = start_pairing(clockmod.RealClock().now())
    minutes = int(PAIRING_TIME.total_seconds() // 60)
    print(f"Send this to your bot on Telegram within {minutes} minutes:  /start {code}")
    print(f"The code works once. After {PAIRING_TRIES} wrong codes, or {minutes} minutes, it is void: "
          "run `wilson pair` again for a new one.")
    return 0


def open_config(prog: str, home: Path | None, *, first_run: bool = True, warn: bool = True):
    """What both command lines do first: write the first run's settings file (said on stderr, so --json
    output stays JSON), then load the configuration. None, after one line per problem, when it is unusable."""
    notice = configmod.first_run(home) if first_run else None
    if notice:
        print(notice, file=sys.stderr, flush=True)
    try:
        config = configmod.load(home)
    except ValueError as exc:
        for line in str(exc).splitlines():
            print(f"{prog}: {redact(line)}", file=sys.stderr)
        return None
    for warning in config.warnings if warn else ():
        print(f"{prog}: {redact(warning)}", file=sys.stderr)
    return config


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="wilson", description="Wilson, a proactive assistant.")
    parser.add_argument("--home", help="state directory (default $WILSON_HOME or ~/.wilson)")
    parser.add_argument("--log-level", default="INFO")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run Wilson (Telegram when configured, else the terminal)")
    run.add_argument("--llm", help="offline | URL | scripted:FILE | replay:DIR")
    run.add_argument("--role", choices=("all", "worker", "ingress"), default="all",
                     help="several processes on one PostgreSQL database: workers think, one ingress "
                          "listens and keeps time (default: all in one)")
    sub.add_parser("status", help="what is waiting, what the models cost today")
    trace = sub.add_parser("trace", help="the path of one stimulus")
    trace.add_argument("id", nargs="?")
    sub.add_parser("doctor", help="check the configured model endpoints")
    sub.add_parser("pair", help="print a one-time code that adds you as the Telegram owner")
    sub.add_parser("config", help="the settings in effect and where each came from (secrets masked)")
    opts = parser.parse_args(argv)
    # doctor lists the warnings itself, as things to fix
    config = open_config("wilson", Path(opts.home) if opts.home else None, first_run=opts.command == "run",
                         warn=opts.command != "doctor")
    if config is None:
        return 2
    register(config.secrets())  # once, before anything can print or log
    handlers = {"run": cmd_run, "status": cmd_status, "trace": cmd_trace, "doctor": cmd_doctor, "pair": cmd_pair,
                "config": cmd_config}
    return handlers[opts.command](opts, config)
