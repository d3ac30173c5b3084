#!/usr/bin/env python3
"""Benchmark retrieval on the Vaswani collection: ingestion throughput, quality per pipeline, /api/search latency.

    .venv/bin/python scripts/bench_retrieval.py [--limit-docs N] [--queries N] [--json out.json] [--data-dir DIR]

--data-dir is the Vaswani folder (default ../shared/datasets/vaswani from the repo root), read in place.
--limit-docs 0 ingests all 11,429 abstracts; the default (3000) ingests every document judged relevant to the
selected queries plus a seeded random sample, because one-by-one ingestion of the whole collection takes about
twenty minutes on two busy cores. Everything runs on a fresh Ragline data dir (a temp folder, removed afterwards):
1. Ingestion through the real Ingestor (KnowledgeBase's index, on-disk Chroma, OfflineMiniLM), one document at a
   time as the CLI does, vs the same embedder called directly on the same chunk texts in slices of 32; both run
   block by block (250 documents) in rotating order, so they see the same machine load.
2. Quality at document level for BM25, vector, hybrid, hybrid + embedding-cosine rerank (and FlashRank when its
   model folder exists), and how many queries the product's relevance gate would answer with nothing.
3. POST /api/search latency through the real app (fake chat model) with the embedding reranker and with none,
   interleaved query by query so machine noise hits both alike.
Goals are reported, never enforced: the script exits 0 whatever the figures are.
"""

import argparse
import asyncio
import json
import logging
import math
import os
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
from asgi_lifespan import LifespanManager
from bench_retrieval_data import (
    Collection,
    Subset,
    doc_name,
    docno_of,
    evaluate,
    load_vaswani,
    markdown,
    percentile,
    published_reference,
    select_docs,
    select_queries,
)

from backend.main import create_app
from backend.rag.embeddings import OfflineMiniLM, ensure_onnx_files
from backend.rag.ingestion import EMBED_BATCH, Ingestor
from backend.rag.knowledge import KnowledgeBase
from backend.rag.rerank import EmbeddingReranker, FlashRankReranker, FusionOrder, Reranker
from backend.rag.search import HybridRetriever, SearchConfig
from backend.rag.store import open_client, open_collection
from backend.settings import Settings

REPO = Path(__file__).resolve().parent.parent
EMBED_MODEL = "all-MiniLM-L6-v2"
NO_BUDGET = 10**9  # token budget large enough that trimming never drops a result
K = 10
BLOCK = 250  # documents ingested, then embedded bare, per side-by-side measurement


