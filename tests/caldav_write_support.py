"""What the tests of writing to a CalDAV calendar share: a rights file for Radicale, two events, the
calendars of a user on the server, and the steps of approving and reading back."""

from __future__ import annotations

import caldav
import icalendar

from storage.models import Approval, ReceptorBuffer
from wilson.kernel.messages import ChannelSync


# bob may read alice's "Shared" calendar, not write it; everyone owns their own calendars
RIGHTS = """\
[root]
user: .+
collection:
permissions: R

[principal]
user: .+
collection: {user}
permissions: RW

[own]
user: .+
collection: {user}/[^/]+
permissions: rw

[alice-to-bob]
user: bob
collection: alice(/shared)?
permissions: Rr
"""

DENTIST = {"title": "Dentist", "start": "2027-01-12T15:00", "end": "2027-01-12T16:00", "location": "Dr. Weiss"}
FLIGHT = (
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:flight-{n}\r\n"
    "DTSTAMP:20261101T000000Z\r\nDTSTART;TZID=Europe/Berlin:2027011{d}T090000\r\n"
    "DTEND;TZID=Europe/Berlin:2027011{d}T120000\r\nSUMMARY:{title}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
)


def calendars_of(url: str, user: str, *names: str) -> list:
    principal = caldav.DAVClient(url=url, username=user, password="pw", timeout=10).principal()
    return [principal.make_calendar(name=name, cal_id=name.lower()) for name in names]


def server_state(calendar) -> dict[str, bytes]:
    """Every object of a calendar on the server, by UID: what "nothing else changed" is checked against."""
    return {str(icalendar.Calendar.from_ical(o.data).walk("VEVENT")[0]["UID"]): o.data for o in calendar.get_events()}


def vevent(calendar, uid: str) -> icalendar.Event:
    return icalendar.Calendar.from_ical(calendar.event_by_uid(uid).data).walk("VEVENT")[0]


def wilson_for(make_app, url: str, user: str, **env):
    return make_app(
        env={
            "WILSON_CALENDAR_CALDAV_URL": url,
            "WILSON_CALENDAR_CALDAV_USERNAME": user,
            "WILSON_CALENDAR_CALDAV_PASSWORD": "pw",
            "WILSON_CALENDAR_POLL": "off",
            **env,
        }
    )


def newest() -> Approval:
    return Approval.select().order_by(Approval.id.desc()).get()


def approved_twice(app, tool: str, args: dict) -> Approval:
    assert app.propose(tool, args, "because you asked") is None
    assert app.wait_idle()
    proposal = newest()
    app.decide(proposal.id, "approve")
    app.decide(proposal.id, "approve")  # pressed twice
    assert app.wait_idle()
    return proposal


def told(app) -> list[str]:
    return [d["text"] for d in app.user_deliveries()]


def read_calendar(app) -> None:
    app.supervisor.tell("calendar", ChannelSync("test"))
    assert app.wait_idle()


def rows_about(title: str) -> list[ReceptorBuffer]:
    return [
        r
        for r in ReceptorBuffer.select().where(ReceptorBuffer.channel == "calendar").order_by(ReceptorBuffer.id)
        if r.payload.get("title") == title
    ]
