"""Is each claim of an answer supported, and by which passage? Per-sentence support against every passage given.

A claim is an answer sentence with three or more content words or any fact (number, date, code, name) that is
not the answer saying it found nothing. Its support by a passage is the mean of lexical coverage (share of its
content words in the passage) and semantic similarity (best cosine between the claim and a sentence of the
passage, with an ``embed`` callable). A passage supports a claim when support >= ``min_support`` and every fact
of the claim occurs in it exactly ("3 months" is not supported by "2 months"). The claim's best passage is the
supporting one with the highest support. Citation repair (repair.py) acts on these verdicts.
"""

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from backend.contract.citations import CITATION_PATTERN, CITATION_RE, SAYING_VERB, group_ids
from backend.contract.text import content_words, named_documents, stem, word_set
from backend.guardrails.text import citations, is_check_note, numbers, split_code, split_sentences

GROUNDING_MIN_SUPPORT = 0.5
Embed = Callable[[list[str]], Sequence[Sequence[float]]]
_CODE = re.compile(
    r"\b(?=[A-Za-z0-9-]*\d)(?=[A-Za-z0-9-]*[A-Za-z])[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+\b|\b[A-Z]+\d+[A-Z]*\b"
)
NAME = re.compile(r"(?<![.!?]\s)(?<!^)(?<!-)\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*\b(?!-)")
# Says the documents do not hold the answer. The phrases in NOT_FOUND_RE say so whatever their subject; those in
# NOT_FOUND_WEAK_RE count only when said of the documents ("the documents do not cover it"): of anything else they
# state a fact ("The warranty does not cover damage caused by power surges [S1]", "Breakfast is not included"),
# which a tester saw read as the model finding nothing: a correct answer replaced by the not-found reply.
NOT_FOUND_RE = re.compile(
    r"\b(not (mentioned|specified|stated|found|described)"
    r"|no (information|mention|details?|data)|(does|do|did)( not|n't) (say|mention|specify|state|describe)"
    r"|not in the (provided )?(documents?|knowledge base|sources?|context|passages?)"
    r"|(can ?not|could ?n[o']t|unable to) (find|locate|determine)"
    r"|no documents? (in the knowledge base )?match(ed|es)?)\b",
    re.IGNORECASE,
)
_DOCS = r"(documents?|sources?|passages?|context|knowledge base|text|excerpts?)"
NOT_FOUND_WEAK_RE = re.compile(
    rf"\b{_DOCS}( provided| given)? (do|does|did)( not|n't) (contain|provide|include|cover|list|address)\b"
    rf"|\bnot (provided|included|covered|listed|available|given|addressed) (in|by) the (provided |given )?{_DOCS}\b"
    r"|\b(information|details?) (about|on|regarding) .{0,80}?\b(is|are) not (provided|included|available|given)\b",
    re.IGNORECASE,
)


def says_not_found(text: str) -> bool:
    """Whether the text says the documents do not hold the answer (not a negative fact from them)."""
    return bool(NOT_FOUND_RE.search(text) or NOT_FOUND_WEAK_RE.search(text))


_LIST_MARK = re.compile(r"^\s*(?:[-*+•]|\d+[.)]|#+)\s+|\*\*|__")


def _numbers_and_codes(text: str) -> set[str]:
    return set(numbers(text)) | {m.group(0).lower() for m in _CODE.finditer(text)}


def figures(sentence: str) -> set[str]:
    """The numbers and codes of a sentence (not its names), list markers and emphasis left out ("1. Check …")."""
    return _numbers_and_codes(_LIST_MARK.sub(" ", CITATION_RE.sub(" ", sentence)))


def facts(sentence: str) -> set[str]:
    """Numbers, codes (Zephyr-9, R-410A, E7) and names (not sentence-initial) a passage must contain verbatim; a
    list item's number is not one ("6. Write the date in the log." restates the document's step 5)."""
    sentence = _LIST_MARK.sub(" ", CITATION_RE.sub(" ", sentence))
    return _numbers_and_codes(sentence) | {m.group(0).lower() for m in NAME.finditer(sentence.strip())}


