"""A fake Telegram Bot API server on 127.0.0.1, for driving the real client in tests.

It speaks the wire format python-telegram-bot expects at `/bot<TOKEN>/<method>`
(parameters as a form or as JSON, answers as `{"ok": true, "result": ...}` or the
error shape with `error_code`, `description` and `parameters.retry_after`), keeps
the state that the assertions need (chats, messages with their keyboards, forum
topics, answered callback queries) and records every call.

Users act through helpers (`send_text`, `press`, `react`, `send_photo` ...), which
queue updates for getUpdates. getUpdates long-polls like Telegram: it returns the
queued updates with `update_id >= offset`, and a call with an offset acknowledges
(forgets) everything below it. `deliver_again` re-sends an acknowledged update, as
Telegram does when it never saw the acknowledgement.

Faults are injected per method: an HTTP status (429 carries `retry_after`, 502 is a
gateway error, 400 a bad request) and/or a delay before the answer, each for a
number of calls (after some calls that go through, with `after`); `go_down` makes a
method fail until `come_up`, for outages of any length. Odd input: `queue_update`
queues any update body under a fresh update_id, `serve_once` hands any JSON value to
the next getUpdates as one more entry.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, unquote

from wilson.kernel.loopback import LoopbackServer
from tests import poll

FORUM_CHAT_ID = -1001234567  # the forum supergroup the tests configure
DEFAULT_TOKEN = "4242424242:AAtest-Secret_token-do-not-log"
BOT_USER = {
    "id": 4242424242,
    "is_bot": True,
    "first_name": "Wilson",
    "username": "wilson_test_bot",
    "can_join_groups": True,
    "can_read_all_group_messages": False,
    "supports_inline_queries": False,
}
# Telegram leaves these out of getUpdates unless they are asked for by name.
OPT_IN_UPDATES = {"message_reaction", "message_reaction_count", "chat_member"}
TEXT_PARAMS = {"text", "callback_query_id", "name", "data", "url", "description"}
MAX_TEXT = 4096


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _text_of(params) -> str:
    """A message text as the Bot API accepts it: not empty, at most 4096 UTF-16 units."""
    text = params.get("text") or ""
    if not text.strip():
        raise ApiError(400, "Bad Request: message text is empty")
    if utf16_len(text) > MAX_TEXT:
        raise ApiError(400, "Bad Request: message is too long")
    return text


class ApiError(Exception):
    def __init__(self, status: int, description: str, retry_after: int | None = None):
        super().__init__(description)
        self.status, self.description, self.retry_after = status, description, retry_after


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format, *args):  # request lines carry the token; never print them
        pass

    def do_GET(self):
        fake: FakeTelegram = self.server.owner
        prefix = f"/file/bot{fake.token}/"
        path = unquote(self.path)  # python-telegram-bot sends the token's colon as %3A
        if path.startswith("/file/"):  # a file's bytes, as api.telegram.org/file/bot<token>/<file_path> serves
            data = fake.files.get(path[len(prefix) :]) if path.startswith(prefix) else None
            self.send_response(200 if data is not None else 404)
            self.send_header("Content-Length", str(len(data or b"")))
            self.end_headers()
            self.wfile.write(data or b"")
            return
        self._handle(b"")

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        self._handle(self.rfile.read(length) if length else b"")

    def _handle(self, raw: bytes) -> None:
        fake: FakeTelegram = self.server.owner
        path = self.path.split("?", 1)[0]
        params = _parse(raw, self.headers.get("Content-Type") or "")
        if "?" in self.path:
            params.update(_coerce(parse_qs(self.path.split("?", 1)[1])))
        status, body = fake.handle(path, params)
        data = json.dumps(body).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            pass  # the client gave up (a delay fault, a cancelled long poll)


def _parse(raw: bytes, content_type: str) -> dict:
    if not raw:
        return {}
    if "application/json" in content_type:
        return json.loads(raw)
    if "multipart/form-data" in content_type:
        from email.parser import BytesParser
        from email.policy import HTTP

        message = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
        fields = {
            part.get_param("name", header="content-disposition"): [part.get_content()] for part in message.iter_parts()
        }
        return _coerce(fields)
    return _coerce(parse_qs(raw.decode(), keep_blank_values=True))


def _coerce(fields: dict) -> dict:
    """Form values are strings; the client JSON-encodes the structured ones (markup, lists)."""
    out = {}
    for key, values in fields.items():
        value = values[-1] if isinstance(values, list) else values
        if key not in TEXT_PARAMS and isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                pass
        out[key] = value
    return out


class FakeTelegram(LoopbackServer):
    handler = _Handler
    path = "/bot"
    thread_name = "fake-telegram"

    def __init__(self, token: str = DEFAULT_TOKEN, *, max_poll: float = 0.5, forum_chat_id: int | None = None):
        super().__init__()
        self.token = token
        self.max_poll = max_poll  # a long poll never holds longer than this, whatever timeout asks
        self.calls: list[dict] = []
        self.messages: dict[tuple[int, int], dict] = {}  # (chat_id, message_id) -> message
        self.sent: list[dict] = []  # messages the bot sent, in order
        self.callback_answers: dict[str, dict] = {}
        self.topics: dict[int, dict] = {}  # thread id -> {"name", "closed"}
        self.forum_chat_id = forum_chat_id
        # what getChatMember says of the bot in the forum: an admin that may manage topics, unless a test says not
        self.bot_rights: dict = {"status": "administrator", "can_manage_topics": True}
        # other groups the bot is in: chat id -> {"title", "is_forum", "rights" (what getChatMember says of the bot)}
        self.groups: dict[int, dict] = {}
        self.files: dict[str, bytes] = {}  # file_path -> bytes of the files users sent (getFile, /file/bot…)
        self.users: dict[int, dict] = {}
        self.commands = None  # what setMyCommands registered
        self._updates: list[dict] = []  # not yet acknowledged
        self._all_updates: dict[int, dict] = {}
        self._again: list[dict] = []
        self._reactions: dict[tuple[int, int], dict[int, list[str]]] = {}  # message -> user -> emoji
        self._faults: dict[str, list[dict]] = {}
        self._down: dict[str, int] = {}  # method -> the status it answers until come_up
        self._update_ids = itertools.count(700_001)
        self._message_ids = itertools.count(10)
        self._thread_ids = itertools.count(50)
        self._query_ids = itertools.count(9_000)
        self._lock = threading.Condition()

    def wake(self) -> None:  # long polls wait on the condition, not on the stop event
        with self._lock:
            self._lock.notify_all()

    # Faults ------------------------------------------------------------------
    def fail(
        self,
        method: str,
        status: int,
        *,
        times: int = 1,
        retry_after: int | None = None,
        description: str | None = None,
        delay: float = 0.0,
        after: int = 0,
    ) -> None:
        """The next `times` calls of `method` answer with `status` (after `delay` seconds), once `after`
        calls have gone through normally."""
        with self._lock:
            self._faults.setdefault(method, []).append(
                {
                    "status": status,
                    "times": times,
                    "retry_after": retry_after,
                    "delay": delay,
                    "description": description,
                    "after": after,
                }
            )

    def go_down(self, method: str, status: int = 502) -> None:
        """Every call of `method` answers `status` until `come_up`."""
        with self._lock:
            self._down[method] = status

    def come_up(self, method: str) -> None:
        with self._lock:
            self._down.pop(method, None)

    def delay(self, method: str, seconds: float, *, times: int = 1) -> None:
        """The next `times` calls of `method` are held for `seconds` before they are answered normally."""
        with self._lock:
            self._faults.setdefault(method, []).append(
                {"status": None, "times": times, "retry_after": None, "delay": seconds, "description": None}
            )

    def _take_fault(self, method: str) -> dict | None:
        with self._lock:
            if method in self._down:
                return {
                    "status": self._down[method],
                    "times": 1,
                    "retry_after": None,
                    "delay": 0.0,
                    "description": None,
                }
            queue = self._faults.get(method) or []
            if not queue:
                return None
            fault = queue[0]
            if fault.get("after", 0) > 0:
                fault["after"] -= 1
                return None
            fault["times"] -= 1
            if fault["times"] <= 0:
                queue.pop(0)
            return dict(fault)

    # The user's side -----------------------------------------------------------
    def user(self, user_id: int, first_name: str | None = None) -> dict:
        found = self.users.setdefault(
            user_id, {"id": user_id, "is_bot": False, "first_name": first_name or f"User{user_id}"}
        )
        return dict(found)

    def chat(self, chat_id: int) -> dict:
        if chat_id == self.forum_chat_id:
            return {"id": chat_id, "type": "supergroup", "title": "Wilson topics", "is_forum": True}
        if chat_id in self.groups:
            group = self.groups[chat_id]
            return {
                "id": chat_id,
                "type": "supergroup",
                "title": group["title"],
                **({"is_forum": True} if group.get("is_forum") else {}),
            }
        if chat_id < 0:
            return {"id": chat_id, "type": "supergroup", "title": f"group {chat_id}"}
        user = self.user(chat_id)
        return {"id": chat_id, "type": "private", "first_name": user["first_name"]}

    def _queue(self, kind: str, body: dict) -> dict:
        with self._lock:
            update = {"update_id": next(self._update_ids), kind: body}
            self._updates.append(update)
            self._all_updates[update["update_id"]] = update
            self._lock.notify_all()
        return update

    def _user_message(
        self, user_id: int, chat_id: int | None, thread_id: int | None, reply_to: int | None, **content
    ) -> dict:
        chat_id = chat_id if chat_id is not None else user_id
        message = {
            "message_id": next(self._message_ids),
            "date": int(time.time()),
            "chat": self.chat(chat_id),
            "from": self.user(user_id),
            **content,
        }
        if thread_id is not None:
            message["message_thread_id"] = thread_id
            message["is_topic_message"] = True
        if reply_to is not None:
            replied = self.messages.get((chat_id, reply_to))
            message["reply_to_message"] = {
                k: v
                for k, v in (
                    replied or {"message_id": reply_to, "date": message["date"], "chat": message["chat"]}
                ).items()
                if k != "reply_to_message"
            }
        if "text" in content and content["text"].startswith("/"):
            command = content["text"].split()[0]
            message["entities"] = [{"type": "bot_command", "offset": 0, "length": utf16_len(command)}]
        with self._lock:
            self.messages[(chat_id, message["message_id"])] = message
        return message

    def send_text(
        self,
        user_id: int,
        text: str,
        *,
        chat_id: int | None = None,
        thread_id: int | None = None,
        reply_to: int | None = None,
        **extra,
    ) -> dict:
        """The user sends `text` (a private chat unless `chat_id`); `reply_to` is a message id in that chat;
        `extra`: more of the Bot API's Message fields (quote, forward_origin, ...)."""
        return self._queue("message", self._user_message(user_id, chat_id, thread_id, reply_to, text=text, **extra))

    def edit_text(self, user_id: int, message_id: int, text: str, *, chat_id: int | None = None) -> dict:
        """The user edits a message they sent: an `edited_message` update with the new text."""
        return self._edit(user_id, message_id, chat_id, text=text)

    def edit_caption(self, user_id: int, message_id: int, caption: str, *, chat_id: int | None = None) -> dict:
        return self._edit(user_id, message_id, chat_id, caption=caption)

    def _edit(self, user_id: int, message_id: int, chat_id: int | None, **changes) -> dict:
        chat_id = chat_id if chat_id is not None else user_id
        with self._lock:
            message = self.messages[(chat_id, message_id)]
            if message["from"]["id"] != user_id:
                raise ValueError("a user can only edit their own messages")
            message.update(changes, edit_date=int(time.time()))
            edited = dict(message)
        return self._queue("edited_message", edited)

    def send_photo(self, user_id: int, caption: str | None = None) -> dict:
        photo = [
            {"file_id": "photo-small", "file_unique_id": "p1", "width": 90, "height": 60},
            {"file_id": "photo-large", "file_unique_id": "p2", "width": 900, "height": 600},
        ]
        content = {"photo": photo} | ({"caption": caption} if caption else {})
        return self._queue("message", self._user_message(user_id, None, None, None, **content))

    def send_voice(self, user_id: int, audio: bytes | None = None, *, duration: int = 3, **extra) -> dict:
        """A voice note; `audio`: its bytes (an OGG file), kept for getFile. `extra`: more Message fields
        (caption, forward_origin, ...)."""
        voice = {"file_id": "voice-1", "file_unique_id": "v1", "duration": duration, "mime_type": "audio/ogg"}
        if audio is not None:
            voice = self._file(voice, audio)
        return self._queue("message", self._user_message(user_id, None, None, None, voice=voice, **extra))

    def send_document(
        self, user_id: int, data: bytes, file_name: str, mime_type: str, *, declared_size: int | None = None, **extra
    ) -> dict:
        """A file (document) with its bytes; `declared_size`: the size Telegram tells, when a test needs a big one."""
        document = self._file({"file_name": file_name, "mime_type": mime_type}, data)
        if declared_size is not None:
            document["file_size"] = declared_size
        return self._queue("message", self._user_message(user_id, None, None, None, document=document, **extra))

    def _file(self, fields: dict, data: bytes) -> dict:
        with self._lock:
            serial = len(self.files) + 1
            self.files[f"documents/file_{serial}"] = bytes(data)
        return {**fields, "file_id": f"file-{serial}", "file_unique_id": f"u{serial}", "file_size": len(data)}

    def press(self, user_id: int, message: dict, data: str) -> dict:
        """The user presses a button (callback data `data`) under a message the bot sent."""
        query = {
            "id": str(next(self._query_ids)),
            "from": self.user(user_id),
            "chat_instance": "ci-1",
            "data": data,
            "message": message,
        }
        return self._queue("callback_query", query)

    def react(self, user_id: int, chat_id: int, message_id: int, emoji: str | None, *, old: str | None = None) -> dict:
        """The user's reaction on a message changes from `old` to `emoji` (None: taken back).

        Telegram sends the user's whole reaction before and after; so does this."""
        with self._lock:
            key = (chat_id, message_id)
            current = self._reactions.get(key, {}).get(user_id, [])
            before = [old] if old else list(current)
            after = [emoji] if emoji else []
            self._reactions.setdefault(key, {})[user_id] = after
        body = {
            "chat": self.chat(chat_id),
            "message_id": message_id,
            "user": self.user(user_id),
            "date": int(time.time()),
            "old_reaction": [{"type": "emoji", "emoji": e} for e in before],
            "new_reaction": [{"type": "emoji", "emoji": e} for e in after],
        }
        return self._queue("message_reaction", body)

    def queue_update(self, body: dict) -> dict:
        """Any update body (its kind's key and whatever it holds, odd or not) under a fresh update_id."""
        with self._lock:
            update = {"update_id": next(self._update_ids), **body}
            self._updates.append(update)
            self._all_updates[update["update_id"]] = update
            self._lock.notify_all()
        return update

    def serve_once(self, entry) -> None:
        """The next getUpdates answer carries `entry` (any JSON value), whatever the offset."""
        with self._lock:
            self._again.append(entry)
            self._lock.notify_all()

    def deliver_again(self, update_id: int) -> None:
        """Telegram never saw the acknowledgement: the update comes once more, whatever the offset."""
        with self._lock:
            self._again.append(self._all_updates[update_id])
            self._lock.notify_all()

    # Inspection --------------------------------------------------------------
    def calls_of(self, method: str) -> list[dict]:
        with self._lock:
            return [c for c in self.calls if c["method"] == method]

    def sent_to(self, chat_id: int, thread_id: int | None = None) -> list[dict]:
        """Messages the bot sent to a chat (to one forum thread when `thread_id`), current state."""
        with self._lock:
            found = [self.messages[(m["chat"]["id"], m["message_id"])] for m in self.sent if m["chat"]["id"] == chat_id]
        if thread_id is not None:
            found = [m for m in found if m.get("message_thread_id") == thread_id]
        return found

    def pending_updates(self) -> int:
        with self._lock:
            return len(self._updates) + len(self._again)

    def answer(self, press: dict, timeout: float = 5.0) -> dict:
        """The bot's answer to a press (as `press` returned it), once it arrived: it may come after the messages
        the press leads to, so a test never reads it without waiting."""
        query = press["callback_query"]["id"]
        return self.wait_for(lambda: self.callback_answers.get(query), timeout, f"the answer to press {query}")

    def wait_for(self, predicate, timeout: float = 10.0, what: str = "condition"):
        """Poll `predicate` until it returns something truthy; fail the test after `timeout` seconds."""
        return poll.wait_for(predicate, timeout, what, every=0.02)

    # The API -----------------------------------------------------------------
    def handle(self, path: str, params: dict) -> tuple[int, dict]:
        prefix = f"/bot{self.token}/"
        if not path.startswith("/bot"):
            return 404, {"ok": False, "error_code": 404, "description": "Not Found"}
        if not path.startswith(prefix):
            return 401, {"ok": False, "error_code": 401, "description": "Unauthorized"}
        method = path[len(prefix) :]
        started = time.monotonic()
        entry = {"method": method, "params": params, "status": None, "at": started}
        with self._lock:
            self.calls.append(entry)
        fault = self._take_fault(method)
        entry["fault"] = fault
        if fault and fault["delay"]:
            self._stopping.wait(fault["delay"])
        try:
            if fault and fault["status"]:
                raise ApiError(
                    fault["status"],
                    fault["description"] or _DESCRIPTIONS.get(fault["status"], "Error"),
                    fault["retry_after"],
                )
            handler = getattr(self, "api_" + method, None)
            if handler is None:
                raise ApiError(404, "Not Found: method not found")
            result = handler(params)
        except ApiError as exc:
            entry["status"] = exc.status
            body = {"ok": False, "error_code": exc.status, "description": exc.description}
            if exc.retry_after is not None:
                body["parameters"] = {"retry_after": exc.retry_after}
                body["description"] = f"Too Many Requests: retry after {exc.retry_after}"
            return exc.status, body
        entry["status"] = 200
        return 200, {"ok": True, "result": result}

    def api_getMe(self, params):
        return BOT_USER

    def api_getFile(self, params):
        file_id = str(params.get("file_id") or "")
        path = f"documents/file_{file_id.removeprefix('file-')}"
        if not file_id.startswith("file-") or path not in self.files:
            raise ApiError(400, "Bad Request: invalid file_id")
        return {
            "file_id": file_id,
            "file_unique_id": "u" + file_id.removeprefix("file-"),
            "file_size": len(self.files[path]),
            "file_path": path,
        }

    def api_deleteWebhook(self, params):
        return True

    def api_setMyCommands(self, params):
        self.commands = params.get("commands")
        return True

    def api_getUpdates(self, params):
        offset = params.get("offset")
        limit = int(params.get("limit") or 100)
        wait = min(float(params.get("timeout") or 0), self.max_poll)
        allowed = params.get("allowed_updates")
        deadline = time.monotonic() + wait
        with self._lock:
            if offset is not None:
                self._updates = [u for u in self._updates if u["update_id"] >= int(offset)]
            while True:
                again, self._again = self._again, []
                ready = again + [u for u in self._updates if _wanted(u, allowed)]
                left = deadline - time.monotonic()
                if ready or left <= 0 or self._stopping.is_set():
                    return ready[:limit]
                self._lock.wait(left)

    def _sent_message(self, params, text: str) -> dict:
        chat_id = int(params["chat_id"])
        message = {
            "message_id": next(self._message_ids),
            "date": int(time.time()),
            "chat": self.chat(chat_id),
            "from": dict(BOT_USER),
            "text": text,
        }
        thread = params.get("message_thread_id")
        if thread is not None:
            thread = int(thread)
            if chat_id != self.forum_chat_id or thread not in self.topics:
                raise ApiError(400, "Bad Request: message thread not found")
            if self.topics[thread]["closed"]:
                raise ApiError(400, "Bad Request: TOPIC_CLOSED")
            message["message_thread_id"] = thread
            message["is_topic_message"] = True
        reply = params.get("reply_parameters")
        if reply:
            target = self.messages.get((chat_id, int(reply["message_id"])))
            if target is None and not reply.get("allow_sending_without_reply"):
                raise ApiError(400, "Bad Request: message to be replied not found")
            if target is not None:
                message["reply_to_message"] = {k: v for k, v in target.items() if k != "reply_to_message"}
        if params.get("reply_markup"):
            message["reply_markup"] = params["reply_markup"]
        return message

    def api_sendMessage(self, params):
        text = _text_of(params)
        with self._lock:
            message = self._sent_message(params, text)
            self.messages[(message["chat"]["id"], message["message_id"])] = message
            self.sent.append(message)
        return message

    def _existing(self, params) -> dict:
        key = (int(params["chat_id"]), int(params["message_id"]))
        if key not in self.messages:
            raise ApiError(400, "Bad Request: message to edit not found")
        return self.messages[key]

    def api_editMessageText(self, params):
        text = _text_of(params)
        with self._lock:
            message = self._existing(params)
            markup = params.get("reply_markup")
            if message.get("text") == text and message.get("reply_markup") == markup:
                raise ApiError(400, "Bad Request: message is not modified")
            message["text"] = text
            message["edit_date"] = int(time.time())
            if markup:
                message["reply_markup"] = markup
            else:
                message.pop("reply_markup", None)
            return dict(message)

    def api_editMessageReplyMarkup(self, params):
        with self._lock:
            message = self._existing(params)
            markup = params.get("reply_markup")
            if markup:
                message["reply_markup"] = markup
            else:
                message.pop("reply_markup", None)
            return dict(message)

    def api_answerCallbackQuery(self, params):
        query_id = str(params.get("callback_query_id"))
        with self._lock:
            known = any(
                isinstance(u.get("callback_query"), dict) and u["callback_query"].get("id") == query_id
                for u in self._all_updates.values()
            )
            if not known or query_id in self.callback_answers:
                raise ApiError(400, "Bad Request: query is too old and response timeout expired or query ID is invalid")
            self.callback_answers[query_id] = {"text": params.get("text"), "at": time.monotonic()}
        return True

    def api_getChat(self, params):
        chat_id = int(params["chat_id"])
        if chat_id < 0 and chat_id != self.forum_chat_id and chat_id not in self.groups:
            raise ApiError(400, "Bad Request: chat not found")  # a group the bot is not in
        return self.chat(chat_id)

    def api_getChatMember(self, params):
        chat_id, user_id = int(params["chat_id"]), int(params["user_id"])
        if chat_id in self.groups and user_id == BOT_USER["id"]:
            return {"user": BOT_USER, **self.groups[chat_id].get("rights", {"status": "member"})}
        if chat_id != self.forum_chat_id:
            raise ApiError(400, "Bad Request: chat not found")
        if user_id == BOT_USER["id"]:
            return {"user": BOT_USER, **self.bot_rights}
        return {"user": self.user(user_id), "status": "member"}

    def api_createForumTopic(self, params):
        if int(params["chat_id"]) != self.forum_chat_id:
            raise ApiError(400, "Bad Request: the chat is not a forum")
        name = params.get("name") or ""
        if not 1 <= len(name) <= 128:
            raise ApiError(400, "Bad Request: TOPIC_NAME_INVALID")
        with self._lock:
            thread = next(self._thread_ids)
            self.topics[thread] = {"name": name, "closed": False}
        return {"message_thread_id": thread, "name": name, "icon_color": 7322096}

    def api_closeForumTopic(self, params):
        return self._set_closed(params, True)

    def api_reopenForumTopic(self, params):
        return self._set_closed(params, False)

    def _set_closed(self, params, closed: bool):
        """Close or reopen a forum thread, refused as Telegram refuses it: an unknown thread, or no change."""
        thread = int(params["message_thread_id"])
        with self._lock:
            topic = self.topics.get(thread)
            if int(params["chat_id"]) != self.forum_chat_id or topic is None:
                raise ApiError(400, "Bad Request: TOPIC_ID_INVALID")
            if topic["closed"] == closed:
                raise ApiError(400, "Bad Request: TOPIC_NOT_MODIFIED")
            topic["closed"] = closed
        return True

    def api_editForumTopic(self, params):
        thread = int(params["message_thread_id"])
        name = params.get("name")
        with self._lock:
            topic = self.topics.get(thread)
            if int(params["chat_id"]) != self.forum_chat_id or topic is None:
                raise ApiError(400, "Bad Request: TOPIC_ID_INVALID")
            if name is not None and not 1 <= len(name) <= 128:
                raise ApiError(400, "Bad Request: TOPIC_NAME_INVALID")
            if name is None or name == topic["name"]:
                raise ApiError(400, "Bad Request: TOPIC_NOT_MODIFIED")
            topic["name"] = name
        return True


_DESCRIPTIONS = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden: bot was blocked by the user",
    409: "Conflict: terminated by other getUpdates request",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
}


def _wanted(update: dict, allowed) -> bool:
    kind = next((k for k in update if k != "update_id"), None)
    if kind is None:
        return True  # an odd update with no kind at all: handed over as it is
    if allowed:
        return kind in allowed
    return kind not in OPT_IN_UPDATES
