"""A standard persona for the cost benchmarks: a seeded, reproducible week of someone's life.

About 40 emails a day (mostly newsletters and notifications; each day one to three
urgent ones and three to five that need action), 15 chat messages a day (some need a
tool round: "what's on my calendar today?", "remind me what's due this week"), a
calendar of 30 events of which six recur, three calendar edits during the week,
and 10 tasks with deadlines (`create_tasks(..., extra_open=50)` adds 50 far-off ones:
the 60-open-task growth point).

Each email is a real RFC 5322 message read the way the email channel reads one
(channels/email/parse.py: parse_message, describe, payload, dedup_key), so Wilson sees
what it would see of real mail: bodies of real length and shape, trimmed as the
channel trims them, newsletters marked bulk by their List-Unsubscribe header, replies
in a thread (In-Reply-To, quoted history) named as such. Newsletter bodies are drawn
at run time from the email corpus ($WILSON_CORPUS_DIR/eml, default ../shared/corpus:
only its MIT and Apache-2.0-or-MIT folders, see its SOURCES.md; nothing is copied
into the project); without the corpus, kilobyte-sized newsletters are generated.
Each email has a label (promo, fyi, actionable, urgent) that the benchmark keeps for
itself (Stimulus.label); Wilson sees only the email, whose wording carries it: urgent
subjects start with "URGENT:", actionable ones with "Action needed:", fyi mail is
receipts, statements, notes and schedules, promo mail is sales, offers, newsletters
and invitations.
"""

from __future__ import annotations

import functools
import os
import random
import uuid
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path
from typing import Iterator
from zoneinfo import ZoneInfo

import icalendar

SEED = 20270301
ACCOUNT = "me@persona.example"
ROOT = Path(__file__).resolve().parent.parent
# The corpus' folders whose licences allow this use (SOURCES.md): MIT, and Apache-2.0 OR MIT. The folders of
# real captured third-party mail (flanker, SpamScope) and the LGPL-derived one are left out.
CORPUS_FOLDERS = ("mikel-mail", "nodemailer-mailparser", "stalwart-mail-parser")
CORPUS_MIN_CHARS = 500  # a newsletter body shorter than this after the channel's trimming is a parser fixture
THREAD_SHARE = 0.6  # of actionable and urgent mail, the share that answers an earlier mail of the same subject
EDIT_SERIAL = 10**9  # a calendar edit's order: after any mail or message of the same second

