"""Helpers of scripts/bench_retrieval.py: the Vaswani collection, the document subset, IR metrics, the report.

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


def percentile(values: list[float], p: float) -> float:
    """The p-th percentile (0..100) with linear interpolation; NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * p / 100
    low, high = math.floor(pos), math.ceil(pos)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def published_reference(readme: str) -> str:
    """The reference scores the collection's README publishes, or a sentence saying it publishes none."""
    lines = [ln.strip() for ln in readme.splitlines() if _METRIC_WORDS.search(ln) and re.search(r"\d\.\d", ln)]
    if lines:
        return "UPSTREAM-README.md: " + " / ".join(lines)
    return "none: UPSTREAM-README.md only describes the collection and links its source, with no scores"


def markdown(results: dict) -> str:
    """The paste-ready report: setup, ingestion, quality and latency tables, and the published reference."""
    s, ing, qual = results["setup"], results["ingestion"], results["quality"]
    lines = [
        "## Retrieval benchmark: Vaswani collection",
        "",
        f"`{s['command']}`: {s['subset']}; {s['queries']} queries; chunk target "
        f"{s['chunk_target_tokens']} tokens, {s['candidates']} candidates per list. Shared machine, load "
        f"{s['load_start']} at start and {s['load_end']} at the end: absolute figures are noisy, compare the "
        "ratios measured side by side in this run.",
        "",
        *_ingestion_table(ing),
        "",
        *_quality_table(qual),
        "",
        *_latency_table(results["latency"]),
        "",
        f"Published reference: {results['reference']}.",
    ]
    return "\n".join(lines)


def _ingestion_table(ing: dict) -> list[str]:
    shares = ", ".join(f"{k} {v:.0%}" for k, v in ing["share_of_ingest_time"].items())
    blocks = ing["ratio_per_block"]
    return [
        "| documents | chunks | ingest time | ingest chunks/s | raw embedder chunks/s (slices of 32) | ingest / raw |",
        "|---:|---:|---:|---:|---:|---:|",
        f"| {ing['documents']:,} | {ing['chunks']:,} | {ing['seconds']:.0f} s | {ing['chunks_per_s']:.1f} | "
        f"{ing['raw_embed_chunks_per_s']:.1f} | {ing['ratio_ingest_to_raw']:.2f} "
        f"(blocks {blocks['min']:.2f}-{blocks['max']:.2f}) |",
        "",
        "Ingestion is one `Ingestor.ingest` per document (as `scripts/ingest` does) into KnowledgeBase's index and "
        f"on-disk Chroma; its time went to: {shares}. Side by side in {blocks['blocks']} blocks of up to 250 "
        "documents, each block's chunk texts also went through `OfflineMiniLM` directly, in consecutive slices "
        "of 32 (the ratio) and in one call, which sorts them by length so batches pad less: "
        f"{ing['raw_embed_chunks_per_s_length_sorted']:.1f} chunks/s. {ing['multi_chunk_documents']} documents are "
        f"longer than one chunk (up to {ing['max_chunks_per_document']} chunks); all others are exactly one.",
    ]


def _quality_table(qual: dict) -> list[str]:
    g = qual["gating"]
    rows = [
        f"| {r['pipeline']} | {r['ndcg@10']:.4f} | {r['recall@10']:.4f} | {r['mrr@10']:.4f} | "
        f"{r['run_p50_ms']:.1f} | {r['same_top10_as_vector']} | {r['empty']} |"
        for r in qual["pipelines"]
    ]
    flash = f"FlashRank skipped: {qual['flashrank_skipped']}." if qual["flashrank_skipped"] else ""
    near = g["nearest_distance"]
    return [
        "| pipeline | nDCG@10 | Recall@10 | MRR@10 | run() p50 ms | same top 10 as vector | no results |",
        "|---|---:|---:|---:|---:|---:|---:|",
        *rows,
        "",
        "Document level: `HybridRetriever.run` asks for as many results as candidates, with an unlimited token "
        "budget, `neighbor_window=0` (a neighbour is only another chunk of the same abstract) and "
        "`max_distance=2.0` so the relevance gate hides nothing; results are deduplicated by document keeping rank "
        "order and cut at 10. run() p50 is in-process with query vectors already cached. 'Same top 10 as vector' "
        "counts queries whose ten documents, in order, equal vector search's. " + flash,
        "",
        f"Relevance gate at the product default `RAG_RELEVANCE_MAX_DISTANCE={g['max_distance']}`: {g['gated']} of "
        f"{g['queries']} queries would get no sources (nearest chunk distance min {near['min']:.3f}, median "
        f"{near['p50']:.3f}, max {near['max']:.3f}). Router probe: {g['router_rag']} queries within "
        f"{g['router_rag_distance']} (documents path), {g['router_chat']} beyond {g['router_chat_distance']} (chat).",
    ]


def _latency_table(rows: list[dict]) -> list[str]:
    body = [
        f"| {r['reranker']} | {r['pass']} | {r['p50_ms']:.1f} | {r['p95_ms']:.1f} | {r['vector_p50_ms']:.1f} | "
        f"{r['bm25_p50_ms']:.1f} | {r['expand_p50_ms']:.1f} | {r['rerank_p50_ms']:.1f} | {r['empty']} |"
        for r in rows
    ]
    return [
        "| `/api/search` reranker | query cache | p50 ms | p95 ms | vector p50 | bm25 p50 | expand p50 | "
        "rerank p50 | empty |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
        *body,
        "",
        "POST /api/search {query, k: 10} on the real app (`create_app`, fake chat model, product defaults: "
        "neighbour window 1, relevance gate on) in-process through httpx.ASGITransport, one request at a time; the "
        "apps share the data dir and are called alternately query by query, after one untimed warm-up request each. "
        "Cold: each query's first request (its vector not cached); warm: the same queries again. Stage columns are "
        "the endpoint's own timings (ms); "
        "'empty' counts gated queries, which skip expand and rerank.",
    ]
