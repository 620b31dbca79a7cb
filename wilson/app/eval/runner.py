"""Live through one scenario on a fresh home with the simulated clock, and record what Wilson did.

Each scenario gets its own temporary home and SQLite database, started and stopped in this process
(cheap: no interpreter per scenario). The record (an "observation") is plain JSON-able data: every
message that reached the user with the step that led to it and the stimuli its trace links it to,
every proposal with its items, each stimulus's fate in triage, tokens and model-call latencies.
scorer.py turns it into numbers; nothing here judges.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import shutil
import tempfile
from datetime import datetime
from pathlib import Path

from actors.proposals.rules import OPEN
from loguru import logger

from channels.calendar import add_event, cancel_event
from storage.db import open_database
from storage.migrations import migrate
from storage.models import Approval, ApprovalItem, Inbox, Outbox, ReceptorBuffer, TokenUsage
from wilson.app.application import IdleTimeout, Wilson
from wilson.app.eval.format import Scenario, Step
from wilson.kernel import clock as clockmod, config as configmod
from wilson.kernel.timeparse import date_or_datetime

# Settings a scenario never inherits from the person's own configuration: an evaluation must not
# reach their Telegram, their mailbox, their calendar or their dashboard port.
ISOLATED = {
    "WILSON_WEB_ENABLED": "false",
    "WILSON_TELEGRAM_TOKEN": "",
    "WILSON_EMAIL_IMAP_HOST": "",
    "WILSON_EMAIL_SMTP_HOST": "",
    "WILSON_CALENDAR_URL": "",
    "WILSON_CALENDAR_CALDAV_URL": "",
    "WILSON_CALENDAR_PATH": "",
    "WILSON_DATABASE_URL": "",
}
IDLE_TIMEOUT = 120.0  # seconds one step may keep Wilson busy before the scenario is marked stuck


def scenario_environ(scenario: Scenario) -> dict:
    """The environment a scenario's configuration is loaded from: its timezone, quiet hours and own
    settings, and nothing of the person's (their model settings are copied in after the load)."""
    environ = {"WILSON_CORE_TIMEZONE": scenario.timezone, "WILSON_CORE_QUIET_HOURS": scenario.quiet_hours}
    environ.update(scenario.settings)
    environ.update(ISOLATED)
    return environ


def _discard(message) -> None:
    pass


class _Timed:
    """Wraps Synapse.chat on one instance to keep each call's duration (the scenario's model latency)."""

    def __init__(self, chat, durations: list):
        self.chat, self.durations = chat, durations

    def __call__(self, *args, **kwargs):
        began = clockmod.monotonic()
        try:
            return self.chat(*args, **kwargs)
        finally:
            self.durations.append(clockmod.monotonic() - began)


_schema: list[Path] = []  # this process' migrated, empty working memory (see `_fresh_memory`)


def _fresh_memory(home: Path) -> None:
    """Put a copy of a migrated, empty working memory in `home` (made once per process): every scenario starts
    on a fresh database, and migrating each anew cost more than some short stories take to live."""
    if not _schema or not _schema[0].exists():
        folder = Path(tempfile.mkdtemp(prefix="wilson-eval-schema-"))
        atexit.register(shutil.rmtree, folder, True)
        logger.disable("storage.migrations")  # "created a new database" once per process says nothing here
        try:
            made = open_database(None, folder)
            migrate()
            made.close()  # closed, so that its write-ahead log is folded into the file copied
        finally:
            logger.enable("storage.migrations")
        _schema[:] = [Path(made.database)]
    home.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(_schema[0], home / _schema[0].name)


def run_scenario(
    scenario: Scenario,
    llm: str | None = "offline",
    *,
    llm_settings: dict | None = None,
    log_sink=None,
    record: str | Path | None = None,
) -> dict:
    """The observation of one scenario (see module doc). Never raises for what Wilson does; a step
    that cannot run (nothing to approve, an unknown title) is noted in `errors`.

    `record`: a directory where the model's answers are kept, one subdirectory per scenario, for
    `llm="replay:DIR"` to serve back later (CI replays a real model's answers without it)."""
    llm_settings = dict(llm_settings or {})
    if record:
        llm_settings["record"] = str(Path(record) / scenario.name)
    if llm and llm.startswith("replay:") and (Path(llm[len("replay:") :]) / scenario.name).is_dir():
        llm = f"replay:{Path(llm[len('replay:') :]) / scenario.name}"
    began = clockmod.monotonic()
    with tempfile.TemporaryDirectory(prefix="wilson-eval-") as tmp:
        home = Path(tmp) / "home"
        config = configmod.load(home, environ=scenario_environ(scenario))
        if not config.get("database", "url"):
            _fresh_memory(home)
        for key, value in llm_settings.items():  # the person's model, so that eval measures it
            config.set("llm", key, value)
        clock = clockmod.SimClock(scenario.start)
        app = Wilson(config, clock, llm=llm, log_sink=log_sink or _discard, log_level="WARNING")
        durations: list[float] = []
        app.synapse.chat = _Timed(app.synapse.chat, durations)
        app.start()
        try:
            observation = _live(app, scenario)
        finally:
            app.stop()
    observation["model_seconds"] = [round(d, 4) for d in durations]
    observation["seconds"] = round(clockmod.monotonic() - began, 3)
    return observation


