"""Finding scenarios: the built-in suite (package data, split into dev and test) or a person's own files.

`test` scenarios are held back from tuning: change prompts and offline rules against `dev` only, and
read `test` to see whether a change generalises.
"""

from __future__ import annotations

from pathlib import Path

from wilson.app.eval.format import SPLITS, Scenario, ScenarioError, load

BUILT_IN = Path(__file__).resolve().parent / "scenarios"
SUITES = (*SPLITS, "all")


def suite(name_or_path: str) -> list[Scenario]:
    """`dev`, `test`, `all`, or a path to one .toml file or a directory of them (searched recursively).
    Sorted by name; ScenarioError for a missing path, an empty suite, a bad file or a duplicated name."""
    if name_or_path in SUITES:
        files = sorted(
            p
            for split in (SPLITS if name_or_path == "all" else (name_or_path,))
            for p in (BUILT_IN / split).glob("*.toml")
        )
        found = [load(p) for p in files]
        for scenario, path in zip(found, files):
            if scenario.split != path.parent.name:
                raise ScenarioError(f"{path}: says split = {scenario.split!r} but lives in {path.parent.name}/")
    else:
        path = Path(name_or_path).expanduser()
        if path.is_file():
            files = [path]
        elif path.is_dir():
            files = sorted(path.rglob("*.toml"))
        else:
            raise ScenarioError(f"{name_or_path}: not dev, test, all, nor a scenario file or directory")
        found = [load(p) for p in files]
    if not found:
        raise ScenarioError(f"{name_or_path}: no scenarios (*.toml) there")
    names: dict[str, str] = {}
    for scenario in found:
        if scenario.name in names:
            raise ScenarioError(f"{scenario.path}: the name {scenario.name!r} is also used by {names[scenario.name]}")
        names[scenario.name] = scenario.path
    return sorted(found, key=lambda s: (s.split, s.name))