PROMO = [
    ("Garden Shop", "deals@shop.example", "Spring sale: 30% off garden furniture"),
    ("The Daily", "news@daily.example", "Your morning newsletter: 12 stories"),
    ("Streamly", "hello@streaming.example", "New this week on your watchlist"),
    ("Airline Offers", "offers@airline.example", "Fly to Lisbon from 49 EUR"),
    ("Forum Digest", "digest@forum.example", "Weekly digest: top threads in Home Improvement"),
    ("Bean & Co", "promo@coffee.example", "Buy one get one free this weekend"),
    ("SheetsCloud", "webinar@saas.example", "Webinar invite: scaling your spreadsheets"),
]
FYI = [
    ("Parcel Service", "noreply@parcel.example", "Your order has shipped"),
    ("Your Bank", "statements@bank.example", "Your monthly statement is ready"),
    ("CloudBox", "noreply@cloud.example", "Receipt for your storage plan"),
    ("", "calendar@work.example", "Meeting notes from Thursday"),
    ("City Gym", "noreply@gym.example", "Class schedule changes next month"),
    ("", "school@school.example", "Newsletter from Class 3b"),
]
ACTIONABLE = [
    ("Mr Berger", "landlord@mail.example", "Action needed: sign the lease renewal by Friday"),
    ("Anna", "anna@mail.example", "Action needed: RSVP for Anna's birthday dinner"),
    ("Petra Hall", "boss@work.example", "Action needed: review the Q2 budget draft"),
    ("Dental Clinic", "dentist@clinic.example", "Action needed: confirm your check-up appointment"),
    ("Tax Advisor", "tax@advisor.example", "Action needed: send the missing receipts"),
    ("", "school@school.example", "Action needed: sign the field trip consent form"),
]
URGENT = [
    ("Airline Alerts", "alerts@airline.example", "URGENT: your flight tomorrow is cancelled, rebook today"),
    ("Your Bank", "alerts@bank.example", "URGENT: card payment declined, service suspended tonight"),
    ("", "school@school.example", "URGENT: school closes at 13:00 today, pick up the children"),
    ("Petra Hall", "boss@work.example", "URGENT: client call moved to 14:00 today, need the slides"),
    ("Fix-It Plumbing", "plumber@fix.example", "URGENT: water will be shut off in one hour"),
]
WORDS = (
    "please see the details below we wanted to let you know about the latest changes to your account "
    "and the schedule for the coming weeks if you have any questions reply to this message thanks again "
    "for being with us the team"
).split()
SECTION = (
    "Top stories",
    "This week",
    "Editor's pick",
    "Deals for you",
    "From the community",
    "Events near you",
    "What's new",
    "Don't miss",
)
ITEMS = (
    "Five ways to make the most of spring",
    "Our readers' favourite picks of the month",
    "The one change that saves hours every week",
    "A closer look at what is coming next",
    "Members save more this weekend",
    "How others solved it: stories from you",
    "Last chance: offers ending soon",
    "Behind the scenes with our team",
    "New arrivals you might like",
    "Your questions answered",
)
CHATS = [
    "what's on my calendar today?",
    "anything urgent in my email?",
    "remind me what's due this week",
    "thanks!",
    "I'm heading out, back at 6",
    "did the landlord write back?",
    "what should I prepare for tomorrow's meeting?",
    "ok, sounds good",
    "how busy is Thursday?",
    "note to self: buy milk",
    "when is the dentist?",
    "good morning",
    "I'm tired today",
    "can you summarise my inbox?",
    "what did I miss?",
]
TASKS = [
    "Renew passport",
    "File tax return",
    "Book summer holiday",
    "Pay car insurance",
    "Buy Anna's present",
    "Submit expense report",
    "Call the landlord",
    "Renew gym membership",
    "Prepare Q2 slides",
    "Schedule car service",
]
LATER_VERBS = ("Plan", "Sort out", "Look into", "Book", "Review", "Renew", "Clean out", "Organise", "Fix", "Order")
LATER_THINGS = (
    "the garden shed",
    "winter tyres",
    "the family photo album",
    "a new desk chair",
    "the attic",
    "Mia's school trip",
    "the home insurance",
    "a weekend in Hamburg",
    "the bike service",
    "the kitchen tap",
    "next year's budget",
    "the guest room",
    "a new phone plan",
    "the piano tuning",
    "the balcony plants",
    "old tax papers",
    "the car's MOT",
    "a birthday gift for Leo",
    "the cellar",
    "a language course",
    "the wardrobe",
    "the smoke alarms",
    "a dentist for Mia",
    "the summer camp",
    "the gutter",
)
ONE_OFF = [
    "Dinner with Sam",
    "Dentist check-up",
    "Team offsite planning",
    "Parents' evening",
    "Haircut",
    "Lunch with Priya",
    "Car service",
    "Concert: Berlin Phil",
    "Doctor appointment",
    "Flight to Munich",
    "Project kickoff",
    "Coffee with Leo",
    "Piano lesson",
    "Plumber visit",
    "Cinema night",
    "Quarterly review",
    "Farmers market",
    "Parent-teacher meeting",
    "Birthday party: Mia",
    "Tax advisor",
    "Vet appointment",
    "Book club",
    "Yoga workshop",
    "IKEA trip",
]
RECURRING = [
    ("Daily standup", "FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR", time(9, 30), 15),
    ("Gym", "FREQ=WEEKLY;BYDAY=MO,WE", time(18, 30), 60),
    ("Team meeting", "FREQ=WEEKLY;BYDAY=TH", time(11, 0), 60),
    ("1:1 with manager", "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU", time(15, 0), 30),
    ("Piano practice", "FREQ=WEEKLY;BYDAY=SA", time(10, 0), 45),
    ("Family call", "FREQ=MONTHLY;BYMONTHDAY=1", time(19, 0), 60),
]


