"""A scripted OpenAI-compatible model server for tests, demos and benchmarks.

It answers POST /v1/chat/completions and GET /v1/models on 127.0.0.1 from a list
of rules, and POST /v1/audio/transcriptions (a speech-to-text model, see `hear`), over real HTTP, so the whole client path (headers, retries, timeouts,
parsing, accounting) is exercised without a model. A rule:

    {"match": {"role": "deep", "tool": "create_task", "last_contains": "Japan"},
     "reply": {"tool_calls": [{"name": "create_task", "arguments": {"title": "Book flights"}}]},
     "times": 1, "latency_ms": 20, "fault": None}

`match` may instead be a callable(request_json, headers) -> bool and `reply` a
callable(request_json) -> reply dict. Faults: "429" (with `retry_after`), "500",
"502", "timeout" (holds the request for `sleep_ms`, default 30 s), "malformed_json"
(an invalid JSON body), "bad_arguments" (tool-call arguments that are not JSON).
The first matching rule wins; without a match the reply is empty text.
Every request is kept in `server.requests`; every answer carries `usage`, unless a `mode` imitates a
server that leaves it out. A request with `"stream": true` is answered in server-sent chunks, with the usage in
a last chunk when `stream_options` asks for it (the prompt's tokens are counted without those two keys).

`mode` imitates the response shapes of the servers the README names (what a rule's reply becomes):
- "openai" (the default): tool calls in `tool_calls`, arguments a JSON string, `usage`.
- "ollama": arguments as a JSON object rather than a string, no call ids.
- "vllm": `content` null beside tool calls, a `reasoning_content` field, usage with `prompt_tokens_details`.
- "llamacpp": a server without the model's tool template (no --jinja): the tool call written into `content`
  as JSON, no `tool_calls`.
- "lmstudio": tool calls inside `content` as <tool_call>…</tool_call>, sent as server-sent chunks (a
  stream nobody asked for), without `usage`.

Size: one server: its rules, its request handler and the response shapes of the servers it imitates are
read together when a test's script does something surprising.
"""

from __future__ import annotations

import json
import threading
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from wilson.kernel.loopback import LoopbackServer
from wilson.skills import offered_names

MATCH_KEYS = {"role", "model", "tool", "system_contains", "last_contains", "any_contains"}
FAULTS = {None, "429", "500", "502", "timeout", "malformed_json", "bad_arguments"}
MODES = ("openai", "ollama", "vllm", "llamacpp", "lmstudio")


def _text(content) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return json.dumps(content)


def tool_names(body: dict) -> list[str]:
    """The tools a request offers, then the actions of a `propose` tool among them (a rule's "tool" matches
    either: a mutation is offered as an action of `propose`)."""
    return offered_names(body.get("tools"))


class Rule:
    def __init__(self, spec: dict, index: int):
        if not isinstance(spec, dict):
            raise ValueError(f"rule {index}: expected a dict, got {type(spec).__name__}")
        self.index = index
        self.name = spec.get("name") or f"rule {index}"
        self.match = spec.get("match")
        if isinstance(self.match, dict):
            unknown = set(self.match) - MATCH_KEYS
            if unknown:
                raise ValueError(f"{self.name}: unknown match keys {sorted(unknown)}; use {sorted(MATCH_KEYS)}")
        elif self.match is not None and not callable(self.match):
            raise ValueError(f"{self.name}: match must be a dict or a callable")
        self.reply = spec.get("reply", {"text": ""})
        self.times = spec.get("times")
        self.used = 0
        self.latency_ms = spec.get("latency_ms")
        self.fault = None if spec.get("fault") is None else str(spec.get("fault"))
        if self.fault not in FAULTS:
            raise ValueError(f"{self.name}: unknown fault {self.fault!r}")
        self.retry_after = spec.get("retry_after", 1)
        self.sleep_ms = spec.get("sleep_ms", 30_000)

    def available(self) -> bool:
        return self.times is None or self.used < self.times

    def matches(self, body: dict, headers: dict) -> bool:
        if self.match is None:
            return True
        if callable(self.match):
            return bool(self.match(body, headers))
        m = self.match
        messages = [msg for msg in body.get("messages") or [] if isinstance(msg, dict)]
        if "role" in m and m["role"] not in (headers.get("x-wilson-role"), body.get("model")):
            return False
        if "model" in m and m["model"] != body.get("model"):
            return False
        if "tool" in m and m["tool"] not in tool_names(body):
            return False
        if "system_contains" in m and not any(
            m["system_contains"].lower() in _text(msg.get("content")).lower()
            for msg in messages
            if msg.get("role") == "system"
        ):
            return False
        if "last_contains" in m and not (
            messages and m["last_contains"].lower() in _text(messages[-1].get("content")).lower()
        ):
            return False
        if "any_contains" in m and not any(
            m["any_contains"].lower() in _text(msg.get("content")).lower() for msg in messages
        ):
            return False
        return True