class Stopwatch:
    """Seconds spent per label by wrapped callables."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    def wrap(self, label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        """`fn` with its time added to `label`."""

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[label] += time.perf_counter() - start

        return timed


class TimedCollection:
    """The Chroma collection with add and delete timed; everything else passes through."""

    def __init__(self, collection: Any, watch: Stopwatch) -> None:
        self._collection = collection
        self.add = watch.wrap("chroma add", collection.add)
        self.delete = watch.wrap("chroma delete", collection.delete)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._collection, name)


def load() -> str:
    """The 1-minute load average and the core count, for the noise note."""
    return f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"


def embed_in_slices(embed: OfflineMiniLM, texts: list[str]) -> None:
    """The embedder called directly on consecutive slices of 32 texts, as the Ingestor batches them."""
    for i in range(0, len(texts), EMBED_BATCH):
        embed(texts[i : i + EMBED_BATCH])


def ingest_each(ingestor: Ingestor, files: list[tuple[str, bytes]]) -> None:
    """One Ingestor.ingest per file, as scripts/ingest does."""
    for name, data in files:
        ingestor.ingest(name, data)


def seconds(fn: Callable[..., Any], *args: Any) -> float:
    """Wall time of one call."""
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def ingest(
    kb: KnowledgeBase, collection: Any, embed: OfflineMiniLM, settings: Settings, coll: Collection, subset: Subset
) -> dict:
    """Ingest block by block through the real Ingestor; each block's texts also go through the bare embedder."""
    watch = Stopwatch()
    ingestor = Ingestor(
        kb.index,
        TimedCollection(collection, watch),
        watch.wrap("embed", embed),
        settings.chunk_target_tokens,
        settings.chunk_overlap_tokens,
    )
    files = [(doc_name(d), coll.docs[d].encode()) for d in subset.docs]
    per_doc = [len(ingestor.prepare(name, data).chunks) for name, data in files]
    embed([coll.docs[d] for d in subset.docs[:EMBED_BATCH]])  # load the ONNX session before any timing
    spent: dict[str, float] = defaultdict(float)
    ratios = []
    for n, first in enumerate(range(0, len(files), BLOCK)):
        block = files[first : first + BLOCK]
        texts = [c.text for name, data in block for c in ingestor.prepare(name, data).chunks]
        steps = [
            ("ingest", ingest_each, ingestor, block),
            ("raw", embed_in_slices, embed, texts),
            ("sorted", embed, texts),
        ]
        took = {label: seconds(fn, *args) for label, fn, *args in steps[n % 3 :] + steps[: n % 3]}  # rotate order
        ratios.append(took["raw"] / took["ingest"])
        for label, t in took.items():
            spent[label] += t
        done = first + len(block)
        print(f"  {done:,}/{len(files):,} documents, ingest/raw {ratios[-1]:.2f} (load {load()})", file=sys.stderr)
    chunks = kb.index.count_chunks()
    return {
        "documents": len(files),
        "chunks": chunks,
        "multi_chunk_documents": sum(n > 1 for n in per_doc),
        "max_chunks_per_document": max(per_doc),
        "seconds": spent["ingest"],
        "chunks_per_s": chunks / spent["ingest"],
        "raw_embed_chunks_per_s": chunks / spent["raw"],
        "raw_embed_chunks_per_s_length_sorted": chunks / spent["sorted"],
        "ratio_ingest_to_raw": spent["raw"] / spent["ingest"],
        "ratio_per_block": {"blocks": len(ratios), "min": min(ratios), "max": max(ratios)},
        "share_of_ingest_time": {k: v / spent["ingest"] for k, v in sorted(watch.seconds.items())}
        | {"other (parse, chunk, injection scan, SQLite)": 1 - sum(watch.seconds.values()) / spent["ingest"]},
    }


def ranked_documents(sources: list[dict]) -> list[str]:
    """Document numbers in rank order, each once (a document's later chunks are dropped)."""
    return [docno_of(name) for name in dict.fromkeys(s["document"] for s in sources)]


def pipelines(settings: Settings, kb: KnowledgeBase, embed: OfflineMiniLM) -> tuple[list, str | None]:
    """(label, SearchConfig, reranker) per evaluated pipeline, and why FlashRank was skipped (None if not)."""
    base = SearchConfig(
        candidates=settings.search_candidates,
        neighbor_window=0,
        intro_chunks=settings.intro_chunks,
        token_budget=NO_BUDGET,
        max_distance=2.0,
    )
    none, cosine = FusionOrder(), EmbeddingReranker(embed, kb.embed_query)
    chosen: list[tuple[str, SearchConfig, Reranker]] = [
        ("BM25", replace(base, fusion="bm25", rerank=False), none),
        ("vector", replace(base, fusion="vector", rerank=False), none),
        ("hybrid (RRF)", replace(base, fusion="hybrid", rerank=False), none),
        ("hybrid + embedding-cosine rerank", replace(base, fusion="hybrid", rerank=True), cosine),
    ]
    folder = settings.flashrank_path / settings.flashrank_model
    if not folder.is_dir():
        return chosen, f"no FlashRank model folder at {folder} (the product never downloads one)"
    try:
        flash = FlashRankReranker(settings.flashrank_model, settings.flashrank_path)
    except Exception as exc:  # a broken folder is reported, not fatal
        return chosen, f"FlashRank model in {folder} failed to load: {exc}"
    return chosen + [(f"hybrid + {flash.name} rerank", replace(base, rerank=True), flash)], None


