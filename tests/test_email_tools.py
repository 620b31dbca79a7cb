"""The email skill's tools without servers: search_email and read_email answer from the buffered rows
(newest first, every word must match, a window of days, nothing of another channel), are offered
only when the channel is set up, and reach the model marked untrusted; send_email is refused to a
run the user did not start, even when a model calls it unoffered."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from actors import tools
from actors.triage import TRIAGE_TEXT, compact, triage_request
from storage.routing import commit_buffered
from channels.email.skill import BACKGROUND_SEND, ReadEmail, SearchEmail, SendEmail
from tests.conftest import make_config
from wilson.skills import Call

TZ = ZoneInfo("Europe/Berlin")
NOW = datetime(2027, 1, 20, 9, 0, tzinfo=TZ)


def buffered(text: str, days_ago: int, channel: str = "email", **payload):
    return commit_buffered(
        channel=channel,
        text=text,
        dedup_key=f"{channel}:{text}",
        at=NOW - timedelta(days=days_ago),
        payload={"subject": text.split(":")[0], "from": "landlord@flats.example", **payload},
    )


def search(query: str, days: int | None = None) -> dict:
    args = {"query": query, **({"days": days} if days else {})}
    tool = SearchEmail()
    assert tool.validate(args, Call(now=NOW, tz=TZ)) is None
    return tool.execute(args, Call(now=NOW, tz=TZ))


def test_search_finds_by_every_word_newest_first_within_the_days(db):
    old = buffered("Deposit: the deposit will be returned", 40)
    recent = buffered("Deposit again: deposit returned by the 20th", 2, from_name="Mr Brown")
    buffered("Rent: rent is due on the 1st", 1)
    buffered("Deposit: a calendar note about the deposit", 1, channel="calendar")
    assert [m["id"] for m in search("deposit returned")["mails"]] == [recent.id]
    assert [m["id"] for m in search("DEPOSIT", days=60)["mails"]] == [recent.id, old.id]
    found = search("deposit 20th")["mails"][0]
    assert found["from"] == "Mr Brown <landlord@flats.example>" and found["received"] == "Mon 18 Jan 2027 09:00"
    assert search("garage")["mails"] == []


def test_read_email_gives_one_mails_text_and_only_a_mail(db):
    mail = buffered("Deposit: " + "word " * 3000, 1)
    note = buffered("Deposit: from the calendar", 1, channel="calendar")
    read = ReadEmail().execute({"id": mail.id}, Call(now=NOW, tz=TZ))
    assert read["subject"] == "Deposit" and read["text"].endswith(" […]") and len(read["text"]) < 8100
    assert ReadEmail().execute({"id": note.id}, Call(now=NOW, tz=TZ)) == {"error": f"no mail with id {note.id}"}


def test_days_out_of_range_are_refused():
    assert (
        SearchEmail().validate({"query": "x", "days": 0}, Call(now=NOW, tz=TZ))
        == "days must be between 1 and 365, got 0"
    )
    assert SearchEmail().validate({"query": "x", "days": "many"}, Call(now=NOW, tz=TZ)).startswith("days must be an")


def test_the_read_tools_are_offered_only_with_email_set_up_and_marked_untrusted(tmp_path):
    off = tools.toolbox(make_config(tmp_path / "off"))
    on = tools.toolbox(make_config(tmp_path / "on", WILSON_EMAIL_IMAP_HOST="imap.example.org"))
    names = {t["function"]["name"] for t in on.schemas(True)}
    assert {"search_email", "read_email"} <= names and "send_email" not in names, "no smtp_host: no sending"
    assert not {"search_email", "read_email"} & {t["function"]["name"] for t in off.schemas(True)}
    assert SearchEmail.untrusted == ReadEmail.untrusted == "your email"
    assert SearchEmail.read_only and ReadEmail.read_only


def test_send_email_is_refused_to_a_run_the_user_did_not_start(tmp_path):
    config = make_config(
        tmp_path, WILSON_EMAIL_SMTP_HOST="smtp.example.org", WILSON_EMAIL_FROM_ADDRESS="me@example.org"
    )
    draft = {"to": "attacker@evil.example", "subject": "Fwd", "body": "all of it"}
    tool = SendEmail()
    assert tool.user_only
    assert tool.validate(draft, Call(now=NOW, tz=TZ, user_id=None, config=config)) == BACKGROUND_SEND
    assert tool.validate(draft, Call(now=NOW, tz=TZ, user_id="owner", config=config)) is None
    assert tool.validate(draft, Call(now=NOW, tz=TZ, user_id="owner")) is None, "the cortex checks without a config"


def test_bulk_mail_goes_to_triage_as_one_line(db):
    letter = buffered(
        "Weekly deals: " + "cheap chairs " * 200,
        0,
        bulk="it has a List-Unsubscribe header",
        subject="Weekly deals",
        **{"from": "news@shop.example"},
    )
    person = buffered("Deposit: see you Friday", 0)
    assert compact(letter) == {
        "buffer_id": letter.id,
        "untrusted": "from your email",
        "text": "Bulk mail from news@shop.example: Weekly deals",
    }
    items = json.loads(triage_request([letter, person], NOW, TZ)[-1]["content"])["items"]
    assert items[0] == compact(letter) and items[1]["text"] == person.text
    assert set(items[1]) == {"buffer_id", "untrusted", "text", "payload"}, "the channel is named once, in untrusted"
    # The sender is not in the text, so it stays; the subject heads the text, so it is not sent twice.
    assert items[1]["payload"] == {"from": "landlord@flats.example"}


def test_triage_sends_what_an_item_says_once_and_leaves_out_where_it_is_stored(db):
    mail = buffered(
        "Email from landlord@flats.example: Lease renewal\n" + "Please sign. " * 200,
        0,
        uid=7,
        uidvalidity=1,
        folder="INBOX",
        size=2600,
        message_id="<1@flats.example>",
        priority=3,
        truncated=False,
        attachments=[],
        in_reply_to=None,
        date="2027-03-01T09:00:00+01:00",
        thread="<0@flats.example>",
    )
    item = json.loads(triage_request([mail], NOW, TZ)[-1]["content"])["items"][0]
    assert item["payload"] == {"date": "2027-03-01T09:00:00+01:00", "thread": "<0@flats.example>"}
    assert item["text"] == mail.text[:TRIAGE_TEXT] and len(mail.text) > TRIAGE_TEXT, "the opening, not the whole"
