"""Read-only views of working memory for the REPL, the CLI and Telegram commands.

Size: one read-only view per thing the user can look at; each is short and they share the row formatting.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

from peewee import fn

from actors.proposals.rules import OPEN
from actors.tools import reminder_views, task_view, topic_view, visible_to
from storage import kv, mute, trace
from storage.beliefs import behaviour_changes, memory_list
from storage.models import Approval, ApprovalItem, Cursor, Inbox, Outbox, Task, TokenUsage, Topic, Trace
from wilson.kernel import clock as clockmod
from wilson.kernel.config import ROLES
from wilson.kernel.redact import redact
from wilson.model.endpoints import resolve_endpoint
from wilson.model.replies import cost, example_prices, prices, usd
from wilson.model.synapse import REST_KEY


def tasks(tz, status: str | None = None, user_id: str | None = None, owner: str | None = None) -> list[dict]:
    """`user_id`, `owner`: whose list it is (`visible_to`); None lists everything."""
    query = (
        Task.select()
        .where(visible_to(Task, user_id, owner))
        .order_by(Task.status != "open", Task.due.is_null(), Task.due, Task.id)
    )
    if status:
        query = query.where(Task.status == status)
    return [task_view(t, tz) for t in query]


def overdue(tz, now, user_id: str | None = None, owner: str | None = None) -> list[dict]:
    """Open tasks whose day has passed by `now`, oldest first, each with what the user can do about it."""
    today = now.astimezone(tz).date()
    rows = []
    for task in (
        Task.select()
        .where(visible_to(Task, user_id, owner) & (Task.status == "open") & Task.due.is_null(False))
        .order_by(Task.due, Task.id)
    ):
        view = task_view(task, tz)
        if view["due"] and str(view["due"])[:10] < today.isoformat():
            rows.append(dict(view, choices=f"done {task.id} · move {task.id} DATE · drop {task.id} · help {task.id}"))
    return rows


def topics(tz, user_id: str | None = None, owner: str | None = None) -> list[dict]:
    """Each topic with its tasks, dates and history; topics still waiting in a proposal show as proposed.
    `user_id`, `owner`: whose list it is (`visible_to`); None lists everything."""
    views = []
    for topic in Topic.select().where(visible_to(Topic, user_id, owner)).order_by(Topic.id):
        view = topic_view(topic, tz)
        view["tasks"] = [
            task_view(t, tz)
            for t in topic.tasks.where(visible_to(Task, user_id, owner)).order_by(Task.due.is_null(), Task.due, Task.id)
        ]
        view["history"] = [f"{topic.created_at.astimezone(tz):%Y-%m-%d} created"] + (
            [f"{topic.closed_at.astimezone(tz):%Y-%m-%d} closed"] if topic.closed_at else []
        )
        views.append(view)
    pending = (
        ApprovalItem.select(ApprovalItem, Approval)
        .join(Approval)
        .where((ApprovalItem.tool == "create_topic") & (ApprovalItem.status == "pending") & Approval.status.in_(OPEN))
    )
    if user_id is not None and str(user_id) != str(owner):
        pending = pending.where(Approval.approver == str(user_id))
    for item in pending:
        views.append(
            {
                "id": None,
                "title": item.args.get("title"),
                "status": "proposed",
                "starts": item.args.get("starts"),
                "ends": item.args.get("ends"),
                "proposal": item.approval_id,
                "tasks": [],
                "history": [],
            }
        )
    return views


def _approval_row(approval: Approval, tz) -> dict:
    return {
        "id": approval.id,
        "status": approval.status,
        "expires": approval.expires_at.astimezone(tz).isoformat(timespec="minutes"),
        "supersedes": approval.supersedes,
        "superseded_by": approval.superseded_by,
        "reason": approval.reason,
        "changes": approval.changes,
        "items": [
            {"position": i.position, "tool": i.tool, "status": i.status, "description": i.description}
            for i in approval.items.order_by(ApprovalItem.position)
        ],
    }


def approvals(tz) -> list[dict]:
    return [_approval_row(a, tz) for a in Approval.select().order_by(Approval.id)]


def expired(tz) -> list[dict]:
    """Proposals that ran out of time and were not brought back, newest first: what `revive N` can bring back."""
    query = (
        Approval.select()
        .where((Approval.status == "expired") & Approval.superseded_by.is_null())
        .order_by(Approval.id.desc())
        .limit(20)
    )
    return [_approval_row(a, tz) for a in query]


def reminders(tz) -> list[dict]:
    """Recurring and one-off reminders, their schedules in words."""
    return reminder_views(tz)


def inbox(tz) -> list[dict]:
    return [
        {
            "id": r.id,
            "priority": r.priority,
            "kind": r.kind,
            "origin": r.origin,
            "status": r.status,
            "trace": r.trace_id,
            "text": r.text[:80],
        }
        for r in Inbox.select().order_by(Inbox.id.desc()).limit(30)
    ]


def outbox(tz) -> list[dict]:
    return [
        {"id": r.id, "channel": r.channel, "status": r.status, "trace": r.trace_id, "text": r.text[:80]}
        for r in Outbox.select().order_by(Outbox.id.desc()).limit(30)
    ]


def memories(tz) -> list[dict]:
    """What the hippocampus has learned (principles, beliefs, interpretations), each with the id that
    `forget N` names, since when it is held, and what it rests on; first, what it changes in what Wilson says,
    each with its evidence and the one command that takes it back."""
    return behaviour_changes() + memory_list()


def trace_steps(trace_id: str, tz=None) -> list[dict]:
    """`tz`: the user's zone (None: this machine's)."""
    # rows written before redaction existed may still hold a secret
    return [
        {"at": r.at.astimezone(tz).isoformat(), "stage": r.stage, "actor": r.actor, "reason": redact(r.reason)}
        for r in trace.path(trace_id)
    ]


def trace_text(trace_id: str, tz=None) -> str:
    """`tz`: the user's zone (None: this machine's)."""
    return trace.format_path(trace_id, tz)


def quiet(argument: str, now, config, command: str = "/quiet") -> str:
    """Start or end a mute ("3h", "45m", "off"), as Telegram's /quiet and the REPL's `quiet` do; the answer to show.
    Messages held already wait as the new mute says (the caller nudges the tick to release them).
    `command`: how the user types it on their channel, for the hints."""
    if argument.strip().lower() in ("off", "stop", "end", "0"):
        mute.mute(None)
        mute.retime_held(config, now)
        return "Quiet is over: I'll tell you things as they come."
    try:
        until = now + clockmod.parse_duration(argument)
    except ValueError:
        return f"For how long? For example {command} 3h or {command} 45m ({command} off ends it)."
    mute.mute(until)
    mute.retime_held(config, now)
    local = until.astimezone(config.timezone)
    return (
        f"Quiet until {local:%a %d %b %H:%M} ({config.timezone}). {still_through(config)} {command} off ends it early."
    )


EMERGENCIES = (
    "a water or gas leak, a fire, a medical emergency, the police, your child's school or care closing "
    "today, travel cancelled or moved within 12 hours"
)


def still_through(config) -> str:
    """What still reaches the user while quiet holds, exactly: a model's own urgent flag, and without a model the
    clear emergencies the offline rules know ([attention] offline_wake), or nothing."""
    offline = all(not resolve_endpoint(config, role).base_url for role in ROLES)
    wake = bool(config.get("attention", "offline_wake"))
    if offline and wake:
        return f"Only emergencies still come through: {EMERGENCIES}."
    if offline:
        return "Nothing comes through until then, not even emergencies ([attention] offline_wake is off)."
    return "Only what your model flags as urgent still comes through."


def table(name: str, rows: list[dict]) -> str:
    if not rows:
        return "(no expired proposals)" if name == "expired" else f"(no {name})"
    lines = []
    for row in rows:
        if name == "overdue":
            lines.append(
                f"#{row['id']:<4} was due {row['due']:<12} {row['title']}"
                + (f"  [{row['topic']}]" if row.get("topic") else "")
                + f"\n      → {row['choices']}"
            )
        elif name == "tasks":
            lines.append(
                f"#{row['id']:<4} {row['status']:<9} {row['due'] or '—':<12} {row['title']}"
                + (f"  [{row['topic']}]" if row.get("topic") else "")
            )
        elif name == "topics":
            span = f"{row['starts'] or ''}–{row['ends'] or ''}"
            ident = f"#{row['id']}" if row["id"] else f"(proposal {row['proposal']})"
            lines.append(f"{ident:<6} {row['status']:<8} {row['title']}  {span}")
            lines += [f"       · {t['status']:<9} {t['due'] or '—':<12} {t['title']}" for t in row["tasks"]]
        elif name in ("approvals", "expired"):
            if row["status"] == "expired":
                back = f", back as #{row['superseded_by']}" if row.get("superseded_by") else f"  (revive {row['id']})"
                lines.append(f"#{row['id']:<4} {'expired':<10} on {row['expires']}{back}")
            else:
                lines.append(f"#{row['id']:<4} {row['status']:<10} expires {row['expires']}")
            if row.get("reason"):
                lines.append(f"       {row['reason'][:1].upper()}{row['reason'][1:]}.")
            # an item's notes go on under it, indented as deep as its first line
            lines += [
                f"       {i['position']}. [{i['status']}] {i['description']}".replace("\n", "\n       ")
                for i in row["items"]
            ]
            if row.get("changes") and row.get("supersedes"):
                lines.append(f"       What changed from #{row['supersedes']}:")
                lines += [f"         {c}" for c in row["changes"].splitlines()]
        elif name == "memories" and row["kind"] == "change":
            lines.append(f"now: {row['says']}  (since {row['since']}; {row['because']}; undo: {row['undo']})")
        elif name == "memories":
            lines.append(
                f"#{row['id']:<4} {row['kind']:<14} since {row['since']}  {row['text']}"
                + (
                    f"  (from {', '.join(row['provenance'][:3])}" + (" …" if len(row["provenance"]) > 3 else "") + ")"
                    if row["provenance"]
                    else ""
                )
                + ("  — changes nothing until you approve it" if row.get("asks_first") else "")
            )
        elif name == "reminders":
            lines.append(f"{row['text']} — {row['when']}" + ("" if row["kind"] == "once" else f" (next {row['next']})"))
        else:
            lines.append("  ".join(str(v) for v in row.values()))
    return "\n".join(lines)


def latest_traces(limit: int = 10) -> list[str]:
    seen, ids = set(), []
    for row in Trace.select(Trace.trace_id).order_by(Trace.id.desc()).limit(500):
        if row.trace_id not in seen:
            seen.add(row.trace_id)
            ids.append(row.trace_id)
        if len(ids) >= limit:
            break
    return ids


def recent_traces(tz, limit: int = 25) -> list[dict]:
    """The latest paths, newest first, each by when it began and its first and last step (as `wilson trace ID`
    shows them: storage.trace.path), to pick one from: the dashboard's list and `wilson trace`."""
    found = []
    for trace_id in latest_traces(limit):
        rows = trace.path(trace_id)  # with the routing and deliveries their rows record
        if rows:
            found.append(
                {
                    "id": trace_id,
                    "at": rows[0].at.astimezone(tz).strftime("%a %d %b %H:%M"),
                    "first": f"{rows[0].stage}: {rows[0].reason}"[:140],
                    "last": f"{rows[-1].stage}: {rows[-1].reason}"[:140] if len(rows) > 1 else "",
                }
            )
    return found


