"""Reminders and mail the user acted on or let pass: each is judged once, a day after it reached
the user (HEED_WITHIN), and becomes an episode per task or per sender."""

from __future__ import annotations

from datetime import datetime, timedelta

from actors.hippocampus.common import _iso, _thumb
from storage import engram, hot
from storage.prepared import prepared
from storage.models import Approval, DecisionRow, Feedback, Inbox, Outbox, ReceptorBuffer, Task, Turn
from wilson.kernel.clock import as_utc

HEED_WITHIN = timedelta(days=1)  # a reminder acted on within a day was heeded; judged a day after it went


def _heeded(box: Outbox, task: Task) -> bool:
    """Whether the user acted on a reminder about this task within HEED_WITHIN: did it, dropped or
    snoozed it, or answered the reminder (a ✅, an "on it")."""
    sent = as_utc(box.delivered_at)
    if task.completed_at is not None and sent <= as_utc(task.completed_at) <= sent + HEED_WITHIN:
        return True
    if task.status in ("snoozed", "cancelled"):
        return True
    return (
        Feedback.select()
        .where(
            (Feedback.outbox_id == box.id)
            & Feedback.kind.in_(("reaction", "ack"))
            & (Feedback.at <= sent + HEED_WITHIN)
        )
        .exists()
    )


def _windows_of(box: Outbox) -> set[str]:
    """The deadline windows a delivered follow-up told (a bundle: its members')."""
    keys = [box.idempotency_key]
    members = (box.payload or {}).get("members") or []
    if members:
        keys = [m.idempotency_key for m in Outbox.select(Outbox.idempotency_key).where(Outbox.id.in_(members))]
    runs = [int(k.split(":")[1]) for k in keys if k.startswith("surface:") and k.split(":")[1].isdigit()]
    return {
        str((row.payload or {}).get("window"))
        for row in Inbox.select(Inbox.payload).where(Inbox.id.in_(runs or [0]) & (Inbox.kind == "deadline"))
    }


def _heads_up(box: Outbox) -> bool:
    """Only heads-ups (reminders before the due) count as evidence: they are what thinning leaves out."""
    windows = _windows_of(box)
    return bool(windows) and not windows & {"due", "overdue"}


def _told(s, kinds: tuple[str, ...], *also):
    """Delivered messages whose key starts with one of `kinds`, delivered in [s.since, s.until)."""
    keyed = Outbox.idempotency_key.startswith(kinds[0]) | Outbox.idempotency_key.startswith(kinds[1])
    return (
        Outbox.select()
        .where(
            (Outbox.status == "delivered") & (Outbox.delivered_at >= s.since) & (Outbox.delivered_at < s.until),
            keyed,
            *also,
        )
        .order_by(Outbox.delivered_at, Outbox.id)
    )


# the reads each night repeats, their text built once (storage/prepared.py)
FOLLOWUPS_TOLD = prepared(lambda s: _told(s, ("surface:", "followups:")))
MAILS_TOLD = prepared(lambda s: _told(s, ("surface:", "briefing:"), Outbox.surfaced == True))  # noqa: E712
ANSWERING = (  # the user's words, a decision, a reaction in a window
    prepared(
        lambda s: (
            Turn.select(Turn.id)
            .where((Turn.role == "user") & (Turn.created_at >= s.start) & (Turn.created_at <= s.end))
            .limit(1)
        )
    ),
    prepared(
        lambda s: (
            DecisionRow.select(DecisionRow.id)
            .where((DecisionRow.created_at >= s.start) & (DecisionRow.created_at <= s.end))
            .limit(1)
        )
    ),
    prepared(
        lambda s: (
            Feedback.select(Feedback.id)
            .where((Feedback.at >= s.start) & (Feedback.at <= s.end) & Feedback.kind.in_(("reaction", "ack")))
            .limit(1)
        )
    ),
)
JUDGE_BACK = timedelta(days=200)  # how far back a heads-up may wait for its task's day to be judged
AROUND = timedelta(days=1)  # the user answering other messages this close to a heads-up was there to read it


