"""Prompt-injection and jailbreak detection by weighted patterns, for user messages and document chunks.

Each rule that fires adds a weight w; the score is the noisy-OR 1 - prod(1 - w) and a text is flagged
at INJECTION_THRESHOLD. Rules that need two cues (for example an insertion verb *and* "your response")
are evaluated per sentence. ``source="document"`` is for retrieved or ingested text: there, any request
addressed to an assistant (a translation order, an off-topic task) is hostile, while the same words typed by
the user are an ordinary request.

User messages: the rules are joined by two classifiers trained on public jailbreak and benign user prompts
(classifier.py), one over the text's n-grams and, when the caller passes the message's MiniLM vector, one over
that vector. When a probability reaches its model's own threshold it adds a hit scaled so that threshold lands
on INJECTION_THRESHOLD, so a message is flagged when the rules or either classifier say so.
Documents are scanned by the rules alone: the classifier never saw document text, and it flags 2-6% of clean
chunks (bench.guardrails).
"""

import base64
import binascii
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from backend.contract.text import content_words
from backend.guardrails.caseless import fold
from backend.guardrails.classifier import judged_by_embedding, load_embedding_model, load_model
from backend.guardrails.injection_patterns import (
    DIRECTIVE,
    LANGUAGE_SWITCH,
    MULTILINGUAL_RULES,
    ROLE_LABEL,
    SCRIPT_RULES,
    SCRIPTS,
    SENTENCE_RULES,
    TASK_REQUEST,
    TEXT_RULES,
    Kind,
    rx,
)

INJECTION_THRESHOLD = 0.5
Source = Literal["user", "document"]


@dataclass(frozen=True)
class InjectionResult:
    """Score in 0..1, flagged when score >= INJECTION_THRESHOLD, names of the rules that fired."""

    score: float
    flagged: bool
    reasons: list[str] = field(default_factory=list)
    kind: Kind | None = None  # the kind of the strongest rule, for per-category policies


