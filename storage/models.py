"""Working memory: plain peewee models.

Times are stored as naive UTC and handed out as aware UTC (`UTCDateTimeField`),
so ordering and indexes behave the same on SQLite and PostgreSQL.
JSON payloads are stored as text (`JSONField`) for the same reason.

Size: every table is here, one short class each, so that the schema reads in one place
and `ALL_MODELS` is checked against it; the queries live in the modules named after them.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from enum import StrEnum

import peewee

from storage.db import database

UTC = timezone.utc


# Every value a status column holds, one StrEnum per column (tests/test_architecture.py checks that the
# code writes and compares no other). A member is its string, so code may spell either.
class InboxStatus(StrEnum):
    PENDING = "pending"
    CLAIMED = "claimed"  # a lane is running it (Inbox.owner, Inbox.lease_until)
    DEFERRED = "deferred"  # waits for a later moment (the quiet hours, a model that was down)
    KEPT = "kept"  # a user's message the model could not answer: answered, in order, once it answers again
    DONE = "done"
    FAILED = "failed"  # given up after its attempts


class OutboxStatus(StrEnum):
    PENDING = "pending"
    HELD = "held"  # until deliver_after (quiet hours, a mute)
    RETRY = "retry"  # a delivery failed; tried again at next_attempt_at
    DELIVERED = "delivered"
    FAILED = "failed"
    # the attention loop's states (actors/attention.py, actors/briefing.py)
    BUNDLING = "bundling"  # a follow-up waiting for the rest of its bundle
    BUNDLED = "bundled"  # its text went out inside the bundle's message
    WAITING = "waiting"  # over the day's cap: kept for the next briefing
    BRIEFED = "briefed"  # told in a briefing
    DROPPED = "dropped"  # acknowledged meanwhile: nothing left to say
    COMPOSE = "compose"  # a briefing waiting for the runs of its morning sync


class TopicStatus(StrEnum):
    ACTIVE = "active"
    CLOSED = "closed"


class TaskStatus(StrEnum):
    OPEN = "open"
    DONE = "done"
    SNOOZED = "snoozed"
    CANCELLED = "cancelled"


class ApprovalStatus(StrEnum):
    PENDING = "pending"
    PARTIAL = "partial"  # some items decided, others still open
    APPROVED = "approved"
    REJECTED = "rejected"
    SUPERSEDED = "superseded"  # replaced by the proposal a modification made
    EXPIRED = "expired"


class ItemStatus(StrEnum):
    PENDING = "pending"
    EXECUTING = "executing"  # claimed by the gate; executed at most once
    CALLING = "calling"  # committed before a call to another program (an MCP server); found by a restart: UNKNOWN
    UNKNOWN = "unknown"  # the call may or may not have acted (Wilson stopped, or no answer came): never repeated
    EXECUTED = "executed"
    REJECTED = "rejected"
    FAILED = "failed"
    SUPERSEDED = "superseded"


class DecisionStatus(StrEnum):
    PENDING = "pending"
    APPLIED = "applied"


STATUSES = {
    "Inbox": InboxStatus,
    "Outbox": OutboxStatus,
    "Topic": TopicStatus,
    "Task": TaskStatus,
    "Approval": ApprovalStatus,
    "ApprovalItem": ItemStatus,
    "DecisionRow": DecisionStatus,
}


class UTCDateTimeField(peewee.DateTimeField):
    _last = (None, None)  # (a moment, its stored value): a run stores one `now` in many columns and rows

    def db_value(self, value):
        # `==` tells an aware moment from a naive one (never equal) and is true across zones only for the
        # same instant, which converts to the same UTC value
        last = UTCDateTimeField._last
        if value is last[0] or (last[0] is not None and type(value) is datetime and last[0] == value):
            return last[1]
        moment = value
        aware = isinstance(value, datetime) and value.tzinfo is not None
        if aware:
            value = value.astimezone(UTC).replace(tzinfo=None)
        stored = super().db_value(value)
        if aware and type(moment) is datetime and type(stored) is datetime:
            UTCDateTimeField._last = (moment, stored)
        return stored

    def python_value(self, value):
        value = super().python_value(value)
        if isinstance(value, datetime) and value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value


class JSONField(peewee.TextField):
    def db_value(self, value):
        if type(value) is dict and not value:  # most payloads: what json.dumps makes of it, without the call
            return "{}"
        return None if value is None else json.dumps(value, sort_keys=True, default=str)

    def python_value(self, value):
        return None if value is None else json.loads(value)


class BaseModel(peewee.Model):
    class Meta:
        database = database
        legacy_table_names = False


class SchemaVersion(BaseModel):
    version = peewee.IntegerField()
    applied_at = UTCDateTimeField()


class Inbox(BaseModel):
    """Work for the cortex. Claimed by (priority, id); 0 is the most urgent."""

    trace_id = peewee.CharField(index=True)
    source = peewee.CharField()  # the channel (or organ) it came from
    kind = peewee.CharField(default="message")  # message, event, deadline, briefing, reminder, modify
    origin = peewee.CharField(default="user")  # user: the user started it; background: anything else
    priority = peewee.IntegerField(default=4)
    text = peewee.TextField()
    payload = JSONField(default=dict)
    user_id = peewee.CharField(null=True)
    reply_channel = peewee.CharField(null=True)
    dedup_key = peewee.CharField(null=True, unique=True)
    # InboxStatus; no index of its own: (status, priority, id) below serves every look by status (v18)
    status = peewee.CharField(default=InboxStatus.PENDING.value)
    attempts = peewee.IntegerField(default=0)
    lane = peewee.CharField(null=True)
    owner = peewee.CharField(null=True)  # who holds the claim: process and actor incarnation
    lease_until = UTCDateTimeField(null=True)  # wall-clock UTC; the owner renews it while it works
    created_at = UTCDateTimeField()
    claimed_at = UTCDateTimeField(null=True)
    done_at = UTCDateTimeField(null=True)
    error = peewee.TextField(null=True)

    class Meta:
        indexes = ((("status", "priority", "id"), False),)


class ReceptorBuffer(BaseModel):
    """Buffered input waiting for the thalamus' next sync."""

    trace_id = peewee.CharField(index=True)
    channel = peewee.CharField()
    dedup_key = peewee.CharField(unique=True)
    text = peewee.TextField()
    snippet = peewee.TextField(default="")
    payload = JSONField(default=dict)
    created_at = UTCDateTimeField(index=True)
    scanned_at = UTCDateTimeField(null=True, index=True)  # seen by the RAS
    processed_at = UTCDateTimeField(null=True, index=True)  # triaged by the thalamus
    outcome = peewee.CharField(null=True)  # inbox, drop
    reason = peewee.TextField(null=True)


