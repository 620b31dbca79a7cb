"""The tests' own support exists once: no test file imports another test file, the shared fixtures (the
scripted model, Dovecot, the databases, a running Wilson) are defined in conftest.py alone, and waiting for a
condition goes through the one poll helper (tests/poll.py), which fails the test when the wait runs out."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.poll import wait_for
from wilson.kernel import clock as clockmod

TESTS = Path(__file__).resolve().parent
SHARED = {"scripted", "serve", "dovecot", "own_dovecot", "sink", "db", "any_db", "home", "make_app", "web", "fake"}
POLLERS = {"wait_for", "eventually", "wait_until", "poll_until", "until"}


def _trees():
    for path in sorted(TESTS.glob("*.py")):
        yield path, ast.parse(path.read_text(encoding="utf-8"), str(path))


def _is_fixture(node) -> bool:
    return any("fixture" in ast.unparse(d) for d in getattr(node, "decorator_list", []))


def test_no_test_file_imports_another():
    found = [
        f"{path.name}:{node.lineno} {node.module}"
        for path, tree in _trees()
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tests.test_")
    ]
    found += [
        f"{path.name}:{node.lineno}"
        for path, tree in _trees()
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        and node.module == "tests"
        and any(a.name.startswith("test_") for a in node.names)
    ]
    assert not found, f"shared steps belong in a support module (tests/*_support.py): {found}"


def test_the_shared_fixtures_are_defined_once_in_conftest():
    elsewhere = []
    for path, tree in _trees():
        if path.name == "conftest.py":
            continue
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and _is_fixture(node) and node.name in SHARED:
                # a module may narrow one to its needs by name (db = each backend), never build its own
                alias = (
                    len(node.body) <= 2
                    and isinstance(node.body[-1], ast.Return)
                    and {a.arg for a in node.args.args} & SHARED
                )
                if not alias:
                    elsewhere.append(f"{path.name}:{node.lineno} {node.name}")
    assert not elsewhere, f"defined again outside conftest.py: {elsewhere}"
    conftest = ast.parse((TESTS / "conftest.py").read_text(encoding="utf-8"))
    defined = [n.name for n in conftest.body if isinstance(n, ast.FunctionDef) and _is_fixture(n)]
    assert SHARED <= set(defined) and len(defined) == len(set(defined))


def test_waiting_for_a_condition_goes_through_the_one_poll_helper():
    helpers = [
        f"{path.name}:{node.lineno} {node.name}"
        for path, tree in _trees()
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name in POLLERS and path.name != "poll.py"
    ]
    assert not helpers, f"poll helpers besides tests/poll.py: {helpers}"


def test_the_poll_helper_returns_what_it_waited_for_and_fails_when_time_runs_out():
    started = clockmod.monotonic()
    seen = iter([None, 0, "", "there"])
    assert wait_for(lambda: next(seen), 5, "the value") == "there"
    with pytest.raises(AssertionError, match=r"timed out after 0.05s waiting for the door to open"):
        wait_for(lambda: False, 0.05, "the door to open")
    flaky = iter([KeyError("not yet"), "done"])

    def creating():
        value = next(flaky)
        if isinstance(value, Exception):
            raise value
        return value

    assert wait_for(creating, 5, meanwhile=(KeyError,)) == "done"
    assert clockmod.monotonic() - started < 5
