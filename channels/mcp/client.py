"""One MCP server's connection: its own thread with its own asyncio loop (channels/loopthread.py), so a hung,
slow or crashing server holds up nothing but the one call waiting on it, and that only up to its timeout.

The session is held open by one job on the loop; when it ends (the server exited, the connection broke,
it did not answer the handshake in time) the job starts it again after a growing pause. A caller on
another thread (the cortex for a read, the approval gate for an approved change) waits at most the
server's timeout for one call.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import os
from contextlib import AsyncExitStack

from loguru import logger

from channels.loopthread import LoopThread, describe
from channels.mcp.servers import Spec, capped, env_for, headers_for
from wilson.kernel import clock as clockmod
from wilson.kernel.redact import redact

BACKOFF = (1.0, 2.0, 5.0, 15.0, 60.0)  # seconds before the next start, after each failure in a row
ERROR_LIMIT = 300
MAX_RESOURCES = 100  # resources taken from one server's list
START_TIMEOUT = 30.0  # seconds a server may take to start and list its tools (an interpreter's imports are slow)


class Unavailable(RuntimeError):
    """The server cannot take a call now (not connected, timed out, crashed, reported an error)."""

    outcome_unknown = False  # True when the call reached the server, which may have acted before it failed


class Interrupted(Unavailable):
    """The call reached the server but no answer came back (a timeout, the server exited)."""

    outcome_unknown = True


def result_text(result) -> str:
    """A call's result as text: its text blocks, else its structured content as JSON, others named by kind."""
    parts = []
    for block in getattr(result, "content", None) or []:
        kind = getattr(block, "type", "?")
        parts.append(block.text if kind == "text" else f"[{kind} content]")
    if not parts and getattr(result, "structured_content", None) is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, default=str))
    return "\n".join(parts)


def contents_text(result) -> str:
    """A read resource's contents as text: its text parts; a binary part named by its type and size."""
    parts = []
    for part in getattr(result, "contents", None) or []:
        if isinstance(getattr(part, "text", None), str):
            parts.append(part.text)
        else:
            blob = getattr(part, "blob", "") or ""
            parts.append(
                f"[binary content: {getattr(part, 'mime_type', None) or 'unknown type'}, "
                f"about {len(blob) * 3 // 4} bytes]"
            )
    return "\n".join(parts)


