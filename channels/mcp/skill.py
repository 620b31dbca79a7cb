"""MCP servers as one skill: the servers in [mcp.servers.NAME] are connected when Wilson starts (each on its own
thread and loop), and their tools join the toolbox as they are listed: reads run when the model calls them,
every other tool becomes a proposal that the approval gate alone calls, once, after the user approves it.

The channel actor owns the connections (started with the other channels, closed with them); the toolbox
asks `REGISTRY` for the tools, so a server that connects late or lists new tools is picked up on the
next run. `status` is what `wilson skills` and `wilson mcp test` show of each server. When a server has something
in `watch`, the channel is also a buffered receptor: the tick's nudge and the thalamus' sync read what is due
(channels/mcp/watch.py).
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass

from loguru import logger

from actors.proposals import make
from actors.tools.untrusted import quoted
from channels.base import Channel as ChannelActor
from channels.mcp import watch
from channels.mcp.client import START_TIMEOUT, Connection, Unavailable
from channels.mcp.servers import Spec, capped, check, header_secrets, specs, wilson_tools
from storage import kv, trace
from wilson import skills
from wilson.kernel.redact import redact, register
from wilson.kernel import faults, liveness
from wilson.kernel.messages import ProposalCreated, StimulusCommitted
from wilson.skills import Channel, Section, Skill, Tool


class Registry:
    """The connected servers of this process and their tools."""

    def __init__(self):
        self.lock = threading.Lock()
        self.connections: dict[str, Connection] = {}
        self.by_server: dict[str, list] = {}  # server → its Wilson tools as last listed (kept while it is down)
        self.listener = None  # told the name of a server whose state changed (the channel actor records it)

    def start(self, found: list[Spec]) -> None:
        for spec in found:
            register(header_secrets(spec))
            connection = Connection(spec, self.changed)
            with self.lock:
                self.connections[spec.name] = connection
            connection.start()

    def stop(self) -> None:
        self.listener = None
        with self.lock:
            connections, self.connections = list(self.connections.values()), {}
            self.by_server.clear()
        for connection in connections:
            connection.close()
        skills.tools_changed()

    def changed(self, connection: Connection) -> None:
        """A server connected (or failed): its listed tools are what Wilson offers of it."""
        if connection.state != "ready":
            self.tell(connection.spec.name)
            return
        tools = wilson_tools(connection.spec, connection.listed, self.call, connection.resources, self.read)
        for tool in tools:  # until the channel has compared its description with the one the user let it use
            tool.unavailable = CHECKING
        with self.lock:
            if self.connections.get(connection.spec.name) is not connection:
                return  # a stopped one's last word
            self.by_server[connection.spec.name] = tools
        logger.info("MCP server {}: {} tool(s)", connection.spec.name, len(tools))
        skills.tools_changed()
        self.tell(connection.spec.name)  # after they are in place: the channel checks their descriptions

    def tell(self, server: str) -> None:
        listener = self.listener
        if listener is not None:
            listener(server)

    def release(self, name: str, said: str) -> None:
        """The user approved this tool's new description: offered again (unless it changed once more)."""
        for tool in self.tools():
            if tool.name == name and tool.said == said:
                tool.unavailable = ""
        skills.tools_changed()

    def tools(self) -> list:
        with self.lock:
            return [tool for name in sorted(self.by_server) for tool in self.by_server[name]]

    def call(self, server: str, tool: str, args: dict) -> str:
        connection = self.connections.get(server)
        if connection is None:
            raise Unavailable(f"the MCP server {server} is not running")
        return connection.call(tool, args)

    def read(self, server: str, uri: str) -> str:
        connection = self.connections.get(server)
        if connection is None:
            raise Unavailable(f"the MCP server {server} is not running")
        return connection.read(uri)

    def connection(self, name: str) -> Connection | None:
        return self.connections.get(name)


REGISTRY = Registry()