def _judged_at(box: Outbox, task: Task) -> datetime:
    """When a heads-up about this task can be judged: a day after it went, and not before the task's day has
    passed (whether it was then done on time is what says if the heads-up was needed)."""
    sent = as_utc(box.delivered_at) + HEED_WITHIN
    if task.due is None:
        return sent
    return max(sent, as_utc(task.due) + timedelta(days=1))


def _on_time(task: Task) -> bool:
    return (
        task.status == "done"
        and task.completed_at is not None
        and (task.due is None or as_utc(task.completed_at) < as_utc(task.due) + timedelta(days=1))
    )


def _answering(box: Outbox) -> bool:
    """Whether the user answered other messages around this heads-up: words of theirs, a decision, a
    reaction within AROUND of it. Silence alone says nothing about a reminder (the user may be away)."""
    sent = as_utc(box.delivered_at)
    window = {"start": sent - AROUND, "end": sent + AROUND}
    return any(read.value(**window) is not None for read in ANSWERING)


def _fact(box: Outbox, task: Task) -> dict | None:
    """A heads-up's outcome for one task: acted on (or the task done on time anyway), let pass (done late or
    not at all, while the user answered other messages around it), or None: no evidence either way."""
    if _heeded(box, task) or _on_time(task):
        return {"title": task.title, "heeded": True}
    if _answering(box):
        return {"title": task.title, "heeded": False}
    return None


def followup_episodes(since: datetime, until: datetime, skip: frozenset = frozenset()) -> list[dict]:
    """Heads-ups about tasks, each judged once, when its task's day has passed (and at least a day after it
    went) within [since, until): acted on, or let pass, per task. A heads-up counts as let pass only when its
    task was then done late or not at all AND the user answered other messages around it."""
    found = []
    boxes = [
        box
        for box in FOLLOWUPS_TOLD.models(since=since - JUDGE_BACK, until=until - HEED_WITHIN)
        if f"followup:{box.id}" not in skip
    ]
    # the tasks of all of them in one read: each night looks back JUDGE_BACK over every heads-up, and most are
    # judged on another night (a statement per heads-up made the nightly run cost more the longer Wilson lived)
    told_of = {box.id: [int(t) for t in (box.payload or {}).get("tasks") or [] if str(t).isdigit()] for box in boxes}
    ids = sorted({t for tasks in told_of.values() for t in tasks})
    known = {task.id: task for task in hot.by_ids(Task, ids)}
    for box in boxes:
        # judged on another night (or not yet: its day has not passed)
        judged = [
            known[t] for t in sorted(set(told_of[box.id])) if t in known and since <= _judged_at(box, known[t]) < until
        ]
        if not judged or not _heads_up(box):
            continue
        facts = []
        for task in judged:
            fact = _fact(box, task)
            if fact is not None:
                facts.append(fact)
        if not facts:
            continue
        found.append(
            {
                "id": f"followup:{box.id}",
                "source": "followup",
                "at": _iso(box.delivered_at),
                "provenance": [f"outbox:{box.id}"],
                "facts": facts,
                "text": "A reminder about "
                + ", ".join(f"“{f['title']}” was {'acted on' if f['heeded'] else 'let pass'}" for f in facts),
            }
        )
    return found


MAIL_CHANNELS = ("email",)


def _mail(buffer: dict) -> dict | None:
    """(sender, subject, buffer id) of a buffered item that is a mail with a sender, else None."""
    if not isinstance(buffer, dict) or buffer.get("channel") not in MAIL_CHANNELS:
        return None
    sender = str(buffer.get("from") or "").strip().lower()
    if not sender:
        return None
    return {
        "sender": sender,
        "name": str(buffer.get("from_name") or "").strip(),
        "subject": str(buffer.get("subject") or "").strip(),
        "buffer_id": buffer.get("buffer_id"),
    }


def _briefing_mails(rows: list[Inbox]) -> list[dict]:
    ids = [
        i
        for row in rows
        for item in (row.payload or {}).get("items") or []
        if isinstance(item, dict)
        for i in item.get("buffer_ids") or []
        if isinstance(i, int)
    ]
    found = []
    for buffer in ReceptorBuffer.select().where(ReceptorBuffer.id.in_(ids or [0])).order_by(ReceptorBuffer.id):
        mail = _mail(dict(buffer.payload or {}, channel=buffer.channel, buffer_id=buffer.id))
        if mail is not None:
            found.append(mail)
    return found


