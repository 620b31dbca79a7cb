"""What a person's message asks for, read by rules: each intent becomes a proposal for the gate,
a read-only answer (a list: wilson/model/offline/looks.py), or an honest line saying what the offline rules
can do.

Nothing here claims an action: a change is a tool call the approval gate turns into a
proposal; a message no rule understands gets `HELP`, never "Noted.".

Size: one chain of rules tried in order (answer()), each a few lines over the phrases of phrases.py; the
looks, plans, bills and dates live in their own modules, and what is left here is the order and the small
requests (add, remind, move, drop, done, close, rename) that share the reading of a task's name and a date.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date, datetime, timedelta

from wilson.model.offline import (
    acts,
    anchored,
    asked_about,
    dates,
    deeds_in_passing,
    done_in_words,
    due_by,
    finished,
    german_changes,
    going,
    looks,
    missed,
    moved_event,
    payments,
    places,
    questions,
    referents,
    redated,
    repeats,
    run_on,
    sentences,
    spanish_done,
    when_event,
)
from wilson.model.offline.edit_distance import distance
from wilson.model.offline.answers import (
    CHANGES_AFTER_YES_RE,
    NO_RE,
    YES_RE,
    YES_THEN_SAID_RE,
    done_pending,
    only_agreeing,
    drop_pending,
    planned_topic,
    spoken_decision,
)
from wilson.model.offline.phrases import (
    ABILITIES_RE,
    ABOUT_ME_RE,
    ABOUT_RE,
    ACK_RE,
    ADD_RE,
    BYE_RE,
    CAN_DO,
    CLOCK_RE,
    CLOSE_RE,
    DONE_RES,
    DONE_VERBS,
    DROP_RE,
    EXPLICIT_ADD_RE,
    GREETING_RE,
    HELP,
    INTRO,
    MOVE_RE,
    PARTICIPLE_DONE_RE,
    PAST_DONE_RE,
    POSSESSIVE_RE,
    QUIET_HINT,
    REMIND_RE,
    RENAME_RE,
    REQUESTS,
    SECOND_REQUEST_RE,
    COURTESY_RE,
    THANKS_RE,
    NOTE_RE,
    PLEASED_OR_THANKS,
    PLEASED_PHRASE_RE,
    THANK_WORDS,
    TOPICISH,
    TRY,
    UNWELL_RE,
    WHEREABOUTS_RE,
    Chat,
    Reply,
    normal,
    request_of,
)
from wilson.model.offline.follow_ups import NO_BECAUSE_RE, follow_up
from wilson.model.offline.plan_asked import plan_asked
from wilson.model.offline.plans import plan_calls
from wilson.model.offline.short_answers import short_answer
from wilson.model.offline.validity import valid_until
from wilson.model.offline.recognition import DATE_WORDS, place_title, recognise_message
from wilson.model.offline.words import best, covers, words
from wilson.kernel.lazy_regex import lazy_regex


def _deadline(when: dates.Found, chat: Chat) -> object:
    """A task's due: "by tomorrow evening" is due tomorrow (a part of the day is no hour said); "by 5pm" keeps it."""
    if isinstance(when.value, datetime) and not re.search(r"\d|noon|midday|midnight|mittag", when.phrase, re.I):
        return dates.local_date(when.value, chat.tz)
    return when.value


def _split_when(rest: str, chat: Chat, months: bool = False, deadline: bool = False) -> tuple[str, dates.Found | None]:
    """'call mom on Sunday' → ('call mom', Found('on Sunday')); the date phrase may come first or last.
    `months`: "in June" is a day, its 1st; a part of the day alone ("this evening") is one too (dates.search).
    A day and an hour said apart ("on Wednesday to call Tom at 5pm") are one moment. `deadline` (a task's due day):
    of several days, the one it is due by ("… on saturday, has to be bought by friday")."""
    # when said without a day ("after the holidays", "sometime", "asap"): no due day, and no part of the title
    rest = _VAGUE_WHEN_RE.sub("", rest)
    found = dates.search(rest, chat.now, chat.tz, months=months, parts=True)
    if not found:
        return _SAID_AFTER_RE.sub("", rest.strip()), None
    cued = [f for f in found if _DEADLINE_CUE_RE.search(rest[: f.start]) or _DEADLINE_CUE_RE.match(f.phrase)]
    cued = cued if deadline and len(found) > 1 else []
    if len(cued) == 1 and not isinstance(cued[0].value, datetime) and _day_and_hour(found, chat.tz) is None:
        # "the present for Ole's party on saturday, has to be bought by friday": the day it is due by is the due day
        first, cuts = cued[0], cued
    else:
        first, cuts = _day_and_hour(found, chat.tz) or (found[0], [found[0]])
    what = rest
    for cut in sorted(cuts, key=lambda f: f.start, reverse=True):
        at = what.find(cut.phrase, cut.start)
        if at < 0:
            continue
        # the little word that led to the date goes with it ("call Tom at 5pm" → "call Tom"), none elsewhere
        head = re.sub(
            r"(?:\s+(?:on|at|by|before|until|till|in|within|next|for|from|between|the|of|due|bis|zum|zur|am|spätestens|für))+\s*$",
            "",
            what[:at].rstrip(" ,"),
            flags=re.I,
        )
        what = head + " " + what[at + len(cut.phrase) :]
    what = re.sub(
        r"\s+(?:on|at|by|before|until|in|within|the|for|is|are|was|will be|between|from)\s*$", "", what.strip()
    )
    what = re.sub(r"^(?:later|sometime|some time|about)\s+", "", what.strip())  # "later today": today
    what = re.sub(r"\s+(?:sometime|some time|at some point)$", "", what)  # "get a haircut sometime next week"
    what = re.sub(r"^(?:on|at|by|in|between|from|bis|am|zum|spätestens)\s+|^to\s+", "", what.strip())
    what = re.sub(r"^\s*to\s+", "", what)
    what = " ".join(what.split()).strip(" ,.!?:;-–")  # "call the bank by Friday?": no "?" in the title
    what = re.sub(r"\s+,", ",", re.sub(r"\s*\.\s*,", ",", what))  # "… Eintrittsgeld ., bei Frau": the date's own stop
    # "renew the parking permit, it expires": why it is due then is no part of what to do
    what = re.sub(
        r"[,\s]+(?:before\s+|as\s+|since\s+|because\s+|when\s+)?(?:it|that|which|they|this)\s+"
        r"(?:expires?|runs? out|is due|are due|ends?|closes?|lapses?)(?:\s+(?:in|on|at|by)\b.*)?$",
        "",
        what,
        flags=re.I,
    )
    # "cancel the ballet contract, they want it in writing", "renew the Hort contract, needs doing": the why and the
    # how said after a comma are no part of the title either
    what = _SAID_AFTER_RE.sub("", what)
    return what, first


# the word that makes a day the one a thing is due by, before the day's phrase or as its first word
_DEADLINE_CUE_RE = lazy_regex(
    r"(?:^|\b)(?:by|before|until|till|due|no later than)\s+(?:the\s+)?$|^(?:by|before)\b", re.I
)
_SAID_AFTER_RE = lazy_regex(
    r"\s*[,;]\s+(?:(?:they|he|she|we|it|that|this|the\s+\w+)\s+(?:want|wants|need|needs|said|says|asked|asks|"
    r"require|requires|told me|insists?|only take|only takes|only accept|only accepts)\b"
    r"|(?:it\s+|that\s+|they\s+)?(?:needs?\s+doing|(?:has|have|needs?|must)\s+(?:to\s+)?be\s+[a-z]+)\b"
    r"|no\s+(?:rush|hurry|stress)\b).*$",
    re.I,
)


_VAGUE_WHEN_RE = lazy_regex(
    r"\s+(?:(?:right\s+)?now|asap|as soon as possible|soon|sometime(?:\s+soon)?|some time|at some point|"
    r"one of these days|when i (?:get|have) (?:a chance|time)|after the (?:holidays|break|summer)|"
    r"(?:sometime\s+)?(?:in|after|over)\s+the\s+(?:new\s+year|holidays))(?=\s*(?:[,.;!?]|$))",
    re.I,
)


def _day_and_hour(found: list[dates.Found], tz) -> tuple[dates.Found, list[dates.Found]] | None:
    """A day and an hour said apart ("on Wednesday … at 5pm", "Friday: dentist at 10") as one moment, with the two
    phrases it was read from; None when the phrases are not one day and one hour."""
    day = next((f for f in found if not isinstance(f.value, datetime)), None)
    hour = next(
        (
            f
            for f in found
            if isinstance(f.value, datetime)
            and not _NAMES_A_DAY.search(re.sub(r"\bin the (?:morning|afternoon|evening)\b", "", f.phrase))
        ),
        None,
    )
    if day is None or hour is None:
        return None
    moment = datetime.combine(day.value, hour.value.astimezone(tz).timetz())
    return dates.Found(f"{day.phrase} {hour.phrase}", moment, day.start, hour.reading), [day, hour]


# "ach, und das Rollstuhltaxi für Helga an dem Tag muss ich auch noch bestellen": the thing, then its verb
_GERMAN_MUST_DO_RE = lazy_regex(
    r"^(?:(?:ach|oh|achso|und|also|ah)\b[\s,]*)*(?:(?:das|den|die|der)\s+)?(?P<what>.+?)\s+"
    r"(?:(?:an\s+dem|am)\s+tag\s+)?(?:muss|müssen|sollte|soll)\s+(?:ich|wir)\s+(?:(?:auch|noch|unbedingt|dann)\s+)*"
    r"(?P<verb>\w+(?:en|rn|ln))$",
    re.I,
)


def _title(text: str) -> str:
    # "Muss meine G25-Untersuchung … machen": the must is no part of what to do, nor "Was für die Liste:" before it
    text = re.sub(
        r"^\s*(?:(?:noch\s+)?(?:was|etwas)\s+)?(?:für|auf)\s+(?:die|meine)\s+liste\s*:\s*", "", text.strip(), flags=re.I
    )
    text = re.sub(r"^\s*(?:muss|müssen|soll|sollte)\s+(?:ich\s+|wir\s+)?(?=\w)", "", text.strip(), flags=re.I)
    text = re.sub(r"^\s*(?:my|mein|meine|meinen|meinem)\s+", "", text.strip(" .,!\"'“”‘’"), flags=re.I)
    # "I need to remember to return the parcel": the act is returning it
    text = re.sub(r"^(?:remember|not\s+forget|make\s+sure)\s+to\s+(?=\w)", "", text, flags=re.I)
    must = _GERMAN_MUST_DO_RE.match(text)
    if must:  # "… Rollstuhltaxi für Helga … muss ich auch noch bestellen" → "Rollstuhltaxi für Helga bestellen"
        text = f"{must.group('what')} {must.group('verb')}"
    # a list's item said with its article ("den Frack zurück in den Fundus", "the Bühnenverein fee"): a title has none
    if ":" not in text:  # "The van: go through its safety check" names what the task is about
        text = re.sub(r"^(?i:the|den|die|das|der|dem)\s+(?=[A-ZÄÖÜ])", "", text) or text
    return text[:1].upper() + text[1:]


def _topic_named(chat: Chat, what: str) -> dict | None:
    open_topics = [t for t in chat.topics if t.get("status") != "closed"]
    wanted = words(re.sub(r"\b(topic|the)\b", " ", what, flags=re.I))
    return best(open_topics, wanted)


def _task_named(chat: Chat, what: str) -> dict | None:
    open_tasks = [t for t in chat.tasks if t.get("status", "open") == "open"]
    return best(open_tasks, words(what))


def _task_said(chat: Chat, what: str) -> dict | None:
    """The open task `what` names with every word of it in its title ("the receipts" of "Send the receipts to Frau
    Öztürk", not "the washing" of anything); None when none does."""
    task = _task_named(chat, what) if what else None
    return task if task is not None and covers(words(what), words(str(task.get("title")))) else None


def _followed_up_task(chat: Chat) -> dict | None:
    """The one open task of Wilson's follow-up that a short message answers, or None."""
    ids = set((chat.followed_up or {}).get("tasks") or [])
    told = [t for t in chat.tasks if t.get("status", "open") == "open" and t.get("id") in ids]
    return told[0] if len(told) == 1 else None


def answer(chat: Chat) -> Reply:
    """The offline answer to one message of the user's: the whole read as one request; failing that, sentence by
    sentence, answered once ("Busy week. The boiler guy comes Thursday. Remind me Wednesday at 8pm to clear the
    hallway" is that reminder, a pasted letter one answer); failing that, a word back for news, or the honest
    help, said in full once in a conversation."""
    body, letter = sentences.letter_body(chat.text)
    reply = None
    if letter:  # a pasted letter: what it asks of the user ("could you send me the report" is "send the report")
        body = referents.with_amount(body)  # "… amounts to 164.80 EUR. Please transfer the amount by …"
        asked = _ASKED_OF_YOU_RE.sub(r"\g<verb> ", _BITTE_SIE_RE.sub(_german_asked, body))
        chat = replace(chat, text=request_of(asked.rstrip(" ?") if asked != body else asked, chat.now, chat.tz))
        reply = _the_one_asked(chat, body, asked)
    reply = reply or (
        (_letter_asks(chat, body) if letter else None)
        # "Drei Dinge für meine Liste: …, die Praxis-Haftpflicht, 312 €, bis 15.4.": each item with its day, before
        # any one item's sum or office reads the whole as a bill or a plan
        or _list_with_days(chat, chat.text)
        or _referred(chat)
        or anchored.before_told(chat, chat.text)
        or _yes_then_said(chat, chat.text)
        or _that_as_task(chat, sentences.split(chat.text))
        or _that_as_task(chat, _SO_THAT_RE.split(chat.text.strip(), maxsplit=1))
        or _that_as_task(chat, _add_that_last(chat.text))
        or _that_as_task(chat, _ask_at_end(chat.text))
        or _asked_then_listed(chat, chat.text)
        or _run_on(chat, chat.text)
        or (_buried(chat, chat.text) if len(chat.text) > 150 and len(sentences.split(chat.text)) == 1 else None)
        or _numbered(chat, chat.text)
        or _german_must(chat, chat.text)
        or _two_dated_acts(chat, chat.text)
        or _dated_steps(chat, chat.text)
        or _that_one_moved(chat, chat.text)
        or moved_event.moved_in_words(chat, chat.text)
        or _read(chat, chat.text)
    )
    two = reply is not None and reply.rule == TWO_REQUESTS
    parts = sentences.split(chat.text) if reply is None or two else []
    if len(parts) > 1:
        asked = _asked(chat, parts)
        if not two:
            reply = _merged(asked) if asked else None
        elif len(asked) == 1 and asked[0].calls:  # "Ugh, the landlord again. … Please add a task to …": one request
            reply = _merged(asked)
    if reply is not None and reply.rule == TWO_REQUESTS:
        # sentences typed without capitals ("… in cash. please remind me …") are sentences still
        said = parts if len(parts) > 1 else [p for p in _AFTER_STOP_RE.split(chat.text.strip()) if p]
        reply = (_asked_last(chat, said) if len(said) > 1 else None) or reply
    if reply is None:
        reply = (
            _clause_asked(chat, chat.text)
            or _called_off(chat, chat.text)
            or _deadline_said(chat, chat.text)
            or _thing_due(chat, chat.text)
            or looks.topic_unknown(chat, chat.text)
            or _buried(chat, chat.text)
            or deeds_in_passing.deed_in_passing(chat, chat.text)
            or _musing(chat.text)
            or _statement(" ".join(parts) or chat.text)
            or asked_about.answered(chat, chat.text)
            or questions.answered(chat, chat.text)
            or Reply(
                HELP_AGAIN if any(CAN_DO in said for said in chat.said_before) else HELP,
                [],
                "no offline rule understood the message",
            )
        )
    if not reply.calls and reply.rule in WORD_BACK:
        reply = _asked_after_news(chat, chat.text) or reply
    if chat.first_contact:
        reply.text = f"{INTRO}\n\n{reply.text}" if reply.text else INTRO if reply.calls else f"{INTRO}\n\n{TRY}"
    reply.text = _once(reply.text)
    return reply


# "Clara needs the photos sooner, can you change that one to this Friday?": a task told of, then moved as "that one"
_THAT_ONE_MOVED_RE = lazy_regex(
    r"^(?P<told>[^,.;!?]{4,80}?)\s*[,;.!-]+\s*(?:so\s+|and\s+)?(?:(?:can|could|would)\s+you\s+|please\s+)*(?:please\s+)?"
    r"(?P<verb>change|move|push|set|put|make)\s+(?:that(?:\s+one)?|it|this(?:\s+one)?|the\s+deadline)\s+"
    r"(?P<rest>(?:to|till|until)\s+[^?!]+?)(?:\s+please)?\s*[?!.]*$",
    re.I,
)


def _that_one_moved(chat: Chat, text: str) -> Reply | None:
    """The one open task a clause names, moved to the day the request after it gives to "that one"; None unless the
    clause names a task and the move reads as one."""
    found = _THAT_ONE_MOVED_RE.match(text.strip())
    task = _task_named(chat, found.group("told")) if found else None
    if found is None or task is None:
        return None
    reply = _read(chat, f"move {task.get('title')} {found.group('rest')}")
    if reply is None or [name for name, _ in reply.calls] != ["update_task"]:
        return None
    return reply if reply.calls[0][1].get("task_id") == task.get("id") else None


_OWN_OR_ASKED_RE = lazy_regex(
    r"\?\s*$|^(?:(?:ok|okay|so|and|well|oh)[\s,]+)*(?:i|i'm|i’m|im|i've|i'll|i'd|we|we're|we’re|we've|we'll|done|finished|"
    r"mark|what|when|where|who|which|how|is|are|do|does|can|could|will|would)\b",
    re.I,
)


def _asked_last(chat: Chat, parts: list[str]) -> Reply | None:
    """ "ok so Noah's class trip is on the 20th and he needs 12 euros in cash. please remind me tomorrow at 7:45 to
    put the money in his bag": the sentences before the one request only tell why it is asked, whatever plan they
    might read as alone; that request, read alone. None unless the last sentence, and only it, asks outright."""
    requests = [request_of(part, chat.now, chat.tz) for part in parts]
    outright = [bool(REMIND_RE.match(r) or EXPLICIT_ADD_RE.match(r)) for r in requests]
    if not outright[-1] or any(outright[:-1]):
        return None
    # what others do or how things are is the reason; the user's own news ("I'm going to Japan on March 20. Add buy
    # adapter by March 1"), a done or a question before the request is one more thing asked, one at a time
    if any(_OWN_OR_ASKED_RE.search(part.strip()) for part in parts[:-1]):
        return None
    reply = _read(chat, requests[-1])
    return reply if reply is not None and reply.calls and reply.rule != TWO_REQUESTS else None


def _the_one_asked(chat: Chat, body: str, asked: str) -> Reply | None:
    """The one sentence of a letter that asks something of the reader ("Bitte geben Sie … bis Freitag, 15.01., ab"),
    read alone when it makes a task or a reminder: the letter's other days (the museum visit) and sums are what it
    is about, not when it is due. None when no sentence, or more than one, asks."""
    told = set(sentences.split(body))
    changed = [s for s in sentences.split(asked) if s not in told]
    if len(changed) != 1:
        return None
    reply = _read(chat, request_of(changed[0].rstrip(" ?"), chat.now, chat.tz))
    if reply is None or not any(
        name == "remind" or name == "create_task" and "due" in args for name, args in reply.calls
    ):
        return None  # no day in the sentence that asks ("Bitte überweisen Sie den Betrag …"): the whole letter says it
    return reply


# a letter's sentence that asks its reader to act: "Please send them to me by 19.02.", "Could you please also translate
# the two annexes and send them to us by 22 January?"
_PLEASE_ACT_RE = lazy_regex(
    r"^\s*(?:please\s+|(?:could|can|would|will)\s+you\s+(?:please\s+|kindly\s+|also\s+)*)(?=[a-z]+\b)", re.I
)


# what a client or an office asks a reader to do by a day, beside the acts a task is made of (acts.ACT_VERBS)
_LETTER_ACTS = frozenset(
    {"translate", "proofread", "review", "revise", "confirm", "complete", "provide", "upload", "deliver", "give"}
)


def _letter_asks(chat: Chat, body: str) -> Reply | None:
    """What a pasted letter asks of the user, in the one sentence that asks it ("… for your tax return I still need
    the certificate. Please send them to me by 19.02."): a task due on the day it names, read before what the letter
    is about (the tax return's plan is the adviser's to make). None unless exactly one sentence asks with a day."""
    asked = [
        part[found.end() :]
        for part in sentences.split(body)
        if (found := _PLEASE_ACT_RE.match(part)) and dates.search(part, chat.now, chat.tz)
    ]
    if len(asked) != 1:
        return None
    said = re.sub(r"\s*\([^)]*\)", "", asked[0]).strip(" ?.!")  # "(approx. 4,000 words)"
    said = re.sub(r"^([a-z]+)\s+(?:me|us)\s+(?=the|my|your|our|a|an)\b", r"\1 ", said, flags=re.I)  # send me the report
    reply = _read(chat, request_of(said, chat.now, chat.tz))
    if reply is None or not reply.calls or any(n != "create_task" for n, _ in reply.calls):
        reply = None
    elif len(str(reply.calls[0][1].get("title") or "").split()) < 2:
        return None  # "Please pay by Friday": what to pay is in the letter's other sentences, which the rules read
    else:
        return reply
    what, when = _split_when(said, chat)
    what = re.split(r"\s*,\s*(?=quoting|stating|mentioning|citing)", what, maxsplit=1)[0]
    verb = (what.split() or [""])[0].lower()
    if when is None or len(what.split()) < 2 or verb not in acts.ACT_VERBS | _LETTER_ACTS or verb in ("find", "note"):
        return None  # "please note that the office is closed on Monday", "please find attached …": nothing to do
    if verb in ("pay", "transfer", "remit") and payments.AMOUNT_RE.search(body):
        return None  # a sum to pay: the rules that read bills and payments name it with its amount
    return Reply("", [("create_task", {"title": _title(what), "due": dates.iso(when.value)})], "what a letter asks")


