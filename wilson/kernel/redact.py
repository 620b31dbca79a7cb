"""One redaction for everything Wilson writes where a person or a file may read it.

Logs, trace rows, `wilson doctor`, model and channel error messages all pass
through `redact()`. It masks two kinds of secret:

- values registered at start (`register(config.secrets())`): the API keys, the
  Telegram token, passwords, and credentials embedded in configured URLs; these
  are masked wherever they appear, also percent-encoded;
- secrets recognisable by their shape, so that one Wilson was never told about
  (a key a proxy echoes back, a token in a URL from a library's error) is
  masked too: bearer/basic credentials, `user:pass@` in URLs, Telegram bot
  tokens, `key=value` pairs whose key names a secret, well-known key prefixes
  (`sk-…`, `ghp_…`, `xoxb-…`, `AIza…`), and long random-looking base64 runs.

Long pure-hex runs are left alone on purpose: trace ids, dedup keys and calendar
UIDs are hex, and a redactor that hides them makes traces useless.
"""

from __future__ import annotations

import base64
import re
import threading
from urllib.parse import quote, unquote, urlsplit

MASK = "***"
MIN_SECRET = 4  # shorter values would mask ordinary words

_lock = threading.Lock()
_secrets: set[str] = set()
_registered: re.Pattern | None = None

_SHAPES = [
    # "Bearer …" anywhere; Basic, Digest and Token credentials after an Authorization header name
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}"), rf"\1{MASK}"),
    (re.compile(r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?(?:basic|digest|token)\s+)[^\s\"',;]+"), rf"\1{MASK}"),
    # user:pass@ (or a lone token@) in a URL's authority
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]{0,30}://)[^/\s@?#]{1,512}@"), rf"\1{MASK}@"),
    # Telegram bot tokens: digits, a colon, 30+ of base64url (also glued to "bot" in API URLs)
    (re.compile(r"(?<![0-9])[0-9]{5,}:[A-Za-z0-9_-]{30,}"), MASK),
    # key=value / "key": "value" where the key names a secret
    (
        re.compile(
            r"(?i)((?<![a-z])(?:[a-z]{1,20}[_-])?(?:api[_-]?key|apikey|access[_-]?token|auth[_-]?token|token|"
            r"secret|password|passwd|pwd|client[_-]?secret|authorization)[\"']?\s*[:=]\s*[\"']?)"
            r"(?!\*\*\*)(?!(?:bearer|basic|digest|token)\s)([^\s\"',;&}\]]+)"
        ),
        rf"\1{MASK}",
    ),
    # well-known key prefixes
    (
        re.compile(
            r"(?<![A-Za-z0-9])(?:sk-(?:proj-|ant-|live-|test-)?|rk-|pk-(?:live|test)-|ghp_|gho_|ghs_|ghu_|"
            r"github_pat_|glpat-|xox[abprs]-|hf_|AIza|AKIA)[A-Za-z0-9_\-]{12,}"
        ),
        MASK,
    ),
]
# A run of base64 that mixes upper case, lower case and digits is a random key, not a word or a hash.
_RANDOM = re.compile(r"(?<![A-Za-z0-9+/_=-])[A-Za-z0-9+/_=-]{32,}(?![A-Za-z0-9+/_=-])")
# What every shape above needs somewhere in the text: bearer, a word of a secret's key name (key, token,
# secret, pass…, pwd, auth…), an "@" (credentials in a URL), or a run of 12 key characters (a bot token,
# a known prefix and its key, a random run). Most of what is redacted (trace reasons, log lines) has none of
# them, and one search is a tenth of the cost of the seven substitutions; tests/test_secrets.py checks that
# the shortcut never lets a shape through.
_MAYBE = re.compile(r"(?i:bearer|key|token|secret|passw|pwd|auth)|@|[A-Za-z0-9+/_=-]{12,}")


def _random_looking(match: re.Match) -> str:
    run = match.group(0)
    if "/" in run and run.count("/") > 1:  # a path, not a key
        return run
    if any(c.isupper() for c in run) and any(c.islower() for c in run) and any(c.isdigit() for c in run):
        return MASK
    return run


def _variants(value: str) -> set[str]:
    found = {value, quote(value, safe=""), quote(value)}
    return {v for v in found if len(v) >= MIN_SECRET}


def url_credentials(value: str) -> list[str]:
    """The secret parts of a URL with `user:pass@`: the password, `user:pass`, and its Basic-auth form."""
    if "://" not in value or "@" not in value:
        return []
    try:
        parts = urlsplit(value.strip())
    except ValueError:
        return []
    if parts.password is None:
        return []
    user, password = unquote(parts.username or ""), unquote(parts.password)
    pair = f"{user}:{password}"
    return [v for v in (password, pair, base64.b64encode(pair.encode()).decode()) if len(v) >= MIN_SECRET]


def register(values) -> None:
    """Remember secret values; from now on every redaction masks them."""
    global _registered, _said
    with _lock:
        before = len(_secrets)
        for value in values or ():
            if isinstance(value, str) and len(value) >= MIN_SECRET:
                _secrets.update(_variants(value))
        if len(_secrets) == before:
            return
        # longest first, so a secret that contains another is masked whole
        ordered = sorted(_secrets, key=len, reverse=True)
        _registered = re.compile("|".join(re.escape(s) for s in ordered))
        _said = {}  # a new dict: a redaction still running with the old secrets fills the old one


# Short texts redacted before, with what came out: a trace line's keys, roles, rule and tool names come
# again with every stimulus, and a look-up is a fraction of the searches. Emptied when full.
_said: dict[str, str] = {}
SAID_CHARS = 80
SAID_TEXTS = 4096


def redact(text) -> str:
    """`text` with every secret masked. Never raises: a redactor that breaks would hide the error it carries."""
    if not isinstance(text, str):
        text = str(text)
    if not text:
        return text
    if len(text) > SAID_CHARS or type(text) is not str:
        return _redact(text)
    said = _said
    done = said.get(text)
    if done is None:
        done = _redact(text)
        if len(said) >= SAID_TEXTS:
            said.clear()
        said[text] = done
    return done


def _redact(text: str) -> str:
    pattern = _registered
    if pattern is not None:
        text = pattern.sub(MASK, text)
    if _MAYBE.search(text) is None:
        return text
    for shape, replacement in _SHAPES:
        text = shape.sub(replacement, text)
    return _RANDOM.sub(_random_looking, text)


def redact_data(value, _depth: int = 0):
    """A JSON-like value with every string (keys included) redacted; other values unchanged."""
    if _depth > 50:
        return value
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(k) if isinstance(k, str) else k: redact_data(v, _depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact_data(v, _depth + 1) for v in value)
    return value
