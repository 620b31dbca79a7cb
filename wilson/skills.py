"""Skills: capability bundles for Wilson's one brain, found through entry points.

A skill is a `Skill` object registered under the entry-point group `wilson.skills`
(the entry point's name is the skill's name). It provides any of:

- tools: one `Tool` subclass per tool. A read tool (`read_only = True`) runs when the
  model calls it. Any other tool is a mutation: the cortex only validates and describes
  it, the call becomes a proposal, and its `execute` runs only from the approval gate,
  for an item the user approved (`actors.tools.execute_approved` checks the item's row).
- channels: receptor/effector actors (`Channel`), started with the other actors. A
  receptor commits what it receives through `channels.base.Channel.stimulus` (realtime)
  or `.buffer` (buffered), so every row goes through the thalamus.
- playbook entries (TOML, as wilson/model/playbook.toml) for the offline rules.
- a config section named after the skill, with defaults and checks (`Section`).
- prompt lines added to the cortex's rules.

A skill reaches a language model only through Synapse: tools get no model at all, and
a channel actor has `self.ctx.synapse` like every other actor. The built-in
capabilities are skills registered the same way (setup.cfg); `[skills] disabled`
turns any of them off. This module only finds and describes skills: it imports
nothing of the actors, channels or storage (a skill's own module does).

Size: the whole API a skill's author reads (Skill, Tool, Channel, Section, Call, the argument
checks, discovery, listing) in one place, and the Toolbox that runs the tools by it.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import importlib.util
from dataclasses import dataclass, field
from datetime import datetime
from typing import Callable

from loguru import logger

GROUP = "wilson.skills"
READ, MUTATE, DECISION = "read", "mutate", "decision"
PROPOSE = "propose"  # the one tool every mutation is offered through (actors/tools: propose_schema)
DEFAULT_LIMIT = 300  # characters of a string argument, unless the tool says otherwise


# The names of schema lists seen before, by the identity of their schemas: a run's schemas are the same cached
# dicts call after call (actors/tools.schemas_for), and every model call asks for their names. The entry holds
# the schemas themselves, so no id in its key can be reused by another object while it is kept. Emptied when full.
_named: dict[tuple[int, ...], tuple[tuple, tuple[str, ...]]] = {}
NAMED_LISTS = 64


def offered_names(schemas) -> list[str]:
    """The names a list of tool schemas (the wire's `tools`) lets a model call: each tool's, then the actions of a
    `propose` tool among them (a mutation is offered as an action of `propose`, and a call by its own name is
    read as well). Schemas of another shape are passed over."""
    listed = tuple(schemas or ())
    key = tuple(map(id, listed))
    known = _named.get(key)
    if known is not None:
        return list(known[1])
    names = _offered_names(listed)
    if len(_named) >= NAMED_LISTS:
        _named.clear()
    _named[key] = (listed, tuple(names))
    return names


def _offered_names(schemas: tuple) -> list[str]:
    names, actions = [], []
    for schema in schemas:
        function = schema.get("function") if isinstance(schema, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            continue
        names.append(function["name"])
        if function["name"] == PROPOSE:
            action = _dig(function, "parameters", "properties", "changes", "items", "properties", "action")
            actions += [a for a in (action or {}).get("enum") or () if isinstance(a, str)]
    return names + actions


def _dig(value, *keys):
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value


# What a tool is given ----------------------------------------------------------------
@dataclass
class Call:
    """Everything a tool's validate, describe and execute may use. No model, no actor: a tool that
    needs to reach out writes a row (`send`) that its channel delivers."""

    now: datetime
    tz: object  # ZoneInfo
    user_id: str | None = None  # whose run (or whose approval): reads and creations are theirs
    owner: str | None = None  # the configured owner, who sees everything
    config: object = None  # wilson.kernel.config.Config when the caller has one
    scratch: dict = field(default_factory=dict)  # shared by the items of one approved proposal
    item_id: int | None = None  # the approved item being executed (None outside the gate)
    trace_id: str | None = None
    sender: Callable | None = None  # set by the gate only
    deliveries: list = field(default_factory=list)  # (channel, outbox_id) to nudge after the commit

    def settings(self, section: str) -> dict:
        """A config section (a skill's own is named after it); {} without a config."""
        return self.config.section(section) if self.config is not None else {}

    def send(self, channel: str, text: str, payload: dict | None = None) -> int:
        """From an approved mutation only: an outbox row for `channel` to deliver, written in the gate's
        transaction, once per item (its key is the item); the channel is told after the commit."""
        if self.sender is None:
            raise PermissionError("only an approved proposal can send")
        outbox_id = self.sender(channel, text, payload or {})
        self.deliveries.append((channel, outbox_id))
        return outbox_id

    def nudge(self, channel: str, outbox_id: int) -> None:
        """An outbox row the tool wrote itself (in the gate's transaction): `channel` is told to deliver
        it after the commit."""
        if self.sender is None:
            raise PermissionError("only an approved proposal can send")
        self.deliveries.append((channel, outbox_id))


# Tools ----------------------------------------------------------------------------------
class Tool:
    """One tool. Subclass it and set `name`, `description`, `parameters` (a JSON schema object),
    `read_only`; override `validate`, `describe` and `execute` as needed.

    Every string argument is refused when longer than its limit (`limits`, else the schema's
    `maxLength`, else 300): what the user approves is exactly what would be done."""

    name: str = ""
    description: str = ""
    brief: str = ""  # a mutation's one line in the `propose` tool; empty: the description's first sentence
    parameters: dict = {"type": "object", "properties": {}}
    read_only: bool = False  # False: a mutation, proposed to the user and executed by the gate only
    kind: str = ""  # READ or MUTATE from read_only; DECISION for the cortex's own tools
    user_only: bool = False  # offered only to runs the user started
    undo_only: bool = False  # proposed only by an undo (reopening what an approval closed): offered to no model
    untrusted: str = ""  # a read whose result others wrote, e.g. "your calendar": marked so for the model
    unavailable: str = ""  # why it cannot work yet: not offered, and an old proposal holding it fails honestly
    limits: dict = {}  # argument → longest text
    # a mutation that calls another program (an MCP server): the gate commits "calling" first, calls outside its
    # transaction (so a slow server holds up no other write), and commits the outcome after
    outside: bool = False

    def needs(self, config) -> str:
        """Why it cannot work with these settings ("" when it can): then it is not offered, like `unavailable`."""
        return ""

    def __init__(self):
        if not self.kind:
            self.kind = READ if self.read_only else MUTATE

    def schema(self) -> dict:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }

    def properties(self) -> dict:
        return self.parameters.get("properties", {})

    def known_args(self, args: dict) -> dict:
        """Only the arguments the tool declares: anything else would be stored with a proposal unseen."""
        props = self.properties()
        return {k: v for k, v in args.items() if k in props}

    def limit(self, key: str) -> int:
        return self.limits.get(key) or self.properties().get(key, {}).get("maxLength") or DEFAULT_LIMIT

    def check_args(self, args) -> str | None:
        """The checks every tool shares: a JSON object, required arguments present (a blank string is as
        missing as none), declared types, lengths, and text every database can keep."""
        if not isinstance(args, dict):
            return "arguments must be a JSON object"
        missing = [
            k
            for k in self.parameters.get("required", [])
            if args.get(k) is None or (isinstance(args[k], str) and not args[k].strip())
        ]
        if missing:
            return f"missing {', '.join(missing)}"
        # Types before any lookup: an object where an id belongs must be refused, not handed to the database.
        for key, value in args.items():
            expected = self.properties().get(key, {}).get("type")
            if value is None or expected is None:
                continue
            if expected == "string" and not isinstance(value, str):
                return f"{key} must be a string, got {type(value).__name__}"
            if expected == "integer" and not is_int(value):
                return f"{key} must be an integer, got {short(value)}"
            if expected == "boolean" and not isinstance(value, bool):
                return f"{key} must be true or false, got {short(value)}"
            if isinstance(value, str):
                if len(value) > self.limit(key):
                    return f"{key} is too long ({len(value)} characters; at most {self.limit(key)})"
                if not storable(value):
                    return f"{key} is not valid text (a NUL or an unpaired surrogate)"
        return None

    def validate(self, args: dict, call: Call) -> str | None:
        """Why this call cannot become a proposal (or be read), or None."""
        return self.check_args(args)

    def describe(self, args: dict, call: Call) -> str:
        """The proposal's line: what the user approves, every free-text argument in full."""
        shown = ", ".join(f"{k}: {v}" for k, v in args.items())
        return f"{self.name} ({shown})" if shown else self.name

    def moot_at(self, args: dict, call: Call):
        """The moment after which this change would come too late (a reminder's time, the end of a task's
        due day), or None when it has no time of its own. A proposal of such changes lapses then."""
        return None

    def hints(self, args: dict, call: Call) -> dict:
        """Extra facts for the model in the answer to a proposed call (e.g. that it repeats something)."""
        return {}

    def execute(self, args: dict, call: Call) -> object:
        """A read's result, or an approved mutation's effect (a dict, stored with the item)."""
        raise NotImplementedError(f"{self.name} cannot be executed")


def is_int(value) -> bool:
    # Models often quote ids ("5"); a bool is an int to Python but never an id; and a number the
    # database cannot bind would raise instead of simply finding nothing.
    if isinstance(value, str):
        digits = value.strip()
        if not (digits.isascii() and digits.isdigit() and len(digits) <= 19):
            return False
        value = int(digits)
    return isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63


def storable(text: str) -> bool:
    """Text every database and channel can keep: JSON lets a model send NULs and lone surrogates."""
    if "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def short(value) -> str:
    """A bad value quoted in an error, never so long that the error itself floods the model."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


# Channels, config sections, skills ------------------------------------------------------
def always(config) -> bool:
    return True


@dataclass(frozen=True)
class Channel:
    """A receptor/effector actor. `actor` is a `channels.base.Channel` subclass or "module:Class"
    (imported only when it is started, so an optional library loads only when used)."""

    name: str
    actor: type | str
    priority: int = 50  # start order among channels (lower first); the first conversing one is the primary
    buffered: bool = False  # its rows wait in receptor_buffers: synced by the thalamus, polled on the tick
    converses: bool = False  # the user talks to Wilson here, so it can be where Wilson speaks first
    enabled: Callable = always  # enabled(config) → bool, e.g. only when a token is set
    kwargs: dict = field(default_factory=dict)

    def actor_class(self) -> type:
        if not isinstance(self.actor, str):
            return self.actor
        module, _, attr = self.actor.partition(":")
        return getattr(importlib.import_module(module), attr)


@dataclass(frozen=True)
class Section:
    """A skill's [section] in wilson.toml: `schema` maps each key to (kind, one line of help) with the
    kinds of wilson.kernel.config.SCHEMA ("text", "url", "positive", "count", "bool", "list", ...); `check`
    sees the whole checked section and returns problems, one line each."""

    defaults: dict
    schema: dict
    check: Callable | None = None


@dataclass(frozen=True)
class Skill:
    description: str = ""
    tools: tuple = ()  # Tool subclasses (or instances)
    channels: tuple = ()  # Channel specs
    playbook: str = ""  # TOML, as wilson/model/playbook.toml
    config: Section | None = None  # the [<skill name>] section
    prompt: str = ""  # rules added to the cortex's system prompt, one per line
    status: Callable | None = None  # status(config) → lines `wilson skills` adds (e.g. each MCP server's state)
    # optional libraries it needs, as (module, the pip extra that installs it): missing, its tools are not offered
    # and its channels do not start, and `wilson skills` says what to install
    requires: tuple = ()

    def tool_objects(self) -> list[Tool]:
        return [t() if isinstance(t, type) else t for t in self.tools]

    def missing(self) -> list[str]:
        """What to install for it, one line per optional library that is not there."""
        return [
            f"the {module} library (pip install 'wilson[{extra}]')"
            for module, extra in self.requires
            if importlib.util.find_spec(module) is None
        ]


@dataclass
class Installed:
    name: str
    skill: Skill | None
    source: str  # the distribution that registers it, and the entry point's target
    error: str = ""  # why it could not be loaded


# Finding them -----------------------------------------------------------------------------
# When the project's own metadata is stale (checked out, not yet reinstalled), the built-in skills are
# still found: these are the entry points setup.cfg registers (a test keeps the two the same).
BUILTIN = {
    "calendar": "actors.tools.calendar:SKILL",
    "email": "channels.email.skill:SKILL",
    "mcp": "channels.mcp.skill:SKILL",
    "memory": "actors.hippocampus.skill:SKILL",
    "reminders": "actors.tools.reminders:SKILL",
    "tasks": "actors.tools.tasks:SKILL",
    "telegram": "actors.tools.telegram:SKILL",
    "web": "channels.web.skill:SKILL",
}


def _load(name: str, target: str, source: str) -> Installed:
    try:
        module, _, attr = target.partition(":")
        skill = getattr(importlib.import_module(module), attr) if attr else importlib.import_module(module)
        if callable(skill) and not isinstance(skill, Skill):
            skill = skill()  # a factory
        if not isinstance(skill, Skill):
            raise TypeError(f"{target} is a {type(skill).__name__}, not a wilson.skills.Skill")
        for tool in skill.tool_objects():
            if not isinstance(tool, Tool) or not tool.name:
                raise TypeError(f"{target}: every tool is a named wilson.skills.Tool")
        return Installed(name, skill, source)
    except Exception as exc:  # one broken skill must not keep Wilson from starting
        return Installed(name, None, source, f"{type(exc).__name__}: {exc}")


@functools.cache
def installed() -> tuple[Installed, ...]:
    """Every skill installed in this environment, by name; the first registration of a name wins."""
    found: dict[str, Installed] = {}
    for point in sorted(importlib.metadata.entry_points(group=GROUP), key=lambda p: p.name):
        dist = point.dist.name if point.dist is not None else "?"
        if point.name in found:
            logger.warning(
                "skill {} is registered twice ({} and {}); using the first",
                point.name,
                found[point.name].source,
                f"{dist} {point.value}",
            )
            continue
        found[point.name] = _load(point.name, point.value, f"{dist} {point.value}")
    for name, target in BUILTIN.items():
        found.setdefault(name, _load(name, target, f"wilson {target}"))
    # built-in ones first, in a fixed order, so the tools offered to the model do not move around
    return tuple(sorted(found.values(), key=lambda s: (s.name not in BUILTIN, s.name)))


def refresh() -> None:
    """Look for installed skills again (after an install into the running environment)."""
    global GENERATION
    installed.cache_clear()
    GENERATION += 1


GENERATION = 0  # counts refreshes, for caches built from the installed skills


def tools_changed() -> None:
    """A skill's tools changed while Wilson runs (an MCP server listed its tools): the toolbox and the
    prompts are built again on their next use."""
    global GENERATION
    GENERATION += 1


def disabled(config) -> set[str]:
    raw = config.get("skills", "disabled") if config is not None else []
    if isinstance(raw, str):
        raw = raw.split(",")
    return {str(name).strip() for name in raw or () if str(name).strip()}


def enabled(config=None) -> list[Installed]:
    """The skills that run: installed, loaded and not turned off in [skills] disabled."""
    off = disabled(config)
    return [s for s in installed() if s.skill is not None and s.name not in off]


def not_set_up(config) -> dict[str, str]:
    """Tools of the enabled skills that these settings leave without what they need: name → why."""
    if config is None:
        return {}
    found = {t.name: why for s in enabled(config) for t in s.skill.tool_objects() if (why := t.needs(config))}
    for s in enabled(config):
        for missing in s.skill.missing()[:1]:
            found.update({t.name: f"it needs {missing}" for t in s.skill.tool_objects()})
    return found


def channels(config=None) -> list[Channel]:
    """The channels of the enabled skills that are enabled by their settings, in start order."""
    found = [
        (c.priority, s.name, c)
        for s in enabled(config)
        if not s.skill.missing()
        for c in s.skill.channels
        if c.enabled(config)
    ]
    return [c for _, _, c in sorted(found, key=lambda f: (f[0], f[1], f[2].name))]


def prompt(config=None, offered: frozenset[str] | None = None) -> str:
    """The enabled skills' rules for the system prompt, a line each. `offered`: the tool names of the run
    the prompt is for; a skill with tools speaks only to a run offered one of them, since its rules are
    about using them. Every run asks: kept per installed skills' generation, setting of [skills] disabled
    and `offered`, which is all it depends on."""
    raw = config.get("skills", "disabled") if config is not None else None
    key = (GENERATION, repr(raw), offered)
    found = _prompts.get(key)
    if found is None:
        speaking = [
            s.skill
            for s in enabled(config)
            if offered is None or not s.skill.tools or any(t.name in offered for t in s.skill.tool_objects())
        ]
        lines = [line.strip() for skill in speaking for line in skill.prompt.splitlines() if line.strip()]
        found = _prompts[key] = "".join(f"\n- {line.lstrip('- ')}" for line in lines)
    return found


_prompts: dict = {}  # (GENERATION, [skills] disabled, offered) -> prompt()


def playbook(config=None) -> str:
    """The playbook entries of the enabled skills, as one TOML text."""
    return "\n".join(s.skill.playbook.strip() for s in enabled(config) if s.skill.playbook.strip())


def sections() -> tuple[dict, dict]:
    """The config sections of installed skills, {name: Section}, and {name: error} for the skills that
    could not be loaded (wilson/kernel/config.py adds the one and warns of the other)."""
    found, broken = {}, {}
    for s in installed():
        if s.skill is None:
            broken[s.name] = s.error
        elif s.skill.config is not None:
            found[s.name] = s.skill.config
    return found, broken


class Toolbox:
    """The tools Wilson has: the cortex's own and those of the enabled skills, by name."""

    def __init__(self, core: list[Tool], skills: list[Installed], unset: dict[str, str] | None = None):
        self.owner: dict[str, str] = {}
        self.tools: dict[str, Tool] = {}
        self.unset = dict(unset or {})  # tool name → why these settings cannot use it
        for tool in core:
            self.tools[tool.name] = tool
            self.owner[tool.name] = "core"
        for s in skills:
            for tool in s.skill.tool_objects():
                if tool.name in self.tools:
                    logger.warning(
                        "skill {}: tool {} is already provided by {}; keeping that one",
                        s.name,
                        tool.name,
                        self.owner[tool.name],
                    )
                    continue
                self.tools[tool.name] = tool
                self.owner[tool.name] = s.name
        # the cortex's decision tools close the list, as the model has always seen them
        self.order = [t for t in self.tools.values() if t.kind != DECISION] + [
            t for t in self.tools.values() if t.kind == DECISION
        ]

    def get(self, name) -> Tool | None:
        return self.tools.get(name) if isinstance(name, str) else None

    def kind_of(self, name) -> str | None:
        tool = self.get(name)
        return tool.kind if tool else None

    def schemas(self, user_run: bool = False) -> list[dict]:
        """Every tool a model could be offered, each with its own schema (an undo's own tools never are)."""
        return [
            t.schema() for t in self.order if not self.why_not(t) and (user_run or not t.user_only) and not t.undo_only
        ]

    def why_not(self, tool: Tool) -> str:
        """Why this tool is not offered ("" when it is)."""
        return tool.unavailable or self.unset.get(tool.name, "")

    def run_read(self, name: str, args: dict, call: Call) -> object:
        """A read tool's result. Only reads: a mutation is executed by the approval gate alone."""
        tool = self.get(name)
        if tool is None or tool.kind != READ:
            raise ValueError(f"unknown read tool {name}")
        problem = tool.validate(args, call)
        if problem:
            raise ValueError(problem)
        return tool.execute(args, call)


def describe(config=None) -> list[str]:
    """`wilson skills`: each installed skill, whether it is on, its tools (read or proposed) and channels."""
    off = disabled(config)
    lines = []
    for s in installed():
        state = "broken" if s.skill is None else "off" if s.name in off else "on"
        lines.append(f"{s.name} ({state}) — {s.skill.description if s.skill else s.error}")
        if s.skill is None:
            lines.append(f"  from {s.source}")
            continue
        tools = [t for t in s.skill.tool_objects() if not t.unavailable]
        waiting = {t.name: why for t in tools if state == "on" and config is not None and (why := t.needs(config))}
        reads = [t.name for t in tools if t.kind == READ and t.name not in waiting]
        proposed = [t.name for t in tools if t.kind == MUTATE and t.name not in waiting]
        if reads:
            lines.append(f"  reads: {', '.join(reads)}")
        if proposed:
            lines.append(f"  proposes (after your approval): {', '.join(proposed)}")
        # a tool these settings cannot work with is not offered: said so, not listed as if it were
        lines += [f"  not offered yet: {name}, {why}" for name, why in waiting.items()]
        for channel in s.skill.channels:
            what = "buffered receptor" if channel.buffered else "conversation" if channel.converses else "channel"
            idle = "" if state != "on" or channel.enabled(config) else ", not configured"
            lines.append(f"  channel: {channel.name} ({what}{idle})")
        if s.skill.status is not None and state == "on":
            lines += [f"  {line}" for line in s.skill.status(config)]
        lines += [f"  needs: {missing}" for missing in s.skill.missing()]
        if s.skill.config is not None:
            lines.append(f"  settings: [{s.name}]")
        lines.append(f"  from {s.source}")
    unknown = sorted(off - {s.name for s in installed()})
    if unknown:
        lines.append(f"[skills] disabled names no installed skill: {', '.join(unknown)}")
    if not lines:
        lines.append("no skills installed")
    return lines
