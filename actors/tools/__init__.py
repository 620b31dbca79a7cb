"""The cortex's tools: the cortex's own (core.py) and those of the enabled skills (wilson/skills.py),
one module per built-in skill (tasks.py, reminders.py, calendar.py; telegram.py is a channel only).

Read tools run at once (`run_read`). Mutations are offered as the actions of one `propose` tool
(`schemas_for`; a call by a mutation's own name is still read) and never run when the model calls
them: the cortex validates and describes them (`validate_mutation`, `describe_item`), the call
becomes a proposal, and only the approval gate executes them, through `execute_approved`, which
refuses any item the gate has not claimed from an approved proposal. Decision tools (`surface`,
`request_sync`, `decide`) are interpreted by the cortex itself; `decide` is offered only to runs the
user started.

Size: the toolbox's one entry point: which tools a run is offered, how a `propose` is validated and how
an approved item is executed are one path, and each step is a short function.
"""

from __future__ import annotations

import functools
import re
from datetime import datetime
from zoneinfo import ZoneInfo

from actors.tools import core
from actors.tools.common import (
    EARLIEST_YEAR,
    LATEST_YEAR,
    LIMITS,
    SURFACE_LIMIT,
    _is_int,
    _short,  # noqa: F401
    already,
    calendar_events,
    describe_cron,
    parse_when,
    reminder_at,
    reminder_views,
    repeated,
    show_span,
    show_when,
    similar_titles,
    storable,
    task_view,
    topic_view,
    valid_windows,
    visible_to,
)
from actors.tools.untrusted import (
    TRUSTED_SOURCES,
    UNTRUSTED_END,
    UNTRUSTED_RULE,
    defang,
    quoted,  # noqa: F401
    hosts_in,
    own_hosts,
    source_label,
    untrusted_block,
)
from storage import outbox
from storage.models import ApprovalItem
from wilson import skills
from wilson.skills import DECISION, MUTATE, PROPOSE, READ, Call, Tool, Toolbox  # noqa: F401


class NotAvailable(Exception):
    """An approved item whose tool cannot act (not yet, or its skill is off): it fails with this reason."""


class NotApproved(Exception):
    """A mutation asked to run for an item the approval gate has not claimed from an approved proposal."""


@functools.cache
def _toolbox(off: frozenset, unset: frozenset, generation: int) -> Toolbox:
    return Toolbox(
        [tool() for tool in core.TOOLS],
        [s for s in skills.installed() if s.skill is not None and s.name not in off],
        dict(unset),
    )


def toolbox(config=None) -> Toolbox:
    """The tools in use with this configuration ([skills] disabled, and what each tool needs set up);
    every installed skill's without one."""
    return _toolbox(frozenset(skills.disabled(config)), frozenset(skills.not_set_up(config).items()), skills.GENERATION)


def __getattr__(name: str):
    # the default toolbox, looked up late: the skills that fill it import this package
    if name == "TOOLS":
        return toolbox().order
    if name == "BY_NAME":
        return dict(toolbox().tools)
    raise AttributeError(name)


# Tool schemas are most of a prompt's tokens, so each kind of run is offered only what it uses.
# A mutation is still only ever a proposal: these sets choose what is offered, never what may bypass the gate.
RUNS = ("user", "background", "noting", "note", "fast", "greeting")
# What every context already says (the time, with its weekday): offered to no run.
IN_CONTEXT = frozenset({"now"})
# Background runs act on what came in (an event, a mail, a deadline).
BACKGROUND_LEAVES_OUT = IN_CONTEXT | frozenset(
    {"list_reminders", "rename_topic", "cancel_task", "decide", "watch", "unwatch", "list_watches"}
)
# Routine chat reads the user's own lists, calendar and mail; anything else goes to the planner.
FAST_READS = frozenset({"recall", "list_tasks", "list_topics", "list_reminders", "calendar_lookup", "search_email"})
# A mail that needs a note or one task (triage said it takes no plan): the actions that make one, the calendar
# for a moved event, the task list (its context shows only the tasks its words name: one worded otherwise, "MOT"
# for "car inspection", is a list_tasks away), and `surface`. (The context recalls memories; a sync brought the
# mail, so no sync is asked for.) A user's request for one note, task or reminder is offered the same reads and
# actions (the "note" run), with `decide` instead of `surface` ("remind me at 5 instead" may answer a proposal):
# its reply is what the user reads.
NOTING_READS = frozenset({"calendar_lookup", "list_tasks"})
NOTING_ACTIONS = frozenset({"create_task", "update_task", "complete_task", "remind"})
NOTING_DECISIONS = frozenset({"surface"})
ESCALATE = {
    "type": "function",
    "function": {
        "name": "escalate",
        "description": "Hand this request to the planner: anything that needs a plan or a change (tasks, topics, "
        "reminders, email).",
        "parameters": {"type": "object", "properties": {"why": {"type": "string"}}},
    },
}
# A background item that triage found nothing to plan in goes to the fast role with the tools of a note; it
# hands the item to the planner when it turns out to need one.
ESCALATE_PLAN = {
    "type": "function",
    "function": {
        "name": "escalate",
        "description": "Hand this to the planner when acting on it needs a plan: several tasks or steps, dates to "
        "work out, a trip or an event to prepare.",
        "parameters": {"type": "object", "properties": {"why": {"type": "string"}}},
    },
}