def mails_told(box: Outbox) -> tuple[list[dict], list[int]]:
    """The mails a delivered message told the user (surfaced on their own, or in a morning briefing),
    and the inbox rows it spoke for (what a task made from them would cite)."""
    key = box.idempotency_key or ""
    if key.startswith("briefing:"):
        # the day's briefing carries the words of the briefing runs that name it
        opened = as_utc(box.created_at) - timedelta(days=1)
        rows = [
            r
            for r in Inbox.select().where(
                (Inbox.kind == "briefing")
                & (Inbox.created_at >= opened)
                & (Inbox.created_at <= as_utc(box.delivered_at))
            )
            if (r.payload or {}).get("briefing_outbox") == box.id
        ]
        return _briefing_mails(rows), [r.id for r in rows]
    part = key.split(":")[1] if key.startswith("surface:") else ""
    row = Inbox.get_or_none(Inbox.id == int(part)) if part.isdigit() else None
    if row is None:
        return [], []
    if row.kind == "briefing":
        return _briefing_mails([row]), [row.id]
    mails = [m for m in map(_mail, (row.payload or {}).get("buffers") or []) if m is not None]
    return mails, [row.id]


def _mail_heeded(box: Outbox, mail: dict, rows: list[int]) -> bool:
    """Whether the user reacted to a told mail within HEED_WITHIN: a reaction to the message (not a 👎),
    words of theirs naming its sender or subject, or a task made from it."""
    sent = as_utc(box.delivered_at)

    def window(column):
        return (column >= sent) & (column <= sent + HEED_WITHIN)

    for fb in Feedback.select().where(
        (Feedback.outbox_id == box.id) & Feedback.kind.in_(("reaction", "ack")) & window(Feedback.at)
    ):
        if _thumb(fb.value) != "down":
            return True
    names = [mail["sender"]] + [n for n in (mail["name"], mail["subject"]) if len(n) >= 4]
    said = Turn.select(Turn.text).where((Turn.role == "user") & window(Turn.created_at))
    if any(n.lower() in (turn.text or "").lower() for turn in said for n in names):
        return True
    decided = Approval.select().where(
        Approval.inbox_id.in_(rows or [0]) & window(Approval.decided_at) & Approval.status.in_(("approved", "partial"))
    )
    if decided.exists():
        return True
    subject = engram.normalise(mail["subject"])
    return bool(subject) and any(
        subject in engram.normalise(t.title) for t in Task.select(Task.title).where(window(Task.created_at))
    )


def mail_episodes(since: datetime, until: datetime, skip: frozenset = frozenset()) -> list[dict]:
    """Mail told to the user in messages delivered in [since, until) shifted back by HEED_WITHIN (each is
    judged once, a day after it reached the user): reacted to or let pass, per sender."""
    found = []
    for box in MAILS_TOLD.models(since=since - HEED_WITHIN, until=until - HEED_WITHIN):
        if f"mail:{box.id}" in skip:
            continue
        mails, rows = mails_told(box)
        facts = [dict(m, heeded=_mail_heeded(box, m, rows)) for m in mails]
        if not facts:
            continue
        found.append(
            {
                "id": f"mail:{box.id}",
                "source": "mail",
                "at": _iso(box.delivered_at),
                "provenance": [f"outbox:{box.id}"] + [f"buffer:{f['buffer_id']}" for f in facts],
                "facts": facts,
                "text": _episode_text(facts),
            }
        )
    return found


def _episode_text(facts: list[dict]) -> str:
    """One line per sender, subject and outcome: five receipts from one shop are one, with their count."""
    counts: dict[tuple[str, str, bool], int] = {}
    for f in facts:
        key = (f["sender"], f["subject"][:80], f["heeded"])
        counts[key] = counts.get(key, 0) + 1
    return "Mail " + ", ".join(
        f"from {sender} (“{subject}”{f', {n} mails' if n > 1 else ''}) was " + ("reacted to" if heeded else "let pass")
        for (sender, subject, heeded), n in counts.items()
    )
