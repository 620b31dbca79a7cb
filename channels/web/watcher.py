"""The watcher: pages and feeds the user asked Wilson to watch, checked on their own cadence.

What is watched. One row per source in the table `watch` (storage/watches.py; the id is a digest of the
address, so watching an address twice is one source). The row holds what the user chose
(address, how often) and what the last look found: validators (ETag, Last-Modified), a
digest of the last body, the feed item ids already seen, or the page's readable text.
Only the `watch` tool (an approved proposal, through the gate) adds a row; `unwatch`
removes one.

Looking (the GET and its bounds are channels/web/fetching.py; the parsing is
channels/web/reading.py). The site's robots.txt is asked first (once a day per source): a page it closes to
robots is not read. Then a GET with the validators of the last answer: a 304, or a body identical to the
last one, ends the look there (no parsing, nothing written but the time). Redirects are
followed by hand, at most MAX_REDIRECTS, each to http or https only; a body larger than
MAX_BYTES or a look longer than LOOK_SECONDS is given up. Feeds (RSS, Atom, RDF through
feedparser; JSON Feed read here, which feedparser 6.0 does not know) give their items;
anything else is a page, reduced to its readable text with lxml (scripts, styles,
navigation, headers, footers, forms and ad boxes left out).

What becomes a buffer row. The first look only takes a baseline: nothing from before the
user asked is news. After that, each feed item not seen before is one row, and a page
whose text changed in words (not only in its numbers and dates: counters, "updated 5
minutes ago", today's date) is one row saying what was added and removed. The rows and
the source's new state commit in one transaction, so a change reaches the buffer exactly
once even when Wilson is killed in between. Text from the page or feed is others' words:
the rows carry its source (channel "web", title, address) so every prompt wraps it as
untrusted data (actors/tools/untrusted.py, actors/thalamus.py).

A source that fails (unreachable, not a feed or page, too big, too slow) is traced on its own
trace id with the reason, when the reason changes, and is tried again later, less often while it
keeps failing; the other sources are looked at as usual. Before a look begins, the source's next
look is already moved on as far as a failure would move it (`begin`): a look cut short by a kill
or a restart does not make the next start begin with the same source again.

Size: one watched source's life: added, due, looked at, backed off and recorded, over the same row.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from loguru import logger

from channels.web import fetching
from channels.web.fetching import MAX_URL, Fetched, WatchError, fetch, robots_allow
from channels.web.reading import SNAPSHOT_CHARS, masked, page_change, page_text, read_feed
from storage import trace, watches
from storage.db import database
from wilson.kernel import clock as clockmod

if TYPE_CHECKING:  # annotations only
    import httpx

MIN_EVERY = timedelta(minutes=5)  # the user may ask for less often, never more (be kind to servers)
MAX_EVERY = timedelta(days=7)
DEFAULT_EVERY = timedelta(minutes=15)
SEEN_KEPT = 500  # feed item ids remembered per source
NEW_ITEMS = 20  # rows from one look at one feed; more are counted in the trace, not buffered
ROBOTS_EVERY = timedelta(days=1)  # how long a site's robots.txt answer is trusted
ROW_CHARS = 3000


# The user's list ---------------------------------------------------------------------------------
def normalise_url(raw) -> str:
    """The address as it is stored and fetched: http or https with a host, no fragment, no password.
    Raises ValueError with what is wrong."""
    if not isinstance(raw, str) or not raw.strip():
        raise ValueError("give the address of a page or feed, e.g. https://example.org/news.rss")
    text = raw.strip()
    if len(text) > MAX_URL:
        raise ValueError(f"that address is too long (at most {MAX_URL} characters)")
    if any(ch.isspace() or ord(ch) < 32 for ch in text):
        raise ValueError("an address has no spaces")
    parts = urlsplit(text if "://" in text else "https://" + text)
    if parts.scheme.lower() not in ("http", "https"):
        raise ValueError(f"only http and https addresses can be watched (not {parts.scheme})")
    if not parts.hostname:
        raise ValueError("that address has no host")
    if parts.username or parts.password:
        raise ValueError("leave the user name and password out of the address")
    try:
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        raise ValueError("that address has a port that is not a number") from None
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path or "/", parts.query, ""))


def parse_every(raw, default: timedelta = DEFAULT_EVERY) -> timedelta:
    """How often to look, from "30m", "2h", "1d"; within MIN_EVERY and MAX_EVERY. ValueError otherwise."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return min(max(default, MIN_EVERY), MAX_EVERY)
    if not isinstance(raw, str) or len(raw) > 20:
        raise ValueError("say how often like 30m, 2h or 1d")
    every = clockmod.parse_duration(raw)
    if every < MIN_EVERY:
        raise ValueError("at most every 5 minutes: more often would burden the site")
    if every > MAX_EVERY:
        raise ValueError("at least once a week (7d)")
    return every


