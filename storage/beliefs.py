"""What Wilson believes about the user, as the user checks it: a read of the engram.

The hippocampus learns these rows and the memory skill retires them; listing them is only a
read, so the dashboard's Memory page, Telegram's /memory and the list_memories tool all take it
from here, without reaching into the hippocampus."""

from __future__ import annotations

import re
from datetime import datetime

from storage import engram, kv
from storage.models import ApprovalItem, Memory
from wilson.kernel.clock import as_utc

ADOPTED = "learning:adopted:"  # + change key -> {"item", "at", "says"}: a say-less change the user approved

# Memories that would make Wilson say less, by how they read: (pattern, the change's key, what Wilson would
# then do, what the evidence shows). actors/hippocampus/consent.py asks the user before any acts.
_LESS = (
    (
        re.compile(r"^user lets early reminders pass, whatever they are about$"),
        "unheeded:any",
        "remind you of tasks only when they are due",
        "early reminders went unanswered about several kinds of task",
    ),
    (
        re.compile(r"^remind about tasks only when they are due$"),
        "unheeded:any",
        "remind you of tasks only when they are due",
        "early reminders went unanswered about several kinds of task",
    ),
    (
        re.compile(r"^user lets early reminders about (.+) pass$"),
        "unheeded:{}",
        "remind you of {} only when it is due",
        "the early reminders about {} went unanswered",
    ),
    (
        re.compile(r"^remind about (.+) only when it is due$"),
        "unheeded:{}",
        "remind you of {} only when it is due",
        "the early reminders about {} went unanswered",
    ),
    (re.compile(r"^user does not want (tasks like '.+')$"), "rejected:{}", "stop proposing {}", "you turned down {}"),
    (re.compile(r"^user does not want (.+) proposed$"), "rejected:{}", "stop proposing {}", "you turned down {}"),
    (re.compile(r"^do not propose (.+)$"), "rejected:{}", "stop proposing {}", "you turned down {}"),
    (
        re.compile(r"^user ignores mail from (\S+)$"),
        "mail:{}",
        "keep mail from {} for the morning briefing",
        "you let mail from {} pass",
    ),
    (
        re.compile(r"^keep mail from (\S+) for the morning briefing$"),
        "mail:{}",
        "keep mail from {} for the morning briefing",
        "you let mail from {} pass",
    ),
)
_MORE = re.compile(r"^(?:keep in mind: )?(?:user .+ late|propose .+ earlier than usual)$")
KEEP_IN_MIND = "keep in mind: "


def change_of(text: str | None) -> dict | None:
    """The behaviour change a memory would make when it makes Wilson say less ({"key", "does", "because"}),
    or None for a memory that does not (a habit, or one that makes it say more)."""
    words = " ".join(str(text or "").split()).strip().rstrip(".")
    lowered = words.lower()
    if lowered.startswith(KEEP_IN_MIND):
        words, lowered = words[len(KEEP_IN_MIND) :], lowered[len(KEEP_IN_MIND) :]
    for pattern, key, does, because in _LESS:
        match = pattern.match(lowered)
        if match is None:
            continue
        subject = words[match.start(1) : match.end(1)] if match.groups() else ""
        return {"key": key.format(subject.lower()), "does": does.format(subject), "because": because.format(subject)}
    return None


def says_more(text: str | None) -> bool:
    """A memory that makes Wilson say more or earlier (a task the user is often late with): it applies at once."""
    return bool(_MORE.match(" ".join(str(text or "").lower().split()).rstrip(".")))


def behaviour_changes(at: datetime | None = None) -> list[dict]:
    """Every change to what Wilson says that is in force, for `memories` and the Memory page: {"says",
    "because", "since", "undo"} (the one command that takes it back). Say-less changes the user approved
    (`undo N` of the approval); say-more ones applied at once (`forget N` of the memory)."""
    found = []
    for key, value in kv.settings_with_prefix(ADOPTED).items():
        if not isinstance(value, dict):
            continue
        item = ApprovalItem.get_or_none(ApprovalItem.id == value.get("item")) if value.get("item") else None
        found.append(
            {
                "kind": "change",
                "says": value.get("says") or key,
                "since": str(value.get("at") or "")[:10],
                "because": (item.approval.reason if item is not None else "") or "you approved it",
                "undo": f"undo {item.approval_id}" if item is not None else None,
                "key": key,
            }
        )
    told = set()
    for memory in (m for kind in ("principle", "belief") for m in engram.live(kind, at)):
        if not says_more(memory.text) or memory.kind == "belief" and memory.strength < 2:
            continue
        name = " ".join(memory.text.lower().split())
        if name in told:
            continue
        told.add(name)
        found.append(
            {
                "kind": "change",
                "says": f"{memory.text} (so I propose such tasks a week earlier)",
                "since": as_utc(memory.created_at).date().isoformat() if memory.created_at else None,
                "because": "from " + ", ".join(memory.provenance[:4]),
                "undo": f"forget {memory.id}",
                "key": f"memory:{memory.id}",
            }
        )
    return found


def memory_list(at: datetime | None = None, limit: int = 40) -> list[dict]:
    """What Wilson believes, for the user to check: principles, beliefs and interpretations with their
    id (for `forget N`), since when, strength and provenance."""
    order = {"principle": 0, "belief": 1, "interpretation": 2}
    rows = [m for kind in order for m in engram.live(kind, at)]
    return [
        {
            "id": m.id,
            "kind": m.kind,
            "text": m.text,
            "since": as_utc(m.created_at).date().isoformat() if m.created_at else None,
            "strength": m.strength,
            "provenance": m.provenance,
            "asks_first": _waits(m),
        }
        for m in rows[:limit]
    ]


def _waits(memory: Memory) -> bool:
    """A memory that would make Wilson say less and that the user has not approved: it changes nothing yet."""
    change = change_of(memory.text)
    return change is not None and not kv.get_setting(ADOPTED + change["key"])
