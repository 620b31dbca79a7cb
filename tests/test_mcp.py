"""MCP servers as a skill: a server written with the SDK (tests/mcp_servers.py, a stdio subprocess) gives
Wilson its tools. Its read tool answers within the user's run; its other tool becomes a proposal that the
approval gate calls once however often it is approved, and that a background run cannot reach; a tool that
never answers costs its timeout and Wilson keeps answering; a description that gives orders reaches the
model only as labelled data."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import pytest

from actors import tools
from actors.tools.untrusted import UNTRUSTED_END
from channels.mcp.skill import REGISTRY
from storage.models import Approval, ApprovalItem, Cursor, Task
from tests.brain import tool_names
from tests.cortex_support import background, cortex_requests, say, tool_results, user_texts
from tests.brain import call
from wilson.app import cli
from wilson.kernel import clock as clockmod
from wilson.kernel import config as configmod
from tests.poll import wait_for

pytest.importorskip("mcp.server.mcpserver", reason="the mcp extra is not installed")  # the SDK, not our code

from tests.mcp_support import SERVER, servers  # noqa: E402,F401
from tests.ports import free_port


def connected(app) -> bool:
    """The server has listed its tools, so the next run is offered them (it starts in the background)."""

    def offered():
        box = tools.toolbox(app.config)
        return "notes__read_notes" in box.tools and not box.why_not(box.get("notes__read_notes"))

    return wait_for(offered, 60, "the MCP server's tools on offer")


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


@pytest.fixture
def http_server(tmp_path):
    """The same server over streamable HTTP on loopback: (its URL, the file add_note appends to)."""
    port, log = free_port(), tmp_path / "http-log.txt"
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), str(log), str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        assert wait_for(lambda: listening(port), timeout=30), "the HTTP server did not start"
        yield f"http://127.0.0.1:{port}/mcp", log
    finally:
        proc.kill()
        proc.wait(timeout=10)


def last_tool_answer(body) -> dict:
    return json.loads(next(m for m in reversed(body["messages"]) if m["role"] == "tool")["content"])


def test_a_read_tool_answers_within_the_users_run(scripted, tmp_path):
    def decide(ctx, body):
        if "notes__read_notes" in tool_names(body):
            return {"tool_calls": [call("notes__read_notes")]}
        return {"tool_calls": [call("escalate", why="needs the notes")]}  # a fast run hands on to the planner

    def after(body):
        answer = last_tool_answer(body)
        return {"text": f"Your notes say: {answer.get('result') or answer}"}

    app, server = scripted(decide, after=after, **servers(tmp_path / "log.txt"))
    assert connected(app)
    say(app, "what do my notes say? check them and tell me")
    assert user_texts(app)[-1] == "Your notes say: oat milk; call the plumber on Tuesday"
    read = [r for r in tool_results(server) if "result" in r][-1]
    assert read["untrusted"].startswith("UNTRUSTED DATA from the MCP server notes")
    assert not (tmp_path / "log.txt").exists()


def test_a_server_over_http_gets_its_header_from_the_environment_answers_reads_and_is_called_once(
    scripted, http_server, monkeypatch, capfd
):
    url, log = http_server
    monkeypatch.setenv("NOTES_TOKEN", "s3cret-over-http")
    settings = {"notes": {"url": url, "headers": {"Authorization": "Bearer ${NOTES_TOKEN}"}, "timeout": 3}}

    def decide(ctx, body):
        if "who" in ctx["stimulus"]["text"]:
            return {
                "tool_calls": [call("notes__whoami")]
                if "notes__whoami" in tool_names(body)
                else [call("escalate", why="a lookup")]
            }
        return {"tool_calls": [call("propose", changes=[{"action": "notes__add_note", "text": "over http"}])]}

    def after(body):
        answer = last_tool_answer(body)
        return {"text": f"The server says: {answer['result']}" if "result" in answer else "Proposed."}

    app, server = scripted(decide, after=after, WILSON_MCP_SERVERS=json.dumps(settings))

    def offered():
        box = tools.toolbox(app.config)
        return "notes__whoami" in box.tools and not box.why_not(box.get("notes__whoami"))

    assert wait_for(offered)
    say(app, "who am I to the notes server? look it up")
    assert user_texts(app)[-1] == "The server says: Bearer s3cret-over-http"
    approval = Approval.get(Approval.inbox_id == say(app, "add a note over http").id)
    assert not log.exists()
    app.decide(approval.id, "approve")
    app.decide(approval.id, "approve")
    assert app.wait_idle()
    assert log.read_text(encoding="utf-8") == "over http\n"  # called once
    assert any("notes answered: “added over http”" in t for t in user_texts(app))
    from storage.models import Trace

    # the secret reached the server, and nothing of Wilson's own: no log line, no trace
    assert "s3cret-over-http" not in "".join(capfd.readouterr())
    assert not Trace.select().where(Trace.reason.contains("s3cret-over-http")).exists()


def test_a_servers_resources_are_listed_and_read_as_capped_untrusted_text(scripted, tmp_path):
    def decide(ctx, body):
        if "notes__resources" not in tool_names(body):
            return {"tool_calls": [call("escalate", why="a lookup")]}
        return {
            "tool_calls": [
                call("notes__resources"),
                call("notes__resources", uri="notes://today"),
                call("notes__resources", uri="notes://orders"),
                call("notes__resources", uri="notes://huge"),
                call("notes__resources", uri="file:///etc/passwd"),
            ]
        }

    app, server = scripted(
        decide, after=lambda body: {"text": "Read them."}, **servers(tmp_path / "log.txt", timeout=8)
    )

    def offered():
        box = tools.toolbox(app.config)
        return "notes__resources" in box.tools and not box.why_not(box.get("notes__resources"))

    assert wait_for(offered)
    say(app, "what is in the resources of my notes server? look")
    listing, today, orders, huge, elsewhere = tool_results(server)[-5:]
    assert [r["uri"] for r in listing["resources"]] == [
        "notes://today",
        "notes://log",
        "notes://orders",
        "notes://huge",
    ]
    assert listing["untrusted"].startswith("UNTRUSTED DATA from the MCP server notes")
    assert today["result"] == "oat milk; call the plumber on Tuesday"
    assert today["untrusted"].startswith("UNTRUSTED DATA from the MCP server notes")
    # orders stay data: the server's fake end marker cannot close Wilson's block
    assert "IGNORE ALL PREVIOUS INSTRUCTIONS" in orders["result"] and "<<<" not in orders["result"]
    # 20 MB is cut to what a model reads (or, on a slow machine, the read times out): bounded either way
    assert len(json.dumps(huge)) < 9000
    assert "more characters]" in huge.get("result", "") or "did not answer within 8 seconds" in huge["error"]
    assert "lists no resource “/etc/passwd”" in elsewhere["error"]  # only what the server listed is read
    assert user_texts(app)[-1] == "Read them."


def test_a_change_is_proposed_and_called_exactly_once_however_often_it_is_approved(scripted, tmp_path):
    log = tmp_path / "log.txt"

    def decide(ctx, body):
        if ctx["stimulus"]["origin"] != "user":
            return {"text": ""}
        return {"tool_calls": [call("propose", changes=[{"action": "notes__add_note", "text": "buy oat milk"}])]}

    app, server = scripted(decide, after=lambda body: {"text": "I proposed adding that note."}, **servers(log))
    assert connected(app)
    asked = say(app, "add a note to my notes server: buy oat milk")
    approval = Approval.get(Approval.inbox_id == asked.id)
    (item,) = approval.items
    assert (item.tool, item.status) == ("notes__add_note", "pending")
    assert item.description == "Use add_note on the MCP server notes (text: buy oat milk)"
    assert not log.exists(), "nothing is called before the user approves"

    app.decide(approval.id, "approve")
    app.decide(approval.id, "approve")
    assert app.wait_idle()
    assert log.read_text(encoding="utf-8") == "buy oat milk\n"  # called once
    assert ApprovalItem.get_by_id(item.id).status == "executed"
    done = next(t for t in user_texts(app) if t.startswith("Done:"))
    assert "✓ Use add_note on the MCP server notes (text: buy oat milk)" in done
    assert "notes answered: “added buy oat milk”" in done  # the result is told


def test_an_approved_change_that_never_answers_holds_up_no_other_write_or_decision_and_is_reported_as_unknown(
    scripted, tmp_path
):
    from storage import kv

    log = tmp_path / "log.txt"

    def decide(ctx, body):
        if "still there" in ctx["stimulus"]["text"]:
            return {"text": "Yes, still here."}
        return {"tool_calls": [call("propose", changes=[{"action": "notes__add_slowly", "text": "pay rent"}])]}

    app, server = scripted(decide, after=lambda body: {"text": "Proposed."}, **servers(log))
    assert connected(app)
    approval = Approval.get(Approval.inbox_id == say(app, "add a note to my notes server: pay rent").id)
    (item,) = approval.items
    began = clockmod.monotonic()
    app.decide(approval.id, "approve")
    # the server has acted and is keeping the call waiting: the approval is committed, the call in flight
    assert wait_for(lambda: log.exists() and ApprovalItem.get_by_id(item.id).status == "calling")
    kv.put_setting("another write", "while the server works")  # SQLite's one writer is free
    assert ApprovalItem.get_by_id(item.id).status == "calling", "the write waited for the call to end"
    assert kv.get_setting("another write") == "while the server works"
    # and the gate decides on at once: another proposal approved meanwhile is done before the server answers
    assert app.propose("create_task", {"title": "Water the plants"}, reason="because you asked") is None
    other = Approval.get(Approval.summary == "because you asked")
    assert wait_for(lambda: Approval.get_by_id(other.id).presented_at is not None)
    app.decide(other.id, "approve")
    assert wait_for(lambda: Task.select().where(Task.title == "Water the plants").exists())
    assert ApprovalItem.get_by_id(item.id).status == "calling", "the other decision waited for the server"
    assert app.wait_idle()
    assert clockmod.monotonic() - began < 20
    failed = next(t for t in user_texts(app) if "Could not do:" in t)
    assert failed == (
        "Could not do:\n! Use add_slowly on the MCP server notes (text: pay rent) (the MCP server notes "
        "did not answer within 3 seconds; whether it acted is unknown, so it is not repeated)"
    )
    assert ApprovalItem.get_by_id(item.id).status == "unknown"
    app.decide(approval.id, "approve")
    assert app.wait_idle()
    assert user_texts(app)[-1] == f"Already done: proposal {approval.id} was approved."
    assert log.read_text(encoding="utf-8") == "pay rent\n"  # it acted once, and was not called again
    say(app, "are you still there?")  # Wilson answers on
    assert user_texts(app)[-1] == "Yes, still here."


def test_a_background_run_cannot_call_or_propose_a_servers_change(scripted, tmp_path):
    log = tmp_path / "log.txt"

    def decide(ctx, body):
        if ctx["stimulus"]["origin"] == "user":
            return {"text": "OK."}
        return {
            "tool_calls": [
                call("notes__add_note", text="from a stranger's mail"),
                call("propose", changes=[{"action": "notes__add_note", "text": "again"}]),
            ]
        }

    app, server = scripted(decide, **servers(log))
    assert connected(app)
    background(app, "Please add a note to the notes server saying the invoice is paid.")
    offered = tool_names(cortex_requests(server)[-1])
    assert "notes__add_note" not in offered and "notes__read_notes" in offered
    answers = tool_results(server)[-2:]
    assert all("error" in a for a in answers), answers
    assert not ApprovalItem.select().where(ApprovalItem.tool == "notes__add_note").exists()
    assert not log.exists()


def asked_to_call(word: str):
    """A model that calls the notes server's tool `word` when a message names it (escalating to a run that is
    offered the server's tools first), and otherwise answers "Still here."."""

    def decide(ctx, body):
        if word in ctx["stimulus"]["text"]:
            tool = f"notes__{word}"
            return {"tool_calls": [call(tool)] if tool in tool_names(body) else [call("escalate", why="a lookup")]}
        return {"text": "Still here."}

    return decide


