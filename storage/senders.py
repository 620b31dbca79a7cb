"""Mail senders as the RAS knows them: how much of their mail it read calmly, and whether any was urgent.

A sender's next mail is routine (the RAS asks no model about it, actors/ras.py) once the model has read
enough of theirs recently without alarm, and none was ever urgent. The same is learned per sender and
subject (a thread's subject, `thread_subject`): a school that once wrote "school closes at 13:00 today" is
never a routine sender again, but its weekly newsletter, read calmly often enough and never urgent, is a
routine subject. Only mail the model read counts: bulk mail the channel set aside, and routine mail the
rules judged, teach nothing.

Triage learns of bulk mail alike (`bulk_triaged`): a sender whose last bulk mails the triage model all
dropped, and none of whose it kept lately, has the next dropped without a model call (`droppable`).
"""

from __future__ import annotations

import re
from datetime import datetime

from storage.models import BulkSender, MailSender, MailSubject

_REPLY = re.compile(r"^\s*((re|fwd?|aw|wg)\s*(\[\d+\])?\s*:\s*)+", re.I)
SUBJECT_CHARS = 200  # a thread is known by its subject's opening: the rest costs index room and tells no more
ADDRESS_CHARS = 254  # the longest address mail can carry (RFC 5321): a longer From is forged, and fits no column


def address_of(row) -> str:
    """The sender address of a buffered mail, lower case; '' for anything else, and for a display name
    alone (two senders may share a name, never an address)."""
    return address_in(row.payload, row.channel)


def address_in(payload, channel: str | None) -> str:
    """The same, from a mail's payload and its channel (as an inbox row carries each of its buffers); '' for an
    address longer than mail allows, which no sender really has (and which would not fit a column)."""
    payload = payload if isinstance(payload, dict) else {}
    address = str(payload.get("from") or "").strip().lower() if channel == "email" else ""
    return address if "@" in address and len(address) <= ADDRESS_CHARS else ""


def thread_subject(subject) -> str:
    """A mail's subject as its thread's: its Re:/Fwd:/AW:/WG: prefixes left aside, lower case, whitespace
    collapsed, so that a reply, a forward and the first mail share one."""
    return " ".join(_REPLY.sub("", str(subject or "")).split()).lower()[:SUBJECT_CHARS]


def mail_of(row) -> tuple[str, str]:
    """(sender address, thread subject) of a buffered mail; ('', '') for anything that is not a mail, and
    (address, '') for a mail without a subject."""
    address = address_of(row)
    payload = row.payload if isinstance(row.payload, dict) else {}
    return (address, thread_subject(payload.get("subject"))) if address else ("", "")


def routine(addresses: set[str], after: int, since: datetime) -> dict[str, int]:
    """{address: mails read calmly} for those of `addresses` with at least `after` such mails, the last
    read since `since`, and no urgent one ever."""
    if not addresses or after <= 0:
        return {}
    found = MailSender.select().where(
        MailSender.address.in_(sorted(addresses))
        & (MailSender.calm >= after)
        & MailSender.alarm_at.is_null()
        & (MailSender.read_at >= since)
    )
    return {s.address: s.calm for s in found}


def routine_subjects(mails: set[tuple[str, str]], after: int, since: datetime) -> dict[tuple[str, str], int]:
    """{(address, subject): mails read calmly} for those of `mails` with at least `after` such mails on that
    subject, the last read since `since`, and no urgent one on it ever (whatever the sender's other mail)."""
    mails = {(a, s) for a, s in mails if a and s}
    if not mails or after <= 0:
        return {}
    found = MailSubject.select().where(
        MailSubject.address.in_(sorted({a for a, _ in mails}))
        & MailSubject.subject.in_(sorted({s for _, s in mails}))
        & (MailSubject.calm >= after)
        & MailSubject.alarm_at.is_null()
        & (MailSubject.read_at >= since)
    )
    return {(s.address, s.subject): s.calm for s in found if (s.address, s.subject) in mails}


def read_calmly(mails: list[tuple[str, str]], now: datetime) -> None:
    """The model read these mails ((address, thread subject), one per mail) and raised no alarm."""
    for address, subject in mails:
        if not address:
            continue
        MailSender.insert(address=address, calm=1, read_at=now).on_conflict(
            conflict_target=[MailSender.address], update={MailSender.calm: MailSender.calm + 1, MailSender.read_at: now}
        ).execute()
        if subject:
            MailSubject.insert(address=address, subject=subject, calm=1, read_at=now).on_conflict(
                conflict_target=[MailSubject.address, MailSubject.subject],
                update={MailSubject.calm: MailSubject.calm + 1, MailSubject.read_at: now},
            ).execute()


def alarmed(mails: set[tuple[str, str]], now: datetime) -> None:
    """Mail of these (sender address, thread subject)s was urgent: neither the sender's mail nor mail on that
    subject is routine again (a mail without a subject marks its sender only)."""
    for address in sorted({address for address, _ in mails if address}):
        MailSender.insert(address=address, read_at=now, alarm_at=now).on_conflict(
            conflict_target=[MailSender.address], update={MailSender.alarm_at: now}
        ).execute()
    for address, subject in sorted(m for m in mails if all(m)):
        MailSubject.insert(address=address, subject=subject, read_at=now, alarm_at=now).on_conflict(
            conflict_target=[MailSubject.address, MailSubject.subject], update={MailSubject.alarm_at: now}
        ).execute()


def droppable(addresses: set[str], after: int, since: datetime) -> dict[str, int]:
    """{address: bulk mails dropped in a row} for those of `addresses` whose last `after` (or more) bulk mails
    the triage model all dropped, the last triaged since `since`, and none kept since then."""
    if not addresses or after <= 0:
        return {}
    found = BulkSender.select().where(
        BulkSender.address.in_(sorted(addresses))
        & (BulkSender.dropped >= after)
        & (BulkSender.read_at >= since)
        & (BulkSender.kept_at.is_null() | (BulkSender.kept_at < since))
    )
    return {s.address: s.dropped for s in found}


def bulk_triaged(judged: list[tuple[str, bool]], now: datetime) -> None:
    """The triage model read these bulk mails ((address, kept), one per mail): a drop adds to the sender's
    count, a keep starts it again (of one sender's mails in one answer, a kept one wins)."""
    dropped: dict[str, int] = {}
    kept = set()
    for address, keep in judged:
        if address:
            dropped[address] = dropped.get(address, 0) + (not keep)
            if keep:
                kept.add(address)
    for address, count in sorted(dropped.items()):
        if address in kept:
            BulkSender.insert(address=address, dropped=0, read_at=now, kept_at=now).on_conflict(
                conflict_target=[BulkSender.address],
                update={BulkSender.dropped: 0, BulkSender.read_at: now, BulkSender.kept_at: now},
            ).execute()
        else:
            BulkSender.insert(address=address, dropped=count, read_at=now).on_conflict(
                conflict_target=[BulkSender.address],
                update={BulkSender.dropped: BulkSender.dropped + count, BulkSender.read_at: now},
            ).execute()
