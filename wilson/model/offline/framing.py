"""What a request comes wrapped in, taken off before the rules read it: politeness ("could you please …",
"… please"), framing ("don't forget to …", "I'd like you to …", "also add: …", "set a reminder to …").

The rules match requests by their verb at the start ("remind me", "add", "move"); people put words before
it. Each wrapper is taken off while one is there, so "oh and could you please also add: …" reads "add …".
A question stays a question: "can you tell me what's due?" keeps its "tell me", "can you book a table?"
is left as it was (no rule books tables, and it must not become a task).

Size: a table of wrappers, most of the module, and the few functions that take them off in order; the
table is read beside the order it is tried in.
"""

from __future__ import annotations

import re
from datetime import datetime

from wilson.model.offline import acts, dates, formal
from wilson.kernel.lazy_regex import lazy_regex

# the requests the rules follow: only before one of these is "can you" a request and not a question
_VERBS = (
    r"(?:remind me\b(?!\s+(?:what|when|where|who|which|how|if|whether)\b)|add|move|push|postpone|reschedule|"
    r"snooze|drop|delete|cancel|mark|rename|close|put|set up|create|note|remember|set a reminder|"
    r"make a (?:note|task|reminder)|schedule a (?:reminder|task)|write down|note down|jot down|"
    r"give me a (?:nudge|shout|heads[- ]up)|nudge me|ping me|make sure|set (?:an|me an|my) alarm|wake me|"
    r"(?:sort out|organi[sz]e|arrange|put in|get|add|set) (?:me |up )?an? (?:reminder|task|to-?do))\b"
)
_POLITE = lazy_regex(
    r"^(?:(?:can|could|would|will)\s+you\s+(?:please\s+|kindly\s+|just\s+|possibly\s+|perhaps\s+|maybe\s+|also\s+)*"
    r"|(?:can|could|shall)\s+we\s+"
    # "it'd be great if you could …", "I'd appreciate it if you would …", "if you could …"
    r"|(?:(?:it'?d|it would|that'?d|that would|would)\s+be\s+(?:really\s+|so\s+|very\s+)?(?:great|nice|"
    r"good|lovely|awesome|helpful|amazing|cool|brilliant|perfect|super)\s+|i'?d\s+(?:really\s+)?"
    r"appreciate\s+it\s+|i\s+would\s+(?:really\s+)?appreciate\s+it\s+)?if\s+you\s+(?:could|can|would)"
    r"\s+(?:please\s+|kindly\s+|just\s+)*"
    r"|would\s+you\s+mind\s+|i'?d\s+like\s+you\s+to\s+|i\s+want\s+you\s+to\s+|"
    r"i\s+need\s+you\s+to\s+|(?:please|pls|plz|kindly|just)\s+|"
    # "you can delete the bike light task, I sold the bike": leave given is a request
    r"you\s+(?:can|could|may)\s+(?:now\s+|just\s+|go\s+ahead\s+and\s+)?)"
    r"(?=" + _VERBS + ")",
    re.I,
)
# "oh and also add: …", "plus, remind me …": a joining word before a request
_JOIN = lazy_regex(
    r"^(?:(?:oh|and|also|plus|then|ps|p\.s\.|btw|by the way|one more thing|another thing|hey|hi|hello|"
    r"wilson)"
    r"(?:\s*[,:;.-]+\s*|\s+))+(?=" + _VERBS + r"|i\b|don'?t|do not|please\b|pls\b|kindly\b|"
    r"(?:can|could|would)\s+you\b)",
    re.I,
)
# "Quick one: remind me …", "Question - add …": a few words of lead-in before a colon or a dash
_LEAD_IN = lazy_regex(
    r"^(?!" + _VERBS + r")[\w' ]{1,24}?\s*(?::|\s-+|–|—)\s*(?=" + _VERBS + r"|(?:i|we)\s+(?:need|have|must)\s+to\b)",
    re.I,
)
# "I'm moving the dentist to Friday", "let's push the hotel task to Monday": a move said as news or a suggestion
_MOVING = lazy_regex(
    r"^(?:i'?m|i am|we'?re|we are|let'?s)\s+(?:moving|move|pushing|push|postponing|postpone|"
    r"rescheduling|reschedule)\s+(?P<what>(?:the|my|our)\s+.+?\s+(?:to|until|till)\s+.+)$",
    re.I | re.S,
)
# "the Crete flights can wait until March", "no need for the gift anymore": a move or a drop said as news
_CAN_WAIT = lazy_regex(r"^(?P<what>(?:the|my|our)\s+.+?)\s+can wait\s+(?:until|till|to)\s+(?P<when>.+)$", re.I | re.S)
# a day agreed as the new deadline: "the 20th", "20.2.", "20 February", "the end of February"
_DAY_OF_MONTH = lazy_regex(
    r"\b\d{1,2}(?:st|nd|rd|th)\b|\b\d{1,2}\.\d{1,2}\.|\b\d{1,2}\s+[A-Z][a-z]{2,}|\bend\s+of\s+(?:the\s+)?[a-z]+", re.I
)
# "I've got one month from today to send back the forms", "we have two weeks to find a flat": the time left is the
# deadline, "I need to send back the forms one month from today"
_TIME_LEFT = lazy_regex(
    r"^(?:(?:i|we)(?:'ve|\s+have)?\s+(?:got\s+|only\s+|just\s+)*|(?:i|we)\s+(?:only\s+|just\s+)?have\s+)"
    r"(?P<span>(?:a|an|one|two|three|four|five|six|ten|\d+|a\s+few|a\s+couple\s+of)\s+(?:days?|weeks?|months?))"
    # time to think, to rest or to go is no errand
    r"(?P<from>\s+from\s+(?:today|now))?\s+(?:left\s+)?to\s+"
    r"(?P<what>(?!(?:think|wait|relax|rest|enjoy|decide|spare|play|go|kill|breathe|recover)\b)[a-z].+?)[.!]*$",
    re.I | re.S,
)
_REASON_AFTER = lazy_regex(r"\s*[,;]\s*(?:(?:he|she|they|it|that|which|as|because|since)\b).*$", re.I | re.S)
# "no need for that, I already did it" names nothing: a no to what was just proposed (follow_ups.py reads it)
_NO_NEED = lazy_regex(
    r"^no (?:more )?need (?:for|to)\s+(?!(?:that|it|this|them)\b\s*(?:[,;.!]|$))(?P<what>.+?)(?:\s+any\s?more)?[.!]*$",
    re.I | re.S,
)
# "the present for Lena isn't needed anymore, she got one already": a thing no longer needed is dropped
_NOT_NEEDED_ANY_MORE = lazy_regex(
    r"^(?:the\s+|my\s+|our\s+)?(?P<what>[^,;.!?]{3,50}?)\s+(?:is|are|'s|'re)(?:\s+not|n'?t)\s+(?:needed|necessary)\s+"
    r"(?:any\s?more|after\s+all|now)\b.*$",
    re.I | re.S,
)
# a need said in German, its verb last: "Ich muss bis Ende Februar meinen Reisepass verlängern"
_GERMAN_MUST = lazy_regex(
    r"^(?:ich|wir)\s+(?:muss|müssen|sollte|sollten|soll|sollen)\s+(?:noch\s+|unbedingt\s+|dringend\s+|echt\s+)*"
    r"(?!(?:heute\s+|morgen\s+|noch\s+)*(?:so\s+viel|viel|alles|einiges|was|etwas|mal)\b)"
    r"(?P<todo>\S.*\s[a-zäöüß]{3,}(?:en|ern|eln))[\s.!]*$",
    re.I | re.S,
)
# "don't forget to …", "please remember to …", "make sure I …": what not to forget
_DONT_FORGET = lazy_regex(
    r"^(?:(?:don'?t|do not)\s+(?:let\s+me\s+)?forget|remember|make sure)(?:\s+"
    r"(?:to|(?:that\s+)?(?:i|we)\s+(?:need|have|must|should|got)\s+to|i|about)\s+|\s*[:\-–]\s*)"
    r"(?P<what>.+)$",
    re.I | re.S,
)
_REMEMBER = lazy_regex(
    r"^(?:remember|write down|note down|jot down|make a note(?:\s+to\s+(?:self|yourself))?)"
    r"\s*(?:that\s+|:\s*|-\s*|to\s+(?=[a-z]))?(?P<what>.+)$",
    re.I | re.S,
)
_SET_REMINDER = lazy_regex(
    r"^(?:set|schedule|make|create|sort\s+out|organi[sz]e|arrange|put\s+in|add|get)\s+(?:a|me\s+a|up\s+a)\s+reminder\s+"
    r"(?:for\s+me\s+to|to|for|about|that)\s+(?P<what>.+)$",
    re.I | re.S,
)
# "set a weekly reminder on Fridays at 4pm to …", "ping me tomorrow at 9 about …": a reminder in other words
_REMINDER_WORDS = lazy_regex(
    r"^(?:(?:set|schedule|make|create)\s+(?:a|me\s+a|up\s+a)\s+(?P<often>daily|weekly|"
    r"recurring|repeating)?\s*reminder|(?:ping|nudge|text|message|buzz|alert)\s+me|"
    r"give\s+me\s+a\s+(?:nudge|shout|ping|heads[- ]up|buzz))\b",
    re.I,
)
# "set an alarm for 6am tomorrow", "wake me up at 7": a reminder to wake, as Wilson has no alarm of its own
_ALARM = lazy_regex(
    r"^(?:set\s+(?:an|me\s+an|my)\s+alarm|wake\s+me(?:\s+up)?)\b(?:\s+for\b)?(?P<when>.*)$", re.I | re.S
)
# "put the dentist on Thursday at 10 in my calendar": what and when, without where it is written
_IN_CALENDAR = lazy_regex(
    r"^(?:put|add|enter|pencil(?:\s+in)?|write)\s+(?P<what>.+?)\s+(?:in|on|to|into)\s+(?:my|the)\s+"
    r"(?:calendar|diary|agenda)\b(?P<rest>.*)$",
    re.I | re.S,
)
# "I'd love a weekly nudge on Wednesdays to …", "can I get a daily reminder at 8 to …": a reminder wished for
_WANT_REMINDER = lazy_regex(
    r"^(?:i'?d\s+(?:love|like|appreciate)|i\s+(?:would\s+(?:love|like|appreciate)|want|need)|(?:can|could)\s+i\s+(?:get|have)|"
    # "it'd be really helpful to get a ping every morning at 8 to …"
    r"(?:it'?d|it\s+would)\s+be\s+(?:really\s+|so\s+|very\s+)?(?:helpful|great|nice|good|useful)\s+to\s+(?:get|have))"
    r"\s+(?:a|an)\s+(?P<often>daily|weekly|monthly|regular|recurring)?\s*(?:nudge|reminder|ping)\b",
    re.I,
)
_ON_DAYS = lazy_regex(r"\b(?:weekly\s+)?on\s+(?P<day>(?:mon|tues|wednes|thurs|fri|satur|sun)day)s\b", re.I)
_MAKE_TASK = lazy_regex(
    r"^(?:make|create|open|schedule|set up|add|start)\s+(?:a|me\s+a|an)\s+(?:new\s+)?"
    r"(?:task|to-?do|to do|item|entry)\s*(?:to|for|:|-)?\s+(?P<what>.+)$",
    re.I | re.S,
)
# "add a todo for next monday: prepare the slides": the day said before the task, both named
_DAY_THEN_TASK = lazy_regex(
    r"^(?:add|make|create|new|schedule|set up)\s+(?:a\s+|an\s+)?(?:new\s+)?(?:task|to-?do|"
    r"to do|item|reminder)\s+(?P<when>(?:for|on|by|due)\s+[^:]{2,30}?)\s*[:\-–]\s*(?P<what>.+)$",
    re.I | re.S,
)
# "put “call grandma” on the list for sunday", "add 'buy stamps' to my list": the task quoted, then where and when
_QUOTED_TASK = lazy_regex(
    r"^(?:put|add|write|note)\s+(?:[\"“](?P<what>[^\"”]{2,80})[\"”]|‘(?P<what2>[^’]{2,80})’)\s*"
    r"(?:(?:on|to|in)\s+(?:my|the|our)\s+(?:to-?do\s+|task\s+)?(?:list|tasks|to-?dos))?(?P<rest>.*)$",
    re.I | re.S,
)
# "To do: clean the fridge", "todo - call Tom", "Aufgabe: Milch kaufen": a task written as a note
# "put call grandma on my list for Sunday", "stick 'renew the ID' on the to-do list": the thing, then where it goes
_PUT_ON_LIST = lazy_regex(
    r"^(?:put|stick|pop|jot|write|note)\s+(?!(?:it|that|this|them)\b)(?P<what>.+?)\s+(?:on|onto|in|to)\s+(?:my|the)\s+"
    r"(?:list|to-?do(?:\s+list)?|tasks|task\s+list)\b(?P<rest>.*)$",
    re.I | re.S,
)
# "Also put on the list: sell the old bike by February 14", "put this on my to-do list too - call the bank": where it
# goes said first, the task after a colon or a dash
_ON_LIST_FIRST = lazy_regex(
    r"^(?:put|stick|pop|jot|write|note|add)(?:\s+(?:this|these|it|one))?(?:\s+down)?\s+(?:on|onto|to|in)\s+(?:my|the|our)\s+"
    r"(?:to-?do\s+|task\s+)?(?:list|tasks|to-?dos)(?:\s+(?:too|as\s+well|also|please))*\s*(?::|-+|–|—)\s*(?P<what>\S.*)$",
    re.I | re.S,
)
_TODO_NOTE = lazy_regex(
    r"^(?:bitte\s+)?(?:to\s+do|todo|to-do|task|(?:als\s+|neue\s+|eine\s+)?aufgabe(?:\s+bitte)?)\s*[:\-–]\s*(?P<what>.+)$",
    re.I | re.S,
)
# a need said loosely: "need to order glasses", "gotta call the landlord", "I should really clean the garage",
# "we'll have to renew the lease" → "I need to …" (ADD_RE's words); "should I …?" asks, and keeps its order
_NEED = lazy_regex(
    r"^(?:(?P<who>i|we)(?:'ll|\s+will)?\s+)?(?:really\s+|still\s+|also\s+|definitely\s+|seriously\s+|"
    r"probably\s+)*(?:need to|have to|must|should|ought to|got to|'ve got to|have got to)\s+"
    r"(?:really\s+|still\s+|also\s+|definitely\s+|finally\s+|actually\s+)*"
    r"(?P<what>(?!(?:i|we|you|he|she|they|it|be|say|admit|confess)\b)[a-z].+)$",
    re.I | re.S,
)
# "my passport expires in March, I should renew it", "the boiler is broken so we need to fix it by Friday": the thing
# told first is what "it" is
_IT_TOLD_FIRST = lazy_regex(
    r"^(?P<thing>(?:my|the|our)\s+[\w'’ -]{2,30}?)\s+(?:expires?|runs?\s+out|is\s+due|ends|is\s+broken|"
    r"broke|stopped\s+working|is\s+leaking|needs?\s+\w+ing)\b(?P<when>[^,.;!?]*?)[,;.]?\s*(?:so\s+|and\s+)?"
    r"(?P<need>(?:i|we)\s+(?:really\s+)?(?:should|need\s+to|have\s+to|must|got\s+to|ought\s+to)\s+)"
    r"(?P<verb>[a-z]+)\s+(?:it|them)\b(?P<tail>.*)$",
    re.I | re.S,
)
# "I need a new phone by Friday", "we need new tyres before winter": a thing to get by a day
_NEED_THING = lazy_regex(
    r"^(?P<who>i|we)\s+(?:really\s+|still\s+|also\s+)?need\s+(?P<what>(?:a|an|some|new|more|the)\s+"
    r"[^,.;!?]+?\s+(?:by|before|until|till)\b.+)$",
    re.I | re.S,
)
# "the meter reading has to be sent in by 15.01", "my passport needs to be renewed before March": a need said of
# the thing, read as the act ("I need to send in the meter reading by 15.01")
_PASSIVE = lazy_regex(
    r"^(?:the|my|our|your)\s+(?P<thing>[^,.;!?]+?)\s+(?:has|have|needs?|must|should)\s+(?:to\s+)?be\s+"
    r"(?P<done>[a-z]+(?:ed|en)|sent|paid|done|made|bought|brought|put|set|sold|kept|read|swept|cut|fed|lent|built|"
    r"held|told|dug|shut|spent|hung)"
    r"(?P<particle>\s+(?:in|off|back|out|up|over))?\b(?P<rest>.*)$",
    re.I | re.S,
)
# "The car has to go through its inspection before May", "the boiler needs to pass its check by March": what a thing
# of the user's has to do by a day is theirs to see to ("The car: go through its inspection", due then); a person
# who has to ("my brother has to fly out by Friday") is someone else's doing
_THING_MUST = lazy_regex(
    r"^(?P<thing>(?:the|my|our)\s+(?!(?:brother|sister|mum|mom|mother|dad|father|son|daughter|wife|husband|partner|"
    r"boyfriend|girlfriend|friend|friends|kids?|children|child|boss|colleague|flatmate|roommate|neighbou?r|parents|"
    r"grandma|grandpa|granny|family|team|landlord|landlady|doctor|teacher|cousin|uncle|aunt|baby)\b)"
    r"[\w'’-]+(?:\s+[\w'’-]+){0,2}?)\s+(?:(?:has|have|needs?)\s+to|must)\s+(?P<act>(?!be\b|go\s+out\b)[a-z]+\s+[^,;!?]+?)\s+"
    r"(?P<when>(?:by|before|until|till)\s+[^,;!?]+?)[.!]*$",
    re.I | re.S,
)
# "tomorrow I need to bring the contract to the office, so can you remind me at 8 in the morning": what to be
# reminded of said first, the request after it with only its time
_REMIND_LAST = lazy_regex(
    r"^(?!you\s+(?:can|could|may)\s+remind\b)(?P<before>[^.!?]+?)[\s,;]+(?:(?:and|so|then|ok|okay|pls|please)[\s,]+)*"
    r"(?:(?:can|could|would|will)\s+you\s+|please\s+)*remind me\b"
    r"(?P<after>(?:\s+(?:at|on|in|by|tomorrow|tonight|today|this|next|later|around|before|every|each|"
    r"daily|weekly|"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)day)\b[^?.!]*)?)[?.!\s]*$",
    re.I | re.S,
)
# "would you be so kind as to …", "could you be a star and …", "would you be able to …": "would you …"
_BE_KIND = lazy_regex(
    r"^\s*(?P<ask>can|could|would|will)\s+you\s+(?:please\s+|possibly\s+)?be\s+(?:so\s+kind\s+as\s+to|kind\s+enough\s+to|"
    r"able\s+to|a\s+(?:star|dear|love|darling)\s+and)\s+",
    re.I,
)
_SAID_FIRST = lazy_regex(r"^(?:(?:ok|okay|so|right|well|and|hey|hi|oh|um+|uh+)[\s,]+)+", re.I)
_NEED_SAID = lazy_regex(
    r"\b(?:i|we)\s+(?:really\s+)?(?:need|have|want|must|should)\s+(?:to\s+)?(?:remember\s+to\s+)?|"
    r"\b(?:i|we)\s+(?:keep|always|often|tend to)\s+(?:forget|forgetting)\s+to\s+|"
    r"\bdon'?t (?:let me )?forget to\s+",
    re.I,
)
# "change the passport deadline to April", "set the hotel's due date to Friday": a task moved
_DUE_CHANGE = lazy_regex(
    r"^(?:change|set|update|make)\s+(?:the\s+|my\s+)?(?P<what>.+?)(?:'s)?\s+(?:deadline|due date|due day|"
    r"date|due)\s+(?:to|for)\s+(?P<when>.+)$",
    re.I | re.S,
)
# "I want to be reminded to …", "would you mind reminding me to …", "could you add …ing": the request in its own words
_BE_REMINDED = lazy_regex(
    r"^(?:i'?d like|i would like|i want|i'?d love|i need)\s+(?:to\s+)?(?:be|get)\s+reminded\b\s*", re.I
)
_MIND = lazy_regex(
    r"^(?:would|do)\s+you\s+mind\s+(?P<verb>reminding me|adding|moving|pushing|postponing|"
    r"rescheduling|snoozing|dropping|deleting|cancell?ing|marking|renaming|closing|putting|setting up|"
    r"creating)\b",
    re.I,
)
_BASE = {
    "reminding me": "remind me",
    "adding": "add",
    "moving": "move",
    "pushing": "push",
    "postponing": "postpone",
    "rescheduling": "reschedule",
    "snoozing": "snooze",
    "dropping": "drop",
    "deleting": "delete",
    "cancelling": "cancel",
    "canceling": "cancel",
    "marking": "mark",
    "renaming": "rename",
    "closing": "close",
    "putting": "put",
    "setting up": "set up",
    "creating": "create",
}
_TRAILING = lazy_regex(
    r"[\s,]+(?:please|pls|plz|thanks|thank you|for me|thanks in advance|if you can|if possible|"
    r"when you get a chance|(?:that|it)(?:'d| would) be (?:great|nice|good|lovely|awesome|amazing|"
    r"helpful|perfect)|(?:that|it)(?:'d| would) help(?: a lot)?|cheers|ty|lol)\s*([.!?]*)\s*$",
    re.I,
)
_QUESTION_END = lazy_regex(r"\s*\?+\s*$")


