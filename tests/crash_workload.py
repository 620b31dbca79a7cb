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
import threading
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

from tests.brain import call, context_of, organ_reply
from tests.calendar_support import add_event, move_event
from tests.fake_telegram import DEFAULT_TOKEN, FakeTelegram
from tests.poll import wait_for
from wilson.kernel import clock as clockmod
from wilson.model.scripted import ScriptedServer

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


LIFE_TOKEN = re.compile(r"\A/bot(?P<token>.+)-life(?P<life>\d+)/(?P<method>\w+)\Z")
DELAY_NOTE = re.compile(r"\A\(Delayed: I couldn't reach Telegram from [^\n]+\)\n\n")


class RecordingTelegram(FakeTelegram):
    """The fake Bot API, also keeping each sent message as it looked when it was sent
    (`messages` follows later edits, which would hide what the user saw first).

    A request belongs to the life of the child that made it: each start of the child gets a token of
    its own (`token_for`), so a request read by the server only after its sender was killed and the
    next one started still counts in its sender's life, as does a send held by a slow answer.
    The "(Delayed: …)" line an outage puts before a message is kept apart (`_delayed`), so the
    message still reads as the same answer, proposal or command reply."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.shown: list[dict] = []
        self.handed: dict[int, int] = {}  # update_id -> the life that getUpdates handed it to last
        self.polled: dict[int, int] = {}  # life -> its getUpdates calls, answered or refused
        self.sends_in_flight = 0
        self._arrival = threading.local()

    def token_for(self, life: int) -> str:
        """The token start number `life` of the child is given; the fake takes it for its own."""
        return f"{self.token}-life{life}"

    def handle(self, path, params):
        found = LIFE_TOKEN.match(path)
        life = 0  # a request made with the plain token (a test calling the fake by hand)
        if found and found["token"] == self.token:
            life, path = int(found["life"]), f"/bot{self.token}/{found['method']}"
        sending = path.endswith("/sendMessage")
        with self._lock:
            self._arrival.life = life
            self.sends_in_flight += sending
            if path.endswith("/getUpdates"):
                self.polled[life] = self.polled.get(life, 0) + 1
        try:
            return super().handle(path, params)
        finally:
            with self._lock:
                self.sends_in_flight -= sending
                self._lock.notify_all()

    def api_sendMessage(self, params):
        message = super().api_sendMessage(params)
        shown = dict(copy.deepcopy(message), _life=self._arrival.life)
        note = DELAY_NOTE.match(shown["text"])
        if note:
            shown["text"], shown["_delayed"] = shown["text"][note.end() :], note.group(0).strip()
        with self._lock:
            self.shown.append(shown)
        return message

    def api_getUpdates(self, params):
        batch = super().api_getUpdates(params)
        with self._lock:
            for update in batch:
                if isinstance(update, dict) and isinstance(update.get("update_id"), int):
                    self.handed[update["update_id"]] = self._arrival.life
        return batch

    def sends_landed(self, timeout: float) -> bool:
        """Wait until no sendMessage is being answered: a killed child's slow send lands before the next
        child's first, so the last message of a life is the last it sent."""
        with self._lock:
            return self._lock.wait_for(lambda: self.sends_in_flight == 0, timeout)

    def heal(self) -> None:
        """Every outage over and every queued fault dropped."""
        with self._lock:
            self._down.clear()
            self._faults.clear()

    def refused_calls(self) -> int:
        with self._lock:
            return sum(1 for c in self.calls if (c.get("fault") or {}).get("status"))

    def shown_copy(self) -> list[dict]:
        with self._lock:
            return list(self.shown)

    def polls(self, life: int) -> int:
        """The getUpdates calls start `life` made: a killed child's poll read late is not the next one listening."""
        with self._lock:
            return self.polled.get(life, 0)


