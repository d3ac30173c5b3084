"""Scale: SQLite files against Postgres, one replica against two, measured side by side in one run.

Turns: real API processes on the scripted fake model (instant tokens, so storage and the server are what is
measured), `--turns` chat turns each on its own thread, `--concurrency` at a time, sent round-robin to the
replicas. Reported: turns per second (wall clock) and time to first token p50/p95, for SQLite x1, Postgres x1
and Postgres x2. Postgres is a real PostgreSQL 16 with pgvector started for the run (the `pgserver` wheel).
Every replica has its own data folder, as on separate machines; on one small machine the replicas, Postgres and
the client share its cores, so two replicas show the cost of sharing, not the gain of a second machine.
"""

import argparse
import asyncio
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from bench.lib import report
from bench.lib.postgres import fresh_database, postgres_server
from bench.lib.server import serve_in_process
from bench.lib.sse import client, stream_turn
from bench.lib.stats import dist, ratio

SETUPS = (("sqlite", 1), ("postgres", 1), ("postgres", 2))


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
    report.add_output_args(parser, "scale")
    args = parser.parse_args(argv)
    results: dict = {"turns": {}}
    with tempfile.TemporaryDirectory(prefix="ragline-scale-") as tmp, ExitStack() as stack:
        work = Path(tmp)
        pg_admin = stack.enter_context(postgres_server(work / "pgdata"))
        for engine, replicas in SETUPS:
            report.progress(f"{engine} x{replicas}: {args.turns} turns, {args.concurrency} at a time")
            results["turns"][f"{engine} x{replicas}"] = run_setup(engine, replicas, work, pg_admin, args)
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
    report.publish(report.table(title, headers, rows, args.markdown), results, args.json)
    return 1 if any(r["errors"] for r in results["turns"].values()) else 0


if __name__ == "__main__":
    sys.exit(main())
