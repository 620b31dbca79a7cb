"""The router: which role a stimulus goes to (routine chat to fast, the rest to deep), and the
deadline follow-ups phrased from a template when nothing needs judgement."""

from __future__ import annotations

import re
from datetime import datetime

from actors.cortex import noted
from actors.cortex.context import _words, recent_turns
from actors.cortex.missed import asks_what_was_missed, last_told_unasked, missed_view, since_last_said
from actors.proposals.rules import OPEN
from storage import reads
from storage.models import Approval, ApprovalItem, Inbox, TaskFiring, Turn
from wilson.kernel.clock import as_utc
from wilson.model.offline import missed
from wilson.skills import is_int


def briefing_lines(row: Inbox) -> str:
    """What triage kept for the morning briefing, in triage's own words: one line per thing, and a thing several
    items say (five receipts from one shop, grouped by triage or not) once, with how many there were."""
    counts: dict[str, int] = {}
    for item in (row.payload or {}).get("items") or []:
        summary = " ".join(str(item.get("summary") or "").split()) if isinstance(item, dict) else ""
        if summary:
            counts[summary] = counts.get(summary, 0) + max(1, len(item.get("buffer_ids") or ()))
    if not counts:
        return row.text
    return "\n".join(f"• {summary}" + (f" ({n} of these)" if n > 1 else "") for summary, n in counts.items())


def fallback_followup(row: Inbox, tz) -> str | None:
    """A deadline, reminder or briefing in plain words, for when no model is needed or none can phrase it;
    None for other rows."""
    payload = row.payload or {}
    if row.kind == "briefing":
        return briefing_lines(row)
    if row.kind == "reminder":
        return f"Reminder: {payload.get('text') or row.text}"
    if row.kind != "deadline":
        return None
    title, window = payload.get("title") or row.text, payload.get("window") or ""
    due = ""
    if payload.get("due"):
        local = datetime.fromisoformat(payload["due"]).astimezone(tz)
        due = f" ({local:%a} {local.day} {local:%b})"
    if window == "overdue":
        return f"“{title}” is overdue{due}. Done, or shall we move it?"
    if window == "due":
        return f"“{title}” is due today{due}."
    days = window[:-1] if window.endswith("d") else window
    return f"Reminder: “{title}” is due in {days} day{'s' if days != '1' else ''}{due}."


# Routing ----------------------------------------------------------------------
_ROUTINE = re.compile(
    r"(hi|hello|hey|hiya|good (morning|afternoon|evening|night)|thanks|thank you|thx|cheers|ok|"
    r"okay|cool|great|nice|perfect|got it|bye|see you)\b[\s\w,.!?']{0,40}",
    re.I,
)


_LOOKUP = re.compile(
    r"(what|what's|whats|when|when's|where|which|who|do i|did i|am i|is there|are there|"
    r"anything|any news|show( me)?|list|how (many|much|long|busy|far)|"
    r"remind me (what|when|where|who))\b",
    re.I,
)


# The user saying how or where they are ("I'm tired today", "heading out, back at 6"), and nothing more: a closed
# list of states with a short tail of when, matched whole, so that "I'm sick, tell my boss" or "I'm flying to
# Berlin on Friday" still reach the planner.
_STATE = (
    r"(so |very |really |a bit |quite |pretty )?(tired|sick|ill|exhausted|knackered|sleepy|bored|stressed|"
    r"hungry|fine|ok|okay|good|great|home|back|out|busy|free|awake|up|here|at home|at work|at the office|"
    r"in the office|working from home)"
)
_GOING = (
    r"(heading out|off to (bed|sleep|work)|going to (bed|sleep)|on my way( home| to work)?|leaving (now|work)|"
    r"got (home|back|in))"
)
_WHEN = (
    r"(,|and|so)? ?(today|tonight|now|right now|this (morning|afternoon|evening)|all day|for (a bit|a while|"
    r"an hour|the day)|back (at|in|by|around) \d{1,2}([:.]\d\d)? ?(am|pm|h|hours|minutes|mins)?|"
    r"back (soon|later)|again|finally|already)"
)
_STATUS = re.compile(
    rf"((i'm|im|i am|i was|i've been|i feel|feeling|just) {_STATE}|(i'm |i am |just )?{_GOING})"
    rf"( ?{_WHEN})*[ .!]*",
    re.I,
)


