"""Does the answer state the question's premise in words no passage uses? A neighbouring fact dressed in the
question's words.

A small model answers a question its passages cannot answer with a fact they do state about something close,
restated in the question's terms: "The purchase price of a new Zephyr-9 unit is 240 euros per unit [S1]" from a
passage that gives the price of a service; "The Zephyr-9 unit itself weighs 40 kilograms [S1]" from one that says
what load the wall must carry. Every support check passes: the number is in the passage, and most of the
sentence's words are too. What gives it away is the words the claim shares with the question: when the question
is answered, the passages use them, since they are about its subject; here at least half of them occur in no
passage the model was given ("purchase", "price", "new"; "itself", "weigh").

Only words absent from every passage count, not from the claim's own passage: a question written in other words
than the document's (SQuAD's crowd-written questions paraphrase their paragraph) is answered by a claim that takes
some of them from the question, and the other passages often hold them. A claim that shares fewer than MIN_SHARED
words with the question is not judged (too few to tell), and the answer is kept when any judged claim keeps most
of the words it shares. Words are compared as stems (text.content_words): "weighs" and "weigh" match, "weight"
and "weigh" do not.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass

from backend.contract.citations import CITATION_RE
from backend.contract.text import content_words, stem, typed_content_words, word_set
from backend.guardrails.grounding import SentenceSupport

MIN_SHARED = 2  # a claim must repeat at least this many of the question's words to be judged
MAX_MISSING_SHARE = 0.5  # a claim for which this share of them (or more) is in no passage restates the question
# A yes-or-no question is answered in its own words ("Can I work from home?" → "Yes, you can work from home … [S1]"
# from "Employees may work remotely …"): one word the passages put otherwise is no neighbouring fact, so it takes
# two. The single-word catches of bench.answers' dumps were all wh-questions ("get", "changed", "employ").
YES_NO_QUESTION = re.compile(
    r"^\W*(?:(?:hi|hello|ok|okay|so|and|but|also|please)\b\W*)*"  # "Hi, can I …", "So can I …" (review)
    r"(can|could|may|might|must|shall|should|will|would|is|are|am|was|were|do|does|did|has|have|had)\b",
    re.IGNORECASE,
)
YES_NO_LEAST = 2


@dataclass(frozen=True)
class Premise:
    """One supported claim's words in common with the question, and those no passage contains."""

    claim: str
    shared: frozenset[str]
    missing: frozenset[str]

    def unstated(self, least: int = 1) -> bool:
        """True when at least MAX_MISSING_SHARE of the words the claim takes from the question, and `least` of
        them, are in no passage."""
        missing = len(self.missing)
        return len(self.shared) >= MIN_SHARED and missing >= least and missing >= MAX_MISSING_SHARE * len(self.shared)


def premises(question: str, claims: list[SentenceSupport], passages: Mapping[str, str]) -> list[Premise]:
    """For each supported claim that repeats MIN_SHARED or more of the question's words: which of them no passage
    contains."""
    asked = content_words(question)
    used = set().union(*(content_words(text) for text in passages.values()))
    out = []
    for claim in claims:
        shared = frozenset(content_words(claim.sentence) & asked)
        if claim.best is not None and len(shared) >= MIN_SHARED:
            out.append(Premise(claim.sentence, shared, frozenset(shared - used)))
    return out


def unstated_premise(question: str, claims: list[SentenceSupport], passages: Mapping[str, str]) -> list[str] | None:
    """The question's words (as typed) that the answer states but no passage uses, when every judged claim
    restates the question in such words; None when the answer may stand."""
    judged = premises(question, claims, passages)
    least = YES_NO_LEAST if YES_NO_QUESTION.search(question) else 1
    if not judged or not all(p.unstated(least) for p in judged):
        return None
    missing = set().union(*(p.missing for p in judged))
    return sorted({w for w in typed_content_words(question) if stem(w) in missing})


# A question that asks for something (not yes or no, not a choice between alternatives the answer may repeat).
WH_QUESTION = re.compile(r"^\W*(what|which|who|whom|whose|when|where|how|why)\b", re.IGNORECASE)
# Words that carry no answer: articles, prepositions, auxiliaries and the question words. Narrower than
# text._STOP on purpose: "you", "all", "each", "not", "no", "here", "there", "it" (IT) are answers to who, which,
# how or where ("Which employees can work remotely?" → "All employees can work remotely [S1].").
_FILLER = word_set(
    "a an the of to in on at for with by from as into about is are was were be been being am do does did has have "
    "had can could will would should shall may might must that this these those what which who whom whose when "
    "where why how and"
)
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def _echo_words(text: str) -> set[str]:
    return {stem(w) for w in _WORD.findall(CITATION_RE.sub(" ", text).lower()) if w not in _FILLER}


def echoes_question(question: str, answer: str, claims: list[SentenceSupport]) -> bool:
    """Whether an answer with claims, to a wh-question, only restates the question: no word of it (list items and
    short sentences included) that the question does not already hold, articles, prepositions and auxiliaries
    aside. "What answer denotes that a solution has accepted an input string?" answered "The answer denotes that a
    solution has accepted an input string [S1]." gives nothing, and a support check passes it, since the passage
    holds the question's words (tune halves, 1.5B: 3 such answers to unanswerable questions, 1 wrong answer to an
    answerable one, no correct answer). A yes-or-no question ("Can contractors carry over leave?") and a choice
    ("simple or complex?") are answered in their own words, so they are not judged."""
    if not claims or not WH_QUESTION.search(question) or re.search(r"\bor\b", question, re.IGNORECASE):
        return False
    return not _echo_words(answer) - _echo_words(question)
