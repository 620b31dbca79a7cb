"""The settings table holds settings: state that grows with use (where a button was pressed, the day's
budget notice, dashboard sessions, watched pages) has a table of its own, migrated from the old keys and
pruned. The source is read (AST) for every `put_setting` key, so a new prefix that holds state fails here."""

from __future__ import annotations

import ast
from datetime import datetime, timedelta, timezone
from pathlib import Path

from channels.web import auth, watcher
from storage import budget_notices, decision_chats, kv, marks, migrations
from storage.models import BudgetNotice, DecisionChat, Setting, Watch, WebSession

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("wilson", "actors", "channels", "storage")
NOW = datetime(2027, 1, 5, 8, 0, tzinfo=timezone.utc)

# Every key a setting is written under, and why it is a setting: one value the user chose or a secret's digest,
# not a row per thing that happens.
ALLOWED = {
    "quiet_until": "the user's mute",
    "model:down": "one flag while background work runs on the rules",
    "model:resting": "the few roles whose model rests after broken runs, one small value replaced as it changes",
    "web:token": "the dashboard token's digest",
    "web:login_code": "the one login code's digest",
    "web:address": "where the dashboard listens, for `wilson web-token` to print",
    "telegram:pairing_code": "the one pairing code",
    "telegram:paired_users": "who paired",
    "telegram:refused": "who was told once that Wilson is not theirs",
    "mcp:said": "the MCP tool descriptions the user let be used",
    "calendar:own_writes": "Wilson's own calendar changes not yet read back (a few at a time)",
    "calibration": "one set of outcome figures, replaced nightly",
    "learning:adopted:": "a change the user approved Wilson to make in how it works (one per kind of advice)",
}
# Families that once were settings and are state: a test fails if one is written as a setting again.
MOVED = (
    "telegram:decision_chat:",
    "budget_notice:",
    "web:session:",
    "web:watch:",
    "escalation:",
    "telegram:renamed:",
    "telegram:left_out:",
    "telegram:awaiting_modify:",
)


def _constants() -> dict[str, set[str]]:
    """Module-level string constants of the source tree, by name."""
    found: dict[str, set[str]] = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                if (
                    isinstance(node, ast.Assign)
                    and isinstance(node.value, ast.Constant)
                    and isinstance(node.value.value, str)
                ):
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            found.setdefault(target.id, set()).add(node.value.value)
    return found


