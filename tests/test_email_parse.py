"""The email parser: decoded headers, readable bodies, attachments listed and never loaded, bounded size,
lying charsets, bulk rules; and every message of the real-world corpus read or refused in one line."""

from __future__ import annotations

import base64
import os
import time
from collections import Counter
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from channels.email import parse
from channels.email.parse import ParseError, describe, parse_message
from wilson.model.offline.mailtext import sent_line

CORPUS = Path(os.environ.get("WILSON_CORPUS_DIR") or Path(__file__).resolve().parents[2] / "shared" / "corpus")
FILES = sorted((CORPUS / "eml").glob("**/*.eml"))
BERLIN = ZoneInfo("Europe/Berlin")


def mail(headers: str, body: bytes = b"Hello\r\n") -> bytes:
    return headers.strip().replace("\n", "\r\n").encode() + b"\r\n\r\n" + body


def test_encoded_words_in_headers_are_decoded():
    raw = mail("""
From: =?iso-8859-1?Q?Andr=E9_M=FCller?= <andre@example.org>
To: you@example.org
Subject: =?utf-8?B?w5xiZXJ3ZWlzdW5nIGVyaGFsdGVu?=
Date: Tue, 05 Jan 2027 09:30:00 +0000
Message-ID: <abc@example.org>
""")
    parsed = parse_message(raw)
    assert (parsed.from_name, parsed.from_addr) == ("André Müller", "andre@example.org")
    assert parsed.subject == "Überweisung erhalten"
    assert parsed.message_id == "<abc@example.org>"
    text = describe(parsed, BERLIN)
    assert text.startswith("Email from André Müller <andre@example.org>: Überweisung erhalten")
    assert "Sent Tue 05 Jan 2027 10:30" in text  # the date in local time
    assert sent_line(text) == "Sent Tue 05 Jan 2027 10:30", "the line prompts leave the date out for"


def test_plain_text_is_preferred_over_html():
    raw = mail(
        """
From: a@example.org
Subject: both
MIME-Version: 1.0
Content-Type: multipart/alternative; boundary=XX
""",
        b"--XX\r\nContent-Type: text/html\r\n\r\n<p>the <b>html</b> one</p>\r\n"
        b"--XX\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nthe plain one\r\n--XX--\r\n",
    )
    parsed = parse_message(raw)
    assert (parsed.body, parsed.body_kind) == ("the plain one", "plain")


def test_html_only_mail_becomes_readable_text():
    html = (
        b"<html><head><style>p{color:red}</style><script>alert('x')</script></head><body>"
        b"<h1>Your order</h1><p>Ships <b>Friday</b>.</p><ul><li>Socks</li><li>Shoes</li></ul>"
        b"<p><a href='https://shop.example/track'>Track it</a></p><!-- hidden --></body></html>"
    )
    raw = mail("From: shop@example.org\nSubject: order\nContent-Type: text/html; charset=utf-8", html)
    parsed = parse_message(raw)
    assert parsed.body_kind == "html"
    assert parsed.body.splitlines()[:4] == ["Your order", "Ships Friday.", "• Socks", "• Shoes"]
    assert "Track it (https://shop.example/track)" in parsed.body
    assert "alert" not in parsed.body and "color:red" not in parsed.body and "<" not in parsed.body


def test_html_that_leaves_its_ends_out_is_read_as_a_browser_reads_it():
    html = (
        b"<html><head><title>Newsletter</title><body><p>Hello<ul><li>One<li>Two &amp; three</ul>"
        b"<p>Bye<br>now <a href='mailto:x@example.org'>write</a>"
    )
    raw = mail("From: shop@example.org\nSubject: news\nContent-Type: text/html; charset=utf-8", html)
    assert parse_message(raw).body.splitlines() == ["Hello", "• One", "• Two & three", "", "Bye", "now write"]


def test_attachments_are_listed_by_name_and_size_and_never_decoded():
    blob = base64.encodebytes(os.urandom(300_000)).replace(b"\n", b"\r\n")
    raw = mail(
        """
From: a@example.org
Subject: the contract
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary=B
""",
        b"--B\r\nContent-Type: text/plain\r\n\r\nSee attached.\r\n"
        b'--B\r\nContent-Type: application/pdf; name="=?utf-8?Q?Vertr=C3=A4g.pdf?="\r\n'
        b"Content-Disposition: attachment; filename*=utf-8''Vertr%C3%A4g.pdf\r\n"
        b"Content-Transfer-Encoding: base64\r\n\r\n" + blob + b"--B--\r\n",
    )
    parsed = parse_message(raw)
    assert parsed.body == "See attached."
    [attachment] = parsed.attachments
    assert attachment.name == "Verträg.pdf" and attachment.content_type == "application/pdf"
    assert 290_000 < attachment.size < 310_000
    assert "Attached: Verträg.pdf (29" in describe(parsed, BERLIN)