# Every mutation is offered through one tool: each change names its action (a mutation tool, which still
# validates, describes and executes it) with a one-line argument list, instead of a full schema per tool.
MAX_CHANGES = 20
PROPOSE_HEAD = (
    "Propose changes; nothing changes until the user approves. Each change is "
    '{"action": NAME, ...its arguments}; "?" marks optional ones, dates YYYY-MM-DD or ISO datetime. '
    "Actions:"
)


def action_line(tool: Tool) -> str:
    """One action of `propose`: its arguments and the gist of its description (`brief` when it has one)."""
    required = set(tool.parameters.get("required") or ())
    args = ", ".join(k if k in required else f"{k}?" for k in tool.properties())
    gist = getattr(tool, "brief", "") or _gist(tool.description)
    return f"{tool.name}({args}): {gist}" if gist else f"{tool.name}({args})"


def _gist(description: str) -> str:
    text = re.sub(r"^Propose\s+", "", (description or "").strip())
    text = re.split(r"(?<!e\.g\.)(?<!i\.e\.)(?<=[.;:])\s", text, maxsplit=1)[0].rstrip(".;:")
    return text[:1].lower() + text[1:]


def propose_schema(actions: list[Tool]) -> dict:
    return {
        "type": "function",
        "function": {
            "name": PROPOSE,
            "description": "\n".join([PROPOSE_HEAD] + [action_line(t) for t in actions]),
            "parameters": {
                "type": "object",
                "required": ["changes"],
                "properties": {
                    "changes": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["action"],
                            "properties": {"action": {"type": "string", "enum": [t.name for t in actions]}},
                        },
                    }
                },
            },
        },
    }


def changes_of(args: dict) -> tuple[list[tuple[str, dict, str | None]], str | None]:
    """The changes of a `propose` call as (action, its arguments, why it is unusable or None); or the reason
    the call as a whole cannot be read. `{"action": X, "args": {...}}` is read like the flat shape."""
    changes = args.get("changes")
    if isinstance(changes, dict):
        changes = [changes]  # one change not wrapped in a list
    if not isinstance(changes, list) or not changes:
        return [], 'propose needs `changes`: a list of {"action": NAME, ...its arguments}'
    if len(changes) > MAX_CHANGES:
        return [], f"at most {MAX_CHANGES} changes in one propose call, got {len(changes)}"
    read = []
    for position, change in enumerate(changes, start=1):
        action = change.get("action") if isinstance(change, dict) else None
        if not isinstance(action, str) or not action.strip():
            read.append((_short(action), {}, f"change {position} has no action name"))
            continue
        rest = {k: v for k, v in change.items() if k != "action"}
        if set(rest) == {"args"} and isinstance(rest["args"], dict):
            rest = rest["args"]
        read.append((action.strip(), rest, None))
    return read, None


def schemas_for(run: str, box: Toolbox | None = None, deciding: bool = True) -> list[dict]:
    """The schemas one kind of run is offered:
    - "user": every read, `propose` for every change, the decision tools;
    - "background": fewer reads and changes, nothing only the user may start;
    - "noting" (fast role): the calendar and tasks, the changes that make a note or one task, `surface`, and
      `escalate` to the planner;
    - "note" (fast role): a user's one note, task or reminder: the same reads and changes, `decide` instead of
      `surface`;
    - "fast" (routine chat): a few read tools, `decide`, and `escalate` to the planner;
    - "greeting": the same without the reads.
    `deciding` False: the user has no pending proposal, so `decide` (the last schema, so that what comes
    before it stays a cacheable prefix) is left out."""
    return list(_schemas_for(run, box or toolbox(), deciding))


