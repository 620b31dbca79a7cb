"""A preparation plan asked for in words: "help me prepare", "get me ready for …", "set up the usual prep", "I need
a plan", "can you work out what I need to do". The words ask for the plan of what the rest of the message tells
(an exam, a bill, a trip); taken off, the rest is read as that event, whatever its shape: a question ("Could you
help me get ready for the Rotterdam Marathon?"), a sum to pay (then the bill's plan, not one payment), a need.

Pure: reads text, writes nothing.
"""

from __future__ import annotations

import re

from wilson.kernel.lazy_regex import lazy_regex

PLAN_ASKED_RE = lazy_regex(
    r"\b(?:(?:can|could|would|will)\s+you\s+)?(?:please\s+)?(?:"
    r"help\s+(?:me|us)\s+(?:to\s+)?(?:plan|prepare|get\s+(?:ready|everything\s+ready|organi[sz]ed)|organi[sz]e|sort\s+out|"
    r"get\s+on\s+top\s+of)"
    r"|get\s+(?:me|us)\s+(?:ready|prepared)|(?<=you\s)plan(?=\s+(?:my|our|the|a|an)\s)"
    r"|set\s+(?:that|this|it|everything)\s+up|set\s+up\s+(?:the\s+usual\s+|a\s+|the\s+)?(?:prep|plan|preparations?)"
    r"|(?:i|we)\s+(?:need|want|would like|'d like)\s+a\s+plan"
    r"|make\s+(?:me\s+|us\s+)?a\s+plan|plan\s+(?:it|this|that)\s+(?:out\s+)?for\s+(?:me|us)"
    r"|work\s+out\s+what\s+(?:i|we)\s+(?:need|have)\s+to\s+do|(?:no\s+idea|don'?t\s+know)\s+where\s+to\s+start"
    r"|(?:i|we)\s+want\s+to\s+be\s+(?:well\s+|fully\s+)?prepared|(?:i|we)\s+(?:need|have|want)\s+to\s+prepare\s+for\s+it"
    r"|get\s+everything\s+ready|need\s+to\s+sort\s+out\s+everything|sort\s+out\s+everything"
    # "booked a long weekend in Edinburgh 26-28 Feb, what do I need to sort?": asked after what is told, never alone
    # ("what do I need to do today?" is a look at the list)
    r"|(?:[,;:–—-]|[.!]\s)\s*(?:so\s+)?what\s+(?:do|should|shall|must)\s+(?:i|we)\s+(?:still\s+)?(?:(?:need|have)\s+to\s+)?"
    r"(?:sort(?:\s+out)?|prepare|organi[sz]e|think\s+(?:of|about)|consider|keep\s+in\s+mind|book|arrange|do)"
    r"(?:\s+(?:for\s+it|first))?(?=\s*\?*\s*$)"
    # "… Operation am 24. Februar. Was muss ich vorher alles regeln?", "What do I need to sort out before?": what
    # comes before the event told; "before" is what makes it no look at the list
    r"|\bwhat\s+(?:do|should|must)\s+(?:i|we)\s+(?:still\s+)?(?:(?:need|have)\s+to\s+)?"
    r"(?:sort(?:\s+out)?|prepare|organi[sz]e|arrange|do|think\s+of|get\s+done|have\s+done|get\s+ready)\s+"
    r"(?:before(?:hand|\s+(?:it|that|then))?)"
    # "… before I go?", "what do we have to get done before she goes?"
    r"(?:\s+(?:i|we|she|he|they|the\s+kids)\s+(?:go|goes|leave|leaves|fly|flies|move|moves|start|starts))?(?=\s*\?)"
    # "can you sort out what i need to do before i fly?"
    r"|\bsort\s+out\s+what\s+(?:i|we)\s+(?:need|have)\s+to\s+do\s+before\s+(?:i|we)\s+"
    r"(?:go|leave|fly|move|start)(?=\s*\?)"
    r"|\bwas\s+(?:muss|sollte|soll)\s+(?:ich|wir)\s+(?:vorher|davor|bis\s+dahin|dafür)\s+(?:noch\s+)?(?:alles\s+)?"
    r"(?:regeln|erledigen|vorbereiten|organisieren|beachten|bedenken|machen|klären|besorgen|hinkriegen|"
    r"auf\s+die\s+reihe\s+(?:kriegen|bekommen|bringen))(?=\s*\?)"
    # "… Goldene Hochzeit am 12. Februar … Was muss ich alles bedenken?": "alles" asks for all there is to it
    r"|\bwas\s+(?:muss|sollte|soll)\s+(?:ich|wir)\s+(?:da\s+|dabei\s+|noch\s+)?alles\s+"
    r"(?:regeln|vorbereiten|organisieren|beachten|bedenken|planen)(?=\s*\?)"
    # German: "hilf mir beim Vorbereiten", "Könntest du mir helfen, … vorzubereiten?"
    r"|(?:(?:kannst|könntest|würdest)\s+du\s+mir\s+)?helfen\s*,?(?=.*\b(?:vorzubereiten|vorbereiten|zu\s+planen|planen)\b)"
    r"|\b(?:vorzubereiten|vorbereiten|zu\s+planen)(?=\s*[?.!]*\s*$)"
    r")\b(?:\s+(?:how\s+to\s+pay\s+it|for\s+(?:it|this|that|me|us)|my\s+revision|(?:for\s+)?the\s+rest))?[.!?]*",
    re.I,
)


def plan_asked(text: str) -> str | None:
    """The message without its ask for a plan, when it asks for one ("Statistics exam on 10 Feb, help me plan my
    revision" → "Statistics exam on 10 Feb"); None when it asks for none, or nothing is left to plan."""
    found = PLAN_ASKED_RE.search(text or "")
    if found is None:
        return None
    rest = PLAN_ASKED_RE.sub(" ", text).strip()  # each of its words ("helfen, … vorzubereiten")
    rest = re.sub(r"\s*[,;:–—-]+\s*$|^\s*[,;:–—-]+\s*", "", re.sub(r"\s+", " ", rest)).strip()
    rest = re.sub(r"^(?:for|with|on)\s+", "", rest, flags=re.I)
    return rest if re.search(r"\w{3,}", rest) else None
