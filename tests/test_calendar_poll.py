"""Receptors that keep their buffers fresh without any model (issue 14, item 1).

The calendar channel polls its source on its own cadence, cheaply, and buffers
changes as it sees them; the RAS raises the alarm for a same-day change and the
user hears of it within one RAS interval. Real actors on SQLite with a simulated
clock; the scripted model server answers over HTTP where a model judges, the
offline provider where the behaviour is rule-based.
"""

from __future__ import annotations

import json
import threading
from datetime import date, datetime, timedelta
from http.server import BaseHTTPRequestHandler
from zoneinfo import ZoneInfo

from wilson.model.offline import urgency
from channels.calendar import CalDavSource
from storage import buffers, trace
from storage.models import Inbox, ReceptorBuffer
from tests.brain import context_of
from tests.calendar_support import add_event, cancel_event, move_event
from tests.caldav_support import account, channel_for, no_proxy, radicale, vcal  # noqa: F401 (fixtures)
from tests.thalamus_support import START, advance_to, at, call, requests_of, triage_reply  # noqa: F401
from tests.poll import wait_for
from wilson.kernel.loopback import LoopbackServer
from wilson.model.scripted import tool_names

BERLIN = ZoneInfo("Europe/Berlin")
POLL = timedelta(minutes=5)
RAS_INTERVAL = timedelta(minutes=15)
QUIET = {"WILSON_LLM_RETRIES": "0", "WILSON_HIPPOCAMPUS_SCHEDULE": "off"}


# A scripted model that judges the way a sensible one would ----------------------------------
def arousal_today(body: dict) -> dict:
    """Urgent: a calendar snippet that names today's date (a new, moved or cancelled event today)."""
    data = json.loads(body["messages"][-1]["content"])
    now = datetime.fromisoformat(data["now"])
    today = f"{now:%a} {now.day} {now:%B %Y}"
    urgent = [i["buffer_id"] for i in data["items"] if today in i["snippet"]]
    return call(
        "arousal", urgent=bool(urgent), reason="a change to today" if urgent else "nothing today", buffer_ids=urgent
    )


def cortex_tells(body: dict) -> dict:
    """The cortex passes every calendar change on to the user."""
    if body["messages"][-1]["role"] == "tool":
        return {"text": ""}
    stimulus = context_of(body).get("stimulus") or {}
    if stimulus.get("kind") == "event":
        return call("surface", text="Heads-up: " + stimulus["text"][:300], why="a calendar change")
    return {"text": ""}


def offers(name):
    return lambda body, headers: name in tool_names(body)


BRAIN = [
    {"match": offers("arousal"), "reply": arousal_today},
    {"match": offers("triage"), "reply": triage_reply},
    {"match": lambda body, headers: headers.get("x-wilson-role") == "deep", "reply": cortex_tells},
]


def told(app, words: str) -> list[dict]:
    return [d for d in app.user_deliveries() if words in d["text"]]


def when_told(app, words: str) -> datetime:
    found = told(app, words)
    assert len(found) == 1, (words, app.user_deliveries())
    return datetime.fromisoformat(found[0]["at"])


def an_app(make_app, server, start=START):
    return make_app(start=start, llm=server.base_url, env=QUIET)


def known_since_yesterday(make_app, server, title: str, start: tuple[int, int], end: tuple[int, int]):
    """An app started the evening before, whose calendar has had `title` today at `start` since then."""
    app = an_app(make_app, server, start="2027-01-04T20:00:00+01:00")
    add_event(app.calendar_file(), title, at(app, 5, *start), at(app, 5, *end), tz=BERLIN)
    app.advance(POLL)  # seen the same evening: not urgent then, told at the 07:00 sync
    assert buffers.unprocessed()
    advance_to(app, at(app, 5, 8, 0))
    assert told(app, title), "the event was known before the change"
    return app