def has_fact(passage_lower: str, passage_numbers: set[str], fact: str) -> bool:
    """Whether a fact occurs in a passage (numbers compared as numbers, names and codes as lower-case words)."""
    if fact in passage_numbers:
        return True
    return re.search(rf"(?<![\w-]){re.escape(fact)}(?![\w-])", passage_lower) is not None


@dataclass(frozen=True)
class SentenceSupport:
    """One answer sentence: where it is, what it cites, and how well each passage supports it."""

    sentence: str
    start: int
    end: int
    cited: list[str]
    claim: bool
    not_found: bool  # the sentence says the documents do not have the answer
    support: dict[str, float] = field(default_factory=dict)  # passage id -> support (0 when a fact is missing)
    best: str | None = None  # the best supporting passage, if any passage supports it
    missing_facts: list[str] = field(default_factory=list)  # facts no passage contains
    named: list[str] = field(default_factory=list)  # documents the sentence names, whose passages alone may support it

    @property
    def supported(self) -> bool:
        """A claim some passage supports (non-claims count as supported)."""
        return not self.claim or self.best is not None


@dataclass(frozen=True)
class GroundingResult:
    """Verdict for a whole answer; confidence is the mean best support of its claims."""

    grounded: bool
    confidence: float
    issues: list[str]
    unsupported_sentences: list[str]
    sentences: list[SentenceSupport] = field(default_factory=list)

    def as_dict(self) -> dict:
        """The node contract: {grounded, confidence, issues, unsupported_sentences}."""
        return {k: v for k, v in asdict(self).items() if k != "sentences"}

    @property
    def claims(self) -> list[SentenceSupport]:
        """The sentences that state something."""
        return [s for s in self.sentences if s.claim]


def answer_spans(answer: str) -> list[tuple[str, int, int]]:
    """Prose sentences of an answer with their character spans (fenced code skipped)."""
    out, offset = [], 0
    for piece, code in split_code(answer):
        if not code:
            cursor = 0
            for sentence in (s for line in piece.split("\n") for s in split_sentences(line)):
                at = piece.find(sentence, cursor)
                out.append((sentence, offset + at, offset + at + len(sentence)))
                cursor = at + len(sentence)
        offset += len(piece)
    return out


def check_grounding(
    answer: str,
    sources: Mapping[str, str],
    embed: Embed | None = None,
    min_support: float = GROUNDING_MIN_SUPPORT,
    question: str = "",
    documents: Mapping[str, str] | None = None,
    names: Sequence[str] = (),
    openings: Mapping[str, str] | None = None,
) -> GroundingResult:
    """Check each claim of the answer against every passage (sources: {"S1": text, ...}).

    A short claim ("6 months.") is read with the question it answers, so that it is matched with the passage
    about the same thing; its facts must still be in that passage. With `documents` (passage id → its document's
    name), a claim that names documents ("The travel policy states that laptops must be encrypted") is supported
    only by their passages, not by another document's; `names` are every document a claim may name (by default
    those of the passages), so one that names a document none of the passages comes from is supported by none.
    `openings` (passage id → the opening of its document) may hold a claim's names, not its numbers or codes:
    "Six charging bays are reserved … at Lindenhof [S1]" names the site that the policy's first line is about.
    """
    passages = {key.strip("[]"): text for key, text in sources.items()}
    spans = answer_spans(answer)
    kinds = [(claim_kind(s)) for s, _, _ in spans]
    claim_texts = [with_context(s, question) for (s, _, _), (claim, _) in zip(spans, kinds, strict=True) if claim]
    semantic = _semantic(claim_texts, passages, embed) if embed and claim_texts and passages else None
    results, n = [], 0
    for (sentence, start, end), (claim, not_found) in zip(spans, kinds, strict=True):
        row = semantic[n] if semantic is not None and claim else None
        n += claim
        words = content_words(with_context(sentence, question))
        result = _sentence(sentence, start, end, claim, not_found, passages, row, min_support, words, openings or {})
        results.append(attributed(result, documents, names, min_support) if documents else result)
    return _verdict(results, passages)


