"""Fetching a watched source: one GET, by hand and within bounds (channels/web/watcher.py decides when).

The site's robots.txt is asked first (the watcher keeps its answer a day): a page it closes to
robots is not read. A GET carries the validators of the last answer (ETag, Last-Modified), so a
304 ends the look. Redirects are followed by hand, at most MAX_REDIRECTS, each to http or https
only; a body larger than MAX_BYTES is given up. LOOK_SECONDS bounds the whole GET, headers and
redirects included (wilson/kernel/deadline.py): a server that drips one header line every few seconds
never trips a per-read timeout, but it does trip this. Connections are not kept between GETs, so every
socket a GET reads from is one its deadline watches. Every failure is a WatchError whose text says why,
in words for the trace.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit, urlunsplit

from wilson.kernel import deadline

if TYPE_CHECKING:  # annotations only
    import httpx

MAX_URL = 2000
MAX_BYTES = 2_000_000  # a page or feed larger than this is not read
MAX_REDIRECTS = 5
TIMEOUT_SECONDS = 15.0  # connecting, and each read
LOOK_SECONDS = 30.0  # one look at one source, however slowly the server drips
ROBOTS_BYTES = 100_000
USER_AGENT = "Wilson/0.1 (personal assistant; watches pages its user asked for)"


class WatchError(Exception):
    """Why a look at a source failed, in words for the trace."""


@dataclass
class Fetched:
    status: int
    body: bytes
    headers: dict
    url: str


def client() -> httpx.Client:
    # lazy: httpx (with its command-line extras, about 70 ms) only once a request is made
    import httpx

    return httpx.Client(
        follow_redirects=False,
        timeout=httpx.Timeout(TIMEOUT_SECONDS),
        limits=httpx.Limits(max_keepalive_connections=0),
        headers={"User-Agent": USER_AGENT},
        trust_env=False,
    )


def fetch(
    http: httpx.Client, url: str, etag: str = "", last_modified: str = "", seconds: float | None = None
) -> Fetched:
    """One GET within `seconds` in all (what is left of a look's LOOK_SECONDS when robots.txt was asked first)."""
    headers = {
        "Accept": "application/rss+xml, application/atom+xml, application/feed+json, application/json;q=0.9, "
        "text/html;q=0.9, application/xml;q=0.8, */*;q=0.5"
    }
    if etag:
        headers["If-None-Match"] = etag
    if last_modified:
        headers["If-Modified-Since"] = last_modified
    seconds = LOOK_SECONDS if seconds is None else seconds
    if seconds <= 0:
        raise WatchError(f"it took longer than {LOOK_SECONDS:.0f} seconds to answer")
    try:
        with deadline.within(seconds, "the whole answer"):
            return _get(http, url, headers)
    except deadline.Expired:
        raise WatchError(f"it took longer than {LOOK_SECONDS:.0f} seconds to answer") from None


def _get(http: httpx.Client, url: str, headers: dict) -> Fetched:
    # lazy: httpx (with its command-line extras, about 70 ms) only once a request is made
    import httpx

    current = url
    for _ in range(MAX_REDIRECTS + 1):
        try:
            with http.stream("GET", current, headers=headers) as response:
                if response.status_code in (301, 302, 303, 307, 308):
                    location = response.headers.get("location", "")
                    target = urljoin(current, location)
                    if not location or urlsplit(target).scheme.lower() not in ("http", "https"):
                        raise WatchError(f"it redirects to {target[:200] or 'nowhere'}, which is not http or https")
                    current = target
                    continue
                if response.status_code == 304:
                    return Fetched(304, b"", dict(response.headers), current)
                if response.status_code >= 400:
                    raise WatchError(f"the server answered HTTP {response.status_code}")
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > MAX_BYTES:
                    raise WatchError(f"it is too big ({int(declared) // 1000} kB; at most {MAX_BYTES // 1000} kB)")
                body = bytearray()
                for chunk in response.iter_bytes():
                    body += chunk
                    if len(body) > MAX_BYTES:
                        raise WatchError(f"it is too big (more than {MAX_BYTES // 1000} kB)")
                return Fetched(response.status_code, bytes(body), dict(response.headers), current)
        except httpx.TimeoutException:
            raise WatchError(f"no answer within {TIMEOUT_SECONDS:.0f} seconds") from None
        except httpx.HTTPError as exc:
            raise WatchError(f"could not reach it ({type(exc).__name__}: {str(exc)[:200]})") from None
    raise WatchError(f"more than {MAX_REDIRECTS} redirects")


def robots_allow(http: httpx.Client, url: str, seconds: float | None = None) -> bool:
    """Whether the site's robots.txt lets Wilson read `url`. No robots.txt, or one that cannot be read,
    allows (as for every crawler); one that answers 401 or 403 does not."""
    parts = urlsplit(url)
    robots = urlunsplit((parts.scheme, parts.netloc, "/robots.txt", "", ""))
    try:
        fetched = fetch(http, robots, seconds=seconds)
    except WatchError as exc:
        return "HTTP 401" not in str(exc) and "HTTP 403" not in str(exc)
    # lazy: urllib.robotparser brings urllib.request and http.client, at a watch's first look, not at every start
    from urllib.robotparser import RobotFileParser

    rules = RobotFileParser()
    rules.parse(fetched.body[:ROBOTS_BYTES].decode("utf-8", "replace").splitlines())
    return rules.can_fetch(USER_AGENT.split("/", 1)[0], url)
