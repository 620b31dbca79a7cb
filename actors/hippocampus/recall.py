"""Recall for a planner: what Wilson learned that bears on a situation (its text, topic, titles,
kind of event, people and places), the core profile, and how the kinds of proposal it will bring fared."""

from __future__ import annotations

import re
from datetime import datetime

from actors.hippocampus.advice import about_one_sender
from actors.hippocampus.consent import allowed
from actors.hippocampus.episodes import SAID_CHARS, USER_SAID
from actors.hippocampus.outcomes import _rates_line, subject_rates
from actors.hippocampus.rules import _forms_of, subject_of
from storage import engram, reads, recall
from storage.models import Task, Topic

# Kinds of events and what is worth recalling about each: a trip recalls what the user does
# about flights and hotels before the plan is made, not only at the flight reminder.
EVENT_KINDS = (
    (
        "trip",
        ("trip", "travel", "flight", "fly", "holiday", "vacation", "journey", "hotel", "visit", "airport"),
        "trip travel flights hotels packing passport",
    ),
    ("exam", ("exam", "test", "revision", "study", "course", "thesis"), "exam study revision"),
    ("bill", ("bill", "invoice", "rent", "payment", "tax", "subscription"), "bills payment taxes invoice"),
    ("birthday", ("birthday", "anniversary", "party", "wedding"), "birthday gifts party"),
    ("appointment", ("dentist", "doctor", "appointment", "checkup", "clinic"), "appointment dentist doctor"),
    ("documents", ("passport", "visa", "licence", "license", "renew", "renewal"), "documents passport visa renewal"),
)
ADDRESS = re.compile(r"[^\s<>()\[\],;:\"']+@[^\s<>()\[\],;:\"']+")
CONTEXT_MEMORIES = 8
EPISODE_WORDS = 2  # words an episode must share with the stimulus (fewer when the stimulus has fewer)
CHANCE_WORDS = frozenset(
    "about should would could just also some any more very really please thanks thank hi hello like get got".split()
)
PROFILE_SIZE = 3
LEARNED_RECALL = ("principle", "belief", "interpretation")


# Every form of every hint, per kind: built once, since every stimulus asks
KIND_FORMS = tuple((name, frozenset().union(*(_forms_of(h) for h in hints))) for name, hints, _ in EVENT_KINDS)


def event_kinds(*texts: str) -> list[str]:
    """The kinds of event (trip, exam, bill, ...) the texts speak of, in EVENT_KINDS order."""
    words = set(engram.normalise(" ".join(t for t in texts if t)).split())
    return [name for name, forms in KIND_FORMS if not words.isdisjoint(forms)]


