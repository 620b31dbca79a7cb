"""Pure helpers of the Telegram channel: what a message looks like on either side of the Bot API.

Nothing here touches the network, and only `settled_text` reads a model it is handed:
splitting long texts (Telegram counts UTF-16 units), the approval buttons and their
callback data, commands, attachments, reactions, and error descriptions safe to log.
"""

from __future__ import annotations

import warnings
from datetime import timedelta

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Message
from telegram.error import RetryAfter

from actors.approval import outcome_line
from storage.models import Approval
from wilson.logs import redact

MAX_TEXT = 4096
ACTIONS = ("approve", "modify", "reject")
BUTTON_LABELS = {"approve": "Approve ✓", "modify": "Modify ✎", "reject": "Reject ✗"}

# Attachments Wilson cannot read yet, in the order they are checked (an animation also carries a document).
MEDIA = (("voice", "voice messages"), ("video_note", "video messages"), ("audio", "audio files"),
         ("animation", "GIFs"), ("photo", "photos"), ("video", "videos"), ("sticker", "stickers"),
         ("document", "files"))


def utf16_len(text: str) -> int:
    """Telegram counts message length in UTF-16 code units (an emoji can count twice)."""
    return len(text.encode("utf-16-le")) // 2


def split_text(text: str, limit: int = MAX_TEXT) -> list[str]:
    """Pieces of at most `limit` units, cut at paragraph breaks, else line breaks, else anywhere."""
    if utf16_len(text) <= limit:
        return [text]
    pieces: list[str] = []
    for separator in ("\n\n", "\n"):
        parts = text.split(separator)
        if len(parts) > 1:
            current = ""
            for part in parts:
                candidate = f"{current}{separator}{part}" if current else part
                if utf16_len(candidate) <= limit:
                    current = candidate
                    continue
                if current:
                    pieces.append(current)
                current = part
            pieces.append(current)
            return [p for piece in pieces for p in split_text(piece, limit) if p.strip()]
    current = ""
    for char in text:  # one unbroken line: cut it, never inside a character
        if utf16_len(current + char) > limit:
            pieces.append(current)
            current = ""
        current += char
    pieces.append(current)
    return pieces


def callback_data(approval_id: int, action: str, nonce: str) -> str:
    return f"ap:{approval_id}:{action}:{nonce}"


def parse_callback(data: str | None) -> tuple[int, str, str] | None:
    parts = (data or "").split(":")
    if len(parts) != 4 or parts[0] != "ap" or not parts[1].isdigit() or parts[2] not in ACTIONS:
        return None
    return int(parts[1]), parts[2], parts[3]


def keyboard(approval: dict) -> InlineKeyboardMarkup:
    actions = [a for a in approval.get("actions") or ACTIONS if a in ACTIONS]
    return InlineKeyboardMarkup([[InlineKeyboardButton(BUTTON_LABELS[a], callback_data=callback_data(
        approval["id"], a, approval["nonce"])) for a in actions]])


def settled_text(approval: Approval) -> str:
    labels = {"approved": "approved", "rejected": "rejected", "expired": "expired, nothing changed",
              "superseded": f"modified, replaced by proposal {approval.superseded_by}",
              "pending": "modified, a new proposal follows", "partial": "partly decided"}
    text = f"Proposal {approval.id}: {labels.get(approval.status, approval.status)}\n{outcome_line(approval)}"
    return split_text(text)[0]


def parse_command(text: str) -> tuple[str | None, str]:
    """'/quiet@wilson_bot 3h' -> ('quiet', '3h'); not a command -> (None, text)."""
    if not text.startswith("/") or len(text) < 2:
        return None, text
    head, _, rest = text.partition(" ")
    return head[1:].split("@", 1)[0].lower(), rest.strip()


def media_kind(message: Message) -> tuple[str, str] | None:
    for attribute, label in MEDIA:
        if getattr(message, attribute, None):
            return attribute, label
    return None


def reaction_value(reaction) -> str:
    if getattr(reaction, "emoji", None):
        return reaction.emoji
    if getattr(reaction, "custom_emoji_id", None):
        return f"custom:{reaction.custom_emoji_id}"
    return str(getattr(reaction, "type", "reaction"))


def retry_seconds(exc: RetryAfter) -> float:
    with warnings.catch_warnings():  # PTB warns that the int form is deprecated; both forms are handled
        warnings.simplefilter("ignore")
        value = exc.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


def describe(exc: BaseException) -> str:
    """An error as it may be logged or stored: the bot token never appears."""
    return redact(f"{type(exc).__name__}: {exc}")
