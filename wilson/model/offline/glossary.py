"""German words of everyday errands and the English ones a person in Berlin uses for the same thing, so that
"the consent forms by the 23rd" finds the task "Get the Einverständniserklärungen" and "certificate sent"
finds "Führungszeugnis beantragen". People here write in both languages, often in one sentence.

Only nouns that name a thing to get, pay, book or hand in: a word that means several things in English
("Termin": appointment, date, deadline) is glossed by the one a task means."""

from __future__ import annotations

from functools import lru_cache

# German noun (singular, lower case) → the English content words for it, as `words` stems them
GLOSS = {
    "einverständniserklärung": ("consent", "form"),
    "einwilligung": ("consent",),
    "formular": ("form",),
    "antrag": ("application",),
    "bescheinigung": ("certificate",),
    "nachweis": ("proof",),
    "zeugnis": ("certificate",),
    "führungszeugnis": ("certificate", "conduct"),
    "urkunde": ("certificate",),
    "geburtsurkunde": ("birth", "certificate"),
    "unterlage": ("document", "paper"),
    "dokument": ("document",),
    "vertrag": ("contract",),
    "mietvertrag": ("lease", "contract"),
    "kündigung": ("notice", "cancellation"),
    "rechnung": ("invoice", "bill"),
    "mahnung": ("reminder", "invoice"),
    "gebühr": ("fee",),
    "leihgebühr": ("rental", "fee"),
    "beitrag": ("fee", "contribution"),
    "miete": ("rent",),
    "kaution": ("deposit",),
    "überweisung": ("transfer", "payment"),
    "zahlung": ("payment",),
    "steuererklärung": ("tax", "return"),
    "steuer": ("tax",),
    "versicherung": ("insurance",),
    "krankenversicherung": ("health", "insurance"),
    "reisepass": ("passport",),
    "personalausweis": ("id", "card"),
    "ausweis": ("id", "card"),
    "führerschein": ("licence", "license"),
    "visum": ("visa",),
    "rezept": ("prescription",),
    "überweisungsschein": ("referral",),
    "impfung": ("vaccination",),
    "zahnarzt": ("dentist",),
    "arzt": ("doctor",),
    "termin": ("appointment",),
    "anmeldung": ("registration",),
    "einladung": ("invitation",),
    "geschenk": ("present", "gift"),
    "kuchen": ("cake",),
    "torte": ("cake",),
    "flug": ("flight",),
    "flüge": ("flight",),  # the plural's umlaut no ending takes off
    "zugticket": ("train", "ticket"),
    "fahrkarte": ("ticket",),
    "unterkunft": ("accommodation",),
    "ferienwohnung": ("holiday", "flat"),
    "schlüssel": ("key",),
    "wohnung": ("flat", "apartment"),
    "umzug": ("move",),
    "umzugskarton": ("moving", "box"),
    "handwerker": ("tradesman",),
    "fliese": ("tile",),
    "möbel": ("furniture",),
    "küche": ("kitchen",),
    "auto": ("car",),
    "fahrrad": ("bike", "bicycle"),
    "reifen": ("tyre", "tire"),
    "tierarzt": ("vet",),
    "fenster": ("window",),
    "heizung": ("heating",),
    "kita": ("daycare", "nursery"),
    "schule": ("school",),
    "elternabend": ("parent", "evening"),
    "klassenfahrt": ("class", "trip"),
    "hochzeit": ("wedding",),
    "geburtstag": ("birthday",),
    "prüfung": ("exam",),
    "belehrung": ("training", "instruction"),
    "schulung": ("training", "course"),
    "bewerbung": ("application",),
    "lebenslauf": ("cv",),
    # and English words for a plan's steps, as a person reports them done: "flights to Milano are booked" is the
    # "Book travel and a place to stay" of a wedding abroad, "the hotel in Varenna too" its place to stay
    "flight": ("travel",),
    "train": ("travel",),
    "ferry": ("travel",),
    "hotel": ("accommodation", "place", "stay"),
    "hostel": ("accommodation", "place", "stay"),
    "airbnb": ("accommodation", "place", "stay"),
    "guesthouse": ("accommodation", "place", "stay"),
}

# German plural and case endings, longest first: "Einverständniserklärungen", "Formulare", "Zeugnisse"
_ENDINGS = ("nen", "en", "se", "er", "e", "n", "s")


@lru_cache(maxsize=4096)  # every look at the tasks glosses the same titles' words again
def english(word: str) -> tuple[str, ...]:
    """The English content words for a German noun as written (any case, plural or singular); () for any
    other word."""
    word = word.lower()
    if word in GLOSS:
        return GLOSS[word]
    if word + "s" in GLOSS:  # a word's stem without its last s: "führungszeugni" of "Führungszeugnis"
        return GLOSS[word + "s"]
    for ending in _ENDINGS:
        if word.endswith(ending) and word[: -len(ending)] in GLOSS:
            return GLOSS[word[: -len(ending)]]
    return ()
