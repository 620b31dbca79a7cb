"""Things handed over in Telegram: a voice note, a calendar invitation (.ics), a PDF (an e-ticket), a photo's caption
(a mixin of TelegramChannel, and the pure readers it uses).

Each is kept as the user's own message, and each is someone's words passed on: the row's payload says what it
was (`handed_over`), so every prompt wraps it as untrusted data, as it does a forwarded message. Sizes are capped
before anything is fetched, and what is read is capped again.

A file is taken in two steps so that nothing is lost and the poll never waits for it: the update's own
transaction records what was handed over (setting `telegram:handover:<update>`) with the offset; after the
commit the file is fetched and read off the poll's path (a transcription may take a while), and the stimulus it
makes (an inbox row, or a proposal of the invitation's events) commits in one transaction with the record's
removal. A Wilson stopped in between takes the record up again when it starts.
"""

from __future__ import annotations

import asyncio
import io
from datetime import date, datetime, timedelta

import icalendar
from loguru import logger

from actors.proposals import make, rules
from channels.calendar.event import CANCELLED, one_line
from channels.calendar.ics import decode
from channels.telegram.text import clean_text, describe
from storage import marks, outbox, routing, trace
from storage.db import database
from storage.models import Mark
from wilson.kernel.messages import Deliver, ProposalCreated, StimulusCommitted
from wilson.model.ears import NoEars
from wilson.model.errors import SynapseError

KIND = "telegram_handover"  # a mark per file handed over and not read yet (storage/marks.py)
MAX_FILE_BYTES = 10_000_000  # Telegram lets a bot download up to 20 MB; a ticket or an invitation is far smaller
MAX_VOICE_SECONDS = 600
PDF_PAGES = 30  # pages read from one PDF
HANDED_CHARS = 12_000  # characters of a file's text kept in the message
ICS_EVENTS = 10  # events proposed from one invitation
PDF_TYPES = ("application/pdf", "application/x-pdf")
ICS_TYPES = ("text/calendar", "application/ics", "text/x-vcalendar")
CANNOT_LISTEN = (
    "I can't listen to voice notes yet: no speech model is set up ([llm] ears_model, see "
    "docs/telegram.md). Could you tell me in words?"
)


class HandoverError(Exception):
    """Why a handed-over thing could not be read, in words for the user."""


# What was handed over ----------------------------------------------------------------------------------
def kind_of(message) -> str | None:
    """ "voice", "pdf" or "ics" for what Wilson reads; None for anything else (a photo goes by its caption)."""
    if message.voice is not None or message.audio is not None:
        return "voice"
    document = message.document
    if document is None:
        return None
    name = (document.file_name or "").lower()
    mime = (document.mime_type or "").lower()
    if mime in PDF_TYPES or name.endswith(".pdf"):
        return "pdf"
    if mime in ICS_TYPES or name.endswith((".ics", ".ical", ".ifb")):
        return "ics"
    return "file"


def _megabytes(size: int) -> str:
    return f"{size / 1_000_000:.0f} MB" if size >= 1_000_000 else f"{size // 1000} kB"


def too_big(kind: str, message) -> str | None:
    """What to tell the user when the thing is more than Wilson takes, else None (checked before fetching)."""
    thing = message.voice or message.audio or message.document
    size = int(getattr(thing, "file_size", 0) or 0)
    if kind == "voice":
        seconds = int(getattr(thing, "duration", 0) or 0)
        if seconds > MAX_VOICE_SECONDS:
            return (
                f"That voice note is too long for me ({seconds // 60} minutes; I listen to up to "
                f"{MAX_VOICE_SECONDS // 60}). Could you tell me the gist in words?"
            )
    if size > MAX_FILE_BYTES:
        return (
            f"That file is too big for me ({_megabytes(size)}; I read files up to {_megabytes(MAX_FILE_BYTES)}). "
            "Could you send the part that matters?"
        )
    return None


# Reading -------------------------------------------------------------------------------------------------
def pdf_text(data: bytes) -> str:
    """The text of a PDF's first PDF_PAGES pages, capped at HANDED_CHARS."""
    # lazy: pypdf costs some 6 MiB, wanted only when a PDF is handed over
    import pypdf

    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise HandoverError("it is locked with a password")
        parts, length = [], 0
        for page in reader.pages[:PDF_PAGES]:
            text = " ".join((page.extract_text() or "").split())
            parts.append(text)
            length += len(text)
            if length > HANDED_CHARS:
                break
    except HandoverError:
        raise
    except Exception as exc:  # pypdf raises many kinds for a damaged file; the user hears one line
        raise HandoverError(f"it is not a PDF I can read ({type(exc).__name__})") from None
    text = clean_text("\n".join(p for p in parts if p), HANDED_CHARS)
    if not text.strip():
        raise HandoverError("it has no text in it (a scan?)")
    return text


