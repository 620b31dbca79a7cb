"""The floor under judgement: the offline rules' clear-cut alarms reach the user whatever the model says.

A model may judge an item calmer than the rules do; for most items that is its call to make. For a few it
is not: an emergency (a child who needs picking up, a health emergency, a cancelled flight) and a deadline
within a day (a mail saying it is due today). Calendar changes are not among them: the user's own calendar
is no alarm by itself, and the RAS judges its changes by their times with or without a model. When the model
stays silent about one of these, the RAS still raises the alarm, triage still keeps it as urgent, and a
background run that surfaced nothing still tells it: each traced as "floor". `[attention] floor = false`
turns it off. A model that already tells them loses nothing: the floor acts only on its silence.
"""

from __future__ import annotations

from datetime import datetime

from actors.triage import headline
from wilson.kernel import lanes
from wilson.model.offline import triage as offline_triage


def enabled(config) -> bool:
    value = config.get("attention", "floor")
    return value is not False and str(value).lower() not in ("false", "0", "off", "no")


def alarm(channel: str, text: str, payload, now: datetime, tz) -> str | None:
    """Why an item (a buffered row's channel, text and payload) is a clear-cut alarm of the offline rules,
    or None: an emergency situation or a deadline today (urgency.judge_message's situations)."""
    payload = payload if isinstance(payload, dict) else {}
    if payload.get("change") or channel == "calendar":
        return None
    judgement = offline_triage.judge({"channel": channel, "text": text, "payload": payload}, now, tz)
    return judgement.rule if judgement.level == 1 and judgement.situation else None


def row_alarm(row, now: datetime, tz) -> str | None:
    """`alarm` for a buffered row (receptor_buffers). Triage and the RAS ask it of every row they read, a few
    milliseconds of the rules each, so a user's run in progress goes first (kernel/lanes.py)."""
    lanes.give_way()
    return alarm(row.channel, row.text or "", row.payload, now, tz)


def inbox_alarm(row, now: datetime, tz) -> str | None:
    """`alarm` for a background inbox row triage made of buffered items: the first of its items that is one."""
    payload = row.payload if isinstance(row.payload, dict) else {}
    if row.origin == "user":
        return None
    for item in payload.get("buffers") or []:
        if not isinstance(item, dict):
            continue
        found = alarm(str(item.get("channel") or ""), row.text or "", item, now, tz)
        if found is not None:
            return found
    return None


def lift(decisions: list[dict], rows: list, now: datetime, tz) -> tuple[list[dict], dict[int, str]]:
    """Triage's decisions with every clear alarm kept at priority 1 (taken out of a dropped group, or raised
    from a lower priority), and {buffer id: why} for the ones the floor changed."""
    by_id = {r.id: r for r in rows}
    lifted: dict[int, str] = {}
    out = []
    for decision in decisions:
        alarms = {
            i: why for i in decision["buffer_ids"] if i in by_id and (why := row_alarm(by_id[i], now, tz)) is not None
        }
        if not alarms or (decision["action"] == "inbox" and decision["priority"] == 1):
            out.append(decision)
            continue
        lifted.update(alarms)
        if decision["action"] == "inbox":  # a group kept calmer than the rules: the whole group moves up
            out.append({**decision, "priority": 1, "reason": f"floor: {next(iter(alarms.values()))}"[:300]})
            continue
        rest = [i for i in decision["buffer_ids"] if i not in alarms]
        if rest:
            out.append({**decision, "buffer_ids": rest})
        for i, why in alarms.items():
            out.append(
                {
                    "buffer_ids": [i],
                    "summary": headline(by_id[i]),
                    "priority": 1,
                    "action": "inbox",
                    "reason": f"floor: {why}"[:300],
                    "topic": None,
                    "plan": True,
                }
            )
    return out, lifted


def heads_up(row) -> str:
    """The line the floor tells for a background inbox row: its first line (triage's summary, or the item's
    own sentence of who and what)."""
    return f"Heads-up: {headline(row)}"