# Poison: odd updates among the user's ---------------------------------------------------------
REFUSED_PRESS = "That button does not work any more."
UNREADABLE_PRESS = "Sorry, that did not work, and nothing changed."
# kind -> what must become of it: "skipped" (unreadable: traced and skipped) or "refused" (a readable press
# with forged data: refused, nothing changed), and the answer a press must get
POISON = {
    "no message_id": ("skipped", None),
    "no date": ("skipped", None),
    "a reply without its chat": ("skipped", None),
    "a reply that is text": ("skipped", None),
    "a list where the chat belongs": ("skipped", None),
    "a list where the message belongs": ("skipped", None),
    "an odd poll": ("skipped", None),
    "a date beyond any calendar": ("skipped", None),
    "a press from nobody": ("skipped", UNREADABLE_PRESS),
    "a press whose data is a list": ("skipped", UNREADABLE_PRESS),
    "a press on an id beyond any database": ("refused", REFUSED_PRESS),
    "a press with huge data": ("refused", REFUSED_PRESS),
    "a press with an unknown action": ("refused", REFUSED_PRESS),
    "a press with digits that are not ASCII": ("refused", REFUSED_PRESS),
}


def poison_update(kind: str, serial: int, now: int, under: dict | None = None) -> dict:
    """The body of an odd update of `kind` from the owner (`under`: the message a press is under)."""
    good = {
        "message_id": 900_000 + serial,
        "date": now,
        "chat": {"id": OWNER, "type": "private"},
        "from": {"id": OWNER, "is_bot": False, "first_name": "Ann"},
        "text": f"odd {serial}",
    }
    press = {"id": f"odd-{serial}", "from": dict(good["from"]), "chat_instance": "ci-1", "message": under or good}
    if kind == "a press from nobody":
        return {"callback_query": {k: v for k, v in press.items() if k != "from"} | {"data": "ap:1:approve:x"}}
    forged = {
        "a press whose data is a list": ["ap", 1, "approve"],
        "a press on an id beyond any database": "ap:99999999999999999999999:approve:x",
        "a press with huge data": "ap:1:approve:" + "x" * 5000,
        "a press with an unknown action": "ap:1:launch:x",
        "a press with digits that are not ASCII": "ap:²:approve:x",
    }
    if kind in forged:
        return {"callback_query": press | {"data": forged[kind]}}
    if kind == "a list where the message belongs":
        return {"message": [good["message_id"], good["text"]]}
    changes = {
        "no message_id": {"message_id": ...},
        "no date": {"date": ...},
        "a reply without its chat": {"reply_to_message": {"message_id": 3, "date": now}},
        "a reply that is text": {"reply_to_message": "oops"},
        "a list where the chat belongs": {"chat": [OWNER, "private"]},
        "an odd poll": {"poll": {"id": "p1", "question": "lunch?", "options": "pizza"}},
        "a date beyond any calendar": {"date": 10**30},
    }[kind]
    message = {k: v for k, v in (good | changes).items() if v is not ...}
    return {"message": message}


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
class Poison:
    kind: str
    update_id: int
    expect: str  # "skipped" or "refused"
    answer: str | None  # what a press must be answered
    query_id: str | None


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
    undos: int = 0
    calendar_edits: int = 0
    outages: int = 0  # sendMessage refused until it came back
    outages_with_polling_down: int = 0  # getUpdates refused too
    kills_during_outage: int = 0
    outage_seconds: float = 0.0
    longest_outage: float = 0.0
    glitches: int = 0  # short faults: a few errors, a flood wait, a slow answer
    calls_refused: int = 0  # Bot API calls answered with an injected error
    delay_lines: int = 0  # messages that came with the "(Delayed: …)" line
    poison: int = 0  # odd updates queued among the user's
    poison_kinds: dict = field(default_factory=dict)
    poison_skipped: int = 0  # unreadable, traced and skipped
    poison_refused: int = 0  # readable presses with forged data, refused
    poison_unanswered_in_killed_life: int = 0  # presses whose life died before their answer went out
    poison_problems: list = field(default_factory=list)
    disorder: list = field(default_factory=list)  # rows shown before an older row of the same chat
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
            f"{self.presses} button presses ({self.modifies} modify, {self.undos} undo), "
            f"{self.proposals} proposals, "
            f"{self.sent} messages sent by Wilson",
            f"  Telegram faults: {self.outages} outages of sendMessage ({self.outages_with_polling_down} with getUpdates "
            f"down too; {self.outage_seconds:.0f} s down in all, longest {self.longest_outage:.0f} s; "
            f"{self.kills_during_outage} kills while down), "
            f"{self.glitches} short faults, {self.calls_refused} API calls refused; "
            f"{self.delay_lines} messages carried the delay line",
            f"  poison: {self.poison} odd updates among the user's ({len(self.poison_kinds)} kinds), "
            f"{self.poison_skipped} skipped with a trace, {self.poison_refused} forged presses refused "
            f"({self.poison_unanswered_in_killed_life} presses left unanswered by a killed life); "
            f"problems: {len(self.poison_problems)}, out of order: {len(self.disorder)}",
            f"  losses: {len(self.losses)}, duplicates: {len(self.duplicates)}, integrity_check: {self.integrity}, "
            f"settled before the deadline: {'yes' if self.settled else 'NO'}",
            f"  re-sent after a kill inside the send window (sendMessage has no idempotency key): "
            f"{len(self.resent_in_window)}",
        ]
        lines += [f"  LOST: {what}" for what in self.losses]
        lines += [f"  DUPLICATE: {what}" for what in self.duplicates]
        lines += [f"  OUT OF ORDER: {what}" for what in self.disorder]
        lines += [f"  POISON: {what}" for what in self.poison_problems]
        lines += [f"  EXITED BY ITSELF: {what}" for what in self.exits_on_their_own]
        lines += [f"  re-sent in the window: {what}" for what in self.resent_in_window]
        if self.errors_logged:
            lines.append(
                f"  errors logged by the child (not judged here): {self.errors_logged}, {len(self.error_kinds)} kind(s)"
            )
            lines += [f"    {kind}" for kind in self.error_kinds[:8]]
        return "\n".join(lines)


