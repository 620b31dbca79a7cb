"""Writing down what a run decided, in one transaction: the reply, the proposal, surfaced messages,
the user's spoken decisions, and the trace of silence."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import datetime

from actors import attention, tools
from actors.cortex.calls import RunOutcome, present
from actors.cortex.prompts import (
    BROKEN_RUN,
    COULD_NOT_FINISH,
    COULD_NOT_FINISH_PARTLY,
    MODEL_DOWN,
    NO_ANSWER,
    STALE_MODIFICATION,
    SYNC_ONLY,
    AGREED_UNCHANGED,
    UNCHANGED,
)
from actors.proposals import make
from actors.proposals.words import one_line
from actors.proposals.rules import OPEN
from storage import decisions, hot, inbox, outbox, trace
from storage.db import database
from storage.models import Approval, ApprovalItem, Inbox, Turn


@dataclass
class Notify:
    """What a committed run tells whom afterwards: the gate of a new proposal (or one shown again), the channels
    of their rows, the thalamus of a sync the run asked for, and the gate of the user's spoken decisions."""

    approval: int | None = None
    again: int | None = None
    deliver: list[tuple[str, int]] = field(default_factory=list)
    sync: bool = False
    decisions: list[int] = field(default_factory=list)


def record_outcome(row: Inbox, outcome: RunOutcome, now: datetime, config, quiet_until) -> Notify:
    """Commit the run's results in one transaction; returns what to tell whom afterwards."""
    user_run = row.origin == "user"
    channel = row.reply_channel if user_run and row.reply_channel else config.primary_channel
    notify = Notify(sync=outcome.sync_requested)
    topic_id = (row.payload or {}).get("topic_id")
    label = tools.source_label(row)
    allowed = tools.own_hosts() if (label or outcome.read_untrusted) else None
    if allowed is not None and outcome.proposals:
        outcome = replace(
            outcome,
            proposals=[
                (name, args, tools.defang(description, allowed)) for name, args, description in outcome.proposals
            ],
        )
    with database.atomic():
        if outcome.route:  # first: which model role thought about it comes before what it said
            trace.record(row.trace_id, "routed", "cortex", outcome.route, now)
        # the user's turn and the reply's go in together, in one INSERT, once the reply is known
        turns = (
            [
                hot.new(
                    Turn,
                    channel=channel,
                    role="user",
                    text=row.text,
                    trace_id=row.trace_id,
                    created_at=now,
                    topic_id=topic_id,
                    user_id=row.user_id,
                )
            ]
            if user_run
            else []
        )
        if user_run:
            attention.record_ack(row, now)  # "on it" to a follow-up counts like a ✅, whatever the model says
        if outcome.unfinished:
            trace.record(row.trace_id, "unfinished", "cortex", outcome.unfinished, now)
        agreed = row.kind == "modify" and bool((row.payload or {}).get("agreed"))
        if outcome.proposals:
            approval = make.propose(row, outcome.proposals, channel, now, config, offline=outcome.offline_rule)
            if approval is None:
                decided = Approval.get_by_id(row.payload["approval_id"])
                outcome = replace(outcome, proposals=[], reply=STALE_MODIFICATION.format(decided.id, decided.status))
            elif agreed and (
                approval.changes != make.SAME_ITEMS or yes_stands(row.text, outcome, _descriptions(approval.id))
            ):
                # "yes, but …": the user's yes approves the change as made, without asking again; a replacement
                # that changed nothing is the proposal as it was, and they are told the change was not made
                outcome = replace(outcome, decisions=[*outcome.decisions, (approval.id, "approve", (), "")])
                if approval.changes == make.SAME_ITEMS:
                    said = AGREED_UNCHANGED.format(one_line(row.text, 120))
                    outcome = replace(outcome, reply=" ".join(filter(None, [outcome.reply, said])))
            else:
                notify.approval = approval.id
        elif (
            row.kind == "modify"
            and (original := open_original(row))
            and not any(decided[0] == original.id for decided in outcome.decisions)
        ):
            if agreed and yes_stands(row.text, outcome, _descriptions(original.id)):
                # the user said yes to it: approved as it was, and they are told what was not done (left waiting,
                # a proposal they believe they answered was lost for weeks)
                outcome = replace(outcome, decisions=[*outcome.decisions, (original.id, "approve", (), "")])
                told = AGREED_UNCHANGED.format(one_line(row.text, 120))
            else:  # the words did not become a new proposal: the old one stands, and the user is shown it again
                told = UNCHANGED.format(original.id)
                notify.again = original.id
            outcome = replace(outcome, reply=" ".join(filter(None, [outcome.reply, told])))
        if user_run:
            reply = present(outcome.reply, None, allowed if outcome.read_untrusted else None)
            if not reply:
                reply = empty_run_reply(outcome)
            if reply:
                box = outbox.add(
                    channel=channel,
                    text=reply,
                    trace_id=row.trace_id,
                    key=f"reply:{row.id}",
                    at=now,
                    payload={"topic_id": topic_id, "reply_to": (row.payload or {}).get("message_ref")},
                )
                turns.append(
                    hot.new(
                        Turn,
                        channel=channel,
                        role="assistant",
                        text=reply,
                        trace_id=row.trace_id,
                        created_at=now,
                        topic_id=topic_id,
                        user_id=row.user_id,
                    )
                )
                said = "" if outcome.reply.strip() else " (the model gave no answer of its own)"
                trace.record(row.trace_id, "replied", "cortex", f"reply on {channel}{said}", now)
                notify.deliver.append((channel, box.id))
            hot.insert_rows(Turn, turns)
        # quiet hours, the daily cap, bundling and the briefing decide when each one may interrupt
        notify.deliver += attention.surface(
            row,
            [
                (shown, why, urgent)
                for text, why, urgent in outcome.surfaced
                if (shown := present(text, label, allowed))
            ],
            now,
            config,
            quiet_until,
            channel=channel,
            base_payload={"topic_id": topic_id, "source": label},
        )
        if not user_run and not outcome.surfaced and not outcome.proposals:
            reason = outcome.error or outcome.unfinished or "background run ended without surface"
            if outcome.reply:
                reason += f"; model text kept silent: {outcome.reply[:80]!r}"
            box = outbox.add(
                channel="silent",
                text=outcome.reply or "(nothing)",
                trace_id=row.trace_id,
                key=f"silent:{row.id}",
                at=now,
                payload={"why": reason},
                surfaced=False,
            )
            trace.record(row.trace_id, "silent", "cortex", reason, now)
            notify.deliver.append(("silent", box.id))
        for name, problem in outcome.rejected_calls:
            trace.record(row.trace_id, "refused", "cortex", f"{name}: {problem}", now)
        for effect in outcome.remembered:
            trace.record(row.trace_id, "remembered", "cortex", effect, now)
        notify.decisions = record_decisions(row, outcome, channel, now, config)
        inbox.finish(row.id, now, owner=row.owner)
    return notify