def relevant_memories(
    context: dict, now: datetime, *, limit: int = CONTEXT_MEMORIES, weights: recall.Weights | None = None
) -> list[dict]:
    """What Wilson has learned that bears on a situation, for any planner (the cortex's context, the
    offline rules). `context` keys, all optional: text (the stimulus), topic (its title), titles (task or
    event titles), kind (an event kind; found from the texts when absent), people, places, writers (the
    addresses of the mail planned for: memories about other senders' mail are left out).

    Each answer: {"id", "kind", "text", "strength", "why"}, where why says which part of the situation
    recalled it ("text", "topic: …", "kind: trip", "person: …", "profile", "calibration: flights").
    Beliefs and principles about the event's kind come before a plan is made, the core profile is always
    there, and how proposals of the kinds the situation will plan fared closes the list (kind calibration,
    id None)."""
    if not reads.engram_holds_memories():  # a new Wilson: one look, not one per part of the situation
        return calibration_lines(context)
    weights = weights or recall.Weights()
    text = str(context.get("text") or "")
    topic = str(context.get("topic") or "")
    titles = [str(t) for t in context.get("titles") or [] if t]
    kinds = [context["kind"]] if context.get("kind") else event_kinds(text, topic, *titles)
    expansions = {name: words for name, _, words in EVENT_KINDS}
    asks: list[tuple[str, str, tuple[str, ...] | None]] = [("text", ADDRESS.sub(" ", text), None)]
    if topic:
        asks.append((f"topic: {topic}", topic, None))
    asks += [(f"title: {t}", t, LEARNED_RECALL) for t in titles]
    asks += [(f"kind: {k}", expansions.get(k, k), LEARNED_RECALL) for k in kinds]
    # A name is searched; an address is not (nor in the text): the full-text search splits it into words, and
    # its domain's ("example", "gmail", "com") would recall every memory about anyone else at it. An address
    # is matched whole, below.
    asks += [(f"person: {p}", str(p), None) for p in context.get("people") or [] if p and "@" not in str(p)]
    asks += [(f"place: {p}", str(p), None) for p in context.get("places") or [] if p]
    found: dict[int, dict] = {}
    echo = USER_SAID + text.strip()[:SAID_CHARS] if text.strip() else None
    asked = _stems(asks[0][1])
    for why, query, only in asks:
        for memory in recall.recall(query, limit=limit, at=now, kinds=only, weights=weights):
            if memory.kind == "episode" and why != "text":
                continue  # an old episode under a broad word is noise; the stimulus' own words may name one
            if memory.kind == "episode" and memory.text.strip() == echo:
                continue  # the user saying this very thing (now, or before) tells the planner nothing new
            if memory.kind == "episode" and len(asked & _stems(memory.text)) < min(EPISODE_WORDS, len(asked)):
                continue  # one shared word ("tomorrow", "meeting") is chance, not the same matter
            found.setdefault(memory.id, _memory_view(memory, why))
    addresses = [p for p in context.get("people") or [] if "@" in str(p)] + list(context.get("writers") or [])
    for address in dict.fromkeys(str(p).strip().lower() for p in addresses):
        for memory in engram.mentioning_address(
            address, LEARNED_RECALL, limit, at=now
        ):  # a habit with this sender's mail
            found.setdefault(memory.id, _memory_view(memory, f"person: {address}"))
    writers = {str(w).strip().lower() for w in context.get("writers") or []}
    ranked = sorted(found.values(), key=lambda m: (m["kind"] not in ("principle", "belief"), -m["strength"]))
    said: set[str] = set()
    chosen = []
    for memory in ranked:
        if len(chosen) == limit:
            break
        text = " ".join(memory["text"].lower().split())
        if memory["kind"] != "episode" and text in said:
            continue  # a belief and the interpretation it grew from say it once (an episode twice happened twice)
        if writers and about_other_senders(memory["text"], writers):
            continue  # another sender's habit, or how their mail fared, is noise in this mail's run
        said.add(text)
        chosen.append(memory)
    # The core profile is about the user; a habit with one sender's mail comes back when that sender writes
    # (it is recalled by the person), instead of taking a place in every run.
    profile = [m for m in engram.profile(PROFILE_SIZE * 3, at=now) if not about_one_sender(m.text)]
    for memory in profile[:PROFILE_SIZE]:
        text = " ".join(memory.text.lower().split())
        if memory.id not in {m["id"] for m in chosen} and text not in said:
            said.add(text)
            chosen.append(_memory_view(memory, "profile"))
    return chosen + calibration_lines(context)


def about_other_senders(text: str, writers: set[str]) -> bool:
    """Whether a memory is about how the user treats mail from senders other than `writers` (the addresses of
    the mail being planned for): a habit with one sender's mail, or how mail from some senders fared. Recalled by
    a shared word ("urgent", "today", a name inside another address), it would tell the planner about the wrong
    people. One that names no address cannot be told apart, and stays."""
    if not (about_one_sender(text) or text.startswith("Mail from ")):
        return False
    named = {address.lower().rstrip(".") for address in ADDRESS.findall(text)}
    return bool(named) and not named & writers


# What each kind of event usually brings to propose: its calibration is shown when one is planned.
EVENT_SUBJECTS = {
    "trip": ("flights", "hotels", "packing"),
    "bill": ("bills", "taxes"),
    "documents": ("documents",),
    "birthday": ("gifts",),
}


