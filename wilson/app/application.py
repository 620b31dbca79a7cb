"""The application layer: opens storage, builds the actors, starts them in order.

Mopidy-style and thin on purpose: everything Wilson does happens in the actors;
this module wires them, stops them in reverse, and offers the handful of entry
points the REPL, the CLI and the tests share (inject a stimulus, decide on a
proposal, advance simulated time, wait until nothing is left to do).
"""

from __future__ import annotations

import hashlib
import json
import threading
import uuid
from datetime import datetime, timedelta
from pathlib import Path

from loguru import logger

from actors.approval import ApprovalActor
from actors.cortex.actor import CortexActor
from actors.hippocampus.actor import HippocampusActor
from actors.proposals import calls, make, rules
from actors.ras import RasActor
from actors.thalamus import ThalamusActor, TriageActor
from actors.tick.actor import TickActor
from actors.tick.schedules import next_due
from channels.repl import ReplChannel
from channels.silent import SilentChannel
from channels.telegram import owner_id
from storage import decisions, hot, inbox, routing
from storage.db import hold_for_process, is_postgres, open_database
from storage.migrations import migrate
from storage.models import Approval, DecisionRow, Inbox, Outbox
from wilson import skills
from wilson.kernel import clock as clockmod
from wilson.kernel.actor import Context
from wilson.kernel.config import DEFAULTS, Config
from wilson.kernel.lanes import writes_first
from wilson.kernel.logs import setup_logging
from wilson.kernel.memory import limit_arenas
from wilson.kernel.messages import (
    DecisionRecorded,
    ProposalCreated,
    Recover,
    ReplyTo,
    StimulusCommitted,
    SyncRequest,
    TickNow,
)
from wilson.kernel.supervisor import ActorSpec, Claims, Supervisor
from wilson.kernel.waker import Waker
from wilson.model.synapse import make_synapse


EMPTY_CALENDAR = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Wilson//calendar//EN\r\nEND:VCALENDAR\r\n"


ROLES = ("all", "worker", "ingress")
WORKER_ACTORS = {"silent", "approval", "cortex", "cortex-realtime"}


def build_specs(config: Config, printer=None, role: str = "all") -> list[ActorSpec]:
    """Actors in start order. Senses that deliver come first; the channels of the enabled skills
    (wilson/skills.py) follow the organs, by priority; the tick, which drives time, comes last.

    `role` splits Wilson over processes sharing one PostgreSQL database: `worker` runs the
    cortex and the gate (start as many as you like), `ingress` everything else (exactly
    one: it polls Telegram and fires the schedules), `all` both in one process."""
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}: use one of {', '.join(ROLES)}")
    specs = [ActorSpec("silent", SilentChannel), ActorSpec("repl", ReplChannel, {"printer": printer})]
    specs += [
        ActorSpec("approval", ApprovalActor),
        ActorSpec("cortex", CortexActor, {"min_priority": 1}),
        ActorSpec("cortex-realtime", CortexActor, {"min_priority": 0, "max_priority": 0}),
        ActorSpec("triage", TriageActor),
        ActorSpec("thalamus", ThalamusActor),
        ActorSpec("ras", RasActor),
        ActorSpec("hippocampus", HippocampusActor),
    ]
    taken = {s.name for s in specs} | {"tick"}
    for channel in skills.channels(config):
        if channel.name in taken:
            logger.warning("a skill's channel {} has the name of another actor; it is left out", channel.name)
            continue
        taken.add(channel.name)
        specs.append(ActorSpec(channel.name, channel.actor_class(), dict(channel.kwargs)))
    specs.append(ActorSpec("tick", TickActor))
    if role == "worker":
        return [s for s in specs if s.name in WORKER_ACTORS]
    if role == "ingress":
        return [s for s in specs if s.name not in WORKER_ACTORS - {"silent", "approval"}]
    return specs


def channel_roles(config: Config) -> tuple[str, list[str]]:
    """The primary channel (the first enabled channel the user converses on, else the terminal) and
    the buffered channels the thalamus syncs and the tick polls."""
    found = skills.channels(config)
    primary = next((c.name for c in found if c.converses), "repl")
    return primary, [c.name for c in found if c.buffered]


