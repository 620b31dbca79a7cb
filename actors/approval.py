"""The approval gate: every mutation is a proposal the user approves, modifies or rejects.

Decisions arrive as `Decision` messages from a channel (a REPL command, a
Telegram button) and are handled here by code, never by a model. Approving
executes each item exactly once: the item's status moves from pending to
executed in the same transaction that applies it, so a second press finds
nothing left to do. Proposals are bound to their approver, expire, and are
superseded by a modified proposal.

Every proposal says why it was made (`reason`, one line naming the event, message
or deadline behind it) and, when it replaces another, what changed. None vanishes
in silence: one reminder before it expires, one notice when it does (the sweep,
run on the tick's nudge and on every `Recover`), and an expired proposal can be
brought back (`revive`) as a new one. A proposal to close a topic whose end has
passed is asked once more when it expires, so the topic is not left open for good.

Size: one module until issue 17's proposals module is split out of it: presenting, deciding,
executing, expiring, reminding and reviving are transitions of the same rows inside the same
transactions, and tests/test_architecture.py keeps it one of the few writers of those rows.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta

from loguru import logger

from actors import briefing, tools
from storage import decisions, inbox, outbox, trace
from storage.db import database
from storage.models import Approval, ApprovalItem, DecisionRow, Feedback, Inbox, Outbox, Schedule, Task, Topic
from wilson import faults, quiet
from wilson.actor import WilsonActor
from wilson.bounds import MAX_ID, MAX_ITEM
from wilson.messages import (ApprovalSettled, Decision, DecisionRecorded, Deliver, InboxReady, ProposalCreated,
                             Recover)
from wilson.timeparse import aware_or_none

OPEN = ("pending", "partial")
DECISION_BROKE = ("Sorry, something went wrong on my side with your answer to proposal {}, so nothing changed. "
                  "Could you try again?")
REVIVE = "revive"
MAX_REASON = 200  # characters: one line, however long the words it quotes
REMIND_BEFORE_HOURS = 24


@dataclass
class DecisionResult:
    text: str
    settled: bool = False
    stage: str = "refused"
    inbox_id: int | None = None
    task_ids: list = field(default_factory=list)
    revived: int | None = None  # the new proposal an expired one came back as
    deliveries: list = field(default_factory=list)  # (channel, outbox id) an approved item wrote, to nudge


def render(approval: Approval, tz) -> str:
    items = list(approval.items.order_by(ApprovalItem.position))
    lines = [f"Proposal {approval.id}: I'd like to do this — approve, modify or reject?"]
    if approval.reason:
        lines.append(approval.reason[:1].upper() + approval.reason[1:] + ".")
    if (approval.idempotency_key or "").startswith("revive:") and approval.supersedes:
        lines.append(f"(Back again: proposal {approval.supersedes} had expired.)")
    for item in items:
        lines.append(f"{item.position}. {item.description}")
    if approval.changes and approval.supersedes:
        lines.append(f"What changed from proposal {approval.supersedes}:")
        lines += [f"  {line}" for line in approval.changes.splitlines()]
    return "\n".join(lines)


# Why a proposal was made, and what a modification changed ---------------------------------------
def _one_line(text, limit: int = 80) -> str:
    """Words as they may stand inside a quoted line: one line, no curly quotes, links defanged, cut short."""
    return tools._quoted(text if isinstance(text, str) else str(text), limit)


def _day(moment: datetime, tz, now: datetime | None, with_time: bool) -> str:
    local = moment.astimezone(tz)
    text = f"{local:%a} {local.day} {local:%b}"
    if now is None or local.year != now.astimezone(tz).year:
        text += f" {local.year}"
    return text + (f" {local:%H:%M}" if with_time and (local.hour, local.minute) != (0, 0) else "")


def _calendar_reason(buffer: dict, tz, now: datetime) -> str:
    title = _one_line(buffer.get("title") or "an event", 60)
    start = aware_or_none(buffer.get("start"))
    when = f" on {_day(start, tz, now, not buffer.get('all_day'))}" if start else ""
    change = buffer.get("change")
    if change == "cancelled":
        return f"because “{title}”{when} was cancelled in your calendar"
    if change == "changed":
        return f"because “{title}” changed in your calendar, now{when}" if when else \
            f"because “{title}” changed in your calendar"
    return f"because “{title}” is in your calendar{when}"


def reason_for(row: Inbox | None, now: datetime, tz) -> str:
    """One line saying what led to a proposal: the event, message, deadline or reminder of the run
    that made it. Words others wrote are quoted short, with their source named."""
    if row is None:
        return ""
    payload = row.payload if isinstance(row.payload, dict) else {}
    if row.origin == "user":
        return f"because you asked: “{_one_line(row.text)}”"
    if row.kind == "deadline" and payload.get("title"):
        due = aware_or_none(payload.get("due"))
        when = f" {'was' if due and due <= now else 'is'} due {_day(due, tz, now, not payload.get('due_is_date'))}" \
            if due else " has a deadline"
        return f"because “{_one_line(payload['title'], 60)}”{when}"
    if row.kind == "topic_end" and payload.get("title"):
        ends = aware_or_none(payload.get("ends"))
        if ends is not None and (ends.astimezone(tz).hour, ends.astimezone(tz).minute) == (0, 0):
            ends -= timedelta(days=1)  # an all-day end is the midnight after its last day
        on = f" on {_day(ends, tz, now, False)}" if ends else ""
        return f"because “{_one_line(payload['title'], 60)}” ended{on}"
    if row.kind == "reminder":
        return f"because of your reminder “{_one_line(payload.get('text') or row.text, 60)}”"
    buffers = [b for b in payload.get("buffers") or [] if isinstance(b, dict)]
    if buffers:
        first = buffers[0]
        if first.get("channel") == "calendar":
            line = _calendar_reason(first, tz, now)
        elif first.get("via") == "api" and first.get("change") == "new" and first.get("title"):
            # an event a script of the user's sent in: said as an event, not as a web page
            start = aware_or_none(first.get("start"))
            if start is None and len(str(first.get("start") or "")) == 10:  # a date alone: all day
                try:
                    start = datetime.combine(date.fromisoformat(first["start"]), time(0), tz)
                except ValueError:
                    start = None
            when = f" on {_day(start, tz, now, False)}" if start else ""
            line = f"because you sent me “{_one_line(first['title'], 60)}”{when}"
        else:
            line = f"because of {tools.source_label(row)}"
        return line if len(buffers) == 1 or first.get("channel") != "calendar" else \
            f"{line} (and {len(buffers) - 1} more change{'s' if len(buffers) > 2 else ''})"
    if row.kind == "briefing":
        summaries = [i.get("summary") for i in payload.get("items") or [] if isinstance(i, dict) and i.get("summary")]
        what = f": “{_one_line(summaries[0], 60)}”" if summaries else ""
        return f"because of what I found in {tools.source_label(row)}{what}"
    source = tools.source_label(row) or "your " + _one_line(row.source, 30)
    return f"because of {source}: “{_one_line(row.text, 60)}”"


def _identity(tool: str, args: dict) -> tuple:
    """What makes two items the same item in two versions of a proposal (its subject, not its details)."""
    for key in ("task_id", "topic_id"):
        if args.get(key) is not None:
            return tool, key, str(args[key])
    subject = args.get("title") or args.get("text") or args.get("to") or ""
    return tool, " ".join(str(subject).lower().split())


def _when(value, tz) -> str:
    try:
        moment, is_date = tools.parse_when(value, tz)
    except ValueError:
        return str(value)
    return tools.show_when(moment, is_date, tz)


def _detail_change(tool: str, old: dict, new: dict, old_text: str, new_text: str, tz) -> str:
    subject = new.get("title") or new.get("text") or old.get("title") or new_text
    parts = []
    for key in ("due", "starts", "ends", "until"):
        if old.get(key) != new.get(key):
            now_ = _when(new[key], tz) if new.get(key) else "no date"
            was = _when(old[key], tz) if old.get(key) else "no date"
            parts.append(f"{key} {now_} (was {was})")
    if old.get("topic") != new.get("topic"):
        parts.append(f"in {new.get('topic') or 'no topic'} (was {old.get('topic') or 'no topic'})")
    if old.get("cron") != new.get("cron"):
        parts.append(f"schedule {new.get('cron')} (was {old.get('cron')})")
    for key in ("notes", "subject", "body", "escalation"):
        if old.get(key) != new.get(key):
            parts.append(f"new {key}")
    if not parts:  # something else differs: show both versions whole
        return f"changed: {new_text} (was: {old_text})"
    return f"changed: {_one_line(subject, 60)} {', '.join(parts)}"


def changes_between(old: list[tuple[str, dict, str]], new: list[tuple[str, dict, str]], tz) -> str:
    """What a replacement changes against the proposal it supersedes, one line per item added, removed or
    changed (items as (tool, args, description)); '' when they are the same."""
    remaining = list(old)
    lines, added = [], []
    for tool, args, description in new:
        match = next((o for o in remaining if _identity(o[0], o[1]) == _identity(tool, args)), None)
        if match is None:
            added.append(description)
            continue
        remaining.remove(match)
        if match[1] != args:
            lines.append(_detail_change(tool, match[1], args, match[2], description, tz))
    lines += [f"added: {d}" for d in added]
    lines += [f"removed: {d}" for d in (o[2] for o in remaining)]
    return "\n".join(line.splitlines()[0] for line in lines)


def label(approval: Approval) -> str:
    """A proposal in a few words: 'the “Trip to Japan” plan', or its first item."""
    items = list(approval.items.order_by(ApprovalItem.position))
    topic = next((i for i in items if i.tool == "create_topic" and (i.args or {}).get("title")), None)
    if topic is not None:
        return f"the “{_one_line(topic.args['title'], 50)}” plan"
    if not items:
        return "an empty proposal"
    first = f"“{_one_line(items[0].description.splitlines()[0], 50)}”"
    return first if len(items) == 1 else f"{first} and {len(items) - 1} more"


# Never vanishing: one reminder, one notice, a way back ------------------------------------------
def remind_before(config) -> timedelta:
    try:
        hours = float(config.get("approval", "remind_before_hours", REMIND_BEFORE_HOURS))
    except (TypeError, ValueError):
        hours = REMIND_BEFORE_HOURS
    return timedelta(hours=max(hours, 0.0))


def remind_moment(created_at: datetime, expires_at: datetime, before: timedelta) -> datetime:
    """When to nudge: `before` ahead of expiry, but never in the first half of a proposal's life."""
    return max(created_at + (expires_at - created_at) / 2, expires_at - before)


