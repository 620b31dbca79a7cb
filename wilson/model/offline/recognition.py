"""What an event or a message is about, by rules: the playbook's words, the place, the length.

An event is recognised as one of the playbook's life events when a trigger is in its title
(and no negative cue such as "review" or "report" says it is only about one), or as travel
when its place is abroad, or far from home for more than a day. Every answer names the
rule that fired, so the trace can say why.

Size: the playbook's loading, the title's words, the place and the length are one decision about one event (and a
routine meeting, or an event that may need a plan, is the same decision's other side); split, each part would need
the others' private patterns.
"""

from __future__ import annotations

import calendar
import functools
import re
import tomllib
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from wilson.model.offline import places
from wilson.model.offline.dates import as_datetime, parse_moment
from wilson.kernel.lazy_regex import lazy_regex

PLAYBOOK_PATH = Path(__file__).resolve().parent.parent / "playbook.toml"
SHORT_DAYS = 0.5  # a timed event shorter than this is an outing, unless its place is named on its own


@dataclass(frozen=True)
class PlaybookTask:
    title: str
    days_before: int
    notes: str = ""
    min_days: int = 0
    abroad: bool = False  # only for a trip abroad: left out when the place is in the home country


@dataclass(frozen=True)
class PlaybookEvent:
    name: str
    label: str
    title: str
    triggers: tuple[str, ...]
    tasks: tuple[PlaybookTask, ...]
    kind: str = ""
    shapes: tuple[str, ...] = ()  # regular expressions matched with their case: "KubeCon" is a conference
    compounds: tuple[str, ...] = ()  # the last part of a compound word: "Hautarzt", "Führerscheinprüfung"
    # words and shapes that say what an event is in a calendar title only, where a sentence would use them for
    # something else ("Dr. Weber", "Pay rent", "Move to Leipzig", "Emma's 5th"): asked when no trigger is there
    titles: tuple[str, ...] = ()
    title_shapes: tuple[str, ...] = ()

    def title_matches(self, text: str) -> list[re.Match]:
        found = [_trigger(word).search(text or "") for word in self.titles]
        found += [re.search(shape, text or "") for shape in self.title_shapes]
        return [match for match in found if match]

    def find(self, text: str) -> re.Match | None:
        best = None
        for match in self.matches(text):
            if best is None or match.start() < best.start():
                best = match
        return best

    def matches(self, text: str) -> list[re.Match]:
        """Where each trigger and each shape is first found in the text."""
        found = [_trigger(trigger).search(text or "") for trigger in self.triggers]
        found += [re.search(shape, text or "") for shape in self.shapes]
        found += [_compound(word).search(text or "") for word in self.compounds]
        return [match for match in found if match]


@functools.lru_cache(maxsize=4096)
def _trigger(words: str) -> re.Pattern:
    """A playbook trigger as a whole-word pattern (built once: every stimulus asks every trigger)."""
    return re.compile(rf"(?<![\w-]){re.escape(words)}(?![\w-])", re.I)


@functools.lru_cache(maxsize=1024)
def _compound(word: str) -> re.Pattern:
    """A compound's last part as a pattern for the whole compound word ("arzt": "Hautarzt", "Kfz-Steuer" for
    "steuer")."""
    return re.compile(rf"(?<![\w-])[\w-]*?{re.escape(word)}(?![\w-])", re.I)


def _any_of(words) -> re.Pattern | None:
    """One pattern that matches wherever one of `words` would as `_trigger(word)` (None for no words): at each
    place the alternation tries every word, so it finds a match exactly when one of them has one."""
    words = list(words)
    if not words:
        return None
    return re.compile(rf"(?<![\w-]){_one_of(words)}(?![\w-])", re.I)


