"""Scale: SQLite files against Postgres, one replica against two, measured side by side in one run.

Search: `--chunks` synthetic chunks per size (words drawn from a Zipf vocabulary, random unit vectors of MiniLM's
384 dimensions, 100 chunks per document) written straight into each engine's index and vector store (no
embedding: that is measured by bench.search_storage's ingest times), then the hybrid search the chat uses
(BM25 + vectors, fusion, neighbours), in process, p50 and p95 over `--queries` real questions embedded by MiniLM.

Turns: real API processes on the scripted fake model (instant tokens, so storage and the server are what is
measured), `--turns` chat turns each on its own thread, `--concurrency` at a time, sent round-robin to the
replicas. Reported: turns per second (wall clock) and time to first token p50/p95, for SQLite x1, Postgres x1
and Postgres x2. Postgres is a real PostgreSQL 16 with pgvector started for the run (the `pgserver` wheel).
Every replica has its own data folder, as on separate machines; on one small machine the replicas, Postgres and
the client share its cores, so two replicas show the cost of sharing, not the gain of a second machine.
"""

import argparse
import asyncio
import hashlib
import random
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from backend.rag.chunking import Chunk
from backend.rag.embeddings import OfflineMiniLM, ensure_onnx_files
from backend.rag.knowledge import KnowledgeBase, knowledge_database
from backend.rag.store import open_vectors
from backend.settings import Settings
from bench.lib import report
from bench.lib.postgres import fresh_database, postgres_server
from bench.lib.server import serve_in_process
from bench.lib.sse import client, stream_turn
from bench.lib.stats import dist, ratio

SETUPS = (("sqlite", 1), ("postgres", 1), ("postgres", 2))
PER_DOCUMENT = 100
DIMENSIONS = 384
QUESTIONS = [
    "how often do the keepers rotate",
    "what is the warranty period of the pump",
    "minimum password length for staff accounts",
    "who approves travel expenses above the limit",
    "how many leave days carry over to next year",
    "where are visitor badges collected",
]


def vocabulary(size: int, rng: random.Random) -> list[str]:
    """Made-up words, the first ones the most frequent (drawn by a Zipf-like weight), with the questions' words
    placed among the moderately frequent ones (ranks 200 to 2,000), as a question's content words are."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = ["".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(size)]
    for word in sorted({w for q in QUESTIONS for w in q.split()}):
        words.insert(rng.randint(200, 2000), word)
    return words


def fill(kb: KnowledgeBase, vectors, chunks: int, seed: int = 7) -> float:
    """Write `chunks` synthetic chunks (100 per document) into the index and the vector store; seconds taken."""
    rng = random.Random(seed)
    words = vocabulary(20_000, rng)
    weights = [1 / (rank + 1) for rank in range(len(words))]
    started = time.perf_counter()
    for d in range(chunks // PER_DOCUMENT):
        doc_id, texts = f"doc{d:06d}", []
        for _ in range(PER_DOCUMENT):
            texts.append(" ".join(rng.choices(words, weights, k=rng.randint(60, 140))) + ".")
        kb.index.upsert_pending(doc_id, f"{doc_id}.md", "md", 0)
        embeddings = []
        for _ in texts:
            v = [rng.gauss(0, 1) for _ in range(DIMENSIONS)]
            norm = sum(x * x for x in v) ** 0.5
            embeddings.append([x / norm for x in v])
        ids = [f"{doc_id}:1:{i}" for i in range(PER_DOCUMENT)]
        metas = [
            {"document_id": doc_id, "document": f"{doc_id}.md", "version": 1, "chunk": i} for i in range(PER_DOCUMENT)
        ]
        vectors.add(ids=ids, embeddings=embeddings, documents=texts, metadatas=metas)
        offsets, at = [], 0
        for t in texts:
            offsets.append((at, at + len(t)))
            at += len(t) + 1
        made = [
            Chunk(i, t, None, None, a, b, hashlib.sha1(t.encode()).hexdigest()[:16])
            for i, (t, (a, b)) in enumerate(zip(texts, offsets, strict=True))
        ]
        kb.index.activate(doc_id, 1, made, type_="md", size=at, pages=None, sha256=doc_id, text="\n".join(texts))
        if (d + 1) % 100 == 0:
            report.progress(f"{(d + 1) * PER_DOCUMENT:,}/{chunks:,} chunks written")
    return time.perf_counter() - started


def search_at(engine: str, chunks: int, work: Path, pg_admin: str | None, queries: int) -> dict:
    """Fill one engine with `chunks` chunks and time the chat's hybrid search on it."""
    embed = OfflineMiniLM(ensure_onnx_files(Settings(llm_backend="fake").cache_dir))
    with ExitStack() as stack:
        url = stack.enter_context(fresh_database(pg_admin, "search")) if engine == "postgres" and pg_admin else None
        settings = Settings(llm_backend="fake", data_dir=work / f"search-{engine}-{chunks}", database_url=url)
        db = stack.enter_context(knowledge_database(settings))
        vectors = open_vectors(settings, db, embed)
        kb = KnowledgeBase(settings, db, vectors, embed, "all-MiniLM-L6-v2")
        write_s = fill(kb, vectors, chunks)
        asked = [QUESTIONS[i % len(QUESTIONS)] + ("" if i < len(QUESTIONS) else f" {i}") for i in range(queries)]
        for q in asked[:3]:
            kb.retriever.run(q, 5)  # warm-up: caches, first reads
        times = []
        for q in asked:
            started = time.perf_counter()
            kb.retriever.run(q, 5)
            times.append(time.perf_counter() - started)
    return {"chunks": chunks, "write_s": write_s, "search": dist(times)}