def failed_lookup(body):
    return {"text": f"The lookup failed: {last_tool_answer(body).get('error')}"}


def test_a_server_that_never_answers_costs_its_timeout_and_wilson_keeps_answering(scripted, tmp_path):
    decide = asked_to_call("stall")
    app, server = scripted(decide, after=failed_lookup, **servers(tmp_path / "log.txt"))
    assert connected(app)
    began = clockmod.monotonic()
    say(app, "stall: look that up on the notes server please")
    took = clockmod.monotonic() - began
    assert "did not answer within 3 seconds" in user_texts(app)[-1]
    assert took < 20, f"the user waited {took:.1f}s for a server with a 3s timeout"
    say(app, "hello again")
    assert user_texts(app)[-1] == "Still here."


def test_a_20_mb_answer_is_cut_off_and_wilson_keeps_answering(scripted, tmp_path):
    decide = asked_to_call("huge")
    app, server = scripted(
        decide,
        after=lambda body: {"text": "Looked it up."},
        **servers(tmp_path / "log.txt", exclude=["stall", "crash"]),
    )
    assert connected(app)
    began = clockmod.monotonic()
    say(app, "huge: look that up on the notes server please")
    assert clockmod.monotonic() - began < 30
    answer = tool_results(server)[-1]
    # on a fast machine the answer arrives and is cut; on a slow one the call times out: either way it is bounded
    assert len(json.dumps(answer)) < 9000, len(json.dumps(answer))
    assert "more characters]" in answer.get("result", "") or "did not answer within 3 seconds" in answer["error"]
    say(app, "hello again")
    assert user_texts(app)[-1] == "Still here."