def _one_of(words) -> str:
    """A pattern for exactly one of `words` (each a literal), its words sharing their beginnings: "appointment",
    "apartment" are "ap(?:pointment|artment)". The same words as a flat alternation, which is what these patterns
    only ask (whether one of them is there, never which), but the regex engine tries a flat one word by word at
    each place, some 300 trigger words: one search cost more than a plain message's whole life-event rule, a long
    mail's up to ten times more. Each word's end may be followed by a longer word's rest (an optional group), and
    backtracking tries every path, so a word is found wherever the flat alternation would find one."""
    tree: dict = {}
    for word in words:
        node = tree
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}  # a word ends here

    def source(node: dict) -> str:
        rests = [re.escape(char) + source(child) for char, child in node.items() if char]
        if not rests:
            return ""
        if "" in node:
            return f"(?:{'|'.join(rests)})?"
        return rests[0] if len(rests) == 1 else f"(?:{'|'.join(rests)})"

    return source(tree)


@dataclass(frozen=True)
class Playbook:
    events: tuple[PlaybookEvent, ...]
    negative: tuple[str, ...] = ()
    # every trigger, and every negative cue, in one pattern: most messages hold none, and one search says so
    # where asking each of the hundred-odd triggers in turn cost more than the rest of the offline answer
    any_trigger: re.Pattern | None = field(init=False, repr=False, compare=False)
    any_cue: re.Pattern | None = field(init=False, repr=False, compare=False)
    any_shape: re.Pattern | None = field(init=False, repr=False, compare=False)
    any_compound: re.Pattern | None = field(init=False, repr=False, compare=False)
    # kind → its entry, as `of_kind` found it: the rules ask a few kinds for every message (bill, party, move...),
    # and walking the events for each cost more than the rest of a plain message's life-event rule; the kinds
    # asked are the code's own few words, so this stays small
    _kinds: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "_kinds", {})
        compounds = sorted({w for event in self.events for w in event.compounds}, key=len, reverse=True)
        object.__setattr__(
            self, "any_compound", re.compile(rf"{_one_of(compounds)}(?![\w-])", re.I) if compounds else None
        )
        object.__setattr__(self, "any_trigger", _any_of(t for event in self.events for t in event.triggers))
        shapes = [shape for event in self.events for shape in event.shapes]
        object.__setattr__(self, "any_shape", re.compile("|".join(f"(?:{s})" for s in shapes)) if shapes else None)
        object.__setattr__(self, "any_cue", _any_of(self.negative))

    def __iter__(self):
        return iter(self.events)

    def of_kind(self, kind: str) -> PlaybookEvent | None:
        """The entry named `kind`, else the first of that kind."""
        if kind in self._kinds:
            return self._kinds[kind]
        found = next((e for e in self.events if e.name == kind), None) or next(
            (e for e in self.events if e.kind == kind), None
        )
        self._kinds[kind] = found
        return found


def load_playbook(path: str | Path | None = None, extra: str = "") -> Playbook:
    """The playbook file, then `extra` (the enabled skills' entries, as TOML): an entry whose name the
    file already has is left out, so a skill adds life events but never rewrites the user's."""
    path = Path(path) if path else PLAYBOOK_PATH
    try:
        text = path.read_text()
    except OSError as exc:
        raise ValueError(f"playbook {path}: {exc}") from None
    return _playbook_of(text, extra, str(path))


