"""Where an approved calendar change is written: the .ics file, a CalDAV server (or the macOS Calendar app).

A writer creates an event under a UID made from the approved item (so a second try adds nothing), and moves
or cancels the event the user named by its title. Each change is all or nothing: a write that cannot be done
raises CalendarError in words the user is told, and leaves every other event as it was. On a server the
change is conditional on the version Wilson just read (If-Match on its ETag), so an edit made on another
device meanwhile is a conflict to tell, never overwritten.

Size: the three writers (ICS file, CalDAV, Apple) implement one interface with the same all-or-nothing
rule; they are compared side by side.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote, urljoin
from zoneinfo import ZoneInfo

import caldav

from channels import accounts
from channels.accounts import AccountError
from channels.calendar import apple, editor
from channels.calendar.event import CANCELLED, CalendarError, one_line
from channels.calendar.ics import decode, new_calendar

if TYPE_CHECKING:  # annotations only
    import httpx
    import icalendar


class Unreachable(CalendarError):
    """The calendar server did not answer, or answered that it is in trouble (5xx): the write waits and is tried
    again, as an outage delays a delivery and never loses it."""


@dataclass(frozen=True)
class Draft:
    """A new event, as the approved proposal gave it."""

    uid: str
    title: str
    start: str
    end: str | None = None
    location: str | None = None
    notes: str | None = None


@dataclass(frozen=True)
class Written:
    uid: str
    written: bool  # False: it was there already (a write repeated after a crash, or a cancel already done)
    where: str


class CalendarWriter:
    where = "calendar"

    def create(self, draft: Draft, *, tz: ZoneInfo | None, stamp: datetime | None) -> Written:
        raise NotImplementedError

    def move(self, title: str, start: str, end: str | None, *, tz: ZoneInfo | None) -> Written:
        raise NotImplementedError

    def cancel(self, title: str) -> Written:
        raise NotImplementedError


def _missing(title: str) -> CalendarError:
    return CalendarError(f"there is no event called “{title}” in it")


class IcsFileWriter(CalendarWriter):
    """The user's .ics file, rewritten whole and atomically (channels/calendar/editor.py)."""

    def __init__(self, path: str | Path):
        self.path = str(path)
        self.where = self.path

    def create(self, draft, *, tz, stamp):
        written = editor.create_event(
            self.path,
            draft.uid,
            draft.title,
            draft.start,
            draft.end,
            location=draft.location,
            notes=draft.notes,
            tz=tz,
            stamp=stamp,
        )
        return Written(draft.uid, written, self.where)

    def move(self, title, start, end, *, tz):
        uid = editor.find_uid(self.path, title)
        if uid is None:
            raise _missing(title)
        editor.move_event(self.path, title, start, end, tz=tz, keep_length=True)
        return Written(uid, True, self.where)

    def cancel(self, title):
        uid = editor.find_uid(self.path, title)
        if uid is None:
            done = editor.cancelled_uid(self.path, title)
            if done:
                return Written(done, False, self.where)
            raise _missing(title)
        editor.cancel_event(self.path, title)
        return Written(uid, True, self.where)


@dataclass
class _Found:
    url: str
    etag: str
    calendar: icalendar.Calendar
    event: icalendar.Event


