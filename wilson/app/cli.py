"""bin/wilson: `run` (the long-running process), `status`, `trace ID`, `doctor`, `pair`, `config`, `skills`,
`web-token`, `eval`, `memory`, `watch`, `service`.

A mistake on the command line or in the settings is one line on stderr and exit status 2, never a
traceback; `main` returns the exit status instead of raising SystemExit, so tests can call it in-process.

Each subcommand is a few lines of parser and a short handler that calls into the package doing the
work, so this module is the one place to read what `wilson` offers; the option checks it shares with
wilson-repl are in options.py.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path

import peewee
from playhouse.db_url import schemes

from actors.proposals import make as proposals_make, rules as proposals_rules
from channels import views
from channels.email.settings import status_line as email_status
from channels.telegram.access import PAIRING_TIME, PAIRING_TRIES, start_pairing
from channels.web import watcher
from channels.web.cli import web_token
from storage import engram, recall
from storage.db import open_database
from storage.migrations import migrate
from storage.models import Approval, Cursor, Inbox, Outbox, Task
from wilson import skills
from wilson.app import service
from wilson.app.application import Wilson, channel_roles
from wilson.app.doctor import run_doctor
from wilson.app.eval.report import add_arguments as eval_arguments, main as eval_main
from wilson.app.options import Parser, UsageError, llm_option, log_level_option, one_line, open_config
from wilson.app.repl import main as repl_main
from wilson.kernel import clock as clockmod, config as configmod
from wilson.kernel.bounds import parse_trace_id
from wilson.kernel.redact import redact, register

TELEGRAM_HINT = """No Telegram token set, so Wilson talks to you here in the terminal.
To use Telegram: create a bot with @BotFather, then
  export WILSON_TELEGRAM_TOKEN=...            # never put it in a file you share
  export WILSON_TELEGRAM_ALLOWED_USERS=12345  # your numeric Telegram user id (or use `wilson pair`)
