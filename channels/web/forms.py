"""What a dashboard request carries, checked: who sent it, whether a browser marks it cross-site, and its body.

Who: a session cookie (set by logging in, with the session's CSRF token) or `Authorization:
Bearer <token>` (channels/web/auth.py keeps both). A request a browser marks as cross-site
(Sec-Fetch-Site, or an Origin that is not this server) is refused by the routes that change
state (channels/web/server.py). A body is a form or JSON of at most MAX_BODY bytes, read into
checked values: text without control characters and within its length, item numbers, and an
intake item's calendar event. `Refused` is how any check says no, with the words the user sees.
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from channels.web import auth, pages
from channels.web.refused import Refused
from wilson.kernel.timeparse import date_or_datetime

COOKIE = "wilson_session"
MAX_BODY = 16 * 1024  # bytes: forms and API calls are a few words; anything bigger is refused
MAX_TEXT = 4000
BODY_SECONDS = 20.0  # to receive a body of at most MAX_BODY, from the end of its headers


def wants_json(request: Request) -> bool:
    return request.url.path.startswith("/api/") or "application/json" in request.headers.get("accept", "")


def refusal(request: Request, status: int, text: str, login: bool = False) -> Response:
    if wants_json(request):
        response = JSONResponse({"error": text}, status_code=status)
    else:
        title = {401: "Please log in", 403: "Not allowed", 404: "Not found"}.get(status, "That did not work")
        response = HTMLResponse(
            pages.render("refused.html", title=title, text=text, login=login, nav=None), status_code=status
        )
    if status == 401:
        response.headers["WWW-Authenticate"] = 'Bearer realm="wilson"'
    return response


def cross_site(request: Request) -> bool:
    """A browser says this request comes from another site (a form or script on some page)."""
    fetch_site = request.headers.get("sec-fetch-site")
    if fetch_site is not None:  # every current browser sends it; only this origin and typed addresses pass
        return fetch_site not in ("same-origin", "none")
    origin = request.headers.get("origin")
    if origin is None:
        return False
    host = request.headers.get("host", "")
    return origin.lower() not in (f"http://{host}".lower(), f"https://{host}".lower())


class Who:
    """The user behind a request: by session (with its CSRF token) or by bearer token."""

    def __init__(self, how: str, sid: str | None = None, record: dict | None = None):
        self.how, self.sid, self.record = how, sid, record

    @property
    def csrf(self) -> str:
        return (self.record or {}).get("csrf", "")


def identify(request: Request, now) -> Who | None:
    header = request.headers.get("authorization", "")
    if header[:7].lower() == "bearer ":
        return Who("bearer") if auth.token_ok(header[7:].strip()) else None
    sid = request.cookies.get(COOKIE)
    record = auth.session(sid, now)
    return Who("session", sid, record) if record is not None else None


async def read_form(request: Request) -> dict:
    body = await read_body(request)

    if not request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
        raise Refused(415, "Send this as a form.")
    try:
        fields = parse_qs(body.decode("utf-8"), keep_blank_values=True, max_num_fields=20)
    except (UnicodeDecodeError, ValueError):
        raise Refused(400, "That form could not be read.") from None
    return {k: v[0] for k, v in fields.items()}


async def read_body(request: Request) -> bytes:
    """The body, within MAX_BODY bytes and BODY_SECONDS (the headers had their own deadline:
    channels/web/protocol.py)."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY):
        raise Refused(413, f"That is too big: at most {MAX_BODY // 1024} KB.")

    async def whole() -> bytes:
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY:
                raise Refused(413, f"That is too big: at most {MAX_BODY // 1024} KB.")
        return body

    try:
        return await asyncio.wait_for(whole(), BODY_SECONDS)
    except TimeoutError:
        raise Refused(408, f"That took too long to arrive: send it within {BODY_SECONDS:g} seconds.") from None


MAX_DEPTH = 8  # nesting of a JSON body: the deepest the API takes is an intake item's event (2)