class CalDavWriter(CalendarWriter):
    """A CalDAV account: new events go to the calendar named `calendar_name` (empty: the account's first);
    a move or a cancel looks for the named event in every calendar of the account."""

    def __init__(
        self,
        url: str,
        username: str | None = None,
        password: str | None = None,
        *,
        calendar_name: str = "",
        timeout: float = 30.0,
        token=None,
    ):
        """`token`: for a Google account, a callable(fresh) giving an OAuth access token (Bearer) instead of the
        password; a write is rare and the user waits for it, so each one asks for a fresh token."""
        self.token = token
        self._bearer_token: str | None = None
        self.url = url
        self.username = username or None
        self.password = password or None
        self.calendar_name = " ".join((calendar_name or "").split())
        self.timeout = timeout
        self.where = "CalDAV"

    # the server ----------------------------------------------------------
    def _bearer(self) -> str:
        if self._bearer_token is None:
            try:
                self._bearer_token = self.token(True)
            except AccountError as exc:
                raise CalendarError(str(exc)) from None
        return self._bearer_token

    def _http(self) -> httpx.Client:
        # lazy: httpx (with its command-line extras, about 70 ms) only once a request is made
        import httpx

        if self.token is not None:
            return httpx.Client(
                headers={"Authorization": f"Bearer {self._bearer()}"}, timeout=self.timeout, follow_redirects=False
            )
        auth = httpx.BasicAuth(self.username, self.password or "") if self.username else None
        return httpx.Client(auth=auth, timeout=self.timeout, follow_redirects=False)

    def _dav(self):
        if self.token is not None:
            # lazy: caldav's HTTP layer (niquests, urllib3 and theirs) costs some 10 MiB, wanted only for CalDAV
            from caldav.requests import HTTPBearerAuth

            return caldav.DAVClient(
                url=self.url, username=self.username, auth=HTTPBearerAuth(self._bearer()), timeout=int(self.timeout)
            )
        return caldav.DAVClient(url=self.url, username=self.username, password=self.password, timeout=int(self.timeout))

    def _hide(self, text: str) -> str:
        return text.replace(self.password, "***") if self.password else text

    def _calendars(self) -> list:
        """(name, url, caldav calendar) of every calendar of the account; the URL as one when it has no principal."""
        # lazy: httpx (with its command-line extras, about 70 ms) only once a request is made
        import httpx

        try:
            with self._dav() as client:
                try:
                    principal = client.principal()
                    found = principal.get_calendars() if hasattr(principal, "get_calendars") else principal.calendars()
                except Exception:  # a server without principal discovery: the URL is one calendar
                    found = []
                found = found or [client.calendar(url=self.url)]
                result = []
                for calendar in found:
                    try:
                        name = calendar.get_display_name()
                    except Exception:  # the display name only names the calendar; its URL's last part does too
                        name = None
                    url = str(calendar.url)
                    objects = calendar.get_events() if hasattr(calendar, "get_events") else calendar.events()
                    result.append(
                        (str(name or url.rstrip("/").rsplit("/", 1)[-1]), url, [(str(o.url), o.data) for o in objects])
                    )
                return result
        except CalendarError:
            raise
        except (OSError, httpx.HTTPError) as exc:
            raise Unreachable(f"the calendar server did not answer ({type(exc).__name__})") from None
        except Exception as exc:
            said = self._hide(one_line(exc, 160))
            trouble = re.search(r"\b(5\d\d) [A-Z]", said)  # the caldav library words a 5xx answer in its own error
            if trouble:
                raise Unreachable(f"the calendar server is in trouble (HTTP {trouble.group(1)})") from None
            if any(word in said for word in ("Connection", "connect", "Max retries", "timed out")):
                raise Unreachable(f"the calendar server did not answer ({type(exc).__name__})") from None
            raise CalendarError(f"the calendar server could not be read ({type(exc).__name__}: {said})") from None

    def _request(self, method: str, url: str, **kw) -> httpx.Response:
        # lazy: httpx (with its command-line extras, about 70 ms) only once a request is made
        import httpx

        try:
            with self._http() as http:
                return http.request(method, url, **kw)
        except httpx.HTTPError as exc:
            raise Unreachable(f"the calendar server did not answer ({type(exc).__name__})") from None

    @staticmethod
    def _refused(response: httpx.Response) -> CalendarError:
        code = response.status_code
        if code == 401:
            return CalendarError(
                "the calendar server did not accept the login (HTTP 401); check "
                "[calendar] caldav_username and WILSON_CALENDAR_CALDAV_PASSWORD"
            )
        if code == 403:
            return CalendarError(
                "the calendar server refused the change (HTTP 403: this calendar is read-only for the account)"
            )
        if code >= 500:
            return Unreachable(f"the calendar server is in trouble (HTTP {code})")
        return CalendarError(f"the calendar server refused the change (HTTP {code})")

    # create ----------------------------------------------------------------
    def _target(self, calendars: list) -> str:
        if not calendars:
            raise CalendarError("the account has no calendar to add it to")
        if not self.calendar_name:
            return calendars[0][1]
        for name, url, _ in calendars:
            if " ".join(name.split()).casefold() == self.calendar_name.casefold():
                return url
        names = ", ".join(f"“{name}”" for name, _, _ in calendars)
        raise CalendarError(
            f"there is no calendar called “{self.calendar_name}” on the server (it has {names}); "
            "set [calendar] caldav_calendar to one of them"
        )

    def create(self, draft, *, tz, stamp):
        calendar = new_calendar()
        calendar.add_component(
            editor.new_event(
                draft.uid,
                draft.title,
                draft.start,
                draft.end,
                location=draft.location,
                notes=draft.notes,
                tz=tz,
                stamp=stamp,
            )
        )
        _with_zones(calendar)
        url = urljoin(self._target(self._calendars()).rstrip("/") + "/", quote(draft.uid, safe="") + ".ics")
        # If-None-Match: * makes a second try a no-op, not a second event
        response = self._request(
            "PUT",
            url,
            content=calendar.to_ical(),
            headers={"Content-Type": "text/calendar; charset=utf-8", "If-None-Match": "*"},
        )
        if response.status_code == 412:
            return Written(draft.uid, False, self.where)
        if not response.is_success:
            raise self._refused(response)
        return Written(draft.uid, True, self.where)

    # move and cancel -------------------------------------------------------
    def _find(self, title: str, *, cancelled: bool = False) -> list[str]:
        """URLs of the objects holding a single (not recurring) event with this title."""
        # lazy: icalendar (about 40 ms) only once a calendar is read or written
        import icalendar

        urls = []
        for _, _, objects in self._calendars():
            for url, data in objects:
                try:
                    parsed = icalendar.Calendar.from_ical(decode(data if isinstance(data, bytes) else data.encode()))
                except Exception:  # an object the server holds but nobody can read cannot be the one named
                    continue
                for component in parsed.walk("VEVENT"):
                    if (
                        "RECURRENCE-ID" not in component
                        and editor.titled(component, title)
                        and (str(component.get("STATUS", "")).upper() == CANCELLED) == cancelled
                    ):
                        urls.append(url)
                        break
        return urls

    def _read(self, title: str) -> _Found:
        # lazy: icalendar (about 40 ms) only once a calendar is read or written
        import icalendar

        urls = self._find(title)
        if not urls:
            raise _missing(title)
        if len(urls) > 1:
            raise CalendarError(f"there are {len(urls)} events called “{title}”; say which one (its day)")
        response = self._request("GET", urls[0])
        if response.status_code == 404:
            raise CalendarError(f"“{title}” is no longer on the calendar server (deleted meanwhile)")
        if not response.is_success:
            raise self._refused(response)
        calendar = icalendar.Calendar.from_ical(decode(response.content))
        event = next(c for c in calendar.walk("VEVENT") if "RECURRENCE-ID" not in c)
        if "RRULE" in event:
            raise CalendarError(f"“{title}” repeats; Wilson moves and cancels only single events for now")
        return _Found(urls[0], response.headers.get("ETag", ""), calendar, event)

    def _replace(self, found: _Found, title: str) -> None:
        """Write the changed object back only if it is still the version read (If-Match)."""
        _with_zones(found.calendar)
        headers = {"Content-Type": "text/calendar; charset=utf-8"}
        if found.etag:
            headers["If-Match"] = found.etag
        response = self._request("PUT", found.url, content=found.calendar.to_ical(), headers=headers)
        if response.is_success:
            return
        if response.status_code in (404, 412):
            now = self._request("GET", found.url)
            if now.status_code == 404:
                raise CalendarError(f"“{title}” was deleted on the calendar server while Wilson was changing it")
            raise CalendarError(
                f"“{title}” was changed on the calendar server (on another device?) while Wilson "
                "was changing it; ask again to use the new version"
            )
        raise self._refused(response)

    def move(self, title, start, end, *, tz):
        found = self._read(title)
        if end in (None, ""):
            end = editor.same_length(found.event, start, tz)
        editor.set_times(found.event, start, end, tz)
        editor.bump(found.event)
        self._replace(found, title)
        return Written(str(found.event["UID"]), True, self.where)

    def cancel(self, title):
        # lazy: icalendar (about 40 ms) only once a calendar is read or written
        import icalendar

        if not self._find(title) and (done := self._find(title, cancelled=True)):
            response = self._request("GET", done[0])
            calendar = icalendar.Calendar.from_ical(decode(response.content)) if response.is_success else None
            uid = next((str(c["UID"]) for c in calendar.walk("VEVENT")), "") if calendar is not None else ""
            return Written(uid, False, self.where)  # cancelled already: by Wilson before a crash, or by the user
        found = self._read(title)
        if "STATUS" in found.event:
            del found.event["STATUS"]
        found.event.add("STATUS", CANCELLED)  # kept, as calendar servers keep a cancelled meeting
        editor.bump(found.event)
        self._replace(found, title)
        return Written(str(found.event["UID"]), True, self.where)


