"""What a sender wrote, as a heads-up quotes it: the first line past the subject, cut at a word, and never
a line that carries an address (a phishing mail's "verify at …" is not passed on)."""

from __future__ import annotations

import re

OPENING_CHARS = 160  # of what a sender wrote, quoted in a heads-up
# an address in a stranger's words (a link, a site, a mail address): never relayed as something to act on
ADDRESS = re.compile(r"https?://|\bwww\.|\b[\w-]+\.[a-z]{2,}(?:/|\b)|@", re.I)


def opening(text: str, subjects: set[str]) -> str:
    """The first line a sender wrote, past the summary and the channel's "Email from …: subject" line; cut at a
    word within OPENING_CHARS. Empty when the item has nothing but its subject, or when that line holds an
    address: a phishing mail's "verify at …" is not passed on."""
    for line in text.splitlines()[1:]:
        line = " ".join(line.split()).replace("“", '"').replace("”", '"')
        if not line or line.lower() in subjects or any(line.lower().endswith(": " + s) for s in subjects if s):
            continue
        if ADDRESS.search(line):
            return ""
        if len(line) <= OPENING_CHARS:
            return line
        return line[:OPENING_CHARS].rsplit(" ", 1)[0] + "…"
    return ""