and run `make run` again."""


def database_problem(config) -> str | None:
    """A database URL peewee cannot open at all (a scheme it does not know), said before anything starts."""
    url = str(config.get("database", "url") or "").strip()
    if not url:
        return None

    scheme = url.partition("://")[0].lower()
    if scheme not in schemes:
        known = ", ".join(s for s in ("sqlite", "postgresql") if s in schemes)
        return f"database.url: the scheme {one_line(scheme, 40)!r} is not one Wilson can open (use {known})"
    return None


def cmd_run(opts, config) -> int:
    if not config.get("telegram", "token") and opts.role == "all" and not opts.no_terminal:
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
    open_database(config.get("database", "url"), config.home)
    migrate()


def cmd_status(opts, config) -> int:
    _open(config)
    _out(f"home: {config.home}")
    _out(f"inbox: {Inbox.select().where(Inbox.status == 'pending').count()} pending, "
          f"{Inbox.select().where(Inbox.status == 'failed').count()} failed")
    _out(f"outbox: {Outbox.select().where(Outbox.status == 'pending').count()} pending, "
          f"{Outbox.select().where(Outbox.status == 'retry').count()} waiting to be retried, "
          f"{Outbox.select().where(Outbox.status == 'held').count()} held for quiet hours")
    _out(f"tasks: {Task.select().where(Task.status == 'open').count()} open; "
          f"proposals waiting: {Approval.select().where(Approval.status.in_(('pending', 'partial'))).count()}")
    _out(email_status(config))
    for line in views.model_lines(config):
        _out(line)
    for row in Cursor.select().where(Cursor.name.startswith("health:")):
        _out(f"{row.name[7:]}: {row.value}")
    return 0


def cmd_trace(opts, config) -> int:
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
    lines = [f"config: FIX: {warning}" for warning in config.warnings]
    try:
        lines += run_doctor(config)
    except ValueError as exc:  # a setting the checks cannot use; one line, not a traceback
        lines.append(f"FIX: {exc}")
    for line in lines:
        _out(line)
    return 1 if any("FIX:" in line for line in lines) else 0


def cmd_config(opts, config) -> int:
    if opts.docs:
        print(configmod.docs_markdown(), end="")
        return 0
    for line in configmod.describe(config):
        _out(line)
    return 0


def cmd_web_token(opts, config) -> int:
    _open(config)
    for line in web_token(config, clockmod.RealClock().now()):
        print(line, flush=True)  # the token itself: not redacted, this is where the user reads it
    return 0


def cmd_skills(opts, config) -> int:
    for line in skills.describe(config):
        _out(line)
    return 0


def cmd_eval(opts, config) -> int:
    return eval_main(opts, config)


def cmd_pair(opts, config) -> int:
    _open(config)
    code = start_pairing(clockmod.RealClock().now())
    minutes = int(PAIRING_TIME.total_seconds() // 60)
    print(f"Send this to your bot on Telegram within {minutes} minutes:  /start {code}")
    print(f"The code works once. After {PAIRING_TRIES} wrong codes, or {minutes} minutes, it is void: "
          "run `wilson pair` again for a new one.")
    return 0


def cmd_memory(opts, config) -> int:
    """`memory import FILE.jsonl` (one memory a line) and `memory recall "QUERY"` (best first)."""
    _open(config)
    if opts.action == "import":
        try:
            with open(opts.target, encoding="utf-8", errors="replace") as lines:
                stored, problems = engram.import_lines(lines, clockmod.wall_now())
        except OSError as exc:
            print(f"wilson memory: cannot read {one_line(opts.target, 80)}: {exc.strerror or exc}", file=sys.stderr)
            return 2
        for problem in problems[:20]:
            print(f"wilson memory: {problem}", file=sys.stderr)
        if len(problems) > 20:
            print(f"wilson memory: … and {len(problems) - 20} more lines skipped", file=sys.stderr)
        _out(f"stored {stored} memor{'y' if stored == 1 else 'ies'}"
             + (f"; {len(problems)} line(s) skipped" if problems else ""))
        return 0 if stored or not problems else 1
    rows = recall.recall_rows(opts.target, limit=opts.limit)
    for row in rows:
        if opts.json:
            _out(json.dumps(row, ensure_ascii=False))
        else:
            _out(f"#{row['id']:<6} {row['kind']:<14} {row['score']:.3f}  {row['source'] or '-'}  {row['text']}")
    if not rows and not opts.json:
        _out("nothing recalled")
    return 0


def cmd_watch(opts, config) -> int:
    """`watch add URL [--every 6h]` and `watch remove URL` propose (the gate shows them when Wilson runs);
    `watch list` shows what is watched."""
    _open(config)
    if opts.action == "list":
        watched = [watcher.view(s, config.timezone) for s in watcher.sources()]
        for view in watched:
            _out(" ".join(str(view.get(k) or "") for k in ("url", "every", "last_look") if view.get(k)))
        if not watched:
            _out("nothing watched; `wilson watch add URL` proposes a page or feed")
        return 0
    if not opts.url:
        print(f"wilson watch {opts.action}: which address? e.g. wilson watch {opts.action} https://example.org/feed",
              file=sys.stderr)
        return 2
    tool, args = ("watch", {"url": opts.url}) if opts.action == "add" else ("unwatch", {"url": opts.url})
    if opts.action == "add" and opts.every:
        args["every"] = opts.every
    now = clockmod.wall_now()
    try:
        made = proposals_make.propose_one(
            tool, args, owner=config.get("core", "owner"), channel=_primary(config),
            reason=f"because you asked: wilson watch {opts.action} {one_line(opts.url, 120)}",
            key=f"cli:{tool}:{opts.url}:{now.isoformat()}", now=now, config=config)
    except proposals_rules.CannotPropose as exc:
        print(f"wilson watch: {exc}", file=sys.stderr)
        return 2
    _out(f"Proposal {made.id}: {made.items.get().description}. Nothing changes until you approve it "
         "(Wilson shows it where it talks with you).")
    return 0


def _primary(config) -> str:
    """Where Wilson talks with you when it runs (Telegram when set up, else the terminal)."""
    return channel_roles(config)[0]


def cmd_service(opts, config) -> int:
    result = service.main(opts.action, config.home)
    for line in result.lines:
        _out(f"wilson service {opts.action}: {line}")
    return result.code


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except UsageError as exc:
        print(exc, file=sys.stderr, flush=True)
        return 2
    except SystemExit as exc:  # --help and --version: argparse has printed what was asked
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    except KeyboardInterrupt:
        return 130


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {one_line(text, 20)}") from None
    if not 1 <= value <= 1000:
        raise argparse.ArgumentTypeError("use 1 to 1000")
    return value


def _main(argv: list[str] | None) -> int:
    parser = Parser(prog="wilson", description="Wilson, a proactive assistant.")
    parser.add_argument("--home", help="state directory (default $WILSON_HOME or ~/.wilson)")
    parser.add_argument("--log-level", default="INFO", type=log_level_option, help="INFO, DEBUG, WARNING, ...")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run Wilson (Telegram when configured, else the terminal)")
    run.add_argument("--llm", type=llm_option, help="offline | URL | scripted:FILE | replay:DIR")
    run.add_argument("--role", choices=("all", "worker", "ingress"), default="all",
                     help="several processes on one PostgreSQL database: workers think, one ingress "
                          "listens and keeps time (default: all in one)")
    run.add_argument("--no-terminal", action="store_true",
                     help="never talk through the terminal, even without Telegram (as a service runs)")
    sub.add_parser("status", help="what is waiting, what the models cost today")
    trace = sub.add_parser("trace", help="the path of one stimulus")
    trace.add_argument("id", nargs="?")
    sub.add_parser("doctor", help="check the configured model endpoints")
    sub.add_parser("pair", help="print a one-time code that adds you as the Telegram owner")
    sub.add_parser("skills", help="the installed skills, their tools and channels ([skills] disabled turns one off)")
    sub.add_parser("web-token", help="a new dashboard token (line 1) and a login link (line 2)")
    config_cmd = sub.add_parser("config", help="the settings in effect and where each came from (secrets masked)")
    config_cmd.add_argument("--docs", action="store_true",
                            help="print every setting as Markdown (docs/configuration.md)")

    eval_arguments(sub.add_parser("eval", help="measure how well the model (or the offline rules) serves you, "
                                              "on scenarios with a simulated clock"))
    watch = sub.add_parser("watch", help="propose watching a page or feed (add, remove), or list what is watched")
    watch.add_argument("action", choices=("add", "remove", "list"))
    watch.add_argument("url", nargs="?", help="the page or feed, http or https")
    watch.add_argument("--every", help="add: how often to look, e.g. 30m, 6h, 1d (default [web] watch_poll)")
    memory = sub.add_parser("memory", help="import memories from a JSON-lines file, or recall what Wilson knows")
    memory.add_argument("action", choices=("import", "recall"))
    memory.add_argument("target", help="the file to import (one JSON object a line), or the words to recall by")
    memory.add_argument("--limit", type=positive_int, default=10, help="recall: how many (default 10)")
    memory.add_argument("--json", action="store_true", help="recall: one JSON object a line")
    service = sub.add_parser("service", help="run Wilson as a systemd user service (Linux) or launchd agent (macOS)")
    service.add_argument("action", choices=("install", "status", "uninstall"))
    opts = parser.parse_args(argv)
    if opts.command == "config" and opts.docs:
        return cmd_config(opts, None)  # the schema's documentation needs no settings
    home = Path(opts.home).expanduser() if opts.home else configmod.default_home()
    if home.exists() and not home.is_dir():
        print(f"wilson: {one_line(home)} is a file; --home (or WILSON_HOME) names a directory", file=sys.stderr)
        return 2
    # doctor lists the warnings itself, as things to fix
    config = open_config("wilson", home, first_run=opts.command == "run",
                         warn=opts.command != "doctor")
    if config is None:
        return 2
    register(config.secrets())  # once, before anything can print or log
    problem = database_problem(config)
    if problem:
        print(f"wilson: {redact(problem)}", file=sys.stderr)
        return 2
    handlers = {"run": cmd_run, "status": cmd_status, "trace": cmd_trace, "doctor": cmd_doctor, "pair": cmd_pair,
                "config": cmd_config, "service": cmd_service, "web-token": cmd_web_token, "skills": cmd_skills,
                "eval": cmd_eval, "memory": cmd_memory, "watch": cmd_watch}

    try:
        return handlers[opts.command](opts, config)
    except (OSError, peewee.OperationalError, peewee.InterfaceError) as exc:
        # a database that is down or a home that cannot be written: not a bug, and a service manager
        # may try again (exit 1; 2 would tell it not to)
        where = config.get("database", "url") or str(config.home / "wilson.sqlite3")
        print(f"wilson {opts.command}: cannot use {redact(one_line(where, 80))}: "
              f"{redact(one_line(getattr(exc, 'strerror', None) or exc))}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # `python -m wilson.app.cli`, as the service unit starts it
    sys.exit(main())