# A sentence that attributes what it states to a document: "The travel policy states …", "According to the handbook".
SAYS_RE = re.compile(
    r"\b(according to|as per|states?|says?|explains?|mentions?|specif(y|ies)|requires?|notes?|lists?|describes?|"
    r"sets? out|stipulates?)\b",
    re.IGNORECASE,
)


# A marker opening its sentence as the subject of a verb of saying ("[S4] states that taxis …"): the sentence
# attributes what it says to that passage's document, which citation repair then writes out by name.
SUBJECT_MARKER = re.compile(rf"^\s*{CITATION_PATTERN}(?=\s+{SAYING_VERB})")


def attributed(
    result: SentenceSupport, documents: Mapping[str, str], names: Sequence[str], min_support: float
) -> SentenceSupport:
    """A claim that names documents, supported only by their passages (tester, 1.5B: "The travel policy states
    that company laptops must use full-disk encryption [S1]", S1 being the IT security policy's, was grounded)."""
    known = sorted({*names, *documents.values()})
    says = result.claim and SAYS_RE.search(result.sentence)  # "see the service manual" quotes, not attributes
    named = named_documents(result.sentence, known) if says else []
    if says and (subject := SUBJECT_MARKER.match(result.sentence)):  # "[S4] states that …": S4's document says it
        named += [documents[i] for i in group_ids(subject.group(1)) if i in documents and documents[i] not in named]
    if not named:
        return result
    support = {pid: (v if documents.get(pid) in named else 0.0) for pid, v in result.support.items()}
    best = max(support, key=lambda k: support[k], default=None)
    best = best if best is not None and support[best] >= min_support else None
    return replace(result, support=support, best=best, named=named)


SHORT_CLAIM_WORDS = 5


def with_context(sentence: str, question: str) -> str:
    """The sentence, preceded by the question when the sentence is too short to stand on its own."""
    return f"{question} {sentence}" if question and len(content_words(sentence)) < SHORT_CLAIM_WORDS else sentence


# Words that speak of the answer and its sources, not of the documents' subject. A sentence made only of these that
# refers to the reply itself (ANSWER_ITSELF) and lays down no rule ("Yes, my answer is supported by the sources.",
# the opening of a reply to "Are you sure?") states nothing a passage could hold: read as a claim, it was underlined
# as not in the sources and halved the answer's grounded score (tester). "Supporting documents must be provided."
# is a rule, and a claim.
META_WORDS = frozenset(
    stem(w)
    for w in word_set(
        "answer answers answered source sources document documents passage passages context supported support "
        "supports confirmed confirm confirms correct accurate true sure certain indeed stand stands previous "
        "earlier above based my me am say says said stated"
    )
)
ANSWER_ITSELF = re.compile(r"^\W*(yes|no)\b|\b(my|i|previous|earlier)\b|\banswer", re.IGNORECASE)
_RULE = re.compile(r"\b(must|should|shall|may|need|needs|required?)\b", re.IGNORECASE)


def about_the_answer(sentence: str, words: set[str]) -> bool:
    """A sentence that only says the reply is right or sourced: words from META_WORDS, a reference to the reply."""
    return words <= META_WORDS and bool(ANSWER_ITSELF.search(sentence)) and not _RULE.search(sentence)


