"""Delivering: the one sender of the channel's outbox rows, retries, and the outage's delay line
(a mixin of TelegramChannel). See the package's docstring for "never given up" and the duplicate window.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import datetime, timedelta

import peewee
from loguru import logger
from telegram import ReplyParameters
from telegram.error import BadRequest, ChatMigrated, Forbidden, NetworkError, RetryAfter, TelegramError

from actors.proposals import commands, make as proposals_make
from channels.telegram.state import LEFT_OUT, OUTAGE_CURSOR, NoRecipient
from channels.telegram.text import (
    MAX_TEXT,
    briefing_keyboard,
    delay_note,
    describe,
    follow_up_keyboard,
    keyboard,
    retry_seconds,
    revive_keyboard,
    split_text,
    undo_keyboard,
)
from storage import kv, marks, outbox, trace
from storage.models import Approval, Outbox, SentMessage
from wilson.kernel import clock as clockmod
from wilson.kernel import faults

NOTE_ROOM = 120  # units kept free in a message's first part for the delay line
SEND_SECONDS = 60.0  # one sendMessage in all; past it the row is retried like any failed send


def cannot_be_fixed_by_retrying(exc: BaseException) -> bool:
    """Telegram refused this message for good (or it has nowhere to go); anything else is an outage
    or a hiccup and passes. An error of Wilson's own (not Telegram's, not the network's, not the
    database's) is not retried either: the same row would fail the same way and hold back the rest."""
    if isinstance(exc, (BadRequest, Forbidden, ChatMigrated, NoRecipient)):
        return True
    return not isinstance(exc, (TelegramError, OSError, TimeoutError, peewee.OperationalError, peewee.InterfaceError))


