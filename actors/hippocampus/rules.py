"""Interpreting by plain rules: the patterns episodes show (late, early, turned down, unanswered,
let pass), the candidate interpretations they make, and the counter-evidence that refutes them."""

from __future__ import annotations

from storage import engram

# Subjects worth naming in a habit; anything else is spoken of by its title.
# (name, words in a title, habit phrase, noun phrase)
SUBJECTS = (
    ("packing", ("pack", "packing", "luggage", "suitcase"), "packs", "packing lists"),
    ("flights", ("flight", "fly", "plane", "airline", "airfare"), "books flights", "flight booking"),
    ("hotels", ("hotel", "accommodation", "airbnb", "hostel"), "books hotels", "hotel booking"),
    ("taxes", ("tax",), "does taxes", "tax filing"),
    ("bills", ("bill", "invoice", "rent"), "pays bills", "bill payment"),
    ("documents", ("passport", "visa", "licence", "license", "renew"), "renews documents", "document renewal"),
    ("gifts", ("gift",), "buys gifts", "gift shopping"),
)


def _forms_of(word: str) -> set[str]:
    # Plural and -ing forms of a hint; matching whole words keeps "taxi" out of taxes.
    return {word, word + "s", word + "es", word + "ing", word + "ed"}


def subject_of(title: str) -> tuple[str, str, str]:
    """(subject name, habit phrase, noun phrase) for a task title."""
    words = set(engram.normalise(title).split())
    for name, hints, habit, noun in SUBJECTS:
        if any(words & _forms_of(h) for h in hints):
            return name, habit, noun
    quoted = f"tasks like '{title.strip()}'"
    return f"title:{engram.normalise(title)}", f"does {quoted}", quoted


def _late(title: str) -> dict:
    name, habit, noun = subject_of(title)
    return {"pattern": f"late:{name}", "text": f"user {habit} late", "principle": f"Propose {noun} earlier than usual"}


def _early(title: str) -> dict:
    name, habit, _ = subject_of(title)
    return {"pattern": f"early:{name}", "text": f"user {habit} early", "principle": None}


def _unwanted(title: str) -> dict:
    """A kind of proposal the user turned down: a known subject (every trip's packing list), else the title."""
    name, _, noun = subject_of(title)
    if not name.startswith("title:"):
        return {
            "pattern": f"rejected:{name}",
            "text": f"user does not want {noun} proposed",
            "principle": f"Do not propose {noun}",
            "noun": noun,
        }
    title = title.strip()
    return {
        "pattern": f"rejected:{engram.normalise(title)}",
        "text": f"user does not want tasks like '{title}'",
        "principle": f"Do not propose tasks like '{title}'",
        "noun": f"tasks like '{title}'",
    }


def _unanswered(title: str) -> dict:
    name, _, noun = subject_of(title)
    about = noun if not name.startswith("title:") else f"'{title.strip()}'"
    return {
        "pattern": f"ignored:{name}",
        "text": f"proposals about {about} go unanswered",
        "principle": f"Ask about {about} differently: proposals about it go unanswered",
    }


def _unheeded(title: str) -> dict:
    name, _, noun = subject_of(title)
    about = noun if not name.startswith("title:") else f"'{title.strip()}'"
    return {
        "pattern": f"unheeded:{name}",
        "text": f"user lets early reminders about {about} pass",
        "principle": f"Remind about {about} only when it is due",
    }


UNHEEDED_ABOUT = "user lets early reminders about "  # how every _unheeded text begins


def _unheeded_any() -> dict:
    """Early reminders let pass about several kinds of task: a habit of the user's, not of one kind."""
    return {
        "pattern": "unheeded:any",
        "text": "user lets early reminders pass, whatever they are about",
        "principle": "Remind about tasks only when they are due",
    }


def _let_pass(sender: str) -> dict:
    sender = sender.strip().lower()
    return {
        "pattern": f"mail:{sender}",
        "text": f"user ignores mail from {sender}",
        "principle": f"Keep mail from {sender} for the morning briefing",
    }


def _forms(pattern: dict) -> list[str]:
    """Every text under which a pattern may live in the engram, at any rung."""
    forms = [pattern["text"], fallback_principle(pattern["text"])]
    if pattern.get("principle"):
        forms.append(pattern["principle"])
    return forms


def fallback_principle(belief: str) -> str:
    return f"Keep in mind: {belief}"