class MailSender(BaseModel):
    """What the RAS has learned of one sender's mail: how many the model read without alarm, and whether
    any was urgent (the RAS raised the alarm, or triage kept it at priority 1)."""

    address = peewee.CharField(unique=True)  # lower case
    calm = peewee.IntegerField(default=0)
    read_at = UTCDateTimeField(null=True)  # the last of this sender's mail the model read
    alarm_at = UTCDateTimeField(null=True)  # the last that was urgent; a sender with one is never routine

    class Meta:
        table_name = "mail_sender"


class MailSubject(BaseModel):
    """The same for one sender's mail on one subject (its thread's, storage/senders.py thread_subject): a
    sender who once raised the alarm about one thing still has routine mail about another."""

    address = peewee.CharField()  # lower case
    subject = peewee.CharField()  # lower case, without Re:/Fwd:, at most senders.SUBJECT_CHARS
    calm = peewee.IntegerField(default=0)
    read_at = UTCDateTimeField(null=True)
    alarm_at = UTCDateTimeField(null=True)  # a subject with one is never routine

    class Meta:
        table_name = "mail_subject"
        indexes = ((("address", "subject"), True),)


class BulkSender(BaseModel):
    """What triage has learned of one sender's bulk mail (newsletters, offers): how many in a row the model
    dropped since it last kept one, so that the next may be dropped without asking it (actors/triage.py)."""

    address = peewee.CharField(unique=True)  # lower case
    dropped = peewee.IntegerField(default=0)  # dropped in a row; a kept one starts the count again
    read_at = UTCDateTimeField(null=True)  # the last of this sender's bulk mail the model triaged
    kept_at = UTCDateTimeField(null=True)  # the last it kept

    class Meta:
        table_name = "bulk_sender"


