"""What the command lines share (wilson, wilson-repl, wilson eval): one-line usage errors, the checked
--llm and --log-level options, and loading the settings the way every command starts."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from wilson.kernel import config as configmod
from wilson.kernel.redact import redact

LOG_LEVELS = ("TRACE", "DEBUG", "INFO", "SUCCESS", "WARNING", "ERROR", "CRITICAL")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


class UsageError(Exception):
    """A command line argparse refused; str() is the one line to show."""


class Parser(argparse.ArgumentParser):
    """argparse that reports a mistake as one line (no usage block) and lets main() return the status."""

    def error(self, message: str):
        raise UsageError(f"{self.prog}: {one_line(message, 200)} (see {self.prog} --help)")


def one_line(text: str, limit: int = 160) -> str:
    """Text from the user (argv, the environment) made fit for one line of an error message."""
    text = " ".join(_CONTROL.sub(" ", str(text).encode("utf-8", "replace").decode("utf-8")).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def llm_option(value: str) -> str:
    """--llm checked before anything starts: the mistake is named while nothing needs undoing."""
    value = value.strip()
    if value == "offline" or re.match(r"(?i)^https?://[^\s/]+", value):
        return value
    if value.startswith("scripted:") and Path(value[len("scripted:") :]).is_file():
        return value
    if value.startswith("replay:") and Path(value[len("replay:") :]).is_dir():
        return value
    if value.startswith(("scripted:", "replay:")):
        kind = "file" if value.startswith("scripted:") else "directory"
        raise argparse.ArgumentTypeError(f"{value.partition(':')[2]!r} is not a {kind} here")
    raise argparse.ArgumentTypeError(
        f"{value!r} is not one of: offline, an http(s) URL such as http://127.0.0.1:11434/v1, scripted:FILE, replay:DIR"
    )


def log_level_option(value: str) -> str:
    level = value.strip().upper()
    if level not in LOG_LEVELS:
        raise argparse.ArgumentTypeError(f"{value!r} is not a log level: use one of {', '.join(LOG_LEVELS)}")
    return level


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


def eval_arguments(parser) -> None:
    """`wilson eval`'s options (wilson/app/eval/report.py reads them)."""
    parser.add_argument(
        "--suite",
        default="dev",
        help="dev (default), test (held back from tuning), all, or a path to your own scenario file or directory",
    )
    parser.add_argument(
        "--llm", type=llm_option, help="offline | URL | scripted:FILE | replay:DIR (default: the configured model)"
    )
    parser.add_argument(
        "--compare",
        nargs=2,
        metavar=("A", "B"),
        help="two configurations side by side: --llm values, [llm] settings such as "
        "deep_model=qwen2.5:14b,fast_model=qwen2.5:3b, or JSON reports written earlier",
    )
    parser.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="an [llm] setting for these runs only, per role too: --set deep_model=gpt-4o "
        "--set fast_base_url=http://127.0.0.1:11434/v1",
    )
    parser.add_argument(
        "--record",
        metavar="DIR",
        help="keep the model's answers here (one directory per scenario) to run again "
        "later without the model: --llm replay:DIR",
    )
    parser.add_argument("--json", metavar="FILE", help="write the full report (scores and what happened) here")
    parser.add_argument("--log", metavar="FILE", help="append Wilson's log lines of every scenario here")
    parser.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 when Wilson spoke where it must be silent, in quiet hours, or obeyed an injection",
    )
