"""Retrieval on the Vaswani collection: ingestion throughput, quality per pipeline, /api/search latency.

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
--quick (300 documents, 10 queries) checks that everything runs in about two minutes. Goals are reported, never
enforced: the exit code is 0 whatever the figures are.
"""

import argparse
import asyncio
import logging
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from contextlib import AsyncExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx

from backend.main import create_app
from backend.rag.embeddings import OfflineMiniLM, ensure_onnx_files
from backend.rag.knowledge import KnowledgeBase, knowledge_database
from backend.rag.rerank import EmbeddingReranker, FlashRankReranker, FusionOrder, Reranker
from backend.rag.search import HybridRetriever, SearchConfig
from backend.rag.store import open_vectors
from backend.settings import Settings
from bench.lib import DATASETS, report
from bench.lib.server import asgi_client
from bench.lib.stats import percentile
from bench.retrieval_data import (
    Collection,
    docno_of,
    evaluate,
    load_vaswani,
    published_reference,
    select_docs,
    select_queries,
)
from bench.retrieval_ingest import ingest

EMBED_MODEL = "all-MiniLM-L6-v2"
NO_BUDGET = 10**9  # token budget large enough that trimming never drops a result
K = 10


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
        report.progress(f"{label}: nDCG@10 {rows[-1]['ndcg@10']:.4f}")
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
        clients = {label: await stack.enter_async_context(asgi_client(create_app(s))) for label, s in settings.items()}
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


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options."""
    p = argparse.ArgumentParser(prog="bench.retrieval", description=__doc__.split("\n\n")[0])
    p.add_argument("--limit-docs", type=int, default=3000, help="documents to ingest; 0 = all 11,429 (default 3000)")
    p.add_argument("--queries", type=int, default=None, help="evaluate the first N queries (default all 93)")
    p.add_argument("--quick", action="store_true", help="300 documents and 10 queries: a check that all runs")
    p.add_argument("--data-dir", type=Path, default=DATASETS / "vaswani", help="the Vaswani folder")
    p.add_argument("--seed", type=int, default=13, help="seed of the random document sample")
    p.add_argument("--keep", action="store_true", help="keep the temp Ragline data dir and print where it is")
    report.add_output_args(p, "retrieval")
    args = p.parse_args(argv)
    if args.quick:
        args.limit_docs, args.queries = 300, 10
    return args


def run(args: argparse.Namespace, work: Path) -> dict:
    """Every measurement, in order, on the fresh data dir `work`."""
    coll = load_vaswani(args.data_dir)
    queries = select_queries(coll, args.queries)
    subset = select_docs(coll, queries, args.limit_docs, args.seed)
    settings = Settings(llm_backend="fake", data_dir=work)
    setup = {"subset": subset.description, "queries": len(queries), "load_start": report.load(), "k": K}
    setup |= {"candidates": settings.search_candidates, "chunk_target_tokens": settings.chunk_target_tokens}
    report.progress(f"ingesting {subset.description} into {work}")
    embed = OfflineMiniLM(ensure_onnx_files(settings.cache_dir))
    with knowledge_database(settings) as db:
        collection = open_vectors(settings, db, embed)
        kb = KnowledgeBase(settings, db, collection, embed, EMBED_MODEL)
        ingestion = ingest(kb, collection, embed, settings, coll, subset)
        report.progress(f"evaluating {len(queries)} queries (load {report.load()})")
        quality_ = quality(kb, collection, embed, settings, coll, queries)
    report.progress(f"timing POST /api/search (load {report.load()})")
    apps = app_settings(settings, quality_["flashrank_skipped"] is None)
    timings = asyncio.run(latency(apps, [coll.queries[q] for q in queries]))
    setup["load_end"] = report.load()
    reference = published_reference(coll.readme)
    return {"setup": setup, "ingestion": ingestion, "quality": quality_, "latency": timings, "reference": reference}


def ingestion_table(ing: dict, markdown: bool) -> str:
    """One row: documents, chunks, time and throughput of ingestion vs the bare embedder."""
    blocks = ing["ratio_per_block"]
    row = [f"{ing['documents']:,}", f"{ing['chunks']:,}", report.num(ing["seconds"], " s", 0)]
    row += [report.num(ing["chunks_per_s"]), report.num(ing["raw_embed_chunks_per_s"])]
    row.append(f"{ing['ratio_ingest_to_raw']:.2f} ({blocks['min']:.2f}-{blocks['max']:.2f})")
    heads = ["documents", "chunks", "ingest time", "chunks/s", "raw embedder chunks/s", "ingest / raw (blocks)"]
    shares = ", ".join(f"{k} {v:.0%}" for k, v in ing["share_of_ingest_time"].items())
    title = "Ingestion, one Ingestor.ingest per document, vs the bare embedder in slices of 32"
    return report.table(title, heads, [row], markdown) + f"\ningest time went to: {shares}"


def quality_table(qual: dict, markdown: bool) -> str:
    """Per pipeline: nDCG, Recall and MRR at 10, in-process run() time, and the relevance gate's verdict."""
    rows = [
        [r["pipeline"], *(f"{r[m]:.4f}" for m in ("ndcg@10", "recall@10", "mrr@10"))]
        + [report.num(r["run_p50_ms"]), r["same_top10_as_vector"], r["empty"]]
        for r in qual["pipelines"]
    ]
    heads = ["pipeline", "nDCG@10", "Recall@10", "MRR@10", "run() p50 ms", "same top 10 as vector", "empty"]
    g, near = qual["gating"], qual["gating"]["nearest_distance"]
    notes = [
        f"relevance gate at RAG_RELEVANCE_MAX_DISTANCE={g['max_distance']}: {g['gated']} of {g['queries']} queries "
        f"get no sources (nearest chunk distance min {near['min']:.3f}, median {near['p50']:.3f}, max "
        f"{near['max']:.3f}); router probe: {g['router_rag']} queries within {g['router_rag_distance']}, "
        f"{g['router_chat']} beyond {g['router_chat_distance']}"
    ]
    if qual["flashrank_skipped"]:
        notes.append(f"FlashRank skipped: {qual['flashrank_skipped']}")
    title = "Quality at document level (top 10, gate off)"
    return "\n".join([report.table(title, heads, rows, markdown), *notes])


