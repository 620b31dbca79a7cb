"""The hippocampus actor: told `Consolidate()` by the tick, it runs one night with the configured pruning
and model role."""

from __future__ import annotations

from datetime import datetime, timedelta

from loguru import logger

from actors.hippocampus import consent
from actors.hippocampus.advice import HOLD_BACK_AT
from actors.hippocampus.nightly import consolidate
from actors.proposals import make
from actors.proposals.rules import CannotPropose
from wilson.kernel.actor import WilsonActor
from wilson.kernel.messages import Consolidate, ProposalCreated


class HippocampusActor(WilsonActor):
    name = "hippocampus"

    def receive(self, message):
        if isinstance(message, Consolidate):
            return self.consolidate(self.now())
        return super().receive(message)

    def consolidate(self, now: datetime) -> dict:
        days = float(self.config.get("hippocampus", "prune_days"))
        below = float(self.config.get("hippocampus", "prune_below"))
        counts = consolidate(
            now,
            self.ctx.synapse,
            prune_after=timedelta(days=days),
            prune_below=below,
            role=str(self.config.get("hippocampus", "role")),
        )
        counts["offered"] = self.offer(now)
        return counts

    def offer(self, now: datetime) -> int:
        """What the night learned that would make Wilson say less is asked, not done (DESIGN principle 15):
        one proposal per change, with its evidence, once."""
        made = 0
        for offer in consent.offers(now, HOLD_BACK_AT):
            change = offer.change
            try:
                approval = make.propose_one(
                    "adopt_learning",
                    {"change": change["key"], "says": change["does"], "on": True, "seen": offer.seen[:200]},
                    owner=str(self.config.get("core", "owner")),
                    channel=self.config.primary_channel,
                    reason=consent.offer_text(offer.memory, change, offer, self.config.timezone),
                    key=offer.key,
                    now=now,
                    config=self.config,
                )
            except CannotPropose as exc:  # the memory skill turned off: nothing is learned that way either
                logger.info("learning not offered ({}): {}", change["key"], exc)
                continue
            self.tell("approval", ProposalCreated(approval.id))
            made += 1
        return made
