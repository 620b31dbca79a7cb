"""The Dockerfile, .dockerignore and compose.yaml: read and checked here; the image itself is built
only where a Docker daemon answers (the skip says why otherwise)."""

from __future__ import annotations

import configparser
import fnmatch
import re
import shutil
import subprocess

import pytest
import yaml

from tests.conftest import ROOT
from wilson.kernel import config as configmod


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of the Dockerfile, continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n\s*", " ", (ROOT / "Dockerfile").read_text())
    found = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            found.append((word.upper(), rest.strip()))
    return found


def final_stage() -> list[tuple[str, str]]:
    steps = instructions()
    last_from = max(i for i, (word, _) in enumerate(steps) if word == "FROM")
    return steps[last_from:]


def test_the_image_runs_as_a_user_that_is_not_root():
    users = [args for word, args in final_stage() if word == "USER"]
    assert users, "no USER in the final stage: the container would run as root"
    assert users[-1].split(":")[0] not in ("root", "0")


def test_the_healthcheck_calls_wilson_status_and_the_command_runs_without_a_terminal():
    stage = dict(final_stage())
    assert re.search(r'CMD \["wilson", "status"\]$', stage["HEALTHCHECK"]), stage["HEALTHCHECK"]
    assert stage["CMD"] == '["wilson", "run", "--no-terminal"]'
    assert "WILSON_HOME=/data" in stage["ENV"] and stage["VOLUME"] == '["/data"]'


def test_the_image_copies_every_package_setup_cfg_installs_and_dockerignore_keeps_them():
    setup = configparser.ConfigParser()
    setup.read(ROOT / "setup.cfg")
    packages = {p.strip() for p in setup["options.packages.find"]["include"].split() if "." not in p}
    copy_all = [args for word, args in instructions() if word == "COPY" and "--from" not in args]
    sources = {src for args in copy_all for src in args.split()[:-1]}
    assert packages <= sources, f"the image misses {packages - sources}"
    assert {"pyproject.toml", "setup.cfg", "README.md"} <= sources  # README.md: setup.cfg's long_description
    ignored = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    for source in sources:
        assert (ROOT / source).exists(), source
        assert not [pattern for pattern in ignored if fnmatch.fnmatch(source, pattern)], source
    assert ".venv" in ignored and ".git" in ignored and "*.sqlite3*" in ignored


def compose() -> dict:
    return yaml.safe_load((ROOT / "compose.yaml").read_text())


def test_compose_runs_wilson_always_and_postgres_only_in_its_profile():
    services = compose()["services"]
    wilson, postgres = services["wilson"], services["postgres"]
    assert wilson["build"] == "." and "profiles" not in wilson
    assert wilson["restart"] == "unless-stopped"
    assert postgres["profiles"] == ["postgres"]
    assert wilson["depends_on"]["postgres"] == {"condition": "service_healthy", "required": False}
    assert "pg_isready" in " ".join(postgres["healthcheck"]["test"])
    assert "ports" not in postgres  # the database is reachable only by Wilson
    volumes = set(compose()["volumes"])
    assert {v.split(":")[0] for v in wilson["volumes"] + postgres["volumes"]} <= volumes
    assert "wilson-data:/data" in wilson["volumes"]


def test_compose_passes_every_setting_in_dot_env_and_the_timezone_and_sets_no_secret():
    """The .env file reaches Wilson whole (WILSON_EMAIL_PASSWORD, WILSON_LLM_DEEP_MODEL, any setting), and
    compose starts without one; what compose.yaml sets itself are settings Wilson knows, none of them a secret."""
    wilson = compose()["services"]["wilson"]
    assert configmod.add_skill_sections() == {}  # the channels' sections too, as `wilson run` has them
    assert wilson["env_file"] == [{"path": ".env", "required": False}]
    environment = wilson["environment"]
    assert environment["TZ"] == "${TZ:-UTC}"
    for name in [n for n in environment if n != "TZ"]:
        section, _, key = name[len("WILSON_") :].lower().partition("_")
        assert name.startswith("WILSON_") and key in configmod.SCHEMA.get(section, {}), f"{name} is not a setting"
        assert "token" not in key and "password" not in key and "key" not in key


def test_compose_publishes_the_dashboard_on_the_hosts_loopback_by_default():
    wilson = compose()["services"]["wilson"]
    inside = wilson["environment"]["WILSON_WEB_PORT"]
    assert wilson["environment"]["WILSON_WEB_HOST"] == "0.0.0.0"  # else the published port reaches nothing
    [published] = wilson["ports"]
    default = re.fullmatch(r"\$\{DASHBOARD_PUBLISH:-(.+)\}:(\d+)", published)
    assert default, published
    assert default.group(1) == f"127.0.0.1:{inside}" and default.group(2) == inside


def docker_unavailable() -> str | None:
    if shutil.which("docker") is None:
        return "docker is not installed here"
    try:
        info = subprocess.run(
            ["docker", "info", "--format", "{{.ServerVersion}}"], capture_output=True, text=True, timeout=20
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"docker does not answer ({exc})"
    if info.returncode != 0:
        return "the Docker daemon is not running here: " + " ".join(info.stderr.split())[:120]
    return None


DOCKER = docker_unavailable()


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.skipif(DOCKER is not None, reason=f"image build needs Docker: {DOCKER}")
def test_the_image_builds_runs_as_non_root_and_its_healthcheck_passes(tmp_path):
    tag = "wilson-test:latest"
    built = subprocess.run(["docker", "build", "-t", tag, str(ROOT)], capture_output=True, text=True, timeout=840)
    assert built.returncode == 0, built.stderr[-3000:]
    uid = subprocess.run(
        ["docker", "run", "--rm", "--entrypoint", "id", tag, "-u"], capture_output=True, text=True, timeout=60
    )
    assert uid.returncode == 0 and uid.stdout.strip() != "0"
    status = subprocess.run(
        ["docker", "run", "--rm", tag, "wilson", "status"], capture_output=True, text=True, timeout=120
    )
    assert status.returncode == 0 and "home: /data" in status.stdout, status.stderr
