"""The web channel as a skill: the dashboard starts with the other channels when [web] enabled is true.

It does not converse in the skills' sense (Wilson does not speak first there; proposals and
answers reach it when the user acts on the page), so it never becomes the primary channel."""

from __future__ import annotations

from wilson.skills import Channel, Skill

SKILL = Skill(
    description="Web dashboard: today, proposals to approve, and a conversation, in your browser.",
    channels=(Channel("web", "channels.web.channel:WebChannel", priority=40, buffered=False, converses=False,
                      enabled=lambda config: bool(config.get("web", "enabled"))),),
)
