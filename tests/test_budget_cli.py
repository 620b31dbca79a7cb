"""`wilson budget`: tokens and roughly what they cost, per day and role, at the configured prices."""

from __future__ import annotations

import sqlite3

from tests.test_cli_fuzz import run_main


def spend(home, rows) -> None:
    with sqlite3.connect(home / "wilson.sqlite3") as conn:  # what the synapse recorded, as another process sees it
        conn.executemany('INSERT INTO token_usage (day, role, calls, prompt_tokens, completion_tokens, user_tokens) '
                         'VALUES (?, ?, ?, ?, ?, 0)', rows)


def test_budget_prices_each_days_tokens_per_role_newest_first(tmp_path, monkeypatch):
    home = tmp_path / "home"
    assert run_main(["--home", str(home), "budget"])[1].strip() == (
        "No model has been used yet: the offline rules spend nothing.")
    spend(home, [("2027-01-04", "deep", 3, 1_000_000, 0), ("2027-01-05", "deep", 2, 500_000, 100_000),
                 ("2027-01-05", "fast", 9, 2_000_000, 0)])
    monkeypatch.setenv("WILSON_LLM_PRICE_DEEP", "2.00/0.50/8.00")
    monkeypatch.setenv("WILSON_LLM_PRICE_FAST", "0.40/0.10/1.60")
    code, out, _ = run_main(["--home", str(home), "budget", "--days", "1"])
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith("Model use, the last 1 day with any")
    assert [line.split()[:3] for line in lines[1:3]] == [["2027-01-05", "deep", "2"], ["2027-01-05", "fast", "9"]]
    assert lines[1].endswith("$1.80") and lines[2].endswith("$0.8000"), "500k in at $2 + 100k out at $8; 2M in at $0.40"
    assert lines[3] == "  in all: about $2.60"
    assert "2027-01-04" in run_main(["--home", str(home), "budget"])[1], "seven days by default"