# a request that may follow its date: "in two weeks I have to hand in the paper", "tomorrow, remind me to …"
_REQUEST_AFTER = lazy_regex(
    r"^[\s,:-]*(?P<ask>(?:(?:i|we)\s+(?:need|have|must|should|got)\s+to|(?:i|we)'ve\s+got\s+to|"
    r"i\s+must|remind me|add|don'?t (?:let me )?forget|please)\b.*)$",
    re.I | re.S,
)


# "every Sunday evening remind me to plan the week", "each morning at 7, remind me to stretch": how often, said first
_OFTEN_FIRST = lazy_regex(
    r"^(?P<when>(?:every|each)\s+[^,.!?]{2,40}?)[\s,]+(?P<ask>(?:please\s+)?remind me\b.+)$", re.I | re.S
)
# "weekly reminder on fridays at 5pm: timesheet", "reminder tomorrow at 9 - call Tom": a reminder written as a note
_REMINDER_NOTE = lazy_regex(
    r"^(?:(?P<often>daily|weekly|monthly)\s+)?reminder\s+(?P<when>[^:\-–]{2,40}?)\s*[:\-–]\s*"
    r"(?P<what>.+)$",
    re.I | re.S,
)
# "the passport deadline moved to Feb 15", "the deadline for the flights is now the 20th", "change the due date of
# book flights to 1 March": a task's new day, said of its deadline
_DEADLINE_MOVED = lazy_regex(
    r"^(?:the\s+)?(?P<what>.+?)(?:'s)?\s+(?:deadline|due date)\s+(?:has\s+(?:been\s+)?|was\s+|got\s+)?"
    r"(?:moved|changed|pushed|shifted|postponed|extended|is now|is)\s+(?:back\s+)?(?:to|until|till)?\s*"
    r"(?P<when>.+)$",
    re.I | re.S,
)
_DEADLINE_OF = lazy_regex(
    r"^(?:change|set|update|move|push|extend)\s+the\s+(?:deadline|due date|due day|date)\s+"
    r"(?:of|for|on)\s+(?P<what>.+?)\s+(?:to|until|till)\s+(?P<when>.+)$"
    # "for the visa thing for Amina's parents, make the deadline end of February"
    r"|^for\s+(?P<what2>(?:the|my|our)\s+.+?),?\s+(?:make|change|set|move|push)\s+the\s+(?:deadline|due date)\s+"
    r"(?:to\s+)?(?P<when2>.+)$",
    re.I | re.S,
)
# "let's do the plumber on Monday instead", "can the flights wait until Monday?": a task moved, put as a suggestion
_DO_INSTEAD = lazy_regex(
    r"^(?:let'?s|we'?ll|i'?ll|we can|i can)\s+do\s+(?P<what>(?:the|my|our)\s+.+?)\s+"
    r"(?P<when>(?:on|at|by|next|this|tomorrow)\b.+?)\s+instead[.!]*$",
    re.I | re.S,
)
_CAN_IT_WAIT = lazy_regex(
    r"^(?:can|could)\s+(?P<what>(?:the|my|our)\s+.+?)\s+wait\s+(?:until|till|to)\s+(?P<when>.+?)\?*$", re.I | re.S
)
# "could you hold off on the dog sitter thing until the weekend?", "not now with the VAT return, bring it up again on
# Monday", "ask me about the vaccination tomorrow instead", "snooze tüv 2 weeks": a task put off, in other words
_HOLD_OFF = lazy_regex(
    r"^(?:(?:can|could|would)\s+you\s+(?:please\s+)?)?(?:hold off on|put off|leave)\s+(?P<what>.+?)\s+"
    r"(?:until|till)\s+(?P<when>.+?)[?.!]*$",
    re.I | re.S,
)
_NOT_NOW_WITH = lazy_regex(
    r"^not (?:now|yet|today|right now|this week|this month)\s+(?:with|for|on)\s+(?P<what>.+?)[,;.]\s*(?:please\s+)?"
    r"(?:bring it up|ask me|remind me|come back to it|try me|bug me|ping me|nudge me)(?:\s+(?:again|about it))*\s+"
    r"(?P<when>.+?)[.!]*$"
    # "stop nagging me about the gym cancellation until the 20th", "bring the tax prepayment up again next month",
    # "bug me again after the weekend about the vet thing"
    r"|^(?:stop|quit)\s+(?:nagging|bugging|reminding|pestering|asking)\s+me\s+about\s+(?P<what2>.+?)\s+"
    r"(?:until|till)\s+(?P<when2>.+?)[.!]*$"
    r"|^bring\s+(?P<what3>.+?)\s+up\s+again\s+(?P<when3>.+?)[.!]*$"
    r"|^(?:ask|bug|ping|nudge)\s+me\s+again\s+(?P<when4>.+?)\s+about\s+(?P<what4>.+?)[.!]*$"
    # "erinner mich in 3 Tagen nochmal an die Anmeldung zur Fahrprüfung": a task brought up again, in German
    r"|^erinner(?:e|n)?\s+mich\s+(?:bitte\s+)?(?P<when5>.+?)\s+(?:nochmal|noch\s+einmal|wieder)\s+an\s+"
    r"(?P<what5>.+?)[.!]*$",
    re.I | re.S,
)
_ASK_ME_ABOUT = lazy_regex(r"^(?:ask|ping|nudge)\s+me\s+(?=about\s)", re.I)
_SNOOZE_FOR = lazy_regex(
    r"^(?P<verb>snooze|postpone|delay|pause)\s+(?P<what>.+?)(?<!\bfor)(?<!\bby)\s+(?P<n>\d{1,2}|a|an|one|two|three|four)\s+"
    r"(?P<unit>days?|weeks?|months?)[.!]*$",
    re.I,
)
# "there's no point renewing the parking permit", "take the rabies booster off the list": a task dropped
_NO_POINT = lazy_regex(r"\bno point (?:in\s+)?(?P<what>[a-z]+ing\s+.+?)(?:\s+any\s?more)?[.!]*$", re.I | re.S)
_OFF_THE_LIST = lazy_regex(
    r"^(?:take|cross|strike|get)\s+(?P<what>.+?)\s+off\s+(?:the|my)\s+(?:to-?do\s+)?list\b", re.I
)
# in German: "nimm das Geschenk für Leonie raus, …", "streich die Aufgabe mit dem Abo", "lösch den Zahnarzt"
_GERMAN_DROP = lazy_regex(
    r"^(?:nimm|nehm\s+mal)\s+(?:die\s+aufgabe\s+)?(?P<what>.+?)\s+(?:raus|von\s+der\s+liste)\b"
    r"|^(?:lösch(?:e)?|streich(?:e)?|entfern(?:e)?)\s+(?:bitte\s+)?(?:die\s+aufgabe\s+(?:mit\s+(?:dem|der|den)\s+)?)?"
    r"(?P<what2>[^,.!]+)",
    re.I,
)
# "flights: booked", "passport - renewed": a task ticked off by its verb done
_TICKED = lazy_regex(
    r"^(?P<what>[\w' ]{2,40}?)\s*(?::|-+|–|—)\s*(?P<verb>[a-z]+ed|paid|sent|bought|done)\s*[.!]*$", re.I
)


