"""Secrets never leave Wilson: not in logs, trace rows, any table, any file in its home, or CLI output.

The scenario test runs a whole Wilson with known secrets (an API key, a password inside
WILSON_LLM_BASE_URL, a Telegram token, a CalDAV password) against a real loopback model
server that refuses with a 401 whose body echoes the key, as some proxies do, and against
the fake Telegram Bot API; then it searches everything Wilson wrote for every secret.
"""

from __future__ import annotations

import base64
import json
import logging
import random
import sqlite3
import sys
import threading
from pathlib import Path

import pytest
from loguru import logger

from tests.fake_telegram import FakeTelegram
from wilson.app import cli
from wilson.app.application import Wilson
from wilson.kernel.clock import RealClock
from wilson.kernel.config import load
from wilson.kernel.logs import setup_logging
from wilson.kernel import redact as redaction
from wilson.kernel.redact import redact, register, url_credentials
from wilson.model.scripted import ScriptedServer

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")

API_KEY = "pw-Quokka7731-Marmot"  # not key-shaped on purpose: only registration can catch it
URL_USER, URL_PASSWORD = "wilson", "Wombat-9913-Lyrebird"
TELEGRAM_TOKEN = "987654321:AAH-redaction_test_token-0123456789"
CALDAV_PASSWORD = "Numbat-5521-Kiwi"
OWNER = 3003
SECRETS = [
    API_KEY,
    URL_PASSWORD,
    TELEGRAM_TOKEN,
    CALDAV_PASSWORD,
    base64.b64encode(f"{URL_USER}:{URL_PASSWORD}".encode()).decode(),
]


class EchoingModelServer(ScriptedServer):
    """A model server behind a proxy that refuses a role's next request with a 401 echoing the key."""

    def __init__(self):
        super().__init__([])
        self.refuse: dict[str, int] = {}
        self.refused: list[str] = []
        self._refuse_lock = threading.Lock()

    def answer(self, body, raw, headers):
        headers = {k.lower(): v for k, v in headers.items()}
        role = headers.get("x-wilson-role")
        with self._refuse_lock:
            refuse = self.refuse.get(role, 0) > 0
            if refuse:
                self.refuse[role] -= 1
        if not refuse:
            return super().answer(body, raw, headers)
        text = json.dumps(
            {
                "error": {
                    "message": f"Incorrect API key provided: {API_KEY}",
                    "received": headers.get("authorization"),
                    "type": "invalid_request_error",
                }
            }
        )
        with self._refuse_lock:
            self.refused.append(text)
        return 401, text.encode(), {}


@pytest.fixture
def restore_logging():
    yield
    logger.remove()
    logger.add(sys.stderr, level="INFO")


def environment(model: EchoingModelServer, fake: FakeTelegram) -> dict[str, str]:
    port = model.base_url.split("://", 1)[1]
    return {
        "WILSON_LLM_BASE_URL": f"http://{URL_USER}:{URL_PASSWORD}@{port}",
        "WILSON_LLM_API_KEY": API_KEY,
        "WILSON_LLM_RETRIES": "0",
        "WILSON_TELEGRAM_TOKEN": TELEGRAM_TOKEN,
        "WILSON_TELEGRAM_BASE_URL": fake.base_url,
        "WILSON_TELEGRAM_ALLOWED_USERS": str(OWNER),
        "WILSON_TELEGRAM_POLL_TIMEOUT": "1",
        "WILSON_CALENDAR_CALDAV_PASSWORD": CALDAV_PASSWORD,
        "WILSON_CORE_QUIET_HOURS": "off",
        "WILSON_CORE_TIMEZONE": "Europe/Berlin",
        "WILSON_WEB_ENABLED": "false",  # no dashboard on a fixed port in a test
    }


