"""Telegram: Wilson's main channel, on python-telegram-bot's Bot API client.

Threads. The channel is a Pykka actor that owns an asyncio event loop running in
a thread of its own (started in `on_start`, stopped in `on_stop`). The polling
loop, the liveness watchdog and every Bot API call run on that loop. The loop
crosses into Pykka only with `directory.tell`; the actor crosses into the loop
with `run_coroutine_threadsafe`.

Inbound. Wilson runs its own getUpdates loop instead of PTB's Updater, which
acknowledges updates before they are handled. getUpdates is fetched as raw JSON
and each entry is read on its own (`text.parse_update`): an entry that
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
error goes through `wilson.kernel.logs.redact` first.

The package, along its seams: `channel` (the actor and its loop's lifecycle), `polling`,
`inbound` (one update), `buttons` (answers to proposals), `outbound` (delivering),
`placement` (where a message goes), `forum`, `access` (who is heard), `text` (parsing and
formatting, no I/O) and `state` (the cursors and settings it keeps).
"""

import importlib

from channels.telegram.access import owner_id
from channels.telegram.state import HEALTH_CURSOR, RENAMED, NoRecipient

__all__ = ["HEALTH_CURSOR", "REFUSAL", "RENAMED", "NoRecipient", "TelegramChannel", "owner_id"]

# lazy: the channel and its reading of updates bring python-telegram-bot's ext package, the handover's readers and
# the calendar channel (some 3 MiB), wanted only where Telegram runs; the application and the commands only ask
# who the owner is
_LATER = {"TelegramChannel": "channels.telegram.channel", "REFUSAL": "channels.telegram.inbound"}


def __getattr__(name: str):
    if name in _LATER:
        return getattr(importlib.import_module(_LATER[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
