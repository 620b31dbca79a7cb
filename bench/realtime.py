"""Realtime under load: does a user's message wait while Wilson is busy in the background?

    python -m bench.realtime [--quick] [--json]
    python -m bench.realtime --serve-model   (the scripted model server alone; see ModelProcess)

A stimulus on the realtime path (`app.say`, which commits a priority-0 inbox row
exactly as the Telegram channel does) is timed in real time from just before the
commit to the delivery of its reply (the REPL printer runs right after the reply's
outbox row was committed and handed to the channel). The scripted model server
answers the deep role in 20 ms. It runs in a child process of its own, as a real model
server would, so that its JSON work on the 500-item triage requests does not compete
with Wilson's threads for the interpreter.

Baseline: the same messages on an idle Wilson. Loaded: right after 500 buffered
emails were injected, the thalamus is told to sync (SyncRequest("manual")) and the
hippocampus to consolidate (Consolidate()). The fast model sees the 500 items in
chunks (thalamus.chunk_chars) and takes 1 s per chunk, so triage calls run back
to back through the whole measurement; the triaged rows keep the background cortex
lane busy; consolidation's model call takes 1 s and then writes its memories.
Goal: loaded p99 ≤ 1.5 × idle p99.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import threading
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

from bench.common import Figure, TempHome, bench_config, cli, make_wilson, ms, percentile, ratio, result
from wilson.kernel.clock import RealClock, monotonic, pause

BUFFERED = 500
ITEMS_PER_CHUNK = 25
SLOW_MS = 1000
DEEP_MS = 20
GAP_S = 0.04
GOAL = 1.5


class Model:
    """The scripted model's behaviour, plus when each slow call was in flight."""

    def __init__(self):
        self.release = threading.Event()  # set at the end: held calls answer at once so the run can stop
        self.lock = threading.Lock()
        self.calls: dict[str, list[tuple[float, float]]] = {"triage": [], "memories": [], "arousal": []}

    def _slow(self, kind: str, answer):
        start = monotonic()
        self.release.wait(SLOW_MS / 1000)
        with self.lock:
            self.calls[kind].append((start, monotonic()))
        return answer

    def rules(self) -> list[dict]:
        def tools(body):
            return {(t.get("function") or {}).get("name") for t in body.get("tools") or []}

        def triage(body):
            items = json.loads(body["messages"][-1]["content"])["items"]
            decisions = [
                {
                    "buffer_ids": [i["buffer_id"]],
                    "summary": i["text"][:80],
                    "priority": 2,
                    "action": "inbox" if n % 10 == 0 else "drop",
                    "reason": "needs a reply" if n % 10 == 0 else "newsletter",
                }
                for n, i in enumerate(items)
            ]
            return self._slow("triage", {"tool_calls": [{"name": "triage", "arguments": {"items": decisions}}]})

        def memories(body):
            candidates = json.loads(body["messages"][-1]["content"]).get("candidates") or []
            return self._slow(
                "memories", {"tool_calls": [{"name": "record_memories", "arguments": {"items": candidates}}]}
            )

        def arousal(body):
            return self._slow(
                "arousal",
                {
                    "tool_calls": [
                        {
                            "name": "arousal",
                            "arguments": {"urgent": False, "reason": "nothing urgent", "buffer_ids": []},
                        }
                    ]
                },
            )

        def deep(body):
            last = body["messages"][-1].get("content") or ""
            found = re.fullmatch(r"ping (\d+)", last.strip())
            return {"text": f"pong {found.group(1)}" if found else ""}

        return [
            {"name": "triage", "match": lambda b, h: "triage" in tools(b), "reply": triage},
            {"name": "memories", "match": lambda b, h: "record_memories" in tools(b), "reply": memories},
            {"name": "arousal", "match": lambda b, h: "arousal" in tools(b), "reply": arousal},
            {"name": "deep", "match": lambda b, h: True, "reply": deep, "latency_ms": DEEP_MS},
        ]

    def snapshot(self) -> dict[str, list[tuple[float, float]]]:
        with self.lock:
            return {kind: list(calls) for kind, calls in self.calls.items()}


def serve_model() -> int:
    """The child side of ModelProcess: serve Model().rules() and obey commands read from stdin.

    Prints the base URL as the first line of stdout. Commands, one a line: `release` (held
    calls answer at once from now on), `calls` (print the call log as one JSON line), `stop`
    (or end of input) to stop serving. Times are time.monotonic(), which is CLOCK_MONOTONIC
    and so comparable with the parent's."""
    from wilson.model.scripted import ScriptedServer

    model = Model()
    server = ScriptedServer(model.rules())
    out = sys.stdout
    try:
        out.write(server.start() + "\n")
        out.flush()
        for line in sys.stdin:
            command = line.strip()
            if command == "release":
                model.release.set()
            elif command == "calls":
                out.write(json.dumps(model.snapshot()) + "\n")
                out.flush()
            elif command == "stop":
                break
    finally:
        model.release.set()
        server.stop()
    return 0


