"""Skills: the built-in capabilities and a third-party skill are found the same way, through the
`wilson.skills` entry points; a skill's mutation waits for the user's approval and its receptor's
rows go through the thalamus; `[skills] disabled` turns one off; `wilson skills` lists them.

The third-party skill (tests/skill_support/wilson_skill_notes) is a distribution of its own: its
dist-info is found by importlib.metadata once its folder is on sys.path, as after a pip install."""

from __future__ import annotations

import configparser
import json
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from actors import tools
from storage.models import Approval, ApprovalItem, Outbox, ReceptorBuffer, Task, Trace
from tests.brain import tool_names
from tests.brain import call  # noqa: F401 (fixture)
from tests.cortex_support import cortex_requests, say, tool_results, user_texts
from wilson.app import cli
from wilson import skills
from wilson.kernel import config as configmod

ROOT = Path(__file__).resolve().parent.parent
SUPPORT = Path(__file__).resolve().parent / "skill_support"


@pytest.fixture
def notes_installed(monkeypatch):
    """The notes skill installed into this environment for one test, and gone after it."""
    monkeypatch.syspath_prepend(str(SUPPORT))
    skills.refresh()
    assert "notes" in {s.name for s in skills.installed()}
    yield
    monkeypatch.undo()
    sys.modules.pop("wilson_skill_notes", None)
    skills.refresh()
    configmod.add_skill_sections()


def quiet_background(ctx, body):
    return {"text": ""}


def test_the_built_in_skills_are_the_entry_points_setup_cfg_registers():
    parsed = configparser.ConfigParser()
    parsed.read(ROOT / "setup.cfg")
    registered = dict(
        line.split(" = ") for line in parsed["options.entry_points"]["wilson.skills"].strip().splitlines()
    )
    assert registered == skills.BUILTIN
    found = {s.name: s for s in skills.installed()}
    assert {"tasks", "reminders", "calendar", "telegram"} <= set(found)
    assert all(found[name].skill is not None for name in skills.BUILTIN), [found[n].error for n in skills.BUILTIN]
    # every tool the model is offered is a class of one skill, or the cortex's own
    box = tools.toolbox()
    assert {box.owner[name] for name in ("create_task", "close_topic", "list_tasks")} == {"tasks"}
    assert {box.owner[name] for name in ("remind", "create_reminder", "list_reminders")} == {"reminders"}
    assert box.owner["calendar_lookup"] == "calendar"
    assert {box.owner[name] for name in ("surface", "decide", "now", "recall")} == {"core"}
    # sending mail is the email skill's, and not offered until sending is set up: nothing pretends to send
    unset = tools.toolbox(configmod.load(Path("/nonexistent-wilson-home"), environ={}))
    assert unset.owner["send_email"] == "email"
    assert "send_email" not in {t["function"]["name"] for t in unset.schemas(True)}


def test_a_mutation_runs_only_for_an_item_the_gate_claimed(db):
    tz = ZoneInfo("Europe/Berlin")
    at = datetime(2027, 1, 5, 8, tzinfo=timezone.utc)
    approval = Approval.create(
        trace_id="t", approver="owner", channel="repl", nonce="n", created_at=at, expires_at=at + timedelta(days=1)
    )
    item = ApprovalItem.create(
        approval=approval, position=1, tool="create_task", args={"title": "Sneak in"}, description="New task: Sneak in"
    )
    with pytest.raises(tools.NotApproved):
        tools.execute_approved(item, "owner", at, tz, {})
    with pytest.raises(ValueError, match="unknown read tool"):
        tools.toolbox().run_read("create_task", {"title": "Sneak in"}, skills.Call(now=at, tz=tz))
    assert Task.select().count() == 0 and ApprovalItem.get_by_id(item.id).status == "pending"


