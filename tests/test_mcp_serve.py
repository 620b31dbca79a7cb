"""Wilson as an MCP server: an SDK client connected to `wilson mcp serve` (stdio), or to the dashboard's /mcp with
its token, lists Wilson's tools, reads the tasks, and proposes; the proposal waits, names the client, and only the
user's approval (here in the REPL) makes the change."""

from __future__ import annotations

import asyncio
import json
import os
import sys

import httpx
import pytest

from storage.db import open_database
from storage.models import Approval, ApprovalItem, Task
from tests.conftest import ROOT
from tests.process_support import deliveries, run_repl, wait_for
from tests.web_harness import base_url, token_and_code

pytest.importorskip("mcp.client.session", reason="the mcp extra is not installed")  # the SDK, not our code

WILSON = [sys.executable, str(ROOT / "bin" / "wilson")]
TOOLS = ["list_tasks", "list_topics", "calendar_lookup", "list_reminders", "recall", "propose"]


async def session_do(connect, steps):
    """Run `steps(session)` in an SDK client session named "test-agent" opened by `connect()`."""
    from mcp import ClientSession
    from mcp.types import Implementation

    async with (
        connect() as streams,
        ClientSession(streams[0], streams[1], client_info=Implementation(name="test-agent", version="1.0")) as session,
    ):
        await session.initialize()
        return await steps(session)


def over_stdio(home):
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = dict(os.environ, WILSON_CORE_TIMEZONE="Europe/Berlin", PYTHONPATH=str(ROOT))
    params = StdioServerParameters(command=WILSON[0], args=[*WILSON[1:], "--home", str(home), "mcp", "serve"], env=env)
    return lambda: stdio_client(params, errlog=open(os.devnull, "w"))


def text_of(result) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def test_an_agent_over_stdio_lists_reads_and_proposes_and_only_the_users_approval_changes_anything(tmp_path):
    home = tmp_path / "home"
    connect = over_stdio(home)

    async def first(session):
        names = [t.name for t in (await session.list_tools()).tools]
        before = await session.call_tool("list_tasks", {})
        proposed = await session.call_tool(
            "propose",
            {"action": "create_task", "why": "it expires in March", "arguments": {"title": "Renew the passport"}},
        )
        refused = await session.call_tool(
            "propose", {"action": "send_email", "why": "x", "arguments": {"to": "a@example.org"}}
        )
        return names, before, proposed, refused

    names, before, proposed, refused = asyncio.run(session_do(connect, first))
    assert names == TOOLS
    assert json.loads(text_of(before)) == []
    assert not proposed.is_error
    assert text_of(proposed) == (
        "Proposal 1 is waiting for the user: New task: Renew the passport. Nothing changes "
        "unless they approve it; they see that you proposed it."
    )
    # what a background run could not propose, another agent cannot either
    assert refused.is_error and "'send_email' cannot be proposed here" in text_of(refused)

    db = open_database(None, home)
    (approval,) = Approval.select()
    assert approval.status == "pending"
    assert approval.reason == "proposed by the MCP client “test-agent”: it expires in March"
    assert [i.tool for i in approval.items] == ["create_task"]
    assert not Task.select().exists(), "nothing changes before the user approves"
    db.close()

    shown = run_repl(home, "wait\napprove 1\nwait\nquit\n", "--llm", "offline")
    assert shown.returncode == 0, shown.stderr[-2000:]
    told = [d["text"] for d in deliveries(shown.stdout)]
    assert any("Renew the passport" in t and "test-agent" in t for t in told), told  # shown, naming the client
    assert any(t.startswith("Done:") and "Renew the passport" in t for t in told), told

    async def again(session):
        return await session.call_tool("list_tasks", {})

    tasks = json.loads(text_of(asyncio.run(session_do(connect, again))))
    assert [t["title"] for t in tasks] == ["Renew the passport"]


def test_the_dashboards_mcp_endpoint_takes_its_token_and_tells_the_gate_at_once(web):
    from mcp.client.streamable_http import streamable_http_client

    token, _ = token_and_code(web)
    url = base_url() + "/mcp"
    refused = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=10)
    assert refused.status_code == 401
    wrong = httpx.post(
        url,
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        timeout=10,
        headers={"Authorization": "Bearer not-the-token"},
    )
    assert wrong.status_code == 401

    def connect():
        import contextlib

        @contextlib.asynccontextmanager
        async def opened():
            async with (
                httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=10) as client,
                streamable_http_client(url, http_client=client) as streams,
            ):
                yield streams

        return opened()

    async def steps(session):
        names = [t.name for t in (await session.list_tools()).tools]
        proposed = await session.call_tool(
            "propose",
            {"action": "create_task", "why": "before the trip", "arguments": {"title": "Buy a travel adapter"}},
        )
        return names, proposed

    names, proposed = asyncio.run(session_do(connect, steps))
    assert names == TOOLS and not proposed.is_error
    assert web.wait_idle()
    shown = [d["text"] for d in web.user_deliveries()]
    assert any("Buy a travel adapter" in t and "test-agent" in t for t in shown), shown  # the gate showed it at once
    approval = Approval.get()
    web.decide(approval.id, "approve")
    assert web.wait_idle()
    assert [t.title for t in Task.select()] == ["Buy a travel adapter"]
    assert ApprovalItem.get().status == "executed"


def test_a_proposal_from_wilson_mcp_serve_beside_a_running_wilson_is_shown_at_its_next_tick(make_app):
    from wilson.kernel.messages import TickNow

    from wilson.kernel import clock as clockmod

    app = make_app(start=clockmod.wall_now().isoformat())  # the serving process lives on the real clock
    assert app.wait_idle()

    async def steps(session):
        return await session.call_tool(
            "propose",
            {"action": "create_task", "why": "the doctor said so", "arguments": {"title": "Book a blood test"}},
        )

    proposed = asyncio.run(session_do(over_stdio(app.config.home), steps))
    assert not proposed.is_error, text_of(proposed)
    app.supervisor.tell("tick", TickNow())  # the running Wilson was not told: its tick finds the proposal
    assert wait_for(lambda: Approval.get().presented_at is not None, timeout=30)
    assert app.wait_idle()
    shown = [d["text"] for d in app.user_deliveries()]
    assert any("Book a blood test" in t and "test-agent" in t for t in shown), shown
    assert Approval.get().status == "pending"