def budget_lines(config, days: int = 7) -> list[str]:
    """`wilson budget`: tokens and roughly what they cost, per day and role over the last `days` days a model
    was used, at the [llm] price_<role> table (every input token at the full price: the most it costs)."""
    table = prices(config)
    rows = list(TokenUsage.select().order_by(TokenUsage.day.desc(), TokenUsage.role))
    shown = sorted({row.day for row in rows}, reverse=True)[:days]
    if not shown:
        return ["No model has been used yet: the offline rules spend nothing."]
    lines = [f"Model use on the last {len(shown)} day{'s' if len(shown) != 1 else ''} it was used (UTC):"]
    total = 0.0
    for row in (r for r in rows if r.day in shown):
        money = cost(table.get(row.role, (0.0, 0.0, 0.0)), row.prompt_tokens, row.completion_tokens)
        total += money
        calls = f"{row.calls:,} call" + ("" if row.calls == 1 else "s")
        lines.append(
            f"  {row.day}  {row.role:<6} {calls:>11}  {row.prompt_tokens:>11,} in  "
            f"{row.completion_tokens:>9,} out  about {usd(money)}"
        )
    lines.append(f"  in all about {usd(total)}")
    if example_prices(config):
        lines.append(
            "Priced at the example prices Wilson ships with; set WILSON_LLM_PRICE_<ROLE> "
            "(input/cached/output USD per million tokens) to your provider's."
        )
    return lines


