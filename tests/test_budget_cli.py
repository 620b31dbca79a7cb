"""`wilson budget`: tokens and roughly what they cost, per day and role, at the configured prices."""

from __future__ import annotations

import sqlite3

from tests.cli_support import run_main


def spend(home, rows) -> None:
    with sqlite3.connect(home / "wilson.sqlite3") as conn:  # what the synapse recorded, as another process sees it
        conn.executemany(
            "INSERT INTO token_usage (day, role, calls, prompt_tokens, completion_tokens, user_tokens) "
            "VALUES (?, ?, ?, ?, ?, 0)",
            rows,
        )


def test_budget_prices_each_days_tokens_per_role_newest_first(tmp_path, monkeypatch):
    home = tmp_path / "home"
    assert run_main(["--home", str(home), "budget"])[1].strip() == (
        "No model has been used yet: the offline rules spend nothing."
    )
    spend(
        home,
        [
            ("2027-01-04", "deep", 3, 1_000_000, 0),
            ("2027-01-05", "deep", 1, 500_000, 100_000),
            ("2027-01-05", "fast", 9, 2_000, 0),
            ("2027-01-05", "retired", 2, 10, 0),
        ],
    )
    monkeypatch.setenv("WILSON_LLM_PRICE_DEEP", "2.00/0.50/8.00")
    monkeypatch.setenv("WILSON_LLM_PRICE_FAST", "0.40/0.10/1.60")
    code, out, _ = run_main(["--home", str(home), "budget", "--days", "1"])
    lines = out.splitlines()
    assert code == 0 and lines[0] == "Model use on the last 1 day it was used (UTC):"
    assert [line.split()[:4] for line in lines[1:4]] == [
        ["2027-01-05", "deep", "1", "call"],
        ["2027-01-05", "fast", "9", "calls"],
        ["2027-01-05", "retired", "2", "calls"],
    ]
    # 500k in at $2 + 100k out at $8; 2,000 in at $0.40; a role no longer configured has no price
    assert [line.split("about ")[1] for line in lines[1:4]] == ["$1.80", "$0.0008", "$0.00"]
    assert lines[4] == "  in all about $1.80" and len(lines) == 5, "the person's own prices: no example note"
    assert "2027-01-04" in run_main(["--home", str(home), "budget"])[1], "seven days by default"


def test_budget_says_when_the_prices_are_the_shipped_examples(tmp_path):
    home = tmp_path / "home"
    run_main(["--home", str(home), "budget"])
    spend(home, [("2027-01-05", "deep", 1, 1_000_000, 0)])
    out = run_main(["--home", str(home), "budget"])[1]
    assert "about $2.00" in out and "example prices" in out.splitlines()[-1]
