#!/usr/bin/env python3
"""Benchmark the chat stream: pipeline overhead with the fake model, end-to-end vs raw llama.cpp TTFT.

    .venv/bin/python scripts/bench_stream.py [--fake-only] [--model qwen2.5-coder-0.5b|qwen2.5-coder-1.5b]
                                             [--streams 50] [--requests 30] [--json out.json]

A. Fake model. The real app (uvicorn, scripts/bench_app.py wrapping backend.main:create_app) runs in a child process
   on a free loopback port with a temp data dir and a sample document. Over real HTTP/SSE it measures request sent ->
   first `token` event for sequential and concurrent streams, tokens/s through SSE, and a client-side waterfall of
   where the time goes; the fake model's own time-to-first-token is measured outside the app for the overhead ratio.
B. Embedded model. The same app with llama.cpp runs a warm-up, a first turn and a follow-up; every model call is
   recorded, the app is stopped, and the identical calls are replayed on a fresh llama.cpp server (see FAIRNESS).

Goals are reported, never enforced: the script exits 0 whatever the figures are.
"""

import argparse
import asyncio
import json
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from backend.llm.embedded import llama_server
from backend.llm.fake import ScriptedChatModel
from backend.llm.model_files import MODELS, ensure_model
from backend.settings import Settings

SCRIPTS = Path(__file__).resolve().parent
REPO = SCRIPTS.parent
QUESTIONS = (
    "How much can I spend on meals per day on a business trip?",
    "Which flight class may I book for a flight longer than six hours?",
    "Within how many days must I submit an expense report?",
)
# (label, thread, message, mode): the embedded turn sequence; the warm-up leaves the system prompt in a slot cache.
EMBEDDED_SCRIPT = (
    ("warm-up", "bench-warm", "Hello!", "chat"),
    ("first turn", "bench-emb", "What are the rules for hotels and meals on a business trip?", "rag"),
    ("follow-up", "bench-emb", "Is alcohol covered by that meal limit?", "rag"),
)
SAMPLE_DOC = """# Travel and Expenses Policy

This policy covers business travel booked by employees of Fjordlight Analytics and the expenses they claim.

## Booking

All trips are booked through the travel desk at least 14 days before departure. Trips abroad need written approval
from the line manager before anything is booked. Bookings made privately are reimbursed only with a written reason.

## Flights

Employees fly economy class. For a single flight longer than six hours, premium economy may be booked. Business class
is allowed only for board members or with written approval from the finance director.

## Hotels

Hotels are reimbursed up to 150 euros per night in most cities and up to 220 euros per night in London, Paris, New
York and Tokyo. Breakfast is included in the limit when it is part of the room rate.

## Meals

Meals on a business trip are reimbursed up to 60 euros per day, with receipts. Alcohol is never reimbursed, not even
within the daily limit. Client dinners are covered by the hospitality policy instead.

## Mileage

Employees who drive their own car on company business receive 0.30 euros per kilometre. Parking and tolls are
reimbursed on top, with receipts.

## Expense reports

Expense reports must be submitted within 30 days of the end of the trip, with all receipts attached. Reports submitted
later are reimbursed only with the approval of the finance director. Payment follows with the next salary run.
"""
FAIRNESS = (
    "Fairness of the raw llama.cpp comparison: every model call the app made (warm-up, rewriter, generator) is\n"
    "recorded with its exact OpenAI request body (ChatOpenAI._get_request_payload on the captured messages). The app\n"
    "process is then stopped, so its llama.cpp server and KV cache are gone, and a fresh server with the same model,\n"
    "ctx, threads, slots and cache_prompt (backend.llm.embedded.llama_server) replays the same calls in the same\n"
    "order, each to completion. Both servers therefore start empty and see identical prefixes, so slot choice and\n"
    "prompt-cache hits match (see slot and 'evaluated app/raw' per call above). The model file is read once\n"
    "beforehand so both start with it in the page cache. Raw TTFT = request sent -> first non-empty content delta,\n"
    "the same definition as the app's first `token` event."
)


# ---------------------------------------------------------------- statistics and tables


def pct(values: list[float], q: float) -> float | None:
    """Linear-interpolated percentile (q in 0..1) or None for no values."""
    s = sorted(values)
    if not s:
        return None
    k = (len(s) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def dist(values: list[float]) -> dict[str, float | None]:
    """p50, p95, min, max and mean of a sample."""
    return {
        "n": len(values),
        "p50": pct(values, 0.5),
        "p95": pct(values, 0.95),
        "min": min(values, default=None),
        "max": max(values, default=None),
        "mean": sum(values) / len(values) if values else None,
    }


def fmt_ms(seconds: float | None) -> str:
    """Seconds as milliseconds text, '-' for None."""
    return "-" if seconds is None else f"{seconds * 1000:,.1f} ms"


def fmt_num(value: float | None, unit: str = "", digits: int = 1) -> str:
    """A number with a unit, '-' for None."""
    return "-" if value is None else f"{value:,.{digits}f}{unit}"


def ratio(a: float | None, b: float | None) -> str:
    """a/b as 'N.Nx', '-' when either is missing or b is zero."""
    return "-" if a is None or not b else f"{a / b:,.1f}x"


def print_table(title: str, headers: list[str], rows: list[list[str]]) -> None:
    """A plain-text table with a title, left-aligned first column and right-aligned others."""
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]
    line = "  ".join("-" * w for w in widths)
    print(f"\n{title}\n{line}")
    for j, row in enumerate([headers, *rows]):
        cells = [str(c).ljust(widths[i]) if i == 0 else str(c).rjust(widths[i]) for i, c in enumerate(row)]
        print("  ".join(cells))
        if j == 0:
            print(line)