class Outbound:
    async def _pump(self) -> None:
        """The one sender of this channel's outbox rows, oldest first. A row that failed for a reason
        that passes holds the newer ones back until it goes through, so after an outage everything
        arrives, in the order it was written."""
        while not self._stopping:
            self._wake.clear()
            try:
                row = outbox.next_due(self.name)
                if row is None:
                    self._outage_over()
                    await self._wake.wait()
                    continue
                wait = self._retry_at - clockmod.monotonic()
                if wait > 0:
                    # the rows behind it are waiting too, not being sent: `wait_idle` must not count them
                    outbox.wait_behind(self.name, row.next_attempt_at)
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(self._wake.wait(), timeout=wait)
                    continue
                async with self._send_lock:  # one at a time; a proposal's edit waits for its delivery
                    await self._attempt(row)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the database is busy or gone: look again in a moment
                logger.warning("Telegram deliveries paused: {}", describe(exc))
                await asyncio.sleep(min(self.backoff_max, 1.0))

    async def _attempt(self, row: Outbox) -> None:
        """Send one row once: the attempt is committed before the API call, the result after it."""
        now = self.now()
        cut_short = row.sending_at is not None  # a retry clears it: only a stop mid-send leaves it set
        if not outbox.start_attempt(row.id, now):
            return
        attempts = row.attempts + 1
        if cut_short:
            trace.record(
                row.trace_id,
                "resending",
                self.name,
                f"outbox {row.id}: the last send was cut short by a stop; sending again, so Telegram may show it twice",
                now,
                {"outbox_id": row.id},
            )
        faults.point("telegram:before-send")
        note = None
        chat_id = None
        try:
            done = outbox.partial(row)
            chat_id, thread_id = (int(done["chat_id"]), done.get("thread_id")) if done else self._route(row)
            note = None if done else self._delay_note(chat_id, now)
            result = await self._send_row(row, chat_id, thread_id, note, done)
        except asyncio.CancelledError:
            raise
        except (BadRequest, ChatMigrated) as exc:
            # Refused as it was: once more in its plainest form (no buttons, no reply, the new chat after a
            # migration, the chat itself when the thread is the problem) before it counts as undeliverable.
            try:
                if chat_id is None:
                    raise
                result = await self._send_plain(row, exc, chat_id, thread_id, note)
            except asyncio.CancelledError:
                raise
            except Exception as again:
                self._failed(row, again, attempts, first=exc, chat_id=chat_id)
                return
        except Exception as exc:
            self._failed(row, exc, attempts)
            return
        self._send_failures, self._retry_at = 0, 0.0
        approval = (row.payload or {}).get("approval")
        if note:
            result["delay_note"] = note

        def remember() -> None:  # its ids, for replies and reactions; a proposal's, to edit it
            SentMessage.insert_many(
                [
                    {
                        "channel": self.name,
                        "chat_id": str(result["chat_id"]),
                        "message_id": str(message_id),
                        "outbox_id": row.id,
                    }
                    for message_id in result["message_ids"]
                ]
            ).on_conflict_ignore().execute()
            if approval:
                proposals_make.record_message_ref(approval["id"], result["chat_id"], result["message_ids"][-1])
            if note:
                self._told_of_delay(result["chat_id"])

        self.record_delivery(row, result, self.now(), also=remember)
        again = (row.payload or {}).get("shown_again")  # the original's message was settled when it was replaced
        replaced = Approval.get_or_none(Approval.id == approval["id"]).supersedes if approval and not again else None
        if replaced:  # the original's message now names the proposal that replaced it
            self.spawn(self._settle(replaced))

    async def _send_plain(
        self, row: Outbox, exc: BaseException, chat_id: int, thread_id: int | None, note: str | None
    ) -> dict:
        """The row again without what Telegram may have refused; its result says what was left out and why."""
        reason = describe(exc)
        if isinstance(exc, ChatMigrated) and exc.new_chat_id:
            chat_id = int(exc.new_chat_id)
        if thread_id is not None and any(w in reason.lower() for w in ("thread", "topic")):
            thread_id = None
        done = outbox.partial(row)
        result = await self._send_row(row, chat_id, thread_id, note, done, plain=True)
        result["degraded"] = reason[:300]
        logger.warning("outbox {} refused by Telegram ({}); sent again as plain text without buttons", row.id, reason)
        trace.record(
            row.trace_id,
            "degraded",
            self.name,
            f"outbox {row.id}: Telegram refused it ({reason[:200]}); sent as plain text, without buttons or reply",
            self.now(),
        )
        return result

    def _failed(
        self,
        row: Outbox,
        exc: BaseException,
        attempts: int,
        first: BaseException | None = None,
        chat_id: int | None = None,
    ) -> None:
        reason = describe(exc)
        now = self.now()
        if cannot_be_fixed_by_retrying(exc):
            if first is not None and describe(first) != reason:
                reason = f"{describe(first)}; as plain text: {reason}"
            logger.error("outbox {} could not be delivered on Telegram, not even as plain text: {}", row.id, reason)
            self.record_failure(row, reason, now, counted=True)
            self._tell_undelivered(row, reason, now, chat_id)
            return
        self._send_failures += 1
        wait = min(self.retry_base * 2 ** min(self._send_failures - 1, 20), self.retry_max)
        if isinstance(exc, RetryAfter):
            wait = max(wait, retry_seconds(exc) + 0.1)
        self._retry_at = clockmod.monotonic() + wait
        logger.warning("Telegram sendMessage failed ({}); outbox {} tried again in {:.2f}s", reason, row.id, wait)
        self.record_retry(
            row, reason, now, now + timedelta(seconds=wait), attempts=attempts, also=lambda: self._outage_begins(now)
        )

    def _tell_undelivered(self, row: Outbox, reason: str, now: datetime, chat_id: int | None) -> None:
        """The user hears that a message did not reach them, in the chat it was for, in a few plain words
        (unless this was such a note itself, or there is no chat: then the log line above is all there is)."""
        payload = row.payload or {}
        if payload.get("undelivered") or chat_id is None:
            return
        text = (
            f"A message of mine could not be shown here: Telegram refused it ({reason[:160]}). "
            "Ask me again if you need it."
        )
        told = outbox.add(
            channel=self.name,
            text=text,
            trace_id=row.trace_id,
            key=f"undelivered:{row.id}",
            at=now,
            payload={"undelivered": row.id, "chat_id": chat_id},
        )
        self._wake.set()
        logger.info("outbox {}: the user is told it was not delivered (outbox {})", row.id, told.id)

    # The outage: when sends began to fail, and which chats were told their messages were late.
    def _outage_begins(self, at: datetime) -> None:
        if kv.cursor_row(OUTAGE_CURSOR) is None:
            kv.put_cursor(OUTAGE_CURSOR, {"since": at.isoformat(), "told": []}, at)

    def _delay_note(self, chat_id: int, now: datetime) -> str | None:
        outage = kv.get_cursor(OUTAGE_CURSOR)
        outage = outage if isinstance(outage, dict) else None
        if not outage or str(chat_id) in outage.get("told", []):
            return None
        since = datetime.fromisoformat(outage["since"])
        if now - since < self.delay_note_after:
            return None
        return delay_note(since, now, self.config.timezone)

    def _told_of_delay(self, chat_id: int) -> None:
        outage = kv.get_cursor(OUTAGE_CURSOR)
        if isinstance(outage, dict):
            value = dict(outage, told=sorted(set(outage.get("told", [])) | {str(chat_id)}))
            kv.put_cursor(OUTAGE_CURSOR, value, self.now())

    def _outage_over(self) -> None:
        """Nothing is owed any more: a later outage starts its own story."""
        if self._send_failures == 0 and kv.cursor_row(OUTAGE_CURSOR) is not None:
            kv.delete_cursor(OUTAGE_CURSOR)

    async def _send_row(
        self, row: Outbox, chat_id: int, thread_id: int | None, note: str | None, done: dict, plain: bool = False
    ) -> dict:
        """Send the parts of a row not shown yet; each further part's send is recorded before it starts.
        `plain`: without buttons and without replying to a message (what a refusal may have been about)."""
        payload = row.payload or {}
        markup = None
        if plain:
            pass
        elif payload.get("approval"):
            markup = keyboard(payload["approval"], marks.get(LEFT_OUT, str(payload["approval"].get("id"))) or ())
        elif payload.get("revive"):
            revive = payload["revive"]
            markup = revive_keyboard(revive if isinstance(revive, list) else [revive]) or None
            if markup is not None and not markup.inline_keyboard:
                markup = None
        elif payload.get("proposals") or payload.get("briefing"):  # the morning briefing: what waits, what is raised
            markup = briefing_keyboard(
                self._waiting(payload.get("proposals")),
                follow_up_keyboard(commands.follow_up_buttons(payload.get("tasks"))),
            )
        elif payload.get("undo"):
            markup = undo_keyboard(payload["undo"])
        elif payload.get("tasks") or payload.get("reminder"):  # a follow-up: Done, Snooze, Drop, Stop
            markup = follow_up_keyboard(commands.follow_up_buttons(payload.get("tasks")), payload.get("reminder"))
        reply = payload.get("reply_to") if not plain else None
        reply_to = None
        if isinstance(reply, dict) and reply.get("message_id") and int(reply.get("chat_id") or chat_id) == chat_id:
            reply_to = ReplyParameters(message_id=int(reply["message_id"]), allow_sending_without_reply=True)
        text = row.text or ""
        if plain and payload.get("approval"):
            text += f"\n\n(Without buttons: answer in words, e.g. “approve {payload['approval'].get('id')}”.)"
        pieces = split_text(text, MAX_TEXT - NOTE_ROOM) if text.strip() else ["…"]
        ids = list(done.get("message_ids") or [])
        for index in range(len(ids), len(pieces)):
            if index > len(done.get("message_ids") or []):
                outbox.record_progress(
                    row.id, {"chat_id": chat_id, "thread_id": thread_id, "message_ids": ids}, self.now()
                )
            piece = f"{note}\n\n{pieces[index]}" if note and index == 0 else pieces[index]
            # the whole call has SEND_SECONDS (the client's timeouts bound each read, not a dripping answer)
            sent = await asyncio.wait_for(
                self.bot.send_message(
                    chat_id=chat_id,
                    text=piece,
                    message_thread_id=thread_id,
                    reply_parameters=reply_to if index == 0 else None,
                    reply_markup=markup if index == len(pieces) - 1 else None,
                ),
                timeout=SEND_SECONDS,
            )
            faults.point("telegram:after-send")
            ids.append(sent.message_id)
        return {"chat_id": chat_id, "message_ids": ids, "thread_id": thread_id}

    async def _call(self, what: str, make, deadline: float | None = None):
        """One Bot API call with retries: network errors back off, 429s wait, a BadRequest fails at once."""
        give_up = clockmod.monotonic() + (deadline or self.call_deadline)
        attempt = 0
        while True:
            try:
                return await make()
            except BadRequest:  # a subclass of NetworkError, but retrying cannot fix it
                raise
            except RetryAfter as exc:
                wait, last = retry_seconds(exc) + 0.1, describe(exc)
                logger.warning("Telegram {} rate-limited; waiting {:.1f}s as Telegram asks", what, wait)
            except NetworkError as exc:  # includes TimedOut and 5xx answers
                wait, last = min(self.backoff_base * 2 ** min(attempt, 20), self.backoff_max), describe(exc)
                logger.warning("Telegram {} failed ({}); retrying in {:.2f}s", what, last, wait)
            attempt += 1
            if clockmod.monotonic() + wait > give_up:
                raise TimeoutError(f"{what} still failing after {attempt} attempt(s), gave up: {last}")
            await asyncio.sleep(wait)