def test_a_third_party_skills_mutation_waits_for_approval_and_its_receptor_goes_through_the_thalamus(
    notes_installed, scripted, tmp_path
):
    folder = tmp_path / "notes"
    folder.mkdir()

    def decide(ctx, body):
        if ctx["stimulus"]["origin"] != "user":
            return {"text": ""}
        return {"tool_calls": [call("list_notes"), call("write_note", title="groceries", text="oat milk, bread")]}

    app, server = scripted(decide, after=lambda body: {"text": "Proposed."}, WILSON_NOTES_DIR=str(folder))
    assert "notes" in app.supervisor.names()
    assert "notes" in app.config.get("core", "buffered_channels")

    # the receptor: a new file is a buffered row, routed and triaged by the thalamus like any other
    (folder / "milk.txt").write_text("Buy oat milk before Friday", encoding="utf-8")
    app.sync()
    assert app.wait_idle()
    (row,) = ReceptorBuffer.select().where(ReceptorBuffer.channel == "notes")
    assert row.text == "Buy oat milk before Friday" and row.processed_at is not None and row.outcome == "inbox"
    assert ("routed", "thalamus") in {(t.stage, t.actor) for t in Trace.select().where(Trace.trace_id == row.trace_id)}
    triage = [
        r["body"] for r in server.requests if "triage" in {t["function"]["name"] for t in r["body"].get("tools") or []}
    ]
    assert any("Buy oat milk before Friday" in json.dumps(body) for body in triage)

    # the tools: offered with the built-in ones, the read runs at once, the write becomes a proposal
    asked = say(app, "note that I need oat milk and bread")
    first = cortex_requests(server)[-1]
    offered = tool_names(first)  # the tools and the actions of `propose`
    assert {"list_notes", "write_note", "create_task"} <= offered
    assert "list_notes" in first["messages"][0]["content"]  # the skill's prompt line
    read, proposed = tool_results(server)[-2:]
    assert read["untrusted"].startswith("UNTRUSTED DATA from your notes folder")
    assert read["notes"] == ["Buy oat milk before Friday"]
    assert proposed["status"] == "proposed"
    approval = Approval.get(Approval.inbox_id == asked.id)
    (item,) = approval.items
    assert (item.tool, item.status, item.description) == (
        "write_note",
        "pending",
        "Write the note “groceries”: oat milk, bread",
    )
    assert not (folder / "written").exists() and not Outbox.select().where(Outbox.channel == "notes").exists()

    app.decide(approval.id, "approve")
    assert app.wait_idle()
    assert (folder / "written" / "groceries.txt").read_text(encoding="utf-8") == "oat milk, bread"
    (sent,) = Outbox.select().where(Outbox.channel == "notes")
    assert sent.status == "delivered" and ApprovalItem.get_by_id(item.id).status == "executed"
    assert any("✓ Write the note “groceries”" in text for text in user_texts(app))


def test_a_skill_turned_off_offers_nothing_starts_nothing_and_its_old_proposal_fails_honestly(
    notes_installed, scripted, tmp_path
):
    folder = tmp_path / "notes"
    folder.mkdir()

    def decide(ctx, body):
        return {"text": "OK."}

    app, server = scripted(decide, WILSON_NOTES_DIR=str(folder), WILSON_SKILLS_DISABLED="notes,calendar")
    assert "notes" not in app.supervisor.names() and "calendar" not in app.supervisor.names()
    assert app.config.get("core", "buffered_channels") == []
    say(app, "add milk to my shopping list")  # a request for a change: the deep role's full tool set
    offered = tool_names(cortex_requests(server)[-1])
    assert not offered & {"list_notes", "write_note", "calendar_lookup"} and "create_task" in offered

    now = app.clock.now()
    approval = Approval.create(
        trace_id="old",
        approver="owner",
        channel="repl",
        nonce="n0nce",
        created_at=now,
        expires_at=now + timedelta(days=1),
    )
    ApprovalItem.create(
        approval=approval,
        position=1,
        tool="write_note",
        args={"title": "x", "text": "y"},
        description="Write the note “x”: y",
    )
    app.decide(approval.id, "approve")
    assert app.wait_idle()
    assert any("Could not do:" in t and "the notes skill is turned off" in t for t in user_texts(app))
    assert not (folder / "written").exists()


