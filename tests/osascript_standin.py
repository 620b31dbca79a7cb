"""A stand-in for macOS's `osascript` talking to Calendar.app, put on PATH by the Apple Calendar tests.

It checks the script it is given — that it is one of Wilson's four (read, create, move, cancel), addressed to
Calendar, with the user's words passed as arguments and never written into the script — and answers as
Calendar.app does: rows of the read script (uid, title, start, end, all day, location, status, recurrence, tab
separated; dates as the script's stamp() writes them, `true`/`false`, Calendar's status words `none`,
`confirmed`, `tentative`, `cancelled`, a recurrence rule without its RRULE: prefix), one line from a write
script, or osascript's error lines and exit status 1. Calendar's events live in a JSON file
(WILSON_TEST_CALENDAR); every call is appended to WILSON_TEST_OSASCRIPT_LOG. WILSON_TEST_OSASCRIPT_DENY=1 answers
as macOS does when the user refused Wilson control of Calendar in the permission dialog.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from datetime import datetime, timedelta

KINDS = {
    "read": ("repeat with c in calendars", "my row(e)"),
    "create": ("make new event at end of events of target", "on run argv"),
    "move": ("set start date of e to startDate", "on run argv"),
    "cancel": ("delete e", "on run argv"),
}
ARGS = {"read": 0, "create": 8, "move": 4, "cancel": 1}


def fail(message: str, code: int) -> None:
    print(f"execution error: {message} ({code})", file=sys.stderr)
    sys.exit(1)


def kind_of(script: str) -> str:
    if 'tell application "Calendar"' not in script:
        fail("the script does not address Calendar", -2741)
    found = [kind for kind, marks in KINDS.items() if all(mark in script for mark in marks)]
    if len(found) != 1:
        print("0:0: syntax error: A unknown token can’t go here. (-2740)", file=sys.stderr)
        sys.exit(1)
    return found[0]


def stamp(value: datetime) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%S")


def mkdate(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M" if len(text) > 10 else "%Y-%m-%d")


def events(state: dict):
    for calendar in state["calendars"]:
        for event in calendar["events"]:
            yield calendar, event


def single(state: dict, title: str, *, live: bool) -> tuple[dict | None, str | None]:
    found = [(c, e) for c, e in events(state) if e["summary"] == title and (not live or e["status"] != "cancelled")]
    if not found:
        return None, "NONE"
    if len(found) > 1:
        return None, f"MANY {len(found)}"
    if found[0][1].get("recurrence"):
        return None, "REPEATS"
    return found[0][1], None


def main(argv: list[str]) -> None:
    if len(argv) < 2 or argv[0] != "-e":
        fail("usage: osascript -e script [argument ...]", -50)
    script, args = argv[1], argv[2:]
    kind = kind_of(script)
    with open(os.environ["WILSON_TEST_OSASCRIPT_LOG"], "a") as log:
        log.write(json.dumps({"kind": kind, "script": script, "args": args}) + "\n")
    if os.environ.get("WILSON_TEST_OSASCRIPT_DENY"):
        fail("Not authorized to send Apple events to Calendar.", -1743)
    if len(args) != ARGS[kind]:
        fail(f"Can’t get item {ARGS[kind]} of {{{', '.join(args)}}}.", -1728)
    for word in args:  # the user's words must come as arguments, not written into the script
        if len(word) > 3 and word not in ("true", "false") and word in script:
            fail(f"the script contains its own argument {word!r}", -2741)
    path = os.environ["WILSON_TEST_CALENDAR"]
    with open(path) as f:
        state = json.load(f)
    out = ""
    if kind == "read":
        for _, e in events(state):
            out += (
                "\t".join(
                    [
                        e["uid"],
                        e["summary"],
                        e["start"],
                        e["end"],
                        e["allday"],
                        e.get("location", ""),
                        e["status"],
                        e.get("recurrence", ""),
                    ]
                )
                + "\n"
            )
    elif kind == "create":
        name, marker, title, start, end, all_day, location, notes = args
        made = next((e for _, e in events(state) if e.get("url") == marker), None)
        if made is None:
            targets = [c for c in state["calendars"] if (c["name"] == name if name else c["writable"])]
            if not targets:
                fail(f'Calendar got an error: Can’t get calendar "{name}".', -1728)
            begin = mkdate(start)
            finish = (
                mkdate(end) + timedelta(days=1)
                if end and all_day == "true"
                else mkdate(end)
                if end
                else (begin + (timedelta(days=1) if all_day == "true" else timedelta(hours=1)))
            )
            made = {
                "uid": str(uuid.uuid4()).upper(),
                "summary": title,
                "start": stamp(begin),
                "end": stamp(finish),
                "allday": all_day,
                "location": location,
                "description": notes,
                "status": "none",
                "url": marker,
            }
            targets[0]["events"].append(made)
        out = f"OK\t{made['uid']}"
    elif kind == "move":
        title, start, end, all_day = args
        event, said = single(state, title, live=True)
        if event is not None:
            lasting = datetime.fromisoformat(event["end"]) - datetime.fromisoformat(event["start"])
            begin = mkdate(start)
            finish = (mkdate(end) + timedelta(days=1) if all_day == "true" else mkdate(end)) if end else begin + lasting
            event.update(start=stamp(begin), end=stamp(finish), allday=all_day)
            said = f"OK\t{event['uid']}"
        out = said
    else:
        event, said = single(state, args[0], live=False)
        if event is not None:
            for calendar in state["calendars"]:
                calendar["events"] = [e for e in calendar["events"] if e is not event]
            said = f"OK\t{event['uid']}"
        out = said
    with open(path, "w") as f:
        json.dump(state, f)
    print(out, end="" if kind == "read" else "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
