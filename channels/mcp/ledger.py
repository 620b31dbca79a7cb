"""The record of approved MCP calls, so that a restart neither repeats nor loses one.

The approval gate executes an item inside its database transaction; an MCP call is outside any
transaction. If Wilson is killed after the server acted but before the gate's commit, the gate would run
the item again on recovery. So before the call a file says "calling" for the item (written and synced),
and after it "done" with the result: an item found "done" is not called again (its result is reused),
and one found "calling" has an unknown outcome: it fails with that said, and is never retried blindly.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

CALLING, DONE = "calling", "done"


class UnknownOutcome(RuntimeError):
    """Wilson stopped while the server was working on this approved call: it may or may not have acted."""


def _path(home: Path, item_id: int) -> Path:
    return Path(home) / "mcp-calls" / f"item-{int(item_id)}.json"


def _write(path: Path, record: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(record, handle, ensure_ascii=False)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)  # whole or not at all
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def once(home: Path, item_id: int, server: str, tool: str, make_call) -> dict:
    """`make_call()`'s result for this approved item, called at most once across restarts."""
    path = _path(home, item_id)
    if path.exists():
        record = json.loads(path.read_text(encoding="utf-8"))
        if record.get("state") == DONE:
            return record["result"]
        raise UnknownOutcome(f"Wilson stopped while {server} was running {tool} for this approval, so whether it "
                             f"happened is unknown; it is not repeated. Check {server} yourself")
    _write(path, {"state": CALLING, "server": server, "tool": tool})
    result = make_call()
    _write(path, {"state": DONE, "server": server, "tool": tool, "result": result})
    return result