def _when(value, tz) -> tuple[str, bool]:
    """An iCalendar moment as create_event takes it: a date, or a local time in the user's zone."""
    if isinstance(value, datetime):
        moment = value.astimezone(tz) if value.tzinfo is not None else value
        return moment.strftime("%Y-%m-%dT%H:%M"), False
    if isinstance(value, date):
        return value.isoformat(), True
    raise ValueError("no start")


def ics_events(data: bytes, tz) -> tuple[list[dict], list[str]]:
    """The events of an invitation as create_event arguments (at most ICS_EVENTS), and what was left out."""
    if len(data) > MAX_FILE_BYTES:
        raise HandoverError("it is too big")
    try:
        calendar = icalendar.Calendar.from_ical(decode(data))
    except Exception as exc:
        raise HandoverError(f"it is not a calendar file I can read ({one_line(exc, 80)})") from None
    method = str(calendar.get("METHOD", "")).upper()
    events, left = [], []
    for component in calendar.walk("VEVENT"):
        title = " ".join(str(component.get("SUMMARY", "")).split())[:200] or "(untitled)"
        if method == "CANCEL" or str(component.get("STATUS", "")).upper() == CANCELLED:
            left.append(f"“{title}” is a cancellation")
            continue
        if "RRULE" in component or "RECURRENCE-ID" in component:
            left.append(f"“{title}” repeats, and I can't add a series yet")
            continue
        try:
            start, all_day = _when(component.decoded("DTSTART"), tz)
            end = None
            if "DTEND" in component:
                finish = component.decoded("DTEND")
                if all_day and isinstance(finish, date) and not isinstance(finish, datetime):
                    finish = finish - timedelta(days=1)  # DTEND is exclusive; create_event's end day is not
                end = _when(finish, tz)[0]
                if end == start:
                    end = None
        except (KeyError, ValueError, TypeError):
            left.append(f"“{title}” has no time I can read")
            continue
        args = {"title": title, "start": start}
        if end:
            args["end"] = end
        location = " ".join(str(component.get("LOCATION", "")).split())[:300]
        if location:
            args["location"] = location
        notes = " ".join(str(component.get("DESCRIPTION", "")).split())[:2000]
        if notes:
            args["notes"] = notes
        if len(events) == ICS_EVENTS:
            left.append(f"{ICS_EVENTS} events at a time; the rest of the file was not read")
            break
        events.append(args)
    if not events and not left:
        raise HandoverError("it has no events in it")
    return events, left