@functools.lru_cache(maxsize=16)
def _playbook_of(text: str, extra: str, where: str) -> Playbook:
    # every Wilson started (each test's, each process's) reads the same file: the playbook is a pure function of
    # its text and `extra`, and frozen, so one is shared; the file is still read each time, so an edit is seen
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"playbook {where}: {exc}") from None
    try:
        added = tomllib.loads(extra) if extra.strip() else {}
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"a skill's playbook entries: {exc}") from None
    for name, spec in added.items():
        if name != "negative":
            data.setdefault(name, spec)
    events = []
    for name, spec in data.items():
        if not isinstance(spec, dict):
            continue
        tasks = tuple(
            PlaybookTask(
                str(t["title"]),
                int(t.get("days_before", 0)),
                str(t.get("notes", "")),
                int(t.get("min_days", 0)),
                bool(t.get("abroad", False)),
            )
            for t in spec.get("tasks", [])
        )
        label = str(spec.get("label") or name.capitalize())
        events.append(
            PlaybookEvent(
                name=name,
                label=label,
                title=str(spec.get("title") or label),
                triggers=tuple(str(w) for w in spec.get("triggers", [])),
                tasks=tasks,
                kind=str(spec.get("kind") or name),
                shapes=_shapes(name, spec.get("shapes", [])),
                compounds=tuple(str(w) for w in spec.get("compounds", [])),
                titles=tuple(str(w) for w in spec.get("titles", [])),
                title_shapes=_shapes(name, spec.get("title_shapes", [])),
            )
        )
    negative = tuple(str(w) for w in data.get("negative", []) if isinstance(w, str))
    return Playbook(tuple(events), negative)


def _shapes(name: str, shapes) -> tuple[str, ...]:
    """An entry's `shapes`, each checked to be a regular expression (a broken one names its entry)."""
    for shape in shapes:
        try:
            re.compile(str(shape))
        except re.error as exc:
            raise ValueError(f"playbook entry {name}: shape {shape!r} is no regular expression: {exc}") from None
    return tuple(str(shape) for shape in shapes)


def negative_cue(playbook: Playbook, text: str) -> str | None:
    """The first of the playbook's negative cues (in its order) that is in the text."""
    if playbook.any_cue is None or not playbook.any_cue.search(text or ""):
        return None
    for cue in playbook.negative:
        if _trigger(cue).search(text or ""):
            return cue
    return None


def match_words(playbook: Playbook, text: str) -> tuple[PlaybookEvent, re.Match] | None:
    """The first playbook event whose trigger is in the text; none when a negative cue is there too."""
    if negative_cue(playbook, text or ""):
        return None
    if not any(
        p is not None and p.search(text or "")
        for p in (playbook.any_trigger, playbook.any_shape, playbook.any_compound)
    ):
        turns = _TURNS_RE.search(text or "")  # "Emma turns 5": a birthday without the word
        birthday = playbook.of_kind("birthday") if turns else None
        return (birthday, turns) if birthday is not None else None
    for event in playbook:
        found = event.find(text)
        if found:
            return event, found
    return None


def title_words(playbook: Playbook, title: str) -> tuple[PlaybookEvent, re.Match] | None:
    """`match_words` for an event's title, a noun phrase whose last noun says what it is: the trigger that ends
    last wins ("Car insurance payment" is a payment, "Wedding trip" a trip), then the longer one ("Passport
    appointment" over "appointment"), then the playbook's order."""
    found = match_words(playbook, title)
    if found is None and not negative_cue(playbook, title):
        return _title_only(playbook, title)
    if found is None or not playbook.any_trigger:
        return found
    best = found
    for event in playbook:
        for match in event.matches(title) + event.title_matches(title):
            if (match.end(), len(match.group(0))) > (best[1].end(), len(best[1].group(0))):
                best = (event, match)
    return best


def _title_only(playbook: Playbook, title: str) -> tuple[PlaybookEvent, re.Match] | None:
    """The playbook event a title-only word or shape names, the one that ends last winning, as for triggers."""
    best = None
    for event in playbook:
        for match in event.title_matches(title):
            if best is None or (match.end(), len(match.group(0))) > (best[1].end(), len(best[1].group(0))):
                best = (event, match)
    return best


