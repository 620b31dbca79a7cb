"""Wilson as an MCP server: another agent (Claude Desktop, a coding agent) reads what is on the user's plate and
proposes; nothing it proposes changes anything until the user approves it where they talk to Wilson.

`wilson mcp serve` speaks over stdio; the dashboard serves the same at /mcp (its token, `Authorization: Bearer`).
The reads are Wilson's own read tools, run as the owner would run them: tasks, topics, calendar, reminders and
memory recall. `propose` takes one change (an action a background run could propose, with its arguments) and
makes it a waiting proposal whose reason names the client; the proposal is shown and decided like any other.
"""

# no `from __future__ import annotations`: the SDK reads the tools' signatures, and Context is imported lazily
import json
import secrets

from actors import tools
from actors.proposals import make
from actors.proposals.rules import CannotPropose
from wilson.kernel import clock as clockmod

READS = ("list_tasks", "list_topics", "calendar_lookup", "list_reminders", "recall")
WHY_LIMIT = 160  # characters of the client's reason kept in the proposal's
CLIENT_LIMIT = 40  # characters of the client's name
INSTRUCTIONS = (
    "Wilson is the user's assistant. Read their tasks, topics, calendar, reminders and memory with the "
    "read tools. To change anything, call propose: the user sees your proposal, named as yours, where "
    "they talk to Wilson, and nothing changes until they approve it."
)


def proposable(config) -> dict:
    """The actions an outside agent may propose, by name: what a background run could (no user-only tool, none
    made only by an undo), so another agent never gets more than Wilson's own unattended runs."""
    box = tools.toolbox(config)
    return {
        t.name: t
        for t in box.order
        if t.kind == tools.MUTATE and not t.user_only and not t.undo_only and not box.why_not(t)
    }


def client_name(ctx) -> str:
    """The name the client gave itself when it connected (its own word: shown as such), else a plain label."""
    try:
        name = ctx.session.client_params.client_info.name
    except AttributeError:
        name = ""
    name = " ".join(str(name or "").split())[:CLIENT_LIMIT]
    return name or "an unnamed client"


def propose(config, client: str, action: str, arguments: dict, why: str, now, proposed=None) -> str:
    """One change proposed by an MCP client: a waiting proposal naming the client; the answer it is given."""
    allowed = proposable(config)
    if action not in allowed:
        raise ValueError(f"{action!r} cannot be proposed here; the actions are: {', '.join(sorted(allowed))}")
    if not isinstance(arguments, dict):
        raise ValueError("arguments must be a JSON object")
    owner = str(config.get("core", "owner"))
    why = " ".join(str(why or "").split())[:WHY_LIMIT]
    reason = f"proposed by the MCP client “{client}”" + (f": {why}" if why else "")
    try:
        approval = make.propose_one(
            action,
            tools.known_args(action, arguments),
            owner=owner,
            channel=config.primary_channel,
            reason=reason,
            key=f"mcp-serve:{secrets.token_hex(8)}",
            now=now,
            config=config,
        )
    except CannotPropose as exc:
        raise ValueError(str(exc)) from None
    if proposed is not None:
        proposed(approval.id)
    description = approval.items.get().description
    return (
        f"Proposal {approval.id} is waiting for the user: {description}. Nothing changes unless they approve "
        "it; they see that you proposed it."
    )


def build(config, *, proposed=None, now=clockmod.wall_now):
    """The MCP server (the SDK's) over Wilson's reads and `propose`. `proposed(approval_id)`: told after a
    proposal commits (the dashboard tells the gate; `wilson mcp serve` leaves it to the running Wilson)."""
    # lazy: the mcp SDK is an extra, and slow to import
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import ToolAnnotations

    server = MCPServer("wilson", instructions=INSTRUCTIONS)
    owner = str(config.get("core", "owner"))
    read_only = ToolAnnotations(read_only_hint=True)

    def read(name: str, args: dict) -> str:
        args = {key: value for key, value in args.items() if value not in (None, "")}
        try:
            result = tools.run_read(name, args, now(), config.timezone, owner, owner, box=tools.toolbox(config))
        except (ValueError, LookupError) as exc:  # the client's mistake: told to it (a crash stays on this side)
            raise ToolError(str(exc)) from None
        return json.dumps(result, ensure_ascii=False, default=str)

    def list_tasks(topic: str = "", status: str = "") -> str:
        return read("list_tasks", {"topic": topic, "status": status})

    def list_topics(status: str = "") -> str:
        return read("list_topics", {"status": status})

    def calendar_lookup(start: str, end: str) -> str:
        return read("calendar_lookup", {"start": start, "end": end})

    def list_reminders() -> str:
        return read("list_reminders", {})

    def recall(query: str) -> str:
        return read("recall", {"query": query})

    box = tools.toolbox(config)
    for fn in (list_tasks, list_topics, calendar_lookup, list_reminders, recall):
        tool = box.get(fn.__name__)
        if tool is not None and not box.why_not(tool):
            server.add_tool(
                fn,
                name=fn.__name__,
                description=f"{tool.description} (The user's, read through Wilson.)",
                annotations=read_only,
            )

    def propose_change(action: str, arguments: dict, why: str, ctx: Context) -> str:
        try:
            return propose(config, client_name(ctx), action, arguments, why, now(), proposed)
        except ValueError as exc:
            raise ToolError(str(exc)) from None

    actions = "; ".join(tools.action_line(t) for t in proposable(config).values())
    server.add_tool(
        propose_change,
        name="propose",
        description="Propose one change to the user's world; it waits for the user's approval, named as "
        "yours, and nothing changes until they approve it. `action` is one of: "
        f"{actions}. `arguments` are that action's; `why` says in one line why.",
    )
    return server