# Same-day changes reach the user between syncs ------------------------------------------------
def test_an_event_added_at_eight_for_four_reaches_the_user_before_four(make_app, serve):
    server = serve(BRAIN)
    app = an_app(make_app, server)
    assert app.wait_idle()  # the start's first look at the calendar is over: the event comes after it
    added = app.clock.now()
    add_event(app.calendar_file(), "Parents' evening", at(app, 5, 16), at(app, 5, 17), tz=BERLIN)
    assert not buffers.unprocessed(), "nothing is read before the next poll"

    app.advance(POLL)  # the calendar's own cadence, with no sync in sight
    assert [r.text for r in buffers.unscanned()] == [
        "New event: Parents' evening, Tue 5 January 2027 16:00–17:00 (today)."
    ]
    assert requests_of(server, "reflex") == [], "buffering costs nothing; the RAS looks at its interval"

    advance_to(app, at(app, 5, 15, 59))
    seen = when_told(app, "Parents' evening")
    assert seen <= added + POLL + RAS_INTERVAL < at(app, 5, 16)
    # judged by its times at the RAS interval (no reflex call), then the early sync's triage
    assert requests_of(server, "reflex") == [] and len(requests_of(server, "fast")) == 1


def test_a_cancellation_of_todays_appointment_reaches_the_user_before_it(make_app, serve):
    server = serve(BRAIN)
    app = known_since_yesterday(make_app, server, "Dentist", (16, 0), (17, 0))
    cancelled = app.clock.now()
    assert cancel_event(app.calendar_file(), "Dentist")
    app.advance(POLL)
    advance_to(app, at(app, 5, 15, 59))
    assert when_told(app, "Cancelled: Dentist") <= cancelled + POLL + RAS_INTERVAL


def test_a_meeting_moved_into_the_next_two_hours_reaches_the_user_before_it(make_app, serve):
    server = serve(BRAIN)
    app = known_since_yesterday(make_app, server, "Budget review", (15, 0), (16, 0))
    advance_to(app, at(app, 5, 8, 30))
    moved = app.clock.now()
    move_event(app.calendar_file(), "Budget review", at(app, 5, 10, 0), at(app, 5, 11, 0), tz=BERLIN)
    app.advance(POLL)
    advance_to(app, at(app, 5, 9, 59))
    assert when_told(app, "Moved: Budget review") <= moved + POLL + RAS_INTERVAL


def test_a_change_for_another_day_waits_for_the_morning(make_app, serve):
    server = serve(BRAIN)
    app = an_app(make_app, server)
    add_event(app.calendar_file(), "Conference", at(app, 20, 9), at(app, 20, 17), tz=BERLIN)
    app.advance(POLL)
    advance_to(app, at(app, 5, 22, 0))
    assert requests_of(server, "reflex") == [], "judged by its times, at no model's cost"
    assert not buffers.unscanned(), "judged at the next RAS interval"
    assert requests_of(server, "fast") == [] and not told(app, "Conference")
    advance_to(app, at(app, 6, 7, 30))
    assert told(app, "Conference"), "the morning sync brings it"


# Idle calendars cost nothing -------------------------------------------------------------------
def test_an_unchanged_calendar_costs_no_model_call_over_three_days(make_app, serve):
    server = serve(BRAIN)
    app = an_app(make_app, server)
    add_event(app.calendar_file(), "Yoga", at(app, 9, 18), at(app, 9, 19), tz=BERLIN)
    add_event(app.calendar_file(), "Dentist", at(app, 12, 9), at(app, 12, 10), tz=BERLIN)
    advance_to(app, at(app, 6, 8, 0))  # seen, judged and triaged once
    assert told(app, "Yoga") and told(app, "Dentist")
    spent = len(server.requests)
    stored = ReceptorBuffer.select().count()

    for _ in range(3 * 24):  # three days, in hourly steps: a poll at every one
        app.advance(timedelta(hours=1))
    assert len(server.requests) == spent, [r["headers"].get("x-wilson-role") for r in server.requests[spent:]]
    assert ReceptorBuffer.select().count() == stored

    # and it was watching all along: a change now is buffered at the next poll
    add_event(app.calendar_file(), "Yoga", at(app, 9, 19), at(app, 9, 20), tz=BERLIN)
    app.advance(POLL)
    assert [r.text for r in buffers.unscanned()] == [
        "Moved: Yoga now Sat 9 January 2027 19:00–20:00 (was Sat 9 January 2027 18:00–19:00)."
    ]


