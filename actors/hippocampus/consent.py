"""Learning that would make Wilson say less, later or nothing asks first (DESIGN principle 15).

A learned pattern that thins reminders ("user lets early reminders about hotel booking pass"), holds a
kind of proposal back ("user does not want packing lists proposed") or sinks a sender's mail ("user
ignores mail from news@shop.example") changes nothing until the user approves it: the night offers it
as a proposal with its evidence (`offer`), and the advice that would act on it asks `allowed` first.
What makes Wilson say more or earlier (a task the user is often late with, proposed earlier) applies
at once and is only listed (`memories`). An approved change is a setting (`adopted:<change>`), so it
outlives the memory rung it was learned on (a belief that becomes a principle is the same change), and
undoing the approval (`undo N`) takes it back.
"""

from __future__ import annotations

from datetime import datetime

from storage import kv
from storage.beliefs import ADOPTED, change_of
from storage.models import Approval, Memory

OFFER_PREFIX = "learn:"  # a proposal's idempotency key: learn:<change key>


def adopted(key: str | None) -> bool:
    return bool(key) and bool(kv.get_setting(ADOPTED + key))


def allowed(text: str | None) -> bool:
    """Whether Wilson may act on this memory now: at once when it says more, only once approved when less."""
    change = change_of(text)
    return change is None or adopted(change["key"])


def evidence(memory: Memory) -> list[str]:
    """What a memory stands on, as ids a person can look up (outbox 12, memory 4)."""
    return [str(p).replace(":", " ", 1) for p in memory.provenance or []][:8]


def offer_text(memory: Memory, change: dict) -> str:
    times = int(memory.strength) if memory.strength >= 2 else 1
    seen = f" ({', '.join(evidence(memory))})" if evidence(memory) else ""
    answered = ", while you answered other messages and the tasks were late or left" \
        if change["key"].startswith("unheeded:") else ""
    return f"because {change['because']} on {times} occasion{'s' if times != 1 else ''}{seen}{answered}"


def offers(now: datetime, hold_back_at: float) -> list[tuple[Memory, dict]]:
    """Live beliefs (of `hold_back_at` nights or more) and principles that would make Wilson say less, whose
    change is neither approved nor asked about yet: one each, the strongest memory of a change first."""
    found: dict[str, tuple[Memory, dict]] = {}
    query = (Memory.select().where(Memory.kind.in_(("principle", "belief")) & Memory.invalidated_at.is_null())
             .order_by(Memory.kind.desc(), Memory.strength.desc(), Memory.id))
    for memory in query:
        if memory.kind == "belief" and memory.strength < hold_back_at:
            continue
        change = change_of(memory.text)
        if change is None or change["key"] in found or adopted(change["key"]):
            continue
        if Approval.select().where(Approval.idempotency_key == OFFER_PREFIX + change["key"]).exists():
            continue  # asked once: a "no" is an answer, and an unanswered one is not asked every night
        found[change["key"]] = (memory, change)
    return list(found.values())


def adopt(key: str, on: bool, item_id: int | None, says: str, at: datetime) -> dict:
    """Turn an approved change on (or, undone, off again); the tool's execution, through the gate."""
    before = kv.get_setting(ADOPTED + key)
    if on:
        kv.put_setting(ADOPTED + key, {"item": item_id, "at": at.isoformat(), "says": says})
    else:
        kv.delete_setting(ADOPTED + key)
    return {"change": key, "on": on, "was_on": bool(before), "says": says}