def source_id(url: str) -> str:
    return hashlib.sha256(url.encode("utf-8")).hexdigest()[:16]


def get(url: str) -> dict | None:
    return watches.get(source_id(url))


def add(url: str, every: timedelta, now: datetime, title: str = "") -> dict:
    """Watch `url` (already normalised) every `every`; an address watched already keeps what it saw."""
    state = get(url) or {
        "url": url,
        "id": source_id(url),
        "added_at": now.isoformat(),
        "trace": trace.new_trace_id(),
        "next_at": now.isoformat(),
        "kind": "",
        "title": title,
    }
    state["every"] = int(every.total_seconds())
    save(state)
    trace.record(state["trace"], "watching", "web", f"watching {url} every {describe_every(every)}", now)
    return state


def remove(url: str) -> bool:
    return watches.delete(source_id(url))


def save(state: dict) -> None:
    watches.save(state["id"], state)


def sources() -> list[dict]:
    return [state for state in watches.every() if state.get("url")]


def due(now: datetime) -> list[dict]:
    found = []
    for state in sources():
        try:
            at = datetime.fromisoformat(state.get("next_at") or "")
        except ValueError:
            at = now
        if at <= now:
            found.append(state)
    return sorted(found, key=lambda s: s.get("next_at") or "")


def describe_every(every: timedelta) -> str:
    seconds = int(every.total_seconds())
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size and seconds % size == 0:
            n = seconds // size
            return f"{n} {unit}{'s' if n != 1 else ''}" if n != 1 else f"{unit}"
    return f"{seconds} seconds"


def view(state: dict, tz) -> dict:
    """One source as the dashboard and list_watches show it."""

    def local(value):
        try:
            return datetime.fromisoformat(value).astimezone(tz).strftime("%a %d %b %H:%M") if value else ""
        except ValueError:
            return ""

    # a look that failed, or that robots.txt stopped, leaves no kind: it was looked at all the same
    kind = state.get("kind") or ("" if state.get("checked_at") else "not looked at yet")
    return {
        "url": state["url"],
        "title": state.get("title") or "",
        "kind": kind,
        "every": describe_every(timedelta(seconds=int(state.get("every") or DEFAULT_EVERY.total_seconds()))),
        "checked": local(state.get("checked_at")),
        "changed": local(state.get("changed_at")),
        "problem": state.get("error") or "",
        "trace": state.get("trace") or "",
    }


# One look ------------------------------------------------------------------------------------------
@dataclass
class Finding:
    key: str
    text: str
    payload: dict


@dataclass
class Look:
    """What one look at one source found: `status` is new, unchanged, not-modified, baseline or failed;
    `parsed` says whether the body was read at all (a 304 or the same body is not)."""

    status: str
    state: dict
    findings: list[Finding] = field(default_factory=list)
    parsed: bool = False
    items: int = 0
    error: str = ""
    note: str = ""