# Offline: the same-day rule ---------------------------------------------------------------------
def row(id_, change, start, end=None, previous=None):
    return {
        "change": change,
        "title": f"event {id_}",
        "start": start.isoformat(),
        "end": end.isoformat() if end else None,
        "previous": {"start": previous.isoformat()} if previous else None,
    }


def same_day(rows, now, tz):
    found = {i: urgency.same_day(payload, now, tz) for i, payload in enumerate(rows, 1)}
    return {i: why for i, why in found.items() if why is not None}


def test_the_same_day_rule_reads_today_in_the_users_timezone():
    now = datetime(2027, 1, 5, 8, 0, tzinfo=BERLIN)
    late = datetime(2027, 1, 5, 23, 30, tzinfo=BERLIN)  # 22:30 UTC: still today in Berlin
    tomorrow = datetime(2027, 1, 6, 0, 30, tzinfo=BERLIN)  # 23:30 UTC on the 5th: not today in Berlin
    rows = [
        row(1, "new", late),
        row(2, "new", tomorrow),
        row(3, "cancelled", now + timedelta(hours=8)),
        row(4, "changed", now + timedelta(hours=1), previous=now + timedelta(days=3)),
        row(5, "changed", now + timedelta(days=3), previous=now + timedelta(hours=6)),
        row(6, "new", now - timedelta(hours=2), end=now - timedelta(hours=1)),
        {"change": "deleted?", "title": "not a calendar change", "start": (now + timedelta(hours=2)).isoformat()},
    ]
    found = same_day(rows, now, BERLIN)
    assert sorted(found) == [1, 3, 4, 5]
    assert found[1] == "event 1: new, starts today at 23:30"
    assert found[5] == "event 5: moved, was today at 14:00"
    assert same_day(rows, now, ZoneInfo("UTC")).keys() == {1, 2, 3, 4, 5}, "00:30 in Berlin is 23:30 UTC, today"
    assert urgency.judge_calendar(rows[4], now, BERLIN) == urgency.Judgement(1, found[5]), "what the RAS wakes for"


def test_offline_a_same_day_event_raises_the_alarm_by_rule(make_app):
    app = make_app(start=START, llm="offline")
    add_event(app.calendar_file(), "Parents' evening", at(app, 5, 16), at(app, 5, 17), tz=BERLIN)
    app.advance(POLL)
    advance_to(app, at(app, 5, 9, 0))
    (buffered,) = ReceptorBuffer.select()
    aroused = [t for t in trace.path(buffered.trace_id) if t.stage == "aroused"]
    assert len(aroused) == 1 and "starts today at 16:00" in aroused[0].reason
    assert aroused[0].at <= at(app, 5, 8, 5) + RAS_INTERVAL
    made = [r for r in Inbox.select() if buffered.id in [b["buffer_id"] for b in (r.payload or {}).get("buffers", [])]]
    assert len(made) == 1 and made[0].priority == 1 and made[0].created_at < at(app, 5, 16)


# Cheap checks at the source ---------------------------------------------------------------------
class IcsServer(LoopbackServer):
    """An .ics URL with an ETag and Last-Modified, answering conditional GETs with 304."""

    thread_name = "ics-server"

    def __init__(self, body: bytes):
        super().__init__()
        self.body, self.version = body, 1
        self.seen: list[tuple[int, dict]] = []  # (status, request headers)
        self.lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                owner = self.server.owner
                with owner.lock:
                    etag, body = f'"v{owner.version}"', owner.body
                    status = 304 if self.headers.get("If-None-Match") == etag else 200
                    owner.seen.append((status, dict(self.headers)))
                self.send_response(status)
                self.send_header("ETag", etag)
                self.send_header("Last-Modified", "Mon, 04 Jan 2027 10:00:00 GMT")
                if status == 200:
                    self.send_header("Content-Type", "text/calendar")
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if status == 200:
                    self.wfile.write(body)

        self.handler = Handler

    def publish(self, body: bytes) -> None:
        with self.lock:
            self.body, self.version = body, self.version + 1


