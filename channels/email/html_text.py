"""Readable text from a mail's HTML: scripts, styles, the head and comments dropped, blocks on lines of their own,
list items bulleted, a link's address after its words.

The standard library's tolerant HTMLParser, not lxml: lxml cost a running Wilson some 4 MiB for the first HTML-only
mail, and reads the 3,113 HTML parts of the test corpus the same way but for four broken ones. Elements whose end
HTML lets one leave out (a list item, a paragraph) end where the next of their kind begins, and the head where
the body's content does, as a browser reads them.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

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
    "header",
    "footer",
    "dt",
    "dd",
}
_HIDDEN = {"script", "style", "head", "noscript", "template", "title"}
_IN_HEAD = {"title", "meta", "link", "style", "script", "base", "noscript", "template"}
_VOID = {"br", "hr", "img", "meta", "link", "input", "area", "base", "col", "embed", "source", "track", "wbr"}
_ENDS_ITS_KIND = {"li", "p", "dt", "dd", "tr"}  # a second one beginning ends the first
_ENDS_A_PARAGRAPH = {
    "address",
    "article",
    "aside",
    "blockquote",
    "div",
    "dl",
    "fieldset",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "menu",
    "nav",
    "ol",
    "pre",
    "section",
    "table",
    "ul",
}
_ENDS_WITH = {
    "ul": {"li"},
    "ol": {"li"},
    "dl": {"dt", "dd"},
    "table": {"tr"},
    "tbody": {"tr"},
    "thead": {"tr"},
    "body": _ENDS_ITS_KIND,
    "html": _ENDS_ITS_KIND,
}  # the open elements an end tag ends with it


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden: list[str] = []  # the hidden elements open, innermost last
        self.links: list[tuple[str, int]] = []  # an open link's address and its first part
        self.open: list[str] = []  # the elements open whose end may be left out

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.hidden == ["head"] and tag not in _IN_HEAD:
            self.hidden.pop()
        if self.hidden or tag in _HIDDEN:
            if tag in _HIDDEN and tag not in _VOID:
                self.hidden.append(tag)
            return
        if tag in _ENDS_A_PARAGRAPH and self.open and self.open[-1] == "p":
            self.open.pop()
            self.parts.append("\n")
        if tag in _ENDS_ITS_KIND:
            if self.open and self.open[-1] == tag:
                self.parts.append("\n")
            else:
                self.open.append(tag)
        if tag == "li":
            self.parts.append("• ")
        elif tag == "a":
            self.links.append((dict(attrs).get("href") or "", len(self.parts)))
        if tag in _VOID and tag in _BLOCK:
            self.parts.append("\n")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if self.hidden:
            if tag in self.hidden:
                while self.hidden.pop() != tag:
                    pass
            return
        if tag in _ENDS_ITS_KIND and tag in self.open:
            while self.open.pop() != tag:
                pass
        while self.open and self.open[-1] in _ENDS_WITH.get(tag, ()):
            self.open.pop()
            self.parts.append("\n")
        if tag == "a" and self.links:
            href, first = self.links.pop()
            href, label = href.strip(), "".join(self.parts[first:]).strip()
            if href.startswith(("http://", "https://")) and href != label and label:
                self.parts.append(f" ({href})")
        if tag in _BLOCK and tag not in _VOID:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.parts.append(data)


def html_to_text(html: str) -> str:
    if not html.strip():
        return ""
    reader = _Reader()
    reader.feed(html)
    reader.close()
    lines = [" ".join(line.split()) for line in "".join(reader.parts).splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
