"""The one poll helper of the tests: wait for a condition, never a fixed sleep."""

from __future__ import annotations

from wilson.kernel import clock as clockmod


def wait_for(predicate, timeout: float = 10.0, what: str = "the condition", *, every: float = 0.01, meanwhile=()):
    """Poll `predicate` until it returns something truthy, and return that. After `timeout` seconds the test
    fails with an AssertionError naming `what`. `meanwhile`: exceptions that mean "not yet" (another process
    still creating its tables)."""
    deadline = clockmod.monotonic() + timeout
    while True:
        try:
            value = predicate()
        except meanwhile:
            value = None
        if value:
            return value
        if clockmod.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")
        clockmod.pause(every)
