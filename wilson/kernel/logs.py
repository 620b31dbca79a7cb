"""Logging through loguru: one line per event, secrets redacted wherever they appear.

Libraries that log through the standard `logging` module (python-telegram-bot,
httpx, caldav) reach the same sinks from WARNING up, so their lines are redacted
too instead of going to stderr as they are.

Redaction happens twice: a patcher scrubs each record (message, extra values,
exception text) before any sink sees it, so a sink someone adds later is safe
too; and the sinks added here scrub the finished line, which also covers what
the patcher cannot reach (an exception whose __str__ builds its text itself).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from loguru import logger

from wilson.kernel.redact import redact, redact_data, register

__all__ = ["redact", "setup_logging", "file_sink"]

FORMAT = "{time:YYYY-MM-DD HH:mm:ss} {level:<7} {name}: {message}"


def _scrubbed(exc: BaseException, depth: int = 0) -> BaseException:
    """A copy of `exc` (and of its cause chain) with secret text masked; the live exception is left alone."""
    try:
        args = tuple(redact(a) if isinstance(a, str) else a for a in exc.args)
        # __new__ without __init__: exceptions whose constructor wants other arguments copy too
        clean = type(exc).__new__(type(exc), *args)
        clean.args = args
        if getattr(exc, "__dict__", None):
            clean.__dict__.update({k: redact(v) if isinstance(v, str) else v for k, v in vars(exc).items()})
        clean.__traceback__ = exc.__traceback__
        clean.__suppress_context__ = exc.__suppress_context__
        if depth < 5:
            clean.__cause__ = _scrubbed(exc.__cause__, depth + 1) if exc.__cause__ is not None else None
            clean.__context__ = _scrubbed(exc.__context__, depth + 1) if exc.__context__ is not None else None
        return clean
    except Exception:  # an exception type that cannot be copied: show its type only, never its text
        return RuntimeError(f"{type(exc).__name__} (text withheld: it could not be redacted)")


def _patch(record) -> None:
    record["message"] = redact(record["message"])
    if record["extra"]:
        record["extra"].update(redact_data(dict(record["extra"])))
    exc = record["exception"]
    if exc is not None and exc.value is not None:
        record["exception"] = exc._replace(value=_scrubbed(exc.value))


def _redacting(sink):
    """Wrap a stream or a callable so the finished line is redacted as well."""
    if hasattr(sink, "write"):

        def write(message):
            sink.write(redact(str(message)))
            if hasattr(sink, "flush"):
                sink.flush()

        return write

    def call(message):
        clean = _Line(redact(str(message)))
        clean.record = getattr(message, "record", None)
        sink(clean)

    return call


class _Line(str):
    """A redacted log line that still carries loguru's record, as loguru's own message does."""

    record = None


MAX_LOG_BYTES = 10_000_000  # one older file is kept beside it: the log of a long-lived home stays bounded


class _FileSink:
    """Log lines into a file in the home (and onto `echo` too, for --verbose), not into the conversation."""

    def __init__(self, path, echo=None):
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size > MAX_LOG_BYTES:
            path.replace(path.with_name(path.name + ".1"))
        self.path = path
        self.file = open(path, "a", encoding="utf-8", buffering=1)
        self.echo = echo

    def __call__(self, message) -> None:
        line = str(message)
        self.file.write(line)
        if self.echo is not None:
            self.echo.write(line)
            self.echo.flush()


def file_sink(path, echo=None) -> _FileSink:
    """A sink for `setup_logging` (or Wilson's `log_sink`): lines appended to `path`, and to `echo` as well."""
    return _FileSink(path, echo)


class _FromStdlib(logging.Handler):
    """Hands standard-library log records to loguru, where they are redacted like Wilson's own."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            level = logger.level(record.levelname).name
        except ValueError:
            level = record.levelno
        try:
            logger.opt(exception=record.exc_info or None).log(level, "{}: {}", record.name, record.getMessage())
        except Exception:
            self.handleError(record)


class _Retargeted:
    """The one handler setup_logging adds, whose sink the next call swaps: loguru's `add` costs some 8 ms
    (it reads the interpreter's library paths for its exception formatter), and a process that makes many
    Wilsons in turn (the tests, `wilson eval`) would pay it for each one."""

    def __init__(self, target, level: str):
        self.target, self.level = target, level
        self.handler_id: int | None = None

    def __call__(self, message) -> None:
        self.target(message)


_current: _Retargeted | None = None


def _still_added(handler: _Retargeted) -> bool:
    """Whether the handler is still among loguru's (someone may have called `logger.remove()` since). Loguru
    lists them on no public name: where that name is missing, the answer is no, and the handler is added anew."""
    handlers = getattr(getattr(logger, "_core", None), "handlers", None)
    return isinstance(handlers, dict) and handler.handler_id in handlers


def setup_logging(secrets=(), sink=None, level: str = "INFO") -> None:
    """Route every log line through the redactor; `sink` (a stream or a callable) defaults to stderr.

    Lines go to the latest call's sink; the handlers of earlier calls (and loguru's default one) are gone."""
    global _current
    register(secrets)
    target = _redacting(sink or sys.stderr)
    logger.configure(patcher=_patch)
    if _current is not None and _current.level == level and _still_added(_current):
        _current.target = target
    else:
        logger.remove()
        _current = _Retargeted(target, level)
        _current.handler_id = logger.add(
            _current, level=level, format=FORMAT, backtrace=False, diagnose=False, colorize=False
        )
    root = logging.getLogger()
    if not any(isinstance(h, _FromStdlib) for h in root.handlers):
        root.addHandler(_FromStdlib(logging.WARNING))


logger.configure(patcher=_patch)