def model_lines(config) -> list[str]:
    """What answers the model roles, for `wilson status`: said plainly when no model is connected (the
    offline rules spend no tokens), then the token use of the last days a model was used."""
    endpoints = {role: resolve_endpoint(config, role) for role in ROLES}
    if not any(e.base_url for e in endpoints.values()):
        lines = [
            "model: none connected; the offline rules answer, and no tokens are spent "
            "(set WILSON_LLM_BASE_URL and WILSON_LLM_MODEL to connect one)"
        ]
    else:
        lines = [
            f"model {role}: {e.models[0]}" if e.base_url else f"model {role}: none (offline rules, no tokens)"
            for role, e in endpoints.items()
        ]
    for row in TokenUsage.select().order_by(TokenUsage.day.desc(), TokenUsage.role).limit(6):
        lines.append(
            f"model {row.day} {row.role:<6} {row.calls} calls, {row.prompt_tokens}+{row.completion_tokens} tokens"
        )
    return lines + failure_lines()


def failure_lines() -> list[str]:
    """Each role's runs in the last day of model use whose model broke the tool protocol (the offline rules
    answered them instead, wilson/model/synapse.py), for `wilson status` and `wilson doctor`; none when none did.
    The last day is the newest day of use and the one before (a status run later reads what happened then)."""
    newest = TokenUsage.select(fn.MAX(TokenUsage.day)).scalar()
    if not newest:
        return []
    since = (date.fromisoformat(newest) - timedelta(days=1)).isoformat()
    lines = []
    for row in (
        TokenUsage.select()
        .where((TokenUsage.day >= since) & (TokenUsage.failed > 0))
        .order_by(TokenUsage.day.desc(), TokenUsage.role)
    ):
        lines.append(
            f"model {row.role}: FIX: {row.failed} of {max(row.runs, row.failed)} runs on {row.day} broke the "
            f"tool protocol (last: {row.failure or 'unknown'}); the offline rules handled them. "
            "`wilson doctor` tests the model."
        )
    return lines + resting_lines()