# "Two things: I need to renew the permit by 12 March, and cancel my gym membership before the end of March": two
# acts, each with its own day, joined by "and"
_TWO_THINGS_RE = lazy_regex(
    r"^\s*(?:(?:two|2|three|3|a\s+couple\s+of|some)\s+things?|(?:i\s+)?(?:need|have)\s+to\s+get\s+these\s+done)"
    r"\s*[:,–-]\s*",
    re.I,
)
_AND_ACT_RE = lazy_regex(
    r"[,;]\s*(?:and\s+|und\s+)?(?:also\s+|then\s+|dann\s+)?(?=[^\W\d_]+\b)|"
    r"\s+(?:and|und)\s+(?:also\s+|then\s+|dann\s+)?(?=[^\W\d_]+\b)",
    re.I,
)
# "… and then submit it on ELSTER": the second act's "it" is the goal the first serves, an object all the same
_ACT_ON_IT_RE = lazy_regex(r"^(?P<verb>[a-z]+)\s+(?:it|them)\b", re.I)


# "add 3 things: 1) pay the Kita lunch money by Feb 5 2) call the Hausverwaltung by Feb 10 3) …": a list, numbered
_LIST_LEAD_RE = lazy_regex(
    r"^\s*(?:(?:please|pls|can you|could you)\s+)?(?P<verb>add|put|note)\b[^:]{0,40}?:?\s*(?=1[.)]\s)", re.I
)


# "todo for the next weeks:\n- sign Emil up … by May 14\n- ring the chimney sweep by May 19": a list with a dash or a
# bullet before each item (its lines may come joined: "… weeks: - sign Emil up … - ring …")
_BULLETS_LEAD_RE = lazy_regex(r"^\s*[^:\n]{0,50}:\s*(?=[-•*–]\s)")
_BULLET_RE = lazy_regex(r"(?:^|\s+)[-•*–]\s+")


def _listed_items(text: str) -> list[str]:
    """The items of a numbered list after a word to add ("add 3 things: 1) … 2) …") or of a list with a dash or a
    bullet before each item after a colon; [] when the text is no such list."""
    lead = _BULLETS_LEAD_RE.match(text)
    if lead is not None:  # things to do, each said as an act ("- the flight is at 9" is a note, not a list to add)
        items = [item for item in _BULLET_RE.split(text[lead.end() :]) if item.strip()]
        return items if all(acts.act(item.strip(" ,;.")) for item in items) else []
    lead = _LIST_LEAD_RE.match(text)
    if lead is None:
        return []
    rest, items, number = text[lead.end() :], [], 1
    while True:  # each number in turn, after a space: "by Feb 5 2) call …" (a date's "5.2." is not "2.")
        mark = re.match(rf"{number}[.)]\s+", rest) if number == 1 else re.search(rf"(?<=\s){number}[.)]\s+", rest)
        if mark is None:
            break
        if items:
            items[-1] = rest[: mark.start()]
        rest = rest[mark.end() :]
        items.append(rest)
        number += 1
    return items


def _numbered(chat: Chat, text: str) -> Reply | None:
    """A list of things to add, each its own task (or reminder), as each reads alone; None unless it lists two or
    more and every item reads as a request of its own."""
    items = _listed_items(text)
    if len(items) < 2:
        return None
    replies = [_read(chat, request_of(f"add {item.strip(' ,;.')}", chat.now, chat.tz)) for item in items]
    wanted = ("create_task", "remind")
    if all(r is not None and r.calls and all(name in wanted for name, _ in r.calls) for r in replies):
        return _merged(replies)
    return None


# "für die Liste: A bis Donnerstag, B bis Freitag, und C bis Ende des Monats", "for my list: A by Friday, B by the 20th"
_LIST_COLON_RE = lazy_regex(
    r"^\s*(?:(?:hola|hi|hey|hallo|moin)[\s!,]+)?(?:(?:please|pls|bitte)\s+)?"
    r"(?:(?:\d+|two|three|four|five|a few|some|zwei|drei|vier|dos|tres|cuatro)\s+(?:things?|sachen|dinge|cosas)\s+)?"
    r"(?:(?:für|auf)\s+(?:die|meine)\s+liste|(?:for|on|to)\s+(?:the|my)\s+list|para\s+mi\s+lista|"
    r"(?:add|notier\w*|todo|to-do))(?:\s+(?:pls|please|bitte))?\s*:\s*",
    re.I,
)


# a list's dash, not a dash inside an item ("new Stempel, the old one is worn out – before mid-July")
_DASHED_RE = lazy_regex(r"(?:^|\s+)[-•*]\s+")


def _title_to_comma(reply: Reply | None) -> Reply | None:
    """A list item's task named by what comes before its comma ("Beglaubigung … für Frau Sousa, she picks it up …")."""
    if reply is None or len(reply.calls) != 1 or reply.calls[0][0] != "create_task":
        return reply
    args = reply.calls[0][1]
    title = str(args.get("title") or "").split(", ")[0]
    return Reply(reply.text, [("create_task", {**args, "title": title})], reply.rule)


def _one_task(reply: Reply | None) -> Reply | None:
    """An item of a list as one task: a sum to pay by a day ("Haftpflicht 64 € bis 28.") is its payment, not the
    bill's plan of review and pay."""
    if reply is None or not reply.calls or reply.calls[0][0] != "create_topic" or "bill" not in reply.rule:
        return reply
    topic = reply.calls[0][1]
    return Reply("", [("create_task", {"title": f"Pay {topic['title']}", "due": topic.get("starts")})], reply.rule)


_WEEKDAY_COMMA_RE = lazy_regex(
    r"\b(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day|montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonntag)"
    r",?\s*(?=\d{1,2}\.)",
    re.I,
)


_ITEMS_OWN_RE = lazy_regex(
    r"^(?:\d[\d.,]*\s*(?:€|eur|euro|euros|usd|chf|zł|pln)(?!\w)(?:,\s*(?:bis|by|until|till|spätestens)\s+[^,]+)?|"
    r"(?:bis|by|until|till|spätestens|before|vor)\s+[^,]+)\s*$",
    re.I,
)


def _list_with_days(chat: Chat, text: str) -> Reply | None:
    """Things to add after a colon, apart by commas, each with its own day: one task each. None unless there are two
    or more and each reads alone as a task or reminder with its day."""
    lead = _LIST_COLON_RE.match(text)
    if lead is None:
        return None
    said = re.sub(r"(?<!\d)[\s.!]+$", "", text[lead.end() :].strip())  # a German date's dot stays: "bis 28."
    if _DASHED_RE.match(said):  # one item a line after its dash: what follows a comma is the item's own
        items = [i.strip(" .") for i in _DASHED_RE.split(said) if i.strip()]
    else:
        # a comma between digits is a decimal one: "338,42 €"; a weekday before its date says the date again ("bis
        # Mittwoch, 24. Januar"): the date alone is the day, and no comma of it splits the items
        said = _WEEKDAY_COMMA_RE.sub("", said)
        items = [i for i in re.split(r"\s*(?:(?<!\d),|,(?!\d)|;)\s*(?:(?:und|and)\s+)?", said) if i.strip()]
        # "die Praxis-Haftpflicht, 312 €, bis 15.4.": a sum alone or a day alone after a comma is the item's own,
        # when the item before it has no day yet ("50 € to Tom by Friday, 20 € to Anna by Monday" are two)
        for i in range(len(items) - 1, 0, -1):
            if _ITEMS_OWN_RE.match(items[i]) and not dates.search(items[i - 1], chat.now, chat.tz):
                items[i - 1 : i + 1] = [f"{items[i - 1]}, {items[i]}"]
    if len(items) < 2:
        return None
    replies = [_one_task(_read(chat, request_of(f"add {item}", chat.now, chat.tz))) for item in items]
    replies = [_title_to_comma(r) for r in replies]
    if all(
        r is not None
        and len(r.calls) == 1
        and r.calls[0][0] in ("create_task", "remind")
        and (r.calls[0][1].get("due") or r.calls[0][1].get("at"))
        for r in replies
    ):
        return _merged([r for r in replies if r is not None])
    return None


# "ach und: Materialbestellung für die Baustelle muss vor der Operation raus, spätestens 19.2.", "die Steuer muss bis
# 31. Juli raus": a thing that must be done (out, paid, there) by a day, said of the thing
_GERMAN_MUST_RE = lazy_regex(
    r"^\s*(?:(?:ach\s+)?und|außerdem|ausserdem|noch\s+was|achso)?\s*:?\s*(?P<what>[^,!?]{3,80}?)\s+(?:muss|müssen)\s+"
    r"(?P<middle>[^,!?]{0,60}?)\s*\b(?:raus|weg|fertig|erledigt|bezahlt|bestellt|abgeschickt|da sein|dort sein|"
    # where it must be by then: "… muss spätestens am 14. Januar beim LABO sein"
    r"(?P<at>(?:bei|beim|im|an|am|auf|in\s+der)\s+(?:der\s+|dem\s+)?[\w-]+)\s+sein|"
    r"(?:erledigt|bezahlt|bestellt|abgeschickt|gemacht|eingereicht)\s+werden)\b[\s,]*(?P<rest>[^!?]*)$",
    re.I,
)
# "Der Antrag für die neue": the new one of what the sentence before named ("Meine Fahrerkarte läuft … ab")
_THE_NEW_ONE_RE = lazy_regex(r"\b(?:für\s+)?(?:die|den|das|eine[n]?)\s+neuen?$", re.I)
_NAMED_BEFORE_RE = lazy_regex(
    r"^\s*(?:mein|meine|meinen|unser|unsere|der|die|das)\s+(?P<noun>(?-i:[A-ZÄÖÜ])[\w-]+)", re.I
)


def _german_must(chat: Chat, text: str) -> Reply | None:
    """The thing that must be done by a day, told in German: a task with that day (the last said: "spätestens 19.2."
    after "vor der Operation"); said in one sentence of several, that sentence's, with "die neue" the new one of what
    the sentence before named. None without a day."""
    parts = sentences.split(text.strip()) or [text.strip()]
    n, found = next(((n, m) for n, part in enumerate(parts) if (m := _GERMAN_MUST_RE.match(part))), (0, None))
    if found is None:
        return None
    part = parts[n]
    if payments.amount_of(part) is not None:
        return None  # "Die Kfz-Steuer von 94 € muss bis 15. Februar bezahlt werden": a sum to pay, the bills' rule
    days = dates.search(f"{found.group('middle')} {found.group('rest')}", chat.now, chat.tz)
    if not days:
        return None
    what = re.sub(r"\s+", " ", found.group("what")).strip(" .")
    named = _NAMED_BEFORE_RE.match(parts[n - 1]) if n else None
    if named and _THE_NEW_ONE_RE.search(what):
        what = f"{what} {named.group('noun')}"  # "Antrag für die neue Fahrerkarte"
    if found.group("at"):
        what = f"{what} {found.group('at')}"  # "… beim LABO"
    return Reply(
        "",
        [("create_task", {"title": _title(what), "due": dates.iso(days[-1].value)})],
        f"a thing that must be done by a day, in German ({days[-1].stated(chat.tz)})",
    )


def _two_dated_acts(chat: Chat, text: str) -> Reply | None:
    """Two acts in one line, each with its own day: both proposed (as two tasks or reminders), not one task whose
    title holds the second. None unless both halves read as a dated request on their own."""
    said = _TWO_THINGS_RE.sub("", text.strip())
    for cut in _AND_ACT_RE.finditer(said):
        # a German date's last dot stays: "before the 28.4."
        first, second = (
            said[: cut.start()].strip(" ,;"),
            re.sub(r"(?<!\d)[\s,;.!]+$", "", said[cut.end() :].strip(" ,;!")),
        )
        # "…, they want it in writing": a reason after the second act is no part of it
        second = re.split(r"[,;]\s*(?=(?:they|he|she|it|that|which|because|as|since)\b)", second, maxsplit=1)[0]
        verb = re.match(r"[a-z]+", second, re.I)
        if not (
            acts.act(_ACT_ON_IT_RE.sub(r"\g<verb> the thing", second))
            or verb
            and verb.group(0).lower() in ("cancel", "quit", "terminate")
            or acts.german_todo(second) is not None  # "… und den Container buchen bis zum 19."
        ):
            continue
        if not dates.search(first, chat.now, chat.tz) or not dates.search(second, chat.now, chat.tz):
            continue
        need = re.match(r"(?:i|we)\s+(?:\w+\s+)?(?:need|have|must|should|got)\s+to\s+", first, re.I)
        # "A by X, B by Y and C by Z": the second part may be two acts again
        replies = [_read(chat, request_of(first, chat.now, chat.tz)), _two_dated_acts(chat, second)]
        if replies[1] is None:
            replies[1] = _read(chat, request_of(second, chat.now, chat.tz))
        if replies[1] is None or not replies[1].calls:  # "I need to A by X, and B by Y": B needed too
            said = need.group(0) if need else "I need to "  # "A by X and then B it by Y": B is the next step
            replies[1] = _read(chat, request_of(said + second, chat.now, chat.tz))
        wanted = ("create_task", "remind")
        if all(r is not None and r.calls and all(n in wanted for n, _ in r.calls) for r in replies):
            return _merged(replies)
    return None


def _dated_steps(chat: Chat, text: str) -> Reply | None:
    """ "I have to hand in my thesis on April 30. My supervisor wants the full draft by April 9.": sentences each
    with its own day, each read alone as a dated task or reminder, are one task per day, not one task whose title
    holds the rest; "Can you help with my tax return? I need to collect the receipts by Feb 19 and then submit it
    by March 5": the sentence that says two dated acts is those two. None unless every dated sentence reads so."""
    parts = sentences.split(text)
    if len(parts) < 2:
        return None
    dated = [part for part in parts if dates.search(part, chat.now, chat.tz)]
    if len(dated) == 1:  # the other sentences say the goal: the steps are in the one with the days
        return _two_dated_acts(chat, dated[0])
    days = [dates.search(part, chat.now, chat.tz) for part in dated]
    if len(dated) != 2 or any(len(found) != 1 for found in days) or days[0][0].value == days[1][0].value:
        return None
    replies = [_read(chat, request_of(part, chat.now, chat.tz)) for part in dated]
    wanted = ("create_task", "remind")
    if all(r is not None and len(r.calls) == 1 and r.calls[0][0] in wanted for r in replies):
        return _merged([r for r in replies if r is not None])
    return None


def _run_on(chat: Chat, text: str) -> Reply | None:
    """A dictated note of several things, each with its day, run on without full stops (run_on.py): a task or a
    reminder each. None unless every part read as said is one dated request; its title is then the part's as
    said or as "add …", whichever keeps more of the part's own words ("invoice Studio Kranich … 1800 euros" is
    no payment of the user's)."""
    replies = []
    for part in run_on.parts(text, chat.now, chat.tz):
        said = answer(replace(chat, text=request_of(part, chat.now, chat.tz), first_contact=False))
        if not _one_dated(said):
            return None
        added = _read(chat, request_of(f"add {part}", chat.now, chat.tz))
        replies.append(
            added if added is not None and _one_dated(added) and _kept(added, part) > _kept(said, part) else said
        )
    return _merged(replies) if len(replies) >= 2 else None


def _one_dated(reply: Reply) -> bool:
    return (
        len(reply.calls) == 1
        and reply.calls[0][0] in ("create_task", "remind")
        and bool(reply.calls[0][1].get("due") or reply.calls[0][1].get("at"))
    )


def _kept(reply: Reply, part: str) -> int:
    """How well a title says the part: its words the part has, less those it does not."""
    title, said = words(str(reply.calls[0][1].get("title") or reply.calls[0][1].get("text") or "")), words(part)
    return len(title & said) - len(title - said)


def _referred(chat: Chat) -> Reply | None:
    """ "My residence permit runs out on April 30. Put getting it extended on my list": the request read with the
    thing told for its "it", and the thing's day (wilson/model/offline/referents.py)."""
    asked = referents.with_referent(chat.text, chat.now, chat.tz)
    reply = _read(chat, request_of(asked, chat.now, chat.tz)) if asked else None
    return reply if reply is not None and reply.calls else None


# a letter's request of its reader: "could you please send me the report by Thursday?"
_ASKED_OF_YOU_RE = lazy_regex(
    r"\b(?:(?:could|can|would|will)\s+you\s+(?:please\s+|kindly\s+|also\s+)*|"
    # "We kindly ask you to settle it by 22 January"
    r"(?:we|i)\s+(?:would\s+)?(?:kindly\s+|therefore\s+|now\s+)*(?:ask|request|urge)\s+you\s+(?:kindly\s+)?to\s+)"
    r"(?P<verb>[a-z]+)(?:\s+(?:me|us))?\s+",
    re.I,
)


# a German letter's request of its reader: "Bitte senden Sie uns die Erklärung bis zum 22.01. zurück" is the to-do
# "die Erklärung bis zum 22.01. zurücksenden", as a German writes one (acts.german_todo)
_BITTE_SIE_RE = lazy_regex(
    r"\b(?:bitte\s+)(?P<verb>[a-zäöü]+en)\s+sie\s+(?:(?:uns|mir|dem|der|es)\s+)?(?:bitte\s+)?(?P<what>[^!?]+?)"
    r"(?:\s+(?P<particle>zurück|ab|ein|zu|mit|an|vor|nach|aus|hoch))?(?=\s*(?<!\d)[.!?](?:\s|$)|\s*$)",
    re.I,
)


def _german_asked(found: re.Match) -> str:
    verb = f"{(found.group('particle') or '').lower()}{found.group('verb').lower()}"
    what = found.group("what")
    # a sentence of its own still ("… nach Rügen. Die Erklärung … zurücksenden."), so it begins with a capital
    return f"{what[:1].upper()}{what[1:]} {verb}" if acts.german_verb(verb) else found.group(0)


# the help said again in the same conversation: its list of requests was said already
HELP_AGAIN = "I didn't understand that either, sorry. Nothing was changed."
# what `_small_talk` and `_no_to_nothing` answer: a word back, no request; among a message's sentences, left out
# when another sentence asks for something
WORD_BACK = {
    "the user's own day, today",
    "a greeting",
    "a word back",
    "thanks",
    "an acknowledgement",
    "an acknowledgement with a proposal waiting",
    "a goodbye",
    "the user is unwell or worn out",
    "the user says where they are",
    "an answer with nothing pending",
    "how Wilson is",
    "news, no request",
}


def _read(chat: Chat, text: str) -> Reply | None:
    """One request read by the chain of rules; None when none understood it."""
    text = text.strip()
    text = COURTESY_RE.sub("", text) or text  # "thanks!" alone stays small talk
    noted = NOTE_RE.match(text)
    noted = noted if noted and text[noted.end() :].strip(" .!") else None
    if noted:
        text = text[noted.end() :].strip()  # "note to self: remind me at 9 to call Mum" is that reminder
    reply = (
        spoken_decision(chat, text)
        or follow_up(chat, text)
        or _no_to_nothing(chat, text)
        or _on_it(text)
        or _time_asked(chat, text)
        or missed.look(chat, text)
        or _close_said(chat, text)
        or finished.look(chat, text)
        or _done(chat, text)
        or german_changes.change(chat, text)
        or spanish_done.done(chat, text)
        or valid_until(chat, text)
        or looks.reminders(chat, text)
        or _recurring(chat, text)
        or anchored.anchored(chat, text)
        or _remind(chat, text)
        or redated.shifted(chat, text)
        or _move(chat, text)
        or _named_then_changed(chat, text)
        or _drop(chat, text)
        or _close(chat, text)
        or _rename(chat, text)
        or looks.topic(chat, text)
        or looks.when_topic(chat, text)
        or when_event.next_event(chat, text)
        or _when_due(chat, text)
        or _help_with(chat, text)
        or looks.listing(chat, text)
        or redated.redated(chat, text)
        or _plan_asked(chat, text)
        or _payment(chat, text)
        or _jotted(chat, text)
        or _life_event(chat, text)
        or _wanted_by(chat, text)
        or _add(chat, text)
        or _thing_needed(chat, text)
        or (_add(chat, f"add {text}") if noted else None)
        or _small_talk(chat, text)
        or _command(chat, text)
    )
    if reply is not None and (reply.text or any(name != "decide" for name, _ in reply.calls)):
        reply = _one_at_a_time(text) or reply  # a look or a change, not an answer
    return reply


_REQUEST_START_RE = lazy_regex(
    r"^\W*(?:(?:please|pls|bitte|and|und|also|auch)\s+)*(?:remind|add|put|note|book|erinner\w*|setz\w*|notier\w*|"
    r"schreib\w*|trag\w*|recuérdame|añade|apunta|rappelle|ajoute|przypomnij|dodaj|wrzuć)\b",
    re.I,
)
# a sentence's end, lower case after it too, but not a German day's dot ("am Samstag, 4. August"): `_AFTER_STOP_RE`
# less the stop after a digit
_STOP_RE = lazy_regex(r"(?<=[^\d\s][.!?])\s+")


def _asked_after_news(chat: Chat, text: str) -> Reply | None:
    """What a message read whole as news asks in a sentence of its own ("und noch was: die Schultüte bastel ich mit
    Oma Gerda. erinner mich am Samstag, 4. August um 10, Pappe zu kaufen"); None when no sentence asks anything."""
    parts = [part for part in _STOP_RE.split(text.strip()) if part]
    if len(parts) < 2:
        return None
    # only a sentence that begins as a request asks ("team lunch friday at 12." after news is more news)
    parts = [part for part in parts if _REQUEST_START_RE.match(part)]
    asked = [reply for reply in _asked(chat, parts) if reply.calls and all(_names_something(c) for c in reply.calls)]
    return _merged(asked) if asked else None


def _names_something(call: tuple[str, dict]) -> bool:
    """Whether a call read from one sentence names its own thing: "ping me again monday" alone is about what the
    sentences before it named ("the parking permit"), no reminder of "again"."""
    name, args = call
    said = args.get("text") if name == "remind" else args.get("title") if name == "create_task" else None
    return said is None or bool(words(str(said)) - {"again", "nochmal", "wieder", "it", "that", "this", "das", "es"})