def latency_table(rows: list[dict], markdown: bool) -> str:
    """POST /api/search p50/p95 and the endpoint's own stage timings per reranker, cold and warm."""
    stages = ("p50_ms", "p95_ms", "vector_p50_ms", "bm25_p50_ms", "expand_p50_ms", "rerank_p50_ms")
    body = [[r["reranker"], r["pass"], *(report.num(r[k]) for k in stages), r["empty"]] for r in rows]
    heads = ["reranker", "query cache", "p50", "p95", "vector", "bm25", "expand", "rerank", "empty"]
    return report.table("POST /api/search in-process, apps called alternately (ms)", heads, body, markdown)


def render(results: dict, markdown: bool) -> str:
    """The run's setup line, then the ingestion, quality and latency tables."""
    s = results["setup"]
    head = f"retrieval: {s['subset']}; {s['queries']} queries; load {s['load_start']} at start, {s['load_end']} at end"
    return "\n\n".join(
        [
            head,
            ingestion_table(results["ingestion"], markdown),
            quality_table(results["quality"], markdown),
            latency_table(results["latency"], markdown),
            f"Published reference: {results['reference']}.",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark in a temp data dir, print the tables, write the JSON."""
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    work = Path(tempfile.mkdtemp(prefix="ragline-bench-retrieval-"))
    try:
        results = run(args, work)
    finally:
        if args.keep:
            report.progress(f"data dir kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    results["setup"]["argv"] = sys.argv
    report.publish(render(results, args.markdown), results, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
