"""The benchmark suite: `python -m bench [--quick]` (what `make bench` and `make bench-quick` run),
and `python -m bench --smoke`, the short run with the watchdog on that `make test` includes.

Each benchmark runs in its own Python process (no benchmark inherits another's
threads, heap or database) and prints its figures beside a baseline measured in
the same run, with the ratio. A missed goal is reported, not an error; the exit
status is non-zero only when a benchmark could not run (for the smoke run: also when
it stalled, lost or repeated something, or did not finish within SMOKE_TIMEOUT).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from bench.common import ROOT, Figure, machine, print_result
from wilson.clock import monotonic

BENCHMARKS = {
    "realtime": "realtime under load (p50/p99 reply time, idle vs loaded)",
    "pipeline": "pipeline overhead (stimuli/s vs SQLite replay and raw Pykka)",
    "proactivity": "cost of proactivity (a simulated week: Wilson vs naive vs heartbeat)",
    "prompts": "prompt cost (a user's hello vs a planning request; 60 open tasks vs 6)",
    "growth": "growth (tick scan, engram recall, inbox claim at 1k/10k/100k)",
    "footprint": "footprint (time to ready, RSS)",
}
SMOKE = "smoke (the whole organism through a short story, watchdog on; meant to take under 30 s)"
SMOKE_TIMEOUT = 90  # a stall, not a slow machine: the run itself gives up on a stalled step after 20 s


def run_one(name: str, quick: bool, timeout: float) -> dict:
    command = [sys.executable, "-m", f"bench.{name}", "--json"] + (["--quick"] if quick else [])
    started = monotonic()
    try:
        done = subprocess.run(command, cwd=str(ROOT), stdout=subprocess.PIPE, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"name": name, "error": f"did not finish within {timeout:.0f} s", "figures": []}
    for line in reversed(done.stdout.splitlines()):
        if line.startswith("BENCH-JSON "):
            res = json.loads(line[len("BENCH-JSON "):])
            res["seconds"] = round(monotonic() - started, 1)
            return res
    return {"name": name, "error": f"exited {done.returncode} without a result", "figures": []}


def markdown(results: list[dict]) -> str:
    lines = ["| benchmark | figure | value | baseline | ratio | goal | met |", "|---|---|---|---|---|---|---|"]
    for res in results:
        for fig in res.get("figures") or []:
            f = Figure(**fig)
            unit = f" {f.unit}" if f.unit else ""
            value = "n/a" if f.value is None else f"{f.value:,}{unit}" if isinstance(f.value, int) else f"{f.value}{unit}"
            base = "" if not f.baseline_label else f"{f.baseline_label}: " + (
                "n/a" if f.baseline is None else f"{f.baseline:,}{unit}" if isinstance(f.baseline, int)
                else f"{f.baseline}{unit}")
            met = "" if f.ok is None else ("yes" if f.ok else "**no**")
            lines.append(f"| {res['name']} | {f.label} | {value} | {base} | "
                         f"{'' if f.ratio is None else f'{f.ratio:.3g}'} | {f.goal} | {met} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description="Wilson's benchmarks; each figure is "
                                     "printed with a baseline from the same run and the ratio.")
    parser.add_argument("--quick", action="store_true", help="fewer samples and a shorter simulated week (< 2 min)")
    parser.add_argument("--smoke", action="store_true", help="only the smoke run (under 30 s, watchdog on); "
                        "exits non-zero when it stalls or loses or repeats anything")
    parser.add_argument("--only", help="comma-separated subset: " + ", ".join(BENCHMARKS))
    parser.add_argument("--json", metavar="FILE", help="also write every result (with details) to FILE")
    parser.add_argument("--markdown", action="store_true", help="end with a Markdown table of the figures")
    args = parser.parse_args(argv)
    names = list(BENCHMARKS)
    titles = dict(BENCHMARKS)
    if args.smoke:
        if args.only:
            parser.error("--smoke runs the smoke run alone; leave out --only")
        names, titles = ["smoke"], {"smoke": SMOKE}
    elif args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = [n for n in names if n not in BENCHMARKS]
        if unknown:
            parser.error(f"unknown benchmark(s) {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}")
    info = machine()
    kind = " (smoke)" if args.smoke else " (quick)" if args.quick else ""
    print(f"Wilson benchmarks{kind}: {info['nproc']} CPUs, {info['memory_gib']} GiB, "
          f"Python {info['python']}, {info['cpu']}", flush=True)
    started = monotonic()
    results, failed = [], 0
    for name in names:
        print(f"-- {titles[name]} ...", flush=True)
        res = run_one(name, args.quick, timeout=SMOKE_TIMEOUT if args.smoke else 240 if args.quick else 480)
        results.append(res)
        if res.get("error"):
            failed += 1
            print(f"== {name}: FAILED: {res['error']}", flush=True)
        else:
            print_result(res)
            print(f"  ({res['seconds']} s)", flush=True)
    missed = [(r["name"], f["label"]) for r in results for f in r.get("figures") or [] if f.get("ok") is False]
    met = sum(1 for r in results for f in r.get("figures") or [] if f.get("ok") is True)
    print(f"\n{met} goal(s) met, {len(missed)} missed{', ' + str(failed) + ' benchmark(s) failed' if failed else ''}"
          f"; {monotonic() - started:.0f} s in all", flush=True)
    for bench_name, label in missed:
        print(f"  missed: {bench_name}: {label}", flush=True)
    if args.markdown:
        print("\n" + markdown(results))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"machine": info, "quick": args.quick, "results": results}, handle, indent=1, default=str)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