def record_decisions(row: Inbox, outcome: RunOutcome, channel: str, now: datetime, config) -> list[int]:
    """Inside the run's transaction: the user's spoken answers become decision rows, bound to that user,
    exactly as a button press does; the gate is told after the commit (and finds them on start)."""
    if row.origin != "user" or not outcome.decisions:
        return []
    user_id = str(row.user_id or config.get("core", "owner"))
    made = []
    for approval_id, action, items, text in as_spoken(outcome.decisions, _undecided):
        decision = decisions.record(
            approval_id=approval_id, action=action, user_id=user_id, channel=channel, text=text, items=items, at=now
        )
        trace.record(
            row.trace_id,
            "decided",
            "cortex",
            f"proposal {approval_id} {action}" + (f" items {list(items)}" if items else "") + " in the user's words",
            now,
        )
        made.append(decision.id)
    return made


def as_spoken(decided: list[tuple], undecided) -> list[tuple]:
    """ "Skip the insurance one" arrives as a reject of that item and an approve of all the others: it becomes
    one confirm (these, and not the others), as the per-item toggles send it, so that the user gets one
    answer and not a "the rest still waits" followed by the rest done. `undecided(approval_id)`: the
    positions still pending."""
    by_approval: dict[int, list[tuple]] = {}
    for decision in decided:
        by_approval.setdefault(decision[0], []).append(decision)
    merged = []
    for approval_id, group in by_approval.items():
        actions = {d[1]: d for d in group}
        if len(group) == 2 and set(actions) == {"approve", "reject"} and all(d[2] for d in group):
            chosen, left = actions["approve"][2], actions["reject"][2]
            if set(chosen) | set(left) == set(undecided(approval_id)):
                merged.append((approval_id, "confirm", chosen, ""))
                continue
        merged.extend(group)
    return merged


