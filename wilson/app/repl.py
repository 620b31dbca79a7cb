"""bin/wilson-repl: talk to Wilson and inject synthetic stimuli, from a terminal or a script.

Every command runs to completion before the next is read (the REPL waits until
nothing is left to process), so a script reads like a story: what happened
after each line is printed before the next line runs.

Size: the command grammar, its help text and each command's execution change together when a
command is added; the views and the app it drives live elsewhere.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from loguru import logger

from actors.proposals import commands
from actors.proposals.rules import UNDO
from actors.proposals.words import undo_named
from channels import views
from channels.calendar import add_event, cancel_event
from channels.web.cli import dashboard_line
from wilson.app import home_guard
from storage import ingress_lock
from wilson.app.application import IdleTimeout, Wilson
from wilson.app.home_guard import SIM_TIME_FILE
from wilson.app.options import Parser, UsageError, llm_option, log_level_option, open_config
from wilson.kernel import bounds, clock as clockmod
from wilson.kernel.commands import repl_words
from wilson.kernel.logs import file_sink
from wilson.kernel.messages import TickNow
from wilson.kernel.redact import redact
from wilson.kernel.timeparse import date_or_datetime

HELP = """Commands (one per line, # starts a comment):
  say TEXT                                   a message from you on the realtime channel
  calendar add TITLE @ START [-> END] [; LOCATION]    START/END as ISO dates or datetimes;
                                             an event with that title already is moved
  calendar cancel TITLE
  email FROM | SUBJECT | BODY
  web TEXT
  advance DURATION                           e.g. 45m, 12h, 3d: simulated time runs forward
  sync                                       force a thalamus sync now
  approve ID [ITEMS] | reject ID [ITEMS]     ITEMS: item numbers, e.g. 1,3 (default: all); alone: the newest
  modify ID TEXT                             ask for a changed proposal
  show expired | revive ID                   proposals that ran out of time; bring one back
  undo [ID]                                  put back what a proposal you approved changed, at once
                                             (alone: the last one you approved)
  done ID | snooze ID [2d|DATE] | drop ID    a task (a number from `tasks`), at once: your command is
  move ID DATE | stop ID                     the approval; stop: a reminder (a number from `reminders`)
  help ID                                    ask Wilson to help with a task (words for Wilson, no change)
  overdue                                    the tasks whose day has passed, with what you can do
  today                                      look at what's new, now (as Telegram's /today)
  quiet DURATION | quiet off                 hold non-urgent messages, e.g. quiet 3h
  forget ID                                  propose to forget a memory (a number from `memories`)
  tasks | topics | approvals | reminders | memories | inbox | outbox | budget | trace ID | now | help
  wait                                       block until nothing is left to process
  quit