def _asked(chat: Chat, parts: list[str]) -> list[Reply]:
    """Each sentence read alone: what they ask for, or a word back when no sentence asks for anything."""
    replies = [r for part in parts if (r := _read(chat, request_of(part, chat.now, chat.tz))) is not None]
    return [r for r in replies if r.rule not in WORD_BACK] or replies[:1]


# "Can you add that as a task?", "please make that a task", "put it on my list": the request names what the
# sentences before it told
_ADD_THAT_RE = lazy_regex(
    r"^(?:(?:so|and|ok|okay|please|pls)[\s,]+)*(?:(?:can|could|would|will)\s+you\s+)?(?:please\s+)?"
    r"(?:add|make|put|note|keep|save|turn|write|jot)\s+(?:that|this|it)\b(?:\s+(?:as|into|in|on|to)?\s*"
    r"(?:a\s+)?(?:task|to-?do|my\s+(?:list|tasks|to-?do list)|the\s+list))?(?:\s+down)?(?:\s+somewhere)?"
    r"(?:\s+(?:please|for me))?(?:\s+and\s+(?:yeah\s+)?(?:that'?s|thats)\s+it)?[\s?.!]*$"
    # "add pls", "schreib's mir auf", "bitte notieren", "notier mir das"
    r"|^(?:please\s+|pls\s+|bitte\s+)?add(?:\s+(?:it|that|this))?(?:\s+(?:please|pls|plz|thx|thanks))?[\s.!]*$"
    r"|^(?:bitte\s+)?(?:schreib(?:'?s|\s+es|\s+das)?\s+(?:mir\s+)?(?:das\s+)?auf|notier(?:e|en)?(?:\s+(?:mir\s+)?(?:es|das))?|"
    # "Setz mir das auf die Liste", "pack das auf meine Liste"
    r"(?:setz|setze|pack|tu|schreib)(?:'?s)?\s+(?:mir\s+)?(?:das\s+|es\s+)?(?:bitte\s+)?(?:mit\s+)?auf\s+(?:die|meine)\s+"
    r"(?:liste|to-?do-?liste))"
    r"(?:\s+bitte)?[\s.!]*$",
    re.I,
)
# what the others need of the user: "They need Mira's school certificate for the child benefit"
_THEY_NEED_RE = lazy_regex(
    r"\b(?:they|he|she|it|the\s+\w+)\s+(?:need|needs|want|wants|require|requires|ask for|"
    r"asks? for|requested)\s+(?P<what>[^.!?]+)",
    re.I,
)
# what the user must do: "I also need to send him the readings", "…, have to bring it back by the 18th" (a clause of
# its own needs no "I"); "I still have Malte's beamer at home" is having, not having to
_I_NEED_RE = lazy_regex(
    r"(?:\b(?:i|we)\s+(?:also\s+|still\s+|really\s+)?(?:need(?:\s+to)?|have\s+to|must|should|got\s+to|gotta)|"
    r"(?:^|[,;]\s*)(?:need|have|got)\s+to|^\s*gotta)\s+(?P<what>[^.!?,;]+?)"
    # what happens otherwise is no part of the task: "… by June 30 or the money stops in october"
    r"(?=\s+or\s+(?:else\b|(?:the|my|our|your|it|they|i|we)\b(?:\s+\w+){0,2}\s+(?:stops?|will|won'?t|gets?|"
    r"expires?|runs?\s+out|ends?|lapses?|is\s+gone|are\s+gone)\b)|[.!?,;]|$)",
    re.I,
)
# the thing the user has, told first: "I still have Malte's beamer at home, have to bring it back …"
_HAVE_THING_RE = lazy_regex(r"\b(?:i|we)\s+(?:still\s+)?(?:have|got)\s+(?P<thing>(?:my|our|the|\w+'s)\s+[\w-]+)", re.I)
# a run-on whose last clause asks for what it told: "… I also need to send him the readings by the 20th so put
# that down somewhere"
_SO_THAT_RE = lazy_regex(r"\s+so\s+(?=(?:put|write|note|jot|add|make)\s+(?:that|this|it)\b)", re.I)


# made once, as the rules' other patterns: these are read for every message
_CLAUSE_APART_RE = lazy_regex(r"\s*[,;]\s*|\s+[-–—]\s+")
_PLS_RE = lazy_regex(r"^(?:pls|plz)\b", re.I)


def _add_that_last(text: str) -> list[str]:
    """The clauses of one sentence with the one asking to keep "it" last ("car needs its service, pls put it on my
    list, has to be done in the next 10 days"); [] when no clause but the first asks that, or the text is several
    sentences (those are read sentence by sentence)."""
    if len(sentences.split(text)) > 1:
        return []
    # clauses apart by a comma, a semicolon or a dash between spaces ("… by the 18th - put it on my list")
    clauses = [c.strip() for c in _CLAUSE_APART_RE.split(text.strip()) if c.strip()]
    asking = [c for c in clauses[1:] if _ADD_THAT_RE.match(_PLS_RE.sub("please", c))]
    if len(asking) != 1:
        return []
    return [c for c in clauses if c is not asking[0]] + [_PLS_RE.sub("please", asking[0])]


# the ask to keep it, said after what it keeps in one run: "gotta hand in my BAföG Folgeantrag by June 30 or the money
# stops in october. pls put it on my list" (no capital after the full stop, so one sentence)
_ASK_AT_END_RE = lazy_regex(
    r"[.!,;]\s*|\s+[-–—]\s+(?=(?:(?:so|and|ok|okay|please|pls|plz)[\s,]+)*(?:(?:can|could|would|will)\s+you\s+)?"
    r"(?:add|make|put|note|keep|save|write|jot)\s+(?:that|this|it)\b[^.!?]*[.!?]*$)",
    re.I,
)


def _ask_at_end(text: str) -> list[str]:
    """What was told, and the ask to keep it that ends the message; [] when it does not end with one."""
    found = list(_ASK_AT_END_RE.finditer(text.strip()))
    if not found:
        return []
    head, ask = text.strip()[: found[-1].start()], text.strip()[found[-1].end() :]
    return [head, re.sub(r"^(?:pls|plz)\b", "please", ask, flags=re.I)] if head and _ADD_THAT_RE.match(ask) else []


# a plan asked for, then what it should hold, without a capital: "… could you make me a plan for it? slides,
# Thesenpapier, the committee stuff"
_ASKED_THEN_LIST_RE = lazy_regex(r"^(?P<asked>.+\?)\s+(?P<listed>[^?.!]{3,120}?)[.!]*$", re.S)


def _asked_then_listed(chat: Chat, text: str) -> Reply | None:
    """The request up to its question mark, read alone, when what follows is a short list of things; a plan only."""
    found = _ASKED_THEN_LIST_RE.match(text.strip())
    if found is None or len(found.group("listed").split()) > 10 or "," not in found.group("listed"):
        return None
    reply = _read(chat, request_of(found.group("asked"), chat.now, chat.tz))
    return reply if reply is not None and any(name == "create_topic" for name, _ in reply.calls) else None


# what the proposal itself does, asked again after the yes: "put the ARGE stuff on my list", "add it to my to-dos"
_ON_THE_LIST_RE = lazy_regex(
    r"^(?:(?:and|so|please|pls|plz)[\s,]+)*(?:put|add|note|keep|write|stick)\s+"
    r"(?:it|that|this|them|those|(?:the|that|this)\s+(?:[\w-]+\s+){0,2}?(?:stuff|thing|one|ones|bit))\s+"
    r"(?:on|to|in)\s+(?:my|the)\s+(?:list|to-?do(?:\s+list)?|to-?dos|tasks)\b[\s.!,]*$",
    re.I,
)


def _yes_then_said(chat: Chat, text: str) -> Reply | None:
    """A yes to the proposal waiting, then more in the same breath ("ja, gerne! ferry + kids stuff, you know the
    drill", "yes. remind me to call the plumber on friday"): the yes, and what the rest asks for read on its own. None
    when the rest changes or doubts the proposal ("yes, but …", "yes? …"): other rules read those."""
    found = YES_THEN_SAID_RE.match(text)
    if found is None or short_answer(found.group("yes")) != "yes" or CHANGES_AFTER_YES_RE.search(found.group("rest")):
        return None
    decided = spoken_decision(chat, found.group("yes"))
    if decided is None or not decided.calls:
        return None  # no proposal waits, or the one waiting is not the one last asked: the yes is no answer
    if _ON_THE_LIST_RE.match(found.group("rest").strip()):
        return Reply("", decided.calls, "yes to a proposal, said on")  # "yes pls, put the ARGE stuff on my list"
    more = _read(chat, request_of(found.group("rest"), chat.now, chat.tz))
    if more is None or more.rule in WORD_BACK:
        # "ja, 18:30 in der Bibliothek passt mir. remind me tomorrow at 16:45 to …": a sentence of its own asks
        more = _asked_after_news(chat, found.group("rest")) or more
    extra = [
        call for call in (more.calls if more is not None and more.rule not in WORD_BACK else []) if call[0] != "decide"
    ]
    if extra:  # "yes, please do so" says yes twice: once is the answer
        return Reply("", decided.calls + extra, f"{decided.rule}; {more.rule}")
    return Reply("", decided.calls, "yes to a proposal, said on")


def _that_as_task(chat: Chat, parts: list[str]) -> Reply | None:
    """ "… They need Mira's certificate. Deadline is 12 February. Can you add that as a task?": one task, what the
    sentences before it ask of the user, due on the day they name."""
    if len(parts) < 2 or not _ADD_THAT_RE.match(parts[-1].strip()):
        return None
    told = ", ".join(parts[:-1])
    if only_agreeing(normal(told)):
        return None  # "sounds good, add it pls": a yes to the proposal waiting, not a task called "Sounds good"
    # "… Sehtest und Gutachten bis Ende April bei der Behörde abgeben. Setz mir das auf die Liste": the one German
    # to-do with its day is the task, whatever the sentences around it tell
    dated_todos = [
        (todo, days[0])
        for part in parts[:-1]
        if (todo := acts.german_todo(part)) is not None and (days := dates.search(part, chat.now, chat.tz))
    ]
    if len(dated_todos) == 1:
        todo, day = dated_todos[0]
        # the day out of the title, with its "bis": "Sehtest … bis Ende April bei der Behörde abgeben"
        todo = re.sub(
            rf"\s*\b(?:bis\s+(?:zum\s+|spätestens\s+)?|spätestens\s+(?:am\s+|bis\s+)?)?{re.escape(day.phrase)}\.?",
            "",
            todo,
            flags=re.I,
        )
        return Reply(
            "",
            [("create_task", {"title": _title(todo), "due": dates.iso(day.value)})],
            "a German to-do, asked for as “das”",
        )
    them, me = _THEY_NEED_RE.search(told), _I_NEED_RE.search(told)
    what = (f"send {them.group('what')}" if them else me.group("what") if me else _the_told(parts[0])).strip(" ,.;")
    thing = _HAVE_THING_RE.search(told)
    if me and thing and re.search(r"\b(?:it|them)\b", what):  # "bring it back": the beamer
        what = re.sub(r"\b(?:it|them)\b", thing.group("thing"), what, count=1)
    what, _ = _split_when(what, chat)
    found = dates.search(told, chat.now, chat.tz)
    args = {"title": _title(what)}
    if found:
        cued = [
            f
            for f in found
            if re.search(r"\b(?:due|by|before|until|deadline|latest)\b[^.!?]{0,25}$", told[: f.start], re.I)
        ]
        day = (cued or found)[0]
        args["due"] = dates.iso(_eve_if_before(day, told[: day.start]) if cued else day.value)
    return Reply("", [("create_task", args)], "a task of what the message told, asked for as “that”")


def _eve_if_before(day: dates.Found, said_before: str):
    """A day said after "before" ("before the 12th of March") is done by the day before it; a time of day, or
    a day after any other word, is what it says."""
    if not isinstance(day.value, datetime) and re.search(r"\bbefore\s+(?:the\s+)?$", said_before, re.I):
        return day.value - timedelta(days=1)
    return day.value


def _the_told(told: str) -> str:
    """What a line told that the user keeps, without what the thing does meanwhile ("…, it has to be at the
    Elterngeldstelle by the 26th"): "need HR to fill in the form" is getting HR to."""
    what = _ABOUT_IT_RE.split(told, maxsplit=1)[0]
    return re.sub(r"^\s*need\s+(?!to\b)", "get ", what, flags=re.I)


# a request in the middle of a run-on ("ok so the thing is … so could you add a task to … because otherwise …"): from
# its asking words to the reason said after it
_BURIED_RE = lazy_regex(
    r"\b(?:(?:can|could|would|will)\s+(?:you|u)\s+(?:please\s+|just\s+)?|please\s+|pls\s+)"
    r"(?=(?:add|remind me|put|set up|make|create|note|move|push|snooze|drop|cancel)\b)|\bremind me\b|"
    r"\badd (?:a )?task\b",
    re.I,
)
_REASON_AFTER_RE = lazy_regex(
    r"[\s,]+(?:because|cause|'cause|cos|since|as otherwise|otherwise|so that|or else|"
    r"so i (?:don'?t|won'?t)|coz)\b.*$",
    re.I | re.S,
)


def _buried(chat: Chat, text: str) -> Reply | None:
    """The request buried in a long message, read alone; None when there is none, or it changes nothing."""
    found = _BURIED_RE.search(text, 1) if len(text) > 60 else None
    if found is None:
        return None
    asked = _REASON_AFTER_RE.sub("", text[found.start() :]).strip(" ,.;")
    reply = _read(chat, request_of(asked, chat.now, chat.tz))
    return reply if reply is not None and reply.calls else None


# where a reason ends and the request after it begins: "I sold the car last week so forget about renewing the
# insurance", "he'll do the wiring, so take the quotes off my list pls"
_SO_RE = lazy_regex(r"\s*[,;]?\s+(?:and\s+)?so\s+(?=[a-z])|\s*;\s*|\s+-+\s+", re.I)


def _clause_asked(chat: Chat, text: str) -> Reply | None:
    """The one clause of a message that asks for a change, read alone, when the whole was not understood; None when
    no clause, or more than one, asks for one (which one is then not guessed)."""
    clauses = [c for c in _SO_RE.split(text.strip()) if c and c.strip(" .!")]
    if len(clauses) < 2:
        return None
    asked = [r for c in clauses if (r := _read(chat, request_of(c, chat.now, chat.tz))) is not None and r.calls]
    return asked[0] if len(asked) == 1 and all(n != "decide" for n, _ in asked[0].calls) else None


# news that an open topic's event will not happen: "porto's cancelled, the airline went bust", "Greta called off the
# wedding 😢", "Lotte has chickenpox, the party's off", "no exam for me"
_CALLED_OFF_RE = lazy_regex(
    r"\b(?:(?:is|was|got|been|'s|has been)\s+(?:cancell?ed|called off|off)|called\s+(?:[\w'’]+\s+){0,3}?off|cancell?ed|"
    # "we're not moving after all", "not going to Porto after all"
    r"not\s+(?:\w+ing)\b[^.!?]{0,40}\bafter\s+all|"
    r"(?:is|'s)\s+not happening|won'?t happen|fell through|no\s+\w+\s+for\s+(?:me|us)|so\s+no\s+\w+|"
    r"decided not to|is dead|(?:ist|wurde)\s+(?:abgesagt|gestorben|geplatzt)|fällt\s+(?:\w+\s+){0,3}aus|"
    r"fällt\s+(?:\w+\s+){0,2}(?:flach|ins\s+wasser)|"
    r"findet\s+(?:\w+\s+)?nicht\s+statt)\b",
    re.I,
)
# the question that asks for the plan's end: "… kannst du alles dazu streichen?", "can you cancel all of it?"
_END_IT_ASKED_RE = lazy_regex(
    r"\b(?:kannst du|könntest du|can you|could you)\b[^.!?]*\b(?:streichen|löschen|absagen|rausnehmen|cancel|drop|"
    r"delete|remove|close|scrap)\b[^.!?]*\?\s*$",
    re.I,
)


# "Tom's wedding is on June 3 but we can't go": an event the user will not be at, no plan
_NOT_GOING_RE = lazy_regex(
    r"\b(?:i|we)\s+(?:can'?t|cannot|won'?t|will\s+not|are\s+not|'re\s+not|am\s+not|'m\s+not)\s+"
    r"(?:go|going|come|coming|make\s+it|attend|attending|be\s+there)\b",
    re.I,
)
# "so no wedding in may", "no trip to Rome this year": an event said not to be, no plan
_NO_EVENT_RE = lazy_regex(
    r"^\s*(?:so\s+|and\s+|then\s+|well\s+)?no\s+(?:more\s+)?[^\W\d_]{3,}\b(?!\s+(?:later|sooner)\b)", re.I
)


def _stem(word: str) -> str:
    """ "moving" (read as "mov") and "move" alike: a verb's -ing or -e off, when three letters stay."""
    stem = re.sub(r"(?:ing|e)$", "", word)
    return stem if len(stem) >= 3 else word


def _event_word(title: str) -> set[str]:
    """The word a topic's title begins with, as a stem ("Move to Leipzig" → "mov"), when it names the event."""
    first = re.match(r"[^\W\d_]{3,}", title.lower())
    return {_stem(first.group(0))} if first and first.group(0) in ("move", "trip", "wedding", "exam") else set()


def _called_off(chat: Chat, text: str) -> Reply | None:
    """An open topic named in news that it is off: a proposal to close it."""
    if not _CALLED_OFF_RE.search(text) or text.rstrip().endswith("?") and not _END_IT_ASKED_RE.search(text):
        return None
    said = words(text)

    def named_in_text(title: str) -> bool:
        return any(
            w == x or len(x) >= 4 and (w.startswith(x) or x.startswith(w)) or _cognate(w, x)
            for w in words(title)
            for x in said
        ) or bool(  # "we're not moving after all" of "Move to Leipzig": the event's own word, which names no task
            _event_word(title) & {_stem(w) for w in re.findall(r"[^\W\d_]{3,}", text.lower())}
        )

    fitting = [t for t in chat.topics if t.get("status") != "closed" and named_in_text(str(t.get("title")))]
    if not fitting:
        return _plan_called_off(chat, said)
    if len(fitting) > 1:
        # "Greta called off the wedding" with two weddings open: the one whose title names more of what is said
        def named(topic: dict) -> int:
            told = set(words(str(topic.get("title"))))
            return sum(x in told for x in set(said))

        best = max(named(t) for t in fitting)
        fitting = [t for t in fitting if named(t) == best]
    if len(fitting) != 1:
        return None
    return Reply("", [("close_topic", {"topic_id": fitting[0].get("id")})], "a topic's event called off")


def _cognate(a: str, b: str) -> bool:
    """A long word and its twin in another language or spelling, two edits apart ("Scotland", "Schottland"; not
    "contest" and "concert")."""
    return min(len(a), len(b)) >= 8 and distance(a, b, cutoff=2) <= 2


# the kind of event a title names, which says nothing of which one: "the school trip is off" is no word about the
# "Trip to Japan" still waiting for an answer
_EVENT_KINDS = frozenset(
    {
        "trip", "travel", "journey", "holiday", "vacation", "visit", "wedding", "move", "exam", "party", "birthday",
        "conference", "appointment", "meeting", "class", "course", "concert", "reise", "urlaub", "hochzeit", "umzug",
        "prüfung", "termin", "feier", "besuch",
    }
)  # fmt: skip


def _plan_called_off(chat: Chat, said: set[str]) -> Reply | None:
    """ "the Scotland trip is off" while the plan for it still waits for an answer: no to that plan, whole. The news
    must name the plan by a word of its own (a place, a name), the same or its twin in another language: a decision
    is taken here, with no proposal to look at first."""
    if "decide" not in chat.offered:
        return None

    def named(title: str) -> bool:
        return any(w == x or _cognate(w, x) for w in words(title) - _EVENT_KINDS for x in said)

    plans = [
        p
        for p in chat.pending
        if isinstance(p, dict)
        and any(
            (title := planned_topic(i)) is not None and named(title)
            for i in p.get("items") or []
            if isinstance(i, dict)
        )
    ]
    if len(plans) != 1:
        return None
    return Reply("", [("decide", {"proposal": plans[0]["id"], "action": "reject"})], "a planned event called off")


def _merged(asked: list[Reply]) -> Reply:
    """The sentences' answers as one: their changes in one proposal, their words once each."""
    calls = [call for r in asked for call in r.calls]
    texts = list(dict.fromkeys(r.text for r in asked if r.text))
    return Reply("\n\n".join(texts), calls, "; ".join(dict.fromkeys(r.rule for r in asked)) + " (sentence by sentence)")


# "Reminder: your library books are due back on 12 January": a deadline told, kept as a task
_DUE_SAID_RE = lazy_regex(
    r"^(?:(?:reminder|note|fyi|heads[- ]up|ps)\s*[:\-–]\s*)?(?:my|your|the|our)\s+"
    r"(?P<thing>[\w' -]{2,40}?)\s+(?:is|are)\s+(?:due|to be returned|expiring|expires?)"
    r"(?P<back>\s+back)?\b",
    re.I,
)


def _deadline_said(chat: Chat, text: str) -> Reply | None:
    found = _DUE_SAID_RE.match(text.strip())
    when = dates.search(text, chat.now, chat.tz) if found else []
    if not when:
        return None
    thing = found.group("thing").strip()
    task = _task_named(chat, thing)
    if task is not None and covers(words(thing), words(str(task.get("title")))):
        # "the library books are due on Monday now": the task there is moved, not made again
        return Reply(
            "",
            [("update_task", {"task_id": task.get("id"), "due": dates.iso(when[0].value)})],
            f"a task's new deadline told ({when[0].stated(chat.tz)})",
        )
    title = ("Return " + thing) if found.group("back") else f"{thing[:1].upper()}{thing[1:]} due"
    return Reply(
        "",
        [("create_task", {"title": title, "due": dates.iso(when[0].value)})],
        f"a deadline told ({when[0].stated(chat.tz)})",
    )