@dataclass(order=True)
class Stimulus:
    at: datetime
    order: int
    kind: str = field(compare=False)  # email, chat, calendar
    text: str = field(compare=False, default="")
    payload: dict = field(compare=False, default_factory=dict)
    label: str = field(compare=False, default="")
    key: str = field(compare=False, default="")  # an email's dedup key, as the channel computes it


def _local(day: date, minutes: int, tz: ZoneInfo) -> datetime:
    return datetime.combine(day, time(0, 0), tzinfo=tz) + timedelta(minutes=minutes)


# Mail bodies ---------------------------------------------------------------------
def corpus_dir() -> Path:
    return Path(os.environ.get("WILSON_CORPUS_DIR") or ROOT.parent / "shared" / "corpus") / "eml"


def corpus_bodies() -> tuple[str, ...]:
    """Readable bodies of at least CORPUS_MIN_CHARS from the corpus' permissively licensed folders, read now."""
    return _bodies_in(corpus_dir())


@functools.lru_cache(maxsize=4)
def _bodies_in(base: Path) -> tuple[str, ...]:
    from channels.email import parse

    out = []
    for folder in CORPUS_FOLDERS:
        for path in sorted((base / folder).glob("*.eml")):
            raw = path.read_bytes()
            try:
                parsed = parse.parse_message(raw)
            except parse.ParseError:
                continue
            body = parse.trimmed_body(parsed.body, parse.MAX_BODY_CHARS)
            readable = sum(c.isalpha() or c.isspace() for c in body) / max(1, len(body))
            if len(body) >= CORPUS_MIN_CHARS and readable >= 0.75:
                out.append(body)
    return tuple(out)


def _words(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))


def _newsletter(rng: random.Random, name: str, subject: str) -> str:
    """A generated newsletter of 2-5 KB: sections of linked items and the footer such mail carries."""
    host = name.lower().replace(" ", "").replace("&", "") or "news"
    lines = [f"{subject}", f"View this email in your browser: https://{host}.example/view/{rng.randrange(10**6)}", ""]
    for title in rng.sample(SECTION, rng.randint(3, 5)):
        lines += [title.upper(), ""]
        for item in rng.sample(ITEMS, rng.randint(2, 4)):
            lines += [
                item,
                _words(rng, 15, 35).capitalize() + ".",
                f"Read more: https://{host}.example/a/{rng.randrange(10**8)}?utm_source=newsletter",
                "",
            ]
    lines += [
        "--",
        f"You receive this email because you signed up at {host}.example.",
        f"Unsubscribe: https://{host}.example/unsubscribe?u={rng.randrange(10**9)}",
        f"{name or 'The team'}, 12 Example Street, 10115 Berlin",
    ]
    return "\n".join(lines)


def _notification(rng: random.Random, name: str, subject: str) -> str:
    lines = ["Hello,", "", _words(rng, 15, 30).capitalize() + ".", ""]
    lines += [
        f"{label}: {value}"
        for label, value in rng.sample(
            [
                ("Reference", f"#{rng.randrange(10**7)}"),
                ("Date", "see above"),
                ("Amount", f"{rng.randint(5, 400)}.99 EUR"),
                ("Account", f"****{rng.randrange(10**4):04d}"),
                ("Status", "completed"),
                ("Items", str(rng.randint(1, 6))),
                ("Valid until", "end of month"),
                ("Contact", "support page"),
            ],
            rng.randint(3, 6),
        )
    ]
    lines += [
        "",
        _words(rng, 20, 45).capitalize() + ".",
        "",
        f"Kind regards,\n{name or 'The team'}",
        "",
        "This is an automated message; replies to it are not read.",
    ]
    return "\n".join(lines)


