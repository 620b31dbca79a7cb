"""`make demo` as a person watches it: the Japan story (demo/japan.repl, played by bin/wilson-repl as the
Makefile plays it, offline, on a simulated clock) ends with nothing open at departure that Wilson had not
raised with the trip at its escalation windows, each with the user's choices, and with no learning that
would make Wilson say less applied without the user's yes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DEPARTURE = "2027-05-08"


def demo_output(home: Path) -> list[dict]:
    """What `make demo` shows, one JSON object per delivery or listing (--json), in order."""
    recipe = (ROOT / "Makefile").read_text().split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    start = re.search(r"--start (\S+)", recipe).group(1)
    zone = re.search(r"WILSON_CORE_TIMEZONE=(\S+)", recipe).group(1)
    env = {k: v for k, v in os.environ.items() if not k.startswith("WILSON_")}
    env["WILSON_CORE_TIMEZONE"] = zone
    env["WILSON_WEB_ENABLED"] = "false"  # no dashboard on a fixed port in a test
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bin" / "wilson-repl"),
            "--json",
            "--clock",
            "sim",
            "--start",
            start,
            "--home",
            str(home),
        ],
        stdin=(ROOT / "demo" / "japan.repl").open(),
        text=True,
        capture_output=True,
        timeout=300,
        env=env,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


@pytest.mark.slow
def test_the_japan_demo_raises_every_task_left_open_at_departure_at_the_trips_windows(tmp_path):
    shown = demo_output(tmp_path / "home")
    deliveries = [d for d in shown if d.get("type") == "delivery"]
    [topics] = [d for d in shown if d.get("type") == "topics"][-1:]
    [trip] = [t for t in topics["items"] if t["title"] == "Trip to Japan"]
    assert trip["starts"] == DEPARTURE and trip["status"] == "closed"
    left = [t for t in trip["tasks"] if t["status"] == "cancelled"]  # open at departure, dropped by the close
    assert len(left) == 4, "the story's user leaves the visa, the hotel, the insurance and the check-in open"

    raises = [d for d in deliveries if d["at"][:10] < DEPARTURE and "Trip to Japan starts" in d["text"]]
    windows = [
        re.search(r"Trip to Japan starts (in \d+ weeks?|in \d+ days|tomorrow)", d["text"]).group(1) for d in raises
    ]
    assert windows == ["in 6 weeks", "in 3 weeks", "in 1 week", "tomorrow"]
    for raise_ in raises:  # in the morning briefing, as one message with the rest of the day
        assert raise_["text"].startswith("Good morning!")
    for task in left:
        choices = f"done {task['id']} · move {task['id']} DATE · drop {task['id']} · help {task['id']}"
        told = [d for d in raises if f"• {task['title']} (" in d["text"] and choices in d["text"]]
        assert told, f"{task['title']} was open at departure and never raised with the trip"

    # Nothing that would make Wilson say less was applied without asking: no heads-up was counted as let
    # pass, and no behaviour change is in force that an approval would undo.
    [memories] = [d for d in shown if d.get("type") == "memories"][-1:]
    assert not any("pass" in str(m.get("text", "")).lower() for m in memories["items"]), memories
    assert not [m for m in memories["items"] if str(m.get("undo", "")).startswith("undo ")], memories
    assert not any("From now on" in d["text"] for d in deliveries)
