"""bin/wilson: `run` (the long-running process), `status`, `budget`, `trace ID`, `doctor`, `pair`, `config`,
`skills`, `web-token`, `eval`, `memory`, `watch`, `mcp`, `service`.

A mistake on the command line or in the settings is one line on stderr and exit status 2, never a
traceback; `main` returns the exit status instead of raising SystemExit, so tests can call it in-process.

Each subcommand is a few lines of parser here and a short handler in commands.py (`run`'s in run.py),
loaded only once a command is chosen: `wilson --help` and a mistake on the command line need none of the application.
The option checks shared with wilson-repl and wilson eval are in options.py.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import peewee
from playhouse.db_url import parse, schemes

from wilson.app.options import Parser, UsageError, eval_arguments, llm_option, log_level_option, one_line, open_config
from wilson.kernel import config as configmod
from wilson.kernel.logs import setup_logging
from wilson.kernel.redact import redact, register


def database_problem(config) -> str | None:
    """A database URL peewee cannot open at all (a scheme it does not know, no database named), said before
    anything starts; never the URL itself, which may hold a password."""
    url = str(config.get("database", "url") or "").strip()
    if not url:
        return None

    scheme = url.partition("://")[0].lower()
    if scheme not in schemes:
        known = ", ".join(s for s in ("sqlite", "postgresql") if s in schemes)
        return f"database.url: the scheme {one_line(scheme, 40)!r} is not one Wilson can open (use {known})"
    try:
        named = parse(url).get("database")
    except ValueError as exc:  # a port that is not a number, and the like (the message names no password)
        return f"database.url cannot be read: {one_line(str(exc), 80)}"
    if not named:
        return (
            f"database.url names no database: local ones take three slashes ({scheme}:///path), remote ones "
            f"{scheme}://host/dbname"
        )
    return None


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


def _handler(opts):
    """The chosen command's handler, its module loaded only now: --help and a usage error need none of the
    application, and `wilson run` none of the packages that only the other commands call."""
    if opts.command == "run":
        # lazy: the application and what starting it needs (the first answer waits for every import)
        from wilson.app.run import cmd_run

        return cmd_run
    # lazy: the commands load the whole application (about 0.6 s)
    from wilson.app import commands

    return {
        "status": commands.cmd_status,
        "budget": commands.cmd_budget,
        "trace": commands.cmd_trace,
        "doctor": commands.cmd_doctor,
        "pair": commands.cmd_pair,
        "config": commands.cmd_config,
        "service": commands.cmd_service,
        "web-token": commands.cmd_web_token,
        "skills": commands.cmd_skills,
        "eval": commands.cmd_eval,
        "memory": commands.cmd_memory,
        "watch": commands.cmd_watch,
        "mcp": commands.cmd_mcp,
        "telegram": commands.cmd_telegram,
        "account": commands.cmd_account,
    }[opts.command]


def _main(argv: list[str] | None) -> int:
    parser = Parser(prog="wilson", description="Wilson, a proactive assistant.")
    parser.add_argument("--home", help="state directory (default $WILSON_HOME or ~/.wilson)")
    parser.add_argument(
        "--log-level",
        type=log_level_option,
        help="INFO, DEBUG, WARNING, ... (default: INFO for run, WARNING for the other commands; "
        "eval writes its runs' logs to --log)",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run Wilson (Telegram when configured, else the terminal)")
    run.add_argument("--llm", type=llm_option, help="offline | URL | scripted:FILE | replay:DIR")
    run.add_argument(
        "--role",
        choices=("all", "worker", "ingress"),
        default="all",
        help="several processes on one PostgreSQL database: workers think, one ingress "
        "listens and keeps time (default: all in one)",
    )
    run.add_argument(
        "--no-terminal",
        action="store_true",
        help="never talk through the terminal, even without Telegram (as a service runs)",
    )
    sub.add_parser("status", help="what is waiting, what the models cost today")
    budget = sub.add_parser("budget", help="tokens and roughly what they cost, per day and model role")
    budget.add_argument("--days", type=positive_int, default=7, help="how many days with model use (default 7)")
    trace = sub.add_parser("trace", help="the path of one stimulus")
    trace.add_argument("id", nargs="?")
    sub.add_parser("doctor", help="check the models and each configured channel (mail, calendar, Telegram) for real")
    sub.add_parser("pair", help="print a one-time code that adds you as the Telegram owner")
    sub.add_parser("skills", help="the installed skills, their tools and channels ([skills] disabled turns one off)")
    sub.add_parser("web-token", help="a new dashboard token (line 1) and a login link (line 2)")
    config_cmd = sub.add_parser("config", help="the settings in effect and where each came from (secrets masked)")
    config_cmd.add_argument(
        "--docs", action="store_true", help="print every setting as Markdown (docs/configuration.md)"
    )

    eval_arguments(
        sub.add_parser(
            "eval",
            help="measure how well the model (or the offline rules) serves you, on scenarios with a simulated clock",
        )
    )
    watch = sub.add_parser("watch", help="propose watching a page or feed (add, remove), or list what is watched")
    watch.add_argument("action", choices=("add", "remove", "list"))
    watch.add_argument("url", nargs="?", help="the page or feed, http or https")
    watch.add_argument("--every", help="add: how often to look, e.g. 30m, 6h, 1d (default [web] watch_poll)")
    memory = sub.add_parser("memory", help="import memories from a JSON-lines file, or recall what Wilson knows")
    memory.add_argument("action", choices=("import", "recall"))
    memory.add_argument("target", help="the file to import (one JSON object a line), or the words to recall by")
    memory.add_argument("--limit", type=positive_int, default=10, help="recall: how many (default 10)")
    memory.add_argument("--json", action="store_true", help="recall: one JSON object a line")
    mcp = sub.add_parser(
        "mcp",
        help="add an MCP server ([mcp.servers.NAME]), test one (connect, list its tools), "
        "or serve Wilson to another agent over stdio",
        usage="wilson mcp add NAME -- COMMAND [ARG...] | wilson mcp add NAME --url URL | "
        "wilson mcp test NAME | wilson mcp serve",
    )
    mcp.add_argument("action", choices=("add", "test", "serve"))
    mcp.add_argument("name", nargs="?", help="add, test: the server's NAME in [mcp.servers.NAME]")
    mcp.add_argument(
        "server_command",
        nargs="*",
        metavar="COMMAND",
        help="add: the program that runs the server over stdio, after --",
    )
    mcp.add_argument("--url", help="add: a server reached over streamable HTTP instead")
    account = sub.add_parser(
        "account",
        help="add a Google or Microsoft account: sign in on any device, and mail "
        "logs in with it (OAuth) instead of a password",
    )
    account.add_argument("action", choices=("add",))
    account.add_argument("provider", choices=("google", "microsoft"))
    account.add_argument("--email", default="", help="the account's address (default: [email] username)")
    telegram = sub.add_parser(
        "telegram", help="the chats the bot is in: ids, whether topics are on, whether the bot may manage them"
    )
    telegram.add_argument("action", choices=("chats",))
    service = sub.add_parser("service", help="run Wilson as a systemd user service (Linux) or launchd agent (macOS)")
    service.add_argument("action", choices=("install", "status", "uninstall"))
    opts = parser.parse_args(argv)
    handler = _handler(opts)
    if opts.command == "config" and opts.docs:
        return handler(opts, None)  # the schema's documentation needs no settings
    home = Path(opts.home).expanduser() if opts.home else configmod.default_home()
    if home.exists() and not home.is_dir():
        print(f"wilson: {one_line(home)} is a file; --home (or WILSON_HOME) names a directory", file=sys.stderr)
        return 2
    # doctor lists the warnings itself, as things to fix
    config = open_config("wilson", home, first_run=opts.command == "run", warn=opts.command != "doctor")
    if config is None:
        return 2
    register(config.secrets())  # once, before anything can print or log
    if opts.command != "run":  # a command's answer is its output: what it logs on the way is for when it fails
        setup_logging(config.secrets(), level=opts.log_level or "WARNING")
    problem = database_problem(config)
    if problem:
        print(f"wilson: {redact(problem)}", file=sys.stderr)
        return 2
    try:
        return handler(opts, config)
    except (OSError, peewee.OperationalError, peewee.InterfaceError) as exc:
        # a database that is down or a home that cannot be written: not a bug, and a service manager
        # may try again (exit 1; 2 would tell it not to)
        where = config.get("database", "url") or str(config.home / "wilson.sqlite3")
        print(
            f"wilson {opts.command}: cannot use {redact(one_line(where, 80))}: "
            f"{redact(one_line(getattr(exc, 'strerror', None) or exc))}",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":  # `python -m wilson.app.cli`, as the service unit starts it
    sys.exit(main())
