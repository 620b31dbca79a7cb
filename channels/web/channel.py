"""The web channel: Wilson's dashboard, served on its own event loop inside this actor.

Threads. Like Telegram, the channel owns an asyncio loop in a thread of its own
(channels/loopthread.py); uvicorn serves the Starlette app (channels/web/server.py) on
it. Requests are handled on that loop; they commit their rows there and cross into
Pykka only with `tell`.

Listening. The socket is bound here, before uvicorn starts, so a port that is taken is
one clear log line (the rest of Wilson carries on without a dashboard) instead of
uvicorn's exit. The web stack (uvicorn, Starlette, the page templates) is imported when the
first connection arrives, which waits in the socket's backlog meanwhile: importing it at start
would put about 0.1 s of CPU before Wilson's first answer, for a dashboard most starts never open. The host is 127.0.0.1 unless `[web] host` names another on purpose, and
then a warning says that the dashboard can be reached from the network. Port 0 takes a
free port; the address in use is written to Setting "web:address" (`wilson web-token`
prints a login URL with it).

Receiving. A message typed on the Conversation page is a realtime stimulus, like a
Telegram message: an inbox row (deduplicated by the form's one-time key, so a double
submit counts once), then the thalamus is told. A decision is a decision row, then the
gate is told (`DecisionRecorded`): the same path as a Telegram button, applied once.

Delivering. The page reads what was delivered from the outbox, so delivering a row is
marking it shown; the page picks it up on its next look.

Watching. The channel is also a buffered receptor: on each tick (and at the thalamus' sync)
it looks at the watched pages and feeds that are due (channels/web/watcher.py), on this
actor's thread, one at a time, each look bounded in time and size, and buffers what changed.
A look that fails is traced and the next source is looked at all the same.

Proposing. A press on the dashboard that changes Wilson's world (watch this, stop watching,
forget that memory) does not change it: it becomes a proposal through the same tools the
model proposes with, and the user approves it on the Proposals page like any other.

Size: the actor and the handlers the dashboard calls on it share the channel's loop and its lifecycle.
"""

from __future__ import annotations

import importlib
import secrets
import socket
from datetime import timedelta
import asyncio

from loguru import logger

from actors.proposals import commands, make, rules
from actors.proposals.words import undo_named
from channels.base import Channel
from channels.loopthread import LoopThread
from channels.mcp import serve
from channels.web import fetching, watcher
from channels.web.address import ADDRESS_KEY, HEALTH_KEY, is_loopback
from channels.web.refused import Refused
from storage import decisions, kv, marks, routing
from storage.db import database
from storage.models import Approval, DecisionRow, Outbox, Task
from wilson.kernel import faults, liveness
from wilson.kernel.clock import parse_duration
from wilson.kernel.messages import DecisionRecorded, ProposalCreated, StimulusCommitted

PRESS = "web_press"  # a mark per dashboard form pressed (storage/marks.py): a double submit counts once
LOOKS_PER_TICK = 20  # sources looked at in one go; the rest stay due for the next tick
_UNBUILT = object()  # the MCP endpoint before its first request
ACTIONS = ("approve", "reject", "modify")  # what a press on the Proposals page decides