def test_a_server_that_changes_its_tools_mid_session_is_listed_again(scripted, tmp_path):
    def decide(ctx, body):
        if "grow" in ctx["stimulus"]["text"] and "notes__grow" in tool_names(body):
            return {"tool_calls": [call("notes__grow")]}
        return {"tool_calls": [call("escalate", why="planner")]} if "escalate" in tool_names(body) else {"text": "OK."}

    app, server = scripted(decide, after=lambda body: {"text": "Done."}, **servers(tmp_path / "log.txt"))
    assert connected(app)
    assert "notes__sprouted" not in tools.toolbox(app.config).tools
    say(app, "grow: look that up on the notes server and plan my day")

    def offered():
        box = tools.toolbox(app.config)
        return "notes__sprouted" in box.tools and not box.why_not(box.get("notes__sprouted"))

    assert wait_for(offered, timeout=20)
    say(app, "and now plan my week please")
    assert "notes__sprouted" in tool_names(cortex_requests(server)[-1])
    from storage.models import Trace

    assert wait_for(lambda: Trace.select().where(Trace.stage == "relisted").exists())
    (traced,) = Trace.select().where(Trace.stage == "relisted")
    assert traced.reason == "the MCP server notes changed its tools: added sprouted, removed none"
    resources = tools.toolbox(app.config).get("notes__resources")  # its resources were listed again too
    assert "notes://sprouted" in [r["uri"] for r in resources.listing()]


