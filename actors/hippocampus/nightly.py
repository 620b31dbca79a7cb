"""One night's consolidation: read the window since the last run, store its episodes, climb the
ladder, invalidate what was refuted, prune, save calibration, and move the cursor, all in one commit."""

from __future__ import annotations

from datetime import datetime, timedelta

from actors.hippocampus.common import LEARNED_KINDS, _iso
from actors.hippocampus.episodes import collect_episodes
from actors.hippocampus.model import ask_model
from actors.hippocampus.outcomes import CALIBRATION_DAYS, SUBJECT_DAYS, _save_calibration, calibration, subject_outcomes
from actors.hippocampus.rules import UNHEEDED_ABOUT, _unheeded_any, counter_evidence, fallback_principle, interpret
from storage import engram, kv, trace
from storage.db import claim_transaction, serialise
from storage.models import Memory
from storage.prepared import prepared
from wilson.kernel import faults
from wilson.kernel.clock import UTC
from wilson.kernel.timeparse import utc_or_none

CURSOR = "hippocampus:last_run"
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
BELIEF_AT = 2  # nights an interpretation must recur before it is believed
PRINCIPLE_AT = 4  # strength a belief needs before it guides behaviour
GENERAL_AT = 3  # kinds of task whose early reminders the user let pass before that holds for every kind


def last_run() -> datetime:
    value = kv.get_cursor(CURSOR)
    if not isinstance(value, dict) or not value.get("until"):
        return EPOCH
    return utc_or_none(value["until"])


def _set_cursor(until: datetime, now: datetime) -> None:
    kv.put_cursor(CURSOR, {"until": _iso(until)}, now)


def _invalidate_all(refutations: list[tuple[list[str], str]], skip: set[str], now: datetime) -> int:
    """Invalidate the live learned memories with the given texts: (texts, reason) pairs, applied in order."""
    found = engram.find_live(LEARNED_KINDS, [t for texts, _ in refutations for t in texts])
    count = 0
    for texts, reason in refutations:
        for text in texts:
            key = engram.make_key(text)
            if key in skip:
                continue
            for kind in LEARNED_KINDS:
                memory = found.get((kind, key))
                if memory is not None and engram.invalidate(memory.id, now, reason):
                    count += 1
    return count


def _promote(touched: dict[int, object], principles: dict[str, str | None], now: datetime) -> tuple[int, int]:
    """Interpretations that recurred become beliefs; strong beliefs become principles."""
    beliefs = principles_made = 0
    done: set[int] = set()
    for memory in list(touched.values()):
        if memory.kind != "interpretation" or memory.strength < BELIEF_AT:
            continue
        existing = engram.find("belief", memory.text)
        if existing is not None and existing.id in touched:
            continue  # the model already reinforced it tonight
        if existing is None and engram.was_retired("belief", memory.text, memory.provenance):
            continue  # the user retired this belief: the evidence it stood on cannot bring it back
        # A new belief starts with all the evidence behind it; an old one gains tonight's.
        weight = 1.0 if existing is not None else memory.strength
        belief = engram.store("belief", memory.text, memory.provenance, now, weight=weight)
        touched[belief.id] = belief
        beliefs += existing is None
    for memory in list(touched.values()):
        if memory.kind != "belief" or memory.strength < PRINCIPLE_AT or memory.id in done:
            continue
        done.add(memory.id)
        key = memory.key
        if key in principles and principles[key] is None:
            continue  # a habit worth knowing but not one to act against
        text = principles.get(key) or fallback_principle(memory.text)
        existing = engram.find("principle", text)
        if existing is not None and existing.id in touched:
            continue
        weight = 1.0 if existing is not None else memory.strength
        principle = engram.store("principle", text, memory.provenance + [f"memory:{memory.id}"], now, weight=weight)
        touched[principle.id] = principle
        principles_made += existing is None
    return beliefs, principles_made


# the beliefs that the user lets early reminders about one kind of task pass: read every night
UNHEEDED_BELIEFS = prepared(
    lambda s: (
        Memory.select()
        .where(
            (Memory.kind == "belief")
            & Memory.invalidated_at.is_null()
            & Memory.key.startswith(engram.make_key(UNHEEDED_ABOUT))
        )
        .order_by(Memory.id)
    )
)


def _generalise(touched: dict[int, object], now: datetime, refuted: list[dict]) -> int:
    """The user let early reminders pass about GENERAL_AT kinds of task or more (a live belief for each, so
    each let pass on BELIEF_AT nights: more evidence than one kind's HOLD_BACK_AT): a principle that heads-ups
    are left out for every kind, resting on those beliefs. A heads-up acted on refutes it (rules.counter_evidence),
    tonight or later, and the same beliefs cannot bring it back; a new kind can. Once the user retired it, nothing
    does."""
    pattern = _unheeded_any()
    if any(pattern["principle"] in r["contradicts"] for r in refuted):
        return 0
    if engram.retired_by_user("principle", pattern["principle"]):
        return 0
    beliefs = UNHEEDED_BELIEFS.models()
    if len(beliefs) < GENERAL_AT:
        return 0
    provenance = [f"memory:{m.id}" for m in beliefs]
    existing = engram.find("principle", pattern["principle"])
    if existing is None and engram.was_retired("principle", pattern["principle"], provenance):
        return 0
    if existing is not None and set(provenance) <= set(existing.provenance or []):
        return 0  # nothing new tonight: it is not strengthened by the same beliefs again
    principle = engram.store(
        "principle", pattern["principle"], provenance, now, weight=1.0 if existing is not None else float(len(beliefs))
    )
    touched[principle.id] = principle
    return int(existing is None)