# words that ask for a plan or a change: the deep role with every tool
_PLANNING = re.compile(
    r"\b(plan|planning|trip|organi[sz]e|prepare|book|schedule|move|add|create|"
    r"remind me (to|at|on|in|about|tomorrow)|reminder|cancel|delete|remove|change|rename|"
    r"postpone|snooze|send|reply|write (to|an?|back to)|draft|buy|set up|arrange|help me|"
    r"done with|finished|complete|close|watch|forget)\w*",
    re.I,
)


# One note, task or reminder, asked for in so many words ("note to self: buy milk", "remind me to call Mum at 5",
# "add oat milk to my shopping list"): the fast role with the tools of a note, which hands on what is more.
_NOTE = re.compile(
    r"(note to self\b|note\s*[:\-\u2013\u2014]|memo\s*[:\-\u2013\u2014]|"
    r"remind me (to|at|on|in|about|tomorrow|tonight|this)\b|"
    r"(add|put) .{1,60} (to|on) (my |the )?(shopping |grocery |to-?do |todo )?(list|tasks)\b)",
    re.I,
)
# ... unless it is more than one note: a plan, mail or a word to someone, a repeat, a change to what exists,
# several things (a list, "and"), or a question (a look, which the reads of routine chat answer)
_MORE_THAN_A_NOTE = re.compile(
    r"\b(plan|plans|planning|planned|trips?|organi[sz]\w*|prepar\w*|book|books|booking|booked|schedul\w*|"
    r"reschedul\w*|cancel\w*|delet\w*|remov\w*|renam\w*|move|moves|moved|moving|postpon\w*|send\w*|sent|"
    r"repl(y|ies|ied)|writ\w*|wrote|draft\w*|e-?mails?|mail|watch\w*|forget\w*|forgot|tell|told|texts?|texting|"
    r"message\w*|invit\w*|let \w+ know|every|each|daily|weekly|fortnightly|monthly|yearly|annually|hourly|"
    r"weekdays|weekends|(mon|tues|wednes|thurs|fri|satur|sun)days|and|also|then)\b|[,;?]",
    re.I,
)

ROUTINE_CHARS = 120

# An acknowledgement and nothing more ("thanks!", "ok, sounds good", "great, thank you 👍"), matched whole: it asks
# nothing, so it is answered from a template; judgement_for sends it to a model when a proposal waits for the
# user's word or Wilson's last line asked something (the "ok" may answer either), and for a first word.
# Words are parted by a space or a stop (one way to read "ok thanks", none for "kkkk"), a glad emoji may end it
# ("ok 👎" or "ok :(" is no plain "ok"), and a long message is no acknowledgement, however it is made.
_THANKS = r"(?:thanks|thank you|thank u|thx|ty|cheers|many thanks|much appreciated)"
_OK = r"(?:ok|okay|k|cool|great|nice|perfect|lovely|fine|good|alright|got it|sounds good|all good|noted)"
_WORD = rf"(?:{_OK}|{_THANKS})(?: (?:so much|a lot|again|then))?"
_GLAD = (
    "\N{THUMBS UP SIGN}\N{OK HAND SIGN}\N{PERSON WITH FOLDED HANDS}\N{SLIGHTLY SMILING FACE}"
    "\N{SMILING FACE WITH SMILING EYES}\N{GRINNING FACE}\N{HEAVY BLACK HEART}\N{WHITE HEAVY CHECK MARK}"
    "\N{PARTY POPPER}\ufe0f"
)
_ACK = re.compile(rf"{_WORD}(?:[\s,.!]+{_WORD})*(?:[\s,.!]|[{_GLAD}]|:-?\)|:D)*", re.I)
ACK_CHARS = 60
ACK_REPLIES = {"thanks": "You're welcome!", "ok": "\N{THUMBS UP SIGN}"}
# A message that answers one of Wilson's in particular (a reply to it, an edit of an earlier one, a photo) is
# never answered from a template: a 👍 would talk past what it answers.
_ANSWERS = ("reply_to", "replaces", "attachment")


def _text(row: Inbox) -> str:
    return (row.text or "").strip().replace("\u2019", "'")  # a phone's apostrophe reads as the keyboard's


