"""A proposal in words: the message that asks for it, why it was made, what a modification changed,
and the lines that remind of it, drop it, or say how it ended. Pure: reads rows, writes none."""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta

from actors import tools
from actors.proposals.rules import actions_for, items_of
from storage.models import Approval, Inbox
from wilson.kernel.timeparse import aware_or_none, last_day


UNDO_WORDS = re.compile(
    r"(?i)^\s*(?:please\s+)?undo(?:\s+(?:that|it|this|the last one|(?:proposal\s+)?#?(\d{1,16})))?"
    r"(?:\s+please)?\s*[.!]?\s*$"
)


def undo_named(text: str) -> int | None:
    """Which proposal the user's words ask to undo: its number, 0 for the latest ("undo", "undo that"), or
    None when the words are not an undo. Only these short forms: "undo the milk task" is a sentence."""
    match = UNDO_WORDS.match(text or "")
    if match is None:
        return None
    return int(match.group(1)) if match.group(1) else 0


def render(approval: Approval, tz) -> str:
    items = items_of(approval.id)
    asks = "approve, modify or reject?" if "modify" in actions_for(approval) else "approve or reject?"
    lines = [f"Proposal {approval.id}: I'd like to do this — {asks}"]
    if approval.reason:
        lines.append(approval.reason[:1].upper() + approval.reason[1:] + ".")
    if (approval.idempotency_key or "").startswith("revive:") and approval.supersedes:
        lines.append(f"(Back again: proposal {approval.supersedes} had expired.)")
    for item in items:
        lines.append(f"{item.position}. {item.description}")
    if approval.changes and approval.supersedes:
        lines.append(f"What changed from proposal {approval.supersedes}:")
        lines += [f"  {line}" for line in approval.changes.splitlines()]
    return "\n".join(lines)


# Why a proposal was made, and what a modification changed ---------------------------------------
def headline(description: str) -> str:
    """An item's first line, what it does: the notes shown under it in the proposal are not repeated in a
    receipt or a briefing."""
    return (description or "").split("\n", 1)[0]


def one_line(text, limit: int = 80) -> str:
    """Words as they may stand inside a quoted line: one line, no curly quotes, links defanged, cut short."""
    return tools.quoted(text if isinstance(text, str) else str(text), limit)


def _day(moment: datetime, tz, now: datetime | None, with_time: bool) -> str:
    local = moment.astimezone(tz)
    text = f"{local:%a} {local.day} {local:%b}"
    if now is None or local.year != now.astimezone(tz).year:
        text += f" {local.year}"
    return text + (f" {local:%H:%M}" if with_time and (local.hour, local.minute) != (0, 0) else "")


def _calendar_reason(buffer: dict, tz, now: datetime) -> str:
    title = one_line(buffer.get("title") or "an event", 60)
    start = aware_or_none(buffer.get("start"))
    when = f" on {_day(start, tz, now, not buffer.get('all_day'))}" if start else ""
    change = buffer.get("change")
    if change == "cancelled":
        return f"because “{title}”{when} was cancelled in your calendar"
    if change == "changed":
        return (
            f"because “{title}” changed in your calendar, now{when}"
            if when
            else f"because “{title}” changed in your calendar"
        )
    return f"because “{title}” is in your calendar{when}"


def reason_for(row: Inbox | None, now: datetime, tz, quote: int = 80) -> str:
    """One line saying what led to a proposal: the event, message, deadline or reminder of the run
    that made it. Words others wrote are quoted short, with their source named; the user's own words up to
    `quote` characters."""
    if row is None:
        return ""
    payload = row.payload if isinstance(row.payload, dict) else {}
    if row.origin == "user":
        return f"because you asked: “{one_line(row.text, quote)}”"
    if row.kind == "deadline" and payload.get("title"):
        due = aware_or_none(payload.get("due"))
        when = (
            f" {'was' if due and due <= now else 'is'} due {_day(due, tz, now, not payload.get('due_is_date'))}"
            if due
            else " has a deadline"
        )
        return f"because “{one_line(payload['title'], 60)}”{when}"
    if row.kind == "topic_end" and payload.get("title"):
        ends = aware_or_none(payload.get("ends"))
        on = f" on {_day(datetime.combine(last_day(ends, tz), time(0), tzinfo=tz), tz, now, False)}" if ends else ""
        return f"because “{one_line(payload['title'], 60)}” ended{on}"
    if row.kind == "reminder":
        return f"because of your reminder “{one_line(payload.get('text') or row.text, 60)}”"
    buffers = [b for b in payload.get("buffers") or [] if isinstance(b, dict)]
    if buffers:
        first = buffers[0]
        if first.get("channel") == "calendar":
            line = _calendar_reason(first, tz, now)
        elif first.get("via") == "api" and first.get("change") == "new" and first.get("title"):
            # an event a script of the user's sent in: said as an event, not as a web page
            start = aware_or_none(first.get("start"))
            if start is None and len(str(first.get("start") or "")) == 10:  # a date alone: all day
                try:
                    start = datetime.combine(date.fromisoformat(first["start"]), time(0), tz)
                except ValueError:
                    start = None
            when = f" on {_day(start, tz, now, False)}" if start else ""
            line = f"because you sent me “{one_line(first['title'], 60)}”{when}"
        else:
            line = f"because of {tools.source_label(row)}"
        return (
            line
            if len(buffers) == 1 or first.get("channel") != "calendar"
            else f"{line} (and {len(buffers) - 1} more change{'s' if len(buffers) > 2 else ''})"
        )
    if row.kind == "briefing":
        summaries = [i.get("summary") for i in payload.get("items") or [] if isinstance(i, dict) and i.get("summary")]
        what = f": “{one_line(summaries[0], 60)}”" if summaries else ""
        return f"because of what I found in {tools.source_label(row)}{what}"
    source = tools.source_label(row) or "your " + one_line(row.source, 30)
    return f"because of {source}: “{one_line(row.text, 60)}”"


