"""Listening: Wilson's own getUpdates loop and its liveness watchdog (a mixin of TelegramChannel).

Updates are fetched as raw JSON and each is handled on its own (channels/telegram/inbound.py);
a poller silent for longer than `liveness` is replaced, and `health:telegram` tells
`wilson status` how it goes.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from loguru import logger
from telegram import BotCommand
from telegram.error import InvalidToken, TelegramError

from channels.telegram.state import HEALTH_CURSOR, OFFSET_CURSOR
from channels.telegram.text import describe, usable_update_id
from storage import kv
from wilson.kernel import clock as clockmod
from wilson.kernel.commands import telegram_menu

ALLOWED_UPDATES = ["message", "edited_message", "callback_query", "message_reaction"]


class Polling:
    async def _poll(self) -> None:
        failures = 0
        ready = False
        offset = self._stored_offset()
        while True:
            try:
                if not ready:
                    await self.poller.initialize()
                    await self.poller.delete_webhook(drop_pending_updates=False)
                    await self._register_commands()
                    ready = True
                batch = await self._fetch(offset)
                self._last_ok = clockmod.monotonic()
                for raw in batch:
                    offset = self._take(raw, offset)
                if batch and all(usable_update_id(raw) is None for raw in batch):
                    # entries without an id cannot be acknowledged and may come back: do not spin on them
                    raise TelegramError("getUpdates answered only with entries that have no usable update_id")
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # Telegram down, token revoked, database busy: keep trying, loudly
                failures += 1
                wait = min(self.backoff_base * 2 ** min(failures - 1, 20), self.backoff_max)
                if failures == 1 or isinstance(exc, InvalidToken):
                    logger.warning("Telegram getUpdates failed ({}); retrying in {:.1f}s", describe(exc), wait)
                self._health("retrying", error=describe(exc))
                await asyncio.sleep(wait)
                continue
            if failures:
                logger.info("polling again after {} failed attempt(s)", failures)
            failures = 0
            self._health("polling")

    async def _register_commands(self) -> None:
        if self._commands_set:
            return
        try:
            await self.poller.set_my_commands([BotCommand(name, what[:256]) for name, what in telegram_menu()])
            self._commands_set = True
        except TelegramError as exc:  # a missing command menu is cosmetic
            logger.info("could not set the command menu: {}", describe(exc))

    async def _watch(self) -> None:
        """Liveness: a poller with no successful getUpdates for too long is replaced."""
        while True:
            await asyncio.sleep(min(1.0, self.liveness / 4))
            silent = clockmod.monotonic() - self._last_ok
            if silent <= self.liveness:
                continue
            self._restarts += 1
            logger.warning("no successful Telegram getUpdates for {:.0f}s; restarting the polling loop", silent)
            self._health("restarting", force=True)
            self._poll_task.cancel()
            await asyncio.gather(self._poll_task, return_exceptions=True)
            old, self.poller = self.poller, self._make_poller()
            try:
                await asyncio.wait_for(old.shutdown(), timeout=5)
            except Exception as exc:
                logger.debug("closing the stalled client: {}", describe(exc))
            self._last_ok = clockmod.monotonic()
            self._poll_task = asyncio.get_running_loop().create_task(self._poll())

    async def _fetch(self, offset: int | None) -> list:
        """One getUpdates call, as raw JSON: PTB's get_updates reads the whole batch at once, and one
        update it cannot read would fail every call at the same offset."""
        data = {"offset": offset, "timeout": self.poll_timeout, "allowed_updates": ALLOWED_UPDATES}
        batch = await self.poller._post("getUpdates", data, read_timeout=10.0 + self.poll_timeout)
        if not isinstance(batch, list):
            raise TelegramError(f"getUpdates answered with {type(batch).__name__}, not a list of updates")
        return batch

    def _stored_offset(self) -> int | None:
        value = kv.get_cursor(OFFSET_CURSOR)
        return int(value) if value is not None else None

    def _health(self, state: str, *, error: str | None = None, force: bool = False) -> None:
        """Cursor health:telegram for `wilson status`: written when the state changes, else at most once
        every `health_every` seconds (a quiet, healthy poll writes nothing in between)."""
        now = clockmod.monotonic()
        if not force and state == self._health_state and now - self._health_written < self.health_every:
            return
        value = {
            "state": state,
            "restarts": self._restarts,
            "last_ok": (clockmod.wall_now() - timedelta(seconds=now - self._last_ok)).isoformat(timespec="seconds"),
        }
        if error:
            value["error"] = error[:300]
        kv.put_cursor(HEALTH_CURSOR, value, clockmod.wall_now())
        self._health_state, self._health_written = state, now