def _personal(rng: random.Random, name: str, subject: str) -> str:
    what = subject.split(": ", 1)[-1]
    lines = ["Hi,", "", f"{what[0].upper()}{what[1:]}.", _words(rng, 25, 70).capitalize() + ".", ""]
    if rng.random() < 0.5:
        lines += [_words(rng, 15, 40).capitalize() + ".", ""]
    lines += ["Thanks,", name or "School office"]
    return "\n".join(lines)


def _message(
    name: str,
    sender: str,
    subject: str,
    body: str,
    at: datetime,
    message_id: str,
    *,
    bulk: bool,
    parent: tuple[str, str, datetime] | None,
) -> bytes:
    msg = EmailMessage()
    msg["From"] = f"{name} <{sender}>" if name else sender
    msg["To"] = ACCOUNT
    msg["Date"] = format_datetime(at)
    msg["Message-ID"] = message_id
    if bulk:
        host = sender.split("@")[1]
        msg["List-Unsubscribe"] = f"<https://{host}/unsubscribe>, <mailto:unsubscribe@{host}>"
        msg["List-Id"] = f"<news.{host}>"
    if parent is not None:
        parent_id, parent_body, parent_at = parent
        msg["Subject"] = f"Re: {subject}"
        msg["In-Reply-To"] = parent_id
        msg["References"] = parent_id
        quoted = "\n".join("> " + line for line in parent_body.splitlines())
        body += f"\n\nOn {format_datetime(parent_at)}, {name or sender} wrote:\n{quoted}"
    else:
        msg["Subject"] = subject
    msg.set_content(body)
    return bytes(msg)


def read_mail(raw: bytes, tz: ZoneInfo, uid: int, thread: str | None) -> tuple[str, dict, str]:
    """(text, payload, dedup key) as the email channel makes them of a message (channels/email/channel.py)."""
    from channels.email import parse

    parsed = parse.parse_message(raw)
    return (
        parse.describe(parsed, tz, folder="INBOX", thread=thread),
        parse.payload(parsed, folder="INBOX", uid=uid, uidvalidity=1),
        parse.dedup_key(parsed, raw, ACCOUNT),
    )


def mail_sources() -> str:
    bodies = corpus_bodies()
    if bodies:
        return (
            f"half the newsletter bodies drawn from {len(bodies)} corpus mails ({', '.join(CORPUS_FOLDERS)} in "
            f"{corpus_dir()}); notifications and personal mail generated; read as the email channel reads mail"
        )
    return f"no corpus at {corpus_dir()}: every body generated (newsletters of 2-5 KB); read as the email channel does"


def stimuli(start: datetime, days: int, tz: ZoneInfo, seed: int = SEED) -> list[Stimulus]:
    """Emails, chat messages and calendar edits for `days` days from `start`, in time order."""
    return [item for day in daily(start, days, tz, seed) for item in day]


