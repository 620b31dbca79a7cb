"""A standard persona for the cost benchmarks: a seeded, reproducible week of someone's life.

About 40 emails a day (mostly newsletters and notifications; each day one to three
urgent ones and three to five that need action), 15 chat messages a day, a
calendar of 30 events of which six recur, three calendar edits during the week,
and 10 tasks with deadlines. Each email has a label (promo, fyi, actionable, urgent)
that the benchmark keeps for itself (Stimulus.label); Wilson sees only the email,
whose wording carries it: urgent subjects start with "URGENT:", actionable ones with
"Action needed:", fyi mail is receipts, statements, notes and schedules, promo mail
is sales, offers, newsletters and invitations.
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import icalendar

SEED = 20270301

PROMO = [("deals@shop.example", "Spring sale: 30% off garden furniture"),
         ("news@daily.example", "Your morning newsletter: 12 stories"),
         ("hello@streaming.example", "New this week on your watchlist"),
         ("offers@airline.example", "Fly to Lisbon from 49 EUR"),
         ("digest@forum.example", "Weekly digest: top threads in Home Improvement"),
         ("promo@coffee.example", "Buy one get one free this weekend"),
         ("webinar@saas.example", "Webinar invite: scaling your spreadsheets")]
FYI = [("noreply@parcel.example", "Your order has shipped"),
       ("statements@bank.example", "Your monthly statement is ready"),
       ("noreply@cloud.example", "Receipt for your storage plan"),
       ("calendar@work.example", "Meeting notes from Thursday"),
       ("noreply@gym.example", "Class schedule changes next month"),
       ("school@school.example", "Newsletter from Class 3b")]
ACTIONABLE = [("landlord@mail.example", "Action needed: sign the lease renewal by Friday"),
              ("anna@mail.example", "Action needed: RSVP for Anna's birthday dinner"),
              ("boss@work.example", "Action needed: review the Q2 budget draft"),
              ("dentist@clinic.example", "Action needed: confirm your check-up appointment"),
              ("tax@advisor.example", "Action needed: send the missing receipts"),
              ("school@school.example", "Action needed: sign the field trip consent form")]
URGENT = [("alerts@airline.example", "URGENT: your flight tomorrow is cancelled, rebook today"),
          ("alerts@bank.example", "URGENT: card payment declined, service suspended tonight"),
          ("school@school.example", "URGENT: school closes at 13:00 today, pick up the children"),
          ("boss@work.example", "URGENT: client call moved to 14:00 today, need the slides"),
          ("plumber@fix.example", "URGENT: water will be shut off in one hour")]
WORDS = ("please see the details below we wanted to let you know about the latest changes to your account "
         "and the schedule for the coming weeks if you have any questions reply to this message thanks again "
         "for being with us the team").split()
CHATS = ["what's on my calendar today?", "anything urgent in my email?", "remind me what's due this week",
         "thanks!", "I'm heading out, back at 6", "did the landlord write back?",
         "what should I prepare for tomorrow's meeting?", "ok, sounds good", "how busy is Thursday?",
         "note to self: buy milk", "when is the dentist?", "good morning", "I'm tired today",
         "can you summarise my inbox?", "what did I miss?"]
TASKS = ["Renew passport", "File tax return", "Book summer holiday", "Pay car insurance", "Buy Anna's present",
         "Submit expense report", "Call the landlord", "Renew gym membership", "Prepare Q2 slides",
         "Schedule car service"]
ONE_OFF = ["Dinner with Sam", "Dentist check-up", "Team offsite planning", "Parents' evening", "Haircut",
           "Lunch with Priya", "Car service", "Concert: Berlin Phil", "Doctor appointment", "Flight to Munich",
           "Project kickoff", "Coffee with Leo", "Piano lesson", "Plumber visit", "Cinema night", "Quarterly review",
           "Farmers market", "Parent-teacher meeting", "Birthday party: Mia", "Tax advisor", "Vet appointment",
           "Book club", "Yoga workshop", "IKEA trip"]
RECURRING = [("Daily standup", "FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR", time(9, 30), 15),
             ("Gym", "FREQ=WEEKLY;BYDAY=MO,WE", time(18, 30), 60),
             ("Team meeting", "FREQ=WEEKLY;BYDAY=TH", time(11, 0), 60),
             ("1:1 with manager", "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU", time(15, 0), 30),
             ("Piano practice", "FREQ=WEEKLY;BYDAY=SA", time(10, 0), 45),
             ("Family call", "FREQ=MONTHLY;BYMONTHDAY=1", time(19, 0), 60)]


@dataclass(order=True)
class Stimulus:
    at: datetime
    order: int
    kind: str = field(compare=False)  # email, chat, calendar
    text: str = field(compare=False, default="")
    payload: dict = field(compare=False, default_factory=dict)
    label: str = field(compare=False, default="")


def _local(day: date, minutes: int, tz: ZoneInfo) -> datetime:
    return datetime.combine(day, time(0, 0), tzinfo=tz) + timedelta(minutes=minutes)


def _email(rng: random.Random, label: str) -> tuple[str, dict]:
    pool = {"promo": PROMO, "fyi": FYI, "actionable": ACTIONABLE, "urgent": URGENT}[label]
    sender, subject = rng.choice(pool)
    body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(40, 90)))
    return f"Email from {sender}: {subject}\n{body}", {"from": sender, "subject": subject}


def stimuli(start: datetime, days: int, tz: ZoneInfo, seed: int = SEED) -> list[Stimulus]:
    """Emails, chat messages and calendar edits for `days` days from `start`, in time order."""
    rng = random.Random(seed)
    out: list[Stimulus] = []
    serial = 0
    first_day = start.astimezone(tz).date()
    for d in range(days):
        day = first_day + timedelta(days=d)
        count = rng.randint(36, 44)
        urgent, actionable = rng.randint(1, 3), rng.randint(3, 5)
        labels = ["urgent"] * urgent + ["actionable"] * actionable
        labels += ["promo" if rng.random() < 0.6 else "fyi" for _ in range(count - len(labels))]
        rng.shuffle(labels)
        for label in labels:
            # urgent and actionable mail comes in working hours; the rest at any time, mostly by day
            if label in ("urgent", "actionable") or rng.random() < 0.85:
                minutes = rng.randint(7 * 60, 21 * 60 + 59)
            else:
                minutes = rng.randint(0, 24 * 60 - 1)
            text, payload = _email(rng, label)
            serial += 1
            out.append(Stimulus(_local(day, minutes, tz) + timedelta(seconds=rng.randint(0, 59)), serial, "email",
                                text, payload, label))
        for _ in range(15):
            serial += 1
            out.append(Stimulus(_local(day, rng.randint(7 * 60 + 30, 22 * 60), tz)
                                + timedelta(seconds=rng.randint(0, 59)), serial, "chat", rng.choice(CHATS)))
    edits = [(1, 10 * 60, {"action": "add", "title": "Emergency dentist", "days": 1, "hour": 8}),
             (2, 14 * 60, {"action": "move", "title": "Dinner with Sam", "shift_days": 1}),
             (4, 16 * 60, {"action": "cancel", "title": "Team offsite planning"})]
    for d, minutes, edit in edits:
        if d < days:
            serial += 1
            out.append(Stimulus(_local(first_day + timedelta(days=d), minutes, tz), serial, "calendar",
                                edit["title"], edit))
    return sorted(s for s in out if s.at >= start)


def write_calendar(path: Path, start: datetime, tz: ZoneInfo, seed: int = SEED) -> dict[str, tuple]:
    """30 events (24 one-off in the next five weeks, 6 recurring); returns title -> (start, end)."""
    rng = random.Random(seed + 1)
    calendar = icalendar.Calendar()
    calendar.add("PRODID", "-//Wilson bench//persona//EN")
    calendar.add("VERSION", "2.0")
    first = start.astimezone(tz).date()
    events = {}
    for title in ONE_OFF:
        day = first + timedelta(days=rng.randint(1, 35))
        begin = datetime.combine(day, time(rng.randint(8, 19), rng.choice((0, 30))), tzinfo=tz)
        events[title] = (begin, begin + timedelta(minutes=rng.choice((30, 60, 90, 120))))
        calendar.add_component(_vevent(title, *events[title]))
    for title, rule, at, minutes in RECURRING:
        begin = datetime.combine(first, at, tzinfo=tz)
        event = _vevent(title, begin, begin + timedelta(minutes=minutes))
        event.add("RRULE", icalendar.vRecur.from_ical(rule))
        calendar.add_component(event)
        events[title] = (begin, begin + timedelta(minutes=minutes))
    try:
        calendar.add_missing_timezones()
    except Exception:  # older icalendar: TZID stays a reference, which readers accept
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(calendar.to_ical())
    return events


def _vevent(title: str, begin: datetime, end: datetime) -> icalendar.Event:
    event = icalendar.Event()
    event.add("UID", f"{uuid.UUID(int=random.Random(title).getrandbits(128))}@persona")
    event.add("SUMMARY", title)
    event.add("SEQUENCE", 0)
    event.add("DTSTART", begin)
    event.add("DTEND", end)
    return event


def apply_calendar_edit(path: Path, edit: dict, events: dict, now: datetime, tz: ZoneInfo) -> None:
    from channels.calendar import add_event, cancel_event, move_event

    if edit["action"] == "add":
        day = now.astimezone(tz).date() + timedelta(days=edit["days"])
        begin = datetime.combine(day, time(edit["hour"], 0), tzinfo=tz)
        add_event(path, edit["title"], begin, begin + timedelta(minutes=45), tz=tz)
    elif edit["action"] == "move":
        begin, end = events[edit["title"]]
        shift = timedelta(days=edit["shift_days"])
        move_event(path, edit["title"], begin + shift, end + shift, tz=tz)
    elif edit["action"] == "cancel":
        cancel_event(path, edit["title"])


def create_tasks(now: datetime, tz: ZoneInfo, windows: list[str], first_day: int = 1, last_day: int = 14,
                 seed: int = SEED) -> list:
    """10 open tasks due on days first_day..last_day, planned for follow-ups as the approval gate would."""
    from actors.tick import plan_task
    from actors.tools import parse_when
    from storage.models import Task

    rng = random.Random(seed + 2)
    today = now.astimezone(tz).date()
    tasks = []
    for title in TASKS:
        due, is_date = parse_when((today + timedelta(days=rng.randint(first_day, last_day))).isoformat(), tz)
        task = Task.create(title=title, due=due, due_is_date=is_date, created_at=now)
        plan_task(task, now, windows, tz)
        tasks.append(task)
    return tasks
