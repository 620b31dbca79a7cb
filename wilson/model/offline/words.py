"""Content words: what two phrasings of one task share ("booking flights" and "Book flights")."""

from __future__ import annotations

from wilson.model.offline.edit_distance import distance
from wilson.model.offline.glossary import english
from wilson.kernel.lazy_regex import lazy_regex

# Number words in a count ("in two weeks", "a couple of days", "in vierzehn Tagen"): each rule's pattern says
# which of them it accepts, so one table serves them all.
NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "ten": 10,
    "fourteen": 14,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
    "forty-five": 45,
    "couple of": 2,
    "a couple of": 2,
    "few": 3,
    "a few": 3,
    "ein": 1,
    "eine": 1,
    "einen": 1,
    "einem": 1,
    "einer": 1,
    "zwei": 2,
    "drei": 3,
    "vier": 4,
    "sechs": 6,
    "acht": 8,
    "zehn": 10,
    "vierzehn": 14,
}


STOP_WORDS = set(
    """
a about after all also am an and any are as at be been before both but by can could did do does done don't
for from get got had has have i i'm i've if in into is it it's its just let me my need no not now of off on
once or our please put set so some than that the their them then there these this those to too up us was we
what when which while who will with would you your yours move change make it's by until till due date
skip drop remove without delete cancel instead rather want dont task tasks topic one item
""".split()
)
MONTH_WORDS = {
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
}
DAY_WORDS = {
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "today",
    "tomorrow",
    "tonight",
    "week",
    "next",
    "weekend",
    "month",
    "yesterday",
    "morning",
    "afternoon",
    "evening",
    "earlier",
}


_WORD_RE = lazy_regex(r"[^\W_][\w'’-]*")  # made once: every task's title is read into words


def words(text: str) -> set[str]:
    out = set()
    for word in _WORD_RE.findall((text or "").lower()):  # "TÜV", "Kita-Gutschein" whole
        word = word.replace("’", "'").strip("'-")
        if word.endswith("'s"):
            word = word[:-2]
        if not word or word in STOP_WORDS or word in MONTH_WORDS or word in DAY_WORDS or word[0].isdigit():
            continue
        out.add(_stem(word))
    return out


def glossed(said: set[str]) -> set[str]:
    """Content words with the English of the German ones among them: "Einverständniserklärungen" is also
    "consent form" (for finding the thing named, not for counting how much of a title was said)."""
    return said | {english_word for word in said for english_word in english(word)}


def overlap(said: set[str], own: set[str]) -> float:
    """How many words two phrasings share: a German word for an English one ("Einverständniserklärungen",
    "consent forms") counts a little less than the word itself, so "Passport-Antrag" is the passport's and
    not the Kita application's."""
    same = said & own
    return len(same) + 0.75 * len((glossed(said) & glossed(own)) - same)


def _stem(word: str) -> str:
    if word.endswith("xes"):
        word = word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    if len(word) > 5 and word.endswith("ing"):
        word = word[:-3]
    return word


def best(items: list[dict], wanted: set[str], key=lambda item: str(item.get("title") or "")) -> dict | None:
    """The item sharing most words with `wanted` (the first on a tie); None when none shares any. A word counts
    when it is the same, shortened ("sub" for "subscription") or mistyped by a letter ("insurnace")."""
    found, score = None, 0.0
    for item in items:
        own = words(key(item))
        shared = overlap(wanted, own) + 0.5 * sum(1 for w in wanted - own if any(_alike(w, o) for o in own - wanted))
        if shared > score:
            found, score = item, shared
    return found


def _alike(said: str, named: str) -> bool:
    """A word said for a title's word: its start ("sub", "tüv"), or one edit away in a longer word."""
    if 3 <= len(said) < len(named) and named.startswith(said):  # shortened, not a longer word ("plant" is no "plan")
        return True
    return len(said) >= 5 and len(named) >= 5 and distance(said, named, cutoff=1) <= 1


def covers(wanted: set[str], text: set[str]) -> bool:
    """Every word names it ("to pay the rent" is not "pay the gas bill"), one aside in a longer phrase."""
    missing = len(wanted - text)
    return missing == 0 or (len(wanted) >= 3 and missing == 1)
