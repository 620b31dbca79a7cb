"""Prompt cost per request: what a user's "hello" costs beside a planning request, and how a prompt grows
with the open tasks.

    python -m bench.prompts [--quick] [--json]

A Wilson on the simulated clock talks to the scripted model server (which answers every request with a
short text and bills request bytes // 4 as prompt tokens). Each user message's tokens are the sum over
every model request its run made (all rounds, a fast run that escalated included), with its billed cost
at the example price table ([llm] price_<role>). Figures: "hello" and "what's on my calendar today?"
beside a planning request in the same run; the planning request with 60 open tasks beside the same
request with 6 (goal: within +15 %); the tool schemas each kind of run is offered beside every tool with
its own schema.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from bench.common import Figure, TempHome, bench_config, cli, make_wilson, ratio, result
from wilson.kernel.clock import SimClock

START = "2027-01-05T09:00:00+01:00"
PLAN = "plan my trip to Japan in April: flights, a hotel in Tokyo and what to book first"
GROWTH_GOAL = 1.15


def _tokens_of(server, since: int, config) -> tuple[int, float, list[str]]:
    from wilson.model.replies import cost, prices

    table = prices(config)
    tokens, usd, roles = 0, 0.0, []
    for entry in server.requests[since:]:
        usage = entry.get("usage") or {}
        role = entry["headers"].get("x-wilson-role", "deep")
        offered = str(entry["body"].get("tools"))
        if not usage or "triage" in offered or "record_memories" in offered:  # the user's run only
            continue
        tokens += usage["total_tokens"]
        usd += cost(table[role], usage["prompt_tokens"], usage["completion_tokens"])
        roles.append(role)
    return tokens, usd, roles


def _schema_tokens(config) -> dict:
    """Tokens (bytes // 4) of the tool schemas each kind of cortex run is offered, and of every tool with its
    own schema (each mutation a tool of its own, as before `propose`) for a user's and a background run."""
    import json

    from actors import tools

    box = tools.toolbox(config)

    def size(schemas) -> int:
        return len(json.dumps(schemas, ensure_ascii=False).encode()) // 4

    return {
        "user": size(tools.schemas_for("user", box)),
        "background": size(tools.schemas_for("background", box)),
        "fast": size(tools.schemas_for("fast", box, deciding=False)),
        "user_each_own": size(box.schemas(True)),
        "background_each_own": size(box.schemas(False)),
    }


def run(quick: bool = False) -> dict:
    from storage.models import Task, Topic
    from wilson.model.scripted import ScriptedServer

    out = {}
    with ScriptedServer([{"match": lambda body, headers: True, "reply": {"text": "Sure, here you are."}}]) as server:
        with TempHome("prompts") as home:
            config = bench_config(home, WILSON_LLM_MODEL="scripted")
            clock = SimClock(datetime.fromisoformat(START))
            app = make_wilson(config, clock, llm=server.base_url).start()
            try:
                now = clock.now()
                topic = Topic.create(title="Garden", status="active", created_at=now)
                for i in range(6):
                    Task.create(
                        title=f"Garden chore {i}", topic=topic, due=now + timedelta(days=30 + i), created_at=now
                    )

                def say(text: str) -> tuple[int, float, list[str]]:
                    since = len(server.requests)
                    app.say(text)
                    app.wait_idle()
                    clock.advance(timedelta(minutes=10))
                    return _tokens_of(server, since, config)

                say("hi, I'm new here")  # first contact carries the introduction: not a routine hello
                out["hello"] = say("hello")
                out["thanks"] = say("thanks!")
                out["lookup"] = say("what's on my calendar today?")
                out["plan6"] = say(PLAN)
                for i in range(54):
                    Task.create(title=f"Household errand number {i}", due=now + timedelta(days=20 + i), created_at=now)
                out["plan60"] = say(PLAN)
                out["hello60"] = say("hello")
                out["schemas"] = _schema_tokens(config)
            finally:
                app.stop()
    plan, plan60, schemas = out["plan6"], out["plan60"], out.pop("schemas")
    figures = [
        Figure(
            'tokens per user "hello"',
            out["hello"][0],
            "tokens",
            "a planning request",
            plan[0],
            ratio(out["hello"][0], plan[0]),
            note=f"roles {', '.join(out['hello'][2])}; ${out['hello'][1]:.5f} against ${plan[1]:.5f}",
        ),
        Figure(
            'tokens per "what\'s on my calendar today?"',
            out["lookup"][0],
            "tokens",
            "a planning request",
            plan[0],
            ratio(out["lookup"][0], plan[0]),
            note=f"roles {', '.join(out['lookup'][2])}",
        ),
        Figure(
            'billed cost per user "hello"',
            round(out["hello"][1] * 1e6, 1),
            "µUSD",
            "a planning request",
            round(plan[1] * 1e6, 1),
            ratio(out["hello"][1], plan[1]),
            note="example prices",
        ),
        Figure(
            "tokens per planning request, 60 open tasks",
            plan60[0],
            "tokens",
            "with 6 open tasks",
            plan[0],
            ratio(plan60[0], plan[0]),
            f"≤ {GROWTH_GOAL:.2f} × 6 tasks",
            plan60[0] <= GROWTH_GOAL * plan[0],
        ),
        Figure(
            "tool schema tokens, a user's run",
            schemas["user"],
            "tokens",
            "every tool with its own schema",
            schemas["user_each_own"],
            ratio(schemas["user"], schemas["user_each_own"]),
            note="reads, one propose for every change, the decision tools",
        ),
        Figure(
            "tool schema tokens, a background run",
            schemas["background"],
            "tokens",
            "every tool with its own schema",
            schemas["background_each_own"],
            ratio(schemas["background"], schemas["background_each_own"]),
        ),
        Figure(
            "tool schema tokens, routine chat (fast)",
            schemas["fast"],
            "tokens",
            "a user's run",
            schemas["user"],
            ratio(schemas["fast"], schemas["user"]),
            note="no proposal pending: no decide",
        ),
        Figure(
            'tokens per user "hello", 60 open tasks',
            out["hello60"][0],
            "tokens",
            "with 6 open tasks",
            out["hello"][0],
            ratio(out["hello60"][0], out["hello"][0]),
            note="also five more turns of history (routine chat sees at most 400 tokens of it)",
        ),
    ]
    thanks_roles = ", ".join(out["thanks"][2]) or "no model call: answered from the router's template"
    notes = [
        f"planning request roles: {', '.join(plan[2])}; thanks: {out['thanks'][0]} tokens ({thanks_roles})",
        "tokens: the scripted server's usage (request bytes // 4, reply JSON // 4), every request of the run",
    ]
    return result("prompt cost", figures, {k: list(v) for k, v in out.items()}, notes)


def main(argv=None) -> int:
    return cli("bench.prompts", __doc__, run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
