"""What each `wilson` subcommand but `run` does, a short handler each, calling into the package that does the work.

bin/wilson parses the command line in cli.py and loads this module only once a command is chosen:
`wilson --help` and a usage error need none of what the commands import (the whole application), and
`wilson run` (run.py) none of the packages only these commands call.

Size: one short handler per subcommand, each a few lines that call into the package doing the work; split
across modules they would only scatter what cli.py dispatches to."""

from __future__ import annotations

import json
import sys

from loguru import logger

from actors.proposals import make as proposals_make, rules as proposals_rules
from channels import accounts, views
from channels.email.settings import status_line as email_status
from channels.mcp import serve as mcp_serve_module, servers as mcp_servers, skill as mcp_skill
from channels.telegram import chats as telegram_chats
from channels.telegram.access import PAIRING_TIME, PAIRING_TRIES, start_pairing
from channels.web import watcher
from channels.web.cli import web_token
from storage import engram, recall
from storage.db import open_database
from storage.migrations import migrate
from storage.models import Approval, ApprovalItem, Cursor, Inbox, Outbox, Task
from wilson import skills
from wilson.app import checkup, service
from wilson.app.application import channel_roles
from wilson.app.doctor import run_doctor
from wilson.app.eval.report import main as eval_main
from wilson.app.options import one_line
from wilson.kernel import clock as clockmod, config as configmod
from wilson.kernel.bounds import parse_trace_id
from wilson.kernel.redact import redact


PAIR_FIRST = "wilson pair: there is no Telegram bot to pair with yet: no token is set (what to do first is above)."
PAIR_STEPS = """First make the bot:
  1. In Telegram, open @BotFather, send /newbot and pick a name; it answers with a token.
  2. export WILSON_TELEGRAM_TOKEN=...   # never put it in a file you share
  3. Start Wilson (`wilson run`, or `make run`) and leave it running.
Then run `wilson pair` again in another terminal and send the code it prints to your bot."""


def _out(text: str) -> None:
    """What the CLI prints about stored state and servers may quote error text: it is redacted first."""
    print(redact(text), flush=True)


def _open(config):
    open_database(config.get("database", "url"), config.home)
    migrate()


def cmd_status(opts, config) -> int:
    _open(config)
    _out(f"home: {config.home}")
    _out(
        f"inbox: {Inbox.select().where(Inbox.status == 'pending').count()} pending, "
        f"{Inbox.select().where(Inbox.status == 'failed').count()} failed"
    )
    _out(
        f"outbox: {Outbox.select().where(Outbox.status == 'pending').count()} pending, "
        f"{Outbox.select().where(Outbox.status == 'retry').count()} waiting to be retried, "
        f"{Outbox.select().where(Outbox.status == 'held').count()} held for quiet hours"
    )
    _out(
        f"tasks: {Task.select().where(Task.status == 'open').count()} open; "
        f"proposals waiting: {Approval.select().where(Approval.status.in_(proposals_rules.OPEN)).count()}"
    )
    _out(email_status(config))
    for line in views.model_lines(config):
        _out(line)
    for row in Cursor.select().where(Cursor.name.startswith("health:")).order_by(Cursor.name):
        _out(views.health_line(row.name[7:], row.value, row.updated_at, config.timezone))
    return 0


def cmd_budget(opts, config) -> int:
    _open(config)
    for line in views.budget_lines(config, opts.days):
        _out(line)
    return 0


def cmd_trace(opts, config) -> int:
    _open(config)
    if not opts.id:
        found = views.recent_traces(config.timezone, limit=10)
        _out("recent traces (`wilson trace ID` shows one whole):" if found else "no traces yet")
        for path in found:
            _out(f"{path['id']}  {path['at']}  {one_line(path['first'], 90)}")
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
    try:  # what the model did in the last day: runs that broke the protocol (the offline rules took them)
        _open(config)
        lines += views.failure_lines()
    except Exception as exc:  # no database yet is no finding about the model
        lines.append(f"history: not read ({type(exc).__name__})")
    lines += checkup.run(config)  # each configured channel, for real
    for line in lines:
        _out(line)
    return 1 if any("FIX:" in line for line in lines) else 0


