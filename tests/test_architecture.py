"""The architecture, checked: the import contracts in .importlinter, and who may write Approval rows.

The import contracts run through import-linter itself (in the test extras), on the source tree;
neither has an exception, and the channels contract names every actors module but its two public
ones, so a new actor is covered from its first line. The Approval check reads the source (AST): a proposal's rows are
the user's consent, so only the gate and the code that makes proposals may change them.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from storage.models import STATUSES

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("wilson", "actors", "channels", "storage")

# Each module that writes Approval or ApprovalItem rows, and why it may.
APPROVAL_WRITERS = {
    "actors/proposals/make.py": "makes, supersedes, copies and presents proposals (an undo's too); notes the message "
    "showing one",
    "actors/proposals/decide.py": "approves, rejects, modifies and revives proposals, and expires one answered late",
    "actors/proposals/calls.py": "records the outcome of an approved call to another program (an MCP server), made "
    "outside the approval's transaction, or that a stop left it unknown",
    "actors/proposals/lapse.py": "reminds of an unanswered proposal once, and expires it with one notice",
    "actors/proposals/commands.py": "records the user's own command (done 3, snooze 3 2d) as a proposal approved at once",
    "storage/migrations.py": "schema migrations carry existing rows over",
}
MODELS = {"Approval", "ApprovalItem"}
LONG = 400  # lines; a module longer than this says why at its top, in a paragraph starting "Size:"
CLASS_WRITES = {
    "create",
    "update",
    "insert",
    "insert_many",
    "insert_from",
    "replace",
    "replace_many",
    "delete",
    "get_or_create",
    "bulk_create",
    "bulk_update",
}
INSTANCE_WRITES = {"save", "delete_instance"}
RAW_SQL = re.compile(r"(?i)\b(update|insert\s+into|delete\s+from|replace\s+into)\s+[\"'`]?approval(_item)?\b")


def writes_to(
    source: str, models: set[str], instance_word: str, raw_sql: re.Pattern, name: str = "<source>"
) -> list[str]:
    """Every write to the rows of `models` in `source`: class-level writes (Approval.update(...)), saves of
    an instance whose name says it is one (approval.save()), and raw SQL naming their tables."""
    found = []
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            target = node.func.value
            owner = target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)
            if node.func.attr in CLASS_WRITES and owner in models:
                found.append(f"line {node.lineno}: {owner}.{node.func.attr}")
            elif node.func.attr in INSTANCE_WRITES and owner and instance_word in owner.lower():
                found.append(f"line {node.lineno}: {owner}.{node.func.attr}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and raw_sql.search(node.value):
            found.append(f"line {node.lineno}: SQL {node.value[:40]!r}")
    return found


def approval_writes(source: str, name: str = "<source>") -> list[str]:
    return writes_to(source, MODELS, "approval", RAW_SQL, name)


def source_files():
    for package in PACKAGES:
        yield from sorted((ROOT / package).rglob("*.py"))


def lint_imports(config: Path) -> subprocess.CompletedProcess:
    lint = Path(sys.executable).with_name("lint-imports")
    return subprocess.run(
        [str(lint), "--no-cache", "--no-logo", str(config)], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


def test_source_files_hold_no_control_characters():
    # a "\b" written where a regex's word boundary was meant becomes a backspace, and the pattern silently never
    # matches; no source here needs a control character other than a line break or a tab
    control = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # whole files: splitlines() would take some as line ends
    found = [
        f"{path.relative_to(ROOT)}:{text[: m.start()].count(chr(10)) + 1}"
        for path in [*source_files(), *sorted((ROOT / "wilson").rglob("*.toml"))]
        for text in [path.read_text(encoding="utf-8")]
        for m in [control.search(text)]
        if m
    ]
    assert not found, found


def test_import_contracts_hold():
    done = lint_imports(ROOT / ".importlinter")
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"Contracts: 3 kept, 0 broken", done.stdout), done.stdout


def test_channels_are_kept_from_every_actors_module_but_the_proposals_and_the_toolbox():
    text = (ROOT / ".importlinter").read_text(encoding="utf-8")
    contract = text[text.index("[importlinter:contract:channels]") :]
    listed = contract[contract.index("forbidden_modules =") : contract.index("allow_indirect_imports")]
    forbidden = {line.strip() for line in listed.splitlines()[1:] if line.strip()}
    assert forbidden == _actors_modules() - {"actors.proposals", "actors.tools"}
    assert "ignore_imports" not in text, "no contract has an exception"


def _actors_modules() -> set[str]:
    return {
        f"actors.{p.stem}"
        for p in (ROOT / "actors").iterdir()
        if p.name != "__init__.py" and not p.name.startswith("__") and (p.suffix == ".py" or p.is_dir())
    }


def test_the_organs_contract_orders_every_actors_module_with_no_exception():
    text = (ROOT / ".importlinter").read_text(encoding="utf-8")
    contract = text[text.index("[importlinter:contract:organs]") :]
    assert re.search(r"(?m)^type = layers$", contract)
    listed = contract[contract.index("layers =") + len("layers =") :].split("\n[")[0]
    layered = [m.strip() for line in listed.splitlines() for m in line.split("|") if m.strip()]
    assert sorted(layered) == sorted(_actors_modules()), "every organ and shared module has its place in the order"
    assert "ignore_imports" not in contract


def _unit(parts: list[str]) -> tuple[str, ...]:
    """Where a module belongs for the private-name rule: its folder, except that each module directly
    in actors/ is an organ of its own."""
    if len(parts) == 2 and parts[0] == "actors":
        return tuple(parts)
    return tuple(parts[:-1])


def _module_parts(name: str) -> list[str] | None:
    """The dotted name as the path of one of Wilson's own modules (a package's __init__ included)."""
    parts = name.split(".")
    if parts[0] not in PACKAGES:
        return None
    if (ROOT.joinpath(*parts).with_suffix(".py")).exists():
        return parts
    if (ROOT.joinpath(*parts) / "__init__.py").exists():
        return parts + ["__init__"]
    return None


def private_imports(source: str, own: list[str], name: str = "<source>") -> list[str]:
    """Each `_private` name this module (its path parts, own) takes from a module of another unit: by
    `from x import _name`, or as `module._name` on a module it imported."""
    found, modules = [], {}
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(own[: len(own) - node.level] + ([node.module] if node.module else []))
            for alias in node.names:
                whole = _module_parts(f"{base}.{alias.name}")
                if whole is not None:
                    modules[alias.asname or alias.name] = whole
                elif alias.name.startswith("_") and not alias.name.startswith("__"):
                    target = _module_parts(base)
                    if target is not None and _unit(target) != _unit(own):
                        found.append(f"line {node.lineno}: {base}.{alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                whole = _module_parts(alias.name)
                if whole is not None and alias.asname:
                    modules[alias.asname] = whole
    for node in ast.walk(ast.parse(source, name)):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and _unit(modules[node.value.id]) != _unit(own)
        ):
            found.append(f"line {node.lineno}: {'.'.join(modules[node.value.id])}.{node.attr}")
    return found


def test_no_module_takes_a_private_name_from_another_package():
    found = {}
    for path in source_files():
        own = list(path.relative_to(ROOT).with_suffix("").parts)
        hits = private_imports(path.read_text(encoding="utf-8"), own, str(path))
        if hits:
            found[path.relative_to(ROOT).as_posix()] = hits
    assert not found, f"private names used across packages (make them public where they are shared): {found}"


def test_the_private_name_check_sees_both_forms_and_allows_a_package_its_own():
    briefing = ["actors", "briefing"]
    assert private_imports("from actors.deadlines import _prepares_event\n", briefing) == [
        "line 1: actors.deadlines._prepares_event"
    ]
    assert private_imports("from actors import tools\nx = tools._is_int(1)\n", briefing) == [
        "line 2: actors.tools.__init__._is_int"
    ]
    assert private_imports("from actors.tick import schedules\nschedules._snoozed_task(1)\n", briefing) == [
        "line 2: actors.tick.schedules._snoozed_task"
    ]
    advice = ["actors", "hippocampus", "advice"]
    assert private_imports("from actors.hippocampus.common import _parse_due\n", advice) == []
    assert private_imports("from .common import _parse_due\n", advice) == []
    assert private_imports("from wilson.skills import is_int as _is_int\n", advice) == []


def test_only_the_proposals_code_writes_approval_rows():
    writers = {}
    for path in source_files():
        writes = approval_writes(path.read_text(encoding="utf-8"), str(path))
        if writes:
            writers[path.relative_to(ROOT).as_posix()] = writes
    outside = {path: writes for path, writes in writers.items() if path not in APPROVAL_WRITERS}
    assert not outside, f"Approval rows written outside actors/proposals/: {outside}"
    # A module that stopped writing leaves the list, so the list only ever shrinks to what is true.
    assert sorted(writers) == sorted(APPROVAL_WRITERS)


def test_the_writer_check_sees_every_kind_of_write_and_no_read():
    written = approval_writes("""
