"""Making proposals: a run's (replacing the one a modification asked to change), one the user asked for
by a command, a copy of an expired one; showing one once; and noting the message that shows it."""

from __future__ import annotations

import secrets
from datetime import datetime

from actors import tools
from actors.proposals import carried
from actors.proposals.rules import (
    CannotPropose,
    MAX_REASON,
    OPEN,
    actions_for,
    clipped,
    expires,
    find,
    items_of,
    nudge_at,
)
from actors.proposals.words import changes_between, one_line, reason_for, render
from storage import mute
from storage import hot, outbox, trace
from storage.db import database
from storage.models import Approval, ApprovalItem, Inbox, Outbox
from wilson.kernel.clock import as_utc
from wilson.model.offline import dates


UNASKED = ("learn:",)  # proposals made by code that nobody asked for (the night's learning, consent.py)


SAME_ITEMS = "nothing: the same items as before"  # a replacement's `changes` when the change made none


def approver_for(row: Inbox, original: Approval | None, config) -> str:
    """Who decides a proposal: the person whose message asked for it; for a replacement, whoever decided
    the original; for a run nobody started, the configured owner."""
    if original is not None:
        return original.approver
    if row.origin == "user" and row.user_id:
        return str(row.user_id)
    return str(config.get("core", "owner"))


def with_rule(row: Inbox, reason: str, rule: str, now: datetime, tz) -> str:
    """The reason with the offline rule that made the proposal. The user's words quoted in it are cut shorter
    when both would not fit, so the rule's reading ("2:30 read as 14:30, the afternoon") is kept whole: they
    have just written the words, and the reading is what they need to check."""
    said = f"{reason} (offline rules: {rule})" if reason else f"offline rules: {rule}"
    quote = len(one_line(row.text))
    while len(said) > MAX_REASON and row.origin == "user" and quote > 30:  # a defanged link grows as it is cut
        quote = max(30, quote - (len(said) - MAX_REASON))
        said = f"{reason_for(row, now, tz, quote=quote)} (offline rules: {rule})"
    return said


def propose(row: Inbox, items: list, channel: str, now: datetime, config, offline: str = "") -> Approval | None:
    """Persist a run's proposal, in the run's transaction; None when it was to replace one the user decided
    while this run was thinking.

    One run makes at most one proposal: its key is the inbox row, so a run that is somehow
    recorded twice finds its proposal already there instead of making a second one."""
    key = f"proposal:inbox:{row.id}"
    made = hot.by_column(Approval, Approval.idempotency_key, key)
    if made is not None:
        return made
    supersedes = (row.payload or {}).get("approval_id") if row.kind == "modify" else None
    if supersedes and not take_over(supersedes, row.trace_id, now):
        return None
    topic_id = (row.payload or {}).get("topic_id")
    original = hot.by_id(Approval, supersedes) if supersedes else None
    if topic_id is None and original is not None:
        topic_id = original.topic_id  # a replacement stays where the original was
    # a replacement keeps the reason the plan was made for; the user's change shows in `changes`
    reason = original.reason if original is not None and original.reason else reason_for(row, now, config.timezone)
    if offline and not (original is not None and original.reason):
        reason = with_rule(row, reason, offline, now, config.timezone)
    reason = clipped(reason)
    changes = ""
    if original is not None:
        replaced = original.items.where(ApprovalItem.status == "superseded").order_by(ApprovalItem.position)
        changes = (
            changes_between([(i.tool, i.args, i.description) for i in replaced], items, config.timezone) or SAME_ITEMS
        )
    lapses = expires(now, tools.moot_at([(name, args) for name, args, _ in items], config.timezone), config)
    approval = hot.create(
        Approval,
        trace_id=row.trace_id,
        approver=approver_for(row, original, config),
        channel=channel,
        summary=row.text[:200],
        nonce=secrets.token_hex(4),
        inbox_id=row.id,
        supersedes=supersedes,
        topic_id=topic_id,
        created_at=now,
        expires_at=lapses,
        idempotency_key=key,
        reason=reason,
        changes=changes,
        remind_at=nudge_at(now, lapses, config),
    )
    hot.insert_rows(  # in their order, in one statement
        ApprovalItem,
        [
            hot.new(
                ApprovalItem, approval=approval.id, position=position, tool=name, args=args, description=description
            )
            for position, (name, args, description) in enumerate(items, start=1)
        ],
    )
    if supersedes:
        Approval.update(superseded_by=approval.id).where(Approval.id == supersedes).execute()
        trace.record(row.trace_id, "superseded", "cortex", f"proposal {supersedes} replaced by {approval.id}", now)
    trace.record(row.trace_id, "proposed", "cortex", f"proposal {approval.id} with {len(items)} item(s)", now)
    return approval


