"""What the offline rules answer with a look, changing nothing: what is coming up or overdue (and the plans
still waiting for an answer), what is open in one topic, the calendar's days once `calendar_lookup` read
them, the reminders (or the one to stop, once `list_reminders` read them), and what the memory has learned
about the user.

wilson/model/offline/intents.py asks these when a message is a question; the calendar's and the reminders'
answers come in the round after their tool's result (wilson/model/offline/provider.py).

Size: one module because every look shares the reading of a span of days, a topic named and the lines a task is
listed with; split, each part would import the others' phrases and formatting.
"""

from __future__ import annotations

import re
from datetime import date, datetime

from wilson.model.offline import asked_about, dates, finished, when_event
from wilson.model.offline.answers import proposed_reminder, reminders_proposed
from wilson.model.offline.plan_asked import plan_asked
from wilson.model.offline.phrases import (
    ALL_MEMORIES,
    ASKED_RE,
    CALENDAR_RE,
    EXPLICIT_ADD_RE,
    LIST_RE,
    MY_REMINDERS_RE,
    OVERDUE_RE,
    QUESTION_RE,
    REMIND_RE,
    STOP_REMINDER_RES,
    Chat,
    Reply,
)
from wilson.model.offline.words import covers, words
from wilson.kernel.lazy_regex import lazy_regex


def task_list(chat: Chat, span: tuple[date, date, str] | None = None, head: str = "Coming up") -> str:
    tasks = [t for t in chat.tasks if t.get("status", "open") == "open"]

    def due_of(task):
        due = dates.parse_moment(task.get("due"), chat.tz)
        return dates.local_date(due, chat.tz) if due else None

    if span is None:
        # the context's few due soon, when the whole list is a tool away: said as some, not all
        partial = "list_tasks" in chat.offered and not chat.whole_list
        if not tasks:
            return "Nothing is due soon." if partial else "You have no open tasks."
        return ("Among your open tasks:\n" if partial else "Your open tasks:\n") + _dated_lines(chat, tasks)
    first, last, name = span
    inside = [t for t in tasks if due_of(t) is not None and due_of(t) <= last]
    events = []
    for topic in chat.topics:
        starts = dates.parse_moment(topic.get("starts"), chat.tz)
        if (
            starts is not None
            and first <= dates.local_date(starts, chat.tz) <= last
            and topic.get("status") != "closed"
        ):
            events.append(
                (
                    dates.local_date(starts, chat.tz),
                    f"• {topic.get('title')} starts {dates.fmt_day(dates.local_date(starts, chat.tz))}",
                )
            )
    lines = [line for _, line in sorted(events)]
    for task in sorted(inside, key=lambda t: (due_of(t), str(t.get("title")))):
        due = due_of(task)
        late = " (overdue)" if due < chat.today else ""
        lines.append(f"• {task.get('title')} — due {dates.fmt_day(due)}{late}")
    undated = [t for t in tasks if due_of(t) is None]
    some = f"{len(undated)} open task{'s' if len(undated) > 1 else ''}"
    if not lines:
        tail = f" {some} {'have' if len(undated) > 1 else 'has'} no date." if undated else ""
        return f"Nothing due {name}.{tail}"
    tail = f"\n(+ {some} without a date)" if undated else ""
    return f"{head} {name}:\n" + "\n".join(lines) + tail


def _dated_lines(chat: Chat, tasks: list[dict]) -> str:
    """One line per task, soonest due first and the undated last: "• Book flights — due Tue 9 Feb"."""

    def due_of(task):
        due = dates.parse_moment(task.get("due"), chat.tz)
        return dates.local_date(due, chat.tz) if due else None

    ordered = sorted(tasks, key=lambda t: (due_of(t) is None, due_of(t) or date.max, str(t.get("title"))))
    return "\n".join(
        f"• {t.get('title')}" + (f" — due {dates.fmt_day(due_of(t))}" if due_of(t) else "") for t in ordered
    )


CONTAINER_RE = lazy_regex(r"\b(?:topic|list|trip|plan|project)\b", re.I)  # "the Japan trip" names "Trip to Japan"


