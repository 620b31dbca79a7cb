"""wilson/model/offline/point.py: the sentence a heads-up quotes for a mail, as the email channel writes it."""

from __future__ import annotations

import pytest

from wilson.model.offline.point import point

HEAD = "Email from Sam <sam@example.org>: Friday\nSent Sun 06 Dec 2026 07:00\n"


@pytest.mark.parametrize(
    "body, said",
    [
        ("Hi Anna,\n\nthe plumber comes on Friday at 9.", "The plumber comes on Friday at 9."),
        (
            "Dear parents, parents evening is on Thursday at 18:00. Please sign up.",
            "Parents evening is on Thursday at 18:00.",
        ),
        (
            "Berlin, 6 December 2026\n\nDear Sir or Madam,\n\nyour tax return is due on 31 July.",
            "Your tax return is due on 31 July.",
        ),
        (
            "Hello,\nI hope this email finds you well.\nCould you send me the form by Friday?",
            "Could you send me the form by Friday?",
        ),
        ("FYI\nPlease see below.\nThe meeting moved to room 4.", "The meeting moved to room 4."),
        (
            "Dear Mr Novak,\n\nunfortunately your flight LH 1172 on 08 February 2027 at 07:10\nhas been cancelled.",
            "Unfortunately your flight LH 1172 on 08 February 2027 at 07:10 has been cancelled.",
        ),
        ("Dad fell and is in St. Georg hospital. Call me.", "Dad fell and is in St. Georg hospital."),
        (
            "From: Office <office@school.example>\nDate: Mon, 4 Jan 2027\nSubject: Friday\n\nNo school on Friday.",
            "No school on Friday.",
        ),
        ("Hi!\n\nKind regards\nSam", ""),
    ],
)
def test_the_point_is_the_first_sentence_that_says_something(body, said):
    assert point(HEAD + body, {"friday"}) == said
