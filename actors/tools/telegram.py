"""The Telegram skill: the chat channel (polling, delivery with retries, buttons for proposals, one
forum thread per topic). It starts when a bot token is set; its settings are [telegram]."""

from __future__ import annotations

from wilson.skills import Channel, Skill


def has_token(config) -> bool:
    return bool(config is not None and config.get("telegram", "token"))


SKILL = Skill(
    description="Telegram: talk to Wilson in a chat, approve proposals with buttons.",
    channels=(Channel("telegram", "channels.telegram:TelegramChannel", priority=10, converses=True,
                      enabled=has_token),),
)
