"""The web channel as a skill: the dashboard starts with the other channels when [web] enabled is true,
and the watcher (a buffered receptor in the same channel) looks at the pages and feeds the user chose.

It does not converse in the skills' sense (Wilson does not speak first there; proposals and
answers reach it when the user acts on the page), so it never becomes the primary channel.
It is buffered: the tick and the thalamus' sync tell it to look at what is due."""

from __future__ import annotations

from channels.web.tools import ListWatches, Unwatch, Watch
from wilson.skills import Channel, Section, Skill

# The [web] section of wilson.toml, this skill's own (wilson/skills.py Section).
# The dashboard: loopback unless a host is set on purpose (another host prints a warning at start).
SETTINGS = Section(
    defaults={"enabled": True, "host": "127.0.0.1", "port": 8765, "watch_poll": "15m"},
    schema={
        "enabled": ("bool", "the dashboard in your browser (`wilson web-token` prints how to log in)"),
        "host": ("text", "where it listens; 127.0.0.1 keeps it on this computer (anything else is a warning)"),
        "port": ("count", "its port"),
        "watch_poll": ("duration_or_off", "how often watched pages and feeds are checked; off disables"),
    },
)


SKILL = Skill(
    description="Web: a dashboard in your browser (today, proposals, conversation, topics, trace, memory, budget), "
    "and pages and feeds watched for changes.",
    tools=(Watch, Unwatch, ListWatches),
    channels=(
        Channel(
            "web",
            "channels.web.channel:WebChannel",
            priority=40,
            buffered=True,
            converses=False,
            enabled=lambda config: bool(config.get("web", "enabled")),
        ),
    ),
    config=SETTINGS,
)
