"""What the RAS learns of mail senders (storage/senders.py), on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

from storage import senders
from storage.models import MailSender

NOW = datetime(2027, 1, 5, 9, tzinfo=UTC)


def mail(sender, channel="email"):
    return SimpleNamespace(channel=channel, payload={"from": sender})


def test_a_sender_is_known_by_address_in_lower_case_never_by_name_alone():
    assert senders.address_of(mail(" NoReply@Parcel.Example ")) == "noreply@parcel.example"
    assert senders.address_of(mail("Parcel Service")) == "", "two senders may share a display name"
    assert senders.address_of(mail("noreply@parcel.example", channel="web")) == ""
    assert senders.address_of(SimpleNamespace(channel="email", payload=None)) == ""


def test_calm_reads_count_up_and_make_a_sender_routine_after_enough(any_db):
    for n in range(4):
        senders.read_calmly(["a@x.example", "b@x.example"] if n == 0 else ["a@x.example"], NOW + timedelta(hours=n))
    assert senders.routine({"a@x.example", "b@x.example"}, 4, NOW - timedelta(days=60)) == {"a@x.example": 4}
    assert senders.routine({"a@x.example"}, 5, NOW - timedelta(days=60)) == {}
    row = MailSender.get(MailSender.address == "a@x.example")
    assert (row.calm, row.read_at) == (4, NOW + timedelta(hours=3))


def test_a_sender_read_long_ago_or_ever_urgent_is_not_routine(any_db):
    senders.read_calmly(["old@x.example"] * 6 + ["loud@x.example"] * 6, NOW)
    assert senders.routine({"old@x.example"}, 5, NOW + timedelta(seconds=1)) == {}, "no read since then"
    senders.alarmed({"loud@x.example", "new@x.example"}, NOW)
    senders.read_calmly(["loud@x.example"] * 3, NOW + timedelta(days=1))
    assert senders.routine({"loud@x.example", "new@x.example"}, 5, NOW - timedelta(days=60)) == {}
    assert MailSender.get(MailSender.address == "loud@x.example").calm == 9, "an alarm keeps the count"
