"""Whether the rules would repeat themselves: a background heads-up against what the context's `told_before`
(actors/cortex/told.py) says Wilson already told the user about the mail's thread."""

from __future__ import annotations

VAGUE = "this may need you."  # a heads-up that says nothing of its own: never taken for one said before


def said_before(heads_up: str, context: dict) -> bool:
    """Whether a message of the context's `told_before` said exactly this heads-up, after its source ("From the
    email …: "). What went out was defanged ("boss@work[.]example"), so it is compared as it was written; a
    line cut short ("…") or a link's lost scheme never matches, and the heads-up is said."""
    told = (context.get("told_before") or {}).get("told") or []
    return any(
        str(line.get("text") or "").replace("[.]", ".").endswith(": " + heads_up)
        for line in told
        if isinstance(line, dict)
    )