def _undecided(approval_id: int) -> list[int]:
    return [
        i.position
        for i in ApprovalItem.select(ApprovalItem.position).where(
            (ApprovalItem.approval == approval_id) & (ApprovalItem.status == "pending")
        )
    ]


def kept(error: str | None) -> bool:
    """A user's run that failed this way is kept and tried again (the model is down or paused: it passes)."""
    return bool(error) and error.startswith(("ModelUnavailable", "BudgetExhausted"))


def record_kept(row: Inbox, outcome: RunOutcome, now: datetime, config) -> list[tuple[str, int]]:
    """A user's message the model could not answer: "I'll keep your message" (once, however often it is tried
    again) and the row kept for the next try, in one transaction; returns what to deliver."""
    channel = row.reply_channel or config.primary_channel
    deliver = []
    with database.atomic():
        if outcome.route:
            trace.record(row.trace_id, "routed", "cortex", outcome.route, now)
        box = outbox.add(
            channel=channel,
            text=MODEL_DOWN,
            trace_id=row.trace_id,
            key=f"kept:{row.id}",
            at=now,
            payload={
                "topic_id": (row.payload or {}).get("topic_id"),
                "reply_to": (row.payload or {}).get("message_ref"),
            },
        )
        if box.status == "pending":  # told once: a later try that fails again finds it delivered
            deliver.append((channel, box.id))
        trace.record(
            row.trace_id,
            "kept",
            "cortex",
            f"{outcome.error[:200]}; the message is kept and answered when the model answers again",
            now,
        )
        inbox.keep(row.id, now, outcome.error or "", owner=row.owner)
    return deliver


# a change that leaves something out or narrows the yes: "but not the insurance one", "ohne die Unterlagen", "only
# the flights", "pero no la del seguro"; a yes with such a change, not made, is no yes to everything
_LEAVES_OUT_RE = re.compile(
    r"\b(?:not|no|nicht|without|except|only|just|skip|drop|remove|leave\s+out|kein\w*|ohne|außer|ausser|nur|"
    r"weg|raus|streich\w*|lösch\w*|sin|excepto|menos|solo|sólo)\b",
    re.I,
)


def yes_stands(change: str, outcome: RunOutcome, items: list[str] = ()) -> bool:
    """Whether a yes whose change was not made still approves the proposal as it was: not when the change leaves
    out something the proposal holds (a word of an item's description within the four words after "not", "ohne",
    "skip" …: "not the insurance one"; "drop the packing" of a plan with no packing leaves nothing out, nor does
    "not before the 19th"), nor when the run broke or its calls were refused (the change may have been understood
    and failed). `items`: the descriptions of the proposal's items."""
    if outcome.error or outcome.rejected_calls:
        return False
    held = {w for item in items for w in re.findall(r"[^\W\d_]{4,}", item.lower())}
    for found in _LEAVES_OUT_RE.finditer(change or ""):
        after = re.findall(r"[^\W\d_]+", change[found.end() :].lower())[:4]
        if any(len(w) >= 4 and (w in held or w.rstrip("s") in held) for w in after):
            return False
    return True


def _descriptions(approval_id: int) -> list[str]:
    return [
        i.description for i in ApprovalItem.select(ApprovalItem.description).where(ApprovalItem.approval == approval_id)
    ]


def empty_run_reply(outcome: RunOutcome) -> str:
    """The user's answer when the model had no words for them: an honest line, never a bare "Noted."."""
    if outcome.unfinished:
        return COULD_NOT_FINISH_PARTLY if outcome.proposals else COULD_NOT_FINISH
    if outcome.proposals or outcome.surfaced or outcome.decisions:
        return ""  # the proposal, the surfaced message or the gate's answer to a decision is the answer
    if outcome.error:
        return MODEL_DOWN if kept(outcome.error) else BROKEN_RUN
    if outcome.sync_requested:
        return SYNC_ONLY
    return NO_ANSWER


def open_original(row: Inbox) -> Approval | None:
    """The still undecided proposal a modify run was asked to change."""
    return Approval.get_or_none((Approval.id == (row.payload or {}).get("approval_id")) & Approval.status.in_(OPEN))
