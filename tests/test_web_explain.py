"""The trace's shorthand, as the dashboard says it: what happened and why, in a person's words."""

from __future__ import annotations

import pytest

from channels.web.explain import explain

RECORDED = [  # (stage, actor, reason) as the actors write them, and what the Trace page says
    (
        "routed",
        "thalamus",
        "inbox priority 0 from telegram",
        ("Received", "Your message came on Telegram; it went straight to Wilson to answer."),
    ),
    (
        "routed",
        "thalamus",
        "buffered (row 12) until the next sync",
        (
            "Received",
            (
                "Kept with the other news until Wilson next goes through it (before the morning briefing, "
                "or at once if something looks urgent)."
            ),
        ),
    ),
    ("claimed", "cortex-realtime", "inbox 1 priority 0 (message)", ("Picked up", "Wilson started working on it.")),
    (
        "proposed",
        "cortex",
        "proposal 4 with 1 item(s)",
        ("Proposed", "Wilson proposed a change for you to approve (proposal 4); nothing changes before."),
    ),
    ("presented", "approval", "proposal 4 on web", ("Asked you", "Proposal 4 was put to you on the dashboard.")),
    ("delivered", "telegram", "outbox 40", ("Delivered", "The message reached you on Telegram.")),
    ("delivered", "silent", "outbox 41", ("Delivered", "Nothing was sent: it was kept silent, in the log only.")),
    (
        "dropped",
        "thalamus",
        "bulk mail (a newsletter or an automatic message) about nothing that needs you",
        (
            "Set aside",
            ("Not worth telling you: bulk mail (a newsletter or an automatic message) about nothing that needs you."),
        ),
    ),
    (
        "expired",
        "approval",
        "proposal 2 unanswered until 2027-01-06 09:00 UTC, user told",
        ("Lapsed", "Proposal 2 got no answer in time, so nothing of it was done. You were told."),
    ),
    (
        "fired",
        "tick",
        "schedule briefing (0 7 * * *) for 2027-01-06 06:00 UTC",
        ("On schedule", "The clock started the morning briefing."),
    ),
    (
        "approved",
        "approval",
        "proposal 1 approve by owner: Done:",
        ("You approved", "You approved proposal 1, and it was done."),
    ),
    (
        "rejected",
        "approval",
        "proposal 3 reject by owner: Rejected: Book flights",
        ("You turned down", "You turned down proposal 3. Wilson answered: Rejected: Book flights"),
    ),
    ("something new", "cortex", "a reason nobody mapped", ("Something new", "A reason nobody mapped")),
]


@pytest.mark.parametrize(("stage", "actor", "reason", "said"), RECORDED)
def test_each_recorded_step_reads_as_what_happened_and_why(stage, actor, reason, said):
    assert explain(stage, actor, reason) == said
    assert not any(word in said[1] for word in ("outbox", "inbox", "priority 0", "repl", "thalamus"))