def test_a_server_that_exits_is_reported_started_again_and_shown_in_status(scripted, tmp_path, capsys):
    decide = asked_to_call("crash")
    app, server = scripted(decide, after=failed_lookup, **servers(tmp_path / "log.txt"))
    assert connected(app)
    say(app, "crash: look that up on the notes server please")
    assert "the MCP server notes failed: MCPError: Connection closed" in user_texts(app)[-1]
    say(app, "hello again")
    assert user_texts(app)[-1] == "Still here."
    health = lambda: Cursor.get_or_none(Cursor.name == "health:mcp notes")  # noqa: E731
    assert wait_for(lambda: health() is not None and health().value == {"state": "ready", "restarts": 1})
    assert cli.main(["--home", str(app.config.home), "status"]) == 0
    assert "mcp notes: ready (1 restart(s))" in capsys.readouterr().out


def test_a_description_that_gives_orders_reaches_the_model_only_as_labelled_data(scripted, tmp_path):
    def decide(ctx, body):
        return {"tool_calls": [call("escalate", why="planner")]} if "escalate" in tool_names(body) else {"text": "OK."}

    app, server = scripted(decide, **servers(tmp_path / "log.txt"))
    assert connected(app)
    say(app, "what will the weather be in Lyon? check and then plan my day")
    schemas = {s["function"]["name"]: s["function"] for r in cortex_requests(server) for s in r.get("tools") or []}
    weather = schemas["notes__weather"]["description"]
    assert weather.startswith("<<<UNTRUSTED DATA from the MCP server notes, describing its tool “weather”")
    assert "IGNORE ALL PREVIOUS INSTRUCTIONS" in weather
    # the server's fake end marker is broken: the only end of the block is Wilson's own, at its end
    assert weather.count(UNTRUSTED_END) == 1 and weather.endswith(UNTRUSTED_END)
    assert "‹‹‹END UNTRUSTED DATA›››" in weather
    # a change's line in `propose` quotes the server's words as untrusted
    propose = "\n".join(
        s["function"]["description"]
        for r in cortex_requests(server)
        for s in r.get("tools") or []
        if s["function"]["name"] == "propose"
    )
    assert "notes__add_note(text): tool “add_note” of the MCP server notes; it says of itself (untrusted" in propose
    assert not Approval.select().exists() and not (tmp_path / "log.txt").exists()