class Outbox(BaseModel):
    """What Wilson says. Delivered once by the channel it names."""

    trace_id = peewee.CharField(index=True)
    channel = peewee.CharField()
    idempotency_key = peewee.CharField(unique=True)
    text = peewee.TextField()
    payload = JSONField(default=dict)  # approval, topic, reply_to, chat ...
    surfaced = peewee.BooleanField(default=False)  # reached the user (not the silent channel)
    status = peewee.CharField(default=OutboxStatus.PENDING.value, index=True)  # OutboxStatus
    attempts = peewee.IntegerField(default=0)
    created_at = UTCDateTimeField()
    deliver_after = UTCDateTimeField(null=True)  # quiet hours hold it until then
    next_attempt_at = UTCDateTimeField(null=True)  # after a failed send: not before then
    sending_at = UTCDateTimeField(null=True)  # an attempt started (recorded before the API call)
    delivered_at = UTCDateTimeField(null=True)
    result = JSONField(null=True)


class SentMessage(BaseModel):
    """A message a channel showed the user, by that channel's own ids (a long text is several):
    replies and reactions name a message, and this finds the outbox row it came from."""

    channel = peewee.CharField()
    chat_id = peewee.CharField()
    message_id = peewee.CharField()
    outbox_id = peewee.IntegerField(index=True)

    class Meta:
        indexes = ((("channel", "chat_id", "message_id"), True),)


class Turn(BaseModel):
    """One line of conversation with the user."""

    channel = peewee.CharField()
    role = peewee.CharField()  # user, assistant
    user_id = peewee.CharField(null=True)  # whose conversation this is
    text = peewee.TextField()
    topic_id = peewee.IntegerField(null=True)
    trace_id = peewee.CharField(null=True)
    created_at = UTCDateTimeField(index=True)


class Topic(BaseModel):
    title = peewee.CharField()
    status = peewee.CharField(default=TopicStatus.ACTIVE.value, index=True)  # TopicStatus
    starts = UTCDateTimeField(null=True)
    ends = UTCDateTimeField(null=True)
    notes = peewee.TextField(default="")
    source_key = peewee.CharField(null=True)  # e.g. the calendar UID it grew from
    thread_ref = peewee.CharField(null=True)  # e.g. a Telegram forum thread id
    created_at = UTCDateTimeField()
    closed_at = UTCDateTimeField(null=True)
    owner_id = peewee.CharField(null=True)  # whose approval made it; NULL (older rows) is the owner's


class Task(BaseModel):
    title = peewee.CharField()
    topic = peewee.ForeignKeyField(Topic, null=True, backref="tasks", on_delete="SET NULL")
    due = UTCDateTimeField(null=True)
    due_is_date = peewee.BooleanField(default=False)
    status = peewee.CharField(default=TaskStatus.OPEN.value, index=True)  # TaskStatus
    notes = peewee.TextField(default="")
    escalation = JSONField(null=True)  # window names, e.g. ["14d","7d","3d","1d","due","overdue"]
    next_fire_at = UTCDateTimeField(null=True, index=True)
    next_window = peewee.CharField(null=True)
    snoozed_until = UTCDateTimeField(null=True)
    created_at = UTCDateTimeField()
    completed_at = UTCDateTimeField(null=True)
    owner_id = peewee.CharField(null=True)  # whose approval made it; NULL (older rows) is the owner's


class TaskFiring(BaseModel):
    """Each (task, window) fires at most once: the unique index is the guarantee."""

    task = peewee.ForeignKeyField(Task, backref="firings", on_delete="CASCADE")
    window = peewee.CharField()
    due = UTCDateTimeField(null=True)  # the due date it was planned against
    fired_at = UTCDateTimeField()
    inbox_id = peewee.IntegerField(null=True)

    class Meta:
        indexes = ((("task", "window", "due"), True),)