def claim_kind(sentence: str) -> tuple[bool, bool]:
    """(is a claim, says nothing was found): a not-found statement is never a claim, nor a sentence that only says
    the reply is right or sourced."""
    if is_check_note(sentence):  # the checks' own words ("Another document gives a different figure for …"), which a
        return False, False  # model may repeat from the history
    not_found = says_not_found(sentence)
    words, found = content_words(sentence), facts(sentence)
    stated = len(words) >= 3 or bool(found)  # "F7 [S1]." states a code
    return stated and not not_found and not (not found and about_the_answer(sentence, words)), not_found


def _sentence(
    sentence: str,
    start: int,
    end: int,
    claim: bool,
    not_found: bool,
    passages: Mapping[str, str],
    semantic: Mapping[str, float] | None,
    min_support: float,
    words: set[str],
    openings: Mapping[str, str],
) -> SentenceSupport:
    cited = citations(sentence)
    if not claim:
        return SentenceSupport(sentence, start, end, cited, claim, not_found)
    needed = facts(sentence)
    names = needed - figures(sentence)
    support: dict[str, float] = {}
    present: set[str] = set()
    for pid, text in passages.items():
        lower, nums, opening = text.lower(), numbers(text), openings.get(pid, "").lower()
        found = {f for f in needed if has_fact(lower, nums, f) or f in names and has_fact(opening, set(), f)}
        present |= found
        lexical = len(words & content_words(text)) / len(words) if words else 1.0
        score = lexical if semantic is None else (lexical + max(semantic.get(pid, 0.0), 0.0)) / 2
        support[pid] = round(score, 3) if found == needed else 0.0
    best = max(support, key=lambda k: support[k], default=None)
    best = best if best is not None and support[best] >= min_support else None
    missing = sorted(needed - present)
    return SentenceSupport(sentence, start, end, cited, claim, not_found, support, best, missing)


def _verdict(results: list[SentenceSupport], passages: Mapping[str, str]) -> GroundingResult:
    claims = [r for r in results if r.claim]
    if not claims:
        return GroundingResult(True, 1.0, [], [], results)
    if not passages:
        return GroundingResult(False, 0.0, ["no sources to check the answer against"], [c.sentence for c in claims])
    issues = []
    for i, r in enumerate(results, start=1):
        if r.claim and r.missing_facts:
            issues.append(f"sentence {i}: not in any source: {', '.join(r.missing_facts)}")
        elif r.claim and r.best is None and r.named:
            issues.append(f"sentence {i}: no passage of {', '.join(r.named)}, which it names, supports it")
        elif r.claim and r.best is None:
            issues.append(f"sentence {i}: no source supports it")
        if unknown := [c for c in r.cited if c not in passages]:
            issues.append(f"sentence {i} cites unknown source(s): {', '.join(unknown)}")
    unsupported = [r.sentence for r in claims if r.best is None]
    confidence = sum(max(r.support.values(), default=0.0) for r in claims) / len(claims)
    return GroundingResult(not unsupported, round(confidence, 3), issues, unsupported, results)


def passage_sentences(text: str) -> list[str]:
    """The sentences of a passage (lines and sentence ends)."""
    return [s for line in text.split("\n") for s in split_sentences(line) if len(s) > 3]


def cosines(texts: list[str], others: list[str], embed: Embed) -> np.ndarray:
    """The cosine of each text (rows) with each other text (columns), from one embed() call."""
    vectors = np.asarray(embed(texts + others), dtype=np.float32)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    return vectors[: len(texts)] @ vectors[len(texts) :].T


def _semantic(claims: list[str], passages: Mapping[str, str], embed: Embed) -> list[dict[str, float]]:
    """Best cosine between each claim and any sentence of each passage, from one embed() call."""
    keys = list(passages)
    pieces = {k: passage_sentences(passages[k]) or [passages[k]] for k in keys}
    sims = cosines(claims, [s for k in keys for s in pieces[k]], embed)
    out: list[dict[str, float]] = [{} for _ in claims]
    col = 0
    for k in keys:
        width = len(pieces[k])
        for i in range(len(claims)):
            out[i][k] = float(sims[i, col : col + width].max())
        col += width
    return out
