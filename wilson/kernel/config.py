"""Configuration: embedded defaults < $WILSON_HOME/wilson.toml < WILSON_<SECTION>_<KEY>.

Every key can be overridden from the environment, e.g. WILSON_LLM_BASE_URL sets
[llm] base_url. Every value is checked when it is loaded (`SCHEMA`): a wrong one stops
the start with one line naming the key, the value and what is expected; an unknown key
is a warning with a "did you mean". `first_run()` writes a commented wilson.toml.
Secrets (keys named like SECRET_KEYS: token, api_key, password, secret) are meant to come
from the environment; `Config.secrets()` lists their values (and credentials
written into URLs) so that `wilson.kernel.redact` masks them wherever they appear.
Every default is in DEFAULTS (a Config built by hand answers a missing key from there),
so a reader of a setting never writes a fallback of its own.

Size: a third of it is the settings table (DEFAULTS, SCHEMA and EXPECTED: every setting with its
default, kind and one line of documentation), read top to bottom; the rest is what that table drives
(checking each kind, loading the three sources, the first run's wilson.toml, `wilson config`, and the
Markdown `make docs` writes to docs/configuration.md), which changes whenever a kind or a setting does.
"""

from __future__ import annotations

import copy
import difflib
import json
import os
import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from zoneinfo import ZoneInfo, available_timezones

import tzlocal
from croniter import croniter

from wilson import skills
from wilson.kernel import timeparse
from wilson.kernel.clock import parse_duration
from wilson.kernel.redact import MASK, redact, register, url_credentials

DEFAULTS: dict[str, dict] = {
    "core": {
        "timezone": "UTC",
        "user_name": "you",
        "quiet_hours": "22:00-07:00",
        "owner": "owner",  # the user id approvals are bound to on the REPL channel
        "poll_seconds": 30.0,  # several processes: how often each looks for work it was not woken for
        "home": "",  # the city you live in; empty: the largest city of your timezone
    },
    "database": {"url": ""},
    "llm": {
        # One setting for every role; a role overrides with e.g. deep_model.
        "base_url": "",
        "model": "",
        "api_key": "",
        "fallback_models": "",
        "timeout": 60.0,
        "max_tokens": 1024,
        # the longest answer by the kind of job, never above max_tokens: a rambling model stops sooner
        "max_tokens_arousal": 200,
        "max_tokens_triage": 1024,
        "max_tokens_reply": 600,
        "max_tokens_background": 500,
        "max_tokens_memory": 1024,
        "run_seconds": 120.0,
        # a role whose model broke the protocol in rest_after runs in a row is answered by the offline rules for
        # rest_minutes (twice as long after each run that fails again), then asked again
        "stream": True,  # answers read as they are written: one that breaks the protocol is cut off there
        "rest_after": 2,
        "rest_minutes": 15.0,
        "context_tokens": 0,  # the model's context, for `wilson doctor`; 0: unknown (asked of a llama.cpp server)
        "retries": 3,
        "daily_budget": 2_000_000,  # tokens per role per day for background work
        "user_reserve": 500_000,  # extra tokens per day only user-started runs may spend
        "record": "",
        "playbook": "",
        # Example prices (USD per million tokens: input/cached input/output), for `wilson budget` and the
        # benchmarks; set your provider's.
        "price_reflex": "0.10/0.025/0.40",
        "price_fast": "0.40/0.10/1.60",
        "price_deep": "2.00/0.50/8.00",
        # ears: a speech-to-text model (OpenAI's /audio/transcriptions) for voice notes; empty: Wilson cannot listen
        "ears_model": "",
        "ears_base_url": "",
        "ears_api_key": "",
    },
    # A Google or Microsoft account (`wilson account add`): the OAuth client Wilson signs in as; the endpoints
    # override the provider's (a stand-in identity provider).
    "accounts": {"client_id": "", "client_secret": "", "device_url": "", "token_url": ""},
    # drop_after: bulk mail (a newsletter, an offer) from a sender whose last this many bulk mails the triage model
    # all dropped is dropped without asking it, unless its subject is pressing; 0 asks the model about every one.
    "thalamus": {"briefing": "0 7 * * *", "chunk_chars": 12000, "drop_after": 5},
    # routine_after: after this many mails from one sender (or one sender's on one subject) that raised no alarm,
    # the RAS judges the next such mail by the urgency rules alone (a parcel notice, a statement, a newsletter);
    # 0 asks the model about every mail.
    "ras": {"interval_minutes": 15, "routine_after": 5},
    # Follow-up windows of a task without its own (Task.escalation): a week ahead, the day before, the day,
    # and once when it is overdue. A kind of task (actors/shared/windows.py task_kind: document, booking, packing,
    # bill, appointment, birthday, generic) may have its own, e.g. windows_birthday = "3d,due";
    # an empty one means the default.
    "tick": {
        "interval_seconds": 10.0,
        "windows": "7d,1d,due,overdue",
        "windows_document": "",
        "windows_booking": "",
        "windows_packing": "",
        "windows_bill": "",
        "windows_appointment": "",
        "windows_birthday": "",
        "windows_generic": "",
    },
    # role: the model that rephrases the night's candidates (the rules write them, and stand when it fails);
    # a short, well-framed job that the fast role does at a fifth of the deep role's price.
    "hippocampus": {"schedule": "0 3 * * *", "prune_days": 90, "prune_below": 2, "role": "fast"},
    # Proactive interruptions per local day (beyond: the next briefing, unless flagged urgent);
    # briefing: "when_useful" sends the morning briefing only when the day has something in it, "always" daily.
    "attention": {"max_per_day": 3, "briefing": "when_useful", "floor": True, "offline_wake": True},
    "approval": {"expiry_hours": 72, "owner_decides_all": True, "remind_before_hours": 24},
    "supervisor": {
        "watchdog_seconds": 10.0,
        "handler_budget": 120.0,
        "lease_seconds": 120.0,
        "max_restarts": 5,
        "restart_window": 60.0,
    },
    "skills": {"disabled": []},
}