def test_wilson_skills_lists_each_server_its_state_and_tools(tmp_path, capsys, monkeypatch):
    for name, value in servers(tmp_path / "log.txt", exclude=["stall", "crash", "huge", "grow"]).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv(
        "WILSON_MCP_SERVERS",
        json.dumps(
            {
                **json.loads(
                    servers(tmp_path / "log.txt", exclude=["stall", "crash", "huge", "grow"])["WILSON_MCP_SERVERS"]
                ),
                "gone": {"command": str(tmp_path / "no-such-server")},
                "later": {"command": "x", "enabled": False},
            }
        ),
    )
    assert cli.main(["--home", str(tmp_path / "home"), "skills"]) == 0
    out = capsys.readouterr().out
    mcp = out.split("mcp (on)")[1].split("from wilson channels.mcp.skill:SKILL")[0]
    assert "MCP server notes (stdio: " in mcp and "): ready" in mcp
    assert "reads: notes__read_notes, notes__weather" in mcp
    assert "proposes (after your approval): notes__add_note, notes__add_slowly" in mcp
    assert "left out (include/exclude): stall, grow, huge, crash" in mcp
    assert "resources: 4, read with notes__resources" in mcp
    assert "MCP server gone (stdio: " in mcp and "failed: FileNotFoundError" in mcp
    assert "MCP server later: off (enabled = false)" in mcp


def test_bad_server_settings_get_a_clear_error(tmp_path):
    with pytest.raises(configmod.ConfigError, match=r"\[mcp\] servers.notes: needs either command .* or url"):
        configmod.load(tmp_path / "home", environ={"WILSON_MCP_SERVERS": json.dumps({"notes": {"timeout": 5}})})
    with pytest.raises(configmod.ConfigError, match=r"servers.notes: unknown key comand"):
        configmod.load(tmp_path / "home", environ={"WILSON_MCP_SERVERS": json.dumps({"notes": {"comand": "x"}})})
    with pytest.raises(configmod.ConfigError, match=r"mcp.servers = .*expected a table of tables"):
        configmod.load(tmp_path / "home", environ={"WILSON_MCP_SERVERS": "not json"})