def look(state: dict, http: httpx.Client, now: datetime) -> Look:
    """Fetch and read one source; returns what to buffer and its next state (nothing is written here)."""
    state = dict(state)
    state.pop("looking_since", None)
    every = timedelta(seconds=int(state.get("every") or DEFAULT_EVERY.total_seconds()))
    state["checked_at"] = now.isoformat()
    state["next_at"] = (now + every).isoformat()
    try:
        asked = state.get("robots") or {}
        try:
            fresh = now < datetime.fromisoformat(asked.get("at") or "") + ROBOTS_EVERY
        except ValueError:
            fresh = False
        # robots.txt and the page share one look's LOOK_SECONDS: a server that drips both costs one deadline
        began = clockmod.monotonic()
        if not fresh:
            asked = state["robots"] = {"at": now.isoformat(), "allowed": robots_allow(http, state["url"])}
        if not asked.get("allowed"):
            raise WatchError("the site's robots.txt asks robots like Wilson not to read it")
        fetched = fetch(
            http,
            state["url"],
            state.get("etag") or "",
            state.get("last_modified") or "",
            seconds=fetching.LOOK_SECONDS - (clockmod.monotonic() - began),
        )
        if fetched.status == 304:
            state.pop("error", None)
            state["failures"] = 0
            return Look("not-modified", state)
        digest = hashlib.sha256(fetched.body).hexdigest()
        state["etag"] = str(fetched.headers.get("etag") or "")[:300]
        state["last_modified"] = str(fetched.headers.get("last-modified") or "")[:100]
        if digest == state.get("body") and state.get("kind"):
            state.pop("error", None)
            state["failures"] = 0
            return Look("unchanged", state)
        result = _read(state, fetched, now)
        state["body"] = digest
        state.pop("error", None)
        state["failures"] = 0
        return result
    except WatchError as exc:
        return _failed(state, str(exc), now, every)
    except Exception as exc:  # a parser's surprise on hostile bytes: this source fails, the others go on
        logger.exception("web: reading {} failed", state["url"])
        return _failed(state, f"it could not be read ({type(exc).__name__})", now, every)


def _backoff(every: timedelta, failures: int) -> timedelta:
    return every * min(2 ** (max(failures, 1) - 1), 8)  # less often while it keeps failing


def begin(state: dict, now: datetime) -> None:
    """Before a look: the source's next look moves on as a failure would move it (the look's own result
    replaces this when it ends), so a look that never ends cannot be the first thing of every restart."""
    every = timedelta(seconds=int(state.get("every") or DEFAULT_EVERY.total_seconds()))
    with database.atomic():
        current = get(state["url"])
        if current is None:
            return
        current["next_at"] = (now + _backoff(every, int(current.get("failures") or 0) + 1)).isoformat()
        current["looking_since"] = now.isoformat()
        save(current)


def _failed(state: dict, reason: str, now: datetime, every: timedelta) -> Look:
    failures = int(state.get("failures") or 0) + 1
    state["failures"] = failures
    state["next_at"] = (now + _backoff(every, failures)).isoformat()
    note = reason if reason != state.get("error") else ""
    state["error"] = reason
    return Look("failed", state, error=reason, note=note)


