"""Learning that would make Wilson say less, later or nothing asks first (DESIGN principle 15).

A learned pattern that thins reminders ("user lets early reminders about hotel booking pass"), holds a
kind of proposal back ("user does not want packing lists proposed") or sinks a sender's mail ("user
ignores mail from news@shop.example") changes nothing until the user approves it: the night offers it
as a proposal with its evidence (`offer`), and the advice that would act on it asks `allowed` first.
What makes Wilson say more or earlier (a task the user is often late with, proposed earlier) applies
at once and is only listed (`memories`). An approved change is a setting (`adopted:<change>`), so it
outlives the memory rung it was learned on (a belief that becomes a principle is the same change), and
undoing the approval (`undo N`) takes it back.

A "no" is an answer: a change the user declined (rejected, left unanswered, or undone) is offered again only
when clearly new evidence has come since (as many new occasions as it was offered on), and the offer says so.
The evidence an offer was made on travels in its item (`seen`), so the next night can tell what is new.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from actors.proposals.rules import OPEN
from storage import kv
from storage.beliefs import ADOPTED, change_of
from storage.models import Approval, ApprovalItem, Memory
from storage.prepared import prepared

OFFER_PREFIX = "learn:"  # a proposal's idempotency key: learn:<change key>, then learn:<change key>#2 when asked again


def adopted(key: str | None) -> bool:
    return bool(key) and bool(kv.get_setting(ADOPTED + key))


def allowed(text: str | None) -> bool:
    """Whether Wilson may act on this memory now: at once when it says more, only once approved when less."""
    change = change_of(text)
    return change is None or adopted(change["key"])


def evidence(memory: Memory) -> list[str]:
    """What a memory stands on, as ids a person can look up (outbox 12, memory 4)."""
    return [str(p).replace(":", " ", 1) for p in memory.provenance or []][:8]


@dataclass
class Offer:
    """One change to ask about: the memory that says it, the change, the evidence it stands on now, the
    proposal's key, and the earlier offer the user declined (None the first time)."""

    memory: Memory
    change: dict
    seen: list[str]
    key: str
    declined: Approval | None = None
    new: list[str] | None = None  # evidence that came after the declined offer

    def __iter__(self):  # read as the (memory, change) pair that callers and tests took before re-offers
        return iter((self.memory, self.change))


def _shown(ids: list[str]) -> str:
    return ", ".join(str(p).replace(":", " ", 1) for p in ids[:8]) + (", …" if len(ids) > 8 else "")


def offer_text(memory: Memory, change: dict, offer: Offer | None = None, tz=None) -> str:
    times = int(memory.strength) if memory.strength >= 2 else 1
    seen = f" ({', '.join(evidence(memory))})" if evidence(memory) else ""
    answered = (
        ", while you answered other messages and the tasks were late or left"
        if change["key"].startswith("unheeded:")
        else ""
    )
    text = f"because {change['because']} on {times} occasion{'s' if times != 1 else ''}{seen}{answered}"
    if offer is not None and offer.declined is not None and offer.new:
        when = offer.declined.decided_at or offer.declined.expires_at
        when = when.astimezone(tz) if tz is not None else when
        answer = (
            "said no"
            if offer.declined.status == "rejected"
            else ("took it back" if offer.declined.status == "approved" else "left it unanswered")
        )
        text = (
            f"I asked on {when:%a} {when.day} {when:%b} and you {answer}; since then it happened "
            f"{len(offer.new)} more time{'s' if len(offer.new) != 1 else ''} ({_shown(offer.new)}), so I ask "
            f"once more: {text}"
        )
    return text


def offered_on(approval: Approval) -> list[str]:
    """The evidence an earlier offer was made on (what its item carried)."""
    item = ApprovalItem.get_or_none((ApprovalItem.approval == approval.id) & (ApprovalItem.tool == "adopt_learning"))
    seen = (item.args or {}).get("seen") if item is not None else None
    return [str(s) for s in seen] if isinstance(seen, list) else []


def earlier_offers(key: str) -> list[Approval]:
    """Every offer of this change so far, oldest first."""
    first = OFFER_PREFIX + key
    query = Approval.select().where(Approval.idempotency_key.startswith(first)).order_by(Approval.id)
    return [a for a in query if a.idempotency_key == first or a.idempotency_key.startswith(first + "#")]


def occasions(memory: Memory) -> list[str]:
    """What a memory rests on, as occasions: a principle's beliefs stand for the messages they rest on, so that
    a new heads-up let pass is new evidence for the principle too."""
    found: list[str] = []
    for ref in memory.provenance or []:
        ref = str(ref)
        named = ref.startswith("memory:") and ref[7:].isdigit() and len(ref) < 24
        below = Memory.get_or_none(Memory.id == int(ref[7:])) if named else None
        for each in ([str(p) for p in below.provenance or []] or [ref]) if below is not None else [ref]:
            if each not in found:
                found.append(each)
    return found


# every principle and belief still held, read each night (its text built once)
LIVE_LEARNED = prepared(
    lambda s: (
        Memory.select()
        .where(Memory.kind.in_(("principle", "belief")) & Memory.invalidated_at.is_null())
        .order_by(Memory.kind.desc(), Memory.strength.desc(), Memory.id)
    )
)


def offers(now: datetime, hold_back_at: float) -> list[Offer]:
    """Live beliefs (of `hold_back_at` nights or more) and principles that would make Wilson say less, whose
    change is not approved: one each, the strongest memory of a change first. A change asked about before is
    asked again only when the user declined it and as many new occasions as it was offered on have come
    since (an unanswered offer is not asked every night, and a "no" is an answer)."""
    found: dict[str, tuple[Memory, dict]] = {}
    seen: dict[str, list[str]] = {}  # change key -> evidence, over every live memory that says it
    for memory in LIVE_LEARNED.models():
        change = change_of(memory.text)
        if change is None:
            continue
        for ref in occasions(memory):
            if ref not in seen.setdefault(change["key"], []):
                seen[change["key"]].append(ref)
        if memory.kind == "belief" and memory.strength < hold_back_at:
            continue
        if change["key"] in found or adopted(change["key"]):
            continue
        found[change["key"]] = (memory, change)
    out = []
    for key, (memory, change) in found.items():
        evidence_now = seen.get(key, [])
        asked = earlier_offers(key)
        if not asked:
            out.append(Offer(memory, change, evidence_now, OFFER_PREFIX + key))
            continue
        last = asked[-1]
        if last.status in OPEN or last.superseded_by:
            continue  # still waiting for its answer, or brought back as another proposal
        before = set(offered_on(last))
        new = [ref for ref in evidence_now if ref not in before]
        if len(new) < max(len(before), 1):
            continue  # declined, and not (yet) as many new occasions again
        out.append(Offer(memory, change, evidence_now, f"{OFFER_PREFIX}{key}#{len(asked) + 1}", last, new))
    return out


def adopt(key: str, on: bool, item_id: int | None, says: str, at: datetime) -> dict:
    """Turn an approved change on (or, undone, off again); the tool's execution, through the gate."""
    before = kv.get_setting(ADOPTED + key)
    if on:
        kv.put_setting(ADOPTED + key, {"item": item_id, "at": at.isoformat(), "says": says})
    else:
        kv.delete_setting(ADOPTED + key)
    return {"change": key, "on": on, "was_on": bool(before), "says": says}
