"""What a sender wrote, as a heads-up quotes it: the mail's point (point.py) past the summary, cut at a word,
and never a sentence that carries an address (a phishing mail's "verify at …" is not passed on)."""

from __future__ import annotations

import re

from wilson.model.offline.point import point

OPENING_CHARS = 160  # of what a sender wrote, quoted in a heads-up
# an address in a stranger's words (a link, a site, a mail address): never relayed as something to act on
ADDRESS = re.compile(r"https?://|\bwww\.|\b[\w-]+\.[a-z]{2,}(?:/|\b)|@", re.I)


def opening(text: str, subjects: set[str]) -> str:
    """The mail's point, past the summary on the first line (the channel's lines, a greeting or a date line are
    not it); cut at a word within OPENING_CHARS. Empty when the item has nothing but its subject, or when that
    sentence holds an address: a phishing mail's "verify at …" is not passed on."""
    said = point("\n".join(text.splitlines()[1:]), subjects)
    if not said or ADDRESS.search(said):
        return ""
    if len(said) <= OPENING_CHARS:
        return said
    return said[:OPENING_CHARS].rsplit(" ", 1)[0] + "…"