def _thing_due(chat: Chat, text: str) -> Reply | None:
    """ "expense report by friday", "Wohngeldantrag bis zum 15.": a thing and its day, no verb, is a task due then
    (wilson/model/offline/due_by.py); a task it names already gets the day instead."""
    found = due_by.thing_due(text, chat.now, chat.tz)
    if found is None or _someone_elses(chat, text):
        return None
    listed = re.match(
        r"(?:put|add)\s+(?P<what>.+?)\s+(?:on|to)\s+(?:my|the|our)\s+(?:to-?do\s+)?list$", found.title, re.I
    )
    if listed or acts.act(found.title):  # "put renew the ID card on my list, due Monday": the act, due then
        return _add(chat, f"add {listed.group('what') if listed else found.title} {found.when.phrase}")
    task = _task_named(chat, found.title)
    if task is not None and covers(words(found.title), words(str(task.get("title")))):
        return Reply(
            "",
            [("update_task", {"task_id": task.get("id"), "due": dates.iso(found.when.value)})],
            f"a task's day told ({found.when.stated(chat.tz)})",
        )
    title = re.sub(r"^need\s+(?!to\b)", "Get ", found.title, flags=re.I)  # "need a new Rezept …": get one
    return Reply(
        "",
        [("create_task", {"title": title, "due": dates.iso(found.when.value)})],
        f"a thing to do by a day ({found.when.stated(chat.tz)})",
    )


def _once(text: str) -> str:
    """No paragraph said twice in one message."""
    return "\n\n".join(dict.fromkeys(text.split("\n\n"))) if text else text


# News told, not a request: "Anna is going to Rome on Friday", "ugh, it's raining again", "my boss says it went
# well". A statement begins with who or what it is about; a question, or a request that no rule follows ("book
# me a table"), gets the honest help instead.
_STATEMENT_RE = lazy_regex(
    r"^(?:(?:ugh|oh|ah|well|so|wow|yay|hmm|argh|phew|btw)\b[\s,!.]*)*"
    r"(?:(?:i|we|he|she|they|it|there|that|this|my|our|his|her|their|the|today|yesterday|"
    r"tonight|tomorrow)\b|(?:i'm|i've|i'd|i'll|we're|we've|it's|that's|there's|he's|she's|"
    # "Malte's in Munich for work": a name and its "is"
    r"they're)\b|[A-Z][\w-]*'s\s+(?:in|at|away|off|out|back|home|on|with|flying|going|driving|travell?ing)\b|"
    # and in German: "mein Kollege Yusuf macht nächsten Monat seine Prüfung"
    r"(?:mein|meine|unser|unsere|ich|wir|er|sie|es|das|der|die|heute|gestern)\s+\w+(?:\s+\w+){1,}|"
    # "Anna fliegt am Freitag nach Rom": a name and what they do, in German
    r"[A-Z][\w-]*\s+(?:fliegt|fährt|reist|zieht|heiratet|hat|ist|war|geht|kommt|macht|wird)\b|"
    r"[A-Z][\w-]*(?:\s+[A-Z][\w-]*)?\s+(?:is|are|was|were|has|had|says|said|will|"
    r"just|called|wrote|texted|got|went|came|comes|left|flies|leaves|starts|goes|travels|moves|"
    r"visits|arrives|'s)\b"
    # "Sarah's party was great", "the car broke down": a thing named, then what it did
    r"|(?:[\w'-]+\s+){1,3}?(?:is|are|was|were|has|had|broke|went|got|came|arrived|left|"
    r"called|said|says|looks|seems|feels|didn't|doesn't|isn't|wasn't|won't|can't|"
    # "Amina's parents land on 14 June": others coming and going
    r"land|lands|fly|flies|flew|arrive|arrives|come|comes|visit|visits|leave|leaves|start|starts|goes|moves|"
    r"travels)\b)",
    re.I,
)
_ASKING_RE = lazy_regex(
    r"\?\s*$|^\s*(?:what|when|where|who|why|how|which|can|could|would|will|do|does|did|is|are|"
    r"should|shall|may|might)\b",
    re.I,
)


# a request's first words, which no news begins with: such a message no rule followed gets the honest help
_ASKS_FOR_RE = lazy_regex(
    r"^\s*(?:please\s+)?(?:remind|add|move|push|snooze|drop|cancel|delete|remove|mark|rename|close|"
    r"put|set|create|make|schedule|book|find|get|show|list|tell|send|write|check|give|let|help|"
    r"plan|organi[sz]e|sort|turn|stop|start|change|update|call|email|text|order|buy)\b"
    r"|\b(?:remind me|make it|add|move it|push it|snooze)\b",
    re.I,
)
# what news has and a request an offline rule does not know ("blorp the frobnicator") has not: someone it is about,
# a thing that happened, or a day
_NEWS_SIGN_RE = lazy_regex(
    r"\b(?:i|i'm|i've|my|we|we're|our|he|she|they|his|her|their|[a-z]{3,}ed|[a-z]{3,}ing|day|"
    r"sent|paid|bought|got|went|made|did|took|gave|told|left|brought|found|lost|won|sold|"
    r"will|was|were|is|are|has|have|had|"
    r"week|morning|evening|night|today|yesterday|tonight|weekend)\b",
    re.I,
)


_THANKED_RE = lazy_regex(
    r"\b(?:thank you|thanks|appreciate it|a big help|you'?ve been (?:great|brilliant|so helpful))\b", re.I
)


_WHAT_IF_RE = lazy_regex(r"(?:(?:and|but|so|hmm+|well)[\s,]+)*what if\b", re.I)


def _musing(text: str) -> Reply | None:
    """What asks for nothing, in the shapes `_statement` does not take: "what if I moved to Lisbon, would that be
    crazy?" (a thought, not a question Wilson could answer), "went to the dentist before Christmas, all fine" (the
    past), and thanks said at length ("you've been a big help this morning, thank you so much …")."""
    said = text.strip().replace("’", "'")
    if _THANKED_RE.search(said) and not _ASKS_FOR_RE.search(said) and not _BURIED_RE.search(said):
        return Reply("You're welcome! Nothing was changed.", [], "thanks")
    what_if = _WHAT_IF_RE.match(said)
    if what_if or _PAST_OR_NOT_RE.match(said) and not _ASKING_RE.search(said):
        return Reply(
            "Thanks for telling me. I'm running offline, so I only act on requests like “add …” or “remind me "
            "…”. Nothing was changed.",
            [],
            "news, no request",
        )
    return None


def _statement(text: str) -> Reply | None:
    """News told, not a request: a statement that begins as news does ("Anna is going to Rome on Friday"), or any
    few words that neither ask a question nor begin as a request ("long day at work", "just landed in Lisbon")."""
    said = text.strip().replace("’", "'")
    if len(said.split()) < 3 or _ASKING_RE.search(said):  # "that's all" tells nothing
        return None
    if not _STATEMENT_RE.match(said) and (
        len(said.split()) > 30 or _ASKS_FOR_RE.search(said) or acts.act(said) or not _NEWS_SIGN_RE.search(said)
    ):
        return None
    return Reply(
        "Thanks for telling me. I'm running offline, so I only act on requests like “add …” or “remind me "
        "…”. Nothing was changed.",
        [],
        "news, no request",
    )


# a few more things people say that ask for nothing but a word back, matched whole (after `normal`)
_WORD_BACK = [
    (lazy_regex(r"^(?:knock knock|guess what|tell me a joke|did you know)$"), "🙂 Go on!"),
    (
        lazy_regex(
            r"^(?:(?:hey|hi|hello|wilson)\s+)*(?:are you there|you there|anyone there|are you awake|are you on|"
            r"are you working|still there)(?:\s+wilson)?$"
        ),
        "Yes, I'm here (running offline). {TRY}",
    ),
    (
        lazy_regex(
            r"^(?:(?:honestly|seriously|really|tbh)\s+)?(?:good job|well done|nice one|great job|good work|you'?re the best|you rock|love you|"
            r"(?:you'?re|you are) (?:a |an |the |my )?(?:star|legend|lifesaver|life saver|hero|genius|gem|"
            r"amazing|awesome|brilliant|great|wonderful|fantastic)|"
            r"i love you)(?:\s+(?:wilson|thanks|thank you|again|honestly|really|seriously|tbh|truly))*$"
        ),
        "Thank you!",
    ),
    (lazy_regex(r"^(?:you'?re welcome|no problem|no worries|np|anytime|any time)(?:\s+(?:wilson|mate))?$"), "🙂"),
    (
        lazy_regex(
            r"^(?:sorry|my bad|my mistake|oops|whoops)(?:\s+(?:my bad|my mistake|about that|wilson|that was me))*$"
        ),
        "No problem.",
    ),
    (
        lazy_regex(
            r"^(?:lol|haha+|hehe+|wow|yay|phew|what a day|can'?t wait(?: for [\w' ]+)?|"
            r"(?:tgif|finally friday))(?:\s+(?:that'?s|so|very|too|really)?\s*(?:funny|good|great|cool|nice|"
            r"amazing|hilarious))?$"
        ),
        "🙂",
    ),
    # thinking it over, or a sigh: nothing to do
    (lazy_regex(r"^(?:ugh+|meh|oh well|(?:ugh+|oh)\s+(?:mondays|monday|again|well|man))$"), "Hang in there!"),
    (
        lazy_regex(
            r"^(?:h+m+|oh|ah|hmm+ ok|hm+ let me see|maybe(?: later| tomorrow)?|not sure(?: yet)?|"
            r"let me think(?: about it)?|i'?ll think about it|i don'?t know|dunno|idk|nothing|"
            r"nothing(?: really)?(?: forget it| never mind)?|no idea)$"
        ),
        "Take your time. Nothing was changed.",
    ),
    (
        lazy_regex(r"^(?:you'?re|you are) (?:useless|stupid|dumb|no help|not helpful|annoying)|^you suck"),
        "Sorry about that. I'm running offline, so I only follow simple requests. {TRY}",
    ),
]
HOW_ARE_YOU_RE = lazy_regex(
    r"^(?:(?:hi|hey|hello|so|and|hallo)[\s,]+)*(?:how are you|how are things|how's it going|how is it going|"
    r"wie geht'?s(?: dir| euch)?|wie geht es dir|"
    r"how'?s your day|how is your day|how was your day|"
    r"how are you doing|how do you do|how have you been|you ok|all good|how you doing|how are you holding up|"
    # "you doing ok today?", "Are you doing alright, Wilson?", "everything good with you?"
    r"(?:are\s+)?you\s+(?:doing|feeling|keeping)\s+(?:ok|okay|alright|all right|well|good|fine)|are you (?:ok|okay|"
    r"alright|all right|well|good)|everything (?:ok|okay|alright|good|fine) with you|how(?:'s| is) (?:life|everything))"
    r"\b[\s\w,]{0,20}[?!.]*$",
    re.I,
)
APPROVE_RE = lazy_regex(r"^(?:approve|approved|accept)(?: (?:it|all|that|this|them|all of it))?$")


_LAUGH_RE = lazy_regex(r"^\s*(?:(?:ha(?:ha)+|he(?:he)+|lol|lmao|aww+|omg)\b[\s,!.]*)+", re.I)

TWO_REQUESTS = "two requests in one message"


def _one_at_a_time(text: str) -> Reply | None:
    """Two requests in one message: both are asked for again, one per message, rather than one proposed and the
    other lost in it (or in its title). None when there is one."""
    second = SECOND_REQUEST_RE.search(text, 1)
    if second is None:
        return None
    cut = second.start("cut") if second.start("cut") >= 0 else second.start()  # after the first request's day
    first, rest = text[:cut].strip(" ,;.!?"), text[cut:].strip(" ,;.!?")
    rest = re.sub(r"^(?:(?:and|also|then|please|pls)\s+)+", "", rest, flags=re.I)
    return Reply(
        f"That's two requests in one message, and I follow one at a time. Please send them one by one: "
        f"“{first}”, then “{rest}”. Nothing was changed.",
        [],
        TWO_REQUESTS,
    )


def _no_to_nothing(chat: Chat, text: str) -> Reply | None:
    """ "yes", "no, forget it" or "approve" with no proposal waiting: an honest word, not a search for a task
    called "it" nor "I didn't understand"."""
    said = normal(text)
    short = short_answer(said)  # "yse", "noo"
    yes = (YES_RE.match(said) or short == "yes") and not ACK_RE.match(text)  # "ok" alone is an acknowledgement: 👍
    because = NO_BECAUSE_RE.match(text.strip())  # "no, I already did that"
    no_because = because is not None and short_answer(because.group("no")) == "no"
    if (yes or NO_RE.match(said) or short == "no" or no_because or APPROVE_RE.match(said)) and not any(
        isinstance(p, dict) and p.get("items") for p in chat.pending
    ):
        return Reply(
            "There's no proposal of mine waiting for an answer, so nothing was changed.",
            [],
            "an answer with nothing pending",
        )
    return None


def _time_asked(chat: Chat, text: str) -> Reply | None:
    """ "What time is it?", "what's the date?": the run's own clock says (the context's now, in the user's
    timezone), never the machine's."""
    if not CLOCK_RE.match(normal(text)):
        return None
    local = chat.now.astimezone(chat.tz)
    return Reply(f"It's {local:%H:%M} on {local:%A} {local.day} {local:%B}.", [], "the time and day")


def _on_it(text: str) -> Reply | None:
    if is_on_it(text):  # the acknowledgement itself is recorded by code (actors/attention.py record_ack)
        return Reply("Great — I won't chase you about it again until the next reminder.", [], "acknowledgement")
    return None


# what is said beside a done that names no task: "…, all sorted", "… this morning", "… online"
_DONE_TAIL_RE = lazy_regex(
    r"(?:[,;]?\s+(?:all|it'?s|that'?s|now|finally|already)?\s*(?:sorted|done|finished|handled|taken care of)"
    r"|\s+(?:this|yesterday|last)\s+(?:morning|afternoon|evening|night|week)|\s+yesterday|\s+today|"
    r"\s+online|\s+at last|\s+finally)+\s*[.!]*$",
    re.I,
)
# a done said in a clause of a longer message: "the handyman came round yesterday and fixed the tap", "finally got
# rid of netflix so the streaming sub is cancelled", "Fahrstunde ist gebucht, driving lesson booked for thursday"
# clauses of one message, also ones typed without a capital after their stop ("Pflegeplanung abgegeben!!! printed
# twice and signed")
_CLAUSE_RE = lazy_regex(r"\s*(?:[,;]\s*(?:and\s+|so\s+|but\s+)?|[.!?]+\s+(?=[a-zäöü])|\s+(?:and|so|but)\s+)")


_AFTER_STOP_RE = lazy_regex(r"(?<=[.!?])\s+")


def _done(chat: Chat, text: str) -> Reply | None:
    """A task done, said of the whole message or of one of its clauses."""
    if REMIND_RE.match(text):  # "remind me in 3 hours to check whether the client has paid": asks, tells nothing done
        return None
    held = _PUT_OFF_WORDS_RE.search(text)
    if held is not None and held.group("when2") and _OVER_BY_RE.search(text[held.start("when2") :]):
        return None  # "leave the bafög thing alone till my exams are done": the exams done is when, not a task done
    # sentences as people type them, lower case after the stop too
    parts = [p for p in _AFTER_STOP_RE.split(text.strip()) if p] if not text.rstrip().endswith("?") else []
    if len(parts) > 1:  # "visa application is submitted!! … and the travel health insurance is done too": each
        each = [_done_said(chat, p) or done_in_words.done_in_any_verb(chat, p) for p in parts]
        done = [r for r in each if r is not None and r.calls]
        calls = [c for r in done for c in r.calls]
        if len(done) > 1 and len({str(c) for c in calls}) == len(calls):
            return Reply("", calls, "done with tasks, sentence by sentence")
    reply = _done_said(chat, text) or done_in_words.done_in_any_verb(chat, text)
    if reply is not None or text.rstrip().endswith("?"):
        return reply
    reply = _done_plainly(chat, text)
    if reply is not None:
        return reply
    tail = _DONE_TAIL_RE.sub("", text)
    if tail != text and tail.strip():
        reply = _done_said(chat, tail)
        if reply is not None and reply.calls:
            return reply
    clauses = [c for c in _CLAUSE_RE.split(text) if c and len(c.split()) >= 2]
    for clause in reversed(clauses) if len(clauses) > 1 else ():
        clause = _DONE_TAIL_RE.sub("", clause) or clause
        reply = _done_said(chat, clause) or done_in_words.done_in_any_verb(chat, clause) or _done_plainly(chat, clause)
        if reply is not None and reply.calls:
            return reply
    return None


def _done_plainly(chat: Chat, text: str) -> Reply | None:
    """A deed said as people say it ("just got off the phone with the chimney sweep", "the winter tyres are on"),
    read in the words its task is written with; None unless that names one open task done."""
    plain = done_in_words.plainly(text)
    reply = None
    if plain != text:
        reply = _done_said(chat, plain) or done_in_words.done_in_any_verb(chat, plain)
    reply = reply or done_in_words.in_state(chat, plain)
    return reply if reply is not None and reply.calls else None


_DENIED_RE = lazy_regex(r"n't\b|\b(?:not|never|nicht|noch|kein|keine|nie)\b", re.I)


def _done_said(chat: Chat, text: str) -> Reply | None:
    for pattern in DONE_RES:
        found = pattern.match(text)
        if found and _DENIED_RE.search(found.group("what")):
            return None  # "Flüge sind nicht gebucht", "Flüge habe ich noch nicht gebucht": not done
        if found:
            what = found.group("what")
            # a German compound joined by a hyphen names its parts: "Kita-Antrag" is the Kita application
            task = _task_named(chat, what) or ("-" in what and _task_named(chat, what.replace("-", " "))) or None
            if task is not None:
                return Reply("", [("complete_task", {"task_id": task.get("id")})], "done with a task")
            return done_pending(chat, found.group("what")) or Reply(
                f"I couldn't tell which task you mean, so nothing was changed. {looks.task_list(chat)}",
                [],
                "done with an unknown task",
            )
    text = text.replace("’", "'")  # a phone's apostrophe: "I’ve paid the rent"
    text = _GOT_IT_DONE_RE.sub(lambda m: f"{m.group('who')} {m.group('verb')} {m.group('what')}", text)
    found = None if text.rstrip().endswith("?") else PAST_DONE_RE.match(text) or PARTICIPLE_DONE_RE.match(text)
    task = _task_done_by(chat, found.group("what"), DONE_VERBS[found.group("verb").lower()]) if found else None
    if task is None:
        return None
    title = str(task.get("title"))
    # the task's own verb ("paid" finishes "Pay rent", not "Check the rent"), and words that name the task and
    # little else: "I got an email from the school about the trip" is news, not the trip done; "I booked a
    # dentist appointment for Tuesday", naming no task, may be a plan to make
    named = {w for w in title.split()[1:] if w[:1].isupper()}  # "Pay Anna": "Anna paid" is Anna paying
    said = found.group("what").split()
    # a name said alone is who did it; "the Leipzig train tickets are bought" names a thing
    if found.re.pattern == PARTICIPLE_DONE_RE.pattern and named & set(said) and all(w[:1].isupper() for w in said):
        return None
    verb = DONE_VERBS[found.group("verb").lower()]
    # the task's own words, and its topic's ("flights to Lisbon" of "Book flights" for the Lisbon trip); a place
    # said ("to Porto") must be the task's or its topic's
    own = words(title) | words(str(task.get("topic") or ""))
    # ("sent it to Priya" names a person, not a place)
    places_said = words(
        " ".join(n for n in re.findall(r"\bto\s+([A-ZÄÖÜ][\w-]+)", found.group("what")) if places.named(n))
    )
    if (
        (title.split() or [""])[0].lower() in _SAME_DONE.get(verb, {verb})
        and len(words(found.group("what")) - own) <= 1
        and places_said <= own
    ):
        return Reply("", [("complete_task", {"task_id": task.get("id")})], "done with a task, in the past tense")
    return None


# "I got the passport renewed" is "I renewed the passport" (the verb checked against the task's as any past tense)
_GOT_IT_DONE_RE = lazy_regex(
    r"^\s*(?P<who>i|we)(?:'ve| have)?\s+(?:finally\s+|just\s+)?(?:got|had)\s+(?P<what>.+?)\s+"
    r"(?P<verb>" + "|".join(v for v in DONE_VERBS if " " not in v) + r")\s*[.!]*$",
    re.I,
)


def _task_done_by(chat: Chat, what: str, verb: str) -> dict | None:
    """The task the words name, among those the verb finishes first ("returned the books": "Return the library
    books", not "Book hotel" whose verb is a word of it); any task the words name when none has that verb."""
    finishes = _SAME_DONE.get(verb, {verb})
    fitting = [
        t
        for t in chat.tasks
        if t.get("status", "open") == "open" and (str(t.get("title") or "").split() or [""])[0].lower() in finishes
    ]
    return best(fitting, words(what)) or _in_its_topic(fitting, words(what)) or _task_named(chat, what)


def _in_its_topic(tasks: list[dict], wanted: set[str]) -> dict | None:
    """The one task (of those the verb finishes) that the words name with its topic's: "registered for PyCon" is
    "Register and get your ticket" of PyCon Italia."""
    named = [t for t in tasks if wanted and wanted <= words(f"{t.get('title') or ''} {t.get('topic') or ''}")]
    return named[0] if len(named) == 1 else None


# verbs that finish one another's tasks: "got the gift" is "Buy a gift" done
_SAME_DONE = {
    "drop": {"drop", "return", "bring", "hand", "deliver", "send"},
    "bring": {"bring", "return"},
    "hand": {"hand", "return", "submit"},
    "get": {"get", "buy", "pick", "collect", "order"},
    "buy": {"buy", "get", "book"},  # "the train tickets are bought" is "Book train tickets" done
    # "visa application is submitted" is past "Check visa and entry requirements": its requirements were met
    "submit": {"submit", "hand", "send", "check", "apply"},
    "apply": {"apply", "submit", "check"},
    "pick": {"pick", "get", "collect", "buy"},
    "collect": {"collect", "pick", "get"},
    "call": {"call", "phone", "ring"},
}


