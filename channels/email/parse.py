"""One raw message → what Wilson needs of it, bounded in size and time, never trusting its labels.

The standard library's modern parser (`email.policy.default`) does the MIME work. Around it:
every header read may fail on its own (a broken address list costs that header, not the
message); text/plain is preferred, HTML becomes readable text (channels/email/html_text.py); attachments are
listed by name and approximate size from their encoded length, never decoded; a charset that
is unknown or lies is decoded with replacement characters; the part walk stops at a depth
and a count, so a deeply nested message costs a bounded amount of work.
"""

from __future__ import annotations

import codecs
import hashlib
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import getaddresses, parseaddr, parsedate_to_datetime

from channels.email import html_text

MAX_PARSE_BYTES = 512 * 1024  # read of a larger message: only its beginning (the text comes first in practice)
MAX_HTML_BYTES = 256 * 1024
MAX_BODY_CHARS = 20_000  # kept of the body at all
MAX_PARTS = 200
MAX_DEPTH = 8
HEADER_CHARS = 300


class ParseError(Exception):
    """A message Wilson cannot read at all (the reason is one line)."""


@dataclass
class Attachment:
    name: str
    content_type: str
    size: int  # bytes, estimated from the encoded length


@dataclass
class Parsed:
    subject: str = ""
    from_name: str = ""
    from_addr: str = ""
    to: list[str] = field(default_factory=list)
    cc: list[str] = field(default_factory=list)
    date: datetime | None = None
    message_id: str = ""
    in_reply_to: str = ""
    references: list[str] = field(default_factory=list)
    body: str = ""
    body_kind: str = "none"  # plain, html, none
    attachments: list[Attachment] = field(default_factory=list)
    size: int = 0  # of the whole message on the server
    truncated: bool = False  # only the first MAX_PARSE_BYTES were read
    defects: list[str] = field(default_factory=list)
    bulk: str = ""  # why it counts as bulk mail, or empty
    headers: dict[str, str] = field(default_factory=dict)  # the few raw ones the bulk rules look at


def one_line(text: object, limit: int = HEADER_CHARS) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _header(msg: EmailMessage, name: str) -> str:
    """A header as text; a header the modern parser cannot make sense of is read raw instead."""
    try:
        value = msg.get(name)
    except Exception:  # e.g. a malformed address list: fall back to the undecoded text
        value = None
        for key, raw in msg.raw_items():
            if key.lower() == name.lower():
                value = raw
                break
    return one_line(value or "", 2000) if value is not None else ""


def _addresses(msg: EmailMessage, name: str) -> list[tuple[str, str]]:
    try:
        values = msg.get_all(name) or []
        return [(one_line(n, 120), a) for n, a in getaddresses([str(v) for v in values]) if a or n]
    except Exception:
        raw = [str(v) for k, v in msg.raw_items() if k.lower() == name.lower()]
        return [(one_line(n, 120), a) for n, a in getaddresses(raw) if a or n]


def _ids(text: str) -> list[str]:
    return re.findall(r"<[^<>\s]+>", text or "")[:50]


def decode_bytes(data: bytes, charset: str | None) -> str:
    """Bytes in the charset the part claims; an unknown charset reads as UTF-8, and bytes that do not
    fit (a lying label) become replacement characters instead of an error."""
    name = (charset or "utf-8").strip().strip('"').lower() or "utf-8"
    try:
        codecs.lookup(name)
    except LookupError:
        name = "utf-8"
    try:
        return data.decode(name, errors="replace")
    except Exception:  # codecs that fail outright on some input (rare, e.g. broken iso-2022 state)
        return data.decode("utf-8", errors="replace")


def html_to_text(html: str) -> str:
    """Readable text from HTML (channels/email/html_text.py), of its first MAX_HTML_BYTES."""
    return html_text.html_to_text(html[:MAX_HTML_BYTES])


def _walk(msg: EmailMessage):
    """Parts depth-first, at most MAX_DEPTH deep and MAX_PARTS in all."""
    stack = [(msg, 0)]
    seen = 0
    while stack and seen < MAX_PARTS:
        part, depth = stack.pop()
        seen += 1
        yield part, depth
        if depth >= MAX_DEPTH:
            continue
        if part.is_multipart():
            payload = part.get_payload()
            children = payload if isinstance(payload, list) else []
            stack.extend((child, depth + 1) for child in reversed(children) if isinstance(child, EmailMessage))


def _encoded_size(part: EmailMessage) -> int:
    payload = part.get_payload()
    if not isinstance(payload, str):
        return 0
    cte = str(part.get("Content-Transfer-Encoding", "") or "").strip().lower()
    if cte == "base64":
        return len(re.sub(r"\s", "", payload)) * 3 // 4
    return len(payload.encode("utf-8", "surrogateescape"))


