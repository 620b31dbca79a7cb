"""The architecture, checked: the import contracts in .importlinter, and who may write Approval rows.

The import contracts run through import-linter itself (in the test extras), on the source tree;
its own rule that an ignored import which no longer exists is an error keeps the ignore lists
from outliving their reasons. The Approval check reads the source (AST): a proposal's rows are
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
    "actors/proposals/make.py": "makes, supersedes, copies and presents proposals; notes the message showing one",
    "actors/proposals/decide.py": "approves, rejects, modifies and revives proposals, and expires one answered late",
    "actors/proposals/lapse.py": "reminds of an unanswered proposal once, and expires it with one notice",
    "storage/migrations.py": "schema migrations carry existing rows over",
}
MODELS = {"Approval", "ApprovalItem"}
LONG = 400  # lines; a module longer than this says why at its top, in a paragraph starting "Size:"
# Long modules their owners are reworking now; each leaves this list when it is split or says why.
LONG_PENDING = {"wilson/synapse.py"}
CLASS_WRITES = {"create", "update", "insert", "insert_many", "insert_from", "replace", "replace_many", "delete",
                "get_or_create", "bulk_create", "bulk_update"}
INSTANCE_WRITES = {"save", "delete_instance"}
RAW_SQL = re.compile(r"(?i)\b(update|insert\s+into|delete\s+from|replace\s+into)\s+[\"'`]?approval(_item)?\b")


def approval_writes(source: str, name: str = "<source>") -> list[str]:
    """Every write to Approval/ApprovalItem rows in `source`: class-level writes (Approval.update(...)),
    saves of an instance whose name says it is one (approval.save()), and raw SQL naming the tables."""
    found = []
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            target = node.func.value
            owner = target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)
            if node.func.attr in CLASS_WRITES and owner in MODELS:
                found.append(f"line {node.lineno}: {owner}.{node.func.attr}")
            elif node.func.attr in INSTANCE_WRITES and owner and "approval" in owner.lower():
                found.append(f"line {node.lineno}: {owner}.{node.func.attr}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and RAW_SQL.search(node.value):
            found.append(f"line {node.lineno}: SQL {node.value[:40]!r}")
    return found


def source_files():
    for package in PACKAGES:
        yield from sorted((ROOT / package).rglob("*.py"))


def lint_imports(config: Path) -> subprocess.CompletedProcess:
    lint = Path(sys.executable).with_name("lint-imports")
    return subprocess.run([str(lint), "--no-cache", "--no-logo", str(config)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


def test_import_contracts_hold():
    done = lint_imports(ROOT / ".importlinter")
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"Contracts: 4 kept, 0 broken", done.stdout), done.stdout


def test_an_ignored_import_that_no_longer_happens_breaks_the_check(tmp_path):
    text = (ROOT / ".importlinter").read_text(encoding="utf-8")
    stale = text.replace("    channels.** -> actors.tools\n", "    channels.** -> actors.tools\n    channels.base -> actors.cortex\n")
    assert stale != text
    (tmp_path / "stale.ini").write_text(stale, encoding="utf-8")
    done = lint_imports(tmp_path / "stale.ini")
    assert done.returncode != 0 and "channels.base -> actors.cortex" in done.stdout + done.stderr


def test_only_the_gate_and_the_proposals_code_write_approval_rows():
    writers = {}
    for path in source_files():
        writes = approval_writes(path.read_text(encoding="utf-8"), str(path))
        if writes:
            writers[path.relative_to(ROOT).as_posix()] = writes
    outside = {path: writes for path, writes in writers.items() if path not in APPROVAL_WRITERS}
    assert not outside, f"Approval rows written outside the gate and the proposals code: {outside}"
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
    assert approval_writes("""
Approval.select().where(Approval.status == "pending")
Approval.get_or_none(Approval.id == 1).items
task.save()
Outbox.update(status="sent").execute()
db.execute_sql("SELECT * FROM approval")
""") == []


def test_a_module_over_400_lines_says_at_its_top_why_it_is_one_module():
    unexplained = []
    for path in source_files():
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(ROOT).as_posix()
        if len(text.splitlines()) <= LONG or name in LONG_PENDING:
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
                    pairs = zip(target.elts, node.value.elts) if isinstance(target, ast.Tuple) and isinstance(
                        node.value, ast.Tuple) else [(target, node.value)]
                    for left, right in pairs:
                        if isinstance(left, ast.Attribute) and left.attr == "status":
                            loose.update(_string_values(right, constants))
    return by_model, loose


def test_every_status_the_code_uses_is_one_its_column_declares():
    by_model, loose = status_values()
    assert set(by_model) >= {"Inbox", "Outbox", "Task", "Approval", "ApprovalItem"}, by_model  # the scan sees them
    unknown = {model: sorted(values - set(STATUSES[model])) for model, values in by_model.items()
               if values - set(STATUSES[model])}
    assert not unknown, f"statuses missing from their StrEnum in storage/models.py: {unknown}"
    every = {value for enum in STATUSES.values() for value in enum}
    assert loose <= every, f"a row's status set to a value no status column declares: {sorted(loose - every)}"
