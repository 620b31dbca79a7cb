"""Mail senders as the RAS knows them: how much of their mail it read calmly, and whether any was urgent.

A sender's next mail is routine (the RAS asks no model about it, actors/ras.py) once the model has read
enough of theirs recently without alarm, and none was ever urgent. Only mail the model read counts:
bulk mail the channel set aside, and routine mail the rules judged, teach nothing.
"""

from __future__ import annotations

from datetime import datetime

from storage.models import MailSender


def address_of(row) -> str:
    """The sender address of a buffered mail, lower case; '' for anything else, and for a display name
    alone (two senders may share a name, never an address)."""
    return address_in(row.payload, row.channel)


def address_in(payload, channel: str | None) -> str:
    """The same, from a mail's payload and its channel (as an inbox row carries each of its buffers)."""
    payload = payload if isinstance(payload, dict) else {}
    address = str(payload.get("from") or "").strip().lower() if channel == "email" else ""
    return address if "@" in address else ""


def routine(addresses: set[str], after: int, since: datetime) -> dict[str, int]:
    """{address: mails read calmly} for those of `addresses` with at least `after` such mails, the last
    read since `since`, and no urgent one ever."""
    if not addresses or after <= 0:
        return {}
    found = MailSender.select().where(
        MailSender.address.in_(sorted(addresses)) & (MailSender.calm >= after) & MailSender.alarm_at.is_null()
        & (MailSender.read_at >= since))
    return {s.address: s.calm for s in found}


def read_calmly(addresses: list[str], now: datetime) -> None:
    """The model read these senders' mail (one address per mail) and raised no alarm."""
    for address in addresses:
        MailSender.insert(address=address, calm=1, read_at=now).on_conflict(
            conflict_target=[MailSender.address],
            update={MailSender.calm: MailSender.calm + 1, MailSender.read_at: now}).execute()


def alarmed(addresses: set[str], now: datetime) -> None:
    """Mail of these senders was urgent: none of theirs is routine again."""
    for address in sorted(addresses):
        MailSender.insert(address=address, read_at=now, alarm_at=now).on_conflict(
            conflict_target=[MailSender.address], update={MailSender.alarm_at: now}).execute()
