"""The Telegram skill: the chat channel (polling, delivery with retries, buttons for proposals, one
forum thread per topic). It starts when a bot token is set; its settings are [telegram]."""

from __future__ import annotations

from wilson.skills import Channel, Section, Skill


def has_token(config) -> bool:
    return bool(config is not None and config.get("telegram", "token"))


# The [telegram] section of wilson.toml, this skill's own (wilson/skills.py Section).
SETTINGS = Section(
    defaults={
        "token": "",
        "base_url": "https://api.telegram.org/bot",
        "allowed_users": "",
        "forum_chat_id": "",
        "poll_timeout": 30,
        "liveness_seconds": 120,
        "retry_max_seconds": 30.0,  # the longest wait between two tries of an undelivered message
    },
    schema={
        "token": ("text", "from @BotFather; set WILSON_TELEGRAM_TOKEN in the environment rather than here"),
        "base_url": ("url", "the Bot API"),
        "allowed_users": ("text", "comma-separated numeric Telegram user ids (or use `wilson pair`)"),
        "forum_chat_id": ("chat_id", "a forum supergroup for one thread per topic (optional)"),
        "poll_timeout": ("count", "seconds one long poll waits"),
        "liveness_seconds": ("positive", "a poll silent for longer is restarted"),
        "retry_max_seconds": ("positive", "the longest wait between two tries of an undelivered message"),
    },
)


SKILL = Skill(
    description="Telegram: talk to Wilson in a chat, approve proposals with buttons.",
    channels=(
        Channel("telegram", "channels.telegram:TelegramChannel", priority=10, converses=True, enabled=has_token),
    ),
    config=SETTINGS,
)
