"""A mail's text as the email channel writes it (channels/email/parse.py describe), read by the rules.

Its second line, right under "Email from …", says when it was sent. That is a fact about the mail,
never a date in it to act on; a line like it further down is the sender's own words.
"""

from __future__ import annotations

from datetime import datetime

from wilson.model.offline.dates import fmt_day, parse_moment
from wilson.kernel.lazy_regex import lazy_regex

SENT_LINE = lazy_regex(r"Sent \w{3} \d{2} \w{3} \d{4} \d{2}:\d{2}")


def sent_line(text: str) -> str | None:
    """The email channel's "Sent …" line of a mail's text, or None."""
    lines = text.split("\n", 2)
    return lines[1] if len(lines) > 1 and SENT_LINE.fullmatch(lines[1]) else None


def without_sent_line(text: str) -> str:
    """A mail's text without the channel's "Sent …" line."""
    lines = text.split("\n", 2)
    return "\n".join([lines[0], *lines[2:]]) if sent_line(text) is not None else text


def without_sent_lines(text: str) -> str:
    """A kept item's text (triage's summary, then each mail as the channel wrote it) without the channel's "Sent …"
    lines: the day a mail came is no date in it to act on."""
    return "\n".join(line for line in text.split("\n") if not SENT_LINE.fullmatch(line.strip()))


def sent_at(payload: dict, now: datetime, tz) -> datetime:
    """When the mail was sent (its "today" and "tomorrow" are that day's), else `now`; never after `now`."""
    sent = parse_moment(payload.get("date"), tz) if payload.get("date") else None
    return sent if isinstance(sent, datetime) and sent <= now else now


def sent_before(payload: dict, now: datetime, tz) -> str:
    """The day a mail was sent ("Tue 5 Jan"), when that was before today; "" otherwise (or with no date)."""
    sent = parse_moment(payload.get("date"), tz) if payload.get("date") else None
    if not isinstance(sent, datetime) or sent.astimezone(tz).date() >= now.astimezone(tz).date():
        return ""
    return fmt_day(sent.astimezone(tz).date())