# The harness -------------------------------------------------------------------------------
class CrashHarness:
    start_timeout = 30.0  # for the child to poll Telegram after it was started
    point_timeout = 3.0  # for an armed kill point to be reached while the child still has work to do
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
        self.undone: set[int] = set()  # proposals whose receipt's Undo was pressed
        self.serial = 0
        self.heard = False
        self.killed: set[int] = set()  # the starts that ended by SIGKILL
        self.calendar = home / "calendar.ics"
        self.poisoned: list[Poison] = []
        self.outage: dict | None = None  # {"methods", "began", "least"} while Telegram refuses
        # a long run has one outage long enough for the "(Delayed: …)" line (a minute or more)
        self.long_outage = 65.0 if kills >= 100 else 0.0

    # The child -----------------------------------------------------------------------------
    def env(self, faults: str | None, life: int = 0) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith("WILSON_")}
        env.update(
            {
                "WILSON_HOME": str(self.home),
                "WILSON_WEB_ENABLED": "false",  # no dashboard on a fixed port in a test
                "WILSON_TELEGRAM_TOKEN": self.fake.token_for(life),
                "WILSON_TELEGRAM_BASE_URL": self.fake.base_url,
                "WILSON_TELEGRAM_ALLOWED_USERS": str(OWNER),
                "WILSON_TELEGRAM_POLL_TIMEOUT": "1",
                "WILSON_TELEGRAM_LIVENESS_SECONDS": "10",
                # an outage here lasts seconds: a retry that waits up to 30 s would only make the run longer
                "WILSON_TELEGRAM_RETRY_MAX_SECONDS": "2",
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
            }
        )
        if faults:
            env["WILSON_FAULT_POINTS"] = faults
        return env

    def start(self, faults: str | None = None) -> int:
        """Start the child; returns the getUpdates count before it, to tell when it listens."""
        self.starts += 1
        polls = self.fake.polls(self.starts)
        log = open(self.home / f"child-{self.starts:03d}.log", "wb")
        self.proc = subprocess.Popen(
            [sys.executable, str(ROOT / "bin" / "wilson"), "--log-level", "WARNING", "run"],
            env=self.env(faults, self.starts),
            cwd=str(ROOT),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        log.close()
        return polls

    def listening(self, polls_before: int) -> bool:
        """Wait until the child polls Telegram; False when it died first (or never got there)."""
        deadline = clockmod.monotonic() + self.start_timeout
        while clockmod.monotonic() < deadline:
            if self.fake.polls(self.starts) > polls_before:
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
            f.kills_during_outage += self.outage is not None
            self.killed.add(self.starts)
            if mode == "start" and not self.heard:
                f.kills_during_start += 1
            else:
                f.kills_at_random += 1
                f.points_not_reached += mode == "point"
        elif self.proc.returncode == -signal.SIGKILL and mode == "point":
            f.kills += 1
            f.kills_during_outage += self.outage is not None
            self.killed.add(self.starts)
            f.kills_at_points[point] = f.kills_at_points.get(point, 0) + 1
        else:  # not by our hand: a crash, or a clean exit nobody asked for
            f.exits_on_their_own.append(
                f"start {self.starts} exited with {self.proc.returncode} ({mode} life; "
                f"log: child-{self.starts:03d}.log)"
            )
        # a send the fake was holding (a slow answer) is Telegram's to finish: it lands before the next life
        if not self.fake.sends_landed(10):
            f.exits_on_their_own.append(f"a send of start {self.starts} was still held 10 s after it ended")

    # The user ------------------------------------------------------------------------------
    def next_tag(self, letter: str) -> str:
        self.serial += 1
        return f"[{letter}{self.serial}]"

    def say(self, text: str, record: list) -> Said:
        update = self.fake.send_text(OWNER, text)
        message = update["message"]
        said = Said(
            tag=(TAG.search(text).group(0) if TAG.search(text) else text),
            text=text,
            update_id=update["update_id"],
            message_id=message["message_id"],
        )
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
        return next(
            (m for m in self.fake.shown_copy() if m["text"].startswith("Proposal ") and words in m["text"]), None
        )

    def open_proposals(self) -> list[dict]:
        return [
            m
            for m in self.fake.shown_copy()  # a receipt's Undo button is not a proposal's
            if m.get("reply_markup")
            and m["text"].startswith("Proposal ")
            and int(m["text"].split()[1].rstrip(":")) not in self.pressed
        ]

    def receipts(self) -> list[tuple[int, dict, str]]:
        """(proposal, message, its Undo button's data) for each receipt whose Undo was not pressed yet."""
        found = []
        for m in self.fake.shown_copy():
            data = [
                b["callback_data"]
                for row in (m.get("reply_markup") or {}).get("inline_keyboard") or []
                for b in row
                if b["callback_data"].split(":")[2] == "undo"
            ]
            if m["text"].startswith("Done:") and data and int(data[0].split(":")[1]) not in self.undone:
                found.append((int(data[0].split(":")[1]), m, data[0]))
        return found

    def undo(self) -> bool:
        """Undo under a receipt (a double tap now and then): a proposal putting it back is the answer."""
        choices = self.receipts()
        if not choices:
            return False
        approval_id, message, data = self.rng.choice(choices)
        self.undone.add(approval_id)
        for _ in range(2 if self.rng.random() < 0.1 else 1):
            self.fake.press(OWNER, message, data)
        self.presses.append(Press(approval_id, "undo"))
        self.figures.presses += 1
        self.figures.undos += 1
        return True

    def press(self) -> bool:
        if self.rng.random() < 0.15 and self.undo():
            return True
        choices = self.open_proposals()
        if not choices:
            return False
        message = self.rng.choice(choices)
        buttons = {
            b["callback_data"].split(":")[2]: b["callback_data"] for b in message["reply_markup"]["inline_keyboard"][0]
        }
        approval_id = int(message["text"].split()[1].rstrip(":"))
        self.pressed.add(approval_id)
        roll = self.rng.random()
        if roll < 0.25 and "modify" in buttons:  # Modify, then the change in the next message (an undo has none)
            tag = self.next_tag("x")
            self.fake.press(OWNER, message, buttons["modify"])
            if self.rng.random() < 0.3:  # odd input between the press and the change must not stand in for it
                self.poison(1)
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

    def poison(self, count: int) -> None:
        """Odd updates from the owner's side, queued among the real ones."""
        for _ in range(count):
            kind = self.rng.choice(sorted(POISON))
            self.serial += 1
            proposals = [
                m for m in self.fake.shown_copy() if m.get("reply_markup") and m["text"].startswith("Proposal ")
            ]
            body = poison_update(
                kind, self.serial, int(clockmod.wall_now().timestamp()), proposals[-1] if proposals else None
            )
            update = self.fake.queue_update(body)
            expect, answer = POISON[kind]
            query = body.get("callback_query")
            self.poisoned.append(
                Poison(kind, update["update_id"], expect, answer, query["id"] if isinstance(query, dict) else None)
            )
            self.figures.poison += 1
            self.figures.poison_kinds[kind] = self.figures.poison_kinds.get(kind, 0) + 1

    def act(self) -> None:
        if self.rng.random() < 0.15:
            self.poison(self.rng.randint(1, 3))
        roll = self.rng.random()
        if roll < 0.45 or (roll < 0.7 and not self.press()):
            self.message()
        elif roll >= 0.7:
            self.calendar_edit()

    def acts(self, count: int) -> None:
        for _ in range(count):
            self.act()

    # Telegram's weather --------------------------------------------------------------------
    def weather(self) -> None:
        """One turn of Telegram's weather: an outage begins or ends, or a short fault comes. The choices
        come from the seed; only an outage that must last a while waits for the clock to end."""
        roll = self.rng.random()
        if self.outage is None:
            if roll < 0.25:
                self.begin_outage()
            elif roll < 0.55:
                self.glitch()
        elif roll < 0.45 and clockmod.monotonic() - self.outage["began"] >= self.outage["least"]:
            self.end_outage()

    def begin_outage(self) -> None:
        status = self.rng.choice((500, 502, 503, 504))
        polling = self.rng.random() < 0.4
        least = 0.0
        if self.long_outage and self.figures.kills >= self.target_kills // 3:
            least, polling, self.long_outage = self.long_outage, False, 0.0  # the user still gets through
        methods = ("sendMessage", "getUpdates") if polling else ("sendMessage",)
        for method in methods:
            self.fake.go_down(method, status)
        self.outage = {"methods": methods, "began": clockmod.monotonic(), "least": least}
        self.figures.outages += 1
        self.figures.outages_with_polling_down += polling

    def end_outage(self) -> None:
        for method in self.outage["methods"]:
            self.fake.come_up(method)
        lasted = clockmod.monotonic() - self.outage["began"]
        self.figures.outage_seconds += lasted
        self.figures.longest_outage = max(self.figures.longest_outage, lasted)
        self.outage = None

    def glitch(self) -> None:
        kind = self.rng.randrange(5)
        if kind == 0:
            self.fake.fail("sendMessage", self.rng.choice((500, 502)), times=self.rng.randint(1, 3))
        elif kind == 1:
            self.fake.fail("sendMessage", 429, retry_after=1)
        elif kind == 2:  # well inside the client's read timeout: the answer comes, late
            self.fake.delay("sendMessage", self.rng.uniform(0.3, 2.0), times=self.rng.randint(1, 2))
        elif kind == 3:
            self.fake.delay("getUpdates", self.rng.uniform(0.5, 2.0))
        else:
            self.fake.fail("getUpdates", 502, times=self.rng.randint(1, 3))
        self.figures.glitches += 1

    # One life of the child -----------------------------------------------------------------
    def life(self) -> None:
        """Start the child, let the user work, and end it: at an armed point, at a random moment, or while
        it starts. Telegram's weather turns once a life, before the start or while the child works.
        Only the moment of a random kill depends on timing; what happens comes from the seed."""
        points = self.figures.points_available
        roll = self.rng.random()
        mode = "start" if roll < 0.1 else "point" if points and roll < 0.55 else "random"
        point = self.rng.choice(points) if mode == "point" else None
        turn_while_up = self.rng.random() < 0.5
        if not turn_while_up:
            self.weather()
        polls = self.start(f"{point}@{self.rng.randint(1, 3)}" if point else None)
        self.heard = False
        if mode == "start":
            self._wait_exit(self.rng.uniform(0.0, 1.2))  # the random moment: somewhere in start-up
            self.heard = self.fake.polls(self.starts) > polls
        else:
            self.heard = self.listening(polls)
            if self.heard:
                count = self.rng.randint(2, 8) if mode == "point" else self.rng.randint(1, 6)
                before = self.rng.randint(0, count)
                self.acts(before)
                if turn_while_up:  # the child meets the weather as it was, then as it turns
                    self._wait_exit(self.rng.uniform(0.2, 0.8))
                    self.weather()
                    turn_while_up = False
                self.acts(count - before)
            # an armed point gets a while to be reached; a random kill comes while the child works on
            # what it was just given, up to a second later
            if mode == "point":
                self._wait_for_point()
            else:
                self._wait_exit(self.rng.uniform(0.0, 1.0))
        if turn_while_up:
            self.weather()
        self.end_life(mode, point)

    def _wait_for_point(self) -> None:
        """Until the child dies at its armed point, or can no longer reach it: it has nothing left to do
        (three looks in a row, over more than a tick) and nobody gives it more before the kill. Most points
        that are not reached belong to channels this run does not start (mail, the dashboard, MCP)."""
        looks: list[bool] = []

        def over() -> bool:
            if self.proc.poll() is not None:
                return True
            looks.append(self.idle())
            return looks[-3:] == [True] * 3

        try:
            wait_for(over, self.point_timeout, "the armed point", every=0.1)
        except AssertionError:
            pass  # busy all along (an outage keeps its sends waiting): killed at a random moment after all

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
        if self.outage is not None:
            self.end_outage()
        self.fake.heal()
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
            self.figures.exits_on_their_own.append(
                f"the final run exited with {self.proc.returncode} before it "
                f"was stopped (log: child-{self.starts:03d}.log)"
            )
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
            done = self.query(
                "SELECT (SELECT count(*) FROM inbox WHERE status NOT IN ('pending', 'claimed')),"
                " (SELECT count(*) FROM receptor_buffer WHERE processed_at IS NOT NULL)"
            )[0]
        except sqlite3.Error:
            done = None
        return len(self.fake.shown_copy()), self.fake.pending_updates(), done

    def idle(self) -> bool:
        """Nothing for the child to do: no update waiting at Telegram, no send under way, no work row."""
        if self.fake.pending_updates() or self.fake.sends_in_flight:
            return False
        try:
            return not self.query(
                "SELECT (SELECT count(*) FROM inbox WHERE status IN ('pending', 'claimed'))"
                " + (SELECT count(*) FROM outbox WHERE status IN ('pending', 'retry'))"
                " + (SELECT count(*) FROM receptor_buffer WHERE processed_at IS NULL)"
                " + (SELECT count(*) FROM decision WHERE status = 'pending')"
                " + (SELECT count(*) FROM approval WHERE status IN ('pending', 'partial') AND presented_at IS NULL)"
            )[0][0]
        except sqlite3.Error:
            return False

    def settled(self) -> bool:
        """Nothing left to do: Telegram has no update waiting, the database no work, and what the user
        did has had its visible effect."""
        if not self.idle():
            return False
        shown = self.fake.shown_copy()
        replied = {m.get("reply_to_message", {}).get("message_id") for m in shown}
        decided = {p.approval_id for p in self.presses if p.action in ("approve", "reject")}
        still_open = {row[0] for row in self.query("SELECT id FROM approval WHERE status IN ('pending', 'partial')")}
        return (
            all(s.message_id in replied for s in self.said + self.commands)
            and all(self.proposal_about(f"Prepare {t}") for t in self.events)
            and all(self.proposal_about(p.tag) for p in self.presses if p.action == "modify")
            and not decided & still_open
            and all(self.press_settled(p) for p in self.poisoned if p.answer)
        )

    def press_settled(self, poison: Poison) -> bool:
        """An odd press is answered, unless the life that took it was killed before the answer went out
        (the answer follows the commit that moved the offset past it; Telegram does not hand it again)."""
        with self.fake._lock:
            answered = poison.query_id in self.fake.callback_answers
        return answered or self.fake.handed.get(poison.update_id) in self.killed

    # The invariants ------------------------------------------------------------------------
    @staticmethod
    def looks(m: dict) -> tuple:
        """What the user sees of a message: where, what it says, what it answers."""
        return (
            m["chat"]["id"],
            m.get("message_thread_id"),
            m["text"],
            (m.get("reply_to_message") or {}).get("message_id"),
        )

    def window_resends(self, shown: list[dict]) -> tuple[list[dict], list[dict]]:
        """Split off the re-sends the design allows: sendMessage has no idempotency key, so a kill
        after Telegram accepted a message and before its row was marked delivered sends it again
        after the restart (channels/telegram/__init__.py, "The duplicate window"). Such a re-send repeats
        the last message a killed life sent, in a later life; any other repeat stays in the list."""
        last_of_life = {m["_life"]: m["message_id"] for m in shown}
        latest: dict[tuple, dict] = {}
        kept, resent = [], []
        for m in shown:
            earlier = latest.get(self.looks(m))
            latest[self.looks(m)] = m
            if (
                earlier is not None
                and earlier["_life"] < m["_life"]
                and earlier["_life"] in self.killed
                and last_of_life[earlier["_life"]] == earlier["message_id"]
            ):
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
        # an undo or a command of the user's own ("done 3") is their approval, taken at once: its receipt answers
        # the press or the message (checked with the answers), it is never shown as a question
        approvals = {
            row[0]: {"status": row[1], "supersedes": row[2]}
            for row in self.query(
                "SELECT id, status, supersedes FROM approval WHERE idempotency_key NOT LIKE "
                "'undo:%' AND idempotency_key NOT LIKE 'command:%'"
            )
        }
        items = {}
        for approval_id, description, status in self.query(
            "SELECT approval_id, description, status FROM approval_item"
        ):
            items.setdefault(approval_id, []).append((description, status))
        f.proposals = len(approvals)

        # No user-visible message delivered twice.
        seen: dict[tuple, list] = {}  # what the user saw -> the starts that sent it
        for m in shown:
            seen.setdefault(self.looks(m), []).append(m["_life"])
        for (_chat, _thread, text, reply_to), lives in seen.items():
            count = len(lives)
            allowed = 1
            if reply_to is None and not TAG.search(text) and not text.startswith("Proposal "):
                # a text that may rightly come more than once (an apology, a refusal): one per outbox row
                allowed = max(
                    1, self.query("SELECT count(*) FROM outbox WHERE channel = 'telegram' AND text = ?", text)[0][0]
                )
            if count > allowed:
                killed = ", ".join(f"{life}{' (killed)' if life in self.killed else ''}" for life in lives)
                f.duplicates.append(f"delivered {count} times: {text[:120]!r}, by starts {killed}")

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
            if said.text.startswith("/today") and "Looking…" in texts and len(texts) > 1:
                texts.remove("Looking…")  # what the look found follows its "Looking…": one answer, in two steps
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
        pressed: dict[tuple, list] = {}
        for p in self.presses:  # an Undo under a receipt is a press of its own, after the proposal's
            pressed.setdefault((p.approval_id, p.action == "undo"), []).append(p)
        for (approval_id, _), presses in pressed.items():
            approval = approvals.get(approval_id)
            action = presses[0].action
            if approval is None:
                f.losses.append(f"{action} on unknown proposal {approval_id}")
                continue
            if action == "undo":  # its answer is a proposal putting it back, or why there is nothing to put back
                undos = self.query(
                    "SELECT id FROM approval WHERE idempotency_key = ? OR idempotency_key LIKE ?",
                    f"undo:{approval_id}",
                    f"undo:{approval_id}:%",
                )
                if not undos and not any(
                    m["text"].startswith(
                        (f"I can't undo proposal {approval_id}:", f"Proposal {approval_id} was undone already")
                    )
                    for m in shown
                ):
                    f.losses.append(f"undo of proposal {approval_id} lost (no proposal, no answer)")
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
            answers = sorted(
                {
                    m["text"]
                    for m in shown
                    if m["text"].startswith(GATE_ANSWERS)
                    and (
                        re.search(rf"\bproposal {approval_id}\b", m["text"])
                        or any(d in m["text"] for d in descriptions)
                    )
                }
            )
            if len(answers) < len(presses):
                f.losses.append(
                    f"{action} of proposal {approval_id}: {len(presses)} press(es), {len(answers)} answer(s)"
                )
            elif len(answers) > len(presses):
                f.duplicates.append(
                    f"{action} of proposal {approval_id}: {len(presses)} press(es), "
                    f"{len(answers)} answers: {[text[:60] for text in answers]}"
                )

        self.check_order(everything)
        self.check_poison()
        f.delay_lines = sum(1 for m in everything if m.get("_delayed"))
        f.calls_refused = self.fake.refused_calls()

        # Calendar edits reach the user as proposals.
        for title, event in self.events.items():
            for verb in ("Prepare",) + (("Re-plan",) if event["moved"] else ()):
                if not self.proposal_about(f"{verb} {title}"):
                    f.losses.append(f"calendar edit of {title!r} never proposed ({verb})")

    def check_order(self, everything: list[dict]) -> None:
        """Every row owed is delivered, and each chat gets its rows oldest first: a row's message comes after
        the messages of every row written before it (a resend in the window is the row's own message)."""
        f = self.figures
        position = {(m["chat"]["id"], m["message_id"]): i for i, m in enumerate(everything)}
        newest: dict[int, tuple[int, int]] = {}  # chat -> (place of the latest message so far, its row)
        for row_id, status, text, result, payload in self.query(
            "SELECT id, status, text, result, payload FROM outbox WHERE channel = 'telegram' ORDER BY id"
        ):
            if status in ("pending", "retry", "failed", "held"):
                f.losses.append(f"outbox {row_id} ({status}) never delivered: {text[:80]!r}")
                continue
            if status != "delivered" or "briefing" in (json.loads(payload or "null") or {}):
                continue  # kept back for a briefing; a briefing row is written before it is due
            done = json.loads(result or "null") or {}
            places = [position.get((int(done.get("chat_id") or 0), int(i))) for i in done.get("message_ids") or []]
            if not places or None in places:
                f.losses.append(f"outbox {row_id} marked delivered as {done}, which the user never saw")
                continue
            chat = int(done["chat_id"])
            if chat in newest and min(places) < newest[chat][0]:
                f.disorder.append(
                    f"outbox {row_id} ({text[:60]!r}) shown before outbox {newest[chat][1]}, written earlier"
                )
            newest[chat] = max(newest.get(chat, (-1, 0)), (max(places), row_id))

    def check_poison(self) -> None:
        """Each odd update: an unreadable one traced as skipped exactly once, a forged press refused; none in
        the inbox, none a decision; a press answered as it should be (unless its life was killed first)."""
        f = self.figures
        traced: dict[int, int] = {}
        for (data,) in self.query("SELECT data FROM trace WHERE stage = 'skipped'"):
            update_id = (json.loads(data or "null") or {}).get("update_id")
            traced[update_id] = traced.get(update_id, 0) + 1
        for said in self.said + self.commands:
            if said.update_id in traced:
                f.losses.append(f"the user's {said.text!r} (update {said.update_id}) was skipped as unreadable")
        stray = self.query(
            "SELECT id, approval_id, action FROM decision WHERE approval_id NOT IN "
            "(SELECT id FROM approval) OR action NOT IN ('approve', 'reject', 'modify', 'confirm', "
            "'revive', 'undo')"
        )
        f.poison_problems += [f"decision {row} from a press Wilson did not make" for row in stray]
        with self.fake._lock:
            answers = dict(self.fake.callback_answers)
        for poison in self.poisoned:
            what = f"{poison.kind} (update {poison.update_id})"
            problems = []
            if self.query("SELECT id FROM inbox WHERE dedup_key = ?", f"telegram:{poison.update_id}"):
                problems.append(f"{what} reached the inbox")
            times = traced.get(poison.update_id, 0)
            if poison.expect == "skipped" and times != 1:
                problems.append(f"{what} traced as skipped {times} times, not once")
            if poison.expect == "refused" and times:
                problems.append(f"{what} traced as unreadable; its data should have been refused")
            if poison.answer:
                answer = answers.get(poison.query_id)
                if answer is None and self.fake.handed.get(poison.update_id) in self.killed:
                    f.poison_unanswered_in_killed_life += 1
                elif answer is None:
                    problems.append(f"{what}: the press was never answered")
                elif answer["text"] != poison.answer:
                    problems.append(f"{what}: answered {answer['text']!r}, not {poison.answer!r}")
            if not problems:
                f.poison_skipped += poison.expect == "skipped"
                f.poison_refused += poison.expect == "refused"
            f.poison_problems += problems


def run_harness(home: Path, *, seed: int, kills: int) -> Figures:
    home.mkdir(parents=True, exist_ok=True)
    with (
        RecordingTelegram(DEFAULT_TOKEN) as fake,
        ScriptedServer([{"match": lambda body, headers: True, "reply": model_reply}]) as model,
    ):
        harness = CrashHarness(home, fake, model, seed=seed, kills=kills)
        try:
            return harness.run()
        finally:
            if harness.alive():
                harness.proc.kill()
                harness.proc.wait(timeout=30)