def progress(text: str) -> None:
    """One progress line."""
    print(f"  .. {text}", flush=True)


# ---------------------------------------------------------------- the app in a child process


@dataclass
class App:
    """A running bench app."""

    base: str
    log_path: Path
    startup_s: float

    def calls(self) -> dict:
        """The model calls recorded by scripts/bench_app.py, plus ingestion counts."""
        return httpx.get(f"{self.base}/_bench/calls", timeout=60).json()


def free_port() -> int:
    """A free loopback TCP port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def app_env(data_dir: Path, cache_dir: Path, docs: list[Path], extra: dict[str, str]) -> dict[str, str]:
    """The child's environment: no inherited RAG_* settings, a temp data dir, the bench's own choices."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAG_") and k != "OLLAMA_HOST"}
    env.update(
        RAG_DATA_DIR=str(data_dir),
        RAG_CACHE_DIR=str(cache_dir),
        BENCH_DOCS=os.pathsep.join(str(d) for d in docs),
        PYTHONPATH=os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p),
        **extra,
    )
    return env


def wait_ready(base: str, proc: subprocess.Popen, log_path: Path, timeout: float = 300.0) -> None:
    """Poll GET /api/health until it answers 200; fail with the log tail if the child exits or times out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            if httpx.get(f"{base}/api/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    tail = log_path.read_text(errors="replace")[-3000:]
    raise RuntimeError(f"the app did not become ready (exit code {proc.poll()}); log tail:\n{tail}")


def stop(proc: subprocess.Popen) -> None:
    """Graceful uvicorn shutdown (SIGINT runs the lifespan exit), then terminate, then kill."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGINT)
    for sig in (None, signal.SIGTERM, signal.SIGKILL):
        if sig is not None:
            proc.send_signal(sig)
        try:
            proc.wait(timeout=30)
            return
        except subprocess.TimeoutExpired:
            continue