def topics_named(chat: Chat, phrase: str) -> list[dict]:
    """The open topics whose titles hold every word of `phrase` (leaving out "topic", "trip" and the like)."""
    wanted = words(CONTAINER_RE.sub(" ", phrase))
    return [
        t for t in chat.topics if t.get("status") != "closed" and wanted and not wanted - words(str(t.get("title")))
    ]


def overdue_list(chat: Chat) -> str:
    """Open tasks whose day has passed, or whose hour has (a call due at 09:00, asked about at 18:00)."""
    late = []
    for task in chat.tasks:
        due = dates.parse_moment(task.get("due"), chat.tz)
        if task.get("status", "open") != "open" or due is None:
            continue
        day = dates.local_date(due, chat.tz)
        if day < chat.today:
            late.append((day, f"{task.get('title')} — was due {dates.fmt_day(day)}"))
        elif isinstance(due, datetime) and day == chat.today and due <= chat.now:
            late.append((day, f"{task.get('title')} — was due today at {due.astimezone(chat.tz):%H:%M}"))
    if not late:
        return "Nothing is overdue."
    return "Overdue:\n" + "\n".join(f"• {line}" for _, line in sorted(late))


def _stop_reminder_words(text: str) -> str | None:
    """What a reminder to stop is about ("the plants" in "cancel the plants reminder"); None when not asked."""
    for pattern in STOP_REMINDER_RES:
        found = pattern.match(text)
        if found:
            return found.group("what") or found.groupdict().get("what2")
    return None


def reminders(chat: Chat, text: str) -> Reply | None:
    """A reminder to stop, or the list of them when asked: the context holds no reminders, so both read
    `list_reminders` first; the answer comes after its result (reminders_answer)."""
    if "list_reminders" not in chat.offered:
        return None
    asked = MY_REMINDERS_RE.search(text) and QUESTION_RE.search(text) and not REMIND_RE.match(text)
    if _stop_reminder_words(text) is not None or asked:
        return Reply("", [("list_reminders", {})], "look up the reminders")
    return None


def reminders_answer(chat: Chat, listed) -> Reply:
    """Once `list_reminders` answered: the one to stop (a proposal) when the words name it and no other, or no
    to the one a pending proposal would set when they name none that is set; else the list and a question; or
    the list when it was asked for."""
    if not isinstance(listed, list):
        return Reply("I couldn't read your reminders just now. Nothing was changed.", [], "reminders unreadable")
    reminders = [r for r in listed if isinstance(r, dict) and r.get("text")]
    lines = "\n".join(f"• {r['text']} — {r.get('when')}" for r in reminders)
    what = _stop_reminder_words(chat.text)
    if what is None:  # and those a proposal would set, which the user may take for set already
        waiting = "\n".join(f"• Proposal {p.get('id')}: {i.get('description')}" for p, i in reminders_proposed(chat))
        said = f"Your reminders:\n{lines}" if reminders else "You have no reminders set."
        return Reply(said + (f"\n\nWaiting for your answer:\n{waiting}" if waiting else ""), [], "list the reminders")
    wanted = words(what)
    # every word names it ("to pay the rent" is not "pay the gas bill"), one aside in a longer phrase;
    # "the reminder" names the only one there is
    named = [r for r in reminders if not wanted or covers(wanted, words(r["text"]))]
    if len(named) == 1 and (wanted or len(reminders) == 1):
        return Reply("", [("cancel_reminder", {"reminder_id": named[0].get("id")})], "stop a reminder")
    # no reminder that is set is the one meant: it may be one a proposal would set, which the user sees
    # as theirs already ("You have no reminders" would be wrong from where they stand)
    proposed = proposed_reminder(chat, what) if not named else None
    if proposed is not None:
        return proposed
    if not reminders:
        return Reply("You have no reminders, so there is nothing to stop.", [], "stop a reminder, with none")
    if not wanted:
        return Reply(
            f"Which reminder should I stop? Nothing was changed. Your reminders:\n{lines}", [], "stop which reminder?"
        )
    if not named:
        return Reply(
            f"I couldn't find a reminder about “{what}”, so nothing was changed. Your reminders:\n{lines}",
            [],
            "stop an unknown reminder",
        )
    several = "\n".join(f"• {r['text']} — {r.get('when')}" for r in named)
    return Reply(f"Which one should I stop? Nothing was changed.\n{several}", [], "stop one of several reminders")