# "Emma turns 5", "Opa wird 90", "Mum's 70th is on …", "my husband's 40th": an age reached, a birthday
_TURNS_RE = lazy_regex(
    # "Emma turns 5", "I turn seventy", "ich werde am 7. August siebzig": the day may come between
    r"\b(?:turns|wird|(?<=\bi\s)turn|(?<=\bich\s)werde|i'?m\s+turning)\s+(?:am\s+[^,.!?]{3,20}?\s+|on\s+[^,.!?]{3,20}?\s+)?"
    r"(?:\d{1,3}\b|(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"thirteen|sixteen|eighteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|a\s+hundred|eins|zwei|drei|"
    r"vier|fünf|sechs|sieben|acht|neun|zehn|achtzehn|dreißig|vierzig|fünfzig|sechzig|siebzig|achtzig|neunzig|"
    r"hundert)\b(?![\s-]+(?:of|o'clock|uhr|minutes?|hours?|days?|weeks?|months?|pages?|euros?)\b))"
    r"(?!\s*(?:%|percent|degrees|euros?|dollars?|grad|prozent))|"
    # not "it's 13th to 18th of August now": a pronoun's "'s" is "is", and a range is dates
    r"\b(?!(?:it|that|what|there|here|today|tomorrow|he|she|let|who|where)['’]s\b)"
    r"[\w]+['’]s?\s+\d{1,3}(?:st|nd|rd|th)\b(?!\s+(?:of|floor|place|time|row|attempt|grade|edition|"
    r"anniversary|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|to|until|till|bis)\b)",
    re.I,
)


@dataclass(frozen=True)
class Recognition:
    event: PlaybookEvent | None  # None: seen, no plan
    rule: str  # which rule fired, in words, for the trace and the proposal's reason
    place: places.Place | None = None
    notes: list = field(default_factory=list)


def days_long(start, end, tz) -> float:
    """How many days an event spans (an all-day event ending at the next midnight is one day)."""
    begin, finish = parse_moment(start, tz), parse_moment(end, tz)
    if begin is None or finish is None:
        return 0.0
    return (as_datetime(finish, tz) - as_datetime(begin, tz)) / timedelta(days=1)


def _several_days(start, end, span: float, tz) -> bool:
    """The event lasts more than a day: over a day long, or from one day into the next (a timed event from
    Monday 09:00 to Tuesday 17:00); an all-day event of one day is not."""
    if span > 1.0:
        return True
    begin, finish = parse_moment(start, tz), parse_moment(end, tz)
    if not isinstance(begin, datetime) or not isinstance(finish, datetime):
        return False
    return span >= 0.5 and finish.astimezone(tz).date() > begin.astimezone(tz).date()


