"""Search quality by storage: SQLite (FTS5 BM25) + Chroma vs Postgres (full-text ts_rank_cd) + pgvector, Vaswani.

The same documents (every one judged relevant to the selected queries plus a seeded sample, as bench.retrieval
picks them) go through the real Ingestor into each engine, with the same vectors: every chunk is embedded once
(OfflineMiniLM) before either ingestion, so the two sides differ by storage and search only and their ingest times
compare. Then the same queries run through bench.retrieval's pipelines (BM25, vector, hybrid RRF, hybrid + cosine
rerank) on each engine: document-level nDCG, Recall and MRR at 10, in-process run() p50, and the relevance gate's
verdict at the default distance (the cosine distances of both vector stores must mean the same). Postgres is a
fresh pgserver (PG16 + pgvector 0.6) in a temp folder. Goals are reported, never enforced: the exit code is 0.
"""

import argparse
import logging
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from backend.rag.embeddings import OfflineMiniLM, ensure_onnx_files
from backend.rag.ingestion import EMBED_BATCH
from backend.rag.knowledge import KnowledgeBase, knowledge_database
from backend.rag.store import open_vectors
from backend.settings import Settings
from bench.lib import DATASETS, report
from bench.lib.postgres import fresh_database, postgres_server
from bench.retrieval import EMBED_MODEL, K, quality
from bench.retrieval_data import Collection, doc_name, load_vaswani, select_docs, select_queries

ENGINES = {"sqlite": "SQLite + Chroma", "postgres": "Postgres + pgvector"}
MAX_NDCG_LOSS = 0.02  # the goal: Postgres within this of SQLite + Chroma on every pipeline