SECRET_KEYS = ("token", "api_key", "password", "secret")
ROLES = ("reflex", "fast", "deep")  # the model roles, cheapest first: every other module takes them from here

# What each key holds: (kind, one line for the commented wilson.toml). Kinds are checked by check_value().
SCHEMA: dict[str, dict[str, tuple[str, str]]] = {
    "core": {
        "timezone": ("timezone", "IANA name, e.g. Europe/Berlin; detected from the system at the first run"),
        "user_name": ("text", "how Wilson calls you"),
        "quiet_hours": ("quiet_hours", "HH:MM-HH:MM when Wilson holds non-urgent messages, or off"),
        "owner": ("text", "the user id approvals are bound to on the terminal channel"),
        "poll_seconds": ("positive", "several processes: how often each looks for work it was not woken for"),
        "home": (
            "text",
            "the city you live in, e.g. Berlin (the offline rules tell travel from it); "
            "empty: the largest city of your timezone",
        ),
        "primary_channel": ("text", ""),
        "buffered_channels": ("list", ""),
    },
    "database": {"url": ("database_url", "empty: SQLite in WILSON_HOME; or postgresql://user@host/db")},
    "llm": {
        "base_url": ("url", "OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1; empty: offline rules"),
        "model": ("text", "model name; a role overrides any llm key with e.g. deep_model, fast_base_url"),
        "api_key": ("text", "set WILSON_LLM_API_KEY in the environment rather than here"),
        "fallback_models": ("text", "comma-separated models tried when the first fails"),
        "timeout": ("positive", "seconds per model call"),
        "max_tokens": ("count", "longest answer, in tokens"),
        "max_tokens_arousal": ("count", "longest answer to the RAS's urgency scan (never above max_tokens)"),
        "max_tokens_triage": (
            "count",
            "longest triage answer for one batch (never above max_tokens); a small "
            "batch gets less: 160 tokens and 160 a row",
        ),
        "max_tokens_reply": ("count", "longest answer in a run you started (never above max_tokens)"),
        "max_tokens_background": ("count", "longest answer in a background run (never above max_tokens)"),
        "max_tokens_memory": (
            "count",
            "longest answer of the night's memory consolidation (never above max_tokens);"
            " fewer candidates get less: 120 tokens and 100 a candidate",
        ),
        "run_seconds": ("positive", "seconds one run may wait for the model; then the offline rules answer it"),
        "stream": (
            "bool",
            "read answers as the server writes them (stream), so that one that breaks the tool "
            "protocol (template tokens, free text where a tool call is required) or runs out of time is "
            "cut off and the server stops; false for a server that cannot stream tool calls",
        ),
        "rest_after": (
            "count",
            "failed runs in a row (the model broke the tool protocol) after which the offline rules "
            "answer the role's runs for a while; 0: never",
        ),
        "rest_minutes": (
            "positive",
            "the first such rest; each run that fails again after one doubles it (at most a day)",
        ),
        "context_tokens": ("count", "the model's context in tokens, for `wilson doctor`; 0: unknown"),
        "retries": ("count", "tries after a failed call"),
        "daily_budget": ("count", "tokens per role per day for background work"),
        "user_reserve": ("count", "extra tokens per day only runs you started may spend"),
        "record": ("text", "a directory to record model exchanges in (for replay:DIR)"),
        "playbook": ("text", "a TOML file of offline rules instead of the built-in wilson/model/playbook.toml"),
        "ears_model": (
            "text",
            "a speech-to-text model for voice notes (e.g. whisper-1, or whisper on your own "
            "server); empty: Wilson cannot listen to voice notes",
        ),
        "ears_base_url": (
            "url",
            "where the speech-to-text model is served (its /audio/transcriptions); empty: base_url",
        ),
        "ears_api_key": ("text", "its key, set WILSON_LLM_EARS_API_KEY in the environment; empty: api_key"),
        **{
            f"price_{_r}": (
                "prices",
                f"what the {_r} model costs in USD per million tokens: input/cached input/"
                "output (the defaults are examples, not your provider's prices)",
            )
            for _r in ROLES
        },
    },
    "accounts": {
        "client_id": ("text", "the OAuth client Wilson signs in to Google or Microsoft as (docs/email.md)"),
        "client_secret": ("text", "its secret, set WILSON_ACCOUNTS_CLIENT_SECRET in the environment"),
        "device_url": ("url", "the device authorization endpoint; empty: the provider's"),
        "token_url": ("url", "the token endpoint; empty: the provider's"),
    },
    "thalamus": {
        "briefing": ("cron_or_off", "when the morning briefing comes (cron, local time); off disables"),
        "chunk_chars": ("count", "characters of buffered items per triage call, as triage reads them"),
        "drop_after": (
            "count",
            "bulk mails from one sender that triage dropped in a row (none kept in 60 days), "
            "after which that sender's bulk mail is dropped without a model call unless its "
            "subject is pressing; after 60 days unread the model reads one again; 0: always ask",
        ),
    },
    "ras": {
        "interval_minutes": ("count", "how often buffered channels are looked at"),
        "routine_after": (
            "count",
            "mails from one sender (or from one sender on one subject) that raised no "
            "alarm, after which the next such mail is judged by the urgency rules, "
            "without a model call; 0: always ask",
        ),
    },
    "tick": {
        "interval_seconds": (
            "positive",
            "seconds between looks at what has come due (deadlines, reminders, "
            "quiet hours' end); each look is a dozen or so queries",
        ),
        "windows": ("windows", "follow-up windows of a task: durations before the due, due, overdue"),
        **{
            f"windows_{kind}": ("windows", f"windows for a {kind} task; empty: the default")
            for kind in ("document", "booking", "packing", "bill", "appointment", "birthday", "generic")
        },
    },
    "hippocampus": {
        "schedule": ("cron_or_off", "when memories are consolidated (cron, local time); off disables"),
        "prune_days": (
            "positive",
            "days after which an episode nobody recalled fades (interpretations: 4 times as long)",
        ),
        "prune_below": ("number", "memories weaker than this are the ones that fade"),
        "role": ("role", "the model role that consolidates: reflex, fast or deep"),
    },
    "attention": {
        "max_per_day": ("count", "proactive interruptions per local day"),
        "briefing": ("briefing_mode", "when_useful: only when the day has something in it; always: daily"),
        "floor": (
            "bool",
            "the offline rules' clear alarms (emergencies, deadlines within a day) reach you even "
            "when the model keeps silent about them",
        ),
        "offline_wake": (
            "bool",
            "without a model, a clear emergency (a leak, a fire, a medical emergency, the police, "
            "a school or nursery closing today, travel cancelled within 12 hours) is told even "
            "in quiet hours",
        ),
    },
    "approval": {
        "expiry_hours": (
            "positive",
            "how long a proposal with no date of its own waits for your answer; a dated "
            "one waits until its date passes or its event starts",
        ),
        "owner_decides_all": ("bool", "only the owner approves, in any chat"),
        "remind_before_hours": ("number", "a reminder this long before a proposal expires"),
    },
    "supervisor": {
        "watchdog_seconds": ("seconds_or_off", "how often the watchdog looks for stuck actors; 0 turns it off"),
        "handler_budget": ("positive", "seconds one handler may take before it counts as stuck"),
        "lease_seconds": ("positive", "how long a claimed message is held before another may take it"),
        "max_restarts": ("count", "restarts of one actor within restart_window before Wilson gives up"),
        "restart_window": ("positive", "seconds"),
    },
    "skills": {"disabled": ("list", 'skills to turn off by name, e.g. ["calendar"] (`wilson skills` lists them)')},
}
_ROLE_KEYS = (
    "base_url",
    "model",
    "api_key",
    "fallback_models",
    "timeout",
    "max_tokens",
    "retries",
    "daily_budget",
    "user_reserve",
    "max_tokens_arousal",
    "max_tokens_triage",
    "max_tokens_reply",
    "max_tokens_background",
    "max_tokens_memory",
    "run_seconds",
    "context_tokens",
    "stream",
    "rest_after",
    "rest_minutes",
)
for _role in ROLES:
    for _key in _ROLE_KEYS:
        SCHEMA["llm"][f"{_role}_{_key}"] = (SCHEMA["llm"][_key][0], "")

