"""The reads a user's run makes on every stimulus, with their SQL built once (storage/hot.py says why).

They return what the cortex's peewee queries returned (model instances, in the same order, under
the same visibility rules: `_whose` for turns, `actors.tools.visible_to` for tasks and topics), and
the open proposals in one query instead of one per proposal.
"""

from __future__ import annotations

from datetime import datetime

from peewee import JOIN, fn

from storage import hot
from storage.prepared import prepared
from storage.models import Approval, Memory, Outbox, Task, Topic, Turn


def _whose(user_id: str | None, owner: str | None) -> tuple[str, list]:
    """Turns of one person's conversation; the owner's also holds the turns written before turns had a user."""
    if user_id is not None:
        sql, params = '"user_id" = ?', [str(user_id)]
    else:
        sql, params = '"user_id" IS NULL', []
    if owner is not None and (user_id is None or str(user_id) == str(owner)):
        sql = f'({sql} OR "user_id" IS NULL)'
    return sql, params


def recent_turns(user_id: str | None, topic_id: int | None, owner: str | None, limit: int) -> list[Turn]:
    """The asking person's newest `limit` turns, oldest first; in a topic's thread, everyone's there too."""
    where, params = _whose(user_id, owner)
    if topic_id is not None:
        where, params = f'({where} OR "topic_id" = ?)', params + [topic_id]
    found = hot.execute(
        ("recent_turns", where),
        lambda: f'SELECT {hot.column_list(Turn)} FROM "turn" WHERE {where} ORDER BY "id" DESC LIMIT ?',
        params + [limit],
    )
    return [hot.known(Turn, r) for r in reversed(found.rows)]  # the same turns, read with every message


def assistant_spoke(user_id: str | None, owner: str | None) -> bool:
    """Whether Wilson ever answered this person (their first contact is over)."""
    where, params = _whose(user_id, owner)
    found = hot.execute(
        ("assistant_spoke", where),
        lambda: f'SELECT 1 FROM "turn" WHERE "role" = \'assistant\' AND {where} LIMIT 1',
        params,
    )
    return bool(found.rows)


def _visible(column: str, user_id: str | None, owner: str | None) -> tuple[str, list]:
    """`actors.tools.visible_to` as SQL: `column` is the topic's id (topics) or the task's topic."""
    if user_id is None or (owner is not None and str(user_id) == str(owner)):
        return "", []
    return (
        f' AND ("owner_id" = ? OR "{column}" IN (SELECT "id" FROM "topic" WHERE "thread_ref" IS NOT NULL))',
        [str(user_id)],
    )


def open_topics(user_id: str | None, owner: str | None) -> list[Topic]:
    """Topics not closed that this person may see, by id."""
    visible, params = _visible("id", user_id, owner)
    found = hot.execute(
        ("open_topics", bool(visible)),
        lambda: f'SELECT {hot.column_list(Topic)} FROM "topic" WHERE "status" != \'closed\'{visible} ORDER BY "id"',
        params,
    )
    return [hot.instance(Topic, r) for r in found.rows]


def open_tasks(user_id: str | None, owner: str | None, limit: int) -> list[Task]:
    """Open tasks this person may see (a snoozed one too: it is paused, not finished, and "I returned the books"
    may be said of it), those due first (soonest first), then the undated, by id."""
    visible, params = _visible("topic_id", user_id, owner)
    found = hot.execute(
        ("open_tasks", bool(visible)),
        lambda: (
            f"SELECT {hot.column_list(Task)} FROM \"task\" WHERE \"status\" IN ('open', 'snoozed'){visible} "
            f'ORDER BY ("due" IS NULL), "due", "id" LIMIT ?'
        ),
        params + [limit],
    )
    return [hot.instance(Task, r) for r in found.rows]


def pending_items(approver: str, now: datetime, limit: int) -> list[tuple[int, list[tuple[int, str]]]]:
    """The approver's newest `limit` open proposals that are not expired, newest first, each with its
    undecided items as (position, description) by position; proposals with none are left out."""
    found = hot.execute(
        "pending_items",
        lambda: (
            'SELECT a."id", i."position", i."description" FROM '
            '(SELECT "id" FROM "approval" WHERE "status" IN (\'pending\', \'partial\') AND "expires_at" > ? '
            'AND "approver" = ? ORDER BY "id" DESC LIMIT ?) AS a '
            'JOIN "approval_item" AS i ON i."approval_id" = a."id" '
            'WHERE i."status" = \'pending\' ORDER BY a."id" DESC, i."position"'
        ),
        [Approval.expires_at.db_value(now), str(approver), limit],
    )
    shown: list[tuple[int, list[tuple[int, str]]]] = []
    for approval_id, position, description in found.rows:
        if not shown or shown[-1][0] != approval_id:
            shown.append((approval_id, []))
        shown[-1][1].append((position, description))
    return shown


