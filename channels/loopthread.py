"""An asyncio event loop in a thread owned by a channel actor (docs/architecture.md: asyncio stays inside its channel).

Telegram's client and the web dashboard's server are asyncio programs; Wilson's actors are
threads. A channel that needs asyncio starts one `LoopThread` in `on_start` and closes it in
`on_stop` (and `on_failure`, so a replacement never runs beside its predecessor). The loop
crosses into Pykka only with `tell`; the actor crosses into the loop with `spawn`,
`call_soon` or `run` (`run_coroutine_threadsafe` underneath).

Jobs spawned on the loop are tracked: on close, the channel's own teardown runs first, then
`finish_jobs` gives what is still running a grace period before cancelling it, and only then
is the loop stopped, so a job never dies half-way through a database transaction without
the teardown knowing.
"""

from __future__ import annotations

import asyncio
import threading

from loguru import logger

from wilson.kernel import lanes
from wilson.kernel.redact import redact


def describe(exc: BaseException) -> str:
    return redact(f"{type(exc).__name__}: {exc}")


class LoopThread:
    def __init__(self, name: str, describe_error=describe):
        self.name = name
        self.describe = describe_error
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread: threading.Thread | None = None
        self.jobs: set[asyncio.Task] = set()

    def start(self, setup=None, timeout: float = 10.0) -> None:
        """Start the loop's thread, then run `setup()` (a coroutine function) on it; when setup fails
        or times out, the loop is closed again and the error raised in the caller's thread."""
        self.loop = asyncio.new_event_loop()
        self.loop.set_exception_handler(self._loop_error)
        self.thread = threading.Thread(target=self._run, name=f"{self.name}-loop", daemon=True)
        self.thread.start()
        if setup is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(setup(), self.loop).result(timeout=timeout)
        except BaseException:
            self.close()
            raise

    def _run(self) -> None:
        lanes.writes_first()  # what the user sends is committed on this thread: it must not wait behind background writes
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def close(self, teardown=None, timeout: float = 13.0) -> None:
        """Run `teardown()` on the loop (bounded by `timeout`), stop the loop and join its thread.
        Safe to call twice, and from a failed start."""
        loop, self.loop = self.loop, None
        if loop is None:
            return
        if teardown is not None:
            try:
                asyncio.run_coroutine_threadsafe(teardown(), loop).result(timeout=timeout)
            except Exception as exc:
                logger.warning("stopping was not clean: {}", self.describe(exc))
        loop.call_soon_threadsafe(loop.stop)
        self.thread.join(timeout=5)
        if not self.thread.is_alive():
            loop.close()

    @property
    def running(self) -> bool:
        return self.loop is not None

    def on_loop(self) -> bool:
        return threading.current_thread() is self.thread

    def call_soon(self, fn, *args) -> None:
        """Run `fn(*args)` on the loop soon, from any thread; nothing happens once the loop is closed."""
        loop = self.loop
        if loop is not None:
            loop.call_soon_threadsafe(fn, *args)

    def run(self, coro, timeout: float):
        """Run `coro` on the loop and wait for its result in the calling (non-loop) thread."""
        loop = self.loop
        if loop is None:
            coro.close()
            raise RuntimeError(f"the {self.name} loop is not running")
        with lanes.waiting():  # on the loop's thread, mostly on the network: background work may run
            return asyncio.run_coroutine_threadsafe(coro, loop).result(timeout=timeout)

    def spawn(self, coro) -> None:
        """Run `coro` on the loop as a tracked job, from either thread."""
        loop = self.loop
        if loop is None:
            coro.close()
            return
        if self.on_loop():
            self._track(coro)
        else:
            loop.call_soon_threadsafe(self._track, coro)

    def _track(self, coro) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self.jobs.add(task)
        task.add_done_callback(self._job_done)

    def _job_done(self, task: asyncio.Task) -> None:
        self.jobs.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error("a job on the {} loop failed: {}", self.name, self.describe(task.exception()))

    async def finish_jobs(self, grace: float) -> None:
        """On the loop, in a teardown: running jobs get `grace` seconds, then the rest are cancelled."""
        if self.jobs:
            await asyncio.wait(list(self.jobs), timeout=grace)
        for job in list(self.jobs):
            job.cancel()
        await asyncio.gather(*self.jobs, return_exceptions=True)

    def _loop_error(self, loop, context) -> None:
        exc = context.get("exception")
        logger.error(
            "{}{}",
            redact(str(context.get("message", "error in the event loop"))),
            f" ({self.describe(exc)})" if exc else "",
        )