class Approval(BaseModel):
    """A proposal: one or more mutations waiting for the user's decision."""

    trace_id = peewee.CharField(index=True)
    status = peewee.CharField(default=ApprovalStatus.PENDING.value, index=True)  # ApprovalStatus
    approver = peewee.CharField()
    channel = peewee.CharField()
    summary = peewee.TextField(default="")
    nonce = peewee.CharField()  # part of button callback data; forged presses don't match
    inbox_id = peewee.IntegerField(null=True)
    supersedes = peewee.IntegerField(null=True)
    superseded_by = peewee.IntegerField(null=True)
    topic_id = peewee.IntegerField(null=True)
    message_ref = JSONField(null=True)  # where the rendered proposal lives (to edit it in place)
    presented_at = UTCDateTimeField(null=True)  # the gate wrote its outbox row
    idempotency_key = peewee.CharField(null=True, unique=True)  # the run that proposed it: never twice
    created_at = UTCDateTimeField()
    expires_at = UTCDateTimeField(index=True)
    decided_at = UTCDateTimeField(null=True)
    reason = peewee.TextField(default="")  # one line: the event, message or memory that led to it
    changes = peewee.TextField(default="")  # against the proposal it supersedes: added, removed, changed
    remind_at = UTCDateTimeField(null=True, index=True)  # one nudge before expiry, from then on
    reminded_at = UTCDateTimeField(null=True)
    expired_notice_at = UTCDateTimeField(null=True)  # the user was told it expired (or it was asked again)


class ApprovalItem(BaseModel):
    approval = peewee.ForeignKeyField(Approval, backref="items", on_delete="CASCADE")
    position = peewee.IntegerField()
    tool = peewee.CharField()
    args = JSONField()
    description = peewee.TextField()
    status = peewee.CharField(default=ItemStatus.PENDING.value)  # ItemStatus
    result = JSONField(null=True)
    executed_at = UTCDateTimeField(null=True)


class DecisionRow(BaseModel):
    """A user's approve / modify / reject, committed by the channel before the gate is told."""

    approval_id = peewee.BigIntegerField()
    action = peewee.CharField()
    user_id = peewee.CharField()
    channel = peewee.CharField()
    text = peewee.TextField(default="")
    items = JSONField(default=list)
    nonce = peewee.CharField(null=True)
    status = peewee.CharField(default=DecisionStatus.PENDING.value, index=True)  # DecisionStatus
    created_at = UTCDateTimeField()
    applied_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "decision"


class Cursor(BaseModel):
    """Where an adapter left off (Telegram offset, calendar snapshot, RAS scan mark)."""

    name = peewee.CharField(unique=True)
    value = JSONField(null=True)
    updated_at = UTCDateTimeField()


class Schedule(BaseModel):
    """A cron job: builtin (briefing, ras, consolidate) or a user's recurring reminder."""

    name = peewee.CharField(unique=True)
    cron = peewee.CharField()
    kind = peewee.CharField(default="builtin")  # builtin, reminder
    text = peewee.TextField(default="")
    timezone = peewee.CharField(default="UTC")
    staleness_seconds = peewee.IntegerField(default=6 * 3600)
    next_fire_at = UTCDateTimeField(null=True, index=True)
    last_fired_at = UTCDateTimeField(null=True)
    enabled = peewee.BooleanField(default=True)


class Trace(BaseModel):
    """The path of one stimulus: every decision with its reason."""

    trace_id = peewee.CharField(index=True)
    stage = peewee.CharField()  # routed, dropped, claimed, surfaced, silent, proposed, approved, delivered ...
    actor = peewee.CharField()
    reason = peewee.TextField(default="")
    data = JSONField(null=True)
    at = UTCDateTimeField()


