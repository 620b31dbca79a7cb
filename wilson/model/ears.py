"""Wilson's ears: a voice note to text through an OpenAI-compatible /audio/transcriptions endpoint (role `ears`:
[llm] ears_model, ears_base_url or base_url, ears_api_key or api_key). What comes back is a model's hearing of
someone's voice: the caller treats it as untrusted text, like a forwarded message."""

from __future__ import annotations

from dataclasses import dataclass

from wilson.kernel.redact import redact
from wilson.model.errors import ModelUnavailable, SynapseError

MAX_TEXT = 8000  # characters of one transcript kept


class NoEars(SynapseError):
    """No speech-to-text model is configured."""


@dataclass(frozen=True)
class Ears:
    base_url: str
    model: str
    api_key: str
    timeout: float


def ears_of(config) -> Ears | None:
    """The configured ears, None when there are none (no ears_model, or no server to ask)."""
    get = config.get
    model = str(get("llm", "ears_model") or "").strip()
    base = str(get("llm", "ears_base_url") or get("llm", "base_url") or "").strip().rstrip("/")
    if not model or not base.startswith(("http://", "https://")):
        return None
    try:
        timeout = float(get("llm", "timeout") or 60.0)
    except (TypeError, ValueError):
        timeout = 60.0
    return Ears(base, model, str(get("llm", "ears_api_key") or get("llm", "api_key") or ""), timeout)


def transcribe(ears: Ears, audio: bytes, filename: str, mime: str) -> str:
    """The words of one recording; ModelUnavailable (in words for the user) when the server does not give them."""
    # lazy: httpx (with its command-line extras, about 70 ms) only once a request is made
    import httpx

    headers = {"Authorization": f"Bearer {ears.api_key}"} if ears.api_key else {}
    try:
        response = httpx.post(
            f"{ears.base_url}/audio/transcriptions",
            headers=headers,
            timeout=ears.timeout,
            data={"model": ears.model, "response_format": "json"},
            files={"file": (filename, audio, mime)},
        )
    except httpx.HTTPError as exc:
        raise ModelUnavailable(f"the speech model did not answer ({type(exc).__name__})", unreachable=True) from None
    if response.status_code != 200:
        raise ModelUnavailable(redact(f"the speech model refused it (HTTP {response.status_code})"))
    try:
        text = response.json().get("text")
    except ValueError:
        text = None
    if not isinstance(text, str):
        raise ModelUnavailable("the speech model's answer had no text")
    return " ".join(text.split())[:MAX_TEXT]