def listing(chat: Chat, text: str) -> Reply | None:
    if OVERDUE_RE.search(text) and QUESTION_RE.search(text):  # "pay the overdue invoice by Friday" is a request
        return _whole_list(chat) or Reply(overdue_list(chat), [], "list what's overdue")
    said = text.lower()
    # "what's on today?" asks about the day, its events as well as what is due; "what's on my plate?" and
    # "what's due?" ask about the list
    agendaish = AGENDA_RE.search(said) and QUESTION_RE.search(text) and not TASKS_ONLY_RE.search(said)
    asked = LIST_RE.search(text) or (ASKED_RE.search(text) and QUESTION_RE.search(text))
    if not (asked or agendaish) or (EXPLICIT_ADD_RE.match(text) and "?" not in text):
        return None  # before the date parser: most messages are no question about a day, and it is slow
    if plan_asked(text) is not None:
        return None  # "Operation am 24. Februar. Was muss ich vorher alles regeln?": a plan asked for, not the list
    named = _days_named(chat, text)  # read once, here: week_range is handed what it found
    day = named is None or bool(named)
    agenda = agendaish and day
    if not (asked or agenda):
        return None  # "what's happening with Anna?" names no day
    if (CALENDAR_RE.search(said) or agenda) and "calendar_lookup" in chat.offered:
        # the calendar itself is read with the tool; the answer comes after its result (calendar_answer)
        first, last, name = dates.week_range(said, chat.now, chat.tz, named)
        whole = _whole_list(chat)  # the answer names what is due in the span as well
        return Reply(
            "",
            [("calendar_lookup", {"start": first.isoformat(), "end": last.isoformat()})]
            + (whole.calls if whole and "list_tasks" in chat.offered else []),
            f"look in the calendar ({name})",
        )
    whole = _whole_list(chat)
    if whole is not None:
        return whole
    if day or "plate" in said or "coming" in said:
        return Reply(
            task_list(chat, dates.week_range(said, chat.now, chat.tz, named)) + _waiting(chat), [], "list what's coming"
        )
    return Reply(task_list(chat) + _waiting(chat), [], "list open tasks")


LIST_TASKS_LIMIT = 100  # list_tasks answers at most this many (actors/tools/tasks.py)


def after_reads(chat: Chat, called: list[str], args: dict, results: list) -> Reply | None:
    """A look's answer once its tools answered (`results`: their JSON, in call order; `args`: the first
    call's): the reminders, the whole list, or the calendar with the list beside it. None for other calls."""
    if called == ["list_reminders"]:
        return reminders_answer(chat, results[0])
    if called == ["list_topics"]:
        return asked_about.topic_lines_after(called, results)
    if called == ["list_tasks"] and args.get("status") == "done":
        if not isinstance(results[0], list):
            return Reply("I couldn't read your list just now. Nothing was changed.", [], "tasks unreadable")
        return finished.answer(chat, results[0])
    if "list_tasks" in called:
        listed = results[called.index("list_tasks")]
        if isinstance(listed, list):
            chat.tasks, chat.whole_list = [t for t in listed if isinstance(t, dict)], True
        elif called == ["list_tasks"]:  # beside the calendar, the context's few still answer
            return Reply("I couldn't read your list just now. Nothing was changed.", [], "tasks unreadable")
    if called == ["list_tasks"]:
        reply = topic(chat, chat.text) or listing(chat, chat.text) or Reply(task_list(chat), [], "list open tasks")
        if len(chat.tasks) >= LIST_TASKS_LIMIT:
            reply.text += f"\n(I read your first {LIST_TASKS_LIMIT} open tasks; there may be more.)"
        return reply
    if called[:1] != ["calendar_lookup"]:
        return None
    start, end = (dates.parse_moment(args.get(key), chat.tz) for key in ("start", "end"))
    found = results[0].get("events") if isinstance(results[0], dict) and "error" not in results[0] else None
    if start is None or end is None or not isinstance(found, list):
        return Reply("I couldn't read your calendar just now. Nothing was changed.", [], "calendar unreadable")
    asked = WHEN_TOPIC_RE.match(chat.text) or when_event.NEXT_ASKED_RE.match(chat.text)
    if asked and when_event.asked(chat, dates.local_date(start, chat.tz), dates.local_date(end, chat.tz)):
        return when_event.answer(chat, asked.group("topic"), found)
    return Reply(
        calendar_answer(chat, dates.local_date(start, chat.tz), dates.local_date(end, chat.tz), found),
        [],
        "closing words after the tool results",
    )


