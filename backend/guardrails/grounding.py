"""Is an answer grounded in the passages it cites? Per-sentence lexical support, optionally blended with embeddings.

For every answer sentence that makes a claim (three or more content words, or any number), support is the
share of its content words found in the cited passages ([S1] -> sources["S1"]; a sentence without a marker is
checked against all passages). With an ``embed`` callable, support is the mean of that share and the best cosine
similarity between the sentence and a cited passage. A sentence is supported when support >= GROUNDING_MIN_SUPPORT
and every number in it occurs in its passages. The answer is grounded when every claim is supported.
"""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from backend.guardrails.text import citations, content_words, numbers, split_code, split_sentences

GROUNDING_MIN_SUPPORT = 0.5
Embed = Callable[[list[str]], Sequence[Sequence[float]]]


@dataclass(frozen=True)
class SentenceSupport:
    """How well one answer sentence is supported by the passages it cites."""

    sentence: str
    cited: list[str]
    lexical: float
    semantic: float | None
    support: float
    missing_numbers: list[str]
    supported: bool


@dataclass(frozen=True)
class GroundingResult:
    """Verdict for a whole answer; confidence is the mean support of its claims (0 for a claim with a wrong number)."""

    grounded: bool
    confidence: float
    issues: list[str]
    unsupported_sentences: list[str]
    sentences: list[SentenceSupport] = field(default_factory=list)

    def as_dict(self) -> dict:
        """The node contract: {grounded, confidence, issues, unsupported_sentences}."""
        return {k: v for k, v in asdict(self).items() if k != "sentences"}


def check_grounding(
    answer: str, sources: Mapping[str, str], embed: Embed | None = None, min_support: float = GROUNDING_MIN_SUPPORT
) -> GroundingResult:
    """Check each claim of the answer against its cited passages (sources: {"S1": text, ...})."""
    passages = {key.strip("[]"): text for key, text in sources.items()}
    claims = [s for s in answer_sentences(answer) if len(content_words(s)) >= 3 or numbers(s)]
    if not claims:
        return GroundingResult(True, 1.0, [], [])
    if not passages:
        return GroundingResult(False, 0.0, ["no sources to check the answer against"], claims)
    semantic = _semantic_scores(claims, passages, embed) if embed else None
    issues: list[str] = []
    results = [_support(i, claim, passages, semantic, min_support, issues) for i, claim in enumerate(claims)]
    unsupported = [r.sentence for r in results if not r.supported]
    confidence = sum(0.0 if r.missing_numbers else r.support for r in results) / len(results)
    return GroundingResult(not unsupported, round(confidence, 3), issues, unsupported, results)


def answer_sentences(answer: str) -> list[str]:
    """Prose sentences of an answer (fenced code skipped)."""
    return [
        s for piece, code in split_code(answer) if not code for line in piece.split("\n") for s in split_sentences(line)
    ]


def _support(
    index: int,
    claim: str,
    passages: Mapping[str, str],
    semantic: list[dict[str, float]] | None,
    min_support: float,
    issues: list[str],
) -> SentenceSupport:
    """Support of one claim against its cited passages (all passages when it cites none)."""
    cited = citations(claim)
    unknown = [c for c in cited if c not in passages]
    if unknown:
        issues.append(f"sentence {index + 1} cites unknown source(s): {', '.join(unknown)}")
    keys = [c for c in cited if c in passages] or ([] if cited else list(passages))
    text = " ".join(passages[k] for k in keys)
    words = content_words(claim)
    lexical = len(words & content_words(text)) / len(words) if words else 1.0
    best = round(max((semantic[index][k] for k in keys), default=0.0), 3) if semantic is not None else None
    support = lexical if best is None else (lexical + max(best, 0.0)) / 2
    missing = sorted(numbers(claim) - numbers(text))
    if missing:
        issues.append(f"sentence {index + 1}: numbers not in its sources: {', '.join(missing)}")
    elif support < min_support:
        issues.append(f"sentence {index + 1}: support {support:.2f} below {min_support}")
    ok = bool(keys) and not missing and support >= min_support
    return SentenceSupport(claim, cited, round(lexical, 3), best, round(support, 3), missing, ok)


def _semantic_scores(claims: list[str], passages: Mapping[str, str], embed: Embed) -> list[dict[str, float]]:
    """Cosine similarity of every claim with every passage, from one embed() call."""
    keys = list(passages)
    vectors = np.asarray(embed(claims + [passages[k] for k in keys]), dtype=np.float32)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    sims = vectors[: len(claims)] @ vectors[len(claims) :].T
    return [{k: float(sims[i, j]) for j, k in enumerate(keys)} for i in range(len(claims))]
