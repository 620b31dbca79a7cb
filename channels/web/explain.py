"""A trace step in a person's words: what happened and why, instead of the actors' own shorthand.

The trace records lines like "routed: inbox priority 0 from repl" and "delivered: outbox 40", written
for whoever reads the code. The dashboard's Trace page shows each step as a short headline ("Received",
"Set aside", "Told you") and a sentence, keeping the recorded words for a look underneath. Steps this
module does not know are shown as recorded, with the first letter made capital.
"""

from __future__ import annotations

import re

WHERE = {
    "repl": "at the terminal",
    "telegram": "on Telegram",
    "web": "on the dashboard",
    "email": "by email",
    "calendar": "from your calendar",
    "silent": "nowhere (kept silent, in the log only)",
}
JOBS = {
    "briefing": "morning briefing",
    "consolidate": "overnight learning from the day",
    "ras": "quick look for anything urgent in new mail and pages",
    "sync": "look through the news",
}
ROLES = {"deep": "the thorough model", "fast": "the quick model", "reflex": "the reflex model"}
HEADLINES = {
    "routed": "Received",
    "claimed": "Picked up",
    "offline": "Offline rules",
    "proposed": "Proposed",
    "replied": "Answered",
    "presented": "Asked you",
    "delivered": "Delivered",
    "dropped": "Set aside",
    "surfaced": "Told you",
    "silent": "Kept quiet",
    "expired": "Lapsed",
    "fired": "On schedule",
    "watching": "Watching",
    "looked": "Looked",
    "changed": "Changed",
    "approved": "You approved",
    "rejected": "You turned down",
    "modify": "You asked for changes",
    "undo": "Undo",
    "triaged": "Sorted",
    "skipped": "Skipped",
    "reminded": "Reminded you",
    "held back": "Held back",
    "failed": "Failed",
    "error": "Went wrong",
    "consolidated": "Learned overnight",
    "gathering": "Gathering",
    "refused": "Refused",
    "revived": "Brought back",
    "filed": "Filed",
}


def where(channel: str) -> str:
    return WHERE.get(channel, f"on {channel}")


def _sentence(text: str) -> str:
    text = text.strip()
    return (text[:1].upper() + text[1:]) if text else ""


def explain(stage: str, actor: str, reason: str) -> tuple[str, str]:
    """(headline, sentence) for one recorded step."""
    headline = HEADLINES.get(stage, _sentence(stage))
    if stage == "routed":
        if m := re.fullmatch(r"inbox priority (\d+) from (\S+)", reason):
            if m.group(1) == "0":
                return headline, f"Your message came {where(m.group(2))}; it went straight to Wilson to answer."
            return headline, f"It came {where(m.group(2))} and waits its turn (priority {m.group(1)})."
        if re.fullmatch(r"buffered \(row \d+\) until the next sync", reason):
            return headline, (
                "Kept with the other news until Wilson next goes through it (before the morning "
                "briefing, or at once if something looks urgent)."
            )
        if m := re.fullmatch(r"(deep|fast|reflex): (.+)", reason):
            return "Thought about", f"Given to {ROLES[m.group(1)]}: {m.group(2)}."
    if stage == "claimed" and re.match(r"inbox \d+", reason):
        return headline, "Wilson started working on it."
    if stage == "offline" and (m := re.fullmatch(r"(?:deep|fast|reflex): offline rule: (.+)", reason)):
        return headline, f"No language model is connected, so a rule handled it: {m.group(1)}."
    if stage == "proposed" and (m := re.fullmatch(r"proposal (\d+) with (\d+) item\(s\)", reason)):
        count = int(m.group(2))
        what = "a change" if count == 1 else f"{count} changes"
        return headline, f"Wilson proposed {what} for you to approve (proposal {m.group(1)}); nothing changes before."
    if stage == "replied" and (m := re.fullmatch(r"reply on (\S+)", reason)):
        return headline, f"Wilson wrote an answer {where(m.group(1))}."
    if stage == "presented" and (m := re.fullmatch(r"proposal (\d+) on (\S+)", reason)):
        return headline, f"Proposal {m.group(1)} was put to you {where(m.group(2))}."
    if stage == "delivered" and re.fullmatch(r"outbox \d+", reason):
        return (
            headline,
            f"The message reached you {where(actor)}."
            if actor != "silent"
            else "Nothing was sent: it was kept silent, in the log only.",
        )
    if stage == "expired" and (m := re.fullmatch(r"proposal (\d+) unanswered until (.+?)(, user told)?", reason)):
        told = " You were told." if m.group(3) else ""
        return headline, f"Proposal {m.group(1)} got no answer in time, so nothing of it was done.{told}"
    if stage == "fired" and (m := re.fullmatch(r"schedule (\S+) \(.*?\) for .*", reason)):
        return headline, f"The clock started the {JOBS.get(m.group(1), m.group(1))}."
    if stage == "proposed" and (m := re.fullmatch(r"proposal (\d+): (.+)", reason)):
        return headline, f"Wilson proposed a change (proposal {m.group(1)}), because {m.group(2)}."
    if stage == "watching" and reason.startswith("watching "):
        return headline, f"Wilson started watching {reason[len('watching ') :]}."
    if stage == "changed" and (m := re.fullmatch(r"(\S+): (\d+) new (change|item)s? buffered", reason)):
        what = "a change" if m.group(2) == "1" else f"{m.group(2)} new {m.group(3)}s"
        return headline, f"{m.group(1)} had {what}, kept for Wilson's next look through the news."
    if stage == "dropped":
        return headline, f"Not worth telling you: {reason}."
    if stage == "surfaced":
        return headline, f"Worth telling you: {reason}."
    if m := re.fullmatch(r"proposal (\d+) (approve|reject|modify|confirm|undo|revive) by \S+: (.+)", reason):
        verb = {
            "approve": "approved",
            "confirm": "approved",
            "reject": "turned down",
            "modify": "asked to change",
            "undo": "asked to undo",
            "revive": "brought back",
        }[m.group(2)]
        answer = m.group(3).strip()
        if answer.rstrip(":") == "Done":  # the receipt's first line; what was done follows in the message
            return headline, f"You {verb} proposal {m.group(1)}, and it was done."
        return headline, f"You {verb} proposal {m.group(1)}. Wilson answered: {answer}"
    return headline, _sentence(reason)
