"""`wilson telegram chats`: the chats the bot is in, with their ids, whether topics are on and whether the bot
may manage them — what setting up forum topics needs (docs/telegram.md).

The Bot API cannot list a bot's chats, so they are gathered from what the bot has seen: the chats a running
Wilson recorded as messages came in (`seen`, a mark per chat) and the updates waiting on the server
when no Wilson is polling (read without an offset, so none is used up). Each is then asked of Telegram as it is
now (getChat, and getChatMember for the bot in a group).
"""

from __future__ import annotations

from datetime import datetime

from storage import marks
from storage.models import Mark

KIND = "telegram_chat"  # a mark per chat seen, pruned after a year unseen (storage/marks.py KEEP)
TIMEOUT = 20.0


def seen(chat, now: datetime) -> None:
    """Remember a chat a message came from (a write only when it is new or renamed)."""
    title = str(getattr(chat, "title", None) or getattr(chat, "first_name", None) or "")[:100]
    known = marks.get(KIND, str(chat.id))
    if known is not None and known.get("title") == title:
        return
    marks.put(
        KIND, str(chat.id), {"type": str(getattr(chat, "type", "") or ""), "title": title, "seen": now.isoformat()}, now
    )


def recorded() -> list[int]:
    try:
        return [int(row.key) for row in Mark.select(Mark.key).where(Mark.kind == KIND)]
    except Exception:  # no database yet: nothing recorded
        return []


def _waiting(api: str) -> list[int]:
    """Chats of the updates waiting on the server; none when a running Wilson polls (Telegram answers 409)."""
    # lazy: httpx (with its command-line extras, about 70 ms) only once a request is made
    import httpx

    try:
        answer = httpx.post(f"{api}/getUpdates", json={"timeout": 0, "limit": 100}, timeout=TIMEOUT).json()
    except (httpx.HTTPError, ValueError):
        return []
    found = []
    for update in answer.get("result") or [] if answer.get("ok") else []:
        for kind in ("message", "edited_message", "my_chat_member", "channel_post", "callback_query"):
            body = update.get(kind) if isinstance(update, dict) else None
            if isinstance(body, dict):
                chat = body.get("chat") or (body.get("message") or {}).get("chat") or {}
                if isinstance(chat.get("id"), int):
                    found.append(chat["id"])
    return found


def describe(chat: dict, member: dict | None, forum_chat_id: str) -> str:
    """One line for one chat, from Telegram's getChat and (in a group) getChatMember of the bot."""
    kind = chat.get("type", "?")
    if kind == "private":
        return f"{chat['id']}  private chat with {chat.get('first_name') or chat.get('username') or '?'}"
    name = f"{kind} “{chat.get('title') or '?'}”"
    rights = member or {}
    manages = rights.get("status") == "creator" or (
        rights.get("status") == "administrator" and bool(rights.get("can_manage_topics"))
    )
    if not chat.get("is_forum"):
        state = "topics off (group → Edit → Topics switches them on)"
    elif manages:
        state = "topics on; the bot may manage topics"
    else:
        state = "topics on; the bot may not manage topics (group → Edit → Administrators → the bot → Manage Topics)"
    mine = "  ← [telegram] forum_chat_id" if str(chat["id"]) == forum_chat_id.strip() else ""
    return f"{chat['id']}  {name}: {state}{mine}"


def listing(config) -> tuple[list[str], bool]:
    """The lines `wilson telegram chats` prints, and whether Telegram could be asked at all."""
    # lazy: httpx (with its command-line extras, about 70 ms) only once a request is made
    import httpx

    token = str(config.get("telegram", "token") or "").strip()
    if not token:
        return (
            ["There is no bot yet: create one with @BotFather and set WILSON_TELEGRAM_TOKEN (docs/telegram.md)."],
            False,
        )
    api = f"{config.get('telegram', 'base_url') or 'https://api.telegram.org/bot'}{token}"
    try:
        me = httpx.get(f"{api}/getMe", timeout=TIMEOUT).json()
    except (httpx.HTTPError, ValueError) as exc:
        return [
            f"Telegram could not be reached ({type(exc).__name__}); check the network or [telegram] base_url."
        ], False
    if not me.get("ok"):
        return [
            f"Telegram refused the token ({me.get('description')}); copy it again from @BotFather into "
            "WILSON_TELEGRAM_TOKEN."
        ], False
    bot_id = me["result"]["id"]
    forum = str(config.get("telegram", "forum_chat_id") or "")
    ids = list(dict.fromkeys(recorded() + _waiting(api) + ([int(forum)] if forum.lstrip("-").isdigit() else [])))
    lines = []
    for chat_id in ids:
        try:
            chat = httpx.get(f"{api}/getChat", params={"chat_id": chat_id}, timeout=TIMEOUT).json()
            if not chat.get("ok"):
                lines.append(f"{chat_id}  not reachable ({chat.get('description')}): the bot is not in it (any more)")
                continue
            member = None
            if chat["result"].get("type") != "private":
                answer = httpx.get(
                    f"{api}/getChatMember", params={"chat_id": chat_id, "user_id": bot_id}, timeout=TIMEOUT
                ).json()
                member = answer.get("result") if answer.get("ok") else None
        except (httpx.HTTPError, ValueError) as exc:
            lines.append(f"{chat_id}  could not be asked ({type(exc).__name__})")
            continue
        lines.append(describe(chat["result"], member, forum))
    if not lines:
        lines.append(
            f"@{me['result'].get('username', '?')} has seen no chat yet: send it a message (in a group: add "
            "the bot, then send a message there) and run this again."
        )
    return lines, True