def _merge_items(items: list[dict]) -> list[dict]:
    """One item per (kind, text), so a thought said twice tonight is strengthened once."""
    merged: dict[tuple[str, str], dict] = {}
    for item in items:
        key = (item["kind"], engram.make_key(item["text"]))
        if key in merged:
            merged[key]["provenance"] += [p for p in item["provenance"] if p not in merged[key]["provenance"]]
        else:
            merged[key] = {**item, "provenance": list(item["provenance"])}
    return list(merged.values())


def consolidate(
    now: datetime,
    synapse,
    *,
    prune_after: timedelta = timedelta(days=90),
    prune_below: float = BELIEF_AT,
    role: str = "fast",
) -> dict:
    """One consolidation run over everything since the last one. Returns its counts.

    Reading the night and the model call happen before the write lock is taken; the write
    transaction holds only what must be atomic with the cursor (and a catch-up read of what
    arrived meanwhile), in batched statements, because every other writer (a user's message
    among them) waits while it runs."""
    since = last_run()
    until = max(now, since)  # a clock set back must not open an already consolidated window again
    episodes = collect_episodes(since, until)
    items, chosen_by = ([], "nobody")
    candidates = interpret(episodes)
    if episodes:  # a quiet night makes no model call at all
        items, chosen_by = ask_model(synapse, now, candidates, episodes, role)
    refuted = counter_evidence(episodes)
    figures = calibration(now - timedelta(days=CALIBRATION_DAYS), now)
    figures["subjects"] = subject_outcomes(now - timedelta(days=SUBJECT_DAYS), now)
    figures["subjects_days"] = SUBJECT_DAYS
    stored_episodes = engram.prepare_batch("episode", [(ep["text"], ep["provenance"]) for ep in episodes])

    with claim_transaction():
        serialise("consolidate")  # two processes' runs: the second finds the window done and stops
        if last_run() != since:
            return {
                "episodes": 0,
                "candidates": 0,
                "stored": 0,
                "beliefs": 0,
                "principles": 0,
                "invalidated": 0,
                "pruned": 0,
                "by": "another process",
            }
        # Rows committed while the model was thinking are in the window too; they get
        # the rules' reading tonight rather than being skipped by the cursor for good.
        arrived = collect_episodes(since, until, skip=frozenset(e["id"] for e in episodes))
        if arrived:
            episodes += arrived
            stored_episodes = engram.prepare_batch("episode", [(ep["text"], ep["provenance"]) for ep in episodes])
            items += [{"kind": c["kind"], "text": c["text"], "provenance": c["provenance"]} for c in interpret(arrived)]
            chosen_by = "rules" if chosen_by == "nobody" else chosen_by
            candidates, refuted = interpret(episodes), counter_evidence(episodes)
        items = _merge_items(items)
        counts = {
            "episodes": len(episodes),
            "candidates": len(candidates),
            "stored": 0,
            "beliefs": 0,
            "principles": 0,
            "invalidated": 0,
            "pruned": 0,
            "by": chosen_by,
        }

        engram.write_batch(stored_episodes, now)
        tonight = {engram.make_key(i["text"]) for i in items} | {engram.make_key(c["text"]) for c in candidates}
        refutations = [
            (c["contradicts"], f"contradicted by {', '.join(c['provenance'])}: {c['text']}")
            for c in candidates
            if c["contradicts"]
        ]
        refutations += [
            (r["contradicts"], f"contradicted by {', '.join(r['provenance'])}: {r['because']}") for r in refuted
        ]
        counts["invalidated"] = _invalidate_all(refutations, tonight, now)
        touched: dict[int, object] = {}
        for item in items:
            memory = engram.store(item["kind"], item["text"], item["provenance"], now)
            touched[memory.id] = memory
            counts["stored"] += 1
        principles = {engram.make_key(c["text"]): c["principle"] for c in candidates}
        counts["beliefs"], counts["principles"] = _promote(touched, principles, now)
        counts["principles"] += _generalise(touched, now, refuted)
        # Raw episodes fade after prune_after; a weak interpretation is kept four times as long,
        # so what a season taught (a trip's lessons) is still there when the next one comes round.
        counts["pruned"] = engram.prune(now, prune_below, prune_after, kinds=("episode",)) + engram.prune(
            now, prune_below, prune_after * 4, kinds=("interpretation",)
        )
        _save_calibration(figures)
        _set_cursor(until, now)
        summary = (
            "nothing new"
            if not episodes
            else f"{counts['episodes']} episodes, {counts['stored']} memories ({chosen_by}), "
            f"{counts['beliefs']} new beliefs, {counts['principles']} new principles, "
            f"{counts['invalidated']} invalidated, {counts['pruned']} pruned"
        )
        trace.record(
            trace.new_trace_id(),
            "consolidated",
            "hippocampus",
            summary,
            now,
            data={**counts, "since": _iso(since), "until": _iso(until)},
        )
    faults.point("hippocampus:after-consolidate-commit")  # memories and cursor are one commit: a rerun finds it done
    return counts
