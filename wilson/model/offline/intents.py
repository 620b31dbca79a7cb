"""What a person's message asks for, read by rules: each intent becomes a proposal for the gate,
a read-only answer (a list), or an honest line saying what the offline rules can do.

Nothing here claims an action: a change is a tool call the approval gate turns into a
proposal; a message no rule understands gets `HELP`, never "Noted.".
"""

from __future__ import annotations

import re
from datetime import date, datetime

from wilson.model.offline import dates, places
from wilson.model.offline.answers import NO_RE, drop_pending, spoken_decision
from wilson.model.offline.phrases import (ABILITIES_RE, ABOUT_ME_RE, ABOUT_RE, ACK_RE, ADD_RE, ALL_MEMORIES, ASKED_RE,
                                          BYE_RE, CALENDAR_RE, CAN_DO, CLOSE_RE, DONE_RES, DONE_VERBS, DROP_RE,
                                          EXPLICIT_ADD_RE, GREETING_RE, HELP, INTRO, LIST_RE, MOVE_RE, MY_REMINDERS_RE,
                                          ORDINALS, OVERDUE_RE, PAST_DONE_RE, POSSESSIVE_RE, QUESTION_RE, REMIND_RE,
                                          REMINDER_RE, RENAME_RE, REQUESTS, STOP_REMINDER_RES, THANKS_RE, TOPICISH, TRY,
                                          WEEKDAYS, Chat, Reply, normal)
from wilson.model.offline.plans import plan_calls
from wilson.model.offline.recognition import place_title, recognise_message
from wilson.model.offline.words import best, words


def reminder_cron(text: str) -> tuple[str, str] | None:
    """'remind me every first Monday: pay rent' → ('0 9 1-7 * 1', 'pay rent'); None when it isn't one."""
    found = REMINDER_RE.match(text.strip())
    if not found:
        return None
    hour, minute = int(found.group("hour") or 9), int(found.group("minute") or 0)
    half = (found.group("half") or "").lower()
    if half == "pm" and hour < 12:
        hour += 12
    if hour > 23 or minute > 59:
        return None
    unit, ordinal = found.group("unit").lower(), found.group("ord")
    if unit == "day":
        days, weekday = "*", "*"
    elif unit == "month":
        days, weekday = "1", "*"
    elif unit in WEEKDAYS:
        days = ORDINALS.get((ordinal or "").lower(), "*")
        weekday = str(WEEKDAYS.index(unit) + 1 if unit != "sunday" else 0)
    else:
        return None
    return f"{minute} {hour} {days} * {weekday}", found.group("what").strip().rstrip(".")


def _split_when(rest: str, chat: Chat) -> tuple[str, dates.Found | None]:
    """'call mom on Sunday' → ('call mom', Found('on Sunday')); the date phrase may come first or last."""
    found = dates.search(rest, chat.now, chat.tz)
    if not found:
        return rest.strip(), None
    first = found[0]
    start = rest.find(first.phrase, first.start)
    what = (rest[:start] + " " + rest[start + len(first.phrase):]) if start >= 0 else rest
    what = re.sub(r"\s+(?:on|at|by|before|until|in|the|for)\s*$", "", what.strip())
    what = re.sub(r"^(?:on|at|by|in)\s+|^to\s+", "", what.strip())
    what = re.sub(r"^\s*to\s+", "", what)
    what = re.sub(r"\s+(?:on|at|by|before)(?=\s|$)", "", what).strip(" ,.!")
    return what, first


def _title(text: str) -> str:
    text = re.sub(r"^\s*my\s+", "", text.strip(" .,!"), flags=re.I)
    return text[:1].upper() + text[1:]