EXPECTED = {
    "timezone": "an IANA timezone name such as Europe/Berlin or America/New_York",
    "quiet_hours": "HH:MM-HH:MM (e.g. 22:00-07:00) or off",
    "positive": "a number above 0",
    "seconds_or_off": "a number of seconds, or 0 for off",
    "number": "a number",
    "count": "a whole number, 0 or more",
    "bool": "true or false",
    "url": "an http:// or https:// URL, or empty",
    "database_url": "empty (SQLite) or a URL such as postgresql://user@host/db",
    "duration_or_off": "a duration such as 90s, 5m, 1h or off",
    "cron_or_off": 'a cron expression such as "0 7 * * *" or off',
    "windows": "comma-separated durations before the due (7d, 12h), due, overdue",
    "briefing_mode": "when_useful or always",
    "role": "a model role: reflex, fast or deep",
    "chat_id": "a numeric chat id such as -1001234567890, or empty",
    "text": "text",
    "list": "a list",
    "table": "a table of tables, e.g. [mcp.servers.notes] (from the environment: the same as JSON)",
    "prices": "three numbers, input/cached/output per million tokens, e.g. 2.00/0.50/8.00",
}
_OFF = timeparse.OFF_WORDS  # one list of the words that mean off, with the quiet hours' reader
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off", "")


