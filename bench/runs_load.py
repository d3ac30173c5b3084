"""Runs under load: many concurrent runs, each followed by a client that drops once mid-run and re-attaches.

The real app runs in-process (uvicorn in a thread) on the scripted fake model, with an empty knowledge base, in
chat mode. `--runs` runs start at once (POST /api/chat/stream, left after its `metadata` event: the run goes on);
as soon as a run's id is known, its follower reads GET /api/runs/{id}/stream from the start, leaves after its k-th
token (k varies from run to run), stays away `--gap` seconds, and re-attaches with `Last-Event-ID` set to the last
event it saw. Once every run has ended and left memory, each run's whole sequence is read back from the run log file
(`?after=0` on a finished run) and compared with what its follower saw: events lost, events seen twice, and events
whose number matches but whose content differs. Re-attach latency is re-attach request sent -> first event back
(a replayed one: the run went on while the follower was away).
"""

import argparse
import asyncio
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from httpx_sse import aconnect_sse

from backend.main import create_app
from backend.settings import Settings
from bench.lib import report
from bench.lib.server import serve_in_thread
from bench.lib.stats import dist

QUESTION = "Write a poem about the sea"  # chat mode: the fake model streams 16 words
Event = tuple[int, str, str]  # (sequence number, event name, JSON data)


@dataclass
class Follower:
    """What one follower saw, and when it came back."""

    run_id: str
    events: list[Event] = field(default_factory=list)
    reattach_s: float | None = None
    dropped_at: int = 0  # the last event number seen before leaving
    mid_run: bool = False  # the run was still going when the follower came back
    error: str | None = None


def compare(seen: list[Event], logged: list[Event]) -> dict[str, int]:
    """Lost (logged, never seen), duplicated (seen more than once) and mismatched (same number, other content)."""
    by_seq = {seq: (name, data) for seq, name, data in logged}
    seqs = [seq for seq, _, _ in seen]
    return {
        "lost": len(set(by_seq) - set(seqs)),
        "duplicated": len(seqs) - len(set(seqs)),
        "mismatched": sum(1 for seq, name, data in seen if by_seq.get(seq) != (name, data)),
        "out_of_order": sum(1 for a, b in zip(seqs, seqs[1:], strict=False) if b <= a),
    }


async def read(
    client: httpx.AsyncClient, path: str, out: list[Event], stop_after_tokens: int | None = None, **kw
) -> float | None:
    """Append a run stream's numbered events to `out`; leave after `stop_after_tokens` tokens (None: to the end).
    Returns when the first event arrived (time.perf_counter()), None if none did."""
    tokens, first = 0, None
    async with aconnect_sse(client, "GET", path, **kw) as sse:
        sse.response.raise_for_status()
        async for s in sse.aiter_sse():
            if not s.data:
                continue  # a ping
            first = first or time.perf_counter()
            out.append((int(s.id), s.event, s.data))
            tokens += s.event == "token"
            if stop_after_tokens is not None and tokens >= stop_after_tokens:
                break  # leaving the block closes the connection
    return first


async def start_run(client: httpx.AsyncClient, i: int) -> str:
    """Start a run on its own thread and leave once its id is known; the run goes on without this client."""
    body = {"message": QUESTION, "mode": "chat", "thread_id": f"load-{i}"}
    async with aconnect_sse(client, "POST", "/api/chat/stream", json=body) as sse:
        sse.response.raise_for_status()
        async for s in sse.aiter_sse():
            if s.event == "metadata":
                return s.json()["run_id"]
    raise RuntimeError(f"run {i}: the stream ended before its metadata event")


def running(app, run_id: str) -> bool:
    """Whether the server is still running the run (read across threads: a dict lookup and a flag)."""
    run = app.state.services.runner.live.get(run_id)
    return run is not None and not run.finished


async def start_and_follow(client: httpx.AsyncClient, app, i: int, gap: float) -> Follower:
    """Start run i, then follow it from its start, drop after its (1 + i % 8)-th token, wait, re-attach with
    Last-Event-ID and read to the end."""
    run_id = await start_run(client, i)
    f = Follower(run_id)
    path = f"/api/runs/{run_id}/stream"
    try:
        await read(client, path, f.events, stop_after_tokens=1 + i % 8)
        f.dropped_at = f.events[-1][0] if f.events else 0
        await asyncio.sleep(gap)
        f.mid_run = running(app, run_id)
        rest: list[Event] = []
        sent = time.perf_counter()
        first = await read(client, path, rest, headers={"Last-Event-ID": str(f.dropped_at)})
        f.reattach_s = None if first is None else first - sent
        f.events += rest
    except Exception as exc:  # counted, and the comparison below then shows what it missed
        f.error = f"{type(exc).__name__}: {exc}"
    return f