@functools.lru_cache(maxsize=64)  # toolboxes are cached themselves, so one entry per configuration and run
def _schemas_for(run: str, box: Toolbox, deciding: bool) -> tuple[dict, ...]:
    return tuple(s for s in _select(run, box) if deciding or s["function"]["name"] != "decide")


def _select(run: str, box: Toolbox) -> list[dict]:
    if run in ("fast", "greeting"):  # a greeting or thanks reads nothing
        reads = FAST_READS if run == "fast" else frozenset()
        return (
            [s for s in box.schemas(True) if s["function"]["name"] in reads]
            + [ESCALATE]
            + [s for s in box.schemas(True) if s["function"]["name"] == "decide"]
        )
    if run not in ("user", "background", "noting", "note"):
        raise ValueError(f"unknown run {run!r}: one of {', '.join(RUNS)}")
    user_run = run in ("user", "note")
    leaves_out = IN_CONTEXT if user_run else BACKGROUND_LEAVES_OUT
    chosen = [
        t
        for t in box.order
        if not box.why_not(t) and (user_run or not t.user_only) and not t.undo_only and t.name not in leaves_out
    ]
    if run == "noting":
        chosen = [t for t in chosen if t.name in NOTING_READS | NOTING_ACTIONS | NOTING_DECISIONS]
    if run == "note":  # the user waits for the reply (nothing to surface), and may be changing a proposal
        chosen = [t for t in chosen if t.name in NOTING_READS | NOTING_ACTIONS | {"decide"}]
    actions = [t for t in chosen if t.kind == MUTATE]
    schemas = [t.schema() for t in chosen if t.kind == READ]
    if actions:
        schemas.append(propose_schema(actions))
    return (
        schemas
        + [t.schema() for t in chosen if t.kind == DECISION]
        + ([ESCALATE_PLAN] if run in ("noting", "note") else [])
    )


def offered(run: str, box: Toolbox | None = None) -> frozenset[str]:
    """The names a run is offered: its tools, and the actions its `propose` can take."""
    return _offered(run, box or toolbox())


@functools.lru_cache(maxsize=64)  # asked on every run, for its system prompt
def _offered(run: str, box: Toolbox) -> frozenset[str]:
    return frozenset(names_in(schemas_for(run, box)))


def names_in(schemas: list[dict]) -> set[str]:
    return set(skills.offered_names(schemas))


def unoffered(name: str, args, offered_names: set[str]) -> str | None:
    """What a call asks for that its run was not offered (`offered_names` from `names_in`): the tool, or the
    first of a `propose` call's actions outside the run's set; None when everything was offered."""
    if name not in offered_names:
        return name
    if name == PROPOSE and isinstance(args, dict):
        changes, _ = changes_of(args)
        return next((action for action, _, _ in changes if action not in offered_names), None)
    return None


def kind_of(name: str, box: Toolbox | None = None) -> str | None:
    if name == PROPOSE:
        return MUTATE  # it only ever makes proposals
    return (box or toolbox()).kind_of(name)


def known_args(name: str, args: dict, box: Toolbox | None = None) -> dict:
    tool = (box or toolbox()).get(name)
    return tool.known_args(args) if tool else {}


def run_read(
    name: str,
    args: dict,
    now: datetime,
    tz: ZoneInfo,
    user_id: str | None = None,
    owner: str | None = None,
    box: Toolbox | None = None,
) -> object:
    """`user_id`, `owner`: whose run reads, for `visible_to`; None reads everything."""
    if not isinstance(args, dict):
        raise ValueError("arguments must be a JSON object")
    return (box or toolbox()).run_read(name, args, Call(now=now, tz=tz, user_id=user_id, owner=owner))


def validate_mutation(
    name: str,
    args: dict,
    tz: ZoneInfo,
    user_id: str | None = None,
    owner: str | None = None,
    now: datetime | None = None,
    box: Toolbox | None = None,
) -> str | None:
    """Why the model's call cannot become a proposal, or None. A task or topic the asking person may
    not see is answered as missing: its title must not reach them through a proposal."""
    tool = (box or toolbox()).get(name)
    if tool is None or tool.kind != MUTATE:
        return f"{name} is not a mutation tool"
    if (box or toolbox()).why_not(tool):
        return (box or toolbox()).why_not(tool)
    return tool.validate(args, Call(now=now, tz=tz, user_id=user_id, owner=owner))