def cmd_account(opts, config) -> int:
    """`wilson account add google|microsoft`: the device flow (channels/accounts.py), then what to set."""
    provider = accounts.provider_of(opts.provider)
    address = (opts.email or str(config.get("email", "username") or "")).strip()
    if not address:
        print("wilson account: which address? say --email you@example.com", file=sys.stderr)
        return 2
    try:
        accounts.device_flow(config, provider, _out, account=address)
    except accounts.AccountError as exc:
        print(f"wilson account: {redact(str(exc))}", file=sys.stderr)
        return 1
    _out(
        f"Done: Wilson may now read and send {address}'s mail. The grant is kept in "
        f"{accounts.grant_path(config.home, provider)} (only you can read it)."
    )
    _out("Set these in wilson.toml (or as WILSON_EMAIL_* in the environment), then start Wilson again:")
    for line in accounts.settings_lines(provider, address):
        _out("  " + line)
    return 0


def cmd_telegram(opts, config) -> int:
    """`wilson telegram chats`: what forum topics need, asked of Telegram (channels/telegram/chats.py)."""
    try:
        _open(config)
    except Exception as exc:  # no database: only the chats waiting on the server are listed
        logger.debug("telegram chats: no database ({})", exc)
    lines, asked = telegram_chats.listing(config)
    for line in lines:
        _out(redact(line))
    return 0 if asked else 1


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


def cmd_mcp(opts, config) -> int:
    """`wilson mcp test NAME`: connect to one configured server (bounded by its timeout), list its tools with
    how Wilson uses each, and close again; 0 when it answered."""
    if opts.action == "serve":
        return mcp_serve(config)
    if not opts.name:
        print(f"wilson mcp {opts.action}: which server? e.g. wilson mcp {opts.action} notes", file=sys.stderr)
        return 2
    if opts.action == "add":
        return mcp_add(opts, config)
    servers = config.section("mcp").get("servers") or {}
    if opts.name not in servers:
        known = ", ".join(sorted(servers)) or "none yet"
        print(f"wilson mcp: no server {opts.name!r} in [mcp.servers] (configured: {known})", file=sys.stderr)
        return 2
    try:
        spec = mcp_servers.spec_of(opts.name, servers[opts.name])
    except ValueError as exc:
        print(f"wilson mcp: [mcp.servers.{opts.name}] {exc}", file=sys.stderr)
        return 2
    return _try_server(spec)


def mcp_serve(config) -> int:
    """`wilson mcp serve`: Wilson's reads and `propose` for another agent, over stdio until it hangs up. Standard
    output is the protocol's: everything else goes to standard error. A running Wilson shows what is proposed."""
    _open(config)
    config.set("core", "primary_channel", _primary(config))  # where the proposals are shown
    try:
        server = mcp_serve_module.build(config)
    except ImportError:
        print("wilson mcp serve: the MCP SDK is not installed (pip install 'wilson[mcp]')", file=sys.stderr)
        return 2
    server.run("stdio")
    return 0


def mcp_add(opts, config) -> int:
    """`wilson mcp add NAME -- COMMAND…`: one more [mcp.servers.NAME] table in wilson.toml, then tried at once."""
    if bool(opts.server_command) == bool(opts.url):
        print("wilson mcp add: give the server's command after -- (stdio), or --url (HTTP), not both", file=sys.stderr)
        return 2
    values = {"url": opts.url} if opts.url else {"command": opts.server_command[0], "args": opts.server_command[1:]}
    path = config.path
    try:
        text = mcp_servers.added(path.read_text(encoding="utf-8") if path.exists() else "", opts.name, values)
    except ValueError as exc:
        print(f"wilson mcp add: {exc}", file=sys.stderr)
        return 2
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    _out(f"added [mcp.servers.{opts.name}] to {path}; its changes will wait for your approval. Trying it:")
    return _try_server(mcp_servers.spec_of(opts.name, values))