# the schedule said first: "on the first of every month remind me to …", "every sunday evening at 9pm nudge me to …"
_SCHEDULE_FIRST_RE = lazy_regex(
    r"^\s*(?P<when>(?:on\s+|at\s+)?(?:the\s+\w+\s+of\s+)?(?:every|each)\b.+?)[\s,]+(?:please\s+)?"
    r"(?:remind|nudge|ping)\s+me\s+(?P<what>.+?)\s*[.!]*$",
    re.I,
)


def _recurring(chat: Chat, text: str) -> Reply | None:
    found = REMIND_RE.match(text)
    rest = found.group("rest") if found else None
    # the schedule first, as the user said it (the request read from it may have made "every month" a day)
    first = _SCHEDULE_FIRST_RE.match(text) or _SCHEDULE_FIRST_RE.match(chat.text.strip())
    if first is not None:
        rest = f"{first.group('what')} {first.group('when')}"
    rest = repeats.german(rest or text) or rest  # "(erinner mich) jeden Donnerstag um 18 Uhr an die Biotonne"
    reading = repeats.read(rest, chat.now, chat.tz) if rest else None
    if reading is None:
        return None
    if reading.question:  # never set once, nor as a schedule it is not
        return Reply(f"{reading.question} Nothing was set.", [], "a repeating reminder the offline rules cannot set")
    return Reply("", [("create_reminder", {"text": reading.what, "cron": reading.cron})], "recurring reminder")


# a task named, then when to bring it up again: "coffee machine descaling: later, bug me about it in 3 days", "Kita
# survey not today, ask me again tomorrow", "remind me again in 3 days about the Kita survey"
_ASK_AGAIN_RE = lazy_regex(
    r"^(?P<what>[^:,;]+?)\s*(?:[:,;–-]\s*)?(?:(?:later|not\s+(?:today|now|yet|this\s+week)|maybe\s+later)[\s,]*)?"
    r"(?:please\s+)?(?:bug|ask|remind|ping|nudge)\s+me\s+(?:about\s+(?:it|that|this)\s+)?(?:again\s+)?"
    r"(?P<when>(?:in|on|at|next|tomorrow|tonight|after|this)\b.*?)[\s.!]*$"
    r"|^(?:please\s+)?(?:bug|ask|remind|ping|nudge)\s+me\s+again\s+(?P<when2>.+?)\s+(?:about|of)\s+"
    r"(?:the\s+)?(?P<what2>.+?)[\s.!]*$"
    # "ask me again about the brandauer meeting on thursday": the task, then when
    r"|^(?:please\s+)?(?:bug|ask|remind|ping|nudge)\s+me\s+(?:again\s+)?(?:about|of)\s+(?:the\s+)?(?P<what3>.+?)\s+"
    r"(?:again\s+)?(?P<when3>(?:on|in|at|next|tomorrow|tonight|after|this)\b.*?)[\s.!]*$",
    re.I,
)
# "the passport can sit for now", "the cake can wait a bit": said before when to bring it up, and no part of its name
_CAN_SIT_RE = lazy_regex(
    r"\s+(?:can|could|will|may)\s+(?:sit|wait|keep)(?:\s+(?:for\s+now|a\s+bit|a\s+while|for\s+a\s+(?:bit|while)))?$",
    re.I,
)


def _asked_again(chat: Chat, text: str) -> Reply | None:
    """A task to be brought up again later, said with the task first or last: its snooze until then."""
    found = _ASK_AGAIN_RE.match(text.strip())
    if found is None:
        return None
    what = _CAN_SIT_RE.sub("", found.group("what") or found.group("what2") or found.group("what3"))
    said_when = found.group("when") or found.group("when2") or found.group("when3")
    return _put_off_until(chat, what, said_when, "a task to bring up again")


def _put_off_until(chat: Chat, what: str, said_when: str, why: str) -> Reply | None:
    """The open task `what` names (every word of it in its title), put off until the moment `said_when` says; None
    when it names no task or no moment."""
    task = _task_said(chat, what)
    if task is None:
        return None
    when = dates.search(said_when, chat.now, chat.tz, parts=True)
    return _snoozed(chat, task, when[0] if when else None, why)


def _snoozed(chat: Chat, task: dict, when: dates.Found | None, why: str) -> Reply | None:
    """The task put off until `when` (a day alone: its morning); None when it names no moment still to come."""
    at = dates.at_moment(when, chat.now, chat.tz)
    if when is None or at is None:
        return None
    return Reply(
        "", [("snooze_task", {"task_id": task.get("id"), "until": at.isoformat()})], f"{why} ({when.stated(chat.tz)})"
    )


# a task named, then its new day: "Pixel's vet booking: make that due Friday", "the Kessler invoice - move it to the 18th"
_NAMED_THEN_CHANGED_RE = lazy_regex(
    r"^(?P<what>[^:;–-]{3,50}?)\s*[:;–-]\s*(?:(?:ok|so|please|pls)\s+)?(?:make|set|change|move|push|put)\s+"
    r"(?:that|it|this|the\s+(?:deadline|due\s+date))\s+(?:due\s+|to\s+|for\s+)*(?P<when>.+?)[\s.!]*$",
    re.I,
)


def _named_then_changed(chat: Chat, text: str) -> Reply | None:
    found = _NAMED_THEN_CHANGED_RE.match(text.strip())
    if found is None:
        return None
    task = _task_named(chat, found.group("what"))
    when = dates.search(found.group("when"), chat.now, chat.tz)
    if task is None or not when or not covers(words(found.group("what")), words(str(task.get("title")))):
        return None
    return Reply(
        "",
        [("update_task", {"task_id": task.get("id"), "due": dates.iso(when[0].value)})],
        f"a task named, then its new day ({when[0].stated(chat.tz)})",
    )


# "not now, remind me next week instead", "ask me again on Monday", "remind me about it tomorrow": said to a follow-up,
# no thing named of its own
_LATER_RE = lazy_regex(
    r"^(?:(?:no|nah|not\s+now|not\s+yet|not\s+today|later|busy|sorry|ugh)[\s,.!-]+)*(?:please\s+|pls\s+)?"
    r"(?:remind|ask|ping|nudge|bug)\s+me\s+(?:(?:about|of)\s+(?:it|that|this)\s+)?(?:again\s+)?"
    r"(?P<when>(?!(?:to|about|of|that)\b).+?)(?:\s+(?:instead|again|then|please))*[\s.!]*$",
    re.I,
)


def _put_off_just_told(chat: Chat) -> Reply | None:
    """A reminder asked for with nothing named, in answer to Wilson's follow-up of one task: that task put off until
    then (not a reminder of nothing, "instead to not")."""
    found = _LATER_RE.match(chat.text.strip())
    if found is None or chat.followed_up is None:
        return None
    when = dates.search(found.group("when"), chat.now, chat.tz, parts=True)
    if not when or words(found.group("when")) - words(when[0].phrase):
        return None  # more than a moment was said: a reminder of its own
    told = _followed_up_task(chat)
    return _snoozed(chat, told, when[0], "the task just followed up, put off") if told is not None else None


# "remind me to renew my passport, it runs out in July - but not before March, I'm swamped till then": the user's
# own "not before" is when to remind; what the thing does meanwhile ("it runs out in July") is no part of it
_NOT_BEFORE_RE = lazy_regex(
    r"\s*[,;.–—-]*\s*(?:but\s+)?(?:not\s+before|no\s+earlier\s+than|not\s+until|not\s+till?)\s+(?P<when>[^,;.!?]+).*$",
    re.I | re.S,
)
# "…, don't bug me about it before mid-May though": the same hold, said as what not to do until then
_DONT_BUG_RE = lazy_regex(
    r"\s*[,;.–—-]*\s*(?:but\s+|so\s+)?(?:please\s+|pls\s+)?(?:don'?t|do\s+not|dont)\s+"
    r"(?:bug|bother|remind|nag|ping|pester|chase)\s+me\s+(?:(?:about|with)\s+(?:it|that|this|"
    # "dont bother me with the Rezept before monday the 8th": a thing on the list, named
    r"(?:the|my)\s+(?P<thing>[\w-]+(?:\s+[\w-]+)?))\s+)?"
    r"(?:before|until|till?)\s+(?P<when>[^,;.!?]+).*$",
    re.I | re.S,
)
# "…, it has to be at the Elterngeldstelle by the 26th", "die HU für den Wagen ist fällig – bis 31.5. muss …": what
# the thing does meanwhile, or that it is due
_ABOUT_IT_RE = lazy_regex(
    r"\s*[,;–—-]+\s*(?=(?:it|they|which|that|this|she|he)\b)|\s+(?:ist|sind|wird|werden)\s+(?:jetzt\s+|bald\s+)?fällig\b",
    re.I,
)
# a need said of the user's own ("I have to get my residence permit extended"): with a hold, what to be reminded of
_MY_NEED_RE = lazy_regex(
    r"^\s*(?:i\s+(?:have\s+to|need\s+to|must|have\s+got\s+to|'ve\s+got\s+to|gotta)|i\s*['’]?ll\s+have\s+to)\s+"
    r"(?P<what>\w.*?)[\s.!]*$",
    re.I | re.S,
)


# "Lindner just called, the invoice can wait till after their quarter closes – so 2 July": a task that can wait, named
# anywhere in the message by a word of its own, moved to the last day said
_CAN_WAIT_RE = lazy_regex(r"\b(?:can|could)\s+wait\b|\bkann\s+warten\b|\bhat\s+(?:noch\s+)?zeit\b", re.I)


def _can_wait(chat: Chat, text: str) -> Reply | None:
    """The one open task a name of its own in the message names ("Lindner" of "Rechnung an Agentur Lindner"), moved to
    the last day said after "can wait"; None unless exactly one task and a day."""
    waits = _CAN_WAIT_RE.search(text)
    if waits is None:
        return None
    said = {w.lower() for w in re.findall(r"[^\W\d_]{4,}", text)}
    named = [
        t
        for t in chat.tasks
        if t.get("status", "open") == "open"
        and {w.lower() for w in re.findall(r"[^\W\d_]{4,}", str(t.get("title") or "")) if w[:1].isupper()} & said
    ]
    day = dates.search(text[waits.end() :], chat.now, chat.tz)
    if len(named) != 1 or not day:
        return None
    return Reply(
        "",
        [("update_task", {"task_id": named[0].get("id"), "due": dates.iso(day[-1].value)})],
        f"a task that can wait, moved ({day[-1].stated(chat.tz)})",
    )


def _named_not_before(chat: Chat, text: str) -> Reply | None:
    """ "… so dont bother me with the Rezept before monday the 8th": the open task it names, snoozed until then."""
    held = _DONT_BUG_RE.search(text)
    if held is None or not held.group("thing"):
        return None
    task = _task_said(chat, held.group("thing"))
    day = dates.search(held.group("when"), chat.now, chat.tz, parts=True)
    if task is None or not day:
        return None
    return _snoozed(chat, task, day[0], "a task put off until a day, named")


def _not_before(chat: Chat, text: str) -> Reply | None:
    """A reminder, or a need of the user's own, with "not before WHEN" (or "don't bug me about it before WHEN"): a
    reminder then, whatever the thing does meanwhile ("it runs out in July")."""
    held = _NOT_BEFORE_RE.search(text) or _DONT_BUG_RE.search(text)
    if held is None:
        return None
    asked = _ABOUT_IT_RE.split(text[: held.start()], maxsplit=1)[0].strip()
    if not REMIND_RE.match(text):
        need = _MY_NEED_RE.match(asked)
        if need is None:
            return None
        asked = f"remind me to {need.group('what')}"
    if dates.search(asked, chat.now, chat.tz):
        return None  # "remind me on Friday to tell Tom …, not until Monday": its own day stands
    when = held.group("when").strip()
    # a month alone is its first day, as "in March" is
    day = dates.search(when, chat.now, chat.tz) or dates.search(f"in {when}", chat.now, chat.tz, months=True)
    if not day:
        return None  # "not before dinner" names no day
    return _remind(chat, f"{asked} {day[0].phrase}")


# the user's own timeline for a task: "I'll do the receipts after the 20th", "the receipts thing - I'll do it after
# the 20th, work is crazy till then", "I'll get to the tax return next week"
_MY_TIME_RE = lazy_regex(
    r"^(?:(?P<thing>(?:the|my|our)\s+[^,;:.!?–—-]+?)(?:\s+thing)?\s*[-–—,:;]\s*)?"
    r"(?:i\s*['’]?ll|i\s+will|i'm\s+going\s+to|i\s+am\s+going\s+to)\s+"
    r"(?:do|get\s+to|deal\s+with|handle|sort(?:\s+out)?|take\s+care\s+of|look\s+at)\s+"
    r"(?P<what>it|them|that|(?:the|my|our)\s+[^,;.!?]+?)\s+"
    # whatever follows the moment is the reason: ", work is crazy till then"
    r"(?P<when>(?:after|next|in|on|tomorrow|this|later\s+(?:this|next))\b[^,;]*?)(?:\s*[,;].*)?[.!]*$",
    re.I | re.S,
)


def _my_own_time(chat: Chat, text: str) -> Reply | None:
    """A task the user says when they will do: put off until then. Only an open task the words name, every word of
    them ("I'll do the washing tomorrow" names none, and is news)."""
    found = _MY_TIME_RE.match(text.strip())
    if found is None:
        return None
    what = found.group("what")
    if what.lower() in ("it", "them", "that"):  # "the receipts thing - I'll do it …": the thing told first
        what = found.group("thing") or ""
    if _task_said(chat, what) is None:
        return None
    return _move(chat, f"snooze {what} until {found.group('when').strip()}")


# a task named first, then when the user will see to it: "about Malte's beamer: I'm away till Monday, so not before
# Tuesday pls", "the tax receipts - ask me again after the 20th"
_NAMED_FIRST_RE = lazy_regex(
    r"^(?:(?:ugh|hmm+|ok|so|re|about|wegen)[\s,]+)*(?P<what>[^,:;.!?–—-]{3,40}?)\s*[,:;–—-]\s*(?P<rest>.+)$",
    re.I | re.S,
)
_LATER_WHEN_RE = lazy_regex(
    r"\b(?:not\s+(?:before|until|till)|(?:ping|remind|ask|bug|nudge)\s+me\s+(?:again\s+|about\s+it\s+)*(?:on\s+)?)"
    r"(?P<when>[^,.;!?]+)",
    re.I,
)


def _named_first_put_off(chat: Chat, text: str) -> Reply | None:
    """An open task named first (every word of the name in its title), then "not before WHEN" or "ping me WHEN":
    the task put off until then."""
    found = _NAMED_FIRST_RE.match(text.strip())
    later = list(_LATER_WHEN_RE.finditer(found.group("rest"))) if found else []
    if not later:
        return None
    return _put_off_until(chat, found.group("what"), later[-1].group("when"), "a task named, then put off")


# a task put off in words of its own: "bring the Elterngeld thing up again the tuesday after next", "leave the bafög
# thing alone till my exams are done, last one's friday the 11th", "erinner mich Montag nochmal wegen Kindergeld",
# "P-Schein: frag mich in zwei wochen nochmal"
_PUT_OFF_WORDS_RE = lazy_regex(
    r"(?:^|[.!?;:,]\s*|\s[-–—]\s*|(?<=\s))(?:(?:ugh|ok|so|and|please|pls|bitte)[\s,]+)*(?:"
    r"(?:bring|raise)\s+(?P<what>[^.!?;:]+?)\s+up\s+again\s+(?P<when>[^.!?;]+?)"
    r"|(?:leave|park)\s+(?P<what2>[^.!?;:]+?)\s+(?:alone\s+)?(?:till|until|til)\s+(?P<when2>[^.!?;]+?)"
    r"|(?:frag|erinner|remind)e?\s+(?:mich|me)\s+(?P<when3>[^.!?;,]+?)\s+(?:nochmal|noch\s+mal|wieder)"
    r"(?:\s+(?:wegen|an|zu)\s+(?:dem\s+|der\s+|den\s+|die\s+|das\s+)?(?P<what3>[^.!?;,]+?))?"
    # "Lass mich mit dem Führerschein-Kram bis dahin in Ruhe"
    r"|lass\s+mich\s+mit\s+(?:dem\s+|der\s+|den\s+)?(?P<what4>[^.!?;:]+?)\s+(?P<when4>bis\s+[^.!?;]+?)\s+in\s+ruhe"
    r")(?:\s*[,.;!]|\s+(?:vorher|because|cause|since|weil|da)\b|$)",
    re.I,
)
_THING_WORDS_RE = lazy_regex(r"\b(?:the\s+|das\s+|die\s+)?-?(?:thing|stuff|sache|ding|zeug|kram)\b", re.I)
# "bis dahin": until the day said before it; "bis einschließlich 25.": that day is still off
_UNTIL_THEN_RE = lazy_regex(r"^bis\s+dahin\b", re.I)
_INCLUSIVE_RE = lazy_regex(r"\b(?:einschließlich|einschliesslich|inklusive|including|inclusive)\b", re.I)


def _put_off_in_words(chat: Chat, text: str) -> Reply | None:
    """An open task put off until a moment, in the words people use for it: the task named in them, or told first
    ("P-Schein: …"), or the one just followed up; the moment is the last one said ("till my exams are done, last
    one's friday the 11th": the day after the 11th)."""
    said = text.strip()
    found = _PUT_OFF_WORDS_RE.search(said)
    if found is None:
        return None
    what = found.group("what") or found.group("what2") or found.group("what3") or found.group("what4") or ""
    what = _THING_WORDS_RE.sub(" ", re.sub(r"^(?:it|that|this|es|das)$", "", what.strip(), flags=re.I)).strip()
    if not what:  # "P-Schein: frag mich …": the thing named before it, in a few words
        head = said[: found.start()].strip(" :,;-–—")
        what = _THING_WORDS_RE.sub(" ", head).strip() if 0 < len(head.split()) <= 4 else ""
    group = next(g for g in ("when", "when2", "when3", "when4") if found.group(g))
    moment = (dates.search(said[found.start(group) :], chat.now, chat.tz, parts=True) or [None])[-1]
    if group == "when4" and _UNTIL_THEN_RE.match(found.group(group)):
        before = said[: found.start()]
        moment = (dates.search(before, chat.now, chat.tz, parts=True) or [None])[-1]
        if moment is not None and not isinstance(moment.value, datetime) and _INCLUSIVE_RE.search(before):
            moment = dates.Found(moment.phrase, moment.value + timedelta(days=1), moment.start, "the day after it")
    if moment is not None and group == "when2" and _OVER_BY_RE.search(said[found.start(group) :]):
        if not isinstance(moment.value, datetime):  # "till my exams are done, last one's friday the 11th"
            moment = dates.Found(moment.phrase, moment.value + timedelta(days=1), moment.start, "the day after it")
    if what:
        task = _task_said(chat, what)
        open_tasks = [t for t in chat.tasks if t.get("status", "open") == "open"]
        if task is None and group == "when4" and len(open_tasks) == 1:
            task = open_tasks[0]  # "der Führerschein-Kram" of the one task on the list, written in other words
        return _snoozed(chat, task, moment, "a task put off in words") if task is not None else None
    told = _followed_up_task(chat)
    return _snoozed(chat, told, moment, "the task just followed up, put off") if told is not None else None


_OVER_BY_RE = lazy_regex(r"\b(?:done|over|finished|through|vorbei|fertig|durch|rum)\b", re.I)


def _remind(chat: Chat, text: str) -> Reply | None:
    again = (
        _put_off_in_words(chat, text)
        or _asked_again(chat, text)
        or _my_own_time(chat, text)
        or _named_first_put_off(chat, text)
        or _put_off_just_told(chat)
        or _can_wait(chat, text)
        or _named_not_before(chat, text)
        or _not_before(chat, text)
    )
    if again is not None:
        return again
    about = ABOUT_RE.match(text)
    if about:
        task = _task_named(chat, about.group("what"))
        found = dates.search(about.group("when"), chat.now, chat.tz, parts=True)
        at = dates.at_moment(found[0] if found else None, chat.now, chat.tz)
        if task is not None and at is not None and _thing_named(about.group("what"), str(task.get("title"))):
            return Reply(
                "",
                [("snooze_task", {"task_id": task.get("id"), "until": at.isoformat()})],
                f"snooze a task ({found[0].stated(chat.tz)})",
            )
    found = REMIND_RE.match(text)
    if not found:
        return None
    what, when = _split_when(found.group("rest"), chat, months=True)
    at = dates.at_moment(when, chat.now, chat.tz)
    if at is None or not what:
        return _when_to_remind(chat, what, when)
    return Reply("", [("remind", {"text": what, "at": at.isoformat()})], f"one-off reminder ({when.stated(chat.tz)})")


def _thing_named(what: str, title: str) -> bool:
    """Whether the words name the task by more than its verb: "the call with Dr. Haberland" is no "Call Mrs. Wendler
    about the tax documents" (a new reminder), "the tax documents" is."""
    verb = (title.split() or [""])[0].lower()
    return bool((words(what) & words(title)) - {verb})


def _when_to_remind(chat: Chat, what: str, when: dates.Found | None) -> Reply:
    """A reminder with no time still to come: asked when, saying so when the time said has passed ("today at
    7am" at 08:00) or was only a day ("today": its usual 09:00 is no time the user said)."""
    if what and when is not None and isinstance(when.value, datetime):
        return Reply(
            f"{dates.fmt_moment(when.value, chat.tz)} has passed already (it's "
            f"{chat.now.astimezone(chat.tz):%H:%M} now). When should I remind you to {what}? Nothing was set.",
            [],
            "reminder for a time that has passed",
        )
    if what and when is not None and re.fullmatch(r"(?:for\s+|on\s+)?today", when.phrase.strip(), re.I):
        return Reply(
            f"When today should I remind you to {what}? Say e.g. “remind me at 18:00 to {what}”. Nothing was set.",
            [],
            "reminder for today without a time",
        )
    return Reply(
        "When should I remind you? Say e.g. “remind me tomorrow at 18:00 to call Mum”. Nothing was set.",
        [],
        "reminder without a time to come",
    )