def test_a_lying_or_unknown_charset_is_decoded_with_replacement():
    lying = mail(
        "From: a@example.org\nSubject: x\nContent-Type: text/plain; charset=utf-8", "Grüße aus Köln".encode("latin-1")
    )
    assert parse_message(lying).body == "Gr\ufffd\ufffde aus K\ufffdln"
    unknown = mail("From: a@example.org\nSubject: x\nContent-Type: text/plain; charset=x-klingon", "caf\u00e9".encode())
    assert parse_message(unknown).body == "café"


def test_a_huge_message_is_summarised_from_its_beginning():
    body = b"Quarterly numbers follow.\r\n" + b"0123456789 " * 2_000_000  # about 22 MB
    raw = mail("From: a@example.org\nSubject: big one", body)
    started = time.perf_counter()
    parsed = parse_message(raw[: parse.MAX_PARSE_BYTES], size=len(raw))  # what the IMAP fetch hands over
    assert parsed.truncated and parsed.size == len(raw)
    assert len(parsed.body) <= parse.MAX_BODY_CHARS
    text = describe(parsed, BERLIN)
    assert "A large message (21.0 MB); only its beginning was read" in text
    assert len(text) < 2500
    # given the whole thing anyway, it still reads only the beginning
    assert parse_message(raw).truncated
    print(f"22 MB message summarised in {time.perf_counter() - started:.2f}s")


@pytest.mark.parametrize(
    "header, reason",
    [
        ("List-Unsubscribe: <mailto:leave@news.example>", "it has a List-Unsubscribe header"),
        ("Precedence: bulk", "Precedence: bulk"),
        ("Auto-Submitted: auto-replied", "it was sent automatically"),
        ("X-Nothing: here", ""),
    ],
)
def test_bulk_mail_is_marked_by_header_rules(header, reason):
    raw = mail(f"From: news@example.org\nSubject: Weekly\n{header}")
    assert parse_message(raw).bulk == reason


def test_configured_senders_are_bulk():
    raw = mail("From: Deals <deals@shop.example>\nSubject: 50% off")
    assert parse_message(raw, bulk_senders=["@shop.example"]).bulk == "the sender matches the rule @shop.example"
    assert parse_message(raw, bulk_senders=["friend@shop.example"]).bulk == ""


def test_an_empty_message_is_refused_in_one_line():
    with pytest.raises(ParseError, match="empty"):
        parse_message(b"\r\n\r\n")


def test_quoted_history_is_left_out_of_the_buffer_text():
    raw = mail(
        "From: a@example.org\nSubject: Re: dinner",
        b"Friday works.\r\n\r\nOn Mon, 4 Jan 2027 at 10:00, You <you@example.org> wrote:\r\n> How about Friday?\r\n",
    )
    text = describe(parse_message(raw), BERLIN)
    assert text.endswith("Friday works.") and "How about" not in text


@pytest.mark.skipif(not FILES, reason=f"no email corpus at {CORPUS}/eml (set WILSON_CORPUS_DIR)")
def test_every_corpus_message_is_read_or_refused_in_one_line():
    started = time.perf_counter()
    kinds, refused, broken = Counter(), {}, {}
    for path in FILES:
        name = str(path.relative_to(CORPUS))
        try:
            parsed = parse_message(path.read_bytes())
        except ParseError as exc:
            assert "\n" not in str(exc) and len(str(exc)) < 300, name
            refused[name] = str(exc)
            continue
        except Exception as exc:  # anything but ParseError is a bug
            broken[name] = f"{type(exc).__name__}: {exc}"
            continue
        kinds[parsed.body_kind] += 1
        text = describe(parsed, BERLIN)
        assert text.startswith("Email from ") and len(text) < 4000, name
        assert len(parsed.body) <= parse.MAX_BODY_CHARS, name
    took = time.perf_counter() - started
    print(f"\n{len(FILES)} corpus mails: {dict(kinds)}, {len(refused)} refused, in {took:.2f}s")
    assert broken == {}
    assert len(FILES) >= 200 and sum(kinds.values()) + len(refused) == len(FILES)
    assert kinds["plain"] > 150 and kinds["html"] > 10  # the corpus' mix: mostly plain, some HTML-only


@pytest.mark.skipif(not FILES, reason=f"no email corpus at {CORPUS}/eml (set WILSON_CORPUS_DIR)")
def test_corpus_charsets_come_out_as_text():
    japanese = parse_message((CORPUS / "eml/mikel-mail/emails__multi_charset__japanese_shift_jis.eml").read_bytes())
    assert "あいうえお" in japanese.body
    korean = parse_message((CORPUS / "eml/mikel-mail/emails__multi_charset__ks_c_5601-1987.eml").read_bytes())
    assert "\ufffd" not in korean.body and korean.body.strip()
