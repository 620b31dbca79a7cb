"""`wilson doctor`: is each role's model reachable, present and able to do Wilson's work?

Each finding is one line a person can act on; the checks are the things that go wrong in practice: the
server is not there (or the URL lacks /v1), the model name is not one the server serves, and the model
itself cannot do the job: it ignores tools (a real round trip with a harmless probe tool), sends arguments
that are not JSON, answers with chat-template tokens (a base model, or a server without the model's
template), answers too slowly, or has a context too small for Wilson's largest prompt. A missing capability
is a FIX line naming it and the kind of model to pick instead; the command then exits non-zero.
"""

from __future__ import annotations

import json
import time

import httpx

from actors import tools
from actors.cortex.context import HISTORY_TOKENS
from actors.cortex.prompts import SYSTEM_PROMPT
from actors.triage import TRIAGE_PROMPT, TRIAGE_TOOL
from wilson.kernel.config import ROLES
from wilson.kernel.redact import redact, register
from wilson.model import protocol
from wilson.model.endpoints import resolve_endpoint, setting
from wilson.model.replies import estimate_tokens

CONNECT_HINT = (
    "To connect one, set WILSON_LLM_BASE_URL (e.g. http://127.0.0.1:11434/v1 for Ollama, "
    "http://127.0.0.1:8080/v1 for llama.cpp) and WILSON_LLM_MODEL, or start Wilson with --llm URL."
)
PING_TOOL = {
    "type": "function",
    "function": {
        "name": "ping",
        "description": "Answer the health check by calling this tool.",
        "parameters": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
    },
}
PICK_TOOL_MODEL = (
    "pick an instruction-tuned model trained for tool calling (e.g. Qwen2.5 7B Instruct or Llama 3.1 8B "
    "Instruct; Ollama lists them under 'tools'; llama.cpp's server needs --jinja)"
)
CONTEXT_SLACK = 2000  # the CONTEXT message beyond the conversation: the stimulus, tasks, topics, memories


def run_doctor(config, *, client: httpx.Client | None = None) -> list[str]:
    """Check every role's endpoint; returns the report lines (the caller prints them), secrets masked."""
    register(config.secrets())
    endpoints = [resolve_endpoint(config, role) for role in ROLES]
    offline = [ep.role for ep in endpoints if not ep.base_url]
    lines = []
    if len(offline) == len(endpoints):
        return [
            f"offline: no language model is configured (llm.base_url is empty), so Wilson answers with "
            f"simple built-in rules. {CONNECT_HINT}"
        ]
    own = client is None
    client = client or httpx.Client()
    try:
        for ep in endpoints:
            if not ep.base_url:
                lines.append(
                    f"{ep.role}: offline (no base_url for this role); set WILSON_LLM_"
                    f"{ep.role.upper()}_BASE_URL or WILSON_LLM_BASE_URL to give it a model."
                )
                continue
            if not ep.base_url.startswith(("http://", "https://")):
                lines.append(
                    f"{ep.role}: FIX: base_url {ep.base_url!r} must start with http:// or https:// "
                    f"(e.g. http://127.0.0.1:11434/v1)."
                )
                continue
            lines.extend(_check(client, ep, config))
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


def _check(client: httpx.Client, ep, config) -> list[str]:
    where = f"{ep.role} ({ep.base_url}, model {ep.models[0]})"
    timeout = httpx.Timeout(min(ep.timeout, 30.0))
    lines = []
    try:
        response = client.get(ep.base_url + "/models", headers=_headers(ep), timeout=timeout)
    except httpx.TimeoutException:
        return [f"{where}: FIX: no answer within {timeout.read:g}s; is the server running and is llm.base_url right?"]
    except httpx.TransportError as exc:
        return [
            f"{where}: FIX: cannot reach the server ({type(exc).__name__}); start it or correct "
            f"llm.base_url (OpenAI-compatible servers usually end in /v1)."
        ]
    if response.status_code in (401, 403):
        return [
            f"{where}: FIX: the server refused the API key (HTTP {response.status_code}); set "
            f"WILSON_LLM_API_KEY (or WILSON_LLM_{ep.role.upper()}_API_KEY)."
        ]
    served = None
    if response.status_code == 200:
        try:
            served = [m.get("id") for m in response.json().get("data") or [] if isinstance(m, dict)]
        except (ValueError, AttributeError):
            served = None
        lines.append(f"{where}: reachable")
    else:
        lines.append(
            f"{where}: reachable, but GET /models answered HTTP {response.status_code}; "
            f"if nothing below works, check that llm.base_url ends in /v1."
        )
    if served is not None:
        for model in ep.models:
            if model not in served:
                listed = ", ".join(str(m) for m in served[:10]) or "none"
                lines.append(
                    f"{where}: FIX: model {model!r} is not served here (available: {listed}); set "
                    f"WILSON_LLM_{ep.role.upper()}_MODEL or WILSON_LLM_MODEL, or pull/load the model."
                )
    lines.extend(_check_tools(client, ep, where, timeout))
    lines.extend(_check_context(client, ep, where, timeout, config))
    return lines


