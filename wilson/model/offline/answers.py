"""The user's answer to a pending proposal, read by rules: "yes", "no", "all but the X one",
"skip the X", "move the X one to …", "make it Sunday" (the one proposal waiting), "cancel the X reminder"
(one still proposed) become `decide` calls, and a change in words ("book flights by Feb 1", "skip the
insurance", "make it Sunday") becomes the proposal's items again.

Only words that answer a question count: "great" or "fine" said about something else must not
approve a plan, and the `decide` tool is offered only in a run the user started.

Size: one reading of an answer to a waiting proposal: each kind of answer is a short function, and they
share how a proposal's items are named.
"""

from __future__ import annotations

import re
from datetime import datetime

from wilson.model.offline import dates, holds
from wilson.model.offline.agreed import only_pleased, said_yes
from wilson.model.offline.phrases import Chat, Reply, normal
from wilson.model.offline.put_right import day_put_right
from wilson.model.offline.relative import moved, on_weekday, relative_change
from wilson.model.offline.short_answers import short_answer
from wilson.model.offline.words import covers, overlap, words
from wilson.kernel.lazy_regex import lazy_regex

# Answers to a pending proposal, in words (only offered the `decide` tool in a run the user started).
# Only words that answer a question: "great" or "fine" said about something else must not approve a plan.
_YES = (
    r"(?:yes|yep|yeah|yup|ok|okay|sure|approve|approved|go ahead|go for it|do it|please do|sounds good|let'?s do it|"
    # agreeing in other words: "sure thing", "of course", "that works", "fine by me", "ok go"
    r"sure thing|of course|absolutely|definitely|certainly|that works|works for me|works|fine by me|that'?s fine|"
    r"that'?s right|correct|exactly|go|proceed|confirm|confirmed|all good|yes please|"
    # the act said back ("yup, close it", "do that"), and in German ("super, mach das", "machen wir")
    r"close it|do that|set it up|add it|add them|add those|mach das|mach es|mach mal|machen wir|gerne|let'?s go|why not|"
    # "yeah go on", "ok mach", "alles klar, mach": go on, and the German "do" alone
    r"go on|mach|mach's|machs|mach so|so machen wir'?s|alles klar|ja|jo|jep|jap|jup|yo|jawohl|klar|"
    # "ja genau so", "ja gnau so" (typed in haste), "richtig so", "so machen wir das"
    r"(?:genau|gnau|genua|richtig)(?: so)?|so machen wir (?:das|es)|passt so|passt schon|geht klar)"
)
# pleased words before a yes: "sounds lovely, go ahead", "super, mach das", "great stuff, do it"
_PLEASED = (
    r"(?:sounds|looks|lovely|great|perfect|perfekt|super|cool|nice|brilliant|wonderful|awesome|excellent|fab|stuff|"
    r"good|gut|top|prima|klasse|toll|spitze|passt|klingt|hört sich gut an)"
)
_NO = (
    r"(?:no|nope|nah|reject|rejected|no thanks|don'?t|do not|not now|forget it|"
    # "nee lass mal", "lass gut sein", "brauch ich nicht"
    r"nee|nein|nö|lass mal|lass (?:es|das|gut sein)|brauch(?:e)? ich nicht|nicht nötig|"
    # and in the other languages people here write in: "nie, dzięki", "non merci"
    r"nie|non)"
)
_FILL = (
    # "yes all 3", "yep both of them": every item, counted
    r"(?:(?:to\s+)?all\s+(?:\d+|two|three|four|five|six|seven|eight|nine|ten)(?:\s+of\s+them)?|both(?:\s+of\s+them)?|"
    r"alle\s+(?:\d+|zwei|drei|vier|fünf|sechs)|alle|beide|"
    r"please|thanks|thank you|danke|merci|dzięki|dziękuję|grazie|bedankt|gracias|obrigad[oa]|"
    r"all of it|all of them|to all|all|everything|it|them|that|this|proposal|the plan|wilson|"
    r"to me|for me|by me)"  # "sounds good to me"
)
# German pleased words after the yes too: "ja klingt gut, mach mal" (an English "ok cool" said later is no yes)
YES_RE = lazy_regex(rf"^(?:(?:{_FILL}|{_PLEASED})\s+)*{_YES}(?:\s+(?:{_YES}|{_FILL}|klingt|gut|hört sich gut an))*$")
NO_RE = lazy_regex(
    rf"^(?:(?:actually|hmm+|well|ok|okay|on second thought)\s+)*(?:{_FILL}\s+)*{_NO}(?:\s+(?:{_NO}|{_FILL}))*$"
    # "cancel that", "never mind": whole, so that "don't cancel it" is never a no
    r"|^(?:please\s+)?(?:cancel|scrap|drop|skip)(?:\s+(?:it|that|this))?(?:\s+please)?$|^never\s?mind$"
    r"|^(?:no need|not needed|no thanks i'?m good|don'?t bother|leave it|i don'?t need (?:it|that|this))$"
    # "not that one", "no, the other one": the wrong thing was picked (the user then names the right one)
    r"|^(?:no\s+)?(?:not (?:that|this|the) one|wrong one|the other one)(?:\s+please)?$"
)
# what says a yes again after it ("ja, gerne", "sí, porfa", "ja, mach ne Aufgabe draus", "yes please, go ahead"): read
# by the yes said on (below) and the yes with a change (follow_ups.py)
YES_AGAIN = (
    r"(?:gerne?|please|pls|bitte|danke|thanks|thank you|sure|klar|go ahead|los|porfa|por favor|gracias|obrigad[oa]|"
    r"do it|go for it|add it|passt|(?:klingt\s+)?gut|mach(?:\s+(?:ne|eine|das|es|mal|bitte|draus|daraus|aufgabe|termin))*"
    r"(?:\s+für\s+(?:den|die|das)\s+[\w-]+)?|"  # "mach bitte ne Aufgabe draus für den Wartungsvertrag"
    # "sí, hazme una tarea para la GEMA – pero …": the yes said again in Spanish, with what it is for
    r"hazme\s+una\s+tarea(?:\s+para\s+(?:la\s+|el\s+)?[\w-]+)?|perfecto|vale|dale|claro|"
    # and in French, Polish and Dutch: "oui, fais-en une tâche stp – mais …", "tak, zrób z tego zadanie, ale …"
    r"fais(?:-en|\s+en)?\s+une\s+t[âa]che|stp|svp|s'il\s+te\s+pla[iî]t|merci|zrób\s+z\s+tego\s+zadanie|proszę|"
    r"dzięki|graag|dank\s+je)"
)
# a yes, then more said in the same breath ("ja, gerne! ferry + kids stuff, you know the drill"): intents.py reads the
# rest on its own
YES_THEN_SAID_RE = lazy_regex(
    rf"^\s*(?P<yes>[^\W\d_]+)(?:[\s,]+{YES_AGAIN})*\s*[!.,]+\s*(?P<rest>\S.*)$",
    re.I | re.S,
)
# what would make the words after a yes a change, a condition or a no (those are read by the rules below)
CHANGES_AFTER_YES_RE = lazy_regex(
    r"\?|\b(?:but|aber|except|außer|ausser|not|nicht|no|nein|chang\w*|ändern?|instead|stattdessen|mov\w*|"
    r"verschieb\w*|only|nur|without|ohne|add|also|auch|drop|remove|lösch\w*|streich\w*|rather|lieber|later|später|"
    r"wait|warte|if|wenn|"
    r"make|mach|cancel|skip|don'?t|isn'?t|won'?t|can'?t|wrong|falsch|\d)\b",
    re.I,
)
EXCEPT_RE = lazy_regex(
    rf"^(?:{_YES}\s+)*(?:(?:approve|do|accept|yes to)\s+)?(?:all|everything|the rest)\s+"
    r"(?:but|except|apart from|other than|save)\s+(?P<what>.+)$"
)
SKIP_RE = lazy_regex(
    rf"^(?:(?:{_YES}|{_PLEASED}|fine|alright)\s+)*(?:but\s+)?(?:skip|drop|leave out|take out|without)\s+(?P<what>.+?)"
    r"(?:\s+(?:and\s+)?(?:approve|do|go ahead with|keep)?\s*"
    r"(?:the rest|everything else|the others))?$"
)
REJECT_ITEMS_RE = lazy_regex(r"^(?:reject|decline|no to)\s+(?P<what>.+)$")
CHANGE_RE = lazy_regex(r"^(?:move|change|make|push|shift|put)\s+(?P<what>.+)$")
PROPOSAL_REF_RE = lazy_regex(r"(?:\bproposal\s*#?|#)(\d+)\b|^(?:approve|reject|yes to|no to)\s+(\d+)$")
REMOVE_RE = lazy_regex(
    r"\b(skip|drop|remove|without|delete|cancel|don'?t need|not needed|leave out|take out)\b|"
    r"\bno\s+(?=[a-z])(?!(?:make|change|move|set|put|push|actually|wait|sorry|rather|better|at|on|in|the)\b)",
    re.I,
)


