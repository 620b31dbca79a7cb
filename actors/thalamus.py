"""The thalamus: routes every stimulus and triages buffered input in batches.

Routing rules (storage/routing.py, run on the receptor's own thread so the row is durable
before anyone is told): realtime stimuli go to the inbox at priority 0, buffered
ones to receptor_buffers. The row and its "routed" trace commit together; the
actor then only nudges the cortex lane that takes the row.

The sync asks the triage model (actors/triage.py: the request and the checks on its answer)
and applies its decisions here. The daily sync ends in the morning briefing (actors/briefing.py),
which waits for the runs the sync started so that what they propose arrives inside it.

Size: the routing actor and the triage actor share the batch's lifecycle (begin, finish, settle, postpone)
and the pure functions that apply a triage; they are read together.
"""

from __future__ import annotations

from datetime import datetime

from loguru import logger

from actors import briefing as day_briefing, floor
from actors.triage import (
    TRIAGE_TOOL,
    bulk_drops,
    chunks,
    drops_a_row,
    first_line,
    headline,
    learn,
    look_answer,
    normalise_decisions,
    triage_context,
    triage_request,
)
from storage import buffers, inbox, outbox, trace
from storage.db import database
from storage.models import Inbox, Outbox, ReceptorBuffer
from storage.routing import REALTIME_PRIORITY
from wilson.kernel import faults
from wilson.kernel.actor import WilsonActor
from wilson.kernel.clock import monotonic
from wilson.kernel.messages import (
    ChannelSync,
    ChannelSynced,
    Deliver,
    InboxReady,
    ReplyTo,
    StimulusCommitted,
    SyncRequest,
)
from wilson.model.errors import SynapseError


def apply_triage(
    decisions: list[dict],
    rows: list,
    now: datetime,
    daily: bool,
    briefing: list | None = None,
    briefing_box: int | None = None,
) -> list[int]:
    """Inbox rows created and buffers marked processed in ONE transaction. Returns new inbox ids.

    On a daily sync, priority-3 items belong to the morning briefing. A sync that runs in
    several chunks passes `briefing`: those items are collected there (their buffers stay
    unprocessed) for `write_briefing` to turn into one row after the last chunk; without it
    this call writes its own briefing row. `briefing_box`: the day's briefing being gathered,
    which then waits for the rows created here.
    """
    by_id = {r.id: r for r in rows}
    created, gathered = [], []
    dropped: dict[str, list] = {}  # reason -> rows: one UPDATE each, however the model split them
    # the write lock is held for all of it, while a user's message may wait: its trace lines go in at the commit
    with trace.held(), database.atomic():
        for decision in decisions:
            members = [by_id[i] for i in decision["buffer_ids"]]
            if decision["action"] == "drop":
                dropped.setdefault(decision["reason"], []).extend(members)
                continue
            if decision["priority"] >= 3:
                if daily:
                    gathered.append((decision, members))
                else:
                    # An early sync spends no deep-model run on what can wait for the morning briefing,
                    # and the decision is kept so that later syncs do not pay to triage these rows again.
                    _keep_waiting(decision, members)
                    for member in members:
                        trace.record(
                            member.trace_id,
                            "waiting",
                            "thalamus",
                            "kept for the morning briefing" + (f": {decision['reason']}" if decision["reason"] else ""),
                            now,
                        )
                continue
            row = _inbox_for(decision, members, now)
            if row is not None:
                created.append(row.id)
            ReceptorBuffer.update(processed_at=now, outcome="inbox", reason=decision["reason"]).where(
                ReceptorBuffer.id.in_(decision["buffer_ids"])
            ).execute()
            for member in members:
                trace.record(
                    member.trace_id,
                    "triaged",
                    "thalamus",
                    f"inbox {row.id if row else '(dup)'} priority {decision['priority']}: {decision['reason']}",
                    now,
                )
        buffers.mark_dropped(dropped, now, "thalamus")
        if briefing is None:
            made = _briefing_row(gathered, now)
            if made is not None:
                created.append(made)
        day_briefing.await_rows(briefing_box, created)
        learn(decisions, rows, now)  # what the model's decisions teach about senders, with them
    if briefing is not None:
        briefing.extend(gathered)
    return created


