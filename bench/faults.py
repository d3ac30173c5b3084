"""Fault probes at scale on real servers (fake model): kill -9 during a streamed turn, cut streams, one thread at once.

The tests run each probe a few times; this runs them as often as asked and counts what went wrong:
- kill: `--reps` × 4 kill points (before the first token, mid-answer, while checking and saving, right after
  done) on a server streaming from the model; after a restart, do the thread page, export and memory agree, and
  does the next turn work?
- disconnect: `--streams` per variant (FAQ, small talk, short answer) cut right after their first token, all at
  once; afterwards, is any thread half-recorded, and do a turn, a rename and a delete on it all succeed?
- concurrent: `--concurrent` turns at once on one thread; does each client get the answer to its own question?
"""

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

import httpx

from bench.lib import ROOT, SAMPLE_DOCS, report
from bench.lib.faults import (
    DISCONNECT_VARIANTS,
    KILL_POINTS,
    POEM,
    agree,
    cut_after_first_token,
    history_views,
    history_views_sync,
    stream_and_kill,
)
from bench.lib.server import serve_in_process
from bench.lib.sse import parse_sse

CONCURRENT_QUESTIONS = {  # question -> words its own answer contains
    "How much does a Zephyr-9 service cost?": "240 euros",
    "@it-security-policy how long must passwords be?": "14 characters",
    "@zephyr-9-service-manual how long is the warranty?": "warranty",
    "@employee-handbook how much are meals reimbursed when travelling?": "45 euros",
    "Thanks!": "welcome",
}


def fake_env(data_dir: Path, tokens_per_second: int) -> dict[str, str]:
    return {
        "RAG_LLM_BACKEND": "fake",
        "RAG_DATA_DIR": str(data_dir),
        "RAG_FAKE_TOKENS_PER_SECOND": str(tokens_per_second),
        "RAG_FAQ_PATH": str(ROOT / "data" / "faq.yaml"),  # the server runs in a temp dir: the FAQ by full path
    }


def kill_once(data_dir: Path, point: str) -> dict:
    """One kill at `point`, a restart, and the three views compared; the problems found, if any."""
    env, thread_id = fake_env(data_dir, 20), "survivor"
    with serve_in_process(env) as (url, proc):
        httpx.post(f"{url}/api/chat", json={"message": "Hello", "thread_id": thread_id}, timeout=30)
        finished = stream_and_kill(
            url, {"message": POEM, "thread_id": thread_id, "mode": "chat"}, KILL_POINTS[point], proc
        )
    with serve_in_process(env) as (url, proc):
        views = history_views_sync(url, thread_id)
        again = httpx.post(f"{url}/api/chat", json={"message": "Hi again", "thread_id": thread_id}, timeout=30)
        after = history_views_sync(url, thread_id)
        log = proc.log()
    return {
        "disagree": not agree(views),
        "lost_done": finished.done and len(views["page"]) != 2,
        "next_turn_failed": again.status_code != 200 or len(after["page"]) != len(views["page"]) + 1,
        "traceback": "Traceback" in log,
    }


def bench_kill(reps: int) -> dict:
    problems: dict[str, dict[str, int]] = {point: {} for point in KILL_POINTS}
    for rep in range(reps):
        for point in KILL_POINTS:
            with tempfile.TemporaryDirectory() as tmp:
                for name, bad in kill_once(Path(tmp) / "data", point).items():
                    problems[point][name] = problems[point].get(name, 0) + int(bad)
        report.progress(f"kill: repetition {rep + 1}/{reps} done")
    return {"reps": reps, "problems": problems}


