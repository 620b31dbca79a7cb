"""The one table of the commands a person gives Wilson, and where each surface offers it.

Telegram's menu (setMyCommands) and its /help, its handler, the REPL's grammar and the dashboard's
navigation all read this table; tests/test_commands.py fails when a surface handles a command the table
does not list, or misses one it does. A command is one row: the word it has on each surface (None where
that surface has no such command) and one line that says what it does.

The user's own commands ("done 3", "snooze 3 2d") are parsed by actors/proposals/commands.py; here they
are rows like any other, marked `own`, so that the menus list them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Command:
    what: str  # one line, as Telegram's menu and /help show it
    telegram: str | None = None  # /word in Telegram
    repl: str | None = None  # the REPL's word
    page: str | None = None  # the dashboard route that does it
    nav: tuple[int, str] | None = None  # (place, label) in the dashboard's navigation, for a page of its own
    alone: bool = True  # REPL: the word is the whole line (followed by more, the line is a sentence)
    own: bool = False  # the user's own command, taken at once (actors/proposals/commands.py)


COMMANDS: tuple[Command, ...] = (
    Command("your open tasks", telegram="tasks", repl="tasks"),
    Command("tasks whose day has passed, with what you can do", telegram="overdue", repl="overdue"),
    Command(
        "mark a task done at once, e.g. /done 3", telegram="done", repl="done", page="/tasks/{task_id}/done", own=True
    ),
    Command("put a task off, e.g. /snooze 3 2d", telegram="snooze", repl="snooze", own=True),
    Command("give a task a new date, e.g. /move 3 2027-03-01", telegram="move", repl="move", own=True),
    Command("drop a task you no longer need, e.g. /drop 3", telegram="drop", repl="drop", own=True),
    Command("stop a recurring reminder, e.g. /stop 2", telegram="stop", repl="stop", own=True),
    Command("topics and their tasks", telegram="topics", repl="topics", page="/topics", nav=(4, "Topics")),
    Command("look at what's new, now", telegram="today", repl="today", page="/today", nav=(1, "Today")),
    Command(
        "hold non-urgent messages, e.g. /quiet 3h (/quiet off ends it)", telegram="quiet", repl="quiet", alone=False
    ),
    Command("what the language model cost today", telegram="budget", repl="budget", page="/budget", nav=(7, "Budget")),
    Command("proposals that ran out of time, to bring back", telegram="expired", repl="show", alone=False),
    Command(
        "what I've learned about you (/forget N when one is wrong)",
        telegram="memory",
        repl="memories",
        page="/memory",
        nav=(5, "Memory"),
    ),
    Command(
        "forget something I learned wrong, e.g. /forget 5",
        telegram="forget",
        repl="forget",
        page="/memory/{memory_id}/forget",
        alone=False,
    ),
    Command("what I understand; /help 3 asks me to help with task 3", telegram="help", repl="help"),
    # the REPL and the dashboard only: Telegram answers a proposal with its buttons, and the REPL drives a
    # simulated world as well
    Command("proposals waiting for your answer", repl="approvals", page="/proposals", nav=(2, "Proposals")),
    Command("approve a proposal", repl="approve", page="/proposals/{approval_id}", alone=False),
    Command("reject a proposal", repl="reject", page="/proposals/{approval_id}", alone=False),
    Command("ask for a changed proposal", repl="modify", alone=False),
    Command("bring back a proposal that ran out of time", repl="revive", alone=False),
    Command("put back what a proposal you approved changed", repl="undo", page="/undo/{approval_id}"),
    Command("say something to Wilson", repl="say", page="/conversation", nav=(3, "Conversation"), alone=False),
    Command("what happened to one message, step by step", repl="trace", page="/trace", nav=(6, "Trace"), alone=False),
    Command("your recurring reminders", repl="reminders"),
    Command("an event in the simulated calendar", repl="calendar", alone=False),
    Command("a mail into the simulated inbox", repl="email", alone=False),
    Command("a web page's news", repl="web", alone=False),
    Command("let simulated time run forward", repl="advance", alone=False),
    Command("sync now", repl="sync"),
    Command("the inbox rows", repl="inbox"),
    Command("the outbox rows", repl="outbox"),
    Command("the time now", repl="now"),
    Command("wait until nothing is left to process", repl="wait"),
    Command("leave", repl="quit"),
)

# Telegram's /start (the pairing message) answers as /help does
TELEGRAM_ALIASES = {"start": "help"}


def telegram_menu() -> list[tuple[str, str]]:
    """(command, what it does) for every Telegram command, in the table's order: the menu and /help."""
    return [(c.telegram, c.what) for c in COMMANDS if c.telegram]


def telegram_words() -> set[str]:
    return {c.telegram for c in COMMANDS if c.telegram} | set(TELEGRAM_ALIASES)


def repl_words(*, alone: bool) -> tuple[str, ...]:
    """The REPL's words that are the whole line (alone) or take more words, the user's own commands aside."""
    return tuple(c.repl for c in COMMANDS if c.repl and not c.own and c.alone == alone)


def dashboard_nav() -> list[tuple[str, str]]:
    """(route, label) of the dashboard's navigation, in its order."""
    return [(c.page, c.nav[1]) for c in sorted((c for c in COMMANDS if c.page and c.nav), key=lambda c: c.nav)]