def quality(
    kb: KnowledgeBase, collection: Any, embed: OfflineMiniLM, settings: Settings, coll: Collection, queries: list[str]
) -> dict:
    """Document-level nDCG/Recall/MRR@10 per pipeline, with in-process run() latency (warm query vectors)."""
    for q in queries:
        kb.embed_query(coll.queries[q])  # every pipeline then finds the query vector cached
    chosen, skipped = pipelines(settings, kb, embed)
    rows, ranked = [], {}
    for label, config, reranker in chosen:
        retriever = HybridRetriever(kb.index, collection, kb.embed_query, reranker, config)
        runs, times, empty = {}, [], 0
        for q in queries:
            start = time.perf_counter()
            result = retriever.run(coll.queries[q], config.candidates, None, NO_BUDGET)
            times.append((time.perf_counter() - start) * 1000)
            runs[q] = ranked_documents(result.sources)[:K]
            empty += not result.sources
        ranked[label] = runs
        rows.append(
            {"pipeline": label, **evaluate(runs, coll.qrels, K), "run_p50_ms": percentile(times, 50), "empty": empty}
        )
        print(f"  {label}: nDCG@10 {rows[-1]['ndcg@10']:.4f}", file=sys.stderr)
    for row in rows:  # how often a pipeline's top 10 is exactly vector search's, order included
        row["same_top10_as_vector"] = sum(ranked[row["pipeline"]][q] == ranked["vector"][q] for q in queries)
    return {"pipelines": rows, "flashrank_skipped": skipped, "gating": gating(kb, collection, settings, coll, queries)}


def gating(kb: KnowledgeBase, collection: Any, settings: Settings, coll: Collection, queries: list[str]) -> dict:
    """How many queries the product's relevance gate (and router probe thresholds) would turn away."""
    config = SearchConfig(candidates=settings.search_candidates, max_distance=settings.relevance_max_distance)
    retriever = HybridRetriever(kb.index, collection, kb.embed_query, FusionOrder(), replace(config, rerank=False))
    gated = sum(not retriever.run(coll.queries[q], K).sources for q in queries)
    nearest = [nearest_distance(kb, collection, coll.queries[q]) for q in queries]
    return {
        "max_distance": settings.relevance_max_distance,
        "gated": gated,
        "queries": len(queries),
        "nearest_distance": {p: percentile(nearest, v) for p, v in (("min", 0), ("p50", 50), ("max", 100))},
        "router_rag_distance": settings.router_rag_distance,
        "router_chat_distance": settings.router_chat_distance,
        "router_rag": sum(d <= settings.router_rag_distance for d in nearest),
        "router_chat": sum(d > settings.router_chat_distance for d in nearest),
    }


def nearest_distance(kb: KnowledgeBase, collection: Any, text: str) -> float:
    """Cosine distance between the query and its closest chunk."""
    res = collection.query(query_embeddings=[kb.embed_query(text)], n_results=1, include=["distances"])
    return float(res["distances"][0][0])


async def timed_search(client: httpx.AsyncClient, text: str) -> dict:
    """One POST /api/search: its wall time (ms), result count and the endpoint's stage timings."""
    start = time.perf_counter()
    response = await client.post("/api/search", json={"query": text, "k": K})
    elapsed = (time.perf_counter() - start) * 1000
    response.raise_for_status()
    body = response.json()
    return {"ms": elapsed, "n": len(body["results"]), **body["timings"]}


async def latency(settings: dict[str, Settings], texts: list[str]) -> list[dict]:
    """POST /api/search p50/p95 per app, cold then warm query-vector cache, apps interleaved query by query."""
    samples: dict[tuple[str, str], list[dict]] = defaultdict(list)
    async with AsyncExitStack() as stack:
        clients = {}
        for label, s in settings.items():
            manager = await stack.enter_async_context(LifespanManager(create_app(s), startup_timeout=300))
            transport = httpx.ASGITransport(app=manager.app)
            clients[label] = await stack.enter_async_context(
                httpx.AsyncClient(transport=transport, base_url="http://bench")
            )
        for client in clients.values():  # load each app's ONNX session outside the timed requests
            await timed_search(client, "warm-up request, not a Vaswani query")
        for phase in ("cold", "warm"):
            for i, text in enumerate(texts):
                for label in list(clients)[:: 1 if i % 2 else -1]:
                    samples[(label, phase)].append(await timed_search(clients[label], text))
    return [summarise(label, phase, samples[(label, phase)]) for label in settings for phase in ("cold", "warm")]


