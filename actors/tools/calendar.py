"""The calendar skill: the calendar channel (an .ics file or subscription, or CalDAV, polled for
changes into receptor buffers) and the `calendar_lookup` read over what it has seen."""

from __future__ import annotations

from datetime import timedelta

from actors.tools.common import WHEN, BuiltinTool, _obj, calendar_events, next_midnight, parse_when
from storage import outbox
from wilson.skills import Channel, Section, Skill


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


OWN_UID = "@own.wilson"  # as channels/calendar/editor.py writes it: the calendar channel knows its own writes by it


def _writable(config) -> str:
    """Why no event can be written, or "": an .ics file ([calendar] path) or a CalDAV account can be written,
    a subscribed URL cannot (channels/calendar/writers.py writer_for)."""
    if config is None or any(str(config.get("calendar", key) or "").strip() for key in ("path", "caldav_url")):
        return ""
    if str(config.get("calendar", "apple")).strip().lower() in ("1", "true", "yes", "on"):
        return ""
    return (
        "Wilson can add events to an .ics file ([calendar] path), a CalDAV calendar ([calendar] caldav_url) or "
        "Apple Calendar ([calendar] apple), not to a subscribed URL"
    )


class CreateEvent(BuiltinTool):
    name = "create_event"
    description = (
        "Propose adding an event to the user's calendar: title, start (a date for all day, or a "
        "datetime), end, location, notes."
    )
    brief = "an event in the user's calendar: title, start (date: all day), end, location, notes"
    parameters = _obj(
        ["title", "start"],
        title={"type": "string"},
        start=WHEN,
        end=WHEN,
        location={"type": "string"},
        notes={"type": "string"},
    )
    read_only = False
    limits = {"title": 200, "location": 300, "notes": 2000, "start": 40, "end": 40}

    def needs(self, config) -> str:
        return _writable(config)

    def validate(self, args, call):
        problem = self.check_args(args) or _writable(call.config)
        if problem:
            return problem
        if not " ".join(str(args.get("title") or "").split()):
            return "an event needs a title"
        try:
            start, start_is_date = parse_when(args.get("start"), call.tz)
            end, end_is_date = parse_when(args.get("end"), call.tz)
        except ValueError as exc:
            return str(exc)
        if start is None:
            return "an event needs a start"
        if end is not None and (end < start or (end == start and not start_is_date)):
            return "the end must come after the start"
        if end is not None and start_is_date != end_is_date:
            return "start and end must both be dates (all day) or both times"
        return None

    def describe(self, args, call):
        when = str(args["start"]) + (f" to {args['end']}" if args.get("end") else "")
        return (
            f"Add to your calendar: {' '.join(str(args['title']).split())}, {when}"
            + (f", at {args['location']}" if args.get("location") else "")
            + (f"\n   Notes: {args['notes']}" if args.get("notes") else "")
        )

    def execute(self, args, call):
        """Inside the gate's transaction: one outbox row for the calendar channel, keyed by the item, which
        writes the file after the commit (a file cannot roll back with the database)."""
        key = f"item-{call.item_id}"
        payload = {
            "action": "create",
            "uid": f"{key}{OWN_UID}",
            "title": " ".join(str(args["title"]).split()),
            "start": str(args["start"]),
            "end": str(args.get("end") or "") or None,
            "location": args.get("location") or None,
            "notes": args.get("notes") or None,
        }
        row = outbox.add(
            channel="calendar",
            text=f"Calendar: add {payload['title']}",
            trace_id=call.trace_id,
            key=f"calendar-write:{key}",
            at=call.now,
            payload=payload,
            surfaced=False,
        )
        call.nudge("calendar", row.id)
        return {"queued": True, "uid": payload["uid"]}


def _named(args) -> str | None:
    return None if " ".join(str(args.get("title") or "").split()) else "which event? give its title as in the calendar"


