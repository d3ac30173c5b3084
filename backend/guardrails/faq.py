"""Curated FAQ (data/faq.yaml) and a conservative matcher that answers only near-verbatim questions.

A question matches a variant when, after normalising (lower case, contractions and stop words removed, plural
and -ing/-ed endings stripped):
  * every remaining word of the question occurs in the variant and the variant's extra words (at most
    FAQ_MAX_EXTRA_WORDS) are generic question words ("what", "how", "long"...), or
  * the two normalised strings are nearly identical (difflib ratio >= FAQ_MIN_RATIO, which tolerates a typo);
and in both cases the words containing digits ("e4", "9", "14") are exactly the same.
So "What's the notice period?" matches "What is the notice period?", while "When does my notice period
start?" and "What is the notice period for contractors?" do not: a related but different question goes to the LLM.
"""

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from backend.contract.text import stem, word_set

FAQ_MAX_EXTRA_WORDS = 2
FAQ_MIN_RATIO = 0.92

_STOP = word_set(
    "a an the is are was were be been do does did i my me we our us you your to of in on at for with it "
    "its this that there please can could would should will shall just about tell know"
)
_GENERIC = word_set("what which how long much many often when where who")
_TOKEN = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class FaqEntry:
    """One curated answer with the question phrasings it answers and the documents it comes from."""

    id: str
    questions: tuple[str, ...]
    answer: str
    sources: tuple[str, ...] = ()


@dataclass(frozen=True)
class FaqMatch:
    """A confident match: the entry, the variant it matched and a similarity in 0..1."""

    entry: FaqEntry
    question: str
    score: float


def parse_faq(text: str) -> list[FaqEntry]:
    """Entries from FAQ YAML text (a list of {id, questions, answer, sources?}); raises ValueError when malformed."""
    try:
        data = yaml.safe_load(text) or []
    except yaml.YAMLError as exc:
        raise ValueError(f"FAQ is not valid YAML: {exc}") from exc
    if not isinstance(data, list):
        raise ValueError("FAQ must be a YAML list of entries")
    entries = []
    for i, item in enumerate(data):
        if not isinstance(item, dict) or not item.get("questions") or not item.get("answer"):
            raise ValueError(f"FAQ entry {i} needs questions and an answer")
        questions = tuple(str(q) for q in item["questions"])
        entries.append(
            FaqEntry(
                str(item.get("id", i)),
                questions,
                str(item["answer"]).strip(),
                tuple(str(s) for s in item.get("sources") or ()),
            )
        )
    return entries


def load_faq(path: Path) -> list[FaqEntry]:
    """Entries from a FAQ YAML file."""
    return parse_faq(path.read_text(encoding="utf-8"))


def match_faq(question: str, faq: Sequence[FaqEntry]) -> FaqMatch | None:
    """The best confident match for the question, or None when no variant is close enough."""
    words = normalise(question)
    if not words:
        return None
    best: FaqMatch | None = None
    for entry in faq:
        for variant in entry.questions:
            score = _confident_score(words, normalise(variant))
            if score is not None and (best is None or score > best.score):
                best = FaqMatch(entry, variant, score)
    return best


def normalise(text: str) -> list[str]:
    """Content words of a question: lower case, no contractions or stop words, crude stemming."""
    text = re.sub(r"'(s|re|ve|ll|d|m)\b", "", text.lower().replace("\u2019", "'"))
    return [stem(t) for t in _TOKEN.findall(text) if t not in _STOP]


def _confident_score(question: list[str], variant: list[str]) -> float | None:
    """Similarity when the confident-match rule holds, else None."""
    q, v = set(question), set(variant)
    if {w for w in q if any(c.isdigit() for c in w)} != {w for w in v if any(c.isdigit() for c in w)}:
        return None
    f1 = 2 * len(q & v) / (len(q) + len(v))
    if q <= v and len(v - q) <= FAQ_MAX_EXTRA_WORDS and v - q <= _GENERIC:
        return f1
    matcher = difflib.SequenceMatcher(None, " ".join(question), " ".join(variant))
    if matcher.real_quick_ratio() < FAQ_MIN_RATIO or matcher.quick_ratio() < FAQ_MIN_RATIO:
        return None  # cheap upper bounds first
    ratio = matcher.ratio()
    return ratio if ratio >= FAQ_MIN_RATIO else None