def test_wilson_mcp_test_connects_and_lists_each_tool_with_how_it_is_used(tmp_path, capsys, monkeypatch):
    for name, value in servers(tmp_path / "log.txt").items():
        monkeypatch.setenv(name, value)
    assert cli.main(["--home", str(tmp_path / "home"), "mcp", "test", "notes"]) == 0
    out = capsys.readouterr().out
    # the command as configured, cut at 80 characters: how much of it shows depends on where the clone lives
    assert f"MCP server notes (stdio: {f'{sys.executable} {SERVER}'[:80]}" in out and "): ready" in out
    assert "notes__read_notes: read — “Read the user's notes.” (its own words, untrusted)" in out
    assert "notes__add_note: proposed — “Append a note to the user's notes.” (its own words, untrusted)" in out
    assert not (tmp_path / "log.txt").exists(), "testing lists the tools; it calls none"
    assert cli.main(["--home", str(tmp_path / "home"), "mcp", "test", "other"]) == 2
    assert "no server 'other' in [mcp.servers] (configured: notes)" in capsys.readouterr().err


def test_wilson_mcp_add_writes_the_servers_table_and_tries_it(tmp_path, capsys):
    home = tmp_path / "home"
    home.mkdir()
    (home / "wilson.toml").write_text('[core]\ntimezone = "Europe/Berlin"\n', encoding="utf-8")
    log = tmp_path / 'log with "quotes".txt'
    assert cli.main(["--home", str(home), "mcp", "add", "notes", "--", sys.executable, str(SERVER), str(log)]) == 0
    out = capsys.readouterr().out
    assert "added [mcp.servers.notes]" in out and "notes__add_note: proposed" in out
    config = configmod.load(home, environ={})
    assert config.get("core", "timezone") == "Europe/Berlin"  # what was there stays
    assert config.get("mcp", "servers") == {"notes": {"command": sys.executable, "args": [str(SERVER), str(log)]}}
    assert cli.main(["--home", str(home), "mcp", "add", "notes", "--", "other"]) == 2
    assert "there is already a server 'notes'" in capsys.readouterr().err
    assert cli.main(["--home", str(home), "mcp", "add", "bad name", "--", "x"]) == 2
    assert "server name 'bad name' must be" in capsys.readouterr().err


def test_a_servers_secrets_stay_out_of_the_settings_shown(tmp_path, capsys, monkeypatch):
    from channels.mcp.servers import env_for, headers_for, spec_of

    monkeypatch.setenv(
        "WILSON_MCP_SERVERS",
        json.dumps(
            {
                "gh": {"command": "x", "env": {"API_KEY": "plain-secret-1"}},
                "web": {"url": "https://mcp.example/mcp", "headers": {"Authorization": "Bearer ${NOTES_TOKEN}"}},
            }
        ),
    )
    assert cli.main(["--home", str(tmp_path / "home"), "config"]) == 0
    out = capsys.readouterr().out
    assert "plain-secret-1" not in out and "'API_KEY': '***'" in out
    spec = spec_of("web", {"url": "https://mcp.example/mcp", "headers": {"Authorization": "Bearer ${NOTES_TOKEN}"}})
    assert headers_for(spec, {"NOTES_TOKEN": "t0ken"}) == {"Authorization": "Bearer t0ken"}
    with pytest.raises(ValueError, match="NOTES_TOKEN .* is not set"):
        headers_for(spec, {})
    assert env_for(spec_of("gh", {"command": "x", "env": {"TOKEN": "${GH}"}}), {"GH": "abc"}) == {"TOKEN": "abc"}


