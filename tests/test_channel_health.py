"""Every channel's health in plain sight: `wilson status` and the dashboard show when each channel last reached
its source and its last error, and a channel that has failed for an hour is told to the user once, with the fix."""

from __future__ import annotations

from datetime import timedelta
from http.server import BaseHTTPRequestHandler

import pytest

from tests.web_harness import logged_in
from wilson.app import cli
from wilson.kernel.loopback import LoopbackServer

ICS = (
    b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:a\r\nDTSTAMP:20270101T000000Z\r\n"
    b"DTSTART:20270108T113000Z\r\nDTEND:20270108T123000Z\r\nSUMMARY:Lunch\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
)
TOLD = "I have not been able to reach your calendar for an hour: "


class Calendar(LoopbackServer):
    """One .ics calendar that answers 500 while `down`."""

    thread_name = "ics-health"
    down = False

    class handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            down = self.server.owner.down
            body = b"Internal Server Error" if down else ICS
            self.send_response(500 if down else 200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)


@pytest.fixture
def calendar():
    with Calendar() as server:
        yield server


def live_through(app, minutes: int) -> None:
    """Five-minute steps, as the real clock's polls would come."""
    for _ in range(minutes // 5):
        app.advance(timedelta(minutes=5))


def told(app) -> list[str]:
    return [d["text"] for d in app.user_deliveries()]


def status(app, capsys, monkeypatch) -> str:
    monkeypatch.setenv("WILSON_CORE_TIMEZONE", "Europe/Berlin")  # as the running Wilson's
    capsys.readouterr()
    assert cli.main(["--home", str(app.config.home), "status"]) == 0
    [line] = [line for line in capsys.readouterr().out.splitlines() if line.startswith("calendar: ")]
    return line


def test_a_calendar_failing_for_an_hour_is_told_once_and_status_shows_its_last_success_and_error(
    make_app, calendar, capsys, monkeypatch
):
    app = make_app(
        start="2027-01-05T09:00:00+01:00",
        env={"WILSON_CALENDAR_URL": calendar.base_url + "/cal.ics", "WILSON_CALENDAR_POLL": "5m"},
    )
    live_through(app, 5)
    assert status(app, capsys, monkeypatch).startswith("calendar: ok — last success Tue 05 Jan 09:05 (as of ")

    calendar.down = True
    live_through(app, 55)  # polls at 09:10 .. 10:00, all failing: 50 minutes, not yet an hour
    assert not [t for t in told(app) if t.startswith(TOLD)]
    line = status(app, capsys, monkeypatch)
    assert line.startswith("calendar: failing — last success Tue 05 Jan 09:05 — last error Tue 05 Jan 10:00: ")
    assert line.split(": ", 2)[-1].startswith("http://127.0.0.1:") and "HTTP 500" in line

    live_through(app, 60)  # to 11:00: an hour at 10:10, told then and only then
    [message] = [t for t in told(app) if t.startswith(TOLD)]
    assert "HTTP 500" in message and message.endswith(". `wilson doctor` checks it and says what to change.")
    assert "/cal.ics" not in message  # the address may be a secret link: only its host is named

    calendar.down = False
    live_through(app, 5)
    line = status(app, capsys, monkeypatch)
    assert line.startswith("calendar: ok — last success Tue 05 Jan 11:05 — last error Tue 05 Jan 11:00: ")
    assert len([t for t in told(app) if t.startswith(TOLD)]) == 1


def test_the_dashboard_shows_each_channels_last_success_and_last_error(make_app, calendar):
    app = make_app(
        start="2027-01-05T09:00:00+01:00",
        env={
            "WILSON_CALENDAR_URL": calendar.base_url + "/cal.ics",
            "WILSON_CALENDAR_POLL": "5m",
            "WILSON_WEB_ENABLED": "true",
            "WILSON_WEB_PORT": "0",
        },
    )
    live_through(app, 5)
    calendar.down = True
    live_through(app, 10)
    page = logged_in(app).get("/budget").text
    row = page[page.index('<tr id="channel-calendar">') :]
    row = row[: row.index("</tr>")]
    assert '<td class="late">failing</td><td>Tue 05 Jan 09:05</td><td>Tue 05 Jan 09:15: http://127.0.0.1:' in row
    assert "HTTP 500" in row
    assert '<tr id="channel-web"><td>web</td><td>serving</td>' in page