Approval.update(status="approved").where(Approval.id == 1).execute()
ApprovalItem.create(approval=1, position=1)
models.Approval.delete().execute()
approval.save()
original_approval.delete_instance()
Approval.insert_many([]).execute()
db.execute_sql("UPDATE approval SET status = 'approved'")
db.execute_sql("delete from approval_item where id = 1")
""")
    assert len(written) == 8, written
    assert (
        approval_writes("""
Approval.select().where(Approval.status == "pending")
Approval.get_or_none(Approval.id == 1).items
task.save()
Outbox.update(status="sent").execute()
db.execute_sql("SELECT * FROM approval")
""")
        == []
    )


def test_a_module_over_400_lines_says_at_its_top_why_it_is_one_module():
    unexplained = []
    for path in source_files():
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(ROOT).as_posix()
        if len(text.splitlines()) <= LONG:
            continue
        doc = ast.get_docstring(ast.parse(text, name)) or ""
        if not re.search(r"(?m)^Size: \S", doc):
            unexplained.append(name)
    assert not unexplained, f"over {LONG} lines with no 'Size:' paragraph in the docstring: {unexplained}"


def _string_values(node, constants: dict) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [v for element in node.elts for v in _string_values(element, constants)]
    if isinstance(node, ast.IfExp):
        return _string_values(node.body, constants) + _string_values(node.orelse, constants)
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
    return sorted(constants.get(name, ())) if name and name.isupper() else []


def status_values() -> tuple[dict[str, set[str]], set[str]]:
    """The status strings the code writes or compares: per model where the code names it (Task.status ==,
    Approval.update(status=...)), and, for a status set on a row (`row.status = ...`), without a model."""
    constants: dict[str, set[str]] = {}
    trees = [ast.parse(path.read_text(encoding="utf-8"), str(path)) for path in source_files()]
    for tree in trees:  # module constants that hold statuses, e.g. OPEN = ("pending", "partial")
        for node in tree.body:
            if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
                values = _string_values(node.value, {})
                for target in node.targets:
                    constants.setdefault(target.id, set()).update(values)
    by_model: dict[str, set[str]] = {}
    loose: set[str] = set()

    def model_of(node):
        if isinstance(node, ast.Attribute) and node.attr == "status" and isinstance(node.value, ast.Name):
            return node.value.id if node.value.id in STATUSES else None
        return None

    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare) and (model := model_of(node.left)):
                for other in node.comparators:
                    by_model.setdefault(model, set()).update(_string_values(other, constants))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                owner = node.func.value
                if node.func.attr == "in_" and (model := model_of(owner)):
                    for arg in node.args:
                        by_model.setdefault(model, set()).update(_string_values(arg, constants))
                elif isinstance(owner, ast.Name) and owner.id in STATUSES and node.func.attr in CLASS_WRITES:
                    for keyword in node.keywords:
                        if keyword.arg == "status":
                            by_model.setdefault(owner.id, set()).update(_string_values(keyword.value, constants))
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    pairs = (
                        zip(target.elts, node.value.elts)
                        if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple)
                        else [(target, node.value)]
                    )
                    for left, right in pairs:
                        if isinstance(left, ast.Attribute) and left.attr == "status":
                            loose.update(_string_values(right, constants))
    return by_model, loose


def test_every_status_the_code_uses_is_one_its_column_declares():
    by_model, loose = status_values()
    assert set(by_model) >= {"Inbox", "Outbox", "Task", "Approval", "ApprovalItem"}, by_model  # the scan sees them
    assert {"pending", "claimed"} <= by_model["Inbox"] and "retry" in by_model["Outbox"], by_model  # and their values
    unknown = {
        model: sorted(values - set(STATUSES[model]))
        for model, values in by_model.items()
        if values - set(STATUSES[model])
    }
    assert not unknown, f"statuses missing from their StrEnum in storage/models.py: {unknown}"
    every = {value for enum in STATUSES.values() for value in enum}
    assert loose <= every, f"a row's status set to a value no status column declares: {sorted(loose - every)}"


FIRST_PARTY = {"wilson", "actors", "channels", "storage"}
APP = str(ROOT / "wilson" / "app")
# the modules that may load Wilson's own late, for start-up time: the app's entry points, the web channel,
# whose pages and server load at the dashboard's first connection, and the synapse, whose scripted model server
# (a tool of tests and demos) loads only when asked for
LATE_OWN = (APP, str(ROOT / "channels" / "web" / "channel.py"), str(ROOT / "wilson" / "model" / "synapse.py"))


def imports_in_functions(source: str, name: str = "<source>") -> list[str]:
    """Imports made inside a function: of Wilson's own modules (a finding, with the layers pointing down
    there is no cycle to dodge, except in LATE_OWN with a `# lazy: why` comment: start-up time), or of a library without a `# lazy: why` comment just above."""
    lines = source.splitlines()
    found = []
    for func in ast.walk(ast.parse(source, name)):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(func):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            modules = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            above = lines[node.lineno - 2].strip() if node.lineno > 1 else ""
            if getattr(node, "level", 0) or any(m.split(".")[0] in FIRST_PARTY for m in modules):
                # only the app's entry points (and the web channel) may load Wilson's own late (start-up time),
                # and say so
                if not (name.startswith(LATE_OWN) and above.startswith("# lazy:")):
                    found.append(f"line {node.lineno}: {', '.join(modules)} is Wilson's own")
                continue
            grouped = above.startswith(("import ", "from "))  # the second line of a commented group
            if not (above.startswith("# lazy:") or grouped):
                found.append(f"line {node.lineno}: {', '.join(modules)} without a '# lazy:' reason")
    return found


def test_imports_sit_at_the_top_and_a_lazy_one_says_why():
    found = {}
    for path in source_files():
        lazy = imports_in_functions(path.read_text(encoding="utf-8"), str(path))
        if lazy:
            found[path.relative_to(ROOT).as_posix()] = lazy
    assert not found, f"imports inside functions: {found}"


def test_the_lazy_import_check_sees_own_modules_and_unexplained_libraries():
    assert imports_in_functions("""
