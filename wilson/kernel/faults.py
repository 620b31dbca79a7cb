"""Named kill points for the crash tests: the process dies at a hand-off moment, on purpose.

`point("after-commit:reply")` does nothing unless `WILSON_FAULT_POINTS` names it. The
variable holds comma-separated `name` or `name@N` (die at the Nth time the point is
reached, counting from 1); the crash harness sets it in the child process only, before it
starts, so whether it is set is read once, at import. Dying is SIGKILL to ourselves: no
finally blocks, no flushing, as with a power cut.
"""

from __future__ import annotations

import os
import signal
import threading

_hits: dict[str, int] = {}
# the realtime path passes three points per message: a look at os.environ (a KeyError raised and caught inside
# it when unset) each time would cost more than the rest of a point that is not armed
_SET = "WILSON_FAULT_POINTS" in os.environ
_lock = threading.Lock()


def _armed() -> dict[str, int]:
    armed = {}
    for entry in filter(None, (e.strip() for e in os.environ.get("WILSON_FAULT_POINTS", "").split(","))):
        name, _, nth = entry.partition("@")
        armed[name] = int(nth) if nth.isdigit() else 1
    return armed


def point(name: str) -> None:
    if not _SET:
        return
    nth = _armed().get(name)
    if nth is None:
        return
    with _lock:
        _hits[name] = _hits.get(name, 0) + 1
        hit = _hits[name]
    if hit == nth:
        os.kill(os.getpid(), signal.SIGKILL)