def _live(app, scenario: Scenario) -> dict:
    errors: list[str] = []
    step_of: dict[int, int] = {}  # outbox id -> the step during which it was delivered
    stimuli: dict[str, dict] = {}
    calendar_steps: list[tuple[str, datetime, Step]] = []
    for step in scenario.steps:
        at = app.clock.now()
        try:
            row = _do(app, scenario, step, errors)
        except Exception as exc:  # a step Wilson refuses is a finding of this scenario, not the end of the run
            errors.append(f"step {step.index + 1} ({step.action}): {type(exc).__name__}: {exc}")
            row = None
        if step.stimulus:
            stimuli[step.id] = {
                "at": at.isoformat(),
                "buffer_id": getattr(row, "id", None),
                "inbox_id": None,
                "action": step.action,
            }
            if step.action == "say" and row is not None:
                stimuli[step.id].update(inbox_id=row.id, buffer_id=None)
            if step.action == "calendar":
                calendar_steps.append((step.args["title"].lower(), at, step))
        try:
            app.wait_idle(IDLE_TIMEOUT)
        except IdleTimeout:
            errors.append(f"step {step.index + 1} ({step.action}): still busy after {IDLE_TIMEOUT:g}s")
        for (ident,) in (
            Outbox.select(Outbox.id)
            .where((Outbox.status == "delivered") & Outbox.surfaced & Outbox.id.not_in(list(step_of) or [0]))
            .tuples()
        ):
            step_of[ident] = step.index
    _calendar_buffers(stimuli, calendar_steps)
    return _collect(app, scenario, stimuli, step_of, errors)


def _do(app, scenario: Scenario, step: Step, errors: list):
    args, tz = step.args, scenario.tz
    if step.action == "calendar":
        if args["action"] == "cancel":
            if not cancel_event(app.calendar_file(), args["title"]):
                errors.append(f"step {step.index + 1}: no calendar event called {args['title']!r} to cancel")
            app.calendar_edited()
            return None
        add_event(app.calendar_file(), args["title"], args["start"], args.get("end"), args.get("location"), tz=tz)
        app.calendar_edited()
        return None
    if step.action == "email":
        sent = args.get("sent") or app.clock.now()
        return app.inject_buffered("email", email_text(args, sent, tz), email_payload(args, sent))
    if step.action == "web":
        payload = {k: args[k] for k in ("url", "title") if k in args}
        return app.inject_buffered("web", args["text"], payload)
    if step.action == "say":
        return app.say(args["text"])
    if step.action in ("approve", "reject"):
        ident = _proposal_id(args["proposal"])
        if ident is None:
            errors.append(f"step {step.index + 1}: no proposal waiting to {step.action}")
            return None
        app.decide(ident, step.action, items=tuple(args["items"]))
        return None
    if step.action == "advance":
        target = app.clock.now() + args["for"] if "for" in args else args["to"]
        if target <= app.clock.now():
            errors.append(f"step {step.index + 1}: advance to {target.isoformat()} is not after now")
            return None
        app.advance(target - app.clock.now())
        return None
    raise ValueError(f"unknown step {step.action!r}")


def email_text(args: dict, sent: datetime | None = None, tz=None) -> str:
    """As the email channel describes a mail to the thalamus (channels/email/parse.py describe), its "Sent …"
    line and all: what the rules read is what they read from a real mailbox."""
    who = f"{args['name']} <{args['from']}>" if args.get("name") else args["from"]
    lines = [f"Email from {who}: {args['subject'] or '(no subject)'}"]
    if sent is not None:
        lines.append("Sent " + sent.astimezone(tz).strftime("%a %d %b %Y %H:%M"))
    if args.get("thread"):
        lines.append(f"A reply in the thread “{args['thread']}”")
    if args.get("bulk"):
        lines.append(f"Bulk mail ({args['bulk']})")
    lines.append(args.get("body", "").strip() or "(no readable text)")
    return "\n".join(lines)


def email_payload(args: dict, sent: datetime | None = None) -> dict:
    thread = args.get("thread")
    payload = {
        "channel": "email",
        "priority": 3,
        "from": args["from"],
        "from_name": args.get("name", ""),
        "subject": args["subject"],
        "date": sent.isoformat() if sent is not None else None,
        "in_reply_to": f"<{hashlib.sha1(thread.encode()).hexdigest()[:16]}@eval>" if thread else None,
    }
    if args.get("bulk"):
        payload["bulk"] = args["bulk"]
    return payload


def _proposal_id(which) -> int | None:
    if which != "latest":
        return int(which)
    row = Approval.select(Approval.id).where(Approval.status.in_(OPEN)).order_by(Approval.id.desc()).first()
    return row.id if row else None


