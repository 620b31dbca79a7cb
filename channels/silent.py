"""The silent channel: where runs that earned no surfacing go. It records and discards."""

from __future__ import annotations

from loguru import logger

from channels.base import Channel


class SilentChannel(Channel):
    name = "silent"
    can_deliver = True

    def send(self, row) -> dict:
        logger.debug("kept silent: {}", (row.payload or {}).get("why", ""))
        return {"silent": True}
