"""The hippocampus actor: told `Consolidate()` by the tick, it runs one night with the configured pruning
and model role."""

from __future__ import annotations

from datetime import datetime, timedelta

from actors.hippocampus.nightly import consolidate
from wilson.kernel.actor import WilsonActor
from wilson.kernel.messages import Consolidate


class HippocampusActor(WilsonActor):
    name = "hippocampus"

    def receive(self, message):
        if isinstance(message, Consolidate):
            return self.consolidate(self.now())
        return super().receive(message)

    def consolidate(self, now: datetime) -> dict:
        days = float(self.config.get("hippocampus", "prune_days"))
        below = float(self.config.get("hippocampus", "prune_below"))
        return consolidate(now, self.ctx.synapse, prune_after=timedelta(days=days), prune_below=below,
                           role=str(self.config.get("hippocampus", "role")))