class ModelProcess:
    """The scripted model server in a child process (`python -m bench.realtime --serve-model`)."""

    def __init__(self):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bench.realtime", "--serve-model"],
            cwd=Path(__file__).resolve().parent.parent,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self.base_url = self._read("the base URL")

    def _read(self, what: str) -> str:
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the model server process sent no {what} (exit code {self.proc.poll()})")
        return line.strip()

    def _send(self, command: str) -> None:
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()

    def calls(self) -> dict[str, list[tuple[float, float]]]:
        """Each slow call's (start, end) so far, by kind."""
        self._send("calls")
        return {kind: [tuple(c) for c in calls] for kind, calls in json.loads(self._read("call log")).items()}

    def release(self) -> None:
        """Held calls answer at once from now on, so the run can stop."""
        try:
            self._send("release")
        except (OSError, ValueError):
            pass  # the child is gone: nothing is held

    def stop(self) -> None:
        try:
            self._send("stop")
            self.proc.stdin.close()
        except (OSError, ValueError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()


def _in_flight(calls: list[tuple[float, float]], at: float) -> bool:
    return any(start <= at <= end for start, end in calls)


class Replies:
    """The REPL printer: the moment each `pong N` was delivered."""

    def __init__(self):
        self.at: dict[int, float] = {}
        self.cond = threading.Condition()

    def __call__(self, record: dict) -> None:
        found = re.fullmatch(r"pong (\d+)", (record.get("text") or "").strip())
        if found:
            with self.cond:
                self.at[int(found.group(1))] = monotonic()
                self.cond.notify_all()

    def wait(self, n: int, timeout: float = 30.0) -> float:
        with self.cond:
            if not self.cond.wait_for(lambda: n in self.at, timeout):
                raise TimeoutError(f"no reply to ping {n} within {timeout}s")
            return self.at[n]


def _samples(app, replies: Replies, first: int, count: int) -> list[tuple[float, float]]:
    """(start, seconds) per message, one at a time with a short gap, as a person types."""
    out = []
    for n in range(first, first + count):
        start = monotonic()
        app.say(f"ping {n}")
        out.append((start, replies.wait(n) - start))
        pause(GAP_S)
    return out


def _email(rng: random.Random, n: int) -> tuple[str, dict]:
    senders = ["newsletter@shop.example", "team@project.example", "alerts@bank.example", "friend@mail.example"]
    sender = rng.choice(senders)
    subject = f"Update {n}: " + rng.choice(["weekly digest", "your order", "meeting notes", "statement ready"])
    body = " ".join(
        rng.choice(
            [
                "the",
                "report",
                "attached",
                "please",
                "see",
                "details",
                "below",
                "thanks",
                "schedule",
                "invoice",
                "team",
                "project",
                "review",
            ]
        )
        for _ in range(40)
    )
    return f"Email from {sender}: {subject}\n{body}", {"from": sender, "subject": subject}


def _episodes(app, count: int) -> None:
    """Decided proposals and completed tasks for tonight's consolidation (the idle phase added the turns)."""
    from storage.models import Approval, ApprovalItem, Task

    now = app.clock.now()
    for i in range(count):
        approval = Approval.create(
            trace_id=f"bench{i}",
            approver="owner",
            channel="repl",
            summary=f"plan {i}",
            nonce="00",
            status="approved" if i % 3 else "rejected",
            created_at=now,
            decided_at=now,
            expires_at=now + timedelta(days=3),
        )
        ApprovalItem.create(
            approval=approval,
            position=1,
            tool="create_task",
            args={"title": f"Pay the gas bill {i}", "due": (now + timedelta(days=5)).date().isoformat()},
            description=f"Create task “Pay the gas bill {i}”",
            status="executed" if i % 3 else "rejected",
        )
        Task.create(
            title=f"Book flights {i}", due=now - timedelta(days=i % 4), status="done", created_at=now, completed_at=now
        )


def _sent_chars(text: str, payload: dict) -> int:
    """An email's size as triage reads it, which is what thalamus.chunk_chars counts."""
    from actors.triage import item_for

    row = SimpleNamespace(id=10**6, channel="email", text=text, payload=payload)
    return len(json.dumps(item_for(row), ensure_ascii=False, default=str))


def run(quick: bool = False) -> dict:
    from storage.models import ReceptorBuffer, Trace
    from wilson.kernel.messages import Consolidate, SyncRequest

    samples = 60 if quick else 200
    rng = random.Random(8)
    emails = [_email(rng, n) for n in range(BUFFERED)]
    chunk_chars = ITEMS_PER_CHUNK * max(_sent_chars(text, payload) for text, payload in emails)
    model = ModelProcess()
    base_url = model.base_url
    try:
        with TempHome("realtime") as home:
            replies = Replies()
            config = bench_config(home, WILSON_LLM_MODEL="scripted", WILSON_THALAMUS_CHUNK_CHARS=chunk_chars)
            app = make_wilson(config, RealClock(), llm=base_url, printer=replies).start()
            try:
                _samples(app, replies, 0, 10)  # warm up: connections, caches
                app.wait_idle()
                idle = _samples(app, replies, 100, samples)
                app.wait_idle()

                for text, payload in emails:
                    app.inject_buffered("email", text, payload)
                _episodes(app, 30)
                app.wait_idle()
                load_start = monotonic()
                app.supervisor.tell("thalamus", SyncRequest("manual"))
                app.supervisor.tell("hippocampus", Consolidate())
                loaded = _samples(app, replies, 1000, samples)
                load_end = monotonic()
                left = ReceptorBuffer.select().where(ReceptorBuffer.processed_at.is_null()).count()
                calls = model.calls()
                triage_calls = [c for c in calls["triage"] if c[1] <= load_end]
                under_triage = sum(1 for start, _ in loaded if _in_flight(calls["triage"], start))
                memory_calls = list(calls["memories"])
                model.release()
                app.wait_idle(timeout=120)
                consolidated = Trace.select().where(Trace.stage == "consolidated").exists()
            finally:
                model.release()
                app.stop()
    finally:
        model.stop()

    idle_s = [s for _, s in idle]
    loaded_s = [s for _, s in loaded]
    idle_p99, loaded_p99 = percentile(idle_s, 99), percentile(loaded_s, 99)
    window = load_end - load_start
    memories_in_window = [c for c in memory_calls if c[0] < load_end]
    details = {
        "samples": samples,
        "gap_ms": GAP_S * 1000,
        "deep_latency_ms": DEEP_MS,
        "slow_latency_ms": SLOW_MS,
        "idle_ms": {
            "p50": ms(percentile(idle_s, 50)),
            "p90": ms(percentile(idle_s, 90)),
            "p99": ms(idle_p99),
            "max": ms(max(idle_s)),
        },
        "loaded_ms": {
            "p50": ms(percentile(loaded_s, 50)),
            "p90": ms(percentile(loaded_s, 90)),
            "p99": ms(loaded_p99),
            "max": ms(max(loaded_s)),
        },
        "load_window_s": round(window, 2),
        "chunk_chars": chunk_chars,
        "triage_calls_finished_in_window": len(triage_calls),
        "samples_sent_while_a_triage_call_was_in_flight": under_triage,
        "buffered_left_untriaged_at_window_end": left,
        "consolidation_model_call_s": [round(s - load_start, 2) for s, _ in memories_in_window[:1]]
        + [round(e - load_start, 2) for _, e in memories_in_window[:1]],
        "consolidated": consolidated,
        "slowest_loaded": [
            {"at_s": round(start - load_start, 2), "ms": ms(seconds)}
            for start, seconds in sorted(loaded, key=lambda x: -x[1])[:5]
        ],
        "triage_calls_s": [[round(s - load_start, 2), round(e - load_start, 2)] for s, e in triage_calls],
    }
    figures = [
        Figure(
            "reply p99, loaded",
            ms(loaded_p99),
            "ms",
            "idle p99",
            ms(idle_p99),
            ratio(loaded_p99, idle_p99),
            f"≤ {GOAL} × idle",
            loaded_p99 <= GOAL * idle_p99,
        ),
        Figure(
            "reply p50, loaded",
            ms(percentile(loaded_s, 50)),
            "ms",
            "idle p50",
            ms(percentile(idle_s, 50)),
            ratio(percentile(loaded_s, 50), percentile(idle_s, 50)),
        ),
    ]
    notes = [
        f"{samples} messages per phase, one at a time, {GAP_S * 1000:.0f} ms apart; deep model {DEEP_MS} ms",
        f"load: {under_triage}/{samples} loaded messages were sent while a 1 s triage call was in flight; "
        f"{len(triage_calls)} triage calls finished in the {window:.1f} s window, {left} of {BUFFERED} "
        f"buffered rows still untriaged at its end; consolidation's 1 s model call "
        f"{'overlapped the window' if memories_in_window else 'did NOT overlap the window'}",
    ]
    return result("realtime under load", figures, details, notes)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv == ["--serve-model"]:
        return serve_model()
    return cli("bench.realtime", __doc__, run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