def _lasted(approval: Approval) -> str:
    hours = round((approval.expires_at - approval.created_at).total_seconds() / 3600)
    if hours >= 48:
        return f"{round(hours / 24)} days"
    return f"{hours} hour{'s' if hours != 1 else ''}"


def reminder_text(approval: Approval, tz, now: datetime) -> str:
    return (f"Still waiting for your answer on proposal {approval.id}, {label(approval)}. "
            f"I'll drop it on {_day(approval.expires_at, tz, now, True)} if I don't hear from you.")


def expiry_text(approval: Approval) -> str:
    return (f"I dropped proposal {approval.id}, {label(approval)}: no answer in {_lasted(approval)}, so nothing "
            f"changed. Say “show expired” to see it again, or “revive {approval.id}” to bring it back.")


def due_moment() -> datetime | None:
    """When the gate next has something to do for an unanswered proposal (a reminder, an expiry, a notice
    owed); may be in the past. The sweep takes exactly these rows, so a due moment never stays due."""
    candidates = []
    remind = (Approval.select(Approval.remind_at)
              .where(Approval.status.in_(OPEN) & Approval.reminded_at.is_null() & Approval.remind_at.is_null(False)
                     & Approval.presented_at.is_null(False))
              .order_by(Approval.remind_at).first())
    if remind is not None:
        candidates.append(remind.remind_at)
    expire = Approval.select(Approval.expires_at).where(Approval.status.in_(OPEN)).order_by(Approval.expires_at).first()
    if expire is not None:
        candidates.append(expire.expires_at)
    owed = (Approval.select(Approval.expires_at).where((Approval.status == "expired")
                                                       & Approval.expired_notice_at.is_null())
            .order_by(Approval.expires_at).first())
    if owed is not None:
        candidates.append(owed.expires_at)
    return min(candidates, default=None)