def _waiting_sql(channels: tuple[str, ...]) -> str:
    def q(model, name: str) -> str:
        return f'"{model._meta.fields[name].column_name}"'

    def table(model) -> str:
        return f'"{model._meta.table_name}"'

    open_ = ", ".join(f"'{s}'" for s in rules.OPEN)
    delivering = f"{q(Outbox, 'channel')} IN ({', '.join('?' for _ in channels)})" if channels else "1 = 0"
    return (
        f"SELECT EXISTS (SELECT 1 FROM {table(Inbox)} WHERE {q(Inbox, 'status')} IN ('pending', 'claimed')), "
        f"EXISTS (SELECT 1 FROM {table(DecisionRow)} WHERE {q(DecisionRow, 'status')} = 'pending') OR "
        f"EXISTS (SELECT 1 FROM {table(Approval)} WHERE {q(Approval, 'status')} IN ({open_}) AND "
        f"{q(Approval, 'presented_at')} IS NULL), "
        f"EXISTS (SELECT 1 FROM {table(Outbox)} WHERE {q(Outbox, 'status')} = 'pending' AND {delivering})"
    )


def _waiting_rows(channels) -> tuple[bool, bool, bool]:
    """(a message waits in the inbox, a decision or a proposal waits for the gate, an outbox row waits for one of
    `channels`), in one statement: `wait_idle` asks twice for every step of a simulated clock."""
    names = tuple(sorted(channels))
    [row] = hot.execute(("wait_idle", names), lambda: _waiting_sql(names), names).rows
    return bool(row[0]), bool(row[1]), bool(row[2])


class IdleTimeout(TimeoutError):
    """Wilson was still busy when `wait_idle` gave up: a stall, never a result to read as "done"."""


