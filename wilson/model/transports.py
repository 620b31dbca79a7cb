"""Transports: each turns (endpoint, model, payload) into an OpenAI-style response body: over HTTP,
or from the offline rules in process."""

from __future__ import annotations

import json

import httpx
from loguru import logger

from wilson.kernel import deadline
from wilson.kernel.redact import redact
from wilson.model.endpoints import Endpoint
from wilson.model.errors import Rejected, Retryable


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # the HTTP-date form is rare for model APIs; plain backoff covers it


class HttpTransport:
    """POST {base_url}/chat/completions over one shared, thread-safe httpx client.

    `endpoint.timeout` bounds the whole exchange, not each read (wilson/kernel/deadline.py): a server that
    drips its headers or its body is given up all the same. That needs each call's socket made inside the
    call, so connections are not kept between calls; a model's answer takes far longer than a connect."""

    kind = "http"

    def __init__(self):
        self.client = httpx.Client(follow_redirects=False, limits=httpx.Limits(max_keepalive_connections=0))

    def send(self, endpoint: Endpoint, model: str, payload: dict) -> dict:
        headers = {"X-Wilson-Role": endpoint.role, "Content-Type": "application/json"}
        if endpoint.api_key:
            headers["Authorization"] = f"Bearer {endpoint.api_key}"
        url = endpoint.base_url + "/chat/completions"
        try:
            content = json.dumps(payload, ensure_ascii=False).encode()
        except (TypeError, ValueError) as exc:
            raise Rejected(f"the request cannot be sent as JSON ({exc})") from None
        try:
            with deadline.within(endpoint.timeout, "the model's answer"):
                response = self.client.post(url, content=content, headers=headers,
                                            timeout=httpx.Timeout(endpoint.timeout))
                response.read()
        except deadline.Expired:
            raise Retryable(f"no answer within {endpoint.timeout:g}s in all") from None
        except httpx.TimeoutException:
            raise Retryable(f"no answer within {endpoint.timeout:g}s") from None
        except httpx.TransportError as exc:
            raise Retryable(f"cannot connect to {redact(endpoint.base_url)} ({type(exc).__name__})") from None
        status = response.status_code
        if status == 429:
            raise Retryable("rate limited (429)", _retry_after(response), answered=True)
        if status >= 500:
            raise Retryable(f"server error {status}", _retry_after(response))
        if status >= 400:
            # a proxy may echo the key it refused: redact the whole excerpt before cutting it short
            raise Rejected(f"HTTP {status}: {redact(response.text[:4000])[:200]}")
        if status >= 300:
            raise Rejected(f"redirected (HTTP {status}); check llm.base_url")
        try:
            body = assembled(response.text) if response.text.lstrip().startswith("data:") else response.json()
        except ValueError:
            raise Retryable("the response body is not JSON", answered=True) from None
        if not isinstance(body, dict) or not isinstance(body.get("choices"), list) or not body["choices"]:
            raise Retryable("the response has no choices", answered=True)
        return body

    def close(self) -> None:
        self.client.close()


def assembled(stream: str) -> dict:
    """A chat completion from server-sent chunks (a server, or a proxy, that streams though nobody asked): the
    deltas' text joined, their tool calls put together by index, the last usage seen."""
    text, calls, usage, finish, model = [], {}, None, None, ""
    for line in stream.splitlines():
        line = line.strip()
        if not line.startswith("data:") or line[5:].strip() == "[DONE]":
            continue
        chunk = json.loads(line[5:])
        if not isinstance(chunk, dict):
            raise ValueError("a chunk that is not an object")
        usage = chunk.get("usage") or usage
        model = chunk.get("model") or model
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or choice.get("message") or {}
            finish = choice.get("finish_reason") or finish
            if isinstance(delta.get("content"), str):
                text.append(delta["content"])
            for part in delta.get("tool_calls") or []:
                call = calls.setdefault(part.get("index", len(calls)), {"id": "", "type": "function",
                                                                        "function": {"name": "", "arguments": ""}})
                call["id"] = part.get("id") or call["id"]
                function = part.get("function") or {}
                call["function"]["name"] += function.get("name") or ""
                call["function"]["arguments"] += function.get("arguments") or ""
    message = {"role": "assistant", "content": "".join(text) or None}
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    body = {"object": "chat.completion", "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}]}
    if usage:
        body["usage"] = usage
    return body


class OfflineTransport:
    kind = "offline"

    def __init__(self, provider):
        self.provider = provider

    def send(self, endpoint: Endpoint, model: str, payload: dict, context: dict | None = None) -> dict:
        try:
            return self.provider.complete(payload, role=endpoint.role, context=context)
        except Exception as exc:  # a bug in a rule must read as a failed model, not a crashed actor
            logger.exception("offline provider failed for {}", endpoint.role)
            raise Rejected(redact(f"offline provider failed: {exc}")) from None

    def close(self) -> None:
        pass