async def disconnect_probe(url: str, streams: int) -> dict:
    threads = [(f"{n.replace(' ', '-')}-{i}", q) for n, q in DISCONNECT_VARIANTS.items() for i in range(streams)]
    counts = {"half_recorded": 0, "turn_failed": 0, "rename_failed": 0, "delete_failed": 0}
    async with httpx.AsyncClient(base_url=url, timeout=120) as client:
        await asyncio.gather(*(client.post("/api/chat", json={"message": "Hello", "thread_id": t}) for t, _ in threads))
        await asyncio.gather(*(cut_after_first_token(client, t, q) for t, q in threads))
        await asyncio.sleep(0.5)
        for thread_id, _ in threads:
            seen = await history_views(client, thread_id)
            counts["half_recorded"] += not agree(seen)
            again = await client.post("/api/chat", json={"message": "Thanks!", "thread_id": thread_id})
            counts["turn_failed"] += again.status_code != 200
            counts["rename_failed"] += (
                await client.patch(f"/api/threads/{thread_id}", json={"title": "probe"})
            ).status_code != 200
            counts["delete_failed"] += (await client.delete(f"/api/threads/{thread_id}")).status_code != 204
    return {"streams": len(threads), **counts}


async def concurrent_probe(url: str, n: int) -> dict:
    questions = list(CONCURRENT_QUESTIONS)[:n]
    async with httpx.AsyncClient(base_url=url, timeout=120) as client:

        async def ask(question: str) -> dict:
            body = {"message": question, "thread_id": "shared", "mode": "auto"}
            return parse_sse(await client.post("/api/chat/stream", json=body))[-1][1]

        finals = await asyncio.gather(*(ask(q) for q in questions))
        seen = await history_views(client, "shared")
    pairs = [(q, done.get("question"), done.get("answer", "")) for q, done in zip(questions, finals, strict=True)]
    crossed = sum(asked != got for asked, got, _ in pairs)
    wrong = sum(CONCURRENT_QUESTIONS[asked].lower() not in answer.lower() for asked, _, answer in pairs)
    stored = sorted(q for q, _ in seen["page"])
    return {
        "turns": n,
        "crossed": crossed,
        "answer_without_expected_words": wrong,
        "lost_or_doubled": int(stored != sorted(questions)),
        "views_disagree": int(not agree(seen)),
        "turns_seen": [{"asked": a, "done_question": g, "answer": ans[:120]} for a, g, ans in pairs],
    }


def render(results: dict) -> str:
    out = []
    if kill := results.get("kill"):
        rows = [[point, *(counts.get(k, 0) for k in ("disagree", "lost_done", "next_turn_failed", "traceback"))]
                for point, counts in kill["problems"].items()]  # fmt: skip
        headers = ["kill point", "views disagree", "finished turn lost", "next turn failed", "tracebacks"]
        out.append(
            report.table(f"kill -9 while the model streams, then restart ({kill['reps']} reps each)", headers, rows)
        )
    if dis := results.get("disconnect"):
        out.append(report.table("streams cut after their first token, all at once", list(dis), [list(dis.values())]))
    if con := results.get("concurrent"):
        counts = {k: v for k, v in con.items() if k != "turns_seen"}
        out.append(report.table("concurrent turns on one thread", list(counts), [list(counts.values())]))
    return "\n\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """Run the probes asked for, print the counts, write the JSON."""
    parser = argparse.ArgumentParser(prog="bench.faults", description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=20, help="kill repetitions per kill point (0: skip)")
    parser.add_argument("--streams", type=int, default=30, help="cut streams per variant (0: skip)")
    parser.add_argument("--concurrent", type=int, default=5, help="concurrent turns on one thread (0: skip)")
    report.add_output_args(parser, "faults")
    args = parser.parse_args(argv)
    results: dict = {}
    if args.reps:
        results["kill"] = bench_kill(args.reps)
    with tempfile.TemporaryDirectory() as tmp:
        env = fake_env(Path(tmp) / "data", 200)
        with serve_in_process(env, ingest_paths=[SAMPLE_DOCS]) as (url, proc):
            if args.streams:
                results["disconnect"] = asyncio.run(disconnect_probe(url, args.streams))
            if args.concurrent:
                results["concurrent"] = asyncio.run(concurrent_probe(url, args.concurrent))
            log = proc.log()
        results["server_log"] = {
            "database_locked": log.count("database is locked"),
            "tracebacks": log.count("Traceback"),
        }
    report.publish(render(results) + f"\n\nserver log: {results['server_log']}", results, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