def choose_route(row: Inbox, judgement: str = "") -> tuple[str, str]:
    """("fast" | "deep" | "template", why). A user's thanks or "ok", and "what did I miss?" asked alone, are
    answered from a template unless `judgement` says why they need a model. Routine chat (greetings, a lookup)
    and one note, task or reminder the user asks for go to the fast role, which can hand them on. A deadline
    or reminder follow-up is phrased from a template unless `judgement` (from `judgement_for`) says why it
    needs a model, and so is the briefing's list of what triage kept; an item triage found nothing to plan in
    is acted on as triage said (actors/cortex/noted.py) unless `judgement` says why not, or goes to the fast
    role, which can hand it on; everything else goes to the deep role."""
    if row.origin == "user":
        if not judgement and is_acknowledgement(row):
            return "template", "an acknowledgement that asks nothing (answered without a model)"
        if not judgement and is_missed_question(row):
            return "template", "what the user missed, told from its view (answered without a model)"
        route, why = _user_route(row)
        return (route, f"{why}; not from a template: {judgement}") if judgement else (route, why)
    if row.kind == "briefing":  # triage kept these as worth a line and nothing more: its summaries are the lines
        return "template", "the briefing's lines are triage's summaries (nothing to judge)"
    if row.kind in ("reminder", "deadline"):
        if judgement:
            return "deep", f"a {row.kind} needs judgement: {judgement}"
        return "template", f"{row.kind} follow-up from a template (nothing to judge)"
    if row.kind in ("buffered", "event") and (row.payload or {}).get("plan") is False:
        if noted.triage_note(row) is not None:
            if not judgement:
                return "template", "triage said what to do about it (no second model call)"
            return "fast", f"triage found nothing to plan in it; not from triage's note: {judgement}"
        return "fast", "triage found nothing to plan in it (the fast role may hand it on)"
    return "deep", f"a {row.kind} needs judgement"


def _user_route(row: Inbox) -> tuple[str, str]:
    text = _text(row)
    if is_note(row):
        return "fast", "one note, task or reminder"
    if row.kind != "message" or len(text) > ROUTINE_CHARS or _PLANNING.search(text):
        return "deep", "a request that may need planning"
    if _ROUTINE.fullmatch(text):
        return "fast", "routine chat"
    if _LOOKUP.match(text) or text.endswith("?"):
        return "fast", "a lookup"
    if _STATUS.fullmatch(text):
        return "fast", "the user saying how or where they are"
    return "deep", "not recognisably routine"


def is_note(row: Inbox) -> bool:
    """A user's message asking for one note, task or reminder and nothing more."""
    text = _text(row)
    return (
        row.kind == "message"
        and len(text) <= ROUTINE_CHARS
        and bool(_NOTE.match(text))
        and not _MORE_THAN_A_NOTE.search(text)
    )


def is_acknowledgement(row: Inbox) -> bool:
    """A user's thanks or "ok" and nothing more: no greeting, question or request."""
    text = _text(row)
    return row.kind == "message" and len(text) <= ACK_CHARS and bool(_ACK.fullmatch(text))


def acknowledged(row: Inbox) -> str:
    """The template's answer to an acknowledgement: welcome for thanks, a thumbs up for an "ok"."""
    return ACK_REPLIES["thanks" if re.search(_THANKS, _text(row), re.I) else "ok"]


def is_missed_question(row: Inbox) -> bool:
    """ "What did I miss?" (or "any news?", "catch me up") and nothing more. Not "what happened?", which may
    ask about Wilson's own last line ("I couldn't add the reminder.") rather than what came in."""
    text = _text(row)
    return row.kind == "message" and asks_what_was_missed(text) and not re.search(r"\bhappen", text, re.I)


def template_reply(row: Inbox, now: datetime, tz, owner: str | None) -> tuple[str, bool]:
    """(the answer, whether it quotes others' text) to a user's message the router sends to a template: an
    acknowledgement, or what they missed since they last wrote (which may quote mail and calendars)."""
    if is_acknowledgement(row):
        return acknowledged(row), False
    turns = recent_turns(row.user_id, None, owner)
    return missed.answer(missed_view(since_last_said(turns, now), now, tz), now, tz), True


def chat_run(row: Inbox) -> str:
    """The tool set a user's message on the fast role is offered (actors/tools.schemas_for): none for a
    greeting, those of a note for one note, task or reminder, the reads for the rest."""
    return "greeting" if is_greeting(row) else "note" if is_note(row) else "fast"


def is_greeting(row: Inbox) -> bool:
    """A greeting, thanks or "ok" that asks nothing: routine chat that needs no read tool."""
    text = _text(row)
    return bool(_ROUTINE.fullmatch(text)) and "?" not in text and not _LOOKUP.search(text)


LOOKED_AT = 50  # pending items and the user's turns read for one follow-up


