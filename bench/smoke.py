"""Smoke: the whole organism through a short story with the watchdog on, in seconds.

    python -m bench.smoke [--json]      (`python -m bench --smoke` runs it under a time limit)

A Wilson on a simulated clock with the supervisor's watchdog checking every 0.2 s, as
`wilson run` has it (only faster), against the scripted model server over HTTP. The
story: messages from the user, one of them answered by a model that takes 1.5 s
(seven watchdog rounds: a busy actor must not count as hung), a calendar event that
the morning sync turns into a proposal, its approval, and a simulated week of ticks.

It is here to fail loudly, not to be fast: a run that stalls (`wait_idle` gives up),
loses a reply, repeats a model call or a proposal, restarts an actor, or leaves
messages counted in flight on an idle app ends with an error and a non-zero exit.
Its figures are printed like every benchmark's; the baseline of the slow reply is
the fast one.
"""

from __future__ import annotations

import json
import sys
from datetime import date, datetime, timedelta

from bench.common import Figure, TempHome, bench_config, emit, make_wilson, ratio, result
from wilson.app.application import IdleTimeout
from wilson.kernel.clock import SimClock, monotonic

START = "2027-01-05T08:00:00+01:00"
MESSAGES = 12
SLOW_MS = 1500
WATCHDOG_S = 0.2
IDLE_TIMEOUT = 20.0


def _stimulus(body: dict) -> dict:
    """The stimulus from the cortex's CONTEXT, with its text: sent once, as the last user message."""
    messages = body.get("messages") or []
    for message in messages:
        content = message.get("content") or ""
        if message.get("role") == "user" and content.startswith("CONTEXT "):
            stimulus = json.loads(content[len("CONTEXT ") :]).get("stimulus") or {}
            stimulus.setdefault(
                "text", next((m.get("content") or "" for m in reversed(messages) if m.get("role") == "user"), "")
            )
            return stimulus
    return {}


def reply(body: dict) -> dict:
    """Every organ's plain answer; the cortex answers messages, and proposes a task for a new event."""
    tools = {(t.get("function") or {}).get("name") for t in body.get("tools") or []}
    last = body["messages"][-1]
    if "triage" in tools:
        items = json.loads(last["content"])["items"]
        return {
            "tool_calls": [
                {
                    "name": "triage",
                    "arguments": {
                        "items": [
                            {
                                "buffer_ids": [i["buffer_id"]],
                                "summary": i["text"][:200],
                                "priority": 2,
                                "action": "inbox",
                                "reason": "needs a decision",
                            }
                            for i in items
                        ]
                    },
                }
            ]
        }
    if "arousal" in tools:
        return {"tool_calls": [{"name": "arousal", "arguments": {"urgent": False, "reason": "calm", "buffer_ids": []}}]}
    if "record_memories" in tools:
        return {"tool_calls": [{"name": "record_memories", "arguments": {"items": []}}]}
    stimulus = _stimulus(body)
    if last.get("role") == "tool" or stimulus.get("kind") not in ("message", "event"):
        return {"text": ""}
    if stimulus["kind"] == "event":
        title = stimulus["payload"]["buffers"][0]["title"]
        return {
            "tool_calls": [{"name": "create_task", "arguments": {"title": f"Prepare {title}", "due": "2027-02-01"}}]
        }
    return {"text": f"Got it: {stimulus['text']}"}