_PLEASED_ONLY_RE = lazy_regex(rf"^(?:{_YES}\s+)?{_PLEASED}(?:\s+{_PLEASED})*$")


def only_agreeing(said: str) -> bool:
    """Whether words (normal()ised) only agree or are pleased ("yes", "yse", "sounds good", "ja passt", "super"),
    naming nothing to do: said before "add it", they are a yes to the proposal waiting, not a task's title."""
    return bool(YES_RE.match(said) or short_answer(said) or only_pleased(said) or _PLEASED_ONLY_RE.match(said))


def spoken_decision(chat: Chat, text: str) -> Reply | None:
    """ "yes", "skip the X one", "all but X", "move the X one to …" on a pending proposal → decide calls;
    None when the words are not an answer to one."""
    proposals = [p for p in chat.pending if isinstance(p, dict) and p.get("items")]
    if "decide" not in chat.offered or not proposals:
        return None
    said = normal(text)
    ref = PROPOSAL_REF_RE.search(said)
    if ref:
        wanted = int(ref.group(1) or ref.group(2))
        proposals = [p for p in proposals if p.get("id") == wanted]
        if not proposals:
            return Reply(f"I don't see an open proposal {wanted} of yours.", [], "answer to an unknown proposal")
        said = " ".join(PROPOSAL_REF_RE.sub(" ", said).split()) or "yes"
        said = {"approve": "yes", "reject": "no", "yes to": "yes", "no to": "no"}.get(said, said)
    newest = proposals[0]
    short = short_answer(said) or ("yes" if said_yes(said) else None)  # "yse", "noo", "Yes, thank you very much."
    if short == "yes" and not newest.get("just_asked") and only_pleased(said) and not YES_RE.match(said):
        short = None  # "cheers, that's great" three messages on: about what was said since, no answer
    if not ref and newest.get("not_the_last_asked") and (YES_RE.match(said) or short == "yes"):
        # the last proposal the user saw was answered already: this "yes" may be about anything said since,
        # and would change their world (a bare "no" changes nothing, and still declines the newest waiting)
        return Reply(_which_proposal(newest), [], "a bare answer, and the proposal waiting is not the last one")
    if YES_RE.match(said) or short == "yes":
        return Reply("", [("decide", {"proposal": newest["id"], "action": "approve"})], "yes to a proposal")
    if NO_RE.match(said) or short == "no":
        return Reply("", [("decide", {"proposal": newest["id"], "action": "reject"})], "no to a proposal")
    for pattern, keep_rest in ((EXCEPT_RE, True), (SKIP_RE, True), (REJECT_ITEMS_RE, False)):
        found = pattern.match(said)
        if not found:
            continue
        picked = _items_named(proposals, found.group("what"))
        if picked is None:
            if pattern is SKIP_RE:
                return None
            return Reply(_which(newest), [], "answer naming no item")
        proposal, positions = picked
        if pattern is SKIP_RE and all(
            _DROPPING.match(str(i.get("description") or ""))
            for i in proposal["items"]
            if i.get("position") in positions
        ):
            return None  # "drop the frieda one" of a proposed drop: one more thing to drop, not a no to it
        positions = with_its_tasks(proposal, positions)
        calls = [("decide", {"proposal": proposal["id"], "action": "reject", "items": positions})]
        rest = [i["position"] for i in proposal["items"] if i.get("position") not in positions]
        if keep_rest and rest:
            calls.append(("decide", {"proposal": proposal["id"], "action": "approve", "items": rest}))
        return Reply("", calls, "part of a proposal")
    found = CHANGE_RE.match(said)
    if found:
        picked = _items_named(proposals, found.group("what"))
        if picked is not None and not _names_a_task_better(chat, picked, found.group("what")):
            return Reply(
                "",
                [("decide", {"proposal": picked[0]["id"], "action": "modify", "changes": text.strip()})],
                "change to a proposal",
            )
    return change_to_it(proposals, said, text)