BRIEFING_MARGIN = timedelta(minutes=30)  # a briefing this close to expiry is too late to count as the reminder
BRIEFING_SETTLE = timedelta(minutes=10)  # a briefing that fired is written within this


def briefed(approval: Approval, since: datetime, now: datetime) -> bool:
    """Whether a morning briefing since `since` listed this proposal as waiting (the briefing then is its
    reminder). The briefing names each waiting proposal as "Proposal N:" (actors/thalamus.py)."""
    mention = re.compile(rf"\bProposal {approval.id}:")
    rows = (Outbox.select(Outbox.text, Outbox.payload)
            .where((Outbox.created_at >= since) & (Outbox.created_at <= now)
                   & Outbox.idempotency_key.startswith("briefing:"))
            .order_by(Outbox.id.desc()).limit(10))
    return any(mention.search(row.text or "") for row in rows)


def briefing_ahead(since: datetime, now: datetime, expires_at: datetime) -> datetime | None:
    """When to look again because a morning briefing will list the proposal before it expires (or one fired
    just now and is being written); None when no briefing comes in time and the gate nudges itself."""
    sched = Schedule.get_or_none((Schedule.name == "briefing") & (Schedule.kind == "builtin"))
    if sched is None or not sched.enabled:
        return None
    if sched.last_fired_at is not None and since <= sched.last_fired_at and now < sched.last_fired_at + BRIEFING_SETTLE:
        return sched.last_fired_at + BRIEFING_SETTLE
    if sched.next_fire_at is not None and now < sched.next_fire_at <= expires_at - BRIEFING_MARGIN:
        return sched.next_fire_at + BRIEFING_SETTLE
    return None


class CannotPropose(ValueError):
    """The tool is not there or says this cannot be done; the message says why, for the user."""


def propose_one(tool: str, args: dict, *, owner: str, channel: str, reason: str, key: str, now: datetime,
                config) -> Approval:
    """A proposal of one tool that the user asked for by a command of their own (a form on the dashboard,
    `forget N` at the terminal): shown and decided like any other, exactly once per `key`. The caller
    tells the gate (ProposalCreated) after this commits."""
    box = tools.toolbox(config)
    if box.get(tool) is None:
        raise CannotPropose("That cannot be done: the skill that does it is not installed or is turned off.")
    problem = tools.validate_mutation(tool, args, config.timezone, owner, owner, now, box=box)
    if problem:
        raise CannotPropose(problem[:1].upper() + problem[1:] + ".")
    with database.atomic():
        made = Approval.get_or_none(Approval.idempotency_key == key)
        if made is not None:
            return made
        expiry = timedelta(hours=float(config.get("approval", "expiry_hours") or 72))
        trace_id = trace.new_trace_id()
        approval = Approval.create(trace_id=trace_id, approver=owner, channel=channel, summary=reason[:200],
                                   nonce=secrets.token_hex(4), created_at=now, expires_at=now + expiry,
                                   idempotency_key=key, reason=reason[:MAX_REASON])
        ApprovalItem.create(approval=approval, position=1, tool=tool, args=args,
                            description=tools.describe_item(tool, args, config.timezone, owner, owner, box=box))
        trace.record(trace_id, "proposed", channel, f"proposal {approval.id}: {reason}", now)
    return approval


