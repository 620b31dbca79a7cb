"""Wilson's own skills are shaped like a third-party one (tests/skill_support): each brings its settings section
and says which optional library it needs; the kernel's configuration holds only Wilson's own sections."""

from __future__ import annotations

import ast
from pathlib import Path

from wilson import skills
from wilson.kernel import config as configmod
from wilson.skills import Skill, Tool

ROOT = Path(__file__).resolve().parents[1]
WITH_SETTINGS = {"calendar", "email", "mcp", "memory", "telegram", "web"}


class Look(Tool):
    name = "look_somewhere"
    description = "A look."
    parameters = {"type": "object", "properties": {}}
    read_only = True


def kernel_sections() -> set[str]:
    """The sections written in wilson/kernel/config.py itself, before any skill adds its own."""
    tree = ast.parse((ROOT / "wilson" / "kernel" / "config.py").read_text(encoding="utf-8"))
    found = set()
    for node in tree.body:
        target = (
            node.target
            if isinstance(node, ast.AnnAssign)
            else (node.targets[0] if isinstance(node, ast.Assign) else None)
        )
        if isinstance(target, ast.Name) and target.id in ("DEFAULTS", "SCHEMA") and isinstance(node.value, ast.Dict):
            found |= {k.value for k in node.value.keys if isinstance(k, ast.Constant)}
    return found


def test_each_builtin_skill_brings_its_own_section_and_the_kernel_none_of_theirs():
    loaded = {s.name: s.skill for s in skills.installed() if s.name in skills.BUILTIN}
    assert set(loaded) == set(skills.BUILTIN) and all(loaded.values())
    assert {name for name, skill in loaded.items() if skill.config is not None} == WITH_SETTINGS
    assert not kernel_sections() & set(skills.BUILTIN), "a built-in skill's settings belong to the skill"
    config = configmod.load(ROOT / "no-home-here", environ={"WILSON_TELEGRAM_POLL_TIMEOUT": "5"})
    assert config.get("telegram", "poll_timeout") == 5 and config.get("email", "folders") == ["INBOX"]
    assert config.get("web", "host") == "127.0.0.1" and config.get("calendar", "poll") == "5m"
    assert loaded["mcp"].requires == (("mcp", "mcp"),) and loaded["mcp"].missing() == []


def test_a_skill_without_its_optional_library_says_what_to_install_and_offers_nothing(monkeypatch):
    skill = Skill(description="Somewhere.", tools=(Look,), requires=(("wilson_no_such_library", "somewhere"),))
    assert skill.missing() == ["the wilson_no_such_library library (pip install 'wilson[somewhere]')"]
    config = configmod.load(ROOT / "no-home-here", environ={})
    monkeypatch.setattr(skills, "installed", lambda: (skills.Installed("somewhere", skill, "test"),))
    assert skills.not_set_up(config) == {
        "look_somewhere": "it needs the wilson_no_such_library library (pip install 'wilson[somewhere]')"
    }
    assert "  needs: the wilson_no_such_library library (pip install 'wilson[somewhere]')" in skills.describe(config)
