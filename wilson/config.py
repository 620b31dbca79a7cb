"""Configuration: embedded defaults < $WILSON_HOME/wilson.toml < WILSON_<SECTION>_<KEY>.

Every key can be overridden from the environment, e.g. WILSON_LLM_BASE_URL sets
[llm] base_url. Secrets (keys named token, api_key, password) are meant to come
from the environment; `Config.secrets()` lists their values (and credentials
written into URLs) so that `wilson.redact` masks them wherever they appear.
"""

from __future__ import annotations

import copy
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from zoneinfo import ZoneInfo

DEFAULTS: dict[str, dict] = {
    "core": {
        "timezone": "UTC",
        "user_name": "you",
        "quiet_hours": "22:00-07:00",
        "owner": "owner",  # the user id approvals are bound to on the REPL channel
        "poll_seconds": 30.0,  # several processes: how often each looks for work it was not woken for
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
        "retries": 3,
        "daily_budget": 2_000_000,  # tokens per role per day for background work
        "user_reserve": 500_000,  # extra tokens per day only user-started runs may spend
        "record": "",
    },
    "telegram": {
        "token": "",
        "base_url": "https://api.telegram.org/bot",
        "allowed_users": "",
        "forum_chat_id": "",
        "poll_timeout": 30,
        "liveness_seconds": 120,
        "retry_max_seconds": 30.0,  # the longest wait between two tries of an undelivered message
    },
    "calendar": {
        "path": "",
        "url": "",
        "caldav_url": "",
        "caldav_username": "",
        "caldav_password": "",
        "horizon_days": 365,
        "poll": "5m",  # how often the source is checked for changes (a cheap conditional read); "off" disables
    },
    "thalamus": {"briefing": "0 7 * * *", "chunk_chars": 12000},
    "ras": {"interval_minutes": 15},
    # Follow-up windows of a task without its own (Task.escalation): a week ahead, the day before, the day,
    # and once when it is overdue. A kind of task (actors/tick.py task_kind: document, booking, packing,
    # bill, appointment, birthday, generic) may have its own, e.g. windows_birthday = "3d,due";
    # an empty one means the default.
    "tick": {"interval_seconds": 1.0, "windows": "7d,1d,due,overdue", "windows_document": "", "windows_booking": "",
             "windows_packing": "", "windows_bill": "", "windows_appointment": "", "windows_birthday": "",
             "windows_generic": ""},
    "hippocampus": {"schedule": "0 3 * * *"},
    # Proactive interruptions per local day (beyond: the next briefing, unless flagged urgent);
    # briefing: "when_useful" sends the morning briefing only when the day has something in it, "always" daily.
    "attention": {"max_per_day": 3, "briefing": "when_useful"},
    "approval": {"expiry_hours": 72, "owner_decides_all": True, "remind_before_hours": 24},
    "supervisor": {"watchdog_seconds": 10.0, "handler_budget": 120.0, "lease_seconds": 120.0, "max_restarts": 5,
                   "restart_window": 60.0},
}

SECRET_KEYS = ("token", "api_key", "password", "secret")


def default_home() -> Path:
    return Path(os.environ.get("WILSON_HOME") or Path.home() / ".wilson")


@dataclass
class Config:
    home: Path
    data: dict[str, dict] = field(default_factory=dict)

    def get(self, section: str, key: str, default=None):
        return self.data.get(section, {}).get(key, default)

    def section(self, name: str) -> dict:
        return dict(self.data.get(name, {}))

    def set(self, section: str, key: str, value) -> None:
        self.data.setdefault(section, {})[key] = value

    @property
    def timezone(self) -> ZoneInfo:
        return ZoneInfo(self.get("core", "timezone") or "UTC")

    def secrets(self) -> list[str]:
        """Every configured secret value: keys named like a secret, and credentials inside any URL."""
        from wilson.redact import url_credentials

        found = []
        for section in self.data.values():
            if not isinstance(section, dict):
                continue
            for key, value in section.items():
                if not isinstance(value, str):
                    continue
                if any(s in key for s in SECRET_KEYS) and len(value) >= 4:
                    found.append(value)
                found.extend(url_credentials(value))  # e.g. WILSON_LLM_BASE_URL=http://user:pass@host/v1
        return found


def _coerce(value: str, like):
    if isinstance(like, bool):
        return value.strip().lower() in ("1", "true", "yes", "on")
    if isinstance(like, int):
        return int(value)
    if isinstance(like, float):
        return float(value)
    return value


def load(home: Path | str | None = None, environ: dict | None = None) -> Config:
    """Build the configuration for one Wilson home directory."""
    environ = os.environ if environ is None else environ
    home = Path(home) if home else Path(environ.get("WILSON_HOME") or default_home())
    data = copy.deepcopy(DEFAULTS)
    toml_path = home / "wilson.toml"
    if toml_path.exists():
        try:
            loaded = tomllib.loads(toml_path.read_text())
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{toml_path}: {exc}") from exc
        for section, values in loaded.items():
            if isinstance(values, dict):
                data.setdefault(section, {}).update(values)
    for name, value in environ.items():
        if not name.startswith("WILSON_") or name == "WILSON_HOME":
            continue
        rest = name[len("WILSON_"):].lower()
        section, _, key = rest.partition("_")
        if not key or section not in data:
            continue
        like = data[section].get(key, "")
        try:
            data[section][key] = _coerce(value, like)
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from exc
    return Config(home=home, data=data)