def task_list(chat: Chat, span: tuple[date, date, str] | None = None) -> str:
    tasks = [t for t in chat.tasks if t.get("status", "open") == "open"]

    def due_of(task):
        due = dates.parse_moment(task.get("due"), chat.tz)
        return dates.local_date(due, chat.tz) if due else None

    if span is None:
        if not tasks:
            return "You have no open tasks."
        lines = [f"• {t.get('title')}" + (f" — due {dates.fmt_day(due_of(t))}" if due_of(t) else "")
                 for t in sorted(tasks, key=lambda t: (due_of(t) is None, due_of(t) or date.max, str(t.get("title"))))]
        return "Your open tasks:\n" + "\n".join(lines)
    first, last, name = span
    inside = [t for t in tasks if due_of(t) is not None and due_of(t) <= last]
    events = []
    for topic in chat.topics:
        starts = dates.parse_moment(topic.get("starts"), chat.tz)
        if starts is not None and first <= dates.local_date(starts, chat.tz) <= last \
                and topic.get("status") != "closed":
            events.append((dates.local_date(starts, chat.tz), f"• {topic.get('title')} starts "
                                                            f"{dates.fmt_day(dates.local_date(starts, chat.tz))}"))
    lines = [line for _, line in sorted(events)]
    for task in sorted(inside, key=lambda t: (due_of(t), str(t.get("title")))):
        due = due_of(task)
        late = " (overdue)" if due < chat.today else ""
        lines.append(f"• {task.get('title')} — due {dates.fmt_day(due)}{late}")
    undated = [t for t in tasks if due_of(t) is None]
    if not lines:
        tail = f" {len(undated)} open task(s) have no date." if undated else ""
        return f"Nothing due {name}.{tail}"
    tail = f"\n(+ {len(undated)} open task(s) without a date)" if undated else ""
    return f"Coming up {name}:\n" + "\n".join(lines) + tail


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


def _topic_named(chat: Chat, what: str) -> dict | None:
    open_topics = [t for t in chat.topics if t.get("status") != "closed"]
    wanted = words(re.sub(r"\b(topic|the)\b", " ", what, flags=re.I))
    return best(open_topics, wanted)


def _task_named(chat: Chat, what: str) -> dict | None:
    open_tasks = [t for t in chat.tasks if t.get("status", "open") == "open"]
    return best(open_tasks, words(what))


def answer(chat: Chat) -> Reply:
    """The offline answer to one message of the user's."""
    text = chat.text.strip()
    reply = (spoken_decision(chat, text) or _no_to_nothing(chat, text) or _on_it(text) or _done(chat, text)
             or _reminders(chat, text) or _recurring(text) or _remind(chat, text) or _move(chat, text)
             or _drop(chat, text) or _close(chat, text) or _rename(chat, text) or _listing(chat, text)
             or _life_event(chat, text) or _add(chat, text) or _small_talk(chat, text))
    if reply is None:
        reply = Reply(HELP, [], "no offline rule understood the message")
    if chat.first_contact:
        reply.text = f"{INTRO}\n\n{reply.text}" if reply.text else INTRO if reply.calls else f"{INTRO}\n\n{TRY}"
    return reply


APPROVE_RE = re.compile(r"^(?:approve|approved|accept)(?: (?:it|all|that|this|them|all of it))?$")


def _no_to_nothing(chat: Chat, text: str) -> Reply | None:
    """"no, forget it" or "approve" with no proposal waiting: an honest word, not a search for a task called
    "it" nor "I didn't understand"."""
    said = normal(text)
    if ((NO_RE.match(said) or APPROVE_RE.match(said))
            and not any(isinstance(p, dict) and p.get("items") for p in chat.pending)):
        return Reply("There's no proposal of mine waiting for an answer, so nothing was changed.", [],
                     "no, with nothing pending")
    return None


def _on_it(text: str) -> Reply | None:
    if is_on_it(text):  # the acknowledgement itself is recorded by code (actors/attention.py record_ack)
        return Reply("Great — I won't chase you about it again until the next reminder.", [], "acknowledgement")
    return None


def _done(chat: Chat, text: str) -> Reply | None:
    for pattern in DONE_RES:
        found = pattern.match(text)
        if found:
            task = _task_named(chat, found.group("what"))
            if task is not None:
                return Reply("", [("complete_task", {"task_id": task.get("id")})], "done with a task")
            return Reply(f"I couldn't tell which task you mean, so nothing was changed. {task_list(chat)}", [],
                         "done with an unknown task")
    text = text.replace("’", "'")  # a phone's apostrophe: "I’ve paid the rent"
    found = None if text.rstrip().endswith("?") else PAST_DONE_RE.match(text)
    task = _task_named(chat, found.group("what")) if found else None
    if task is None:
        return None
    title = str(task.get("title"))
    # the task's own verb ("paid" finishes "Pay rent", not "Check the rent"), and words that name the task and
    # little else: "I got an email from the school about the trip" is news, not the trip done; "I booked a
    # dentist appointment for Tuesday", naming no task, may be a plan to make
    if ((title.split() or [""])[0].lower() == DONE_VERBS[found.group("verb").lower()]
            and len(words(found.group("what")) - words(title)) <= 1):
        return Reply("", [("complete_task", {"task_id": task.get("id")})], "done with a task, in the past tense")
    return None


