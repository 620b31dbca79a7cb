"""A mail that asks the user to do something by a date, read by rules: "please sign up by 10 January",
"reply before Friday", "return the signed form no later than the 20th".

It becomes one task, named by what to do and the mail's subject ("Sign up: Parents evening on 14 January"),
due the day before the date asked for, for the approval gate like any other proposal. As with bills, a
mail that reads like phishing or an offer gets no task.
"""

from __future__ import annotations

import re
from datetime import datetime

from wilson.model.offline import dates
from wilson.model.offline.bills import OFFER_RE, PHISHING_RE, Due, _due, name_only, sender_of

VERBS = {"sign up": "Sign up", "register": "Register", "reply": "Reply", "respond": "Reply", "rsvp": "RSVP",
         "let us know": "Reply", "let me know": "Reply", "get back to": "Reply", "confirm": "Confirm",
         "return": "Return", "submit": "Submit", "hand in": "Hand in", "fill in": "Fill in",
         "fill out": "Fill in", "complete": "Complete", "enrol": "Enrol", "enroll": "Enrol", "apply": "Apply",
         "book": "Book", "choose": "Choose", "order": "Order", "sign": "Sign"}
_ASK_RE = re.compile(r"\b(?P<verb>" + "|".join(sorted(map(re.escape, VERBS), key=len, reverse=True)) + r")\b"
                     r"[^.!?\n]{0,60}?\b(?:by|before|until|no later than)\s+(?P<when>[^.!?\n]{3,40})", re.I)
# asked of the reader: an imperative ("RSVP before …") or a request ("please", "could you"); not a promise
# ("we'll confirm your booking by …") nor a state ("valid until …")
_ASKING_RE = re.compile(r"(?:^|\b(?:please|pls|kindly|could you|can you|would you|will you|need you to|you need to|"
                        r"you must|make sure to|make sure you|remember to|don'?t forget to|be sure to|you are asked to|"
                        r"you're asked to|we ask you to)\s+(?:\w+\s+){0,2})$", re.I)
_AUTO_RE = re.compile(r"^\s*(?:automatic reply|auto[- ]?reply|autoreply|out of (?:the )?office|abwesenheit)", re.I)
_PREFIX_RE = re.compile(r"^\s*(?:(?:re|fwd?|aw|wg)\s*:\s*)+", re.I)
LEAD_DAYS = 1  # done the day before: a form or a reply may take a moment
FARTHEST_DAYS = 200  # "by 3 January" read on 5 January is next year's only by the calendar: the ask is over


def task_for(text: str, payload: dict, now: datetime, tz) -> Due | None:
    """The task a mail asks for by a date still to come, or None (a newsletter, an auto-reply, a web page,
    a mail that reads like phishing or an offer, or one that asks nothing of the user)."""
    subject = _PREFIX_RE.sub("", str(payload.get("subject") or "")).strip()
    if (payload.get("channel", "email") != "email" or payload.get("bulk") or payload.get("change")
            or _AUTO_RE.match(subject)):
        return None
    said = "\n".join(line for line in (text or "").splitlines() if not line.lstrip().startswith(">"))  # not quoted
    blob = f"{subject}\n{said}"
    if PHISHING_RE.search(blob) or OFFER_RE.search(blob):
        return None
    today = now.astimezone(tz).date()
    for sentence in re.split(r"(?<=[.!?\n])\s*", said):
        for asked in _ASK_RE.finditer(sentence):
            if not _ASKING_RE.search(sentence[:asked.start()]):
                continue
            found = [f for f in dates.search(asked.group("when"), now, tz)
                     if 0 <= (dates.local_date(f.value, tz) - today).days <= FARTHEST_DAYS]
            if found:
                return _task(VERBS[asked.group("verb").lower()], found[0], subject, sender_of(payload), today, tz)
    return None


def _task(verb: str, by: dates.Found, subject: str, sender: str, today, tz) -> Due:
    day = dates.local_date(by.value, tz)
    title = f"{verb}: {subject[:60]}" if subject else f"{verb} for {sender}"
    notes = f"{sender} asks for it by {dates.fmt_day(day)}" + (f" (“{subject[:60]}”)." if subject else ".")
    return Due(title, _due(day, LEAD_DAYS, today), notes, f"a mail from {name_only(sender)} asks: {verb.lower()} by "
               f"{by.stated(tz)}")