class ConfigError(ValueError):
    """A configuration Wilson cannot start with; str() is the line(s) to show, one per problem."""


def _duration(text: str):
    return parse_duration(text)


def check_value(kind: str, value):
    """The value as Wilson uses it; ValueError when it is not of `kind`."""
    if kind == "text":
        if isinstance(value, dict):
            raise ValueError
        return value if isinstance(value, (str, list)) else str(value)  # a list: e.g. allowed_users = [1, 2]
    if kind == "table":
        # a table of named tables ([mcp.servers.NAME]); from the environment it is JSON, as TOML has no one-line form
        table = json.loads(value) if isinstance(value, str) and value.strip() else value
        if table in ("", None):
            return {}
        if not isinstance(table, dict) or not all(isinstance(v, dict) for v in table.values()):
            raise ValueError
        return table
    if kind == "list":
        return [s.strip() for s in value.split(",") if s.strip()] if isinstance(value, str) else list(value)
    if kind == "bool":
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in _TRUE or text in _FALSE:
            return text in _TRUE
        raise ValueError
    if kind in ("positive", "number", "count", "seconds_or_off"):
        if isinstance(value, bool):
            raise ValueError
        if kind == "count":
            number = value if isinstance(value, int) else int(str(value).strip())
            if number < 0:
                raise ValueError
            return number
        number = float(value) if isinstance(value, (int, float)) else float(str(value).strip())
        if (
            not math.isfinite(number)
            or (kind == "positive" and number <= 0)
            or (kind == "seconds_or_off" and number < 0)
        ):
            raise ValueError
        return number
    text = str(value).strip() if not isinstance(value, (dict, list)) else None
    if text is None:
        raise ValueError
    if kind == "timezone":
        if not text or text.startswith(("/", ".")) or ".." in text:
            raise ValueError
        try:
            ZoneInfo(text)
        except Exception:
            raise ValueError from None
        return text
    if kind == "quiet_hours":
        timeparse.parse_window(text)  # the reader's own check: what passes here is read the same way at run time
        return text
    if kind == "url":
        if text and not re.match(r"(?i)^(https?|webcal)://[^\s/]+", text):
            raise ValueError
        return text
    if kind == "database_url":
        if text and not re.match(r"(?i)^[a-z][a-z0-9+.-]*://", text):
            raise ValueError
        return text
    # every word for off is read as "off", so that each reader needs to know only that one
    if kind == "duration_or_off":
        if text.lower() in _OFF:
            return "off"
        _duration(text)
        return text
    if kind == "cron_or_off":
        if text.lower() in _OFF:
            return "off"
        if not croniter.is_valid(text):
            raise ValueError
        return text
    if kind == "windows":
        for name in (w.strip().lower() for w in text.split(",")):
            if name and name not in ("due", "overdue"):
                _duration(name)
        return text
    if kind == "briefing_mode":
        if text.lower() not in ("when_useful", "always"):
            raise ValueError
        return text
    if kind == "role":
        if text.lower() not in ROLES:
            raise ValueError
        return text.lower()
    if kind == "chat_id":
        if text and not re.fullmatch(r"-?\d+", text):
            raise ValueError
        return value
    if kind == "prices":
        parts = [float(p) for p in text.split("/")]
        if len(parts) != 3 or any(not math.isfinite(p) or p < 0 for p in parts):
            raise ValueError
        return text
    raise AssertionError(kind)


