"""The data of bench.retrieval: the Vaswani collection, the document subset, IR metrics, the published reference.

The collection (11,429 abstracts, 93 queries, binary qrels "query 0 doc 1") is read in place from its folder and
never copied. Metrics use binary relevance: nDCG@k with gain 1 and log2 discount, Recall@k, MRR@k.
"""

import math
import random
import re
from dataclasses import dataclass
from pathlib import Path

_DOC = re.compile(r"<DOCNO>\s*(\d+)\s*</DOCNO>(.*?)</DOC>", re.S)
_QUERY = re.compile(r"<num>\s*(\d+)\s*</num>\s*<title>(.*?)</title>", re.S)
_METRIC_WORDS = re.compile(r"\b(ndcg|map|mrr|recall|precision|p@\d+|bm25)\b", re.I)


@dataclass(frozen=True)
class Collection:
    """Documents and queries by their numbers (as strings), and the relevant documents of each query."""

    docs: dict[str, str]
    queries: dict[str, str]
    qrels: dict[str, set[str]]
    readme: str


@dataclass(frozen=True)
class Subset:
    """The documents ingested and a sentence saying how they were chosen."""

    docs: list[str]
    description: str


def load_vaswani(folder: Path) -> Collection:
    """Read doc-text.trec, query-text.trec, qrels and UPSTREAM-README.md from the collection folder."""
    docs = {n: t.strip() for n, t in _DOC.findall((folder / "doc-text.trec").read_text())}
    queries = {n: " ".join(t.split()) for n, t in _QUERY.findall((folder / "query-text.trec").read_text())}
    qrels: dict[str, set[str]] = {}
    for line in (folder / "qrels").read_text().splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[3] != "0":
            qrels.setdefault(parts[0], set()).add(parts[2])
    readme = folder / "UPSTREAM-README.md"
    return Collection(docs, queries, qrels, readme.read_text() if readme.exists() else "")


def select_queries(coll: Collection, limit: int | None) -> list[str]:
    """The first `limit` queries (all when None) that have at least one relevant document, by number."""
    ordered = sorted((q for q in coll.queries if coll.qrels.get(q)), key=int)
    return ordered[:limit] if limit else ordered


def select_docs(coll: Collection, queries: list[str], limit: int, seed: int) -> Subset:
    """All documents when limit is 0 or covers them, else every relevant one plus a seeded random sample."""
    everything = sorted(coll.docs, key=int)
    if limit <= 0 or limit >= len(everything):
        return Subset(everything, f"the full collection: all {len(everything):,} documents")
    relevant = sorted({d for q in queries for d in coll.qrels[q] if d in coll.docs}, key=int)
    taken = set(relevant)
    others = [d for d in everything if d not in taken]
    extra = random.Random(seed).sample(others, max(0, limit - len(relevant)))
    chosen = sorted(set(relevant) | set(extra), key=int)
    return Subset(
        chosen,
        f"a subset of {len(chosen):,} of {len(everything):,} documents: all {len(relevant):,} judged relevant to "
        f"the {len(queries)} selected queries plus {len(extra):,} others drawn at random (seed {seed}); "
        "fewer distractors than the full collection, so scores are higher than on it",
    )


def doc_name(docno: str) -> str:
    """The file name a Vaswani document is ingested under."""
    return f"vaswani-{int(docno):05d}.txt"


def docno_of(name: str) -> str:
    """The document number back from its file name."""
    return str(int(name.removeprefix("vaswani-").removesuffix(".txt")))


def ndcg_at(ranked: list[str], relevant: set[str], k: int) -> float:
    """Binary-gain nDCG@k."""
    dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(ranked[:k]) if d in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(k, len(relevant))))
    return dcg / ideal if ideal else 0.0


def recall_at(ranked: list[str], relevant: set[str], k: int) -> float:
    """Share of the relevant documents found in the top k."""
    return len(set(ranked[:k]) & relevant) / len(relevant) if relevant else 0.0


def mrr_at(ranked: list[str], relevant: set[str], k: int) -> float:
    """Reciprocal rank of the first relevant document in the top k, else 0."""
    return next((1 / (i + 1) for i, d in enumerate(ranked[:k]) if d in relevant), 0.0)


def evaluate(runs: dict[str, list[str]], qrels: dict[str, set[str]], k: int = 10) -> dict[str, float]:
    """Mean nDCG@k, Recall@k and MRR@k over the queries of `runs` (ranked document numbers per query)."""
    n = len(runs) or 1
    return {
        f"ndcg@{k}": sum(ndcg_at(r, qrels[q], k) for q, r in runs.items()) / n,
        f"recall@{k}": sum(recall_at(r, qrels[q], k) for q, r in runs.items()) / n,
        f"mrr@{k}": sum(mrr_at(r, qrels[q], k) for q, r in runs.items()) / n,
    }


def published_reference(readme: str) -> str:
    """The reference scores the collection's README publishes, or a sentence saying it publishes none."""
    lines = [ln.strip() for ln in readme.splitlines() if _METRIC_WORDS.search(ln) and re.search(r"\d\.\d", ln)]
    if lines:
        return "UPSTREAM-README.md: " + " / ".join(lines)
    return "none: UPSTREAM-README.md only describes the collection and links its source, with no scores"