def listening_socket(host: str, port: int) -> socket.socket:
    """Bound and listening (connections wait in the backlog until uvicorn accepts them)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


class WebChannel(Channel):
    name = "web"
    realtime = True
    can_deliver = True
    stop_grace = 3.0  # seconds open requests get to finish on stop

    def __init__(self, ctx, name: str | None = None):
        super().__init__(ctx, name)
        self.looper = LoopThread(self.name)
        self.uvicorn = None
        self._serving = None
        self._mcp: object = _UNBUILT  # Wilson's MCP endpoint, an ASGI app (or None): see mcp_endpoint
        self._mcp_building: asyncio.Lock | None = None
        self._mcp_stop: asyncio.Event | None = None
        self._listening: socket.socket | None = None  # closed at stop, also when no request came to serve
        self.address: tuple[str, int] | None = None

    # Lifecycle (actor thread) ------------------------------------------------------------------
    def on_start(self):
        host = str(self.config.get("web", "host")).strip()
        port = int(self.config.get("web", "port") or 0)
        if not is_loopback(host):
            logger.warning(
                "the dashboard listens on {}: anyone who can reach this computer on port {} can try "
                'to log in. Set [web] host = "127.0.0.1" to keep it on this computer.',
                host,
                port,
            )
        try:
            sock = listening_socket(host, port)
        except OSError as exc:
            logger.error(
                "the dashboard could not listen on {}:{} ({}); Wilson runs on without it. Set [web] port "
                "(or WILSON_WEB_PORT) to a free port.",
                host,
                port,
                exc.strerror or exc,
            )
            self._health("unavailable", f"{host}:{port}: {exc.strerror or exc}")
            super().on_start()
            return
        self.address = sock.getsockname()[:2]
        self.looper.start(lambda: self._serve(sock), timeout=10)
        kv.put_setting(ADDRESS_KEY, {"host": host, "port": self.address[1]})
        self._health("serving", "")
        logger.info("dashboard on {}", self.url)
        super().on_start()

    def on_stop(self):
        self._close()
        if self.address is not None:  # `wilson status` must not go on saying "serving"
            self._health("stopped", "")

    def on_failure(self, exception_type, exception_value, traceback):
        self._close()  # the replacement binds the port again
        super().on_failure(exception_type, exception_value, traceback)

    @property
    def url(self) -> str:
        if self.address is None:
            return ""
        host = self.address[0]
        return f"http://{'[' + host + ']' if ':' in host else host}:{self.address[1]}"

    def _close(self) -> None:
        self.looper.close(self._teardown, timeout=self.stop_grace + 5)

    def _health(self, state: str, error: str) -> None:
        # a cursor, as the other channels keep theirs: `wilson status` lists them
        kv.put_cursor(
            HEALTH_KEY, {"state": state, "address": self.url, **({"error": error} if error else {})}, self.now()
        )

    # Loop side ---------------------------------------------------------------------------------
    async def _serve(self, sock: socket.socket) -> None:
        self._mcp_building = asyncio.Lock()
        self._listening = sock
        self._serving = self.looper.loop.create_task(self._serve_when_asked(sock))

    async def _serve_when_asked(self, sock: socket.socket) -> None:
        asked = self.looper.loop.create_future()
        self.looper.loop.add_reader(sock.fileno(), lambda: asked.done() or asked.set_result(None))
        try:
            await asked  # a connection waits to be accepted
        finally:
            self.looper.loop.remove_reader(sock.fileno())
        try:
            self.uvicorn = self._server()
        except Exception as exc:  # what start would have said: the dashboard is off, and no one waits on it
            logger.error("the dashboard could not start: {}: {}; Wilson runs on without it", type(exc).__name__, exc)
            sock.close()
            self._health("unavailable", f"{type(exc).__name__}: {exc}")
            return
        await self.uvicorn.serve(sockets=[sock])

    def _server(self):
        # lazy: the web stack loads at the first connection, not at start (see "Listening" above)
        import uvicorn

        # lazy: the pages and their server, made of that stack
        from channels.web import protocol, server

        config = uvicorn.Config(
            server.build(self),
            log_config=None,
            access_log=False,
            lifespan="off",
            http=protocol.DeadlineH11Protocol,
            ws="none",
            proxy_headers=False,
            server_header=False,
            date_header=False,
            timeout_graceful_shutdown=self.stop_grace,
        )
        return uvicorn.Server(config)

    async def mcp_endpoint(self):
        """Wilson as an MCP server at /mcp (channels/mcp/serve.py), an ASGI app; None when [mcp] serve_http is
        off or the MCP SDK is not installed. Built at the first request for it, not at start: the SDK's
        models take longer to import than the rest of Wilson's start, and most dashboards are never asked.
        Its sessions live in a job on this loop until the channel stops."""
        assert self._mcp_building is not None  # made as the loop starts serving
        async with self._mcp_building:
            if self._mcp is _UNBUILT:
                self._mcp = await self._build_mcp()
        return self._mcp

    async def _build_mcp(self):
        if not self.config.section("mcp").get("serve_http", True):
            return None
        try:
            # imported off the loop first, which serves the other pages meanwhile (about 0.6 s of pydantic models)
            await asyncio.to_thread(importlib.import_module, "mcp.server.streamable_http_manager")
            # lazy: the SDK is an extra, loaded at the first request for the endpoint
            from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
        except ImportError:
            return None
        built = serve.build(
            self.config, proposed=lambda approval_id: self.tell("approval", ProposalCreated(approval_id)), now=self.now
        )
        built.streamable_http_app(host=str(self.config.get("web", "host")).strip())  # makes its session manager
        self._mcp_stop, running = asyncio.Event(), asyncio.Event()
        self.looper.spawn(self._hold_mcp(built.session_manager, running))
        await running.wait()  # the manager takes requests only inside its run()
        return StreamableHTTPASGIApp(built.session_manager)

    async def _hold_mcp(self, manager, running: asyncio.Event) -> None:
        try:
            async with manager.run():
                running.set()
                await self._mcp_stop.wait()
        finally:
            running.set()  # a manager that failed to run must not hold its first request for ever

    async def _teardown(self) -> None:
        if self._mcp_stop is not None:
            self._mcp_stop.set()
        if self.uvicorn is not None and self._serving is not None:
            self.uvicorn.should_exit = True

            try:
                await asyncio.wait_for(asyncio.shield(self._serving), timeout=self.stop_grace + 1)
            except (asyncio.TimeoutError, Exception) as exc:
                logger.debug("web server stop: {}", exc)
                self._serving.cancel()
        elif self._serving is not None:
            self._serving.cancel()  # nobody asked for a page: there is no server to stop
            await asyncio.gather(self._serving, return_exceptions=True)
        if self._listening is not None:
            self._listening.close()  # the replacement binds the port again
        await self.looper.finish_jobs(self.stop_grace)
        # what a library left running on this loop (the MCP SDK's SSE responses start a shutdown watcher that
        # polls forever): ended here, not destroyed pending when the loop closes
        strays = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        for task in strays:
            task.cancel()
        await asyncio.gather(*strays, return_exceptions=True)
        if not database.is_closed():
            database.close()  # this thread's connection

    # What the pages do (loop thread) -----------------------------------------------------------
    def user(self) -> str:
        """Who is at the dashboard: the owner (the token is theirs)."""
        return str(self.config.get("core", "owner"))

    def decide(self, approval_id: int, action: str, text: str, nonce: str | None, items: tuple[int, ...] = ()) -> int:
        """A press on the Proposals page: a decision row, then the gate is told. `items` narrows approve
        or reject to those items; the others stay pending (as Telegram's per-item answers do)."""
        if action not in ACTIONS:
            raise Refused(400, "Choose approve, modify or reject.")
        if action == "modify" and not text:
            raise Refused(400, "Say what should change, then press Modify.")
        if nonce is not None and len(nonce) > 64:
            raise Refused(400, "That form is not one of Wilson's.")
        if items and action == "modify":
            raise Refused(400, "Modify is for the whole proposal: say which item to change in the text.")
        row = decisions.record(
            approval_id=approval_id,
            action=action,
            user_id=self.user(),
            channel=self.name,
            at=self.now(),
            text=text if action == "modify" else "",
            items=items,
            nonce=nonce,
        )
        faults.point("web:after-decision-commit")
        self.tell("approval", DecisionRecorded(row.id))
        return row.id

    def say(self, text: str, key: str | None) -> int | None:
        """Words typed on the Conversation page: a realtime stimulus, once per form; "undo" or "undo N" is a
        decision, handled by code as in a Telegram chat (its answer, a proposal, shows here)."""
        undoing = undo_named(text)
        if undoing is not None:
            decision = decisions.record(
                approval_id=undoing, action=rules.UNDO, user_id=self.user(), channel=self.name, at=self.now()
            )
            self.tell("approval", DecisionRecorded(decision.id))
            return None
        told = commands.parse(text)
        if told is not None:  # "done 3", "snooze 3 2d": the user's own command, taken at once
            decision = decisions.record(
                approval_id=0,
                action=commands.COMMAND,
                user_id=self.user(),
                channel=self.name,
                at=self.now(),
                text=told.text,
            )
            self.tell("approval", DecisionRecorded(decision.id))
            return None
        helping = commands.help_target(text)
        if helping is not None:  # "help 3", as the briefing's choices say: words for Wilson about task 3
            return self.help(helping, key or secrets.token_urlsafe(12))
        row = routing.commit_realtime(
            source=self.name,
            text=text,
            user_id=self.user(),
            at=self.now(),
            dedup_key=f"web:{key}" if key else None,
            payload={"via": "dashboard"},
        )
        if row is None:
            return None
        faults.point("web:after-message-commit")
        self.tell("thalamus", StimulusCommitted("inbox", row.id, row.trace_id, row.priority))
        return row.id

    def done(self, task_id: int, key: str) -> int:
        """A press on a task's Done button. The user's own clear command is the approval (DESIGN principle 17):
        a proposal to complete the task and its approval commit together, once per form (`key`), and the gate
        applies it at once, as it applies any approval: traced, and its receipt offers Undo. Returns the
        proposal's id; refused (400) when the task cannot be completed (gone, or done already)."""
        now = self.now()
        task = Task.get_or_none(Task.id == task_id)
        if task is None:
            raise Refused(404, "There is no such task.")
        try:
            with database.atomic():
                made = Approval.get_or_none(Approval.idempotency_key == f"web:done:{key}")
                if made is None and task.status not in ("open", "snoozed"):
                    state = {"done": "done already", "cancelled": "dropped"}.get(task.status, task.status)
                    raise Refused(400, f"“{task.title}” is {state}: there is nothing to mark done.")
                approval = make.propose_one(
                    "complete_task",
                    {"task_id": task_id},
                    owner=self.user(),
                    channel=self.name,
                    reason="you pressed Done on the dashboard",
                    key=f"web:done:{key}",
                    now=now,
                    config=self.config,
                    shown=True,
                )
                answered = DecisionRow.select().where(DecisionRow.approval_id == approval.id).exists()
                row = (
                    None
                    if answered
                    else decisions.record(
                        approval_id=approval.id,
                        action="approve",
                        user_id=self.user(),
                        channel=self.name,
                        at=now,
                        nonce=approval.nonce,
                    )
                )
        except rules.CannotPropose as exc:
            raise Refused(400, str(exc)) from None
        if row is not None:
            faults.point("web:after-decision-commit")
            self.tell("approval", DecisionRecorded(row.id))
        return approval.id

    def command(self, words: str, key: str) -> int:
        """A press on a Snooze or Stop button: the user's own command (DESIGN principle 17), the same decision
        as typing it ("snooze 3 1d", "stop 4"), taken at once by the gate, whose receipt offers Undo. Once per
        form (`key`): a double submit returns the first press's decision. Returns the decision's id."""
        told = commands.parse(words)
        if told is None:
            raise Refused(400, "That button does not work any more.")
        with database.atomic():
            earlier = marks.get(PRESS, key)
            if earlier:
                return int(earlier)
            row = decisions.record(
                approval_id=0,
                action=commands.COMMAND,
                user_id=self.user(),
                channel=self.name,
                at=self.now(),
                text=told.text,
            )
            marks.put(PRESS, key, row.id, self.now())
        faults.point("web:after-decision-commit")
        self.tell("approval", DecisionRecorded(row.id))
        return row.id

    def help(self, task_id: int, key: str) -> int | None:
        """A press on "Help me" (or "help 3" typed): the user's words for Wilson about that task, a message
        answered on Conversation like any other. Refused (400) when there is no such open task."""
        try:
            text = commands.help_words(task_id, self.config.timezone, self.user(), self.config.get("core", "owner"))
        except ValueError as exc:
            raise Refused(400, str(exc)) from None
        row = routing.commit_realtime(
            source=self.name,
            text=text,
            user_id=self.user(),
            at=self.now(),
            dedup_key=f"web:help:{key}",
            payload={"via": "dashboard", "help_task": task_id},
        )
        if row is None:
            return None
        self.tell("thalamus", StimulusCommitted("inbox", row.id, row.trace_id, row.priority))
        return row.id

    def undo(self, approval_id: int) -> int:
        """An Undo press under a receipt: the same decision as typing "undo N" (the gate's undo machinery)."""
        row = decisions.record(
            approval_id=approval_id, action=rules.UNDO, user_id=self.user(), channel=self.name, at=self.now()
        )
        self.tell("approval", DecisionRecorded(row.id))
        return row.id

    def intake(self, text: str, key: str | None, payload: dict) -> int | None:
        """An item a script posted to /api/stimuli: a buffered stimulus like a watched page's change
        (triaged with the others at the next sync); None when its key was posted before."""
        dedup = f"web:intake:{key}" if key else f"web:intake:{secrets.token_hex(12)}"
        row = routing.commit_buffered(
            channel=self.name, text=text, dedup_key=dedup, payload={**payload, "via": "api"}, at=self.now()
        )
        if row is None:
            return None
        faults.point("web:after-intake-commit")
        self.tell("thalamus", StimulusCommitted("buffer", row.id, row.trace_id))
        return row.id

    def propose(self, tool: str, args: dict, key: str, reason: str) -> int:
        """A press that would change something: a proposal of `tool` for the user to approve, once per
        form (`key`); the gate presents it here. Refused (400) when the tool says it cannot be done."""
        try:
            approval = make.propose_one(
                tool,
                args,
                owner=self.user(),
                channel=self.name,
                reason=reason,
                key=f"web:propose:{key}",
                now=self.now(),
                config=self.config,
            )
        except rules.CannotPropose as exc:
            raise Refused(400, str(exc)) from None
        faults.point("web:after-proposal-commit")
        self.tell("approval", ProposalCreated(approval.id))
        return approval.id

    # Watching (actor thread) -------------------------------------------------------------------
    def watch_every(self) -> timedelta | None:
        """The default cadence of a watched source ([web] watch_poll); None when watching is off."""
        raw = str(self.config.get("web", "watch_poll") or "").strip().lower()
        if raw in ("", "off", "0", "none", "false"):
            return None
        try:
            return parse_duration(raw)
        except ValueError:
            return watcher.DEFAULT_EVERY

    def poll_if_due(self) -> int:
        if self.watch_every() is None:
            return 0
        try:
            return self.look_at_due()
        except Exception as exc:  # the watcher must not take the dashboard down with it
            logger.error("web: watching failed: {}", exc)
            return 0

    def sync(self, reason: str) -> int:
        return self.poll_if_due()

    def look_at_due(self) -> int:
        """Look at each watched source that is due; buffer what changed. Returns how many rows."""
        now = self.now()
        due = watcher.due(now)[:LOOKS_PER_TICK]
        if not due:
            return 0
        count = 0

        def commit(text, key, payload):
            return routing.commit_buffered(channel=self.name, text=text, dedup_key=key, payload=payload, at=now)

        with fetching.client() as http:
            for state in due:
                liveness.beat(
                    fetching.LOOK_SECONDS + fetching.TIMEOUT_SECONDS + 30, f"web: looking at {state['url'][:80]}"
                )
                watcher.begin(state, now)
                result = watcher.look(state, http, now)
                rows = watcher.record(result, now, commit)
                if rows:
                    faults.point("web:after-watch-commit")
                for row in rows:
                    self.tell("thalamus", StimulusCommitted("buffer", row.id, row.trace_id))
                count += len(rows)
        return count

    # Delivering (actor thread) -----------------------------------------------------------------
    def send(self, row: Outbox) -> dict:
        return {"shown": "dashboard"}
