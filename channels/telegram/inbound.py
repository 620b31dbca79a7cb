"""One update: read, handled and its offset advanced in one transaction (a mixin of TelegramChannel).

A text becomes an inbox row through the thalamus, a command's answer an outbox row, a
reaction a Feedback row; presses and the words that stand for them are in buttons.py.

Size: one update's path (read, interpret, commit) is a chain of short methods over the same transaction.
"""

from __future__ import annotations

from datetime import datetime

import peewee
from loguru import logger
from telegram import Message, Update

from actors.proposals import commands as own_commands, make, rules
from channels import views
from channels.telegram.access import first_refusal, owner_id, pair, pairing_code_matches, wrong_pairing_try
from channels.telegram import chats, handover
from channels.telegram.state import Incoming, OFFSET_CURSOR
from channels.telegram.text import clean_text, describe, media_kind, parse_command, parse_update, reaction_value
from storage import kv, outbox, routing, trace
from storage.db import database
from storage.models import Feedback, Inbox, Outbox, SentMessage, Topic
from wilson.kernel import bounds, faults
from wilson.kernel.commands import telegram_menu
from wilson.kernel.messages import Deliver, ProposalCreated, ReplyTo, StimulusCommitted, SyncRequest, TickNow

HELP = (
    "I'm Wilson. Write to me as you would to a person; I'll ask before I change anything, and “undo” puts "
    "back what you approved.\n\n" + "\n".join(f"/{name} — {what}" for name, what in telegram_menu())
)
REFUSAL = (
    "Sorry, I only talk with the person I work for. If that's you, run: wilson pair "
    "on the computer I run on, then send me /start followed by the code it prints."
)