class Connection:
    def __init__(self, spec: Spec, on_change=None):
        self.spec = spec
        self.on_change = on_change or (lambda connection: None)
        self.state = "starting"  # starting, ready, failed: …, stopped
        self.listed: list = []  # the server's tools as it last listed them
        self.resources: list = []  # the resources it listed (none when it offers none)
        self.offers = False  # it said it has resources when it connected
        self.changed_tools = ""  # how its tool list changed mid-session, until the channel has traced it
        self.failures = 0
        self.restarts = 0  # sessions started after the first, for `wilson status`
        self.loop = LoopThread(f"mcp-{spec.name}")
        self.session = None
        self._broken: asyncio.Event | None = None
        self._stopped: asyncio.Event | None = None
        self._stopping = False

    # Life ------------------------------------------------------------------------------
    def start(self) -> None:
        self.loop.start()
        self.loop.spawn(self._hold())

    def close(self) -> None:
        self._stopping = True
        self.state = "stopped"
        self.loop.close(self._teardown, timeout=self.spec.timeout + 3)

    async def _teardown(self) -> None:
        for event in (self._broken, self._stopped):
            if event is not None:
                event.set()
        # the SDK gives a server 2 s to exit before it is terminated; one still in its handshake (it may never
        # answer) is cut off at once, so that its process is ended within the close's time
        await self.loop.finish_jobs(grace=4.0 if self.session is not None else 0.0)

    def wait_ready(self, timeout: float) -> bool:
        deadline = clockmod.monotonic() + timeout
        while self.state in ("starting", "restarting") and clockmod.monotonic() < deadline:
            clockmod.pause(0.05)
        return self.state == "ready"

    async def _hold(self) -> None:
        """Connect, list the tools, and keep the session until it breaks or Wilson stops; then again."""
        self._stopped = asyncio.Event()
        while not self._stopping:
            self._broken = asyncio.Event()
            try:
                async with AsyncExitStack() as stack:
                    session = await self._open(stack)
                    self.session = session
                    self.restarts += self.failures > 0 or self.state == "restarting"
                    self.failures = 0
                    self._set("ready")
                    await self._broken.wait()
            except Exception as exc:  # the server's fault, whatever it is: reported, and tried again later
                self.failures += 1
                self._set(f"failed: {capped(redact(describe(exc)), ERROR_LIMIT)}")
                logger.warning("MCP server {} failed ({} in a row): {}", self.spec.name, self.failures, self.state)
            finally:
                self.session = None
            if self._stopping:
                break
            if self.state == "ready":
                self._set("restarting")
            pause = BACKOFF[min(self.failures, len(BACKOFF)) - 1] if self.failures else BACKOFF[0]
            with contextlib.suppress(TimeoutError):  # a pause that stopping cuts short
                await asyncio.wait_for(self._stopped.wait(), pause)

    async def _open(self, stack: AsyncExitStack):
        # lazy: the mcp SDK is an extra (installed with `pip install wilson[mcp]`) and slow to import: only with a server
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        spec = self.spec
        if spec.url:
            # lazy: the SDK's own HTTP client, needed only for a server reached over HTTP
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            client = await stack.enter_async_context(
                httpx2.AsyncClient(headers=headers_for(spec), timeout=spec.timeout, follow_redirects=False)
            )
            read, write = await stack.enter_async_context(streamable_http_client(spec.url, http_client=client))
        else:
            params = StdioServerParameters(command=spec.command, args=list(spec.args), env=env_for(spec) or None)
            errlog = stack.enter_context(open(os.devnull, "w"))  # a server's chatter is not Wilson's log
            read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
        session = await stack.enter_async_context(ClientSession(read, write, message_handler=self._notified))
        async with asyncio.timeout(max(spec.timeout, START_TIMEOUT)):
            started = await session.initialize()
            listed = await session.list_tools()
            offers = getattr(getattr(started, "capabilities", None), "resources", None) is not None
            resources = (await session.list_resources()).resources if offers and spec.resources else []
        self.listed, self.offers = list(listed.tools), offers
        self.resources = [r for r in resources if isinstance(getattr(r, "uri", None), str)][:MAX_RESOURCES]
        return session

    async def _notified(self, message) -> None:
        """A server may change its tool list mid-session: it is listed again (off the session's own reader)."""
        if getattr(message, "method", None) in (
            "notifications/tools/list_changed",
            "notifications/resources/list_changed",
        ):
            self.loop.spawn(self._relist())

    async def _relist(self) -> None:
        session = self.session
        if session is None:
            return
        async with asyncio.timeout(self.spec.timeout):
            listed = list((await session.list_tools()).tools)
            resources = list((await session.list_resources()).resources) if self.offers and self.spec.resources else []
        before, after = {t.name for t in self.listed}, {t.name for t in listed}
        if before != after:
            self.changed_tools = (
                f"added {', '.join(sorted(after - before)) or 'none'}, "
                f"removed {', '.join(sorted(before - after)) or 'none'}"
            )
            logger.warning("MCP server {} changed its tools: {}", self.spec.name, self.changed_tools)
        self.listed = listed
        self.resources = [r for r in resources if isinstance(getattr(r, "uri", None), str)][:MAX_RESOURCES]
        self._set("ready")

    def _set(self, state: str) -> None:
        self.state = state
        try:
            self.on_change(self)
        except Exception as exc:
            logger.error("after MCP server {} changed: {}", self.spec.name, describe(exc))

    # Calls -------------------------------------------------------------------------------
    def call(self, tool: str, args: dict) -> str:
        """Call one tool and return its result's text; Unavailable, with the reason, when it cannot answer."""
        result = self._wait(lambda: self._call(tool, args))
        if getattr(result, "is_error", False):
            raise Unavailable(
                f"the MCP server {self.spec.name} reported an error: {capped(redact(result_text(result)), ERROR_LIMIT)}"
            )
        return result_text(result)

    def read(self, uri: str) -> str:
        """One resource's contents as text (binary ones named by kind and size); Unavailable when it cannot."""

        async def reading():
            session = self._session()
            async with asyncio.timeout(self.spec.timeout):
                return await session.read_resource(uri)

        return contents_text(self._wait(reading))

    def _session(self):
        if self.session is None:
            raise Unavailable(f"the MCP server {self.spec.name} is not connected ({self.state})")
        return self.session

    def _wait(self, make):
        """Run one request on the connection's loop and wait for it at most the server's timeout (a server being
        started again after an exit gets that long to come back first: a restart is not a failure)."""
        if self.session is None and self.state in ("starting", "restarting"):
            self.wait_ready(self.spec.timeout)
        self._session()
        timeout = self.spec.timeout
        try:
            future = asyncio.run_coroutine_threadsafe(make(), self.loop.loop)
        except (AttributeError, RuntimeError):
            raise Unavailable(f"the MCP server {self.spec.name} is stopped") from None
        try:
            return future.result(timeout=timeout + 1)
        except (concurrent.futures.TimeoutError, TimeoutError):
            future.cancel()
            raise Interrupted(f"the MCP server {self.spec.name} did not answer within {timeout:g} seconds") from None
        except Unavailable:
            raise
        except Exception as exc:
            raise Interrupted(
                f"the MCP server {self.spec.name} failed: {capped(redact(describe(exc)), ERROR_LIMIT)}"
            ) from None

    async def _call(self, tool: str, args: dict):
        session = self.session
        if session is None:
            raise Unavailable(f"the MCP server {self.spec.name} is not connected ({self.state})")
        try:
            async with asyncio.timeout(self.spec.timeout):
                return await session.call_tool(tool, args, read_timeout_seconds=self.spec.timeout)
        except TimeoutError:
            raise Interrupted(
                f"the MCP server {self.spec.name} did not answer within {self.spec.timeout:g} seconds"
            ) from None
        except Exception:
            # a broken pipe, an exited process: no more calls on this session; it is started again (after a pause)
            if self.session is session:
                self.session = None
                self._set("restarting")
            if self._broken is not None:
                self._broken.set()
            raise