def _stop_reminder_words(text: str) -> str | None:
    """What a reminder to stop is about ("the plants" in "cancel the plants reminder"); None when not asked."""
    for pattern in STOP_REMINDER_RES:
        found = pattern.match(text)
        if found:
            return found.group("what") or found.groupdict().get("what2")
    return None


def _reminders(chat: Chat, text: str) -> Reply | None:
    """A reminder to stop, or the list of them when asked: the context holds no reminders, so both read
    `list_reminders` first; the answer comes after its result (reminders_answer)."""
    if "list_reminders" not in chat.offered:
        return None
    asked = MY_REMINDERS_RE.search(text) and QUESTION_RE.search(text) and not REMIND_RE.match(text)
    if _stop_reminder_words(text) is not None or asked:
        return Reply("", [("list_reminders", {})], "look up the reminders")
    return None


def reminders_answer(chat: Chat, reminders) -> Reply:
    """Once `list_reminders` answered: the one to stop (a proposal) when the words name it and no other, else
    the list and a question; or the list when it was asked for."""
    if not isinstance(reminders, list):
        return Reply("I couldn't read your reminders just now. Nothing was changed.", [], "reminders unreadable")
    reminders = [r for r in reminders if isinstance(r, dict) and r.get("text")]
    lines = "\n".join(f"• {r['text']} — {r.get('when')}" for r in reminders)
    what = _stop_reminder_words(chat.text)
    if what is None:
        return Reply(f"Your reminders:\n{lines}" if reminders else "You have no reminders.", [], "list the reminders")
    if not reminders:
        return Reply("You have no reminders, so there is nothing to stop.", [], "stop a reminder, with none")
    wanted = words(what)
    # every word names it ("to pay the rent" is not "pay the gas bill"), one aside in a longer phrase;
    # "the reminder" names the only one there is
    named = [r for r in reminders if not wanted or _covers(wanted, words(r["text"]))]
    if len(named) == 1 and (wanted or len(reminders) == 1):
        return Reply("", [("cancel_reminder", {"reminder_id": named[0].get("id")})], "stop a reminder")
    if not wanted:
        return Reply(f"Which reminder should I stop? Nothing was changed. Your reminders:\n{lines}", [],
                     "stop which reminder?")
    if not named:
        return Reply(f"I couldn't find a reminder about “{what}”, so nothing was changed. Your reminders:\n{lines}",
                     [], "stop an unknown reminder")
    several = "\n".join(f"• {r['text']} — {r.get('when')}" for r in named)
    return Reply(f"Which one should I stop? Nothing was changed.\n{several}", [], "stop one of several reminders")


def _covers(wanted: set[str], text: set[str]) -> bool:
    missing = len(wanted - text)
    return missing == 0 or (len(wanted) >= 3 and missing == 1)


def _recurring(text: str) -> Reply | None:
    found = reminder_cron(text)
    if found is None:
        return None
    return Reply("", [("create_reminder", {"text": found[1], "cron": found[0]})], "recurring reminder")


def _remind(chat: Chat, text: str) -> Reply | None:
    about = ABOUT_RE.match(text)
    if about:
        task = _task_named(chat, about.group("what"))
        found = dates.search(about.group("when"), chat.now, chat.tz)
        at = dates.at_moment(found[0] if found else None, chat.now, chat.tz)
        if task is not None and at is not None:
            return Reply("", [("snooze_task", {"task_id": task.get("id"), "until": at.isoformat()})],
                         f"snooze a task ({found[0].stated(chat.tz)})")
    found = REMIND_RE.match(text)
    if not found or re.match(r"(?:every|each)\b", found.group("rest"), re.I):
        return None
    what, when = _split_when(found.group("rest"), chat)
    at = dates.at_moment(when, chat.now, chat.tz)
    if at is None or not what:
        return Reply("When should I remind you? Say e.g. “remind me tomorrow at 18:00 to call Mum”. "
                     "Nothing was set.", [], "reminder without a time to come")
    return Reply("", [("remind", {"text": what, "at": at.isoformat()})], f"one-off reminder ({when.stated(chat.tz)})")