def release_kept(now: datetime) -> list[int]:
    """Proposals kept for a morning briefing that did not tell them go back to the gate, to be shown alone."""
    orphans = briefing.orphaned(now)
    for approval_id in orphans:
        with database.atomic():
            if Approval.update(presented_at=None).where((Approval.id == approval_id)
                                                        & Approval.presented_at.is_null(False)).execute():
                trace.record(Approval.get_by_id(approval_id).trace_id, "released", "approval",
                             f"proposal {approval_id}: no briefing told it; shown on its own", now)
    return orphans


def sweep_due(now: datetime) -> bool:
    moment = due_moment()
    return moment is not None and moment <= now


def copy_proposal(original: Approval, items: list[ApprovalItem], now: datetime, config, *, key: str,
                  reason: str) -> Approval:
    """A new proposal with some of an old one's items, in the caller's transaction; it supersedes the old one."""
    expiry = timedelta(hours=float(config.get("approval", "expiry_hours") or 72))
    expires = now + expiry
    again = Approval.create(
        trace_id=original.trace_id, approver=original.approver, channel=original.channel, summary=original.summary,
        nonce=secrets.token_hex(4), inbox_id=original.inbox_id, supersedes=original.id, topic_id=original.topic_id,
        created_at=now, expires_at=expires, idempotency_key=key, reason=reason,
        remind_at=remind_moment(now, expires, remind_before(config)))
    for position, item in enumerate(items, start=1):
        ApprovalItem.create(approval=again, position=position, tool=item.tool, args=item.args,
                            description=item.description)
    Approval.update(superseded_by=again.id).where(Approval.id == original.id).execute()
    return again


def ended_topics_to_close(approval: Approval, now: datetime) -> list[ApprovalItem]:
    """Items of an expiring proposal that would close a topic whose end has passed and which is still open.
    Asked once more only: a proposal that is itself the second asking is not asked a third time."""
    if (approval.idempotency_key or "").startswith("reclose:"):
        return []
    found = []
    for item in approval.items.where((ApprovalItem.status == "pending") & (ApprovalItem.tool == "close_topic")):
        topic = Topic.get_or_none(Topic.id == (item.args or {}).get("topic_id"))
        if topic is not None and topic.status == "active" and topic.ends is not None and topic.ends <= now:
            found.append(item)
    return found


def outcome_line(approval: Approval) -> str:
    marks = {"executed": "✓", "rejected": "✗", "superseded": "↻", "failed": "!", "pending": "·"}
    items = approval.items.order_by(ApprovalItem.position)
    return "\n".join(f"{marks.get(i.status, '·')} {i.description}" for i in items)


def settle_status(approval_id: int) -> str:
    statuses = [i.status for i in ApprovalItem.select().where(ApprovalItem.approval == approval_id)]
    if "pending" in statuses:
        return "partial" if any(s != "pending" for s in statuses) else "pending"
    # an item that failed was still approved by the user; only their own "no" makes a rejection
    return "approved" if {"executed", "failed"} & set(statuses) else "rejected"


def may_decide(user_id, approval: Approval, owner: str | None = None) -> bool:
    """The person a proposal is for decides it; so does the owner, when `owner` is given (they decide for all)."""
    return str(user_id) in {str(approval.approver), str(owner) if owner is not None else str(approval.approver)}


def check(decision: Decision, approval: Approval | None, now: datetime, tz=None, owner: str | None = None) -> str | None:
    """Why this decision cannot be taken, or None when it can (`tz`: the user's, for the times it names;
    `owner`: someone who may decide for everyone)."""
    if approval is None:
        return f"I don't know proposal {decision.approval_id}."
    if not may_decide(decision.user_id, approval, owner):
        return "Sorry, only the person this proposal is for can decide on it."
    if decision.nonce is not None and decision.nonce != approval.nonce:
        return "That button is out of date."
    if approval.status == "superseded":
        return f"Proposal {approval.id} was replaced by proposal {approval.superseded_by}; please use that one."
    if approval.status in ("approved", "rejected"):
        return f"Already done: proposal {approval.id} was {approval.status}."
    if approval.status == "expired" and approval.superseded_by:
        return (f"Proposal {approval.id} expired and came back as proposal {approval.superseded_by}; "
                "please use that one.")
    if approval.status == "expired" or (approval.status in OPEN and approval.expires_at <= now):
        Approval.update(status="expired", decided_at=now).where(
            (Approval.id == approval.id) & Approval.status.in_(OPEN)).execute()
        expired = approval.expires_at.astimezone(tz) if tz else approval.expires_at
        return (f"Proposal {approval.id} expired on {expired:%d %b %H:%M}{'' if tz else ' UTC'}, so I changed "
                f"nothing. Ask me again if you still want it, or say “revive {approval.id}” to bring it back.")
    return None


def selected(approval: Approval, positions: tuple[int, ...]) -> list[ApprovalItem]:
    query = approval.items.where(ApprovalItem.status == "pending").order_by(ApprovalItem.position)
    if positions:
        # a number no proposal has selects nothing (and must not overflow the query)
        query = query.where(ApprovalItem.position.in_([p for p in positions if 0 < p <= MAX_ITEM] or [0]))
    return list(query)


class NoLongerOpen(Exception):
    """The proposal was decided or replaced between the check and the decision's transaction."""