def _shown(value) -> str:
    text = repr(value) if not isinstance(value, str) else f'"{value}"'
    for secret in url_credentials(str(value)):
        text = text.replace(secret, "***")
    return text if len(text) <= 80 else text[:77] + '..."'


def _tz_hint(name: str) -> str:
    """ "Berlin" → " (did you mean Europe/Berlin?)": zones by their city as well as by their full name."""
    zones = available_timezones()
    by_city = {z.rsplit("/", 1)[-1].lower(): z for z in zones}
    found = by_city.get(name.strip().lower().replace(" ", "_"))
    if not found:
        close = difflib.get_close_matches(name.strip(), sorted(zones), n=1, cutoff=0.6)
        close = close or [by_city[c] for c in difflib.get_close_matches(name.strip().lower(), list(by_city), n=1)]
        found = close[0] if close else None
    return f" (did you mean {found}?)" if found else ""


def is_secret_key(key: str) -> bool:
    """token, deep_api_key, caldav_password; not max_tokens."""
    return any(key == s or key.endswith("_" + s) for s in SECRET_KEYS)


def did_you_mean(word: str, choices) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {close[0]}?" if close else ""


def default_home() -> Path:
    return Path(os.environ.get("WILSON_HOME") or Path.home() / ".wilson")


@dataclass
class Config:
    home: Path
    data: dict[str, dict] = field(default_factory=dict)
    sources: dict[tuple[str, str], str] = field(default_factory=dict)  # (section, key) → default | file | env NAME
    warnings: list[str] = field(default_factory=list)  # one line each, for the user to see at start

    @property
    def path(self) -> Path:
        return self.home / "wilson.toml"

    def get(self, section: str, key: str):
        """A setting's value. One this Config lacks (a partial Config built by hand) is its default from
        DEFAULTS, where every default lives (the installed skills add theirs to it); None for no such key."""
        values = self.data.get(section, {})
        if key in values:
            return values[key]
        return DEFAULTS.get(section, {}).get(key)

    def section(self, name: str) -> dict:
        return dict(self.data.get(name, {}))

    def set(self, section: str, key: str, value) -> None:
        self.data.setdefault(section, {})[key] = value

    @property
    def primary_channel(self) -> str:
        """Where Wilson talks to the user: set at start from the channels in use (the REPL until then)."""
        return self.get("core", "primary_channel") or "repl"

    @property
    def timezone(self) -> ZoneInfo:
        return ZoneInfo(self.get("core", "timezone") or "UTC")

    def secrets(self) -> list[str]:
        """Every configured secret value: keys named like a secret, and credentials inside any URL."""
        found = []
        for section in self.data.values():
            if not isinstance(section, dict):
                continue
            for key, value in _leaves(section):
                if not isinstance(value, str):
                    continue
                if any(s in key for s in SECRET_KEYS) and len(value) >= 4:
                    found.append(value)
                found.extend(url_credentials(value))  # e.g. WILSON_LLM_BASE_URL=http://user:pass@host/v1
        return found