def _stems(text: str) -> set[str]:
    # The search engine stems words; this stems them roughly alike (car/cars, tax/taxes, meeting/meetings), and
    # leaves out words too common to say two texts are about the same thing.
    return {_stem(word) for word in engram.terms(text) if word not in CHANCE_WORDS}


def _stem(word: str) -> str:
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-2] if word.endswith(("ches", "shes", "xes", "sses")) else word[:-1]
    for suffix in ("ing", "ed", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def calibration_lines(context: dict) -> list[dict]:
    """How proposals of the kinds this situation will plan fared, for the planner to weigh."""
    text, topic = str(context.get("text") or ""), str(context.get("topic") or "")
    titles = [str(t) for t in context.get("titles") or [] if t]
    kinds = [context["kind"]] if context.get("kind") else event_kinds(text, topic, *titles)
    names = [n for k in kinds for n in EVENT_SUBJECTS.get(k, ())] + [subject_of(t)[0] for t in titles]
    lines = []
    for name in dict.fromkeys(names):
        rates = subject_rates(name)
        if rates and sum(rates.values()) >= 2:
            lines.append(
                {
                    "id": None,
                    "kind": "calibration",
                    "text": _rates_line(name, rates),
                    "strength": 0.0,
                    "why": f"calibration: {name}",
                }
            )
    return lines


def _memory_view(memory, why: str) -> dict:
    view = {"id": memory.id, "kind": memory.kind, "text": memory.text, "strength": memory.strength, "why": why}
    if not allowed(memory.text):  # it would make Wilson say less: the user has not agreed to that (consent.py)
        view["not_agreed"] = "the user has not agreed to act on this: do not say less or later because of it"
    return view


def situation_of(row, topic_title: str | None = None, task_title: str | None = None) -> dict:
    """The `relevant_memories` context of an inbox row: its text, topic, the titles, places and people in
    its payload (a calendar event's, a deadline's task, a buffered batch's)."""
    payload = row.payload or {}
    parts = [payload] + [b for b in payload.get("buffers") or [] if isinstance(b, dict)]
    titles = [p.get("title") for p in parts if isinstance(p.get("title"), str)]
    if task_title:
        titles.append(task_title)
    places = [p.get("location") for p in parts if isinstance(p.get("location"), str) and p.get("location")]
    people = []
    for part in parts:
        for key in ("attendees", "organizer", "from", "from_name", "sender", "people"):
            value = part.get(key)
            people += [v for v in (value if isinstance(value, list) else [value]) if isinstance(v, str) and v]
    topic = topic_title or (payload.get("topic") if isinstance(payload.get("topic"), str) else None)
    # every mail's sender, however many the batch holds: their habits are theirs (relevant_memories)
    writers = [p["from"] for p in parts if p.get("channel") == "email" and "@" in str(p.get("from") or "")]
    return {
        "text": row.text or "",
        "topic": topic or "",
        "titles": list(dict.fromkeys(titles)),
        "people": people[:5],
        "places": places[:5],
        "writers": list(dict.fromkeys(writers)),
    }


def memories_for(row, now: datetime, config=None) -> list[dict]:
    """The memories the cortex puts in a run's context: `relevant_memories` of the row's situation."""
    payload = row.payload or {}
    topic_title = task_title = None
    if isinstance(payload.get("topic_id"), int):
        topic = Topic.get_or_none(Topic.id == payload["topic_id"])
        topic_title = topic.title if topic is not None else None
    if isinstance(payload.get("task_id"), int):
        task = Task.get_or_none(Task.id == payload["task_id"])
        if task is not None:
            task_title = task.title
            if topic_title is None and task.topic_id:
                topic = Topic.get_or_none(Topic.id == task.topic_id)
                topic_title = topic.title if topic is not None else None
    situation = situation_of(row, topic_title, task_title)
    weights = recall.Weights.from_config(config)
    return [
        {"id": m["id"], "kind": m["kind"], "text": m["text"], "why": m["why"]}
        for m in relevant_memories(situation, now, weights=weights)
    ]
