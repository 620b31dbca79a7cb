"""Where calendar data comes from: a file, an .ics URL, a CalDAV server, the macOS Calendar app.

Each source is polled as cheaply as it allows (a file by its stat, a URL by a conditional
GET, CalDAV by each calendar's ctag / sync-token) and answers None when nothing changed.

Size: four sources behind one small interface, with the digest and the config reader they share; each
source is short, and split into modules they would all import the shared part back (the Calendar app's
writing is channels/calendar/apple.py, its reading stays here beside the other sources).
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

from loguru import logger
import caldav

from caldav.lib import error as caldav_error

from channels import accounts
from channels.accounts import AccountError, GrantRevoked
from channels.calendar.event import CANCELLED, SourceError, one_line
from channels.calendar.ics import new_calendar
from wilson.kernel import deadline


def total_seconds(timeout: float) -> float:
    """A whole fetch, headers, body and every request of a CalDAV sync included (the socket timeout bounds
    each read only: a server that drips a byte at a time never trips it). It ends before the channel's
    watchdog budget for a fetch (timeout + 30 s) would."""
    return 1.5 * float(timeout)


def _short_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()[:10]


def documents_digest(documents: list[tuple[str, bytes]]) -> str:
    h = hashlib.sha256()
    for name, data in documents:
        h.update(name.encode("utf-8", "replace") + b"\0" + data + b"\0")
    return h.hexdigest()


def _public_url(url: str) -> str:
    """A URL fit for logs: private .ics links carry their secret in the path or query."""
    parts = urlsplit(url)
    host = parts.hostname or "?"
    if parts.port:
        host += f":{parts.port}"
    return f"{parts.scheme}://{host}/…({_short_hash(url)})"


class CalendarSource:
    """Where calendar data comes from. `fetch(state)` -> (documents or None when unchanged, new state).

    A document is (name, iCalendar bytes); the name appears in error messages.
    """

    id = "source"
    label = "source"

    def fetch(self, state: dict) -> tuple[list[tuple[str, bytes]] | None, dict]:
        raise NotImplementedError


class IcsFileSource(CalendarSource):
    def __init__(self, path: str | Path):
        self.path = Path(path).expanduser()
        absolute = str(self.path.resolve())
        self.id = f"file:{absolute}" if len(absolute) < 200 else f"file:{self.path.name}:{_short_hash(absolute)}"
        self.label = str(self.path)

    @contextlib.contextmanager
    def _reading(self):
        """A file that is gone or unreadable is a SourceError, in one line."""
        try:
            yield
        except FileNotFoundError:
            raise SourceError(f"{self.path}: no such file") from None
        except OSError as exc:
            raise SourceError(f"{self.path}: cannot read: {exc.strerror or exc}") from None

    def fetch(self, state):
        with self._reading():
            stat = self.path.stat()
        # Inode and change time as well as mtime and size: an editor that replaces the file
        # within one mtime tick, keeping its size, still gives a new inode or ctime.
        seen = [stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns]
        if state.get("sha256") and state.get("stat") == seen:
            return None, state  # unchanged on disk: not even read
        with self._reading():
            data = self.path.read_bytes()
        documents = [(str(self.path), data)]
        digest = documents_digest(documents)
        if digest == state.get("sha256"):
            return None, {"sha256": digest, "stat": seen}  # touched, not changed
        return documents, {"sha256": digest, "stat": seen}


class IcsUrlSource(CalendarSource):
    """An .ics URL polled with a conditional GET (ETag / Last-Modified)."""

    def __init__(self, url: str, *, timeout: float = 30.0):
        if url.startswith("webcal://"):
            url = "https://" + url[len("webcal://") :]
        self.url = url
        self.timeout = timeout
        self.id = f"url:{urlsplit(url).hostname or '?'}:{_short_hash(url)}"
        self.label = _public_url(url)

    def fetch(self, state):
        # lazy: httpx (with its command-line extras, about 70 ms) only once a request is made
        import httpx

        headers = {"Accept": "text/calendar, */*;q=0.5"}
        if state.get("etag"):
            headers["If-None-Match"] = state["etag"]
        if state.get("last_modified"):
            headers["If-Modified-Since"] = state["last_modified"]
        try:
            with (
                deadline.within(total_seconds(self.timeout), "the calendar"),
                httpx.Client(timeout=self.timeout, follow_redirects=True) as client,
            ):
                response = client.get(self.url, headers=headers)
        except deadline.Expired:
            raise SourceError(
                f"{self.label}: no complete answer within {total_seconds(self.timeout):g} seconds"
            ) from None
        except httpx.HTTPError as exc:
            raise SourceError(f"{self.label}: {type(exc).__name__}: {one_line(exc, 160)}") from None
        if response.status_code == 304:
            return None, state
        if response.status_code != 200:
            raise SourceError(f"{self.label}: HTTP {response.status_code}")
        documents = [(self.label, response.content)]
        digest = documents_digest(documents)
        new_state = {"sha256": digest}
        if response.headers.get("ETag"):
            new_state["etag"] = response.headers["ETag"]
        if response.headers.get("Last-Modified"):
            new_state["last_modified"] = response.headers["Last-Modified"]
        if digest == state.get("sha256"):
            return None, new_state  # a server without validators sent the same calendar again
        return documents, new_state


class CalDavSource(CalendarSource):
    """Every event of every calendar the account can see, one document per CalDAV object."""

    def __init__(
        self, url: str, username: str | None = None, password: str | None = None, *, timeout: int = 30, token=None
    ):
        """`token`: for a Google account, a callable(fresh) giving an OAuth access token (Bearer) instead of the
        password."""
        self.token = token
        self.fresh = False  # the next client asks for a new token (the server refused the last one)
        self.url = url
        self.username = username or None
        self.password = password or None
        self.timeout = timeout
        self.id = f"caldav:{urlsplit(url).hostname or '?'}:{_short_hash(url + '|' + (username or ''))}"
        self.label = f"CalDAV {_public_url(url)}"

    def _calendars(self, client):
        try:
            principal = client.principal()
            calendars = principal.get_calendars() if hasattr(principal, "get_calendars") else principal.calendars()
            if calendars:
                return calendars
        except Exception as exc:  # a server without principal discovery: the URL may be one calendar
            logger.debug("{}: no principal ({}); reading the URL as one calendar", self.label, one_line(exc))
        return [client.calendar(url=self.url)]

    @staticmethod
    def _calendar_name(calendar) -> str:
        try:
            name = calendar.get_display_name()
        except Exception:  # the display name only labels error messages; the URL does as well
            name = None
        return str(name or str(calendar.url).rstrip("/").rsplit("/", 1)[-1])

    @staticmethod
    def _version(calendar) -> str | None:
        """The calendar's change marker (CalendarServer ctag and/or RFC 6578 sync-token), None when
        the server offers neither: any change to the collection changes it."""
        # lazy: caldav's elements bring lxml (some 4 MiB), wanted only where a CalDAV calendar is read
        from caldav.elements import dav
        from caldav.elements.base import BaseElement

        class GetCTag(BaseElement):
            tag = "{http://calendarserver.org/ns/}getctag"

        try:
            found = calendar.get_properties([GetCTag(), dav.SyncToken()])
        except Exception as exc:  # a server that refuses the PROPFIND: read the objects instead
            logger.debug("calendar {}: no change marker ({})", calendar.url, one_line(exc))
            return None
        values = [str(found.get(tag) or "") for tag in (GetCTag.tag, dav.SyncToken.tag)]
        return "|".join(values) if any(values) else None

    def _client(self):
        if self.token is not None:
            # lazy: caldav's HTTP layer (niquests, urllib3 and theirs) costs some 10 MiB, wanted only for CalDAV
            from caldav.requests import HTTPBearerAuth

            try:
                bearer = self.token(self.fresh)
            except AccountError as exc:
                raise SourceError(str(exc), revoked=isinstance(exc, GrantRevoked)) from None
            return caldav.DAVClient(
                url=self.url, username=self.username, auth=HTTPBearerAuth(bearer), timeout=self.timeout
            )
        return caldav.DAVClient(url=self.url, username=self.username, password=self.password, timeout=self.timeout)

    def _stale(self, exc: Exception) -> bool:
        """A refused bearer token not yet renewed: the caller tries once more with a fresh one."""
        refused = isinstance(exc, caldav_error.AuthorizationError) or "401" in str(exc)
        if self.token is not None and refused and not self.fresh:
            self.fresh = True
            return True
        return False

    def _error(self, exc: Exception) -> SourceError:
        message = one_line(exc, 200)
        if self.password:
            message = message.replace(self.password, "***")
        return SourceError(f"{self.label}: {type(exc).__name__}: {message}")

    def _late(self) -> SourceError:
        return SourceError(f"{self.label}: no complete answer within {total_seconds(self.timeout):g} seconds")

    def unchanged(self, state: dict) -> bool:
        """The cheap check between full reads: one PROPFIND per known calendar, no discovery and no
        event data. True only when every calendar read last time still has the same marker."""
        versions = state.get("versions") or {}
        if not versions or not all(versions.values()):
            return False
        try:
            with deadline.within(total_seconds(self.timeout), "the calendar server"), self._client() as client:
                return all(self._version(client.calendar(url=url)) == version for url, version in versions.items())
        except deadline.Expired:
            raise self._late() from None
        except Exception as exc:
            raise self._error(exc) from None

    def fetch(self, state):
        try:
            return self._fetch(state)
        except SourceError as exc:
            if exc.revoked or not self.fresh:  # fresh: _fetch found its bearer token refused
                raise
            return self._fetch(state)
        finally:
            self.fresh = False

    def _fetch(self, state):
        documents = []
        versions: dict[str, str | None] = {}
        try:
            with deadline.within(total_seconds(self.timeout), "the calendar server"), self._client() as client:
                for calendar in self._calendars(client):
                    # Read before the objects: a change made while they are listed shows at the next check.
                    versions[str(calendar.url)] = self._version(calendar)
                    calendar_name = self._calendar_name(calendar)
                    objects = calendar.get_events() if hasattr(calendar, "get_events") else calendar.events()
                    for obj in objects:
                        data = obj.data
                        if isinstance(data, str):
                            data = data.encode("utf-8")
                        href = str(obj.url).rstrip("/").rsplit("/", 1)[-1]
                        documents.append((f"{calendar_name}/{href}", data))
        except deadline.Expired:
            raise self._late() from None
        except SourceError:
            raise
        except Exception as exc:
            if self._stale(exc):
                raise SourceError("401") from None  # tried again by fetch with a fresh token
            raise self._error(exc) from None
        documents.sort()
        digest = documents_digest(documents)
        if digest == state.get("sha256"):
            return None, {"sha256": digest, "versions": versions}
        return documents, {"sha256": digest, "versions": versions}


APPLE_SCRIPT = r"""
on pad(n)
    return text -2 thru -1 of ("0" & (n as integer))