def take_over(supersedes: int, trace_id: str, now: datetime) -> bool:
    """Take the proposal a modification replaces out of the open states (its pending items with it); False
    when the user decided it meanwhile. Taking it first is what makes a late press on it lose the race."""
    taken = (
        Approval.update(status="superseded", decided_at=now)
        .where((Approval.id == supersedes) & (Approval.status.in_(OPEN)))
        .execute()
    )
    if not taken:
        trace.record(trace_id, "dropped", "cortex", f"proposal {supersedes} was decided meanwhile", now)
        return False
    ApprovalItem.update(status="superseded").where(
        (ApprovalItem.approval == supersedes) & (ApprovalItem.status == "pending")
    ).execute()
    return True


def propose_one(
    tool: str,
    args: dict,
    *,
    owner: str,
    channel: str,
    reason: str,
    key: str,
    now: datetime,
    config,
    shown: bool = False,
) -> Approval:
    """A proposal of one tool that the user asked for by a command of their own (a form on the dashboard,
    `forget N` at the terminal): shown and decided like any other, exactly once per `key`. The caller
    tells the gate (ProposalCreated) after this commits. `shown`: the user's press was the question and
    its answer (a Done button), so there is nothing to present; the caller records the approval with it."""
    return propose_items(
        [(tool, args)], owner=owner, channel=channel, reason=reason, key=key, now=now, config=config, shown=shown
    )


def propose_items(
    calls: list[tuple[str, dict]],
    *,
    owner: str,
    channel: str,
    reason: str,
    key: str,
    now: datetime,
    config,
    shown: bool = False,
) -> Approval:
    """As propose_one, for several changes the user handed over at once (the events of an invitation): one
    proposal, one item each, decided together or one by one."""
    box = tools.toolbox(config)
    for tool, args in calls:
        if box.get(tool) is None:
            raise CannotPropose("That cannot be done: the skill that does it is not installed or is turned off.")
        problem = tools.validate_mutation(tool, args, config.timezone, owner, owner, now, box=box)
        if problem:
            raise CannotPropose(problem[:1].upper() + problem[1:] + ".")
    with database.atomic():
        made = hot.by_column(Approval, Approval.idempotency_key, key)
        if made is not None:
            return made
        trace_id = trace.new_trace_id()
        lapses = expires(now, tools.moot_at(calls, config.timezone), config)
        approval = Approval.create(
            trace_id=trace_id,
            approver=owner,
            channel=channel,
            summary=reason[:200],
            nonce=secrets.token_hex(4),
            created_at=now,
            expires_at=lapses,
            idempotency_key=key,
            reason=clipped(reason),
            remind_at=None if shown else nudge_at(now, lapses, config),
            presented_at=now if shown else None,
        )
        for position, (tool, args) in enumerate(calls, start=1):
            ApprovalItem.create(
                approval=approval,
                position=position,
                tool=tool,
                args=args,
                description=tools.describe_item(tool, args, config.timezone, owner, owner, box=box),
            )
        trace.record(trace_id, "proposed", channel, f"proposal {approval.id}: {reason}", now)
    return approval


def release_kept(now: datetime) -> list[int]:
    """Proposals kept for a morning briefing that did not tell them go back to the gate, to be shown alone."""
    orphans = carried.orphaned(now)
    for approval_id in orphans:
        with database.atomic():
            if (
                Approval.update(presented_at=None)
                .where((Approval.id == approval_id) & Approval.presented_at.is_null(False))
                .execute()
            ):
                trace.record(
                    Approval.get_by_id(approval_id).trace_id,
                    "released",
                    "approval",
                    f"proposal {approval_id}: no briefing told it; shown on its own",
                    now,
                )
    return orphans


def copy_proposal(
    original: Approval, items: list[ApprovalItem], now: datetime, config, *, key: str, reason: str
) -> Approval:
    """A new proposal with some of an old one's items, in the caller's transaction; it supersedes the old one."""
    lapses = expires(now, tools.moot_at([(i.tool, i.args) for i in items], config.timezone), config)
    again = Approval.create(
        trace_id=original.trace_id,
        approver=original.approver,
        channel=original.channel,
        summary=original.summary,
        nonce=secrets.token_hex(4),
        inbox_id=original.inbox_id,
        supersedes=original.id,
        topic_id=original.topic_id,
        created_at=now,
        expires_at=lapses,
        idempotency_key=key,
        reason=reason,
        remind_at=nudge_at(now, lapses, config),
    )
    for position, item in enumerate(items, start=1):
        ApprovalItem.create(
            approval=again, position=position, tool=item.tool, args=item.args, description=item.description
        )
    Approval.update(superseded_by=again.id).where(Approval.id == original.id).execute()
    return again