class SharedEmbeddings:
    """The embedder with every vector remembered by text, so both engines get the very same vectors."""

    def __init__(self, embed: OfflineMiniLM) -> None:
        self.inner = embed
        self.vectors: dict[str, Any] = {}

    def __call__(self, texts: list[str]) -> list[Any]:
        missing = list(dict.fromkeys(t for t in texts if t not in self.vectors))
        for start in range(0, len(missing), EMBED_BATCH):
            batch = missing[start : start + EMBED_BATCH]
            self.vectors.update(zip(batch, self.inner(batch), strict=True))
        return [self.vectors[t] for t in texts]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options."""
    p = argparse.ArgumentParser(prog="bench.search_storage", description=__doc__.split("\n\n")[0])
    p.add_argument("--limit-docs", type=int, default=3000, help="documents to ingest; 0 = all 11,429 (default 3000)")
    p.add_argument("--queries", type=int, default=None, help="evaluate the first N queries (default all 93)")
    p.add_argument("--quick", action="store_true", help="300 documents and 10 queries: a check that all runs")
    p.add_argument("--data-dir", type=Path, default=DATASETS / "vaswani", help="the Vaswani folder")
    p.add_argument("--seed", type=int, default=13, help="seed of the random document sample")
    report.add_output_args(p, "search_storage")
    args = p.parse_args(argv)
    if args.quick:
        args.limit_docs, args.queries = 300, 10
    return args


@contextmanager
def engine_settings(engine: str, work: Path) -> Iterator[Settings]:
    """Fake-model settings on a data dir of their own, with a fresh Postgres database for the Postgres side."""
    if engine == "sqlite":
        yield Settings(llm_backend="fake", data_dir=work / engine)
        return
    with postgres_server(work / "pgdata") as server, fresh_database(server, "bench") as url:
        yield Settings(llm_backend="fake", data_dir=work / engine, database_url=url)


def measure(engine: str, work: Path, embed: SharedEmbeddings, coll: Collection, files: list, queries: list) -> dict:
    """Ingest the files into one engine, then evaluate every pipeline on it."""
    with engine_settings(engine, work) as settings, knowledge_database(settings) as db:
        vectors = open_vectors(settings, db, embed.inner)  # Chroma checks the function; vectors come from `embed`
        kb = KnowledgeBase(settings, db, vectors, embed, EMBED_MODEL)
        start = time.perf_counter()
        for n, (name, data) in enumerate(files, start=1):
            kb.ingestor.ingest(name, data)
            if n % 500 == 0:
                report.progress(f"{ENGINES[engine]}: {n:,}/{len(files):,} documents (load {report.load()})")
        ingest_s = time.perf_counter() - start
        report.progress(f"{ENGINES[engine]}: evaluating {len(queries)} queries (load {report.load()})")
        return {
            "ingest_seconds": ingest_s,
            "chunks": kb.index.count_chunks(),
            "quality": quality(kb, vectors, embed, settings, coll, queries),  # type: ignore[arg-type]
        }


def run(args: argparse.Namespace, work: Path) -> dict:
    """Embed once, then ingest and evaluate on each engine in turn."""
    coll = load_vaswani(args.data_dir)
    queries = select_queries(coll, args.queries)
    subset = select_docs(coll, queries, args.limit_docs, args.seed)
    embed = SharedEmbeddings(OfflineMiniLM(ensure_onnx_files(Settings(llm_backend="fake").cache_dir)))
    files = [(doc_name(d), coll.docs[d].encode()) for d in subset.docs]
    setup = {"subset": subset.description, "queries": len(queries), "k": K, "load_start": report.load()}
    report.progress(f"embedding the chunks of {subset.description} once for both engines")
    with engine_settings("sqlite", work / "chunking") as settings, knowledge_database(settings) as db:
        ingestor = KnowledgeBase(settings, db, open_vectors(settings, db, embed.inner), embed, EMBED_MODEL).ingestor
        embed([c.text for name, data in files for c in ingestor.prepare(name, data).chunks])
    embed([coll.queries[q] for q in queries])
    results = {engine: measure(engine, work, embed, coll, files, queries) for engine in ENGINES}
    setup["load_end"] = report.load()
    return {"setup": setup, "engines": results}


def quality_table(results: dict, markdown: bool) -> str:
    """Per pipeline: nDCG, Recall, MRR at 10 and run() p50 on each engine, and the nDCG difference."""
    sqlite, pg = (results["engines"][e]["quality"]["pipelines"] for e in ENGINES)
    rows = []
    for a, b in zip(sqlite, pg, strict=True):
        row = [a["pipeline"]]
        for metric in ("ndcg@10", "recall@10", "mrr@10"):
            row += [f"{a[metric]:.4f}", f"{b[metric]:.4f}"]
        row += [f"{b['ndcg@10'] - a['ndcg@10']:+.4f}", report.num(a["run_p50_ms"]), report.num(b["run_p50_ms"])]
        rows.append(row)
    heads = ["pipeline", "nDCG SQLite", "nDCG PG", "Recall SQLite", "Recall PG", "MRR SQLite", "MRR PG"]
    heads += ["nDCG PG - SQLite", "run() p50 ms SQLite", "run() p50 ms PG"]
    return report.table("Quality at document level (top 10, gate off), same queries and vectors", heads, rows, markdown)


def notes(results: dict) -> list[str]:
    """Ingest time and the relevance gate per engine; pipelines past the nDCG goal."""
    lines = []
    for engine, label in ENGINES.items():
        r = results["engines"][engine]
        g, near = r["quality"]["gating"], r["quality"]["gating"]["nearest_distance"]
        lines.append(
            f"{label}: {r['chunks']:,} chunks ingested in {r['ingest_seconds']:.1f} s (vectors precomputed); "
            f"gate at {g['max_distance']}: {g['gated']}/{g['queries']} queries get nothing; nearest distance "
            f"min {near['min']:.4f}, median {near['p50']:.4f}, max {near['max']:.4f}"
        )
    sqlite, pg = (results["engines"][e]["quality"]["pipelines"] for e in ENGINES)
    lost = [b["pipeline"] for a, b in zip(sqlite, pg, strict=True) if a["ndcg@10"] - b["ndcg@10"] > MAX_NDCG_LOSS]
    lines.append(f"goal (Postgres loses at most {MAX_NDCG_LOSS} nDCG@10): " + (f"missed by {lost}" if lost else "met"))
    return lines


def main(argv: list[str] | None = None) -> int:
    """Run the comparison in a temp folder, print the table, write the JSON."""
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    work = Path(tempfile.mkdtemp(prefix="ragline-bench-storage-"))
    try:
        results = run(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    results["setup"]["argv"] = sys.argv
    s = results["setup"]
    head = f"search_storage: {s['subset']}; {s['queries']} queries; load {s['load_start']} to {s['load_end']}"
    text = "\n\n".join([head, quality_table(results, args.markdown), "\n".join(notes(results))])
    report.publish(text, results, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
