"""`wilson doctor`: is each role's model reachable, present and able to call tools?

Each finding is one line a person can act on; the checks are the three things
that go wrong in practice: the server is not there (or the URL lacks /v1), the
model name is not one the server serves, and the model ignores tools.
"""

from __future__ import annotations

import json

import httpx

from wilson.kernel.config import ROLES
from wilson.kernel.redact import redact, register
from wilson.model.endpoints import resolve_endpoint

CONNECT_HINT = ("To connect one, set WILSON_LLM_BASE_URL (e.g. http://127.0.0.1:11434/v1 for Ollama, "
                "http://127.0.0.1:8080/v1 for llama.cpp) and WILSON_LLM_MODEL, or start Wilson with --llm URL.")
PING_TOOL = {"type": "function", "function": {
    "name": "ping", "description": "Answer the health check by calling this tool.",
    "parameters": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}}}


def run_doctor(config, *, client: httpx.Client | None = None) -> list[str]:
    """Check every role's endpoint; returns the report lines (the caller prints them), secrets masked."""
    register(config.secrets())
    endpoints = [resolve_endpoint(config, role) for role in ROLES]
    offline = [ep.role for ep in endpoints if not ep.base_url]
    lines = []
    if len(offline) == len(endpoints):
        return [f"offline: no language model is configured (llm.base_url is empty), so Wilson answers with "
                f"simple built-in rules. {CONNECT_HINT}"]
    own = client is None
    client = client or httpx.Client()
    try:
        for ep in endpoints:
            if not ep.base_url:
                lines.append(f"{ep.role}: offline (no base_url for this role); set WILSON_LLM_"
                             f"{ep.role.upper()}_BASE_URL or WILSON_LLM_BASE_URL to give it a model.")
                continue
            if not ep.base_url.startswith(("http://", "https://")):
                lines.append(f"{ep.role}: FIX: base_url {ep.base_url!r} must start with http:// or https:// "
                             f"(e.g. http://127.0.0.1:11434/v1).")
                continue
            lines.extend(_check(client, ep))
    finally:
        if own:
            client.close()
    # a server's error text is quoted, and a proxy may echo the key it refused; URLs may carry user:pass@
    return [redact(line) for line in lines]


def _headers(ep) -> dict:
    headers = {"X-Wilson-Role": ep.role, "Content-Type": "application/json"}
    if ep.api_key:
        headers["Authorization"] = f"Bearer {ep.api_key}"
    return headers


def _check(client: httpx.Client, ep) -> list[str]:
    where = f"{ep.role} ({ep.base_url}, model {ep.models[0]})"
    timeout = httpx.Timeout(min(ep.timeout, 30.0))
    lines = []
    try:
        response = client.get(ep.base_url + "/models", headers=_headers(ep), timeout=timeout)
    except httpx.TimeoutException:
        return [f"{where}: FIX: no answer within {timeout.read:g}s; is the server running and is "
                f"llm.base_url right?"]
    except httpx.TransportError as exc:
        return [f"{where}: FIX: cannot reach the server ({type(exc).__name__}); start it or correct "
                f"llm.base_url (OpenAI-compatible servers usually end in /v1)."]
    if response.status_code in (401, 403):
        return [f"{where}: FIX: the server refused the API key (HTTP {response.status_code}); set "
                f"WILSON_LLM_API_KEY (or WILSON_LLM_{ep.role.upper()}_API_KEY)."]
    served = None
    if response.status_code == 200:
        try:
            served = [m.get("id") for m in response.json().get("data") or [] if isinstance(m, dict)]
        except (ValueError, AttributeError):
            served = None
        lines.append(f"{where}: reachable")
    else:
        lines.append(f"{where}: reachable, but GET /models answered HTTP {response.status_code}; "
                     f"if nothing below works, check that llm.base_url ends in /v1.")
    if served is not None:
        for model in ep.models:
            if model not in served:
                listed = ", ".join(str(m) for m in served[:10]) or "none"
                lines.append(f"{where}: FIX: model {model!r} is not served here (available: {listed}); set "
                             f"WILSON_LLM_{ep.role.upper()}_MODEL or WILSON_LLM_MODEL, or pull/load the model.")
    lines.append(_check_tools(client, ep, where, timeout))
    return lines


def _check_tools(client: httpx.Client, ep, where: str, timeout) -> str:
    payload = {"model": ep.models[0], "max_tokens": 64, "tools": [PING_TOOL],
               "messages": [{"role": "user", "content": "Health check: call the ping tool with ok=true."}]}
    try:
        response = client.post(ep.base_url + "/chat/completions", json=payload, headers=_headers(ep),
                               timeout=timeout)
    except httpx.TimeoutException:
        return f"{where}: FIX: a tiny chat request got no answer within {timeout.read:g}s; raise llm.timeout or " \
               f"use a smaller model."
    except httpx.TransportError as exc:
        return f"{where}: FIX: the chat request failed ({type(exc).__name__})."
    if response.status_code != 200:
        return (f"{where}: FIX: a chat request with a tool failed with HTTP {response.status_code} "
                f"({redact(response.text[:4000])[:120]}); the server may not support tool calling for this model.")
    try:
        message = response.json()["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        return f"{where}: FIX: the chat answer is not an OpenAI chat completion; check llm.base_url."
    calls = message.get("tool_calls") or []
    if not calls:
        return (f"{where}: FIX: the model answered without calling the tool, so tool calling is not working; "
                f"pick a model trained for tools (Ollama lists them under 'tools'; llama.cpp needs --jinja).")
    arguments = (calls[0].get("function") or {}).get("arguments")
    try:
        if not isinstance(arguments, dict):
            json.loads(arguments or "{}")
    except (ValueError, TypeError):
        return f"{where}: FIX: the model called the tool but its arguments are not valid JSON; try a larger model."
    return f"{where}: ok, tool calling works"