# a when with no day, said before the need: "after the Easter holidays I have to deal with the broken shed"
_VAGUE_FIRST = lazy_regex(
    r"^(?:after|over|during)\s+the\s+(?:[\w-]+\s+){0,2}?(?:holidays|break|summer|winter|vacation)\s*,?\s+"
    r"(?=(?:i|we)\s+(?:need|have|must|should|got|'ve))",
    re.I,
)


def unframed(text: str, now: datetime | None = None, tz=None) -> str:
    """The request without its wrappers; the text as it was when it wears none. With `now` and `tz`, a date said
    before the request moves after it ("on Friday I need to call Tom" is "I need to call Tom on Friday")."""
    if now is not None and tz is not None:
        text = _date_last(text, now, tz)
    was, rounds = None, 0
    while was != text and rounds < 8:  # each wrapper comes off once; a rewrite that reads as another stops here
        rounds += 1
        was = text
        text = formal.plain(text)  # "would you be so kind as to …", "please note that I must …"
        text = _JOIN.sub("", text)
        text = _LEAD_IN.sub("", text)
        text = _VAGUE_FIRST.sub("", text)
        text = _in_own_words(text)
        polite = _POLITE.match(text)
        if polite:
            text = _QUESTION_END.sub("", text[polite.end() :])  # "can you add milk?" asks nothing: it is a request
        text = _TRAILING.sub(r"\1", text)
        quoted = _QUOTED_TASK.match(text)
        if quoted and now is not None and tz is not None:
            return _quoted(quoted, now, tz)
        text = _reminder_said(_remembered(text))
        moving = _MOVING.match(text.replace("’", "'"))
        text = f"move {moving.group('what')}" if moving else text
        text = _reworded(text)
        left = _TIME_LEFT.match(text)
        if left:
            span = left.group("span") + (left.group("from") or "") if left.group("from") else f"in {left.group('span')}"
            text = f"I need to {left.group('what')} {span}"
        waits, no_need = _CAN_WAIT.match(text), _NO_NEED.match(text)
        if waits:
            # "the Kessler invoice can wait till the 20th, they said that's fine": a day of the month agreed is the new
            # deadline; "can wait until next Monday" puts it off until then
            when = _REASON_AFTER.sub("", waits.group("when"))
            dated = _DAY_OF_MONTH.search(when)
            text = f"move {waits.group('what')} to {when}" if dated else f"snooze {waits.group('what')} until {when}"
        text = f"drop {no_need.group('what')}" if no_need else text
        not_needed = _NOT_NEEDED_ANY_MORE.match(text)
        text = f"drop {not_needed.group('what')}" if not_needed else text
        must = _GERMAN_MUST.match(text)
        text = (
            must.group("todo") if must else text
        )  # "Ich muss bis Freitag X abgeben": the to-do "bis Freitag X abgeben"
    return text