def summarise(label: str, phase: str, rows: list[dict]) -> dict:
    """p50/p95 of the request time and p50 of each stage the endpoint reports."""
    out = {"reranker": label, "pass": phase, "requests": len(rows), "empty": sum(r["n"] == 0 for r in rows)}
    out |= {"p50_ms": percentile([r["ms"] for r in rows], 50), "p95_ms": percentile([r["ms"] for r in rows], 95)}
    for stage in ("vector", "bm25", "expand", "rerank", "total"):
        out[f"{stage}_p50_ms"] = percentile([r[stage] for r in rows if stage in r], 50)
    return out


def app_settings(base: Settings, flashrank_found: bool) -> dict[str, Settings]:
    """One app per reranker to time: the embedding fallback, none, and FlashRank when its folder exists."""
    common = {"llm_backend": "fake", "data_dir": base.data_dir, "cache_dir": base.cache_dir}
    missing = base.data_dir / "no-flashrank-here"
    apps = {
        "embedding-cosine (auto, no FlashRank)": Settings(**common, flashrank_dir=missing, reranker="auto"),
        "none": Settings(**common, flashrank_dir=missing, reranker="none"),
    }
    if flashrank_found:
        apps["flashrank"] = Settings(**common, flashrank_dir=base.flashrank_path, reranker="flashrank")
    return apps


def finite(value: Any) -> Any:
    """The results with NaN (a percentile of no samples) as null, so the JSON is standard."""
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite(v) for v in value]
    return None if isinstance(value, float) and math.isnan(value) else value


def parse_args() -> argparse.Namespace:
    """Command-line options."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--limit-docs", type=int, default=3000, help="documents to ingest; 0 = all 11,429 (default 3000)")
    p.add_argument("--queries", type=int, default=None, help="evaluate the first N queries (default all 93)")
    p.add_argument("--json", type=Path, default=None, help="also write every figure to this JSON file")
    p.add_argument(
        "--data-dir", type=Path, default=REPO.parent / "shared" / "datasets" / "vaswani", help="Vaswani folder"
    )
    p.add_argument("--seed", type=int, default=13, help="seed of the random document sample")
    p.add_argument("--keep", action="store_true", help="keep the temp Ragline data dir and print where it is")
    return p.parse_args()


def run(args: argparse.Namespace, work: Path) -> dict:
    """Every measurement, in order, on the fresh data dir `work`."""
    coll = load_vaswani(args.data_dir)
    queries = select_queries(coll, args.queries)
    subset = select_docs(coll, queries, args.limit_docs, args.seed)
    settings = Settings(llm_backend="fake", data_dir=work)
    setup = {"subset": subset.description, "queries": len(queries), "load_start": load(), "k": K}
    setup |= {"candidates": settings.search_candidates, "chunk_target_tokens": settings.chunk_target_tokens}
    print(f"Ingesting {subset.description} into {work}", file=sys.stderr)
    embed = OfflineMiniLM(ensure_onnx_files(settings.cache_dir))
    collection = open_collection(open_client(settings), settings.collection, embed)
    kb = KnowledgeBase(settings, collection, embed, EMBED_MODEL)
    try:
        ingestion = ingest(kb, collection, embed, settings, coll, subset)
        print(f"Evaluating {len(queries)} queries (load {load()})", file=sys.stderr)
        quality_ = quality(kb, collection, embed, settings, coll, queries)
    finally:
        kb.index.close()
    print(f"Timing POST /api/search (load {load()})", file=sys.stderr)
    apps = app_settings(settings, quality_["flashrank_skipped"] is None)
    timings = asyncio.run(latency(apps, [coll.queries[q] for q in queries]))
    setup["load_end"] = load()
    return {
        "setup": setup,
        "ingestion": ingestion,
        "quality": quality_,
        "latency": timings,
        "reference": published_reference(coll.readme),
    }


def main() -> None:
    """Run the benchmark in a temp data dir and print the Markdown report."""
    args = parse_args()
    logging.basicConfig(level=logging.WARNING)
    work = Path(tempfile.mkdtemp(prefix="ragline-bench-"))
    try:
        results = run(args, work)
    finally:
        if args.keep:
            print(f"data dir kept: {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    results["setup"]["command"] = " ".join([".venv/bin/python scripts/bench_retrieval.py", *sys.argv[1:]])
    print(markdown(results))
    if args.json:
        args.json.write_text(json.dumps(finite(results), indent=2))


if __name__ == "__main__":
    main()