# a phrase that names a time of day and no day ("3pm", "half past 3", "between 2 and 4pm"), not a while ("in 2 hours")
_NAMES_A_DAY = lazy_regex(
    r"\b(?:today|tonight|tomorrow|yesterday|mon|tue|wed|thu|fri|sat|sun|jan|feb|mar|apr|may|jun|"
    r"jul|aug|sep|oct|nov|dec|next|this|week|weekend|month|year|in|hours?|hrs?|minutes?|mins?)"
    r"|\d(?:st|nd|rd|th)\b|\d[./-]\d|\dh\b",
    re.I,
)


_AFTER_A_DAY = lazy_regex(r"^\s*after\s+", re.I)


def _after_the_day(said_when: str, found, chat: Chat) -> bool:
    """ "after the 20th" read as the 20th itself ("after the weekend" is read as the Monday already)."""
    bare = _AFTER_A_DAY.sub("", said_when).strip(" .!,")
    if bare == said_when.strip(" .!,") or isinstance(found.value, datetime):
        return False
    # the day alone: "after lunch tomorrow", "after work on Friday" are still that day
    alone = dates.search(bare, chat.now, chat.tz, parts=True)
    return bool(alone) and alone[0].value == found.value and normal(alone[0].phrase) == normal(bare)


def _move(chat: Chat, text: str) -> Reply | None:
    found = MOVE_RE.match(text)
    if not found:
        return None
    what, said_when = _moved_parts(found, chat)
    when = dates.search(said_when, chat.now, chat.tz, parts=True)
    verb = text.strip().split()[0].lower()
    if not when and verb in ("snooze", "pause", "postpone"):  # "snooze the tyres till March": its 1st
        when = dates.search(f"in {said_when}", chat.now, chat.tz, months=True)
    task = _task_named(chat, what)
    if task is None:
        return Reply(
            f"I couldn't tell which task you mean, so nothing was changed. {looks.task_list(chat)}",
            [],
            "move an unknown task",
        )
    if not when:
        return Reply(
            f"To when should “{task.get('title')}” move? Say e.g. “to next Friday”. Nothing was changed.",
            [],
            "move without a date",
        )
    if verb in ("snooze", "pause", "postpone") and "snooze_task" in chat.offered:
        at = dates.at_moment(when[0], chat.now, chat.tz)
        if at is not None and _after_the_day(said_when, when[0], chat):
            at += timedelta(days=1)  # "after the 20th": the 20th is still the user's own, the 21st is not
        if at is not None:
            return Reply(
                "",
                [("snooze_task", {"task_id": task.get("id"), "until": at.isoformat()})],
                f"snooze a task ({when[0].stated(chat.tz)})",
            )
    due = when[0].value
    old = dates.parse_moment(task.get("due"), chat.tz)
    if not isinstance(due, datetime) and isinstance(old, datetime):
        kept = datetime.combine(due, old.astimezone(chat.tz).time(), tzinfo=chat.tz)  # the dentist at 10 stays at 10
        due = kept if kept > chat.now else due  # moved to today after its hour: the day, not a time already past
    elif isinstance(due, datetime) and old is not None and not _NAMES_A_DAY.search(when[0].phrase):
        # "move the dentist to 3pm": the same day at the new time (unless that has passed)
        same_day = datetime.combine(dates.local_date(old, chat.tz), due.astimezone(chat.tz).time(), tzinfo=chat.tz)
        due = same_day if same_day > chat.now else due
    read = dates.Found(when[0].phrase, due, when[0].start, when[0].reading)
    # notes would replace the task's own: how the date was read is the proposal's reason
    return Reply(
        "",
        [("update_task", {"task_id": task.get("id"), "due": dates.iso(due)})],
        f"move a task ({read.stated(chat.tz)})",
    )


# "i meant the hausschuhe, scratch those": the thing named first, then dropped as "those"
_NAMED_THEN_DROPPED_RE = lazy_regex(
    r"^\s*(?:(?:no|sorry|oops)[\s,]+)?(?:i\s+meant|i\s+mean|meant)\s+(?P<what>[^,;]+?)\s*[,;:-]\s*(?:so\s+|pls\s+|please\s+)?"
    r"(?P<verb>scratch|drop|cancel|delete|remove|ditch|forget)\s+(?:those|that|it|them|this|that\s+one)\b(?P<rest>.*)$",
    re.I,
)


def _moved_parts(found: re.Match, chat: Chat) -> tuple[str, str]:
    """What is moved and to when: "move the invoice for Lindqvist Verlag to the 20th" moves the invoice for Lindqvist
    Verlag (its "for" is part of the name, as the words after it say no day) to the 20th."""
    what, when = found.group("what"), found.group("when")
    day = dates.search(when, chat.now, chat.tz, parts=True)
    if day and not when[: day[0].start].strip(" ,"):
        return what, when
    later = re.match(
        r"(?P<what>.+)\s+(?:to|until|till)\s+(?P<when>.+?)\s*[.!]*$",
        f"{what} {found.group(0)[found.end('what') :]}".strip(),
        re.I | re.S,
    )
    if later is None:
        return what, when
    day = dates.search(later.group("when"), chat.now, chat.tz, parts=True)
    named = re.sub(r"\s+(?:to|until|till|for|by|on)$", "", later.group("what"), flags=re.I)
    return (named, later.group("when")) if day and not later.group("when")[: day[0].start].strip(" ,") else (what, when)


def _drop(chat: Chat, text: str) -> Reply | None:
    named = _NAMED_THEN_DROPPED_RE.match(text)
    if named:
        text = f"{named.group('verb')} {named.group('what')}{named.group('rest')}"
    found = DROP_RE.match(text)
    if not found:
        return None
    what = found.group("what") or found.group("what2") or found.group("what3")
    # "drop the class trip money, the trip got cancelled": the reason after the comma names nothing to drop
    head = re.split(r"\s*[,;]\s+|\s+(?:bc|because|since|as|cos|cause|coz)\s+", what, maxsplit=1)[0]
    if head != what and (_task_named(chat, head) or _topic_named(chat, head)):
        what = head
    task = _task_named(chat, what)
    topic = _topic_named(chat, what)
    # a plan still proposed that the words name better than an open task or topic: no to it
    matched = max((len(words(what) & words(str(t.get("title")))) for t in (task, topic) if t is not None), default=0)
    pending = drop_pending(chat, what, beat=matched)
    if pending is not None:
        return pending
    named = words(what)
    task_named_better = task is not None and len(named & words(str(task.get("title")))) > len(
        named & words(str(topic.get("title") if topic else ""))
    )  # "the class trip money" is the task to transfer it, not the trip
    if topic is not None and (TOPICISH.search(what) or task is None) and not task_named_better:
        return Reply("", [("close_topic", {"topic_id": topic.get("id")})], "drop a topic")
    if task is not None:
        return Reply("", [("cancel_task", {"task_id": task.get("id")})], "drop a task")
    return Reply(
        f"I couldn't tell which task or topic you mean, so nothing was changed. {looks.task_list(chat)}",
        [],
        "drop something unknown",
    )


# "the Japan trip is done, you can close it", "we're back from Japan, close the trip": the topic named in the message
_CLOSE_IT_RE = lazy_regex(
    r"[,;.!]\s*(?:so\s+|and\s+)?(?:you\s+can\s+|please\s+|pls\s+|go ahead and\s+|feel free to\s+)?"
    r"(?:close|archive)\s+(?:it|that|this|the)(?:\s+(?:[\w-]+\s+)?(?:topic|trip|project|plan|one|move|"
    r"wedding|conference))?(?:\s+(?:now|please|pls|down))*"
    r"\s*[.!]*$",
    re.I,
)


# "…, du kannst das ganze Thema zumachen", "mach das Thema bitte zu"
_GERMAN_CLOSE_IT_RE = lazy_regex(
    r"[,;.!]\s*(?:also\s+|und\s+)?(?:(?:du\s+)?kannst(?:\s+du)?\s+|bitte\s+)?(?:das\s+)?(?:ganze\s+)?"
    r"(?:thema|projekt|ding)\s+(?:bitte\s+)?(?:zumachen|zu\s+machen|schließen|abschließen|beenden|archivieren)"
    r"|[,;.!]\s*mach\s+(?:das\s+)?(?:ganze\s+)?(?:thema|projekt|ding)\s+(?:bitte\s+)?zu\b",
    re.I,
)


def _close_said(chat: Chat, text: str) -> Reply | None:
    found = _CLOSE_IT_RE.search(text) or _GERMAN_CLOSE_IT_RE.search(text)
    topic = _topic_named(chat, text[: found.start()]) if found else None
    if topic is None:
        return None
    return Reply("", [("close_topic", {"topic_id": topic.get("id")})], "close a topic named before")


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
    old, new = found.group("old"), found.group("new").strip(" “”\"'")
    topic = _topic_named(chat, old)
    task = _task_named(chat, re.sub(r"\btask\b", " ", old, flags=re.I))
    said_task = re.search(r"\btask\b", old, re.I)
    # the one the words name better; a tie is the topic's ("rename japan to …"), unless they say "task"
    shared = {
        key: len(words(old) & words(str(found.get("title")))) if found else -1
        for key, found in (("topic", topic), ("task", task))
    }
    if topic is not None and not said_task and (TOPICISH.search(old) or shared["topic"] >= shared["task"]):
        return Reply("", [("rename_topic", {"topic_id": topic.get("id"), "title": new})], "rename a topic")
    if task is not None:
        return Reply(
            "", [("update_task", {"task_id": task.get("id"), "title": new[:1].upper() + new[1:]})], "rename a task"
        )
    return Reply(
        f"I couldn't tell which task or topic you mean, so nothing was changed. {looks.task_list(chat)}",
        [],
        "rename something unknown",
    )


def _small_talk(chat: Chat, text: str) -> Reply | None:
    """A greeting, thanks or goodbye gets a word back, not "I didn't understand that"."""
    laughed = _LAUGH_RE.match(text)
    if laughed and text[laughed.end() :].strip() and not any(pattern.match(normal(text)) for pattern, _ in _WORD_BACK):
        text = text[laughed.end() :].strip()  # "haha you're the best": the words after the laugh
    if GREETING_RE.match(text):
        return Reply("" if chat.first_contact else f"Hi! What can I do for you? {TRY}", [], "a greeting")
    said = set(normal(text).split() or ["-"])
    # "great, thanks" is pleased (a yes right after a proposal); "thanks" or "merci" alone is thanks; asked ("Passt das
    # so?", "Gut?") it is a question, never a yes
    pleased = "?" not in text and (
        ACK_RE.match(text)
        or said <= PLEASED_OR_THANKS
        and bool(said - THANK_WORDS)
        or PLEASED_PHRASE_RE.match(normal(text))
    )
    if THANKS_RE.match(text) and not pleased:
        return Reply("You're welcome!", [], "thanks")
    if pleased:
        waiting = next((p for p in chat.pending if isinstance(p, dict) and p.get("items")), None)
        if waiting is not None and waiting.get("just_asked") and "decide" in chat.offered:
            # "great", "perfect thanks", "cool" said right after the proposal: pleased with it, a yes
            return Reply(
                "",
                [("decide", {"proposal": waiting["id"], "action": "approve"})],
                "pleased words right after a proposal",
            )
        if waiting is not None:  # later, "great" is no answer to a proposal, but the user may think it is
            return Reply(
                f"Proposal {waiting.get('id')} is still waiting for your answer: say “yes” to approve "
                f"it or “no” to drop it.",
                [],
                "an acknowledgement with a proposal waiting",
            )
        return Reply("👍", [], "an acknowledgement")
    if ABILITIES_RE.match(text):
        said = f"I follow simple requests: {REQUESTS}" if chat.first_contact else CAN_DO  # INTRO says "offline"
        return Reply(said, [], "what the offline rules can do")
    said = normal(text)
    for pattern, back in _WORD_BACK:
        if pattern.match(said):
            return Reply(back if "{TRY}" not in back else back.format(TRY=TRY), [], "a word back")
    if HOW_ARE_YOU_RE.match(text):
        return Reply(f"All good here, thanks: running offline and keeping an eye on things. {TRY}", [], "how Wilson is")
    if BYE_RE.match(text):
        return Reply("Bye for now! I'll keep an eye on things.", [], "a goodbye")
    if ABOUT_ME_RE.match(text):
        return Reply(looks.what_i_know(chat), [], "what Wilson has learned")
    said = text.replace("’", "'")
    if UNWELL_RE.match(said):
        return Reply(f"Sorry to hear that. Take it easy! {QUIET_HINT}", [], "the user is unwell or worn out")
    where = WHEREABOUTS_RE.match(said)
    if where:
        back = where.group("where").lower() in ("back", "got back", "got home", "got in")
        return Reply("Welcome back!" if back else "👍", [], "the user says where they are")
    return None


_WHEN_DUE_RE = lazy_regex(
    r"^\s*(?:when(?:'s|\s+is|\s+are|\s+was)|by when (?:do|should|must) i)\s+(?:the\s+|my\s+)?"
    r"(?P<what>.+?)\s+(?:due|supposed to be done|needed)\b[\s?.!]*$"
    # "what did i say the Kellerraum deadline was", "what's the deadline for the slides again"
    r"|^\s*what(?:'s|\s+is|\s+was|\s+did\s+i\s+say)\s+(?:the\s+|my\s+)?(?:(?:deadline|due\s+date)\s+(?:for|of)\s+"
    r"(?:the\s+|my\s+)?(?P<what2>.+?)|(?P<what3>.+?)\s+(?:deadline|due\s+date))(?:\s+(?:was|is|again))*[\s?.!]*$",
    re.I,
)


def _when_due(chat: Chat, text: str) -> Reply | None:
    """ "When is the passport due?": the task's due day, read from the list."""
    found = _WHEN_DUE_RE.match(text.replace("’", "'"))
    what = (found.group("what") or found.group("what2") or found.group("what3")) if found else ""
    task = _task_named(chat, what) if found else None
    if task is None and found is not None and found.group("what") is None:
        # "what did i say the Kellerraum deadline was" of no open task: said so, not "I didn't understand"
        return Reply(
            f"I don't see “{what}” among your open tasks, so I have no deadline for it. {looks.task_list(chat)}",
            [],
            "when a task is due, of no open task",
        )
    if task is None:
        return None
    due = dates.parse_moment(task.get("due"), chat.tz)
    when = (dates.fmt_moment(due, chat.tz) if isinstance(due, datetime) else dates.fmt_day(due)) if due else None
    return Reply(
        f"“{task.get('title')}” is due {when}." if when else f"“{task.get('title')}” has no due date.",
        [],
        "when a task is due",
    )


# "Help me with Renew passport (due Mon 1 Feb, for Trip to Japan)." is what a press on Help me says
# (actors/proposals/commands.py help_words); "can you help me with the passport?" is the same request typed
_HELP_WITH_RE = lazy_regex(
    r"^\s*(?:(?:can|could|would) you\s+)?(?:please\s+)?help me (?:with|on|to)\s+(?:the\s+|my\s+)?"
    r"(?P<what>[^()]+?)(?:\s+task)?\s*(?:\([^)]*\))?\s*[.?!]*$",
    re.I,
)


def _help_with(chat: Chat, text: str) -> Reply | None:
    """Help with one open task, without a model: what Wilson can do with it here and now, each as the words
    that do it, so the next step is one message away."""
    found = _HELP_WITH_RE.match(text)
    task = _task_named(chat, found.group("what")) if found else None
    if task is None:
        return None
    due = dates.parse_moment(task.get("due"), chat.tz)
    when = (dates.fmt_moment(due, chat.tz) if isinstance(due, datetime) else dates.fmt_day(due)) if due else None
    about = ", ".join(
        part for part in (f"due {when}" if when else "", f"for {task['topic']}" if task.get("topic") else "") if part
    )
    title, number = task.get("title"), task.get("id")
    later = (
        (
            (due if isinstance(due, date) and not isinstance(due, datetime) else due.astimezone(chat.tz).date())
            + timedelta(days=7)
        ).isoformat()
        if due
        else None
    )  # the form `move` reads: a date
    lines = [
        f"“{title}”" + (f" ({about})" if about else "") + ". Without a language model I can't think it "
        "through with you, but I can:",
        "• split it into steps: tell me each one, e.g. “add find the documents by Friday”",
        f"• give it more time: “snooze {number} 2d”" + (f" or “move {number} {later}”" if later else ""),
        f"• tick it off or drop it: “done {number}”, “drop {number}”",
    ]
    return Reply("\n".join(lines), [], "help with a task")


def _payment(chat: Chat, text: str) -> Reply | None:
    """ "The car insurance bill of 480 euros has to be paid by dec 20": one task to pay, what and how much in its
    title, due that day (not an official deadline's forms plan). "add …" names its own task."""
    if EXPLICIT_ADD_RE.match(text):
        return None
    found = payments.payment(text, chat.now, chat.tz)
    if found is None:
        return None
    return Reply(
        "",
        [("create_task", {"title": found.title, "due": dates.iso(found.due.value)})],
        f"a payment ({found.due.stated(chat.tz)})",
    )


# the words a jotted appointment may have besides its thing and its moment ("dentist @ 3pm on fri", "Zahnarzt am
# Freitag um 3"); a word of the user's, or of someone else's, makes it a sentence, read by the other rules
_JOTTED_FILLER = {"at", "on", "the", "am", "um", "next", "this", "appt", "appointment", "termin", "uhr", "@", "-"}
_JOTTED_SENTENCE_RE = lazy_regex(
    r"\b(?:comes?|goes|arrives?|i|i'm|we|my|our|me|us|you|he|she|they|his|her|their|ich|wir|mein|meine|is|are|has|have|was|"
    r"need|needs|must|should|help|plan|prepare|ready|surgery|operation|op|exam|test|interview|flight|"
    r"check-?up|vaccinations?|jabs?|booster|scan|mri|ultrasound|x-?ray|prep|birthday|wedding|trip|party)\b",
    re.I,
)


_GERMAN_DAY_RE = lazy_regex(
    r"\b(?:montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonnabend|sonntag|morgen|heute|übermorgen)\b|\d\.", re.I
)


_DIGIT_RE = lazy_regex(r"\d")


def _jotted(chat: Chat, text: str) -> Reply | None:
    """ "dentist fri 3pm", "Zahnarzt am Freitag um 3", "hairdresser saturday 11am": a thing jotted down with its day
    and hour, no verb and nothing to prepare, is a note to be reminded of it then, not a plan (a
    sentence, "I have a dentist appointment next Tuesday at 10", or a surgery, is read as the event it tells)."""
    said = text.strip()
    if said.endswith("?") or len(said.split()) > 8 or _JOTTED_SENTENCE_RE.search(said.replace("’", "'")):
        return None
    if len(sentences.split(chat.text)) > 1 or ADD_RE.match(said) or EXPLICIT_ADD_RE.match(said):
        return None  # "The boiler guy comes on Thursday at 8." among others tells why, it asks nothing
    if not _DIGIT_RE.search(said) or not (_NAMES_A_DAY.search(said) or _GERMAN_DAY_RE.search(said)):
        return None  # no day and hour to read: the date reader is not asked
    found = dates.search(said, chat.now, chat.tz, parts=True)
    if not found:
        return None
    both = _day_and_hour(found, chat.tz)
    when = both[0] if both else found[0] if len(found) == 1 else None
    if (
        when is None
        or not isinstance(when.value, datetime)
        or not _NAMES_A_DAY.search(when.phrase)
        and not (_GERMAN_DAY_RE.search(when.phrase))
    ):
        return None
    rest = said
    for one in both[1] if both else [when]:
        rest = rest.replace(one.phrase, " ")
    thing = [w for w in re.findall(r"[^\W\d_][\w'’-]*|@", rest) if w.lower() not in _JOTTED_FILLER]
    if (
        not thing
        or len(thing) > 3
        or any(w.lower() in acts.ACT_VERBS or acts.german_verb(w) for w in thing)  # "call mum fri 3pm": a task
    ):
        return None
    matched = recognise_message(chat.playbook, said)
    if matched is not None and matched[0].name != "medical" or places.find_place(None, said) is not None:
        return None  # "exam mon 9am", "flight to Rome fri 6am": the event's own plan
    at = when.value
    if at <= chat.now:
        return None
    label = " ".join(re.findall(r"[^\W\d_][\w'’-]*", re.sub(r"\s+", " ", rest))).strip()
    label = " ".join(w for w in label.split() if w.lower() not in ("at", "on", "the", "am", "um", "uhr"))
    return Reply(
        "",
        [("remind", {"text": label, "at": at.isoformat()})],
        f"an appointment jotted down, a reminder then ({when.stated(chat.tz)})",
    )


