"""Where a message goes: its own chat, the chat it answers, its topic's forum thread, where a proposal
was asked for, else the owner's chat (a mixin of TelegramChannel)."""

from __future__ import annotations

from actors.proposals.rules import undoes
from channels.telegram.access import owner_id
from channels.telegram.state import NoRecipient
from storage import decision_chats
from storage.models import Approval, Inbox, Outbox, Topic


class Placement:
    def _route(self, row: Outbox) -> tuple[int, int | None]:
        """Where a row goes: its own chat, the chat it answers, its topic's thread, else the owner's chat."""
        payload = row.payload or {}
        if payload.get("chat_id"):
            return int(payload["chat_id"]), payload.get("thread_id")
        reply = payload.get("reply_to")
        if isinstance(reply, dict) and reply.get("chat_id"):
            return int(reply["chat_id"]), reply.get("thread_id")
        forum = self.forum_chat
        if forum is not None and payload.get("topic_id"):
            topic = Topic.get_or_none(Topic.id == payload["topic_id"])
            if topic is not None and topic.thread_ref and topic.status != "closed":
                return forum, int(topic.thread_ref)
        if payload.get("approval"):  # a proposal goes where the user asked for it, or to its topic's thread
            where = self._proposal_place(payload["approval"].get("id"))
            if where:
                return where
        decision = payload.get("decision")
        if isinstance(decision, dict):  # the gate's answer goes where the button was pressed
            named = (
                f"command:{decision.get('id')}" if decision.get("action") == "do" else str(decision.get("approval_id"))
            )
            where = decision_chats.place(named)
            if where:
                return int(where["chat_id"]), where.get("thread_id")
        owner = owner_id(self.config)
        if owner is None:
            raise NoRecipient("nobody to send to: set telegram.allowed_users or pair with `wilson pair`")
        return int(owner), None

    def _proposal_place(self, approval_id) -> tuple[int, int | None] | None:
        """Where a proposal belongs: the chat it was asked for in; for a replacement, where the change
        was asked for (else where the original was shown); else the thread of the topic it is about."""
        approval = Approval.get_or_none(Approval.id == approval_id)
        if approval is None:
            return None
        row = Inbox.get_or_none(Inbox.id == approval.inbox_id) if approval.inbox_id else None
        payload = (row.payload or {}) if row is not None else {}
        if row is not None and row.source == self.name and payload.get("chat_id"):
            return int(payload["chat_id"]), payload.get("thread_id")
        if undoes(approval):  # an undo goes where it was asked for
            where = decision_chats.place(str(undoes(approval)))
            if where:
                return int(where["chat_id"]), where.get("thread_id")
        if approval.supersedes:
            where = decision_chats.place(str(approval.supersedes))
            if where:
                return int(where["chat_id"]), where.get("thread_id")
            original = self._proposal_place(approval.supersedes)
            if original:
                return original
        forum = self.forum_chat
        topic_id = approval.topic_id or payload.get("topic_id")
        if forum is not None and topic_id:
            topic = Topic.get_or_none(Topic.id == topic_id)
            if topic is not None and topic.thread_ref and topic.status != "closed":
                return forum, int(topic.thread_ref)
        return None
