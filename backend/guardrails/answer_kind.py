"""Does the answer give the kind of thing the question asks for? A frequency for "how often", a number for "how
many", a time or date for "when".

A small model answers a question its passages cannot answer with a neighbouring fact they do state, word for word
("Passwords must be at least 14 characters long [S1]" to "How often must passwords be changed?"): every support
check passes, since the passage states it. When the question opens with one of the few forms below and no
sentence of the answer holds what that form asks for, the answer does not answer it. Only these openings are read,
and each accepts many ways of saying it ("never", "only when", "no", "free", "immediately"), so an answer that
does answer is not caught: on bench.answers' tune split no correct answer of either model was.
"""

import re
from dataclasses import dataclass

from backend.contract.citations import CITATION_RE

_AUX = r"(is|are|was|were|do|does|did|must|should|can|could|will|would|may|might|has|have|had)"
_NUMBER = (
    r"\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|sixty"
    r"|hundred|thousand|million|half|dozen|single|double|no|none|zero|unlimited|free|all|any|every|several|few)\b"
)
_NUMBER_WORD = (
    r"(\d[\d.,]*|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty"
    r"|sixty|ninety|hundred|thousand|a|an|half an?|a few|several|many|all|whole)\b)"
)
# a length of time or of something: a number with its unit ("6 months", "14 characters", "two hours", "a day"), a
# clock time or a bound ("until 18:00", "within 30 days"), or no limit; not any number ("6 spaces" answered "How long
# can guests park for free?" as a duration: tester)
_DURATION = (
    _NUMBER_WORD + r"[\s-]*(\w+[\s-]+)?(seconds?|minutes?|mins?|hours?|hrs?|days?|nights?|weeks?|fortnights?|months?"
    r"|quarters?|years?|decades?|centur(y|ies)|characters?|letters?|digits?|words?|pages?|lines?|metres?|meters?"
    r"|kilometres?|kilometers?|km|miles?|cm|mm|inch(es)?|feet|foot|kg|grams?|litres?|liters?|times?|%|percent)\b"
    r"|\d{1,2}[:.]\d{2}|\b(until|till|within|up to|no longer than|at most|at least|indefinitely|unlimited|no (time )?"
    r"limit|forever|permanent(ly)?|overnight|never|always|as long as|while)\b"
)
_FREQUENCY = (
    r"\b(every|each|daily|weekly|monthly|quarterly|annual(ly)?|yearly|hourly|once|twice|times|per|never|always"
    r"|whenever|when|only|if|after|before|regular(ly)?|continuous(ly)?|intervals?|a (day|week|month|year))\b"
)
_TIME = (
    _NUMBER + r"|\b(january|february|march|april|may|june|july|august|september|october|november|december|monday"
    r"|tuesday|wednesday|thursday|friday|saturday|sunday|weekends?|weekdays?|today|tomorrow|immediately|before"
    r"|after|within|until|by|during|noon|midnight|morning|afternoon|evening|end|start|beginning|first|last|next"
    r"|once|soon|same day)\b"
)


@dataclass(frozen=True)
class Kind:
    """What a form of question asks for: its name, for the reason given, and what an answer of that kind holds."""

    name: str
    answer: re.Pattern[str]


_KINDS = [
    (re.compile(r"^how (often|frequently)\b"), Kind("a frequency", re.compile(_FREQUENCY))),
    (
        re.compile(r"^(how (many|much)|what (percentage|share|proportion|number|amount)|up to (how|what))\b"),
        Kind("a number or an amount", re.compile(_NUMBER)),
    ),
    (re.compile(r"^(for )?how long\b"), Kind("a duration or a length", re.compile(_DURATION))),
    (
        re.compile(rf"^((until|by|till) when|what time|what date|(in )?what year|when {_AUX})\b"),
        Kind("a time or a date", re.compile(_TIME)),
    ),
]


def asked_kind(question: str) -> Kind | None:
    """The kind of answer the question's opening asks for; None for every other question."""
    opening = question.strip().lower()
    return next((kind for form, kind in _KINDS if form.search(opening)), None)


WORD = re.compile(r"[^\W\d_]+")  # letters only: a number is an answer even when the question offers it
CHOICE = re.compile(r"\bor\b", re.IGNORECASE)


def gives_kind(kind: Kind, answer: str, question: str = "") -> bool:
    """Whether the answer (citation markers aside) holds something of that kind, in a word the question does not
    already hold: "free" answers "How much is parking?" but not "How long can guests park for free?" (tester: "Guests
    can park for free in the car park [S1]" passed as a duration). Numbers always count ("How long is the notice
    period, 30 days?" → "30 days"), and so does every word of a question that offers a choice ("How much does parking
    cost, or is it free?", "daily or weekly?"), whose answer is one of its own words (review)."""
    echoed = set() if CHOICE.search(question) else {w.lower() for w in WORD.findall(question)}
    text = CITATION_RE.sub(" ", answer).lower()
    # a match counts unless it is only words the question holds: "30 days" after "…, 30 days?" does, "free" does not
    return any(
        any(c.isdigit() for c in m[0]) or any(w not in echoed for w in WORD.findall(m[0]))
        for m in kind.answer.finditer(text)
    )
