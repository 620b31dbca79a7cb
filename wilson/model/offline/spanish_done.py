"""A task done, said in Spanish as people here write it between their other languages: "listo, TestDaF inscrito ✔️",
"pagado el Semesterbeitrag, 338,42 raus 💸", "GEMA pagada ✅". The thing is named by a word of its task's title, or
the deed's verb names the one open task it finishes.

Pure: reads the message and the open tasks, writes nothing.
"""

from __future__ import annotations

import re

from wilson.kernel.lazy_regex import lazy_regex
from wilson.model.offline.phrases import Chat, Reply

# the Spanish participle → the verbs a task's title starts with for that deed
_DEEDS = {
    "pagad": ("pay",),
    "inscrit": ("register", "sign"),
    "registrad": ("register",),
    "enviad": ("send", "submit"),
    "mandad": ("send",),
    "entregad": ("submit", "hand", "return"),
    "reservad": ("book", "reserve"),
    "comprad": ("buy", "get"),
    "hech": (),
}
_PARTICIPLE = r"(?P<deed>pagad|inscrit|registrad|enviad|mandad|entregad|reservad|comprad|hech)[oa]s?"
_DONE_RE = lazy_regex(
    r"^\s*(?:(?:listo|lista|ya|hecho|por\s+fin)[\s,!:]+)*(?:"
    # "pagado el Semesterbeitrag, …", "inscrita en el curso"
    + _PARTICIPLE
    + r"\s+(?:el|la|los|las|en\s+el|en\s+la)?\s*(?P<what>[^,.!?]+?)"
    # "TestDaF inscrito", "GEMA pagada"
    r"|(?P<what2>[^,.!?\s][^,.!?]*?)\s+"
    + _PARTICIPLE.replace("deed", "deed2")
    # then a reason or a sign (a tick is read as "done" before this: "listo, TestDaF inscrito done")
    + r")\b(?![^?]*\?)(?:\s*[,.!–—-].*|\s+done\b.*|\s*[^\w\s?]*)$",
    re.I | re.S,
)


_NOT_YET_RE = lazy_regex(r"\b(?:no|nada|falta|faltan|todavía|aún|sin|nunca)\b", re.I)


def done(chat: Chat, text: str) -> Reply | None:
    """The one open task a Spanish note of a deed done finishes; None when it is no such note or names none."""
    found = _DONE_RE.match(text.strip())
    if found is None or _NOT_YET_RE.search(text):
        return None  # "TestDaF no inscrito", "nada reservado", "enviado a Maria, falta la factura"
    what = found.group("what") or found.group("what2") or ""
    deed = (found.group("deed") or found.group("deed2") or "").lower()
    open_tasks = [t for t in chat.tasks if t.get("status", "open") == "open"]
    said = {w.lower() for w in re.findall(r"[^\W_]{3,}", what)}
    named = [t for t in open_tasks if said & {w.lower() for w in re.findall(r"[^\W_]{3,}", str(t.get("title") or ""))}]
    if (
        len(named) != 1 and deed == "pagad"
    ):  # "pagada la multa": the one payment there is (another deed names its thing)
        verbs = _DEEDS.get(deed, ())
        named = [t for t in open_tasks if str(t.get("title") or "").split(" ", 1)[0].lower().rstrip(":") in verbs]
    if len(named) != 1:
        return None
    return Reply("", [("complete_task", {"task_id": named[0]["id"]})], "done with a task, in Spanish")