def _calendar_buffers(stimuli: dict, calendar_steps: list) -> None:
    """A calendar change is read by the channel's poll some minutes after the step: each buffer row
    belongs to the last calendar step on that title before the row was written."""
    for row in ReceptorBuffer.select().where(ReceptorBuffer.channel == "calendar").order_by(ReceptorBuffer.id):
        title = str((row.payload or {}).get("title") or "").lower()
        created = clockmod.as_utc(row.created_at)
        owner = None
        for step_title, at, step in calendar_steps:
            if step_title == title and at <= created:
                owner = step
        if owner is not None:
            stimuli[owner.id].setdefault("calendar_buffers", []).append(row.id)


def _collect(app, scenario: Scenario, stimuli: dict, step_of: dict, errors: list) -> dict:
    steps = {s.index: s for s in scenario.steps}
    buffer_owner: dict[int, str] = {}
    for ident, info in stimuli.items():
        for buffer_id in [info.get("buffer_id")] + info.get("calendar_buffers", []):
            if buffer_id:
                buffer_owner[buffer_id] = ident
    traces: dict[str, set] = {}
    outcomes: dict[str, list] = {ident: [] for ident in stimuli}
    for row in ReceptorBuffer.select():
        owner = buffer_owner.get(row.id)
        if owner:
            traces.setdefault(row.trace_id, set()).add(owner)
            outcomes[owner].append(row.outcome or "pending")
    inbox_owner: dict[int, set] = {}
    for row in Inbox.select():
        owners = set()
        for buffer in (row.payload or {}).get("buffers") or []:  # briefing rows are told by words, not traces
            if isinstance(buffer, dict) and buffer.get("buffer_id") in buffer_owner:
                owners.add(buffer_owner[buffer["buffer_id"]])
        owners |= {i for i, info in stimuli.items() if info.get("inbox_id") == row.id}
        if owners:
            inbox_owner[row.id] = owners
            traces.setdefault(row.trace_id, set()).update(owners)
    proposals = []
    for row in Approval.select().order_by(Approval.id):
        root = row
        while root.supersedes:
            found = Approval.get_or_none(Approval.id == root.supersedes)
            if found is None:
                break
            root = found
        items = [
            {
                "tool": i.tool,
                "text": f"{i.description}\n{json.dumps(i.args, ensure_ascii=False, default=str)}",
                "dues": _dues(i.args, app.config.timezone),
                "executed": i.status == "executed",
                "title": str((i.args or {}).get("title") or (i.args or {}).get("text") or "")[:200],
            }
            for i in row.items.order_by(ApprovalItem.position)
        ]
        linked = set(traces.get(row.trace_id, set())) | inbox_owner.get(row.inbox_id or 0, set())
        proposals.append(
            {
                "id": row.id,
                "root": root.id,
                "at": clockmod.as_utc(row.created_at).isoformat(),
                "status": row.status,
                "text": f"{row.summary}\n{row.reason}",
                "items": items,
                "stimuli": sorted(linked),
            }
        )
    by_approval = {p["id"]: p for p in proposals}
    deliveries = []
    for row in Outbox.select().where(Outbox.id.in_(list(step_of) or [0])).order_by(Outbox.id):
        step = steps[step_of[row.id]]
        approval = ((row.payload or {}).get("approval") or {}).get("id")
        linked = set(traces.get(row.trace_id, set()))
        if approval in by_approval:
            linked |= set(by_approval[approval]["stimuli"])
        deliveries.append(
            {
                "id": row.id,
                "at": clockmod.as_utc(row.delivered_at or row.created_at).isoformat(),
                "text": row.text,
                "step": step.index,
                "response": step.action in ("say", "approve", "reject"),
                "approval": approval,
                "stimuli": sorted(linked),
            }
        )
    usage = {}
    for row in TokenUsage.select():
        role = usage.setdefault(row.role, {"calls": 0, "prompt": 0, "completion": 0})
        role["calls"] += row.calls
        role["prompt"] += row.prompt_tokens
        role["completion"] += row.completion_tokens
    return {
        "scenario": scenario.name,
        "split": scenario.split,
        "start": scenario.start.isoformat(),
        "end": app.clock.now().isoformat(),
        "deliveries": deliveries,
        "proposals": proposals,
        "stimuli": {i: {"at": info["at"], "outcomes": outcomes[i]} for i, info in stimuli.items()},
        "tokens": usage,
        "offline": bool(app.synapse.offline),
        "errors": errors,
    }


DUE_KEYS = ("due", "at", "until", "starts", "when", "date")


def _dues(args: dict, tz) -> list[str]:
    """The local dates an item's arguments name (its due date, a reminder's moment, a topic's start)."""
    found = []
    for key in DUE_KEYS:
        value = args.get(key) if isinstance(args, dict) else None
        if not isinstance(value, str) or len(value) < 10:
            continue
        try:
            moment = date_or_datetime(value)
        except ValueError:
            continue
        if isinstance(moment, datetime):
            moment = (moment.astimezone(tz) if moment.tzinfo else moment).date()
        found.append(moment.isoformat())
    return found


def llm_settings_of(config) -> dict:
    """The [llm] settings in effect for the person running `wilson eval` (file and environment)."""
    return {k: v for k, v in config.section("llm").items() if v not in (None, "")}