LUNCH = "UID:lunch\nDTSTAMP:20270101T000000Z\nDTSTART:20270108T113000Z\nDTEND:20270108T123000Z\nSUMMARY:Lunch with Sam"


def test_an_ics_url_is_polled_with_conditional_requests(make_app, no_proxy):
    with IcsServer(vcal(LUNCH).encode()) as server:
        app = make_app(start=START, llm="offline", env={"WILSON_CALENDAR_URL": server.base_url + "/cal.ics"})
        app.wait_idle()
        assert [status for status, _ in server.seen] == [200], "read in full at start"
        for _ in range(3):
            app.advance(POLL)
        assert [status for status, _ in server.seen] == [200, 304, 304, 304]
        assert all(
            headers.get("If-None-Match") == '"v1"' and headers.get("If-Modified-Since")
            for _, headers in server.seen[1:]
        )
        assert [r.text for r in ReceptorBuffer.select()] == [
            "New event: Lunch with Sam, Fri 8 January 2027 12:30–13:30 (in 3 days)."
        ]

        server.publish(
            vcal(
                LUNCH.replace("SUMMARY:Lunch with Sam", "SUMMARY:Lunch with Sam\nLOCATION:Café Rix") + "\nSEQUENCE:1"
            ).encode()
        )
        app.advance(POLL)
        assert [status for status, _ in server.seen][-1] == 200
        assert ReceptorBuffer.select().count() == 2 and "Café Rix" in list(ReceptorBuffer.select())[-1].text


def test_caldav_polls_check_the_calendars_ctag_and_read_events_only_after_a_change(radicale, channel_for):
    client, principal = account(radicale, "dora")
    work = principal.make_calendar(name="Work")
    work.save_event(vcal(LUNCH))
    source = CalDavSource(radicale, "dora", "secret-pw")
    channel = channel_for(source)
    assert channel.sync("test") == 1
    from storage.models import Cursor

    state = Cursor.get(Cursor.name == f"calendar:{source.id}").value["fetch"]
    assert state["versions"] and all(state["versions"].values()), "Radicale offers a ctag / sync-token"
    assert source.unchanged(state) is True
    assert channel.sync("poll") == 0

    work.save_event(vcal(LUNCH.replace("DTSTART:20270108T113000Z", "DTSTART:20270108T120000Z") + "\nSEQUENCE:1"))
    assert source.unchanged(state) is False
    assert channel.sync("poll") == 1
    assert list(ReceptorBuffer.select())[-1].text.startswith("Moved: Lunch with Sam")


def test_with_the_real_clock_the_ticks_timer_drives_the_poll(tmp_path):
    from tests.conftest import make_config
    from wilson.app.application import Wilson
    from wilson.kernel.clock import RealClock, wall_now

    config = make_config(tmp_path / "home", WILSON_CALENDAR_POLL="1s", WILSON_TICK_INTERVAL_SECONDS="0.05")
    app = Wilson(config, RealClock(), llm="offline", log_level="WARNING").start()
    try:
        assert app.wait_idle(), "started, and the calendar read once"
        assert ReceptorBuffer.select().count() == 0
        soon = wall_now().astimezone(BERLIN).replace(microsecond=0) + timedelta(days=3)
        add_event(app.calendar_file(), "Standup", soon, soon + timedelta(minutes=15), tz=BERLIN)
        assert wait_for(lambda: ReceptorBuffer.select().count() == 1, timeout=30), "seen by a later poll"
        assert list(ReceptorBuffer.select())[0].text.startswith("New event: Standup")
    finally:
        app.stop()