def _identity(tool: str, args: dict) -> tuple:
    """What makes two items the same item in two versions of a proposal (its subject, not its details)."""
    for key in ("task_id", "topic_id"):
        if args.get(key) is not None:
            return tool, key, str(args[key])
    subject = args.get("title") or args.get("text") or args.get("to") or ""
    return tool, " ".join(str(subject).lower().split())


def _when(value, tz) -> str:
    try:
        moment, is_date = tools.parse_when(value, tz)
    except ValueError:
        return str(value)
    return tools.show_when(moment, is_date, tz)


def _detail_change(tool: str, old: dict, new: dict, old_text: str, new_text: str, tz) -> str:
    subject = new.get("title") or new.get("text") or old.get("title") or new_text
    parts = []
    for key in ("due", "starts", "ends", "until"):
        if old.get(key) != new.get(key):
            now_ = _when(new[key], tz) if new.get(key) else "no date"
            was = _when(old[key], tz) if old.get(key) else "no date"
            parts.append(f"{key} {now_} (was {was})")
    if old.get("topic") != new.get("topic"):
        parts.append(f"in {new.get('topic') or 'no topic'} (was {old.get('topic') or 'no topic'})")
    if old.get("cron") != new.get("cron"):
        parts.append(f"schedule {new.get('cron')} (was {old.get('cron')})")
    for key in ("notes", "subject", "body", "escalation"):
        if old.get(key) != new.get(key):
            parts.append(f"new {key}")
    if not parts:  # something else differs: show both versions whole
        return f"changed: {new_text} (was: {old_text})"
    return f"changed: {one_line(subject, 60)} {', '.join(parts)}"


def changes_between(old: list[tuple[str, dict, str]], new: list[tuple[str, dict, str]], tz) -> str:
    """What a replacement changes against the proposal it supersedes, one line per item added, removed or
    changed (items as (tool, args, description)); '' when they are the same."""
    remaining = list(old)
    lines, added = [], []
    for tool, args, description in new:
        match = next((o for o in remaining if _identity(o[0], o[1]) == _identity(tool, args)), None)
        if match is None:
            added.append(description)
            continue
        remaining.remove(match)
        if match[1] != args:
            lines.append(_detail_change(tool, match[1], args, match[2], description, tz))
    lines += [f"added: {d}" for d in added]
    lines += [f"removed: {d}" for d in (o[2] for o in remaining)]
    return "\n".join(line.splitlines()[0] for line in lines)


def label(approval: Approval) -> str:
    """A proposal in a few words: 'the “Trip to Japan” plan', or its first item."""
    items = items_of(approval.id)
    topic = next((i for i in items if i.tool == "create_topic" and (i.args or {}).get("title")), None)
    if topic is not None:
        return f"the “{one_line(topic.args['title'], 50)}” plan"
    if not items:
        return "an empty proposal"
    first = f"“{one_line(items[0].description.splitlines()[0], 50)}”"
    return first if len(items) == 1 else f"{first} and {len(items) - 1} more"


def _lasted(approval: Approval) -> str:
    hours = round((approval.expires_at - approval.created_at).total_seconds() / 3600)
    if hours >= 48:
        return f"{round(hours / 24)} days"
    return f"{hours} hour{'s' if hours != 1 else ''}"


def reminder_text(approval: Approval, tz, now: datetime) -> str:
    lapses = approval.expires_at.astimezone(tz)
    if (lapses.hour, lapses.minute) == (0, 0):  # a task's due day ends: "Fri 8 Jan" would be a day late
        when = f"at the end of {_day(lapses - timedelta(minutes=1), tz, now, False)}"
    else:
        when = f"on {_day(lapses, tz, now, True)}"
    return (
        f"Still waiting for your answer on proposal {approval.id}, {label(approval)}. "
        f"I'll drop it {when} if I don't hear from you."
    )


def expiry_text(approval: Approval, in_time: bool = False) -> str:
    """The one notice of expiry; `in_time`: it lapsed when its time passed (lapse.lapsed_in_time), and
    bringing it back as it was would not help."""
    if in_time:
        return (
            f"I dropped proposal {approval.id}, {label(approval)}: its time has passed, so nothing changed. "
            "Ask me again if you still want it."
        )
    return (
        f"I dropped proposal {approval.id}, {label(approval)}: no answer in {_lasted(approval)}, so nothing "
        f"changed. Say “show expired” to see it again, or “revive {approval.id}” to bring it back."
    )


def outcome_line(approval: Approval) -> str:
    marks = {
        "executed": "✓",
        "rejected": "✗",
        "superseded": "↻",
        "failed": "!",
        "pending": "·",
        "calling": "…",
        "unknown": "?",
    }
    items = items_of(approval.id)
    return "\n".join(f"{marks.get(i.status, '·')} {i.description}" for i in items)
