"""A mail's text as the email channel writes it (channels/email/parse.py describe), read by the rules.

Its second line, right under "Email from …", says when it was sent. That is a fact about the mail,
never a date in it to act on; a line like it further down is the sender's own words.
"""

from __future__ import annotations

import re

SENT_LINE = re.compile(r"Sent \w{3} \d{2} \w{3} \d{4} \d{2}:\d{2}")


def sent_line(text: str) -> str | None:
    """The email channel's "Sent …" line of a mail's text, or None."""
    lines = text.split("\n", 2)
    return lines[1] if len(lines) > 1 and SENT_LINE.fullmatch(lines[1]) else None


def without_sent_line(text: str) -> str:
    """A mail's text without the channel's "Sent …" line."""
    lines = text.split("\n", 2)
    return "\n".join([lines[0], *lines[2:]]) if sent_line(text) is not None else text
