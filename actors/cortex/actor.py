"""The cortex actor: two lanes claim inbox rows by priority, run them and tell what the run decided."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from loguru import logger

from actors import briefing, floor, tools
from actors.cortex import noted
from actors.cortex.told import told_before
from actors.cortex.calls import RunOutcome, reason, run_kind
from actors.cortex.context import FAST_HISTORY_TOKENS, build_context, build_messages, recent_turns
from actors.cortex.outcome import Notify, kept, record_kept, record_outcome
from actors.cortex.prompts import BROKEN_RUN, BUDGET_NOTICE, KEPT_GIVEN_UP, NOTING_PROMPT, chat_prompt
from actors.cortex.route import chat_run, choose_route, fallback_followup, judgement_for, template_reply
from actors.hippocampus import recall as hippocampus_recall
from storage import budget_notices, inbox, mute, outbox, trace
from storage.db import database
from storage.models import Inbox
from wilson import skills
from wilson.kernel import faults, lanes, liveness
from wilson.kernel.actor import WilsonActor
from wilson.kernel.messages import DecisionRecorded, Deliver, InboxReady, ProposalCreated, Recover, SyncRequest
from wilson.model.synapse import trace_scope


@dataclass(frozen=True)
class Thought:
    """What one run came to: the route that thought it (template, fast or deep), why, and its outcome."""

    route: str
    why: str
    outcome: RunOutcome


@dataclass(frozen=True)
class Given:
    """What a model run is given: recalled memories, recent turns, the toolbox and the context built of them."""

    memories: list
    turns: list
    box: object
    calendar: bool
    context: dict
    user_id: str | None


class CortexActor(WilsonActor):
    name = "cortex"

    def __init__(self, ctx, name: str | None = None, min_priority: int = 1, max_priority: int = 99):
        super().__init__(ctx, name)
        self.min_priority = min_priority
        self.max_priority = max_priority
        self.realtime = max_priority == 0  # the lane that answers the user
        self.serves_user = self.realtime  # and whose runs background loops give way to (kernel/lanes.py)
        self._box = None  # (skills generation, toolbox): see toolbox()

    def notice_budget(self, error: str, now: datetime) -> None:
        """When background reasoning pauses for the day's budget, say so to the user once that day."""
        if not error.startswith("BudgetExhausted"):
            return
        day = now.astimezone(self.config.timezone).date().isoformat()
        with database.atomic():
            if budget_notices.given(day):
                return
            budget_notices.note(day, error, now)
            channel = self.config.primary_channel
            box = outbox.add(
                channel=channel,
                text=BUDGET_NOTICE,
                trace_id=trace.new_trace_id(),
                key=f"budget_notice:{day}",
                at=now,
                payload={"why": "budget"},
            )
        self.tell(channel, Deliver(box.id))

    def toolbox(self):
        """The tools of this configuration, asked of the skills once per incarnation (each tool of each skill
        says whether the settings it needs are there, and the settings are read at start) and again after
        the installed skills were looked up anew."""
        if self._box is None or self._box[0] != skills.GENERATION:
            self._box = (skills.GENERATION, tools.toolbox(self.config))
        return self._box[1]

    def quiet_hold(self, at: datetime) -> datetime | None:
        """Until when a non-urgent surfacing waits (quiet hours or a user's mute), or None."""
        return mute.hold_until(self.config, at)

    def on_start(self):
        released = inbox.recover(self.now())
        if released:
            logger.warning("{} picked up {} unfinished row(s) again", self.name, released)
        for row in inbox.given_up(self.name):
            self.report_given_up(row)
        # straight to this actor: while it starts, the directory may still name the one it replaces
        self.actor_ref.tell(InboxReady())

    def receive(self, message):
        if isinstance(message, (InboxReady, Recover)):
            self.drain()

    def drain(self) -> None:
        lease = float(self.config.get("supervisor", "lease_seconds"))
        # the user wrote again while messages are kept: the oldest kept one goes first (a try of the model),
        # so that they are answered in the order they were written
        if self.max_priority == 0:
            inbox.release_kept(oldest_only=True, while_user_waits=True)
        while not self.handler.fenced:  # a replaced (hung) incarnation takes no more rows
            lanes.give_way()  # the background lane lets a user's run in progress go first (a no-op on its own lane)
            # the claim's trace line (and the offline rule's) go out with the run's results (storage/trace.py);
            # the replies it writes go to their channels with the Deliver that names them (storage/outbox.py)
            with trace.held(), outbox.written():
                row = inbox.claim_next(
                    self.now(),
                    lane=self.name,
                    min_priority=self.min_priority,
                    max_priority=self.max_priority,
                    owner=self.owner,
                    lease_seconds=lease,
                )
                if row is None:
                    return
                faults.point("cortex:after-claim")
                liveness.beat(self.handler_budget(row), f"inbox {row.id}")
                try:
                    self.run(row)
                except inbox.LostClaim as exc:  # replaced while it worked: the new owner runs the row
                    logger.warning("{}: {}; its results were not kept", self.name, exc)
                    return
                except Exception as exc:  # one broken run must not take the cortex (and every later message) down
                    self.contain(row, exc)
            if row.origin != "user":
                self.settle_briefing()
            if not inbox.more_after(row.id, self.max_priority):
                return  # the run's transaction saw nothing more to claim; what comes later is nudged

    def settle_briefing(self) -> None:
        """A morning briefing waiting for this morning's runs goes out once the last of them has ended."""
        box = briefing.settle(self.now(), self.config)
        if box is not None:
            self.tell(box.channel, Deliver(box.id))

    def report_given_up(self, row: Inbox) -> None:
        now = self.now()
        logger.error("{} gave up on inbox {}: it was being worked on each time the actor died", self.name, row.id)
        trace.record(row.trace_id, "error", self.name, inbox.GAVE_UP, now)
        self.apologise(row, now)
        inbox.mark_reported(row.id)

    def contain(self, row: Inbox, exc: Exception) -> None:
        now = self.now()
        logger.opt(exception=exc).error("{} run on inbox {} broke", self.name, row.id)
        status = inbox.fail_or_retry(row.id, now, f"{type(exc).__name__}: {exc}", owner=self.owner)
        trace.record(row.trace_id, "error", self.name, f"{type(exc).__name__}: {exc} ({status})", now)
        if status == "failed":
            self.apologise(row, now)

    def apologise(self, row: Inbox, now: datetime) -> None:
        """A message of the user's that Wilson gave up on gets an answer saying so, never silence."""
        if row.origin != "user":
            return
        channel = row.reply_channel or self.config.primary_channel
        box = outbox.add(channel=channel, text=BROKEN_RUN, trace_id=row.trace_id, key=f"reply:{row.id}", at=now)
        self.tell(channel, Deliver(box.id))

    def floor(self, row: Inbox, outcome: RunOutcome, now: datetime, tz) -> None:
        """A background run whose model told nothing about an item the offline rules call a clear alarm tells it
        anyway (actors/floor.py), unless Wilson told of its thread within a day."""
        if (
            row.origin == "user"
            or not outcome.modelled
            or outcome.surfaced
            or outcome.proposals
            or not floor.enabled(self.config)
        ):
            return
        why = floor.inbox_alarm(row, now, tz)
        if why is None or told_before(row, now, tz):
            return
        outcome.surfaced.append((floor.heads_up(row), f"floor: {why}", False))
        trace.record(row.trace_id, "floor", self.name, f"the model kept silent about a clear alarm: {why}", now)

    def run(self, row: Inbox) -> None:
        now = self.now()
        tz = self.config.timezone
        owner = self.config.get("core", "owner")
        route, why = choose_route(row, judgement_for(row, now, owner, self.quiet_hold))
        with trace_scope(row.trace_id):  # a fall back to the offline rules is traced on this row's path
            if route == "template":
                thought = self.template_run(row, why, now, tz, owner)
            else:
                thought = self.model_run(row, route, why, now, tz, owner)
        self.finish(row, thought, now, tz)

    def template_run(self, row: Inbox, why: str, now: datetime, tz, owner) -> Thought:
        """A run the code answers without a model, unless the triage note's call is refused: then the fast
        model reads the item itself, as it would have without the note."""
        if row.origin == "user":  # a thanks, an "ok" or "what did I miss?" alone
            reply, quoted = template_reply(row, now, tz, owner)
            return Thought("template", why, RunOutcome(reply=reply, read_untrusted=quoted))
        if noted.triage_note(row) is not None:  # triage said what to do about it
            outcome = noted.act_on(row, now, tz, owner, self.toolbox())
            if not outcome.rejected_calls:
                return Thought("template", why, outcome)
            name, problem = outcome.rejected_calls[0]
            return self.model_run(row, "fast", f"{why}; but its {name} was refused ({problem[:120]})", now, tz, owner)
        # no model: no memories, turns or context to gather either
        outcome = RunOutcome(surfaced=[(fallback_followup(row, tz), why, False)])
        if self.ctx.synapse.paused("deep"):  # no model was needed here, but the user hears of the pause
            self.notice_budget("BudgetExhausted: deep", now)
        return Thought("template", why, outcome)

    def model_run(self, row: Inbox, route: str, why: str, now: datetime, tz, owner) -> Thought:
        """What the run gives the model (memories, turns, context, tools), then the fast or the deep run."""
        memories = []
        try:  # recalled by the stimulus, its topic, its kind of event, its people and places
            memories = hippocampus_recall.memories_for(row, now, self.config)
        except Exception as exc:
            logger.warning("recall unavailable: {}", exc)
        topic_id = (row.payload or {}).get("topic_id")
        turns = recent_turns(row.user_id, topic_id, owner) if row.origin == "user" else []
        box = self.toolbox()
        noting = route == "fast" and row.origin != "user"  # a note or one task from what came in
        calendar = "calendar_lookup" in tools.offered("user", box)
        context = build_context(row, now, tz, memories, turns, owner, calendar, named_only=noting)
        user_id = str(row.user_id or owner) if row.origin == "user" and (row.user_id or owner) else None
        given = Given(memories, turns, box, calendar, context, user_id)
        if route == "fast":
            return self.fast_run(row, why, given, noting, now, tz, owner)
        return self.deep_run(row, why, given, now, tz, owner)

    def fast_run(self, row: Inbox, why: str, given: Given, noting: bool, now: datetime, tz, owner) -> Thought:
        """Routine chat gets the chat prompt, a background item the prompt of a note; the fast model may hand
        the run to the deep one."""
        kind = chat_run(row)
        user_run = row.origin == "user"
        chat = (
            {
                "system": chat_prompt(kind, deciding=bool(given.context.get("pending_proposals"))),
                "history_tokens": FAST_HISTORY_TOKENS,
            }
            if user_run
            else {"system": NOTING_PROMPT}
        )
        messages = build_messages(
            given.context,
            row,
            given.turns,
            self.config,
            offered=tools.offered(run_kind("fast", row.origin, kind), given.box),
            **chat,
        )
        outcome = reason(
            self.ctx.synapse,
            messages,
            row.origin,
            now,
            tz,
            user_id=given.user_id,
            owner=owner,
            box=given.box,
            context=given.context,
            role="fast",
            chat=kind,
        )
        if outcome.escalated is None:
            return Thought("fast", why, outcome)
        if noting:  # the planner plans around the week: it sees the tasks due soon too
            given = replace(
                given, context=build_context(row, now, tz, given.memories, given.turns, owner, given.calendar)
            )
        return self.deep_run(row, f"{why}; escalated to deep: {outcome.escalated}", given, now, tz, owner)

    def deep_run(self, row: Inbox, why: str, given: Given, now: datetime, tz, owner) -> Thought:
        messages = build_messages(
            given.context, row, given.turns, self.config, offered=tools.offered(run_kind("deep", row.origin), given.box)
        )
        outcome = reason(
            self.ctx.synapse,
            messages,
            row.origin,
            now,
            tz,
            user_id=given.user_id,
            owner=owner,
            box=given.box,
            context=given.context,
        )
        return Thought("deep", why, outcome)

    def finish(self, row: Inbox, thought: Thought, now: datetime, tz) -> None:
        """What the run decided, committed and told: a message kept while the model is down, a background run
        that failed deferred or answered by plain words, the floor's alarm, then the outcome's rows."""
        outcome = thought.outcome
        outcome.route = f"{thought.route}: {thought.why}"
        answered = row.origin == "user" and not outcome.error and thought.route != "template"  # a model answered
        if outcome.error and row.origin == "user" and kept(outcome.error):
            if not (row.payload or {}).get("kept_after_answer"):
                for channel, outbox_id in record_kept(row, outcome, now, self.config):
                    self.tell(channel, Deliver(outbox_id, outbox.added(outbox_id)))
                return
            # the model answered the message after it and still fails on this one: it is this message's own
            outcome = RunOutcome(
                reply=KEPT_GIVEN_UP.format(" ".join(row.text.split())[:60]),
                unfinished=f"given up: {outcome.error[:200]}",
            )
        if answered and inbox.release_kept(oldest_only=False):
            self.actor_ref.tell(InboxReady())  # the model answers again: the kept messages follow, oldest first
        if outcome.error and row.origin != "user":
            self.notice_budget(outcome.error, now)
            fallback = fallback_followup(row, tz)
            if fallback is None:
                inbox.defer(row.id, outcome.error, owner=self.owner)
                trace.record(
                    row.trace_id, "deferred", self.name, f"{outcome.error}; retried at the next daily sync", now
                )
                return
            # deadlines keep firing without a model: the follow-up goes out as plain words
            outcome = RunOutcome(surfaced=[(fallback, f"deadline follow-up without a model ({outcome.error})", False)])
        self.floor(row, outcome, now, tz)
        notify = record_outcome(row, outcome, now, self.config, self.quiet_hold)
        faults.point("cortex:after-outcome-commit")  # the proposal and replies are rows; nobody told yet
        self.tell_committed(row, notify)

    def tell_committed(self, row: Inbox, notify: Notify) -> None:
        if notify.approval:
            self.tell("approval", ProposalCreated(notify.approval))
        if notify.again:
            self.tell("approval", ProposalCreated(notify.again, again_for=row.id))
        for channel, outbox_id in notify.deliver:
            self.tell(channel, Deliver(outbox_id, outbox.added(outbox_id)))
        if notify.sync:
            self.tell("thalamus", SyncRequest("request"))
        for decision_id in notify.decisions:
            self.tell("approval", DecisionRecorded(decision_id))
