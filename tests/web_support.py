"""What the dashboard tests share: proposing through the page, a life to show on Today, and committing a look."""

from __future__ import annotations
import httpx
from storage.models import Approval, Inbox
from tests.web_harness import csrf_of


JAPAN = "I'm flying to Japan on 2027-04-10"


def propose(app, client: httpx.Client) -> Approval:
    """The user asks on the Conversation page; a proposal for that message reaches the gate, which
    presents it on the web channel (made here, so the test does not hang on a model's wording)."""
    from actors.proposals.make import propose
    from wilson.kernel.messages import ProposalCreated

    page = client.get("/conversation")
    answer = client.post("/conversation", data={"csrf": csrf_of(page.text), "key": "k1", "text": JAPAN})
    assert answer.status_code == 303
    assert app.wait_idle()
    row = Inbox.get((Inbox.source == "web") & (Inbox.text == JAPAN))
    approval = propose(
        row,
        [
            (
                "create_task",
                {"title": "Book flights to Japan", "due": "2027-03-01"},
                "Create task: Book flights to Japan",
            )
        ],
        "web",
        app.clock.now(),
        app.config,
    )
    app.supervisor.tell("approval", ProposalCreated(approval.id))
    assert app.wait_idle()
    return Approval.get_by_id(approval.id)
