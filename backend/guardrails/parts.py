"""The parts of a question that asks two things, and which of them an answer leaves unanswered.

"What is the notice period for permanent employees and is there a gym in the office?" got a right, cited answer to
its first part, and the model judged that the passages do not state the answer to the question (P(yes) 0.43): they
state half of it. Replacing the whole answer by the not-found reply lost the half that was there (tester). A
question is cut into parts at a second question mark followed by more text, and at "and" or "or" (after a comma or
not) followed by a question word or an auxiliary verb ("and is there …", ", and what …"). A part is answered when
the supported claims use at least half of its content words or give what it asks for. When the model judged that
the passages do not state the whole answer, the answer says the rest was not found; otherwise that it does not
cover it ("How long must passwords be, and how often must they be changed?" got the length alone; tester).
"""

import re

from backend.contract.text import content_words, without_note
from backend.guardrails.answer_kind import asked_kind, gives_kind

_AUX = "is|are|was|were|do|does|did|can|could|will|would|should|may|must|has|have"
_WH = "what|which|who|whom|whose|when|where|why|how"
_SPLIT = re.compile(rf"\?\s+(?=\S)|[;,]?\s+(?:and|or)\s+(?=(?:{_AUX}|{_WH})\b)", re.IGNORECASE)
# a part is a question of its own: a question word among its first three words, or an auxiliary verb and then its
# subject ("is there …", "does it …"), not a second verb of one question ("What two resources are consumed … and
# are typically known to vary?", SQuAD)
_ASKS = re.compile(
    rf"^(?:\W*\w+){{0,2}}?\W*\b(?:{_WH})\b|^\W*(?:{_AUX})\s+(?:there|it|i|you|we|they|he|she|the|a|an|this|that|"
    r"these|those|my|our|your|their|its|any|some|(?-i:[A-Z@]))",
    re.IGNORECASE,
)
_OPENING = re.compile(r"^(?:and|or|also|so)\s+", re.IGNORECASE)  # "…? And can I carry them over?"
_WH_PART = re.compile(rf"^\W*(?:\w+\W+){{0,2}}?(?:{_WH})\b", re.IGNORECASE)
COVERED_SHARE = 0.5


def question_parts(question: str) -> list[str]:
    """The question's parts, each as a question ("is there a gym in the office?"); the question alone when it asks
    one thing, or when a part is no question of its own ("Thanks, and what about contractors?")."""
    parts = [_OPENING.sub("", p.strip(" ,;?")) for p in _SPLIT.split(without_note(question).strip())]
    parts = [p for p in parts if content_words(p)]
    if len(parts) < 2 or not all(_ASKS.search(p) for p in parts):
        return [question.strip()]
    return [f"{p}?" for p in parts]


def unanswered_parts(question: str, supported_claims: list[str], judged_unanswered: bool = False) -> list[str]:
    """The parts no supported claim answers, when the question has several and the claims answer at least one;
    [] otherwise (one part, every part answered, or none). A part is answered when the claims use half its content
    words, or give what it asks for ("how often must they be changed?" by "every 90 days", answer_kind.py): a part
    answered in other words must not be said to be missing. When the model judged that the passages do not state
    the answer, a part counts as answered only with every one of its words: "What is the notice period for
    contractors and is there a gym?" answered with the permanent employees' period is not half right (review).
    Otherwise a yes-or-no part is not said to be missing: "Yes, there is a fitness room" answers "is there a gym?"
    in other words (review)."""
    parts = question_parts(question)
    if len(parts) < 2:
        return []
    text = " ".join(supported_claims)
    said = content_words(text)
    share = 1.0 if judged_unanswered else COVERED_SHARE

    def answered(part: str) -> bool:
        kind = asked_kind(part)
        return len(content_words(part) & said) >= share * len(content_words(part)) or (
            kind is not None and gives_kind(kind, text, part)
        )

    missing = [p for p in parts if not answered(p)]
    if not judged_unanswered:
        missing = [p for p in missing if _WH_PART.search(p)]
    return missing if 0 < len(missing) < len(parts) else []
