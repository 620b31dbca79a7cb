"""`wilson run`: the long-running process, with Telegram, or talking on this terminal when no token is set.

Its own module, so that starting Wilson loads the application it starts and none of the packages the other
commands call (commands.py): the time to Wilson's first answer is what a person waits for.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import sys

from loguru import logger

from channels.email import settings as email_settings
from channels.web.cli import dashboard_line
from storage import ingress_lock
from wilson.app import home_guard
from wilson.app.application import Wilson
from wilson.app.repl import main as repl_main
from wilson.kernel import clock as clockmod
from wilson.kernel.redact import redact


TELEGRAM_HINT = """No Telegram token set, so Wilson talks to you here in the terminal.
To use Telegram: create a bot with @BotFather, then
  export WILSON_TELEGRAM_TOKEN=...            # never put it in a file you share
  export WILSON_TELEGRAM_ALLOWED_USERS=12345  # your numeric Telegram user id (or use `wilson pair`)
and start Wilson again (`make run`, or `wilson run`)."""

PAIR_HINT = (
    "Nobody may talk to the bot yet. To make it yours, run `wilson pair` in another terminal and send the "
    "code it prints to your bot (or set WILSON_TELEGRAM_ALLOWED_USERS to your numeric Telegram user id and "
    "start Wilson again)."
)


def cmd_run(opts, config) -> int:
    level = opts.log_level or "INFO"
    if email_settings.enabled(config):
        # lazy: the checks load every channel's client; only a mail account is checked before the start
        from wilson.app import checkup

        missing = checkup.folders_at_start(config)  # a folder that names nothing would be read as empty for ever
        if missing:
            print(f"wilson: {redact(missing)}", file=sys.stderr)
            return 2
    if not config.get("telegram", "token") and opts.role == "all" and not opts.no_terminal:
        print(TELEGRAM_HINT, flush=True)
        args = ["--clock", "real", "--log-level", level]
        if opts.home:
            args += ["--home", opts.home]
        if opts.llm:
            args += ["--llm", opts.llm]
        return repl_main(args, announce=False)
    # --role all holds its home; the processes of one PostgreSQL database (an ingress and its workers) may
    # share one, as they share their configuration. Only one process per database runs its ingress.
    try:
        with contextlib.ExitStack() as held:
            if opts.role == "all":
                held.enter_context(home_guard.hold(config.home))
            if opts.role in ("all", "ingress"):
                held.enter_context(ingress_lock.hold(config.get("database", "url"), config.home, opts.role))
            clock = clockmod.RealClock()
            home_guard.mark_real_clock(config.home, clock.now())
            app = Wilson(config, clock, llm=opts.llm, log_level=level, role=opts.role).start()
            with stop_signals() as wait:
                # what this process runs, not what it was configured with: another may hold Telegram for the database
                where = (
                    "on Telegram"
                    if "telegram" in app.supervisor.names()
                    else "without Telegram (another Wilson process runs it)"
                    if config.get("telegram", "token")
                    else "without a chat channel"
                )
                print(f"Wilson is running {where} (role {opts.role}). Ctrl-C stops it.", flush=True)
                # lazy: Telegram's modules load only where it runs (not at a terminal)
                from channels.telegram.access import paired_users, parse_ids

                if (
                    config.get("telegram", "token")
                    and not parse_ids(config.get("telegram", "allowed_users"))
                    and not paired_users()
                ):
                    logger.warning("telegram: nobody is allowed or paired yet; `wilson pair` makes the bot yours")
                    print(PAIR_HINT, flush=True)
                app.supervisor.ping_all(timeout=10)  # every channel has started: the dashboard knows its address
                dashboard = dashboard_line(config)
                if dashboard:
                    print(dashboard, flush=True)
                wait()
            app.stop()
    except (home_guard.HomeInUse, ingress_lock.DatabaseInUse) as exc:
        print(f"wilson run: {redact(str(exc))}", file=sys.stderr, flush=True)
        return 1
    return 0


@contextlib.contextmanager
def stop_signals():
    """Yields `wait()`, which returns once SIGTERM or SIGINT came (also one that came before the call).

    The signals only wake the main thread, through a socket Python writes to as a signal arrives
    (set_wakeup_fd): a handler that set a threading.Event could deadlock, when the signal came while
    the main thread held that Event's own lock on its way into wait()."""
    wake, ring = socket.socketpair()
    ring.setblocking(False)
    previous = signal.set_wakeup_fd(ring.fileno())
    handlers = {signum: signal.signal(signum, lambda *_: None) for signum in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield lambda: wake.recv(1)
    finally:
        signal.set_wakeup_fd(previous)
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
        wake.close()
        ring.close()