WAITING = "waiting"  # ReceptorBuffer.outcome of a row triaged for the briefing but not yet in one


def _keep_waiting(decision: dict, members: list) -> None:
    """Remember an early sync's briefing decision on its rows (which stay unprocessed until the morning)."""
    kept = {
        "summary": decision["summary"],
        "reason": decision["reason"],
        "topic": decision.get("topic"),
        "group": decision["buffer_ids"],
    }
    for member in members:
        member.payload = dict(member.payload or {}, triage=kept)
        member.outcome, member.reason = WAITING, decision["reason"]
        member.save(only=[ReceptorBuffer.payload, ReceptorBuffer.outcome, ReceptorBuffer.reason])


def waiting_decisions(rows: list) -> list[dict]:
    """The kept briefing decisions of waiting rows, one per group that is still waiting."""
    decisions, placed = [], set()
    present = {r.id for r in rows}
    for row in rows:
        if row.id in placed:
            continue
        kept = (row.payload or {}).get("triage") or {}
        group = [i for i in kept.get("group") or [row.id] if i in present and i not in placed] or [row.id]
        if row.id not in group:
            group.append(row.id)
        placed.update(group)
        decisions.append(
            {
                "buffer_ids": group,
                "summary": str(kept.get("summary") or headline(row)),
                "priority": 3,
                "action": "inbox",
                "reason": str(kept.get("reason") or ""),
                "topic": kept.get("topic"),
            }
        )
    return decisions


def write_briefing(gathered: list, now: datetime, day_box: int | None = None) -> int | None:
    """The one briefing row of a daily sync and its buffers marked processed, in one transaction.

    `day_box`: the day's briefing (an outbox row waiting in status compose) that these items' lines
    join (actors/cortex/route.py briefing_lines), so that the user gets one message."""
    with database.atomic():
        return _briefing_row(gathered, now, day_box)


def _briefing_row(gathered: list, now: datetime, day_box: int | None = None) -> int | None:
    if not gathered:
        return None
    ids = [i for d, _ in gathered for i in d["buffer_ids"]]
    row = inbox.add(
        source="thalamus",
        kind="briefing",
        origin="background",
        priority=3,
        at=now,
        text="Morning briefing:\n" + "\n".join(f"- {d['summary']}" for d, _ in gathered),
        payload={
            "items": [{"summary": d["summary"], "buffer_ids": d["buffer_ids"]} for d, _ in gathered],
            **({"briefing_outbox": day_box} if day_box is not None else {}),
        },
        dedup_key=f"briefing:{min(ids)}:{len(ids)}",
    )
    ReceptorBuffer.update(processed_at=now, outcome="briefing").where(ReceptorBuffer.id.in_(ids)).execute()
    if row is not None:
        day_briefing.await_rows(day_box, [row.id])
    for decision, members in gathered:
        for member in members:
            trace.record(
                member.trace_id,
                "triaged",
                "thalamus",
                "for the morning briefing" + (f": {decision['reason']}" if decision["reason"] else ""),
                now,
            )
    return row.id if row is not None else None


def _inbox_for(decision: dict, members: list, now: datetime):
    payloads = [dict(m.payload or {}, buffer_id=m.id, channel=m.channel) for m in members]
    kind = "event" if any(p.get("change") for p in payloads) else "buffered"
    summary = decision["summary"] or headline(members[0])
    originals = "\n".join(m.text for m in members)
    # a summary that is the item's whole first line is not said twice; any other (one cut from a long line
    # when the model gave none) stays a short line of its own, which is what a follow-up quotes of the item
    said_first = len(members) == 1 and first_line(members[0]) == " ".join(summary.split())
    text = originals if said_first else f"{summary}\n\n{originals}"
    return inbox.add(
        source=members[0].channel,
        kind=kind,
        origin="background",
        priority=decision["priority"],
        at=now,
        text=text[:4000],
        trace_id=members[0].trace_id,
        payload={
            "buffers": payloads,
            "topic": decision.get("topic"),
            **({} if decision.get("plan", True) else {"plan": False}),
            **({"note": decision["note"]} if decision.get("note") else {}),
        },
        dedup_key="triage:" + ",".join(str(m.id) for m in members),
    )


