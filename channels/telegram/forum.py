"""Settled proposals and the forum: the proposal's message shows its outcome, the briefing keeps
buttons only for what still waits, and topics are mirrored to forum threads (a mixin of TelegramChannel)."""

from __future__ import annotations

from loguru import logger
from telegram.error import BadRequest, TelegramError

from channels.telegram.state import RENAMED
from channels.telegram.text import briefing_keyboard, describe, settled_text
from storage import marks
from storage.models import Approval, ApprovalItem, Outbox, Topic
from wilson.kernel import faults


class Forum:
    async def _settle(self, approval_id: int) -> None:
        """Show the outcome in the proposal's own message; mirror new and closed topics to the forum."""
        async with self._send_lock:  # after the proposal itself was delivered
            approval = Approval.get_or_none(Approval.id == approval_id)
            if approval is None:
                return
            if self.forum_chat is not None:
                await self._mirror_topics(approval)
            await self._redraw_briefing(approval_id)
            ref = approval.message_ref
            if not ref:
                logger.info("proposal {} settled but its message is unknown; nothing to edit", approval_id)
                return
            try:
                await self._call(
                    "editMessageText",
                    lambda: self.bot.edit_message_text(
                        text=settled_text(approval),
                        chat_id=ref["chat_id"],
                        message_id=ref["message_id"],
                        reply_markup=None,
                    ),
                )
            except BadRequest as exc:  # not modified (settled twice) or deleted by the user
                logger.info("proposal {} message not edited: {}", approval_id, describe(exc))

    async def _redraw_briefing(self, approval_id: int) -> None:
        """The latest briefings that offered this proposal keep buttons only for what is still waiting."""
        rows = (
            Outbox.select()
            .where(
                (Outbox.channel == self.name)
                & Outbox.idempotency_key.startswith("briefing:")
                & (Outbox.status == "delivered")
            )
            .order_by(Outbox.id.desc())
            .limit(3)
        )
        for row in rows:
            ids, result = (row.payload or {}).get("proposals") or [], row.result or {}
            if approval_id not in ids or not result.get("message_ids") or not result.get("chat_id"):
                continue
            try:
                await self._call(
                    "editMessageReplyMarkup",
                    lambda result=result, ids=ids: self.bot.edit_message_reply_markup(
                        chat_id=result["chat_id"],
                        message_id=result["message_ids"][-1],
                        reply_markup=briefing_keyboard(self._waiting(ids)),
                    ),
                )
            except (TelegramError, TimeoutError) as exc:  # not modified, or deleted: its buttons answer anyway
                logger.info("briefing {} buttons not redrawn: {}", row.id, describe(exc))

    async def _mirror_topics(self, approval: Approval) -> None:
        items = approval.items.where(ApprovalItem.status == "executed").order_by(ApprovalItem.position)
        for item in items:
            topic_id = (item.result or {}).get("topic_id")
            topic = Topic.get_or_none(Topic.id == topic_id) if topic_id else None
            if topic is None:
                continue
            try:
                if item.tool == "create_topic" and not topic.thread_ref:
                    forum_topic = await self._call(
                        "createForumTopic",
                        lambda topic=topic: self.bot.create_forum_topic(
                            chat_id=self.forum_chat, name=topic.title[:128]
                        ),
                    )
                    Topic.update(thread_ref=str(forum_topic.message_thread_id)).where(Topic.id == topic.id).execute()
                    logger.info("topic {} mirrored to forum thread {}", topic.id, forum_topic.message_thread_id)
                elif item.tool == "rename_topic" and topic.thread_ref:
                    await self._rename_thread(item, topic)
                elif item.tool == "close_topic" and topic.thread_ref:
                    await self._call(
                        "closeForumTopic",
                        lambda topic=topic: self.bot.close_forum_topic(
                            chat_id=self.forum_chat, message_thread_id=int(topic.thread_ref)
                        ),
                    )
                elif item.tool == "restore_topic" and topic.thread_ref:  # an undo: its name, and open again
                    if (item.result or {}).get("renamed"):
                        await self._rename_thread(item, topic)
                    if ((item.args or {}).get("before") or {}).get("status") == "active" and topic.status == "active":
                        await self._call(
                            "reopenForumTopic",
                            lambda topic=topic: self.bot.reopen_forum_topic(
                                chat_id=self.forum_chat, message_thread_id=int(topic.thread_ref)
                            ),
                        )
            except (TelegramError, TimeoutError) as exc:
                logger.warning("forum topic for topic {} not updated: {}", topic.id, describe(exc))

    async def _renames_owed(self) -> None:
        """Renames approved while the process was down, or killed before Telegram heard of them."""
        async with self._send_lock:
            items = (
                ApprovalItem.select()
                .where(ApprovalItem.tool.in_(("rename_topic", "restore_topic")) & (ApprovalItem.status == "executed"))
                .order_by(ApprovalItem.id)
            )
            for item in items:
                if not (item.result or {}).get("renamed"):  # an undo that left the name as it was
                    continue
                topic_id = (item.result or {}).get("topic_id")
                topic = Topic.get_or_none(Topic.id == topic_id) if topic_id else None
                if topic is None or not topic.thread_ref or marks.get(RENAMED, str(item.id)):
                    continue
                try:
                    await self._rename_thread(item, topic)
                except (TelegramError, TimeoutError) as exc:
                    logger.warning("forum topic for topic {} not renamed: {}", topic.id, describe(exc))

    async def _rename_thread(self, item: ApprovalItem, topic: Topic) -> None:
        """The forum thread takes the topic's new name, once per approved rename (a proposal settled again,
        say when its replacement is shown, does not rename it again)."""
        done = str(item.id)
        if marks.get(RENAMED, done):
            return
        name = topic.title[:128]
        faults.point("telegram:before-rename-thread")
        try:
            await self._call(
                "editForumTopic",
                lambda: self.bot.edit_forum_topic(
                    chat_id=self.forum_chat, message_thread_id=int(topic.thread_ref), name=name
                ),
            )
        except BadRequest as exc:
            if "not_modified" not in str(exc).lower().replace(" ", "_"):
                raise
        marks.put(RENAMED, done, name, self.now())
        logger.info("forum thread {} of topic {} renamed", topic.thread_ref, topic.id)