def describe_item(
    name: str,
    args: dict,
    tz: ZoneInfo,
    user_id: str | None = None,
    owner: str | None = None,
    box: Toolbox | None = None,
) -> str:
    """What the user is approving, with every free-text argument in full; `user_id`, `owner`: whose
    proposal it is, so "you already have" names only what they can see (`visible_to`)."""
    tool = (box or toolbox()).get(name)
    if tool is None:
        return f"{name} {args}"
    return tool.describe(args, Call(now=None, tz=tz, user_id=user_id, owner=owner))


def moot_at(items: list[tuple[str, dict]], tz: ZoneInfo, box: Toolbox | None = None) -> datetime | None:
    """When these changes stop mattering, so that a proposal of them lapses then: the start of the event a
    plan is for (a topic's start), else the earliest of the items' own times; None when none has a time (what
    they propose makes sense whenever it is approved, and `[approval] expiry_hours` caps its wait)."""
    starts, moments = [], []
    for name, args in items:
        tool = (box or toolbox()).get(name)
        if name in ("create_topic", "update_topic"):
            start = event_start(args, tz)
            if start is not None:
                starts.append(start)
                continue
        moment = tool.moot_at(dict(args or {}), Call(now=None, tz=tz)) if tool is not None else None
        if moment is not None:
            moments.append(moment)
    if starts:
        return min(starts)
    return min(moments, default=None)


def event_start(args: dict, tz: ZoneInfo) -> datetime | None:
    """When the event a topic's arguments name starts (a date: that day's first moment), or None."""
    try:
        start, _ = parse_when((args or {}).get("starts"), tz)
    except (ValueError, TypeError):
        return None
    return start


def hints(
    name: str,
    args: dict,
    now: datetime,
    tz: ZoneInfo,
    user_id: str | None = None,
    owner: str | None = None,
    box: Toolbox | None = None,
) -> dict:
    tool = (box or toolbox()).get(name)
    return tool.hints(args, Call(now=now, tz=tz, user_id=user_id, owner=owner)) if tool else {}


# Executing approved mutations: the approval gate is the only caller --------------------------
def calls_outside(name: str, config=None, box: Toolbox | None = None) -> bool:
    """Whether an approved item of this tool calls another program (see Tool.outside): the gate calls it
    outside its transaction, between two commits."""
    tool = (box or toolbox(config)).get(name)
    return bool(tool is not None and tool.outside)


def execute_approved(
    item: ApprovalItem,
    approver: str | None,
    now: datetime,
    tz: ZoneInfo,
    scratch: dict,
    owner: str | None = None,
    config=None,
    box: Toolbox | None = None,
    claimed_as: str = "executing",
) -> tuple[dict, list]:
    """Apply one approved item, inside the gate's transaction; (its result, the (channel, outbox id)
    rows it wrote for a channel to deliver, to be nudged after the commit). `scratch` is shared by the
    items of one proposal (a topic created by item 1 is found by a task in item 2); `approver` owns
    what it creates. `claimed_as="calling"`: an item that calls another program, run by the gate outside
    any transaction after "calling" was committed."""
    claimed = ApprovalItem.get_or_none(ApprovalItem.id == item.id)
    if claimed is None or claimed.status != claimed_as:
        raise NotApproved(f"item {item.id} was not approved and claimed by the approval gate")
    box = box or toolbox(config)
    tool = box.get(claimed.tool)
    if tool is None:
        owner_skill = next(
            (
                s.name
                for s in skills.installed()
                if s.skill is not None and claimed.tool in {t.name for t in s.skill.tool_objects()}
            ),
            None,
        )
        if owner_skill is not None:
            raise NotAvailable(f"the {owner_skill} skill is turned off")
        raise NotAvailable(f"no installed skill can do {_short(claimed.tool)}")
    if tool.kind != MUTATE:
        raise ValueError(f"cannot execute {claimed.tool}")
    if box.why_not(tool):
        raise NotAvailable(box.why_not(tool))
    sent = []

    def sender(channel: str, text: str, payload: dict) -> int:
        row = outbox.add(
            channel=channel,
            text=text,
            payload=payload,
            at=now,
            trace_id=claimed.approval.trace_id,
            key=f"item:{claimed.id}:{len(sent)}",
        )
        sent.append(row.id)
        return row.id

    call = Call(
        now=now,
        tz=tz,
        user_id=approver,
        owner=owner,
        config=config,
        scratch=scratch,
        item_id=claimed.id,
        trace_id=claimed.approval.trace_id,
        sender=sender,
    )
    result = tool.execute(dict(claimed.args or {}), call)
    return (result if isinstance(result, dict) else {"result": result}), list(call.deliveries)