def _keys_of(node, tree: ast.Module, constants: dict[str, set[str]]) -> set[str]:
    """What a key expression can be: a whole key, or a prefix ending in ":" for a family ("a:" + id)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.Name):
        if node.id in constants:
            return constants[node.id]
        assigned = [
            n.value
            for n in ast.walk(tree)
            if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == node.id for t in n.targets)
        ]
        return set().union(*(_keys_of(v, tree, constants) for v in assigned)) if assigned else {"?"}
    if isinstance(node, ast.Attribute):
        return constants.get(node.attr, {"?"})
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _keys_of(node.left, tree, constants)
    if isinstance(node, ast.JoinedStr):
        head = node.values[0] if node.values else None
        return {head.value} if isinstance(head, ast.Constant) else {"?"}
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        made = next((f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name == node.func.id), None)
        returns = [r.value for r in ast.walk(made) if isinstance(r, ast.Return) and r.value] if made else []
        return set().union(*(_keys_of(r, tree, constants) for r in returns)) if returns else {"?"}
    return {"?"}


def setting_keys() -> dict[str, set[str]]:
    """Each key or family a setting is written under in the source, with where."""
    constants = _constants()
    written: dict[str, set[str]] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.name in ("kv.py", "migrations.py"):
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "put_setting"
                    and node.args
                ):
                    for key in _keys_of(node.args[0], tree, constants):
                        written.setdefault(key, set()).add(f"{path.relative_to(ROOT)}:{node.lineno}")
    return written


def test_every_setting_key_is_a_setting_and_no_prefix_of_state_is_written():
    written = setting_keys()
    assert "?" not in written, f"a setting key the check cannot read: {written.get('?')}"
    unknown = {key: where for key, where in written.items() if key not in ALLOWED}
    assert not unknown, f"settings written under keys that are not settings (give state a table): {unknown}"
    assert not [key for key in written if key.startswith(MOVED)]
    assert set(written) == set(ALLOWED), "a key no longer written leaves ALLOWED"


def test_the_key_check_reads_constants_families_f_strings_and_helpers():
    tree = ast.parse(
        'KEY = "a:b"\nFAMILY = "c:"\ndef mark(t):\n    return f"e:{t}"\n'
        'kv.put_setting(KEY, 1)\nkv.put_setting(FAMILY + "3", 1)\nkv.put_setting(f"d:{x}", 1)\n'
        "kv.put_setting(mark(1), 1)\nkv.put_setting(thing(), 1)\n"
    )
    calls = [
        n.args[0] for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "put_setting"
    ]
    constants = {"KEY": {"a:b"}, "FAMILY": {"c:"}}
    assert [_keys_of(c, tree, constants) for c in calls] == [{"a:b"}, {"c:"}, {"d:"}, {"e:"}, {"?"}]


def test_the_state_that_left_the_settings_is_carried_over_by_the_migration(db):
    kv.put_setting("telegram:decision_chat:7", {"chat_id": 1001, "thread_id": 5})
    kv.put_setting("telegram:decision_chat:command:3", {"chat_id": 1001})
    kv.put_setting("budget_notice:2027-01-04", "BudgetExhausted: the day's budget is spent")
    kv.put_setting(
        "web:session:abc", {"csrf": "c", "created": NOW.isoformat(), "expires": (NOW + timedelta(days=30)).isoformat()}
    )
    kv.put_setting("web:watch:f00d", {"url": "https://example.org/", "id": "f00d", "every": 3600})
    kv.put_setting("telegram:left_out:4", [2])
    kv.put_setting("escalation:3:7:2027-02-01", "2027-01-25T08:00:00+00:00")
    kv.put_setting("quiet_until", "2027-01-06T08:00:00+00:00")
    migrations._v23_state_tables(db, None)
    assert marks.get("left_out", "4") == [2] and marks.get("escalation", "3:7:2027-02-01").startswith("2027-01-25")
    assert decision_chats.place("7") == {"chat_id": 1001, "thread_id": 5}
    assert decision_chats.place("command:3") == {"chat_id": 1001}
    assert budget_notices.given("2027-01-04") and not budget_notices.given("2027-01-05")
    assert auth.web_sessions.valid("abc", NOW)["csrf"] == "c"
    assert [w["url"] for w in watcher.sources()] == ["https://example.org/"]
    assert [s.key for s in Setting.select()] == ["quiet_until"]  # the settings keep only settings


def test_the_state_tables_are_pruned_as_they_are_written(db):
    decision_chats.remember("1", {"chat_id": 1}, NOW - decision_chats.KEEP - timedelta(days=1))
    decision_chats.remember("2", {"chat_id": 2}, NOW)
    assert [r.key for r in DecisionChat.select()] == ["2"]
    budget_notices.note("2026-12-01", "BudgetExhausted", NOW - timedelta(days=30))
    budget_notices.note("2027-01-05", "BudgetExhausted", NOW)
    budget_notices.note("2027-01-05", "BudgetExhausted again", NOW)  # once a day
    assert [(r.day, r.error) for r in BudgetNotice.select()] == [("2027-01-05", "BudgetExhausted")]
    old = auth.new_session(NOW - auth.SESSION_TIME - timedelta(days=1))
    assert auth.session(old, NOW) is None
    new = auth.new_session(NOW)  # a new session sweeps the ended ones
    assert auth.session(new, NOW) is not None and WebSession.select().count() == 1
    auth.new_token(NOW)  # a new token ends every session
    assert auth.session(new, NOW) is None and WebSession.select().count() == 0
    watcher.add("https://example.org/", timedelta(hours=1), NOW)
    assert watcher.remove("https://example.org/") and Watch.select().count() == 0
    marks.put("awaiting_modify", "1001", {"approval_id": 1}, NOW - timedelta(days=8))
    marks.put("renamed", "5", "Japan", NOW - timedelta(days=800))
    marks.put("awaiting_modify", "1002", {"approval_id": 2}, NOW)  # an old change waited for goes; a rename stays
    assert marks.get("awaiting_modify", "1001") is None and marks.get("renamed", "5") == "Japan"
    assert not [s.key for s in Setting.select() if s.key.startswith(MOVED)]