def _observations(episodes: list[dict]) -> list[tuple[dict, list[str], dict | None]]:
    """(pattern observed, provenance, opposite pattern it contradicts) for every episode fact."""
    seen = []
    for ep in episodes:
        if ep.get("source") == "approval":
            for fact in ep.get("items", []):
                title = fact.get("title") or ""
                if not title:
                    continue
                outcome = fact["outcome"]
                moved = fact.get("moved_days")  # set only on an approved item whose due the user moved
                if outcome == "approved" and moved:
                    pair = (_late(title), _early(title)) if moved > 0 else (_early(title), _late(title))
                    seen.append((pair[0], ep["provenance"], pair[1]))
                elif outcome == "rejected":
                    seen.append((_unwanted(title), ep["provenance"], None))
                elif outcome == "ignored":
                    seen.append((_unanswered(title), ep["provenance"], None))
        elif ep.get("source") == "followup":
            for fact in ep["facts"]:
                if not fact["heeded"]:
                    seen.append((_unheeded(fact["title"]), ep["provenance"], None))
        elif ep.get("source") == "mail":
            for sender in dict.fromkeys(f["sender"] for f in ep["facts"] if not f["heeded"]):
                seen.append((_let_pass(sender), _sender_provenance(ep, sender, heeded=False), None))
        elif ep.get("source") == "task" and ep.get("timing") in ("late", "early"):
            title = ep.get("title") or ""
            if ep["timing"] == "late":
                seen.append((_late(title), ep["provenance"], _early(title)))
            else:
                seen.append((_early(title), ep["provenance"], _late(title)))
    return seen


def _sender_provenance(ep: dict, sender: str, heeded: bool) -> list[str]:
    """A mail episode's evidence about one sender: the message that told it, and that sender's mails the user
    let pass (or, with `heeded`, reacted to) only: a briefing tells many senders' mail, and what the user made
    of one mail says nothing of the others."""
    return [p for p in ep["provenance"] if not p.startswith("buffer:")] + [
        f"buffer:{f['buffer_id']}" for f in ep["facts"] if f["sender"] == sender and f["heeded"] == heeded
    ]


def interpret(episodes: list[dict]) -> list[dict]:
    """Rule-based candidate interpretations, one per pattern per night, with provenance.

    Each candidate: kind, text, provenance, pattern, principle (what it becomes
    once believed strongly, or None) and contradicts (texts it makes untrue).
    """
    by_text: dict[str, dict] = {}
    for pattern, provenance, opposite in _observations(episodes):
        key = engram.make_key(pattern["text"])
        candidate = by_text.get(key)
        if candidate is None:
            candidate = by_text[key] = {
                "kind": "interpretation",
                "text": pattern["text"],
                "provenance": [],
                "pattern": pattern["pattern"],
                "principle": pattern["principle"],
                "contradicts": _forms(opposite) if opposite else [],
            }
        candidate["provenance"] += [p for p in provenance if p not in candidate["provenance"]]
    return list(by_text.values())


def counter_evidence(episodes: list[dict]) -> list[dict]:
    """Facts that only refute: accepting a kind of task refutes 'does not want it', and
    answering a proposal in any way refutes 'proposals about it go unanswered'."""
    found = []
    for ep in episodes:
        if ep.get("source") == "followup":
            found += [
                {
                    "contradicts": _forms(_unheeded(f["title"])) + _forms(_unheeded_any()),
                    "provenance": ep["provenance"],
                    "because": f"{ep['id']}: a reminder about {f['title']} acted on",
                }
                for f in ep["facts"]
                if f["heeded"]
            ]
            continue
        if ep.get("source") == "mail":
            found += [
                {
                    "contradicts": _forms(_let_pass(sender)),
                    "provenance": _sender_provenance(ep, sender, heeded=True),
                    "because": f"{ep['id']}: mail from {sender} reacted to",
                }
                for sender in dict.fromkeys(f["sender"] for f in ep["facts"] if f["heeded"])
            ]
            continue
        if ep.get("source") != "approval":
            continue
        for fact in ep.get("items", []):
            title = fact.get("title") or ""
            if not title or fact["outcome"] == "ignored":
                continue
            texts = _forms(_unanswered(title))
            if fact["outcome"] == "approved":
                texts += _forms(_unwanted(title))
            found.append(
                {
                    "contradicts": texts,
                    "provenance": ep["provenance"],
                    "because": f"{ep['id']}: {title} {fact['outcome']}",
                }
            )
    return found