def recognise_event(
    playbook: Playbook,
    title: str,
    location: str | None,
    start,
    end,
    tz,
    home: places.Place | None,
    description: str = "",
) -> Recognition:
    """A calendar event → the plan it calls for, or none, and the rule that decided."""
    title = (title or "").strip()
    span = days_long(start, end, tz)
    several = _several_days(start, end, span, tz)
    place = places.find_place(location, title)
    if place is None and several:  # days away name their place anywhere: "Sales kickoff Lisbon"
        place = places.named_anywhere(title) or places.named_anywhere(location) or places.named_anywhere(description)
    where = places.away(place, home)
    travel = playbook.of_kind("trip") or playbook.of_kind("travel")
    cue = negative_cue(playbook, title)
    if cue:
        if several and where is not None and travel is not None:  # away for days: travel, whatever the title
            return Recognition(
                travel,
                f"{span:.0f} days in {place.name}, away from home ({where}), though “{cue}” is in the title",
                place,
            )
        return Recognition(None, f"negative cue “{cue}” in the title")
    found = title_words(playbook, title) or (match_words(playbook, description) if description else None)
    if found is None and location and not routine_meeting(title, start, end, tz):
        # a title that says little at a place that says what it is: "Dr. Weber" at "Praxis", "Check" at a dentist's
        at = match_words(playbook, location)
        if at is not None and (at[0].kind != "travel" or several):
            event, trigger = at
            return Recognition(
                event, f"“{trigger.group(0)}” in the place, “{location.strip()}” (playbook: {event.name})", place
            )
    # a stay away is a trip (not the conference entry, which is of the travel kind too)
    if found:
        event, trigger = found
        rule = f"“{trigger.group(0)}” in the title (playbook: {event.name})"
        if event.kind != "travel" and where == "abroad" and event.name in ("wedding", "exam") and travel:
            rule += f"; {place.name} is abroad"
        return Recognition(event, rule, place)
    conference = playbook.of_kind("conference")
    if several and span <= BRAND_DAYS and conference is not None and _brand(title):
        # days at an event with a brand's name ("re:publica", "EuroPython", "ITB Berlin"): a conference, at home too
        return Recognition(conference, f"{span:.0f} days of “{title}”, a name shaped like a brand: a conference", place)
    if travel is None or place is None or where is None:
        return Recognition(
            None,
            "no playbook word in the title"
            + (f"; {place.name} is not away from home" if place is not None and home is not None else ""),
            place,
        )
    if several and conference is not None and _ACRONYM_TITLE.fullmatch(title):
        # days away for a name in capitals ("FOSDEM", "MWC 2027"): an event people travel to, not a holiday
        return Recognition(
            conference, f"days away ({place.name}) for “{title}”, a name in capitals: a conference", place
        )
    if where == "abroad" and _a_name_only(location, title, start, span, tz):
        return Recognition(
            None, f"{place.name} only in the name “{location.strip()}”, for a few hours: not a trip", place
        )
    if where == "abroad":
        return Recognition(
            travel, f"the place, {place.name}, is abroad ({places.country_display(place.country)})", place
        )
    if several:
        return Recognition(travel, f"{max(span, 1):.0f} days in {place.name}, far from home", place)
    begin = parse_moment(start, tz)
    if isinstance(begin, datetime) and not _a_name_only(location, title, start, span, tz):
        # a meeting at 11:00 in a city hours away ("Pitch Helios", Hamburg; a funeral there): a journey to plan
        return Recognition(travel, f"at {begin.astimezone(tz):%H:%M} in {place.name}, far from home: a journey", place)
    return Recognition(None, f"one day in {place.name}: not a stay away from home", place)


def may_need_a_plan(found: Recognition, start, end, tz, home: places.Place | None) -> bool:
    """Whether an event the rules made no plan for may need one all the same, and is worth naming in the next
    briefing ("no plan from me: ask if one needs it"): away from home, or days long somewhere the rules cannot place
    (it may be a trip). An evening out or team days in the home town are the user's own entries and need no word."""
    if places.away(found.place, home) is not None:
        return True
    return found.place is None and _several_days(start, end, days_long(start, end, tz), tz)


# the words of the meetings that fill a working week: nothing to prepare, nothing to hear of days ahead
ROUTINE_RE = lazy_regex(
    r"\b(?:meeting|sync|standup|stand-up|daily|weekly|jour fixe|jourfixe|1:1|1on1|one-on-one|"
    r"all-hands|all hands|town hall|team call|call|telko|telco|catch-?up|check-?in call|huddle|"
    r"besprechung|teammeeting|abstimmung|regeltermin|retro|retrospective|review|planning|"
    r"sprint|refinement|grooming|demo|coffee|kaffee|lunch|mittagessen|focus time|fokuszeit|"
    r"office hours|sprechstunde)\b",
    re.I,
)
ROUTINE_HOURS = 3  # a meeting longer than this (a workshop day) may need more than a line in the calendar


def routine_meeting(title: str, start, end, tz) -> str | None:
    """Why a new event the rules made no plan for is one of the working week's meetings ("“standup” in the title,
    45 minutes"), or None: a timed event of a few hours at most with a meeting word in its title."""
    found = ROUTINE_RE.search(title or "")
    begin, finish = parse_moment(start, tz), parse_moment(end, tz)
    if found is None or not isinstance(begin, datetime):
        return None
    hours = (as_datetime(finish, tz) - as_datetime(begin, tz)) / timedelta(hours=1) if finish is not None else 1
    if hours > ROUTINE_HOURS:
        return None
    return f"“{found.group(0)}” in the title, {round(hours * 60)} minutes: a routine meeting, nothing to plan"


