"""Transports: each turns (endpoint, model, payload) into an OpenAI-style response body: over HTTP,
or from the offline rules in process."""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING

from loguru import logger

from wilson.kernel import deadline, lanes
from wilson.kernel.redact import redact
from wilson.model.endpoints import Endpoint
from wilson.model.errors import Rejected, Retryable

if TYPE_CHECKING:  # annotations only
    import httpx


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
        self._client: httpx.Client | None = None
        self._making = threading.Lock()

    @property
    def client(self) -> httpx.Client:
        """The one client, made at the first request: importing httpx and making a client (it loads the
        certificate store) take about 0.2 s of CPU in a fresh process, which a Wilson should not pay at its start
        for a model it has not asked yet (or never asks: a test's, an evaluation's)."""
        if self._client is None:
            with self._making:
                if self._client is None:
                    # lazy: see above, paid at the first request
                    import httpx

                    self._client = httpx.Client(
                        follow_redirects=False, limits=httpx.Limits(max_keepalive_connections=0)
                    )
        return self._client

    def send(self, endpoint: Endpoint, model: str, payload: dict, watch=None) -> dict:
        """The response body. A request with `"stream": true` is read chunk by chunk: `watch(text, calls)` is asked
        after each piece of text, and when it names a reason the answer so far is taken and the connection closed,
        which stops the server generating (its body says so in "stopped"). A server that does not stream is read
        whole, as is every request without `stream`."""
        # lazy: httpx (with its command-line extras, about 70 ms) only once a request is made
        import httpx

        headers = {"X-Wilson-Role": endpoint.role, "Content-Type": "application/json"}
        if endpoint.api_key:
            headers["Authorization"] = f"Bearer {endpoint.api_key}"
        url = endpoint.base_url + "/chat/completions"
        try:
            content = json.dumps(payload, ensure_ascii=False).encode()
        except (TypeError, ValueError) as exc:
            raise Rejected(f"the request cannot be sent as JSON ({exc})") from None
        stopped = None
        try:
            with deadline.within(endpoint.timeout, "the model's answer"), lanes.waiting():
                request = self.client.build_request(
                    "POST", url, content=content, headers=headers, timeout=httpx.Timeout(endpoint.timeout)
                )
                response = self.client.send(request, stream=True)
                try:
                    if (
                        response.status_code == 200
                        and payload.get("stream")
                        and response.headers.get("content-type", "").startswith("text/event-stream")
                    ):
                        stream = Assembler()
                        for line in response.iter_lines():
                            if stream.feed(line) and watch is not None:
                                stopped = watch(stream.text(), bool(stream.calls))
                                if stopped:
                                    break
                        streamed = stream
                    else:
                        response.read()
                        streamed = None
                finally:
                    response.close()  # before the whole answer came: the server stops generating it
        except deadline.Expired:
            raise Retryable(f"no answer within {endpoint.timeout:g}s in all") from None
        except httpx.TimeoutException:
            raise Retryable(f"no answer within {endpoint.timeout:g}s") from None
        except httpx.TransportError as exc:
            raise Retryable(f"cannot connect to {redact(endpoint.base_url)} ({type(exc).__name__})") from None
        except ValueError:
            raise Retryable("a streamed chunk is not JSON", answered=True) from None
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
            if streamed is not None:
                body = streamed.body()
            else:
                body = assembled(response.text) if response.text.lstrip().startswith("data:") else response.json()
        except ValueError:
            raise Retryable("the response body is not JSON", answered=True) from None
        if not isinstance(body, dict) or not isinstance(body.get("choices"), list) or not body["choices"]:
            raise Retryable("the response has no choices", answered=True)
        if stopped:
            body["stopped"] = stopped
        return body

    def close(self) -> None:
        if self._client is not None:
            self._client.close()


class Assembler:
    """A chat completion put together from server-sent chunks: the deltas' text joined, their tool calls put
    together by index, the last usage seen."""

    def __init__(self):
        self.pieces: list[str] = []
        self.worded = False  # a delta carried text, even an empty one: the answer's content is a string
        self.calls: dict[int, dict] = {}
        self.usage = None
        self.finish = None
        self.model = ""

    def feed(self, line: str) -> bool:
        """One line of the stream; True when it brought text. Raises ValueError for a chunk that is not JSON."""
        line = line.strip()
        if not line.startswith("data:") or line[5:].strip() == "[DONE]":
            return False
        chunk = json.loads(line[5:])
        if not isinstance(chunk, dict):
            raise ValueError("a chunk that is not an object")
        self.usage = chunk.get("usage") or self.usage
        self.model = chunk.get("model") or self.model
        said = False
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or choice.get("message") or {}
            self.finish = choice.get("finish_reason") or self.finish
            if isinstance(delta.get("content"), str):
                self.worded = True
                if delta["content"]:
                    self.pieces.append(delta["content"])
                    said = True
            for part in delta.get("tool_calls") or []:
                call = self.calls.setdefault(
                    part.get("index", len(self.calls)),
                    {"id": "", "type": "function", "function": {"name": "", "arguments": ""}},
                )
                call["id"] = part.get("id") or call["id"]
                function = part.get("function") or {}
                call["function"]["name"] += function.get("name") or ""
                arguments = function.get("arguments") or ""
                # a server that sends each call whole may send its arguments as an object
                call["function"]["arguments"] += arguments if isinstance(arguments, str) else json.dumps(arguments)
        return said

    def text(self) -> str:
        return "".join(self.pieces)

    def body(self) -> dict:
        message = {"role": "assistant", "content": self.text() if self.worded else None}
        if self.calls:
            message["tool_calls"] = [self.calls[i] for i in sorted(self.calls)]
        body = {
            "object": "chat.completion",
            "model": self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish}],
        }
        if self.usage:
            body["usage"] = self.usage
        return body


def assembled(stream: str) -> dict:
    """A chat completion from server-sent chunks (a server, or a proxy, that streams though nobody asked)."""
    assembler = Assembler()
    for line in stream.splitlines():
        assembler.feed(line)
    return assembler.body()


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
