"""Triage and arousal without a model: one decision per buffered item, with the rule that fired."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from wilson.model.offline import asks, notices, urgency
from wilson.model.offline.dates import fmt_moment, parse_moment
from wilson.model.offline.mailtext import sent_before, without_sent_line
from wilson.model.offline.opening import ADDRESS
from wilson.model.offline.point import point, without_date_lines
from wilson.kernel.lazy_regex import lazy_regex

CALENDAR_CHANGES = ("new", "changed", "cancelled")
NEWSLETTER_SENDER = lazy_regex(r"^\s*(?:[^<]*<)?(?:newsletter|news|rundbrief|infobrief|digest|verteiler)@", re.I)


def first_sentence(text: str, subject: str) -> str:
    """The mail's point (not the subject line again, the channel's "Sent …" line, a greeting or a date line), for
    an item whose subject says too little; "" when it holds an address."""
    said = point(text, {subject.lower()} if subject else set())
    return "" if ADDRESS.search(said) else said[:140]  # a stranger's link is never relayed as something to act on


def summary(text: str, payload: dict, situation: bool = False, sent: str = "") -> str:
    """ "Subject (from sender)"; when `situation` (a rule found the user is needed now), with the body's first
    sentence too: "Leo: Your son has a high fever…" says what the subject "Leo" does not. `sent`: the day a
    mail was sent when that was not today, so its "tomorrow" reads right ("from sender, sent Tue 5 Jan")."""
    subject = str(payload.get("subject") or payload.get("title") or "").strip()
    sender = str(payload.get("from") or "").strip()
    about = ", ".join(filter(None, [f"from {sender}" if sender else "", f"sent {sent}" if sent else ""]))
    if not subject:
        subject = next((line.strip() for line in (text or "").splitlines() if line.strip()), "")
    elif situation:
        said = first_sentence(text, subject)
        subject = f"{subject}: {said}" if said else subject
    line = f"{subject} ({about})" if subject and about else subject
    return line[:157] + "…" if len(line) > 160 else line


def calendar_summary(payload: dict, tz) -> str:
    title = payload.get("title") or "an event"
    start = parse_moment(payload.get("start"), tz)
    when = fmt_moment(start, tz) if start else "no date"
    change = payload.get("change")
    if change == "cancelled":
        return f"Cancelled: {title} ({when})"
    if change == "changed":
        previous = parse_moment((payload.get("previous") or {}).get("start"), tz)
        if previous and previous != start:
            return f"Moved: {title} from {fmt_moment(previous, tz)} to {when}"
        return f"Changed: {title} ({when})"
    return f"New event: {title} ({when})"


def judge(item: dict, now: datetime, tz) -> urgency.Judgement:
    """Calendar changes by their time; a mail by its situation, then as a bill or renewal to act on; bulk
    mail (list or auto-submitted headers, marked by the channel) only for a situation or a bill."""
    payload = item.get("payload") if isinstance(item.get("payload"), dict) else {}
    if payload.get("change") in CALENDAR_CHANGES:
        return urgency.judge_calendar(payload, now, tz)
    # the day it came is no date in it, and neither is the letter's own date line
    text = without_date_lines(without_sent_line(str(item.get("text") or item.get("snippet") or "")))
    if urgency.phishing(
        text, str(payload.get("subject") or ""), str(payload.get("from") or ""), str(payload.get("from_name") or "")
    ):
        # before any situation: "your account will be closed today" is what such a mail says to hurry the reader
        return urgency.Judgement(None, "reads like phishing: a link and a demand to verify or pay")
    if asks.auto_reply(str(payload.get("subject") or "")):  # sent without the auto-reply headers, as some are
        return urgency.Judgement(None, "an automatic reply: it asks nothing of you")
    found = urgency.judge_message(
        text,
        str(payload.get("subject") or payload.get("title") or ""),
        str(payload.get("from") or ""),
        now,
        tz,
        asks.sent_at(payload, now, tz),
    )
    # a newsletter's fire, police report or closed road is news about others; a school's or an airline's list
    # mail about the user's child or trip is not
    subject = str(payload.get("subject") or "")
    # a newsletter's own address says what it is even without the list headers
    bulk = payload.get("bulk") or NEWSLETTER_SENDER.match(str(payload.get("from") or ""))
    others = bulk and (
        found.rule.startswith(tuple(f"emergency: {n}" for n, _ in urgency.EMERGENCY_RES))
        or (
            found.rule.startswith("a closure")
            and not (urgency.CARE_RE.search(f"{subject} {text}") or urgency.TRAVEL_RE.search(f"{subject} {text}"))
        )
    )
    asked_for = found.rule.startswith("situation: travel") and notices.ASKED_FOR_CANCELLATION_RE.search(
        f"{subject}\n{text}"
    )  # "as requested we have cancelled your booking": the user's own cancellation, confirmed
    if found.situation and not others and not asked_for:
        return found
    due = asks.mail_task(text, payload, now, tz, letter=str(item.get("text") or item.get("snippet") or ""))
    kind = notices.notice(subject, text, asked=due is not None)
    if kind is not None:
        return urgency.Judgement(None, f"{kind}: it asks nothing of you")
    if found.level == 1 and not bulk:
        return found
    if due is not None:
        # asked for by tomorrow: the user hears of it now, not at the next morning's sync
        soon = due.due <= now.astimezone(tz).date() + timedelta(days=1)
        if soon:
            return urgency.Judgement(1, due.rule + " (by tomorrow)")
        # asked for by a date: proposed the day the mail came, while the user still has it in mind (and may answer
        # "no, done already"), not at the next morning's sync; the attention budget still places the message
        return urgency.Judgement(2, due.rule, early=True)
    if bulk:
        why = payload.get("bulk") if isinstance(payload.get("bulk"), str) else "a newsletter or an automatic message"
        return urgency.Judgement(None, f"bulk mail ({why}) about nothing that needs you")
    return found


def sink(item: dict, judgement: urgency.Judgement) -> urgency.Judgement:
    """Mail from a sender the user lets pass (`ignored_sender`: the memory that says so) waits for the
    briefing, unless what it is about needs the user today; the rule names the memory."""
    learned = item.get("ignored_sender")
    if not isinstance(learned, dict) or judgement.situation or judgement.level in (None, 3):
        return judgement
    return urgency.Judgement(
        3,
        f"you usually let mail from {learned.get('sender')} pass: memory "
        f"{learned.get('memory')} ({learned.get('text')}); otherwise {judgement.rule}",
    )


def triage_item(item: dict, now: datetime, tz) -> dict:
    bid = item.get("buffer_id")
    text = str(item.get("text") or "")
    payload = item.get("payload") if isinstance(item.get("payload"), dict) else {}
    judgement = sink(item, judge(item, now, tz))
    entry = {
        "buffer_ids": [bid] if bid is not None else [],
        "summary": summary(text, payload, situation=judgement.level == 1, sent=sent_before(payload, now, tz)),
        "priority": judgement.level or 3,
        "action": "inbox" if judgement.level else "drop",
        "reason": judgement.rule,
        "topic": None,
    }
    if payload.get("change") in CALENDAR_CHANGES:
        entry.update(summary=calendar_summary(payload, tz), topic=payload.get("title") or None)
    return entry


def triage(items: list, now: datetime, tz) -> dict:
    return {"items": [triage_item(i, now, tz) for i in items if isinstance(i, dict)]}


def arousal(items: list, now: datetime, tz) -> dict:
    urgent_ids, reasons = [], []
    for item in items:
        if not isinstance(item, dict):
            continue
        judgement = sink(item, judge(item, now, tz))
        if urgency.arousing(judgement):
            urgent_ids.append(item.get("buffer_id"))
            reasons.append(f"{item.get('channel') or 'item'}: {judgement.rule}")
    return {"urgent": bool(urgent_ids), "reason": "; ".join(reasons) or "nothing urgent", "buffer_ids": urgent_ids}
