"""A one-word answer as people type it on a phone: "y", "yse", "ys", "yesss", "noo", "nah", "nope".

A typo is tolerated by distance, not by listing every misspelling: a word one edit (a letter added, dropped,
changed or two swapped: Damerau-Levenshtein) from a yes or a no, beginning with the same letter,
is that answer; a letter held down ("noooo") counts once. A few real words sit one edit from an answer and mean
something else ("not", "now", "yet"): they are never read as one. "y" and "n" alone are the answers' initials.

A thumb that lands on the key beside the first one ("ues", "tes", "ueah" for a yes) is the one slip where the first
letter may differ: only a yes, only at three letters or more, and the rest exactly as written (beside n sit "h", "j",
"m" and "b", and "hope", "mope", "bah", "jo" are words of their own). The other languages' words are read with a
letter held down too ("jaa", "neee").
"""

from __future__ import annotations

from wilson.model.offline.edit_distance import distance
from wilson.kernel.lazy_regex import lazy_regex

YES = ("yes", "yeah", "yep", "yup", "sure", "ok", "okay")  # "okk", "okey" too
NO = ("no", "nope", "nah")
# the yes and no of the other languages dates are read in, exactly as written (one edit from "si" is "so")
_ELSEWHERE = {
    "ja": "yes",
    "jep": "yes",
    "jup": "yes",
    "jop": "yes",
    "yea": "yes",
    "yeh": "yes",
    "ye": "yes",
    "jap": "yes",
    "ya": "yes",
    "yah": "yes",
    "oui": "yes",
    "si": "yes",
    "sí": "yes",
    "sim": "yes",
    "não": "no",
    "nein": "no",
    "non": "no",
    "jawohl": "yes",
    "jo": "yes",
    "klar": "yes",
    "gerne": "yes",
    "gern": "yes",
    "passt": "yes",
    "genau": "yes",
    "vale": "yes",
    "dale": "yes",
    "claro": "yes",
    "venga": "yes",
    "nee": "no",
    "nö": "no",
    "noe": "no",
    # Turkish, as families in Berlin write it: "yok yok, brauchen wir nicht"
    "yok": "no",
    "hayır": "no",
    "evet": "yes",
    # Ukrainian, Russian, Italian and French, as Berlin writes them: "так, дякую", "ні, дякую", "sì, grazie"
    "так": "yes",
    "ага": "yes",
    "ні": "no",
    "да": "yes",
    "нет": "no",
    "sì": "yes",
    "certo": "yes",
    "ouais": "yes",
    # Polish, as Berlin writes it: "nie, dzięki", "tak, dziękuję"
    "tak": "yes",
    "nie": "no",
}
# real words one edit from an answer that say something else
_OTHER_WORDS = frozenset(
    {
        "not",
        "now",
        "nor",
        "nod",
        "non",
        "yet",
        "yen",
        "yew",
        "sue",
        "sun",
        "noon",
        "note",
        "none",
        "nose",
        "node",
        "nice",
        "nat",
        "nap",
        # one edit from "ok"
        "oh",
        "on",
        "of",
        "or",
        "ow",
        "ox",
        "oi",
        "om",
        "op",
        "oak",
    }
)
_FILL = frozenset(
    {
        # Spanish and Portuguese courtesy: "sí, porfa", "sim, obrigada"
        "porfa",
        "por",
        "favor",
        "obrigado",
        "obrigada",
        "please",
        "pls",
        "plz",
        "thanks",
        "thx",
        "ty",
        "it",
        "that",
        "do",
        "go",
        "ahead",
        "wilson",
        "sir",
        "mate",
        "ta",
        "cheers",
        "danke",
        "bitte",
        "merci",
        "gracias",
        "grazie",
        "дякую",
        "спасибо",
        "doch",
        "schon",
        # pleased words around a yes ("perfect, yes"); alone, or with an "ok", they answer nothing
        "perfect",
        "great",
        "good",
        "fine",
        "cool",
        "lovely",
        "awesome",
        "nice",
        "excellent",
        "that's",
        "thats",
        "sounds",
        "looks",
        "right",
        "correct",
        "exactly",
        # the same, as people here write them in their other languages: "sì perfetto", "perfecto, gracias"
        "perfetto",
        "perfecto",
        "perfeito",
        "parfait",
        "super",
        "prima",
        "top",
        "bene",
        "genial",
        # a yes to every item: "yes all three", "yes to both" ("al": the l held too briefly)
        "all",
        "al",
        "both",
        "two",
        "three",
        "four",
        "of",
        "them",
        "to",
        "alle",
        "drei",
        "beide",
        "las",
        "tres",
        "todas",
        "todos",
    }
)


