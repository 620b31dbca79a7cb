"""“What did I miss?”, answered from the context's `missed` view (actors/cortex/missed.py): what Wilson told
the user since they last wrote, what it keeps for later, and how much came in. The offline rules answer with
it, and so does the cortex's router, which needs no model for the question asked alone."""

from __future__ import annotations

from datetime import datetime

from wilson.model.offline import dates
from wilson.model.offline.phrases import MISSED_RE, Chat, Reply, normal

CHANNEL_NAMES = {
    "email": ("mail", "mails"),
    "calendar": ("calendar change", "calendar changes"),
    "web": ("web page change", "web page changes"),
}


def look(chat: Chat, text: str) -> Reply | None:
    if not MISSED_RE.match(normal(text)) or not isinstance(chat.missed, dict):
        return None
    return Reply(answer(chat.missed, chat.now, chat.tz), [], "what the user missed")


def answer(view: dict, now: datetime, tz) -> str:
    """The view in words, its moments in `tz` (a time alone for today)."""
    at = _Moments(now, tz)
    since = at.moment(view.get("since"))
    told = [t for t in view.get("told") or [] if isinstance(t, dict)]
    later = [t for t in view.get("later") or [] if isinstance(t, dict)]
    came = {str(k): v for k, v in (view.get("came_in") or {}).items() if isinstance(v, int) and v > 0}
    if not (told or later or came):
        return f"Nothing new since {since}: I had nothing to tell you, and nothing came in."
    parts = []
    if told:
        lines = "\n".join(f"• {at.moment(t.get('at'))} {t.get('text')}" for t in told)
        more = "\n(and earlier ones)" if view.get("told_more") else ""
        parts.append(f"Since {since} I told you:\n{lines}{more}")
    else:
        parts.append(f"I had nothing to tell you since {since}.")
    if later:
        parts.append(
            "Kept for later:\n" + "\n".join(f"• {t.get('text')} (for {at.when(t.get('when'))})" for t in later)
        )
    if came:
        counted = [f"{n} {CHANNEL_NAMES.get(c, (c + ' item', c + ' items'))[n != 1]}" for c, n in sorted(came.items())]
        said = counted[0] if len(counted) == 1 else ", ".join(counted[:-1]) + " and " + counted[-1]
        to_sort = view.get("to_sort") if isinstance(view.get("to_sort"), int) else 0
        tail = f"; {to_sort} not sorted yet (the next look sorts them; /today looks now)" if to_sort else ""
        parts.append(f"New in: {said}{tail}.")
    return "\n\n".join(parts)


class _Moments:
    """Moments of the view in the user's words: "09:30" today, "Tue 5 Jan 19:00" on another day."""

    def __init__(self, now: datetime, tz):
        self.tz, self.today = tz, now.astimezone(tz).date()

    def when(self, value) -> str:
        moment = dates.parse_moment(value, self.tz) if isinstance(value, str) and value[:1].isdigit() else None
        return self.moment(value) if moment is not None else str(value or "later")

    def moment(self, value) -> str:
        moment = dates.parse_moment(value, self.tz) if isinstance(value, str) else None
        if not isinstance(moment, datetime):
            return "then"
        local = moment.astimezone(self.tz)
        return f"{local:%H:%M}" if local.date() == self.today else f"{dates.fmt_day(local.date())} {local:%H:%M}"
