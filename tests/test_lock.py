"""The lock files pin, with hashes, every package setup.cfg asks for, at a version it allows; make, CI (through
make) and the Dockerfile install from them with hashes required. A dependency added to setup.cfg without
`make lock` fails here, naming it."""

from __future__ import annotations

import configparser
import re

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import ROOT

LOCK = ROOT / "requirements" / "lock.txt"
RUN_LOCK = ROOT / "requirements" / "run.txt"


def pins(path) -> dict[str, tuple[str, int]]:
    """name -> (version, how many hashes), from a pip-compile --generate-hashes file."""
    found = {}
    for block in re.split(r"\n(?=\S)", path.read_text()):
        first = block.split("\\", 1)[0].strip()
        if not first or first.startswith("#"):
            continue
        name, _, version = first.partition("==")
        found[canonicalize_name(name)] = (version.strip(), block.count("--hash=sha256:"))
    return found


def wanted(*sections: str) -> list[Requirement]:
    setup = configparser.ConfigParser()
    setup.read(ROOT / "setup.cfg")
    lines = setup["options"]["install_requires"].splitlines()
    for extra in sections:
        lines += setup["options.extras_require"][extra].splitlines()
    return [Requirement(line) for line in (raw.split("#", 1)[0].strip() for raw in lines) if line]


def unlocked(requirements: list[Requirement], pinned: dict) -> list[str]:
    return [
        str(req)
        for req in requirements
        if canonicalize_name(req.name) not in pinned
        or not req.specifier.contains(pinned[canonicalize_name(req.name)][0], prereleases=True)
    ]


def test_the_development_lock_pins_every_dependency_and_extra_at_an_allowed_version_with_hashes():
    setup = configparser.ConfigParser()
    setup.read(ROOT / "setup.cfg")
    pinned = pins(LOCK)
    # model-server is installed from the prebuilt wheel in ../shared/wheels (.ci/run), not from the index
    extras = [extra for extra in setup["options.extras_require"] if extra != "model-server"]
    assert unlocked(wanted(*extras), pinned) == [], "run `make lock`"
    assert [name for name, (_, hashes) in pinned.items() if hashes == 0] == []


def test_the_image_lock_pins_what_wilson_runs_on_at_the_development_locks_versions():
    pinned, everything = pins(RUN_LOCK), pins(LOCK)
    assert unlocked(wanted("postgres"), pinned) == [], "run `make lock`"
    assert {
        name: version for name, (version, _) in pinned.items() if name in everything and everything[name][0] != version
    } == {}
    assert [name for name, (_, hashes) in pinned.items() if hashes == 0] == []


def test_make_and_the_dockerfile_install_the_locks_with_hashes_required_and_wilson_without_its_dependencies():
    make = (ROOT / "Makefile").read_text()
    assert "pip install --quiet --require-hashes -r $(LOCK)" in make and "LOCK := requirements/lock.txt" in make
    assert "pip install --quiet --no-deps --no-build-isolation -e ." in make
    docker = (ROOT / "Dockerfile").read_text()
    assert "pip install --no-cache-dir --require-hashes -r requirements/run.txt" in docker
    assert "pip install --no-cache-dir --no-deps --no-build-isolation ." in docker
    assert "make test" in (ROOT / ".ci" / "run").read_text()  # CI installs through make


def test_the_licence_is_the_one_setup_cfg_names():
    setup = configparser.ConfigParser()
    setup.read(ROOT / "setup.cfg")
    assert setup["metadata"]["license"] == "Apache-2.0"
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