# the keys beside a yes's first letter, on the QWERTY and QWERTZ keyboards people type on
_BESIDE_Y = frozenset("tughz")


# made once: a short answer is looked for in every message, and each word of it is read with these
_TRIPLED_RE = lazy_regex(r"(\w)\1{2,}")
_DOUBLED_RE = lazy_regex(r"(\w)\1+")
_DIGIT_RE = lazy_regex(r"\d")
_LETTERS_RE = lazy_regex(r"[^\W\d_]+(?:'[^\W\d_]*)?")


def word_answer(word: str) -> str | None:
    """ "yes" or "no" when one word is a yes or a no, typed loosely; None otherwise."""
    word = _TRIPLED_RE.sub(r"\1\1", word.lower().strip(" .!?,"))  # "noooo" → "noo", "yesss" → "yess"
    if word in ("y", "n"):
        return "yes" if word == "y" else "no"
    if word in _ELSEWHERE:
        return _ELSEWHERE[word]
    held = _DOUBLED_RE.sub(r"\1", word)  # "jaa" → "ja"; "nee" is a word of its own, found above
    if held in _ELSEWHERE and held != word and len(held) >= 2:
        return _ELSEWHERE[held]
    if not 2 <= len(word) <= 6 or not word.isalpha() or word in _OTHER_WORDS or word in ("ok", "okay"):
        return None  # "ok" itself is the acknowledgement the other rules read; "okk", "okey" are typed yeses
    best: tuple[int, str] | None = None
    for answer, words in (("yes", YES), ("no", NO)):
        for known in words:
            if known[0] != word[0]:
                continue
            edits = distance(word, known)
            if edits <= 1 and (best is None or edits < best[0]):
                best = (edits, answer)
    if best is None and len(word) >= 3 and word[0] in _BESIDE_Y and f"y{word[1:]}" in YES:
        return "yes"  # "ues", "tes": the key beside the y
    return best[1] if best else None


# what goes with a no alone: "nah leave it", "no, skip it", "nope forget that"
_NO_FILL = frozenset({"leave", "skip", "forget", "drop", "it", "that", "this", "one", "thanks", "thx"})


def _fill(word: str) -> bool:
    """A word of courtesy, typed loosely too: "ahed" for "ahead", "pleas" for "please" (five letters or more, one
    edit away, so that no short word becomes another), "dreii" for "drei"."""
    return (
        word in _FILL
        or len(word) >= 5  # a last letter held on a longer word: "alle dreii" ("too" is no "to", "off" no "of")
        and word[-1] == word[-2]
        and word[:-1] in _FILL
        or len(word) >= 4
        and any(len(known) >= 5 and known[0] == word[0] and distance(word, known, cutoff=1) <= 1 for known in _FILL)
    )


def short_answer(text: str) -> str | None:
    """ "yes" or "no" when the whole message is one (a word or two of courtesy around it: "yse pls", "noo thanks",
    "yeah go ahed", "nah leave it"); None for anything longer or anything else."""
    if _DIGIT_RE.search(text):
        return None  # "no, 7": a time said with the no is a change (follow_ups.py), not the bare answer
    said = _LETTERS_RE.findall(text.lower().replace("’", "'"))  # "sí", "não": letters of any kind
    if len(said) > 1 and any(w in ("ok", "okay") for w in said):
        said = [w for w in said if w not in ("ok", "okay")]  # "ok passt", "ok yes": the ok only acknowledges
    answers = {word_answer(w) for w in said if not _fill(w)}
    rest = [w for w in said if not _fill(w) and word_answer(w) is None]
    if answers - {None} == {"no"} and set(rest) <= _NO_FILL:
        answers, rest = {"no"}, []
    if rest or len(answers) != 1 or len(said) > 6:
        return None
    return answers.pop()