class _Handler(BaseHTTPRequestHandler):
    server_version = "WilsonScripted/1"

    def log_message(self, format, *args):  # the test output stays clean
        pass

    def _send(self, status: int, body: bytes, headers: dict | None = None) -> None:
        try:
            self.send_response(status)
            headers = dict(headers or {})
            self.send_header("Content-Type", headers.pop("Content-Type", "application/json"))
            self.send_header("Content-Length", str(len(body)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            pass  # the client gave up (a scripted timeout)

    def do_GET(self):
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            data = [{"id": m, "object": "model", "owned_by": "scripted"} for m in self.server.owner.models]
            self._send(200, json.dumps({"object": "list", "data": data}).encode())
        else:
            self._send(404, b'{"error": {"message": "not found"}}')

    def do_POST(self):
        if self.path.rstrip("/") in ("/v1/audio/transcriptions", "/audio/transcriptions"):
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            status, payload = self.server.owner.transcribe(
                raw, self.headers.get("Content-Type") or "", dict(self.headers.items())
            )
            self._send(status, json.dumps(payload).encode())
            return
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._send(404, b'{"error": {"message": "not found"}}')
            return
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw)
        except ValueError:
            self._send(400, b'{"error": {"message": "request body is not JSON"}}')
            return
        status, payload, headers = self.server.owner.answer(body, raw, dict(self.headers.items()))
        self._send(status, payload, headers)


class ScriptedServer(LoopbackServer):
    handler = _Handler
    path = "/v1"
    thread_name = "scripted-model-server"

    def __init__(
        self,
        rules=(),
        *,
        latency_ms: int = 0,
        models: list[str] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        mode: str = "openai",
    ):
        super().__init__(host, port)
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}: one of {', '.join(MODES)}")
        self.mode = mode
        self.rules = [Rule(spec, i) for i, spec in enumerate(rules)]
        self.latency_ms = latency_ms
        self.models = list(models) if models else self._default_models()
        self.requests: list[dict] = []
        self.transcriptions: list[dict] = []  # each /audio/transcriptions request: model, file name, type, size
        self.hear = hear_speech
        self._lock = threading.Lock()
        self._serial = 0

    def _default_models(self) -> list[str]:
        names = ["default"]
        for rule in self.rules:
            if isinstance(rule.match, dict) and rule.match.get("model") and rule.match["model"] not in names:
                names.append(rule.match["model"])
        return names

    # -- answering -----------------------------------------------------------

    def transcribe(self, raw: bytes, content_type: str, headers: dict) -> tuple[int, dict]:
        """An OpenAI-style transcription: a multipart form with `model` and `file`; answers {"text": ...} from
        `hear(audio bytes)`, or 400 as a server does for a form without a file."""
        fields = multipart_fields(raw, content_type)
        audio = fields.get("file")
        entry = {
            "model": (fields.get("model") or (b"", ""))[0].decode(errors="replace"),
            "filename": audio[1] if audio else "",
            "size": len(audio[0]) if audio else 0,
            "authorization": headers.get("Authorization", ""),
        }
        with self._lock:
            self.transcriptions.append(entry)
        if audio is None:
            return 400, {"error": {"message": "no file in the request"}}
        return 200, {"text": self.hear(audio[0])}

    def answered(self) -> list[dict]:
        """The recorded requests that got a billed (usage-carrying) answer."""
        with self._lock:
            return [r for r in self.requests if r["usage"] is not None]

    def answer(self, body: dict, raw: bytes, headers: dict) -> tuple[int, bytes, dict]:
        headers = {k.lower(): v for k, v in headers.items()}
        if body.get("stream") or "stream_options" in body:  # how an answer is sent is not part of the prompt
            raw = json.dumps(
                {k: v for k, v in body.items() if k not in ("stream", "stream_options")}, ensure_ascii=False
            ).encode()
        with self._lock:
            rule = None
            for candidate in self.rules:
                if candidate.available() and candidate.matches(body, headers):
                    candidate.used += 1
                    rule = candidate
                    break
            self._serial += 1
            serial = self._serial
            entry = {
                "body": body,
                "headers": headers,
                "rule": rule.index if rule else None,
                "rule_name": rule.name if rule else None,
                "status": None,
                "usage": None,
            }
            self.requests.append(entry)

        latency = rule.latency_ms if rule and rule.latency_ms is not None else self.latency_ms
        if latency:
            self._stopping.wait(latency / 1000)
        fault = rule.fault if rule else None

        if fault in ("429", "500", "502"):
            extra = {"Retry-After": str(rule.retry_after)} if fault == "429" and rule.retry_after is not None else {}
            return self._finish(entry, int(fault), {"error": {"message": f"scripted fault {fault}"}}, extra)
        if fault == "timeout":
            self._stopping.wait(rule.sleep_ms / 1000)
            return self._finish(entry, 504, {"error": {"message": "scripted timeout"}})
        if fault == "malformed_json":
            entry["status"] = 200
            return 200, b'{"choices": [{"message": {"content": "half', {}

        reply = rule.reply if rule else {"text": ""}
        if callable(reply):
            reply = reply(body)
        message = self._message(reply or {}, body, serial, broken=fault == "bad_arguments")
        usage = {"prompt_tokens": max(1, len(raw) // 4), "completion_tokens": max(1, len(json.dumps(message)) // 4)}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        response = {
            "id": f"chatcmpl-scripted-{serial}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", ""),
            "choices": [
                {"index": 0, "message": message, "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}
            ],
            "usage": usage,
        }
        with self._lock:
            entry["usage"] = usage
        answer = shaped(self.mode, response) if self.mode != "openai" else response
        if isinstance(answer, dict) and body.get("stream"):
            answer = streamed(answer, bool((body.get("stream_options") or {}).get("include_usage")))
        return self._finish_as(entry, answer)

    def _finish_as(self, entry: dict, shaped_answer) -> tuple[int, bytes, dict]:
        if isinstance(shaped_answer, dict):
            return self._finish(entry, 200, shaped_answer)
        with self._lock:
            entry["status"] = 200
        return 200, shaped_answer.encode(), {"Content-Type": "text/event-stream"}

    def _finish(self, entry: dict, status: int, payload: dict, headers: dict | None = None):
        with self._lock:
            entry["status"] = status
        return status, json.dumps(payload).encode(), headers or {}

    @staticmethod
    def _message(reply: dict, body: dict, serial: int, broken: bool) -> dict:
        calls = list(reply.get("tool_calls") or [])
        if broken and not calls:
            offered = tool_names(body)
            calls = [{"name": offered[0] if offered else "tool", "arguments": {"value": 1}}]
        message = {"role": "assistant", "content": reply.get("text", None if calls else "")}
        if calls:
            message["tool_calls"] = []
            for i, call in enumerate(calls):
                arguments = call.get("arguments", {})
                arguments = arguments if isinstance(arguments, str) else json.dumps(arguments)
                if broken:
                    arguments = arguments[:-1] + ', "'  # cut off mid-object, as a truncated model output is
                message["tool_calls"].append(
                    {
                        "id": call.get("id") or f"call_{serial}_{i}",
                        "type": "function",
                        "function": {"name": call["name"], "arguments": arguments},
                    }
                )
        return message


def hear_speech(audio: bytes) -> str:
    """What the scripted ears hear: a test's stand-in audio file carries its words after b"SPEECH:"."""
    _, found, words = audio.partition(b"SPEECH:")
    return words.decode("utf-8", "replace").strip() if found else ""


def multipart_fields(raw: bytes, content_type: str) -> dict[str, tuple[bytes, str]]:
    """A multipart/form-data body: name -> (bytes, file name or "")."""
    message = BytesParser(policy=HTTP).parsebytes(b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + raw)
    fields = {}
    for part in message.iter_parts() if message.is_multipart() else []:
        name = part.get_param("name", header="content-disposition")
        if name:
            fields[str(name)] = (part.get_payload(decode=True) or b"", part.get_filename() or "")
    return fields


def shaped(mode: str, response: dict):
    """An OpenAI-shaped response as the server `mode` names sends it: a dict, or the text of an event stream."""
    message = response["choices"][0]["message"]
    calls = message.get("tool_calls") or []
    if mode == "ollama":
        for call in calls:
            call.pop("id", None)
            call["function"]["arguments"] = json.loads(call["function"]["arguments"])
        return response
    if mode == "vllm":
        message["reasoning_content"] = None
        if calls:
            message["content"] = None
        response["usage"]["prompt_tokens_details"] = None
        return response
    written = [{"name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"])} for c in calls]
    if mode == "llamacpp":
        if written:
            message.pop("tool_calls")
            message["content"] = json.dumps(written[0] if len(written) == 1 else written)
            response["choices"][0]["finish_reason"] = "stop"
        return response
    # lmstudio: the calls tagged in the text, streamed in chunks of a few characters, no usage
    text = "".join(f"<tool_call>{json.dumps(w)}</tool_call>" for w in written) or (message.get("content") or "")
    chunks = [text[i : i + 16] for i in range(0, len(text), 16)] or [""]
    lines = [
        {
            "id": response["id"],
            "object": "chat.completion.chunk",
            "model": response["model"],
            "choices": [{"index": 0, "delta": {"role": "assistant", "content": piece}, "finish_reason": None}],
        }
        for piece in chunks
    ]
    lines[-1]["choices"][0]["finish_reason"] = "stop"
    return "".join(f"data: {json.dumps(line)}\n\n" for line in lines) + "data: [DONE]\n\n"