def _part_text(part: EmailMessage) -> str:
    try:
        data = part.get_payload(decode=True) or b""
    except Exception:
        data = str(part.get_payload()).encode("utf-8", "surrogateescape")
    try:
        charset = part.get_content_charset()
    except Exception:
        charset = None
    return decode_bytes(data, charset)


def _filename(part: EmailMessage) -> str | None:
    try:
        name = part.get_filename()
    except Exception:
        name = None
    return one_line(name, 200) if name else None


BULK_HEADERS = ("list-unsubscribe", "list-id", "precedence", "auto-submitted", "x-autoreply")


def bulk_reason(parsed: Parsed, senders: list[str] = ()) -> str:
    """Why plain header rules call this mail bulk (a newsletter, a list, an auto-reply), or ''."""
    h = parsed.headers
    if h.get("list-unsubscribe"):
        return "it has a List-Unsubscribe header"
    if h.get("list-id"):
        return "it comes from a mailing list"
    if h.get("precedence", "").lower() in ("bulk", "list", "junk"):
        return f"Precedence: {h['precedence'].lower()}"
    auto = h.get("auto-submitted", "").lower()
    if auto and auto != "no":
        return "it was sent automatically"
    if h.get("x-autoreply"):
        return "it is an automatic reply"
    address = parsed.from_addr.lower()
    for rule in senders:
        rule = rule.strip().lower()
        if rule and (
            address == rule
            or (rule.startswith("@") and address.endswith(rule))
            or (rule.startswith("*@") and address.endswith(rule[1:]))
        ):
            return f"the sender matches the rule {rule}"
    return ""


def parse_message(raw: bytes, *, size: int | None = None, bulk_senders: list[str] = ()) -> Parsed:
    """Read one message; `size` is its full size when `raw` is only its beginning. ParseError when
    nothing useful can be read from it."""
    if not isinstance(raw, (bytes, bytearray)):
        raise ParseError("the server sent no message body")
    full = size if size is not None else len(raw)
    truncated = full > len(raw) or len(raw) > MAX_PARSE_BYTES
    raw = bytes(raw[:MAX_PARSE_BYTES])
    if not raw.strip():
        raise ParseError("the message is empty")
    try:
        msg = BytesParser(policy=policy.default).parsebytes(raw)
    except RecursionError:
        raise ParseError("the message is nested too deeply to read") from None
    except Exception as exc:
        raise ParseError(f"the message cannot be parsed ({type(exc).__name__}: {one_line(exc, 120)})") from None
    out = Parsed(size=full, truncated=truncated)
    out.subject = one_line(_header(msg, "Subject"))
    sender = _addresses(msg, "From") or _addresses(msg, "Sender")
    if sender:
        out.from_name, out.from_addr = sender[0]
    else:
        name, addr = parseaddr(_header(msg, "From"))
        out.from_name, out.from_addr = one_line(name, 120), addr
    out.to = [a or n for n, a in _addresses(msg, "To")][:20]
    out.cc = [a or n for n, a in _addresses(msg, "Cc")][:20]
    date = _header(msg, "Date")
    if date:
        try:
            moment = parsedate_to_datetime(date)
            out.date = moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
        except (TypeError, ValueError, IndexError, OverflowError):
            out.defects.append(f"unreadable Date: {one_line(date, 60)}")
    out.message_id = (_ids(_header(msg, "Message-ID")) or [""])[0]
    out.in_reply_to = (_ids(_header(msg, "In-Reply-To")) or [""])[0]
    out.references = _ids(_header(msg, "References"))
    present = {key.lower() for key in msg.keys()}  # only headers the mail has are decoded (each costs a parse)
    out.headers = {name: value for name in BULK_HEADERS if name in present and (value := _header(msg, name))}

    plain, html, broken = None, None, None
    try:
        parts = list(_walk(msg))
    except RecursionError:
        parts = [(msg, 0)]
        out.defects.append("nested too deeply; only the top was read")
    if len(parts) >= MAX_PARTS:
        out.defects.append(f"more than {MAX_PARTS} parts; the rest was not read")
    for part, _depth in parts:
        for defect in getattr(part, "defects", []) or []:
            if len(out.defects) < 20:
                out.defects.append(type(defect).__name__)
        if part.is_multipart():
            continue
        try:
            ctype = part.get_content_type()
        except Exception:
            ctype = "application/octet-stream"
        try:
            disposition = (part.get_content_disposition() or "").lower()
        except Exception:
            disposition = ""
        if ctype.startswith("multipart/"):
            # a multipart whose boundaries are missing: its undivided text is the best there is
            if broken is None:
                broken = _part_text(part)
            continue
        name = _filename(part)
        if name or disposition == "attachment" or not ctype.startswith(("text/", "message/")):
            if part is not msg or name or disposition == "attachment":
                if len(out.attachments) < 50:
                    out.attachments.append(Attachment(name or f"unnamed {ctype}", ctype, _encoded_size(part)))
                continue
        if ctype == "text/plain" and plain is None:
            plain = _part_text(part)
        elif ctype == "text/html" and html is None:
            html = _part_text(part)
    if plain is not None and plain.strip():
        out.body, out.body_kind = plain, "plain"
    elif html is not None:
        out.body, out.body_kind = html_to_text(html), "html"
    elif broken is not None and broken.strip():
        looks_html = re.search(r"(?i)<(html|body|div|p|table)\b", broken[:20000]) is not None
        out.body, out.body_kind = (html_to_text(broken) if looks_html else broken), "broken"
    out.body = _tidy(out.body)[:MAX_BODY_CHARS]
    out.bulk = bulk_reason(out, bulk_senders)
    return out