class Wilson:
    def __init__(
        self,
        config: Config,
        clock: clockmod.Clock,
        *,
        llm: str | None = None,
        printer=None,
        log_sink=None,
        log_level: str = "INFO",
        watchdog: bool = True,
        role: str = "all",
    ):
        self.config = config
        self.role = role
        self.waker: Waker | None = None
        self.clock = clock
        self.deliveries: list[dict] = []
        self._deliveries_lock = threading.Lock()
        self._polls_owed: list[datetime] = []  # simulated moments a calendar poll sees an edit (calendar_edited)
        self._printer = printer
        setup_logging(config.secrets(), sink=log_sink, level=log_level)
        limit_arenas()  # before the actors' threads start
        apple = str(config.get("calendar", "apple")).strip().lower() in ("1", "true", "yes", "on")
        if (
            not config.get("calendar", "path")
            and not config.get("calendar", "url")
            and not config.get("calendar", "caldav_url")
            and not apple
        ):
            default = config.home / "calendar.ics"
            config.set("calendar", "path", str(default))
            if not default.exists():  # the REPL's `calendar add` fills it; an empty one is not an error
                default.parent.mkdir(parents=True, exist_ok=True)
                default.write_text(EMPTY_CALENDAR)
        primary, buffered = channel_roles(config)
        config.set("core", "primary_channel", primary)
        config.set("core", "buffered_channels", buffered)
        self.db = open_database(config.get("database", "url"), config.home)
        migrate()
        if config.get("telegram", "token") and config.get("core", "owner") == DEFAULTS["core"]["owner"]:
            # proposals are bound to who may approve them: on Telegram, the allow-listed (or paired) owner
            config.set("core", "owner", owner_id(config) or DEFAULTS["core"]["owner"])

        self.synapse = make_synapse(config, clock, llm)
        self.supervisor: Supervisor | None = None
        self.ctx: Context | None = None
        sup = config.section("supervisor")
        lease = float(sup["lease_seconds"])
        self._supervisor_options = dict(
            max_restarts=int(sup["max_restarts"]),
            restart_window=float(sup["restart_window"]),
            watchdog_seconds=float(sup["watchdog_seconds"]) if watchdog else 0,
            lease_seconds=lease,
            claims=Claims(renew=lambda owners: inbox.renew(owners, lease), release=inbox.release_owner),
        )

    # Lifecycle -------------------------------------------------------------
    def start(self) -> "Wilson":
        self.ctx = Context(config=self.config, clock=self.clock, synapse=self.synapse, directory=None)
        specs = build_specs(self.config, self._record_delivery, self.role)
        if (
            any(s.name == "telegram" for s in specs)
            and is_postgres()
            and not hold_for_process(self.config.get("database", "url"), "telegram")
        ):
            # two pollers would take each other's updates, two senders send twice
            logger.warning("another Wilson process runs Telegram for this database; this one leaves it to that one")
            specs = [s for s in specs if s.name != "telegram"]
        self.supervisor = Supervisor(self.ctx, specs, **self._supervisor_options)
        self.ctx.directory = self.supervisor
        self.supervisor.start()
        if is_postgres() or self.role != "all":
            # other processes write work for this one: they wake it through the database
            channels = [s.name for s in specs if getattr(s.actor_class, "can_deliver", False)]
            self.waker = Waker(
                self.supervisor,
                [s.name for s in specs],
                channels,
                dsn=self.config.get("database", "url") if is_postgres() else None,
                poll_seconds=float(self.config.get("core", "poll_seconds")),
            ).start()
        logger.info(
            "Wilson is up ({} clock, {} model)",
            "simulated" if self.clock.simulated else "real",
            "offline" if self.synapse.offline else "language",
        )
        return self

    def stop(self, timeout: float = 5.0) -> None:
        if self.waker is not None:
            self.waker.stop()
        if self.supervisor is not None:
            self.supervisor.stop(timeout=timeout)
        self.synapse.close()
        if not self.db.is_closed():
            self.db.close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def _record_delivery(self, record: dict) -> None:
        with self._deliveries_lock:
            self.deliveries.append(record)
        if self._printer is not None:
            self._printer(record)

    # Stimuli -----------------------------------------------------------------
    def say(self, text: str, user_id: str | None = None, channel: str = "repl"):
        """The user types on the REPL: a realtime stimulus, committed before anyone is told."""
        writes_first()
        row = routing.commit_realtime(
            source=channel, text=text, at=self.clock.now(), user_id=user_id or self.config.get("core", "owner")
        )
        self.supervisor.tell("thalamus", StimulusCommitted("inbox", row.id, row.trace_id, row.priority))
        return row

    def inject_buffered(self, channel: str, text: str, payload: dict | None = None):
        """A synthetic buffered stimulus (email, web) from the REPL."""
        key = f"{channel}:" + hashlib.sha1(f"{self.clock.now().isoformat()}|{text}".encode()).hexdigest()[:16]
        row = routing.commit_buffered(channel=channel, text=text, dedup_key=key, payload=payload, at=self.clock.now())
        if row is not None:
            self.supervisor.tell("thalamus", StimulusCommitted("buffer", row.id, row.trace_id))
        return row

    def calendar_file(self) -> Path:
        return Path(self.config.get("calendar", "path"))

    def calendar_edited(self) -> None:
        """The REPL or the eval changed the calendar file. A real clock's poll sees it within one `[calendar]
        poll`; a simulated clock steps to that moment (it does not step for every poll of a quiet calendar,
        so without this an edit would wait for the next scheduled job, maybe hours)."""
        try:
            every = clockmod.parse_duration(str(self.config.get("calendar", "poll") or ""))
        except ValueError:
            return  # not polled ("off"): the edit waits for the daily sync, as it would for real
        if self.clock.simulated and every > timedelta(0):
            self._polls_owed.append(self.clock.now() + every)

    def sync(self, *, answer_on: str | None = None) -> None:
        """A look at the buffered channels now; `answer_on`: the channel of the person who asked (the REPL's
        `today`), who hears what the look found."""
        asked = ReplyTo(answer_on, f"look:{uuid.uuid4().hex}") if answer_on else None
        self.supervisor.tell("thalamus", SyncRequest("manual", asked))

    def decide(
        self,
        approval_id: int,
        action: str,
        *,
        items: tuple[int, ...] = (),
        text: str = "",
        user_id: str | None = None,
        channel: str = "repl",
    ) -> None:
        """The user decides on a proposal: the decision is a row before the gate is told."""
        writes_first()
        row = decisions.record(
            approval_id=approval_id,
            action=action,
            items=tuple(items),
            text=text,
            user_id=user_id or self.config.get("core", "owner"),
            channel=channel,
            at=self.clock.now(),
        )
        self.supervisor.tell("approval", DecisionRecorded(row.id))

    def propose(self, tool: str, args: dict, reason: str, channel: str = "repl") -> str | None:
        """The user asks for one change by a command of their own (`forget 5`): a proposal like any
        other, which they then approve. The reason it cannot be done, or None."""
        writes_first()
        try:
            made = make.propose_one(
                tool,
                args,
                owner=self.config.get("core", "owner"),
                channel=channel,
                reason=reason,
                key=f"{channel}:propose:{tool}:{json.dumps(args, sort_keys=True)}:{self.clock.now().isoformat()}",
                now=self.clock.now(),
                config=self.config,
            )
        except rules.CannotPropose as exc:
            return str(exc)
        self.supervisor.tell("approval", ProposalCreated(made.id))
        return None

    # Time --------------------------------------------------------------------
    def wait_idle(self, timeout: float = 60.0) -> bool:
        """Block until no message is in flight and nothing waits in the database for these actors:
        no inbox row to claim or being worked, no outbox row to deliver, no decision to apply, no
        proposal to show. Returns True; raises IdleTimeout when it is still busy after `timeout` seconds."""
        deadline = clockmod.monotonic() + timeout
        delivering = set(self.supervisor.names())
        quiet_rounds = 0
        while clockmod.monotonic() < deadline:
            # asleep while messages are in flight (woken by the last one's end); a look at least twice a second
            self.supervisor.settle(max(0.0, min(0.5, deadline - clockmod.monotonic())))
            waiting, undecided, undelivered = _waiting_rows(delivering)
            calling = bool(calls.IN_FLIGHT)  # an approved call to an MCP server, on the gate's thread for it
            busy = self.supervisor.in_flight() > 0 or waiting or undecided or calling or undelivered
            if (waiting or undecided) and self.supervisor.in_flight() == 0:
                # rows committed without a nudge (a kill between commit and tell, another process)
                for name in ("cortex-realtime", "cortex", "approval"):
                    self.supervisor.tell(name, Recover())
            if not busy:
                quiet_rounds += 1
                if quiet_rounds >= 2:
                    return True
                # between the two quiet looks, every actor answers: one still in its on_start, or handling a
                # message its mailbox did not count (Pykka's own), is done by the second look. Once per quiet
                # spell, not every round: a ping is two thread switches per actor.
                self.supervisor.ping_all()
            else:
                quiet_rounds = 0
            clockmod.pause(0.002)  # two quiet looks a moment apart, not back to back
        raise IdleTimeout(
            f"Wilson is still busy after {timeout:g}s ({self.supervisor.in_flight()} message(s) in "
            f"flight, inbox {inbox.pending_count()} waiting)"
        )

    def advance(self, delta: timedelta) -> datetime:
        """Live through `delta` of simulated time, firing everything due in order."""
        if not self.clock.simulated:
            raise RuntimeError("advance needs the simulated clock (--clock sim)")

        target = self.clock.now() + delta
        fired_at = None
        while True:
            self.wait_idle()
            now = self.clock.now()
            due = next_due(now, tz=self.config.timezone)
            poll = min(self._polls_owed, default=None)
            if poll is not None and poll <= target and (due is None or poll <= due):
                self._polls_owed.remove(poll)
                self.clock.set(max(poll, now))
                self.supervisor.tell("tick", TickNow())  # its scan tells the channels: the poll that sees the edit
                continue
            if due is None or due > target:
                break
            if fired_at is not None and due <= fired_at:
                due = fired_at + timedelta(seconds=1)  # never spin on a job that stays due
                if due > target:
                    break
            self.clock.set(max(due, now))
            fired_at = self.clock.now()
            self.supervisor.tell("tick", TickNow())
        self.clock.set(target)
        self._polls_owed = [moment for moment in self._polls_owed if moment > target]
        self.supervisor.tell("tick", TickNow())
        self.wait_idle()
        return target

    # Reading -----------------------------------------------------------------
    def user_deliveries(self) -> list[dict]:
        with self._deliveries_lock:
            return list(self.deliveries)