def judgement_for(row: Inbox, now: datetime, owner: str | None = None, quiet_hold=None) -> str:
    """Why a deadline follow-up, or a user's message the router would answer from a template, needs a model
    ("" when nothing does). For a follow-up: a change to its task waits for the user's approval (a template
    would talk past it), or the user has written about the task since its previous follow-up (a reply to
    handle). For an item triage left a note on: noted.judgement. For a user's message: it answers one message in
    particular (a reply to it, an edit, a photo); an acknowledgement, `ack_judgement`; "what did I miss?",
    `missed_judgement`. `owner`: the configured owner, who answers for a row without a user; `quiet_hold(now)`:
    until when the user's quiet holds messages (None when it doesn't)."""
    if row.origin == "user":
        answering = next((key for key in _ANSWERS if (row.payload or {}).get(key)), None)
        if answering and (is_acknowledgement(row) or is_missed_question(row)):
            return f"it answers a message in particular ({answering})"
        if is_acknowledgement(row):
            return ack_judgement(row, now, owner)
        return missed_judgement(row, owner) if is_missed_question(row) else ""
    if noted.triage_note(row) is not None:
        return noted.judgement(row, now, owner, quiet_hold)
    payload = row.payload or {}
    if row.kind != "deadline" or not is_int(payload.get("task_id")):
        return ""
    task_id = int(payload["task_id"])
    waiting = (
        ApprovalItem.select(ApprovalItem.args)
        .join(Approval)
        .where(Approval.status.in_(OPEN) & (Approval.expires_at > now) & (ApprovalItem.status == "pending"))
        .order_by(ApprovalItem.id.desc())
        .limit(LOOKED_AT)
    )
    if any(
        isinstance(i.args, dict) and is_int(i.args.get("task_id")) and int(i.args["task_id"]) == task_id
        for i in waiting
    ):
        return "a change to this task awaits the user's approval"
    earlier = (
        TaskFiring.select(TaskFiring.fired_at)
        .where((TaskFiring.task == task_id) & (TaskFiring.inbox_id.is_null() | (TaskFiring.inbox_id != row.id)))
        .order_by(TaskFiring.fired_at.desc())
        .first()
    )
    named = _words(payload.get("title") or row.text)
    if earlier is None or not named:
        return ""
    said = (
        Turn.select(Turn.text)
        .where((Turn.role == "user") & (Turn.created_at > earlier.fired_at))
        .order_by(Turn.id.desc())
        .limit(LOOKED_AT)
    )
    if any(named & _words(turn.text) for turn in said):
        return "the user wrote about it since its last follow-up"
    return ""


def missed_judgement(row: Inbox, owner: str | None) -> str:
    """Why "what did I miss?" needs a model: the user is not the owner, to whom what Wilson started telling
    went (the view is the owner's), or it is their first word to Wilson (who introduces itself)."""
    if owner is not None and row.user_id is not None and str(row.user_id) != str(owner):
        return "what was missed is the owner's to ask about"
    if not reads.assistant_spoke(row.user_id or owner, owner):
        return "the user's first message"
    return ""


def ack_judgement(row: Inbox, now: datetime, owner: str | None) -> str:
    """Why a thanks or "ok" needs a model: it is the user's first word to Wilson (who introduces itself), a
    proposal of theirs waits (the "ok" may approve it), or Wilson's last line to them asked a question: its
    last reply, or what it told them unasked since ("“Pack” is overdue. Done, or shall we move it?")."""
    user_id = row.user_id or owner
    if not reads.assistant_spoke(user_id, owner):
        return "the user's first message"
    if user_id is not None and reads.pending_items(str(user_id), now, 1):
        return "a proposal waits for the user's word"
    said = reads.recent_turns(user_id, None, owner, 1)  # this message is a turn only once it is answered
    lines = [(turn.created_at, turn.text) for turn in said if turn.role == "assistant"]
    if owner is None or row.user_id is None or str(row.user_id) == str(owner):  # what Wilson starts is the owner's
        lines += filter(None, [last_told_unasked()])
    if lines and asks(max(lines, key=lambda line: as_utc(line[0]))[1]):
        return "Wilson's last line asked a question"
    return ""


def asks(text: str) -> bool:
    """Whether a line of Wilson's ends by asking something: "Shall I add it?", and so do "Shall I add it? 🙂"
    and "Want a reminder? (yes/no)"; not "Is it on? Yes, it is."."""
    end = re.sub(r"\([^()\n]{0,40}\)\s*$", "", (text or "").strip())  # a closing "(yes/no)"
    while end and not (end[-1].isalnum() or end[-1] == "?"):
        end = end[:-1]  # emoji, a smile, spaces, a stop
    return end.endswith("?")