def _move(chat: Chat, text: str) -> Reply | None:
    found = MOVE_RE.match(text)
    if not found:
        return None
    when = dates.search(found.group("when"), chat.now, chat.tz)
    task = _task_named(chat, found.group("what"))
    if task is None:
        return Reply(f"I couldn't tell which task you mean, so nothing was changed. {task_list(chat)}", [],
                     "move an unknown task")
    if not when:
        return Reply(f"To when should “{task.get('title')}” move? Say e.g. “to next Friday”. "
                     "Nothing was changed.",
                     [], "move without a date")
    verb = text.strip().split()[0].lower()
    if verb in ("snooze", "pause", "postpone") and "snooze_task" in chat.offered:
        at = dates.at_moment(when[0], chat.now, chat.tz)
        if at is not None:
            return Reply("", [("snooze_task", {"task_id": task.get("id"), "until": at.isoformat()})],
                         f"snooze a task ({when[0].stated(chat.tz)})")
    due = when[0].value
    # notes would replace the task's own: how the date was read is the proposal's reason
    return Reply("", [("update_task", {"task_id": task.get("id"), "due": dates.iso(due)})],
                 f"move a task ({when[0].stated(chat.tz)})")


def _drop(chat: Chat, text: str) -> Reply | None:
    found = DROP_RE.match(text)
    if not found:
        return None
    what = found.group("what") or found.group("what2")
    task = _task_named(chat, what)
    topic = _topic_named(chat, what)
    # a plan still proposed that the words name better than an open task or topic: no to it
    matched = max((len(words(what) & words(str(t.get("title")))) for t in (task, topic) if t is not None), default=0)
    pending = drop_pending(chat, what, beat=matched)
    if pending is not None:
        return pending
    if topic is not None and (TOPICISH.search(what) or task is None):
        return Reply("", [("close_topic", {"topic_id": topic.get("id")})], "drop a topic")
    if task is not None:
        return Reply("", [("cancel_task", {"task_id": task.get("id")})], "drop a task")
    return Reply(f"I couldn't tell which task or topic you mean, so nothing was changed. {task_list(chat)}", [],
                 "drop something unknown")


def _close(chat: Chat, text: str) -> Reply | None:
    found = CLOSE_RE.match(text)
    if not found:
        return None
    what = found.group("what") or found.group("what2")
    topic = _topic_named(chat, what)
    if topic is None:
        return None
    return Reply("", [("close_topic", {"topic_id": topic.get("id")})], "close a topic")


def _rename(chat: Chat, text: str) -> Reply | None:
    found = RENAME_RE.match(text)
    if not found:
        return None
    topic = _topic_named(chat, found.group("old"))
    if topic is None:
        return None
    return Reply("", [("rename_topic", {"topic_id": topic.get("id"), "title": found.group("new").strip()})],
                 "rename a topic")


def _listing(chat: Chat, text: str) -> Reply | None:
    if OVERDUE_RE.search(text) and QUESTION_RE.search(text):  # "pay the overdue invoice by Friday" is a request
        return Reply(overdue_list(chat), [], "list what's overdue")
    asked = LIST_RE.search(text) or (ASKED_RE.search(text) and QUESTION_RE.search(text))
    if not asked or (EXPLICIT_ADD_RE.match(text) and "?" not in text):
        return None
    said = text.lower()
    if CALENDAR_RE.search(said) and "calendar_lookup" in chat.offered:
        # the calendar itself is read with the tool; the answer comes after its result (calendar_answer)
        first, last, name = dates.week_range(said, chat.now, chat.tz)
        return Reply("", [("calendar_lookup", {"start": first.isoformat(), "end": last.isoformat()})],
                     f"look in the calendar ({name})")
    if re.search(r"\b(today|tonight|tomorrow|week|weekend|month)\b", said) or "plate" in said or "coming" in said:
        return Reply(task_list(chat, dates.week_range(said, chat.now, chat.tz)) + _waiting(chat), [],
                     "list what's coming")
    return Reply(task_list(chat) + _waiting(chat), [], "list open tasks")


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
    name = dates.week_range(chat.text.lower(), chat.now, chat.tz)[2]
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
    head = f"In your calendar {name}:\n" + "\n".join(lines) if lines else f"Nothing in your calendar {name}."
    return f"{head}\n\n{task_list(chat, (start, end, name))}"


