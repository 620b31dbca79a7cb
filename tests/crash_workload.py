"""The crash harness: `wilson run` killed with SIGKILL again and again while a user works with it.

The child is the real long-running process (`bin/wilson run`) with its home in a temporary
directory, talking to a scripted model server and a fake Bot API, both in this process.
The user writes messages, edits the calendar file, asks for a look (/today) and presses
the buttons under proposals, whether Wilson is up or not (Telegram keeps the updates). The
harness kills the child at named hand-off moments (`WILSON_FAULT_POINTS`: every
`faults.point("...")` found in the source is a candidate) and at random moments, and
starts it again. At the end it lets the child finish its work, stops it cleanly and
checks what the user saw (the fake Bot API's record) and what the database holds.

Every choice (what the user does next, which point is armed and at which hit, how long
a random kill waits) comes from one seeded `random.Random` (WILSON_CHAOS_SEED). A seed
replays the same sequence of choices; what they meet depends on how fast the machine
runs the child (which proposals are on screen when a press is chosen, what the child
is doing when a random kill comes), so a failure is reproduced by the seed and the
printed kill points, not instant for instant.
"""

from __future__ import annotations

import copy
import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

from channels.calendar import add_event, move_event
from tests.brain import call, context_of, organ_reply
from tests.fake_telegram import DEFAULT_TOKEN, FakeTelegram
from wilson import clock as clockmod
from wilson.scripted import ScriptedServer

ROOT = Path(__file__).resolve().parent.parent
OWNER = 1001
TAG = re.compile(r"\[([a-z]\d+)\]")
POINT = re.compile(r"""faults\.point\(\s*["']([^"'{}]+)["']""")
SOURCE_DIRS = ("wilson", "actors", "channels", "storage")
GATE_ANSWERS = ("Done:", "Rejected, nothing changed", "Already done", "Nothing left to reject", "Could not do")


def fault_points(root: Path = ROOT) -> list[str]:
    """Every named kill point in the production code, as `faults.point("name")` spells it."""
    found = set()
    for folder in SOURCE_DIRS:
        for path in sorted((root / folder).rglob("*.py")):
            found.update(POINT.findall(path.read_text(encoding="utf-8")))
    return sorted(found)


# The scripted model ------------------------------------------------------------------------
def model_reply(body: dict) -> dict:
    """Deterministic answers keyed on the tags the user's words carry ([m3], [x2]) and event titles."""
    other = organ_reply(body)
    if other is not None:
        return other
    stimulus = context_of(body).get("stimulus") or {}
    text, kind = stimulus.get("text") or "", stimulus.get("kind")
    found = TAG.search(text)
    tag = found.group(0) if found else ""
    if body["messages"][-1]["role"] == "tool":  # the tool results are back: the user gets words
        if stimulus.get("origin") != "user":
            return {"text": ""}
        return {"text": f"Changed as asked {tag}" if kind == "modify" else f"I proposed a task for {tag}"}
    if kind == "message" and text.startswith("task"):
        return {"tool_calls": [call("create_task", title=f"Task {tag}")]}
    if kind == "message":
        return {"text": f"Answer to {tag}"}
    if kind == "modify":
        return {"tool_calls": [call("create_task", title=f"Task {tag} changed")]}
    if kind == "event":
        event = (stimulus.get("payload") or {}).get("buffers", [{}])[0]
        verb = "Prepare" if event.get("change") == "new" else "Re-plan"
        return {"tool_calls": [call("create_task", title=f"{verb} {event.get('title')}")]}
    return {"text": ""}