# who else a message is about, before what they do: "my colleague Tom has", "my sister is flying", "Anna is"
_PEOPLE = (
    r"colleague|coworker|co-worker|sister|brother|mum|mom|mother|dad|father|wife|husband|partner|friend|"
    r"boss|manager|son|daughter|kids?|children|boyfriend|girlfriend|neighbou?r|cousin|aunt|uncle|grandma|"
    r"grandpa|granny|roommate|flatmate|niece|nephew|parents|team|teacher|student|"
    # "the Yilmaz family next door", "the couple upstairs"
    r"family|couple|people|folks|classmate|"
    # the people of someone's work: "my client Mr. Brandstätter must go to hospital", "my tax advisor is on holiday"
    r"client|customer|advis[eo]r|accountant|lawyer|landlord|landlady|caretaker|editor|publisher|godmother|godfather"
)
_SOMEONE_ELSE_RE = lazy_regex(
    rf"^\s*(?:(?i:my|our|the)\s+(?:\w+\s+)?(?i:{_PEOPLE})(?i:s)?(?:\s+(?:Mr|Mrs|Ms|Dr|Prof)\.?)?(?:\s+[A-Z][\w-]+){{0,2}}"
    rf"(?:\s+(?i:next door|downstairs|upstairs|across the (?:street|hall|road)|from work|from school))?"
    # "my sister's baby is due", "my colleague's surgery is on Monday": theirs (a child's
    # appointment is the parent's to plan, so not theirs)
    rf"(?:(?<!son)(?<!daughter)(?<!kids)(?<!kid)(?<!children)['’]s?\s+(?:\w+\s+)?(?i:baby|surgery|"
    rf"operation|exam|test|interview|trip|flight|move|visit|treatment))?|"
    rf"(?!(?:We|You|It|This|That|There|Here|Today|Tomorrow)\b)(?P<name>[A-Z][a-z]+)"
    # "Jonas and his girlfriend are going skiing": the two of them
    rf"(?:\s+and\s+(?:[A-Z][a-z]+|(?i:his|her|their)\s+\w+))?|(?i:he|she|they)|"
    # "Anna's exam is on Thursday": a named person's own exam, operation or interview
    rf"(?!(?:We|You|It|This|That|There|Here|Today|Tomorrow|My|Our)\b)[A-Z][a-z]+['’]s\s+(?:\w+\s+)?"
    rf"(?i:exam|test|interview|surgery|operation|treatment|flight))\s+"
    # "my brother just booked a trip to Bangkok": theirs, booked
    rf"(?:(?i:just|already|finally|also)\s+)?"
    rf"(?i:is|are|has|have|was|were|will|goes|go|flies|fly|leaves|starts|takes|gets|travels|booked|"
    # "must go to hospital", "must have an operation": theirs, as "goes" is
    rf"moves|visits|must\s+(?:go|travel|fly|move|stay|have\s+(?:an?|his|her|their)))\b"
)


_FAMILY_RE = lazy_regex(
    r"\b(?:sister|brother|mum|mom|mother|dad|father|son|daughter|cousin|best friend|niece|nephew|"
    r"aunt|uncle|grandson|granddaughter|parents)\b",
    re.I,
)


# the user takes another person's event on ("Mum is moving on the 15th and I'm organising it"): the plan is theirs
_TAKEN_ON_RE = lazy_regex(
    r"\b(?:i'?m|i\s+am|i'?ll\s+be|i\s+will\s+be|i\s+have\s+to\s+be|we'?re|we\s+are)\s+(?:the\s+one\s+)?"
    r"(?:organi[sz]ing|planning|arranging|handling|coordinating|sorting\s+out|in\s+charge\s+of|doing)\s+"
    r"(?:it|that|this|everything|all\s+of\s+it|the\s+(?:move|whole\s+thing|lot))\b|"
    r"\b(?:i\s+have\s+to|i\s+need\s+to|i\s+must)\s+(?:organi[sz]e|arrange|sort\s+out|plan)\s+(?:it|everything)\b",
    re.I,
)


# a friend's or a colleague's own party ("Frieda's best friend has her birthday party on saturday", "my colleague
# Birgit is having a birthday party"): theirs to throw; the user's family's birthdays are the user's to plan
_FRIENDS_PARTY_RE = lazy_regex(
    r"^\s*(?:(?:my|our|the)\s+|[A-Z][\w-]*'s\s+)(?:best\s+|good\s+|old\s+|new\s+)?"
    r"(?:friend|colleague|coworker|co-worker|classmate|neighbou?r|boss|teacher)s?(?:\s+[A-Z][\w-]+)?\s+"
    r"(?:has|have|is having|are having|'s having|throws|is throwing)\s+(?:her|his|their|a)\s+",
    re.I,
)
# the user in it: "… and we're going", "I want to get her something"
_ME_RE = lazy_regex(r"\b(?:i|we|i'm|we're|i'll|we'll|i'd|we'd|me|us)\b", re.I)


_CHILD_FIRST_RE = lazy_regex(
    r"^\s*(?:my|our)\s+(?:little\s+|youngest\s+|eldest\s+|oldest\s+)?(?:son|daughter|kids?|child|children|baby)\b", re.I
)


def _looked_after(chat: Chat, text: str) -> bool:
    """The message is about the user's child ("my son gets his tonsils out"), or someone the user's own tasks are
    for ("Jonas gets his tonsils out" beside "Pay the Hort fee for Jonas"): their appointment is the user's to
    plan, as a parent's is."""
    if _CHILD_FIRST_RE.match(text):
        return True
    name = re.match(r"\s*([A-Z][a-zäöüß]+)\b", text)
    if name is None:
        return False
    mine = rf"(?:\bfor\s+{re.escape(name.group(1))}\b|\b{re.escape(name.group(1))}['’]s\b)"
    return any(re.search(mine, str(t.get("title") or "")) for t in chat.tasks if t.get("status", "open") == "open")


def _someone_elses(chat: Chat, text: str) -> bool:
    """The message tells what another person does ("Anna is going to Rome", "my colleague Tom has his exam"): no
    plan of the user's, unless the user says they organise it. A capitalised word that names a thing ("Dentist is
    on Friday") or a place is no person."""
    # "my sister's flying to Seoul": her "is"
    said = re.sub(r"(?<=\w)['’]s\s+(?=[a-z]+ing\b)", " is ", text)
    found = _SOMEONE_ELSE_RE.match(said)
    if found is None or _TAKEN_ON_RE.search(text.replace("’", "'")):
        return False
    name = found.group("name")
    if name is not None and re.match(
        rf"{re.escape(name)}\s+is\s+(?:flying|going|travell?ing|driving|moving|visiting|off|heading)\b", said
    ):
        return not recognise_message(chat.playbook, name)  # "Anna's flying to Rome": someone going, not a town
    return name is None or not (recognise_message(chat.playbook, name) or places.find_place(name))


# German nouns, capitalised as every German noun is, that the gazetteer also knows as a town somewhere ("bis Ende
# Juni" is no trip to Ende in Indonesia); said after "nach" or "in" they are still read as places
_GERMAN_NOUNS_NOT_PLACES = frozenset({"Ende", "Anfang", "Mitte", "Start", "Post", "Ort", "Stadt", "Land"})


def _somewhere_away(chat: Chat, text: str) -> tuple[object, None, places.Place] | None:
    """A plan asked for an event at a place away from home ("help me get ready for the Rotterdam Marathon"): a
    trip there."""
    travel = chat.playbook.of_kind("trip") or chat.playbook.of_kind("travel")
    place = places.find_place(None, text) or next(
        (
            p
            for name in re.findall(r"\b[A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+)?", text)
            for p in (places.named(name), places.named(name.split()[0]))
            if p is not None and name.split()[0] not in _GERMAN_NOUNS_NOT_PLACES
        ),
        None,
    )
    if travel is None or place is None or (chat.home is not None and not places.away(place, chat.home)):
        return None
    return travel, None, place


def _stayed_at(chat: Chat, text: str) -> tuple[object, None, places.Place] | None:
    """(the playbook's trip, no trigger, the place) when the message tells of the user's stay of days at a place the
    gazetteer does not know ("ski week in Saalbach with the kids 1-6 feb")."""
    travel = chat.playbook.of_kind("trip") or chat.playbook.of_kind("travel")
    place = going.unknown_place_stayed(text)
    if travel is None or place is None or _someone_elses(chat, text) or EXPLICIT_ADD_RE.match(text):
        return None
    return travel, None, place


def _going_away(chat: Chat, text: str) -> tuple[object, None, places.Place] | None:
    """(the playbook's trip, no trigger, the place) when the message tells of going to a place away from home."""
    travel = chat.playbook.of_kind("trip") or chat.playbook.of_kind("travel")
    if travel is None or EXPLICIT_ADD_RE.match(text):
        return None
    place = going.place_gone_to(text, chat.home)
    if place is not None and going.sent_to_event(text):
        travel = chat.playbook.of_kind("conference") or travel  # sent by work to a named event there
    return (travel, None, place) if place is not None else None


_MY_DAY_TODAY_RE = lazy_regex(
    r"^\s*(?:it'?s|it is|today is)\s+my\s+(?P<what>birthday|bday|anniversary|name day)"
    r"(?:\s+today)?\s*[!.]*\s*$",
    re.I,
)


def _plan_asked(chat: Chat, text: str) -> Reply | None:
    """ "Help me prepare for …", "set up the usual prep": the plan of what the rest of the message tells, whatever
    its shape (wilson/model/offline/plan_asked.py)."""
    rest = plan_asked(text)
    return _life_event(chat, rest, asked=True) if rest is not None else None


# a question, not a request put as one ("can you plan my trip …?") nor a name ("Will's birthday", "May's wedding")
_ASKS_RE = lazy_regex(
    r"^(?!\s*(?:can|could|would|will)\s+(?:you|u)\b).*\?\s*$|^(?:what|when|where|who|why|how|which)\b|^(?:is|are|was|were|do|does|did|should|shall|"
    r"have|has)\s+(?:i|we|he|she|they|it|the|my|our|there|that|this)\b",
    re.I,
)
# "in Wedding", "nach Wedding": the Berlin district, no wedding
_WEDDING_DISTRICT_RE = lazy_regex(r"\b(?:in|nach|to|from)\s+Wedding\b")


# a move "from A to B" is a home's when B is a place or a home is named ("moving from Jira to Linear" is not)
_MOVING_FROM_RE = lazy_regex(
    r"\b(?i:moving\s+from)\s+[\w'’-]+(?:\s+[\w'’-]+)?\s+(?i:to)\s+(?P<to>[\w'’-]+(?:\s+[A-Z][\w'’-]+)?)"
)
_HOME_RE = lazy_regex(r"\b(?:flat|apartment|house|home|place|lease|keys|wohnung)\b", re.I)


def _home_moved(text: str) -> bool:
    found = _MOVING_FROM_RE.search(text)
    return found is None or bool(_HOME_RE.search(text)) or places.named(found.group("to")) is not None


# what is planned is said before "before we fly …", "once she's born": that clause only says by when
# the event named only as what a thing must come before or after: "vor der Operation", "before my surgery"
_DATED_BY_RE = lazy_regex(
    r"\b(?:(?:vor|nach)\s+(?:der|dem|den|meiner|meinem)|vorm|(?:before|after)\s+(?:the|my|our))\s*$", re.I
)
_BEFORE_CLAUSE_RE = lazy_regex(
    r"\s*,?\s*\b(?:before|ahead\s+of|once|as\s+soon\s+as|vor)\s+(?:we|i|you|they|he|she|the\s+kids)\b[^,.;!?]*",
    re.I,
)
# a wish or a maybe, no event decided: "if I ever do the IELTS", "maybe we'll move", "thinking about moving"
_PAST_OR_NOT_RE = lazy_regex(
    r"^\s*(?:(?:and|but|so|well)\s+)?(?:(?:i|we)\s+)?(?:went|was|were|had|did|came\s+back|got\s+back|visited|"
    r"(?:i'?d|we'?d)\s+rather\s+not|(?:i|we)\s+(?:don'?t|do\s+not)\s+want\s+to\s+think)\b",
    re.I,
)
_HYPOTHETICAL_RE = lazy_regex(
    r"^\s*(?:(?:and|but|so)\s+)?(?:if|in\s+case|suppose|supposing|what\s+if|maybe|perhaps|someday|one\s+day|"
    r"i\s+might|we\s+might|i'?m\s+thinking\s+(?:about|of)|we'?re\s+thinking\s+(?:about|of)|"
    r"i\s+wish|wenn\s+ich\s+(?:mal|irgendwann)|falls)\b",
    re.I,
)


# someone else away on holiday, or back from it: "wenn der Verleih aus dem Urlaub zurück ist", "the plumber is on
# holiday until the 3rd" (not "we're back from holiday", "ich bin im Urlaub")
_OTHERS_HOLIDAY_RE = lazy_regex(
    r"\b(?!(?:ich|wir|i|we)\b)(?:der|die|das|er|sie|the|he|she|they|(?-i:[A-ZÄÖÜ])[\w-]+)\s+(?:[\w.-]+\s+){0,5}?"
    r"(?:(?:aus\s+dem|vom)\s+urlaub\s+zurück|(?:ist|sind)\s+(?:noch\s+|gerade\s+)?(?:im|in)\s+urlaub|"
    r"(?:is|are)\s+(?:still\s+|currently\s+)?(?:on|away\s+on)\s+(?:holiday|vacation)|"
    r"(?:is|are|gets?)\s+back\s+from\s+(?:(?:his|her|their)\s+)?(?:holiday|vacation))"
    # a practice's or a firm's own holiday: "the gastro practice is closed till 5 March, Praxisurlaub"
    r"|\b(?:praxis|betriebs|werks|firmen)(?:urlaub|ferien)\b",
    re.I,
)


def _held_off(args: dict, held: date, start_day: date) -> dict:
    """A plan's step due no earlier than the user's "not before" day, and a step before the event still before it
    ("Trip to Rome on 20 March, don't bug me before April" leaves the packing on the eve)."""
    if "due" not in args:
        return args
    due = date.fromisoformat(str(args["due"])[:10])
    later = max(due, held) if due >= start_day else min(max(due, held), start_day - timedelta(days=1))
    return {**args, "due": later.isoformat()}


def _life_event(chat: Chat, text: str, asked: bool = False) -> Reply | None:
    """A life event the user tells of (or, `asked`, asks a plan for) with its day: its playbook plan."""
    if not asked and _ASKS_RE.search(text.strip()):
        return None  # "is the Bari wedding on the 4th or the 5th?" asks, it plans nothing (a put-off is _remind's)
    held, hold = None, _DONT_BUG_RE.search(text)
    if hold is not None:  # "…, but don't bother me with it before June": the user's own time for its steps
        when = hold.group("when")
        day = dates.search(when, chat.now, chat.tz) or dates.search(f"in {when}", chat.now, chat.tz, months=True)
        held = dates.local_date(day[0].value, chat.tz) if day else None
        text = text[: hold.start()].strip() or text
    mine = _MY_DAY_TODAY_RE.match(text.replace("’", "'"))
    if mine:  # nothing left to plan for a day that is here: a word back
        return Reply(
            f"Happy {'birthday' if mine.group('what').lower() in ('birthday', 'bday') else mine.group('what')}! 🎉",
            [],
            "the user's own day, today",
        )
    if (acts.commanded(text) or acts.follow_up_need(text)) and not asked:
        return None  # "submit the visa application by Feb 20": one act, a task (_add, _command), not its plan
    if not asked and (
        _NO_EVENT_RE.match(text)
        or _NOT_GOING_RE.search(text)
        or _CALLED_OFF_RE.search(text)
        and _called_off(chat, text)
    ):
        return None  # "they called it off... so no wedding in may": an open topic's end, read by _called_off

    anniversary = _anniversary(chat, text)
    if anniversary is not None:
        return anniversary
    if _HYPOTHETICAL_RE.match(text) or _PAST_OR_NOT_RE.match(text.replace("’", "'")):
        # "if I ever do the IELTS …", "maybe we'll move next year": nothing decided to plan for; "went to the dentist
        # before Christmas, all fine", "I'd rather not think about taxes today": nothing ahead to plan for
        return None
    read = _WEDDING_DISTRICT_RE.sub(" ", text)
    matched = None if EXPLICIT_ADD_RE.match(text) else recognise_message(chat.playbook, read)
    main = _BEFORE_CLAUSE_RE.sub("", read)
    if matched and main != read and not matched[0].find(main):
        # "a new passport before we fly in April": the trip only dates what the message is about
        matched = recognise_message(chat.playbook, main) or matched
    sum_to_pay = payments.amount_of(text) is not None and chat.playbook.of_kind("bill") is not None
    if matched and matched[0].name == "bill" and matched[1] is not None and not sum_to_pay:
        if matched[1].group(0).lower() in ("fällig", "due"):
            matched = None  # "die HU für unseren Leichenwagen ist fällig": a thing due, no sum, is no bill
    if asked and sum_to_pay and (matched is None or matched[0].name == "official"):
        # "get me ready for the car insurance renewal? 890 euros due 1 March": a sum to put aside, the bill's plan
        matched = (chat.playbook.of_kind("bill"), None)
    elif sum_to_pay and (matched is None or matched[0].name in ("official", "trip")) and _owed(chat, text):
        # "annual membership for the rowing club, 260 €, due end of January", "the kids' school trip money, 35 euros,
        # by Monday": a sum and its day with no bill word is still a bill, whatever the money is for
        bill = _billed(chat, text)
        return bill
    party = chat.playbook.of_kind("party")
    if matched and matched[0].name == "wedding" and party is not None and _OWN_ANNIVERSARY_RE.search(read):
        matched = (party, matched[1])  # "Meine Frau und ich haben am 12. Februar Goldene Hochzeit": a party to give
    if matched and matched[0].name == "wedding" and not _OWN_ANNIVERSARY_RE.search(read):
        away = _going_away(chat, text)
        if away is not None and chat.home is not None and not places.domestic(away[2], chat.home):
            # "going home to Accra for my little brother's wedding, 3 to 24 august": the trip is what needs planning
            matched = None
    move = chat.playbook.of_kind("move")
    if matched and matched[0].name == "trip" and move is not None and _I_MOVE_AWAY_RE.search(read):
        # "I'm moving to Montréal for good, flight is on 22 January": the user's own move, flown to
        matched = (move, move.find(read) or matched[1])
    if matched:
        event, trigger = matched
        if not asked and trigger is not None and _DATED_BY_RE.search(text[: trigger.start()]):
            return None  # "… muss vor der Operation raus, spätestens 19.2.": the event dates a thing to do, told before
        if event.name == "bill" and payments.not_to_pay(text):
            return None  # "I already paid the gas bill": nothing left to plan
        if event.name == "move" and not _home_moved(text):
            return None  # "moving from Jira to Linear on 1 Feb" is no home moved
        others = _OTHERS_HOLIDAY_RE.search(text) if event.name == "trip" and trigger is not None else None
        if others is not None and others.start() <= trigger.start() < others.end():
            # "…, wenn der Verleih am 1. Juni aus dem Urlaub zurück ist": the trip word is the shop's holiday
            return None
        married = re.search(r"\bmarried\b", trigger.group(0) if trigger else "", re.I)
        if (
            (event.name not in ("wedding", "birthday") or married and not _FAMILY_RE.search(text))
            and _someone_elses(chat, text)
            and not (event.name == "medical" and _looked_after(chat, text))
            or event.name == "birthday"
            and _FRIENDS_PARTY_RE.match(text.replace("’", "'"))
            and not _ME_RE.search(text.replace("’", "'"))
        ):
            # "my colleague Tom has his final exam next week" is Tom's exam, "my colleague Priya is getting married"
            # hers (a sister's wedding is one the user goes to)
            return None
        place = places.find_place(None, text)
    else:
        away = _going_away(chat, text) or (_somewhere_away(chat, text) if asked else None) or _stayed_at(chat, text)
        if away is None and asked and chat.playbook.of_kind("event") is not None:
            # a plan asked for something no other kind knows: the steps every event has, named as the message names it
            away = (chat.playbook.of_kind("event"), None, places.find_place(None, text))
        if away is None:
            return None
        event, trigger, place = away
    # the age reached is no date ("Leo turns five on 3 March": "five" is not 5 o'clock)
    aged = trigger is not None and re.match(r"(?:turns|wird)\s", trigger.group(0), re.I)
    dated = text[: trigger.start()] + trigger.group(0).split()[0] + text[trigger.end() :] if aged else text
    # "for two weeks" says how long, not when: a message with no other date has no start
    # a stay away said by its month ("we are going to Paris in March") starts on the month's 1st
    # a day years away is an age or a count misread ("Mum's 70th is on the 20th"), no start
    found = [
        f
        for f in dates.search(dated, chat.now, chat.tz, months=True)
        if not going.HOW_LONG_RE.match(f.phrase) and dates.local_date(f.value, chat.tz).year <= chat.today.year + 3
    ]
    if not found:
        return None
    title = place_title(event, text, trigger, place) if trigger is not None or "{place}" in event.title else event.label
    if event.name == "event":
        title = _event_named(text, place) or title
    todo = ADD_RE.match(text)
    if todo and "{place}" not in event.title and not asked:
        # "I need to file my taxes by the 25th": the topic is what the user has to do
        what, _ = _split_when(_BEFORE_CLAUSE_RE.sub("", todo.group("what")), chat)
        if words(what):
            title = _title(POSSESSIVE_RE.sub("", what))
    start = (_day_and_hour(found, chat.tz) or (found[0],))[0]
    start_day = dates.local_date(start.value, chat.tz)
    if (
        not asked
        and all(dates.local_date(f.value, chat.tz) <= chat.today for f in found)
        and deeds_in_passing.tells_deed(text)
    ):
        return None  # "Ayşe war heute für mich beim Bezirksamt, die Genehmigung ist verlängert": done, nothing to plan
    notes = f"From your message: {text}"  # how the date was read is the proposal's reason, not the topic's notes
    calls = plan_calls(
        event,
        title,
        dates.iso(start.value),
        going.stay_end(text, start_day),
        start_day,
        chat.today,
        notes,
        chat.topics,
        chat.tasks,
        places.domestic(place, chat.home),
    )
    # "Moving to Leipzig on 30 April, gave notice on the old flat today": a step the message says is done is left out
    calls = [c for c in calls if not (c[0] == "create_task" and _told_done(text, str(c[1].get("title") or "")))]
    if event.name == "trip" and _BY_TRAIN_RE.search(text) and not _FLYING_RE.search(text):
        calls = _by_train(calls)
    calls = _steps_said(chat, text, title, start_day, calls)
    if not calls:
        return None
    if held is not None:  # no step due before the day the user said to leave them alone until, nor after the event
        calls = [
            (name, _held_off(args, held, start_day)) if name == "create_task" else (name, args) for name, args in calls
        ]
    why = (
        f"“{trigger.group(0)}” in the message"
        if trigger is not None
        else f"going to {place.name}, {places.away(place, chat.home) or 'away from home'}"
        if place is not None
        else "a plan asked for"
        if event.name == "event"
        else "a sum to put aside, and a plan asked for"
    )
    return Reply("", calls, f"{why} (playbook: {event.name}), {start.stated(chat.tz)}")


