"""What is true of proposals, read from their rows: who may decide, whether a decision can be taken,
which items it selects, when a reminder or expiry is due, and what a decision came to. Pure: no writes."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from storage import hot
from storage.models import Approval, ApprovalItem, Inbox, Outbox, Schedule
from storage.prepared import prepared
from wilson.kernel.bounds import MAX_ID, MAX_ITEM
from wilson.kernel.messages import Decision

OPEN = ("pending", "partial")
REVIVE = "revive"
UNDO = "undo"  # propose putting back what an approved proposal changed (actors/proposals/undo.py)
MAX_REASON = 200  # characters: one line, however long the words it quotes


def clipped(text: str, limit: int = MAX_REASON) -> str:
    """`text` within `limit` characters, cut at a word with "…" (and its open bracket closed), never mid-word."""
    if len(text) <= limit:
        return text
    room = limit - 4  # the "…" and what it may have to close: a quote and brackets
    cut = text[:room].rsplit(" ", 1)[0].rstrip(" ,;:(“")
    if len(cut) < room // 2:  # one long word (a link): cut it, not the line
        cut = text[:room]
    cut += "…" + ("”" if cut.count("“") > cut.count("”") else "")
    return (cut + ")" * max(0, cut.count("(") - cut.count(")")))[:limit]


def expiry(config) -> timedelta:
    """How long a proposal with no time of its own waits for its answer, at most."""
    return timedelta(hours=float(config.get("approval", "expiry_hours")))


def expires(now: datetime, moot: datetime | None, config) -> datetime:
    """When a proposal made now lapses: when it becomes moot (`moot`, see tools.moot_at: its event starts, or
    its earliest item's time passes), however long that is, not by a clock; a proposal with no time of its own
    after the configured wait. A plan for a trip in five weeks waits while the user is away for a weekend; a
    reminder for 9:00 approved at 10:00 would remind of nothing in time."""
    if moot is not None and moot > now:
        return moot
    return now + expiry(config)


@dataclass
class DecisionResult:
    text: str
    settled: bool = False
    stage: str = "refused"
    inbox_id: int | None = None
    task_ids: list = field(default_factory=list)
    made: int | None = None  # the new proposal the decision made (an expired one back, an undo), to present
    deliveries: list = field(default_factory=list)  # (channel, outbox id) an approved item wrote, to nudge
    undoable: bool = False  # it changed something: its receipt offers to undo it
    calls: list = field(default_factory=list)  # items committed as "calling": the gate calls them after the commit


def remind_before(config) -> timedelta:
    return timedelta(hours=max(float(config.get("approval", "remind_before_hours")), 0.0))


def remind_moment(created_at: datetime, expires_at: datetime, before: timedelta) -> datetime:
    """When to nudge: `before` ahead of expiry, but never in the first half of a proposal's life."""
    return max(created_at + (expires_at - created_at) / 2, expires_at - before)


def nudge_at(now: datetime, lapses: datetime, config) -> datetime | None:
    """When a proposal made now is reminded of, or None: one whose own time comes within a day (a reminder
    for tonight) lapses unnudged, since a nudge hours after asking is noise; the configured wait, however
    short, keeps its one nudge."""
    if lapses - now < min(expiry(config), remind_before(config)):
        return None
    return remind_moment(now, lapses, remind_before(config))


def due_moment_sql() -> str:
    """The three moments `due_moment` takes the earliest of (a reminder, an expiry, a notice owed), as the
    subselects of one statement: the tick asks for them on every step of a simulated clock."""
    table, col = Approval._meta.table_name, {f.name: f.column_name for f in Approval._meta.sorted_fields}
    status, expires = f'"{col["status"]}"', f'"{col["expires_at"]}"'
    open_ = ", ".join(f"'{s}'" for s in OPEN)
    return (
        f'(SELECT MIN("{col["remind_at"]}") FROM "{table}" WHERE {status} IN ({open_}) AND '
        f'"{col["reminded_at"]}" IS NULL AND "{col["remind_at"]}" IS NOT NULL AND "{col["presented_at"]}" IS NOT NULL), '
        f'(SELECT MIN({expires}) FROM "{table}" WHERE {status} IN ({open_})), '
        f"(SELECT MIN({expires}) FROM \"{table}\" WHERE {status} = 'expired' AND "
        f'"{col["expired_notice_at"]}" IS NULL)'
    )


def earliest_moment(values) -> datetime | None:
    """The earliest of moments as a statement read them (stored values, None for none), as datetimes."""
    convert = Approval.expires_at.python_value
    return min((convert(v) for v in values if v is not None), default=None)


def due_moment() -> datetime | None:
    """When the gate next has something to do for an unanswered proposal (a reminder, an expiry, a notice
    owed); may be in the past. The sweep takes exactly these rows, so a due moment never stays due."""
    [row] = hot.execute("due_moment", lambda: "SELECT " + due_moment_sql()).rows
    return earliest_moment(row)


BRIEFING_MARGIN = timedelta(minutes=30)  # a briefing this close to expiry is too late to count as the reminder
BRIEFING_SETTLE = timedelta(minutes=10)  # a briefing that fired is written within this


def briefed(approval: Approval, since: datetime, now: datetime) -> bool:
    """Whether a morning briefing since `since` listed this proposal as waiting (the briefing then is its
    reminder). The briefing names each waiting proposal as "Proposal N:" (actors/briefing.py)."""
    mention = re.compile(rf"\bProposal {approval.id}:")
    rows = (
        Outbox.select(Outbox.text, Outbox.payload)
        .where(
            (Outbox.created_at >= since) & (Outbox.created_at <= now) & Outbox.idempotency_key.startswith("briefing:")
        )
        .order_by(Outbox.id.desc())
        .limit(10)
    )
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


ITEMS_OF = prepared(
    lambda s: ApprovalItem.select().where(ApprovalItem.approval == s.approval).order_by(ApprovalItem.position)
)


def items_of(approval_id: int) -> list[ApprovalItem]:
    """A proposal's items in their order (read with its text built once: the gate, the briefing and each night
    read them)."""
    return ITEMS_OF.models(approval=approval_id)


UNSHOWN_IDS = prepared(
    lambda s: Approval.select(Approval.id).where(Approval.status.in_(OPEN) & Approval.presented_at.is_null())
)


def unshown_ids() -> list[int]:
    """Open proposals nobody has shown yet (committed where no gate was told: another process, a kill)."""
    return [approval_id for (approval_id,) in UNSHOWN_IDS.rows()]


def unshown() -> bool:
    """An open proposal nobody has shown yet: one committed where no gate was told (another process)."""
    return bool(unshown_ids())  # nearly always none, and never many


def sweep_due(now: datetime) -> bool:
    moment = due_moment()
    return moment is not None and moment <= now


def housekeeping(approval: Approval) -> bool:
    """A close Wilson asked on its own because a topic's event ended (a "topic_end" run): left unanswered, it
    lapses quietly, neither asked again nor told (principle 6: asking twice is not conversation); the topic
    stays open as it was, and `show expired` still lists the proposal. One the user revived is theirs, not this."""
    if approval.inbox_id is None or (approval.idempotency_key or "").startswith("revive:"):
        return False  # brought back by the user: theirs now, reminded and told as any
    source = Inbox.get_or_none(Inbox.id == approval.inbox_id)
    if source is None or source.kind != "topic_end":
        return False
    tools = {item.tool for item in approval.items.where(ApprovalItem.status == "pending")}
    return tools <= {"close_topic"}


def settle_status(approval_id: int) -> str:
    statuses = [i.status for i in ApprovalItem.select().where(ApprovalItem.approval == approval_id)]
    if "pending" in statuses:
        return "partial" if any(s != "pending" for s in statuses) else "pending"
    # an item that failed was still approved by the user; only their own "no" makes a rejection
    return "approved" if {"executed", "failed", "calling", "unknown"} & set(statuses) else "rejected"


def may_decide(user_id, approval: Approval, owner: str | None = None) -> bool:
    """With `owner` given ([approval] owner_decides_all): the owner alone decides every proposal, also one made
    for someone else; without it, the person the proposal is for."""
    return str(user_id) == (str(owner) if owner is not None else str(approval.approver))


OWNER_ONLY = "Sorry, only Wilson's owner can {} here: the settings say the owner decides every proposal."


def not_theirs(decision: Decision, approval: Approval | None, owner: str | None, doing: str) -> str | None:
    """Why this person cannot act on this proposal at all ("Sorry, only the person this proposal is for can
    {doing}."), or None: whatever the action (decide, bring back, undo)."""
    if approval is None:
        return f"I don't know proposal {decision.approval_id}."
    if not may_decide(decision.user_id, approval, owner):
        if owner is not None:
            return OWNER_ONLY.format(doing)
        return f"Sorry, only the person this proposal is for can {doing}."
    if decision.nonce is not None and decision.nonce != approval.nonce:
        return "That button is out of date."
    return None


def why_not(
    decision: Decision, approval: Approval | None, now: datetime, tz=None, owner: str | None = None
) -> tuple[str | None, bool]:
    """Why this decision cannot be taken (None when it can), and whether that is because the proposal's
    time is up (an open one whose expiry has passed is then due to be marked expired)."""
    problem = not_theirs(decision, approval, owner, "decide on it")
    if problem:
        return problem, False
    if approval.status == "superseded":
        return f"Proposal {approval.id} was replaced by proposal {approval.superseded_by}; please use that one.", False
    if approval.status in ("approved", "rejected"):
        return f"Already done: proposal {approval.id} was {approval.status}.", False
    if approval.status == "expired" and approval.superseded_by:
        return (
            f"Proposal {approval.id} expired and came back as proposal {approval.superseded_by}; please use that one."
        ), False
    if approval.status == "expired" or (approval.status in OPEN and approval.expires_at <= now):
        expired = approval.expires_at.astimezone(tz) if tz else approval.expires_at
        return (
            f"Proposal {approval.id} expired on {expired:%d %b %H:%M}{'' if tz else ' UTC'}, so I changed "
            f"nothing. Ask me again if you still want it, or say “revive {approval.id}” to bring it back."
        ), True
    return None, False


def check(
    decision: Decision, approval: Approval | None, now: datetime, tz=None, owner: str | None = None
) -> str | None:
    """Why this decision cannot be taken, or None when it can (`tz`: the user's, for the times it names;
    `owner`: someone who may decide for everyone). Reads only: a channel may ask it on its own thread;
    the gate marks a lapsed proposal expired when the decision reaches it (decide.refuse)."""
    return why_not(decision, approval, now, tz, owner)[0]


def selected(approval: Approval, positions: tuple[int, ...]) -> list[ApprovalItem]:
    query = approval.items.where(ApprovalItem.status == "pending").order_by(ApprovalItem.position)
    if positions:
        # a number no proposal has selects nothing (and must not overflow the query)
        query = query.where(ApprovalItem.position.in_([p for p in positions if 0 < p <= MAX_ITEM] or [0]))
    return list(query)


class NoLongerOpen(Exception):
    """The proposal was decided or replaced between the check and the decision's transaction."""


def undoes(approval: Approval) -> int | None:
    """The proposal this one undoes (actors/proposals/undo.py keys it "undo:N", or "undo:N:K" when asked again;
    an expired undo brought back is a copy that supersedes it)."""
    seen = set()
    while approval is not None and approval.id not in seen:
        parts = (approval.idempotency_key or "").split(":")
        if len(parts) >= 2 and parts[0] == "undo" and parts[1].isdigit():
            return int(parts[1])
        if not (approval.idempotency_key or "").startswith("revive:") or not approval.supersedes:
            return None
        seen.add(approval.id)
        approval = Approval.get_or_none(Approval.id == approval.supersedes)
    return None


def actions_for(approval: Approval) -> list[str]:
    """The answers a proposal offers: an undo is what it puts back, approved or rejected, never reworded."""
    return ["approve", "reject"] if undoes(approval) else ["approve", "modify", "reject"]


def find(approval_id: int) -> Approval | None:
    """The proposal, or None, for any number a person could type or a button could carry."""
    if not 0 < approval_id <= MAX_ID:
        return None
    return hot.by_id(Approval, approval_id)
