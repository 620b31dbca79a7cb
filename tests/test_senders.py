"""What the RAS learns of mail senders (storage/senders.py), on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

from storage import senders
from storage.models import BulkSender, MailSender, MailSubject

NOW = datetime(2027, 1, 5, 9, tzinfo=UTC)


def mail(sender, channel="email", subject=None):
    return SimpleNamespace(channel=channel, payload={"from": sender, **({"subject": subject} if subject else {})})


def read(*addresses) -> list[tuple[str, str]]:
    return [(a, "") for a in addresses]


def test_a_sender_is_known_by_address_in_lower_case_never_by_name_alone():
    assert senders.address_of(mail(" NoReply@Parcel.Example ")) == "noreply@parcel.example"
    assert senders.address_of(mail("Parcel Service")) == "", "two senders may share a display name"
    assert senders.address_of(mail("noreply@parcel.example", channel="web")) == ""
    assert senders.address_of(SimpleNamespace(channel="email", payload=None)) == ""


def test_calm_reads_count_up_and_make_a_sender_routine_after_enough(any_db):
    for n in range(4):
        senders.read_calmly(
            read("a@x.example", "b@x.example") if n == 0 else read("a@x.example"), NOW + timedelta(hours=n)
        )
    assert senders.routine({"a@x.example", "b@x.example"}, 4, NOW - timedelta(days=60)) == {"a@x.example": 4}
    assert senders.routine({"a@x.example"}, 5, NOW - timedelta(days=60)) == {}
    row = MailSender.get(MailSender.address == "a@x.example")
    assert (row.calm, row.read_at) == (4, NOW + timedelta(hours=3))


def test_a_sender_read_long_ago_or_ever_urgent_is_not_routine(any_db):
    senders.read_calmly(read(*["old@x.example"] * 6, *["loud@x.example"] * 6), NOW)
    assert senders.routine({"old@x.example"}, 5, NOW + timedelta(seconds=1)) == {}, "no read since then"
    senders.alarmed({("loud@x.example", "a"), ("new@x.example", "")}, NOW)
    senders.read_calmly(read(*["loud@x.example"] * 3), NOW + timedelta(days=1))
    assert senders.routine({"loud@x.example", "new@x.example"}, 5, NOW - timedelta(days=60)) == {}
    assert MailSender.get(MailSender.address == "loud@x.example").calm == 9, "an alarm keeps the count"


def test_a_thread_subject_leaves_its_reply_marks_case_and_spacing_aside():
    assert senders.thread_subject("Re: AW:  Fwd: WG: Newsletter from   Class 3b ") == "newsletter from class 3b"
    assert senders.thread_subject("RE[2]: Newsletter") == senders.thread_subject("newsletter") == "newsletter"
    assert senders.thread_subject("Reply needed: the form") == "reply needed: the form", "only a prefix is a mark"
    assert senders.thread_subject(None) == "" and len(senders.thread_subject("x" * 500)) == senders.SUBJECT_CHARS
    assert senders.mail_of(mail("School@X.example", subject="Re: Newsletter")) == ("school@x.example", "newsletter")
    assert senders.mail_of(mail("school@x.example")) == ("school@x.example", "")
    assert senders.mail_of(mail("school@x.example", channel="web", subject="Newsletter")) == ("", "")


def test_a_subject_read_calmly_often_enough_is_routine_though_its_sender_once_raised_the_alarm(any_db):
    letter, closing = ("school@x.example", "newsletter"), ("school@x.example", "school closes early")
    senders.read_calmly([letter] * 5 + [("other@x.example", "newsletter")], NOW)
    senders.alarmed({closing}, NOW)
    since = NOW - timedelta(days=60)
    assert senders.routine({"school@x.example"}, 5, since) == {}
    assert senders.routine_subjects({letter, closing, ("other@x.example", "newsletter")}, 5, since) == {letter: 5}, (
        "counted per sender and subject; the alarm marks its own subject only"
    )
    assert senders.routine_subjects({letter}, 6, since) == {} and senders.routine_subjects({letter}, 0, since) == {}
    assert senders.routine_subjects({letter}, 5, NOW + timedelta(seconds=1)) == {}, "no read since then"
    assert senders.routine_subjects({("school@x.example", "")}, 1, since) == {}, "no subject, no subject's count"

    senders.read_calmly([closing] * 6, NOW + timedelta(days=1))
    senders.alarmed({letter}, NOW + timedelta(days=1))
    assert senders.routine_subjects({letter, closing}, 5, since) == {}, "an alarm on a subject is for good"
    row = MailSubject.get((MailSubject.address == "school@x.example") & (MailSubject.subject == "newsletter"))
    assert (row.calm, row.read_at) == (5, NOW), "an alarm keeps the count"
    assert MailSender.get(MailSender.address == "school@x.example").calm == 11


def test_a_bulk_sender_is_droppable_after_enough_drops_in_a_row_until_a_keep_or_a_long_silence(any_db):
    offers, shop = "offers@x.example", "shop@x.example"
    since = NOW - timedelta(days=60)
    senders.bulk_triaged([(offers, False)] * 4 + [(shop, False)] * 5 + [("", False)], NOW)
    assert senders.droppable({offers, shop, "new@x.example"}, 5, since) == {shop: 5}
    senders.bulk_triaged([(offers, False)], NOW)
    assert senders.droppable({offers}, 5, since) == {offers: 5}
    assert senders.droppable({offers}, 0, since) == {}, "0 turns it off"
    assert senders.droppable({offers}, 5, NOW + timedelta(seconds=1)) == {}, "none read since: the model reads one"

    later = NOW + timedelta(hours=1)
    senders.bulk_triaged([(offers, False), (offers, True), (offers, False)], later)
    row = BulkSender.get(BulkSender.address == offers)
    assert (row.dropped, row.read_at, row.kept_at) == (0, later, later), "a kept one in the answer wins"
    senders.bulk_triaged([(offers, False)] * 6, NOW + timedelta(days=2))
    assert senders.droppable({offers}, 5, NOW + timedelta(days=2) - timedelta(days=60)) == {}, (
        "it kept one within the window"
    )
    assert senders.droppable({offers}, 5, later + timedelta(seconds=1)) == {offers: 6}, "a keep before it is past"


def test_a_forged_overlong_address_is_no_sender_and_teaches_nothing(any_db):
    forged = "x" * 300 + "@spam.example"
    assert senders.address_of(mail(forged)) == "" and senders.mail_of(mail(forged, subject="Hi")) == ("", "")
    assert senders.address_of(mail("y" * 240 + "@b.example")) == "y" * 240 + "@b.example"
    # what a triage answer or a scan teaches is written in their transaction: a forged From must not break it
    senders.read_calmly([senders.mail_of(mail(forged, subject="Hi"))], NOW)
    senders.alarmed({senders.mail_of(mail(forged, subject="Hi"))}, NOW)
    senders.bulk_triaged([(senders.address_of(mail(forged)), False)], NOW)
    assert MailSender.select().count() == MailSubject.select().count() == 0
