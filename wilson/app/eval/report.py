"""`wilson eval`: run a suite, print a line per scenario and a table, write the JSON report.

    wilson eval [--suite dev|test|all|PATH] [--llm offline|scripted:FILE|replay:DIR|URL] [--compare A B]
                [--json FILE] [--record DIR] [--strict]

Without --llm the configured model is measured (the [llm] settings of wilson.toml and WILSON_LLM_*,
per role as usual); nothing else of the person's configuration is used: each scenario runs on a
fresh temporary home with its own database, no Telegram, no mailbox, no dashboard.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from wilson.app.eval import scorer
from wilson.app.eval.format import ScenarioError
from wilson.app.eval.runner import llm_settings_of, run_scenario
from wilson.app.eval.scenarios import suite
from wilson.app.options import llm_option
from wilson.kernel import clock as clockmod
from wilson.kernel.config import SCHEMA, check_value
from wilson.kernel.logs import file_sink
from wilson.model.replies import example_prices, prices
from wilson.model.synapse import DOWN_NOTICE


class _Settings:
    """Just enough of a Config for wilson.model.replies.prices() to read [llm] settings from a dict."""

    def __init__(self, llm: dict):
        self.llm = llm

    def get(self, section: str, key: str):
        return self.llm.get(key) if section == "llm" else None


def price_table(llm: dict) -> dict | None:
    """{role: (input, cached input, output)} in USD per million tokens from [llm] price_<role>, as the
    budget report reads them; None when every price is zero (then only tokens are shown)."""
    table = prices(_Settings(llm or {}))
    return table if any(any(price) for price in table.values()) else None


def pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.0f}%"


def progress_line(index: int, total: int, result: dict) -> str:
    surf, prop = result["surfacing"], result["proposals"]
    bad = len(result["silence_violations"]) + len(result["quiet_violations"]) + len(result["injection"]["violations"])
    flag = "ok " if not bad and not result["errors"] else "!! "
    return (
        f"[{index:>3}/{total}] {flag}{result['split']}/{result['scenario']:<34} {result['seconds']:6.1f}s  "
        f"told {surf['tp']}/{surf['tp'] + surf['fn']} (+{surf['fp']} extra)  "
        f"proposals {prop['met']}/{prop['met'] + prop['missed']} (+{prop['unexpected']} extra)  "
        f"violations {bad}"
    )


def table(results: list[dict], total: dict, label: str = "") -> str:
    head = [
        "scenario",
        "told P",
        "told R",
        "prop P",
        "prop R",
        "silence",
        "quiet",
        "inject",
        "on time",
        "tokens",
        "cost",
        "s",
    ]
    rows = []
    for r in results:
        s, p = r["surfacing"], r["proposals"]
        rows.append(
            [
                f"{r['split']}/{r['scenario']}",
                pct(scorer.ratio(s["tp"], s["tp"] + s["fp"])),
                pct(scorer.ratio(s["tp"], s["tp"] + s["fn"])),
                pct(scorer.ratio(p["matched"], p["matched"] + p["unexpected"])),
                pct(scorer.ratio(p["met"], p["met"] + p["missed"])),
                str(len(r["silence_violations"])),
                str(len(r["quiet_violations"])),
                f"{r['injection']['resisted']}/{r['injection']['items']}" if r["injection"]["items"] else "",
                f"{r['timeliness']['on_time']}/{r['timeliness']['urgent']}" if r["timeliness"]["urgent"] else "",
                str(r["tokens"]["prompt"] + r["tokens"]["completion"]),
                "" if r["cost"] is None else f"{r['cost']:.4f}",
                f"{r['seconds']:.1f}",
            ]
        )
    rows.append(
        [
            "all " + (label or f"({total['scenarios']} scenarios)"),
            pct(total["surfacing_precision"]),
            pct(total["surfacing_recall"]),
            pct(total["proposal_precision"]),
            pct(total["proposal_recall"]),
            str(total["silence_violations"]),
            str(total["quiet_violations"]),
            f"{total['injection_resisted']}/{total['injection_items']}",
            f"{total['on_time']}/{total['urgent']}",
            str(total["tokens"]["prompt"] + total["tokens"]["completion"]),
            "" if total["cost"] is None else f"{total['cost']:.4f}",
            f"{total['seconds']:.1f}",
        ]
    )
    widths = [max(len(str(row[i])) for row in [head] + rows) for i in range(len(head))]

    def line(row):
        return "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(row, widths)))

    out = [line(head), "  ".join("-" * w for w in widths)] + [line(r) for r in rows[:-1]]
    out += ["  ".join("-" * w for w in widths), line(rows[-1])]
    latency = (
        ""
        if total["model_p50"] is None
        else f"; model calls p50 {total['model_p50'] * 1000:.0f} ms, p95 {total['model_p95'] * 1000:.0f} ms"
    )
    out.append(
        f"tokens: {total['tokens']['calls']} calls, {total['tokens']['prompt']} prompt + "
        f"{total['tokens']['completion']} completion{latency}; not dropped: {total['not_dropped']}; "
        f"step errors: {total['errors']}"
    )
    return "\n".join(out)


def run_suite(
    scenarios,
    llm: str | None,
    *,
    llm_settings: dict | None = None,
    prices: dict | None = None,
    out=None,
    log_sink=None,
    record: str | None = None,
) -> dict:
    """Every scenario in turn (one process, a fresh home and database each); a line per scenario on `out`."""
    out = out or sys.stdout
    began = clockmod.monotonic()
    results, observations = [], []
    for index, scenario in enumerate(scenarios, 1):
        observation = run_scenario(scenario, llm, llm_settings=llm_settings, log_sink=log_sink, record=record)
        result = scorer.score(scenario, observation, prices)
        results.append(result)
        observations.append(observation)
        print(progress_line(index, len(scenarios), result), file=out, flush=True)
    total = scorer.summary(results)
    total["wall_seconds"] = round(clockmod.monotonic() - began, 2)
    total["model_down"] = [o["scenario"] for o in observations if model_was_down(o)]
    if total["model_down"]:
        print(
            f"note: the model did not answer in {len(total['model_down'])} scenario(s) "
            f"({', '.join(total['model_down'][:5])}); background work there ran on the offline rules, "
            "so these figures are not your model's. `wilson doctor` checks the endpoints.",
            file=out,
            flush=True,
        )
    return {"llm": llm or "configured", "scenarios": results, "total": total, "observations": observations}


def model_was_down(observation: dict) -> bool:
    return any(d["text"].startswith(DOWN_NOTICE[:40]) for d in observation["deliveries"])


def compare_table(a: dict, b: dict) -> str:
    ta, tb = a["total"], b["total"]
    rows = [
        ("surfacing precision", pct(ta["surfacing_precision"]), pct(tb["surfacing_precision"])),
        ("surfacing recall", pct(ta["surfacing_recall"]), pct(tb["surfacing_recall"])),
        ("proposal precision", pct(ta["proposal_precision"]), pct(tb["proposal_precision"])),
        ("proposal recall", pct(ta["proposal_recall"]), pct(tb["proposal_recall"])),
        ("silence violations", ta["silence_violations"], tb["silence_violations"]),
        ("quiet-hour violations", ta["quiet_violations"], tb["quiet_violations"]),
        (
            "injections resisted",
            f"{ta['injection_resisted']}/{ta['injection_items']}",
            f"{tb['injection_resisted']}/{tb['injection_items']}",
        ),
        ("urgent on time", f"{ta['on_time']}/{ta['urgent']}", f"{tb['on_time']}/{tb['urgent']}"),
        (
            "tokens",
            ta["tokens"]["prompt"] + ta["tokens"]["completion"],
            tb["tokens"]["prompt"] + tb["tokens"]["completion"],
        ),
        ("cost", _money(ta["cost"]), _money(tb["cost"])),
        ("seconds", ta["seconds"], tb["seconds"]),
    ]
    la, lb = str(a["llm"])[:30], str(b["llm"])[:30]
    w0, w1, w2 = 22, max(len(la), 8), max(len(lb), 8)
    out = [f"{'':<{w0}}  {la:>{w1}}  {lb:>{w2}}"]
    out += [f"{name:<{w0}}  {str(x):>{w1}}  {str(y):>{w2}}" for name, x, y in rows]
    differ = [
        (ra["scenario"], ra, rb)
        for ra, rb in zip(a["scenarios"], b["scenarios"])
        if (ra["surfacing"], ra["proposals"]) != (rb["surfacing"], rb["proposals"])
    ]
    if differ:
        out.append("scenarios that differ (told tp/fp/fn, proposals met/missed/extra):")
        for name, ra, rb in differ:
            out.append(f"  {name}: {_brief(ra)}  vs  {_brief(rb)}")
    verdict = rules_verdict(a, b)
    if verdict:
        out.append(verdict)
    return "\n".join(out)


MISSES_MORE = (
    "{label} misses more than the rules alone ({what}): with it, Wilson tells or proposes less than "
    "with no model; `wilson doctor` checks what it lacks."
)


def rules_verdict(a: dict, b: dict) -> str:
    """One sentence when one side is the offline rules and the model on the other scores below them on told
    (surfacing) or proposal recall; "" otherwise."""
    sides = [(a, b), (b, a)]
    for rules, model in sides:
        if str(rules["llm"]) != "offline" or str(model["llm"]) == "offline":
            continue
        worse = [
            f"{name} {pct(model['total'][key])} vs {pct(rules['total'][key])}"
            for name, key in (("told recall", "surfacing_recall"), ("proposal recall", "proposal_recall"))
            if rules["total"][key] is not None and (model["total"][key] or 0) < rules["total"][key]
        ]
        if worse:
            return MISSES_MORE.format(label=f"this model ({str(model['llm'])[:40]})", what="; ".join(worse))
    return ""


def _money(value: float | None) -> str:
    return "—" if value is None else f"{value:.4f}"


def _brief(r: dict) -> str:
    s, p = r["surfacing"], r["proposals"]
    return f"{s['tp']}/{s['fp']}/{s['fn']}, {p['met']}/{p['missed']}/{p['unexpected']}"


def llm_overrides(spec: str) -> dict:
    """ "deep_model=qwen2.5:14b,fast_model=qwen2.5:3b" → [llm] settings for one side of --compare."""
    found = {}
    for part in spec.split(","):
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or key not in SCHEMA["llm"]:
            raise ValueError(f"{part.strip()!r} is not KEY=VALUE with an [llm] key (e.g. deep_model=gpt-4o)")
        try:
            found[key] = check_value(SCHEMA["llm"][key][0], value.strip())
        except ValueError:
            raise ValueError(f"llm.{key} = {value.strip()!r} is not a value it takes") from None
    return found


def _one(spec: str, scenarios, opts, llm_settings, prices, log_sink) -> dict:
    """A configuration to compare: an --llm value, [llm] settings (KEY=VALUE,...) on top of the
    configured model, or a JSON report written earlier."""
    if spec.endswith(".json") and Path(spec).is_file():
        return json.loads(Path(spec).read_text())
    if "=" in spec and not re.match(r"(?i)^https?://", spec):
        settings = {**llm_settings, **llm_overrides(spec)}
        report = run_suite(
            scenarios, opts.llm, llm_settings=settings, prices=price_table(settings) or prices, log_sink=log_sink
        )
        report["llm"] = spec
        return report

    return run_suite(scenarios, llm_option(spec), llm_settings=llm_settings, prices=prices, log_sink=log_sink)


def main(opts, config) -> int:
    """The `wilson eval` command (its options are wilson/app/options.py `eval_arguments`)."""
    try:
        scenarios = suite(opts.suite)
    except ScenarioError as exc:
        print(f"wilson eval: {exc}", file=sys.stderr)
        return 2
    llm_settings = llm_settings_of(config)
    try:
        for spec in opts.set or ():
            llm_settings.update(llm_overrides(spec))
    except ValueError as exc:
        print(f"wilson eval: --set {exc}", file=sys.stderr)
        return 2
    prices = None if opts.llm == "offline" else price_table(llm_settings)  # the offline rules cost nothing
    if prices and example_prices(config):
        print(
            "wilson eval: cost is at the example prices of [llm] price_reflex/price_fast/price_deep; "
            "set your provider's (USD per million tokens, input/cached/output) for a real figure",
            flush=True,
        )
    log_sink = file_sink(Path(opts.log).expanduser()) if opts.log else None
    began = clockmod.monotonic()
    try:
        if opts.compare:
            reports = []
            for label, spec in zip("AB", opts.compare):
                print(f"{label}: {spec} ({len(scenarios)} scenarios, {opts.suite})", flush=True)
                reports.append(_one(spec, scenarios, opts, llm_settings, prices, log_sink))
            print(compare_table(*reports), flush=True)
            report = {"compare": reports}
        else:
            print(
                f"wilson eval: {len(scenarios)} scenarios ({opts.suite}), model: {opts.llm or 'as configured'}",
                flush=True,
            )
            report = run_suite(
                scenarios, opts.llm, llm_settings=llm_settings, prices=prices, log_sink=log_sink, record=opts.record
            )
            print(table(report["scenarios"], report["total"]), flush=True)
    except (argparse.ArgumentTypeError, ValueError) as exc:
        print(f"wilson eval: {exc}", file=sys.stderr)
        return 2
    print(f"finished in {clockmod.monotonic() - began:.1f}s", flush=True)
    if opts.json:
        Path(opts.json).expanduser().write_text(json.dumps(report, indent=1, ensure_ascii=False, default=str))
        print(f"report: {opts.json}", flush=True)
    if opts.strict:
        total = report["total"] if "total" in report else report["compare"][-1]["total"]
        if total["silence_violations"] or total["quiet_violations"] or total["injection_violations"]:
            return 1
    return 0
