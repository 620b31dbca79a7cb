"""Short texts redacted again are looked up (wilson/kernel/redact.py `_said`): the same answer as the full work,
and a secret registered later is masked in a text that was looked up before."""

from __future__ import annotations

import random

from wilson.kernel import redact as redaction


def test_a_text_redacted_again_comes_out_as_the_full_redaction_does():
    pieces = [
        "role",
        "deep",
        "offline rule: none",
        "tool_calls",
        "Bearer abcdefgh12345678",
        "api_key=s3cr3tvalue",
        "bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",
        "inbox 12 priority 0 (message)",
        "x" * 90,
        "é",
    ]
    rng = random.Random(5)
    texts = pieces + ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 3))) for _ in range(500)]
    first = [redaction.redact(t) for t in texts]
    again = [redaction.redact(t) for t in texts]
    assert first == again == [redaction._redact(t) for t in texts]
    assert any(len(t) <= redaction.SAID_CHARS and t in redaction._said for t in texts)


def test_a_secret_registered_after_a_text_was_looked_up_is_masked_in_it():
    text = "token Kestrel-77-Quill rejected"[6:21]  # "Kestrel-77-Quil": no shape of a secret
    assert redaction.redact(text) == text
    redaction.register(["Kestrel-77-Quil"])
    assert redaction.redact(text) == redaction.MASK


def test_the_look_up_stays_bounded():
    for i in range(redaction.SAID_TEXTS + 10):
        redaction.redact(f"line {i}")
    assert len(redaction._said) <= redaction.SAID_TEXTS