class McpChannel(ChannelActor):
    """Owns the MCP connections for the life of the actor (a replacement after a crash starts them anew)."""

    name = "mcp"

    def on_start(self):
        found = specs(self.config.section("mcp"))
        for spec in found:
            self.record(spec.name, "starting")
        actor = self.actor_ref
        REGISTRY.listener = lambda name: actor.tell(StateChanged(name))
        REGISTRY.start(found)
        super().on_start()

    def receive_other(self, message):
        if isinstance(message, StateChanged):
            connection = REGISTRY.connection(message.server)
            if connection is not None:
                self.record(message.server, connection.state, connection.restarts)
                changed, connection.changed_tools = connection.changed_tools, ""
                if changed:  # a server that changes its tools mid-session: what changed is kept in the trace
                    trace.record(
                        trace.new_trace_id(),
                        "relisted",
                        self.name,
                        f"the MCP server {message.server} changed its tools: {changed}",
                        self.now(),
                    )
                if connection.state == "ready":
                    self.check_descriptions(message.server)
            return None
        return super().receive_other(message)

    def check_descriptions(self, server: str) -> None:
        """A tool whose description differs from the one the user let it be used with is held, and its new words
        are proposed to the user; a tool seen for the first time is remembered as it is."""
        said = dict(kv.get_setting(SAID_KEY, {}) or {})
        held, now = [], self.now()
        for tool in REGISTRY.by_server.get(server, []):
            if tool.name not in said:
                said[tool.name] = tool.said
            if said[tool.name] == tool.said:
                tool.unavailable = ""
            else:
                tool.unavailable = "its server changed its description; waiting for you to approve the new one"
                held.append(tool)
        kv.put_setting(SAID_KEY, said)
        skills.tools_changed()
        for tool in held:
            logger.warning(
                "MCP server {} changed the description of {}: held until the user approves it", server, tool.remote
            )
            args = {"tool": tool.name, "said": tool.said}
            try:
                approval = make.propose_one(
                    ACCEPT.name,
                    args,
                    owner=self.config.get("core", "owner"),
                    channel=self.config.primary_channel,
                    reason=f"the MCP server {server} changed what its tool {tool.remote} says it does",
                    key=f"mcp:said:{tool.name}:{hashlib.sha256(tool.said.encode()).hexdigest()[:16]}",
                    now=now,
                    config=self.config,
                )
            except make.CannotPropose as exc:
                logger.warning("could not propose the new description of {}: {}", tool.name, exc)
                continue
            self.tell("approval", ProposalCreated(approval.id))

    # Watching (a receptor): the tick's nudge and the thalamus' sync look at what is due ----------------
    def poll_if_due(self) -> int:
        try:
            return self.look_at_due()
        except Exception as exc:  # a broken server waits for its next cadence; the channel carries on
            logger.error("MCP: watching failed: {}", exc)
            return 0

    def sync(self, reason: str) -> int:
        return self.poll_if_due()

    def look_at_due(self) -> int:
        """Read each watched resource or read tool that is due on a connected server; buffer what changed."""
        count = 0
        for spec in specs(self.config.section("mcp")):
            connection = REGISTRY.connection(spec.name)
            if not spec.watch or connection is None or connection.state != "ready":
                continue  # looked at once it is connected: still due then
            for target in spec.watch:
                now = self.now()
                state = kv.get_cursor(watch.state_key(spec.name, target))
                if not watch.due(state, now):
                    continue
                liveness.beat(spec.timeout + 30, f"MCP: reading {spec.name} {target[:80]}")
                try:
                    text = self.read_watched(spec, target)
                except Exception as exc:
                    logger.warning("MCP server {}: could not read the watched {}: {}", spec.name, target, exc)
                    watch.record(spec, target, None, watch.failed(spec, state, str(exc), now), now)
                    continue
                change, after = watch.seen(spec, target, text, state, now)
                row = watch.record(spec, target, change, after, now)
                if row is not None:
                    faults.point("mcp:after-watch-commit")
                    self.tell("thalamus", StimulusCommitted("buffer", row.id, row.trace_id))
                    count += 1
        return count

    def read_watched(self, spec: Spec, target: str) -> str:
        if watch.is_resource(target):
            return REGISTRY.read(spec.name, target)
        tool = next((t for t in REGISTRY.by_server.get(spec.name, []) if getattr(t, "remote", None) == target), None)
        if tool is None or not tool.read_only:  # never poll what could change something
            raise ValueError(f"{target} is not a read tool of {spec.name}: only reads are watched")
        if tool.unavailable:
            raise ValueError(f"{target} is held: {tool.unavailable}")
        return REGISTRY.call(spec.name, target, {})

    def record(self, server: str, state: str, restarts: int = 0) -> None:
        """The server's state as a health cursor, which `wilson status` lists with the channels'."""
        word, _, error = state.partition(": ")
        kv.put_cursor(
            f"health:mcp {server}",
            {"state": word, "restarts": restarts, **({"error": error} if error else {})},
            self.now(),
        )

    def on_stop(self):
        names = list(REGISTRY.connections)
        REGISTRY.stop()
        for name in names:  # `wilson status` must not go on saying "ready"
            self.record(name, "stopped")

    def on_failure(self, exception_type, exception_value, traceback):
        REGISTRY.stop()
        super().on_failure(exception_type, exception_value, traceback)


CHECKING = "its description is being checked"
SAID_KEY = "mcp:said"  # Wilson tool name → the description the user has let it be used with


class AcceptDescription(Tool):
    """Proposed by Wilson itself when a server changed what a tool says of itself: the tool is held until the
    user has seen the new words and approved them. Offered to no model."""

    name = "mcp_accept_description"
    description = "Use an MCP server's tool again after its description changed."
    parameters = {
        "type": "object",
        "required": ["tool", "said"],
        "properties": {"tool": {"type": "string", "maxLength": 64}, "said": {"type": "string", "maxLength": 2000}},
    }
    undo_only = True

    def describe(self, args, call):
        return (
            f"Let Wilson use {args['tool']} again: its server now describes it as “{quoted(args['said'], 300)}” "
            "(the server's words, not Wilson's)"
        )

    def execute(self, args, call):
        said = dict(kv.get_setting(SAID_KEY, {}) or {})
        said[args["tool"]] = args["said"]
        kv.put_setting(SAID_KEY, said)
        REGISTRY.release(args["tool"], args["said"])
        return {"tool": args["tool"]}


