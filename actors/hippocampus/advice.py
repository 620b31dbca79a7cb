"""Advice from what was learned: a proposal held back or brought earlier (`steer`), a task's early
reminders thinned, and the senders whose mail the user lets pass, named to triage."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from functools import lru_cache

from actors.hippocampus.common import _parse_due
from actors.hippocampus.consent import allowed
from actors.hippocampus.heeded import MAIL_CHANNELS
from actors.hippocampus.outcomes import _rates_line, subject_rates
from actors.hippocampus.rules import _forms, _late, _unheeded, _unheeded_any, _unwanted, fallback_principle, subject_of
from storage import engram
from storage.models import Memory

HOLD_BACK_AT = 3  # rejections (nights) of one kind of proposal before it is no longer made
EARLIER_BY_DAYS = 7  # how much earlier a habitually late task is proposed
MIN_LEAD = timedelta(days=1)


def _you(habit: str) -> str:
    """'books flights' -> 'book flights': a habit phrase said to the user."""
    verb, _, rest = habit.partition(" ")
    verb = "do" if verb == "does" else verb[:-1] if verb.endswith("s") else verb
    return f"{verb} {rest}".strip()


def proposal_advice(tool: str, args: dict, now: datetime) -> dict | None:
    """What the learned memory says about proposing this item, or None.

    {"action": "hold", "memory", "because"}: the user turned this kind of proposal down on
    HOLD_BACK_AT or more nights: it is not proposed; the model is told to ask in one line if it matters.
    {"action": "earlier", "memory", "because", "due"}: the user habitually does this kind of task late:
    the due is brought EARLIER_BY_DAYS forward (never closer than a day from now)."""
    title = (args or {}).get("title")
    if not isinstance(title, str) or not title.strip():
        return None
    unwanted = _unwanted(title)
    late = _late(title)
    held_texts = _forms(unwanted)
    late_texts = [late["text"], late["principle"], fallback_principle(late["text"])]
    # one query for every memory asked about below: each proposal of a run is advised on
    found = engram.find_live(("principle", "belief", "interpretation"), [*held_texts, *late_texts])
    for text in held_texts:
        for kind in ("principle", "belief", "interpretation"):
            memory = found.get((kind, engram.make_key(text)))
            # holding a kind of proposal back makes Wilson say less: only once the user approved it
            if memory is not None and memory.strength >= HOLD_BACK_AT and allowed(memory.text):
                return {
                    "action": "hold",
                    "memory": memory.id,
                    "text": memory.text,
                    "because": f"you turned down {unwanted['noun']} {int(memory.strength)} times",
                }
    name = subject_of(title)[0]
    rates = subject_rates(name)
    if rates and rates.get("rejected", 0) >= HOLD_BACK_AT and not rates.get("approved") and allowed(unwanted["text"]):
        return {
            "action": "hold",
            "memory": "calibration",
            "text": _rates_line(name, rates),
            "because": f"you turned down {unwanted['noun']} {rates['rejected']} times",
        }
    due = _parse_due(args.get("due"))
    if due is None:
        return None
    for text in late_texts:
        for kind in ("principle", "belief"):
            memory = found.get((kind, engram.make_key(text)))
            if memory is None:
                continue
            earlier = max(due - timedelta(days=EARLIER_BY_DAYS), now + MIN_LEAD)
            if earlier.date() >= due.date():
                return None
            _, habit, _ = subject_of(title)
            dated = len(str(args["due"]).strip()) <= 10  # a date stays a date, a moment a moment
            return {
                "action": "earlier",
                "memory": memory.id,
                "text": memory.text,
                "due": earlier.date().isoformat() if dated else earlier.isoformat(),
                "because": f"you usually {_you(habit)} late",
            }
    return None


def reminder_advice(title: str | None, topic: str | None = None) -> dict | None:
    """Whether learned memory thins this task's reminders: {"memory", "text"} when the user let early
    reminders about its kind pass on HOLD_BACK_AT nights or more (a live belief or principle) and approved
    reminding of it only when it is due (actors/hippocampus/consent.py), else None.
    Only the heads-ups before the due are left out; the due and overdue reminders stay."""
    return reminder_advice_many([(title, topic)])[0]


def reminder_advice_many(subjects: list[tuple[str | None, str | None]]) -> list[dict | None]:
    """`reminder_advice` for many (title, topic) pairs, with one read: the briefing asks for every task it lists."""
    texts_of = [_reminder_texts(title, topic) for title, topic in subjects]
    found = engram.find_live(("principle", "belief"), [text for texts in texts_of for text in texts])
    return [_reminder_found(texts, found) for texts in texts_of]


@lru_cache(maxsize=1024)  # a task's texts are asked for every morning it is listed
def _reminder_texts(title: str | None, topic: str | None) -> tuple[str, ...]:
    texts = [text for words in (title, topic) if words and words.strip() for text in _forms(_unheeded(words))]
    if texts:
        texts.append(_unheeded_any()["principle"])  # let pass about several kinds: every kind (nightly._generalise)
    return tuple(texts)


def _reminder_found(texts: tuple[str, ...], found: dict) -> dict | None:
    for text in texts:
        for kind in ("principle", "belief"):
            memory = found.get((kind, engram.make_key(text)))
            if (
                memory is not None and (kind == "principle" or memory.strength >= HOLD_BACK_AT) and allowed(memory.text)
            ):  # fewer heads-ups: only once the user approved it
                return {"memory": memory.id, "text": memory.text}
    return None


_IGNORED_SENDER = re.compile(
    r"^(?:keep in mind: )?user ignores mail from (\S+)$"
    r"|^keep mail from (\S+) for the morning briefing$"
)


def about_one_sender(text: str) -> bool:
    """Whether a memory says how the user treats one sender's mail: it matters when that sender writes."""
    return bool(_IGNORED_SENDER.match(text.strip().lower()))