def _check_context(client: httpx.Client, ep, where: str, timeout, config) -> list[str]:
    needed = largest_prompt(config, ep.role)
    size = _context_size(client, ep, config, timeout)
    if size is None:
        return [
            f"{where}: context size unknown; Wilson's largest prompt is about {needed:,} tokens: set "
            f"llm.context_tokens to the model's context (Ollama: num_ctx) so this can be checked."
        ]
    if size < needed:
        return [
            f"{where}: FIX: the context ({size:,} tokens) is smaller than Wilson's largest prompt (about "
            f"{needed:,} tokens); raise the server's context (llama.cpp -c, Ollama num_ctx) or pick a model "
            f"with a context of at least {needed:,} tokens."
        ]
    return [f"{where}: context {size:,} tokens fits Wilson's largest prompt (about {needed:,})"]


def largest_prompt(config, role: str) -> int:
    """Wilson's largest prompt for a role, in tokens (bytes/4) with the answer's max_tokens: a planning run
    with every tool and a full conversation, or a full triage batch."""
    box = tools.toolbox(config)
    planning = (
        estimate_tokens(SYSTEM_PROMPT)
        + estimate_tokens(tools.schemas_for("user", box))
        + HISTORY_TOKENS
        + CONTEXT_SLACK
    )
    triage = (
        estimate_tokens(TRIAGE_PROMPT)
        + estimate_tokens([TRIAGE_TOOL])
        + int(config.get("thalamus", "chunk_chars")) // 4
    )
    return max(planning, triage) + resolve_endpoint(config, role).max_tokens


def _context_size(client: httpx.Client, ep, config, timeout) -> int | None:
    """The model's context in tokens: [llm] context_tokens, else what a llama.cpp server says (/props)."""
    configured = setting(config, ep.role, "context_tokens")
    if configured not in (None, "", 0, "0"):
        return int(configured)
    root = ep.base_url[:-3] if ep.base_url.endswith("/v1") else ep.base_url
    try:
        response = client.get(root + "/props", headers=_headers(ep), timeout=timeout)
        found = (response.json().get("default_generation_settings") or {}).get("n_ctx")
    except (httpx.HTTPError, ValueError, AttributeError):
        return None
    return found if isinstance(found, int) and found > 0 else None


def _check_tools(client: httpx.Client, ep, where: str, timeout) -> list[str]:
    """A real tool-call round trip with a harmless probe tool: the call, its JSON arguments, the answer's
    text free of template tokens, and how long it took."""
    payload = {
        "model": ep.models[0],
        "max_tokens": min(64, ep.max_tokens),
        "tools": [PING_TOOL],
        "messages": [
            {"role": "system", "content": "You are a health check. Reply only by calling a tool."},
            {"role": "user", "content": "Health check: call the ping tool with ok=true."},
        ],
    }
    started = time.monotonic()
    try:
        response = client.post(ep.base_url + "/chat/completions", json=payload, headers=_headers(ep), timeout=timeout)
    except httpx.TimeoutException:
        return [
            f"{where}: FIX: a tiny chat request got no answer within {timeout.read:g}s; raise llm.timeout or "
            f"use a smaller model."
        ]
    except httpx.TransportError as exc:
        return [f"{where}: FIX: the chat request failed ({type(exc).__name__})."]
    took = time.monotonic() - started
    if response.status_code != 200:
        return [
            f"{where}: FIX: tool calling is missing: a chat request with a tool failed with HTTP "
            f"{response.status_code} ({redact(response.text[:4000])[:120]}); {PICK_TOOL_MODEL}."
        ]
    try:
        message = response.json()["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        return [f"{where}: FIX: the chat answer is not an OpenAI chat completion; check llm.base_url."]
    lines = []
    text = message.get("content") if isinstance(message.get("content"), str) else ""
    mark = protocol.template_marks(text)
    if mark is not None:
        lines.append(
            f"{where}: FIX: the answer carries chat-template tokens ({mark[:20]!r}): a base model or a "
            f"server without the model's chat template; pick an instruction-tuned (chat) model."
        )
    calls = message.get("tool_calls") or []
    if not calls:
        lines.append(
            f"{where}: FIX: tool calling is missing: the model answered the probe without calling its "
            f"tool, so Wilson would hand every run to the offline rules; {PICK_TOOL_MODEL}."
        )
        return lines
    arguments = (calls[0].get("function") or {}).get("arguments")
    try:
        if not isinstance(arguments, dict):
            json.loads(arguments or "{}")
    except (ValueError, TypeError):
        lines.append(
            f"{where}: FIX: JSON arguments are missing: the model called the tool but its arguments are "
            f"not valid JSON; pick a larger instruction-tuned model trained for tool calling."
        )
        return lines
    slow = took > ep.timeout / 2
    lines.append(
        f"{where}: {'FIX: ' if slow else ''}ok, tool calling works (probe answered in {took:.1f}s"
        + (f", over half of llm.timeout {ep.timeout:g}s: pick a smaller or faster model)" if slow else ")")
    )
    return lines