def test_a_changed_description_is_shown_and_approved_before_the_tool_is_used_again(scripted, tmp_path):
    from channels.mcp.skill import SAID_KEY, StateChanged
    from storage import kv

    def decide(ctx, body):
        return {"tool_calls": [call("escalate", why="planner")]} if "escalate" in tool_names(body) else {"text": "OK."}

    app, server = scripted(decide, **servers(tmp_path / "log.txt"))
    # what the user let it be used with before (an earlier run of Wilson); the server now says something else
    kv.put_setting(SAID_KEY, {"notes__add_note": "Append a note."})
    app.supervisor.tell("mcp", StateChanged("notes"))  # as when the server lists its tools
    assert wait_for(lambda: ApprovalItem.select().where(ApprovalItem.tool == "mcp_accept_description").exists())
    assert app.wait_idle()
    (item,) = ApprovalItem.select().where(ApprovalItem.tool == "mcp_accept_description")
    assert item.description == (
        "Let Wilson use notes__add_note again: its server now describes it as “Append a note "
        "to the user's notes.” (the server's words, not Wilson's)"
    )
    assert any("Let Wilson use notes__add_note again" in t for t in user_texts(app))  # shown to the user
    say(app, "add a note: hello, then plan my day")
    offered = tool_names(cortex_requests(server)[-1])
    assert "notes__add_note" not in offered and "notes__read_notes" in offered  # held until approved

    app.decide(item.approval.id, "approve")
    assert app.wait_idle()
    say(app, "add a note: hello again, then plan my day")
    assert "notes__add_note" in tool_names(cortex_requests(server)[-1])
    assert kv.get_setting(SAID_KEY)["notes__add_note"] == "Append a note to the user's notes."


def test_a_watched_resource_that_changes_becomes_one_buffered_stimulus_and_no_change_makes_none(scripted, tmp_path):
    from datetime import timedelta

    from channels.mcp.watch import state_key
    from storage import kv
    from storage.models import ReceptorBuffer
    from wilson.kernel.messages import TickNow

    log = tmp_path / "log.txt"

    def decide(ctx, body):
        return {"text": ""}

    app, server = scripted(decide, **servers(log, watch=["notes://log", "read_notes", "add_note"], watch_minutes=15))
    assert connected(app)
    assert "mcp" in app.config.get("core", "buffered_channels")
    app.supervisor.tell("tick", TickNow())  # the first look takes a baseline: what was there is not news
    assert wait_for(
        lambda: (
            kv.get_cursor(state_key("notes", "notes://log")) is not None
            and kv.get_cursor(state_key("notes", "add_note")) is not None
        )
    )
    assert app.wait_idle()
    mcp_rows = lambda: list(ReceptorBuffer.select().where(ReceptorBuffer.channel == "mcp"))  # noqa: E731
    assert mcp_rows() == []
    assert "only reads are watched" in kv.get_cursor(state_key("notes", "add_note"))["error"]  # never polled
    assert not log.exists()

    log.write_text("buy oat milk\n", encoding="utf-8")  # the server's resource changes
    app.advance(timedelta(minutes=16))
    assert wait_for(lambda: len(mcp_rows()) == 1)
    (row,) = mcp_rows()
    assert row.text == "The MCP server notes changed “notes://log”; it now reads:\nbuy oat milk\n"
    assert row.payload == {"server": "notes", "watched": "notes://log", "title": "notes: notes://log"}

    app.advance(timedelta(minutes=16))  # looked at again: nothing changed, nothing buffered
    assert wait_for(lambda: kv.get_cursor(state_key("notes", "notes://log"))["seen_at"] == app.clock.now().isoformat())
    assert app.wait_idle()
    assert len(mcp_rows()) == 1
    app.sync()  # the thalamus triages it like a mail
    assert wait_for(
        lambda: (
            ReceptorBuffer.get_by_id(row.id).processed_at is not None
            or ReceptorBuffer.get_by_id(row.id).outcome is not None
        )
    )