# The channel's side ------------------------------------------------------------------------------------
class Handover:
    def _hand_over(self, incoming, message, kind: str, caption: str, payload: dict) -> None:
        """In the update's transaction: a note, or the record of what to fetch once this commits."""
        if kind == "file":
            self._reply(
                "I can read PDFs and calendar invitations (.ics), not this kind of file yet."
                + (" I read your caption." if caption else " Could you tell me in words?"),
                incoming,
                "media",
            )
            if caption:
                self._commit_words(incoming, caption, {**payload, "handed_over": "the caption of a file you sent"})
            return
        if kind == "voice" and not self._can_listen():
            self._reply(CANNOT_LISTEN, incoming, "media")
            return
        problem = too_big(kind, message)
        if problem:
            self._reply(problem, incoming, "media")
            return
        thing = message.voice or message.audio or message.document
        key = incoming.key
        marks.put(
            KIND,
            key,
            {
                "kind": kind,
                "file_id": thing.file_id,
                "name": clean_text(
                    getattr(thing, "file_name", None) or ("voice.ogg" if kind == "voice" else kind), 120
                ),
                "mime": getattr(thing, "mime_type", None) or "",
                "caption": caption,
                "uid": incoming.uid,
                "key": incoming.key,
                "where": incoming.where,
                "reply": incoming.reply,
                "payload": payload,
            },
            incoming.now,
        )
        incoming.after.append(lambda: self.spawn(self._take_over(key)))

    def _can_listen(self) -> bool:
        synapse = getattr(self.ctx, "synapse", None)
        return bool(synapse is not None and getattr(synapse, "can_listen", lambda: False)())

    def _handovers_owed(self) -> None:
        """At start: what was handed over before a stop and not read yet."""
        for row in Mark.select(Mark.key).where(Mark.kind == KIND):
            self.spawn(self._take_over(row.key))

    async def _take_over(self, key: str) -> None:
        state = marks.get(KIND, key)
        if not isinstance(state, dict):
            return
        try:
            handle = await self.bot.get_file(state["file_id"])
            data = bytes(await handle.download_as_bytearray())
            made = await asyncio.to_thread(self._read_handover, state, data)
        except HandoverError as exc:
            self._handover_failed(key, state, str(exc))
            return
        except (NoEars, SynapseError) as exc:
            self._handover_failed(key, state, CANNOT_LISTEN if isinstance(exc, NoEars) else str(exc))
            return
        except Exception as exc:  # Telegram would not give the file: said, and the record goes
            logger.warning("telegram: could not fetch a handed-over {}: {}", state.get("kind"), describe(exc))
            self._handover_failed(key, state, f"I could not fetch it from Telegram ({describe(exc)})")
            return
        self._settle_handover(key, state, made)

    def _read_handover(self, state: dict, data: bytes):
        """Off the loop: the file to words (or events). Pure but for the speech model."""
        kind = state["kind"]
        if kind == "voice":
            said = self.ctx.synapse.transcribe(data, state["name"], state["mime"] or "audio/ogg")
            if not said:
                raise HandoverError("I heard no words in it")
            return said
        if kind == "pdf":
            return pdf_text(data)
        return ics_events(data, self.config.timezone)

    def _settle_handover(self, key: str, state: dict, made) -> None:
        """One transaction: the stimulus (or proposal) and the record's removal; then whoever must know is told."""
        now = self.now()
        kind, name, caption = state["kind"], state["name"], state.get("caption") or ""
        payload = dict(state.get("payload") or {})
        after = []
        with database.atomic():
            if marks.get(KIND, key) is None:
                return  # taken already (a second start raced this one)
            marks.delete(KIND, key)
            if kind == "ics":
                events, left = made
                after += self._propose_events(state, events, left, now)
            else:
                if kind == "voice":
                    payload["handed_over"] = "a voice note you sent (transcribed by the speech model)"
                    text = made + (f"\n\n(caption: {caption})" if caption else "")
                else:
                    payload["handed_over"] = f"the PDF “{name}” you sent"
                    text = (f"{caption}\n\n" if caption else "") + f"[PDF {name}]\n{made}"
                payload["attachment"] = kind
                row = routing.commit_realtime(
                    source=self.name,
                    text=clean_text(text),
                    user_id=state["uid"],
                    at=now,
                    dedup_key=state["key"],
                    payload=payload,
                )
                if row is not None:
                    nudge = StimulusCommitted("inbox", row.id, row.trace_id, row.priority)
                    after.append(lambda: self.tell("thalamus", nudge))
        for action in after:
            action()

    def _propose_events(self, state: dict, events: list[dict], left: list[str], now) -> list:
        """An invitation's events as one proposal (each an item); what was left out is said with it."""
        note = f" Left out: {'; '.join(left)}." if left else ""
        if not events:
            return [self._handover_note(state, f"There is nothing in “{state['name']}” I can add.{note}", now)]
        try:
            approval = make.propose_items(
                [("create_event", args) for args in events],
                owner=state["uid"],
                channel=self.name,
                key=f"{state['key']}:ics",
                now=now,
                config=self.config,
                reason=f"from the calendar file “{state['name']}” you sent",
            )
        except rules.CannotPropose as exc:
            return [self._handover_note(state, f"I could not add the events of “{state['name']}”: {exc}{note}", now)]
        after = [lambda: self.tell("approval", ProposalCreated(approval.id))]
        if note:
            after.append(self._handover_note(state, note.strip(), now))
        return after

    def _handover_note(self, state: dict, text: str, now):
        """A reply in the chat the thing came from, keyed by its update; returns the after-commit Deliver."""
        where = state.get("where") or {}
        box = outbox.add(
            channel=self.name,
            text=text,
            trace_id=trace.new_trace_id(),
            key=f"{state['key']}:handover",
            at=now,
            payload={
                "chat_id": where.get("chat_id"),
                "thread_id": where.get("thread_id"),
                "reply_to": state.get("reply"),
            },
        )
        return lambda: self.tell(self.name, Deliver(box.id))

    def _handover_failed(self, key: str, state: dict, why: str) -> None:
        what = {"voice": "your voice note", "pdf": f"“{state.get('name')}”", "ics": f"“{state.get('name')}”"}.get(
            state.get("kind"), "it"
        )
        text = why if why == CANNOT_LISTEN else f"I could not read {what}: {why}. Nothing was kept."
        with database.atomic():
            if marks.get(KIND, key) is None:
                return
            marks.delete(KIND, key)
            told = self._handover_note(state, text, self.now())
        told()