def hold_open(approval: Approval, now: datetime) -> None:
    """Inside the decision's transaction: lock the proposal's row, and make sure it is still open.

    A replacement committed by the cortex after `check()` read the row would otherwise be
    overwritten by this decision."""
    held = Approval.update(decided_at=now).where(
        (Approval.id == approval.id) & Approval.status.in_(OPEN)).execute()
    if not held:
        raise NoLongerOpen()


def approve(approval: Approval, positions: tuple[int, ...], now: datetime, tz, plan_task,
            rest: str | None = None, owner: str | None = None, config=None) -> DecisionResult:
    """Execute the chosen items exactly once, in one transaction; `rest="reject"` rejects the items not
    chosen in the same transaction (a confirm after per-item toggles: these, and not the others).
    What the items create belongs to the approver; `owner` (the configured one) sees every topic;
    `config` says which skills are on (an item of a skill turned off fails)."""
    executed, failed, task_ids, left_out, deliveries = [], [], [], [], []
    created_topics: dict = {}
    with database.atomic():
        hold_open(approval, now)
        for item in selected(approval, positions):
            claimed = ApprovalItem.update(status="executing").where(
                (ApprovalItem.id == item.id) & (ApprovalItem.status == "pending")).execute()
            if not claimed:
                continue
            try:
                with database.atomic():
                    result, sent = tools.execute_approved(item, approval.approver, now, tz, created_topics,
                                                          owner=owner, config=config)
                deliveries += sent
            except Exception as exc:  # one broken item must not undo the others
                ApprovalItem.update(status="failed", result={"error": str(exc)}).where(ApprovalItem.id == item.id).execute()
                failed.append(f"{item.description} ({exc})")
                continue
            ApprovalItem.update(status="executed", result=result, executed_at=now).where(
                ApprovalItem.id == item.id).execute()
            executed.append(item.description)
            if "task_id" in result:
                task_ids.append(result["task_id"])
        for task_id in task_ids:
            plan_task(Task.get_by_id(task_id), now)
        if rest == "reject" and (executed or failed):
            left_out = selected(approval, ())
            ApprovalItem.update(status="rejected").where(
                ApprovalItem.id.in_([i.id for i in left_out]) & (ApprovalItem.status == "pending")).execute()
        status = settle_status(approval.id)
        Approval.update(status=status, decided_at=now).where(Approval.id == approval.id).execute()
        Feedback.create(approval_id=approval.id, kind="approved", value=str(len(executed)), at=now)
        if left_out:
            Feedback.create(approval_id=approval.id, kind="rejected",
                            value=",".join(str(i.position) for i in left_out), at=now)
    if not executed and not failed:
        return DecisionResult(f"Already done: nothing left to approve in proposal {approval.id}.")
    text = "Done:\n" + "\n".join(f"✓ {d}" for d in executed) if executed else ""
    if failed:
        text += ("\n" if text else "") + "Could not do:\n" + "\n".join(f"! {d}" for d in failed)
    if left_out:
        text += "\nLeft out, as you chose:\n" + "\n".join(f"✗ {i.description}" for i in left_out)
    if status == "partial":
        text += f"\nStill waiting on the rest of proposal {approval.id}."
    return DecisionResult(text, settled=status != "partial", stage="approved", task_ids=task_ids,
                          deliveries=deliveries)


def reject(approval: Approval, positions: tuple[int, ...], now: datetime) -> DecisionResult:
    with database.atomic():
        hold_open(approval, now)
        items = selected(approval, positions)
        ApprovalItem.update(status="rejected").where(
            ApprovalItem.id.in_([i.id for i in items]) & (ApprovalItem.status == "pending")).execute()
        status = settle_status(approval.id)
        Approval.update(status=status, decided_at=now).where(Approval.id == approval.id).execute()
        Feedback.create(approval_id=approval.id, kind="rejected", value=",".join(str(i.position) for i in items), at=now)
    if not items:
        return DecisionResult(f"Nothing left to reject in proposal {approval.id}.")
    text = "Rejected, nothing changed:\n" + "\n".join(f"✗ {i.description}" for i in items)
    if status == "partial":
        text += f"\nThe rest of proposal {approval.id} still waits for you."
    return DecisionResult(text, settled=status != "partial", stage="rejected")


def modify(approval: Approval, decision: Decision, now: datetime) -> DecisionResult:
    """Hand the user's words back to the cortex, which proposes a replacement."""
    if not decision.text.strip():
        return DecisionResult(f"What should I change in proposal {approval.id}? "
                              f"Tell me, e.g. “modify {approval.id} book flights by Feb 1”.", stage="asked")
    row = inbox.add(source=decision.channel, text=decision.text, priority=0, at=now, kind="modify", origin="user",
                    payload={"approval_id": approval.id}, user_id=str(decision.user_id),
                    reply_channel=decision.channel, trace_id=approval.trace_id)
    Feedback.create(approval_id=approval.id, kind="modified", value=decision.text[:200], at=now)
    return DecisionResult("", stage="modify", inbox_id=row.id if row else None)


def describe_quiet(result: DecisionResult) -> str:
    """A decision the gate answers without words of its own, as the trace tells it."""
    return f"brought back as proposal {result.revived}" if result.revived else "handed to the cortex"