async def load(urls: list[str], turns: int, concurrency: int) -> dict:
    """Send the turns, `concurrency` at a time, round-robin over the replicas; rate and time to first token."""
    gate = asyncio.Semaphore(concurrency)

    async def one(n: int):
        async with gate:
            body = {"message": f"Hello, this is turn {n}", "thread_id": f"scale-{n}", "mode": "chat"}
            return await stream_turn(http, f"{urls[n % len(urls)]}/api/chat/stream", body)

    async with client(concurrency) as http:
        started = time.monotonic()
        done = await asyncio.gather(*[one(n) for n in range(turns)])
        wall = time.monotonic() - started
    ttft = dist(t.ttft for t in done if t.ttft is not None)
    errors = [t.error for t in done if t.error]
    return {
        "turns": turns,
        "errors": len(errors),
        "first_error": errors[0] if errors else None,
        "turns_per_s": turns / wall,
        "wall_s": wall,
        "ttft": ttft,
    }


def run_setup(engine: str, replicas: int, work: Path, pg_admin: str | None, args: argparse.Namespace) -> dict:
    """Start the replicas on one storage, warm them up, load them."""
    with ExitStack() as stack:
        env = {"RAG_LLM_BACKEND": "fake", "RAG_FAKE_TOKENS_PER_SECOND": "0"}
        if engine == "postgres":
            assert pg_admin is not None
            env["RAG_DATABASE_URL"] = stack.enter_context(fresh_database(pg_admin, "scale"))
        urls = []
        for r in range(replicas):
            data = work / f"{engine}-{replicas}" / f"replica-{r}" / "data"
            url, _ = stack.enter_context(serve_in_process({**env, "RAG_DATA_DIR": str(data)}))
            urls.append(url)
        asyncio.run(load(urls, min(20, args.turns), args.concurrency))  # warm-up: imports, pools, first writes
        return asyncio.run(load(urls, args.turns, args.concurrency))


def main(argv: list[str] | None = None) -> int:
    """Run every setup and print the side-by-side table."""
    parser = argparse.ArgumentParser(prog="bench.scale", description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=200, help="turns per setup")
    parser.add_argument("--concurrency", type=int, default=20, help="turns in flight at once")
    parser.add_argument("--chunks", default="10000,100000", help="index sizes for the search part (comma-separated)")
    parser.add_argument("--queries", type=int, default=30, help="searches timed per index size and engine")
    parser.add_argument("--skip", choices=("turns", "search"), help="leave out one part")
    report.add_output_args(parser, "scale")
    args = parser.parse_args(argv)
    results: dict = {"turns": {}, "search": {}}
    with tempfile.TemporaryDirectory(prefix="ragline-scale-") as tmp, ExitStack() as stack:
        work = Path(tmp)
        pg_admin = stack.enter_context(postgres_server(work / "pgdata"))
        for engine, replicas in SETUPS if args.skip != "turns" else ():
            report.progress(f"{engine} x{replicas}: {args.turns} turns, {args.concurrency} at a time")
            results["turns"][f"{engine} x{replicas}"] = run_setup(engine, replicas, work, pg_admin, args)
        for chunks in [int(c) for c in args.chunks.split(",")] if args.skip != "search" else []:
            for engine in ("sqlite", "postgres"):
                report.progress(f"search on {engine} with {chunks:,} chunks")
                results["search"][f"{engine} {chunks}"] = search_at(engine, chunks, work, pg_admin, args.queries)
    tables = []
    if results["turns"]:
        tables.append(turns_table(results, args))
    if results["search"]:
        tables.append(search_table(results, args))
    report.publish("\n\n".join(tables), results, args.json)
    return 1 if any(r["errors"] for r in results["turns"].values()) else 0


def search_table(results: dict, args: argparse.Namespace) -> str:
    """Search p50/p95 per engine and size, with Postgres against SQLite at the same size."""
    rows = []
    for name, r in results["search"].items():
        engine, chunks = name.split()
        base = results["search"].get(f"sqlite {chunks}")
        versus = report.times(ratio(r["search"]["p50"], base["search"]["p50"]), 2) if base else "-"
        rows.append(
            [
                f"{engine}",
                f"{int(chunks):,}",
                report.ms(r["search"]["p50"]),
                report.ms(r["search"]["p95"]),
                versus,
                report.num(int(chunks) / r["write_s"], "/s", 0),
            ]
        )
    headers = ["storage", "chunks", "search p50", "search p95", "p50 vs sqlite", "chunks written"]
    title = f"Hybrid search in process ({args.queries} queries per size; load {report.load()})"
    return report.table(title, headers, rows, args.markdown)


def turns_table(results: dict, args: argparse.Namespace) -> str:
    """Turns per second and time to first token per storage and replica count."""
    base = results["turns"]["sqlite x1"]
    rows = [
        [
            name,
            report.num(r["turns_per_s"], "/s"),
            report.times(ratio(r["turns_per_s"], base["turns_per_s"]), 2),
            report.ms(r["ttft"]["p50"]),
            report.ms(r["ttft"]["p95"]),
            r["errors"],
        ]
        for name, r in results["turns"].items()
    ]
    headers = ["storage x replicas", "turns/s", "vs sqlite x1", "TTFT p50", "TTFT p95", "errors"]
    title = f"Turns on the fake model ({args.turns} turns, {args.concurrency} at a time; load {report.load()})"
    return report.table(title, headers, rows, args.markdown)


if __name__ == "__main__":
    sys.exit(main())
