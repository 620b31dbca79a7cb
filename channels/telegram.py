"""Telegram: Wilson's main channel, on python-telegram-bot's Bot API client.

Threads. The channel is a Pykka actor that owns an asyncio event loop running in
a thread of its own (started in `on_start`, stopped in `on_stop`). The polling
loop, the liveness watchdog and every Bot API call run on that loop. The loop
crosses into Pykka only with `directory.tell`; the actor crosses into the loop
with `run_coroutine_threadsafe`.

Inbound. Wilson runs its own getUpdates loop instead of PTB's Updater, which
acknowledges updates before they are handled. getUpdates is fetched as raw JSON
and each entry is read on its own (`telegram_text.parse_update`): an entry that
cannot be read, or whose fields are not of the types Wilson reads, is traced and
skipped, with the offset moved past it in the same transaction, so one odd update
never blocks the next. Each update is handled and its offset (Cursor
"telegram:offset") advanced in ONE database transaction: a text becomes an inbox
row keyed by `telegram:<update_id>` (a repeated update is a duplicate and
ignored), a command's answer an outbox row, a button press or the words after
Modify a decision row (storage/decisions.py) that the gate is then told about
(`DecisionRecorded`), a reaction a Feedback row. Telegram may hand an update over
more than once; it reaches the inbox exactly once. Only the allow-listed users
(telegram.allowed_users) and users paired with `wilson pair` are heard; anyone
else gets one polite refusal and is logged, and their words go nowhere.

Outbound. One sender on the loop (`_pump`) owes the user every pending row of
this channel and sends them one at a time, oldest first; `Deliver(outbox_id)`
only wakes it, so the actor keeps answering the supervisor's pings while
Telegram makes it wait. Texts longer than Telegram's 4096 characters are split at
paragraphs, then lines. Everything is sent as plain text (no parse_mode), so
nothing the model writes can break the formatting.

Never given up. Each send is recorded (`sending_at`, attempts+1) in a commit
before the API call, and its result (delivered, with the message ids) in the
commit after it. A send that fails for a reason that passes (network, timeout,
5xx, a 429 still there after the limiter's own retries) leaves the row owed
(status `retry`) and is tried again after a capped exponential backoff
(`retry_base` .. telegram.retry_max_seconds), for as long as it takes, across
restarts; the rows behind it wait, so they still arrive in order. After an outage
of a minute or more, the first message each chat gets starts with one line saying
it was delayed and from when to when. Only what no retry can fix fails a row, with
a trace: a BadRequest (chat not found, topic closed), Forbidden (the user blocked
the bot), or nobody to send to. A long text's parts are recorded as they are
shown, so a retry goes on from the part that failed.

The duplicate window. sendMessage has no idempotency key, so exactly-once cannot
be promised for it: a send whose request reached Telegram but whose answer was
lost (a timeout), or a process killed after Telegram accepted a message and
before the row was marked delivered, leaves a row that is sent again: that
message may be shown twice. The window is one request wide, per message part;
outside it every row is delivered exactly once.

Rate limits: sends go through an ExtBot (the Bot subclass that accepts a rate
limiter) with PTB's AIORateLimiter, which throttles to Telegram's published flood
limits and, on a 429, holds *all* sends for the `retry_after` Telegram names and
retries twice (a 429 means nothing was sent, so these retries show nothing twice).
getUpdates runs on a client of its own, outside the limiter, so a flood wait never
stalls listening and a stalled poll can be replaced on its own.

The bot token is part of every request URL. httpx and PTB log URLs, so their
loggers are held at WARNING, and whatever this module logs or stores about an
error goes through `wilson.logs.redact` first.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta

import peewee
from loguru import logger
from telegram import BotCommand, Message, ReplyParameters, Update
from telegram.error import (BadRequest, ChatMigrated, Forbidden, InvalidToken, NetworkError, RetryAfter,
                            TelegramError)
from telegram.ext import AIORateLimiter, ExtBot
from telegram.request import HTTPXRequest

from actors import thalamus
from actors.approval import OPEN, REVIVE, check, may_decide, render
from channels.base import Channel
from channels.loopthread import LoopThread
from channels.telegram_access import (delete_setting, first_refusal, get_setting, is_allowed, owner_id, pair,
                                      pairing_code_matches, parse_ids, put_setting, wrong_pairing_try)
from channels.telegram_text import (MAX_TEXT, SHOW, briefing_keyboard, clean_text, delay_note, describe, keyboard,
                                    media_kind,
                                    parse_callback, parse_command, parse_toggle, parse_update, reaction_value,
                                    retry_seconds, revive_keyboard, settled_text, split_text, usable_update_id)
from storage import decisions, outbox, trace
from storage.db import database
from storage.models import Approval, ApprovalItem, Cursor, Feedback, Inbox, Outbox, SentMessage, Topic
from wilson import clock as clockmod
from wilson import faults
from wilson.messages import ApprovalSettled, Decision, DecisionRecorded, Deliver, StimulusCommitted, SyncRequest

__all__ = ["TelegramChannel", "NoRecipient", "owner_id"]

CALLBACK_ANSWER_MAX = 190
ALLOWED_UPDATES = ["message", "edited_message", "callback_query", "message_reaction"]

OFFSET_CURSOR = "telegram:offset"
OUTAGE_CURSOR = "telegram:outage"  # {"since": first failed send, "told": chats already told of the delay}
NOTE_ROOM = 120  # units kept free in a message's first part for the delay line
HEALTH_CURSOR = "health:telegram"
AWAITING_MODIFY = "telegram:awaiting_modify:"  # + user id -> {"approval_id", "nonce", "at"}
MODIFY_WAIT = timedelta(hours=1)
DECISION_CHAT = "telegram:decision_chat:"  # + approval id -> where the last press came from
RENAMED = "telegram:renamed:"  # + approval item id -> the name its forum thread was given
LEFT_OUT = "telegram:left_out:"  # + approval id -> item positions toggled off (the rest are approved)
SHOW_EXPIRED = re.compile(r"(?i)^\s*show\s+expired(\s+proposals)?\s*[.!]?\s*$")
REVIVE_WORDS = re.compile(r"(?i)^\s*revive\s+#?(\d{1,16})\s*[.!]?\s*$")

COMMANDS = [
    ("tasks", "your open tasks"),
    ("topics", "topics and their tasks"),
    ("today", "look at what's new, now"),
    ("quiet", "hold non-urgent messages, e.g. /quiet 3h (/quiet off ends it)"),
    ("budget", "what the language model cost today"),
    ("expired", "proposals that ran out of time, to bring back"),
    ("help", "what I understand"),
]
HELP = ("I'm Wilson. Write to me as you would to a person; I'll ask before I change anything.\n\n"
        + "\n".join(f"/{name} — {what}" for name, what in COMMANDS))
REFUSAL = ("Sorry, I only talk with the person I work for. If that's you, run: wilson pair "
           "on the computer I run on, then send me /start followed by the code it prints.")


def cannot_be_fixed_by_retrying(exc: BaseException) -> bool:
    """Telegram refused this message for good (or it has nowhere to go); anything else is an outage
    or a hiccup and passes. An error of Wilson's own (not Telegram's, not the network's, not the
    database's) is not retried either: the same row would fail the same way and hold back the rest."""
    if isinstance(exc, (BadRequest, Forbidden, ChatMigrated, NoRecipient)):
        return True
    return not isinstance(exc, (TelegramError, OSError, TimeoutError, peewee.OperationalError,
                                peewee.InterfaceError))