def _quoted(quoted: re.Match, now: datetime, tz) -> str:
    """The quote is the task's whole title; of the rest only its day is kept ("…"? We need it by Friday.)"""
    rest = quoted.group("rest")
    found = dates.search(rest, now, tz)
    lead = re.search(r"\b(?:by|before|until|till|on|for|in)\s+(?:the\s+)?$", rest[: found[0].start]) if found else None
    when = ((lead.group(0) if lead else "") + found[0].phrase) if found else ""
    return f"add {(quoted.group('what') or quoted.group('what2')).strip()} {when}".strip()


def _reworded(text: str) -> str:
    """A reminder, a move or a done said in a shape of its own, in the words the rules read."""
    calendar = _IN_CALENDAR.match(text)
    if calendar:
        text = f"{calendar.group('what')}{calendar.group('rest')}".strip()
    often = _OFTEN_FIRST.match(text)
    if often:
        return f"{often.group('ask').rstrip(' .!')} {often.group('when')}"
    note = _REMINDER_NOTE.match(text)
    if note:
        every = {"daily": "every day ", "weekly": "", "monthly": "every month "}.get(
            (note.group("often") or "").lower(), ""
        )
        when = note.group("when").strip()
        if (note.group("often") or "").lower() == "weekly" and not re.match(r"every|each", when, re.I):
            when = re.sub(r"^on\s+", "", when, flags=re.I)
            when = re.sub(r"\b((?:mon|tues|wednes|thurs|fri|satur|sun)day)s?\b", r"every \1", when, count=1, flags=re.I)
        return f"remind me {every}{when} to {note.group('what').strip()}"
    moved = _DEADLINE_OF.match(text) or _DEADLINE_MOVED.match(text) or _DO_INSTEAD.match(text)
    if moved and not _QUESTION_END.search(text):
        said = moved.groupdict()
        what = re.sub(r"^(?:the|my|our)\s+", "", said.get("what") or said["what2"], flags=re.I)
        return f"move the {what} to {said.get('when') or said['when2']}"
    wait = _CAN_IT_WAIT.match(text) or _HOLD_OFF.match(text) or _NOT_NOW_WITH.match(text)
    if wait:
        what = next(g for g in (wait.groupdict().get(k) for k in ("what", "what2", "what3", "what4", "what5")) if g)
        when = next(g for g in (wait.groupdict().get(k) for k in ("when", "when2", "when3", "when4", "when5")) if g)
        return f"snooze {what} until {when}"
    snooze = _SNOOZE_FOR.match(text)
    if snooze:
        return f"{snooze.group('verb')} {snooze.group('what')} for {snooze.group('n')} {snooze.group('unit')}"
    text = _ASK_ME_ABOUT.sub("remind me ", text)
    dropped = _NO_POINT.search(text) or _OFF_THE_LIST.match(text) or _GERMAN_DROP.match(text)
    if dropped:
        return f"drop {dropped.groupdict().get('what') or dropped.group('what2')}"
    ticked = _TICKED.match(text)
    if ticked and ticked.group("verb").lower() != "done":
        return f"{ticked.group('verb')} {ticked.group('what')}"
    return text


