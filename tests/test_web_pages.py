"""The dashboard's other pages over real HTTP: watching (through the gate, to the buffer once), the
intake API, Topics, Trace, Memory (that's wrong → a proposal), Budget, and feed markup made inert."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import httpx
import pytest

from channels.web import fetching, watcher
from storage import engram
from storage.models import Approval, ApprovalItem, ReceptorBuffer, Task, TokenUsage, Topic
from tests.conftest import corpus_dir
from tests.web_harness import LoopbackSite, base_url, csrf_of, logged_in, token_and_code

PAGE = (
    "<html><head><title>Visa for Japan</title></head><body><main><h1>Visa for Japan</h1>"
    "<p>Updated 3 December 2026</p><p>Short stays need no visa.</p>{extra}</main></body></html>"
)


def approve(app, client: httpx.Client, approval_id: int) -> None:
    approval = Approval.get_by_id(approval_id)
    page = client.get("/proposals")
    assert f'id="proposal-{approval_id}"' in page.text
    answer = client.post(
        f"/proposals/{approval_id}", data={"csrf": csrf_of(page.text), "action": "approve", "nonce": approval.nonce}
    )
    assert answer.status_code == 303
    assert app.wait_idle()


def proposal_from(answer: httpx.Response) -> int:
    assert answer.status_code == 303, answer.text
    return int(answer.headers["location"].rsplit("proposal-", 1)[1])


def web_rows() -> list[ReceptorBuffer]:
    return list(ReceptorBuffer.select().where(ReceptorBuffer.channel == "web").order_by(ReceptorBuffer.id))


def test_a_page_watched_from_the_dashboard_changes_and_the_change_reaches_the_buffer_once(web):
    client = logged_in(web)
    with LoopbackSite() as site:
        site.put("/visa", PAGE.format(extra=""))
        form = {"csrf": csrf_of(client.get("/today").text), "key": "w1", "url": site.url("/visa"), "every": "15m"}
        approval_id = proposal_from(client.post("/watch", data=form))
        assert proposal_from(client.post("/watch", data=form)) == approval_id  # a double submit: one proposal
        assert web.wait_idle()
        assert watcher.sources() == [] and site.asked("/visa") == 0  # nothing watched before the approval
        items = list(ApprovalItem.select().where(ApprovalItem.approval == approval_id))
        assert [(i.tool, i.description) for i in items] == [
            ("watch", f"Watch {site.url('/visa')} (looked at every 15 minutes)")
        ]
        approve(web, client, approval_id)
        assert [s["url"] for s in watcher.sources()] == [site.url("/visa")]

        web.advance(timedelta(minutes=1))
        assert site.asked("/visa") == 1 and web_rows() == []  # the first look is the starting point
        site.put("/visa", PAGE.format(extra="<p>From March an online form is needed.</p>"))
        web.advance(timedelta(minutes=5))
        assert site.asked("/visa") == 1  # not due yet: its own cadence
        web.advance(timedelta(minutes=11))
        web.advance(timedelta(minutes=16))
        assert site.asked("/visa") == 3
    rows = web_rows()
    assert len(rows) == 1 and "online form is needed" in rows[0].text
    today = client.get("/today").text
    assert "Visa for Japan" in today and "every 15 minutes" in today
    assert 'id="seen"' in today and "online form is needed" in today


def test_unwatching_from_the_dashboard_goes_through_the_gate(web):
    client = logged_in(web)
    watcher.add("https://example.org/feed.xml", timedelta(hours=1), web.clock.now())
    page = client.get("/today").text
    assert "https://example.org/feed.xml" in page and 'action="/unwatch"' in page
    approval_id = proposal_from(
        client.post("/unwatch", data={"csrf": csrf_of(page), "key": "u1", "url": "https://example.org/feed.xml"})
    )
    assert web.wait_idle() and len(watcher.sources()) == 1
    approve(web, client, approval_id)
    assert watcher.sources() == []
    refused = client.post("/watch", data={"csrf": csrf_of(page), "key": "u2", "url": "ftp://example.org/x"})
    assert refused.status_code == 400 and "Only http and https addresses can be watched (not ftp)." in refused.text


def test_the_intake_api_buffers_a_stimulus_once_per_key_and_refuses_bad_bodies(web):
    token, _ = token_and_code(web)
    with httpx.Client(base_url=base_url(), timeout=10) as stranger:
        assert stranger.post("/api/stimuli", json={"text": "hi"}).status_code == 401
    bearer = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=base_url(), timeout=10, headers=bearer) as client:
        item = {"text": "Your parcel arrives Thursday", "title": "Parcel", "source": "shop", "key": "parcel-1"}
        first = client.post("/api/stimuli", json=item)
        assert first.status_code == 202 and isinstance(first.json()["buffered"], int)
        again = client.post("/api/stimuli", json=item)
        assert again.status_code == 200 and again.json()["duplicate"] is True
        big = client.post(
            "/api/stimuli", content=b'{"text": "' + b"x" * 20000 + b'"}', headers={"Content-Type": "application/json"}
        )
        assert big.status_code == 413 and "too big" in big.json()["error"]
        for bad, words in (
            ({"text": "x", "priority": 0}, "Unknown field"),
            ({"text": " "}, "Send some text"),
            ({"text": 5}, "must be a string"),
            ({"text": "x", "url": "javascript:1"}, "http"),
            ({"text": "x", "key": ""}, "key must be"),
        ):
            answer = client.post("/api/stimuli", json=bad)
            assert answer.status_code == 400 and words in answer.json()["error"], (bad, answer.text)
        assert client.post("/api/stimuli", content=b"{broken").status_code == 400
    session = logged_in(web)
    assert session.post("/api/stimuli", json={"text": "no csrf"}).status_code in (403, 415)
    assert web.wait_idle()
    rows = web_rows()
    assert len(rows) == 1 and rows[0].text == "Your parcel arrives Thursday"
    assert rows[0].payload == {"title": "Parcel", "source": "shop", "via": "api"}


def test_topics_shows_each_topic_with_its_tasks_dates_and_what_happened(web):
    now = web.clock.now()
    topic = Topic.create(title="Trip to Japan", created_at=now, starts=datetime(2027, 4, 10, tzinfo=now.tzinfo))
    Task.create(title="Book flights to Japan", topic=topic, due=datetime(2027, 3, 1, tzinfo=now.tzinfo), created_at=now)
    approval = Approval.create(
        trace_id="tr1",
        approver="owner",
        channel="web",
        nonce="n",
        created_at=now,
        expires_at=now + timedelta(hours=72),
        topic_id=topic.id,
        status="approved",
        reason="your calendar event “Japan”",
    )
    ApprovalItem.create(
        approval=approval,
        position=1,
        tool="create_task",
        args={},
        status="executed",
        description="Create task: Book flights to Japan",
    )
    page = logged_in(web).get("/topics")
    assert page.status_code == 200
    section = page.text.split(f'id="topic-{topic.id}"', 1)[1].split("</section>", 1)[0]
    assert "Trip to Japan" in page.text and "Book flights to Japan" in section and "due Mon 01 Mar" in section
    assert "because your calendar event “Japan”" in section and 'href="/trace?id=tr1"' in section


def test_trace_shows_a_stimulus_path_in_local_time(web):
    client = logged_in(web)
    row = web.say("what is due this week?")
    assert web.wait_idle()
    listing = client.get("/trace").text
    assert f'href="/trace?id={row.trace_id}"' in listing
    page = client.get(f"/trace?id={row.trace_id}").text
    steps = re.findall(
        r'<tr class="step" data-stage="([^"]+)"><td class="small">([^<]+)</td><td><strong>([^<]+)'
        r'</strong></td><td><span class="step-words">([^<]+)</span>',
        page,
    )
    assert steps and steps[0][0] == "routed"
    assert steps[0][1].startswith("2027-01-05 08:00")  # Berlin time, as the user lives it (07:00 UTC)
    # what happened and why, in a person's words (the recorded shorthand stays underneath, small)
    assert steps[0][2:] == ("Received", "Your message came at the terminal; it went straight to Wilson to answer.")
    assert all("outbox" not in words and "inbox priority" not in words for *_, words in steps)
    assert ("Delivered", "The message reached you at the terminal.") in [tuple(s[2:]) for s in steps]
    assert "what is due this week?" in page
    assert client.get("/trace?id=%3Cscript%3E").status_code == 404
    assert "Nothing is recorded" in client.get("/trace?id=nosuchtrace").text


def test_memory_lists_beliefs_and_thats_wrong_becomes_a_proposal_the_gate_executes(web):
    belief = engram.store("belief", "You book flights late", ["approval:1", "approval:2"], web.clock.now())
    client = logged_in(web)
    page = client.get("/memory").text
    assert "You book flights late" in page and "approval:1, approval:2" in page
    answer = client.post(
        f"/memory/{belief.id}/forget",
        data={"csrf": csrf_of(page), "key": "f1", "reason": "the airline moved the dates"},
    )
    approval_id = proposal_from(answer)
    assert web.wait_idle()
    assert belief.id in [m.id for m in engram.live("belief")]  # asking changes nothing
    item = ApprovalItem.get(ApprovalItem.approval == approval_id)
    assert item.tool == "forget_memory" and "the airline moved the dates" in item.description
    approve(web, client, approval_id)
    assert belief.id not in [m.id for m in engram.live("belief")]
    assert "You book flights late" not in client.get("/memory").text
    missing = client.post("/memory/999999/forget", data={"csrf": csrf_of(page), "key": "f2"})
    assert missing.status_code == 400 and "no learned memory" in missing.text


def test_budget_shows_todays_report_and_tokens_per_role_per_day(web):
    today = web.synapse._day()
    yesterday = (datetime.fromisoformat(today) - timedelta(days=1)).date().isoformat()
    TokenUsage.create(day=today, role="deep", calls=3, prompt_tokens=1000, completion_tokens=234)
    TokenUsage.create(day=yesterday, role="fast", calls=2, prompt_tokens=500, completion_tokens=0)
    page = logged_in(web).get("/budget").text
    assert web.synapse.budget_report().splitlines()[0] in page
    assert f"<title>{today} deep: 1234 tokens</title>" in page
    assert f"<title>{yesterday} fast: 500 tokens</title>" in page
    assert "<svg" in page and "1,234" in page


@pytest.mark.skipif(
    not (corpus_dir() / "feeds").is_dir(), reason="the feed corpus is not there (set WILSON_CORPUS_DIR)"
)
def test_scripts_and_handlers_in_watched_feeds_are_inert_on_the_dashboard(web):
    from tests.web_watch_support import commit

    empty = "<rss version='2.0'><channel><title>Quiet</title></channel></rss>"
    files = sorted((corpus_dir() / "feeds" / "feedparser").glob("wellformed__sanitize__*"))
    assert len(files) >= 8
    now = web.clock.now()
    with LoopbackSite() as site, fetching.client() as http:
        for n, path in enumerate(files):
            site.put(f"/{n}", empty, "application/rss+xml")
            watcher.add(site.url(f"/{n}"), timedelta(minutes=15), now)
            watcher.record(watcher.look(watcher.get(site.url(f"/{n}")), http, now), now, commit(now))
            site.put(f"/{n}", path.read_bytes(), "application/rss+xml")
            watcher.record(watcher.look(watcher.get(site.url(f"/{n}")), http, now), now, commit(now))
    assert len(web_rows()) >= 6
    page = logged_in(web).get("/today").text
    assert "<script" not in page.lower() and "<embed" not in page.lower() and "<object" not in page.lower()
    assert not re.search(r"<[a-z][^>]*\son[a-z]+\s*=", page, re.IGNORECASE)


def test_an_event_posted_to_the_intake_api_is_a_calendar_event_and_items_are_decided_one_by_one(web):
    token, _ = token_and_code(web)
    with httpx.Client(base_url=base_url(), timeout=10, headers={"Authorization": f"Bearer {token}"}) as client:
        for event, words in (
            ("tomorrow", "must be an object"),
            ({"title": "Trip"}, "needs a title and a start"),
            ({"title": "Trip", "start": "soon"}, "ISO date"),
            ({"title": "Trip", "start": "2027-04-10", "end": "2027-04-01"}, "before its start"),
            ({"title": "Trip", "start": "2027-04-10T09:00+01:00", "end": "2027-04-10T10:00"}, "both with a zone"),
            ({"title": "Trip", "start": "2027-04-10", "rrule": "x"}, "Unknown event field"),
        ):
            answer = client.post("/api/stimuli", json={"text": "x", "event": event})
            assert answer.status_code == 400 and words in answer.json()["error"], (event, answer.text)
        trip = {"title": "Trip to Japan", "start": "2027-04-10", "end": "2027-04-24", "location": "Tokyo"}
        assert client.post("/api/stimuli", json={"text": "Trip to Japan", "event": trip}).status_code == 202
        assert web.wait_idle()
        assert web_rows()[-1].payload["change"] == "new" and web_rows()[-1].payload["all_day"] is True
        web.sync()
        assert web.wait_idle()
        approval = Approval.get()
        assert approval.reason.startswith("because you sent me “Trip to Japan” on Sat 10 Apr")  # not "a web page"
        positions = [i.position for i in approval.items.order_by(ApprovalItem.position)]
        assert len(positions) > 2
        for bad in ([0], "2", [True], list(range(1, 60))):
            answer = client.post(f"/api/proposals/{approval.id}", json={"action": "reject", "items": bad})
            assert answer.status_code == 400, (bad, answer.text)
        answer = client.post(
            f"/api/proposals/{approval.id}", json={"action": "reject", "items": [positions[1]], "nonce": approval.nonce}
        )
        assert answer.status_code == 202
        assert web.wait_idle()
    statuses = {i.position: i.status for i in ApprovalItem.select().where(ApprovalItem.approval == approval.id)}
    assert statuses == {p: "rejected" if p == positions[1] else "pending" for p in positions}
    assert Approval.get_by_id(approval.id).status == "partial" and Task.select().count() == 0