BRAND_DAYS = 7  # a conference or a trade fair lasts a few days; a week or more away is a stay
# a name no dictionary holds: inner punctuation ("re:publica", "Node.js"), capitals inside ("SaaStr", "EuroPython"),
# or in capitals ("ITB", "MWC"), perhaps with a year or an edition ("re:publica 27", "ITB Berlin 2027")
_BRAND_WORD = lazy_regex(r"(?-i:[a-z]+[:.][a-z]\w+|[A-Z]?[a-z]+[A-Z]\w*|[A-Z]{2,8}[a-z]?)")


def _brand(title: str) -> bool:
    words = [w for w in re.split(r"\s+", title.strip()) if not re.fullmatch(r"'?\d{2,4}|[-–&|]", w)]
    return (
        1 <= len(words) <= 3
        and _BRAND_WORD.fullmatch(words[0]) is not None
        and not re.search(r"\b(?:JGA|WG|OOO|PTO|WFH|TBD|TBC)\b", title)
    )


_ACRONYM_TITLE = lazy_regex(r"(?-i:[A-Z][A-Z0-9&]{2,9})(?:\s+(?:\d{2,4}|'\d{2}))?")


def _a_name_only(location: str | None, title: str, start, span: float, tz) -> bool:
    """A few hours at a place whose city only ends a name ("Trattoria Roma", "Café Wien"): most likely a
    restaurant or a bar named after the city, near home. A stay at "Hotel Sacher Wien" lasts days, and a
    name that starts with its city ("Tokyo Big Sight") is in that city."""
    return (
        isinstance(parse_moment(start, tz), datetime)
        and span < SHORT_DAYS
        and places.find_place(location, title, inside=False) is None
    )


def recognise_message(playbook: Playbook, text: str) -> tuple[PlaybookEvent, re.Match] | None:
    return match_words(playbook, text)


def place_title(event: PlaybookEvent, text: str, trigger: re.Match | None, place: places.Place | None = None) -> str:
    """A topic title for a life event told in a message: "Trip to Japan", "Chemistry exam"."""
    if "{place}" in event.title:
        found = re.search(r"\b(?:to|in)\s+((?:[A-Z][\w'’-]*)(?:\s+[A-Z][\w'’-]*)*)", text)
        name = place.name if place is not None else (found.group(1) if found else None)
        if found and places.find_place(found.group(1)) is not None:
            name = found.group(1)
        name = name or _place_named(text)
        return event.title.replace("{place}", name) if name else event.label
    if event.name == "move":
        return _move_title(text)
    who = re.search(r"\b([A-Z][\w'’-]+)\s+$", text[: trigger.start()]) if trigger is not None else None
    if trigger is not None and trigger.group(0).lower().startswith(("turns", "wird")) and who:
        return f"{who.group(1)}'s birthday"  # "Leo turns 4", "Opa wird 90"
    aged = (
        re.match(r"([\w]+?)['’]s?\s+\d{1,3}(?:st|nd|rd|th)$", trigger.group(0), re.I) if trigger is not None else None
    )
    if aged:
        return f"{aged.group(1)[:1].upper()}{aged.group(1)[1:]}'s birthday"  # "Mum's 70th"
    if trigger is None or re.search(r"married|turns", trigger.group(0), re.I):
        return event.label  # "we're getting married": the wedding
    if trigger.group(0).lower() in _GENERIC_TRIGGERS:
        # what the appointment is, said after a colon: "Termin für meinen Leistenbruch: Operation am 24. Februar"
        trigger = next(
            (
                m
                for m in event.matches(text)
                if m.group(0).lower() not in _GENERIC_TRIGGERS and ":" in text[trigger.end() : m.start()]
            ),
            trigger,
        )
    before = re.findall(r"[\w'’-]+", text[: trigger.start()])[-2:]
    kept = []
    for word in reversed(before):
        if re.fullmatch(r"\d+(?:st|nd|rd|th)", word, re.I):
            continue  # "Max's 6th birthday" is Max's birthday
        if word.lower() in _FILLER or word[:1].isdigit() or word.lower() in DATE_WORDS:
            break  # "March 3 chemistry exam" is the chemistry exam
        kept.insert(0, word)
    phrase = " ".join(kept + [_named(event, text, trigger)]).strip()
    if phrase.lower() == event.label.lower():
        return event.label
    return phrase[:1].upper() + phrase[1:]