def test_a_skills_config_section_is_checked_like_a_built_in_one(notes_installed, tmp_path):
    config = configmod.load(tmp_path / "home", environ={"WILSON_NOTES_DIR": str(tmp_path)})
    assert config.get("notes", "dir") == str(tmp_path) and config.get("notes", "poll") == "off"
    with pytest.raises(configmod.ConfigError, match=r"\[notes\] dir .* is not a folder"):
        configmod.load(tmp_path / "home", environ={"WILSON_NOTES_DIR": str(tmp_path / "missing")})
    with pytest.raises(configmod.ConfigError, match="notes.poll"):
        configmod.load(tmp_path / "home", environ={"WILSON_NOTES_POLL": "sometimes"})
    # turned off, its settings are not its problem any more
    configmod.load(
        tmp_path / "home", environ={"WILSON_NOTES_DIR": str(tmp_path / "missing"), "WILSON_SKILLS_DISABLED": "notes"}
    )


def test_wilson_skills_lists_skills_with_their_tools_and_channels(notes_installed, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("WILSON_SKILLS_DISABLED", "reminders")
    assert cli.main(["--home", str(tmp_path / "home"), "skills"]) == 0
    out = capsys.readouterr().out
    assert "tasks (on)" in out and "reminders (off)" in out and "notes (on)" in out
    assert "proposes (after your approval): write_note" in out and "reads: list_notes" in out
    assert "channel: notes (buffered receptor, not configured)" in out
    assert "channel: telegram (conversation, not configured)" in out
    assert "from wilson-skill-notes wilson_skill_notes:SKILL" in out
    # email is not set up here: its tools are not offered, and the listing says so instead of offering them
    email = out.split("email (on)")[1].split("  from wilson channels.email.skill:SKILL")[0]
    assert "reads:" not in email and "proposes" not in email
    assert "not offered yet: send_email, email sending is not set up" in email
    assert "not offered yet: read_email, email is not set up (no [email] imap_host)" in email


def test_a_skills_playbook_entries_teach_the_offline_rules_a_life_event_without_rewriting_the_users():
    from wilson.model.offline.recognition import load_playbook, match_words

    extra = (
        '[allotment]\nlabel = "Allotment"\ntriggers = ["allotment"]\n'
        '[[allotment.tasks]]\ntitle = "Order seeds"\ndays_before = 14\n'
        '[trip]\ntriggers = ["never-a-trip"]\n'
    )
    playbook = load_playbook(None, extra)
    event, _ = match_words(playbook, "Allotment handover")
    assert event.name == "allotment" and [t.title for t in event.tasks] == ["Order seeds"]
    trip, _ = match_words(playbook, "Trip to Japan")  # the file's own entry stands
    assert trip.name == "trip" and match_words(playbook, "never-a-trip") is None
    with pytest.raises(ValueError, match="a skill's playbook entries"):
        load_playbook(None, "[broken")


def test_the_skills_prompt_follows_the_disabled_setting_and_the_installed_skills(tmp_path, monkeypatch):
    line = "notes folder is read with list_notes"  # the notes skill's prompt line
    config = configmod.load(tmp_path / "home", environ={"WILSON_NOTES_DIR": str(tmp_path)})
    assert line not in skills.prompt(config)  # not installed yet
    monkeypatch.syspath_prepend(str(SUPPORT))
    skills.refresh()
    try:
        configmod.add_skill_sections()
        config = configmod.load(tmp_path / "home", environ={"WILSON_NOTES_DIR": str(tmp_path)})
        assert line in skills.prompt(config)
        assert skills.prompt(config) is skills.prompt(config), "worked out once"
        # its rule is about its tool: a run not offered list_notes is not told it
        assert line in skills.prompt(config, frozenset({"list_notes", "recall"}))
        assert line not in skills.prompt(config, frozenset({"recall"}))
        config.set("skills", "disabled", ["notes"])
        assert line not in skills.prompt(config)
        config.set("skills", "disabled", "calendar")
        assert line in skills.prompt(config)
    finally:
        monkeypatch.undo()
        sys.modules.pop("wilson_skill_notes", None)
        skills.refresh()
        configmod.add_skill_sections()
    assert line not in skills.prompt(configmod.load(tmp_path / "home2", environ={}))
