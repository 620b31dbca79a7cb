"""`wilson memory import FILE.jsonl` and `wilson memory recall "QUERY"`, through the command line's own entry."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.cli_support import run_main

ROOT = Path(__file__).resolve().parent.parent
LINES = [
    {"text": "the user books flights late", "at": "2027-01-05T08:00:00+01:00", "kind": "belief", "source": "task:6"},
    {"text": "Anna likes orchids", "at": "2027-01-06T08:00:00+01:00"},
    {"text": "flights to Lisbon were cheap in March", "at": "2027-01-07T08:00:00+01:00", "source": "email:9"},
]


def write_lines(path: Path, extra: list[str] = ()) -> Path:
    path.write_text("\n".join([json.dumps(line) for line in LINES] + list(extra)) + "\n")
    return path


def test_import_stores_each_good_line_and_names_each_bad_one(tmp_path):
    source = write_lines(tmp_path / "m.jsonl", ["not json", json.dumps({"at": "2027-01-01"})])
    code, out, err = run_main(["--home", str(tmp_path / "home"), "memory", "import", str(source)])
    assert code == 0 and out.strip() == "stored 3 memories; 2 line(s) skipped"
    assert [line.split(":")[1].strip() for line in err.splitlines() if line.startswith("wilson memory:")] == [
        "line 4",
        "line 5",
    ]


def test_recall_json_gives_exactly_the_agreed_keys_best_first(tmp_path):
    home = str(tmp_path / "home")
    run_main(["--home", home, "memory", "import", str(write_lines(tmp_path / "m.jsonl"))])
    code, out, _ = run_main(["--home", home, "memory", "recall", "flights", "--limit", "5", "--json"])
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and rows and all(list(r) == ["id", "kind", "score", "source", "text"] for r in rows)
    assert [r["text"] for r in rows] == ["the user books flights late", "flights to Lisbon were cheap in March"]
    assert rows[0]["kind"] == "belief" and rows[0]["source"] == "task:6" and rows[0]["score"] >= rows[1]["score"]
    code, out, _ = run_main(["--home", home, "memory", "recall", "orchid"])
    assert code == 0 and out.startswith("#") and "Anna likes orchids" in out


def test_wilson_home_is_honoured_and_a_missing_file_is_one_line(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("WILSON_")}
    env["WILSON_HOME"] = str(tmp_path / "home")
    run = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bin" / "wilson"),
            "--log-level",
            "WARNING",
            "memory",
            "import",
            str(write_lines(tmp_path / "m.jsonl")),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0 and (tmp_path / "home" / "wilson.sqlite3").exists(), run.stderr
    code, out, err = run_main(["--home", str(tmp_path / "home"), "memory", "import", str(tmp_path / "missing.jsonl")])
    assert code == 2 and out == "" and err.count("\n") == 1 and "cannot read" in err


def test_ten_thousand_lines_import_in_one_go(tmp_path):
    source = tmp_path / "big.jsonl"
    source.write_text(
        "".join(
            json.dumps({"text": f"note {n} about topic {n % 97}", "at": "2027-01-05T08:00:00Z"}) + "\n"
            for n in range(10_000)
        )
    )
    code, out, _ = run_main(["--home", str(tmp_path / "home"), "memory", "import", str(source)])
    assert code == 0 and out.strip() == "stored 10000 memories"
    code, out, _ = run_main(["--home", str(tmp_path / "home"), "memory", "recall", "topic 42", "--json"])
    assert len(out.splitlines()) == 10


# At the terminal: `forget N` is a proposal like any other --------------------------------
def test_forget_at_the_terminal_proposes_and_only_the_approval_retires_the_belief(make_app):
    import io

    from storage import engram
    from storage.models import Approval, Memory
    from wilson.app.repl import Repl

    app = make_app(llm="offline")
    belief = engram.store("belief", "the user books flights late", ["task:1"], app.clock.now())
    out = io.StringIO()
    repl = Repl(app, out=out)
    repl.run_line(f"forget {belief.id}")
    approval = Approval.get()
    assert approval.items.get().tool == "forget_memory" and f"memory {belief.id} is wrong" in approval.reason
    assert [d["approval"]["id"] for d in app.user_deliveries() if d["approval"]] == [approval.id]  # shown
    assert Memory.get_by_id(belief.id).invalidated_at is None  # nothing happened yet
    repl.run_line(f"approve {approval.id}")
    assert Memory.get_by_id(belief.id).invalidated_at is not None
    repl.run_line(f"forget {belief.id}")  # gone already: said in one line, nothing proposed
    assert "already forgotten" in out.getvalue().splitlines()[-1] and Approval.select().count() == 1
    repl.run_line("forget 999999")
    assert "no learned memory 999999" in out.getvalue().splitlines()[-1]


def test_a_run_the_user_did_not_start_cannot_use_a_tool_that_speaks_for_the_user(db):
    from datetime import datetime, timezone

    from actors.cortex.calls import RunOutcome, handle_call
    from storage import engram

    now = datetime(2027, 1, 5, 8, 0, tzinfo=timezone.utc)
    belief = engram.store("belief", "the user books flights late", ["task:1"], now)
    outcome = RunOutcome()
    answer = handle_call("forget_memory", {"memory": belief.id}, outcome, now, timezone.utc, origin="background")
    assert "only for a request the user made" in answer["error"] and outcome.proposals == []
    assert outcome.rejected_calls[0][0] == "forget_memory"  # traced as refused with the run
    asked = RunOutcome()
    assert (
        handle_call(
            "forget_memory",
            {"memory": belief.id},
            asked,
            now,
            timezone.utc,
            origin="user",
            user_id="owner",
            owner="owner",
        )["status"]
        == "proposed"
    )
