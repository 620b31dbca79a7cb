"""Files a user hands over in Telegram, made in the test: a one-page PDF with real text in it (as an airline's
e-ticket has), a calendar invitation, and a stand-in voice note whose words the scripted speech model hears."""

from __future__ import annotations


def pdf_with_text(*lines: str) -> bytes:
    """A valid one-page PDF (Helvetica text objects, a cross-reference table) whose text is `lines`."""

    def escaped(text: str) -> str:
        return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")

    body = "BT /F1 12 Tf 72 720 Td 16 TL " + " ".join(f"({escaped(line)}) Tj T*" for line in lines) + " ET"
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> "
        "/Contents 5 0 R >>",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        f"<< /Length {len(body.encode('latin-1'))} >>\nstream\n{body}\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, content in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{content}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{offset:010d} 00000 n \n" for offset in offsets).encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def invitation(*events: str, method: str = "REQUEST") -> bytes:
    body = "".join(f"BEGIN:VEVENT\r\n{e.strip()}\r\nEND:VEVENT\r\n" for e in events)
    return (
        f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nMETHOD:{method}\r\n{body}END:VCALENDAR\r\n"
    ).encode()


def voice_note(words: str) -> bytes:
    """An OGG file's first bytes, then the words the scripted speech model hears (wilson/model/scripted.py)."""
    return b"OggS\x00\x02" + b"\x00" * 20 + b"SPEECH:" + words.encode()