Any other sentence is said to Wilson, as with say."""

# Commands that are the whole line; followed by more words, the line is a sentence for Wilson
# ("now what?", "wait, I forgot…").
# The words come from the one command table (wilson/kernel/commands.py); "undo" is read before them, as typed
# in a chat, and so are the user's own commands ("done 3").
ALONE = tuple(w for w in repl_words(alone=True) if w != "undo") + ("exit",)
WITH_ARGUMENTS = repl_words(alone=False)
COMMANDS = ALONE + WITH_ARGUMENTS
# commands that take a number, and whose word also starts a sentence: without a number first, a sentence
SENTENCE_STARTS = ("approve", "reject", "modify", "show", "revive", "forget")


MAX_LINE = 20_000  # characters; far more than anyone types, far less than a pasted file
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")  # terminal colour and cursor codes, as pasted text carries them


class CommandError(ValueError):
    pass


def clean_line(line: str) -> str:
    """One typed line made safe to parse: control characters become spaces, broken UTF-16 halves become '?'."""
    line = line.encode("utf-8", "replace").decode("utf-8")
    return _CONTROL.sub(" ", _ESCAPE.sub("", line))


@dataclass(frozen=True)
class Command:
    name: str
    args: tuple = ()


def _items(text: str) -> tuple[int, ...]:
    try:
        return bounds.parse_items(text)
    except ValueError as exc:
        raise CommandError(str(exc)) from None


def _when(text: str):
    text = text.strip()
    try:
        moment = date_or_datetime(text)
    except ValueError:
        raise CommandError(
            f"not an ISO date or datetime: {bounds.shown(text)} (e.g. 2027-03-01 or 2027-03-01T09:30)"
        ) from None
    try:
        return bounds.check_year(moment)
    except ValueError as exc:
        raise CommandError(str(exc)) from None


def parse(line: str) -> Command | None:
    """One REPL line → a Command, None for blanks and comments; CommandError with a one-line reason."""
    line = clean_line(line).strip()
    if not line or line.startswith("#"):
        return None
    if len(line) > MAX_LINE:
        raise CommandError(f"that line is too long ({len(line):,} characters; at most {MAX_LINE:,})")
    undoing = undo_named(line)
    if undoing is not None:  # "undo", "undo 3", "undo that": as typed in a chat, handled by code
        return Command("undo", (undoing,))
    told = commands.parse(line)
    if told is not None:  # "done 3", "snooze 3 2d": the user's own command, taken at once
        return Command("do", (told.text,))
    helping = commands.help_target(line)
    if helping is not None:  # "help 3": words for Wilson about task 3
        return Command("help_task", (helping,))
    word, _, rest = line.partition(" ")
    word, rest = word.lower(), rest.strip()
    if word in ALONE and not rest:
        return Command("quit" if word == "exit" else word)
    if word in SENTENCE_STARTS and _a_sentence(word, rest):
        return Command("say", (line,))
    if word in WITH_ARGUMENTS:
        return _command(word, rest)
    # a word of three letters or fewer ("no", "ok", "hey") is an answer in a chat, not a mistyped command
    close = difflib.get_close_matches(word, COMMANDS, n=1, cutoff=0.75) if len(word) > 3 else []
    if close and _fits(close[0], rest):
        raise CommandError(f"{bounds.shown(word, 24)} is not a command: did you mean {close[0]}? (type help)")
    # not a command, nor nearly one: a sentence for Wilson, as if it began with `say`
    return Command("say", (line,))


def _a_sentence(word: str, rest: str) -> bool:
    """After a word such as "show" or "approve": words for Wilson ("show my tasks", "approve all but the
    insurance", "forget it"), not a command's number ("approve 3", and "approve three" is told how to write it)."""
    head, _, tail = rest.lower().partition(" ")
    if head in ("it", "that", "this", "all", "everything", "them", "both"):
        return True
    if word == "show":  # it takes no number: anything but "expired …" is words ("show tasks")
        return not rest.lower().startswith("expired")
    return bool(tail) and not re.search(r"\d", head) and head != "expired"


def _fits(word: str, rest: str) -> bool:
    """Whether `word` would take the rest of the line: a one-word line always fits (`calender` alone is a
    typo); "quite a day" does not fit `quiet`, so it is a sentence."""
    if not rest:
        return True
    if word in ALONE or word in ("say", "web"):  # these take any text: "webb telescope" is a sentence
        return False
    try:
        _command(word, rest)
    except CommandError:
        return False
    return True


def _command(word: str, rest: str) -> Command:
    if word == "say":
        if not rest:
            raise CommandError("say what? e.g. say hello")
        return Command("say", (rest,))
    if word == "calendar":
        sub, _, spec = rest.partition(" ")
        if sub == "add":
            title, at, when = spec.partition("@")
            if not at or not title.strip():
                raise CommandError("calendar add TITLE @ START [-> END] [; LOCATION]")
            when, _, location = when.partition(";")
            start, _, end = when.partition("->")
            title = title.strip().strip('"').strip("'")
            return Command(
                "calendar_add", (title, _when(start), _when(end) if end.strip() else None, location.strip() or None)
            )
        if sub == "cancel" and spec.strip():
            return Command("calendar_cancel", (spec.strip().strip('"').strip("'"),))
        raise CommandError("calendar add TITLE @ START [-> END] [; LOCATION] | calendar cancel TITLE")
    if word == "email":
        parts = [p.strip() for p in rest.split("|", 2)]
        if len(parts) != 3 or not parts[0]:
            raise CommandError("email FROM | SUBJECT | BODY")
        return Command("email", tuple(parts))
    if word == "web":
        if not rest:
            raise CommandError("web TEXT")
        return Command("web", (rest,))
    if word == "advance":
        try:
            return Command("advance", (bounds.parse_advance(rest),))
        except ValueError as exc:
            raise CommandError(str(exc)) from None
    if word in ("approve", "reject") and not rest:
        return Command("say", (word,))  # a yes or a no in words: to the proposal just shown, as in a chat
    if word in ("approve", "reject", "modify"):
        head, _, tail = rest.partition(" ")
        if not head:
            raise CommandError(f"{word} ID — the proposal's number, e.g. {word} 3")
        try:
            ident = bounds.parse_id(head)
        except ValueError as exc:
            raise CommandError(f"{exc} (e.g. {word} 3)") from None
        if word == "modify":
            return Command("modify", (ident, tail.strip()))
        return Command(word, (ident, _items(tail)))
    if word == "show":
        if rest.lower() not in ("expired", "expired proposals"):
            raise CommandError("show expired — the proposals that ran out of time")
        return Command("expired")
    if word == "revive":
        try:
            return Command("revive", (bounds.parse_id(rest),))
        except ValueError as exc:
            raise CommandError(f"{exc} (e.g. revive 3)") from None
    if word == "forget":
        try:
            return Command("forget", (bounds.parse_id(rest),))
        except ValueError as exc:
            raise CommandError(f"{exc} (e.g. forget 5, a number from `memories`)") from None
    if word == "trace":
        if not rest:
            raise CommandError("trace ID — e.g. trace 3f2a9c1b7d4e")
        try:
            return Command("trace", (bounds.parse_trace_id(rest),))
        except ValueError as exc:
            raise CommandError(str(exc)) from None
    if word == "quiet":
        if not rest:
            raise CommandError("quiet for how long? e.g. quiet 3h (quiet off ends it)")
        return Command("quiet", (rest,))
    raise CommandError(f"unknown command {bounds.shown(word, 24)} (type help)")


class Repl:
    def __init__(self, app, out=None, as_json: bool = False):
        self.app = app
        self.out = out or sys.stdout
        self.as_json = as_json

    def emit(self, obj) -> None:
        if self.as_json:
            print(json.dumps(obj, ensure_ascii=False, default=str), file=self.out, flush=True)
        else:
            print(obj, file=self.out, flush=True)

    def print_delivery(self, record: dict) -> None:
        if self.as_json:
            self.emit(record)
            return
        at = datetime.fromisoformat(record["at"]).astimezone(self.app.config.timezone)
        text = record["text"]
        if record.get("approval"):
            ident = record["approval"]["id"]
            modify = f" | modify {ident} <change>" if "modify" in (record["approval"].get("actions") or ()) else ""
            text += f"\n   → approve {ident}{modify} | reject {ident}"
            if record["approval"].get("items", 2) > 1:  # a choice of items only where there is one to make
                text += f"  (or items: approve {ident} 1,2)"
        elif record.get("undo"):  # a receipt of changes: as Telegram's Undo button under it
            text += f"\n   → undo {record['undo']}"
        elif record.get("tasks"):  # a follow-up: as Telegram's Done, Snooze and Drop buttons under it
            for entry in commands.follow_up_buttons(record["tasks"]):
                if f"done {entry['task_id']}" not in text:  # a briefing names each task's choices itself
                    text += "\n   → " + " | ".join(entry["commands"])
        topic = f" [{record['topic']}]" if record.get("topic") else ""
        self.emit(f"[{at:%a %d %b %Y %H:%M}] Wilson{topic}: {text}")

    def run_line(self, line: str) -> bool:
        """Run one line; False when the session should end."""
        try:
            command = parse(line)
        except CommandError as exc:
            self.error(str(exc))
            return True
        if command is None:
            return True
        if command.name == "quit":
            return False
        try:
            self.execute(command)
        except CommandError as exc:
            self.error(str(exc))
        except Exception as exc:  # a REPL that dies on one odd line loses the whole session
            logger.opt(exception=exc).debug("REPL command {} failed", command.name)
            logger.warning("REPL command {} failed: {}: {}", command.name, type(exc).__name__, exc)
            self.error(
                f"{command.name} did not work ({type(exc).__name__}: {bounds.shown(redact(str(exc)), 80)[1:-1]})"
            )
        return True

    def error(self, text: str) -> None:
        if self.as_json:
            self.emit({"type": "error", "error": text})
        else:
            print(f"error: {text}", file=self.out, flush=True)

    def execute(self, command: Command) -> None:
        app = self.app
        name, args = command.name, command.args
        if name == "say":
            undoing = undo_named(args[0])  # as a chat channel reads these words: a decision, not a message
            if undoing is None:
                app.say(args[0])
            else:
                app.decide(undoing, UNDO)
        elif name == "calendar_add":
            try:
                add_event(app.calendar_file(), args[0], args[1], args[2], args[3], tz=app.config.timezone)
            except (ValueError, OverflowError) as exc:
                raise CommandError(f"calendar add: {exc}") from None
            app.calendar_edited()
            self.note(f"calendar: {args[0]} on {args[1]}")
        elif name == "calendar_cancel":
            if not cancel_event(app.calendar_file(), args[0]):
                raise CommandError(f"no calendar event called {args[0]!r}")
            app.calendar_edited()
            self.note(f"calendar: {args[0]} cancelled")
        elif name == "email":
            sender, subject, body = args
            app.inject_buffered(
                "email",
                f"Email from {sender}: {subject}\n{body}",
                {"from": sender, "subject": subject, "date": app.clock.now().isoformat()},
            )
        elif name == "web":
            app.inject_buffered("web", args[0], {})
        elif name == "advance":
            if not app.clock.simulated:
                raise CommandError("advance needs --clock sim")
            app.advance(args[0])
            self.note(f"now {app.clock.now().astimezone(app.config.timezone):%a %d %b %Y %H:%M}")
            return
        elif name == "sync":
            app.sync()
        elif name == "today":
            self.note("looking at what's new…")
            app.sync(answer_on="repl")  # as Telegram's /today: the answer says what the look found
        elif name == "quiet":
            self.note(views.quiet(args[0], app.clock.now(), app.config, "quiet"))
            app.supervisor.tell("tick", TickNow())  # what the quiet no longer holds goes out now
        elif name in ("approve", "reject"):
            app.decide(args[0], name, items=args[1])
        elif name == "modify":
            app.decide(args[0], "modify", text=args[1])
        elif name == "revive":
            app.decide(args[0], "revive")
        elif name == "undo":
            app.decide(args[0], UNDO)
        elif name == "do":
            app.decide(0, commands.COMMAND, text=args[0])
        elif name == "help_task":  # the user's own words for Wilson, naming the task
            try:
                app.say(commands.help_words(args[0], app.config.timezone))
            except ValueError as exc:
                raise CommandError(str(exc)) from None
        elif name == "overdue":
            rows = views.overdue(app.config.timezone, app.clock.now())
            self.emit({"type": name, "items": rows} if self.as_json else views.table(name, rows))
            return
        elif name == "forget":  # a proposal like any other: the user approves it
            problem = app.propose("forget_memory", {"memory": args[0]}, f"because you said memory {args[0]} is wrong")
            if problem:
                self.note(problem)
                return
        elif name == "wait":
            pass
        elif name == "help":
            print(HELP, file=self.out, flush=True)
            return
        elif name == "now":
            self.note(f"now {app.clock.now().astimezone(app.config.timezone):%a %d %b %Y %H:%M}")
            return
        elif name == "budget":
            self.emit(
                {"type": "budget", "usage": app.synapse.usage_today()} if self.as_json else app.synapse.budget_report()
            )
            return
        elif name == "trace":
            self.emit(
                {"type": "trace", "steps": views.trace_steps(args[0], app.config.timezone)}
                if self.as_json
                else views.trace_text(args[0], app.config.timezone)
            )
            return
        elif name in ("tasks", "topics", "approvals", "reminders", "memories", "inbox", "outbox", "expired"):
            rows = getattr(views, name)(app.config.timezone)
            self.emit({"type": name, "items": rows} if self.as_json else views.table(name, rows))
            return
        app.wait_idle()

    def note(self, text: str) -> None:
        if self.as_json:
            self.emit({"type": "note", "text": text})
        else:
            print(f"· {text}", file=self.out, flush=True)

    def loop(self, stream, echo: bool | None = None) -> None:
        """`echo`: print each line before its output (default: when the lines are piped in and not JSON),
        so a transcript of a script can be followed."""
        interactive = stream.isatty()
        if echo is None:
            echo = not interactive and not self.as_json
        while True:
            if interactive:
                print("wilson> ", end="", file=self.out, flush=True)
            line = stream.readline()
            if not line:
                break
            if echo and clean_line(line).strip():
                print(f"wilson> {clean_line(line).strip()}", file=self.out, flush=True)
            if not self.run_line(line):
                break
            self.keep_clock()

    def keep_clock(self) -> None:
        if self.app is not None and self.app.clock.simulated:
            save_sim_time(self.app.config.home, self.app.clock.now())


def stored_sim_time(home: Path) -> datetime | None:
    """Where this home's simulated time stood when it was last used, or None."""
    try:
        return clockmod.as_utc(datetime.fromisoformat((Path(home) / SIM_TIME_FILE).read_text().strip()))
    except (OSError, ValueError):
        return None


def save_sim_time(home: Path, moment: datetime) -> None:
    path = Path(home) / SIM_TIME_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(moment.isoformat())
    tmp.replace(path)  # a crash mid-write leaves the old time, never half a time


def sim_clock(start: str | None, home: Path, tz) -> clockmod.Clock:
    """The simulated clock for this home: it never runs backwards across restarts. Without --start it
    continues from the stored time; a --start before it is refused (ValueError, one line)."""
    stored = stored_sim_time(home)
    if start is None and stored is not None:
        return clockmod.SimClock(stored)
    clock = clockmod.make_clock("sim", start, tz)
    if stored is not None and clock.now() < stored:
        raise ValueError(
            f"this home's simulated time is already {stored.astimezone(tz):%a %d %b %Y %H:%M} "
            f"({tz}); --start {start} would run it backwards. Leave --start out to continue "
            "from there, or use a new --home."
        )
    return clock


def main(argv: list[str] | None = None, announce: bool = True) -> int:
    """`announce`: tell about the first run and config warnings (`wilson run` has told already)."""
    parser = Parser(prog="wilson-repl", description="Talk to Wilson and inject synthetic stimuli.")
    parser.add_argument("--home", help="state directory (default $WILSON_HOME or ~/.wilson)")
    parser.add_argument("--clock", choices=("sim", "real"), default="real")
    parser.add_argument("--start", help="ISO 8601 start of simulated time")
    parser.add_argument(
        "--force", action="store_true", help="run --clock sim even on a home that has lived on the real clock"
    )
    parser.add_argument("--json", action="store_true", help="print deliveries and listings as JSON lines")
    parser.add_argument("--llm", type=llm_option, help="offline | URL | scripted:FILE | replay:DIR")
    parser.add_argument(
        "--log-level",
        default="INFO",
        type=log_level_option,
        help="of the lines in WILSON_HOME/wilson.log (default INFO)",
    )
    parser.add_argument("--verbose", "-v", action="store_true", help="show the log lines on stderr too")
    parser.add_argument(
        "--echo",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="print each command before its output (default: when input is piped, without --json)",
    )
    try:
        opts = parser.parse_args(argv)
    except UsageError as exc:
        print(exc, file=sys.stderr, flush=True)
        return 2

    config = open_config("wilson-repl", Path(opts.home) if opts.home else None, first_run=True, warn=announce)
    if config is None:
        return 2

    if opts.clock == "sim" and not opts.force and (refusal := home_guard.sim_refusal(config.home)):
        print(f"wilson-repl: {refusal}", file=sys.stderr, flush=True)
        return 2
    try:
        if opts.clock == "sim":
            clock = sim_clock(opts.start, config.home, config.timezone)
        else:
            clock = clockmod.make_clock(opts.clock, opts.start, config.timezone)
    except ValueError as exc:
        print(f"wilson-repl: {exc}", file=sys.stderr, flush=True)
        return 2
    try:
        with home_guard.hold(config.home), ingress_lock.hold(config.get("database", "url"), config.home, "all"):
            return _run(opts, config, clock)
    except (home_guard.HomeInUse, ingress_lock.DatabaseInUse) as exc:
        # `wilson run` without Telegram talks through this terminal: it says its own name
        print(f"{'wilson-repl' if announce else 'wilson run'}: {exc}", file=sys.stderr, flush=True)
        return 1


def _run(opts, config, clock: clockmod.Clock) -> int:
    if clock.simulated:
        save_sim_time(config.home, clock.now())  # from now on this home is a simulated one
    else:
        home_guard.mark_real_clock(config.home, clock.now())
    if hasattr(sys.stdin, "reconfigure"):
        sys.stdin.reconfigure(errors="replace")  # a stray byte that is not UTF-8 is one odd line, not the end
    repl = Repl(None, as_json=opts.json)
    # log lines belong in the log file: mixed into the conversation they bury what Wilson says
    sink = file_sink(config.home / "wilson.log", echo=sys.stderr if opts.verbose else None)
    app = Wilson(
        config, clock, llm=opts.llm, printer=repl.print_delivery, log_sink=sink, log_level=opts.log_level.upper()
    )
    repl.app = app
    app.start()
    try:
        if sys.stdin.isatty() and not opts.json:
            app.supervisor.ping_all(timeout=10)  # every channel has started: the dashboard knows its address
            dashboard = dashboard_line(config)
            if dashboard:
                print(dashboard, flush=True)
            print("Wilson is listening. Type `help` for commands, or just say something.", flush=True)
        repl.loop(sys.stdin, echo=opts.echo)
        app.wait_idle()
    except IdleTimeout as exc:  # the session ended with work still going: it stops as it is, and says so
        print(f"error: {exc}", file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        pass
    finally:
        repl.keep_clock()
        app.stop()
    return 0