def every_row(path: Path) -> list[str]:
    """Every row of every table of the SQLite file, as text."""
    connection = sqlite3.connect(path)
    try:
        tables = [r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        assert "trace" in tables and "inbox" in tables
        return [f"{table}: {row!r}" for table in tables for row in connection.execute(f'SELECT * FROM "{table}"')]
    finally:
        connection.close()


def leaks(texts, secrets=SECRETS) -> list[tuple[str, str]]:
    return [(secret, text[:300]) for text in texts for secret in secrets if secret in text]


def test_no_secret_in_logs_traces_tables_files_or_cli_output(tmp_path, monkeypatch, capsys, restore_logging):
    home = tmp_path / "home"
    model = EchoingModelServer()
    model.start()
    address = model.base_url.split("://", 1)[1]
    fake = FakeTelegram(TELEGRAM_TOKEN, max_poll=0.2)
    fake.start()
    log_lines: list[str] = []
    records: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record):
            records.append(self.format(record))

    std_handler = Collect(level=logging.DEBUG)
    logging.getLogger().addHandler(std_handler)
    app = None
    try:
        env = environment(model, fake)
        model.refuse = {"deep": 1, "fast": 1}
        app = Wilson(load(home, environ=env), RealClock(), log_sink=log_lines.append, log_level="DEBUG")
        app.start()

        app.say("hello, are you there?")  # the deep model's first answer is the echoing 401
        assert app.wait_idle(30)
        assert any("can't think right now" in d["text"] for d in app.user_deliveries())

        app.inject_buffered(
            "email",
            "Email from ada@example.com: Lunch\nFriday at noon?",
            {"from": "ada@example.com", "subject": "Lunch"},
        )
        app.sync()  # triage asks the fast model, whose first answer is the echoing 401 too
        assert app.wait_idle(30)

        fake.send_text(OWNER, "and on Telegram?")  # the token is in every request URL
        fake.wait_for(lambda: fake.sent_to(OWNER), 15, "a reply on Telegram")
        assert app.wait_idle(30)
        logger.info("one careless line: key {} at {}", API_KEY, env["WILSON_LLM_BASE_URL"])
    finally:
        if app is not None:
            app.stop()
        logging.getLogger().removeHandler(std_handler)
        fake.stop()

    # The CLI, as a person would run it, with the same environment.
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    model.refuse = {"reflex": 1, "fast": 1, "deep": 1}
    capsys.readouterr()
    assert cli.main(["--home", str(home), "doctor"]) == 1  # the models refuse the key: things to fix
    doctor = capsys.readouterr().out
    assert cli.main(["--home", str(home), "status"]) == 0
    assert cli.main(["--home", str(home), "trace"]) == 0
    listing = capsys.readouterr().out
    trace_ids = [line.split()[0] for line in listing.split("recent traces", 1)[1].strip().splitlines()[1:]]
    assert trace_ids
    for trace_id in trace_ids:
        assert cli.main(["--home", str(home), "trace", trace_id]) == 0
    traces = capsys.readouterr().out
    model.stop()

    # The scenario reached every place a secret used to escape to, so the checks below can fail.
    assert len(model.refused) == 5 and all(API_KEY in body for body in model.refused)
    database = home / "wilson.sqlite3"
    rows = every_row(database)
    assert any(row.startswith("trace: ") and "HTTP 401" in row for row in rows), "no refused call was traced"
    assert any("HTTP 401" in line for line in log_lines)
    assert "HTTP 401" in doctor and f"http://***@{address}" in doctor
    assert "HTTP 401" in traces

    assert leaks(log_lines) == []
    assert leaks(records) == []
    assert leaks(rows) == []
    assert leaks([doctor, listing, traces]) == []
    files = [p for p in home.rglob("*") if p.is_file()]
    assert database in files
    raw = [(str(p), p.read_bytes()) for p in files]
    assert [(name, s) for name, data in raw for s in SECRETS if s.encode() in data] == []


@pytest.mark.parametrize(
    "text, secret",
    [
        ("Authorization: Bearer abcdefgh12345678", "abcdefgh12345678"),
        ("authorization: Basic dTpwYXNzd29yZA==", "dTpwYXNzd29yZA=="),
        ("cannot connect to http://bob:hunter2@127.0.0.1:8080/v1", "hunter2"),
        (
            "GET http://127.0.0.1:8081/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/getMe",
            "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",
        ),
        ('{"error": "Incorrect API key provided: sk-proj-abcdefghijklmnop1234"}', "abcdefghijklmnop1234"),
        ("url?api_key=s3cr3tvalue&page=2", "s3cr3tvalue"),
        ('{"password": "correct horse"}', "correct"),
        ("X-Api-Key: q1w2e3r4t5", "q1w2e3r4t5"),
        ("a key nobody registered: Zk3mQ9xT2vLp8RwN5yHc1BaJ6dFgE4sU7oIq", "Zk3mQ9xT2vLp8RwN5yHc1BaJ6dFgE4sU7oIq"),
        ("github ghp_16C7e42F292c6912E7710c838347Ae178B4a", "16C7e42F292c6912E7710c838347Ae178B4a"),
    ],
)
def test_secret_shapes_are_masked_without_registration(text, secret):
    assert secret not in redact(text)
    assert "***" in redact(text)


@pytest.mark.parametrize(
    "text",
    [
        "deep default answered: 1 tool calls, 120+30 tokens",
        "no Telegram token configured; Basic authentication required",
        "[3f2a9c1b7d4e] routed by thalamus: inbox priority 0 from repl",
        "dedup email:0123456789abcdef0123456789abcdef, uid 550e8400-e29b-41d4-a716-446655440000",
        "deep (http://127.0.0.1:11434/v1, model qwen2.5:7b-instruct): reachable",
        "mail from bob@example.com about http://example.com/a?b=c@d",
    ],
)
def test_ordinary_text_is_left_alone(text):
    assert redact(text) == text


def _every_shape(text: str) -> str:
    """What redact() did before it looked for a shape's telltale first: every substitution, always."""
    for shape, replacement in redaction._SHAPES:
        text = shape.sub(replacement, text)
    return redaction._RANDOM.sub(redaction._random_looking, text)