# "actually make it Sunday", "make it Sunday instead", "change it to 9am": a change to the proposal just made,
# which names no item because "it" is the whole of what waits ("make it happen", "set it up" say yes, not this)
CHANGE_IT_RE = lazy_regex(
    r"^(?:(?:actually|oh|wait|sorry|hmm|no|ok|okay|please|then|can you|could you)\s+)*"
    r"(?:make|change|move|set|switch|shift|push)\s+(?:it|that|this)\b"
    r"(?!\s+(?:up|happen|so|work|official|go)\b)(?P<what>.*?)(?:\s+(?:instead|then|please))*$"
)


def change_to_it(proposals: list[dict], said: str, text: str) -> Reply | None:
    """A change said of "it" while one proposal waits → modify it, in the user's words; with several waiting,
    which one "it" is is asked, not guessed (a task and a reminder proposed in a row both have a time)."""
    found = CHANGE_IT_RE.match(said)
    if not found or not found.group("what").strip():
        return None
    if len(proposals) > 1 and not proposals[0].get("just_asked"):  # said right after one: that one
        firsts = [(p["id"], next((i for i in p["items"] if isinstance(i, dict)), {})) for p in proposals[:3]]
        shown = " or ".join(f"{number} ({_headline(item)})" for number, item in firsts)
        # words that work in any chat, offline too ("modify N …" is a terminal command)
        return Reply(
            f"Which proposal should change: {shown}? Say e.g. “proposal {proposals[0]['id']}: "
            f"{text.strip()}”. Nothing was changed.",
            [],
            "a change to which proposal?",
        )
    # "proposal 4: make it Sunday" names the proposal already; the change is what is left
    changes = re.sub(r"(?:\bproposal\s*#?|#)\d+\b[\s:,.-]*", " ", text, flags=re.I).strip() or text.strip()
    return Reply(
        "",
        [("decide", {"proposal": proposals[0]["id"], "action": "modify", "changes": changes})],
        "a change to the one proposal waiting",
    )


