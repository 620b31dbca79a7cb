"""The hippocampus: nightly consolidation of working memory into the engram.

Told `Consolidate()` by the tick (config hippocampus.schedule). One run reads
what happened since the last run (decided proposals, completed tasks, the user's
reactions and words, reminders and mail the user acted on or let pass), stores
each as an episode, and climbs the ladder

    episode -> interpretation -> belief -> principle

with provenance at every step. Interpretations come from plain rules first; the
model (the `[hippocampus] role`, fast by default) may rephrase or add to them, and
when it cannot be reached the rule candidates are stored as they are. Repetition is counted by the engram's dedup
(one strengthening per night), so a pattern seen on two nights becomes a belief
and one seen on four becomes a principle. Counter-evidence invalidates what it
contradicts. Old weak memories are pruned, and the outcome figures the cortex
calibrates with are refreshed in the `calibration` setting.

A run is recorded in a cursor (`hippocampus:last_run`) in the same transaction
as the memories it wrote, so every episode is consolidated exactly once and a
restarted actor resumes where the last committed run ended. A night with
nothing new costs no tokens.

The package, along its seams: `episodes` (reading the day) with `heeded` (reminders and
mail acted on or let pass), `rules` (interpretations and counter-evidence), `outcomes`
(calibration), `model` (the model's record_memories call), `nightly` (one run, one
commit) and `actor`; what was learned is used by `recall` (memories for a planner) and
`advice` (proposals steered, reminders thinned, senders named to triage); `skill` lets the
user list and forget memories (the list itself is a storage read: storage/beliefs.py).
"""
