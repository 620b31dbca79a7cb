"""Whether a model's answer keeps the protocol, and its text made fit to deliver.

A model's output is a claim, not a fact (DESIGN principle 16). An answer breaks the protocol when a tool
call was required and none came, when a background run ends with free text instead of a decision, when
someone waits and the answer is empty, or when its text carries chat-template control tokens or role
markers (a base model continuing its prompt). `breach` names the broken rule; the Synapse then lets the
offline rules answer and counts the failure. `clean` is the last line of defence for any text that reaches
a person: the tokens and markers go, the length is capped, and an empty answer is never delivered.
"""

from __future__ import annotations

import re

# What a call expects of the answer (Synapse.chat `expect`):
CALL = "call"  # a tool call is required (tool_choice "required": the RAS's arousal, triage); free text is no answer
DECISION = "decision"  # a background run: tool calls, or nothing at all (silence); free text is neither
ANSWER = "answer"  # someone waits: a tool call or words for them
EXPECTATIONS = (CALL, DECISION, ANSWER)

# Control tokens of the chat templates in common use (Llama 2, ChatML, Llama 3, Gemma, Phi, Mistral, Alpaca)
TOKEN_RE = re.compile(
    r"<</?SYS>>|\[/?INST\]|</?s>|<\|[a-z_]{2,30}\|>|<(?:start|end)_of_turn>|<(?:bos|eos|pad|unk)>"
    r"|<\|(?:im_start|im_end|endoftext|eot_id)\|?>|###\s*(?:Instruction|Response|Input)\s*:",
    re.I,
)
# A line that opens another turn of the dialogue: the model speaking for the user or the system
ROLE_RE = re.compile(r"^[ \t]*(?:user|assistant|system|human|model)[ \t]*:", re.I | re.M)
# a Gemma turn opens with "<start_of_turn>model", a ChatML one with "<|im_start|>assistant"
_TURN_NAME_RE = re.compile(r"(?<=<start_of_turn>)(?:user|model)\b|(?<=<\|im_start\|>)(?:user|assistant|system)\b", re.I)

REPLY_LIMIT = 8000  # characters of one reply to the user: two Telegram messages; beyond that a model rambles
EMPTY_ANSWER = "I couldn't put an answer together just now. Could you say it another way?"


def template_marks(text: str | None) -> str | None:
    """The first control token or role marker in `text`, or None."""
    if not text:
        return None
    found = TOKEN_RE.search(text) or ROLE_RE.search(text)
    return found.group(0).strip() if found else None


def breach(text: str | None, calls: int, expect: str | None) -> str | None:
    """Why an answer (its text and how many tool calls it made) breaks the protocol, or None."""
    mark = template_marks(text)
    if mark is not None:
        return f"its text carries chat-template tokens ({mark[:30]!r})"
    said = bool((text or "").strip())
    if expect == CALL and not calls:  # required: silence is no answer either (the rows would wait for ever)
        return (
            "it answered with free text instead of the required tool call"
            if said
            else "it answered with nothing instead of the required tool call"
        )
    if expect == DECISION and not calls and said:
        return "the background run ended with free text and no tool call"
    if expect == ANSWER and not calls and not said:
        return "an empty answer to the user"
    return None


# What a text that carries a tool call starts with: JSON, a tag, a fence
CALL_OPENERS = ("{", "[", "<", "`")
EARLY_CHARACTERS = 24  # of free text before a required call is given up on
# of free text before a background run's decision is given up on: a model that says a word before its call ("I'll
# put a plan up for approval") stays far below it, and one that writes a story instead stops here, not at max_tokens
DECISION_CHARACTERS = 400


def watcher(expect: str | None):
    """What a streamed answer is watched for (transports.HttpTransport `watch`): the reason to stop reading it
    as soon as it has broken the protocol in a way nothing after can mend (a template token; free text where
    only a tool call will do; a background run's story where a decision is due), or None to read on."""

    def watch(text: str, calls: bool) -> str | None:
        mark = template_marks(text)
        if mark is not None:
            return f"its text carries chat-template tokens ({mark[:30]!r})"
        said = text.lstrip()
        if calls or said.startswith(CALL_OPENERS):
            return None
        if expect == CALL and len(said) >= EARLY_CHARACTERS:
            return "it answered with free text instead of the required tool call"
        if expect == DECISION and len(said) >= DECISION_CHARACTERS:
            return "the background run ended with free text and no tool call"
        return None

    return watch


def clean(text: str | None, limit: int = REPLY_LIMIT) -> str:
    """`text` fit for a person: control tokens gone, a turn the model wrote for someone else cut off, a
    leading role marker dropped, at most `limit` characters (cut at a word). May be empty."""
    text = text or ""
    if template_marks(text) is not None:  # a clean text is left as it was written, spacing and all
        text = TOKEN_RE.sub("", _TURN_NAME_RE.sub("", text))
        while (marker := ROLE_RE.search(text)) is not None:
            if text[: marker.start()].strip():  # the model went on to write the next turn: before it is its answer
                text = text[: marker.start()]
                break
            text = text[marker.end() :]  # "Assistant: Hello" is "Hello"
        text = text.strip()
    if len(text) > limit:
        cut = text[:limit].rsplit(None, 1)[0] if " " in text[:limit] else text[:limit]
        text = cut.rstrip(" ,;:") + "…"
    return text


def deliverable(text: str | None, limit: int = REPLY_LIMIT) -> str:
    """`clean` that never hands back nothing: an answer a person waits for is never empty."""
    return clean(text, limit) or EMPTY_ANSWER