def a():
    from storage import kv


def b():
    import lxml.html


def c():
    # lazy: psycopg2 is installed only for PostgreSQL
    import psycopg2
    import psycopg2.extensions
""") == ["line 3: storage is Wilson's own", "line 7: lxml.html without a '# lazy:' reason"]
    late = """
def main():
    # lazy: the commands load the whole application
    from wilson.app import commands
"""
    assert imports_in_functions(late, str(ROOT / "wilson" / "app" / "cli.py")) == []
    assert imports_in_functions(late, str(ROOT / "actors" / "cortex" / "actor.py")) == [
        "line 4: wilson.app is Wilson's own"
    ]


def _modules_in(folder: Path) -> set[str]:
    """A package's modules and sub-packages by name (data folders such as templates are not code)."""
    return {
        p.stem if p.suffix == ".py" else p.name
        for p in folder.iterdir()
        if (p.suffix == ".py" and p.name != "__init__.py") or (p.is_dir() and (p / "__init__.py").exists())
    }


def test_the_architecture_layout_names_every_module_of_each_layer_and_no_other():
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = text[text.index("Layout: the layers point down") :]
    block = block[block.index("```") + 3 :]
    block = block[: block.index("```")]
    listed: dict[str, set[str]] = {}
    folder = None
    for line in block.splitlines():
        head = re.match(r"^(wilson/app/|channels/|actors/|wilson/model/|storage/|wilson/kernel/)\s+(.*)$", line)
        if head:
            folder, line = head.group(1), head.group(2)
        elif not line.startswith(" "):
            folder = None
        if folder is None:
            continue
        line = re.sub(r"\([^)]*\)", "", line.split(":", 1)[1] if ":" in line.split(",")[0] else line)
        words = [w.strip().rstrip("/") for w in line.split(",")]
        listed.setdefault(folder, set()).update(w.split()[-1] for w in words if w.strip())
    assert set(listed) == {"wilson/app/", "channels/", "actors/", "wilson/model/", "storage/", "wilson/kernel/"}
    for folder, names in listed.items():
        assert names == _modules_in(ROOT / folder), (folder, sorted(names ^ _modules_in(ROOT / folder)))