def _names_a_task_better(chat: Chat, picked: tuple[dict, list[int]], what: str) -> bool:
    """ "move the passport one to April 1" while a plan with "Check passport validity" waits and "Renew passport"
    is an open task: the words name the task as well as the item, and a task the user has is what they move."""
    wanted = words(re.split(r"\s+(?:to|until|till|for|by|on)\s+", what, maxsplit=1)[0])
    proposal, positions = picked
    items = [i for i in proposal["items"] if i.get("position") in positions]
    item_score = max((len(wanted & _item_words(i)) for i in items), default=0)
    task_score = max(
        (len(wanted & words(str(t.get("title") or ""))) for t in chat.tasks if t.get("status", "open") == "open"),
        default=0,
    )
    return task_score >= item_score > 0 or (task_score > 0 and item_score == 0)


# a proposed drop, as its item reads (actors/tools/tasks.py describe): no plan to say no to by "drop …"
_DROPPING = lazy_regex(r"^(?:Drop task|Close topic):")


def drop_pending(chat: Chat, what: str, beat: int = 0) -> Reply | None:
    """ "cancel the driving test" while the driving test is still a proposal: no to the items it names (and to
    the tasks of a topic it names); nothing else is approved. None when it names none, or names none by more
    words than `beat` (how well an open task or topic matched the same words)."""
    proposals = [p for p in chat.pending if isinstance(p, dict) and p.get("items")]
    picked = _items_named(proposals, what) if "decide" in chat.offered else None
    if picked is None:
        return None
    proposal, positions = picked
    wanted = words(what)  # none when it names items by number ("cancel item 2")
    named = [i for i in proposal["items"] if i.get("position") in positions]
    if wanted and max(len(wanted & _item_words(i)) for i in named) <= beat:
        return None
    if all(_DROPPING.match(str(i.get("description") or "")) for i in named):
        return None  # "drop the frieda one" while dropping a Frieda task is proposed: the user wants one dropped

    return Reply(
        "",
        [("decide", {"proposal": proposal["id"], "action": "reject", "items": with_its_tasks(proposal, positions)})],
        "no to items of a proposal",
    )


def done_pending(chat: Chat, what: str) -> Reply | None:
    """ "done with the dentist" while "Book dentist appointment" is still a proposal: there is no task to mark
    done yet; which proposal holds it is said, and that it can be rejected if the thing is done. None when the
    words name no item waiting."""
    proposals = [p for p in chat.pending if isinstance(p, dict) and p.get("items")]
    picked = _items_named(proposals, what)
    if picked is None or not words(what):
        return None
    proposal, positions = picked
    item = next(i for i in proposal["items"] if i.get("position") == positions[0])
    task = ACTION.sub("", _headline(item)).split(" — ")[0]
    return Reply(
        f"“{task}” isn't on your list yet: proposal {proposal['id']} still waits for your answer. If it's "
        "done already, reject it there. Nothing was changed.",
        [],
        "done with a task still proposed",
    )


# A reminder still proposed, as its item reads (actors/tools/reminders.py describe): a repeating one, or a one-off
REMINDER_ITEM = lazy_regex(r"^(?:New reminder:|Remind you once\b)")


def reminders_proposed(chat: Chat) -> list[tuple[dict, dict]]:
    """(proposal, item) for each reminder a proposal waiting for the user's answer would set."""
    return [
        (p, i)
        for p in chat.pending
        if isinstance(p, dict)
        for i in p.get("items") or []
        if isinstance(i, dict) and REMINDER_ITEM.match(_headline(i))
    ]