end pad
on stamp(d)
    return ((year of d) as string) & "-" & my pad(month of d as integer) & "-" & my pad(day of d) ¬
        & "T" & my pad(hours of d) & ":" & my pad(minutes of d) & ":" & my pad(seconds of d)
end stamp
on clean(t)
    if t is missing value then return ""
    set AppleScript's text item delimiters to {tab, return, linefeed}
    set parts to text items of (t as string)
    set AppleScript's text item delimiters to " "
    set t to parts as string
    set AppleScript's text item delimiters to ""
    return t
end clean
on row(e)
    return my clean(uid of e) & tab & my clean(summary of e) & tab & my stamp(start date of e) & tab ¬
        & my stamp(end date of e) & tab & (allday event of e as string) & tab & my clean(location of e) ¬
        & tab & (status of e as string) & tab & my clean(recurrence of e) & linefeed
end row
set windowStart to (current date) - (1 * days)
set windowEnd to (current date) + (DAYS * days)
set output to ""
tell application "Calendar"
    repeat with c in calendars
        repeat with e in (every event of c whose start date is less than windowEnd ¬
            and end date is greater than windowStart)
            set output to output & my row(e)
        end repeat
        try
            repeat with e in (every event of c whose start date is less than windowStart ¬
                and recurrence is not missing value and recurrence is not "")
                set output to output & my row(e)
            end repeat
        end try
    end repeat