def streamed(response: dict, usage: bool) -> str:
    """A whole response sent as a server streams one when asked to: the text in pieces of a few characters, each
    tool call in a delta of its own, the finish reason, and the usage in a last chunk when it was asked for."""
    message = response["choices"][0]["message"]
    head = {"id": response["id"], "object": "chat.completion.chunk", "model": response["model"]}

    def chunk(delta: dict, finish=None) -> dict:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    text = message.get("content")
    chunks = (
        [chunk({"role": "assistant", "content": text[i : i + 16]}) for i in range(0, len(text), 16)]
        if text
        else [chunk({"role": "assistant", "content": text})]
    )
    for index, call in enumerate(message.get("tool_calls") or []):
        chunks.append(chunk({"tool_calls": [{"index": index, **call}]}))
    chunks.append(chunk({}, response["choices"][0].get("finish_reason") or "stop"))
    if usage and response.get("usage"):
        chunks.append({**head, "choices": [], "usage": response["usage"]})
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"


def load_script(path: str | Path) -> ScriptedServer:
    """A (not yet started) server from a JSON script {"rules": [...], "latency_ms": N, "models": [...]}."""
    path = Path(path)
    try:
        script = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(f"scripted model script {path}: {exc}") from None
    if isinstance(script, list):
        script = {"rules": script}
    return ScriptedServer(
        script.get("rules", []),
        latency_ms=script.get("latency_ms", 0),
        models=script.get("models"),
        mode=script.get("mode", "openai"),
    )
