"""An appointment a mail sets: "Ihr Vorgespräch … findet am Dienstag, 09.03.2027, um 08:15 Uhr in der Chirurgischen
Ambulanz statt", "Your cleaning is on 9 March at 08:15". A mail that asks the reader to confirm it (a task) is about
the appointment too: the person expects to hear of it again the evening before, in the sender's own words.

Pure: `appointment(text, now, tz)` gives the sentence and its moment, or None.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, time, timedelta

from wilson.kernel.lazy_regex import lazy_regex
from wilson.model.offline import dates
from wilson.model.offline.opening import shortened
from wilson.model.offline.point import said_sentences

# the words that make a dated sentence an appointment of the reader's
_APPOINTMENT_RE = lazy_regex(
    r"\b(?:appointment|consultation|check-?up|cleaning|examination|interview|mri|mrt|ct|scan|x-ray|ultrasound|"
    r"röntgen|ultraschall|booked\s+(?:you|your)|scheduled\s+for|"
    r"termine?|terminvereinbarung|vorgespräch\w*|untersuchung\w*|sprechstunde|behandlung\w*|beratung\w*)\b",
    re.I,
)
EVENING_BEFORE = time(18, 0)


@dataclass(frozen=True)
class Appointment:
    sentence: str  # the sender's words, shortened
    at: datetime  # aware, local


def appointment(text: str, now: datetime, tz) -> Appointment | None:
    """The first sentence of `text` that names an appointment at a day and an hour still ahead; None when none does."""
    for sentence in said_sentences(text):
        if not _APPOINTMENT_RE.search(sentence):
            continue
        for found in dates.search(sentence, now, tz, parts=True):
            if isinstance(found.value, datetime) and found.value > now:
                return Appointment(shortened(sentence), found.value.astimezone(tz))
    return None


def evening_before(visit: Appointment, tz) -> datetime:
    """When to bring it up: 18:00 the day before (a morning appointment is no time to hear of it first)."""
    return datetime.combine(visit.at.date() - timedelta(days=1), EVENING_BEFORE, tzinfo=tz)