def test_every_path_in_the_architecture_table_exists():
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = [
        line for line in text[text.index("| component | role | where |") :].splitlines()[2:] if line.startswith("|")
    ]
    assert len(table) >= 10
    for row in table:
        where = row.rsplit("|", 2)[-2]
        for path, inner in re.findall(r"`([\w/.]+)`(?: \(([^)]*)\))?", where):
            assert (ROOT / path).exists(), f"{path} in docs/architecture.md's table does not exist"
            for name in re.findall(r"`(\w+)`", inner or ""):
                assert (ROOT / path / f"{name}.py").exists() or (ROOT / path / name).is_dir(), (path, name)


def setting_defaults(source: str, name: str = "<source>") -> list[str]:
    """Defaults written where a setting is read: `config.get(section, key, default)`, or a number after
    `config.get(...) or` (0 is allowed: it says "none", not a default)."""

    def is_config_get(node) -> bool:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"):
            return False
        owner = node.func.value
        return (owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", "")) == "config"

    found = []
    for node in ast.walk(ast.parse(source, name)):
        if is_config_get(node) and len(node.args) + len(node.keywords) > 2:
            found.append(f"line {node.lineno}: a default passed to config.get")
        elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and is_config_get(node.values[0]):
            for value in node.values[1:]:
                if (
                    isinstance(value, ast.Constant)
                    and isinstance(value.value, (int, float))
                    and not isinstance(value.value, bool)
                    and value.value != 0
                ):
                    found.append(f"line {node.lineno}: config.get(...) or {value.value}")
    return found


def test_defaults_live_only_in_the_settings():
    found = {
        path.relative_to(ROOT).as_posix(): hits
        for path in source_files()
        if (hits := setting_defaults(path.read_text(encoding="utf-8"), str(path)))
    }
    assert not found, f"defaults written where a setting is read (they belong in DEFAULTS): {found}"
    assert setting_defaults(
        'a = config.get("ras", "interval_minutes", 15)\n'
        'b = float(self.config.get("tick", "interval_seconds") or 1.0)\n'
        'c = int(self.config.get("web", "port") or 0)\n'
    ) == ["line 1: a default passed to config.get", "line 2: config.get(...) or 1.0"]


KV_SQL = re.compile(r"(?i)\b(update|insert\s+into|delete\s+from|replace\s+into)\s+[\"'`]?(setting|cursor)\b")


def test_settings_and_cursors_are_written_only_through_kv():
    writers = {
        path.relative_to(ROOT).as_posix()
        for path in source_files()
        if writes_to(path.read_text(encoding="utf-8"), {"Setting", "Cursor"}, "cursor_row", KV_SQL, str(path))
    }
    assert writers == {"storage/kv.py"}, writers


def test_the_readme_is_a_front_door_that_links_the_architecture_and_cites_nothing_outside():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    assert "(docs/architecture.md)" in readme
    for linked in re.findall(r"\]\((docs/[\w./-]+\.md)\)", readme):
        assert (ROOT / linked).exists(), linked
    cited = [
        str(p.relative_to(ROOT))
        for folder in ("wilson", "actors", "channels", "storage", "bin", "docs", "tests")
        for p in (ROOT / folder).rglob("*")
        if p.suffix in {".py", ".md", ".toml", ".txt"}
        and p.name != Path(__file__).name
        and "DESIGN" + ".md" in p.read_text(encoding="utf-8", errors="replace")
    ]
    assert cited == [] and "DESIGN" + ".md" not in readme


def _function(tree: ast.AST, name: str):
    return next(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name)


def test_the_dashboard_has_one_router_over_module_level_handlers():
    tree = ast.parse((ROOT / "channels" / "web" / "server.py").read_text(encoding="utf-8"))
    build = _function(tree, "build")
    nested = [
        n.name for n in ast.walk(build) if n is not build and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    assert nested == [], f"build() defines handlers inside itself: {nested}"
    routed = [
        call.args[1].id
        for call in ast.walk(build)
        if isinstance(call, ast.Call) and getattr(call.func, "id", None) == "guard"
    ]
    handlers = {n.name for n in tree.body if isinstance(n, ast.AsyncFunctionDef)}
    assert len(routed) >= 25 and set(routed) <= handlers


def test_the_cortex_thinks_by_one_method_per_route_each_returning_a_thought():
    tree = ast.parse((ROOT / "actors" / "cortex" / "actor.py").read_text(encoding="utf-8"))
    for name in ("template_run", "model_run", "fast_run", "deep_run"):
        assert ast.unparse(_function(tree, name).returns) == "Thought", name
    run = _function(tree, "run")
    assert run.end_lineno - run.lineno < 15, "run() chooses the route and hands over; the routes are methods"
    # the route is chosen once, and no outcome waits as None to be filled in later
    assert not [
        n
        for n in ast.walk(run)
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant) and n.value.value is None
    ]
    outcome = ast.parse((ROOT / "actors" / "cortex" / "outcome.py").read_text(encoding="utf-8"))
    assert ast.unparse(_function(outcome, "record_outcome").returns) == "Notify"