def daily(start: datetime, days: int, tz: ZoneInfo, seed: int = SEED) -> Iterator[list[Stimulus]]:
    """`stimuli`, one day's list at a time (each day's input falls within that day): a benchmark living through
    a month holds one day of mail, as Wilson would, not the whole month."""
    rng = random.Random(seed)
    bodies = corpus_bodies()
    serial = 0
    first_day = start.astimezone(tz).date()
    threads: dict[str, tuple[str, str, datetime]] = {}  # subject -> (Message-ID, body, sent) of its latest mail
    edits = [
        (1, 10 * 60, {"action": "add", "title": "Emergency dentist", "days": 1, "hour": 8}),
        (2, 14 * 60, {"action": "move", "title": "Dinner with Sam", "shift_days": 1}),
        (4, 16 * 60, {"action": "cancel", "title": "Team offsite planning"}),
    ]
    for d in range(days):
        out: list[Stimulus] = []
        day = first_day + timedelta(days=d)
        count = rng.randint(36, 44)
        urgent, actionable = rng.randint(1, 3), rng.randint(3, 5)
        labels = ["urgent"] * urgent + ["actionable"] * actionable
        labels += ["promo" if rng.random() < 0.6 else "fyi" for _ in range(count - len(labels))]
        rng.shuffle(labels)
        mails = []
        for label in labels:
            # urgent and actionable mail comes in working hours; the rest at any time, mostly by day
            if label in ("urgent", "actionable") or rng.random() < 0.85:
                minutes = rng.randint(7 * 60, 21 * 60 + 59)
            else:
                minutes = rng.randint(0, 24 * 60 - 1)
            mails.append((_local(day, minutes, tz) + timedelta(seconds=rng.randint(0, 59)), label))
        for at, label in sorted(mails):  # a reply is composed after the mail it answers
            pool = {"promo": PROMO, "fyi": FYI, "actionable": ACTIONABLE, "urgent": URGENT}[label]
            name, sender, subject = rng.choice(pool)
            if label == "promo":
                # half from the corpus (real mail's length and mess), half generated newsletters
                body = rng.choice(bodies) if bodies and rng.random() < 0.5 else _newsletter(rng, name, subject)
            elif label == "fyi":
                body = _notification(rng, name, subject)
            else:
                body = _personal(rng, name, subject)
            parent = threads.get(subject) if label in ("actionable", "urgent") and rng.random() < THREAD_SHARE else None
            serial += 1
            message_id = f"<{serial}.{seed}@{sender.split('@')[1]}>"
            raw = _message(name, sender, subject, body, at, message_id, bulk=label == "promo", parent=parent)
            threads[subject] = (message_id, body, at)
            text, payload, key = read_mail(raw, tz, serial, subject if parent else None)
            out.append(Stimulus(at, serial, "email", text, payload, label, key))
        for _ in range(15):
            serial += 1
            out.append(
                Stimulus(
                    _local(day, rng.randint(7 * 60 + 30, 22 * 60), tz) + timedelta(seconds=rng.randint(0, 59)),
                    serial,
                    "chat",
                    rng.choice(CHATS),
                )
            )
        for _, minutes, edit in (e for e in edits if e[0] == d):
            out.append(Stimulus(_local(day, minutes, tz), EDIT_SERIAL + d, "calendar", edit["title"], edit))
        yield sorted(s for s in out if s.at >= start)


def deliver(app, item: Stimulus):
    """Commit an email stimulus as the email channel commits a mail it read: one buffered row under the
    mail's natural key; bulk mail is marked scanned (it waits for the thalamus' sync, the RAS skips it)."""
    from storage import routing
    from storage.models import ReceptorBuffer
    from wilson.kernel.messages import StimulusCommitted

    now = app.clock.now()
    row = routing.commit_buffered(channel="email", text=item.text, dedup_key=item.key, payload=item.payload, at=now)
    if row is None:
        return None
    if item.payload.get("bulk"):
        ReceptorBuffer.update(scanned_at=now).where(ReceptorBuffer.id == row.id).execute()
    app.supervisor.tell("thalamus", StimulusCommitted("buffer", row.id, row.trace_id))
    return row


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


def create_tasks(
    now: datetime,
    tz: ZoneInfo,
    windows: list[str],
    first_day: int = 1,
    last_day: int = 14,
    seed: int = SEED,
    extra_open: int = 0,
) -> list:
    """10 open tasks due on days first_day..last_day, planned for follow-ups as the approval gate would;
    `extra_open` more due 60-90 days out (open, in every list of open tasks, but none falls due this week)."""
    from actors.deadlines import plan_task
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
    titles = [f"{verb} {thing}" for thing in LATER_THINGS for verb in LATER_VERBS]
    random.Random(seed + 3).shuffle(titles)
    for title in titles[:extra_open]:
        due, is_date = parse_when((today + timedelta(days=rng.randint(60, 90))).isoformat(), tz)
        task = Task.create(title=title, due=due, due_is_date=is_date, created_at=now)
        plan_task(task, now, windows, tz)
        tasks.append(task)
    return tasks