def answered_since_shown(approver: str, approval_id: int) -> bool:
    """Whether the approver answered another proposal (approved or rejected it, in whole or in part) after
    this one was last put before them: shown, nudged, or listed as waiting in a morning briefing."""
    approval = hot.by_id(Approval, approval_id)
    if approval is None:
        return False
    briefed = (
        Outbox.select(fn.MAX(Outbox.delivered_at))  # a briefing the user got, when they got it
        .where(
            Outbox.idempotency_key.startswith("briefing:")
            & (Outbox.created_at >= approval.created_at)
            & Outbox.delivered_at.is_null(False)
            & Outbox.text.contains(f"Proposal {approval_id}:")
        )
        .scalar()
    )
    shown = max(m for m in (approval.created_at, approval.presented_at, approval.reminded_at, briefed) if m)
    return ANSWERED_AFTER.value(approver=str(approver), approval=approval_id, shown=shown) is not None


ANSWERED_AFTER = prepared(
    lambda s: (
        Approval.select(Approval.id)
        .where(
            (Approval.approver == s.approver)
            & (Approval.id != s.approval)
            & Approval.status.in_(("approved", "rejected", "partial"))
            # at the same instant (a simulated clock), the newer proposal's answer is the later one
            & ((Approval.decided_at > s.shown) | ((Approval.decided_at == s.shown) & (Approval.id > s.approval)))
        )
        .limit(1)
    )
)


def strongest_memories(kinds: tuple[str, ...], limit: int, at: datetime | None = None) -> list[Memory]:
    """The strongest live memories of these kinds (alive at `at`, when given), as `storage.engram.profile`
    reads its principles and beliefs on every run."""
    alive = '"invalidated_at" IS NULL'
    params: list = list(kinds)
    if at is not None:
        alive = '"created_at" <= ? AND ("invalidated_at" IS NULL OR "invalidated_at" > ?)'
        params += [Memory.created_at.db_value(at), Memory.invalidated_at.db_value(at)]
    found = hot.execute(
        ("strongest_memories", len(kinds), at is not None),
        lambda: (
            f'SELECT {hot.column_list(Memory)} FROM "memory" WHERE "kind" IN ({", ".join("?" for _ in kinds)}) '
            f'AND {alive} ORDER BY "strength" DESC, "id" DESC LIMIT ?'
        ),
        params + [limit],
    )
    return [hot.instance(Memory, r) for r in found.rows]


_engram_held = False  # the engram held a memory once: it is taken to hold some from then on


def engram_holds_memories() -> bool:
    """Whether the engram holds any memory, so that recall has anything to look through.

    An empty engram (a new Wilson, a benchmark) is asked on every call, one cheap statement instead of
    the full-text search and the profile's read; once it held a memory, this process just looks there
    (a pruned-empty engram answers nothing either way)."""
    global _engram_held
    if not _engram_held:
        _engram_held = bool(hot.execute("engram_holds", lambda: 'SELECT 1 FROM "memory" LIMIT 1').rows)
    return _engram_held


# each morning's briefing lists every open task with a due, with its topic
DATED = prepared(
    lambda s: (
        Task.select(Task, Topic)
        .join(Topic, JOIN.LEFT_OUTER, on=(Task.topic == Topic.id))
        .where((Task.status == "open") & Task.due.is_null(False))
        .order_by(Task.due, Task.id)
    )
)


def open_dated_tasks() -> list[Task]:
    """Open tasks with a due, soonest first, each with its topic read in the same statement."""
    width = len(hot.columns(Task))
    found = []
    for row in DATED.rows():
        task = hot.instance(Task, row[:width])
        if task.topic_id is not None:
            task.__rel__["topic"] = hot.instance(Topic, row[width:])  # where peewee keeps a joined row
        found.append(task)
    return found