def _in_own_words(text: str) -> str:
    """A request put in other words, in the words the rules read: "would you mind reminding me" is "remind me",
    "gotta call the landlord" is "I need to call the landlord", "I need to bring the contract, so remind me at 8"
    is "remind me at 8 to bring the contract"."""
    text = _BE_KIND.sub(lambda m: f"{m.group('ask')} you ", text)
    last = _REMIND_LAST.match(text)
    if last and not re.match(r"\s*(?:please\s+)?remind me\b", text, re.I):
        what = _NEED_SAID.sub("", _SAID_FIRST.sub("", last.group("before"))).strip(" ,.;")
        if len(what.split()) >= 2 and not re.search(r"\b(?:can|could|would|will)\s+you$", what, re.I):
            text = f"remind me{last.group('after')} to {what}"
    mind = _MIND.match(text)
    if mind:
        text = _BASE[mind.group("verb").lower()] + _QUESTION_END.sub("", text[mind.end() :])
    reminded = _BE_REMINDED.match(text)
    if reminded:
        text = "remind me " + text[reminded.end() :]
    due_change = _DUE_CHANGE.match(text)
    if due_change:
        text = f"move the {due_change.group('what')} to {due_change.group('when')}"
    passive = _PASSIVE.match(text)
    if passive and not _QUESTION_END.search(text):
        verb = acts.base_verb(passive.group("done")) + (passive.group("particle") or "")
        text = f"I need to {verb} the {passive.group('thing')}{passive.group('rest')}"
    must = None if passive else _THING_MUST.match(text)
    if must and not _QUESTION_END.search(text):
        text = f"add {must.group('thing')}: {must.group('act')} {must.group('when')}"
    told = _IT_TOLD_FIRST.match(text)
    if told and not _QUESTION_END.search(text):
        thing = told.group("thing")[:1].lower() + told.group("thing")[1:]
        # "my passport expires on March 3 so I need to renew it": its day is the request's when it says none
        when = told.group("when") if not told.group("tail").strip(" .!") else ""
        month = re.match(r"\s*in\s+(?=[a-z]+\s*$)", when, re.I)  # "expires in March": before March comes
        when = re.sub(r"^\s*(?:on|in|at)\s+", " ", when)
        when = f" {'before' if month else 'by'}{when}" if _DAY_SAID.search(when) else ""
        text = f"{told.group('need')}{told.group('verb')} {thing}{when}{told.group('tail')}"
    thing = _NEED_THING.match(text)
    if thing and not _QUESTION_END.search(text):
        text = f"{thing.group('who')} need to get {thing.group('what')}"  # "I need a new phone by Friday"
    need = _NEED.match(text)
    if need and not _QUESTION_END.search(text):
        text = f"{need.group('who') or 'I'} need to {need.group('what')}"
    return text