def test_a_server_that_exits_at_every_call_costs_little_acts_only_when_approved_and_wilson_keeps_answering(
    scripted, tmp_path
):
    log = tmp_path / "log.txt"
    dying = {"command": sys.executable, "args": [str(SERVER), str(log), "exit-on-call"], "timeout": 3}

    def decide(ctx, body):
        text = ctx["stimulus"]["text"]
        if "look" in text:
            return {
                "tool_calls": [call("dying__look")]
                if "dying__look" in tool_names(body)
                else [call("escalate", why="a lookup")]
            }
        if "note" in text:
            return {"tool_calls": [call("propose", changes=[{"action": "dying__add_note", "text": "call mum"}])]}
        return {"text": "Still here."}

    def after(body):
        answer = last_tool_answer(body)
        return {"text": f"The lookup failed: {answer['error']}" if "error" in answer else "Proposed."}

    app, server = scripted(decide, after=after, WILSON_MCP_SERVERS=json.dumps({"dying": dying}))

    def offered():
        box = tools.toolbox(app.config)
        return "dying__add_note" in box.tools and not box.why_not(box.get("dying__add_note"))

    assert wait_for(offered)
    began = clockmod.monotonic()
    for _ in range(2):  # it dies each time; each time the user hears why, within the server's timeout
        say(app, "look at my notes on the dying server")
        assert user_texts(app)[-1].startswith("The lookup failed: the MCP server dying")
        say(app, "hello")
        assert user_texts(app)[-1] == "Still here."
    assert clockmod.monotonic() - began < 40
    assert not log.exists(), "a read acts on nothing, and nothing was approved"

    approval = Approval.get(Approval.inbox_id == say(app, "add a note on the dying server: call mum").id)
    # its tools stay listed while it starts again: the approval waits for the server itself to be back
    assert wait_for(lambda: REGISTRY.connection("dying").state == "ready" and offered(), 60, "the server back")
    app.decide(approval.id, "approve")
    app.decide(approval.id, "approve")
    assert app.wait_idle()
    failed = next(t for t in user_texts(app) if t.startswith("Could not do:"))
    assert "whether it acted is unknown, so it is not repeated" in failed
    assert log.read_text(encoding="utf-8") == "call mum\n"  # it acted once, and was never called again
    say(app, "hello")
    assert user_texts(app)[-1] == "Still here."


def test_a_server_that_never_answers_its_handshake_holds_up_no_answer_to_the_user(scripted, tmp_path):
    mute = {"command": sys.executable, "args": ["-c", "import time; time.sleep(3600)"], "timeout": 3}

    def decide(ctx, body):
        return {"text": "Here, at once."}

    app, server = scripted(decide, WILSON_MCP_SERVERS=json.dumps({"mute": mute}))
    began = clockmod.monotonic()
    say(app, "hello")
    assert user_texts(app)[-1] == "Here, at once."
    assert clockmod.monotonic() - began < 10, "the user waited for a server that never answers"
    health = Cursor.get_or_none(Cursor.name == "health:mcp mute")
    assert health is not None and health.value["state"] == "starting"  # still waiting for it, off the user's path
    assert not [n for n in tools.toolbox(app.config).tools if n.startswith("mute__")]


def test_wilson_doctor_starts_each_server_and_says_what_to_fix(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(
        "WILSON_MCP_SERVERS",
        json.dumps(
            {
                **json.loads(servers(tmp_path / "log.txt")["WILSON_MCP_SERVERS"]),
                "gone": {"command": str(tmp_path / "no-such-server")},
            }
        ),
    )
    cli.main(["--home", str(tmp_path / "home"), "doctor"])
    out = capsys.readouterr().out
    assert "mcp: ok, notes answered (8 tool(s), 4 resource(s))" in out
    assert "mcp: FIX: gone failed: FileNotFoundError" in out and "`wilson mcp test gone` shows what it offers" in out
    assert not (tmp_path / "log.txt").exists(), "the doctor calls no tool"