def proposed_reminder(chat: Chat, what: str) -> Reply | None:
    """ "cancel the pills reminder" when no reminder that is set is the pills one, but a proposal waiting for
    an answer would set it: no to that item, the rest of its proposal left waiting. The words name it as they
    name a reminder that is set (every word, one aside in a longer phrase; "the reminder" names the only one
    proposed), and several named are asked about; None when they name none, or the user cannot decide here."""
    if "decide" not in chat.offered:
        return None
    wanted = words(what)
    named = [(p, i) for p, i in reminders_proposed(chat) if not wanted or covers(wanted, _item_words(i))]
    if len(named) > 1:
        lines = "\n".join(
            f"• Proposal {p.get('id')}, item {i.get('position')}: {i.get('description')}" for p, i in named
        )
        return Reply(
            f"Which one? Nothing was changed. Still waiting for your answer:\n{lines}",
            [],
            "no to which reminder still proposed?",
        )
    if not named:
        return None
    proposal, item = named[0]
    return Reply(
        "",
        [("decide", {"proposal": proposal.get("id"), "action": "reject", "items": [item.get("position")]})],
        "no to a reminder still proposed",
    )


# How items read (actors/tools/tasks.py describe): "New topic: TITLE (SPAN)", a task "… (in TITLE)", and what
# the proposal adds ("— you already have …")
TOPIC_ITEM = lazy_regex(r"^New topic: (?P<title>.+)$")
ACTION = lazy_regex(r"^(?:New|Change|Drop|Mark|Close|Rename|Snooze|Stop)\b[^:]{0,20}:\s*")
ADDED = lazy_regex(r" — you already have.*$")
SPAN = lazy_regex(r" \([^()]*\d[^()]*\)$")  # "(Wed 20 Jan 2027)", "(Sat 1 May – Sun 2 May)"


def _headline(item: dict) -> str:
    return ADDED.sub("", str(item.get("description") or "").split("\n", 1)[0].strip())


def planned_topic(item: dict) -> str | None:
    """The title of the topic a proposal's item would make ("New topic: Trip to Porto (SPAN)"), or None."""
    found = TOPIC_ITEM.match(_headline(item))
    return SPAN.sub("", found.group("title")) if found else None


def _item_words(item: dict) -> set[str]:
    """An item's own words: not what it does ("New task:"), nor its topic's name that every task of a plan
    carries ("(in Dentist appointment)")."""
    line = ACTION.sub("", _headline(item))
    return words(line[: line.rfind(" (in ")] if line.endswith(")") and " (in " in line else line)


def with_its_tasks(proposal: dict, positions: list[int]) -> list[int]:
    """The items named, and the tasks of a topic named among them: leaving out the plan's topic leaves out
    what would belong to it, never a task made without its topic; the proposal's other items stay."""
    items = [i for i in proposal["items"] if isinstance(i, dict)]
    topics = {title for i in items if i.get("position") in positions and (title := planned_topic(i))}
    members = [i.get("position") for i in items if any(_headline(i).endswith(f"(in {t})") for t in topics)]
    return sorted(set(positions) | set(members))


def _items_named(proposals: list[dict], what: str) -> tuple[dict, list[int]] | None:
    parts = [p.strip() for p in re.split(r",|\band\b|\bor\b", what) if p.strip()]
    for proposal in proposals:
        items = [i for i in proposal["items"] if isinstance(i, dict)]
        positions = []
        for part in parts:
            part = re.sub(r"\b(?:the|ones?|items?|number|no\.?)\b", " ", part).strip()
            if part.isdigit() and any(i.get("position") == int(part) for i in items):
                positions.append(int(part))
                continue
            item = best_item(items, words(part), set())
            if item is None:
                positions = []
                break
            positions.append(item["position"])
        if positions:
            return proposal, sorted(set(positions))
    return None


def _which_proposal(proposal: dict) -> str:
    """Asked back for a bare "yes" that may not be about the proposal waiting."""
    first = _headline(proposal["items"][0]) if proposal.get("items") else ""
    more = f" (and {len(proposal['items']) - 1} more)" if len(proposal.get("items") or ()) > 1 else ""
    return (
        f"Which proposal do you mean? The one still waiting is proposal {proposal['id']}: {first}{more}. "
        f"Say “approve {proposal['id']}” or “reject {proposal['id']}”. Nothing was changed."
    )


def _which(proposal: dict) -> str:
    lines = "\n".join(f"{i.get('position')}. {i.get('description')}" for i in proposal["items"])
    return f"I couldn't tell which item you mean in proposal {proposal['id']}:\n{lines}"


def best_item(items: list[dict], clause_words: set[str], excluded: set[int]) -> dict | None:
    """The item the words name best (its topic's name left out of a task's words); on a tie a task rather than
    the plan's topic: "the appointment one" is not the whole dentist plan."""
    found, score = None, 0.0
    for item in items:
        if id(item) in excluded:
            continue
        args = item.get("args") or {}
        shared = 2 * overlap(clause_words, words(str(args.get("title") or ""))) + len(clause_words & _item_words(item))
        if shared > score or (
            shared and shared == score and planned_topic(found) is not None and planned_topic(item) is None
        ):
            found, score = item, shared
    return found


