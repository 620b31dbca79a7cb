"""Pure helpers of the Telegram channel: what a message looks like on either side of the Bot API.

Nothing here touches the network, and only `settled_text` reads a model it is handed:
splitting long texts (Telegram counts UTF-16 units), the approval buttons and their
callback data, commands, attachments, reactions, error descriptions safe to log, the
line that says a message was delayed, and reading one update's JSON (`parse_update`),
which never raises: an update is either usable, with every field Wilson reads of the
type it expects, or refused with the reason.

Size: the channel's pure helpers, each short, kept apart from the actor so that they are tested without a
network.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from datetime import datetime, timedelta

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Message, Update
from telegram.error import RetryAfter

from actors.proposals.rules import UNDO
from actors.proposals.words import outcome_line
from storage.models import Approval
from wilson.kernel.redact import redact

MAX_TEXT = 4096
MAX_ID = 2**53  # every id Telegram hands out is far below this (JSON's exact integers)
MAX_INBOUND_TEXT = 16_384  # Telegram's own cap is 4096 characters; longer is not from Telegram
MAX_CALLBACK_DATA = 64  # bytes, Telegram's limit for a button's data
ACTIONS = ("approve", "modify", "reject")
SHOW = "show"  # under the morning briefing: the proposal is shown again, with all its buttons
PRESSABLE = ACTIONS + ("revive", SHOW, UNDO)  # revive: under an expiry notice; undo: under an approval's receipt
BUTTON_LABELS = {"approve": "Approve ✓", "modify": "Modify ✎", "reject": "Reject ✗"}
MAX_TOGGLES = 10  # items with a button each; a longer proposal is decided whole or item by item in words
TOGGLE_LABEL = 40  # characters of an item's description on its button
MAX_REVIVE_BUTTONS = 5
MAX_BRIEFING_BUTTONS = 8  # waiting proposals with buttons under the briefing; the rest are listed in its text

# Attachments Wilson cannot read yet, in the order they are checked (an animation also carries a document).
MEDIA = (
    ("voice", "voice messages"),
    ("video_note", "video messages"),
    ("audio", "audio files"),
    ("animation", "GIFs"),
    ("photo", "photos"),
    ("video", "videos"),
    ("sticker", "stickers"),
    ("document", "files"),
)


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


def bounded_id(text: str) -> int | None:
    """A decimal id as typed or forged: ASCII digits only (int() also takes '²' and '١'), below MAX_ID."""
    if not text or len(text) > 16 or not text.isascii() or not text.isdigit():
        return None
    value = int(text)
    return value if value < MAX_ID else None


def parse_callback(data: str | None) -> tuple[int, str, str] | None:
    """(approval id, action, nonce) from a button's data; None for anything Wilson did not make."""
    if not isinstance(data, str) or len(data.encode("utf-8", "replace")) > MAX_CALLBACK_DATA:
        return None
    parts = data.split(":")
    if len(parts) != 4 or parts[0] != "ap" or parts[2] not in PRESSABLE or not parts[3].isascii():
        return None
    approval_id = bounded_id(parts[1])
    if approval_id is None:
        return None
    return approval_id, parts[2], parts[3]


def toggle_data(approval_id: int, position: int, nonce: str) -> str:
    return f"it:{approval_id}:{position}:{nonce}"


def parse_toggle(data: str | None) -> tuple[int, int, str] | None:
    """(approval id, item position, nonce) from an item's toggle button; None for anything else."""
    if not isinstance(data, str) or len(data.encode("utf-8", "replace")) > MAX_CALLBACK_DATA:
        return None
    parts = data.split(":")
    if len(parts) != 4 or parts[0] != "it" or not parts[3].isascii():
        return None
    approval_id, position = bounded_id(parts[1]), bounded_id(parts[2])
    if approval_id is None or position is None or not 0 < position <= MAX_TOGGLES:
        return None
    return approval_id, position, parts[3]


def _toggle_label(item: dict, chosen: bool) -> str:
    text = " ".join(str(item.get("description") or "").split())
    text = text if len(text) <= TOGGLE_LABEL else text[: TOGGLE_LABEL - 1] + "…"
    return f"{'☑' if chosen else '☐'} {item['position']}. {text}"


def keyboard(approval: dict, left_out=()) -> InlineKeyboardMarkup:
    """The decision buttons, first row; a proposal of several items also gets a toggle per item below them,
    all chosen at first, and Approve then approves the chosen ones (and leaves out the rest)."""
    actions = [a for a in approval.get("actions") or ACTIONS if a in ACTIONS]
    items = [i for i in approval.get("items") or [] if isinstance(i, dict) and isinstance(i.get("position"), int)]
    toggles = 2 <= len(items) <= MAX_TOGGLES and all(i["position"] <= MAX_TOGGLES for i in items)
    left_out = {p for p in left_out if p in {i["position"] for i in items}} if toggles else set()
    labels = dict(BUTTON_LABELS)
    if left_out:
        labels["approve"] = f"Approve {len(items) - len(left_out)} of {len(items)} ✓"
    rows = [
        [
            InlineKeyboardButton(labels[a], callback_data=callback_data(approval["id"], a, approval["nonce"]))
            for a in actions
        ]
    ]
    if toggles:
        rows += [
            [
                InlineKeyboardButton(
                    _toggle_label(i, i["position"] not in left_out),
                    callback_data=toggle_data(approval["id"], i["position"], approval["nonce"]),
                )
            ]
            for i in items
        ]
    return InlineKeyboardMarkup(rows)