def put_cursor(name: str, value, at: datetime) -> None:
    Cursor.insert(name=name, value=value, updated_at=at).on_conflict(
        conflict_target=[Cursor.name], update={Cursor.value: value, Cursor.updated_at: at}).execute()


def modify_still_wanted(awaiting: dict, now: datetime) -> bool:
    """After Modify, the next words are the change: unless the proposal was settled meanwhile
    or the user went on to other things (an hour later, it is a new message)."""
    approval = Approval.get_or_none(Approval.id == awaiting.get("approval_id"))
    asked = datetime.fromisoformat(awaiting["at"]) if awaiting.get("at") else None
    return (approval is not None and approval.status in ("pending", "partial")
            and asked is not None and now - asked < MODIFY_WAIT)


def quiet_client_loggers() -> None:
    """httpx logs every request URL at INFO, and the URL carries the bot token."""
    for name in ("httpx", "httpcore", "telegram"):
        logging.getLogger(name).setLevel(logging.WARNING)


@dataclass(frozen=True)
class Incoming:
    """One message or press being handled: who sent it, where an answer goes (`where`: the chat and
    thread; `reply`: the message it answers), its update's key, when, and what to do once committed."""

    uid: str
    where: dict
    reply: dict
    key: str
    now: datetime
    after: list


class NoRecipient(Exception):
    """Nobody to send to: no allowed user is configured and nobody has paired."""