def modify(proposal: dict | None, request: str, now: datetime, tz) -> Reply:
    """The user's change to a proposal ("book flights by Feb 1", "skip the insurance", "make it Sunday") → its
    items again; a day set with "nerv mich vorher nicht damit" is also the first the task is followed up on
    (wilson/model/offline/holds.py)."""
    reply = _modified(proposal, request, now, tz)
    if holds.only_the_day_before(request):
        items = [i for i in (proposal or {}).get("items") or [] if isinstance(i, dict)]
        calls = reply.calls or [(i.get("tool"), dict(i.get("args") or {})) for i in items]
        if any(name == "create_task" and args.get("due") for name, args in calls):
            return Reply(reply.text, holds.day_before_only(calls), "followed up only the day before its day")
    if reply.calls and holds.before_then(request):
        items = [i for i in (proposal or {}).get("items") or [] if isinstance(i, dict)]
        before = {str((i.get("args") or {}).get("title")): (i.get("args") or {}).get("due") for i in items}
        reply = Reply(reply.text, holds.held(reply.calls, before), reply.rule + ", not followed up before its day")
    return reply


def _modified(proposal: dict | None, request: str, now: datetime, tz) -> Reply:
    items = sorted(
        (i for i in (proposal or {}).get("items") or [] if isinstance(i, dict)), key=lambda i: i.get("position", 0)
    )
    if not items:
        return Reply("I don't see a proposal to change.", [], "modify without a proposal")
    args = {id(item): dict(item.get("args") or {}) for item in items}
    if day_put_right(items, args, request, tz, _time_key):
        return Reply("", [(i.get("tool"), args[id(i)]) for i in items], "a day put right in a proposal")
    if _relatively(items, args, request, tz):
        return Reply("", [(i.get("tool"), args[id(i)]) for i in items], "a time moved relative to the proposed one")
    removed, changed = set(), False
    for clause in re.split(r"[;,\n]|\bbut\b|\band\b|\balso\b", request, flags=re.I):
        if not dates.search(clause, now, tz):
            clause = re.sub(
                r"\b(?:it|to|at)\s+(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\b",
                lambda m: m.group(0).split()[0] + " " + str(HOUR_NUMBERS[m.group(1).lower()]),
                clause,
                flags=re.I,
            )  # "make it seven"
            clause = HOUR_SAID_RE.sub(r"\g<lead>at \g<hour>", clause)  # "make it 9 instead": at 9
            clause = re.sub(r"^(\W*)(?:noon|midday)\b", r"\1at 12:00", clause.strip(), flags=re.I)  # "noon": at 12
        clause_words = words(clause)
        if not clause_words and not dates.search(clause, now, tz):
            continue
        if REMOVE_RE.search(clause):
            item = best_item(items, clause_words, removed)
            if item is not None:
                removed.add(id(item))
                changed = True
            continue
        found = dates.search(clause, now, tz)
        if found:
            dated = [
                i for i in items if i.get("tool") in ("create_task", "update_task") or "due" in (i.get("args") or {})
            ]
            item = best_item(dated, clause_words, removed)
            if item is not None:
                old_due = dates.parse_moment(args[id(item)].get("due"), tz)
                args[id(item)]["due"] = dates.iso(day_near(found[0], old_due, now, tz))
                changed = True
            elif not words(clause.replace(found[0].phrase, " ")) - FILLER:  # "make that the end of the month"
                changed = _retimed(items, removed, args, found[0], tz) or changed
            elif (added := _step_added(items, clause.replace(found[0].phrase, " "), found[0])) is not None:
                items.append(added)  # "yes but the invitations need to be out by June 1st": a step of the plan
                args[id(added)] = added["args"]
                changed = True
    if not changed:
        return Reply(
            "I couldn't tell what to change, so the proposal stands. Offline I understand changes like "
            "“book flights by Feb 1” or “skip the insurance”.",
            [],
            "modify not understood",
        )
    return Reply("", [(i.get("tool"), args[id(i)]) for i in items if id(i) not in removed], "modify a proposal")