def _small_talk(chat: Chat, text: str) -> Reply | None:
    """A greeting, thanks or goodbye gets a word back, not "I didn't understand that"."""
    if GREETING_RE.match(text):
        return Reply("" if chat.first_contact else f"Hi! What can I do for you? {TRY}", [], "a greeting")
    if THANKS_RE.match(text):
        return Reply("You're welcome!", [], "thanks")
    if ACK_RE.match(text):
        waiting = next((p for p in chat.pending if isinstance(p, dict) and p.get("items")), None)
        if waiting is not None:  # "great" is no answer to a proposal, but the user may think it is
            return Reply(f"Proposal {waiting.get('id')} is still waiting for your answer: say “yes” to approve "
                         f"it or “no” to drop it.", [], "an acknowledgement with a proposal waiting")
        return Reply("👍", [], "an acknowledgement")
    if ABILITIES_RE.match(text):
        said = f"I follow simple requests: {REQUESTS}" if chat.first_contact else CAN_DO  # INTRO says "offline"
        return Reply(said, [], "what the offline rules can do")
    if BYE_RE.match(text):
        return Reply("Bye for now! I'll keep an eye on things.", [], "a goodbye")
    if ABOUT_ME_RE.match(text):
        return Reply(_what_i_know(chat), [], "what Wilson has learned")
    return None


def _what_i_know(chat: Chat) -> str:
    """What the memory learned about the user (not the episodes it learned it from), as recalled for them."""
    learned = [m.get("text") for m in chat.memories
               if isinstance(m, dict) and m.get("kind") in LEARNED and m.get("text")][:5]
    if not learned:
        return "Nothing yet: I learn from what you tell me and from how you answer my proposals."
    return "Some of what I've learned about you:\n" + "\n".join(f"• {text}" for text in learned) + f"\n{ALL_MEMORIES}"


LEARNED = ("belief", "principle", "interpretation")


def _life_event(chat: Chat, text: str) -> Reply | None:
    matched = None if EXPLICIT_ADD_RE.match(text) else recognise_message(chat.playbook, text)
    if not matched:
        return None
    found = [f for f in dates.search(text, chat.now, chat.tz)]
    if not found:
        return None
    event, trigger = matched
    place = places.find_place(None, text)
    title = place_title(event, text, trigger, place)
    todo = ADD_RE.match(text)
    if todo and "{place}" not in event.title:
        # "I need to file my taxes by the 25th": the topic is what the user has to do
        what, _ = _split_when(todo.group("what"), chat)
        if words(what):
            title = _title(POSSESSIVE_RE.sub("", what))
    start = found[0]
    start_day = dates.local_date(start.value, chat.tz)
    notes = f"From your message: {text}"  # how the date was read is the proposal's reason, not the topic's notes
    calls = plan_calls(event, title, dates.iso(start.value), None, start_day, chat.today, notes, chat.topics,
                       chat.tasks)
    if not calls:
        return None
    return Reply("", calls,
                 f"“{trigger.group(0)}” in the message (playbook: {event.name}), {start.stated(chat.tz)}")


def _add(chat: Chat, text: str) -> Reply | None:
    found = ADD_RE.match(text)
    if not found:
        return None
    what, when = _split_when(found.group("what"), chat)
    if not words(what):
        return None
    args = {"title": _title(what)}
    rule = "add a task"
    if when is not None:
        args["due"] = dates.iso(when.value)
        rule += f" ({when.stated(chat.tz)})"
    return Reply("", [("create_task", args)], rule)

ON_IT_RE = re.compile(r"^(?:(?:ok|okay|sure|yes|yep|got it|thanks)\s+)*(?:i'?m\s+|i\s+am\s+)?"
                      r"(?:on\s+it|working\s+on\s+it|will\s+do|doing\s+it)(?:\s+(?:now|thanks))*$")


def is_on_it(text: str | None) -> bool:
    """The user's whole message says they are dealing with it ("on it", "working on it", "will do")."""
    if not text or len(text) > 60:
        return False
    words = " ".join(re.sub(r"[^\w'\s]", " ", text.lower().replace("’", "'")).split())
    return ON_IT_RE.match(words) is not None