def revive_keyboard(entries: list[dict]) -> InlineKeyboardMarkup:
    """'Bring it back' under an expiry notice, or one button per proposal under the list of expired ones."""
    entries = [e for e in entries if isinstance(e, dict) and e.get("id") and e.get("nonce")][:MAX_REVIVE_BUTTONS]
    one = len(entries) == 1
    return InlineKeyboardMarkup(
        [
            [
                InlineKeyboardButton(
                    "Bring it back ↺" if one else f"Bring back {e['id']} ↺",
                    callback_data=callback_data(e["id"], "revive", e["nonce"]),
                )
            ]
            for e in entries
        ]
    )


def undo_keyboard(entry) -> InlineKeyboardMarkup | None:
    """'Undo' under the receipt of an approval; None when the payload does not name a proposal."""
    if not isinstance(entry, dict) or not entry.get("id") or not entry.get("nonce"):
        return None
    return InlineKeyboardMarkup(
        [[InlineKeyboardButton("Undo ↶", callback_data=callback_data(entry["id"], UNDO, entry["nonce"]))]]
    )


COMMAND_DATA = "do:"  # a one-tap command under a follow-up: the words after it, as the user could type them
COMMAND_LABELS = {
    "done": "Done ✓",
    "snooze": "Snooze a day 💤",
    "drop": "Drop ✗",
    "stop": "Stop reminding ✋",
    "help": "Help me 🙋",
}


def command_data(words: str) -> str:
    return COMMAND_DATA + words


def parse_command_data(data: str | None) -> str | None:
    """The command a follow-up's button carries ("done 3"), or None for anything else."""
    if not isinstance(data, str) or not data.startswith(COMMAND_DATA) or len(data) > MAX_CALLBACK_DATA:
        return None
    return data[len(COMMAND_DATA) :]


def follow_up_keyboard(entries: list[dict], reminder: int | None = None) -> InlineKeyboardMarkup | None:
    """Under a follow-up, a row per task it is about: Done, Snooze a day, Drop; under a recurring reminder,
    Stop reminding. Each press is the user's own command, taken at once (and undoable)."""
    rows = []
    for entry in entries[:MAX_BRIEFING_BUTTONS]:
        named = len(entries) > 1
        rows.append(
            [
                InlineKeyboardButton(
                    COMMAND_LABELS[words.split()[0]] + (f" {entry['task_id']}" if named else ""),
                    callback_data=command_data(words),
                )
                for words in entry["commands"]
            ]
        )
    if isinstance(reminder, int) and not isinstance(reminder, bool):
        rows.append([InlineKeyboardButton(COMMAND_LABELS["stop"], callback_data=command_data(f"stop {reminder}"))])
    return InlineKeyboardMarkup(rows) if rows else None


def briefing_keyboard(entries: list[dict], tasks: InlineKeyboardMarkup | None = None) -> InlineKeyboardMarkup | None:
    """Under the morning briefing, a row per waiting proposal: approve it as it stands, or see it again
    (with its Modify, Reject and item toggles); then the one-tap answers for the tasks it raised (`tasks`,
    follow_up_keyboard's). None when there is neither."""
    entries = [e for e in entries if isinstance(e, dict) and e.get("id") and e.get("nonce")][:MAX_BRIEFING_BUTTONS]
    rows = [
        [
            InlineKeyboardButton(f"Approve {e['id']} ✓", callback_data=callback_data(e["id"], "approve", e["nonce"])),
            InlineKeyboardButton(f"Show {e['id']}", callback_data=callback_data(e["id"], SHOW, e["nonce"])),
        ]
        for e in entries
    ]
    rows += [list(row) for row in (tasks.inline_keyboard if tasks is not None else ())]
    return InlineKeyboardMarkup(rows) if rows else None


def settled_text(approval: Approval) -> str:
    expired = (
        "expired, nothing changed"
        if not approval.superseded_by
        else f"expired, brought back as proposal {approval.superseded_by}"
    )
    labels = {
        "approved": "approved",
        "rejected": "rejected",
        "expired": expired,
        "superseded": f"modified, replaced by proposal {approval.superseded_by}",
        "pending": "modified, a new proposal follows",
        "partial": "partly decided",
    }
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
        value = reaction.emoji
    elif getattr(reaction, "custom_emoji_id", None):
        value = f"custom:{reaction.custom_emoji_id}"
    else:
        value = getattr(reaction, "type", "reaction")
    return clean_text(str(value))[:64]