@dataclass(frozen=True)
class StateChanged:
    server: str


@dataclass(frozen=True)
class McpSkill(Skill):
    def tool_objects(self) -> list:
        return [*REGISTRY.tools(), ACCEPT]


def probe(spec: Spec) -> Connection:
    """A connection of its own, tried for one server's timeout (for `wilson skills` and `wilson mcp test`);
    the caller closes it."""
    register(header_secrets(spec))
    connection = Connection(spec)
    connection.start()
    connection.wait_ready(max(spec.timeout, START_TIMEOUT) + 1)
    return connection


def server_lines(connection: Connection, details: bool = False) -> list[str]:
    spec = connection.spec
    how = "HTTP" if spec.url else "stdio"
    where = capped(redact(" ".join(spec.where.split())), 80)  # the user's own setting: shown as written, secrets masked
    lines = [f"MCP server {spec.name} ({how}: {where}): {connection.state}"]
    if connection.state != "ready" and not connection.listed:
        return lines
    tools = wilson_tools(spec, connection.listed, None)
    reads = [t.name for t in tools if t.read_only]
    changes = [t.name for t in tools if not t.read_only]
    left_out = [t.name for t in connection.listed if not spec.takes(t.name)]
    if reads:
        lines.append(f"  reads: {', '.join(reads)}")
    if changes:
        lines.append(f"  proposes (after your approval): {', '.join(changes)}")
    if left_out:
        lines.append(f"  left out (include/exclude): {', '.join(left_out)}")
    if connection.resources:
        lines.append(
            f"  resources: {len(connection.resources)}, read with {spec.name}__resources"
            if spec.resources
            else f"  resources: {len(connection.resources)}, not offered (resources = false)"
        )
    if spec.watch:
        lines.append(f"  watched every {spec.watch_minutes:g} minutes: {', '.join(capped(w, 80) for w in spec.watch)}")
    if details:
        lines += [
            f"  {t.name}: {'read' if t.read_only else 'proposed'} — “{quoted(t.said, 160)}” (its own words, untrusted)"
            for t in tools
        ]
    return lines


def status(config) -> list[str]:
    """Each configured server, its state and its tools: this process's connection, else one tried now."""
    settings = config.section("mcp") if config is not None else {}
    off = sorted(
        name
        for name, values in (settings.get("servers") or {}).items()
        if isinstance(values, dict) and values.get("enabled") is False
    )
    found = specs(settings)
    if not found and not off:
        return ["no MCP servers set up ([mcp.servers.NAME] in wilson.toml)"]
    lines, probes, threads = [], {}, []
    for spec in found:  # tried side by side: the wait is the slowest server's timeout, not their sum
        if REGISTRY.connection(spec.name) is None:
            threads.append(threading.Thread(target=lambda s=spec: probes.__setitem__(s.name, probe(s))))
            threads[-1].start()
    for thread in threads:
        thread.join()
    for spec in found:
        connection = REGISTRY.connection(spec.name) or probes[spec.name]
        lines += server_lines(connection)
        if spec.name in probes:
            connection.close()
    lines += [f"MCP server {name}: off (enabled = false)" for name in off]
    return lines


ACCEPT = AcceptDescription()


def watching(config) -> bool:
    return any(spec.watch for spec in specs(config.section("mcp")))


SKILL = McpSkill(
    description="MCP servers: the tools of the servers in [mcp.servers.NAME]; reads run, changes wait for your "
    "approval.",
    # a buffered receptor (synced by the thalamus, nudged by the tick) only when a server has something watched
    channels=(
        Channel("mcp", McpChannel, priority=60, buffered=True, enabled=lambda config: watching(config)),
        Channel(
            "mcp",
            McpChannel,
            priority=60,
            enabled=lambda config: bool(specs(config.section("mcp"))) and not watching(config),
        ),
    ),
    config=Section(
        defaults={"servers": {}, "serve_http": True},
        schema={
            "servers": (
                "table",
                "MCP servers, one [mcp.servers.NAME] table each: command, args, env "
                '(stdio) or url, headers (HTTP; "${VAR}" from the environment); '
                "include, exclude, read_only, timeout, enabled, resources, watch, "
                "watch_minutes (docs/mcp.md)",
            ),
            "serve_http": (
                "bool",
                "serve Wilson to other agents at the dashboard's /mcp (its token; `wilson mcp serve` is the stdio way)",
            ),
        },
        check=check,
    ),
    status=status,
    requires=(("mcp", "mcp"),),  # the protocol's SDK, an extra: without it the skill says what to install
)
