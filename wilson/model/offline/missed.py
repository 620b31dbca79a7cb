"""“What did I miss?”, answered offline from the context's `missed` view (actors/cortex/missed.py): what
Wilson told the user since they last wrote, what it keeps for later, and how much came in."""

from __future__ import annotations

from datetime import datetime

from wilson.model.offline import dates
from wilson.model.offline.phrases import MISSED_RE, Chat, Reply, normal

CHANNEL_NAMES = {"email": ("mail", "mails"), "calendar": ("calendar change", "calendar changes"),
                 "web": ("web page change", "web page changes")}


def look(chat: Chat, text: str) -> Reply | None:
    if not MISSED_RE.match(normal(text)) or not isinstance(chat.missed, dict):
        return None
    return Reply(answer(chat, chat.missed), [], "what the user missed")


def answer(chat: Chat, view: dict) -> str:
    since = _moment(chat, view.get("since"))
    told = [t for t in view.get("told") or [] if isinstance(t, dict)]
    later = [t for t in view.get("later") or [] if isinstance(t, dict)]
    came = {str(k): v for k, v in (view.get("came_in") or {}).items() if isinstance(v, int) and v > 0}
    if not (told or later or came):
        return f"Nothing new since {since}: I had nothing to tell you, and nothing came in."
    parts = []
    if told:
        lines = "\n".join(f"• {_moment(chat, t.get('at'))} {t.get('text')}" for t in told)
        more = "\n(and earlier ones)" if view.get("told_more") else ""
        parts.append(f"Since {since} I told you:\n{lines}{more}")
    else:
        parts.append(f"I had nothing to tell you since {since}.")
    if later:
        parts.append("Kept for later:\n" + "\n".join(f"• {t.get('text')} (for {_for(chat, t.get('when'))})"
                                                        for t in later))
    if came:
        counted = [f"{n} {CHANNEL_NAMES.get(c, (c + ' item', c + ' items'))[n != 1]}" for c, n in sorted(came.items())]
        said = counted[0] if len(counted) == 1 else ", ".join(counted[:-1]) + " and " + counted[-1]
        to_sort = view.get("to_sort") if isinstance(view.get("to_sort"), int) else 0
        tail = f"; {to_sort} not sorted yet (the next look sorts them; /today looks now)" if to_sort else ""
        parts.append(f"New in: {said}{tail}.")
    return "\n\n".join(parts)


def _for(chat: Chat, when) -> str:
    moment = dates.parse_moment(when, chat.tz) if isinstance(when, str) and when[:1].isdigit() else None
    return _moment(chat, when) if moment is not None else str(when or "later")


def _moment(chat: Chat, value) -> str:
    moment = dates.parse_moment(value, chat.tz) if isinstance(value, str) else None
    if not isinstance(moment, datetime):
        return "then"
    local = moment.astimezone(chat.tz)
    return f"{local:%H:%M}" if local.date() == chat.today else f"{dates.fmt_day(local.date())} {local:%H:%M}"
