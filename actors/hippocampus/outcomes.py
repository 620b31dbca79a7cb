"""Calibration: how proposals fared and how surfaced messages landed, overall and per kind of
task, saved nightly in the `calibration` setting for the planner to weigh."""

from __future__ import annotations

from datetime import datetime

from peewee import fn

from actors.hippocampus.common import _iso, _thumb
from actors.hippocampus.episodes import approval_episodes
from actors.hippocampus.rules import SUBJECTS, subject_of
from storage import kv
from storage.models import Feedback, Outbox
from storage.prepared import prepared
from wilson.kernel.clock import UTC

CALIBRATION_KEY = "calibration"
CALIBRATION_DAYS = 30
SUBJECT_DAYS = 365  # a season's trips apart: how each kind of proposal fared is read over a year
SUBJECTS_KEPT = 100
FAR_FUTURE = datetime(9999, 1, 1, tzinfo=UTC)


# read every night: the texts built once
SURFACED = prepared(
    lambda s: Outbox.select(fn.COUNT(Outbox.id)).where(
        (Outbox.surfaced == True) & (Outbox.created_at >= s.since) & (Outbox.created_at < s.until)
    )
)
REACTIONS = prepared(
    lambda s: Feedback.select(Feedback.value).where(
        (Feedback.kind == "reaction") & (Feedback.at >= s.since) & (Feedback.at < s.until)
    )
)


def calibration(since: datetime, until: datetime | None = None) -> dict:
    """Outcome figures for [since, until): how proposals fared and how surfaced messages landed."""
    until = until or FAR_FUTURE
    proposals = {"approved": 0, "rejected": 0, "modified": 0, "ignored": 0, "partial": 0}
    for episode in approval_episodes(since, until):
        proposals[episode["outcome"]] = proposals.get(episode["outcome"], 0) + 1
    answered = proposals["approved"] + proposals["rejected"] + proposals["modified"] + proposals["partial"]
    total = answered + proposals["ignored"]
    surfaced = SURFACED.value(since=since, until=until)
    reactions = {"up": 0, "down": 0, "other": 0}
    for (value,) in REACTIONS.rows(since=since, until=until):
        reactions[_thumb(value) or "other"] += 1
    rated = reactions["up"] + reactions["down"]
    return {
        "since": _iso(since),
        "until": _iso(until) if until < FAR_FUTURE else None,
        "proposals": proposals,
        "approval_rate": round(proposals["approved"] / total, 3) if total else None,
        "answer_rate": round(answered / total, 3) if total else None,
        "surfaced": surfaced,
        "reactions": reactions,
        "thumbs_up_rate": round(reactions["up"] / rated, 3) if rated else None,
    }


def subject_outcomes(since: datetime, until: datetime) -> dict:
    """How proposals of each kind of task fared in [since, until): {subject: {outcome: count}}, the
    subject as `subject_of` names it (flights, packing, ..., or title:<title>)."""
    found: dict[str, dict] = {}
    for episode in approval_episodes(since, until):
        for fact in episode["items"]:
            if not fact.get("title") or fact["outcome"] in ("modified", "removed"):
                continue  # a modification is counted when its replacement is decided
            counts = found.setdefault(subject_of(fact["title"])[0], {"approved": 0, "rejected": 0, "ignored": 0})
            if fact["outcome"] in counts:
                counts[fact["outcome"]] += 1
    busiest = sorted(found.items(), key=lambda kv: -sum(kv[1].values()))[:SUBJECTS_KEPT]
    return dict(busiest)


def subject_rates(name: str) -> dict | None:
    """The saved outcome counts of one subject, or None when there are none."""
    saved = kv.get_setting(CALIBRATION_KEY)
    subjects = saved.get("subjects") if isinstance(saved, dict) else None
    counts = (subjects or {}).get(name)
    return counts if isinstance(counts, dict) and sum(counts.values()) else None


def _save_calibration(figures: dict) -> None:
    kv.put_setting(CALIBRATION_KEY, figures)


def _rates_line(name: str, rates: dict) -> str:
    noun = next((n for s, _, _, n in SUBJECTS if s == name), name.removeprefix("title:"))
    total = sum(rates.values())
    return (
        f"proposals of {noun}: {rates.get('approved', 0)} approved, {rates.get('rejected', 0)} turned down, "
        f"{rates.get('ignored', 0)} unanswered of {total}"
    )