# a name in capitals after "at", "for" or "the": "a spot at the Potsdam Weihnachtsmarkt", "for the Lange Nacht"
_EVENT_NAME_RE = lazy_regex(
    r"\b(?:at|for|to|on|the|am|beim|zum|zur|auf\s+dem|auf\s+der)\s+(?:the\s+)?"
    r"(?P<name>(?-i:[A-ZÄÖÜ])[\w'’&-]+(?:\s+(?-i:[A-ZÄÖÜ])[\w'’&-]+){0,3})",
    re.I,
)


# the user's own move for good, said with its flight: not someone else's ("to help my sister move"), not a stay
# ("moving to Lisbon for the summer")
_I_MOVE_AWAY_RE = lazy_regex(
    r"\b(?:i'?m|i\s+am|we'?re|we\s+are)\s+(?:(?:finally|officially|actually)\s+)?(?:moving|relocating|emigrating)\s+"
    r"(?:to|back\s+to)\b(?![^.!?]*\bfor\s+(?:the\s+)?(?:summer|winter|spring|autumn|semester|season|a\s+few|\d+|"
    r"one|two|three|six)\b)",
    re.I,
)
# one's own wedding anniversary, celebrated: said of "my wife and I", "we", "our" (a parents' or an aunt's is a
# wedding to go to)
_OWN_ANNIVERSARY_RE = lazy_regex(
    r"^(?=.*\b(?:goldene|silberne|diamantene|golden|silver|ruby|diamond)\s+(?:hochzeit|wedding)|.*\bsilberhochzeit)"
    r"(?=.*\b(?:meine\s+frau\s+(?:\w+\s+)?und\s+ich|mein\s+mann\s+(?:\w+\s+)?und\s+ich|"
    r"my\s+(?:wife|husband)\s+(?:\w+\s+)?and\s+i|wir\s+haben|"
    r"(?:we|we'?re|we\s+are)\s+(?:celebrat|hav)\w*|unsere?n?\s+(?:goldene|silberne|diamantene|silberhochzeit)|"
    r"our\s+(?:golden|silver|ruby|diamond)))(?!.*\b(?:eingeladen|invited)\b)",
    re.I | re.S,
)


def _event_named(text: str, place) -> str | None:
    """What the message calls the event: its first name in capitals that is no date ("Potsdam Weihnachtsmarkt"),
    else "Event in <place>"; None when it names neither."""
    for found in _EVENT_NAME_RE.finditer(text):
        name = found.group("name").split()
        while name and name[-1].lower().strip(".,") in DATE_WORDS:
            name.pop()
        if name and name[0].lower() not in DATE_WORDS and not (len(name) == 1 and len(name[0]) < 4):
            return " ".join(name)
    return f"Event in {place.name}" if place is not None else None


_NOT_ALL_MINE_RE = lazy_regex(r"\bfor\s+(?:my|his|her|their|our)\s+\w+|\bbut\s+not\b|\bnot\s+yet\b", re.I)


def _told_done(text: str, title: str) -> bool:
    """Whether the message says a plan's step is done already: the step's verb in the past, then its thing within a
    few words ("gave notice on the old flat today" of "Give notice on the current lease"), not negated."""
    verb, *rest = title.lower().split() or [""]
    thing = next((w for w in rest if words(w)), None)
    pasts = [past for past, base in DONE_VERBS.items() if base == verb and " " not in past]
    if thing is None or not pasts:
        return False
    said = re.search(
        # said of the user (no one else before the verb): at a clause's start, or after "I", "we", "already", "just"
        rf"(?:^|[,;.!:–—-]\s*|\b(?:and|i|we|i've|we've|already|just|also)\s+)"
        rf"(?:{'|'.join(map(re.escape, pasts))})\s+(?:[\w'’-]+\s+){{0,2}}?{re.escape(thing)}\b(?P<rest>[^,;.!?]*)",
        text,
        re.I,
    )
    # "… for my sister", "… in Kyoto but not Tokyo": someone else's, or only part of it
    return said is not None and not _NOT_ALL_MINE_RE.search(said.group("rest"))


def _owed(chat: Chat, text: str) -> bool:
    """A sum the user has to find by a day: not one paid already, not someone else's, not a trip to a place."""
    return not (
        EXPLICIT_ADD_RE.match(text)  # "add: pay for the school trip, 185 €, by 29 January" names its own task
        or ADD_RE.match(text)
        or payments.not_to_pay(text)
        or deeds_in_passing.paid_already(text)
        or _someone_elses(chat, text)
        or re.search(r"\bowes?\s+(?:me|us)\b", text, re.I)  # money coming in is no bill
        or places.find_place(None, text) is not None
        or _ASKS_RE.search(text.strip())
    )


def _billed(chat: Chat, text: str) -> Reply | None:
    """The bill's plan for a sum and its day: titled by what the money is for, said before the sum."""
    event = chat.playbook.of_kind("bill")
    amount = payments.AMOUNT_RE.search(text)
    found = [
        f
        for f in dates.search(text, chat.now, chat.tz)
        # "for four months, 196 euros": the sum is no day, and how long is no day either
        if not (f.start < amount.end() and f.start + len(f.phrase) > amount.start())
        and not going.HOW_LONG_RE.match(f.phrase)
    ]
    if not found:
        return None
    head = text[: min(amount.start(), found[0].start)]
    head = re.sub(r"^(?:(?:heads[- ]up|fyi|btw|note|reminder|ok|so)\b[\s,:!-]*)+", "", head.strip(), flags=re.I)
    head = re.sub(r"(?:[\s,:–-]|\b(?:of|is|are|for|costs?|comes to)\b)+$", "", head, flags=re.I)
    head = re.sub(r"^(?:the|my|our)\s+", "", head, flags=re.I)
    title = _title(head) if words(head) else event.label
    title = f"{title} ({payments.amount_of(text)})"
    start = found[0]
    start_day = dates.local_date(start.value, chat.tz)
    calls = plan_calls(
        event,
        title,
        dates.iso(start.value),
        None,
        start_day,
        chat.today,
        f"From your message: {text}",
        chat.topics,
        chat.tasks,
    )
    if not calls:
        return None
    return Reply("", calls, f"a sum to pay by a day (playbook: bill), {start.stated(chat.tz)}")


# the journey said: "train both ways", "mit dem Zug", "by rail"; and flying, which wins when both are said
_BY_TRAIN_RE = lazy_regex(r"\b(?:trains?|by rail|zug|bahn|ice|deutsche bahn|db)\b", re.I)
_FLYING_RE = lazy_regex(r"\b(?:fly|flying|flight|flights|flug|fliegen|plane|airport|flughafen)\b", re.I)


def _by_train(calls: list[tuple[str, dict]]) -> list[tuple[str, dict]]:
    """A trip by train: its tickets booked, and no flight's online check-in."""
    kept = []
    for name, args in calls:
        if name == "create_task" and args.get("title") == "Check in":
            continue
        if name == "create_task" and args.get("title") == "Book flights":
            args = {**args, "title": "Book train tickets"}
        kept.append((name, args))
    return kept


# a step the user names while telling the event: "and I need the Einverständniserklärungen from all the parents by end
# of april", "we need to book the bus before March"
_STEP_SAID_RE = lazy_regex(
    r"\b(?:i|we)\s+(?:still\s+|also\s+)?need\s+(?:to\s+(?P<act>[^,.;!?]{3,60}?)|"
    r"(?P<thing>(?:the|all the|my|our)\s+[^,.;!?]{3,60}?))\s+(?:by|before|until)\s+(?P<when>[^,.;!?]{3,30})"
    # "Die Einladungen sollen bis Mitte Juni raus"
    # "der Pflegedienst vor Ort, der ihm morgens … hilft, muss bis Ende Juni fest zugesagt haben"
    r"|\b(?:die|der|das)\s+(?P<ding>[\w-]+)(?:\s+(?:vor\s+ort|[a-zäöü][\w-]*)){0,2}(?:\s*,[^.;!?]{0,100}?,)?\s+"
    r"(?:sollen|müssen|soll|muss)\s+bis\s+(?P<bis>[^,.;!?]{3,30}?)\s+(?:fest\s+)?"
    r"(?:raus|fertig|verschickt|da\s+sein|(?P<agreed>zugesagt\s+haben|bestätigt\s+sein|zugesagt\s+sein))\b"
    # "and I need to hand in my Pflegeplanung to Frau Okonkwo a week before": a time before the event itself
    r"|\b(?:i|we)\s+(?:still\s+|also\s+)?need\s+to\s+(?P<step>[^,.;!?]{3,60}?)\s+(?P<n>a|one|two|three|four|\d+)\s+"
    r"(?P<unit>days?|weeks?)\s+before\b",
    re.I,
)
_COUNTS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4}
# the German word for a step a plan already holds, said by the user with its day ("Einladungen" of "Send the
# invitations"): the planned step takes the day, and is not written twice
_STEP_WORDS = {"einladungen": "invitations", "einladung": "invitations", "invitations": "invitations"}


def _steps_said(chat: Chat, text: str, topic: str, start_day, calls: list) -> list[tuple[str, dict]]:
    """The plan's calls with the steps the message names with their day before the event: a step the plan holds
    takes that day, another is added as a task of the plan."""
    calls = list(calls)
    for said in _STEP_SAID_RE.finditer(text):
        if said.group("step"):
            count = _COUNTS.get(said.group("n").lower()) or int(said.group("n"))
            before = timedelta(weeks=count) if said.group("unit").lower().startswith("week") else timedelta(days=count)
            title = _title(said.group("step"))
            calls.append(("create_task", {"title": title, "due": (start_day - before).isoformat(), "topic": topic}))
            continue
        day = dates.search(said.group("when") or said.group("bis"), chat.now, chat.tz)
        if not day or not dates.local_date(day[0].value, chat.tz) < start_day:
            continue
        thing = said.group("thing") or said.group("ding") or ""
        known = _STEP_WORDS.get(thing.lower().split()[-1] if thing else "")
        planned = [i for i, (name, args) in enumerate(calls) if known and known in str(args.get("title", "")).lower()]
        if planned:
            name, args = calls[planned[0]]
            calls[planned[0]] = (name, {**args, "due": dates.iso(day[0].value)})
            continue
        title = _title(said.group("act") or (f"get the {thing} confirmed" if said.group("agreed") else f"get {thing}"))
        if any(args.get("title") == title for _, args in calls):
            continue
        calls.append(("create_task", {"title": title, "due": dates.iso(day[0].value), "topic": topic}))
    return calls


# what someone or something needs of the user by a day: "my boss wants the quarterly report by Friday", "the landlord
# needs the signed contract back before the 15th", "the car needs its MOT by the end of next month"
_WANTED_BY_RE = lazy_regex(
    r"^(?:(?:my|our|the)\s+)?(?P<who>[\w'’ -]{2,30}?)\s+(?:wants|needs|need|expects|requires|"
    r"is waiting for|are waiting for|asked for|asks for)\s+(?P<what>(?!to\b|me\b|us\b)[^,.;!?]+?)\s+"
    r"(?=(?:by|before|until|till|no later than|within)\b)",
    re.I,
)
# who wants a thing sent, not got for them
_SENT_TO_RE = lazy_regex(
    rf"\b(?:{_PEOPLE}|landlord|landlady|client|customer|office|school|bank|hr|accountant|insurance|"
    r"agency|university|uni|council|company|employer|they|he|she|doctor|lawyer|notary|tax office|"
    r"finanzamt|hausverwaltung|supervisor|professor|editor)\b",
    re.I,
)


def _wanted_by(chat: Chat, text: str) -> Reply | None:
    """A thing someone wants of the user by a day: a task to send it to them (or to get it, for a thing that needs
    it), due that day."""
    found = _WANTED_BY_RE.match(text.strip())
    if found is None or _ASKS_RE.search(text) or re.fullmatch(r"(?:i|we|you)", found.group("who").strip(), re.I):
        return None
    when = dates.search(text[found.end() :], chat.now, chat.tz)
    if not when:
        return None
    if (eve := _eve_if_before(when[0], text[found.end() :][: when[0].start])) != when[0].value:
        # "the KSK wants my income estimate before the 15th of February": done by the 14th
        when = [dates.Found(when[0].phrase, eve, when[0].start, "the day before it")]
    who = found.group("who").strip()
    what = re.sub(r"^(?:its|their|his|her)\b", "the", found.group("what").strip(), flags=re.I)
    back = " back" if re.search(r"\s+back$", what, re.I) else ""
    what = re.sub(r"\s+back$", "", what, flags=re.I)
    lead = re.match(r"(?:my|our|the)\s+", text.strip(), re.I)
    whom = f"{lead.group(0).strip().lower() if lead else ''} {who}".strip()
    task = _task_said(chat, what)
    if task is not None:
        # "the school wants the reply about the outing by the 15th now": the task there gets the new day
        return Reply(
            "",
            [("update_task", {"task_id": task.get("id"), "due": dates.iso(when[0].value)})],
            f"a task wanted by a new day ({when[0].stated(chat.tz)})",
        )
    sent = _SENT_TO_RE.search(who) and not re.search(r"\b(?:kids?|children|son|daughter|baby|dog|cat)\b", who, re.I)
    title = f"Send {what}{back} to {whom}" if sent else f"Get {what} for {whom}"
    return Reply(
        "",
        [("create_task", {"title": title, "due": dates.iso(when[0].value)})],
        f"something wanted by a day ({when[0].stated(chat.tz)})",
    )


# "our wedding anniversary is on the 20th": a day to remember, not a wedding to prepare (nor someone's birthday)
_ANNIVERSARY_RE = lazy_regex(
    r"\b(?P<what>(?:(?:our|my|your)\s+)?(?:(?!(?:is|it'?s|on|the)\b)[\w'’-]+\s+){0,2}?"
    r"(?:anniversary|jahrestag|hochzeitstag))\b",
    re.I,
)


def _anniversary(chat: Chat, text: str) -> Reply | None:
    """An anniversary told with its day: a reminder on that day (09:00, as a reminder with no hour); someone else's,
    or one without a day, is news."""
    found = _ANNIVERSARY_RE.search(text)
    if found is None or re.search(r"\b(?:birthday|bday|geburtstag)\b", text, re.I) or _someone_elses(chat, text):
        return None
    when = dates.search(text, chat.now, chat.tz)
    at = dates.at_moment(when[0], chat.now, chat.tz) if when else None
    if at is None:
        return None
    what = re.sub(r"^my\b", "your", found.group("what").strip(), flags=re.I)
    label = what[:1].upper() + what[1:]
    return Reply(
        "",
        [("remind", {"text": label, "at": at.isoformat()})],
        f"an anniversary to remember ({when[0].stated(chat.tz)})",
    )


IN_TOPIC_RE = lazy_regex(r"^(?P<what>.+?)\s+(?:to|for|in|on|under)\s+(?:the|my|our)\s+(?P<topic>.+?)$", re.I)


def _in_topic(chat: Chat, what: str) -> tuple[str, dict | None]:
    """ "buy a rail pass to the Japan trip" → ("buy a rail pass", the topic Trip to Japan): the one open topic
    every word there names. The phrase leaves the title only when it names the topic as one ("the Japan
    trip", "the Japan topic", its whole title); "send the x-rays to the dentist" keeps its dentist."""
    found = IN_TOPIC_RE.match(what)
    if not found:
        return what, None
    phrase = found.group("topic")
    if re.fullmatch(r"(?:to-?do\s+|task\s+)?list|tasks|to-?dos", phrase, re.I):
        return found.group("what"), None  # "add call mum to my list": the list is where tasks are anyway
    if re.fullmatch(r"(?:shopping|grocery|groceries)\s+list", phrase, re.I):
        # "add oat milk to my shopping list": a thing to buy, on the one list
        item = re.sub(r"^buying\s+", "buy ", found.group("what"), flags=re.I)
        return (item if re.match(r"(?:buy|get|pick up)\b", item, re.I) else f"buy {item}"), None
    topics = looks.topics_named(chat, phrase)
    if len(topics) != 1:
        return what, None  # none, or two that share the words: which one is not guessed
    topic = topics[0]
    as_topic = looks.CONTAINER_RE.search(phrase) or words(looks.CONTAINER_RE.sub(" ", phrase)) == words(
        str(topic.get("title"))
    )
    return (found.group("what") if as_topic else what), topic


# a thing needed by a day: "i need new passport photos for the Personalausweis in the next fortnight"
_NEED_THING_RE = lazy_regex(
    r"^\s*(?:i|we)\s+(?:still\s+|also\s+|really\s+|urgently\s+)*need\s+(?!to\b)"
    r"(?P<what>(?:a|an|new|the|some|more|my|our|\d+)\s+(?!(?:break|rest|holiday|vacation|nap|drink|coffee|hug|"
    r"day off|minute|moment|sleep|word)\b).+)$",
    re.I,
)


def _thing_needed(chat: Chat, text: str) -> Reply | None:
    """A thing the user needs by a day is a task to get it, due then (a need with no day is left alone)."""
    found = _NEED_THING_RE.match(text.strip().replace("’", "'"))
    if found is None:
        return None
    what, when = _split_when(found.group("what"), chat)
    if when is None or not words(what):
        return None
    return _add(chat, f"add get {what} {when.phrase}")


_REASON_AFTER_DASH_RE = lazy_regex(
    r"\s+[–—-]\s+(?:they|he|she|it|we|i|you|my|our|because|since|as|otherwise|weil|denn|sonst|er|es)\b.*$",
    re.I,
)


def _add(chat: Chat, text: str) -> Reply | None:
    found = ADD_RE.match(text)
    if not found:
        return None
    what = found.group("what")
    told = _REASON_AFTER_DASH_RE.sub("", what)
    if told != what and dates.search(told, chat.now, chat.tz):
        what = told  # "… ready by 31 October – my appointment … is on 7 November": the day is the one before the dash
    what, when = _split_when(what, chat, deadline=True)
    if not words(what) or re.match(r"(?:say|admit|confess|tell you)\b\s*[,:]", what, re.I):
        return None  # "I have to say, that was fun" asks for nothing
    what, topic = _in_topic(chat, what)
    # "Abmeldung beim Bürgeramt, but not before jan 15 – they only do it within a week of leaving": the day is read,
    # and neither what was left of its clause nor the reason after a dash is part of the title
    what = _REASON_AFTER_DASH_RE.sub("", what) or what
    what = re.sub(r"[,;]?\s*\bbut\s+not\s*$", "", what, flags=re.I) or what
    what = re.sub(r"\s+for (?:me|us)$", "", what, flags=re.I) or what  # "chase up the plumber for me"
    what = re.sub(r"^(?:for\s+)?(?:me|us)\s+to\s+", "", what, flags=re.I) or what  # "add a task for me to order …"
    args = {"title": _title(acts.imperative(what)), **({"topic": topic.get("title")} if topic else {})}
    rule = "add a task" + (f" to the topic {topic.get('title')}" if topic else "")
    if when is not None:
        due = _deadline(when, chat)
        args["due"] = dates.iso(due)
        rule += f" ({dates.Found(when.phrase, due, when.start, when.reading).stated(chat.tz)})"
    return Reply("", [("create_task", args)], rule)


# "could you call the plumber tomorrow", "can you pick up the parcel on friday": an act only the user can do, asked
# of Wilson; put on the list as the user's task. Not an act Wilson might be taken to do itself (look something
# up, book, order, write or send), and not a question ("can you order a pizza?"): those get the honest help
_ASKED_ACT_RE = lazy_regex(
    r"^\s*(?:(?:can|could|would|will)\s+(?:you|u)\s+)(?:please\s+|pls\s+|just\s+)*"
    r"(?!(?:check|find|look|research|compare|book|order|reserve|send|email|e-mail|text|message|write|reply|respond|"
    r"answer|ask|invite|thank|confirm|contact|arrange|read|print|scan|download|upload|translate|review|update|"
    r"register|apply|learn|cook|bake|make|do|get)\b)",
    re.I,
)


# "write something funny for frieda's birthday card", "come up with a toast for the wedding": words to be made up,
# asked of the assistant (not a task of the user's)
_MAKE_ME_WORDS_RE = lazy_regex(
    r"^\s*(?:please\s+)?(?:write|compose|draft|come\s+up\s+with|think\s+of|suggest)\s+(?:me\s+|us\s+)?"
    r"(?:something|anything|a\s+(?:poem|joke|rhyme|toast|speech|few\s+lines|line|funny|nice|short|sweet)|some\s+"
    r"(?:words|lines|ideas|jokes))\b",
    re.I,
)


def _command(chat: Chat, text: str) -> Reply | None:
    """ "Call the bank tomorrow", "buy milk": a single act said as a command is a task (wilson/model/offline/acts.py)."""
    if _MAKE_ME_WORDS_RE.match(text):
        return None  # "write something funny for the card": words asked of Wilson, which offline has none of
    asked = _ASKED_ACT_RE.match(text)
    if asked and acts.commanded(text[asked.end() :]):
        text = text[asked.end() :]
    if not acts.commanded(text):
        return None
    german = acts.german_todo(text)
    if german is not None:  # "Steuererklärung abgeben bis Freitag": titled as a German writes it, its day apart
        what, when = _split_when(text, chat)
        reply = _add(chat, "add " + (acts.german_todo(what) or german))
        if reply is not None and when is not None:
            reply.calls[0][1]["due"] = dates.iso(when.value)
            reply.rule += f" ({when.stated(chat.tz)})"
        return reply
    return _add(chat, "add " + re.sub(r"^\s*please\s+", "", text, flags=re.I))


ON_IT_RE = lazy_regex(
    r"^(?:(?:ok|okay|sure|yes|yep|got it|thanks)\s+)*(?:i'?m\s+|i\s+am\s+)?"
    r"(?:on\s+it|working\s+on\s+it|will\s+do|doing\s+it)(?:\s+(?:now|thanks))*$"
)


_NOT_A_WORD_RE = lazy_regex(r"[^\w'\s]")


def is_on_it(text: str | None) -> bool:
    """The user's whole message says they are dealing with it ("on it", "working on it", "will do")."""
    if not text or len(text) > 60:
        return False
    words = " ".join(_NOT_A_WORD_RE.sub(" ", text.lower().replace("’", "'")).split())
    return ON_IT_RE.match(words) is not None