end tell
return output
"""


class AppleCalendarSource(CalendarSource):
    """The macOS Calendar app, read through osascript (local times, floating).

    Calendar's scripting interface does not expand recurring events; each series comes
    with its rule and is expanded like any other calendar.
    """

    id = "apple"
    label = "Apple Calendar"

    def __init__(self, horizon_days: int = 365, *, timeout: float = 120.0):
        self.horizon_days = int(horizon_days)
        self.timeout = timeout

    def fetch(self, state):
        if sys.platform != "darwin" and shutil.which("osascript") is None:
            raise SourceError("Apple Calendar is only available on macOS")
        script = APPLE_SCRIPT.replace("DAYS", str(self.horizon_days))
        try:
            done = subprocess.run(
                ["osascript", "-e", script], capture_output=True, text=True, timeout=self.timeout, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SourceError(f"{self.label}: osascript failed: {one_line(exc, 160)}") from None
        if done.returncode != 0:
            raise SourceError(f"{self.label}: osascript: {one_line(done.stderr, 160)}")
        documents = [(self.label, apple_rows_to_ics(done.stdout))]
        digest = documents_digest(documents)
        if digest == state.get("sha256"):
            return None, state
        return documents, {"sha256": digest}


def apple_rows_to_ics(text: str) -> bytes:
    """Tab-separated rows from the Calendar script -> iCalendar with floating local times."""
    # lazy: icalendar (about 40 ms) only once a calendar is read or written
    import icalendar

    calendar = new_calendar()
    seen = set()
    for line in text.splitlines():
        fields = line.split("\t")
        if len(fields) < 7 or not fields[0] or fields[0] in seen:
            continue
        uid, title, start, end, all_day, location, status = fields[:7]
        rule = fields[7].strip() if len(fields) > 7 else ""
        try:
            begin, finish = datetime.fromisoformat(start), datetime.fromisoformat(end)
        except ValueError:
            continue
        seen.add(uid)
        event = icalendar.Event()
        event.add("UID", uid)
        event.add("SUMMARY", title or "(untitled)")
        if all_day.strip().lower() == "true":
            event.add("DTSTART", begin.date())
            event.add("DTEND", max(finish.date(), begin.date() + timedelta(days=1)))
        else:
            event.add("DTSTART", begin)
            event.add("DTEND", finish)
        if location:
            event.add("LOCATION", location)
        if status.strip().lower() == "cancelled":
            event.add("STATUS", CANCELLED)
        if rule:
            try:
                event.add("RRULE", icalendar.vRecur.from_ical(rule.removeprefix("RRULE:")))
            except ValueError:
                logger.debug("Apple Calendar: unreadable rule {!r} for {}", rule, title)
        calendar.add_component(event)
    return calendar.to_ical()


def sources_from_config(config) -> list[CalendarSource]:
    sources: list[CalendarSource] = []
    path = str(config.get("calendar", "path") or "").strip()
    if path:
        p = Path(path).expanduser()
        sources.append(IcsFileSource(p if p.is_absolute() else Path(config.home) / p))
    url = str(config.get("calendar", "url") or "").strip()
    if url:
        sources.append(IcsUrlSource(url))
    caldav_url = str(config.get("calendar", "caldav_url") or "").strip()
    if caldav_url:
        sources.append(
            CalDavSource(
                caldav_url,
                config.get("calendar", "caldav_username") or None,
                config.get("calendar", "caldav_password") or None,
                token=accounts.token_source(config, "calendar"),
            )
        )
    apple = config.get("calendar", "apple")
    if isinstance(apple, str):
        apple = apple.strip().lower() in ("1", "true", "yes", "on")
    if apple:
        sources.append(AppleCalendarSource(int(config.get("calendar", "horizon_days"))))
    return sources
