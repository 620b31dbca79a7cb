"""Which threads the user waits on.

A thread marked here (an actor on the realtime path, a channel's event loop) has its database writes go
ahead of queued background writes (storage/db.py reads the mark). The mark lives in the kernel because
the actor base and the channel loops set it, and they sit below storage's callers.
"""

from __future__ import annotations

import threading

_lane = threading.local()


def writes_first() -> None:
    """Mark the calling thread as one the user waits on: its writes go ahead of queued background writes."""
    _lane.urgent = True


def is_urgent() -> bool:
    return getattr(_lane, "urgent", False)