# an hour's number by its word, "seven" → 7 (follow_ups.py reads hours said in words with it too)
HOUR_NUMBERS = {
    w: n for n, w in enumerate("one two three four five six seven eight nine ten eleven twelve".split(), start=1)
}
# an hour said as a number after "it", "to" or "for" ("make it 9", "change it to 10:30"), which the date reader
# would not take for an hour without its "at"
HOUR_SAID_RE = lazy_regex(
    r"(?P<lead>(?:^|\b(?:it|to|for)\s+)(?:(?:actually|then|ok|okay|no|hmm|maybe|rather|or|and)"
    r"\s+)*)(?P<hour>\d{1,2}(?:[:.][0-5]\d)?(?:\s*(?:am|pm))?)(?=\s|$|[.!?])",
    re.I,
)
# Words around a change that name no item: "actually make it Sunday", "then 9am please"
FILLER = {"actually", "oh", "wait", "sorry", "hmm", "okay", "ok", "then", "no", "yes", "make", "change", "set", "und"}
FILLER |= {"hmmm", "maybe", "rather", "instead", "better", "please", "lieber", "doch", "how", "about", "what"}
FILLER |= {"same", "time"}  # "actually the 13th, same time": the hour kept
# "aber für Freitag den 5.": "für erst bis zum den auf besser mach machs draus daraus" as words() stems them (written
# out: reading them at import would build words()' pattern before any message needs it)
FILLER |= {"auf", "besser", "bis", "darau", "den", "drau", "erst", "für", "mach", "zum"}
# a time of day said alone ("9am", "at 9:30", "noon"): the item keeps its day
TIME_ONLY = lazy_regex(
    r"^(?:at\s+)?(?:(?:(?:half|quarter)\s+(?:past|to)\s+|half\s+)?\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.|h|uhr|"
    r"o'?clock)?|noon|midday|midnight)$",
    re.I,
)
SIMPLE_CRON = lazy_regex(r"^\d{1,2} \d{1,2} (?P<days>\S+ \S+ \S+)$")


# a step the plan should hold, said with its day: "the invitations need to be out by …", "I have to book the bus by …"
_STEP_NEEDED_RE = lazy_regex(
    # "the hygiene training for my two new helpers has to be done": whom it is for is part of the thing
    r"^\W*(?:(?P<thing>(?:the|my|our|her|his|their)\s+[^\W\d_]+(?:\s+[^\W\d_]+)?"
    r"(?:\s+(?:for|of)\s+(?:[^\W_]+\s+){0,4}?[^\W\d_]+)?)\s+(?:needs?|has|have|must|should)"
    r"\s+(?:to\s+)?be\s+(?P<state>out|sent|sent out|done|ready|booked|ordered|paid|signed|in)"
    r"|(?:i|we)\s+(?:still\s+)?(?:need|have|must)\s+(?:to\s+)?(?P<act>[^\W\d_]+\s+(?:the|my|our|a|an)\s+[^\W\d_]+))"
    r"\b[\s,.!]*(?:by|before|until)?[\s,.!]*(?:at the )?(?:latest)?[\s,.!]*$",
    re.I,
)


# a day of the month said alone: "the 23rd", "by the 12th", "am 5."
_DAY_ALONE_RE = lazy_regex(r"^(?:(?:by|on|for|until|till|bis|am|zum|the|den|dem)\s+)*\d{1,2}(?:st|nd|rd|th|\.)?$", re.I)


def day_near(found: dates.Found, old, now: datetime, tz):
    """A change's day for an item that had one: a day of the month said alone ("make the tiles the 12th") is
    that day in the month nearest the item's old day that is still ahead (a deadline of 30 April pulled to "the
    23rd" said in March is 23 April, not 23 March); any other phrase is what it says."""
    value = found.value
    if old is None or not _DAY_ALONE_RE.match(found.phrase.strip()):
        return value
    old_day = old.astimezone(tz).date() if isinstance(old, datetime) else old
    today = now.astimezone(tz).date()
    picked, gap = value, None
    for shift in (-1, 0, 1):
        month = old_day.month + shift
        year = old_day.year + (month - 1) // 12
        month = (month - 1) % 12 + 1
        try:
            day = (value.date() if isinstance(value, datetime) else value).replace(year=year, month=month)
        except ValueError:  # the 31st of a shorter month
            continue
        if day < today:
            continue
        if gap is None or abs((day - old_day).days) < gap:
            picked = value.replace(year=year, month=month) if isinstance(value, datetime) else day
            gap = abs((day - old_day).days)
    return picked


def _step_added(items: list[dict], said: str, found: dates.Found) -> dict | None:
    """A new task for the plan the proposal makes, when the change names a step none of its items is, with its day;
    None when the proposal makes no plan or the words are no such step."""
    topic = next((title for item in items if (title := planned_topic(item)) is not None), None)
    step = _STEP_NEEDED_RE.match(said)
    if topic is None or step is None:
        return None
    if step.group("act"):
        title = step.group("act")
    else:
        state = step.group("state").lower()
        verb = {"out": "Send", "sent": "Send", "sent out": "Send", "in": "Hand in"}.get(state, "Get")
        title = f"{verb} {step.group('thing')}" + ("" if verb != "Get" else f" {state}")
    title = title[:1].upper() + title[1:]
    args = {"title": title, "due": dates.iso(found.value), "topic": topic}
    return {"tool": "create_task", "args": args, "position": len(items) + 1, "description": f"New task: {title}"}