def resting_lines() -> list[str]:
    """Each role whose model rests after failed runs in a row (wilson/model/synapse.py `resting`)."""
    lines = []
    for role, value in sorted((kv.get_setting(REST_KEY) or {}).items()):
        if not isinstance(value, dict):
            continue
        lines.append(
            f"model {role}: resting after {value.get('failed', '?')} failed runs in a row (last: "
            f"{value.get('why') or 'unknown'}): the offline rules answer its runs until "
            f"{value.get('until', '?')[:16].replace('T', ' ')}, then one run asks the model again."
        )
    return lines


def health_line(name: str, value, written, tz) -> str:
    """One channel's health cursor for `wilson status`: its state, where, when it last reached its source and
    its last error, and when the cursor was written (a Wilson killed outright leaves its last state standing;
    the time tells how old it is)."""
    value = value if isinstance(value, dict) else {"state": str(value)}
    parts = [f"{name}: {value.get('state') or 'unknown'}"]
    if value.get("address") and value.get("state") == "serving":
        parts.append(f"at {value['address']}")
    if value.get("restarts"):
        parts.append(f"({value['restarts']} restart(s))")
    if value.get("last_ok"):
        parts.append(f"— last success {_moment(value['last_ok'], tz)}")
    if value.get("error"):
        at = f" {_moment(value['error_at'], tz)}" if value.get("error_at") else ""
        parts.append(f"— last error{at}: {value['error']}")
    if written is not None:
        parts.append(f"(as of {clockmod.as_utc(written).astimezone(tz):%a %d %b %H:%M})")
    return " ".join(parts)


def _moment(iso: str, tz) -> str:
    try:
        return f"{clockmod.as_utc(datetime.fromisoformat(iso)).astimezone(tz):%a %d %b %H:%M}"
    except (TypeError, ValueError):
        return str(iso)[:40]


def health_rows(tz) -> list[dict]:
    """Every channel's health for the dashboard: name, state, last success, last error (with when)."""
    rows = []
    for row in Cursor.select().where(Cursor.name.startswith("health:")).order_by(Cursor.name):
        value = row.value if isinstance(row.value, dict) else {"state": str(row.value)}
        rows.append(
            {
                "name": row.name[len("health:") :],
                "state": value.get("state") or "unknown",
                "last_ok": _moment(value["last_ok"], tz) if value.get("last_ok") else "",
                "error": value.get("error") or "",
                "error_at": _moment(value["error_at"], tz) if value.get("error_at") else "",
            }
        )
    return rows
