"""Apple Calendar for real, through a stand-in `osascript` on PATH (tests/osascript_standin.py) that checks each
script it is given and answers as Calendar.app does: the read script's rows become calendar news, an approved
event is created once, a move and a cancel round-trip, Wilson's own writes are not planned again, and a refused
permission or a missing event is told with nothing changed."""

from __future__ import annotations

import json
import os
import stat
import sys

import pytest

from storage.models import Approval, ReceptorBuffer
from wilson.kernel.messages import ChannelSync

STANDIN = os.path.join(os.path.dirname(__file__), "osascript_standin.py")
DENTIST = {"title": "Dentist", "start": "2027-01-12T15:00", "end": "2027-01-12T16:00", "location": "Dr. Weiss"}


def calendar_app(*events: dict) -> dict:
    return {
        "calendars": [
            {"name": "Birthdays", "writable": False, "events": []},
            {"name": "Home", "writable": True, "events": list(events)},
        ]
    }


FLIGHT = {
    "uid": "0A1B2C3D-FLIGHT",
    "summary": "Flight block",
    "start": "2027-01-14T09:00:00",
    "end": "2027-01-14T12:00:00",
    "allday": "false",
    "location": "FRA",
    "status": "confirmed",
    "recurrence": "",
}
YOGA = {
    "uid": "5E6F-YOGA",
    "summary": "Yoga",
    "start": "2027-01-06T18:00:00",
    "end": "2027-01-06T19:00:00",
    "allday": "false",
    "location": "",
    "status": "none",
    "recurrence": "FREQ=WEEKLY;INTERVAL=1",
}


