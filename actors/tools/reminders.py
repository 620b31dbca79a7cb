"""The reminders skill: recurring reminders (a cron in the user's timezone) and one-off ones, and
the list of both in words. The tick fires them."""

from __future__ import annotations

from actors.shared.cron import valid_cron
from actors.shared.schedule_rows import add_once, add_reminder
from actors.tools.common import (
    BuiltinTool,
    I,
    S,
    WHEN,
    _obj,
    describe_cron,
    reminder_at,
    reminder_views,
    reminder_when,
    show_when,
    slug,
    user_reminders,
)
from storage.models import Schedule
from wilson.skills import Skill


class ListReminders(BuiltinTool):
    name = "list_reminders"
    description = "The user's reminders, recurring and one-off, in words."
    parameters = _obj()
    read_only = True

    def execute(self, args, call):
        return reminder_views(call.tz)


class CreateReminder(BuiltinTool):
    name = "create_reminder"
    description = (
        "Propose a recurring reminder, as a cron expression in the user's timezone "
        '(e.g. "0 9 1-7 * 1" for every first Monday at 09:00).'
    )
    brief = 'recurring; cron in the user\'s timezone, e.g. "0 9 1-7 * 1": first Mondays 09:00'
    parameters = _obj(["text", "cron"], text=S, cron=S)

    def validate(self, args, call):
        problem = super().validate(args, call)
        if problem is None and not valid_cron(str(args.get("cron"))):
            return f"not a cron expression: {args.get('cron')!r}"
        return problem

    def describe(self, args, call):
        return f"New reminder: {args.get('text')} ({describe_cron(args.get('cron'))})"

    def execute(self, args, call):
        name = f"reminder:{slug(args['text'])}"
        old = Schedule.get_or_none((Schedule.name == name) & (Schedule.enabled == True))
        schedule = add_reminder(name, str(args["cron"]), str(args["text"]), str(call.tz), call.now)
        # a reminder of the same words is replaced; an undo sets it back as it was
        return {"schedule": schedule.name, "replaced": {"text": old.text, "cron": old.cron} if old else None}


class Remind(BuiltinTool):
    name = "remind"
    description = "Propose a one-off reminder at a time (a date alone means 09:00 that day)."
    brief = "one-off; a date alone means 09:00"
    parameters = _obj(["text", "at"], text=S, at=WHEN)
    dates = moments = ("at",)

    def validate(self, args, call):
        problem = super().validate(args, call)
        # (the time is known to the cortex; a check of the arguments alone has none)
        if problem is None and call.now is not None and reminder_at(args["at"], call.tz) <= call.now:
            return f"{args['at']} has already passed; a reminder needs a time still to come"
        return problem

    def describe(self, args, call):
        try:
            at = reminder_at(args.get("at"), call.tz)
        except ValueError:
            return f"Remind you once: {args.get('text')} ({args.get('at')})"
        return f"Remind you once, {show_when(at, False, call.tz)}: {args.get('text')}"

    def execute(self, args, call):
        at = reminder_at(args["at"], call.tz)
        if call.now is not None and at <= call.now:  # approved too late: it would remind of nothing in time
            raise ValueError(f"{show_when(at, False, call.tz)} has passed; ask me again with a new time")
        schedule = add_once(f"once:{slug(args['text'])}:{at.isoformat()}", at, str(args["text"]), str(call.tz))
        return {"schedule": schedule.name, "at": at.isoformat()}


class CancelReminder(BuiltinTool):
    name = "cancel_reminder"
    description = "Propose stopping one of the user's reminders (its id from list_reminders)."
    brief = "stop one: its id from list_reminders"
    parameters = _obj(["reminder_id"], reminder_id=I)
    user_only = True  # a mail or a page never stops the user's reminders

    def validate(self, args, call):
        problem = super().validate(args, call)
        if problem is None and _reminder(args) is None:
            return f"no reminder {args.get('reminder_id')} (list_reminders has their ids)"
        return problem

    def describe(self, args, call):
        row = _reminder(args)
        if row is None:
            return f"Stop reminder {args.get('reminder_id')}"
        return f"Stop reminder: {row.text} ({reminder_when(row, call.tz)})"

    def execute(self, args, call):
        stopped = (
            Schedule.update(enabled=False).where((Schedule.id == args["reminder_id"]) & user_reminders()).execute()
        )
        return {"reminder_id": args["reminder_id"], "stopped": bool(stopped)}


def _reminder(args: dict) -> Schedule | None:
    """The user's reminder that an id names, while it still runs."""
    return Schedule.get_or_none(
        (Schedule.id == args.get("reminder_id")) & user_reminders() & (Schedule.enabled == True)
    )


SKILL = Skill(
    description="Reminders: recurring and one-off, fired on time by the tick.",
    tools=(CreateReminder, Remind, ListReminders, CancelReminder),
)