def test_offline_a_move_or_cancellation_later_today_reaches_the_user_and_one_for_tomorrow_waits(make_app):
    # before, the offline cortex said nothing of either: the alarm and the triage reached an inbox row, no one
    app = make_app(start="2027-01-04T20:00:00+01:00", llm="offline", env=QUIET)
    add_event(app.calendar_file(), "Budget review", at(app, 5, 15), at(app, 5, 16), tz=BERLIN)
    add_event(app.calendar_file(), "Dentist", at(app, 5, 16), at(app, 5, 17), tz=BERLIN)
    add_event(app.calendar_file(), "Yoga", at(app, 6, 18), at(app, 6, 19), tz=BERLIN)
    advance_to(app, at(app, 5, 8, 30))  # known since yesterday, through the morning's sync
    moved = app.clock.now()
    move_event(app.calendar_file(), "Budget review", at(app, 5, 10, 0), at(app, 5, 11, 0), tz=BERLIN)
    assert cancel_event(app.calendar_file(), "Dentist")
    move_event(app.calendar_file(), "Yoga", at(app, 6, 19), at(app, 6, 20), tz=BERLIN)
    app.advance(POLL)
    advance_to(app, at(app, 5, 9, 59))
    assert when_told(app, "it moved from 15:00 to 10:00 on Tue 5 Jan.") <= moved + POLL + RAS_INTERVAL
    assert when_told(app, "it's cancelled (it was on Tue 5 Jan at 16:00).") <= moved + POLL + RAS_INTERVAL
    assert not told(app, "“Yoga”"), "tomorrow's change is no same-day news: the morning's briefing has it"


def test_offline_a_cancelled_event_under_way_or_all_day_today_is_told_and_one_over_is_not(make_app):
    app = make_app(start="2027-01-04T20:00:00+01:00", llm="offline", env=QUIET)
    add_event(app.calendar_file(), "Workshop", at(app, 5, 7), at(app, 5, 12), tz=BERLIN)
    add_event(app.calendar_file(), "Breakfast", at(app, 5, 7), at(app, 5, 8), tz=BERLIN)
    add_event(app.calendar_file(), "Team day", date(2027, 1, 5), date(2027, 1, 5), tz=BERLIN)
    advance_to(app, at(app, 5, 8, 30))
    for title in ("Workshop", "Breakfast", "Team day"):
        assert cancel_event(app.calendar_file(), title)
    app.advance(POLL)
    advance_to(app, at(app, 5, 9, 30))
    assert told(app, "it's cancelled (it was on Tue 5 Jan at 07:00)")  # under way: the user may be in it
    assert told(app, "it's cancelled (it was on Tue 5 Jan, all day)")
    # its news the evening before, as for any event new within a day; not its cancellation once it was over
    assert [d["text"] for d in told(app, "“Breakfast”")] == [
        "From the calendar event “Breakfast”: Heads-up: new in your calendar for Tue 5 Jan at 07:00."
    ], "over already"


def test_a_calendar_server_that_drips_its_answer_is_given_up_within_the_total_deadline():
    """The .ics URL and CalDAV: one header line a second never trips the 2 s per-read timeout; the whole
    fetch is still over in 3 s (1.5 × the timeout) with a clear reason, and nothing is left waiting."""
    import time

    import pytest

    from channels.calendar.event import SourceError
    from channels.calendar.sources import IcsUrlSource
    from tests.web_harness import DripSite

    with DripSite(every=0.5, lines=60) as drip:
        for source in (
            IcsUrlSource(drip.url("/cal.ics"), timeout=2.0),
            CalDavSource(drip.url("/dav/"), "ann", "secret-pw", timeout=2),
        ):
            started = time.monotonic()
            with pytest.raises(SourceError, match="no complete answer within 3 seconds") as failed:
                source.fetch({})
            assert time.monotonic() - started < 3 + 2, source.label
            assert "secret-pw" not in str(failed.value)