class AppleWriter(CalendarWriter):
    """The macOS Calendar app, through osascript (channels/calendar/apple.py): new events go to the calendar
    named `calendar_name` (empty: the first one that can be written); a cancelled event is deleted."""

    def __init__(self, calendar_name: str = "", *, timeout: float = 60.0):
        self.calendar_name = calendar_name or ""
        self.timeout = timeout
        self.where = "Apple Calendar"

    @staticmethod
    def _local(value, tz: ZoneInfo | None) -> tuple[str, bool]:
        """ "YYYY-MM-DDTHH:MM" in the user's zone (or "YYYY-MM-DD" for a day), and whether it is a day."""
        moment = editor.as_moment(value, tz)
        if isinstance(moment, datetime):
            if moment.tzinfo is not None and tz is not None:
                moment = moment.astimezone(tz)
            return moment.strftime("%Y-%m-%dT%H:%M"), False
        return moment.isoformat(), True

    def _times(self, start, end, tz) -> list[str]:
        begin, all_day = self._local(start, tz)
        finish = self._local(end, tz)[0] if end not in (None, "") else ""
        return [begin, finish, "true" if all_day else "false"]

    def create(self, draft, *, tz, stamp):
        title = " ".join(draft.title.split())
        said = apple.run(
            apple.CREATE,
            [
                self.calendar_name,
                f"wilson:{draft.uid}",
                title,
                *self._times(draft.start, draft.end, tz),
                draft.location or "",
                draft.notes or "",
            ],
            timeout=self.timeout,
        )
        return Written(apple.answer(said, draft.title), True, self.where)

    def move(self, title, start, end, *, tz):
        said = apple.run(apple.MOVE, [title, *self._times(start, end, tz)], timeout=self.timeout)
        return Written(apple.answer(said, title), True, self.where)

    def cancel(self, title):
        return Written(apple.answer(apple.run(apple.CANCEL, [title], timeout=self.timeout), title), True, self.where)


def _with_zones(calendar: icalendar.Calendar) -> None:
    try:
        calendar.add_missing_timezones()
    except Exception:  # zones icalendar cannot describe stay referenced by TZID, as many exporters do
        pass


def writer_for(config) -> CalendarWriter | None:
    """The user's writable calendar: the .ics file first, then CalDAV, then Apple Calendar; None when there is
    none (a URL subscription is read-only)."""
    path = str(config.get("calendar", "path") or "").strip()
    if path:
        p = Path(path).expanduser()
        return IcsFileWriter(p if p.is_absolute() else Path(config.home) / p)
    url = str(config.get("calendar", "caldav_url") or "").strip()
    if url:
        return CalDavWriter(
            url,
            config.get("calendar", "caldav_username") or None,
            config.get("calendar", "caldav_password") or None,
            calendar_name=str(config.get("calendar", "caldav_calendar") or ""),
            token=accounts.token_source(config, "calendar"),
        )
    apple_on = config.get("calendar", "apple")
    if isinstance(apple_on, str):
        apple_on = apple_on.strip().lower() in ("1", "true", "yes", "on")
    if apple_on:
        return AppleWriter(str(config.get("calendar", "apple_calendar") or ""))
    return None
