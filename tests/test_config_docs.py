"""docs/configuration.md is made from the config schema, and the committed page is what it makes now."""

from __future__ import annotations

import re

from tests.conftest import ROOT
from wilson.app import cli
from wilson.kernel import config as configmod

DOCS = ROOT / "docs" / "configuration.md"


def test_the_committed_page_is_what_the_schema_makes_now():
    assert DOCS.read_text(encoding="utf-8") == configmod.docs_markdown(), (
        "docs/configuration.md is stale: run `make docs` and commit it"
    )


def test_every_setting_a_user_can_give_is_on_the_page_with_its_variable_and_default():
    page = configmod.docs_markdown()
    for section, keys in configmod.SCHEMA.items():
        assert f"## [{section}]" in page
        for key, (kind, _doc) in keys.items():
            if (section, key) in configmod._INTERNAL or re.match(r"(reflex|fast|deep)_", key):
                continue
            row = next(
                (
                    line
                    for line in page.splitlines()
                    if line.startswith(f"| `{key}`<br>`WILSON_{section.upper()}_{key.upper()}`")
                ),
                None,
            )
            assert row is not None, f"{section}.{key} is not documented"
            assert row.count(" | ") == 3, row  # four cells: a | inside a value would break the table
            assert configmod.EXPECTED[kind] in row
            if key in configmod.DEFAULTS.get(section, {}) and configmod.DEFAULTS[section][key] not in ("", []):
                assert f"`{configmod._doc_value(configmod.DEFAULTS[section][key])}`" in row
    assert "`deep_model`" in page  # the per-role overrides, as one sentence


def test_wilson_config_docs_prints_the_page_without_a_home(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("WILSON_HOME", str(tmp_path / "nowhere"))
    assert cli.main(["config", "--docs"]) == 0
    assert capsys.readouterr().out == configmod.docs_markdown()
    assert not (tmp_path / "nowhere").exists()  # documentation reads no settings and writes none


def test_the_readme_links_to_the_page():
    assert "(docs/configuration.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