def test_the_shortcut_past_the_shapes_never_lets_a_secret_through():
    # the shapes' own examples, cut and glued at random with ordinary text, in every case
    pieces = [
        "Authorization: Bearer abcdefgh12345678",
        "bearer abcdefgh12345678",
        "BEARER xyzxyzxy",
        "bearer abcd1234",
        "authorization=token q1w2e3r4",
        "http://bob:hunter2@127.0.0.1:8080/v1",
        "ftp://tok@host",
        "bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",
        "sk-proj-abcdefghijklmnop1234",
        "api_key=s3cr3tvalue",
        "X-Api-Key: q1w2e3r4t5",
        "Token: abc",
        '"password": "correct horse"',
        "pwd:x",
        "ghp_16C7e42F292c6912E7710c838347Ae1",
        "xoxb-1234567890ab",
        "AKIAABCDEFGHIJKL",
        "hf_abcdefghijklmn",
        "Zk3mQ9xT2vLp8RwN5yHc1BaJ6dFgE4sU7oIq",
        "inbox 12 priority 0 (message)",
        "reply on repl",
        "outbox 7",
        "a/b/c",
        "+/=-_",
        " ",
        "\n",
        "é",
    ]
    rng = random.Random(21)
    texts = list(pieces)
    for _ in range(3000):
        parts = [rng.choice(pieces) for _ in range(rng.randint(1, 3))]
        text = "".join(p[rng.randint(0, len(p)) :] if rng.random() < 0.3 else p for p in parts)
        texts.append(text.upper() if rng.random() < 0.2 else text)
    assert [t for t in texts if redact(t) != _every_shape(t)] == []
    assert sum(redact(t) != t for t in texts) > 1000  # the corpus does hold secrets for the shapes to find


def test_registered_secrets_are_masked_also_when_percent_encoded():
    register(["p@ss word/Emu-31"])
    text = "login p@ss word/Emu-31 failed; retried with https://x.example/?pw=p%40ss%20word%2FEmu-31"
    assert "Emu-31" not in redact(text)


def test_credentials_in_a_configured_url_count_as_secrets(tmp_path):
    config = load(
        tmp_path,
        environ={
            "WILSON_LLM_BASE_URL": "http://ann:Dingo-4477@10.0.0.2:8080/v1",
            "WILSON_LLM_API_KEY": "key-Bilby-0042",
        },
    )
    secrets = config.secrets()
    assert "key-Bilby-0042" in secrets and "Dingo-4477" in secrets and "ann:Dingo-4477" in secrets
    assert base64.b64encode(b"ann:Dingo-4477").decode() in secrets
    assert url_credentials("http://10.0.0.2:8080/v1") == []


def test_a_logged_exception_is_redacted_but_left_intact(restore_logging):
    lines: list[str] = []
    setup_logging(["Potoroo-1187"], sink=lines.append, level="DEBUG")
    try:
        try:
            raise OSError(13, "denied for Potoroo-1187")
        except OSError as cause:
            raise RuntimeError("refused http://me:Potoroo-1187@proxy.example/") from cause
    except RuntimeError as exc:
        logger.opt(exception=exc).error("the call failed")
        error = exc
    text = "".join(lines)
    assert "Traceback" in text and "PermissionError: [Errno 13] denied for ***" in text
    assert "refused http://***@proxy.example/" in text and "Potoroo-1187" not in text
    # the program's own exception keeps its text and its errno: only what is written is masked
    assert error.args == ("refused http://me:Potoroo-1187@proxy.example/",)
    assert error.__cause__.errno == 13 and "Potoroo-1187" in error.__cause__.strerror


def test_library_log_records_reach_the_sink_redacted(restore_logging):
    lines: list[str] = []
    setup_logging(["Quoll-6610"], sink=lines.append, level="DEBUG")
    logging.getLogger("telegram.ext").warning(
        "request to %s failed",
        "https://x.example/bot123456789:AAH-abcdefghijklmnopqrstuvwxyz0123/getMe, key Quoll-6610",
    )
    logging.getLogger("httpx").info("HTTP Request: below WARNING, left to the library's own level")
    text = "".join(lines)
    assert "telegram.ext: request to https://x.example/bot***/getMe, key ***" in text
    assert "below WARNING" not in text


def test_each_setup_sends_lines_to_its_own_sink_only_even_after_someone_removed_every_handler(restore_logging):
    first: list[str] = []
    second: list[str] = []
    watched: list[str] = []
    setup_logging(["Wombat-2231"], sink=first.append, level="DEBUG")
    logger.info("to the first, Wombat-2231")
    watcher = logger.add(lambda m: watched.append(str(m)), level="INFO")  # a test's own sink, added in between
    setup_logging([], sink=second.append, level="DEBUG")  # the next Wilson of the same process
    logger.info("to the second")
    assert "".join(first).count("to the first, ***") == 1 and "to the second" not in "".join(first)
    assert "".join(second).count("to the second") == 1 and "to the first" not in "".join(second)
    # the setup swapped its handler's sink instead of removing every handler and adding its own again
    assert "".join(watched).count("to the second") == 1
    logger.remove(watcher)
    logger.remove()  # a library or a test takes every handler away: the next setup adds its own again
    third: list[str] = []
    setup_logging([], sink=third.append, level="DEBUG")
    logger.info("to the third")
    assert "".join(third).count("to the third") == 1 and "to the third" not in "".join(second)