def _days_named(chat: Chat, text: str) -> list | None:
    """The dates a question about a day names ("on Friday", "this evening"); None when a word week_range
    reads itself names the span ("today", "next week")."""
    if re.search(r"\b(today|tonight|tomorrow|week|weekend|month)\b", text.lower()) or dates.GERMAN_SPAN_RE.search(
        text.lower()
    ):
        return None
    return dates.search(text, chat.now, chat.tz, parts=True)


def _whole_list(chat: Chat) -> Reply | None:
    """The context holds the tasks due soon (at most 15), not an undated one nor one due in March: a question
    about the list reads it whole first, and is answered after the result (provider._after_tools asks again
    with `whole_list` set). None once the list is whole, or when no tool can read it (a greeting's run, offered
    no read tool, hands a call to list_tasks on to one that is)."""
    if chat.whole_list or not {"list_tasks", "escalate"} & set(chat.offered):
        return None
    return Reply("", [("list_tasks", {"status": "open"})], "read the whole list")


AGENDA_RE = lazy_regex(
    r"\b(what'?s on|what is on|what do i have|what have i got|what'?s happening|anything on|"
    r"schedule|agenda|am i (?:free|busy|around)|(?:any )?plans (?:on|for|this|next|tomorrow|today)|"
    r"anything planned|my (?:next|first) (?:appointment|meeting|event)s?|"
    # "is Thursday afternoon busy for me?", "how busy is my friday?", "how does next week look?"
    r"is\s+(?:my\s+)?(?:today|tomorrow|tonight|(?:next\s+|this\s+)?(?:mon|tues|wednes|thurs|fri|satur|sun)day|"
    r"the\s+\d{1,2}(?:st|nd|rd|th)?|the\s+weekend|next\s+week|this\s+week)(?:\s+(?:morning|afternoon|evening|night))?"
    r"\s+(?:busy|free|full|packed|booked(?:\s+up)?)|how\s+(?:busy|full|packed)\s+is|"
    r"how\s+does\s+(?:my\s+)?[\w ]{2,25}?\s+look)\b"
)
TASKS_ONLY_RE = lazy_regex(r"\b(plate|due|tasks?|to-?dos?|to do|need to do)\b")


TOPIC_LOOK_RE = lazy_regex(
    r"^\s*(?:(?:what'?s|what is|what do i have|what have i got|(?:is there\s+)?anything|"
    r"what (?:else )?do (?:i|we) (?:still )?(?:need|have) to do|what'?s (?:still )?(?:to do|open)|"
    r"what'?s the plan|what is the plan|where are we|how far (?:am i|are we))\s+(?:left\s+)?"
    r"(?:in|on|for|with)|(?:show(?: me)?|list)(?:\s+(?:what'?s\s+)?(?:left\s+)?(?:in|on|for))?)"
    r"\s+(?:(?:the|my|our)\s+)?(?P<topic>.+?)(?:\s+(?:yet|already|so far))?\s*\??\s*$",
    re.I,
)
# "when is my trip?", "how many days until Japan?", "when do we leave for Lisbon?"
WHEN_TOPIC_RE = lazy_regex(
    r"^\s*(?:when(?:'?s|\s+is|\s+does|\s+do\s+(?:i|we)\s+(?:leave|go|fly)\s+(?:for|to))|"
    r"how\s+(?:many\s+days|long)\s+(?:until|till|til|to|before))\s+(?:(?:the|my|our)\s+)?"
    r"(?P<topic>.+?)(?:\s+(?:start|starts|begin|begins|again|(?P<end>end|ends|finish|finishes)))?"
    r"\s*\??\s*$",
    re.I,
)