class ThalamusActor(WilsonActor):
    """Routing only: it never waits on a model, so realtime stimuli are never held up."""

    name = "thalamus"

    def receive(self, message):
        match message:
            case StimulusCommitted(table="inbox", row_id=row_id, priority=priority):
                # The routing decision was traced with the row (commit_realtime); what is left is the nudge,
                # to the lane the row's priority names (carried in the message; read when a sender left it out).
                if priority is None:
                    priority = Inbox.select(Inbox.priority).where(Inbox.id == row_id).scalar()
                if priority is None:
                    return
                self.tell("cortex-realtime" if priority == REALTIME_PRIORITY else "cortex", InboxReady())
            case StimulusCommitted(table="buffer"):
                pass  # traced with the row (commit_buffered); it waits for the next sync
            case SyncRequest():
                self.tell("triage", message)


class TriageActor(WilsonActor):
    """The thalamus' sync: polls buffered channels, then one batched `fast` call per chunk."""

    name = "triage"

    def __init__(self, ctx, name: str | None = None):
        super().__init__(ctx, name)
        self.waiting: set[str] = set()
        self.reasons: list[str] = []
        self.replies: list[ReplyTo] = []  # people who asked for this look and hear what it found
        self.started = 0.0
        self.briefed = False  # this daily sync's briefing was handed to the model's run on what triage kept

    def on_start(self):
        # Buffers left unprocessed by a crash are triaged at the next sync; nothing to redo here.
        pass

    def receive(self, message):
        match message:
            case SyncRequest(reason=reason, reply_to=reply_to):
                if reply_to is not None:
                    self.replies.append(reply_to)
                self.begin(reason)
            case ChannelSynced(channel=channel):
                self.waiting.discard(channel)
                if not self.waiting and self.reasons:
                    self.finish()

    def begin(self, reason: str) -> None:
        if self.waiting and monotonic() - self.started < 60:
            self.reasons.append(reason)  # a sync is already gathering; this request joins it
            return
        self.reasons = [reason]
        self.started = monotonic()
        channels = list(self.config.get("core", "buffered_channels") or [])
        self.waiting = set()
        for name in channels:
            if self.ctx.directory.tell(name, ChannelSync(reason)):
                self.waiting.add(name)
        if not self.waiting:
            self.finish()

    def finish(self) -> None:
        reasons, self.reasons, self.waiting = self.reasons, [], set()
        replies, self.replies = self.replies, []
        daily = "daily" in reasons
        self.briefed = False
        looked = self.sync(daily, ", ".join(reasons))
        for reply_to in replies:
            self.answer(reply_to, looked)
        if daily and not self.briefed:
            self.brief(compose=False)
        if daily and inbox.retry_deferred():
            self.tell("cortex", InboxReady())  # parked rows are back

    def sync(self, daily: bool, reason: str) -> dict:
        """Triage what is buffered; how many rows it looked at, kept (`later`: of them, for the morning briefing)
        and had to postpone."""
        everything = buffers.unprocessed()
        now = self.now()
        # Rows an early sync already triaged for the briefing are not sent to the model again.
        waiting = [r for r in everything if r.outcome == WAITING]
        rows = [r for r in everything if r.outcome != WAITING]
        if not rows and not (daily and waiting):
            logger.info("sync ({}): nothing new buffered, no model call", reason)
            return {"looked": 0, "kept": 0, "later": 0, "postponed": 0}

        created, kept, later, postponed = [], 0, 0, 0
        briefing = [] if daily else None
        # the day's briefing opens first and waits for the runs this sync starts
        box = self.brief(compose=True) if daily else None
        box_id = box.id if box is not None else None
        if daily and waiting:
            by_id = {r.id: r for r in waiting}
            briefing.extend((d, [by_id[i] for i in d["buffer_ids"]]) for d in waiting_decisions(waiting))
        tz = self.config.timezone
        # bulk mail from a sender whose bulk mail the model kept dropping is dropped by rule, before any call
        ruled = bulk_drops(rows, int(self.config.get("thalamus", "drop_after")), now, tz)
        buffers.drop(rows, ruled, now, "thalamus")
        asked = [r for r in rows if r.id not in ruled]
        for batch in chunks(asked, int(self.config.get("thalamus", "chunk_chars"))):
            try:
                result = self.ctx.synapse.chat(
                    "fast",
                    triage_request(batch, now, tz),
                    tools=[TRIAGE_TOOL],
                    origin="background",
                    tool_choice="required",
                    purpose="triage",
                    items=len(batch),
                    context=triage_context(batch, now, tz),
                )
            except SynapseError as exc:
                self.postpone(batch, reason, str(exc), now)
                postponed += len(batch)
                continue
            call = next((c for c in result.tool_calls if c.name == "triage"), None)
            raw = call.arguments.get("items") if call else None
            drops = call.arguments.get("drop") if call else None
            if raw is None and drops_a_row(drops, batch):
                raw = []  # a model with nothing to keep may leave `items` out
            if not isinstance(raw, list):
                # No decision at all is not "forgot every row": keeping them would send each to the
                # cortex on its own. They wait for the next sync instead.
                self.postpone(batch, reason, "the model answered without a list of triage items", now)
                postponed += len(batch)
                continue
            decisions = normalise_decisions(raw, batch, drops)
            if not result.offline and floor.enabled(self.config):  # a clear alarm is never dropped or left calm
                decisions, lifted = floor.lift(decisions, batch, now, tz)
                for row in batch:
                    if row.id in lifted:
                        trace.record(row.trace_id, "floor", self.name, f"kept as urgent: {lifted[row.id]}", now)
            kept += sum(len(d["buffer_ids"]) for d in decisions if d["action"] == "inbox")
            later += sum(
                len(d["buffer_ids"]) for d in decisions if d["action"] == "inbox" and d["priority"] >= 3 and not daily
            )  # as apply_triage keeps them: for the morning briefing
            made = apply_triage(decisions, batch, now, daily, briefing, box_id)
            faults.point("triage:after-commit")
            if made:
                # Nudged per committed chunk: a crash in a later chunk must not strand these rows.
                self.tell("cortex", InboxReady())
            created += made
        if briefing:
            row_id = write_briefing(briefing, now, box_id)
            if row_id is not None:
                created.append(row_id)
                self.tell("cortex", InboxReady())
        if box_id is not None:
            day_briefing.gathered(box_id)
            self.settle()
        logger.info(
            "sync ({}): {} buffered row(s) ({} decided earlier, {} dropped by rule) → {} inbox row(s)",
            reason,
            len(everything),
            len(waiting) if daily else 0,
            len(ruled),
            len(created),
        )
        return {"looked": len(rows), "kept": kept, "later": later, "postponed": postponed}

    def answer(self, reply_to: ReplyTo, looked: dict) -> None:
        channels = list(self.config.get("core", "buffered_channels") or [])
        box = outbox.add(
            channel=reply_to.channel,
            text=look_answer(channels=channels, **looked),
            trace_id=trace.new_trace_id(),
            key=reply_to.key,
            at=self.now(),
            payload=dict(reply_to.payload),
        )
        self.tell(reply_to.channel, Deliver(box.id))

    def brief(self, *, compose: bool) -> Outbox | None:
        """The day's briefing; with `compose` it waits for the runs of this sync."""
        self.briefed = self.briefed or compose
        box = day_briefing.write_day_briefing(self.now(), self.config, compose=compose)
        faults.point("briefing:after-commit")  # the briefing is a row; its channel is not told yet
        if box is not None and not compose:
            self.tell(box.channel, Deliver(box.id))
        return box

    def settle(self) -> None:
        """The briefing goes now when none of its runs is left (nothing proposed, or all done already)."""
        box = day_briefing.settle(self.now(), self.config)
        if box is not None:
            self.tell(box.channel, Deliver(box.id))

    def postpone(self, batch: list, reason: str, why: str, now: datetime) -> None:
        logger.warning("sync ({}): triage of {} row(s) postponed: {}", reason, len(batch), why)
        for row in batch:
            trace.record(row.trace_id, "postponed", self.name, f"triage failed: {why}", now)