def _tidy(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    text = re.sub(r"[ \t]+\n", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def dedup_key(parsed: Parsed | None, raw: bytes, account: str) -> str:
    """The natural key of a mail: its Message-ID (the same mail re-read after a UIDVALIDITY change, or found
    in two folders, is one row); a mail without one is known by a hash of its bytes."""
    basis = (
        parsed.message_id
        if parsed is not None and parsed.message_id
        else "sha256:" + hashlib.sha256(raw.replace(b"\r\n", b"\n")).hexdigest()
    )
    return key_for_message_id(account, basis)


def key_for_message_id(account: str, message_id: str) -> str:
    return "email:" + hashlib.sha256(f"{account}|{message_id}".encode("utf-8", "replace")).hexdigest()[:32]


# Transducing -----------------------------------------------------------------------
BODY_IN_BUFFER = 1500


def human_size(n: int) -> str:
    if n >= 1024 * 1024:
        return f"{n / 1024 / 1024:.1f} MB"
    if n >= 1024:
        return f"{n // 1024} KB"
    return f"{n} bytes"


def trimmed_body(body: str, limit: int = BODY_IN_BUFFER) -> str:
    """The start of the body without quoted history ("> " lines and what follows "On … wrote:")."""
    kept = []
    for line in body.splitlines():
        if line.startswith(">"):
            continue
        if re.match(r"^(On .{5,200} wrote:|-----\s*Original Message\s*-----)\s*$", line.strip()):
            break
        kept.append(line)
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " […]"


def describe(parsed: Parsed, tz, *, folder: str = "INBOX", thread: str | None = None) -> str:
    """The buffer row's natural-language text: who, what, when, the start of the body, what is attached."""
    who = (
        f"{parsed.from_name} <{parsed.from_addr}>"
        if parsed.from_name and parsed.from_addr
        else (parsed.from_addr or parsed.from_name or "an unknown sender")
    )
    lines = [f"Email from {who}: {parsed.subject or '(no subject)'}"]
    if parsed.date is not None:
        lines.append("Sent " + parsed.date.astimezone(tz).strftime("%a %d %b %Y %H:%M"))
    if folder != "INBOX":
        lines.append(f"In folder {folder}")
    if thread:
        lines.append(f"A reply in the thread “{one_line(thread, 120)}”")
    if parsed.bulk:
        lines.append(f"Bulk mail ({parsed.bulk})")
    if parsed.truncated:
        lines.append(f"A large message ({human_size(parsed.size)}); only its beginning was read")
    body = trimmed_body(parsed.body)
    lines.append(body if body else "(no readable text)")
    if parsed.attachments:
        shown = ", ".join(f"{one_line(a.name, 80)} ({human_size(a.size)})" for a in parsed.attachments[:10])
        more = len(parsed.attachments) - 10
        lines.append("Attached: " + shown + (f" and {more} more" if more > 0 else ""))
    return "\n".join(lines)


def payload(parsed: Parsed, *, folder: str, uid: int, uidvalidity: int) -> dict:
    return {
        "channel": "email",
        "priority": 3,
        "from": parsed.from_addr or parsed.from_name,
        "from_name": parsed.from_name,
        "subject": parsed.subject,
        "date": parsed.date.isoformat() if parsed.date else None,
        "message_id": parsed.message_id,
        "in_reply_to": parsed.in_reply_to or None,
        "folder": folder,
        "uid": uid,
        "uidvalidity": uidvalidity,
        "size": parsed.size,
        "truncated": parsed.truncated,
        "attachments": [{"name": a.name, "type": a.content_type, "size": a.size} for a in parsed.attachments[:20]],
        **({"bulk": parsed.bulk} if parsed.bulk else {}),
        **({"defects": parsed.defects[:10]} if parsed.defects else {}),
    }
