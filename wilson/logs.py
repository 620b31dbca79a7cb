"""Logging through loguru: one line per event, secrets redacted wherever they appear."""

from __future__ import annotations

import sys

from loguru import logger

_secrets: list[str] = []


def redact(text: str) -> str:
    for secret in _secrets:
        if secret and secret in text:
            text = text.replace(secret, "***")
    return text


def add_secrets(values) -> None:
    for value in values:
        if value and value not in _secrets:
            _secrets.append(value)


def _patch(record) -> None:
    record["message"] = redact(record["message"])
    if record["exception"] is not None:
        # exception text is formatted later; scrub the value so tokens in URLs don't leak
        exc = record["exception"]
        if exc.value is not None:
            try:
                exc.value.args = tuple(redact(str(a)) for a in exc.value.args)
            except Exception:
                pass


def setup_logging(secrets=(), sink=None, level: str = "INFO") -> None:
    """Route every log line through the redactor; `sink` defaults to stderr."""
    add_secrets(secrets)
    logger.remove()
    logger.configure(patcher=_patch)
    logger.add(sink or sys.stderr, level=level, format="{time:YYYY-MM-DD HH:mm:ss} {level:<7} {name}: {message}",
               backtrace=False, diagnose=False)


logger.configure(patcher=_patch)
