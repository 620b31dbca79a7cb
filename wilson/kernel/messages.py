"""Frozen message types exchanged between actors.

Messages carry ids, never the only copy of data: the rows they point at were
committed before the message was sent (docs/architecture.md, "Durability rules").
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Ping:
    """Watchdog and quiescence probe; answered by every actor."""


@dataclass(frozen=True)
class StimulusCommitted:
    """A receptor committed an inbox row (`table='inbox'`) or a buffer row (`'buffer'`)."""

    table: str
    row_id: int
    trace_id: str
    priority: int | None = None  # an inbox row's: the thalamus picks the lane without reading the row


@dataclass(frozen=True)
class InboxReady:
    """There is work in the inbox for the cortex."""


@dataclass(frozen=True)
class Deliver:
    """A channel has an outbox row to deliver. `row`: the row as its writer committed it, which a channel that
    takes it need not read again (the id stays the truth: the row is read when in doubt)."""

    outbox_id: int
    row: object = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class ReplyTo:
    """Where the answer to a person's request goes: the channel, the answer's idempotency key, and what the
    channel needs to address it (a Telegram chat)."""

    channel: str
    key: str
    payload: dict = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class SyncRequest:
    """Ask the thalamus to sync buffered channels now."""

    reason: str  # daily, request, arousal, manual
    reply_to: ReplyTo | None = None  # a person asked for the look (/today): they hear what it found


@dataclass(frozen=True)
class ChannelSync:
    """Ask a buffered channel to poll its source and buffer what changed."""

    reason: str


@dataclass(frozen=True)
class ChannelSynced:
    """A buffered channel finished its sync (sent to the thalamus' triage)."""

    channel: str
    buffered: int = 0


@dataclass(frozen=True)
class RasScan:
    """Time for the RAS to look at new buffer rows."""


@dataclass(frozen=True)
class Consolidate:
    """Time for the hippocampus' nightly consolidation."""


@dataclass(frozen=True)
class TickNow:
    """Time for the tick to look for due deadlines and schedules."""


@dataclass(frozen=True)
class ProposalCreated:
    approval_id: int
    again_for: int | None = None  # the inbox row of a modification that left the proposal as it was


@dataclass(frozen=True)
class Decision:
    """The user pressed approve / modify / reject (handled by code, never by a model).

    `items` limits the decision to some item positions (1-based); empty means all.
    """

    approval_id: int
    action: str  # approve, reject, modify
    user_id: str
    channel: str
    text: str = ""
    items: tuple[int, ...] = ()
    nonce: str | None = None


@dataclass(frozen=True)
class Recover:
    """Look in the database for work a lost nudge would have announced (another process wrote it,
    or a tell was cut short by a kill): rows to claim, proposals to show, decisions to apply."""


@dataclass(frozen=True)
class DecisionRecorded:
    """A channel committed a decision row (storage/decisions.py) for the gate to apply."""

    decision_id: int


@dataclass(frozen=True)
class ApprovalSettled:
    """The gate settled a proposal; channels may edit the rendered message in place."""

    approval_id: int
