"""Reading what a watched source answered: feeds to items, pages to their readable text, and what changed.

Feeds (RSS, Atom, RDF through feedparser; JSON Feed read here, which feedparser 6.0 does not
know) give their items; anything else is a page, reduced to its readable text with lxml
(scripts, styles, navigation, headers, footers, forms and ad boxes left out). A page changed
when its text changed in words, not only in its numbers and dates (counters, "updated 5
minutes ago", today's date). Nothing here touches the network or the database.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from urllib.parse import urlsplit

from channels.web.fetching import MAX_URL, WatchError

SNAPSHOT_CHARS = 100_000
ITEM_CHARS = 1000

_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december|"
    "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
_DAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|tues|wed|thu|thurs|fri|sat|sun"
_VOLATILE = re.compile(rf"\d+|\b(?:{_MONTHS}|{_DAYS}|today|yesterday|tomorrow|am|pm)\b", re.IGNORECASE)
_DROPPED = (
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "nav",
    "header",
    "footer",
    "aside",
    "form",
    "iframe",
    "button",
    "select",
    "object",
    "embed",
    "canvas",
    "dialog",
)
_AD = re.compile(
    r"(?:^|[\s_-])(?:ad|ads|advert\w*|banner|promo\w*|sponsor\w*|cookie\w*|consent|newsletter-signup)"
    r"(?:$|[\s_-])",
    re.IGNORECASE,
)
_BLOCK = {
    "p",
    "div",
    "br",
    "tr",
    "li",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "table",
    "ul",
    "ol",
    "blockquote",
    "pre",
    "hr",
    "section",
    "article",
    "main",
    "dt",
    "dd",
    "figcaption",
    "td",
    "th",
}


def _clean(text, limit: int) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def html_text(html: str | bytes, limit: int = ITEM_CHARS) -> str:
    """Text of an HTML fragment (a feed item's summary): tags, scripts and styles gone."""
    if not html or not str(html).strip():
        return ""
    # lazy: lxml costs some 4 MiB, wanted for the first page or feed item only
    import lxml.html
    from lxml import etree

    try:
        root = lxml.html.fragment_fromstring(html, create_parent="div")
    except (etree.ParserError, ValueError, TypeError):
        return _clean(re.sub(r"<[^>]*>", " ", str(html)), limit)
    for bad in root.xpath(".//script|.//style|.//noscript|.//template"):
        bad.drop_tree()
    return _clean(root.text_content(), limit)


def page_text(body: bytes, content_type: str = "") -> tuple[str, str]:
    """(title, readable text) of an HTML page: the main part, one block per line."""
    # lazy: lxml costs some 4 MiB, wanted for the first page or feed item only
    import lxml.html
    from lxml import etree

    charset = re.search(r"charset=[\"']?([\w.:-]+)", content_type or "", re.IGNORECASE)
    parser = lxml.html.HTMLParser(encoding=charset.group(1)) if charset else None
    try:
        root = lxml.html.document_fromstring(body, parser=parser)
    except (etree.ParserError, ValueError, LookupError):
        try:
            root = lxml.html.document_fromstring(body)
        except (etree.ParserError, ValueError) as exc:
            raise WatchError(f"the page could not be read ({exc})") from None
    title = _clean(" ".join(root.xpath("//title//text()")), 200)
    for bad in root.xpath("|".join(f"//{tag}" for tag in _DROPPED)):
        if bad.getparent() is not None:
            bad.drop_tree()
    for node in list(root.iter()):
        if (
            isinstance(node.tag, str)
            and node.getparent() is not None
            and (
                _AD.search(node.get("class") or "")
                or _AD.search(node.get("id") or "")
                or (node.get("role") or "").lower() in ("banner", "navigation", "complementary", "contentinfo")
                or node.get("hidden") is not None
                or (node.get("aria-hidden") or "").lower() == "true"
            )
        ):
            node.drop_tree()
    main = (
        root.xpath("//main")
        or root.xpath("//*[@role='main']")
        or root.xpath("//article")
        or root.xpath("//body")
        or [root]
    )[0]
    for node in main.iter():
        if isinstance(node.tag, str) and node.tag.lower() in _BLOCK:
            node.tail = "\n" + (node.tail or "")
            if node.tag.lower() in ("br", "hr"):
                continue
            node.text = "\n" + (node.text or "")
    lines = [" ".join(line.split()) for line in main.text_content().splitlines()]
    text = "\n".join(line for line in lines if line)
    return title, text[:SNAPSHOT_CHARS]


def _safe_link(value) -> str:
    link = str(value or "").strip()
    return link[:MAX_URL] if urlsplit(link).scheme.lower() in ("http", "https") else ""


def _json_feed(body: bytes) -> tuple[str, list[dict]] | None:
    """A JSON Feed (jsonfeed.org 1.0/1.1): (title, items), or None when the body is not one."""
    try:
        data = json.loads(body.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or not str(data.get("version") or "").startswith("https://jsonfeed.org/version/"):
        return None
    items = []
    for entry in data.get("items") if isinstance(data.get("items"), list) else []:
        if not isinstance(entry, dict):
            continue
        text = entry.get("content_text") or html_text(entry.get("content_html") or "") or entry.get("summary") or ""
        items.append(
            {
                "id": str(entry.get("id") or entry.get("url") or ""),
                "title": _clean(entry.get("title"), 300),
                "link": _safe_link(entry.get("url") or entry.get("external_url")),
                "text": _clean(text, ITEM_CHARS),
                "published": _clean(entry.get("date_published"), 40),
            }
        )
    return _clean(data.get("title"), 200), items


def read_feed(body: bytes, headers: dict, url: str) -> tuple[str, list[dict]] | None:
    """(feed title, items) when the body is a feed; None when it is not one (a page, or nothing)."""
    content_type = str(headers.get("content-type") or "").lower()
    start = body[:200].lstrip(b"\xef\xbb\xbf \t\r\n")
    if "json" in content_type or start.startswith(b"{"):
        found = _json_feed(body)
        if found is not None or "json" in content_type:
            return found
    if "html" in content_type and b"<rss" not in start and b"<feed" not in start and b"<rdf" not in start.lower():
        return None

    wanted = {
        k.lower(): v
        for k, v in headers.items()
        if k.lower() in ("content-type", "content-location", "content-language")
    }
    wanted.setdefault("content-location", url)
    # lazy: feedparser (1 MiB) for the first feed only
    import feedparser

    parsed = feedparser.parse(body, response_headers=wanted, sanitize_html=True, resolve_relative_uris=True)
    if not parsed.get("version") and not parsed.entries:
        return None
    items = []
    for entry in parsed.entries:
        content = entry.get("content") or []
        summary = entry.get("summary") or (content[0].get("value") if content and isinstance(content[0], dict) else "")
        title = html_text(entry.get("title") or "", 300)
        link = _safe_link(entry.get("link"))
        text = html_text(summary or "")
        key = str(entry.get("id") or link or "") or hashlib.sha256(f"{title}|{text}".encode()).hexdigest()[:24]
        items.append(
            {
                "id": key,
                "title": title,
                "link": link,
                "text": text,
                "published": _clean(entry.get("published") or entry.get("updated"), 40),
            }
        )
    return html_text(parsed.feed.get("title") or "", 200), items


def masked(line: str) -> str:
    """A line with what changes by itself (numbers, dates, weekdays) blanked: only words count as change."""
    return _VOLATILE.sub("#", line.lower())


def page_change(old: str, new: str) -> tuple[list[str], list[str]]:
    """(lines added, lines removed) between two texts, ignoring lines that differ only in numbers and dates."""
    before, after = old.splitlines(), new.splitlines()
    a, b = [masked(x) for x in before], [masked(x) for x in after]
    added, removed = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            removed += before[i1:i2]
        if tag in ("replace", "insert"):
            added += after[j1:j2]
    return added, removed