def topic(chat: Chat, text: str) -> Reply | None:
    """ "What's in the Japan topic?": its open tasks by date, when an open topic is named by every word."""
    found = TOPIC_LOOK_RE.match(text)
    if not found:
        return None
    named = topics_named(chat, found.group("topic"))
    if len(named) != 1:
        return _which(named, "look at which topic?")
    title = named[0].get("title")
    whole = _whole_list(chat)  # the context holds at most 15 tasks: a trip may have more
    if whole is not None:
        return whole
    tasks = [t for t in chat.tasks if t.get("topic") == title and t.get("status", "open") == "open"]
    if not tasks:
        return Reply(f"Nothing is open in {title}.", [], "look at a topic")
    return Reply(f"Open in {title}:\n" + _dated_lines(chat, tasks), [], "look at a topic")


def topic_unknown(chat: Chat, text: str) -> Reply | None:
    """ "Anything left for the ski trip?", no open topic named so: the tasks the words name, else all open ones."""
    phrase = (found := TOPIC_LOOK_RE.match(text)) and words(found.group("topic")) and found.group("topic").strip(" ?.!")
    named = [t for t in chat.tasks if t.get("status", "open") == "open" and words(phrase) & words(str(t.get("title")))]
    if phrase and named:
        return Reply(f"About “{phrase}”:\n" + _dated_lines(chat, named), [], "look at tasks named by an unknown topic")
    return (
        Reply(f"I don't have a topic called “{phrase}”. {task_list(chat)}", [], "a missing topic") if phrase else None
    )


def _which(named: list[dict], rule: str) -> Reply | None:
    """Two or more topics share the words: which one is asked, not guessed (None when none has them)."""
    if not named:
        return None
    return Reply("Which one? " + " or ".join(f"“{t.get('title')}”" for t in named[:3]) + ".", [], rule)


def when_topic(chat: Chat, text: str) -> Reply | None:
    """ "When is my trip?", "when does the trip end?": the day an open topic starts (or ends), and how far off it
    is. The words must name the topic ("my trip" alone: the one open topic with "trip" in its title), so "when
    is the trip insurance due?" is left to the rules about tasks."""
    found = WHEN_TOPIC_RE.match(text)
    if not found or re.search(r"\bdue\b", text, re.I):
        return None
    phrase = found.group("topic")
    named = topics_named(chat, phrase)
    container = CONTAINER_RE.findall(phrase)
    if not named and container and not words(CONTAINER_RE.sub(" ", phrase)):
        named = [
            t
            for t in chat.topics
            if t.get("status") != "closed" and words(" ".join(container)) & words(str(t.get("title")))
        ]
    if not named and not found.group("end"):
        return when_event.lookup(chat, phrase)  # "when is the dentist?": an event of the calendar, maybe
    if len(named) != 1:
        return _which(named, "when is which topic?")
    title = named[0].get("title")
    starts, ends = (dates.parse_moment(named[0].get(key), chat.tz) for key in ("starts", "ends"))
    first = dates.local_date(starts, chat.tz) if starts is not None else None
    last = dates.local_date(ends, chat.tz) if ends is not None else None
    if found.group("end"):
        if last is None:
            return Reply(
                f"{title} has no end date yet" + (f"; it starts {dates.fmt_day(first)}." if first else "."),
                [],
                "when does a topic end",
            )
        return Reply(
            f"{title} {'ended' if last < chat.today else 'ends'} {dates.fmt_day(last)}{_how_far(last, chat.today)}.",
            [],
            "when does a topic end",
        )
    if first is None:
        return Reply(
            f"{title} has no start date yet" + (f"; it ends {dates.fmt_day(last)}." if last else "."),
            [],
            "when is a topic",
        )
    if first < chat.today:
        under_way = last is not None and last >= chat.today
        return Reply(
            f"{title} began on {dates.fmt_day(first)}"
            + (f" and runs until {dates.fmt_day(last)}." if under_way else "."),
            [],
            "when is a topic",
        )
    return Reply(
        f"{title} starts {dates.fmt_day(first)}{_how_far(first, chat.today)}"
        + (f", until {dates.fmt_day(last)}." if last is not None and last > first else "."),
        [],
        "when is a topic",
    )


def _how_far(day: date, today: date) -> str:
    days = (day - today).days
    return "" if days < 0 else ", " + {0: "today", 1: "tomorrow"}.get(days, f"in {days} days")


