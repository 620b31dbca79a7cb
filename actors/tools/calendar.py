"""The calendar skill: the calendar channel (an .ics file or subscription, or CalDAV, polled for
changes into receptor buffers) and the `calendar_lookup` read over what it has seen."""

from __future__ import annotations

from datetime import timedelta

from actors.tools.common import WHEN, BuiltinTool, _obj, calendar_events, next_midnight, parse_when
from wilson.skills import Channel, Skill


class CalendarLookup(BuiltinTool):
    name = "calendar_lookup"
    description = "Calendar events between two dates."
    parameters = _obj(["start", "end"], start=WHEN, end=WHEN)
    read_only = True
    untrusted = "your calendar"

    def validate(self, args, call):
        return None  # a missing bound reads without it; a wrong date is refused by execute

    def execute(self, args, call):
        start, _ = parse_when(args.get("start"), call.tz)
        end, end_is_date = parse_when(args.get("end"), call.tz)
        if end is not None and end_is_date:  # "until 2027-01-05" takes in the whole of the 5th
            end = next_midnight(end, call.tz) - timedelta(microseconds=1)
        return {"events": calendar_events(start, end)}


SKILL = Skill(
    description="Calendar: events from an .ics file, a subscription or CalDAV, and a look at them.",
    tools=(CalendarLookup,),
    channels=(Channel("calendar", "channels.calendar:CalendarChannel", priority=20, buffered=True),),
)
