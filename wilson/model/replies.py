"""A model's answer read: its text and tool calls (repairing what can be repaired), its token usage and
what it costs by the price table."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from wilson.kernel.config import ROLES


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict


@dataclass(frozen=True)
class ChatResult:
    text: str | None
    tool_calls: tuple[ToolCall, ...]
    prompt_tokens: int
    completion_tokens: int
    model: str
    offline: bool = False
    rule: str = ""  # offline answers: the rule that fired


class BadOutput(Exception):
    def __init__(self, reason: str, repair: list[dict]):
        super().__init__(reason)
        self.repair = repair


def prices(config) -> dict[str, tuple[float, float, float]]:
    """USD per million tokens for each role, (input, cached input, output), from [llm] price_<role>."""
    out = {}
    for role in ROLES:
        text = str(config.get("llm", f"price_{role}") or "0/0/0")
        try:
            parts = tuple(float(p) for p in text.split("/"))
        except ValueError:
            parts = ()
        out[role] = parts if len(parts) == 3 else (0.0, 0.0, 0.0)
    return out


def example_prices(config) -> bool:
    """Whether the prices in effect are the settings' shipped examples rather than the person's own."""
    return all(config.sources.get(("llm", f"price_{role}"), "default") == "default" for role in ROLES)


def cost(price: tuple[float, float, float], prompt: int, completion: int, cached: int = 0) -> float:
    """What one role's tokens are billed, in USD: `cached` of the `prompt` tokens at the cached price."""
    fresh = max(0, prompt - cached)
    return (fresh * price[0] + min(cached, prompt) * price[1] + completion * price[2]) / 1_000_000


def usd(amount: float) -> str:
    return f"${amount:,.2f}" if amount >= 1 or amount == 0 else f"${amount:.4f}"


def estimate_tokens(value) -> int:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return max(1, len(text) // 4)


def _fenced(text: str) -> str:
    """Models often wrap JSON in a ``` fence even when asked for JSON only."""
    match = re.fullmatch(r"\s*```(?:json)?\s*(.*?)\s*```\s*", text, re.S)
    return match.group(1) if match else text.strip()


def _content_text(content) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


# A tool call a server left in the text: <tool_call>{...}</tool_call> (Hermes-style templates without the server's
# tool parser), or the whole text one JSON call or a list of them (llama.cpp without --jinja, LM Studio)
_TAGGED_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.S)


def calls_in_content(text: str | None, offered) -> list[dict]:
    """The tool calls written into a message's text, in the wire shape ({"function": {"name", "arguments"}}),
    when the text is nothing but calls of offered tools; [] otherwise (words about a tool are no call)."""
    if not text or not offered or "{" not in text:  # every call is a JSON object: most replies are words alone
        return []
    tagged = _TAGGED_CALL.findall(text)
    if tagged and not _TAGGED_CALL.sub("", text).strip():
        pieces = tagged
    else:
        pieces = [_fenced(text)]
    found = []
    for piece in pieces:
        try:
            value = json.loads(piece)
        except ValueError:
            return []
        for item in value if isinstance(value, list) else [value]:
            if not isinstance(item, dict):
                return []
            item = item.get("function") if isinstance(item.get("function"), dict) else item
            name = item.get("name")
            arguments = item.get("arguments", item.get("parameters", {}))
            if name not in offered or not isinstance(arguments, (dict, str)):
                return []
            found.append({"function": {"name": name, "arguments": arguments}})
    return found


def parse_reply(body: dict, json_wanted: bool, offered=()) -> tuple[str | None, tuple[ToolCall, ...]]:
    """Text and tool calls of one response (`offered`: the tools' names, for calls a server left in the text);
    raises BadOutput with the repair messages."""
    message = body["choices"][0].get("message") or {}
    text = _content_text(message.get("content"))
    raw_calls = message.get("tool_calls") or []
    if not raw_calls:
        raw_calls = calls_in_content(text, offered)
        if raw_calls:
            text = None
    calls = []
    for index, raw in enumerate(raw_calls):
        function = raw.get("function") or {}
        name = function.get("name") or ""
        arguments = function.get("arguments")
        if isinstance(arguments, dict):
            parsed = arguments
        else:
            arguments = arguments or ""
            try:
                parsed = json.loads(arguments) if arguments.strip() else {}
            except (ValueError, AttributeError) as exc:
                parsed = exc
            if not isinstance(parsed, dict):
                reason = (
                    f"the arguments of your call to `{name}` are not a valid JSON object"
                    f" ({parsed if isinstance(parsed, Exception) else type(parsed).__name__})"
                )
                raise BadOutput(
                    reason,
                    [
                        {"role": "assistant", "content": f"(tool call) {name}({arguments})"},
                        {
                            "role": "user",
                            "content": f"Error: {reason}. Call the tool again with its arguments "
                            "as one valid JSON object, nothing else.",
                        },
                    ],
                )
        calls.append(ToolCall(id=raw.get("id") or f"call_{index}", name=name, arguments=parsed))
    if json_wanted and not calls:
        candidate = _fenced(text or "")
        try:
            json.loads(candidate)
        except ValueError as exc:
            reason = f"your answer is not valid JSON ({exc})"
            raise BadOutput(
                reason,
                [
                    {"role": "assistant", "content": text or ""},
                    {"role": "user", "content": f"Error: {reason}. Reply again with only one valid JSON value."},
                ],
            ) from None
        text = candidate
    return text, tuple(calls)


def token_counts(body: dict, payload: dict) -> tuple[int, int]:
    """(prompt, completion) tokens as the server reports them; estimated when it reports none."""
    usage = body.get("usage")
    if isinstance(usage, dict):
        prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
        if isinstance(prompt, int) and isinstance(completion, int):
            return prompt, completion
    return (
        estimate_tokens({"messages": payload.get("messages"), "tools": payload.get("tools")}),
        estimate_tokens(body.get("choices")),
    )