def ignored_senders(at: datetime | None = None) -> dict[str, dict]:
    """Senders whose mail the user lets pass, by address: {"memory", "text"} of the live belief (of
    HOLD_BACK_AT nights or more) or principle that says so. Triage ranks their mail for the briefing."""
    alive = Memory.invalidated_at.is_null()
    if at is not None:
        alive = (Memory.created_at <= at) & (alive | (Memory.invalidated_at > at))
    query = (
        Memory.select()
        .where(Memory.kind.in_(("principle", "belief")) & Memory.key.contains("mail from") & alive)
        .order_by(Memory.kind.desc(), Memory.id)
    )
    found: dict[str, dict] = {}
    for memory in query:
        match = _IGNORED_SENDER.match(memory.text.strip().lower())
        if match and (memory.kind == "principle" or memory.strength >= HOLD_BACK_AT) and allowed(memory.text):
            found.setdefault(match.group(1) or match.group(2), {"memory": memory.id, "text": memory.text})
    return found


def sender_advice(payload: dict | None, senders: dict[str, dict]) -> dict | None:
    """The memory that says the user ignores this item's sender, or None (not a mail, or not such a sender)."""
    payload = payload if isinstance(payload, dict) else {}
    sender = str(payload.get("from") or "").strip().lower()
    advice = senders.get(sender) if sender and payload.get("channel", "email") in MAIL_CHANNELS else None
    return dict(advice, sender=sender) if advice else None


def sender_fact(row, senders: dict[str, dict]) -> dict:
    """{"ignored_sender": advice} for a buffered mail from a sender the user ignores, for the offline rules."""
    advice = sender_advice(dict(row.payload or {}, channel=row.channel), senders)
    return {"ignored_sender": advice} if advice else {}


def triage_hints(rows: list, now: datetime) -> dict:
    """{"learned": line} for the triage model when some of these rows come from senders the user ignores."""
    hint = sender_hint(ignored_senders(now), rows)
    return {"learned": hint} if hint else {}


def sender_hint(senders: dict[str, dict], rows: list) -> str | None:
    """One line for the triage model naming the senders of these rows whose mail the user ignores."""
    named = {}
    for row in rows:
        advice = sender_advice(dict(row.payload or {}, channel=row.channel), senders)
        if advice:
            named[advice["sender"]] = advice["memory"]
    if not named:
        return None
    listed = ", ".join(f"{sender} (memory {memory})" for sender, memory in named.items())
    return (
        f"Learned: the user lets mail from {listed} pass. Put their mail in the briefing (priority 3) "
        "or drop it, unless it needs the user today (a child, health, travel trouble, a deadline today)."
    )


def steer(tool: str, args: dict, now: datetime, effects: list, *, background: bool) -> tuple[dict, dict | None, str]:
    """A proposal as learned memory shapes it: (args, the answer when it is held back, a description note).

    Only plans Wilson makes by itself are steered (`background`): what the user asks for in words is
    proposed as asked. Each effect is appended to `effects` with the memory that caused it, for the trace."""
    advice = proposal_advice(tool, args, now) if background else None
    if advice is None:
        return args, None, ""
    if advice["action"] == "hold":
        effects.append(f"{tool} “{args.get('title')}” not proposed: memory {advice['memory']} ({advice['text']})")
        # answered as an error so that the run gets another round in which to ask instead
        return (
            args,
            {
                "error": f"not proposed: {advice['because']} (memory: {advice['text']}). If it still "
                "matters, ask the user in one short line instead of proposing it.",
                "status": "not proposed",
                "because": advice["because"],
            },
            "",
        )
    effects.append(
        f"{tool} “{args.get('title')}” due {args.get('due')} → {advice['due']}: "
        f"memory {advice['memory']} ({advice['text']})"
    )
    return dict(args, due=advice["due"]), None, f" (earlier than usual: {advice['because']})"