class RecordingTelegram(FakeTelegram):
    """The fake Bot API, also keeping each sent message as it looked when it was sent
    (`messages` follows later edits, which would hide what the user saw first)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.shown: list[dict] = []
        self.life = 0  # which start of the child is sending (the harness sets it)

    def api_sendMessage(self, params):
        message = super().api_sendMessage(params)
        with self._lock:
            self.shown.append(dict(copy.deepcopy(message), _life=self.life))
        return message

    def shown_copy(self) -> list[dict]:
        with self._lock:
            return list(self.shown)

    def polls(self) -> int:
        with self._lock:
            return sum(1 for c in self.calls if c["method"] == "getUpdates")


# What the user did -------------------------------------------------------------------------
@dataclass
class Said:
    tag: str
    text: str
    update_id: int
    message_id: int


@dataclass
class Press:
    approval_id: int
    action: str
    tag: str = ""  # a modify's change text carries its own tag


@dataclass
class Figures:
    seed: int
    kills: int = 0
    kills_at_points: dict = field(default_factory=dict)
    kills_at_random: int = 0
    kills_during_start: int = 0
    points_not_reached: int = 0
    points_available: list = field(default_factory=list)
    exits_on_their_own: list = field(default_factory=list)
    messages: int = 0
    commands: int = 0
    presses: int = 0
    modifies: int = 0
    calendar_edits: int = 0
    proposals: int = 0
    sent: int = 0
    settled: bool = False
    seconds: float = 0.0
    losses: list = field(default_factory=list)
    duplicates: list = field(default_factory=list)
    resent_in_window: list = field(default_factory=list)
    errors_logged: int = 0
    error_kinds: list = field(default_factory=list)  # distinct ERROR lines of the children, for a look
    integrity: str = ""

    def text(self) -> str:
        points = ", ".join(f"{k}×{v}" for k, v in sorted(self.kills_at_points.items())) or "none"
        lines = [
            f"crash harness, seed {self.seed}: {self.kills} kills in {self.seconds:.0f} s "
            f"({sum(self.kills_at_points.values())} at named points, {self.kills_at_random} at random moments, "
            f"{self.kills_during_start} during start-up; {self.points_not_reached} armed points not reached)",
            f"  kill points used: {points}",
            f"  workload: {self.messages} messages, {self.commands} commands, {self.calendar_edits} calendar edits, "
            f"{self.presses} button presses ({self.modifies} modify), {self.proposals} proposals, "
            f"{self.sent} messages sent by Wilson",
            f"  losses: {len(self.losses)}, duplicates: {len(self.duplicates)}, integrity_check: {self.integrity}, "
            f"settled before the deadline: {'yes' if self.settled else 'NO'}",
            f"  re-sent after a kill inside the send window (sendMessage has no idempotency key): "
            f"{len(self.resent_in_window)}",
        ]
        lines += [f"  LOST: {what}" for what in self.losses]
        lines += [f"  DUPLICATE: {what}" for what in self.duplicates]
        lines += [f"  EXITED BY ITSELF: {what}" for what in self.exits_on_their_own]
        lines += [f"  re-sent in the window: {what}" for what in self.resent_in_window]
        if self.errors_logged:
            lines.append(f"  errors logged by the child (not judged here): {self.errors_logged}, "
                         f"{len(self.error_kinds)} kind(s)")
            lines += [f"    {kind}" for kind in self.error_kinds[:8]]
        return "\n".join(lines)


# The harness -------------------------------------------------------------------------------
class CrashHarness:
    start_timeout = 30.0  # for the child to poll Telegram after it was started
    point_timeout = 3.0  # for an armed kill point to be reached before the harness kills anyway
    settle_timeout = 30.0  # for the last child to show progress on what it was given, or be done

    def __init__(self, home: Path, fake: RecordingTelegram, model: ScriptedServer, *, seed: int, kills: int):
        self.home = home
        self.fake = fake
        self.model = model
        self.rng = random.Random(seed)
        self.target_kills = kills
        self.figures = Figures(seed=seed, points_available=fault_points())
        self.proc: subprocess.Popen | None = None
        self.starts = 0
        self.said: list[Said] = []
        self.commands: list[Said] = []
        self.presses: list[Press] = []
        self.events: dict[str, dict] = {}  # title -> {"moved": bool}
        self.pressed: set[int] = set()
        self.serial = 0
        self.heard = False
        self.killed: set[int] = set()  # the starts that ended by SIGKILL
        self.calendar = home / "calendar.ics"

    # The child -----------------------------------------------------------------------------
    def env(self, faults: str | None) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith("WILSON_")}
        env.update({
            "WILSON_HOME": str(self.home),
            "WILSON_TELEGRAM_TOKEN": self.fake.token,
            "WILSON_TELEGRAM_BASE_URL": self.fake.base_url,
            "WILSON_TELEGRAM_ALLOWED_USERS": str(OWNER),
            "WILSON_TELEGRAM_POLL_TIMEOUT": "1",
            "WILSON_TELEGRAM_LIVENESS_SECONDS": "10",
            "WILSON_LLM_BASE_URL": self.model.base_url,
            "WILSON_LLM_MODEL": "scripted",
            "WILSON_LLM_TIMEOUT": "10",
            "WILSON_LLM_RETRIES": "2",
            # hundreds of proposals make every context long: a day's budget that runs out would park
            # background work until tomorrow (as it should), which is not what this run is about
            "WILSON_LLM_DAILY_BUDGET": "1000000000",
            "WILSON_LLM_USER_RESERVE": "1000000000",
            "WILSON_CALENDAR_PATH": str(self.calendar),
            "WILSON_CORE_TIMEZONE": "Europe/Berlin",
            "WILSON_CORE_QUIET_HOURS": "off",
            "WILSON_TICK_INTERVAL_SECONDS": "0.2",
            "WILSON_SUPERVISOR_WATCHDOG_SECONDS": "1",
            "WILSON_SUPERVISOR_LEASE_SECONDS": "10",
        })
        if faults:
            env["WILSON_FAULT_POINTS"] = faults
        return env

    def start(self, faults: str | None = None) -> int:
        """Start the child; returns the getUpdates count before it, to tell when it listens."""
        self.starts += 1
        self.fake.life = self.starts
        polls = self.fake.polls()
        log = open(self.home / f"child-{self.starts:03d}.log", "wb")
        self.proc = subprocess.Popen([sys.executable, str(ROOT / "bin" / "wilson"), "--log-level", "WARNING", "run"],
                                     env=self.env(faults), cwd=str(ROOT), stdout=log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        log.close()
        return polls

    def listening(self, polls_before: int) -> bool:
        """Wait until the child polls Telegram; False when it died first (or never got there)."""
        deadline = clockmod.monotonic() + self.start_timeout
        while clockmod.monotonic() < deadline:
            if self.fake.polls() > polls_before:
                return True
            if self.proc.poll() is not None:
                return False
            clockmod.pause(0.02)
        return False

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def end_life(self, mode: str, point: str | None) -> None:
        """Kill the child if it still runs, and count how this life ended."""
        f = self.figures
        if self.alive():
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)
            f.kills += 1
            self.killed.add(self.starts)
            if mode == "start" and not self.heard:
                f.kills_during_start += 1
            else:
                f.kills_at_random += 1
                f.points_not_reached += mode == "point"
        elif self.proc.returncode == -signal.SIGKILL and mode == "point":
            f.kills += 1
            self.killed.add(self.starts)
            f.kills_at_points[point] = f.kills_at_points.get(point, 0) + 1
        else:  # not by our hand: a crash, or a clean exit nobody asked for
            f.exits_on_their_own.append(f"start {self.starts} exited with {self.proc.returncode} ({mode} life; "
                                        f"log: child-{self.starts:03d}.log)")

    # The user ------------------------------------------------------------------------------
    def next_tag(self, letter: str) -> str:
        self.serial += 1
        return f"[{letter}{self.serial}]"

    def say(self, text: str, record: list) -> Said:
        update = self.fake.send_text(OWNER, text)
        message = update["message"]
        said = Said(tag=(TAG.search(text).group(0) if TAG.search(text) else text), text=text,
                    update_id=update["update_id"], message_id=message["message_id"])
        record.append(said)
        return said

    def message(self) -> None:
        tag = self.next_tag("m")
        text = f"task {tag} for later" if self.rng.random() < 0.5 else f"chat {tag} how is it going"
        self.say(text, self.said)
        self.figures.messages += 1

    def look(self) -> None:
        self.say(f"/today {self.next_tag('c')}", self.commands)
        self.figures.commands += 1

    def calendar_edit(self) -> None:
        movable = [t for t, e in self.events.items() if not e["moved"] and self.proposal_about(f"Prepare {t}")]
        if movable and self.rng.random() < 0.3:
            title = self.rng.choice(sorted(movable))
            start = date.today() + timedelta(days=self.rng.randint(100, 300))
            move_event(self.calendar, title, start, start + timedelta(days=1))
            self.events[title]["moved"] = True
        else:
            title = f"Event {self.next_tag('e')}"
            start = date.today() + timedelta(days=self.rng.randint(20, 90))
            add_event(self.calendar, title, start, start + timedelta(days=2), "Berlin")
            self.events[title] = {"moved": False}
        self.figures.calendar_edits += 1
        if self.rng.random() < 0.7:
            self.look()

    def proposal_about(self, words: str) -> dict | None:
        return next((m for m in self.fake.shown_copy()
                     if m["text"].startswith("Proposal ") and words in m["text"]), None)

    def open_proposals(self) -> list[dict]:
        return [m for m in self.fake.shown_copy()
                if m.get("reply_markup") and int(m["text"].split()[1].rstrip(":")) not in self.pressed]

    def press(self) -> bool:
        choices = self.open_proposals()
        if not choices:
            return False
        message = self.rng.choice(choices)
        buttons = {b["callback_data"].split(":")[2]: b["callback_data"]
                   for b in message["reply_markup"]["inline_keyboard"][0]}
        approval_id = int(message["text"].split()[1].rstrip(":"))
        self.pressed.add(approval_id)
        roll = self.rng.random()
        if roll < 0.25:  # Modify, then the change in the next message, as a user does
            tag = self.next_tag("x")
            self.fake.press(OWNER, message, buttons["modify"])
            self.fake.send_text(OWNER, f"make it a different one {tag}")
            self.presses.append(Press(approval_id, "modify", tag))
            self.figures.modifies += 1
        else:
            action = "approve" if roll < 0.8 else "reject"
            times = 2 if self.rng.random() < 0.1 else 1  # a double tap
            for _ in range(times):
                self.fake.press(OWNER, message, buttons[action])
                self.presses.append(Press(approval_id, action))
        self.figures.presses += 1
        return True

    def act(self) -> None:
        roll = self.rng.random()
        if roll < 0.45 or (roll < 0.7 and not self.press()):
            self.message()
        elif roll >= 0.7:
            self.calendar_edit()

    def acts(self, count: int) -> None:
        for _ in range(count):
            self.act()

    # One life of the child -----------------------------------------------------------------
    def life(self) -> None:
        """Start the child, let the user work, and end it: at an armed point, at a random moment, or while
        it starts. Only the moment of a random kill depends on timing; what happens comes from the seed."""
        points = self.figures.points_available
        roll = self.rng.random()
        mode = "start" if roll < 0.1 else "point" if points and roll < 0.55 else "random"
        point = self.rng.choice(points) if mode == "point" else None
        polls = self.start(f"{point}@{self.rng.randint(1, 3)}" if point else None)
        self.heard = False
        if mode == "start":
            self._wait_exit(self.rng.uniform(0.0, 1.2))  # the random moment: somewhere in start-up
            self.heard = self.fake.polls() > polls
        else:
            self.heard = self.listening(polls)
            if self.heard:
                self.acts(self.rng.randint(2, 8) if mode == "point" else self.rng.randint(1, 6))
            # an armed point gets a while to be reached; a random kill comes while the child works on
            # what it was just given, up to a second later
            self._wait_exit(self.point_timeout if mode == "point" else self.rng.uniform(0.0, 1.0))
        self.end_life(mode, point)

    def _wait_exit(self, seconds: float) -> None:
        try:
            self.proc.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            pass

    def run(self) -> Figures:
        began = clockmod.monotonic()
        while self.figures.kills < self.target_kills:
            self.life()
            if self.rng.random() < 0.3:  # the user carries on while Wilson is down
                self.acts(self.rng.randint(1, 3))
        self.finish()
        self.figures.seconds = clockmod.monotonic() - began
        return self.figures

    # The end -------------------------------------------------------------------------------
    def finish(self) -> None:
        """A last life without faults: one more look at the calendar, everything finished, a clean stop."""
        polls = self.start()
        self.listening(polls)
        self.look()
        # A long run leaves a backlog: wait as long as the child gets on with it, and give up only
        # once it has stopped showing progress (messages sent, work rows done) for settle_timeout.
        deadline, progress = clockmod.monotonic() + self.settle_timeout, None
        while clockmod.monotonic() < deadline and self.alive():
            if self.settled():
                self.figures.settled = True
                break
            now = self.progress()
            if now != progress:
                deadline, progress = clockmod.monotonic() + self.settle_timeout, now
            clockmod.pause(0.1)
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.figures.exits_on_their_own.append("the final run did not stop within 20 s of SIGTERM")
                self.proc.kill()
                self.proc.wait(timeout=30)
        else:
            self.figures.exits_on_their_own.append(f"the final run exited with {self.proc.returncode} before it "
                                                   f"was stopped (log: child-{self.starts:03d}.log)")
        self.check()
        self.read_logs()

    def read_logs(self) -> None:
        kinds: dict[str, int] = {}
        for log in sorted(self.home.glob("child-*.log")):
            for line in log.read_text(errors="replace").splitlines():
                if " ERROR " in line or line.startswith("Traceback"):
                    self.figures.errors_logged += 1
                    kind = re.sub(r"\d+", "N", line.split(" ERROR ", 1)[-1])[:160]
                    kinds[kind] = kinds.get(kind, 0) + 1
        ranked = sorted(kinds.items(), key=lambda kind: -kind[1])
        self.figures.error_kinds = [f"{count}× {kind}" for kind, count in ranked]

    def query(self, sql: str, *params) -> list[tuple]:
        conn = sqlite3.connect(str(self.home / "wilson.sqlite3"), timeout=10)
        try:
            return conn.execute(sql, params).fetchall()
        finally:
            conn.close()

    def progress(self) -> tuple:
        try:
            done = self.query("SELECT (SELECT count(*) FROM inbox WHERE status NOT IN ('pending', 'claimed')),"
                              " (SELECT count(*) FROM receptor_buffer WHERE processed_at IS NOT NULL)")[0]
        except sqlite3.Error:
            done = None
        return len(self.fake.shown_copy()), self.fake.pending_updates(), done

    def settled(self) -> bool:
        """Nothing left to do: Telegram has no update waiting, the database no work, and what the user
        did has had its visible effect."""
        if self.fake.pending_updates():
            return False
        try:
            busy = self.query(
                "SELECT (SELECT count(*) FROM inbox WHERE status IN ('pending', 'claimed'))"
                " + (SELECT count(*) FROM outbox WHERE status = 'pending')"
                " + (SELECT count(*) FROM receptor_buffer WHERE processed_at IS NULL)"
                " + (SELECT count(*) FROM decision WHERE status = 'pending')")[0][0]
        except sqlite3.Error:
            return False
        if busy:
            return False
        shown = self.fake.shown_copy()
        replied = {m.get("reply_to_message", {}).get("message_id") for m in shown}
        decided = {p.approval_id for p in self.presses if p.action != "modify"}
        still_open = {row[0] for row in self.query("SELECT id FROM approval WHERE status IN ('pending', 'partial')")}
        return (all(s.message_id in replied for s in self.said + self.commands)
                and all(self.proposal_about(f"Prepare {t}") for t in self.events)
                and all(self.proposal_about(p.tag) for p in self.presses if p.action == "modify")
                and not decided & still_open)

    # The invariants ------------------------------------------------------------------------
    @staticmethod
    def looks(m: dict) -> tuple:
        """What the user sees of a message: where, what it says, what it answers."""
        return (m["chat"]["id"], m.get("message_thread_id"), m["text"],
                (m.get("reply_to_message") or {}).get("message_id"))

    def window_resends(self, shown: list[dict]) -> tuple[list[dict], list[dict]]:
        """Split off the re-sends the design allows: sendMessage has no idempotency key, so a kill
        after Telegram accepted a message and before its row was marked delivered sends it again
        after the restart (channels/telegram.py, "The duplicate window"). Such a re-send repeats
        the last message a killed life sent, in a later life; any other repeat stays in the list."""
        last_of_life = {m["_life"]: m["message_id"] for m in shown}
        latest: dict[tuple, dict] = {}
        kept, resent = [], []
        for m in shown:
            earlier = latest.get(self.looks(m))
            latest[self.looks(m)] = m
            if (earlier is not None and earlier["_life"] < m["_life"] and earlier["_life"] in self.killed
                    and last_of_life[earlier["_life"]] == earlier["message_id"]):
                resent.append(m)  # and it may be the last send of a killed life in turn
            else:
                kept.append(m)
        return kept, resent

    def check(self) -> None:
        f = self.figures
        everything = self.fake.shown_copy()
        f.sent = len(everything)
        shown, resent = self.window_resends(everything)
        f.resent_in_window = [f"{m['text'][:80]!r} (start {m['_life']})" for m in resent]
        f.integrity = ", ".join(r[0] for r in self.query("PRAGMA integrity_check"))
        approvals = {row[0]: {"status": row[1], "supersedes": row[2]}
                     for row in self.query("SELECT id, status, supersedes FROM approval")}
        items = {}
        for approval_id, description, status in self.query(
                "SELECT approval_id, description, status FROM approval_item"):
            items.setdefault(approval_id, []).append((description, status))
        f.proposals = len(approvals)

        # No user-visible message delivered twice.
        seen: dict[tuple, int] = {}
        for m in shown:
            seen[self.looks(m)] = seen.get(self.looks(m), 0) + 1
        for (chat, thread, text, reply_to), count in seen.items():
            allowed = 1
            if reply_to is None and not TAG.search(text) and not text.startswith("Proposal "):
                # a text that may rightly come more than once (an apology, a refusal): one per outbox row
                allowed = max(1, self.query("SELECT count(*) FROM outbox WHERE channel = 'telegram' AND text = ?",
                                            text)[0][0])
            if count > allowed:
                f.duplicates.append(f"delivered {count} times: {text[:120]!r}")

        # Every message of the user's (and every command) answered exactly once: one answer, however
        # often it was delivered (a repeat of the same answer is counted above).
        by_reply: dict[int, list] = {}
        for m in shown:
            if m.get("reply_to_message"):
                by_reply.setdefault(m["reply_to_message"]["message_id"], []).append(m)
        results = dict(self.query("SELECT idempotency_key, result FROM outbox WHERE channel = 'telegram'"))
        for said in self.said + self.commands:
            answers = list(by_reply.get(said.message_id, []))
            inbox = self.query("SELECT id FROM inbox WHERE dedup_key = ?", f"telegram:{said.update_id}")
            if inbox:  # an apology for a message Wilson gave up on does not quote it; its row names it
                ids = (json.loads(results.get(f"reply:{inbox[0][0]}") or "null") or {}).get("message_ids", [])
                answers += [m for m in shown if m["message_id"] in ids and m not in answers]
            texts = sorted({m["text"] for m in answers})
            if not texts:
                f.losses.append(f"message {said.text!r} (update {said.update_id}) never answered")
            elif len(texts) > 1:
                f.duplicates.append(f"message {said.text!r} answered {len(texts)} ways: {texts}")

        # No proposal shown twice, none left unshown, none made twice for one request.
        for approval_id, approval in approvals.items():
            texts = {m["text"] for m in shown if m["text"].startswith(f"Proposal {approval_id}:")}
            if not texts and approval["status"] != "expired":
                f.losses.append(f"proposal {approval_id} ({approval['status']}) never shown")
            elif len(texts) > 1:  # the same text twice is a repeated delivery, counted above
                f.duplicates.append(f"proposal {approval_id} shown {len(texts)} ways: {sorted(texts)}")
        about: dict[str, list] = {}
        for approval_id, rows in items.items():
            for description, _ in rows:
                about.setdefault(description, []).append(approval_id)
        for description, ids in about.items():
            if len(ids) > 1:
                f.duplicates.append(f"{description!r} proposed {len(ids)} times (proposals {ids})")

        # No approved proposal executed twice.
        for title, count in self.query("SELECT title, count(*) FROM task GROUP BY title HAVING count(*) > 1"):
            f.duplicates.append(f"task {title!r} created {count} times")

        # No decision lost, each answered once.
        pressed: dict[int, list] = {}
        for p in self.presses:
            pressed.setdefault(p.approval_id, []).append(p)
        for approval_id, presses in pressed.items():
            approval = approvals.get(approval_id)
            action = presses[0].action
            if approval is None:
                f.losses.append(f"{action} on unknown proposal {approval_id}")
                continue
            if action == "modify":
                tag = presses[0].tag
                replaced = [i for i, a in approvals.items() if a["supersedes"] == approval_id]
                if not replaced:
                    f.losses.append(f"modify {tag} of proposal {approval_id} lost (status {approval['status']})")
                if replaced and not any(m["text"] == f"Changed as asked {tag}" for m in shown):
                    f.losses.append(f"modify {tag} of proposal {approval_id}: no answer")
                continue
            wanted = {"approve": "approved", "reject": "rejected"}[action]
            if approval["status"] != wanted:
                f.losses.append(f"{action} of proposal {approval_id} lost (status {approval['status']})")
            descriptions = [d for d, _ in items.get(approval_id, [])]
            # distinct texts: a press gets one answer, a double tap a second, different one ("Already
            # done"); the same text twice is a repeated delivery, counted above
            answers = sorted({m["text"] for m in shown if m["text"].startswith(GATE_ANSWERS) and (
                re.search(rf"\bproposal {approval_id}\b", m["text"]) or any(d in m["text"] for d in descriptions))})
            if len(answers) < len(presses):
                f.losses.append(f"{action} of proposal {approval_id}: {len(presses)} press(es), "
                                f"{len(answers)} answer(s)")
            elif len(answers) > len(presses):
                f.duplicates.append(f"{action} of proposal {approval_id}: {len(presses)} press(es), "
                                    f"{len(answers)} answers: {[text[:60] for text in answers]}")

        # Calendar edits reach the user as proposals.
        for title, event in self.events.items():
            for verb in ("Prepare",) + (("Re-plan",) if event["moved"] else ()):
                if not self.proposal_about(f"{verb} {title}"):
                    f.losses.append(f"calendar edit of {title!r} never proposed ({verb})")


def run_harness(home: Path, *, seed: int, kills: int) -> Figures:
    home.mkdir(parents=True, exist_ok=True)
    with RecordingTelegram(DEFAULT_TOKEN) as fake, \
            ScriptedServer([{"match": lambda body, headers: True, "reply": model_reply}]) as model:
        harness = CrashHarness(home, fake, model, seed=seed, kills=kills)
        try:
            return harness.run()
        finally:
            if harness.alive():
                harness.proc.kill()
                harness.proc.wait(timeout=30)