class Inbound:
    def _take(self, raw, offset: int | None) -> int | None:
        """Read and handle one raw getUpdates entry; returns the offset to ask for next."""
        parsed = parse_update(raw)
        if parsed.update is None:
            offset = self._skip(parsed.update_id, f"could not be read: {parsed.error}", offset, raw)
            query = raw.get("callback_query") if isinstance(raw, dict) else None
            query_id = query.get("id") if isinstance(query, dict) else None
            if isinstance(query_id, str) and 0 < len(query_id) <= 64:  # an unreadable press is still answered
                self.spawn(self._answer(query_id, "Sorry, that did not work, and nothing changed."))
            return offset
        return self._receive(parsed.update, offset, raw)

    def _skip(self, update_id: int | None, why: str, offset: int | None, raw=None) -> int | None:
        """Trace an update Wilson cannot use and move the offset past it, in one transaction."""
        now = self.now()
        offset = max(offset or 0, update_id + 1) if update_id is not None else offset
        kinds = sorted(str(k)[:40] for k in raw if k != "update_id")[:5] if isinstance(raw, dict) else []
        why = clean_text(why, 300)
        logger.error("Telegram update {} {}; skipped", update_id if update_id is not None else "(no id)", why)
        data = {"update_id": update_id, "kinds": kinds}
        try:
            with database.atomic():
                trace.record(
                    trace.new_trace_id(), "skipped", self.name, f"Telegram update {update_id} {why}", now, data
                )
                if update_id is not None:
                    kv.put_cursor(OFFSET_CURSOR, offset, now)
        except (peewee.OperationalError, peewee.InterfaceError):
            raise  # the database is busy or gone: the poller asks for this update again
        except Exception as exc:  # the trace itself would not store: the offset still moves on
            logger.error("could not trace skipped update {}: {}", update_id, describe(exc))
            if update_id is not None:
                kv.put_cursor(OFFSET_CURSOR, offset, now)
        return offset

    def _receive(self, update: Update, offset: int | None = None, raw=None) -> int:
        """Handle one update and advance the offset in the same transaction; returns the next offset."""
        now = self.now()
        after: list = []  # what to tell whom once the transaction is committed
        offset = max(offset or 0, update.update_id + 1)
        try:
            with database.atomic():
                self._interpret(update, now, after)
                kv.put_cursor(OFFSET_CURSOR, offset, now)
        except (peewee.OperationalError, peewee.InterfaceError):
            raise  # the database is busy or gone: the poller retries this update, it is not skipped
        except Exception as exc:  # a poison update must not block every later one
            offset = self._skip(update.update_id, f"could not be handled: {describe(exc)}", offset, raw)
            query = update.callback_query
            if query is not None:  # a press is always answered, or its button spins on the user's screen
                self.spawn(self._answer(query.id, "Sorry, that did not work, and nothing changed."))
            return offset
        faults.point("telegram:after-offset-commit")
        for action in after:
            action()
        return offset

    def _interpret(self, update: Update, now: datetime, after: list) -> None:
        if update.message_reaction is not None:
            self._reaction(update.message_reaction, now)
        elif update.callback_query is not None:
            self._press(update.update_id, update.callback_query, now, after)
        elif update.message is not None or update.edited_message is not None:
            self._message(update.update_id, update.message or update.edited_message, update.message is None, now, after)
        else:
            logger.debug("update {} of a kind Wilson does not use", update.update_id)

    def _message(self, update_id: int, message: Message, edited: bool, now: datetime, after: list) -> None:
        user = message.from_user
        if user is None or user.is_bot:
            return
        where = {"chat_id": message.chat.id}
        if message.is_topic_message and message.message_thread_id:
            where["thread_id"] = message.message_thread_id
        incoming = Incoming(
            uid=str(user.id),
            where=where,
            reply={"chat_id": message.chat.id, "message_id": message.message_id},
            key=f"telegram:{update_id}",
            now=now,
            after=after,
        )
        if message.chat.type != "private" or self.allowed(incoming.uid):
            chats.seen(message.chat, now)  # for `wilson telegram chats`: the API cannot list a bot's chats
        text = clean_text(message.text or message.caption or "")
        command, argument = parse_command(clean_text(message.text or ""))
        if command == "start" and argument:
            self._pair(incoming, argument)
        elif not self.allowed(incoming.uid):
            self._refuse(incoming)
        elif command:
            if not edited:  # an edited command was answered when it was first sent
                self._command(incoming, command, argument)
        elif not (text and not edited and (self._modification(incoming, text) or self._lifecycle(incoming, text))):
            self._words(incoming, message, text, edited)

    def _words(self, incoming: Incoming, message: Message, text: str, edited: bool) -> None:
        """Words for the model: committed to the inbox with where they came from and what they answer. A voice
        note, a PDF or an invitation is handed over (channels/telegram/handover.py) instead."""
        media = media_kind(message)
        handed = handover.kind_of(message) if media else None
        if handed is not None:
            if not edited:  # an edited caption of a file: the file was read when it was sent
                self._hand_over(incoming, message, handed, text, self._payload(incoming, message, edited, media))
            return
        if media and not edited:  # the note was given when the message was first sent
            note = (
                f"I can't read {media[1]} yet, so I only read your caption."
                if text
                else f"I can't read {media[1]} yet. Could you tell me in words?"
            )
            self._reply(note, incoming, "media")
        if not text:
            return
        payload = self._payload(incoming, message, edited, media)
        if media:  # a photo's caption (or a video's): passed on with something others may have made
            payload["handed_over"] = f"the caption of {'a photo' if media[0] == 'photo' else 'something'} you sent"
        self._commit_words(incoming, text, payload)

    def _payload(self, incoming: Incoming, message: Message, edited: bool, media) -> dict:
        """Where the words came from and what they answer: the chat, the thread and topic, the reply, a quote,
        who they were forwarded from, what an edit replaces."""
        where = incoming.where
        payload = {"chat_id": message.chat.id, "message_id": message.message_id, "message_ref": dict(incoming.reply)}
        if "thread_id" in where:
            payload["thread_id"] = payload["message_ref"]["thread_id"] = where["thread_id"]
            topic = (
                Topic.get_or_none(Topic.thread_ref == str(where["thread_id"]))
                if message.chat.id == self.forum_chat
                else None
            )
            if topic is not None:
                payload["topic_id"] = topic.id
        replied = message.reply_to_message
        if replied is not None and replied.forum_topic_created is None:  # a topic's root is no reply
            payload["reply_to"] = self._replied_context(message.chat.id, replied, incoming.uid)
            if payload["reply_to"].get("topic_id") and "topic_id" not in payload:
                payload["topic_id"] = payload["reply_to"]["topic_id"]
        elif message.external_reply is not None:  # a reply to a message of another chat: only its quote is here
            payload["reply_to"] = {"text": "", "from_wilson": False, "by_sender": False}
        quote = clean_text(message.quote.text, 1000) if message.quote is not None and message.quote.text else ""
        if quote and "reply_to" in payload:  # the part of it the user quoted
            payload["reply_to"]["quote"] = quote
        if message.forward_origin is not None:  # the text itself is someone else's, passed on by the user
            payload["forwarded_from"] = forwarded_from(message.forward_origin)
        if edited:
            payload["edited"] = True
            earlier = self._earlier_words(incoming.uid, message.chat.id, message.message_id)
            if earlier is not None:
                payload["replaces"] = {"inbox_id": earlier.id, "text": earlier.text[:1000]}
        if media:
            payload["attachment"] = media[0]
        return payload

    def _commit_words(self, incoming: Incoming, text: str, payload: dict) -> None:
        row = routing.commit_realtime(
            source=self.name, text=text, user_id=incoming.uid, at=incoming.now, dedup_key=incoming.key, payload=payload
        )
        if row is not None:
            nudge = StimulusCommitted("inbox", row.id, row.trace_id, row.priority)
            incoming.after.append(lambda: self.tell("thalamus", nudge))

    def _earlier_words(self, uid: str, chat_id: int, message_id: int) -> Inbox | None:
        """The inbox row of the message an edit corrects (its latest version), if Wilson heard it."""
        rows = (
            Inbox.select()
            .where((Inbox.source == self.name) & (Inbox.user_id == uid))
            .order_by(Inbox.id.desc())
            .limit(200)
        )
        for row in rows:
            payload = row.payload or {}
            if payload.get("message_id") == message_id and str(payload.get("chat_id")) == str(chat_id):
                return row
        return None

    def _replied_context(self, chat_id: int, replied: Message, uid: str) -> dict:
        """What the message answers: Wilson's own message (its row), or someone's words, saying whether they are
        the sender's own (`by_sender`): anyone else's reach the model labelled as others' words."""
        row = self._delivered_row(chat_id, replied.message_id)
        if row is None:
            author = replied.from_user
            return {
                "text": clean_text(replied.text or replied.caption or "", 1000),
                "from_wilson": False,
                "by_sender": author is not None and str(author.id) == uid,
            }
        context = {
            "text": row.text[:1000],
            "topic_id": (row.payload or {}).get("topic_id"),
            "outbox_id": row.id,
            "from_wilson": True,
        }
        topic = Topic.get_or_none(Topic.id == context["topic_id"]) if context["topic_id"] else None
        if topic is not None:
            context["topic"] = topic.title
        return context

    def _delivered_row(self, chat_id: int, message_id: int) -> Outbox | None:
        """The outbox row a delivered Telegram message came from, however long ago it was sent."""
        sent = SentMessage.get_or_none(
            (SentMessage.channel == self.name)
            & (SentMessage.chat_id == str(chat_id))
            & (SentMessage.message_id == str(message_id))
        )
        return Outbox.get_or_none(Outbox.id == sent.outbox_id) if sent is not None else None

    def _pair(self, incoming: Incoming, code: str) -> None:
        uid = incoming.uid
        if pairing_code_matches(code, incoming.now):
            pair(uid)
            if owner_id(self.config) == uid:
                self.config.set("core", "owner", uid)  # proposals from now on are bound to the new owner
            logger.info("Telegram user {} paired", uid)
            self._reply("Paired ✓ — I'll talk with you here.\n\n" + HELP, incoming, "reply")
        elif self.allowed(uid):
            self._reply("That code is not the one I expect, but you're already paired.\n\n" + HELP, incoming, "reply")
        else:
            logger.warning("Telegram user {} sent a wrong or expired pairing code", uid)
            wrong_pairing_try()
            self._refuse(incoming)

    def _refuse(self, incoming: Incoming) -> None:
        if not first_refusal(incoming.uid):
            logger.info("ignored a message from Telegram user {} (not allowed, already told)", incoming.uid)
            return
        logger.warning("refused Telegram user {} (not allowed); told them once", incoming.uid)
        self._reply(REFUSAL, incoming, "refusal")

    def _command(self, incoming: Incoming, name: str, argument: str) -> None:
        tz = self.config.timezone
        if name == "help" and own_commands.help_target(f"help {argument}") is not None:
            # "/help 3": help with task 3, as the briefing's choices say
            text = self._help(
                incoming.uid,
                own_commands.help_target(f"help {argument}"),
                incoming.where,
                incoming.reply,
                incoming.key,
                incoming.now,
                incoming.after,
            )
            if text is None:
                return  # Wilson's answer to the request is the reply
        elif name in ("start", "help"):
            text = HELP
        elif name == "tasks":
            text = views.table("tasks", views.tasks(tz, "open", incoming.uid, self.config.get("core", "owner")))
        elif name == "overdue":
            text = views.table(
                "overdue", views.overdue(tz, incoming.now, incoming.uid, self.config.get("core", "owner"))
            )
        elif name in own_commands.VERBS and own_commands.parse(f"{name} {argument}") is not None:
            # "/done 3": the user's own command, taken at once, as typed without the slash
            self._own_command(
                incoming.uid,
                own_commands.parse(f"{name} {argument}").text,
                incoming.where,
                incoming.now,
                incoming.after,
            )
            return
        elif name == "topics":
            text = views.table("topics", views.topics(tz, incoming.uid, self.config.get("core", "owner")))
        elif name == "today":
            self._reply("Looking…", incoming, "reply")
            # told after "Looking…" is queued for delivery, so that what the look found comes after it
            asked = ReplyTo(self.name, f"{incoming.key}:look", self._address(incoming))
            incoming.after.append(lambda: self.tell("thalamus", SyncRequest("manual", asked)))
            return
        elif name == "quiet":
            text = self._quiet(argument, incoming.now)
            incoming.after.append(lambda: self.tell("tick", TickNow()))  # what it no longer holds goes out now
        elif name == "budget":
            text = self.ctx.synapse.budget_report()
        elif name == "expired":
            self._show_expired(incoming)
            return
        elif name == "memory":
            text = views.table("memories", views.memories(tz)) + "\n\nIf one is wrong, say /forget and its number."
        elif name == "forget":
            text = self._forget(argument, incoming)
            if text is None:
                return  # the proposal is the answer: the gate shows it here
        else:
            text = f"I don't know /{name}. /help lists what I understand."
        self._reply(text, incoming, "reply")

    def _forget(self, argument: str, incoming: Incoming) -> str | None:
        """/forget N: a proposal to forget memory N, decided like any other; the reason it cannot be, or None."""
        try:
            memory = bounds.parse_id(argument)
        except ValueError:
            return "Which one? Say /forget and the number /memory shows, e.g. /forget 5."
        try:
            made = make.propose_one(
                "forget_memory",
                {"memory": memory},
                owner=incoming.uid,
                channel=self.name,
                reason=f"because you said memory {memory} is wrong",
                key=f"{incoming.key}:forget",
                now=incoming.now,
                config=self.config,
            )
        except rules.CannotPropose as exc:
            return str(exc)
        incoming.after.append(lambda: self.tell("approval", ProposalCreated(made.id)))
        return None

    def _quiet(self, argument: str, now: datetime) -> str:
        return views.quiet(argument, now, self.config, "/quiet")

    def _reply(self, text: str, incoming: Incoming, what: str) -> None:
        """Queue an answer to the chat a message came from (delivered like every other outbox row);
        `what` names the answer among those to the same update (its idempotency key)."""
        box = outbox.add(
            channel=self.name,
            text=text,
            trace_id=trace.new_trace_id(),
            key=f"{incoming.key}:{what}",
            at=incoming.now,
            payload=self._address(incoming),
        )
        incoming.after.append(lambda: self.tell(self.name, Deliver(box.id)))

    @staticmethod
    def _address(incoming: Incoming) -> dict:
        """An answer's way back: the chat (and forum thread) the message came from, as a reply to it."""
        where = incoming.where
        return {"chat_id": where["chat_id"], "thread_id": where.get("thread_id"), "reply_to": incoming.reply}

    def _reaction(self, reaction, now: datetime) -> None:
        user = reaction.user
        if user is None or not self.allowed(str(user.id)):
            logger.info("ignored a reaction from someone not allowed")
            return
        row = self._delivered_row(reaction.chat.id, reaction.message_id)
        if row is None:
            logger.debug("reaction to message {} that Wilson did not send", reaction.message_id)
            return
        # The update names the reactions before and after; feedback follows what the user shows now:
        # a withdrawn reaction (👍 changed to 👎, or taken back) no longer counts, and an update
        # Telegram hands over twice records nothing twice.
        old = {reaction_value(r) for r in reaction.old_reaction or ()}
        new = {reaction_value(r) for r in reaction.new_reaction or ()}
        mine = (Feedback.outbox_id == row.id) & (Feedback.kind == "reaction")
        withdrawn = old - new
        if withdrawn:
            Feedback.delete().where(mine & Feedback.value.in_(sorted(withdrawn))).execute()
        recorded = {f.value for f in Feedback.select(Feedback.value).where(mine)}
        for value in (reaction_value(r) for r in reaction.new_reaction or ()):
            if value not in recorded:
                Feedback.create(outbox_id=row.id, kind="reaction", value=value, at=now)
                recorded.add(value)


def forwarded_from(origin) -> str:
    """Who wrote a forwarded message, in a few words (the model reads its text as theirs, not the user's)."""
    user = getattr(origin, "sender_user", None)
    if user is not None:
        return clean_text(" ".join(filter(None, (user.first_name, user.last_name))), 80) or "someone"
    chat = getattr(origin, "sender_chat", None) or getattr(origin, "chat", None)
    if chat is not None:
        return clean_text(chat.title or "", 80) or "a chat"
    return clean_text(getattr(origin, "sender_user_name", "") or "", 80) or "someone"
