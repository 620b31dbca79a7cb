"""The memory skill: the user lists what Wilson learned and corrects it (forget_memory, through the
gate), and recall's weights are its settings."""

from __future__ import annotations

from datetime import datetime

from actors.hippocampus.common import LEARNED_KINDS
from actors.hippocampus.consent import adopt
from actors.hippocampus.rules import fallback_principle
from storage import engram, recall
from storage.beliefs import memory_list
from storage.db import claim_transaction
from storage.models import Memory
from wilson.skills import Section, Skill, Tool


def forget(memory_id: int, at: datetime, reason: str = "the user said it is wrong") -> list[int]:
    """Retire a memory the user says is wrong, and what was learned from it: the same thought on the
    other rungs (interpretation, belief, principle) and anything citing it. Bi-temporal: the rows stay,
    with `invalidated_at` set and the reason in their trace, so history still says what was believed
    when; and `was_retired` keeps the same evidence from building it again. Returns the retired ids.

    This is the execution of an approved `forget_memory` proposal: it runs only through the gate."""
    memory = Memory.get_or_none(Memory.id == memory_id)
    if memory is None or memory.invalidated_at is not None:
        return []
    texts = [memory.text, fallback_principle(memory.text)]
    pending = [memory] + list(engram.find_live(LEARNED_KINDS, texts).values())
    retired: list[int] = []
    with claim_transaction():
        while pending:
            current = pending.pop(0)
            if current.id in retired:
                continue
            if engram.invalidate(
                current.id,
                at,
                f"{engram.RETIRED_BY_USER}: {reason}"
                + (f" (learned from memory {memory_id})" if current.id != memory_id else ""),
            ):
                retired.append(current.id)
                pending += engram.derived_from([current.id])
    return retired


def describe_forget(memory_id: int) -> str:
    """The proposal line for forgetting a memory: what will no longer be believed."""
    memory = Memory.get_or_none(Memory.id == memory_id)
    if memory is None:
        return f"Forget memory {memory_id} (it no longer exists)"
    return f"Forget what I learned: “{memory.text}” ({memory.kind} {memory.id})"


def _skill():
    class ForgetMemory(Tool):
        name = "forget_memory"
        description = (
            "Propose forgetting something Wilson learned about the user (a memory id from "
            "`memories` or list_memories) when the user says it is wrong. What was learned from it "
            "goes too; the same evidence will not bring it back."
        )
        parameters = {
            "type": "object",
            "required": ["memory"],
            "additionalProperties": False,
            "properties": {
                "memory": {"type": "integer"},
                "reason": {"type": "string", "description": "the user's words"},
            },
        }
        user_only = True  # only the user can say a belief about them is wrong
        limits = {"reason": 300}

        def validate(self, args, call):
            problem = self.check_args(args)
            if problem:
                return problem
            memory = Memory.get_or_none(Memory.id == int(args["memory"])) if 0 < int(args["memory"]) < 2**62 else None
            if memory is None or memory.kind not in LEARNED_KINDS:
                return f"there is no learned memory {args['memory']}; see list_memories"
            if memory.invalidated_at is not None:
                return f"memory {memory.id} is already forgotten"
            return None

        def describe(self, args, call):
            line = describe_forget(int(args["memory"]))
            return line + (f" — because: {args['reason']}" if args.get("reason") else "")

        def execute(self, args, call):
            retired = forget(int(args["memory"]), call.now, args.get("reason") or "the user said it is wrong")
            if not retired:
                raise ValueError(f"memory {args['memory']} was already forgotten")
            return {"retired": retired}

    class AdoptLearning(Tool):
        name = "adopt_learning"
        description = (
            "Let a learned pattern make Wilson say less (fewer or later reminders, a kind of proposal "
            "held back, a sender's mail kept for the briefing), or stop it doing so."
        )
        parameters = {
            "type": "object",
            "required": ["change", "says"],
            "additionalProperties": False,
            "properties": {
                "change": {"type": "string"},
                "says": {"type": "string"},
                "on": {"type": "boolean"},
                # the evidence it was offered on: a declined offer is asked again only
                # with as much new evidence again (consent.py)
                "seen": {"type": "array", "items": {"type": "string"}},
            },
        }
        undo_only = True  # offered by the night's learning (consent.py) and by an undo, never by a model
        limits = {"change": 200, "says": 300}

        def validate(self, args, call):
            problem = self.check_args(args)
            if problem:
                return problem
            return None if str(args.get("change") or "").strip() else "which change?"

        def describe(self, args, call):
            if args.get("on", True):
                return f"From now on: {args['says']}"
            return f"Stop: {args['says']} (as before I learned it)"

        def execute(self, args, call):
            return adopt(args["change"], bool(args.get("on", True)), call.item_id, args["says"], call.now)

    class ListMemories(Tool):
        name = "list_memories"
        description = "What Wilson has learned about the user: principles, beliefs, interpretations, with ids."
        parameters = {"type": "object", "properties": {}}
        read_only = True
        user_only = True

        def execute(self, args, call):
            return memory_list(call.now, limit=30)

    weights = recall.Weights()
    return Skill(
        description="Memory: what Wilson learned about you, listed and corrected; how recall ranks it.",
        tools=(ForgetMemory, ListMemories, AdoptLearning),
        config=Section(
            defaults={
                "weight_text": weights.text,
                "weight_importance": weights.importance,
                "weight_recency": weights.recency,
                "half_life_days": weights.half_life_days,
                "weight_diversity": weights.diversity,
                "weight_semantic": weights.semantic,
            },
            schema={
                "weight_text": ("number", "how much matching words count in recall"),
                "weight_importance": ("number", "how much a memory's rung and strength count"),
                "weight_recency": ("number", "how much a recent memory counts"),
                "half_life_days": ("positive", "days after which recency counts half"),
                "weight_diversity": (
                    "number",
                    "how much recall passes over a memory that repeats one already chosen (off: 0)",
                ),
                "weight_semantic": ("number", "how much an embedding hook counts (off: 0)"),
            },
        ),
        prompt="- When the user says something Wilson believes about them is wrong, propose forget_memory for it.",
    )


SKILL = _skill()