def _place_named(text: str) -> str | None:
    """A place the text names in lower case or before the trigger ("a trip to lisbon", "Lisbon trip")."""
    for found in re.finditer(
        r"\b(?:to|in)\s+([a-z][\w'’-]+)|\b([A-Z][\w'’-]+)(?=\s+(?:trip|holiday|vacation|"
        r"weekend|visit|conference)\b)",
        text,
    ):
        place = places.find_place((found.group(1) or found.group(2)).title())
        if place is not None:
            return place.name
    return None


# where a move goes: "to the new flat", "into our new apartment", "to Hamburg"
_MOVE_TO = lazy_regex(
    r"\b(?:to|into|in)\s+(?P<where>(?:the|our|my|a)\s+new\s+(?:flat|apartment|house|place|home)|"
    r"[A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+)?)|\b(?P<new>new\s+(?:flat|apartment|house|place|home))\b"
)


def _move_title(text: str) -> str:
    """ "Move to the new flat", "Move to Hamburg"; "Move" when the message says not where."""
    found = _MOVE_TO.search(text)
    if found is None or (found.group("where") or "").lower() in DATE_WORDS:
        return "Move"
    where = found.group("where") or f"the {found.group('new')}"
    return "Move to " + re.sub(r"^(?:our|my|a)\s+", "the ", where)


DATE_WORDS = (
    {m.lower() for m in [*calendar.month_name, *calendar.month_abbr] if m}
    | {d.lower() for d in calendar.day_name}
    | {"today", "tomorrow", "tonight", "next", "this"}
    # German, as people here write dates: "am 12. Februar Goldene Hochzeit"
    | {"januar", "jänner", "februar", "märz", "mai", "juni", "juli", "oktober", "dezember", "mär", "okt", "dez"}
    | {"montag", "dienstag", "mittwoch", "donnerstag", "freitag", "samstag", "sonntag", "heute", "morgen", "nächsten"}
)


def _named(event: PlaybookEvent, text: str, trigger: re.Match) -> str:
    """The trigger and the triggers of the same event right after it: "dentist appointment", not "dentist"."""
    end, words = trigger.end(), [trigger.group(0)]
    while True:
        following = re.match(r"\s+([\w'’-]+(?:\s+[\w'’-]+)?)", text[end:])
        if following is None:
            return " ".join(words)
        for candidate in (following.group(1), following.group(1).split()[0]):
            if any(t.lower() == candidate.lower() for t in event.triggers):
                words.append(candidate)
                end += following.start(1) + len(candidate)
                break
        else:
            return " ".join(words)


_FILLER = set(
    """a an the my our your his her their i i'm i've im have has got had is are was will be on at in by to for
of with next this that and or need must should file do go going am just also
der die das den dem des ein eine einen einem mein meine meinen meinem jetzt hab habe ich wir für endlich""".split()
)
# a word any appointment is: a more telling trigger said after a colon names the event ("Termin für meinen
# Leistenbruch: Operation am 24. Februar" is the operation)
_GENERIC_TRIGGERS = frozenset({"termin", "appointment", "appt"})