def _retimed(items: list[dict], removed: set[int], args: dict, found: dates.Found, tz) -> bool:
    """ "Make it Sunday" or "change it to 9am", naming no item: the new day or hour goes to the one item that
    has a time (a task's due, a reminder's moment or its daily hour); with several, which one is not guessed."""
    time_only = bool(TIME_ONLY.match(found.phrase.strip()))
    timed = [(i, key) for i in items if id(i) not in removed and (key := _time_key(i, time_only))]
    if len(timed) != 1:
        return False
    item, key = timed[0]
    old = args[id(item)].get(key)
    if key == "cron":
        hour = found.value.astimezone(tz) if isinstance(found.value, datetime) else None
        if hour is None:
            return False
        args[id(item)]["cron"] = f"{hour.minute} {hour.hour} {SIMPLE_CRON.match(old).group('days')}"
        return True
    args[id(item)][key] = dates.iso(_moved(dates.parse_moment(old, tz), found, time_only, tz))
    return True


def _relatively(items: list[dict], args: dict, request: str, tz) -> bool:
    """ "An hour earlier", "the day after", "same time next week", "make it the morning": the one timed item's time
    moved from where it was (wilson/model/offline/relative.py); False when the words say no such change, or no one
    item has a time it applies to."""
    change = relative_change(request)
    weekly = [i for i in items if change is not None and on_weekday(str((i.get("args") or {}).get("cron")), change)]
    if len(weekly) == 1 and len(items) == 1:  # "same time but tuesdays" of "every Monday at 7"
        args[id(weekly[0])]["cron"] = on_weekday(str(args[id(weekly[0])].get("cron")), change)
        return True
    timed = [(i, key) for i in items if (key := _time_key(i, False))] if change is not None else []
    if change is None or len(timed) != 1:
        return False
    item, key = timed[0]
    old = dates.parse_moment(args[id(item)].get(key), tz)
    new = moved(change, old, tz) if old is not None else None
    if new is None:
        return False
    args[id(item)][key] = dates.iso(new)
    return True


def _time_key(item: dict, time_only: bool) -> str | None:
    """Where an item keeps its time: a task's due, a one-off reminder's at, a repeating one's cron (whose hour
    alone can change: a day said would make it another schedule)."""
    args = item.get("args") or {}
    if item.get("tool") in ("create_task", "update_task") or "due" in args:
        return "due"
    if "at" in args:
        return "at"
    if time_only and SIMPLE_CRON.match(str(args.get("cron") or "")):
        return "cron"
    return None


_HALF_SAID = lazy_regex(r"am\b|a\.m\.|morning|\d{1,2}:\d\d|\bh\b|uhr", re.I)  # the morning said, or a 24-hour clock


_DAY_OF_MONTH_RE = lazy_regex(
    r"^(?:(?:on\s+)?the\s+(?P<day>\d{1,2})(?:st|nd|rd|th)|(?:den|am|zum)\s+(?P<tag>\d{1,2})\.?)$", re.I
)  # "make it the 5th", "mach den 17. draus"


def _moved(old, found: dates.Found, time_only: bool, tz):
    """The new moment: an hour said alone keeps the old day, a day said alone keeps the old hour, and a day of the
    month alone ("make it the 5th" of a task due 10 March) is in the old day's month."""
    new = found.value
    day = _DAY_OF_MONTH_RE.match(found.phrase.strip())
    if day and old is not None and not isinstance(new, datetime):
        was = dates.local_date(old, tz)
        try:
            same_month = was.replace(day=int(day.group("day") or day.group("tag")))
        except ValueError:
            same_month = None
        new = same_month if same_month is not None and same_month >= new else new
    if time_only and isinstance(new, datetime) and old is not None:
        hour = new.astimezone(tz).time()
        was = old.astimezone(tz) if isinstance(old, datetime) else None
        if was is not None and was.hour >= 12 and hour.hour < 12 and not _HALF_SAID.search(found.phrase):
            hour = hour.replace(hour=hour.hour + 12)  # 18:00, "make it 7 instead": 19:00, not the morning
        return datetime.combine(dates.local_date(old, tz), hour, tzinfo=tz)
    if not isinstance(new, datetime) and isinstance(old, datetime):
        return datetime.combine(new, old.astimezone(tz).time(), tzinfo=tz)
    return new