def _try_server(spec) -> int:
    """Connect to one MCP server, print what it offers, and say by the exit code whether it is ready."""
    connection = mcp_skill.probe(spec)
    try:
        for line in mcp_skill.server_lines(connection, details=True):
            _out(line)
        return 0 if connection.state == "ready" else 1
    finally:
        connection.close()


def cmd_eval(opts, config) -> int:
    return eval_main(opts, config)


def cmd_pair(opts, config) -> int:
    if not config.get("telegram", "token"):  # a code now would be for a bot that does not exist yet
        print(PAIR_STEPS)  # the steps are the answer; the one line on stderr says what stopped it
        print(PAIR_FIRST, file=sys.stderr)
        return 1
    _open(config)
    code = start_pairing(clockmod.RealClock().now())
    minutes = int(PAIRING_TIME.total_seconds() // 60)
    print(f"Send this to your bot on Telegram within {minutes} minutes:  /start {code}")
    print(
        f"The code works once. After {PAIRING_TRIES} wrong codes, or {minutes} minutes, it is void: "
        "run `wilson pair` again for a new one."
    )
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
        _out(
            f"stored {stored} memor{'y' if stored == 1 else 'ies'}"
            + (f"; {len(problems)} line(s) skipped" if problems else "")
        )
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
        waiting = _waiting(("watch", "unwatch"), clockmod.wall_now())
        for approval_id, description in waiting:
            _out(f"waiting for your approval (proposal {approval_id}): {description}")
        if not watched and not waiting:
            _out("nothing watched; `wilson watch add URL` proposes a page or feed")
        return 0
    if not opts.url:
        print(
            f"wilson watch {opts.action}: which address? e.g. wilson watch {opts.action} https://example.org/feed",
            file=sys.stderr,
        )
        return 2
    tool, args = ("watch", {"url": opts.url}) if opts.action == "add" else ("unwatch", {"url": opts.url})
    if opts.action == "add" and opts.every:
        args["every"] = opts.every
    now = clockmod.wall_now()
    try:
        made = proposals_make.propose_one(
            tool,
            args,
            owner=config.get("core", "owner"),
            channel=_primary(config),
            reason=f"because you asked: wilson watch {opts.action} {one_line(opts.url, 120)}",
            key=f"cli:{tool}:{opts.url}:{now.isoformat()}",
            now=now,
            config=config,
        )
    except proposals_rules.CannotPropose as exc:
        print(f"wilson watch: {exc}", file=sys.stderr)
        return 2
    _out(
        f"Proposal {made.id}: {made.items.get().description}. Nothing changes until you approve it "
        "(Wilson shows it where it talks with you)."
    )
    return 0


def _waiting(tools: tuple[str, ...], now) -> list[tuple[int, str]]:
    """Open proposals' undecided items of these tools, oldest first: (proposal id, what it would do)."""
    query = (
        ApprovalItem.select(ApprovalItem, Approval)
        .join(Approval)
        .where(
            ApprovalItem.tool.in_(tools)
            & (ApprovalItem.status == "pending")
            & Approval.status.in_(proposals_rules.OPEN)
            & (Approval.expires_at > now)
        )
        .order_by(Approval.id, ApprovalItem.position)
    )
    return [(item.approval.id, item.description) for item in query]


def _primary(config) -> str:
    """Where Wilson talks with you when it runs (Telegram when set up, else the terminal)."""
    return channel_roles(config)[0]


def cmd_service(opts, config) -> int:
    result = service.main(opts.action, config.home)
    for line in result.lines:
        _out(f"wilson service {opts.action}: {line}")
    return result.code