class MoveEvent(BuiltinTool):
    name = "move_event"
    description = "Propose moving an event of the user's calendar, named by its title, to a new start (and end)."
    brief = "an event of the user's calendar, by its title, to a new start and end"
    parameters = _obj(["title", "start"], title={"type": "string"}, start=WHEN, end=WHEN)
    read_only = False
    limits = {"title": 200, "start": 40, "end": 40}

    def needs(self, config) -> str:
        return _writable(config)

    def validate(self, args, call):
        problem = self.check_args(args) or _writable(call.config) or _named(args)
        if problem:
            return problem
        try:
            start, start_is_date = parse_when(args.get("start"), call.tz)
            end, end_is_date = parse_when(args.get("end"), call.tz)
        except ValueError as exc:
            return str(exc)
        if end is not None and (end < start or (end == start and not start_is_date)):
            return "the end must come after the start"
        return None

    def describe(self, args, call):
        return f"Move in your calendar: {' '.join(str(args['title']).split())} to {args['start']}" + (
            f" to {args['end']}" if args.get("end") else ""
        )

    def execute(self, args, call):
        return _queue(
            call,
            {
                "action": "move",
                "title": " ".join(str(args["title"]).split()),
                "start": str(args["start"]),
                "end": str(args.get("end") or "") or None,
            },
        )


class CancelEvent(BuiltinTool):
    name = "cancel_event"
    description = "Propose cancelling an event of the user's calendar, named by its title."
    brief = "an event of the user's calendar, by its title"
    parameters = _obj(["title"], title={"type": "string"})
    read_only = False
    limits = {"title": 200}

    def needs(self, config) -> str:
        return _writable(config)

    def validate(self, args, call):
        return self.check_args(args) or _writable(call.config) or _named(args)

    def describe(self, args, call):
        return f"Cancel in your calendar: {' '.join(str(args['title']).split())}"

    def execute(self, args, call):
        return _queue(call, {"action": "cancel", "title": " ".join(str(args["title"]).split())})


def _queue(call, payload: dict) -> dict:
    """Inside the gate's transaction: one outbox row for the calendar channel, keyed by the item; the channel
    writes the file after the commit (a file cannot roll back with the database)."""
    row = outbox.add(
        channel="calendar",
        text=f"Calendar: {payload['action']} {payload['title']}",
        trace_id=call.trace_id,
        key=f"calendar-write:item-{call.item_id}",
        at=call.now,
        payload=payload,
        surfaced=False,
    )
    call.nudge("calendar", row.id)
    return {"queued": True, **{k: v for k, v in payload.items() if k in ("action", "uid")}}


# The [calendar] section of wilson.toml, this skill's own (wilson/skills.py Section).
SETTINGS = Section(
    defaults={
        "path": "",
        "url": "",
        "caldav_url": "",
        "caldav_username": "",
        "caldav_password": "",
        "caldav_calendar": "",
        "oauth": "",
        "horizon_days": 365,
        "apple": False,
        "apple_calendar": "",
        "poll": "5m",  # how often the source is checked for changes (a cheap conditional read); "off" disables
    },
    schema={
        "path": ("text", "an .ics file"),
        "url": ("url", "an .ics subscription (https:// or webcal://)"),
        "caldav_url": ("url", "a CalDAV server"),
        "caldav_username": ("text", "the CalDAV account"),
        "caldav_password": ("text", "set WILSON_CALENDAR_CALDAV_PASSWORD in the environment rather than here"),
        "caldav_calendar": ("text", "the CalDAV calendar (its name) approved new events go to; empty: the first"),
        "oauth": (
            "text",
            "google: sign in to caldav_url with the account `wilson account add google` stored "
            "(OAuth) instead of a password; empty: the password",
        ),
        "horizon_days": ("count", "how far ahead events are read"),
        "poll": ("duration_or_off", "how often the source is checked for changes, e.g. 5m; off disables"),
        "apple": ("bool", "also read the macOS Calendar app (through osascript)"),
        "apple_calendar": (
            "text",
            "the Calendar app's calendar (its name) approved new events go to; empty: the "
            "first one that can be written",
        ),
    },
)


SKILL = Skill(
    description="Calendar: events from an .ics file, a subscription or CalDAV, and a look at them.",
    tools=(CalendarLookup, CreateEvent, MoveEvent, CancelEvent),
    channels=(Channel("calendar", "channels.calendar:CalendarChannel", priority=20, buffered=True),),
    config=SETTINGS,
)