@contextmanager
def run_app(workdir: Path, cache_dir: Path, docs: list[Path], extra: dict[str, str]) -> Iterator[App]:
    """Start `uvicorn --factory bench_app:create_bench_app` in workdir; stop it (and wait for it) on exit."""
    workdir.mkdir(parents=True, exist_ok=True)
    port, log_path = free_port(), workdir / "server.log"
    cmd = [sys.executable, "-m", "uvicorn", "--factory", "bench_app:create_bench_app", "--app-dir", str(SCRIPTS)]
    cmd += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning", "--no-access-log"]
    t0 = time.monotonic()
    with log_path.open("wb") as log:
        env = app_env(workdir / "data", cache_dir, docs, extra)
        proc = subprocess.Popen(cmd, cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_ready(base, proc, log_path)
        yield App(base, log_path, time.monotonic() - t0)
    finally:
        stop(proc)


# ---------------------------------------------------------------- SSE client


@dataclass
class Turn:
    """One streamed turn as the client saw it; times are time.monotonic()."""

    thread_id: str
    t_send: float
    t_headers: float | None = None
    t_metadata: float | None = None
    t_first_token: float | None = None
    t_last_token: float | None = None
    t_done: float | None = None
    n_tokens: int = 0
    marks: dict[str, float] = field(default_factory=dict)
    done: dict | None = None
    error: str | None = None

    @property
    def ttft(self) -> float | None:
        """Request sent -> first token event."""
        return None if self.t_first_token is None else self.t_first_token - self.t_send

    @property
    def sse_rate(self) -> float | None:
        """Tokens per second between the first and the last token event."""
        if self.n_tokens < 2 or not self.t_last_token or self.t_last_token <= (self.t_first_token or 0):
            return None
        return (self.n_tokens - 1) / (self.t_last_token - self.t_first_token)


def on_event(turn: Turn, event: str, data: str, now: float) -> None:
    """Fold one SSE event into the turn."""
    if event == "token":
        turn.t_first_token = turn.t_first_token or now
        turn.t_last_token, turn.n_tokens = now, turn.n_tokens + 1
    elif event == "metadata":
        turn.t_metadata = now
    elif event == "status":
        payload = json.loads(data)
        turn.marks.setdefault(f"{payload['node']}:{payload['phase']}", now)
    elif event == "done":
        turn.t_done, turn.done = now, json.loads(data)
    elif event == "error":
        payload = json.loads(data)
        turn.error = f"{payload.get('code')}: {payload.get('message')}"


async def stream_turn(client: httpx.AsyncClient, base: str, message: str, thread_id: str, mode: str) -> Turn:
    """POST /api/chat/stream and time every event of the turn."""
    turn = Turn(thread_id=thread_id, t_send=time.monotonic())
    body = {"message": message, "thread_id": thread_id, "mode": mode}
    try:
        async with client.stream("POST", f"{base}/api/chat/stream", json=body) as resp:
            turn.t_headers = time.monotonic()
            if resp.status_code != 200:
                turn.error = f"HTTP {resp.status_code}: {(await resp.aread())[:200]!r}"
                return turn
            event, data = "message", []
            async for line in resp.aiter_lines():
                if line == "":
                    if data:
                        on_event(turn, event, "\n".join(data), time.monotonic())
                    event, data = "message", []
                elif line.startswith("event:"):
                    event = line[6:].strip()
                elif line.startswith("data:"):
                    data.append(line[5:].removeprefix(" "))
    except Exception as exc:  # counted as an error of this stream
        turn.error = f"{type(exc).__name__}: {exc}"
    if turn.error is None and turn.done is None:
        turn.error = "stream ended without done"
    return turn


def client(connections: int = 10) -> httpx.AsyncClient:
    """An HTTP client with room for `connections` parallel streams."""
    limits = httpx.Limits(max_connections=connections + 5, max_keepalive_connections=connections + 5)
    return httpx.AsyncClient(timeout=httpx.Timeout(900.0, connect=30.0), limits=limits)


def question(prefix: str, i: int) -> str:
    """A distinct question per request, so no query-embedding cache makes retrieval look free."""
    return f"{QUESTIONS[i % len(QUESTIONS)]} (request {prefix}-{i})"


async def sequential(base: str, n: int, prefix: str) -> list[Turn]:
    """n turns one after another, each on a new thread with its own question."""
    async with client() as c:
        return [await stream_turn(c, base, question(prefix, i), f"{prefix}-{i}", "auto") for i in range(n)]


async def concurrent(base: str, n: int, prefix: str) -> tuple[list[Turn], float]:
    """n turns started together on new threads; returns them and the wall time."""
    async with client(n) as c:
        t0 = time.monotonic()
        jobs = (stream_turn(c, base, question(prefix, i), f"{prefix}-{i}", "auto") for i in range(n))
        turns = await asyncio.gather(*jobs)
        return list(turns), time.monotonic() - t0


# ---------------------------------------------------------------- summaries

FIXED_MARKS = {"send": "request sent", "headers": "response headers", "metadata": "metadata event"}
FIXED_MARKS |= {
    "model:start": "model call start (server)",
    "model:first_token": "model first token (server)",
    "first_token": "first token event (client)",
}


def turn_marks(turn: Turn, gen_call: dict | None) -> dict[str, float]:
    """Every timestamp of a turn (client events, node status events, the server-side generator model call)."""
    marks = {"send": turn.t_send, "headers": turn.t_headers, "metadata": turn.t_metadata, **turn.marks}
    marks.pop("generator:start", None)  # received after the model call started: it would sort out of order
    if gen_call:
        marks["model:start"], marks["model:first_token"] = gen_call["t_start"], gen_call["t_first_token"]
    marks["first_token"] = turn.t_first_token
    return {k: v for k, v in marks.items() if v is not None and (k in FIXED_MARKS or v <= turn.t_first_token)}


def waterfall(turns: list[Turn], gen_calls: dict[str, dict]) -> list[dict]:
    """p50/p95 of each step between consecutive marks present in every turn, marks ordered by mean time."""
    all_marks = [turn_marks(t, gen_calls.get(t.thread_id)) for t in turns]
    if not all_marks:
        return []
    common = set.intersection(*(set(m) for m in all_marks))
    keys = sorted(common, key=lambda k: sum(m[k] - m["send"] for m in all_marks))
    label = {k: FIXED_MARKS.get(k, k.replace(":", " ")) for k in keys}
    steps = []
    for a, b in zip(keys, keys[1:], strict=False):
        d = dist([m[b] - m[a] for m in all_marks])
        steps.append({"step": f"{label[a]} -> {label[b]}", "p50_s": d["p50"], "p95_s": d["p95"]})
    return steps


def route_of(turn: Turn) -> str:
    """intent and route reason without the distance figure."""
    if not turn.done:
        return "error"
    reason = re.sub(r"\s*\(distance [\d.]+\)", "", turn.done.get("route_reason", ""))
    return f"{turn.done.get('intent')}: {reason}"


def summarize(turns: list[Turn], gen_calls: dict[str, dict], wall: float | None = None) -> dict:
    """TTFT, SSE rate, errors, routes and waterfall of a batch of turns."""
    ok = [t for t in turns if t.error is None and t.t_first_token is not None]
    out: dict[str, Any] = {
        "streams": len(turns),
        "errors": len(turns) - len(ok),
        "error_samples": sorted({t.error or "no token" for t in turns if t not in ok})[:3],
        "ttft_s": dist([t.ttft for t in ok]),
        "sse_tokens_per_s": dist([r for t in ok if (r := t.sse_rate) is not None]),
        "tokens_per_stream": dist([float(t.n_tokens) for t in ok]),
        "last_token_to_done_s": dist([t.t_done - t.t_last_token for t in ok if t.t_done and t.t_last_token]),
        "routes": dict(Counter(route_of(t) for t in turns)),
        "waterfall": waterfall(ok, gen_calls),
    }
    if wall is not None:
        out["wall_s"] = wall
        out["aggregate_tokens_per_s"] = sum(t.n_tokens for t in ok) / wall if wall else None
    return out


# ---------------------------------------------------------------- part A: fake model

MESSAGE_TYPES = {"system": SystemMessage, "human": HumanMessage, "ai": AIMessage}


def messages_of(call: dict) -> list[BaseMessage]:
    """Recorded messages back as LangChain messages."""
    return [MESSAGE_TYPES[m["type"]](content=m["content"]) for m in call["messages"]]


async def fake_model_direct(messages: list[BaseMessage], tps: float, n_ttft: int = 30, n_rate: int = 2) -> dict:
    """The fake model's own TTFT (astream outside the app) and its own streaming rate."""
    model = ScriptedChatModel(tokens_per_second=tps)
    ttfts, rates = [], []
    for _ in range(n_ttft):
        t0 = time.monotonic()
        stream = model.astream(messages)
        async for chunk in stream:
            if chunk.text:
                ttfts.append(time.monotonic() - t0)
                break
        await stream.aclose()
    for _ in range(n_rate):
        stamps = [time.monotonic() async for chunk in model.astream(messages) if chunk.text]
        if len(stamps) > 1:
            rates.append((len(stamps) - 1) / (stamps[-1] - stamps[0]))
    return {"ttft_s": dist(ttfts), "tokens_per_s": dist(rates)}


def fake_pass(tps: float, n_seq: int, n_conc: int, root: Path, cache_dir: Path, docs: list[Path]) -> dict:
    """Part A for one fake streaming rate: start the app, warm up, sequential, concurrent, direct model."""
    progress(f"fake model at {tps:g} tok/s: starting the app")
    extra = {"RAG_LLM_BACKEND": "fake", "RAG_FAKE_TOKENS_PER_SECOND": str(tps)}
    with run_app(root / f"fake-{tps:g}", cache_dir, docs, extra) as app:
        warm = asyncio.run(sequential(app.base, 2, "warm"))
        progress(f"{n_seq} sequential streams")
        seq = asyncio.run(sequential(app.base, n_seq, "seq"))
        progress(f"{n_conc} concurrent streams")
        conc, wall = asyncio.run(concurrent(app.base, n_conc, "conc"))
        recorded = app.calls()
    gen_calls = {c["thread_id"]: c for c in recorded["calls"] if c["node"] == "generator"}
    probe = gen_calls.get(seq[0].thread_id) or next(iter(gen_calls.values()), None)
    direct = asyncio.run(fake_model_direct(messages_of(probe), tps)) if probe else None
    return {
        "fake_tokens_per_second": tps,
        "startup_s": app.startup_s,
        "ingested_chunks": recorded["ingested"],
        "cold_first_request_ttft_s": warm[0].ttft,
        "sequential": summarize(seq, gen_calls),
        "concurrent": summarize(conc, gen_calls, wall),
        "fake_model_direct": direct,
    }


# ---------------------------------------------------------------- part B: embedded model

LLAMA_PROMPT_RE = re.compile(r"id\s+(\d+) \| task (\d+) \| prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens")


def llama_log_prompts(path: Path) -> list[dict]:
    """Per finished llama.cpp task, in order: slot and prompt tokens evaluated (from the server's log)."""
    text = path.read_text(errors="replace") if path.exists() else ""
    return [{"slot": int(s), "prompt_n": int(n)} for s, _, _, n in LLAMA_PROMPT_RE.findall(text)]


@contextmanager
def fd_to_file(fd: int, path: Path) -> Iterator[None]:
    """Send a file descriptor (llama.cpp logs to stderr) to a file for the duration."""
    saved = os.dup(fd)
    with path.open("ab") as f:
        os.dup2(f.fileno(), fd)
    try:
        yield
    finally:
        os.dup2(saved, fd)
        os.close(saved)


def raw_request(http: httpx.Client, url: str, payload: dict) -> dict:
    """Send one recorded request body to llama.cpp and time it; usage and timings come from the last chunk."""
    body = {**payload, "stream": True, "stream_options": {"include_usage": True}}
    t0, first, final = time.monotonic(), None, {}
    with http.stream("POST", f"{url}/v1/chat/completions", json=body) as resp:
        resp.raise_for_status()
        for line in resp.iter_lines():
            data = line.removeprefix("data:").strip()
            if not line.startswith("data:") or data == "[DONE]":
                continue
            chunk = json.loads(data)
            if first is None and ((chunk.get("choices") or [{}])[0].get("delta") or {}).get("content"):
                first = time.monotonic()
            if chunk.get("usage") or chunk.get("timings"):
                final = chunk
    usage, timings = final.get("usage") or {}, final.get("timings") or {}
    return {
        "ttft_s": None if first is None else first - t0,
        "total_s": time.monotonic() - t0,
        "prompt_tokens": usage.get("prompt_tokens"),
        "completion_tokens": usage.get("completion_tokens"),
        "prompt_n": timings.get("prompt_n"),
        "cache_n": timings.get("cache_n"),
        "decode_tokens_per_s": timings.get("predicted_per_second"),
    }


def replay(calls: list[dict], model_path: Path, ctx: int, threads: int, log_path: Path) -> list[dict]:
    """Replay every recorded call, in order and to completion, on a fresh llama.cpp server."""
    fresh = httpx.Limits(max_keepalive_connections=0)  # llama.cpp may drop idle keep-alive connections
    with (
        fd_to_file(2, log_path),
        llama_server(model_path, ctx, threads) as url,
        httpx.Client(timeout=900, limits=fresh) as http,
    ):
        return [raw_request(http, url, c["payload"]) for c in calls]


def call_rows(calls: list[dict], raw: list[dict], app_log: list[dict], raw_log: list[dict]) -> list[dict]:
    """Each model call side by side: in the app (recorder stamps, app server log) and replayed raw."""
    rows = []
    for i, (c, r) in enumerate(zip(calls, raw, strict=True)):
        app_ttft = c["t_first_token"] - c["t_start"] if c["t_first_token"] else None
        rows.append(
            {
                "node": c["node"],
                "thread_id": c["thread_id"],
                "app_ttft_s": app_ttft,
                "app_total_s": c["t_end"] - c["t_start"],
                **{f"raw_{k}": v for k, v in r.items()},
                "app_prompt_n": app_log[i]["prompt_n"] if len(app_log) == len(calls) else None,
                "app_slot": app_log[i]["slot"] if len(app_log) == len(calls) else None,
                "raw_slot": raw_log[i]["slot"] if len(raw_log) == len(calls) else None,
            }
        )
    return rows


def compare_turn(label: str, turn: Turn, calls: list[dict], rows: list[dict]) -> dict:
    """One turn: end-to-end vs in-app model vs raw llama.cpp, from the calls made during it."""
    end = turn.t_done or turn.t_last_token or float("inf")
    idx = [i for i, c in enumerate(calls) if c["thread_id"] == turn.thread_id and turn.t_send <= c["t_start"] <= end]
    gen = next((i for i in reversed(idx) if calls[i]["node"] == "generator"), None)
    if gen is None or turn.ttft is None or rows[gen]["raw_ttft_s"] is None:
        return {"turn": label, "error": turn.error or "no generator call recorded", "route": route_of(turn)}
    g = rows[gen]
    before = [i for i in idx if i < gen]
    raw_before = sum(rows[i]["raw_total_s"] for i in before)
    app_before = sum(rows[i]["app_total_s"] for i in before)
    return {
        "turn": label,
        "route": route_of(turn),
        "calls": "+".join(calls[i]["node"] for i in idx),
        "answer": (turn.done or {}).get("answer", "")[:70],
        "e2e_ttft_s": turn.ttft,
        "raw_generator_ttft_s": g["raw_ttft_s"],
        "ratio_e2e_over_raw_generator": turn.ttft / g["raw_ttft_s"],
        "raw_before_generator_s": raw_before,
        "raw_floor_s": raw_before + g["raw_ttft_s"],
        "ratio_e2e_over_raw_floor": turn.ttft / (raw_before + g["raw_ttft_s"]),
        "app_generator_ttft_s": g["app_ttft_s"],
        "ratio_app_model_over_raw": g["app_ttft_s"] / g["raw_ttft_s"],
        "app_before_generator_s": app_before,
        "pipeline_overhead_s": turn.ttft - g["app_ttft_s"] - app_before,
        "prompt_tokens": g["raw_prompt_tokens"],
        "prompt_evaluated_app": g["app_prompt_n"],
        "prompt_evaluated_raw": g["raw_prompt_n"],
        "prompt_cached_raw": g["raw_cache_n"],
        "sse_tokens": turn.n_tokens,
        "raw_completion_tokens": g["raw_completion_tokens"],
        "sse_tokens_per_s": turn.sse_rate,
        "raw_decode_tokens_per_s": g["raw_decode_tokens_per_s"],
    }


async def run_script(base: str) -> list[Turn]:
    """The embedded turn sequence, one turn after another."""
    async with client() as c:
        return [await stream_turn(c, base, msg, thread, mode) for _, thread, msg, mode in EMBEDDED_SCRIPT]


def warm_page_cache(path: Path) -> None:
    """Read the model file once so the app's and the raw server's loads both hit the page cache."""
    with path.open("rb") as f:
        while f.read(16 << 20):
            pass


@dataclass
class EmbeddedRun:
    """What every round of part B shares."""

    model: str
    model_path: Path
    ctx: int
    threads: int
    max_tokens: int
    root: Path
    cache_dir: Path
    docs: list[Path]


def embedded_round(run: EmbeddedRun, r: int) -> dict:
    """App turns with the embedded model, app stopped, then the identical calls on a fresh raw llama.cpp server."""
    extra = {
        "RAG_LLM_BACKEND": "embedded",
        "RAG_EMBEDDED_MODEL": run.model,
        "RAG_EMBEDDED_CTX": str(run.ctx),
        "RAG_EMBEDDED_THREADS": str(run.threads),
        "RAG_MAX_ANSWER_TOKENS": str(run.max_tokens),
    }
    progress(f"embedded {run.model}, round {r + 1}: app turns " + ", ".join(label for label, *_ in EMBEDDED_SCRIPT))
    with run_app(run.root / f"embedded-{r}", run.cache_dir, run.docs, extra) as app:
        turns = asyncio.run(run_script(app.base))
        calls = app.calls()["calls"]
    progress(f"app stopped; replaying its {len(calls)} model calls on a fresh llama.cpp server")
    raw_log = run.root / f"raw-llama-{r}.log"
    raw = replay(calls, run.model_path, run.ctx, run.threads, raw_log)
    rows = call_rows(calls, raw, llama_log_prompts(app.log_path), llama_log_prompts(raw_log))
    compared = [compare_turn(label, t, calls, rows) for (label, *_), t in zip(EMBEDDED_SCRIPT, turns, strict=True)]
    return {"startup_s": app.startup_s, "turns": compared, "calls": rows}


def median_turns(rounds: list[dict]) -> list[dict]:
    """Per turn, the median over rounds of every number (text from the first round)."""
    merged = []
    for per_round in zip(*(r["turns"] for r in rounds), strict=True):
        out = dict(per_round[0])
        for key, value in out.items():
            if isinstance(value, int | float):
                out[key] = pct([t[key] for t in per_round if t.get(key) is not None], 0.5)
        merged.append(out)
    return merged


def embedded_pass(
    model: str, max_tokens: int, rounds: int, deadline: float, root: Path, cache_dir: Path, docs: list[Path]
) -> dict:
    """Part B: up to `rounds` x (app turns, then raw replay), fewer if past the deadline; medians over rounds."""
    model_path = ensure_model(MODELS[model], cache_dir)  # already assembled: a hash-marker check, no download
    warm_page_cache(model_path)
    ctx, threads = Settings.model_fields["embedded_ctx"].default, Settings.model_fields["embedded_threads"].default
    run = EmbeddedRun(model, model_path, ctx, threads, max_tokens, root, cache_dir, docs)
    results: list[dict] = []
    for r in range(rounds):
        started = time.monotonic()
        results.append(embedded_round(run, r))
        if r + 1 < rounds and time.monotonic() + (time.monotonic() - started) > deadline:
            progress(f"stopping after {r + 1} of {rounds} rounds: another would pass the --budget")
            break
    return {
        "model": model,
        "ctx": ctx,
        "threads": threads or os.cpu_count(),
        "max_answer_tokens": max_tokens,
        "rounds": results,
        "turns": median_turns(results),
    }


# ---------------------------------------------------------------- report


def report_fake(passes: list[dict]) -> None:
    """Part A tables: one column per (rate, sequential|concurrent), then the waterfall."""
    cols = [(p, mode) for p in passes for mode in ("sequential", "concurrent")]
    heads = ["metric"] + [f"{p['fake_tokens_per_second']:g} tok/s, {p[m]['streams']} {m[:3]}" for p, m in cols]

    def row(name: str, fn: Any) -> list[str]:
        return [name] + [fn(p, p[m]) for p, m in cols]

    rows = [
        row("TTFT p50 (sent -> first token)", lambda p, s: fmt_ms(s["ttft_s"]["p50"])),
        row("TTFT p95", lambda p, s: fmt_ms(s["ttft_s"]["p95"])),
        row("TTFT max", lambda p, s: fmt_ms(s["ttft_s"]["max"])),
        row("fake model's own TTFT p50", lambda p, s: fmt_ms(own(p, "ttft_s"))),
        row("overhead p50 = TTFT - own TTFT", lambda p, s: fmt_ms(minus(s["ttft_s"]["p50"], own(p, "ttft_s")))),
        row("ratio TTFT / own TTFT (p50)", lambda p, s: ratio(s["ttft_s"]["p50"], own(p, "ttft_s"))),
        row("TTFT p50 / sequential TTFT p50", lambda p, s: ratio(s["ttft_s"]["p50"], p["sequential"]["ttft_s"]["p50"])),
        row("SSE tokens/s per stream p50", lambda p, s: fmt_num(s["sse_tokens_per_s"]["p50"])),
        row("fake model's own tokens/s", lambda p, s: fmt_num(own(p, "tokens_per_s"))),
        row("ratio SSE / own tokens/s", lambda p, s: ratio(s["sse_tokens_per_s"]["p50"], own(p, "tokens_per_s"))),
        row("aggregate tokens/s, all streams", lambda p, s: fmt_num(s.get("aggregate_tokens_per_s"))),
        row("wall time, all streams", lambda p, s: fmt_num(s.get("wall_s"), " s", 2)),
        row("tokens per stream", lambda p, s: fmt_num(s["tokens_per_stream"]["p50"], "", 0)),
        row("last token -> done p50", lambda p, s: fmt_ms(s["last_token_to_done_s"]["p50"])),
        row("errors", lambda p, s: f"{s['errors']}/{s['streams']}"),
    ]
    print_table("A. Fake model through the real app (uvicorn, SSE over loopback HTTP)", heads, rows)
    for p in passes:
        start = f"app startup {p['startup_s']:.1f} s, cold first request TTFT {fmt_ms(p['cold_first_request_ttft_s'])}"
        print(f"   {p['fake_tokens_per_second']:g} tok/s: {start}; routes {p['sequential']['routes']}")
        for mode in ("sequential", "concurrent"):
            for e in p[mode]["error_samples"]:
                print(f"   {mode} error sample: {e}")
    steps = [s for s, _ in waterfall_steps(cols)]
    rows = [[step] + [cell(p[m]["waterfall"], step) for p, m in cols] for step in steps]
    print_table("A. Where the time to first token goes: p50 / p95 per step", ["step", *heads[1:]], rows)
    print("   Status marks are client receive times; model call stamps are server time.monotonic() (same clock).")


def waterfall_steps(cols: list) -> list[tuple[str, None]]:
    """Steps present in any column, in first-seen order."""
    seen: dict[str, None] = {}
    for p, m in cols:
        for s in p[m]["waterfall"]:
            seen.setdefault(s["step"], None)
    return list(seen.items())


def cell(steps: list[dict], name: str) -> str:
    """'p50 / p95' in ms for one waterfall step, '-' when absent."""
    s = next((s for s in steps if s["step"] == name), None)
    return "-" if s is None else f"{s['p50_s'] * 1000:,.1f} / {s['p95_s'] * 1000:,.1f}"


def minus(a: float | None, b: float | None) -> float | None:
    """a - b, None when either is missing."""
    return None if a is None or b is None else a - b


def own(p: dict, key: str) -> float | None:
    """The fake model's own p50 figure (ttft_s or tokens_per_s) measured outside the app."""
    return (p.get("fake_model_direct") or {}).get(key, {}).get("p50")


def report_embedded(b: dict) -> None:
    """Part B: per-turn medians over rounds, per-round ratios, and the call-by-call fairness check."""
    turns = b["turns"]
    heads = ["metric (median over rounds)"] + [t["turn"] for t in turns]

    def row(name: str, key: str, f: Any = fmt_ms) -> list[str]:
        return [name] + [f(t.get(key)) for t in turns]

    def count(v: float | None) -> str:
        return fmt_num(v, "", 0)

    rows = [
        row("route", "route", str),
        row("model calls in the turn", "calls", str),
        row("prompt tokens (generator request)", "prompt_tokens", count),
        row("  evaluated by the app's llama.cpp", "prompt_evaluated_app", count),
        row("  evaluated by the raw llama.cpp", "prompt_evaluated_raw", count),
        row("  reused from KV cache (raw)", "prompt_cached_raw", count),
        row("E2E TTFT: sent -> first token event", "e2e_ttft_s"),
        row("raw TTFT, same generator request", "raw_generator_ttft_s"),
        row("ratio E2E / raw generator TTFT", "ratio_e2e_over_raw_generator", lambda v: fmt_num(v, "x", 2)),
        row("raw calls before the generator", "raw_before_generator_s"),
        row("raw floor = those + raw TTFT", "raw_floor_s"),
        row("ratio E2E / raw floor", "ratio_e2e_over_raw_floor", lambda v: fmt_num(v, "x", 2)),
        row("in-app generator call TTFT", "app_generator_ttft_s"),
        row("ratio in-app call / raw (noise check)", "ratio_app_model_over_raw", lambda v: fmt_num(v, "x", 2)),
        row("in-app calls before the generator", "app_before_generator_s"),
        row("pipeline overhead (E2E minus model)", "pipeline_overhead_s"),
        row("answer tokens: SSE events", "sse_tokens", count),
        row("answer tokens: raw completion", "raw_completion_tokens", count),
        row("SSE tokens/s (app)", "sse_tokens_per_s", fmt_num),
        row("raw decode tokens/s (llama timings)", "raw_decode_tokens_per_s", fmt_num),
    ]
    rounds = b["rounds"]
    for key, name in (
        ("ratio_e2e_over_raw_generator", "E2E / raw generator"),
        ("ratio_e2e_over_raw_floor", "E2E / floor"),
    ):
        per = [", ".join(fmt_num(r["turns"][i].get(key), "x", 2) for r in rounds) for i in range(len(turns))]
        rows.append([f"{name}, per round", *per])
    title = f"B. Embedded {b['model']} (ctx {b['ctx']}/slot, 2 slots, {b['threads']} threads, {len(rounds)} rounds)"
    print_table(title, heads, rows)
    print("   startup incl. llama.cpp load: " + ", ".join(f"{r['startup_s']:.1f} s" for r in rounds))
    for t in turns:
        print(f"   {t['turn']}: " + (f"ERROR {t['error']}" if "error" in t else f"answer {t['answer']!r}"))
    calls = [
        [
            f"{i + 1} {c['node']}",
            f"{c['app_slot']} / {c['raw_slot']}",
            f"{c['raw_prompt_tokens']}",
            f"{c['app_prompt_n']} / {c['raw_prompt_n']}",
            f"{fmt_ms(c['app_ttft_s'])} / {fmt_ms(c['raw_ttft_s'])}",
            f"{fmt_ms(c['app_total_s'])} / {fmt_ms(c['raw_total_s'])}",
        ]
        for i, c in enumerate(rounds[0]["calls"])
    ]
    heads = ["call (round 1)", "slot app/raw", "prompt tok", "evaluated app/raw", "TTFT app/raw", "total app/raw"]
    print_table("B. Every model call, in the app vs replayed raw", heads, calls)
    print("\n" + FAIRNESS)


# ---------------------------------------------------------------- main


def parse_args() -> argparse.Namespace:
    """Command-line options."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fake-only", action="store_true", help="only part A (fake model), about a minute")
    ap.add_argument("--model", choices=sorted(MODELS), default="qwen2.5-coder-0.5b", help="embedded model (part B)")
    ap.add_argument("--streams", type=int, default=50, help="concurrent streams (default 50)")
    ap.add_argument("--requests", type=int, default=30, help="sequential requests at 0 tok/s (default 30)")
    ap.add_argument("--rate", type=float, default=40.0, help="realistic fake rate, tok/s (default 40)")
    ap.add_argument("--rate-requests", type=int, default=10, help="sequential requests at --rate (default 10)")
    ap.add_argument("--rounds", type=int, default=3, help="part B repetitions, medians reported (default 3)")
    ap.add_argument("--budget", type=float, default=300, help="no new part-B round past this many seconds")
    ap.add_argument("--max-answer-tokens", type=int, default=256, help="RAG_MAX_ANSWER_TOKENS for part B")
    ap.add_argument("--docs", type=Path, nargs="*", help="files or folders to ingest instead of the sample doc")
    ap.add_argument("--json", type=Path, help="also write the results as JSON")
    ap.add_argument("--keep-temp", action="store_true", help="keep the temp dir (server logs, data)")
    return ap.parse_args()


def main() -> int:
    """Run the parts, print the report, optionally write JSON."""
    args = parse_args()
    cache_dir = Settings().cache_dir
    root = Path(tempfile.mkdtemp(prefix="ragline-bench-"))
    results: dict[str, Any] = {"host": host_info(), "load_before": os.getloadavg()}
    started = time.monotonic()
    print(f"ragline stream bench: {results['host']}, temp dir {root}", flush=True)
    try:
        docs = args.docs or [root / "docs"]
        if not args.docs:
            (root / "docs").mkdir()
            (root / "docs" / "travel-policy.md").write_text(SAMPLE_DOC)
        results["fake"] = [
            fake_pass(0.0, args.requests, args.streams, root, cache_dir, docs),
            fake_pass(args.rate, args.rate_requests, args.streams, root, cache_dir, docs),
        ]
        if not args.fake_only:
            try:
                deadline = started + args.budget
                results["embedded"] = embedded_pass(
                    args.model, args.max_answer_tokens, args.rounds, deadline, root, cache_dir, docs
                )
            except Exception as exc:  # part A is still worth reporting
                results["embedded_error"] = f"{type(exc).__name__}: {exc}"
    finally:
        if not args.keep_temp:
            shutil.rmtree(root, ignore_errors=True)
    results["load_after"], results["runtime_s"] = os.getloadavg(), time.monotonic() - started
    report(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, default=str))
        print(f"\nJSON written to {args.json}")
    return 0


def host_info() -> str:
    """CPU count, Python and platform in one line."""
    return f"{os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()} {platform.machine()}"


def report(results: dict) -> None:
    """The whole report."""
    report_fake(results["fake"])
    if "embedded" in results:
        report_embedded(results["embedded"])
    if "embedded_error" in results:
        print(f"\nB. Embedded model: FAILED: {results['embedded_error']}")
    before, after = results["load_before"], results["load_after"]
    print(f"\nrun time {results['runtime_s']:.0f} s; load average before {before[0]:.2f}, after {after[0]:.2f}")
    if max(before[0], after[0]) > 0.5 * (os.cpu_count() or 1):
        print("note: other work was running on this machine (load above half the cores); figures are noisy.")
    noisy = [
        t["turn"]
        for t in results.get("embedded", {}).get("turns", [])
        if abs((t.get("ratio_app_model_over_raw") or 1.0) - 1.0) > 0.15
    ]
    if noisy:
        print(
            f"note: in-app and raw llama.cpp timings of the same request differ by more than 15% ({', '.join(noisy)}):"
            "\n      the E2E/raw ratios there measure machine noise; 'pipeline overhead' (E2E minus the in-app model"
            "\n      time) is the robust figure. Rerun on a quiet machine or with more --rounds."
        )


if __name__ == "__main__":
    sys.exit(main())