class TelegramChannel(Channel):
    name = "telegram"
    realtime = True
    can_deliver = True

    backoff_base = 0.25  # first wait after a failed poll, seconds; doubles each time
    backoff_max = 30.0
    retry_base = 0.25  # first wait after a failed send, seconds; doubles each time up to retry_max
    call_deadline = 300.0  # editing a settled proposal's message, forum topics: cosmetic, given up after this
    delay_note_after = timedelta(minutes=1)  # a shorter outage is not worth a line
    stop_grace = 3.0  # on stop, deliveries in flight get this long to finish
    health_every = 60.0  # seconds between health writes while the state stays the same

    def __init__(self, ctx, name: str | None = None):
        super().__init__(ctx, name)
        self.looper = LoopThread(self.name, describe)
        self.bot: ExtBot | None = None  # sends; behind the rate limiter
        self.poller: ExtBot | None = None  # getUpdates only; replaced when polling stalls
        self._send_lock: asyncio.Lock | None = None
        self._poll_task: asyncio.Task | None = None
        self._watch_task: asyncio.Task | None = None
        self._pump_task: asyncio.Task | None = None
        self._wake: asyncio.Event | None = None
        self._stopping = False
        self._send_failures = 0  # in a row; the backoff grows with it
        self._retry_at = 0.0  # monotonic: the oldest owed row is not tried again before this
        self._last_ok = 0.0
        self._restarts = 0
        self._health_state = ""
        self._health_written = 0.0
        self._commands_set = False

    # Configuration ---------------------------------------------------------
    @property
    def token(self) -> str:
        return str(self.config.get("telegram", "token") or "")

    @property
    def forum_chat(self) -> int | None:
        value = parse_ids([self.config.get("telegram", "forum_chat_id") or ""])
        return int(value[0]) if value else None

    @property
    def poll_timeout(self) -> int:
        return max(0, int(self.config.get("telegram", "poll_timeout") or 0))

    @property
    def liveness(self) -> float:
        # A long poll legitimately stays silent for poll_timeout seconds; never call that a stall.
        return max(float(self.config.get("telegram", "liveness_seconds") or 120), self.poll_timeout + 2.0)

    @property
    def retry_max(self) -> float:
        return max(0.01, float(self.config.get("telegram", "retry_max_seconds") or 30.0))

    def allowed(self, user_id: str) -> bool:
        return is_allowed(self.config, user_id)

    # Lifecycle (actor thread) ----------------------------------------------
    def on_start(self):
        quiet_client_loggers()
        self.looper.start(self._setup, timeout=10)
        super().on_start()

    def on_stop(self):
        self._close_loop()

    def on_failure(self, exception_type, exception_value, traceback):
        self._close_loop()  # the replacement starts its own poller; two must never run at once
        super().on_failure(exception_type, exception_value, traceback)

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        return self.looper.loop

    @property
    def thread(self) -> threading.Thread | None:
        return self.looper.thread

    def _close_loop(self) -> None:
        self.looper.close(self._teardown, timeout=self.stop_grace + 10)

    # Actor side ----------------------------------------------------------------
    def receive_other(self, message):
        if isinstance(message, ApprovalSettled):
            self.spawn(self._settle(message.approval_id))
        else:
            super().receive_other(message)

    def deliver_row(self, outbox_id: int) -> None:
        """Wake the sender and return: the row is in the database, and Telegram may keep us waiting."""
        loop = self.loop
        if loop is not None and self._wake is not None:
            loop.call_soon_threadsafe(self._wake.set)

    def spawn(self, coro) -> None:
        """Run `coro` on the loop as a tracked job, from either thread."""
        self.looper.spawn(coro)

    # Loop side: setup and teardown ------------------------------------------
    def _request(self, read_timeout: float) -> HTTPXRequest:
        return HTTPXRequest(connection_pool_size=8, connect_timeout=5.0, read_timeout=read_timeout,
                            write_timeout=10.0, pool_timeout=5.0)

    def _make_poller(self) -> ExtBot:
        return ExtBot(self.token, base_url=self.config.get("telegram", "base_url"),
                      request=self._request(10.0), get_updates_request=self._request(10.0))

    async def _setup(self) -> None:
        self._send_lock = asyncio.Lock()
        self.bot = ExtBot(self.token, base_url=self.config.get("telegram", "base_url"),
                          request=self._request(15.0), get_updates_request=self._request(10.0),
                          rate_limiter=AIORateLimiter(max_retries=2))
        self.poller = self._make_poller()
        self._last_ok = clockmod.monotonic()
        self._wake = asyncio.Event()
        loop = asyncio.get_running_loop()
        self._poll_task = loop.create_task(self._poll())
        self._watch_task = loop.create_task(self._watch())
        self._pump_task = loop.create_task(self._pump())
        if self.forum_chat is not None:
            self.looper.spawn(self._renames_owed())

    async def _teardown(self) -> None:
        self._stopping = True
        if self._pump_task is not None:  # a send in flight may finish: its row is then marked delivered
            self._wake.set()
            await asyncio.wait([self._pump_task], timeout=self.stop_grace)
            self._pump_task.cancel()
            await asyncio.gather(self._pump_task, return_exceptions=True)
        for task in (self._watch_task, self._poll_task):
            if task is not None:
                task.cancel()
        await asyncio.gather(*(t for t in (self._watch_task, self._poll_task) if t), return_exceptions=True)
        await self.looper.finish_jobs(self.stop_grace)
        for bot in (self.poller, self.bot):
            if bot is not None:
                try:
                    await bot.shutdown()
                except Exception as exc:
                    logger.debug("closing the client: {}", describe(exc))
        try:
            self._health("stopped", force=True)
        except peewee.PeeweeException:
            pass
        if not database.is_closed():
            database.close()  # this thread's connection

    # Loop side: polling ---------------------------------------------------------
    async def _poll(self) -> None:
        failures = 0
        ready = False
        offset = self._stored_offset()
        while True:
            try:
                if not ready:
                    await self.poller.initialize()
                    await self.poller.delete_webhook(drop_pending_updates=False)
                    await self._register_commands()
                    ready = True
                batch = await self._fetch(offset)
                self._last_ok = clockmod.monotonic()
                for raw in batch:
                    offset = self._take(raw, offset)
                if batch and all(usable_update_id(raw) is None for raw in batch):
                    # entries without an id cannot be acknowledged and may come back: do not spin on them
                    raise TelegramError("getUpdates answered only with entries that have no usable update_id")
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # Telegram down, token revoked, database busy: keep trying, loudly
                failures += 1
                wait = min(self.backoff_base * 2 ** min(failures - 1, 20), self.backoff_max)
                if failures == 1 or isinstance(exc, InvalidToken):
                    logger.warning("Telegram getUpdates failed ({}); retrying in {:.1f}s", describe(exc), wait)
                self._health("retrying", error=describe(exc))
                await asyncio.sleep(wait)
                continue
            if failures:
                logger.info("polling again after {} failed attempt(s)", failures)
            failures = 0
            self._health("polling")

    async def _register_commands(self) -> None:
        if self._commands_set:
            return
        try:
            await self.poller.set_my_commands([BotCommand(name, what[:256]) for name, what in COMMANDS])
            self._commands_set = True
        except TelegramError as exc:  # a missing command menu is cosmetic
            logger.info("could not set the command menu: {}", describe(exc))

    async def _watch(self) -> None:
        """Liveness: a poller with no successful getUpdates for too long is replaced."""
        while True:
            await asyncio.sleep(min(1.0, self.liveness / 4))
            silent = clockmod.monotonic() - self._last_ok
            if silent <= self.liveness:
                continue
            self._restarts += 1
            logger.warning("no successful Telegram getUpdates for {:.0f}s; restarting the polling loop", silent)
            self._health("restarting", force=True)
            self._poll_task.cancel()
            await asyncio.gather(self._poll_task, return_exceptions=True)
            old, self.poller = self.poller, self._make_poller()
            try:
                await asyncio.wait_for(old.shutdown(), timeout=5)
            except Exception as exc:
                logger.debug("closing the stalled client: {}", describe(exc))
            self._last_ok = clockmod.monotonic()
            self._poll_task = asyncio.get_running_loop().create_task(self._poll())

    async def _fetch(self, offset: int | None) -> list:
        """One getUpdates call, as raw JSON: PTB's get_updates reads the whole batch at once, and one
        update it cannot read would fail every call at the same offset."""
        data = {"offset": offset, "timeout": self.poll_timeout, "allowed_updates": ALLOWED_UPDATES}
        batch = await self.poller._post("getUpdates", data, read_timeout=10.0 + self.poll_timeout)
        if not isinstance(batch, list):
            raise TelegramError(f"getUpdates answered with {type(batch).__name__}, not a list of updates")
        return batch

    def _stored_offset(self) -> int | None:
        row = Cursor.get_or_none(Cursor.name == OFFSET_CURSOR)
        return int(row.value) if row is not None and row.value is not None else None

    def _health(self, state: str, *, error: str | None = None, force: bool = False) -> None:
        """Cursor health:telegram for `wilson status`: written when the state changes, else at most once
        every `health_every` seconds (a quiet, healthy poll writes nothing in between)."""
        now = clockmod.monotonic()
        if not force and state == self._health_state and now - self._health_written < self.health_every:
            return
        value = {"state": state, "restarts": self._restarts,
                 "last_ok": (clockmod.wall_now() - timedelta(seconds=now - self._last_ok)).isoformat(
                     timespec="seconds")}
        if error:
            value["error"] = error[:300]
        put_cursor(HEALTH_CURSOR, value, clockmod.wall_now())
        self._health_state, self._health_written = state, now

    # Loop side: one update ------------------------------------------------------
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
                trace.record(trace.new_trace_id(), "skipped", self.name, f"Telegram update {update_id} {why}",
                             now, data)
                if update_id is not None:
                    put_cursor(OFFSET_CURSOR, offset, now)
        except (peewee.OperationalError, peewee.InterfaceError):
            raise  # the database is busy or gone: the poller asks for this update again
        except Exception as exc:  # the trace itself would not store: the offset still moves on
            logger.error("could not trace skipped update {}: {}", update_id, describe(exc))
            if update_id is not None:
                put_cursor(OFFSET_CURSOR, offset, now)
        return offset

    def _receive(self, update: Update, offset: int | None = None, raw=None) -> int:
        """Handle one update and advance the offset in the same transaction; returns the next offset."""
        now = self.now()
        after: list = []  # what to tell whom once the transaction is committed
        offset = max(offset or 0, update.update_id + 1)
        try:
            with database.atomic():
                self._interpret(update, now, after)
                put_cursor(OFFSET_CURSOR, offset, now)
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
            self._message(update.update_id, update.message or update.edited_message, update.message is None,
                          now, after)
        else:
            logger.debug("update {} of a kind Wilson does not use", update.update_id)

    def _message(self, update_id: int, message: Message, edited: bool, now: datetime, after: list) -> None:
        user = message.from_user
        if user is None or user.is_bot:
            return
        where = {"chat_id": message.chat.id}
        if message.is_topic_message and message.message_thread_id:
            where["thread_id"] = message.message_thread_id
        incoming = Incoming(uid=str(user.id), where=where,
                            reply={"chat_id": message.chat.id, "message_id": message.message_id},
                            key=f"telegram:{update_id}", now=now, after=after)
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

    def _lifecycle(self, incoming: Incoming, text: str) -> bool:
        """"show expired" and "revive N", as the expiry notice tells the user to say: handled by code, like a
        press; True when these words were one of them."""
        if SHOW_EXPIRED.match(text):
            self._show_expired(incoming)
            return True
        match = REVIVE_WORDS.match(text)
        if not match:
            return False
        approval_id = int(match.group(1))
        put_setting(DECISION_CHAT + str(approval_id), incoming.where)
        row = decisions.record(approval_id=approval_id, action=REVIVE, user_id=incoming.uid, channel=self.name,
                               at=incoming.now)
        incoming.after.append(lambda: self.tell("approval", DecisionRecorded(row.id)))
        return True

    def _show_expired(self, incoming: Incoming) -> None:
        from wilson import views

        rows = views.expired(self.config.timezone)
        mine = [r for r in rows if may_decide(incoming.uid, Approval.get_by_id(r["id"]), self._owner_decides())]
        text = views.table("expired", mine)
        if mine:
            text += "\n\nPress a button (or say “revive N”) to bring one back."
        where = incoming.where
        payload = {"chat_id": where["chat_id"], "thread_id": where.get("thread_id"), "reply_to": incoming.reply,
                   "revive": [{"id": r["id"], "nonce": Approval.get_by_id(r["id"]).nonce} for r in mine]}
        box = outbox.add(channel=self.name, text=text, trace_id=trace.new_trace_id(), key=f"{incoming.key}:expired",
                         at=incoming.now, payload=payload)
        incoming.after.append(lambda: self.tell(self.name, Deliver(box.id)))

    def _owner_decides(self) -> str | None:
        return self.config.get("core", "owner") if self.config.get("approval", "owner_decides_all") else None

    def _modification(self, incoming: Incoming, text: str) -> bool:
        """After Modify, the user's next words are the change; True when these words were it."""
        awaiting = get_setting(AWAITING_MODIFY + incoming.uid)
        if not awaiting:
            return False
        delete_setting(AWAITING_MODIFY + incoming.uid)
        if not modify_still_wanted(awaiting, incoming.now):
            return False
        put_setting(DECISION_CHAT + str(awaiting["approval_id"]), incoming.where)
        row = decisions.record(approval_id=int(awaiting["approval_id"]), action="modify", user_id=incoming.uid,
                               channel=self.name, at=incoming.now, text=text, nonce=awaiting.get("nonce"))
        incoming.after.append(lambda: self.tell("approval", DecisionRecorded(row.id)))
        return True

    def _words(self, incoming: Incoming, message: Message, text: str, edited: bool) -> None:
        """Words for the model: committed to the inbox with where they came from and what they answer."""
        media = media_kind(message)
        if media and not edited:  # the note was given when the message was first sent
            note = (f"I can't read {media[1]} yet, so I only read your caption." if text
                    else f"I can't read {media[1]} yet. Could you tell me in words?")
            self._reply(note, incoming, "media")
        if not text:
            return
        where = incoming.where
        payload = {"chat_id": message.chat.id, "message_id": message.message_id, "message_ref": dict(incoming.reply)}
        if "thread_id" in where:
            payload["thread_id"] = payload["message_ref"]["thread_id"] = where["thread_id"]
            topic = (Topic.get_or_none(Topic.thread_ref == str(where["thread_id"]))
                     if message.chat.id == self.forum_chat else None)
            if topic is not None:
                payload["topic_id"] = topic.id
        replied = message.reply_to_message
        if replied is not None and replied.forum_topic_created is None:  # a topic's root is no reply
            payload["reply_to"] = self._replied_context(message.chat.id, replied)
            if payload["reply_to"].get("topic_id") and "topic_id" not in payload:
                payload["topic_id"] = payload["reply_to"]["topic_id"]
        if edited:
            payload["edited"] = True
            earlier = self._earlier_words(incoming.uid, message.chat.id, message.message_id)
            if earlier is not None:
                payload["replaces"] = {"inbox_id": earlier.id, "text": earlier.text[:1000]}
        if media:
            payload["attachment"] = media[0]
        row = thalamus.commit_realtime(source=self.name, text=text, user_id=incoming.uid, at=incoming.now,
                                       dedup_key=incoming.key, payload=payload)
        if row is not None:
            incoming.after.append(lambda: self.tell("thalamus", StimulusCommitted("inbox", row.id, row.trace_id)))

    def _earlier_words(self, uid: str, chat_id: int, message_id: int) -> Inbox | None:
        """The inbox row of the message an edit corrects (its latest version), if Wilson heard it."""
        rows = (Inbox.select().where((Inbox.source == self.name) & (Inbox.user_id == uid))
                .order_by(Inbox.id.desc()).limit(200))
        for row in rows:
            payload = row.payload or {}
            if payload.get("message_id") == message_id and str(payload.get("chat_id")) == str(chat_id):
                return row
        return None

    def _replied_context(self, chat_id: int, replied: Message) -> dict:
        row = self._delivered_row(chat_id, replied.message_id)
        if row is None:
            return {"text": clean_text(replied.text or replied.caption or "", 1000), "from_wilson": False}
        context = {"text": row.text[:1000], "topic_id": (row.payload or {}).get("topic_id"), "outbox_id": row.id,
                   "from_wilson": True}
        topic = Topic.get_or_none(Topic.id == context["topic_id"]) if context["topic_id"] else None
        if topic is not None:
            context["topic"] = topic.title
        return context

    def _delivered_row(self, chat_id: int, message_id: int) -> Outbox | None:
        """The outbox row a delivered Telegram message came from, however long ago it was sent."""
        sent = SentMessage.get_or_none((SentMessage.channel == self.name) & (SentMessage.chat_id == str(chat_id))
                                       & (SentMessage.message_id == str(message_id)))
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
            self._reply("That code is not the one I expect, but you're already paired.\n\n" + HELP, incoming,
                        "reply")
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
        from wilson import views

        tz = self.config.timezone
        if name in ("start", "help"):
            text = HELP
        elif name == "tasks":
            text = views.table("tasks", views.tasks(tz, "open", incoming.uid, self.config.get("core", "owner")))
        elif name == "topics":
            text = views.table("topics", views.topics(tz, incoming.uid, self.config.get("core", "owner")))
        elif name == "today":
            incoming.after.append(lambda: self.tell("thalamus", SyncRequest("manual")))
            text = "Looking…"
        elif name == "quiet":
            text = self._quiet(argument, incoming.now)
        elif name == "budget":
            text = self.ctx.synapse.budget_report()
        elif name == "expired":
            self._show_expired(incoming)
            return
        else:
            text = f"I don't know /{name}. /help lists what I understand."
        self._reply(text, incoming, "reply")

    def _quiet(self, argument: str, now: datetime) -> str:
        from wilson import views

        return views.quiet(argument, now, self.config.timezone, "/quiet")

    def _reply(self, text: str, incoming: Incoming, what: str) -> None:
        """Queue an answer to the chat a message came from (delivered like every other outbox row);
        `what` names the answer among those to the same update (its idempotency key)."""
        where = incoming.where
        payload = {"chat_id": where["chat_id"], "thread_id": where.get("thread_id"), "reply_to": incoming.reply}
        box = outbox.add(channel=self.name, text=text, trace_id=trace.new_trace_id(), key=f"{incoming.key}:{what}",
                         at=incoming.now, payload=payload)
        incoming.after.append(lambda: self.tell(self.name, Deliver(box.id)))

    def _press(self, update_id: int, query, now: datetime, after: list) -> None:
        uid = str(query.from_user.id)

        def answer(text: str) -> None:
            after.append(lambda: self.spawn(self._answer(query.id, text)))

        if not self.allowed(uid):
            logger.warning("refused a button press from Telegram user {} (not allowed)", uid)
            answer("Sorry, these buttons are not for you.")
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
        put_setting(DECISION_CHAT + str(approval_id), where)
        if action == REVIVE:  # the gate says whether it can come back; its new proposal is the answer
            row = decisions.record(approval_id=approval_id, action=REVIVE, user_id=uid, channel=self.name, at=now,
                                   nonce=nonce)
            after.append(lambda: self.tell("approval", DecisionRecorded(row.id)))
            answer("Bringing it back…")
            return
        if action == SHOW:
            self._show_again(update_id, uid, where, approval_id, nonce, now, answer, after)
            return
        decision = Decision(approval_id=approval_id, action=action, user_id=uid, channel=self.name, nonce=nonce)
        # The gate decides; this early look only picks the words of the quick answer.
        problem = check(decision, Approval.get_or_none(Approval.id == approval_id), now, self.config.timezone)
        if action == "modify" and not problem:
            put_setting(AWAITING_MODIFY + uid, {"approval_id": approval_id, "nonce": nonce, "at": now.isoformat()})
            incoming = Incoming(uid=uid, where=where, reply={}, key=f"telegram:{update_id}", now=now, after=after)
            self._reply(f"What should I change in proposal {approval_id}? Tell me in your next message.", incoming,
                        "modify")
            answer("Tell me what to change.")
            return
        delete_setting(AWAITING_MODIFY + uid)  # a press instead of the change: the next words are a message again
        items: tuple[int, ...] = ()
        left_out = set(get_setting(LEFT_OUT + str(approval_id)) or ()) if action == "approve" and not problem else set()
        if left_out:  # toggled: these items, and not the others
            pending = [i.position for i in ApprovalItem.select(ApprovalItem.position).where(
                (ApprovalItem.approval == approval_id) & (ApprovalItem.status == "pending"))]
            items = tuple(sorted(p for p in pending if p not in left_out))
            if not items:
                answer("Nothing is chosen: tick at least one item, or press Reject.")
                return
            action = "confirm"
            delete_setting(LEFT_OUT + str(approval_id))
        # A row in the offset's transaction: a press is never acknowledged to Telegram and then lost.
        row = decisions.record(approval_id=approval_id, action=action, user_id=uid, channel=self.name, at=now,
                               items=items, nonce=nonce)
        after.append(lambda: self.tell("approval", DecisionRecorded(row.id)))
        answer(problem[:CALLBACK_ANSWER_MAX] if problem else {"approve": "Approving…", "confirm": "Approving…",
                                                               "reject": "Rejecting…"}.get(action, "OK"))

    def _show_again(self, update_id: int, uid: str, where: dict, approval_id: int, nonce: str, now: datetime,
                    answer, after: list) -> None:
        """"Show" under the briefing: the proposal again, with its buttons, where the press was made. The row is
        written in the offset's transaction, so the press is shown once, even across a kill."""
        approval = Approval.get_or_none(Approval.id == approval_id)
        decision = Decision(approval_id=approval_id, action="approve", user_id=uid, channel=self.name, nonce=nonce)
        problem = check(decision, approval, now, self.config.timezone, self._owner_decides())
        if problem:
            answer(problem[:CALLBACK_ANSWER_MAX])
            return
        items = [{"position": i.position, "description": i.description}
                 for i in approval.items.where(ApprovalItem.status == "pending").order_by(ApprovalItem.position)]
        payload = {"chat_id": where["chat_id"], "thread_id": where.get("thread_id"), "shown_again": True,
                   "approval": {"id": approval.id, "nonce": approval.nonce,
                                "actions": ["approve", "modify", "reject"], "items": items}}
        box = outbox.add(channel=self.name, text=render(approval, self.config.timezone), trace_id=approval.trace_id,
                         key=f"telegram:{update_id}:show", at=now, payload=payload)
        after.append(lambda: self.tell(self.name, Deliver(box.id)))
        answer(f"Here is proposal {approval.id}.")

    def _waiting(self, ids) -> list[dict]:
        """The proposals among `ids` still waiting for an answer now, in the order given."""
        wanted = [i for i in ids if isinstance(i, int) and not isinstance(i, bool)] if isinstance(ids, list) else []
        now = self.now()
        found = {a.id: a for a in Approval.select().where(Approval.id.in_(wanted) & Approval.status.in_(OPEN)
                                                          & (Approval.expires_at > now))} if wanted else {}
        return [{"id": found[i].id, "nonce": found[i].nonce} for i in wanted if i in found]

    def _toggle(self, uid: str, query, toggle: tuple[int, int, str], now: datetime, answer, after: list) -> None:
        """An item's toggle: which items Approve will approve. Kept as a row in the offset's transaction, so the
        choice survives a restart; the buttons are redrawn after the commit."""
        approval_id, position, nonce = toggle
        approval = Approval.get_or_none(Approval.id == approval_id)
        decision = Decision(approval_id=approval_id, action="approve", user_id=uid, channel=self.name, nonce=nonce)
        problem = check(decision, approval, now, self.config.timezone, self._owner_decides())
        item = None if problem else ApprovalItem.get_or_none(
            (ApprovalItem.approval == approval_id) & (ApprovalItem.position == position)
            & (ApprovalItem.status == "pending"))
        if problem or item is None:
            answer((problem or "That item is already decided.")[:CALLBACK_ANSWER_MAX])
            return
        left_out = set(get_setting(LEFT_OUT + str(approval_id)) or ())
        left_out ^= {position}
        put_setting(LEFT_OUT + str(approval_id), sorted(left_out))
        title = " ".join(item.description.split())[:80]
        answer((f"Left out: {title}" if position in left_out else f"Back in: {title}")[:CALLBACK_ANSWER_MAX])
        message = query.message
        if isinstance(message, Message):
            chat_id, message_id = message.chat.id, message.message_id
            after.append(lambda: self.spawn(self._redraw(approval_id, chat_id, message_id)))

    def _markup(self, approval: Approval):
        """A proposal's buttons as they stand: its pending items, with the ones toggled off shown so."""
        items = [{"position": i.position, "description": i.description}
                 for i in approval.items.where(ApprovalItem.status == "pending").order_by(ApprovalItem.position)]
        return keyboard({"id": approval.id, "nonce": approval.nonce, "actions": ["approve", "modify", "reject"],
                         "items": items}, get_setting(LEFT_OUT + str(approval.id)) or ())

    async def _redraw(self, approval_id: int, chat_id: int, message_id: int) -> None:
        async with self._send_lock:  # never after the settled edit has taken the buttons away
            approval = Approval.get_or_none(Approval.id == approval_id)
            if approval is None or approval.status not in OPEN:
                return
            try:
                await self._call("editMessageReplyMarkup", lambda: self.bot.edit_message_reply_markup(
                    chat_id=chat_id, message_id=message_id, reply_markup=self._markup(approval)))
            except (TelegramError, TimeoutError) as exc:  # not modified, or deleted: the choice is kept anyway
                logger.info("proposal {} buttons not redrawn: {}", approval_id, describe(exc))

    async def _answer(self, query_id: str, text: str) -> None:
        try:
            await self._call("answerCallbackQuery", lambda: self.bot.answer_callback_query(query_id, text=text),
                             deadline=15.0)
        except (TelegramError, TimeoutError) as exc:  # answered already, too old: the decision still counts
            logger.info("could not answer a button press: {}", describe(exc))

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

    # Loop side: delivering ---------------------------------------------------------
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
            trace.record(row.trace_id, "resending", self.name,
                         f"outbox {row.id}: the last send was cut short by a stop; sending again, "
                         "so Telegram may show it twice", now, {"outbox_id": row.id})
        faults.point("telegram:before-send")
        note = None
        try:
            done = outbox.partial(row)
            chat_id, thread_id = (int(done["chat_id"]), done.get("thread_id")) if done else self._route(row)
            note = None if done else self._delay_note(chat_id, now)
            result = await self._send_row(row, chat_id, thread_id, note, done)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self._failed(row, exc, attempts)
            return
        self._send_failures, self._retry_at = 0, 0.0
        approval = (row.payload or {}).get("approval")
        if note:
            result["delay_note"] = note

        def remember() -> None:  # its ids, for replies and reactions; a proposal's, to edit it
            SentMessage.insert_many([{"channel": self.name, "chat_id": str(result["chat_id"]),
                                      "message_id": str(message_id), "outbox_id": row.id}
                                     for message_id in result["message_ids"]]).on_conflict_ignore().execute()
            if approval:
                Approval.update(message_ref={"chat_id": result["chat_id"],
                                             "message_id": result["message_ids"][-1]}).where(
                    Approval.id == approval["id"]).execute()
            if note:
                self._told_of_delay(result["chat_id"])

        self.record_delivery(row, result, self.now(), also=remember)
        again = (row.payload or {}).get("shown_again")  # the original's message was settled when it was replaced
        replaced = Approval.get_or_none(Approval.id == approval["id"]).supersedes if approval and not again else None
        if replaced:  # the original's message now names the proposal that replaced it
            self.spawn(self._settle(replaced))

    def _failed(self, row: Outbox, exc: BaseException, attempts: int) -> None:
        reason = describe(exc)
        now = self.now()
        if cannot_be_fixed_by_retrying(exc):
            logger.warning("outbox {} not delivered on Telegram: {}", row.id, reason)
            self.record_failure(row, reason, now, counted=True)
            return
        self._send_failures += 1
        wait = min(self.retry_base * 2 ** min(self._send_failures - 1, 20), self.retry_max)
        if isinstance(exc, RetryAfter):
            wait = max(wait, retry_seconds(exc) + 0.1)
        self._retry_at = clockmod.monotonic() + wait
        logger.warning("Telegram sendMessage failed ({}); outbox {} tried again in {:.2f}s", reason, row.id, wait)
        self.record_retry(row, reason, now, now + timedelta(seconds=wait), attempts=attempts,
                          also=lambda: self._outage_begins(now))

    # The outage: when sends began to fail, and which chats were told their messages were late.
    def _outage_begins(self, at: datetime) -> None:
        if Cursor.get_or_none(Cursor.name == OUTAGE_CURSOR) is None:
            put_cursor(OUTAGE_CURSOR, {"since": at.isoformat(), "told": []}, at)

    def _delay_note(self, chat_id: int, now: datetime) -> str | None:
        row = Cursor.get_or_none(Cursor.name == OUTAGE_CURSOR)
        outage = row.value if row is not None and isinstance(row.value, dict) else None
        if not outage or str(chat_id) in outage.get("told", []):
            return None
        since = datetime.fromisoformat(outage["since"])
        if now - since < self.delay_note_after:
            return None
        return delay_note(since, now, self.config.timezone)

    def _told_of_delay(self, chat_id: int) -> None:
        row = Cursor.get_or_none(Cursor.name == OUTAGE_CURSOR)
        if row is not None and isinstance(row.value, dict):
            value = dict(row.value, told=sorted(set(row.value.get("told", [])) | {str(chat_id)}))
            put_cursor(OUTAGE_CURSOR, value, self.now())

    def _outage_over(self) -> None:
        """Nothing is owed any more: a later outage starts its own story."""
        if self._send_failures == 0 and Cursor.get_or_none(Cursor.name == OUTAGE_CURSOR) is not None:
            Cursor.delete().where(Cursor.name == OUTAGE_CURSOR).execute()

    async def _send_row(self, row: Outbox, chat_id: int, thread_id: int | None, note: str | None,
                        done: dict) -> dict:
        """Send the parts of a row not shown yet; each further part's send is recorded before it starts."""
        payload = row.payload or {}
        markup = None
        if payload.get("approval"):
            markup = keyboard(payload["approval"], get_setting(LEFT_OUT + str(payload["approval"].get("id"))) or ())
        elif payload.get("revive"):
            revive = payload["revive"]
            markup = revive_keyboard(revive if isinstance(revive, list) else [revive]) or None
            if markup is not None and not markup.inline_keyboard:
                markup = None
        elif payload.get("proposals"):  # the morning briefing: those still waiting get their buttons
            markup = briefing_keyboard(self._waiting(payload["proposals"]))
        reply = payload.get("reply_to")
        reply_to = None
        if isinstance(reply, dict) and reply.get("message_id") and int(reply.get("chat_id") or chat_id) == chat_id:
            reply_to = ReplyParameters(message_id=int(reply["message_id"]), allow_sending_without_reply=True)
        text = row.text or ""
        pieces = split_text(text, MAX_TEXT - NOTE_ROOM) if text.strip() else ["…"]
        ids = list(done.get("message_ids") or [])
        for index in range(len(ids), len(pieces)):
            if index > len(done.get("message_ids") or []):
                outbox.record_progress(row.id, {"chat_id": chat_id, "thread_id": thread_id, "message_ids": ids},
                                       self.now())
            piece = f"{note}\n\n{pieces[index]}" if note and index == 0 else pieces[index]
            sent = await self.bot.send_message(chat_id=chat_id, text=piece, message_thread_id=thread_id,
                                               reply_parameters=reply_to if index == 0 else None,
                                               reply_markup=markup if index == len(pieces) - 1 else None)
            faults.point("telegram:after-send")
            ids.append(sent.message_id)
        return {"chat_id": chat_id, "message_ids": ids, "thread_id": thread_id}

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
            where = get_setting(DECISION_CHAT + str(decision.get("approval_id")))
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
        if approval.supersedes:
            where = get_setting(DECISION_CHAT + str(approval.supersedes))
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

    # Loop side: settled proposals -------------------------------------------------
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
                logger.info("proposal {} settled but its message is unknown; nothing to edit",
                            approval_id)
                return
            try:
                await self._call("editMessageText", lambda: self.bot.edit_message_text(
                    text=settled_text(approval), chat_id=ref["chat_id"], message_id=ref["message_id"],
                    reply_markup=None))
            except BadRequest as exc:  # not modified (settled twice) or deleted by the user
                logger.info("proposal {} message not edited: {}", approval_id, describe(exc))

    async def _redraw_briefing(self, approval_id: int) -> None:
        """The latest briefings that offered this proposal keep buttons only for what is still waiting."""
        rows = (Outbox.select().where((Outbox.channel == self.name) & Outbox.idempotency_key.startswith("briefing:")
                                      & (Outbox.status == "delivered")).order_by(Outbox.id.desc()).limit(3))
        for row in rows:
            ids, result = (row.payload or {}).get("proposals") or [], row.result or {}
            if approval_id not in ids or not result.get("message_ids") or not result.get("chat_id"):
                continue
            try:
                await self._call("editMessageReplyMarkup", lambda: self.bot.edit_message_reply_markup(
                    chat_id=result["chat_id"], message_id=result["message_ids"][-1],
                    reply_markup=briefing_keyboard(self._waiting(ids))))
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
                    forum_topic = await self._call("createForumTopic", lambda: self.bot.create_forum_topic(
                        chat_id=self.forum_chat, name=topic.title[:128]))
                    Topic.update(thread_ref=str(forum_topic.message_thread_id)).where(Topic.id == topic.id).execute()
                    logger.info("topic {} mirrored to forum thread {}", topic.id,
                                forum_topic.message_thread_id)
                elif item.tool == "rename_topic" and topic.thread_ref:
                    await self._rename_thread(item, topic)
                elif item.tool == "close_topic" and topic.thread_ref:
                    await self._call("closeForumTopic", lambda: self.bot.close_forum_topic(
                        chat_id=self.forum_chat, message_thread_id=int(topic.thread_ref)))
            except (TelegramError, TimeoutError) as exc:
                logger.warning("forum topic for topic {} not updated: {}", topic.id, describe(exc))

    async def _renames_owed(self) -> None:
        """Renames approved while the process was down, or killed before Telegram heard of them."""
        async with self._send_lock:
            items = ApprovalItem.select().where((ApprovalItem.tool == "rename_topic")
                                                & (ApprovalItem.status == "executed")).order_by(ApprovalItem.id)
            for item in items:
                topic_id = (item.result or {}).get("topic_id")
                topic = Topic.get_or_none(Topic.id == topic_id) if topic_id else None
                if topic is None or not topic.thread_ref or get_setting(RENAMED + str(item.id)):
                    continue
                try:
                    await self._rename_thread(item, topic)
                except (TelegramError, TimeoutError) as exc:
                    logger.warning("forum topic for topic {} not renamed: {}", topic.id, describe(exc))

    async def _rename_thread(self, item: ApprovalItem, topic: Topic) -> None:
        """The forum thread takes the topic's new name, once per approved rename (a proposal settled again,
        say when its replacement is shown, does not rename it again)."""
        done = RENAMED + str(item.id)
        if get_setting(done):
            return
        name = topic.title[:128]
        faults.point("telegram:before-rename-thread")
        try:
            await self._call("editForumTopic", lambda: self.bot.edit_forum_topic(
                chat_id=self.forum_chat, message_thread_id=int(topic.thread_ref), name=name))
        except BadRequest as exc:
            if "not_modified" not in str(exc).lower().replace(" ", "_"):
                raise
        put_setting(done, name)
        logger.info("forum thread {} of topic {} renamed", topic.thread_ref, topic.id)