def clean_text(text: str, limit: int = MAX_INBOUND_TEXT) -> str:
    """Text as it may be stored: no NUL (PostgreSQL refuses it), no lone surrogate (not UTF-8),
    and at most `limit` characters, the cut marked."""
    text = text.replace("\x00", "").encode("utf-8", "replace").decode("utf-8")
    return text if len(text) <= limit else text[:limit] + " […cut]"


def delay_note(since: datetime, until: datetime, tz) -> str:
    """The one line that goes before what an outage held back."""
    start, end = since.astimezone(tz), until.astimezone(tz)
    if start.date() == end.date():
        return f"(Delayed: I couldn't reach Telegram from {start:%H:%M} to {end:%H:%M}.)"
    return f"(Delayed: I couldn't reach Telegram from {start:%a %d %b %H:%M} to {end:%a %d %b %H:%M}.)"


# Reading one update --------------------------------------------------------------------------
@dataclass(frozen=True)
class Parsed:
    """One entry of a getUpdates answer: `update` when usable, else `error` says why not.
    `update_id` is None when the entry has no usable id (the offset cannot move past it)."""

    update_id: int | None
    update: Update | None = None
    error: str | None = None


class Unusable(ValueError):
    """A field Wilson reads is missing or of the wrong type."""


def _id(value, what: str, *, signed: bool = False) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or not (-MAX_ID < value < MAX_ID if signed else 0 <= value < MAX_ID)
    ):
        raise Unusable(f"{what} is not an id")


def _text(value, what: str) -> None:
    if value is not None and not isinstance(value, str):
        raise Unusable(f"{what} is not text")


def _check_message(message, what: str, nested: bool = False) -> None:
    _id(getattr(message, "message_id", None), f"{what}.message_id")
    _id(getattr(getattr(message, "chat", None), "id", None), f"{what}.chat.id", signed=True)
    if not isinstance(message, Message):  # an inaccessible message: its chat and id are all there is
        return
    if message.from_user is not None:
        _id(message.from_user.id, f"{what}.from.id")
        if not isinstance(message.from_user.is_bot, bool):
            raise Unusable(f"{what}.from.is_bot is not true or false")
    _text(message.text, f"{what}.text")
    _text(message.caption, f"{what}.caption")
    if message.message_thread_id is not None:
        _id(message.message_thread_id, f"{what}.message_thread_id")
    if message.reply_to_message is not None and not nested:
        _check_message(message.reply_to_message, f"{what}.reply_to_message", nested=True)


def check_update(update: Update) -> None:
    """Raise Unusable unless every field Wilson reads of this update has the type it expects."""
    if update.callback_query is not None:
        query = update.callback_query
        if not isinstance(query.id, str):
            raise Unusable("callback_query.id is not text")
        _id(getattr(query.from_user, "id", None), "callback_query.from.id")
        _text(query.data, "callback_query.data")
        if query.message is not None:
            _check_message(query.message, "callback_query.message", nested=True)
    elif update.message_reaction is not None:
        reaction = update.message_reaction
        _id(getattr(reaction.chat, "id", None), "message_reaction.chat.id", signed=True)
        _id(reaction.message_id, "message_reaction.message_id")
        if reaction.user is not None:
            _id(reaction.user.id, "message_reaction.user.id")
        for kind in (reaction.old_reaction, reaction.new_reaction):
            if kind is not None and not isinstance(kind, (tuple, list)):
                raise Unusable("message_reaction lists no reactions")
    elif update.message is not None or update.edited_message is not None:
        _check_message(
            update.message or update.edited_message, "message" if update.message is not None else "edited_message"
        )


def usable_update_id(raw) -> int | None:
    value = raw.get("update_id") if isinstance(raw, dict) else None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < MAX_ID:
        return None
    return value


def parse_update(raw) -> Parsed:
    """One raw getUpdates entry, read on its own: never raises, whatever the JSON holds."""
    value = usable_update_id(raw)
    if value is None:
        return Parsed(None, error="no usable update_id")
    try:
        update = Update.de_json(raw, None)
        if update.update_id != value:
            raise Unusable("update_id changed while reading")
        check_update(update)
    except Exception as exc:  # anything PTB or the checks make of odd JSON, RecursionError included
        return Parsed(value, error=describe(exc))
    return Parsed(value, update)


def retry_seconds(exc: RetryAfter) -> float:
    with warnings.catch_warnings():  # PTB warns that the int form is deprecated; both forms are handled
        warnings.simplefilter("ignore")
        value = exc.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


def describe(exc: BaseException) -> str:
    """An error as it may be logged or stored: the bot token never appears."""
    return redact(f"{type(exc).__name__}: {exc}")