def decision_of(row: DecisionRow) -> Decision:
    return Decision(approval_id=row.approval_id, action=row.action, user_id=row.user_id, channel=row.channel,
                    text=row.text, items=tuple(row.items or ()), nonce=row.nonce)


def find(approval_id: int) -> Approval | None:
    """The proposal, or None, for any number a person could type or a button could carry."""
    if not 0 < approval_id <= MAX_ID:
        return None
    return Approval.get_or_none(Approval.id == approval_id)


class ApprovalActor(WilsonActor):
    """Presents proposals and applies decisions, both from rows: a message only says where to look.

    On start it presents every open proposal not yet shown and applies every decision not yet
    applied, so a proposal committed or a button pressed while this actor was down (or the
    process dead) is shown, or applied, once."""

    realtime = True  # a button press is answered while the user looks at it
    name = "approval"

    def on_start(self):
        self.recover()

    def recover(self) -> None:
        for approval in Approval.select().where(Approval.status.in_(OPEN) & Approval.presented_at.is_null()):
            self.present_contained(approval.id)
        for row in decisions.pending():
            self.apply_contained(row.id)
        try:
            self.sweep()
        except Exception as exc:  # the next recover (a tick, a restart) sweeps again
            logger.opt(exception=exc).error("could not sweep proposals for expiry")

    # One broken proposal or decision must not take the gate (and everyone's decisions) down:
    # on start it would meet the same row again, and again.
    def present_contained(self, approval_id: int, again_for: int | None = None) -> None:
        try:
            self.present(approval_id, again_for)
        except Exception as exc:
            logger.opt(exception=exc).error("could not present proposal {}", approval_id)

    def apply_contained(self, decision_id: int) -> None:
        try:
            self.apply(decision_id)
        except Exception as exc:  # its transaction rolled back: nothing changed; the person is told so once
            logger.opt(exception=exc).error("could not apply decision {}", decision_id)
            self.give_up_decision(decision_id, f"{type(exc).__name__}: {exc}")

    def give_up_decision(self, decision_id: int, error: str) -> None:
        now = self.now()
        with database.atomic():
            row = DecisionRow.get_or_none(DecisionRow.id == decision_id)
            if row is None or not decisions.claim(row.id, now):
                return
            box = outbox.add(channel=row.channel, text=DECISION_BROKE.format(row.approval_id),
                             trace_id=trace.new_trace_id(), at=now, key=f"decision:{row.id}",
                             payload={"decision": {"approval_id": row.approval_id, "action": row.action}})
            trace.record(box.trace_id, "error", self.name, f"decision {row.id} on proposal {row.approval_id}: {error}",
                         now)
        self.tell(row.channel, Deliver(box.id))

    def sweep(self) -> None:
        """Expire what ran out of time (telling the user), and remind once of what soon will."""
        now = self.now()
        if not sweep_due(now):
            return
        for (approval_id,) in Approval.select(Approval.id).where(
                Approval.status.in_(OPEN) & (Approval.expires_at <= now)).tuples():
            self.expire(approval_id)
        for (approval_id,) in Approval.select(Approval.id).where(
                (Approval.status == "expired") & Approval.expired_notice_at.is_null()).tuples():
            self.expire(approval_id)
        for (approval_id,) in Approval.select(Approval.id).where(
                Approval.status.in_(OPEN) & Approval.reminded_at.is_null() & (Approval.remind_at <= now)
                & Approval.presented_at.is_null(False)).tuples():
            self.remind(approval_id)

    def expire(self, approval_id: int) -> None:
        """Mark one proposal expired and tell its person once; a close of a topic that has ended is asked again."""
        now = self.now()
        box = again = held = None
        with database.atomic():
            Approval.update(status="expired", decided_at=now).where(
                (Approval.id == approval_id) & Approval.status.in_(OPEN) & (Approval.expires_at <= now)).execute()
            if not Approval.update(expired_notice_at=now).where(
                    (Approval.id == approval_id) & (Approval.status == "expired")
                    & Approval.expired_notice_at.is_null()).execute():
                return  # told already (another gate, or a second nudge)
            approval = Approval.get_by_id(approval_id)
            closing = [] if approval.superseded_by else ended_topics_to_close(approval, now)
            if closing:
                titles = ", ".join(f"“{_one_line(Topic.get_by_id(i.args['topic_id']).title, 50)}”" for i in closing)
                again = copy_proposal(approval, closing, now, self.config, key=f"reclose:{approval.id}",
                                      reason=f"because {titles} has ended and is still open "
                                             f"(proposal {approval.id} to close it expired)")
                trace.record(approval.trace_id, "asked again", self.name,
                             f"proposal {approval.id} expired; closing asked again as proposal {again.id}", now)
            rest = approval.items.where(ApprovalItem.status == "pending").count() - len(closing)
            if rest > 0:
                held = quiet.hold_until(self.config, now)
                box = outbox.add(channel=approval.channel, text=expiry_text(approval), trace_id=approval.trace_id,
                                 at=now, key=f"expired:{approval.id}", deliver_after=held,
                                 payload={"revive": {"id": approval.id, "nonce": approval.nonce},
                                          "reply_to": approval.message_ref, "topic_id": approval.topic_id})
            trace.record(approval.trace_id, "expired", self.name,
                         f"proposal {approval.id} unanswered until {approval.expires_at:%Y-%m-%d %H:%M} UTC"
                         + (", user told" if box else ""), now)
        faults.point("approval:after-expiry-commit")
        self.tell(approval.channel, ApprovalSettled(approval.id))
        if box is not None and held is None:
            self.tell(approval.channel, Deliver(box.id))
        if again is not None:
            self.present(again.id)

    def remind(self, approval_id: int) -> None:
        """The one reminder before a proposal expires: the morning briefing that lists it, when one comes in
        time; else a short nudge, in reply to the proposal where the channel can."""
        now = self.now()
        with database.atomic():
            approval = Approval.get_or_none(Approval.id == approval_id)
            if approval is None or approval.status not in OPEN or approval.reminded_at is not None:
                return
            since = max(approval.presented_at or approval.created_at, approval.expires_at - remind_before(self.config))
            if not briefed(approval, since, now):
                later = briefing_ahead(since, now, approval.expires_at)
                if later is not None:
                    Approval.update(remind_at=later).where(
                        (Approval.id == approval_id) & Approval.reminded_at.is_null()).execute()
                    return
            if not Approval.update(reminded_at=now).where(
                    (Approval.id == approval_id) & Approval.status.in_(OPEN) & Approval.reminded_at.is_null()
                    & (Approval.expires_at > now)).execute():
                return
            if briefed(approval, since, now):
                trace.record(approval.trace_id, "reminded", self.name,
                             f"proposal {approval.id} listed as waiting in the morning briefing", now)
                return
            held = quiet.hold_until(self.config, now)
            if held is not None and held >= approval.expires_at:
                held = None  # a nudge after the proposal has gone would be no nudge
            box = outbox.add(channel=approval.channel, text=reminder_text(approval, self.config.timezone, now),
                             trace_id=approval.trace_id, at=now, key=f"remind:{approval.id}", deliver_after=held,
                             payload={"reminder_for": approval.id, "reply_to": approval.message_ref,
                                      "topic_id": approval.topic_id})
            trace.record(approval.trace_id, "reminded", self.name, f"proposal {approval.id} still unanswered", now)
        faults.point("approval:after-remind-commit")
        if held is None:
            self.tell(approval.channel, Deliver(box.id))

    def receive(self, message):
        match message:
            case ProposalCreated(approval_id=approval_id, again_for=again_for):
                self.present_contained(approval_id, again_for)
            case DecisionRecorded(decision_id=decision_id):
                self.apply_contained(decision_id)
            case Recover():
                self.recover()
            case Decision():  # from a caller that did not write it down first: written down now
                self.apply_contained(self.record(message).id)

    def record(self, decision: Decision) -> DecisionRow:
        approval_id = decision.approval_id if 0 <= decision.approval_id <= MAX_ID else 0
        return decisions.record(approval_id=approval_id, action=decision.action, user_id=decision.user_id,
                                channel=decision.channel, text=decision.text, items=decision.items,
                                nonce=decision.nonce, at=self.now())

    def present(self, approval_id: int, again_for: int | None = None) -> None:
        now = self.now()
        with database.atomic():
            approval = find(approval_id)
            if approval is None or approval.status not in OPEN:
                return
            if again_for is None and not Approval.update(presented_at=now).where(
                    (Approval.id == approval.id) & Approval.presented_at.is_null()).execute():
                return  # shown already (a second nudge, or another process' gate): never twice
            payload = {"approval": {"id": approval.id, "nonce": approval.nonce,
                                    "actions": ["approve", "modify", "reject"],
                                    "items": [{"position": i.position, "description": i.description}
                                              for i in approval.items.order_by(ApprovalItem.position)]},
                       "topic_id": approval.topic_id}
            source = Inbox.get_or_none(Inbox.id == approval.inbox_id)
            carrier = briefing.carries(approval, source) if again_for is None else None
            if carrier is not None:  # one of this morning's plans: told in full inside the briefing
                trace.record(approval.trace_id, "presented", self.name,
                             f"proposal {approval.id} in the morning briefing (outbox {carrier.id})", now)
                return
            # A proposal the user did not ask for waits out the night like any other non-urgent message.
            held = None
            if source is not None and source.origin != "user" and source.priority > 1:
                held = quiet.hold_until(self.config, now)
            morning = briefing.briefing_after_quiet(held, self.config) if held is not None and again_for is None \
                else None
            if morning is not None:  # the night's plans are told in full in the briefing that ends it
                trace.record(approval.trace_id, "presented", self.name,
                             f"proposal {approval.id} kept for the morning briefing at {morning:%Y-%m-%d %H:%M} UTC",
                             now)
                return
            box = outbox.add(channel=approval.channel, text=render(approval, self.config.timezone),
                             trace_id=approval.trace_id, at=now, payload=payload,
                             key=f"proposal:{approval.id}" + (f":again:{again_for}" if again_for else ""),
                             deliver_after=held)
            trace.record(approval.trace_id, "presented", self.name, f"proposal {approval.id} on {approval.channel}"
                         + (f", held for quiet hours until {held:%Y-%m-%d %H:%M} UTC" if held else ""), now)
        faults.point("approval:after-present-commit")
        if held is None:
            self.tell(approval.channel, Deliver(box.id))

    def apply(self, decision_id: int) -> None:
        """Apply one decision row exactly once: taking the row, deciding and the answer commit together."""
        now = self.now()
        with database.atomic():
            row = DecisionRow.get_or_none(DecisionRow.id == decision_id)
            if row is None or not decisions.claim(row.id, now):
                return
            decision = decision_of(row)
            approval, result = self.decide(decision, now)
            trace_id = approval.trace_id if approval else trace.new_trace_id()
            trace.record(trace_id, result.stage, self.name,
                         f"proposal {decision.approval_id} {decision.action} by {decision.user_id}: "
                         f"{result.text.splitlines()[0] if result.text else describe_quiet(result)}", now)
            box = None
            if result.text:
                box = outbox.add(channel=decision.channel, text=result.text, trace_id=trace_id, at=now,
                                 key=f"decision:{row.id}",
                                 payload={"decision": {"approval_id": decision.approval_id,
                                                       "action": decision.action}})
        faults.point("approval:after-decision-commit")
        if result.revived:
            self.present(result.revived)
        if result.inbox_id:
            self.tell("cortex-realtime", InboxReady())
        for channel, outbox_id in result.deliveries:
            self.tell(channel, Deliver(outbox_id))
        if box is not None:
            self.tell(decision.channel, Deliver(box.id))
        if approval is not None and (result.settled or result.stage == "modify"):
            self.tell(approval.channel, ApprovalSettled(approval.id))

    def decide(self, decision: Decision, now: datetime) -> tuple[Approval | None, DecisionResult]:
        tz = self.config.timezone
        owner = self.config.get("core", "owner") if self.config.get("approval", "owner_decides_all") else None
        approval = find(decision.approval_id)
        if decision.action == REVIVE:
            return approval, self.revive(decision, approval, now, owner)
        problem = check(decision, approval, now, tz, owner)
        if problem:
            # check() may have just marked it expired: the row knows, the object read before does not
            expired = False
            if approval is not None and Approval.get_by_id(approval.id).status == "expired":
                # this answer is the notice (the sweep does not tell them twice), unless they were told already
                expired = bool(Approval.update(expired_notice_at=now).where(
                    (Approval.id == approval.id) & Approval.expired_notice_at.is_null()).execute())
            logger.info("decision on proposal {} refused: {}", decision.approval_id, problem)
            return approval, DecisionResult(problem, settled=expired)
        try:
            return approval, self.take(decision, approval, now)
        except NoLongerOpen:
            fresh = Approval.get_by_id(approval.id)
            return approval, DecisionResult(check(decision, fresh, now, tz, owner)
                                            or f"Proposal {approval.id} changed just now, so I did nothing; "
                                               "have a look at it again.")

    def revive(self, decision: Decision, approval: Approval | None, now: datetime, owner) -> DecisionResult:
        """Bring an expired proposal back as a new one (its pending items, a fresh expiry), once."""
        if approval is None:
            return DecisionResult(f"I don't know proposal {decision.approval_id}.")
        if not may_decide(decision.user_id, approval, owner):
            return DecisionResult("Sorry, only the person this proposal is for can bring it back.")
        if decision.nonce is not None and decision.nonce != approval.nonce:
            return DecisionResult("That button is out of date.")
        Approval.update(status="expired", decided_at=now).where(
            (Approval.id == approval.id) & Approval.status.in_(OPEN) & (Approval.expires_at <= now)).execute()
        approval = Approval.get_by_id(approval.id)
        if approval.status in OPEN:
            return DecisionResult(f"Proposal {approval.id} is still waiting for you; approve, modify or reject it.")
        if approval.status != "expired":
            return DecisionResult(f"Proposal {approval.id} was {approval.status}; there is nothing to bring back.")
        if approval.superseded_by:
            return DecisionResult(f"Proposal {approval.id} is already back, as proposal {approval.superseded_by}.")
        items = list(approval.items.where(ApprovalItem.status == "pending").order_by(ApprovalItem.position))
        if not items:
            return DecisionResult(f"Nothing of proposal {approval.id} is left to bring back.")
        again = copy_proposal(approval, items, now, self.config, key=f"revive:{approval.id}", reason=approval.reason)
        Approval.update(expired_notice_at=now).where(
            (Approval.id == approval.id) & Approval.expired_notice_at.is_null()).execute()
        Feedback.create(approval_id=approval.id, kind="revived", value=str(again.id), at=now)
        return DecisionResult("", stage="revived", revived=again.id)

    def take(self, decision: Decision, approval: Approval, now: datetime) -> DecisionResult:
        if decision.action == "confirm":  # per-item toggles: the chosen items, and not the others
            if not decision.items:
                return DecisionResult("Choose at least one item, or reject the proposal.")
            return approve(approval, decision.items, now, self.config.timezone, self.plan_task, rest="reject",
                           owner=self.config.get("core", "owner"), config=self.config)
        if decision.action == "approve":
            return approve(approval, decision.items, now, self.config.timezone, self.plan_task,
                           owner=self.config.get("core", "owner"), config=self.config)
        if decision.action == "reject":
            return reject(approval, decision.items, now)
        if decision.action == "modify":
            return modify(approval, decision, now)
        return DecisionResult(f"Unknown action {decision.action!r}: use approve, modify or reject.")

    def plan_task(self, task: Task, now: datetime) -> None:
        from actors.tick import plan_task, windows_config

        plan_task(task, now, windows_config(self.config), self.config.timezone)