def _leaves(table: dict, depth: int = 0):
    """(key, value) of a section, and of the tables inside it (an MCP server's env): a secret may sit at any depth."""
    for key, value in table.items():
        if isinstance(value, dict) and depth < 4:
            yield from _leaves(value, depth + 1)
        else:
            yield key, value


def _place(data, sources, problems, warnings, section: str, key: str, value, origin: str) -> None:
    """One value from the file or the environment, checked against the schema."""
    where = "in wilson.toml" if origin == "file" else f"from {origin[4:]}"
    known = SCHEMA.get(section, {})
    if key not in known:
        warnings.append(
            f"unknown key {section}.{key} {where} is ignored"
            f"{did_you_mean(key, known).replace('; did you mean ', f'; did you mean {section}.')}"
        )
        return
    kind = known[key][0]
    try:
        checked = check_value(kind, value)
    except ValueError:
        hint = _tz_hint(str(value)) if kind == "timezone" and isinstance(value, str) else ""
        problems.append(f"{section}.{key} = {_shown(value)} {where}: expected {EXPECTED[kind]}{hint}")
        return
    # the type Wilson's readers expect: a number key read from a string stays a number
    data.setdefault(section, {})[key] = checked if kind not in ("timezone", "quiet_hours") else str(value).strip()
    sources[(section, key)] = origin


# Installed skills bring their own [<skill name>] sections (wilson/skills.py); they are added to
# DEFAULTS and SCHEMA before a load, and `check(values)` adds a skill's own problems, one line each.
SKILL_CHECKS: dict[str, object] = {}


def add_skill_sections() -> dict[str, str]:
    """Add the sections of installed skills; {name: why it could not be loaded} for the broken ones."""
    found, broken = skills.sections()
    for name in SKILL_CHECKS:  # the skills found last time, which may be gone since
        DEFAULTS.pop(name, None), SCHEMA.pop(name, None)
    SKILL_CHECKS.clear()
    for name, section in found.items():
        if name in SCHEMA and name not in SKILL_CHECKS:
            broken[name] = f"its section [{name}] is a built-in one"
            continue
        DEFAULTS[name], SCHEMA[name], SKILL_CHECKS[name] = dict(section.defaults), dict(section.schema), section.check
    return broken


