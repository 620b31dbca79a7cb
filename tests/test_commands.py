"""The one command table (wilson/kernel/commands.py) is the only list of commands: Telegram's menu and its
handler, the REPL's grammar and help, and the dashboard's pages and navigation all follow it, so a command
missing from any surface that should offer it, or offered by one and missing from the table, fails here."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from actors.proposals import commands as own_commands
from channels.web import server
from tests.fake_telegram import DEFAULT_TOKEN
from tests.web_harness import logged_in
from wilson.app import repl
from wilson.app.application import Wilson
from wilson.kernel.clock import RealClock
from wilson.kernel.commands import COMMANDS, dashboard_nav, telegram_menu, telegram_words
from wilson.kernel.config import load

ROOT = Path(__file__).resolve().parents[1]
OWNER = 1001
# an argument each Telegram command can be given; a command missing here is given none
ARGUMENTS = {
    "done": "1",
    "snooze": "1 2d",
    "move": "1 2027-03-01",
    "drop": "1",
    "stop": "1",
    "quiet": "off",
    "forget": "1",
}


def _handled_names(path: Path, function: str, variable: str) -> set[str]:
    """The strings `function` compares `variable` with (`name == "tasks"`, `name in ("start", "help")`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    body = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == function)
    names = set()
    for node in ast.walk(body):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == variable:
            for right in node.comparators:
                values = right.elts if isinstance(right, (ast.Tuple, ast.List, ast.Set)) else [right]
                names.update(v.value for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str))
    return names


def test_each_command_has_one_row_one_word_per_surface_and_says_what_it_does():
    for surface in ("telegram", "repl"):
        words = [getattr(c, surface) for c in COMMANDS if getattr(c, surface)]
        assert len(words) == len(set(words)), f"a {surface} word stands in two rows"
    assert all(c.what and len(c.what) <= 256 for c in COMMANDS)  # Telegram's limit for a menu line
    assert all(c.telegram or c.repl or c.page for c in COMMANDS)
    # the user's own commands are the ones actors/proposals/commands.py takes at once
    assert {c.telegram for c in COMMANDS if c.own} == set(own_commands.VERBS)


def test_telegrams_handler_answers_exactly_the_tables_commands():
    handled = _handled_names(ROOT / "channels" / "telegram" / "inbound.py", "_command", "name")
    own = {c.telegram for c in COMMANDS if c.own}  # handled through own_commands.VERBS
    assert handled | own == telegram_words(), sorted(handled ^ (telegram_words() - own))


def test_telegrams_menu_is_the_table_and_every_command_in_it_is_answered(tmp_path, fake):
    environ = {
        "WILSON_TELEGRAM_TOKEN": DEFAULT_TOKEN,
        "WILSON_TELEGRAM_BASE_URL": fake.base_url,
        "WILSON_TELEGRAM_ALLOWED_USERS": str(OWNER),
        "WILSON_TELEGRAM_POLL_TIMEOUT": "1",
        "WILSON_CORE_QUIET_HOURS": "off",
        "WILSON_WEB_ENABLED": "false",  # no dashboard on a fixed port in a test
    }
    app = Wilson(load(tmp_path, environ=environ), RealClock(), llm="offline", log_level="WARNING").start()
    try:
        menu = fake.wait_for(lambda: fake.commands, 10, "setMyCommands")
        assert [(c["command"], c["description"]) for c in menu] == telegram_menu()
        assert {"forget", "snooze", "memory"} <= {c["command"] for c in menu}
        for word in sorted(telegram_words()) + ["frobnicate"]:
            fake.send_text(OWNER, f"/{word} {ARGUMENTS.get(word, '')}".strip())
        fake.wait_for(
            lambda: any("/frobnicate" in m["text"] for m in fake.sent_to(OWNER)), 20, "the answer to the last command"
        )
        assert app.wait_idle(20)
        said = [m["text"] for m in fake.sent_to(OWNER)]
        unknown = [t for t in said if t.startswith("I don't know /")]
        assert unknown == ["I don't know /frobnicate. /help lists what I understand."]
        help_text = next(t for t in said if t.startswith("I'm Wilson."))
        assert all(f"/{name} — {what}" in help_text for name, what in telegram_menu())
    finally:
        app.stop()


def test_the_repl_takes_every_command_of_the_table_and_its_help_names_each():
    for command in COMMANDS:
        if not command.repl:
            continue
        assert re.search(rf"(?m)(^|\s|\|\s){command.repl}\b", repl.HELP), f"{command.repl} is missing from the help"
        if command.own:
            line = f"{command.repl} 3 2027-03-01" if command.repl == "move" else f"{command.repl} 3"
            assert repl.parse(line).name == "do", line
        elif command.repl == "undo":
            assert repl.parse("undo").name == "undo"
        else:
            assert command.repl in (repl.ALONE if command.alone else repl.WITH_ARGUMENTS)
    assert set(repl.ALONE + repl.WITH_ARGUMENTS) - {"exit"} <= {c.repl for c in COMMANDS}
    source = ROOT / "wilson" / "app" / "repl.py"
    parsed = _handled_names(source, "parse", "word") | _handled_names(source, "_command", "word")
    assert {"calendar", "forget", "quiet"} <= parsed
    assert parsed - {"exit"} <= {c.repl for c in COMMANDS}, sorted(parsed - {c.repl for c in COMMANDS})
    assert repl.parse("tasks").name == "tasks" and repl.parse("memories").name == "memories"


class Site:
    """Enough of a channel to build the route table."""

    name = "web"


def test_the_dashboard_has_a_route_for_every_page_of_the_table_and_navigates_by_it(web):
    routes = {(route.path, method) for route in server.build(Site()).routes for method in route.methods}
    for command in COMMANDS:
        if command.page:
            assert any(path == command.page for path, _ in routes), command.page
    # every page a person browses to (not the API, not a detail of one, not the MCP endpoint agents call) is in
    # the navigation
    browsed = {
        path
        for path, method in routes
        if method == "GET" and "{" not in path and path.count("/") == 1 and path not in ("/", "/login", "/mcp")
    }
    assert browsed == {route for route, _ in dashboard_nav()}
    client = logged_in(web)
    html = client.get("/today").text
    shown = re.findall(r'<a href="(/\w*)"[^>]*>(\w+)', html[html.index("<header>") : html.index("</header>")])
    assert shown == dashboard_nav()
    assert 'href="/today" class="here"' in html