async def logged(client: httpx.AsyncClient, app, run_id: str) -> list[Event]:
    """A finished run's whole sequence as the run log file holds it (waits until the run has left memory)."""
    runner = app.state.services.runner
    for _ in range(6000):  # five minutes at most
        if run_id not in runner.live:
            break
        await asyncio.sleep(0.05)
    out: list[Event] = []
    await read(client, f"/api/runs/{run_id}/stream?after=0", out)
    return out


async def load(url: str, app, runs: int, gap: float) -> dict:
    """Start the runs, follow each with one drop and re-attach, compare with the log; the figures."""
    limits = httpx.Limits(max_connections=2 * runs + 10, max_keepalive_connections=2 * runs + 10)
    timeout = httpx.Timeout(300.0, connect=60.0)
    async with httpx.AsyncClient(base_url=url, timeout=timeout, limits=limits) as client:
        t0 = time.perf_counter()
        followers = await asyncio.gather(*(start_and_follow(client, app, i, gap) for i in range(runs)))
        wall = time.perf_counter() - t0
        logs = [await logged(client, app, f.run_id) for f in followers]
    totals = {"lost": 0, "duplicated": 0, "mismatched": 0, "out_of_order": 0}
    for f, log in zip(followers, logs, strict=True):
        for key, n in compare(f.events, log).items():
            totals[key] += n
    latency = dist(f.reattach_s for f in followers if f.reattach_s is not None)
    return {
        "runs": runs,
        "events": sum(len(log) for log in logs),
        "events_seen": sum(len(f.events) for f in followers),
        **totals,
        "completed": sum(bool(log) and log[-1][1] == "done" for log in logs),
        "follower_errors": [f.error for f in followers if f.error],
        "reattached_mid_run": sum(f.mid_run for f in followers),
        "reattach_s": latency,
        "wall_s": wall,
        "gap_s": gap,
    }


def run_load(runs: int, tokens_per_second: float, gap: float, data_dir: Path) -> dict:
    """The app on the fake model in this process, and the load against it."""
    settings = Settings(
        llm_backend="fake",
        data_dir=data_dir,
        fake_tokens_per_second=tokens_per_second,
        flashrank_dir=data_dir / "no-flashrank-models",
    )
    app = create_app(settings)
    with serve_in_thread(app) as url:
        results = asyncio.run(load(url, app, runs, gap))
    return {**results, "tokens_per_second": tokens_per_second}


def render(r: dict) -> str:
    """The figures as one short table."""
    lat = r["reattach_s"]
    rows = [
        ["runs (completed)", f"{r['runs']} ({r['completed']})"],
        ["events logged / seen by followers", f"{r['events']} / {r['events_seen']}"],
        ["lost", r["lost"]],
        ["duplicated", r["duplicated"]],
        ["mismatched / out of order", f"{r['mismatched']} / {r['out_of_order']}"],
        ["follower errors", len(r["follower_errors"])],
        ["re-attach latency p50 / max", f"{report.ms(lat['p50'])} / {report.ms(lat['max'])}"],
        ["re-attached while the run was going", r["reattached_mid_run"]],
        ["wall time", report.secs(r["wall_s"])],
    ]
    title = f"{r['runs']} concurrent runs, each follower drops once and re-attaches after {r['gap_s']} s"
    return report.table(title, ["", "value"], rows) + f"\nload average {report.load()}"


def main(argv: list[str] | None = None) -> int:
    """Run the load, print the table, write the JSON; exit 1 when any event was lost, doubled or changed."""
    parser = argparse.ArgumentParser(prog="bench.runs_load", description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=100, help="concurrent runs, one follower each")
    parser.add_argument("--tokens-per-second", type=float, default=10.0, help="the fake model's streaming rate")
    parser.add_argument("--gap", type=float, default=0.3, help="seconds each follower stays away before re-attaching")
    report.add_output_args(parser, "runs_load")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        results = run_load(args.runs, args.tokens_per_second, args.gap, Path(tmp) / "data")
    report.publish(render(results), results, args.json)
    bad = results["lost"] + results["duplicated"] + results["mismatched"] + results["out_of_order"]
    return 1 if bad or results["follower_errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
