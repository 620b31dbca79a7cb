"""Which model a role talks to: its endpoint (URL, model chain, timeout, retries, budget) from the settings."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from wilson.kernel.config import ROLES, Config

DEFAULT_MODEL = "default"


@dataclass(frozen=True)
class Endpoint:
    role: str
    base_url: str
    models: tuple[str, ...]
    api_key: str = field(default="", repr=False)
    timeout: float = 60.0
    max_tokens: int = 1024
    retries: int = 3
    daily_budget: int = 2_000_000
    user_reserve: int = 500_000


def setting(config, role: str, key: str):
    """A role's own [llm] <role>_<key>, or the shared <key>."""
    value = config.get("llm", f"{role}_{key}")
    if value is None or value == "":
        value = config.get("llm", key)
    return value


def _number(config, role: str, key: str, kind, default):
    value = setting(config, role, key)
    if value is None or value == "":
        return default
    try:
        return kind(value)
    except (TypeError, ValueError):
        raise ValueError(f"llm.{role}_{key} / llm.{key}: expected a number, got {value!r}") from None


def resolve_endpoint(config, role: str) -> Endpoint:
    """The endpoint, model chain and limits one role uses (role keys override shared ones)."""
    model = str(setting(config, role, "model") or "").strip() or DEFAULT_MODEL
    fallbacks = str(setting(config, role, "fallback_models") or "")
    chain = [model]
    for name in fallbacks.split(","):
        name = name.strip()
        if name and name not in chain:
            chain.append(name)
    return Endpoint(
        role=role,
        base_url=str(setting(config, role, "base_url") or "").strip().rstrip("/"),
        models=tuple(chain),
        api_key=str(setting(config, role, "api_key") or ""),
        timeout=_number(config, role, "timeout", float, 60.0),
        max_tokens=_number(config, role, "max_tokens", int, 1024),
        retries=max(0, _number(config, role, "retries", int, 3)),
        daily_budget=_number(config, role, "daily_budget", int, 2_000_000),
        user_reserve=_number(config, role, "user_reserve", int, 500_000),
    )


def single_shot(endpoint: Endpoint, models: tuple[str, ...] | None = None) -> Endpoint:
    """Providers that cannot fail transiently need no retries and no fallback chain."""
    return Endpoint(
        role=endpoint.role,
        base_url=endpoint.base_url,
        models=models or endpoint.models[:1],
        api_key=endpoint.api_key,
        timeout=endpoint.timeout,
        max_tokens=endpoint.max_tokens,
        retries=0,
        daily_budget=endpoint.daily_budget,
        user_reserve=endpoint.user_reserve,
    )


def with_base_url(config, base_url: str) -> Config:
    data = copy.deepcopy(config.data)
    llm = data.setdefault("llm", {})
    llm["base_url"] = base_url
    for role in ROLES:
        llm.pop(f"{role}_base_url", None)
    if not str(llm.get("model") or "").strip():
        llm["model"] = DEFAULT_MODEL
    return Config(home=config.home, data=data)
