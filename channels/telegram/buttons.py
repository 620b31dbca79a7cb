"""The user's answers to proposals: buttons, item toggles, Modify's next words, "show expired" and
"revive N" (a mixin of TelegramChannel).

Each answer is a decision row (storage/decisions.py) written in the offset's transaction and
then told to the gate, which alone decides; the early look here only picks a quick answer's words.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from loguru import logger
from telegram import Message
from telegram.error import TelegramError

from actors.proposals import commands
from actors.proposals.rules import OPEN, OWNER_ONLY, REVIVE, UNDO, actions_for, check, may_decide
from actors.proposals.undo import LATEST, latest_approved
from actors.proposals.words import render, undo_named
from channels import views
from channels.telegram.state import AWAITING_MODIFY, Incoming, LEFT_OUT
from channels.telegram.text import SHOW, describe, keyboard, parse_callback, parse_command_data, parse_toggle
from storage import decision_chats, decisions, marks, outbox, routing, trace
from storage.models import Approval, ApprovalItem
from wilson.kernel.messages import Decision, DecisionRecorded, Deliver, StimulusCommitted

CALLBACK_ANSWER_MAX = 190
MODIFY_WAIT = timedelta(hours=1)
SHOW_EXPIRED = re.compile(r"(?i)^\s*show\s+expired(\s+proposals)?\s*[.!]?\s*$")
REVIVE_WORDS = re.compile(r"(?i)^\s*revive\s+#?(\d{1,16})\s*[.!]?\s*$")


def modify_still_wanted(awaiting: dict, now: datetime) -> bool:
    """After Modify, the next words are the change: unless the proposal was settled meanwhile
    or the user went on to other things (an hour later, it is a new message)."""
    approval = Approval.get_or_none(Approval.id == awaiting.get("approval_id"))
    asked = datetime.fromisoformat(awaiting["at"]) if awaiting.get("at") else None
    return approval is not None and approval.status in OPEN and asked is not None and now - asked < MODIFY_WAIT


class Buttons:
    def _lifecycle(self, incoming: Incoming, text: str) -> bool:
        """ "show expired", "revive N" (as the expiry notice tells the user to say) and "undo" or "undo N": handled
        by code, like a press; True when these words were one of them."""
        if SHOW_EXPIRED.match(text):
            self._show_expired(incoming)
            return True
        if text.strip().lower().rstrip(".!?") == "overdue":  # as the briefing's summary line says to
            rows = views.overdue(self.config.timezone, incoming.now, incoming.uid, self._owner_decides())
            self._reply(views.table("overdue", rows), incoming, "reply")
            return True
        told = commands.parse(text)
        if told is not None:  # "done 3", "snooze 3 2d": the user's own command, taken at once
            self._own_command(incoming.uid, told.text, incoming.where, incoming.now, incoming.after)
            return True
        helping = commands.help_target(text)
        if helping is not None:  # "help 3", as the briefing's choices say
            problem = self._help(
                incoming.uid, helping, incoming.where, incoming.reply, incoming.key, incoming.now, incoming.after
            )
            if problem:
                self._reply(problem, incoming, "help")
            return True
        match = REVIVE_WORDS.match(text)
        undoing = undo_named(text)
        if not match and undoing is None:
            return False
        approval_id, action = (int(match.group(1)), REVIVE) if match else (undoing, UNDO)
        if action == UNDO and approval_id == LATEST:  # named now, so that the answer finds this chat
            latest = latest_approved(incoming.uid, self._owner_decides())
            if latest is None:
                self._reply("There is nothing I changed for you to undo.", incoming, "undo")
                return True
            approval_id = latest.id
        decision_chats.remember(str(approval_id), incoming.where, incoming.now)
        row = decisions.record(
            approval_id=approval_id, action=action, user_id=incoming.uid, channel=self.name, at=incoming.now
        )
        incoming.after.append(lambda: self.tell("approval", DecisionRecorded(row.id)))
        return True

    def _own_command(self, uid: str, words: str, where: dict, now: datetime, after: list) -> None:
        """A command the user typed or pressed: a decision row in the offset's transaction; the gate takes it
        as their approval and answers with a receipt (and its Undo button) in this chat."""
        row = decisions.record(
            approval_id=0, action=commands.COMMAND, user_id=uid, channel=self.name, at=now, text=words
        )
        decision_chats.remember(f"command:{row.id}", where, now)
        after.append(lambda: self.tell("approval", DecisionRecorded(row.id)))

    def _help(
        self, uid: str, task_id: int, where: dict, reply: dict, key: str, now: datetime, after: list
    ) -> str | None:
        """ "help 3" typed, /help 3, or a Help button: the user's words for Wilson about that task, committed as a
        message (answered in this chat, as a reply to `reply`). Returns why it cannot be, in words, or None."""
        try:
            text = commands.help_words(task_id, self.config.timezone, uid, self.config.get("core", "owner"))
        except ValueError as exc:
            return str(exc)
        payload = {"chat_id": where["chat_id"], "message_ref": dict(reply), "help_task": task_id}
        if where.get("thread_id"):
            payload["thread_id"] = payload["message_ref"]["thread_id"] = where["thread_id"]
        row = routing.commit_realtime(
            source=self.name, text=text, user_id=uid, at=now, dedup_key=f"{key}:help", payload=payload
        )
        if row is not None:
            nudge = StimulusCommitted("inbox", row.id, row.trace_id, row.priority)
            after.append(lambda: self.tell("thalamus", nudge))
        return None

    def _show_expired(self, incoming: Incoming) -> None:
        rows = views.expired(self.config.timezone)
        mine = [r for r in rows if may_decide(incoming.uid, Approval.get_by_id(r["id"]), self._owner_decides())]
        text = views.table("expired", mine)
        if mine:
            text += "\n\nPress a button (or say “revive N”) to bring one back."
        where = incoming.where
        payload = {
            "chat_id": where["chat_id"],
            "thread_id": where.get("thread_id"),
            "reply_to": incoming.reply,
            "revive": [{"id": r["id"], "nonce": Approval.get_by_id(r["id"]).nonce} for r in mine],
        }
        box = outbox.add(
            channel=self.name,
            text=text,
            trace_id=trace.new_trace_id(),
            key=f"{incoming.key}:expired",
            at=incoming.now,
            payload=payload,
        )
        incoming.after.append(lambda: self.tell(self.name, Deliver(box.id)))

    def _owner_decides(self) -> str | None:
        return self.config.get("core", "owner") if self.config.get("approval", "owner_decides_all") else None

    def _modification(self, incoming: Incoming, text: str) -> bool:
        """After Modify, the user's next words are the change; True when these words were it."""
        awaiting = marks.get(AWAITING_MODIFY, incoming.uid)
        if not awaiting:
            return False
        marks.delete(AWAITING_MODIFY, incoming.uid)
        if not modify_still_wanted(awaiting, incoming.now):
            return False
        decision_chats.remember(str(awaiting["approval_id"]), incoming.where, incoming.now)
        row = decisions.record(
            approval_id=int(awaiting["approval_id"]),
            action="modify",
            user_id=incoming.uid,
            channel=self.name,
            at=incoming.now,
            text=text,
            nonce=awaiting.get("nonce"),
        )
        incoming.after.append(lambda: self.tell("approval", DecisionRecorded(row.id)))
        return True

    def _press(self, update_id: int, query, now: datetime, after: list) -> None:
        uid = str(query.from_user.id)

        def answer(text: str) -> None:
            after.append(lambda: self.spawn(self._answer(query.id, text)))

        if not self.allowed(uid):
            logger.warning("refused a button press from Telegram user {} (not allowed)", uid)
            answer("Sorry, these buttons are not for you.")
            return
        words = parse_command_data(query.data)
        told = commands.parse(words) if words is not None else None
        helping = commands.help_target(words) if words is not None else None
        if told is not None or helping is not None:
            message = query.message
            where = {"chat_id": int(message.chat.id) if message else int(uid)}
            if isinstance(message, Message) and message.is_topic_message and message.message_thread_id:
                where["thread_id"] = message.message_thread_id
            if helping is not None:  # words for Wilson about the task, answered under the message pressed
                reply = {"chat_id": where["chat_id"], "message_id": message.message_id} if message else {}
                problem = self._help(uid, helping, where, reply, f"telegram:{update_id}", now, after)
                answer((problem or "Asking Wilson to help…")[:CALLBACK_ANSWER_MAX])
                return
            self._own_command(uid, told.text, where, now, after)
            answer(
                {"done": "Marking it done…", "snooze": "Snoozing it…", "drop": "Dropping it…", "stop": "Stopping it…"}[
                    told.verb
                ]
            )
            return
        toggle = parse_toggle(query.data)
        if toggle is not None:
            self._toggle(uid, query, toggle, now, answer, after)
            return
        parsed = parse_callback(query.data)
        if parsed is None:
            logger.warning("a button press with unknown data from user {}", uid)
            answer("That button does not work any more.")
            return
        approval_id, action, nonce = parsed
        message = query.message
        where = {"chat_id": int(message.chat.id) if message else int(uid)}
        if isinstance(message, Message) and message.is_topic_message and message.message_thread_id:
            where["thread_id"] = message.message_thread_id
        decision_chats.remember(str(approval_id), where, now)
        if action in (REVIVE, UNDO):  # the gate says whether it can; its new proposal is the answer
            approval = Approval.get_or_none(Approval.id == approval_id)
            if approval is None or not may_decide(uid, approval, self._owner_decides()):
                answer(
                    OWNER_ONLY.format("do that")
                    if self._owner_decides() is not None
                    else "Sorry, only the person this proposal is for can do that."
                )
                return
            row = decisions.record(
                approval_id=approval_id, action=action, user_id=uid, channel=self.name, at=now, nonce=nonce
            )
            after.append(lambda: self.tell("approval", DecisionRecorded(row.id)))
            answer("Bringing it back…" if action == REVIVE else "Undoing it…")
            return
        if action == SHOW:
            self._show_again(update_id, uid, where, approval_id, nonce, now, answer, after)
            return
        decision = Decision(approval_id=approval_id, action=action, user_id=uid, channel=self.name, nonce=nonce)
        # The gate decides; this early look only picks the words of the quick answer.
        problem = check(
            decision, Approval.get_or_none(Approval.id == approval_id), now, self.config.timezone, self._owner_decides()
        )
        if action == "modify" and not problem:
            marks.put(AWAITING_MODIFY, uid, {"approval_id": approval_id, "nonce": nonce, "at": now.isoformat()}, now)
            incoming = Incoming(uid=uid, where=where, reply={}, key=f"telegram:{update_id}", now=now, after=after)
            self._reply(
                f"What should I change in proposal {approval_id}? Tell me in your next message.", incoming, "modify"
            )
            answer("Tell me what to change.")
            return
        marks.delete(AWAITING_MODIFY, uid)  # a press instead of the change: the next words are a message again
        items: tuple[int, ...] = ()
        left_out = set(marks.get(LEFT_OUT, str(approval_id)) or ()) if action == "approve" and not problem else set()
        if left_out:  # toggled: these items, and not the others
            pending = [
                i.position
                for i in ApprovalItem.select(ApprovalItem.position).where(
                    (ApprovalItem.approval == approval_id) & (ApprovalItem.status == "pending")
                )
            ]
            items = tuple(sorted(p for p in pending if p not in left_out))
            if not items:
                answer("Nothing is chosen: tick at least one item, or press Reject.")
                return
            action = "confirm"
            marks.delete(LEFT_OUT, str(approval_id))
        # A row in the offset's transaction: a press is never acknowledged to Telegram and then lost.
        row = decisions.record(
            approval_id=approval_id, action=action, user_id=uid, channel=self.name, at=now, items=items, nonce=nonce
        )
        after.append(lambda: self.tell("approval", DecisionRecorded(row.id)))
        answer(
            problem[:CALLBACK_ANSWER_MAX]
            if problem
            else {"approve": "Approving…", "confirm": "Approving…", "reject": "Rejecting…"}.get(action, "OK")
        )

    def _show_again(
        self, update_id: int, uid: str, where: dict, approval_id: int, nonce: str, now: datetime, answer, after: list
    ) -> None:
        """ "Show" under the briefing: the proposal again, with its buttons, where the press was made. The row is
        written in the offset's transaction, so the press is shown once, even across a kill."""
        approval = Approval.get_or_none(Approval.id == approval_id)
        decision = Decision(approval_id=approval_id, action="approve", user_id=uid, channel=self.name, nonce=nonce)
        problem = check(decision, approval, now, self.config.timezone, self._owner_decides())
        if problem:
            answer(problem[:CALLBACK_ANSWER_MAX])
            return
        items = [
            {"position": i.position, "description": i.description}
            for i in approval.items.where(ApprovalItem.status == "pending").order_by(ApprovalItem.position)
        ]
        payload = {
            "chat_id": where["chat_id"],
            "thread_id": where.get("thread_id"),
            "shown_again": True,
            "approval": {"id": approval.id, "nonce": approval.nonce, "actions": actions_for(approval), "items": items},
        }
        box = outbox.add(
            channel=self.name,
            text=render(approval, self.config.timezone),
            trace_id=approval.trace_id,
            key=f"telegram:{update_id}:show",
            at=now,
            payload=payload,
        )
        after.append(lambda: self.tell(self.name, Deliver(box.id)))
        answer(f"Here is proposal {approval.id}.")

    def _waiting(self, ids) -> list[dict]:
        """The proposals among `ids` still waiting for an answer now, in the order given."""
        wanted = [i for i in ids if isinstance(i, int) and not isinstance(i, bool)] if isinstance(ids, list) else []
        now = self.now()
        found = (
            {
                a.id: a
                for a in Approval.select().where(
                    Approval.id.in_(wanted) & Approval.status.in_(OPEN) & (Approval.expires_at > now)
                )
            }
            if wanted
            else {}
        )
        return [{"id": found[i].id, "nonce": found[i].nonce} for i in wanted if i in found]

    def _toggle(self, uid: str, query, toggle: tuple[int, int, str], now: datetime, answer, after: list) -> None:
        """An item's toggle: which items Approve will approve. Kept as a row in the offset's transaction, so the
        choice survives a restart; the buttons are redrawn after the commit."""
        approval_id, position, nonce = toggle
        approval = Approval.get_or_none(Approval.id == approval_id)
        decision = Decision(approval_id=approval_id, action="approve", user_id=uid, channel=self.name, nonce=nonce)
        problem = check(decision, approval, now, self.config.timezone, self._owner_decides())
        item = (
            None
            if problem
            else ApprovalItem.get_or_none(
                (ApprovalItem.approval == approval_id)
                & (ApprovalItem.position == position)
                & (ApprovalItem.status == "pending")
            )
        )
        if problem or item is None:
            answer((problem or "That item is already decided.")[:CALLBACK_ANSWER_MAX])
            return
        left_out = set(marks.get(LEFT_OUT, str(approval_id)) or ())
        left_out ^= {position}
        marks.put(LEFT_OUT, str(approval_id), sorted(left_out), now)
        title = " ".join(item.description.split())[:80]
        answer((f"Left out: {title}" if position in left_out else f"Back in: {title}")[:CALLBACK_ANSWER_MAX])
        message = query.message
        if isinstance(message, Message):
            chat_id, message_id = message.chat.id, message.message_id
            after.append(lambda: self.spawn(self._redraw(approval_id, chat_id, message_id)))

    def _markup(self, approval: Approval):
        """A proposal's buttons as they stand: its pending items, with the ones toggled off shown so."""
        items = [
            {"position": i.position, "description": i.description}
            for i in approval.items.where(ApprovalItem.status == "pending").order_by(ApprovalItem.position)
        ]
        return keyboard(
            {"id": approval.id, "nonce": approval.nonce, "actions": actions_for(approval), "items": items},
            marks.get(LEFT_OUT, str(approval.id)) or (),
        )

    async def _redraw(self, approval_id: int, chat_id: int, message_id: int) -> None:
        async with self._send_lock:  # never after the settled edit has taken the buttons away
            approval = Approval.get_or_none(Approval.id == approval_id)
            if approval is None or approval.status not in OPEN:
                return
            try:
                await self._call(
                    "editMessageReplyMarkup",
                    lambda: self.bot.edit_message_reply_markup(
                        chat_id=chat_id, message_id=message_id, reply_markup=self._markup(approval)
                    ),
                )
            except (TelegramError, TimeoutError) as exc:  # not modified, or deleted: the choice is kept anyway
                logger.info("proposal {} buttons not redrawn: {}", approval_id, describe(exc))

    async def _answer(self, query_id: str, text: str) -> None:
        try:
            await self._call(
                "answerCallbackQuery", lambda: self.bot.answer_callback_query(query_id, text=text), deadline=15.0
            )
        except (TelegramError, TimeoutError) as exc:  # answered already, too old: the decision still counts
            logger.info("could not answer a button press: {}", describe(exc))
