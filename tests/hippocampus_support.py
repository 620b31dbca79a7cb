"""What the memory tests share: a synapse that answers the nightly run from a script, and moments and rows of a few nights."""

from __future__ import annotations
import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from storage import engram
from storage.models import Approval, ApprovalItem, Memory, Task


UTC = timezone.utc


LATE = "user books flights late"


def at(day: str, hour: int = 12) -> datetime:
    return datetime.fromisoformat(day).replace(hour=hour, tzinfo=UTC)


def night(day: str) -> datetime:
    return at(day, 3)


@dataclass
class Call:
    name: str
    arguments: object
    id: str = "call-1"


@dataclass
class Reply:
    text: str = ""
    tool_calls: list = field(default_factory=list)


class FakeSynapse:
    """Answers like the offline provider: the candidates come back as record_memories items."""

    def __init__(self, extra_items=(), arguments=None, error: Exception | None = None):
        self.calls: list[dict] = []
        self.extra_items = list(extra_items)
        self.arguments = arguments
        self.error = error

    def chat(self, role, messages, tools=None, origin="user", **sizing):
        self.calls.append({"role": role, "messages": messages, "tools": tools, "origin": origin, **sizing})
        if self.error is not None:
            raise self.error
        if self.arguments is not None:
            return Reply(tool_calls=[Call("record_memories", self.arguments)])
        request = json.loads(messages[-1]["content"])
        items = [{"kind": c["kind"], "text": c["text"], "provenance": c["provenance"]} for c in request["candidates"]]
        return Reply(text="", tool_calls=[Call("record_memories", {"items": items + self.extra_items})])


def proposal(
    title: str,
    due: str,
    *,
    decided: datetime | None,
    status: str,
    item_status: str,
    created: datetime | None = None,
    tool: str = "create_task",
    expires: datetime | None = None,
) -> Approval:
    created = created or (decided or at("2027-01-01")) - timedelta(hours=1)
    approval = Approval.create(
        trace_id="tr",
        status=status,
        approver="owner",
        channel="repl",
        nonce="n",
        created_at=created,
        expires_at=expires or created + timedelta(hours=72),
        decided_at=decided,
    )
    ApprovalItem.create(
        approval=approval,
        position=1,
        tool=tool,
        args={"title": title, "due": due},
        description=f"New task: {title} — due {due}",
        status=item_status,
    )
    return approval


def done_task(title: str, due: str, completed: datetime) -> Task:
    return Task.create(
        title=title,
        due=datetime.fromisoformat(due).replace(tzinfo=UTC),
        due_is_date=True,
        status="done",
        completed_at=completed,
        created_at=completed - timedelta(days=60),
    )


def live(kind: str, text: str) -> Memory | None:
    return engram.find(kind, text)
