"""The one place that reads the wall clock.

Domain time (deadlines, schedules, "now" in prompts) comes from a `Clock`.
A `SimClock` lets the REPL and the tests live through weeks in seconds: it only
moves when told to, and the application steps it from one due moment to the next
so that everything scheduled fires in order.

Infrastructure timing (retry backoff, watchdog intervals, latency figures) is
real elapsed time whatever the domain clock says; it also comes from here
(`monotonic`, `pause`) so that no other module imports `time` for it.
"""

from __future__ import annotations

import re
import threading
import time
from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

UTC = timezone.utc


class Clock:
    """Domain time. `now()` is always timezone-aware UTC."""

    simulated = False

    def now(self) -> datetime:
        raise NotImplementedError

    def local_now(self, tz: ZoneInfo) -> datetime:
        return self.now().astimezone(tz)

    def today(self, tz: ZoneInfo) -> date:
        return self.local_now(tz).date()


class RealClock(Clock):
    def now(self) -> datetime:
        return datetime.now(UTC)


class SimClock(Clock):
    """A clock that stands still until it is set or advanced. Never goes backwards."""

    simulated = True

    def __init__(self, start: datetime):
        self._now = as_utc(start)
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def set(self, moment: datetime) -> None:
        moment = as_utc(moment)
        with self._lock:
            if moment < self._now:
                raise ValueError(f"a simulated clock never goes backwards ({moment} < {self._now})")
            self._now = moment

    def advance(self, delta: timedelta) -> datetime:
        self.set(self.now() + delta)
        return self.now()


def as_utc(moment: datetime, tz: ZoneInfo | None = None) -> datetime:
    """Aware UTC; a naive datetime is read in `tz` (UTC when not given)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=tz or UTC)
    return moment.astimezone(UTC)


def wall_now() -> datetime:
    """Real UTC time for infrastructure records (schema applied at), never for domain logic."""
    return datetime.now(UTC)


def monotonic() -> float:
    """Seconds for measuring elapsed real time (backoff, watchdog, benchmarks)."""
    return time.monotonic()


def pause(seconds: float) -> None:
    """Real sleep for infrastructure waits (backoff between retries)."""
    if seconds > 0:
        time.sleep(seconds)


def parse_duration(text: str) -> timedelta:
    """'45m', '12h', '3d', '1w', '90s', or combinations like '1d12h'."""
    text = text.strip().lower()
    parts = re.findall(r"(\d+(?:\.\d+)?)\s*([smhdw])", text)
    if not parts or "".join(f"{n}{u}" for n, u in parts) != re.sub(r"\s+", "", text):
        raise ValueError(f"not a duration: {text!r} (try 45m, 12h, 3d)")
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
    try:
        return timedelta(seconds=sum(float(n) * units[u] for n, u in parts))
    except OverflowError:  # "99999999999999999999d": a mistake, said like any other
        raise ValueError(f"too long a duration: {text[:40]!r} (try 45m, 12h, 3d)") from None


def make_clock(kind: str, start: str | None = None, tz: ZoneInfo | None = None) -> Clock:
    if kind == "real":
        return RealClock()
    if kind == "sim":
        if start:
            moment = datetime.fromisoformat(start)
        else:
            moment = datetime.now(UTC).replace(microsecond=0)
        return SimClock(as_utc(moment, tz))
    raise ValueError(f"unknown clock {kind!r}: use 'real' or 'sim'")