# a day said in words a deadline can be read from (not "soon", "next year")
_DAY_SAID = lazy_regex(
    r"\d|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|"
    r"\b(?:tomorrow|end of|next (?:week|month)|this (?:week|month))\b",
    re.I,
)


_REMIND_ME = lazy_regex(r"remind me\b", re.I)  # made once: every message's framing asks it


def _reminder_said(text: str) -> str:
    """ "set a daily reminder at 8 to stretch" → "remind me every day at 8 to stretch"; "… on Fridays" is every Friday."""
    alarm = _ALARM.match(text)
    if alarm and alarm.group("when").strip():
        text = f"remind me {alarm.group('when').strip()} to wake up"
    wanted = _WANT_REMINDER.match(text)
    if wanted:
        often = (wanted.group("often") or "").lower()
        text = f"set a {often if often in ('daily', 'weekly') else ''} reminder{text[wanted.end() :]}"
    found = _REMINDER_WORDS.match(text)
    if found:
        every = " every day" if (found.group("often") or "").lower() == "daily" else ""
        text = f"remind me{every}{text[found.end() :]}"
    if _REMIND_ME.match(text):
        text = _ON_DAYS.sub(lambda m: f"every {m.group('day')}", text)
    return text


def _remembered(text: str) -> str:
    """ "don't forget to call mum at 5" → "remind me to call mum at 5"; with no hour, "add call mum"."""
    for pattern, timed, untimed in (
        (_DONT_FORGET, "remind me to", "add"),
        (_SET_REMINDER, "remind me to", None),
        (_MAKE_TASK, "add", "add"),
    ):
        found = pattern.match(text)
        if found:
            what = found.group("what").strip()
            if re.match(r"remind me\b", what, re.I):
                return what  # "please remember to remind me about …"
            return f"{timed if untimed is None or _has_hour(what) else untimed} {what}"
    found = _DAY_THEN_TASK.match(text)
    if found:
        return f"add {found.group('what').strip()} {found.group('when').strip()}"
    found = _ON_LIST_FIRST.match(text)
    if found:
        return f"add {found.group('what').strip()}"
    found = _PUT_ON_LIST.match(text)
    if found:  # "put call grandma on my list for Sunday"
        return f"add {found.group('what').strip()}{found.group('rest')}"
    found = _TODO_NOTE.match(text)
    if found:
        return f"add {found.group('what').strip()}"
    found = _REMEMBER.match(text)
    if found and re.match(r"(?:i|we)\s+(?:need|have|must|should|got)\s+to\b", found.group("what"), re.I):
        return found.group("what").strip()  # "note down that I need to buy stamps": the need is the task
    if found and not re.match(r"(?:me|to)\b|" + _VERBS, found.group("what"), re.I):
        return f"add {found.group('what').strip()}"  # "remember: buy stamps", not "remember me" nor "note to self"
    return text


