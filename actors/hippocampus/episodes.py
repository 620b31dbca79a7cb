"""Reading the day: what happened in a window (proposals decided or let expire, tasks done,
reactions, the user's words, and the reminders and mail of `heeded`), each as an episode with an
id and provenance. The rest of the hippocampus learns only from these."""

from __future__ import annotations

from datetime import datetime, timedelta

from actors.hippocampus.common import _day, _iso, _parse_due, _thumb
from actors.hippocampus.heeded import followup_episodes, mail_episodes
from actors.proposals.rules import OPEN, items_of
from storage import engram, hot
from storage.prepared import prepared
from storage.models import Approval, ApprovalItem, Feedback, Outbox, Task, Turn
from wilson.kernel.clock import as_utc

USER_SAID, SAID_CHARS = "The user said: ", 280  # an episode of the user's words quotes this much of their turn

# Approval (and item) statuses as the outcomes calibration speaks of.
OUTCOMES = {
    "approved": "approved",
    "executed": "approved",
    "failed": "approved",
    "calling": "approved",
    "unknown": "approved",
    "rejected": "rejected",
    "superseded": "modified",
    "expired": "ignored",
    "partial": "partial",
}
EARLY_DAYS = 3  # finishing this far ahead of the due counts as early, not merely on time


# the reads each night repeats, their text built once (storage/prepared.py)
def _decided_or_ignored(s):
    decided = (
        (Approval.decided_at >= s.since)
        & (Approval.decided_at < s.until)
        & Approval.status.in_(("approved", "rejected", "superseded", "partial"))
    )
    # An ignored proposal is dated by its expiry, whoever later notices it, so it is seen once.
    ignored = (
        (Approval.expires_at >= s.since) & (Approval.expires_at < s.until) & Approval.status.in_(("expired", *OPEN))
    )
    return Approval.select().where(decided | ignored).order_by(Approval.id)


DECIDED_OR_IGNORED = prepared(_decided_or_ignored)
DONE_TASKS = prepared(
    lambda s: (
        Task.select()
        .where((Task.completed_at >= s.since) & (Task.completed_at < s.until))
        .order_by(Task.completed_at, Task.id)
    )
)
REACTIONS = prepared(
    lambda s: (
        Feedback.select()
        .where((Feedback.kind == "reaction") & (Feedback.at >= s.since) & (Feedback.at < s.until))
        .order_by(Feedback.at, Feedback.id)
    )
)
USER_TURNS = prepared(
    lambda s: (
        Turn.select()
        .where((Turn.role == "user") & (Turn.created_at >= s.since) & (Turn.created_at < s.until))
        .order_by(Turn.created_at, Turn.id)
    )
)


def _item_title(item: ApprovalItem) -> str:
    args = item.args or {}
    if args.get("title"):
        return str(args["title"])
    if args.get("task_id") is not None:
        task = hot.by_id(Task, args.get("task_id"))
        if task is not None:
            return task.title
    if args.get("subject"):
        return str(args["subject"])
    return item.description


def _successor_item(item: ApprovalItem, title: str, successors: list[ApprovalItem]) -> ApprovalItem | None:
    """The item of the modified proposal that carries `item` on: the same tool and title, nothing looser.

    An item the user removed has no successor; pairing it with whatever sat in its place once
    recorded a due move for a task that never existed."""
    key = engram.normalise(title)
    for other in successors:
        if other.tool == item.tool and engram.normalise(_item_title(other)) == key:
            return other
    return None


def _first_due(approval: Approval, item: ApprovalItem, title: str) -> tuple[datetime | None, list[str]]:
    """The due `item` had when first proposed, following the modifications back; with the proposals passed."""
    due, chain, seen = _parse_due((item.args or {}).get("due")), [], {approval.id}
    current = approval
    while current.supersedes and current.supersedes not in seen:
        earlier = hot.by_id(Approval, current.supersedes)
        if earlier is None:
            break
        seen.add(earlier.id)
        match = _successor_item(item, title, items_of(earlier.id))
        if match is None:
            break  # the item was added in a modification: it has no earlier due
        chain.insert(0, f"approval:{earlier.id}")
        due = _parse_due((match.args or {}).get("due")) or due
        current = earlier
    return due, chain