def _waiting(chat: Chat) -> str:
    """What still waits for the user's answer: a plan not approved yet is on their plate too."""
    lines = []
    for proposal in chat.pending[:3]:
        items = [i for i in proposal.get("items") or [] if isinstance(i, dict)] if isinstance(proposal, dict) else []
        if items:
            more = f" (and {len(items) - 1} more)" if len(items) > 1 else ""
            lines.append(f"• Proposal {proposal.get('id')}: {items[0].get('description')}{more}")
    return "\n\nWaiting for your answer:\n" + "\n".join(lines) if lines else ""


def calendar_answer(chat: Chat, start: date, end: date, events: list) -> str:
    """The answer to a calendar question once `calendar_lookup` read [start, end]: the events, then what is due."""
    name = dates.week_range(chat.text.lower(), chat.now, chat.tz, _days_named(chat, chat.text))[2]
    lines = []
    for event in events:
        begins = dates.parse_moment(event.get("start"), chat.tz) if isinstance(event, dict) else None
        if begins is None:
            continue
        day = dates.local_date(begins, chat.tz)
        timed = isinstance(begins, datetime) and not event.get("all_day")
        at = f" {begins.astimezone(chat.tz):%H:%M}" if timed else ""
        when = f"{dates.fmt_day(day)}{at}" if day >= start else f"since {dates.fmt_day(day)}"
        place = f", {event['location']}" if event.get("location") else ""
        lines.append(f"• {event.get('title') or 'An event'} — {when}{place}")
    head = f"In your calendar {name}:\n" + "\n".join(lines) if lines else f"No events in your calendar {name}."
    # beside the calendar, the user's own plans and tasks are named as theirs, not as more of the calendar
    return f"{head}\n\n{task_list(chat, (start, end, name), head='On your list')}{_waiting(chat)}"


def what_i_know(chat: Chat) -> str:
    """What the memory learned about the user (not the episodes it learned it from), as recalled for them."""
    learned = [
        m.get("text") for m in chat.memories if isinstance(m, dict) and m.get("kind") in LEARNED and m.get("text")
    ][:5]
    if not learned:
        return "Nothing yet: I learn from what you tell me and from how you answer my proposals."
    lines = dict.fromkeys(to_you(text) for text in learned)  # a belief and the interpretation it grew from: once
    return "Some of what I've learned about you:\n" + "\n".join(f"• {line}" for line in lines) + f"\n{ALL_MEMORIES}"


LEARNED = ("belief", "principle", "interpretation")
_USER_RE = lazy_regex(
    r"^(?:the\s+)?user\s+(?P<adverb>(?:always|never|often|usually|sometimes|rarely|seldom|mostly|"
    r"also|still|only|typically|generally|)\s*)(?P<verb>[a-z']+)\b",
    re.I,
)
_IRREGULAR = {
    "is": "are",
    "was": "were",
    "has": "have",
    "does": "do",
    "doesn't": "don't",
    "isn't": "aren't",
    "hasn't": "haven't",
    "wasn't": "weren't",
}
_AS_IS = {
    "did",
    "didn't",
    "had",
    "said",
    "can",
    "can't",
    "cannot",
    "will",
    "won't",
    "would",
    "should",
    "must",
    "might",
    "could",
    "may",
    "went",
    "made",
    "took",
    "got",
    "prefers",
}


def to_you(text: str) -> str:
    """A memory about "the user", said to them: "user lets early reminders pass" → "You let early reminders
    pass", "user always books late" → "You always book late"; anything else (no verb after "user": "user id
    42 …") is left as it is."""
    found = _USER_RE.match(text)
    if found is None:
        return text
    verb, lower = found.group("verb"), found.group("verb").lower()
    if lower in _IRREGULAR:
        verb = _IRREGULAR[lower]
    elif lower == "prefers" or (lower.endswith("s") and not lower.endswith(("ss", "us", "is"))):
        if re.search(r"(?:ss|sh|ch|x|zz|o)es$", lower):
            verb = verb[:-2]  # "goes", "watches", "buzzes"
        elif re.search(r"[^aeiou]ies$", lower):
            verb = verb[:-3] + "y"  # "tries"
        else:
            verb = verb[:-1]  # "lets", "books", "prefers"
    elif not (lower.endswith("ed") or lower in _AS_IS):
        return text  # not a verb of the user's
    adverb = found.group("adverb")
    return f"You {adverb}{verb}{text[found.end() :]}"