@pytest.fixture
def mac(tmp_path, monkeypatch):
    """`osascript` on PATH, Calendar.app's events in a file, and the log of what osascript was asked."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tool = bin_dir / "osascript"
    tool.write_text(
        f"#!{sys.executable}\nimport runpy, sys\nsys.argv[0] = {STANDIN!r}\n"
        f"runpy.run_path({STANDIN!r}, run_name='__main__')\n"
    )
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    state, log = tmp_path / "calendar-app.json", tmp_path / "osascript.log"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("WILSON_TEST_CALENDAR", str(state))
    monkeypatch.setenv("WILSON_TEST_OSASCRIPT_LOG", str(log))

    class Mac:
        def put(self, content: dict) -> None:
            state.write_text(json.dumps(content))

        def events(self) -> list[dict]:
            return [e for c in json.loads(state.read_text())["calendars"] for e in c["events"]]

        def calls(self, kind: str | None = None) -> list[dict]:
            lines = log.read_text().splitlines() if log.exists() else []
            return [c for c in map(json.loads, lines) if kind is None or c["kind"] == kind]

    return Mac()


def wilson_on_a_mac(make_app, **env):
    return make_app(env={"WILSON_CALENDAR_APPLE": "true", "WILSON_CALENDAR_POLL": "off", **env})


def approved_twice(app, tool: str, args: dict) -> None:
    assert app.propose(tool, args, "because you asked") is None
    assert app.wait_idle()
    proposal = Approval.select().order_by(Approval.id.desc()).get()
    app.decide(proposal.id, "approve")
    app.decide(proposal.id, "approve")
    assert app.wait_idle()


def read_calendar(app) -> None:
    app.supervisor.tell("calendar", ChannelSync("test"))
    assert app.wait_idle()


def rows(title: str) -> list[ReceptorBuffer]:
    return [
        r
        for r in ReceptorBuffer.select().where(ReceptorBuffer.channel == "calendar").order_by(ReceptorBuffer.id)
        if r.payload.get("title") == title
    ]


def failures(app) -> list[str]:
    return [d["text"] for d in app.user_deliveries() if d["text"].startswith("I could not")]


def test_the_read_scripts_rows_become_calendar_news(mac, make_app):
    mac.put(calendar_app(FLIGHT, YOGA))
    app = wilson_on_a_mac(make_app)
    read_calendar(app)
    [read] = mac.calls("read")[-1:]
    assert "set windowEnd to (current date) + (365 * days)" in read["script"] and read["args"] == []
    [flight] = rows("Flight block")
    assert flight.text.startswith("New event: Flight block, Thu 14 January 2027 09:00–12:00") and "FRA" in flight.text
    [yoga] = rows("Yoga")
    assert yoga.text == (
        "New event: Yoga, Wed 6 January 2027 18:00–19:00 (tomorrow). This applies to 52 "
        "occurrences of a recurring event."
    )  # the series, expanded from the rule Calendar gave


def test_an_approved_event_is_created_once_and_not_planned_again(mac, make_app):
    mac.put(calendar_app())
    app = wilson_on_a_mac(make_app)
    approved_twice(app, "create_event", DENTIST)
    assert not failures(app)
    [event] = mac.events()
    assert (event["summary"], event["start"], event["end"], event["location"]) == (
        "Dentist",
        "2027-01-12T15:00:00",
        "2027-01-12T16:00:00",
        "Dr. Weiss",
    )
    [create] = mac.calls("create")
    assert create["args"][:6] == ["", event["url"], "Dentist", "2027-01-12T15:00", "2027-01-12T16:00", "false"]
    assert event["url"].startswith("wilson:item-") and "Dentist" not in create["script"]
    read_calendar(app)
    [own] = rows("Dentist")
    assert (own.outcome, own.reason) == ("drop", "Wilson's own write, approved by the user")


def test_a_named_event_is_moved_then_cancelled_and_neither_is_planned_again(mac, make_app):
    mac.put(calendar_app(FLIGHT))
    app = wilson_on_a_mac(make_app)
    read_calendar(app)
    approved_twice(app, "move_event", {"title": "Flight block", "start": "2027-01-15T10:00"})
    [moved] = mac.events()
    assert (moved["start"], moved["end"]) == ("2027-01-15T10:00:00", "2027-01-15T13:00:00")  # as long as it was
    assert mac.calls("move")[0]["args"] == ["Flight block", "2027-01-15T10:00", "", "false"]
    read_calendar(app)
    assert rows("Flight block")[-1].outcome == "drop"
    approved_twice(app, "cancel_event", {"title": "Flight block"})
    assert mac.events() == []
    read_calendar(app)
    read_calendar(app)  # an emptied calendar is read twice before anything counts as gone
    cancelled = rows("Flight block")[-1]
    assert cancelled.payload["change"] == "cancelled" and cancelled.outcome == "drop"
    assert not failures(app)


def test_a_missing_event_or_a_series_is_told_and_nothing_changes(mac, make_app):
    mac.put(calendar_app(FLIGHT, YOGA))
    app = wilson_on_a_mac(make_app)
    approved_twice(app, "move_event", {"title": "Hairdresser", "start": "2027-01-15T10:00"})
    approved_twice(app, "cancel_event", {"title": "Yoga"})
    assert failures(app) == [
        "I could not move “Hairdresser” in your calendar: there is no event called “Hairdresser” in it. "
        "Nothing else was changed.",
        "I could not cancel “Yoga” in your calendar: “Yoga” repeats; Wilson moves and cancels only single events "
        "for now. Nothing else was changed.",
    ]
    assert mac.events() == [FLIGHT, YOGA]


def test_a_refused_permission_is_told_with_where_to_allow_it(mac, make_app, monkeypatch):
    mac.put(calendar_app())
    monkeypatch.setenv("WILSON_TEST_OSASCRIPT_DENY", "1")
    app = wilson_on_a_mac(make_app)
    approved_twice(app, "create_event", DENTIST)
    assert failures(app) == [
        "I could not add “Dentist” to your calendar: macOS did not let Wilson use Calendar: System Settings → "
        "Privacy & Security → Automation → the program Wilson runs in → switch on Calendar. Nothing else was changed."
    ]
    assert mac.events() == []