def load(home: Path | str | None = None, environ: dict | None = None) -> Config:
    """Build the configuration for one Wilson home directory; ConfigError names every wrong value."""
    environ = os.environ if environ is None else environ
    broken = add_skill_sections()
    home = Path(home) if home else Path(environ.get("WILSON_HOME") or default_home())
    data = copy.deepcopy(DEFAULTS)
    sources = {(section, key): "default" for section, values in DEFAULTS.items() for key in values}
    problems: list[str] = []
    warnings: list[str] = []
    toml_path = home / "wilson.toml"
    if toml_path.exists():
        try:
            loaded = tomllib.loads(toml_path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{toml_path} is not valid TOML: {exc}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read {toml_path}: {exc}") from None
        for section, values in loaded.items():
            if section not in SCHEMA:
                warnings.append(f"unknown section [{section}] in wilson.toml is ignored{did_you_mean(section, SCHEMA)}")
                continue
            if not isinstance(values, dict):
                problems.append(f"{section} = {_shown(values)} in wilson.toml: expected a [{section}] table")
                continue
            for key, value in values.items():
                _place(data, sources, problems, warnings, section, key, value, "file")
    for name, value in sorted(environ.items()):
        if not name.startswith("WILSON_") or name == "WILSON_HOME":
            continue
        rest = name[len("WILSON_") :].lower()
        section, _, key = rest.partition("_")
        if not key or section not in SCHEMA:
            continue  # WILSON_FAULT_POINTS and the like belong to tools, not to the configuration
        _place(data, sources, problems, warnings, section, key, value, f"env {name}")
    off = set(data["skills"]["disabled"])
    warnings += [
        f"skill {name} could not be loaded ({why}); it is left out" for name, why in broken.items() if name not in off
    ]
    for name, check in SKILL_CHECKS.items():
        if check is not None and name not in off:
            problems += [f"[{name}] {problem}" for problem in check(dict(data.get(name, {})))]
    if problems:
        raise ConfigError("\n".join(problems))
    return Config(home=home, data=data, sources=sources, warnings=warnings)


def detect_timezone(environ: dict | None = None) -> str:
    """The system's IANA timezone: TZ when it names one, else tzlocal's reading of the system, else UTC."""
    environ = os.environ if environ is None else environ
    tz = str(environ.get("TZ") or "").strip().lstrip(":")
    if tz:
        try:
            return check_value("timezone", tz)
        except ValueError:
            pass  # a POSIX rule such as EST5EDT: tzlocal may still read the system's zone
    try:
        name = tzlocal.get_localzone_name()
        return check_value("timezone", name) if name else "UTC"
    except Exception:  # no tzlocal, or a system without a readable zone: UTC, and the file says so
        return "UTC"


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def template(timezone: str) -> str:
    """A wilson.toml with every key and its default, commented out, and the detected timezone set."""
    lines = [
        "# Wilson's settings. Every key is listed with its default; remove the # to change one.",
        "# Any key can also come from the environment: WILSON_<SECTION>_<KEY>, e.g. WILSON_LLM_MODEL.",
        "# Keep secrets (tokens, API keys, passwords) in the environment, not in this file.",
        "# `wilson config` shows what is in effect and where each value came from.",
    ]
    for section, values in DEFAULTS.items():
        lines += ["", f"[{section}]"]
        for key, default in values.items():
            doc = SCHEMA[section][key][1]
            if doc:
                lines.append(f"# {doc}")
            if (section, key) == ("core", "timezone"):
                lines.append(f"timezone = {_toml_value(timezone)}")
            else:
                lines.append(f"# {key} = {_doc_value(default)}")  # a list as a TOML array: uncommented, it reads back
    return "\n".join(lines) + "\n"


def first_run(home: Path | str | None = None, environ: dict | None = None) -> str | None:
    """Write a commented wilson.toml when the home has none; the one line to tell the user, else None."""
    environ = os.environ if environ is None else environ
    home = Path(home) if home else Path(environ.get("WILSON_HOME") or default_home())
    path = home / "wilson.toml"
    if path.exists():
        return None
    timezone, source = detect_timezone(environ), "from the system"
    try:  # a zone the person set for Wilson is the one to keep, not the machine's
        timezone = check_value("timezone", str(environ.get("WILSON_CORE_TIMEZONE") or ""))
        source = "from WILSON_CORE_TIMEZONE"
    except ValueError:
        pass
    try:
        home.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(".wilson.toml.new")
        partial.write_text(template(timezone), encoding="utf-8")
        partial.replace(path)  # a file that is there is whole
    except OSError as exc:
        return f"Could not write {path} ({exc.strerror or exc}); using the defaults with timezone {timezone}."
    return f"First run: wrote your settings to {path} (timezone {timezone}, {source})."


def describe(config: Config) -> list[str]:
    """`wilson config`: the effective configuration, TOML-like, with each value's source; secrets masked."""
    register(config.secrets())
    lines = [f"# home {config.home}; file {config.path}" + ("" if config.path.exists() else " (not there)")]
    for section, values in config.data.items():
        keys = [k for k in values if (section, k) in config.sources]
        if not keys:
            continue
        lines += ["", f"[{section}]"]
        for key in keys:
            value = values[key]
            if is_secret_key(key) and value not in ("", None):
                shown = f'"{MASK}"'
            else:
                shown = redact(_toml_value(value if not isinstance(value, list) else ",".join(value)))
            source = config.sources[(section, key)]
            source = "environment " + source[4:] if source.startswith("env ") else source
            lines.append(f"{key} = {shown}".ljust(48) + f"  # {source}")
    return lines


# Keys Wilson sets for itself at start; a value given for them is overwritten, so they are not documented.
_INTERNAL = {("core", "primary_channel"), ("core", "buffered_channels")}


def _doc_value(value) -> str:
    if isinstance(value, list):  # a TOML array, as the file would hold it
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    return _toml_value(value)


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def docs_markdown() -> str:
    """docs/configuration.md, made from SCHEMA, DEFAULTS and EXPECTED (`make docs`, `wilson config --docs`);
    tests/test_config_docs.py fails when the committed file differs, so the page cannot fall behind."""
    add_skill_sections()  # the installed skills' own sections, whatever this process loaded before
    role_keys = {f"{role}_{key}" for role in ROLES for key in _ROLE_KEYS}
    lines = [
        "# Configuration",
        "",
        "<!-- Generated from wilson/kernel/config.py by `make docs` (or `bin/wilson config --docs`); do not edit. -->",
        "",
        "Wilson reads its settings from three places, each overriding the one before:",
        "",
        "1. the defaults below;",
        "2. `$WILSON_HOME/wilson.toml` (`WILSON_HOME` defaults to `~/.wilson`); the first `wilson run` writes it",
        "   with every key commented out and your system's timezone filled in;",
        "3. the environment: `WILSON_<SECTION>_<KEY>`, e.g. `WILSON_LLM_MODEL` sets `model` in `[llm]`.",
        "",
        "Every value is checked at start: a wrong one stops Wilson with one line naming the key, the value and",
        'what is expected; an unknown key is a warning with a "did you mean". `bin/wilson config` shows the',
        "settings in effect and where each came from, with secrets masked. Keep secrets (keys ending in",
        f"{', '.join('`' + k + '`' for k in SECRET_KEYS)}) in the environment, not in the file.",
    ]
    for section, keys in SCHEMA.items():
        lines += ["", f"## [{section}]", "", "| Key | Default | What it is | Accepts |", "|---|---|---|---|"]
        for key, (kind, doc) in keys.items():
            if (section, key) in _INTERNAL or (section == "llm" and key in role_keys):
                continue
            default = DEFAULTS.get(section, {}).get(key, "")
            shown = "*(empty)*" if default in ("", []) else f"`{_doc_value(default)}`"
            env = f"WILSON_{section.upper()}_{key.upper()}"
            lines.append(f"| `{key}`<br>`{env}` | {_cell(shown)} | {_cell(doc or '')} | {_cell(EXPECTED[kind])} |")
        if section == "llm":
            lines += [
                "",
                "Each model role ("
                + ", ".join(f"`{r}`" for r in ROLES)
                + ") may override "
                + ", ".join(f"`{k}`" for k in _ROLE_KEYS)
                + " with its own key, e.g. `deep_model`",
                "(`WILSON_LLM_DEEP_MODEL`) or `fast_base_url`; empty means the shared value above.",
            ]
    return "\n".join(lines) + "\n"
