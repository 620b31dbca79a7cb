"""The Telegram channel actor: configuration, its event loop's lifecycle, and the actor side.

The work is in the mixins, one per seam: polling, inbound (one update), buttons (answers to
proposals), outbound (delivering), placement (where a message goes) and forum.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from datetime import timedelta

import peewee
from loguru import logger
from telegram.ext import AIORateLimiter, ExtBot
from telegram.request import HTTPXRequest

from channels.base import Channel
from channels.loopthread import LoopThread
from channels.telegram.access import is_allowed, parse_ids
from channels.telegram.buttons import Buttons
from channels.telegram.forum import Forum
from channels.telegram.handover import Handover
from channels.telegram.inbound import Inbound
from channels.telegram.outbound import Outbound
from channels.telegram.placement import Placement
from channels.telegram.polling import Polling
from channels.telegram.text import describe
from storage.db import database
from wilson.kernel import clock as clockmod
from wilson.kernel.messages import ApprovalSettled


def quiet_client_loggers() -> None:
    """httpx logs every request URL at INFO, and the URL carries the bot token."""
    for name in ("httpx", "httpcore", "telegram"):
        logging.getLogger(name).setLevel(logging.WARNING)


class TelegramChannel(Polling, Inbound, Handover, Buttons, Outbound, Placement, Forum, Channel):
    name = "telegram"
    realtime = True
    can_deliver = True

    backoff_base = 0.25  # first wait after a failed poll, seconds; doubles each time
    backoff_max = 30.0
    retry_base = 0.25  # first wait after a failed send, seconds; doubles each time up to retry_max
    call_deadline = 300.0  # editing a settled proposal's message, forum topics: cosmetic, given up after this
    delay_note_after = timedelta(minutes=1)  # a shorter outage is not worth a line
    stop_grace = 3.0  # on stop, deliveries in flight get this long to finish
    health_every = 60.0  # seconds between health writes while the state stays the same

    def __init__(self, ctx, name: str | None = None):
        super().__init__(ctx, name)
        self.looper = LoopThread(self.name, describe)
        self.bot: ExtBot | None = None  # sends; behind the rate limiter
        self.poller: ExtBot | None = None  # getUpdates only; replaced when polling stalls
        self._send_lock: asyncio.Lock | None = None
        self._poll_task: asyncio.Task | None = None
        self._watch_task: asyncio.Task | None = None
        self._pump_task: asyncio.Task | None = None
        self._wake: asyncio.Event | None = None
        self._stopping = False
        self._send_failures = 0  # in a row; the backoff grows with it
        self._retry_at = 0.0  # monotonic: the oldest owed row is not tried again before this
        self._last_ok = 0.0
        self._restarts = 0
        self._health_state = ""
        self._health_written = 0.0
        self._commands_set = False

    # Configuration ---------------------------------------------------------
    @property
    def token(self) -> str:
        return str(self.config.get("telegram", "token") or "")

    @property
    def forum_chat(self) -> int | None:
        value = parse_ids([self.config.get("telegram", "forum_chat_id") or ""])
        return int(value[0]) if value else None

    @property
    def poll_timeout(self) -> int:
        return max(0, int(self.config.get("telegram", "poll_timeout") or 0))

    @property
    def liveness(self) -> float:
        # A long poll legitimately stays silent for poll_timeout seconds; never call that a stall.
        return max(float(self.config.get("telegram", "liveness_seconds")), self.poll_timeout + 2.0)

    @property
    def retry_max(self) -> float:
        return max(0.01, float(self.config.get("telegram", "retry_max_seconds")))

    def allowed(self, user_id: str) -> bool:
        return is_allowed(self.config, user_id)

    # Lifecycle (actor thread) ----------------------------------------------
    def on_start(self):
        quiet_client_loggers()
        self.looper.start(self._setup, timeout=10)
        super().on_start()

    def on_stop(self):
        self._close_loop()

    def on_failure(self, exception_type, exception_value, traceback):
        self._close_loop()  # the replacement starts its own poller; two must never run at once
        super().on_failure(exception_type, exception_value, traceback)

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        return self.looper.loop

    @property
    def thread(self) -> threading.Thread | None:
        return self.looper.thread

    def _close_loop(self) -> None:
        self.looper.close(self._teardown, timeout=self.stop_grace + 10)

    # Actor side ----------------------------------------------------------------
    def receive_other(self, message):
        if isinstance(message, ApprovalSettled):
            self.spawn(self._settle(message.approval_id))
        else:
            super().receive_other(message)

    def deliver_row(self, outbox_id: int, row: object = None) -> None:  # row: never handed on (takes_rows)
        """Wake the sender and return: the row is in the database, and Telegram may keep us waiting."""
        loop = self.loop
        if loop is not None and self._wake is not None:
            loop.call_soon_threadsafe(self._wake.set)

    def spawn(self, coro) -> None:
        """Run `coro` on the loop as a tracked job, from either thread."""
        self.looper.spawn(coro)

    # Loop side: setup and teardown ------------------------------------------
    def _request(self, read_timeout: float) -> HTTPXRequest:
        return HTTPXRequest(
            connection_pool_size=8, connect_timeout=5.0, read_timeout=read_timeout, write_timeout=10.0, pool_timeout=5.0
        )

    def _make_poller(self) -> ExtBot:
        return ExtBot(
            self.token,
            base_url=self.config.get("telegram", "base_url"),
            request=self._request(10.0),
            get_updates_request=self._request(10.0),
        )

    @property
    def file_url(self) -> str:
        """Where files are downloaded: api.telegram.org/file/bot beside …/bot, and so for any Bot API server."""
        base = str(self.config.get("telegram", "base_url") or "https://api.telegram.org/bot")
        return base[: -len("/bot")] + "/file/bot" if base.endswith("/bot") else base.rstrip("/") + "/file/bot"

    async def _setup(self) -> None:
        self._send_lock = asyncio.Lock()
        self.bot = ExtBot(
            self.token,
            base_url=self.config.get("telegram", "base_url"),
            base_file_url=self.file_url,
            request=self._request(15.0),
            get_updates_request=self._request(10.0),
            rate_limiter=AIORateLimiter(max_retries=2),
        )
        self.poller = self._make_poller()
        self._last_ok = clockmod.monotonic()
        self._wake = asyncio.Event()
        loop = asyncio.get_running_loop()
        self._poll_task = loop.create_task(self._poll())
        self._watch_task = loop.create_task(self._watch())
        self._pump_task = loop.create_task(self._pump())
        if self.forum_chat is not None:
            self.looper.spawn(self._renames_owed())
        self._handovers_owed()

    async def _teardown(self) -> None:
        self._stopping = True
        if self._pump_task is not None:  # a send in flight may finish: its row is then marked delivered
            self._wake.set()
            await asyncio.wait([self._pump_task], timeout=self.stop_grace)
            self._pump_task.cancel()
            await asyncio.gather(self._pump_task, return_exceptions=True)
        for task in (self._watch_task, self._poll_task):
            if task is not None:
                task.cancel()
        await asyncio.gather(*(t for t in (self._watch_task, self._poll_task) if t), return_exceptions=True)
        await self.looper.finish_jobs(self.stop_grace)
        for bot in (self.poller, self.bot):
            if bot is not None:
                try:
                    await bot.shutdown()
                except Exception as exc:
                    logger.debug("closing the client: {}", describe(exc))
        try:
            self._health("stopped", force=True)
        except peewee.PeeweeException:
            pass
        if not database.is_closed():
            database.close()  # this thread's connection