class TokenUsage(BaseModel):
    day = peewee.CharField()  # ISO date, in UTC
    role = peewee.CharField()
    calls = peewee.IntegerField(default=0)
    prompt_tokens = peewee.IntegerField(default=0)
    completion_tokens = peewee.IntegerField(default=0)
    user_tokens = peewee.IntegerField(default=0)  # spent on user-started runs
    # a default in the table too: a row another process (or an older Wilson) writes without them counts 0
    runs = peewee.IntegerField(default=0, constraints=[peewee.SQL("DEFAULT 0")])  # runs its model answered
    failed = peewee.IntegerField(default=0, constraints=[peewee.SQL("DEFAULT 0")])  # of them, broke the protocol
    failure = peewee.CharField(max_length=200, default="", constraints=[peewee.SQL("DEFAULT ''")])  # the last reason

    class Meta:
        indexes = ((("day", "role"), True),)


class Memory(BaseModel):
    """Engram: long-term memory, curated by the hippocampus."""

    kind = peewee.CharField(index=True)  # episode, interpretation, belief, principle
    text = peewee.TextField()
    key = peewee.CharField(null=True, index=True)  # normalised text, for dedup
    provenance = JSONField(default=list)  # ids of the memories / traces it came from
    strength = peewee.FloatField(default=1.0)
    created_at = UTCDateTimeField(index=True)
    invalidated_at = UTCDateTimeField(null=True)


class Feedback(BaseModel):
    """The user's reaction to something Wilson said (for calibration)."""

    outbox_id = peewee.IntegerField(null=True, index=True)
    approval_id = peewee.IntegerField(null=True)
    kind = peewee.CharField()  # reaction, approved, rejected, modified, ignored
    value = peewee.CharField(default="")
    at = UTCDateTimeField()


class DecisionChat(BaseModel):
    """Where in Telegram the user answered a proposal or gave a command (chat and forum thread), so that what
    follows from it is told there. Rows older than storage/decision_chats.py KEEP are pruned."""

    key = peewee.CharField(unique=True)  # an approval id, or "command:<decision row id>"
    place = JSONField()  # {"chat_id", "thread_id"?}
    at = UTCDateTimeField(index=True)

    class Meta:
        table_name = "decision_chat"


class BudgetNotice(BaseModel):
    """The day's one notice that background reasoning paused for the budget; a week's rows are kept."""

    day = peewee.CharField(unique=True)  # the local ISO date
    error = peewee.TextField(default="")
    at = UTCDateTimeField(index=True)

    class Meta:
        table_name = "budget_notice"


class WebSession(BaseModel):
    """A dashboard login (channels/web/auth.py): the digest of its cookie and its CSRF token; expired rows are
    pruned when the next session starts, and a new token ends them all."""

    digest = peewee.CharField(unique=True)
    csrf = peewee.CharField()
    created = UTCDateTimeField()
    expires = UTCDateTimeField(index=True)

    class Meta:
        table_name = "web_session"


class Watch(BaseModel):
    """A page or feed the user asked Wilson to watch, and what the last look found (channels/web/watcher.py)."""

    source = peewee.CharField(unique=True)  # a digest of the address
    state = JSONField()


class Mark(BaseModel):
    """Small state about one thing, by kind (storage/marks.py): an event window already raised, a forum thread
    already renamed, items toggled off in a proposal, the change a user is typing after Modify."""

    kind = peewee.CharField()
    key = peewee.CharField()
    value = JSONField(null=True)
    at = UTCDateTimeField(index=True)

    class Meta:
        indexes = ((("kind", "key"), True),)


class Setting(BaseModel):
    """What the user set in conversation or pairing (quiet until, paired users); state has tables of its own,
    and tests/test_state_tables.py lists the keys allowed here."""

    key = peewee.CharField(unique=True)
    value = JSONField(null=True)


ALL_MODELS = [
    SchemaVersion,
    Inbox,
    ReceptorBuffer,
    MailSender,
    MailSubject,
    BulkSender,
    Outbox,
    SentMessage,
    Turn,
    Topic,
    Task,
    TaskFiring,
    Approval,
    ApprovalItem,
    DecisionRow,
    Cursor,
    Schedule,
    Trace,
    TokenUsage,
    Memory,
    Feedback,
    Setting,
    DecisionChat,
    BudgetNotice,
    WebSession,
    Watch,
    Mark,
]