def _approval_episode(approval: Approval, since: datetime, until: datetime) -> dict | None:
    items = items_of(approval.id)
    expired = approval.status == "expired" or (
        approval.status in OPEN and approval.expires_at is not None and approval.expires_at < until
    )
    # A partly decided proposal that expires later: its decided items were an earlier night's episode.
    decided_now = approval.decided_at is not None and since <= approval.decided_at < until
    successors: list[ApprovalItem] = []
    successor_id = approval.superseded_by if approval.status == "superseded" else None
    if successor_id:
        successors = items_of(successor_id)
    provenance = [f"approval:{approval.id}"] + ([f"approval:{successor_id}"] if successor_id else [])
    facts, lines = [], []
    for item in items:
        if (
            approval.status == "superseded"
            and item.status in ("superseded", "pending")
            and not _successor_item(item, _item_title(item), successors)
        ):
            continue  # removed in the modification: nothing happened to it worth remembering
        if approval.status == "superseded" and item.status in ("superseded", "pending"):
            outcome = "modified"  # only the items still open when the user asked for a change were modified
        elif approval.status == "superseded":
            outcome = OUTCOMES.get(item.status, item.status)
        elif item.status == "pending":
            if not expired:
                continue  # still undecided: a later night will see it
            outcome = "ignored"
        elif approval.status == "expired" or not decided_now:
            continue
        else:
            outcome = OUTCOMES.get(item.status, item.status)
        title = _item_title(item)
        due = _parse_due((item.args or {}).get("due"))
        fact = {"position": item.position, "tool": item.tool, "title": title, "due": _day(due), "outcome": outcome}
        line = f"“{item.description}” {outcome}"
        if outcome == "approved" and approval.supersedes:
            # what the user changed counts once they approved it: a modification they then dropped taught nothing
            first, chain = _first_due(approval, item, title)
            if first is not None and due is not None and first.date() != due.date():
                days = (due.date() - first.date()).days
                fact.update(first_due=_day(first), moved_days=days)
                line += (
                    f" after the user moved its due from {_day(first)} to {_day(due)} "
                    f"({abs(days)} days {'later' if days > 0 else 'earlier'})"
                )
            provenance = list(dict.fromkeys(chain + provenance))
        if outcome == "modified":
            other = _successor_item(item, title, successors)
            new_due = _parse_due((other.args or {}).get("due")) if other is not None else None
            if other is not None and due is not None and new_due is not None and new_due.date() != due.date():
                days = (new_due.date() - due.date()).days
                fact.update(new_due=_day(new_due), asked_days=days)
                line += (
                    f": due moved from {_day(due)} to {_day(new_due)} "
                    f"({abs(days)} days {'later' if days > 0 else 'earlier'}) in proposal {successor_id}"
                )
            elif other is not None:
                line += f" into proposal {successor_id}"
        facts.append(fact)
        lines.append(line)
    if not facts:
        return None
    outcome = OUTCOMES.get(approval.status, approval.status)
    if expired and approval.status != "superseded":
        outcome = "ignored" if all(f["outcome"] == "ignored" for f in facts) else "partial"
    at = approval.decided_at if approval.decided_at and not expired else approval.expires_at
    return {
        "id": f"approval:{approval.id}",
        "source": "approval",
        "at": _iso(at),
        "outcome": outcome,
        "items": facts,
        "provenance": provenance,
        "text": f"Proposal {approval.id} was {outcome}: " + "; ".join(lines),
    }


def _task_timing(task: Task) -> tuple[str, int]:
    """('late' | 'early' | 'on time', whole days off the due)."""
    due, done = as_utc(task.due), as_utc(task.completed_at)
    if task.due_is_date:  # a date-only due lasts all day: late means a later day
        if done >= due + timedelta(days=1):
            return "late", (done - due).days
        ahead = (due - done).days + 1 if done < due else 0
    else:
        if done > due:
            return "late", (done - due).days
        ahead = (due - done).days
    return ("early", ahead) if ahead >= EARLY_DAYS else ("on time", 0)


def approval_episodes(since: datetime, until: datetime, skip: frozenset = frozenset()) -> list[dict]:
    """Proposals decided in [since, until), and those that expired unanswered in it (but not the
    episode ids in `skip`)."""
    episodes = []
    for approval in DECIDED_OR_IGNORED.models(since=since, until=until):
        if f"approval:{approval.id}" in skip:
            continue
        episode = _approval_episode(approval, since, until)
        if episode:
            episodes.append(episode)
    return episodes


def collect_episodes(since: datetime, until: datetime, skip: frozenset = frozenset()) -> list[dict]:
    """What happened in [since, until): decided or ignored proposals, completed tasks,
    reactions and the user's words, each as an episode dict with an id and provenance.
    Episode ids in `skip` (already read) are left out."""
    episodes = approval_episodes(since, until, skip)
    for task in DONE_TASKS.models(since=since, until=until):
        if f"task:{task.id}" in skip:
            continue
        episode = {
            "id": f"task:{task.id}",
            "source": "task",
            "at": _iso(task.completed_at),
            "title": task.title,
            "due": _day(task.due),
            "provenance": [f"task:{task.id}"],
        }
        if task.due is None:
            episode.update(timing=None, text=f"Task {task.id} “{task.title}” was done (no due date)")
        else:
            timing, days = _task_timing(task)
            episode.update(timing=timing, days=days)
            off = f", {days} days {'after' if timing == 'late' else 'before'} its due" if days else ""
            episode["text"] = f"Task {task.id} “{task.title}” (due {_day(task.due)}) was done {timing}{off}"
        episodes.append(episode)

    for fb in REACTIONS.models(since=since, until=until):
        if f"feedback:{fb.id}" in skip:
            continue
        said = hot.by_id(Outbox, fb.outbox_id) if fb.outbox_id else None
        about = f" to “{said.text[:120]}”" if said is not None else ""
        provenance = [f"feedback:{fb.id}"] + ([f"outbox:{fb.outbox_id}"] if fb.outbox_id else [])
        episodes.append(
            {
                "id": f"feedback:{fb.id}",
                "source": "feedback",
                "at": _iso(fb.at),
                "value": fb.value,
                "sentiment": _thumb(fb.value),
                "outbox_id": fb.outbox_id,
                "provenance": provenance,
                "text": f"The user reacted {fb.value}{about}",
            }
        )

    episodes += followup_episodes(since, until, skip)
    episodes += mail_episodes(since, until, skip)

    for turn in USER_TURNS.models(since=since, until=until):
        if f"turn:{turn.id}" in skip:
            continue
        episodes.append(
            {
                "id": f"turn:{turn.id}",
                "source": "turn",
                "at": _iso(turn.created_at),
                "provenance": [f"turn:{turn.id}"],
                "text": USER_SAID + turn.text[:SAID_CHARS],
            }
        )
    return episodes
