"""Record model exchanges to a directory, and serve them back without a server.

With `llm.record = DIR` (WILSON_LLM_RECORD) every successful request/response
pair is written as one JSON file. `--llm replay:DIR` answers from those files:
first by a hash of the normalised request, else in recorded order, so a run
whose prompts drift slightly (a timestamp in a prompt) still replays.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

from wilson.model.errors import Rejected


def request_key(role: str, payload: dict) -> str:
    """Hash of what determines the answer: not the model name, which replay may not know."""
    normal = {key: payload.get(key) for key in ("messages", "tools", "tool_choice", "response_format")}
    normal["role"] = role
    text = json.dumps(normal, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class Recorder:
    def __init__(self, directory: str | Path):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._sequence = len(list(self.directory.glob("*.json")))

    def write(self, role: str, model: str, payload: dict, body: dict) -> Path:
        key = request_key(role, payload)
        with self._lock:
            self._sequence += 1
            path = self.directory / f"{self._sequence:06d}-{role}-{key[:12]}.json"
        record = {"role": role, "model": model, "key": key, "request": payload, "response": body}
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(record, indent=1, sort_keys=True, default=str))
        os.replace(temporary, path)
        return path


class ReplayTransport:
    kind = "replay"

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)
        if not self.directory.is_dir():
            raise ValueError(f"replay: {self.directory} is not a directory of recorded exchanges")
        self._records = []
        for path in sorted(self.directory.glob("*.json")):
            try:
                record = json.loads(path.read_text())
            except ValueError as exc:
                raise ValueError(f"replay: {path} is not valid JSON ({exc})") from None
            self._records.append(record)
        self._used = [False] * len(self._records)
        self._lock = threading.Lock()

    def send(self, endpoint, model: str, payload: dict) -> dict:
        key = request_key(endpoint.role, payload)
        with self._lock:
            chosen = next((i for i, r in enumerate(self._records) if not self._used[i] and r.get("key") == key), None)
            if chosen is None:
                chosen = next(
                    (i for i, r in enumerate(self._records) if not self._used[i] and r.get("role") == endpoint.role),
                    None,
                )
            if chosen is None:
                raise Rejected(f"replay: no recorded answer left in {self.directory}")
            self._used[chosen] = True
        return self._records[chosen]["response"]

    def close(self) -> None:
        pass
