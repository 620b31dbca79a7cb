"""Wilson without a language model: small rule modules behind one provider.

dates (what people write), places (gazetteer), recognition (life events), plans (fitted to
the time left), urgency and triage (what needs the user), intents (chat; its words are phrases,
answers to a pending proposal are answers), provider (the Synapse's offline transport answers
through it).
"""

from wilson.model.offline.dates import find_dates
from wilson.model.offline.provider import OfflineProvider
from wilson.model.offline.words import words

__all__ = ["OfflineProvider", "find_dates", "words"]