def _read(state: dict, fetched: Fetched, now: datetime) -> Look:
    first = not state.get("kind")
    feed = read_feed(fetched.body, fetched.headers, fetched.url)
    if feed is not None:
        title, items = feed
        state["kind"] = "feed"
        state["title"] = title or state.get("title") or ""
        seen = list(state.get("seen") or [])
        known = set(seen)
        fresh = [i for i in items if i["id"] and i["id"] not in known]
        state["seen"] = ([i["id"] for i in fresh] + seen)[:SEEN_KEPT]
        if first:
            note = "" if items else "the feed has no items yet"
            return Look("baseline", state, parsed=True, items=len(items), note=note)
        findings = [_item_finding(state, item) for item in fresh[:NEW_ITEMS]]
        if findings:
            state["changed_at"] = now.isoformat()
        note = f"{len(fresh) - NEW_ITEMS} more new items not buffered" if len(fresh) > NEW_ITEMS else ""
        return Look("new" if findings else "unchanged", state, findings, parsed=True, items=len(items), note=note)
    content_type = str(fetched.headers.get("content-type") or "").lower()
    if content_type and not any(t in content_type for t in ("html", "text/plain", "xml")):
        raise WatchError(f"it is neither a feed nor a web page ({content_type.split(';')[0][:60]})")
    if "text/plain" in content_type:
        title, text = (
            "",
            "\n".join(
                " ".join(x.split())
                for x in fetched.body[: SNAPSHOT_CHARS * 2].decode("utf-8", "replace").splitlines()
                if x.strip()
            )[:SNAPSHOT_CHARS],
        )
    else:
        title, text = page_text(fetched.body, content_type)
    old = state.get("text")
    state["kind"] = "page"
    state["title"] = title or state.get("title") or ""
    state["text"] = text
    if first or old is None:
        return Look("baseline", state, parsed=True, note="" if text else "the page has no readable text")
    added, removed = page_change(old, text)
    if not added and not removed:
        return Look("unchanged", state, parsed=True)
    state["changes"] = int(state.get("changes") or 0) + 1
    state["changed_at"] = now.isoformat()
    name = state["title"] or state["url"]
    parts = [f"The page “{name}” changed."]
    if added:
        parts.append("Now it says:\n" + "\n".join(added))
    if removed:
        parts.append("It no longer says:\n" + "\n".join(removed))
    body = "\n".join(parts)
    body = body if len(body) <= ROW_CHARS else body[: ROW_CHARS - 1] + "…"
    key = f"web:page:{state['id']}:{state['changes']}:" + hashlib.sha256(masked(text).encode()).hexdigest()[:12]
    return Look(
        "new",
        state,
        [
            Finding(
                key, body, {"kind": "page change", "url": state["url"], "title": state["title"], "watch": state["id"]}
            )
        ],
        parsed=True,
    )


def _item_finding(state: dict, item: dict) -> Finding:
    feed = state.get("title") or state["url"]
    lines = [f"New in the feed “{feed}”: {item['title'] or '(no title)'}"]
    if item.get("text") and item["text"] != item["title"]:
        lines.append(item["text"])
    if item.get("link"):
        lines.append(item["link"])
    text = "\n".join(lines)[:ROW_CHARS]
    key = f"web:feed:{state['id']}:" + hashlib.sha256(item["id"].encode("utf-8", "replace")).hexdigest()[:24]
    return Finding(
        key,
        text,
        {
            "kind": "feed item",
            "url": item.get("link") or state["url"],
            "feed": state["url"],
            "title": item["title"] or feed,
            "published": item.get("published") or "",
            "watch": state["id"],
        },
    )


def record(result: Look, now: datetime, commit) -> list:
    """The findings as buffer rows (`commit(text, key, payload)` → row or None) and the source's new
    state, in one transaction; a failure or a note is traced on the source's own trace id."""
    with database.atomic():
        if get(result.state["url"]) is None:
            return []  # unwatched while we looked: nothing of it is kept
        rows = [commit(f.text, f.key, f.payload) for f in result.findings]
        save(result.state)
        tid = result.state.get("trace") or trace.new_trace_id()
        if result.status == "failed" and result.note:
            trace.record(
                tid, "failed", "web", f"could not read {result.state['url']}: {result.error}; trying again later", now
            )
        elif result.note:
            trace.record(tid, "looked", "web", f"{result.state['url']}: {result.note}", now)
        elif result.status == "baseline":
            what = (
                f"{result.items} item{'s' if result.items != 1 else ''}"
                if result.state.get("kind") == "feed"
                else "the page's text"
            )
            trace.record(
                tid, "looked", "web", f"first look at {result.state['url']}: {what} taken as the starting point", now
            )
        elif result.findings:
            trace.record(
                tid,
                "changed",
                "web",
                f"{result.state['url']}: {len(result.findings)} new "
                f"{'item' if result.state.get('kind') == 'feed' else 'change'}"
                f"{'s' if len(result.findings) != 1 else ''} buffered",
                now,
            )
    return [r for r in rows if r is not None]