_HOUR = lazy_regex(
    r"\b\d{1,2}(?::\d\d)?\s*(?:am|pm|a\.m\.|p\.m\.|h|uhr|o'?clock)(?!\w)|\b\d{1,2}:\d\d\b|"
    r"\bat\s+\d{1,2}\b|\b(?:noon|midday|tonight|this (?:morning|afternoon|evening)|in an? hour|"
    r"in \d+ (?:minutes|hours|mins))\b",
    re.I,
)


def _has_hour(text: str) -> bool:
    return bool(_HOUR.search(text))


def _date_last(text: str, now: datetime, tz) -> str:
    found = dates.search(text, now, tz, parts=True)
    lead_word = text[: found[0].start].strip(" ,").lower() if found else ""
    if not found or lead_word not in (
        "",
        "on",
        "by",
        "in",
        "every",
        "each",
        "within",
        "in the next",
        "before",
        "until",
    ):
        return text
    lead = text[: found[0].start + len(found[0].phrase)]
    ask = _REQUEST_AFTER.match(text[len(lead) :])
    if ask is None and acts.commanded(rest := text[len(lead) :].strip(" ,:;-–")):  # "tomorrow: call the garage"
        return f"{rest.rstrip(' .!')} {lead.strip(' ,')}"
    return f"{ask.group('ask').rstrip(' .!')} {lead.strip(' ,')}" if ask else text