_TEXT_RULES = tuple(
    (name, kind, weight, rx(pattern)) for name, kind, weight, pattern in TEXT_RULES + MULTILINGUAL_RULES
)
_SCRIPTS = {name: re.compile(letters) for name, letters in SCRIPTS.items()}
_ANY_SCRIPT = re.compile("|".join(SCRIPTS.values()))
_SCRIPT_RULES = tuple((name, kind, weight, script, rx(pattern)) for name, kind, weight, script, pattern in SCRIPT_RULES)
_SENTENCE_RULES = tuple((name, weight, tuple(rx(p) for p in cues)) for name, weight, cues in SENTENCE_RULES)
_LANGUAGE_SWITCH = tuple(tuple(rx(p) for p in cues) for cues in LANGUAGE_SWITCH)
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n\s*\n|\n(?=\s*[A-Z0-9*#>|\-\u2022])")  # hard-wrapped lines stay joined
_BLOB = re.compile(r"[A-Za-z0-9+/]{40,}={0,2}")
_SPACED = re.compile(r"(?<!\S)(?:[^\W\d_] ){2,}[^\W\d_](?!\S)")  # 3+ letters, each alone between spaces
_LEET_WORD = re.compile(r"(?<![\w@$])(?=[\w@$]*[^\W\d_])(?=[\w@$]*[013457@$])[\w@$]{3,}")  # letters and leet marks
_LEET = str.maketrans("013457@$", "oieastas")
_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"))
_ZERO_WIDTH.update(dict.fromkeys(range(0x064B, 0x0660)))  # Arabic short vowels: "تجاهلْ" reads as "تجاهل"


@dataclass(frozen=True)
class _Hit:
    weight: float
    kind: Kind
    names: tuple[str, ...]


def score_injection(
    text: str, source: Source = "user", classifier: bool = True, vector: Sequence[float] | None = None
) -> InjectionResult:
    """Score a user message (source="user", rules and classifiers) or a document chunk (source="document", rules).

    vector: the message's all-MiniLM-L6-v2 embedding, for the embedding classifier (skipped without it, and for
    messages under EMBEDDING_MIN_WORDS words)."""
    normal = _normalise(text)
    hits: dict[str, _Hit] = {}
    if classifier and source == "user":
        model = load_model()
        _keep(hits, "classifier", _classifier_hit(model.probability(normal), model.threshold_for(normal), "classifier"))
        if vector is not None and judged_by_embedding(normal):
            network = load_embedding_model()
            probability = network.probability(vector)
            _keep(hits, "embedding", _classifier_hit(probability, network.threshold, "embedding_classifier"))
    _scan(normal, source, hits)
    plain = _deobfuscate(normal)
    if plain != normal:  # leetspeak or letters spaced apart: the rules read it as written plainly, once per rule
        seen = {k: h.weight for k, h in hits.items()}
        _scan(plain, source, hits)
        if any(h.weight > seen.get(k, 0.0) for k, h in hits.items()):
            _keep(hits, "obfuscated", _Hit(0.0, "injection", ("obfuscated",)))
    for decoded in _decoded_blobs(text):
        inner = score_injection(decoded, source, classifier)
        _keep(
            hits, "encoded", _Hit(max(0.4, inner.score), inner.kind or "injection", ("encoded_payload", *inner.reasons))
        )
    return _result(hits)


def _scan(normal: str, source: Source, hits: dict[str, _Hit]) -> None:
    """The rules over the whole text and per sentence, kept in hits by rule."""
    for name, weight, kind in _text_hits(normal, fold(normal)):
        _keep(hits, name, _Hit(weight, kind, (name,)))
    sentences = [(s, fold(s)) for s in _SENTENCE_SPLIT.split(normal) if s.strip()]
    for sentence, folded in sentences:
        _keep(hits, "sentence", _sentence_hit(sentence, folded, source))
    if source == "document" and _offtopic_task(sentences):
        _keep(hits, "task", _Hit(0.55, "injection", ("offtopic_task_in_document",)))


def _classifier_hit(probability: float, threshold: float, name: str) -> _Hit | None:
    """A classifier's verdict as a hit, its threshold mapped onto INJECTION_THRESHOLD; None below it."""
    if probability < threshold:
        return None
    weight = INJECTION_THRESHOLD + (1 - INJECTION_THRESHOLD) * (probability - threshold) / (1 - threshold)
    return _Hit(weight, "injection", (name,))


def _keep(hits: dict[str, _Hit], key: str, hit: _Hit | None) -> None:
    """Keep the strongest hit per key."""
    if hit is not None and (key not in hits or hit.weight > hits[key].weight):
        hits[key] = hit


def _normalise(text: str) -> str:
    """NFKC, no zero-width characters, straight quotes."""
    text = unicodedata.normalize("NFKC", text).translate(_ZERO_WIDTH)
    return text.replace("\u2019", "'").replace("\u2018", "'")


def _text_hits(text: str, folded: str) -> list[tuple[str, float, Kind]]:
    """Single-pattern rules over the whole text (and its folded copy), plus role labels followed by an order."""
    hits: list[tuple[str, float, Kind]] = [(n, w, k) for n, k, w, pattern in _TEXT_RULES if pattern.found(text, folded)]
    scripts = (
        {name for name, letters in _SCRIPTS.items() if letters.search(text)} if _ANY_SCRIPT.search(text) else set()
    )
    hits += [(n, w, k) for n, k, w, script, pattern in _SCRIPT_RULES
             if (script is None or script in scripts) and pattern.found(text, folded)]  # fmt: skip
    for m in ROLE_LABEL.finditer(text, folded):
        directive = DIRECTIVE.match(m.group(4), fold(m.group(4)))
        hits.append(("role_label_directive", 0.8, "injection") if directive else ("role_label", 0.3, "injection"))
    return hits


def _sentence_hit(sentence: str, folded: str, source: Source) -> _Hit | None:
    """Rules that need several cues inside one sentence (and its folded copy), combined by noisy-OR into one hit."""
    fired = [(n, w) for n, w, cues in _SENTENCE_RULES if all(p.found(sentence, folded) for p in cues)]
    if any(all(p.found(sentence, folded) for p in cues) for cues in _LANGUAGE_SWITCH):
        fired.append(("output_language_switch", 0.75 if source == "document" else 0.3))
    if not fired:
        return None
    return _Hit(_noisy_or(w for _, w in fired), "injection", tuple(n for n, _ in fired))


def _offtopic_task(sentences: list[tuple[str, str]]) -> bool:
    """True when a document holds a request to an assistant sharing almost no content words with the rest
    (sentences: each with its folded copy)."""
    plain = [sentence for sentence, _ in sentences]
    for i, (sentence, folded) in enumerate(sentences):
        if not TASK_REQUEST.search(sentence, folded):
            continue
        words = content_words(sentence)
        rest = content_words(" ".join(plain[:i] + plain[i + 1 :]))
        if rest and len(words & rest) <= 0.15 * max(1, len(words)):
            return True
    return False


def _decoded_blobs(text: str) -> list[str]:
    """Printable text hidden in base64 runs of 40+ characters."""
    out = []
    for blob in _BLOB.findall(text):
        try:
            decoded = base64.b64decode(blob + "=" * (-len(blob) % 4), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            continue
        if decoded.isprintable() and sum(c.isalpha() or c == " " for c in decoded) > 0.8 * len(decoded):
            out.append(decoded)
    return out


def _deobfuscate(text: str) -> str:
    """Words written in leetspeak ("1gn0r3") or letter by letter ("i g n o r e") as plain words."""
    text = _SPACED.sub(lambda m: m.group().replace(" ", ""), text)
    return _LEET_WORD.sub(lambda m: m.group().translate(_LEET), text)


def _noisy_or(weights: Iterable[float]) -> float:
    """1 - prod(1 - w)."""
    remaining = 1.0
    for weight in weights:
        remaining *= 1 - weight
    return 1 - remaining


def _result(hits: dict[str, _Hit]) -> InjectionResult:
    """Noisy-OR of the hits; reasons strongest first; kind of the strongest hit."""
    ordered = sorted(hits.values(), key=lambda h: -h.weight)
    score = round(_noisy_or(h.weight for h in ordered), 4)
    reasons = list(dict.fromkeys(name for h in ordered for name in h.names))
    return InjectionResult(score, score >= INJECTION_THRESHOLD, reasons, ordered[0].kind if ordered else None)