def run(quick: bool = True) -> dict:
    from channels.calendar import add_event
    from storage.models import Approval, Inbox, Task
    from wilson.model.scripted import ScriptedServer

    problems: list[str] = []
    details: dict = {}
    restarts: dict[str, int] = {}

    def idle(app, what: str) -> None:
        try:
            app.wait_idle(timeout=IDLE_TIMEOUT)
        except IdleTimeout:
            problems.append(
                f"stalled {what}: still busy after {IDLE_TIMEOUT:.0f} s "
                f"(in flight {app.supervisor.in_flight()}, busy {app.supervisor.busy()})"
            )
        left = app.supervisor.in_flight()
        details[f"in_flight_{what.replace(' ', '_')}"] = left
        if left != 0:
            problems.append(f"{left} message(s) counted in flight on an idle app {what}")

    rules = [
        {
            "match": lambda body, headers: "slow one" in json.dumps(body.get("messages")),
            "reply": reply,
            "latency_ms": SLOW_MS,
        },
        {"match": lambda body, headers: True, "reply": reply},
    ]
    began = monotonic()
    with ScriptedServer(rules) as model, TempHome("smoke") as home:
        config = bench_config(
            home,
            WILSON_LLM_MODEL="scripted",
            WILSON_CORE_QUIET_HOURS="off",
            WILSON_SUPERVISOR_WATCHDOG_SECONDS=WATCHDOG_S,
        )
        delivered: list[dict] = []
        app = make_wilson(
            config, SimClock(datetime.fromisoformat(START)), llm=model.base_url, printer=delivered.append, watchdog=True
        )
        app.start()
        try:
            started = monotonic()
            idle(app, "after start")
            ready_s = monotonic() - started

            fast_began = monotonic()
            rows = [app.say(f"message {n}") for n in range(MESSAGES)]
            idle(app, "after the messages")
            fast_s = (monotonic() - fast_began) / MESSAGES

            slow_began = monotonic()
            slow = app.say("the slow one")
            idle(app, "after the slow reply")
            slow_s = monotonic() - slow_began
            rows.append(slow)
            deep_for_slow = sum(1 for r in model.requests if "slow one" in json.dumps(r["body"].get("messages")))
            if deep_for_slow != 1:
                problems.append(f"the slow message reached the model {deep_for_slow} times, not once")

            for row in rows:
                status = Inbox.get_by_id(row.id).status
                said = sum(1 for d in delivered if d["text"] == f"Got it: {row.text}")
                if status != "done" or said != 1:
                    problems.append(f"message {row.text!r}: {status}, answered {said} times")

            add_event(
                app.calendar_file(),
                "Conference",
                date(2027, 3, 10),
                date(2027, 3, 12),
                "Lisbon",
                tz=app.config.timezone,
            )
            week_began = monotonic()
            app.advance(timedelta(days=1))
            idle(app, "after a day")
            proposals = list(Approval.select())
            if len(proposals) != 1:
                problems.append(f"{len(proposals)} proposals for one calendar event, not 1")
            else:
                app.decide(proposals[0].id, "approve")
                idle(app, "after the approval")
                if Task.select().where(Task.title == "Prepare Conference").count() != 1:
                    problems.append("the approved task does not exist exactly once")
            app.advance(timedelta(days=6))
            idle(app, "after a week")
            week_s = monotonic() - week_began
            restarts = {name: h.restarts for name, h in app.supervisor.health.items() if h.restarts}
            if restarts:
                problems.append(f"actors restarted in a run without faults: {restarts}")
        finally:
            app.stop()
    total_s = monotonic() - began
    details.update(
        messages=MESSAGES + 1,
        slow_model_ms=SLOW_MS,
        watchdog_s=WATCHDOG_S,
        model_requests=len(model.requests),
        deliveries=len(delivered),
        problems=problems,
    )
    figures = [
        Figure(
            "reply with a 1.5 s model call",
            round(slow_s, 3),
            "s",
            "reply with a fast model",
            round(fast_s, 3),
            ratio(slow_s, fast_s),
        ),
        Figure(
            "messages counted in flight when idle",
            sum(abs(v) for k, v in details.items() if k.startswith("in_flight")),
            "",
            goal="0",
            ok=all(v == 0 for k, v in details.items() if k.startswith("in_flight")),
        ),
        Figure("actor restarts", sum(restarts.values()), "", goal="0", ok=not restarts),
        Figure("a simulated week (1 proposal, approved)", round(week_s, 2), "s"),
        Figure("start to idle", round(ready_s, 3), "s"),
        Figure("whole smoke run", round(total_s, 1), "s", goal="< 30 s", ok=total_s < 30),
    ]
    res = result("smoke (watchdog on)", figures, details, notes=[f"PROBLEM: {p}" for p in problems])
    if problems:
        res["error"] = "; ".join(problems)
    return res


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    res = run()
    emit(res, "--json" in argv)
    return 1 if res.get("error") else 0


if __name__ == "__main__":
    raise SystemExit(main())