async def read_json(request: Request) -> dict:
    body = await read_body(request)
    try:
        data = json.loads(body or b"{}")
    except RecursionError:  # thousands of nested brackets: refused as the others, not a crash
        raise Refused(400, f"The JSON is nested too deeply (at most {MAX_DEPTH} levels).") from None
    except UnicodeDecodeError:
        raise Refused(400, "The body is not JSON.") from None
    except ValueError as exc:  # a number of thousands of digits is JSON that Python will not read either
        digits = "integer string conversion" in str(exc)
        raise Refused(400, "A number in the JSON is too long." if digits else "The body is not JSON.") from None
    if not isinstance(data, dict):
        raise Refused(400, "The body must be a JSON object.")
    checked_json(data)
    return data


def checked_json(value, depth: int = 1) -> None:
    """Refuse what JSON allows but text cannot carry: nesting deeper than MAX_DEPTH and lone surrogates
    ("\\ud800"), which no database, log or page can store or show."""
    if depth > MAX_DEPTH:
        raise Refused(400, f"The JSON is nested too deeply (at most {MAX_DEPTH} levels).")
    if isinstance(value, dict):
        for key, inner in value.items():
            checked_json(key, depth)
            checked_json(inner, depth + 1)
    elif isinstance(value, list):
        for inner in value:
            checked_json(inner, depth + 1)
    elif isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise Refused(
                400, "The JSON has a broken character (a lone surrogate like \\ud800): send the text as valid UTF-8."
            ) from None


def clean(text, limit: int = MAX_TEXT) -> str:
    if not isinstance(text, str):
        raise Refused(400, "The text must be a string.")
    text = "".join(ch for ch in text if ch in "\n\t" or ch >= " ").strip()
    if len(text) > limit:
        raise Refused(413, f"That text is too long: at most {limit} characters.")
    return text


EVENT_FIELDS = {"title": 300, "start": 40, "end": 40, "location": 300}


def calendar_event(event) -> dict:
    """An intake item's `event` (a calendar entry from a script or a shortcut) as the calendar channel
    words a new event, so that triage and the rules read it as one: {"title", "start"} required,
    "end" and "location" optional, dates as ISO text (a date alone is an all-day event)."""
    if not isinstance(event, dict):
        raise Refused(400, 'event must be an object: {"title": "...", "start": "2027-04-10"}.')
    unknown = sorted(set(event) - set(EVENT_FIELDS))
    if unknown:
        raise Refused(
            400,
            f"Unknown event field{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)[:200]}. "
            "An event has title, start, and optionally end and location.",
        )
    found = {name: clean(event[name], limit) for name, limit in EVENT_FIELDS.items() if event.get(name) is not None}
    if not found.get("title") or not found.get("start"):
        raise Refused(400, "An event needs a title and a start.")
    moments = {}
    for name in ("start", "end"):
        if found.get(name):
            try:
                moments[name] = date_or_datetime(found[name])
            except ValueError:
                raise Refused(
                    400, f"event {name} must be an ISO date or date-time, like 2027-04-10 or 2027-04-10T09:30:00+01:00."
                ) from None

    def kind(moment) -> tuple:  # dates, zoned and naive date-times cannot be compared with each other
        return type(moment), getattr(moment, "tzinfo", None) is None

    if "end" in moments and kind(moments["end"]) != kind(moments["start"]):
        raise Refused(
            400, "event start and end must both be dates, or both date-times (both with a zone or both without)."
        )
    if "end" in moments and moments["end"] < moments["start"]:
        raise Refused(400, "event end must not be before its start.")
    all_day = not isinstance(moments["start"], datetime)
    return {
        "change": "new",
        "title": found["title"],
        "start": moments["start"].isoformat(),
        "end": moments["end"].isoformat() if "end" in moments else None,
        "all_day": all_day,
        "location": found.get("location") or None,
        "previous": None,
    }


MAX_ITEMS = 50  # item numbers in one decision; a proposal has far fewer


def item_positions(raw: list) -> tuple[int, ...]:
    """The items a decision is about (1-based numbers, as the page shows them); () for the whole proposal."""
    if len(raw) > MAX_ITEMS:
        raise Refused(400, f"At most {MAX_ITEMS} items at once.")
    found = set()
    for value in raw:
        text = str(value) if isinstance(value, (int, str)) and not isinstance(value, bool) else ""
        if not text.isdigit() or len(text) > 4 or int(text) < 1:
            raise Refused(400, "Items are numbered from 1, as the proposal lists them.")
        found.add(int(text))
    return tuple(sorted(found))