def propose_undo(
    original: Approval,
    changes: list[tuple[str, dict]],
    now: datetime,
    config,
    *,
    key: str,
    owner: str | None,
    channel: str,
) -> Approval:
    """A new proposal of the changes that undo `original` (actors/proposals/undo.py), in the caller's
    transaction: decided by the same person, shown on the channel the undo was asked on."""
    box = tools.toolbox(config)
    lapses = expires(now, tools.moot_at(changes, config.timezone, box), config)
    made = Approval.create(
        trace_id=original.trace_id,
        approver=original.approver,
        channel=channel,
        summary=f"undo proposal {original.id}",
        nonce=secrets.token_hex(4),
        topic_id=original.topic_id,
        created_at=now,
        expires_at=lapses,
        idempotency_key=key,
        reason=f"because you asked to undo proposal {original.id}",
        remind_at=nudge_at(now, lapses, config),
    )
    for position, (name, args) in enumerate(changes, start=1):
        ApprovalItem.create(
            approval=made,
            position=position,
            tool=name,
            args=args,
            description=tools.describe_item(name, args, config.timezone, original.approver, owner, box=box),
        )
    trace.record(
        original.trace_id,
        "proposed",
        "approval",
        f"proposal {made.id} undoes proposal {original.id} ({len(changes)} item(s))",
        now,
    )
    return made


def present(
    approval_id: int, again_for: int | None, now: datetime, config, actor: str = "approval"
) -> tuple[str, Outbox, datetime | None] | None:
    """Show an open proposal once, in one transaction: a message in the outbox (held through quiet hours when
    nobody asked for it), or its place in a morning briefing. Returns (channel, outbox row, held until) for
    the gate to deliver, or None when nothing is to be sent now. `again_for`: shown again on request."""
    with database.atomic():
        approval = find(approval_id)
        if approval is None or approval.status not in OPEN:
            return None
        if (
            again_for is None
            and not Approval.update(presented_at=now)
            .where((Approval.id == approval.id) & Approval.presented_at.is_null())
            .execute()
        ):
            return None  # shown already (a second nudge, or another process' gate): never twice
        payload = {
            "approval": {
                "id": approval.id,
                "nonce": approval.nonce,
                "actions": actions_for(approval),
                "items": [{"position": i.position, "description": i.description} for i in items_of(approval.id)],
            },
            "topic_id": approval.topic_id,
        }
        source = Inbox.get_or_none(Inbox.id == approval.inbox_id)
        carrier = carried.carries(approval, source) if again_for is None else None
        if carrier is not None:  # one of this morning's plans: told in full inside the briefing
            trace.record(
                approval.trace_id,
                "presented",
                actor,
                f"proposal {approval.id} in the morning briefing (outbox {carrier.id})",
                now,
            )
            return None
        # A proposal the user did not ask for waits out the night like any other non-urgent message, and so does
        # an urgent one for calendar events that start after the night (tomorrow's 16:00 dentist, ranked urgent
        # for being within two days, is no reason to wake anyone)
        held = None
        if source is not None and source.origin != "user":
            quiet = mute.hold_until(config, now)
            if quiet is not None and (source.priority > 1 or events_start_after(source, quiet, config.timezone)):
                held = quiet
        elif source is None and (approval.idempotency_key or "").startswith(UNASKED):
            held = mute.hold_until(config, now)  # what the night learned waits for the morning like the rest
        morning = carried.briefing_after_quiet(held, config) if held is not None and again_for is None else None
        if morning is not None:  # the night's plans are told in full in the briefing that ends it
            trace.record(
                approval.trace_id,
                "presented",
                actor,
                f"proposal {approval.id} kept for the morning briefing at {morning:%Y-%m-%d %H:%M} UTC",
                now,
            )
            return None
        box = outbox.add(
            channel=approval.channel,
            text=render(approval, config.timezone),
            trace_id=approval.trace_id,
            at=now,
            payload=payload,
            key=f"proposal:{approval.id}" + (f":again:{again_for}" if again_for else ""),
            deliver_after=held,
        )
        trace.record(
            approval.trace_id,
            "presented",
            actor,
            f"proposal {approval.id} on {approval.channel}"
            + (f", held for quiet hours until {held:%Y-%m-%d %H:%M} UTC" if held else ""),
            now,
        )
    return approval.channel, box, held


def events_start_after(source: Inbox, moment: datetime, tz) -> bool:
    """Whether a row is about calendar events only, each starting at or after `moment`."""
    buffers = (source.payload or {}).get("buffers") if isinstance(source.payload, dict) else None
    if not isinstance(buffers, list) or not buffers:
        return False
    for buffer in buffers:
        if not isinstance(buffer, dict) or buffer.get("channel") != "calendar":
            return False
        start = dates.parse_moment(buffer.get("start"), tz)
        if start is None or as_utc(dates.as_datetime(start, tz)) < moment:
            return False
    return True


def record_message_ref(approval_id: int, chat_id, message_id) -> None:
    """Which message shows a proposal (in the caller's transaction), so its outcome can edit that message and
    a reminder or notice can answer it."""
    Approval.update(message_ref={"chat_id": chat_id, "message_id": message_id}).where(
        Approval.id == approval_id
    ).execute()
